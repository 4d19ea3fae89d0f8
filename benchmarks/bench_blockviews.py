"""Block views benchmark: control-flow graph, variants and loop profile of a hot method of a real
trace, cold (no per-method cache: the chunks holding the method's calls are decoded and scanned)
and cached (the per-method profile read back), each step in a fresh Python process so that every
number includes opening the (already replayed) analysis, as the explorer or ``jbtrace`` pays it.

``cfg``          Analysis.open + the method's graph with whole-run counts (no stream reading);
``profile-cold`` Analysis.open + variants and loop profile, per-method cache removed first;
``profile-warm`` the same again, served from the per-method cache;
``profile-open`` variants and loop profile alone, per-method cache removed, timed after the open
                 and numba's start-up (what the explorer, which has both, waits for);
``path``         Analysis.open + one call's exact path (the variants' most frequent example).

With ``--baseline REV`` (default: the code before the fused scan) the same steps run on jbgui at
REV too (its sources exported under build/bench-blockviews), alternating with this checkout's in
every run, and the medians are printed side by side with their ratios; the load average is
printed with them (the machine is shared). The two share the trace's analysis cache when their
replay code is the same.

Target (issue 15): the CFG, variants and loop profile of a hot javac method appear within 2 s.
A first run replays the trace when it has no analysis yet (not timed: the replay is the analyzer
benchmark's business).

    .venv/bin/python benchmarks/bench_blockviews.py --trace /path/to/javac-java-util-stream --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "bench-blockviews"

CHILD = r'''
import json, resource, shutil, sys, time
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
    if mode in ("profile-cold", "profile-open"):
        from jbgui.model import derived
        derived.forget(analysis.cache_dir / "blockviews", f"m{method}-v{VERSION}.npz")
    if mode == "profile-open":
        # as in the explorer: the trace is open and numba running; only the profile is timed
        from jbgui.model.block_paths import _mix
        _mix(1)
        t0 = time.perf_counter()
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
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - t0, "open": t_open, "cpu": usage.ru_utime + usage.ru_stime,
                  **info}))
'''

MODES = ("cfg", "profile-cold", "profile-warm", "profile-open", "path")
DEFAULT_METHODS = ["com.sun.tools.javac.parser.UnicodeReader.nextCodeUnit",
                   "com.sun.tools.javac.code.Scope$ScopeImpl.lookup(Lcom/sun/tools/javac/util/Name;"
                   "Ljava/util/function/Predicate;)"]
DEFAULT_BASELINE = "2efd86c"     # before the fused scan (store_rows, the attribution kernel)


def run_child(mode: str, trace: str, method: str, code: Path = ROOT) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run([sys.executable, "-c", CHILD, mode, trace, method], capture_output=True, text=True,
                         cwd=code, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{mode} failed ({code}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def baseline_code(rev: str) -> Path:
    """The jbgui sources of ``rev``, exported under build/bench-blockviews/code-REV."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.strip()
    target = WORK / f"code-{sha}"
    if not (target / "jbgui").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "jbgui"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace", type=Path,
                        help="a trace directory (default: the analyzer benchmark's javac on java/util/stream in "
                             "build/bench, recorded first when missing)")
    parser.add_argument("--method", action="append",
                        help="METHOD (repeatable; default: UnicodeReader.nextCodeUnit, the hottest parser method, "
                             "and Scope$ScopeImpl.lookup(Name, Predicate), a hot method with a loop)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", default=DEFAULT_BASELINE,
                        help=f"also run jbgui at REV, alternating (default {DEFAULT_BASELINE}); '' to skip")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    args = parser.parse_args()
    if args.trace is None:
        args.trace = ROOT / "build" / "bench" / "javac-java-util-stream"
        if not (args.trace / "trace.json").exists():
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from bench_analyzer import record_javac
            record_javac("java/util/stream", args.trace, Path("/usr/lib/jvm/java-17-openjdk-amd64"))
    args.trace = str(Path(args.trace).resolve())
    methods = args.method or DEFAULT_METHODS
    codes = [("this", ROOT)]
    if args.baseline:
        codes.insert(0, (args.baseline, baseline_code(args.baseline)))
    print(f"trace  {args.trace}\nruns   {args.runs} (medians, seconds, fresh process each; "
          f"{' and '.join(label for label, _c in codes)} alternating)")
    for method in methods:
        for _label, code in codes:      # replay if needed, compile each code's kernels, warm the OS cache
            run_child("profile-warm", args.trace, method, code)
        load = [os.getloadavg()[0]]
        results = {(label, mode): [] for label, _c in codes for mode in args.modes}
        for _ in range(args.runs):
            for mode in args.modes:
                for label, code in codes:
                    results[(label, mode)].append(run_child(mode, args.trace, method, code))
            load.append(os.getloadavg()[0])
        print(f"\nmethod {method}   (load average {min(load):.1f}-{max(load):.1f} on {os.cpu_count()} cores)")
        for mode in args.modes:
            med = {}
            for label, _c in codes:
                rs = results[(label, mode)]
                med[label] = statistics.median(r["seconds"] for r in rs)
                opened = statistics.median(r["open"] for r in rs)
                cpu = statistics.median(r["cpu"] for r in rs)
                extra = {k: v for k, v in rs[-1].items() if k not in ("seconds", "open", "cpu")}
                verdict = "within 2 s" if med[label] <= 2.0 else "over 2 s"
                print(f"  {mode:13} {label:8} {med[label]:7.3f} s  (Analysis.open {opened:.3f}, CPU {cpu:.2f} s)  "
                      f"{verdict}  {extra}")
            if len(codes) == 2:
                base, this = codes[0][0], codes[1][0]
                print(f"  {'':13} ratio    {med[this] / med[base]:.2f}x ({this} / {base})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
