"""``jbgui``: the explorer's entry point.

    jbgui [TRACE_DIR]
    jbgui TRACE_DIR --screenshot FILE.png [--view summary|timeline|calltree|method] [--select THREAD:ROW]
    jbgui TRACE_DIR --screenshot FILE.png --view cfg|path|variants|loops|exceptions|discovery [--select ...]

``--screenshot`` opens the trace, renders the main window once everything is drawn, saves it
and exits (status 0; 2 when the trace cannot be opened, with the reason on stderr), so that a
person or a script can see what a user sees, without a screen (``QT_QPA_PLATFORM=offscreen``)
or under Xvfb.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

BAD_INPUT = 2
ICON = Path(__file__).resolve().parent / "icons" / "jbgui.svg"
VIEWS = ("summary", "timeline", "calltree", "method", "cfg", "path", "variants", "loops", "exceptions", "discovery")


def build_parser() -> argparse.ArgumentParser:
    from jbgui import __version__

    parser = argparse.ArgumentParser(prog="jbgui", description="Explore basic-block traces of Java programs.")
    parser.add_argument("trace", nargs="?", metavar="TRACE_DIR", help="a trace directory to open")
    parser.add_argument("--screenshot", metavar="FILE.png", type=Path,
                        help="render the window on TRACE_DIR into FILE.png and exit")
    parser.add_argument("--view", choices=VIEWS, default="timeline",
                        help="with --screenshot: the view in front (default timeline); a block view (cfg, path, "
                             "variants, loops, exceptions, discovery) is shown alone, at the window's size")
    parser.add_argument("--select", metavar="THREAD:ROW",
                        help="select a call first: thread name or index, and its row (or a method name "
                             "as THREAD:Class.method to select its first call)")
    parser.add_argument("--size", metavar="WxH", default="1600x1000", help="window size (default 1600x1000)")
    parser.add_argument("--zoom", metavar="FRACTION", type=float, default=None,
                        help="with --screenshot: show this fraction of the run around the selected call")
    parser.add_argument("--dark", action="store_true", help="use a dark palette")
    parser.add_argument("--version", action="version", version=f"jbgui {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.screenshot is not None and not args.trace:
        print("jbgui: error: --screenshot needs a TRACE_DIR", file=sys.stderr)
        return BAD_INPUT
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        print(f"jbgui: error: --size {args.size!r}: expected WIDTHxHEIGHT, e.g. 1600x1000", file=sys.stderr)
        return BAD_INPUT
    if args.screenshot is not None and "QT_QPA_PLATFORM" not in os.environ and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from jbgui.ui.main_window import MainWindow
    from jbgui.ui.style import apply_palette

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("jbgui")
    app.setOrganizationName("jbgui")
    app.setDesktopFileName("jbgui")
    app.setWindowIcon(QIcon(str(ICON)))
    apply_palette(app, dark=args.dark)
    window = MainWindow()
    window.resize(width, height)
    if args.screenshot is not None:
        return _screenshot(app, window, args)
    window.show()
    if args.trace:
        window.open_trace(args.trace)
    return app.exec()


def _screenshot(app, window, args) -> int:
    from PySide6.QtCore import QEventLoop, QTimer

    from jbgui.ui.screenshot import prepare_view, target

    outcome: dict[str, object] = {}
    loop = QEventLoop()
    window.traceLoaded.connect(lambda loaded: (outcome.setdefault("loaded", loaded), loop.quit()))
    window.loadFailed.connect(lambda message: (outcome.setdefault("error", message), loop.quit()))
    window.show()
    window.open_trace(args.trace)
    if not outcome:
        loop.exec()
    if "error" in outcome:
        print(f"jbgui: error: {outcome['error']}", file=sys.stderr)
        return BAD_INPUT
    problem = prepare_view(window, args.view, args.select, args.zoom)
    if problem:
        print(f"jbgui: error: {problem}", file=sys.stderr)
        return BAD_INPUT
    # Let queued work (listings, per-call counts) finish and the views repaint.
    deadline = QTimer()
    deadline.setSingleShot(True)
    wait = QEventLoop()
    deadline.timeout.connect(wait.quit)
    deadline.start(200)
    wait.exec()
    from jbgui.ui.tasks import _RUNNING
    for task in list(_RUNNING):
        task.wait(60)
    for _ in range(5):
        app.processEvents()
    args.screenshot.parent.mkdir(parents=True, exist_ok=True)
    if not target(window, args.view).grab().save(str(args.screenshot)):
        print(f"jbgui: error: cannot write {args.screenshot}", file=sys.stderr)
        return BAD_INPUT
    print(f"jbgui: wrote {args.screenshot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
