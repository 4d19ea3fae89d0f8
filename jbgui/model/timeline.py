"""What the timeline draws: per thread, the calls as rectangles (time × depth), with whatever is
narrower than a pixel merged before it reaches the view.

The call columns stay where the analyzer put them (memory-mapped for large traces): a query walks
the call tree (:mod:`jbgui.model.timeline_kernel`) and visits only what it draws, so it costs
about the same for a trace of a thousand calls and one of two hundred million, and nothing is
built per call when a trace opens. The one derived column, each call's deepest descendant depth,
is computed once per thread and kept beside the analyzer's columns.

Times are nanoseconds since the trace started (interpolated between the thread's clock samples),
or event indices for a trace without a clock (then lanes of different threads do not share an
axis; :attr:`TimelineModel.has_clock` says which).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jbgui.model import derived
from jbgui.model import timeline_kernel as K
from jbgui.model.analysis import Analysis, ThreadReplay

_FIRST_CAPACITY = 1 << 14
_MAX_DEPTH_FILE = "max_depth.bin"
_INDEX_FILE = "timeline_index.npz"


@dataclass
class Rects:
    """Rectangles of one query: the call row (for a merged subtree, its root), the depths it spans
    (``depth``..``depth_end``: one row for a call, down to the deepest descendant for a subtree
    narrower than a pixel), start and end time, whether it is such a merged subtree, and the
    call's method and flags."""

    row: np.ndarray
    depth: np.ndarray
    depth_end: np.ndarray
    start: np.ndarray
    end: np.ndarray
    merged: np.ndarray
    method: np.ndarray
    flags: np.ndarray

    def __len__(self) -> int:
        return len(self.row)

    @staticmethod
    def empty() -> "Rects":
        z = np.zeros(0, np.int64)
        return Rects(z, z, z, np.zeros(0), np.zeros(0), np.zeros(0, np.bool_), z, z)


class ThreadTimeline:
    """One thread's calls in time: the columns the walk reads, and queries."""

    def __init__(self, thread: ThreadReplay, has_clock: bool):
        self.thread = thread
        calls = thread.calls
        self.rows = n = len(calls)
        self.first = np.asarray(calls.first)
        self.last = np.asarray(calls.last)
        self.end_row = np.asarray(calls.end)
        self.parent = np.asarray(calls.parent)
        self.depth = np.asarray(calls.depth)
        self.max_depth_below = _max_depth_column(calls.directory, self.parent, self.depth, n)
        index = _search_index(calls.directory, self.first, self.depth, n)
        self.first_sample = index["first_sample"]
        self.blocks_small = index["blocks_small"]
        self.blocks_large = index["blocks_large"]
        clock = thread.clock if has_clock and len(thread.clock) >= 2 else np.zeros((0, 2))
        self.pos = np.ascontiguousarray(clock[:, 0], np.float64)
        self.nanos = np.ascontiguousarray(clock[:, 1], np.float64)
        if n:
            roots = _roots(self.end_row, n)   # top-level calls: their subtrees cover every row
            self.max_depth = int(np.asarray(self.max_depth_below)[roots].max())
            self.t_min = self.time(float(self.first[0]))
            self.t_max = self.time(float(np.asarray(self.last)[roots].max()) + 1.0)
        else:
            self.max_depth = -1
            self.t_min = self.t_max = 0.0
        self._capacity = _FIRST_CAPACITY

    # ------------------------------------------------------------------ times

    def time(self, event: float) -> float:
        return float(K.time_of(float(event), self.pos, self.nanos))

    def event(self, t: float) -> float:
        return float(K.event_at(float(t), self.pos, self.nanos))

    def span(self, row: int) -> tuple[float, float]:
        """Start and end time of a call: [t(first), t(last + 1))."""
        return self.time(float(self.first[row])), self.time(float(self.last[row]) + 1.0)

    def spans(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start and end times of many calls (every call when ``rows`` is None)."""
        first = self.first if rows is None else self.first[rows]
        last = self.last if rows is None else self.last[rows]
        if len(self.pos) < 2:
            return first.astype(np.float64), last.astype(np.float64) + 1.0
        return (np.interp(first.astype(np.float64), self.pos, self.nanos),
                np.interp(last.astype(np.float64) + 1.0, self.pos, self.nanos))

    # ------------------------------------------------------------------ queries

    def query(self, t0: float, t1: float, units_per_pixel: float, depth_lo: int = 0,
              depth_hi: int | None = None) -> Rects:
        """Rectangles overlapping [t0, t1) at depths depth_lo..depth_hi (inclusive), merging
        subtrees narrower than ``units_per_pixel``."""
        if not self.rows or t1 <= t0:
            return Rects.empty()
        hi = self.max_depth if depth_hi is None else min(depth_hi, self.max_depth)
        if hi < depth_lo:
            return Rects.empty()
        px = max(float(units_per_pixel), 1e-12)
        while True:
            cap = self._capacity
            out = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
                   np.empty(cap, np.float64), np.empty(cap, np.float64), np.empty(cap, np.int8))
            k = K.query(self.first, self.first_sample, self.last, self.end_row, self.parent, self.depth, self.max_depth_below,
                        self.blocks_small, self.blocks_large, self.pos, self.nanos, float(t0), float(t1), px, int(max(depth_lo, 0)), int(hi), *out)
            if k < cap:
                break
            self._capacity = cap * 4
        row, d0, d1, start, end, merged = (a[:k] for a in out)
        calls = self.thread.calls
        return Rects(row, d0, d1, start, end, merged.astype(np.bool_), np.asarray(calls.method)[row].astype(np.int64),
                     np.asarray(calls.flags)[row].astype(np.int64))

    def call_at(self, t: float, depth: int) -> int:
        """The row of the call at ``depth`` running at time ``t`` (-1 if none)."""
        if not self.rows or depth < 0 or depth > self.max_depth:
            return -1
        return int(K.call_at(self.first, self.first_sample, self.last, self.end_row, self.parent, self.depth, self.event(t), depth))

    def call_near(self, t: float, depth: int, tolerance: float) -> int:
        """Like :meth:`call_at`, or else a call at ``depth`` within ``tolerance`` of ``t`` (a pixel
        or two, so that calls narrower than a pixel can be picked)."""
        row = self.call_at(t, depth)
        if row >= 0:
            return row
        for probe in (t - tolerance, t + tolerance, t - tolerance / 2, t + tolerance / 2):
            row = self.call_at(probe, depth)
            if row >= 0:
                return row
        return -1


class TimelineModel:
    """Every thread's timeline, and the marks drawn over them (exceptions, class loads)."""

    def __init__(self, analysis: Analysis, use_clock: bool = True):
        """``use_clock=False`` puts every lane on its own event index (the x-axis that is exact
        where times are interpolated, see :mod:`jbgui.model.time_quality`)."""
        self.analysis = analysis
        with_calls = [t for t in analysis.threads if len(t.calls)]
        self.clock_available = bool(with_calls) and all(len(t.clock) >= 2 for t in with_calls)
        self.has_clock = self.clock_available and use_clock
        self.threads = [ThreadTimeline(t, self.has_clock) for t in analysis.threads]
        spans = [(tl.t_min, tl.t_max) for tl in self.threads if tl.rows]
        self.t_min = min((s for s, _ in spans), default=0.0)
        self.t_max = max((e for _, e in spans), default=1.0)
        if self.t_max <= self.t_min:
            self.t_max = self.t_min + 1.0

    @property
    def unit(self) -> str:
        return "ns" if self.has_clock else "events"

    def thread_timeline(self, index: int) -> ThreadTimeline:
        for tl in self.threads:
            if tl.thread.index == index:
                return tl
        raise KeyError(index)

    def exception_marks(self, tl: ThreadTimeline) -> dict[str, np.ndarray]:
        """Where exceptions were thrown and caught: times and depths (for the markers), and the
        class of each exception (``exc_class``, a class id)."""
        exc = tl.thread.exceptions
        if not len(exc):
            z = np.zeros(0)
            return {"throw_t": z, "throw_depth": z, "catch_t": z, "catch_depth": z, "index": np.zeros(0, np.int64),
                    "exc_class": np.zeros(0, np.int64)}
        throw_row = exc["throw_row"]
        catch_row = exc["catch_row"]
        throw_depth = np.where(throw_row >= 0, tl.depth[np.maximum(throw_row, 0)], 0)
        caught = catch_row >= 0
        catch_depth = np.where(caught, tl.depth[np.maximum(catch_row, 0)], -1)
        return {"throw_t": self._event_time(tl, exc["throw_event"]), "throw_depth": throw_depth,
                "catch_t": self._event_time(tl, exc["catch_event"]), "catch_depth": catch_depth,
                "index": np.arange(len(exc)), "exc_class": np.asarray(exc["exc_class"], np.int64)}

    def class_load_times(self, tl: ThreadTimeline) -> np.ndarray:
        loads = tl.thread.class_loads
        return self._event_time(tl, loads["event"]) if len(loads) else np.zeros(0)

    def _event_time(self, tl: ThreadTimeline, events: np.ndarray) -> np.ndarray:
        events = np.asarray(events, np.float64)
        if len(tl.pos) < 2:
            return events
        return np.interp(events, tl.pos, tl.nanos)


def _roots(end_row: np.ndarray, n: int) -> np.ndarray:
    """Rows of the top-level calls (a chain through ``end``)."""
    out = []
    r = 0
    while r < n and len(out) < 10_000_000:
        out.append(r)
        r = int(end_row[r])
    return np.array(out, np.int64)


def _search_index(directory: Path | None, first: np.ndarray, depth: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """The small arrays the walk searches before touching the columns: every SAMPLE-th first
    event, and the maximum depth per block of rows (computed once, kept beside the columns)."""
    if n == 0:
        return {"first_sample": np.zeros(1, np.int64), "blocks_small": np.zeros(1, np.int32),
                "blocks_large": np.zeros(1, np.int32)}
    def build() -> dict[str, np.ndarray]:
        small = K.block_maxima(np.asarray(depth), K.SMALL_BLOCK)
        return {"first_sample": np.ascontiguousarray(first[::K.SAMPLE], np.int64), "blocks_small": small,
                "blocks_large": K.block_maxima(small, K.LARGE_BLOCK // K.SMALL_BLOCK)}
    return derived.load_or_compute(directory, _INDEX_FILE, ("first_sample", "blocks_small", "blocks_large"), build,
                                   valid=lambda a: len(a["first_sample"]) == (n + K.SAMPLE - 1) // K.SAMPLE)


def _max_depth_column(directory: Path | None, parent: np.ndarray, depth: np.ndarray, n: int) -> np.ndarray:
    """Each call's deepest descendant depth, from the analyzer's cache folder when computed
    before (it is derived from the call columns, which never change once written)."""
    if n == 0:
        return np.zeros(0, np.int32)
    path = Path(directory) / _MAX_DEPTH_FILE if directory is not None else None
    if path is not None and path.exists() and path.stat().st_size == 4 * n:
        if n > (1 << 20):
            return np.memmap(path, dtype="<i4", mode="r", shape=(n,))
        return np.fromfile(path, dtype="<i4", count=n)
    column = K.subtree_max_depth(np.asarray(parent), np.asarray(depth))
    if path is not None:
        try:
            tmp = path.with_suffix(".tmp")
            column.astype("<i4").tofile(tmp)
            tmp.replace(path)
        except OSError:
            pass  # a read-only cache: computed again next time
    return column
