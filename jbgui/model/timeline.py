"""What the timeline draws: per thread, the calls as rectangles (time × depth), with whatever is
narrower than a pixel merged before it reaches the view.

No whole column is read: a query walks a call tree (:mod:`jbgui.model.timeline_kernel`) and
visits only what it draws — zoomed out, a level of detail's small table
(:mod:`jbgui.model.timeline_lod`, built once per thread and kept beside the analyzer's columns);
zoomed in, the few blocks of rows of the visible range, decoded on demand. So opening and drawing
cost about the same for a trace of a thousand calls and of two hundred million, in time and in
memory.

Times are nanoseconds since the trace started (interpolated between the thread's clock samples),
or event indices for a trace without a clock (then lanes of different threads do not share an
axis; :attr:`TimelineModel.has_clock` says which).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jbgui.model import call_summary as CS
from jbgui.model import timeline_kernel as K
from jbgui.model import timeline_lod as LOD
from jbgui.model import timeline_scope as TS
from jbgui.model.analysis import Analysis, ThreadReplay

_FIRST_CAPACITY = 1 << 14


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
    first: np.ndarray | None = None     # the call's first and last events (a merged one's root's)
    last: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.row)

    @staticmethod
    def empty() -> "Rects":
        z = np.zeros(0, np.int64)
        return Rects(z, z, z, np.zeros(0), np.zeros(0), np.zeros(0, np.bool_), z, z, z, z)


class _Table:
    """Rows the walk runs over — a level of detail's table, or a window of the thread's rows after
    the ancestors of its first row — with the tree and search arrays the kernel reads. ``row``
    maps each back to the thread's call table."""

    def __init__(self, row, first, last, depth, method, flags, deep=None, axis=None):
        """``first``, ``last``: the rows' events; with the thread's ``axis``
        (:class:`jbgui.model.blocking_times.Axis`) the walk reads them on it (``first``,
        ``last``), and ``ev_first``, ``ev_last`` keep the events."""
        self.ev_first = np.ascontiguousarray(first, np.int64)
        self.ev_last = np.ascontiguousarray(last, np.int64)
        if axis is not None and len(axis.steps):
            first, last = axis.rows(self.ev_first, self.ev_last, flags)
        self.row = np.ascontiguousarray(row, np.int64)
        self.first = np.ascontiguousarray(first, np.int64)
        self.last = np.ascontiguousarray(last, np.int64)
        self.depth = np.ascontiguousarray(depth, np.int32)
        self.deep = self.depth if deep is None else np.ascontiguousarray(deep, np.int32)
        self.method = method
        self.flags = flags
        n = len(self.row)
        self.parent = np.empty(n, np.int64)
        self.end = np.empty(n, np.int64)
        if n:
            K.loose_tree(self.depth, self.parent, self.end)
        self.maxd = K.subtree_max_depth(self.parent, self.deep) if n else np.zeros(0, np.int32)
        self.window: tuple[np.ndarray, int, int] | None = None    # a window's (running calls' rows, lo, hi)
        self.sample = np.ascontiguousarray(self.first[::K.SAMPLE]) if n else np.zeros(1, np.int64)
        small = K.block_maxima(self.deep, K.SMALL_BLOCK) if n else np.zeros(1, np.int32)
        self.blocks_small = small
        self.blocks_large = K.block_maxima(small, K.LARGE_BLOCK // K.SMALL_BLOCK) if n else np.zeros(1, np.int32)

    def __len__(self) -> int:
        return len(self.row)


_WINDOW_NAMES = ("first", "last", "depth", "method", "flags")


class ThreadTimeline:
    """One thread's calls in time, and queries. Nothing here holds a whole column: a zoomed-out
    query walks a level of detail (:mod:`jbgui.model.timeline_lod`), a zoomed-in one the few blocks
    of rows of the visible range, so opening and drawing cost the same for a thread of a thousand
    calls and of two hundred million."""

    def __init__(self, thread: ThreadReplay, has_clock: bool, window_rows: int = LOD.WINDOW_ROWS):
        self.thread = thread
        self.calls = calls = thread.calls
        self.rows = n = len(calls)
        clock = thread.clock if has_clock and len(thread.clock) >= 2 else np.zeros((0, 2))
        self.pos = np.ascontiguousarray(clock[:, 0], np.float64)     # event times
        self.nanos = np.ascontiguousarray(clock[:, 1], np.float64)
        # call times, and the walk: on the clock's expanded axis (blocking_times.Axis), where a
        # native that blocked between two events has a unit of its own
        self.axis = thread.axis if len(self.pos) >= 2 else None
        self.apos = self.axis.pos if self.axis is not None else self.pos
        self.anos = self.axis.nanos if self.axis is not None else self.nanos
        self._capacity = _FIRST_CAPACITY
        self._levels: dict[int, _Table] = {}
        self._window: tuple[float, float, _Table] | None = None
        # Only my code (per method id; None: every call): tables as the scope shows them, kept per
        # level and for the current window, and the depths of single rows under it.
        self.mine: np.ndarray | None = None
        self._scoped: dict = {}
        self._stand_ins: TS.StandIns | None = None
        if n:
            exc = thread.exceptions
            marked = np.concatenate([exc["throw_row"], exc["catch_row"], [0]]) if len(exc) else None
            # The levels' pass reads the columns the thread's call summary is made of: when both
            # are to be computed, it makes the summary too (load_trace then finds it kept).
            summary = None if thread.call_summary_ready else CS.Accumulator()
            self.lod = LOD.Levels(calls, thread.events, self.pos, self.nanos, window_rows, marked, self.axis,
                                  visit=None if summary is None else
                                  lambda c: summary.feed(c["method"], c["flags"], c["depth"]))
            if summary is not None and summary.rows == n:
                CS.save(calls.directory, summary.result())
            self.max_depth = self.lod.max_depth
            self.t_min, self.t_max = self.lod.t_min, self.lod.t_max
            self.limits = self.lod.limits
        else:
            self.lod = None
            self.max_depth = -1
            self.t_min = self.t_max = 0.0
            self.limits = np.zeros(0)

    # ------------------------------------------------------------------ whole columns (tests, tools)

    @property
    def depth(self) -> np.ndarray:
        """Every call's depth: the whole column (decoded on first use). Views ask
        :meth:`depth_of`."""
        return np.asarray(self.calls.depth)

    def depth_of(self, row: int) -> int:
        """The depth the timeline draws a call at: under a scope, its own when it shows, else that
        of the call that stands for it."""
        if self._stand_ins is not None:
            return self._stand_ins.depth(row)
        return int(self.calls.values_at("depth", np.array([row]))[0])

    def set_scope(self, mine: np.ndarray | None) -> None:
        """Draw only my code (``mine``: per method id, see :mod:`jbgui.model.timeline_scope`), or
        every call (None)."""
        if mine is self.mine:
            return
        self.mine = mine
        self._scoped = {}
        self._stand_ins = TS.StandIns(self.calls, mine) if mine is not None else None

    def _in_scope(self, tab: _Table, key) -> _Table:
        """``tab`` as the scope shows it: its shown rows at their depths under the scope."""
        if self.mine is None:
            return tab
        got = self._scoped.get(key)
        if got is not None and got[0] is tab:
            return got[1]
        if tab.window is not None:
            shown, sdepth = TS.window_scope(self.calls, *tab.window, self.mine)
            deep = sdepth
        else:
            shown, sdepth = TS.level_scope(tab.parent, np.asarray(tab.method, np.int64), self.mine)
            # a filler is drawn one row deep: how deep its calls go under the scope is not known
            # here, and the recorded extent would count the hidden frames
            deep = sdepth
        keep = np.flatnonzero(shown)
        scoped = _Table(tab.row[keep], tab.ev_first[keep], tab.ev_last[keep], sdepth[keep], np.asarray(tab.method)[keep],
                        np.asarray(tab.flags)[keep], deep[keep], self.axis)
        self._scoped[key] = (tab, scoped)
        return scoped

    def marked_depths(self, rows: np.ndarray) -> np.ndarray:
        """Depths of rows the timeline marks (exceptions' throw and catch rows), found in the
        level pass instead of decoding the blocks that hold them."""
        rows = np.asarray(rows, np.int64)
        if self.lod is None or not len(rows):
            return np.zeros(len(rows), np.int64)
        if self._stand_ins is not None:
            return self._stand_ins.depths(rows)
        at = np.clip(np.searchsorted(self.lod.mark_rows, rows), 0, max(len(self.lod.mark_rows) - 1, 0))
        if not len(self.lod.mark_rows) or not np.array_equal(self.lod.mark_rows[at], rows):
            return self.calls.values_at("depth", rows).astype(np.int64)
        return self.lod.mark_depth[at]

    # ------------------------------------------------------------------ times

    def time(self, event: float) -> float:
        """The time event ``event`` starts."""
        return float(K.time_of(float(event), self.pos, self.nanos))

    def event(self, t: float) -> float:
        """The (fractional) event index at time ``t``."""
        return float(K.event_at(float(t), self.pos, self.nanos))

    def span(self, row: int) -> tuple[float, float]:
        """Start and end time of a call (:meth:`spans`)."""
        start, end = self.spans(np.array([row]))
        return float(start[0]), float(end[0])

    def spans(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Start and end times of many calls (every call when ``rows`` is None: whole columns), as
        the walk draws them: [t(first), t(last + 1)) on the clock's expanded axis
        (:meth:`jbgui.model.blocking_times.Axis.spans`), event indices without a clock."""
        if rows is None:
            first, last = np.asarray(self.calls.first), np.asarray(self.calls.last)
            flags = np.asarray(self.calls.flags)
        else:
            first, last = self.calls.values_at("first", rows), self.calls.values_at("last", rows)
            flags = self.calls.values_at("flags", rows)
        if self.axis is None:
            return first.astype(np.float64), last.astype(np.float64) + 1.0
        return self.axis.spans(first, last, flags)

    # ------------------------------------------------------------------ the rows a query walks

    def _level(self, k: int) -> _Table:
        got = self._levels.get(k)
        if got is None:
            t = self.lod.table(k)
            got = self._levels[k] = _Table(t["row"], t["first"], t["last"], t["depth"], t["method"], t["flags"],
                                           t["deep"], self.axis)
        return got

    def _window_for(self, t0: float, t1: float) -> _Table:
        """The rows that can be drawn in [t0, t1) closer in than the finest level: every call
        starting between ``t0`` less the finest level's length (a call running at ``t0`` that the
        level left out started after that) and ``t1``, after the calls running where the window
        starts (the finest level holds those that matter: they are longer). The last window is kept, with a margin of half
        its width on each side, for the next query."""
        if self._window is not None and self._window[0] <= t0 and t1 <= self._window[1]:
            return self._window[2]
        n = self.rows
        if not len(self.limits):
            table = _Table(np.arange(n), *(self.calls.window(name, 0, n) for name in _WINDOW_NAMES), axis=self.axis)
            table.window = (np.zeros(0, np.int64), 0, n)
            self._window = (-np.inf, np.inf, table)
            return table
        finest = float(self.limits[-1])
        width = max(t1 - t0, 0.0)
        a, b = t0 - width / 2 - 1.01 * finest, t1 + width / 2
        e_a, e_b = self.event(a) - 1.0, self.event(b) + 1.0
        block_first = self.lod.block_first
        starts = self.lod.starts
        b0 = max(int(np.searchsorted(block_first, e_a, side="right")) - 1, 0)
        b1 = max(int(np.searchsorted(block_first, e_b, side="right")), b0 + 1)
        base, top = int(starts[b0]), int(starts[b1])
        first = self.calls.window("first", base, top)
        lo = base + int(np.searchsorted(first, e_a, side="left"))
        hi = base + int(np.searchsorted(first, e_b, side="right"))
        lo = min(lo, hi)
        cols = [self.calls.window(name, lo, hi) for name in _WINDOW_NAMES]
        anc = self._running_at(e_a, lo)
        level = self._level(len(self.limits) - 1)
        row = np.concatenate([level.row[anc], np.arange(lo, hi, dtype=np.int64)])
        level_cols = {"first": level.ev_first, "last": level.ev_last, "depth": level.depth, "method": level.method,
                      "flags": level.flags}
        parts = [np.concatenate([np.asarray(level_cols[name])[anc], col]) for name, col in zip(_WINDOW_NAMES, cols)]
        table = _Table(row, *parts, axis=self.axis)
        table.window = (level.row[anc], lo, hi)
        self._window = (a + 1.01 * finest, b, table)
        return table

    def _running_at(self, event: float, before_row: int) -> np.ndarray:
        """Positions in the finest level of its calls running at ``event`` (before row
        ``before_row``), outermost first: every call that starts before a window and reaches into
        it, when it can be drawn (a call shorter than the level's length that started before the
        window ended before the visible range)."""
        level = self._level(len(self.limits) - 1)
        q = int(np.searchsorted(level.ev_first, event, side="right")) - 1
        out = []
        while q >= 0:       # whatever runs at ``event`` is the last call started or one of its callers
            if level.ev_last[q] + 1 > event and level.row[q] < before_row and self._kept(level, q):
                out.append(q)
            q = int(level.parent[q])
        return np.array(out[::-1], np.int64)

    def _kept(self, level: _Table, q: int) -> bool:
        """A call of the level (not a filler): at least the level's length."""
        s = float(K.time_of(float(level.first[q]), self.apos, self.anos))
        e = float(K.time_of(float(level.last[q]) + 1.0, self.apos, self.anos))
        return e - s >= float(self.limits[-1])

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
        k = LOD.level_for(self.limits, px)
        tab = self._in_scope(self._level(k), k) if k >= 0 else \
            self._in_scope(self._window_for(float(t0), float(t1)), "window")
        while True:
            cap = self._capacity
            out = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64),
                   np.empty(cap, np.float64), np.empty(cap, np.float64), np.empty(cap, np.int8))
            n = K.query(tab.first, tab.sample, tab.last, tab.end, tab.parent, tab.depth, tab.deep, tab.maxd,
                        tab.blocks_small, tab.blocks_large, self.apos, self.anos, float(t0), float(t1), px,
                        int(max(depth_lo, 0)), int(hi), *out)
            if n < cap:
                break
            self._capacity = cap * 4
        local, d0, d1, start, end, merged = (a[:n] for a in out)
        return Rects(tab.row[local], d0, d1, start, end, merged.astype(np.bool_),
                     np.asarray(tab.method)[local].astype(np.int64), np.asarray(tab.flags)[local].astype(np.int64),
                     tab.ev_first[local], tab.ev_last[local])

    def call_at(self, t: float, depth: int) -> int:
        """The row of the call at ``depth`` running at time ``t`` (-1 if none)."""
        if not self.rows or depth < 0 or depth > self.max_depth:
            return -1
        tab = self._in_scope(self._window_for(float(t), float(t)), "window")
        e = float(K.event_at(float(t), self.apos, self.anos))      # on the walk's axis
        local = int(K.call_at(tab.first, tab.sample, tab.last, tab.end, tab.parent, tab.depth, e, depth))
        return int(tab.row[local]) if local >= 0 else -1

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

    def __init__(self, analysis: Analysis, use_clock: bool = True, window_rows: int = LOD.WINDOW_ROWS):
        """``use_clock=False`` puts every lane on its own event index (the x-axis that is exact
        where times are interpolated, see :mod:`jbgui.model.time_quality`). ``window_rows``: see
        :data:`jbgui.model.timeline_lod.WINDOW_ROWS` (tests make it small to walk levels of
        detail on small traces)."""
        self.analysis = analysis
        with_calls = [t for t in analysis.threads if len(t.calls)]
        self.clock_available = bool(with_calls) and all(len(t.clock) >= 2 for t in with_calls)
        self.has_clock = self.clock_available and use_clock
        self.threads = [ThreadTimeline(t, self.has_clock, window_rows) for t in analysis.threads]
        spans = [(tl.t_min, tl.t_max) for tl in self.threads if tl.rows]
        self.t_min = min((s for s, _ in spans), default=0.0)
        self.t_max = max((e for _, e in spans), default=1.0)
        if self.t_max <= self.t_min:
            self.t_max = self.t_min + 1.0

    @property
    def unit(self) -> str:
        return "ns" if self.has_clock else "events"

    def set_scope(self, mine: np.ndarray | None) -> None:
        """Only my code in every lane (``mine`` per method id; None: every call)."""
        for tl in self.threads:
            tl.set_scope(mine)

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
        throw_depth = np.where(throw_row >= 0, tl.marked_depths(np.maximum(throw_row, 0)), 0)
        caught = catch_row >= 0
        catch_depth = np.where(caught, tl.marked_depths(np.maximum(catch_row, 0)), -1)
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
