"""What the timeline draws: per thread, the calls as rectangles (time × depth), with whatever is
narrower than a pixel merged before it reaches the view.

A thread's calls are kept sorted by (depth, start). Calls at one depth never overlap (a stack has
one frame per depth at a time), so at each depth both starts and ends are sorted, and the calls
overlapping a time range are one ``searchsorted`` away.

Zoomed out, a range can hold millions of calls, most of them far narrower than a pixel. For that
the model keeps *levels* (a mipmap, as Perfetto does for slices): level ``k`` is the same calls
with every run of consecutive calls shorter than ``bucket[k]`` and separated by gaps shorter than
``bucket[k]`` merged into one rectangle. A query for ``p`` time units per pixel reads the coarsest
level whose bucket is at most ``p``: its merged rectangles are sub-pixel, so the picture is the
same as drawing every call, and their number is bounded by the pixels, not the calls. Below the
finest level the calls themselves are read; there are few of them in so short a range.

Times are nanoseconds since the trace started (interpolated between the thread's clock samples),
or event indices for a trace without a clock (then lanes of different threads do not share an
axis; :attr:`TimelineModel.has_clock` says which).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jbgui.model.analysis import Analysis, Flag, ThreadReplay

# Levels stop when merging no longer halves the rectangles: finer zooms read the calls.
_LEVEL_FACTOR = 4
_COARSEST_BUCKETS = 256
_WORTH_KEEPING = 0.5


@dataclass
class Rects:
    """Rectangles of one query: call rows (the first call of a merged run), depth, start and end
    time, how many calls each rectangle stands for, and their flags (OR over a merged run)."""

    row: np.ndarray
    depth: np.ndarray
    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    flags: np.ndarray
    method: np.ndarray

    def __len__(self) -> int:
        return len(self.row)

    @staticmethod
    def empty() -> "Rects":
        z = np.zeros(0, np.int64)
        return Rects(z, z, np.zeros(0), np.zeros(0), z, z, z)


@dataclass
class _Level:
    """One thread's calls at one resolution, sorted by (depth, start)."""

    bucket: float
    key_start: np.ndarray   # depth * span + start: one sorted array for every depth
    key_end: np.ndarray     # depth * span + end
    row: np.ndarray
    depth: np.ndarray
    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    flags: np.ndarray
    method: np.ndarray


class ThreadTimeline:
    """One thread's calls in time: columns, the levels, and queries."""

    def __init__(self, thread: ThreadReplay, has_clock: bool):
        self.thread = thread
        calls = thread.calls
        n = len(calls)
        self.rows = n
        first = np.asarray(calls.first, np.int64)
        last = np.asarray(calls.last, np.int64)
        depth = np.asarray(calls.depth, np.int64)
        # A call covers its events [first, last]; as times, [t(first), t(last + 1)) so that a call
        # of one event has a width and a child never sticks out of its parent.
        if has_clock:
            start = thread.times(first)
            end = thread.times(last + 1)
        else:
            start = first.astype(np.float64)
            end = (last + 1).astype(np.float64)
        self.start = start          # by row
        self.end = end
        self.depth = depth
        self.max_depth = int(depth.max()) if n else -1
        self.t_min = float(start.min()) if n else 0.0
        self.t_max = float(end.max()) if n else 0.0
        order = np.argsort(depth, kind="stable")  # preorder is start order within a depth
        self._order = order
        # Keys put each depth in a band of its own: depth * span + (t - t_min), span > duration.
        self._span = (self.t_max - self.t_min) * 2.0 + 2.0
        flags = np.asarray(calls.flags, np.int64)[order]
        method = np.asarray(calls.method, np.int64)[order]
        raw = self._make_level(0.0, order, depth[order], start[order], end[order],
                               np.ones(n, np.int64), flags, method)
        self.raw = raw
        self.levels: list[_Level] = []
        self._build_levels()

    # ------------------------------------------------------------------ building

    def _make_level(self, bucket, row, depth, start, end, count, flags, method) -> _Level:
        base = depth.astype(np.float64) * self._span - self.t_min
        return _Level(bucket, base + start, base + end, row, depth, start, end, count, flags, method)

    def _build_levels(self) -> None:
        n = self.rows
        duration = self.t_max - self.t_min
        if n < 1024 or duration <= 0:
            return
        bucket = duration / _COARSEST_BUCKETS
        coarse: list[_Level] = []
        while bucket >= 1e-9:
            level = self._merge(bucket)
            if len(level.row) > _WORTH_KEEPING * n:
                break
            coarse.append(level)
            bucket /= _LEVEL_FACTOR
        self.levels = coarse[::-1]  # finest first

    def _merge(self, bucket: float) -> _Level:
        """The calls with runs of short calls (gaps short too) at one depth merged."""
        r = self.raw
        short = (r.end - r.start) < bucket
        n = len(short)
        new = np.ones(n, np.bool_)
        if n > 1:
            joinable = short[1:] & short[:-1] & (r.depth[1:] == r.depth[:-1]) & \
                ((r.start[1:] - r.end[:-1]) < bucket)
            new[1:] = ~joinable
        heads = np.flatnonzero(new)
        start = r.start[heads]
        end = np.maximum.reduceat(r.end, heads)
        count = np.diff(np.append(heads, n))
        flags = np.bitwise_or.reduceat(r.flags, heads)
        return self._make_level(bucket, r.row[heads], r.depth[heads], start, end, count, flags, r.method[heads])

    # ------------------------------------------------------------------ queries

    def level_for(self, units_per_pixel: float) -> _Level:
        """The coarsest level whose merged runs are at most a pixel wide (the calls themselves
        when none is fine enough)."""
        chosen = self.raw
        for level in self.levels:  # finest first
            if level.bucket <= units_per_pixel:
                chosen = level
            else:
                break
        return chosen

    def query(self, t0: float, t1: float, units_per_pixel: float, depth_lo: int = 0,
              depth_hi: int | None = None) -> Rects:
        """Rectangles overlapping [t0, t1) at depths depth_lo..depth_hi (inclusive)."""
        if not self.rows or t1 <= t0:
            return Rects.empty()
        hi_depth = self.max_depth if depth_hi is None else min(depth_hi, self.max_depth)
        if hi_depth < depth_lo:
            return Rects.empty()
        t0, t1 = max(t0, self.t_min - 1.0), min(t1, self.t_max + 1.0)
        if t1 <= t0:
            return Rects.empty()
        level = self.level_for(units_per_pixel)
        depths = np.arange(max(depth_lo, 0), hi_depth + 1, dtype=np.float64) * self._span - self.t_min
        lo = np.searchsorted(level.key_end, depths + t0, side="right")
        hi = np.searchsorted(level.key_start, depths + t1, side="left")
        keep = hi > lo
        if not keep.any():
            return Rects.empty()
        lo, hi = lo[keep], hi[keep]
        total = int((hi - lo).sum())
        # Index ranges of every depth, concatenated without a Python loop.
        offsets = np.repeat(lo - np.concatenate(([0], np.cumsum(hi - lo)[:-1])), hi - lo)
        idx = np.arange(total, dtype=np.int64) + offsets
        return Rects(level.row[idx], level.depth[idx], level.start[idx], level.end[idx], level.count[idx],
                     level.flags[idx], level.method[idx])

    def call_at(self, t: float, depth: int) -> int:
        """The row of the call at ``depth`` running at time ``t`` (-1 if none)."""
        if depth < 0 or depth > self.max_depth:
            return -1
        raw = self.raw
        t = min(max(t, self.t_min - 1.0), self.t_max + 1.0)
        key = depth * self._span - self.t_min + t
        i = int(np.searchsorted(raw.key_end, key, side="right"))
        if i < len(raw.row) and raw.depth[i] == depth and raw.start[i] <= t:
            return int(raw.row[i])
        return -1

    def call_near(self, t: float, depth: int, tolerance: float) -> int:
        """Like :meth:`call_at`, or else the nearest call at ``depth`` within ``tolerance`` (a pixel
        or two, so that calls narrower than a pixel can be picked)."""
        row = self.call_at(t, depth)
        if row >= 0 or depth < 0 or depth > self.max_depth:
            return row
        raw = self.raw
        t = min(max(t, self.t_min - 1.0), self.t_max + 1.0)
        key = depth * self._span - self.t_min + t
        i = int(np.searchsorted(raw.key_end, key, side="right"))
        best, best_gap = -1, tolerance
        for j in (i - 1, i):
            if 0 <= j < len(raw.row) and raw.depth[j] == depth:
                gap = max(raw.start[j] - t, t - raw.end[j], 0.0)
                if gap <= best_gap:
                    best, best_gap = int(raw.row[j]), gap
        return best


class TimelineModel:
    """Every thread's timeline, and the marks drawn over them (exceptions, class loads)."""

    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.has_clock = all(len(t.clock) >= 2 for t in analysis.threads if len(t.calls)) and \
            any(len(t.clock) >= 2 for t in analysis.threads)
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
        """Where exceptions were thrown and caught: times and depths (for the markers)."""
        exc = tl.thread.exceptions
        if not len(exc):
            z = np.zeros(0)
            return {"throw_t": z, "throw_depth": z, "catch_t": z, "catch_depth": z, "index": np.zeros(0, np.int64)}
        throw_row = exc["throw_row"]
        catch_row = exc["catch_row"]
        throw_t = self._event_time(tl, exc["throw_event"])
        catch_t = self._event_time(tl, exc["catch_event"])
        throw_depth = np.where(throw_row >= 0, tl.depth[np.maximum(throw_row, 0)], 0)
        caught = catch_row >= 0
        catch_depth = np.where(caught, tl.depth[np.maximum(catch_row, 0)], -1)
        return {"throw_t": throw_t, "throw_depth": throw_depth, "catch_t": catch_t, "catch_depth": catch_depth,
                "index": np.arange(len(exc))}

    def class_load_times(self, tl: ThreadTimeline) -> np.ndarray:
        loads = tl.thread.class_loads
        return self._event_time(tl, loads["event"]) if len(loads) else np.zeros(0)

    def _event_time(self, tl: ThreadTimeline, events: np.ndarray) -> np.ndarray:
        events = np.asarray(events, np.int64)
        if self.has_clock:
            return tl.thread.times(events)
        return events.astype(np.float64)


# Flags worth their own colour, most telling first.
MARKED_FLAGS = (Flag.UNCAUGHT, Flag.EXCEPTIONAL, Flag.NATIVE, Flag.UNTRACED, Flag.TRUNCATED)
