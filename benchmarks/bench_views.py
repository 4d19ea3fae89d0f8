"""How fast the aggregated views' data appear on a big trace (issue 11's targets): the methods
table, the merged tree's first levels and the flame graph, the first time (the calling-context
trees are built from the call columns) and once cached (read back from the analysis cache);
toggling only my code and applying a transform (re-merging the cached tree).

Usage: python benchmarks/bench_views.py [TRACE] [--repeat N] [--include PREFIX]...

TRACE defaults to build/bench/javac-java-util-stream (javac on java/util/stream, recorded by
bench_analyzer.py: ~1 billion events, 225 M calls). Its replay must be cached already (open it once
with ``jbtrace stats`` or the explorer). javac's own classes are JDK classes, so "my code" is
given as --include com.sun.tools.javac (the default). Prints each step's median and the target.

The run's calling-context trees are kept in one compressed column file beside the replay
(``analysis/replay/cct-run-v2.zst``, :mod:`jbgui.model.cct`): "merged tree" once cached is reading
it (frames decoded on two threads) and summing the threads' weights into the forest. The GUI runs
these steps on worker threads, the views in parallel; here they run one after the other.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from jbgui.model import flame
from jbgui.model import merged_tree as MT
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.model.analysis import Analysis
from jbgui.model.scope import Scope, ScopeRules

# bench_analyzer.py records this trace (javac on java/util/stream) when it is missing.
DEFAULT = str(Path(__file__).resolve().parent.parent / "build" / "bench" / "javac-java-util-stream")


def timed(f):
    t0 = time.perf_counter()
    result = f()
    return time.perf_counter() - t0, result


def first_screen(view: TR.AggregateView, transforms=()) -> dict[str, float]:
    """What the aggregated views compute to appear: tree, table, top levels, flame layout."""
    out = {}
    out["merged tree"], tree = timed(lambda: view.tree(transforms))
    out["methods table"], table = timed(lambda: MTab.for_view(view, transforms).order("self_bytecodes"))
    out["tree top levels"], _ = timed(lambda: [tree.children(int(r)) for r in tree.roots])
    out["flame graph"], lay = timed(lambda: flame.layout(tree).rects(min_width=tree.total() / 1600))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", nargs="?", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--include", action="append", default=None)
    parser.add_argument("--skip-first", action="store_true", help="do not delete and rebuild the cached trees")
    args = parser.parse_args()
    include = tuple(args.include or ["com.sun.tools.javac"])
    a = Analysis.open(args.trace)
    calls = sum(len(t.calls) for t in a.threads)
    print(f"trace {args.trace}: {len(a.threads)} threads, {calls:,} calls")
    if not args.skip_first:
        MT.forget_cached(a)
        view = TR.AggregateView(a, Scope.of_trace(a, ScopeRules(include)))
        first = first_screen(view)
        total = sum(first.values())
        print(f"first time (trees built from the calls): {total:.2f} s  target 10 s  "
              f"{'met' if total <= 10 else 'MISSED'}  " + ", ".join(f"{k} {v:.2f} s" for k, v in first.items()))
        print(f"  contexts: {len(view.base()):,} in the whole run's merged tree")
    steps: dict[str, list[dict[str, float]]] = {"once cached": [], "toggle only my code": [],
                                                  "apply a transform (merge the hottest method)": []}
    for _ in range(args.repeat):
        b = Analysis.open(args.trace)
        view = TR.AggregateView(b, Scope.of_trace(b, ScopeRules(include)))
        steps["once cached"].append(first_screen(view))
        omc = (TR.Transform("only-my-code"),)
        steps["toggle only my code"].append(first_screen(view, omc))
        tree = view.tree(omc)
        table = MTab.compute(tree, b.statics)
        hot = int(table.keys[table.order("self_bytecodes")[0]])
        steps["apply a transform (merge the hottest method)"].append(
            first_screen(view, omc + (TR.Transform("merge", hot),)))
    for label, runs in steps.items():
        values = [sum(r.values()) for r in runs]
        med = statistics.median(values)
        parts = ", ".join(f"{k} {statistics.median(r[k] for r in runs):.2f} s" for k in runs[0])
        print(f"{label}: median {med:.2f} s of {len(values)} (target 1 s: "
              f"{'met' if med <= 1 else f'MISSED, {med:.1f}x'})  runs: " + ", ".join(f"{v:.2f}" for v in values)
              + f"\n  step medians: {parts}")


if __name__ == "__main__":
    main()
