"""What a trace shows before its replay: per thread, when it ran and how busy it was.

The first open of a big trace replays it (a billion events: about 20 s) and then builds the
timeline's levels; the explorer paints this meanwhile, from what needs no replay (docs/analysis.md,
"Before the replay"): the threads (``threads.jsonl``), each stream's event count (its chunk
headers alone) and the clock samples (``clock.bin``), which map a thread's event positions to
times. A thread's *activity* over a bucket of time is the number of events it recorded in it
(position at the bucket's end less position at its start, on the thread's monotonic clock
points, :func:`jbgui.model.blocking_times.clock_points`), so the preview draws, per lane, the
thread's extent and where it was busy, blocked or idle. :meth:`Preview.replayed_until` says how
far the replay has come in a thread, from the replay's progress in bytes: streams are replayed
one after another in index order (:meth:`jbgui.model.analysis.Analysis.open`).

Nothing here raises for a damaged trace: a part that cannot be read is left out (a thread
without clock samples has no activity), and the replay says what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jbgui.model import blocking_times
from jbgui.model.errors import TraceError
from jbgui.model.tracedir import TraceDir, stream_event_count

BUCKETS = 1024
# A preview reads at most this much of clock.bin (its whole size on javac's billion events: 0.5 MB).
MAX_CLOCK_BYTES = 64 << 20


@dataclass
class ThreadActivity:
    """One thread: its index and name, its events and stream bytes, its clock points (event
    position, nanoseconds since the trace started; empty without a clock) and its events per
    bucket of the preview's time range."""

    index: int
    name: str
    events: int
    stream_bytes: int
    points: np.ndarray          # (n, 2) float64
    activity: np.ndarray        # (BUCKETS,) events per bucket (float64); zeros without a clock

    @property
    def t_first(self) -> float:
        return float(self.points[0, 1]) if len(self.points) else 0.0

    @property
    def t_last(self) -> float:
        return float(self.points[-1, 1]) if len(self.points) else 0.0

    def time_of(self, position: float) -> float:
        """The time of an event position (interpolated between the clock points)."""
        if len(self.points) < 2:
            return self.t_first
        return float(np.interp(position, self.points[:, 0], self.points[:, 1]))


@dataclass
class Preview:
    """Every thread with a stream, in the order the replay takes them, and the time range."""

    threads: list[ThreadActivity]
    has_clock: bool
    t_min: float
    t_max: float

    @property
    def total_bytes(self) -> int:
        return sum(t.stream_bytes for t in self.threads)

    def replayed_until(self, done_bytes: int) -> dict[int, float | None]:
        """Per thread index, the time up to which the replay has come when it has read
        ``done_bytes`` of the streams: None for a thread done, its first time for one not begun."""
        out: dict[int, float | None] = {}
        before = 0
        for t in self.threads:
            if done_bytes >= before + t.stream_bytes:
                out[t.index] = None
            elif done_bytes <= before or not t.stream_bytes:
                out[t.index] = t.t_first
            else:
                out[t.index] = t.time_of(t.events * (done_bytes - before) / t.stream_bytes)
            before += t.stream_bytes
        return out


def preview(path) -> Preview:
    """The preview of the trace directory at ``path`` (:class:`TraceError` only when it is not a
    trace directory at all)."""
    trace = TraceDir(path)
    names = {}
    for info in trace.threads:
        if isinstance(info.get("index"), int):
            names[info["index"]] = info.get("name") or info.get("end_name") or f"thread {info['index']}"
    try:
        indices = trace.stream_indices()
    except TraceError:
        indices = []
    try:
        clock_file = trace.path / "clock.bin"
        clock = trace.clock() if clock_file.is_file() and clock_file.stat().st_size <= MAX_CLOCK_BYTES else None
    except (TraceError, OSError):
        clock = None
    try:
        start = trace.metadata.get("start", {}).get("nanos")
    except TraceError:
        start = None
    threads = []
    for index in indices:
        path_ = trace.stream_path(index)
        try:
            size = path_.stat().st_size
        except OSError:
            continue
        points = np.zeros((0, 2))
        if clock is not None and len(clock):
            points = blocking_times.clock_points(clock[clock["stream"] == index]).astype(np.float64)
            if len(points):
                points[:, 1] -= float(start) if isinstance(start, int) else points[0, 1]
        threads.append(ThreadActivity(index, names.get(index, f"thread {index}"), stream_event_count(path_), size,
                                      points, np.zeros(BUCKETS)))
    timed = [t for t in threads if len(t.points) >= 2]
    has_clock = bool(timed)
    if has_clock:
        t_min = min(t.t_first for t in timed)
        t_max = max(t.t_last for t in timed)
    else:       # events on the x axis, each lane its own
        t_min, t_max = 0.0, float(max((t.events for t in threads), default=0))
    if t_max <= t_min:
        t_max = t_min + 1.0
    edges = np.linspace(t_min, t_max, BUCKETS + 1)
    for t in timed:
        # events up to each edge, on the thread's clock (monotonic: clock_points), differenced
        at = np.interp(edges, t.points[:, 1], t.points[:, 0])
        t.activity = np.maximum(np.diff(at), 0.0)
    return Preview(threads, has_clock, t_min, t_max)
