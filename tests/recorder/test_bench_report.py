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
