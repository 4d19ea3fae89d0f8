"""Opening a trace for the inspecting subcommands: one clear line and exit status 2 for a trace
that cannot be read, never a traceback."""

from __future__ import annotations

import sys

from jbgui.model import TraceError
from jbgui.model.analysis import Analysis
from jbgui.cli.errors import BAD_INPUT, TraceInputError  # noqa: F401 (re-exported)

def open_analysis(path: str, progress: bool = False) -> Analysis:
    """Replay (or load the cached replay of) the trace at ``path``."""
    def report(done: int, total: int) -> None:
        if total:
            print(f"\rreplaying {path}: {100 * done // total}%", end="", file=sys.stderr, flush=True)
    try:
        analysis = Analysis.open(path, progress=report if progress and sys.stderr.isatty() else None)
    except TraceError as error:
        raise TraceInputError(str(error)) from error
    except OSError as error:
        raise TraceInputError(f"{path}: {error.strerror or error}") from error
    if progress and sys.stderr.isatty():
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    seen = set()
    for problem in [*analysis.problems, *analysis.trace.problems]:   # the replay's, then the readers'
        if problem not in seen:
            seen.add(problem)
            print(f"jbtrace: warning: {problem}", file=sys.stderr)
    return analysis
