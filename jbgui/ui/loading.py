"""Opening a trace for the explorer: replay (or the cached replay) and the timeline model, built
off the GUI thread, as one :class:`LoadedTrace` the views share."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jbgui.model.analysis import Analysis
from jbgui.model.errors import TraceError
from jbgui.model.metrics import run_summary
from jbgui.model.replay import Cancelled
from jbgui.model.timeline import TimelineModel
from jbgui.ui.calltree_model import read_ahead


@dataclass
class LoadedTrace:
    """Everything the views draw from: the replayed trace and its timeline."""

    path: Path
    analysis: Analysis
    timeline: TimelineModel
    summary: dict = field(default_factory=dict)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def load_trace(progress: Callable[[int, int], None], cancelled: Callable[[], bool], path: str | Path,
               user_cache: bool = False) -> LoadedTrace:
    """Replay the trace at ``path`` (a :class:`jbgui.ui.tasks.Task` function); ``user_cache``: keep
    the analysis cache in the user cache directory, not beside the trace."""
    started = time.perf_counter()
    path = Path(path)
    if not path.exists():
        raise TraceError(f"{path}: no such trace directory")
    if not path.is_dir():
        raise TraceError(f"{path}: not a directory; open the trace directory that holds trace.json")
    try:
        analysis = Analysis.open(path, progress=progress, cancelled=cancelled, user_cache=user_cache)
    except Cancelled:
        raise
    # The timeline's levels, the first time, are one pass over every thread's calls on two cores
    # (decoding ahead), and it makes the threads' call summaries on the way: run_summary reads them.
    # Beside it, what the call tree's first open will read (a warm open: most of what is left).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="jbgui-read-ahead") as pool:
        ahead = pool.submit(read_ahead, analysis)
        timeline = TimelineModel(analysis)
        summary = run_summary(analysis)
        try:
            ahead.result()
        except Exception:  # noqa: BLE001 - only reading ahead: the call tree says what is wrong itself
            pass
    problems = list(dict.fromkeys([*analysis.problems, *analysis.trace.problems]))   # the replay's, the readers'
    return LoadedTrace(path, analysis, timeline, summary, time.perf_counter() - started, problems)
