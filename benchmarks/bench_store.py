"""The analysis store on real traces: size against the trace, cold and warm opens, replay
throughput, peak memory, and the first open after a fresh install (issue 13).

For each trace (hard-linked copies of the traces the other benchmarks record under build/bench —
``bench_explorer.py`` records javac-agent-sources, ``bench_analyzer.py`` javac-java-util-stream —
or of ``--traces-dir``; never opened in place):

- trace size (events + static.xml), cache size after an open that also builds the derived arrays
  (calling-context trees and the merged forest, the methods table, summaries, the timeline's
  index), and their ratio;
- cold open: a fresh process, no cache, until the explorer's model is ready to paint
  (``jbgui.ui.loading.load_trace``: replay, timeline, summary), and the replay's throughput
  (events / seconds of ``Analysis.open``, end to end: static.xml, decoding, replay, store);
- the explorer itself (offscreen), cold: opening the trace without its cache, when the timeline's
  preview (the threads' activity, painted during the replay) and when its calls are first painted;
- static.xml read alone, as a first open reads it (the replay waits for it);
- warm open: a fresh process, the cache present: ``Analysis.open`` alone and ``load_trace``;
- the explorer itself (offscreen), warm: open to the first painted timeline and the memory then,
  and the time and peak memory when every background task is done (the call tree reads its first
  thread's columns in the background);
- reading the largest thread's call columns block by block (every 4th block, each column), as
  the passes over a thread do;
- peak resident memory of each of those processes;

and for the bundled example, the first open after a fresh install: a new numba cache, then what
``scripts/setup.sh`` does (``python -m jbgui.model.warmup``), then a fresh process opening a newly
recorded trace of the example; beside it the same open with an empty numba cache (what it cost
before kernels were compiled at set-up).

Every number is the median of ``--runs`` fresh processes. Run: ``.venv/bin/python benchmarks/bench_store.py``
(``--traces NAME...``, ``--runs N``, ``--skip-install``).
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

REPO = Path(__file__).resolve().parents[1]
# Where the traces are: the other benchmarks record them here (--traces-dir or $JBGUI_BENCH_TRACES).
TRACES = Path(os.environ.get("JBGUI_BENCH_TRACES", REPO / "build" / "bench"))
WORK = REPO / "build" / "bench-store"
DEFAULT_TRACES = ("javac-agent-sources", "javac-java-util-stream")

CHILD = r"""
import json, resource, shutil, sys, time
from pathlib import Path
mode, path = sys.argv[1], Path(sys.argv[2])
out = {}
started = time.perf_counter()
if mode == "cold":
    shutil.rmtree(path / "analysis", ignore_errors=True)
    from jbgui.model.analysis import Analysis
    t = time.perf_counter()
    analysis = Analysis.open(path)
    out["open"] = time.perf_counter() - t
    out["events"] = sum(th.events for th in analysis.threads)
    out["calls"] = sum(len(th.calls) for th in analysis.threads)
    from jbgui.model.timeline import TimelineModel
    from jbgui.model.metrics import run_summary
    TimelineModel(analysis); run_summary(analysis)
    out["first_paint"] = time.perf_counter() - t
elif mode == "warm":
    from jbgui.model.analysis import Analysis
    t = time.perf_counter()
    analysis = Analysis.open(path)
    out["open"] = time.perf_counter() - t
    assert analysis.from_cache
    from jbgui.model.timeline import TimelineModel
    from jbgui.model.metrics import run_summary
    TimelineModel(analysis); run_summary(analysis)
    out["first_paint"] = time.perf_counter() - t
elif mode == "derive":
    from jbgui.model.analysis import Analysis
    from jbgui.model.timeline import TimelineModel
    analysis = Analysis.open(path)
    TimelineModel(analysis)
    for th in analysis.threads:
        th.cct, th.call_summary
    # what the aggregated views keep: the run's trees (every thread's and the forest, one file)
    # and the methods table
    from jbgui.model import methods_table, transforms
    view = transforms.AggregateView(analysis)
    methods_table.for_view(view, ())
elif mode in ("gui", "gui-cold"):
    # the explorer itself (offscreen): open to the first painted timeline, the memory then, and
    # when every background task (the call tree's first thread) is done; "gui-cold" opens the
    # trace without its cache and times the preview painted during the replay and the calls
    import os
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if mode == "gui-cold":
        shutil.rmtree(path / "analysis", ignore_errors=True)
    from PySide6.QtWidgets import QApplication
    app = QApplication([])
    from jbgui.ui import timeline_view as TV
    from jbgui.ui.main_window import MainWindow
    from jbgui.ui.tasks import _RUNNING
    def rss_now():
        return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    marks = {}
    def marking(cls, key):
        paint = cls.paint
        def painted(self, *a):
            marks.setdefault(key, time.perf_counter())
            return paint(self, *a)
        cls.paint = painted
    marking(TV.FlameItem, "paint")
    try:
        from jbgui.ui import timeline_preview as TP
        marking(TP.PreviewItem, "preview")
    except ImportError:     # code from before the preview
        pass
    window = MainWindow()
    window.resize(1600, 1000)
    window.show()
    window.tabs.setCurrentWidget(window.timeline)
    loaded = []
    window.traceLoaded.connect(lambda _l: loaded.append(True))
    t = time.perf_counter()
    window.open_trace(str(path))
    while not loaded:
        app.processEvents()
        time.sleep(0.002)
    window.tabs.setCurrentWidget(window.timeline)
    while "paint" not in marks:
        app.processEvents()
    out["first_paint"] = marks["paint"] - t
    if "preview" in marks:
        out["preview_paint"] = marks["preview"] - t
    out["paint_rss_mb"] = rss_now()
    for task in list(_RUNNING):
        task.wait(600)
    app.processEvents()
    out["all_done"] = time.perf_counter() - t
elif mode == "reads":
    # reading the call columns block by block, as the passes over a thread do: every 4th block of
    # the largest thread, each column, without the block cache
    from jbgui.model.analysis import Analysis
    analysis = Analysis.open(path)
    assert analysis.from_cache
    calls = max(analysis.threads, key=lambda th: len(th.calls)).calls
    starts = calls._stored.starts
    for name in ("method", "call_site", "flags", "caller_block", "first", "last", "depth", "incl_bytecodes",
                 "incl_blocks", "receiver"):
        t = time.perf_counter()
        for b in range(0, len(starts) - 1, 4):
            calls.window(name, int(starts[b]), int(starts[b + 1]), keep=False)
        out[name] = time.perf_counter() - t
elif mode == "static":
    # static.xml read as a first open reads it (no statics cache), alone
    from jbgui.model.statics import load_statics
    t = time.perf_counter()
    load_statics(path)
    out["static"] = time.perf_counter() - t
elif mode == "example":
    from jbgui.ui.loading import load_trace
    t = time.perf_counter()
    loaded = load_trace(lambda d, n: None, lambda: False, path)
    out["first_paint"] = time.perf_counter() - t
usage = resource.getrusage(resource.RUSAGE_SELF)
out["rss_mb"] = usage.ru_maxrss / 1024
out["cpu_s"] = usage.ru_utime + usage.ru_stime
print(json.dumps(out))
"""


def child(mode: str, path: Path, env: dict | None = None, code: Path = REPO) -> dict:
    """One measurement in a fresh process, importing jbgui from ``code`` (this checkout, or the
    baseline's exported sources)."""
    run = subprocess.run([sys.executable, "-c", CHILD, mode, str(path)], capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, cwd=code)
    if run.returncode != 0:
        raise SystemExit(f"bench_store: {mode} {path} failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def tree_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            p = os.path.join(root, name)
            if not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def copy_trace(name: str, prefix: str = "") -> Path:
    """A hard-linked copy of TRACES/NAME under build/bench-store, without its cache."""
    source = TRACES / name
    target = WORK / f"{prefix}{name}"
    if not target.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    shutil.rmtree(target / "analysis", ignore_errors=True)
    return target


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def bench_trace(name: str, runs: int, code: Path = REPO, label: str = "this branch") -> dict:
    source = TRACES / name
    info = json.loads((source / "trace.json").read_text())
    if info.get("status") != "complete":
        print(f"== {name}: skipped (trace.json says {info.get('status')!r})")
        return {}
    trace = copy_trace(name, "" if code == REPO else "baseline-")
    if code != REPO:
        child("cold", trace, code=code)     # the baseline's kernels compile in its own tree first
    cold = [child("cold", trace, code=code) for _ in range(runs)]
    static = [child("static", trace, code=code) for _ in range(runs)]
    gui_cold = [child("gui-cold", trace, code=code) for _ in range(runs)] if code == REPO else []
    child("derive", trace, code=code)
    warm = [child("warm", trace, code=code) for _ in range(runs)]
    gui = [child("gui", trace, code=code) for _ in range(runs)] if code == REPO else []
    reads = [child("reads", trace, code=code) for _ in range(runs)]
    trace_bytes = tree_size(trace / "events") + (trace / "static.xml").stat().st_size
    cache_bytes = tree_size(trace / "analysis")
    events = cold[0]["events"]
    r = {
        "trace": name, "code": label, "events": events, "calls": cold[0]["calls"], "trace_mb": trace_bytes / 1e6,
        "cache_mb": cache_bytes / 1e6, "ratio": cache_bytes / trace_bytes,
        "cold_open_s": median(cold, "open"), "cold_first_paint_s": median(cold, "first_paint"),
        "cold_cpu_s": median(cold, "cpu_s"),
        "replay_meps": events / median(cold, "open") / 1e6, "cold_rss_mb": median(cold, "rss_mb"),
        "warm_open_s": median(warm, "open"), "warm_first_paint_s": median(warm, "first_paint"),
        "warm_rss_mb": median(warm, "rss_mb"),
        "static_s": median(static, "static"), "static_rss_mb": median(static, "rss_mb"),
    }
    r["reads"] = {k: median(reads, k) for k in reads[0] if k not in ("rss_mb", "cpu_s")}
    if gui_cold:
        r.update({"gui_cold_calls_s": median(gui_cold, "first_paint"), "gui_cold_rss_mb": median(gui_cold, "rss_mb")})
        if all("preview_paint" in g for g in gui_cold):
            r["gui_cold_preview_s"] = median(gui_cold, "preview_paint")
    if gui:
        r.update({"gui_paint_s": median(gui, "first_paint"), "gui_paint_rss_mb": median(gui, "paint_rss_mb"),
                  "gui_done_s": median(gui, "all_done"), "gui_rss_mb": median(gui, "rss_mb")})
    largest = sorted(((p.stat().st_size, p.relative_to(trace / "analysis"))
                      for p in (trace / "analysis").rglob("*") if p.is_file()), reverse=True)[:3]
    r["largest"] = [f"{p} {s / 1e6:.1f} MB" for s, p in largest]
    return r


def baseline_code(rev: str) -> Path:
    """The jbgui sources of ``rev``, exported under build/bench-store/code-REV."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout.strip()
    target = WORK / f"code-{sha}"
    if not (target / "jbgui").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha, "jbgui"], cwd=REPO, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def bench_install(runs: int) -> dict:
    """First open of a fresh recording of the bundled example after a fresh install (a new numba
    cache), with and without the set-up time warm-up."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        tmp = Path(tmp)
        classes = tmp / "classes"
        subprocess.run(["javac", "-g", "-d", str(classes), *map(str, (REPO / "resources/examples/example").glob("*.java"))],
                       check=True)

        def record(target: Path) -> None:
            subprocess.run([str(REPO / ".venv/bin/jbtrace"), "record", "--force", "-o", str(target), "--",
                            "java", "-cp", str(classes), "example.Main"], check=True, capture_output=True)
        for label, warm in (("without warm-up", False), ("after warm-up", True)):
            times, rss = [], []
            for i in range(runs if warm else 1):
                numba_cache = tmp / f"numba-{label[:5]}-{i}"
                env = {"NUMBA_CACHE_DIR": str(numba_cache)}
                if warm:
                    record(tmp / "warm-trace")
                    subprocess.run([sys.executable, "-m", "jbgui.model.warmup", str(tmp / "warm-trace")], check=True,
                                   env={**os.environ, **env}, capture_output=True)
                trace = tmp / f"demo-{label[:5]}-{i}"
                record(trace)
                got = child("example", trace, env)
                times.append(got["first_paint"])
                rss.append(got["rss_mb"])
            out[label] = (statistics.median(times), statistics.median(rss))
    return out


def main() -> int:
    global TRACES
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", nargs="*", default=list(DEFAULT_TRACES), help="trace directory names under --traces-dir")
    parser.add_argument("--traces-dir", type=Path, default=TRACES, help="where the traces are (default: build/bench)")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per measurement (median)")
    parser.add_argument("--baseline", metavar="REV", default="c61eac4",
                        help="also measure jbgui at REV (the store before issue 13) on the first trace, side by side; "
                             "'' to skip")
    parser.add_argument("--skip-install", action="store_true", help="skip the fresh-install measurement")
    args = parser.parse_args()
    load_before = os.getloadavg()
    results = []
    TRACES = args.traces_dir
    for name in args.traces:
        if not (TRACES / name / "trace.json").is_file():
            print(f"bench_store: no trace {TRACES / name}: record it first (benchmarks/bench_explorer.py records "
                  f"javac-agent-sources, benchmarks/bench_analyzer.py javac-java-util-stream) or pass --traces-dir",
                  file=sys.stderr)
            return 2
    for i, name in enumerate(args.traces):
        if i == 0 and args.baseline:
            got = bench_trace(name, args.runs, baseline_code(args.baseline), f"at {args.baseline}")
            if got:
                results.append(got)
        got = bench_trace(name, args.runs)
        if got:
            results.append(got)
    print(f"\n== analysis store, medians of {args.runs} fresh processes each "
          f"(load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores)")
    header = (f"{'trace':<24}{'code':<14}{'events':>13}{'calls':>12}{'trace MB':>9}{'cache MB':>9}{'ratio':>6}"
              f"{'cold open':>10}{'CPU s':>7}{'1st paint':>10}{'M ev/s':>7}{'cold RSS':>9}{'warm open':>10}"
              f"{'warm paint':>11}{'warm RSS':>9}")
    print(header)
    for r in results:
        print(f"{r['trace']:<24}{r['code']:<14}{r['events']:>13,}{r['calls']:>12,}{r['trace_mb']:>9.1f}"
              f"{r['cache_mb']:>9.1f}{r['ratio']:>6.2f}{r['cold_open_s']:>9.2f}s{r['cold_cpu_s']:>7.1f}"
              f"{r['cold_first_paint_s']:>9.2f}s{r['replay_meps']:>7.1f}{r['cold_rss_mb']:>7.0f}MB"
              f"{r['warm_open_s']:>9.2f}s{r['warm_first_paint_s']:>10.2f}s{r['warm_rss_mb']:>7.0f}MB")
        print(f"    largest cached files: {'; '.join(r['largest'])}")
        print(f"    static.xml read on a first open (part of the cold open): {r['static_s']:.2f} s, "
              f"peak {r['static_rss_mb']:.0f} MB")
        print("    reading every 4th block of the largest thread, s: "
              + ", ".join(f"{k} {v:.2f}" for k, v in r["reads"].items()) + f"; all {sum(r['reads'].values()):.2f}")
        if "gui_cold_calls_s" in r:
            print(f"    explorer, cold (no cache): the timeline's preview painted "
                  f"{r.get('gui_cold_preview_s', float('nan')):.2f} s after opening, the calls "
                  f"{r['gui_cold_calls_s']:.2f} s; peak {r['gui_cold_rss_mb']:.0f} MB")
        if "gui_paint_s" in r:
            print(f"    explorer, warm: first timeline paint {r['gui_paint_s']:.2f} s at {r['gui_paint_rss_mb']:.0f} MB "
                  f"resident; every background task done (the call tree's first thread) {r['gui_done_s']:.2f} s, "
                  f"peak {r['gui_rss_mb']:.0f} MB")
    print("\ntargets: cache <= trace (ratio <= 1), cold first paint <= 5 s and replay >= 50 M events/s (javac "
          "traces), warm open < 1 s, RSS < 2 GB")
    for r in results:
        if r["code"] != "this branch":
            continue
        checks = [("ratio <= 1", r["ratio"] <= 1, f"{r['ratio']:.2f}"),
                  ("warm open < 1 s", r["warm_open_s"] < 1, f"{r['warm_open_s']:.2f} s"),
                  ("static.xml read < 2 s", r["static_s"] < 2, f"{r['static_s']:.2f} s"),
                  ("explorer warm paint < 1 s", r["gui_paint_s"] < 1, f"{r['gui_paint_s']:.2f} s"),
                  ("explorer RSS < 2 GB", r["gui_rss_mb"] < 2048, f"{r['gui_rss_mb']:.0f} MB"),
                  ("cold RSS < 2 GB", r["cold_rss_mb"] < 2048, f"{r['cold_rss_mb']:.0f} MB"),
                  ("warm RSS < 2 GB", r["warm_rss_mb"] < 2048, f"{r['warm_rss_mb']:.0f} MB")]
        if r["trace"].startswith("javac"):
            # the first paint of a cold open: the timeline's preview (threads and their activity,
            # painted during the replay); the calls themselves are drawn once replay and levels end
            preview = r.get("gui_cold_preview_s", float("inf"))
            checks += [("cold first paint <= 5 s", preview <= 5,
                        f"{preview:.2f} s (preview; calls {r.get('gui_cold_calls_s', float('nan')):.2f} s)"),
                       ("replay >= 50 M ev/s", r["replay_meps"] >= 50, f"{r['replay_meps']:.1f} M ev/s")]
        for label, ok, value in checks:
            print(f"  {r['trace']:<24}{label:<26}{'met' if ok else 'MISSED':<8}{value}")
    if not args.skip_install:
        install = bench_install(args.runs)
        print("\n== first open of the bundled example after a fresh install (new numba cache), model ready to paint")
        for label, (seconds, rss) in install.items():
            print(f"  {label:<18}{seconds:>8.2f} s  {rss:>6.0f} MB")
        base, warm = install["without warm-up"][0], install["after warm-up"][0]
        print(f"  ratio {base / warm:.1f}x; target <= 3 s after install: {'met' if warm <= 3 else 'MISSED'} ({warm:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
