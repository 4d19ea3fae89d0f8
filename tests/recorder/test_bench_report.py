"""benchmarks/bench_recorder.py's report: how a verdict near its target says it is within the noise,
and a report of only some variants (numbers made up: these are the report's own rules)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_recorder  # noqa: E402
from bench_recorder import Samples, ratio, spread  # noqa: E402


def samples(untraced: list[float], method: list[float]) -> Samples:
    return Samples(seconds={"untraced": untraced, "method": method})


def test_a_median_on_the_target_is_said_to_be_within_the_noise():
    s = samples([5.0] * 7, [9.0, 9.5, 10.0, 10.2, 10.5, 11.0, 11.5])   # ratios 1.80x-2.30x
    assert ratio(s, "method") == 2.04
    text = spread(s, "method", 2.0)
    assert "per run 1.80x-2.30x" in text
    lo, hi = (float(x.rstrip("x")) for x in text.split("median ")[1].split(";")[0].split("-"))
    assert 1.80 <= lo < 2.0 < hi <= 2.30
    assert "within this machine's noise" in text


def test_a_median_far_from_the_target_is_not():
    s = samples([5.0] * 5, [7.0, 7.1, 7.2, 7.3, 7.4])   # 1.40x-1.48x
    text = spread(s, "method", 2.0)
    assert "per run 1.40x-1.48x" in text and "noise" not in text
    assert spread(samples([5.0], [7.0]), "method", 2.0) == ""   # one run: no interval


def test_hello_without_its_traced_variant_leaves_its_target_out(capsys):
    # --workload hello --variant method once failed here with a KeyError.
    results = {"hello": Samples(seconds={"untraced": [0.04, 0.05], "traced-cold": [5.1]})}
    bench_recorder.report(results, runs=2)
    out = capsys.readouterr().out
    assert "traced hello world" not in out
    assert "cold instrumentation cache, reported apart: 5.100 s" in out


def test_the_counters_table_gives_each_variants_medians_and_the_runs_without_counters(capsys):
    run = {"parsed": 2900.0, "from CDS": 650.0, "verified": 1450.0, "verify s": 0.08, "classes s": 0.66, "JIT s": 12.0}
    s = Samples(seconds={"untraced": [5.0, 5.2], "method": [10.0, 9.8]},
                counters={"untraced": [dict(run, **{"verify s": 0.04}), dict(run, **{"verify s": 0.02})],
                          "method": [run, dict(run, **{"JIT s": 14.0})]},
                counter_errors=["method run 1: no performance data"])
    bench_recorder.counters_report({"javac": s})
    out = capsys.readouterr().out
    rows = {line.split()[1]: line.split()[2:] for line in out.splitlines() if line.startswith("javac ")}
    assert rows["untraced"] == ["2,900", "650", "1,450", "0.03", "0.66", "12.00"]
    assert rows["method"] == ["2,900", "650", "1,450", "0.08", "0.66", "13.00"]
    assert "javac: no counters for method run 1: no performance data" in out
    bench_recorder.counters_report({"javac": samples([5.0], [10.0])})   # no --counters: nothing
    assert capsys.readouterr().out == ""
