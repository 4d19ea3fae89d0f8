"""Explorer benchmark: time to the first painted timeline (analyzer cache cold and warm) and the
time to redraw the timeline after a zoom or a pan step, on a real trace.

Records javac compiling jbgui's own agent sources (41 files against ASM: about 260 million
events, 54 million calls) unless ``--trace`` names another trace (the analyzer benchmark's javac on
``java/util/stream``, a billion events, is ``build/bench/javac-java-util-stream``). Each measurement runs in a fresh
process (``QT_QPA_PLATFORM=offscreen``) that starts the explorer, opens the trace and waits until
the timeline has been painted; "cold" removes the analyzer's cache first. The redraw steps zoom
in by 2x (and out again) around the middle of the busiest thread, and pan by a fifth of the view,
each followed by a synchronous repaint of the timeline.

    .venv/bin/python benchmarks/bench_explorer.py --runs 3

Targets (issue 4): first paint < 1 s warm, < 5 s cold; redraw < 50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from jbgui.agent.build import JDK_INTERNAL_EXPORTS  # noqa: E402

CHILD = r'''
import json, os, statistics, sys, time
t_start = float(sys.argv[2])
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication
app = QApplication([])
from jbgui.ui.main_window import MainWindow
window = MainWindow()
window.resize(1600, 1000)
window.show()
loop = QEventLoop()
window.traceLoaded.connect(lambda _l: loop.quit())
window.loadFailed.connect(lambda m: (print(m, file=sys.stderr), sys.exit(3)))
t_open = time.time()
window.open_trace(sys.argv[1])
loop.exec()
window.tabs.setCurrentWidget(window.timeline)
view = window.timeline
view.plot.viewport().repaint()
first_paint = time.time() - t_start
open_to_paint = time.time() - t_open
item = view.item
tl = max(window.loaded.timeline.threads, key=lambda t: t.rows)
vb = view.viewbox
def step(x0, x1):
    vb.setXRange(x0, x1, padding=0)
    t = time.perf_counter()
    view.plot.viewport().repaint()
    return time.perf_counter() - t, item.last_paint_rects
zooms, pans, rects = [], [], []
lo, hi = tl.t_min, tl.t_max
center = (lo + hi) / 2
width = hi - lo
for k in range(24):  # in, 2x per step, down to about a millionth of the run
    width /= 2
    dt, n = step(center - width / 2, center + width / 2)
    zooms.append(dt); rects.append(n)
for k in range(24):
    width *= 2
    dt, n = step(center - width / 2, center + width / 2)
    zooms.append(dt); rects.append(n)
width = (hi - lo) / 50
x = lo
for k in range(40):
    x += width / 5
    dt, n = step(x, x + width)
    pans.append(dt)
print(json.dumps({"first_paint": first_paint, "open_to_paint": open_to_paint, "zoom_median": statistics.median(zooms), "zoom_max": max(zooms),
                  "pan_median": statistics.median(pans), "pan_max": max(pans), "rects_max": max(rects),
                  "calls": sum(t.rows for t in window.loaded.timeline.threads),
                  "events": sum(t.events for t in window.loaded.analysis.threads)}))
'''

import statistics  # noqa: E402  (the child imports it too)
import time  # noqa: E402


def run_child(trace: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JBGUI_CONFIG_DIR": str(ROOT / "build" / "bench" / "config")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(trace), repr(time.time())], capture_output=True,
                         text=True, cwd=ROOT, env=env)
    if out.returncode:
        raise SystemExit(f"explorer run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def record_javac_on_agent_sources(out: Path, java_home: Path) -> None:
    """javac on the recorder's own Java sources (against Debian's ASM): a real source tree."""
    sources = sorted(str(p) for p in (ROOT / "jbgui" / "agent" / "java").rglob("*.java"))
    asm = os.pathsep.join(f"/usr/share/java/{m}.jar" for m in ("asm", "asm-tree", "asm-analysis", "asm-util"))
    work = out.parent / "javac-agent-sources-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    print(f"recording javac on {len(sources)} files of the agent's sources into {out} …", flush=True)
    subprocess.run([str(ROOT / ".venv" / "bin" / "jbtrace"), "record", "--force", "-o", str(out), "--",
                    # the runtime uses JDK internals (the agent's build passes the same flags)
                    str(java_home / "bin" / "javac"), *(a for pkg in JDK_INTERNAL_EXPORTS for a in ("--add-exports", pkg)),
                    "-cp", asm, "-d", str(work / "out"), *sources],
                   cwd=work, check=True, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, help="an existing trace (default: the analyzer benchmark's)")
    parser.add_argument("--java-home", type=Path,
                        default=Path(os.environ.get("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    trace = args.trace
    if trace is None:
        trace = ROOT / "build" / "bench" / "javac-agent-sources"
        if not (trace / "trace.json").exists():
            record_javac_on_agent_sources(trace, args.java_home)
    run_child(trace)  # compiles numba's kernel into its cache and fills the analyzer cache
    cold, warm = [], []
    for _ in range(args.runs):
        shutil.rmtree(trace / "analysis", ignore_errors=True)
        cold.append(run_child(trace))
        warm.append(run_child(trace))
    events = warm[0]["events"]
    print(f"\ntrace {trace}: {events:,} events, {warm[0]['calls']:,} calls; medians of {args.runs} runs, "
          "each in a fresh process\n")
    med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    print(f"first painted timeline, cache cold   {med(cold, 'first_paint'):8.2f} s from process start, "
          f"{med(cold, 'open_to_paint'):.2f} s from opening the trace   (target < 5 s)")
    print(f"first painted timeline, cache warm   {med(warm, 'first_paint'):8.2f} s from process start, "
          f"{med(warm, 'open_to_paint'):.2f} s from opening the trace   (target < 1 s)")
    print(f"redraw after a zoom step (median)    {1e3 * med(warm, 'zoom_median'):8.1f} ms  "
          f"(max {1e3 * med(warm, 'zoom_max'):.1f} ms; target < 50 ms)")
    print(f"redraw after a pan step (median)     {1e3 * med(warm, 'pan_median'):8.1f} ms  "
          f"(max {1e3 * med(warm, 'pan_max'):.1f} ms)")
    print(f"most rectangles in one paint         {int(med(warm, 'rects_max')):8,}")
    print(f"\ncold / warm first paint = {med(cold, 'first_paint') / med(warm, 'first_paint'):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
