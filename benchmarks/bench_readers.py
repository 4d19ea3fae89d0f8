"""Readers benchmark (issue 12): what validating every file of the format once costs, side by side
with the code before it (a baseline revision of this repository, exported to a temporary folder).

On a hard-linked copy of a real trace, each in a fresh Python process, ``--runs`` times, for the
baseline and for this tree:

``statics``  parsing static.xml into the replay's arrays (no cache);
``decode``   reading and decompressing every stream (the chunk walk, bounded inflating);
``replay``   ``Analysis.open`` without a cache (the replay kernel with its bounds checks).

Prints medians, events per second, peak resident memory and the ratio this/baseline per mode.

    .venv/bin/python benchmarks/bench_readers.py --trace build/bench/javac-agent-sources --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r'''
import json, resource, shutil, sys, time
from pathlib import Path
mode, trace = sys.argv[1], Path(sys.argv[2])
shutil.rmtree(trace / "analysis", ignore_errors=True)
t0 = time.perf_counter()
events = 0
if mode == "statics":
    from jbgui.model.statics import _parse
    events = _parse(trace / "static.xml").n_blocks
elif mode == "decode":
    from jbgui.model.tracedir import TraceDir, iter_stream
    td = TraceDir(trace)
    for i in td.stream_indices():
        for first, words, flags, problem in iter_stream(td.stream_path(i)):
            events += len(words)
else:
    from jbgui.model.analysis import Analysis
    a = Analysis.open(trace)
    events = sum(t.events for t in a.threads)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "events": events,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''

MODES = ("statics", "decode", "replay")


def run_child(tree: Path, mode: str, trace: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(trace)], capture_output=True, text=True,
                         cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    if out.returncode:
        raise SystemExit(f"{tree}: {mode} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def export_revision(rev: str, into: Path) -> Path:
    """The jbgui package of ``rev``, as files (its numba cache is built there, not in a checkout)."""
    archive = subprocess.run(["git", "archive", rev, "jbgui"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, required=True,
                        help="a trace (copied with hard links first; its analysis/ is replaced)")
    parser.add_argument("--baseline", default="c61eac4", help="the revision to compare with (default: before issue 12)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="jbgui-bench-readers-"))
    try:
        trace = work / "trace"
        subprocess.run(["cp", "-al", str(args.trace), str(trace)], check=True)
        shutil.rmtree(trace / "analysis", ignore_errors=True)
        base = export_revision(args.baseline, Path(tempfile.mkdtemp(prefix="baseline-", dir=work)))
        trees = {"baseline": base, "this": ROOT}
        for tree in trees.values():
            run_child(tree, "replay", trace)      # untimed: compiles the kernels into numba's cache
        results = {(name, mode): [] for name in trees for mode in MODES}
        for _ in range(args.runs):
            for mode in MODES:
                for name, tree in trees.items():
                    results[(name, mode)].append(run_child(tree, mode, trace))
        print(f"trace {args.trace}, baseline {args.baseline}, {args.runs} runs, medians")
        print(f"{'mode':8} {'tree':9} {'seconds':>8} {'M items/s':>10} {'peak MB':>8}")
        for mode in MODES:
            for name in trees:
                runs = results[(name, mode)]
                seconds = statistics.median(r["seconds"] for r in runs)
                items = runs[0]["events"]
                print(f"{mode:8} {name:9} {seconds:8.2f} {items / seconds / 1e6:10.1f} "
                      f"{statistics.median(r['rss_mb'] for r in runs):8.0f}")
            ratio = statistics.median(r["seconds"] for r in results[("this", mode)]) / \
                statistics.median(r["seconds"] for r in results[("baseline", mode)])
            print(f"{mode:8} this/baseline time ratio {ratio:.2f}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
