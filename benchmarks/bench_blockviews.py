"""Block views benchmark: control-flow graph, variants and loop profile of a hot method of a real
trace, cold (no per-method cache: the chunks holding the method's calls are decoded and scanned)
and cached (the per-method profile read back), each step in a fresh Python process so that every
number includes opening the (already replayed) analysis, as the explorer or ``jbtrace`` pays it.

``cfg``          Analysis.open + the method's graph with whole-run counts (no stream reading);
``profile-cold`` Analysis.open + variants and loop profile, per-method cache removed first;
``profile-warm`` the same again, served from the per-method cache;
``path``         Analysis.open + one call's exact path (the variants' most frequent example).

Target (issue 15): the CFG, variants and loop profile of a hot javac method appear within 2 s.
A first run replays the trace when it has no analysis yet (not timed: the replay is the analyzer
benchmark's business).

    .venv/bin/python benchmarks/bench_blockviews.py --trace /path/to/javac-java-util-stream --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r'''
import json, shutil, sys, time
mode, trace, spec = sys.argv[1], sys.argv[2], sys.argv[3]
t0 = time.perf_counter()
from jbgui.model.analysis import Analysis
from jbgui.model.method_names import resolve_methods
analysis = Analysis.open(trace)
method = resolve_methods(analysis.statics, spec, single=True)[0]
t_open = time.perf_counter() - t0
info = {}
if mode == "cfg":
    from jbgui.model.cfg import method_cfg
    g = method_cfg(analysis, method)
    info = {"blocks": g.n_blocks, "edges": len(g.edges), "loops": len(g.loops)}
elif mode.startswith("profile"):
    from jbgui.model.method_profile import VERSION, method_profile
    from jbgui.model.variants import variants
    from jbgui.model.loop_profile import loops
    if mode == "profile-cold":
        from jbgui.model import derived
        derived.forget(analysis.cache_dir / "blockviews", f"m{method}-v{VERSION}.npz")
    p = method_profile(analysis, method)
    v = variants(analysis, method, p)
    lp = loops(analysis, method, p)
    info = {"calls": p.calls, "variants": len(v), "loops": len(lp), "from_cache": p.from_cache,
            "events_decoded": int(p.arrays["decoded"][0])}
elif mode == "path":
    from jbgui.model.method_profile import method_profile
    from jbgui.model.block_paths import call_path
    p = method_profile(analysis, method)
    t, r = int(p.arrays["v_thread"][0]), int(p.arrays["v_row"][0])
    path = call_path(analysis, analysis.thread(t), r)
    info = {"blocks": len(path.blocks)}
print(json.dumps({"seconds": time.perf_counter() - t0, "open": t_open, **info}))
'''

MODES = ("cfg", "profile-cold", "profile-warm", "path")
DEFAULT_METHODS = ["com.sun.tools.javac.parser.UnicodeReader.nextCodeUnit",
                   "com.sun.tools.javac.code.Scope$ScopeImpl.lookup(Lcom/sun/tools/javac/util/Name;"
                   "Ljava/util/function/Predicate;)"]


def run_child(mode: str, trace: str, method: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, trace, method], capture_output=True, text=True,
                         cwd=ROOT, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path,
                        help="a trace directory (default: the analyzer benchmark's javac on java/util/stream in "
                             "build/bench, recorded first when missing)")
    parser.add_argument("--method", action="append",
                        help="METHOD (repeatable; default: UnicodeReader.nextCodeUnit, the hottest parser method, "
                             "and Scope$ScopeImpl.lookup(Name, Predicate), a hot method with a loop)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.trace is None:
        args.trace = ROOT / "build" / "bench" / "javac-java-util-stream"
        if not (args.trace / "trace.json").exists():
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from bench_analyzer import record_javac
            record_javac("java/util/stream", args.trace, Path("/usr/lib/jvm/java-17-openjdk-amd64"))
    args.trace = str(args.trace)
    methods = args.method or DEFAULT_METHODS
    print(f"trace  {args.trace}\nruns   {args.runs} (medians, seconds, fresh process each)")
    for method in methods:
        run_child("profile-warm", args.trace, method)   # replay if needed, warm numba's and the OS cache
        results: dict[str, list[dict]] = {m: [] for m in MODES}
        for _ in range(args.runs):
            for mode in MODES:
                results[mode].append(run_child(mode, args.trace, method))
        print(f"\nmethod {method}")
        med = {}
        for mode in MODES:
            rs = results[mode]
            med[mode] = statistics.median(r["seconds"] for r in rs)
            opened = statistics.median(r["open"] for r in rs)
            extra = {k: v for k, v in rs[-1].items() if k not in ("seconds", "open")}
            verdict = "within 2 s" if med[mode] <= 2.0 else "over 2 s"
            print(f"  {mode:13} {med[mode]:7.3f}  (of which Analysis.open {opened:.3f})  {verdict}  {extra}")
        print(f"  cold / warm profile: {med['profile-cold'] / med['profile-warm']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
