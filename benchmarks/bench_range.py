"""Range statistics benchmark: the timeline's range panel on a real trace (issue 11: "a range
statistic over a tenth of the run within 2 s").

Opens the trace's cached replay, then, side by side in one run, times
``range_stats`` over a tenth of the run (several different tenths) and over the whole run, on a
time axis (nanoseconds, every thread) — what the panel computes when a range is selected. Prints
medians, the calls each range covers and the throughput, and the ratio of whole run to a tenth.

    .venv/bin/python benchmarks/bench_range.py TRACE [--runs 3]

Use a hard-linked copy of a big trace (the cache is written inside it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jbgui.model import range_stats as RS  # noqa: E402
from jbgui.model.analysis import Analysis  # noqa: E402
from jbgui.model.timeline import TimelineModel  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--runs", type=int, default=3, help="tenths measured (each a different stretch)")
    args = parser.parse_args()
    seconds, analysis = timed(lambda: Analysis.open(args.trace))
    print(f"open (cached replay): {seconds:.2f} s; {sum(len(t.calls) for t in analysis.threads):,} calls")
    model = TimelineModel(analysis)
    t_min, t_max = model.t_min, model.t_max
    span = t_max - t_min
    tenth = []
    for k in range(args.runs):
        start = t_min + span * (0.1 + 0.8 * k / max(args.runs, 1))
        seconds, stats = timed(lambda: RS.range_stats(analysis, start, start + span / 10))
        calls = stats.total("calls_started")
        tenth.append(seconds)
        print(f"tenth at {start / 1e9:.2f} s: {seconds:.2f} s, {calls:,} calls started, "
              f"{calls / max(seconds, 1e-9) / 1e6:.1f} M calls/s, top method "
              f"{analysis.statics.method_qualified(int(stats.methods['method'][0])) if len(stats.methods) else '-'}")
    whole, stats = timed(lambda: RS.range_stats(analysis, t_min, t_max + 1))
    print(f"whole run: {whole:.2f} s, {stats.total('calls_started'):,} calls started")
    median = statistics.median(tenth)
    print(f"median over a tenth: {median:.2f} s (target <= 2 s: {'met' if median <= 2 else 'MISSED'}); "
          f"whole run / tenth = {whole / median:.1f}")


if __name__ == "__main__":
    main()
