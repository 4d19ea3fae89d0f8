"""The timeline's levels of detail: what a zoomed-out timeline draws, without the thread's columns.

A thread of a billion events has hundreds of millions of calls; its whole columns are gigabytes.
Yet a timeline showing all of it at 2,000 pixels draws at most a few thousand rectangles per depth,
and every call shorter than a pixel merges into its neighbours. So, once per thread, one pass over
the columns (block by block, memory bounded by a block, not by the thread) keeps for each *level*
``k`` a small table:

- every call at least ``T[k]`` long (time, as the timeline draws it) — a call's ancestors are at
  least as long as it, so the table is closed under ancestors and stays a tree in preorder;
- in place of the shorter calls, *fillers*: each run of consecutive short children of a kept call
  (or of the thread's top level), cut so that no run is longer than ``T[k]``, becomes one row at
  the children's depth that carries the deepest depth of the run's subtrees (``deep``).

At ``px >= T[k]`` time per pixel, everything a level leaves out is narrower than a pixel, and a
filler (no longer than ``T[k]``) is narrower than a pixel too: the timeline's walk
(:func:`jbgui.model.timeline_kernel.query`) over the level's table merges it exactly where it
would have merged the calls it stands for, down to the same deepest depth — the same pixels.
Levels are ``T[k] = span / (2**11 * 8**k)``, as many as it takes for the finest level's ``T`` to
cover, across a screen of pixels, about :data:`WINDOW_ROWS` calls of the thread on average;
closer in, the timeline decodes the few blocks of rows of the visible range (see
:mod:`jbgui.model.timeline`).

Each level is one array file beside the thread's columns (:mod:`jbgui.model.derived`), read when
the view first needs it.
"""

from __future__ import annotations

import numba
import numpy as np

from jbgui.model import clock_times, derived, store
from jbgui.model.prefetch import prefetch

WINDOW_ROWS = 1 << 20       # calls one screen of the finest level's resolution holds, on average
SCREEN_PIXELS = 1600
VERSION = 2      # 2: call times on the clock's expanded axis (blocking_times.Axis)
_SUMMARY = f"timeline-lod-v{VERSION}"
_LEVEL_KEYS = ("row", "first", "last", "depth", "deep", "method", "flags")


def thresholds(span: float, rows: int, window_rows: int = WINDOW_ROWS) -> np.ndarray:
    """The levels' ``T`` (time units), coarsest first: none for a thread whose whole run is a
    window's worth of calls."""
    if rows <= window_rows or span <= 0:
        return np.zeros(0)
    out = []
    k = 0
    while True:
        t = span / (2.0 ** 11 * 8.0 ** k)
        out.append(t)
        if rows * SCREEN_PIXELS * t / span <= window_rows or len(out) >= 8:
            return np.array(out)
        k += 1


@numba.njit(cache=True, nogil=True)
def _level_block(base, first, last, depth, method, flags, t_first, t_end, limit,
                 st_depth, st_sp, run_i, run_t, o_row, o_first, o_last, o_depth, o_deep, o_method, o_flags):
    """One block of rows for one level: appends kept calls and closed fillers to the ``o_*`` arrays
    (room for two rows per input row and one more), returns how many. The walk's state carries
    over between blocks: the stack of open kept calls' depths (``st_depth``, ``st_sp[0]``) and the
    open run (``run_i``: open?, row, first, last, depth, deep, method, flags; ``run_t``: its start
    time)."""
    k = 0
    sp = st_sp[0]
    for i in range(len(first)):
        d = depth[i]
        # close the kept calls this row is not inside (its depth says so: rows are in preorder)
        while sp > 0 and st_depth[sp - 1] >= d:
            if run_i[0]:
                k = _emit_run(run_i, k, o_row, o_first, o_last, o_depth, o_deep, o_method, o_flags)
            sp -= 1
        span = t_end[i] - t_first[i]
        if span >= limit:
            if run_i[0]:
                k = _emit_run(run_i, k, o_row, o_first, o_last, o_depth, o_deep, o_method, o_flags)
            o_row[k] = base + i
            o_first[k] = first[i]
            o_last[k] = last[i]
            o_depth[k] = d
            o_deep[k] = d
            o_method[k] = method[i]
            o_flags[k] = flags[i]
            k += 1
            if sp == len(st_depth):
                return -1           # deeper than the stack: the caller grows it and asks again
            st_depth[sp] = d
            sp += 1
            continue
        top = st_depth[sp - 1] if sp > 0 else -1
        if d == top + 1:
            # a short child of the innermost kept call: joins the open run while the run stays
            # within the level's length, else starts the next
            if run_i[0] and t_end[i] - run_t[0] <= limit:
                run_i[3] = last[i]
                if d > run_i[5]:
                    run_i[5] = d
            else:
                if run_i[0]:
                    k = _emit_run(run_i, k, o_row, o_first, o_last, o_depth, o_deep, o_method, o_flags)
                run_i[0] = 1
                run_i[1] = base + i
                run_i[2] = first[i]
                run_i[3] = last[i]
                run_i[4] = d
                run_i[5] = d
                run_i[6] = method[i]
                run_i[7] = flags[i]
                run_t[0] = t_first[i]
        elif run_i[0]:
            if d > run_i[5]:                # inside a short child: only its depth matters
                run_i[5] = d
        else:                               # cannot happen in a well-formed table: a run of its own
            run_i[0] = 1
            run_i[1] = base + i
            run_i[2] = first[i]
            run_i[3] = last[i]
            run_i[4] = d
            run_i[5] = d
            run_i[6] = method[i]
            run_i[7] = flags[i]
            run_t[0] = t_first[i]
    st_sp[0] = sp
    return k


@numba.njit(cache=True, nogil=True)
def _emit_run(run_i, k, o_row, o_first, o_last, o_depth, o_deep, o_method, o_flags):  # pragma: no cover
    o_row[k] = run_i[1]
    o_first[k] = run_i[2]
    o_last[k] = run_i[3]
    o_depth[k] = run_i[4]
    o_deep[k] = run_i[5]
    o_method[k] = run_i[6]
    o_flags[k] = run_i[7]
    run_i[0] = 0
    return k + 1


class _Level:
    """The walk's state and output for one level while the pass goes on."""

    def __init__(self, limit: float):
        self.limit = float(limit)
        self.st_depth = np.empty(1024, np.int64)
        self.st_sp = np.zeros(1, np.int64)
        self.run_i = np.zeros(8, np.int64)
        self.run_t = np.zeros(1, np.float64)
        self.parts: list[tuple[np.ndarray, ...]] = []
        self._out: tuple[np.ndarray, ...] | None = None

    def _room(self, n: int) -> tuple[np.ndarray, ...]:
        """Output buffers for a block of ``n`` rows (two per row and one more), kept from block to
        block: fresh ones per block and level cost more than the walk on a coarse level, which
        keeps a few rows of each block."""
        if self._out is None or len(self._out[0]) < 2 * n + 1:
            m = 2 * n + 1
            self._out = (np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64),
                         np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m, np.int32))
        return self._out

    def feed(self, base: int, cols: dict[str, np.ndarray], t_first: np.ndarray, t_end: np.ndarray) -> None:
        n = len(t_first)
        while True:
            out = self._room(n)
            saved = (self.st_depth.copy(), self.st_sp.copy(), self.run_i.copy(), self.run_t.copy())
            k = _level_block(base, cols["first"], cols["last"], cols["depth"], cols["method"], cols["flags"],
                             t_first, t_end, self.limit, self.st_depth, self.st_sp, self.run_i, self.run_t, *out)
            if k >= 0:
                self.parts.append(tuple(a[:k].copy() for a in out))
                return
            st, sp, ri, rt = saved          # the stack was too small: again with a bigger one
            self.st_depth = np.empty(len(st) * 4, np.int64)
            self.st_depth[:len(st)] = st
            self.st_sp, self.run_i, self.run_t = sp, ri, rt

    def finish(self) -> dict[str, np.ndarray]:
        if self.run_i[0]:
            self.parts.append(tuple(np.array([v], dt) for v, dt in zip(
                (self.run_i[1], self.run_i[2], self.run_i[3], self.run_i[4], self.run_i[5], self.run_i[6],
                 self.run_i[7]), (np.int64, np.int64, np.int64, np.int32, np.int32, np.int32, np.int32))))
            self.run_i[0] = 0
        if not self.parts:
            return {k: np.zeros(0, np.int64 if k in ("row", "first", "last") else np.int32) for k in _LEVEL_KEYS}
        return {key: np.concatenate([p[j] for p in self.parts]) for j, key in enumerate(_LEVEL_KEYS)}


def _times(events: np.ndarray, pos: np.ndarray, nanos: np.ndarray) -> np.ndarray:
    events = events.astype(np.float64)
    if len(pos) < 2:
        return events
    return np.interp(events, pos, nanos)


class Levels:
    """One thread's levels of detail: ``limits`` (coarsest first) and each level's table, read on
    first use; also the thread's extent (``t_min``, ``t_max``, ``max_depth``) from the same pass."""

    def __init__(self, calls, events: int, pos: np.ndarray, nanos: np.ndarray, window_rows: int = WINDOW_ROWS,
                 marked_rows: np.ndarray | None = None, axis=None, visit=None):
        """``marked_rows``: rows whose depth the timeline marks (exceptions thrown and caught):
        looked up in the same pass, kept as ``mark_rows`` (sorted, unique) and ``mark_depth``.
        ``axis``: the thread's :class:`jbgui.model.blocking_times.Axis`, which call times are read
        on (``pos``, ``nanos``: its clock points, for event times). ``visit(cols)``, when the pass
        runs (the levels were not kept), gets each block of rows in order, as a dict of its
        ``first``, ``last``, ``depth``, ``method`` and ``flags``: for other totals over the same
        columns, which then are not decoded again."""
        self.calls = calls
        self.events = int(events)
        rows = np.zeros(0, np.int64) if marked_rows is None else np.asarray(marked_rows, np.int64)
        self._marked = np.unique(rows[(rows >= 0) & (rows < len(calls))])
        self.directory = calls.directory if calls._stored is not None else None
        self.pos, self.nanos = pos, nanos
        self.axis = axis if axis is not None and len(pos) >= 2 else None
        # levels in time and in events are different levels (their lengths are measured differently)
        suffix = ("" if len(pos) >= 2 else "-events") + ("" if window_rows == WINDOW_ROWS else f"-w{window_rows}")
        self._name = f"{_SUMMARY}{suffix}"
        self.window_rows = window_rows
        self._visit = visit
        summary = derived.load_or_compute(self.directory, self._name,
                                          ("limits", "extent", "block_first", "starts", "mark_rows", "mark_depth"),
                                          self._build, valid=self._valid)
        self.mark_rows = np.asarray(summary["mark_rows"], np.int64)
        self.mark_depth = np.asarray(summary["mark_depth"], np.int64)
        self.limits = np.asarray(summary["limits"], np.float64)
        self.t_min, self.t_max, max_depth, _rows = (float(v) for v in summary["extent"])
        self.max_depth = int(max_depth)
        self.block_first = np.asarray(summary["block_first"], np.int64)   # each block's first event
        self.starts = np.asarray(summary["starts"], np.int64)             # each block's first row
        self._tables: dict[int, dict[str, np.ndarray]] = getattr(self, "_built", {})

    def _valid(self, a: dict[str, np.ndarray]) -> bool:
        starts = a["starts"]
        return (a["extent"].shape == (4,) and len(starts) >= 2 and starts[0] == 0 and starts[-1] == len(self.calls)
                and bool(np.all(np.diff(starts) > 0)) and len(a["block_first"]) == len(starts) - 1
                and np.array_equal(a["mark_rows"], self._marked) and len(a["mark_depth"]) == len(self._marked))

    def table(self, k: int) -> dict[str, np.ndarray]:
        """Level ``k``'s table: ``row`` (the call's row; a filler's first call), ``first``,
        ``last``, ``depth``, ``deep`` (a filler's deepest depth, else the depth), ``method``,
        ``flags``."""
        got = self._tables.get(k)
        if got is None:
            got = derived.load_or_compute(self.directory, f"{self._name}-{k}", _LEVEL_KEYS,
                                          lambda: self._rebuild(k))
            self._tables[k] = got
        return got

    def _rebuild(self, k: int) -> dict[str, np.ndarray]:
        # the level's file was lost or damaged while the summary was kept: the pass again
        self._build()
        return self._built[k]

    def _build(self) -> dict[str, np.ndarray]:
        calls = self.calls
        n = len(calls)
        if n == 0:
            self._built = {}
            return {"limits": np.zeros(0), "extent": np.zeros(4), "block_first": np.zeros(0, np.int64),
                    "starts": np.zeros(1, np.int64), "mark_rows": self._marked, "mark_depth": np.zeros(0, np.int64)}
        first0 = float(calls.window("first", 0, 1)[0])
        if self.axis is not None:
            t_min = float(self.axis.spans(calls.window("first", 0, 1), calls.window("last", 0, 1),
                                          calls.window("flags", 0, 1))[0][0])
        else:
            t_min = float(_times(np.array([first0]), self.pos, self.nanos)[0])
        # the thread's last event bounds every call's end: good enough to size the levels
        events = float(self.events)
        stored = calls._stored
        starts = stored.starts if stored is not None else np.array([0, n], np.int64)
        if events <= first0:
            events = float(calls.window("last", n - 1, n)[0]) + 1.0
        span_hint = float(_times(np.array([events]), self.pos, self.nanos)[0]) - t_min
        limits = thresholds(span_hint, n, self.window_rows)
        levels = [_Level(t) for t in limits]
        t_max = t_min
        max_depth = 0
        block_first = np.empty(len(starts) - 1, np.int64)
        marked = self._marked
        mark_depth = np.zeros(len(marked), np.int64)

        def blocks():
            # decoded on a second thread while the levels take the block before
            for b in range(len(starts) - 1):
                lo, hi = int(starts[b]), int(starts[b + 1])
                cols = {"first": np.ascontiguousarray(calls.window("first", lo, hi, keep=False))}
                # ``last`` is stored against ``first``: given it, it is not decoded a second time
                cols["last"] = np.ascontiguousarray(calls.window("last", lo, hi, keep=False, ref=cols["first"]))
                for name in ("depth", "method", "flags"):
                    cols[name] = np.ascontiguousarray(calls.window(name, lo, hi, keep=False))
                if self.axis is not None:       # a call's span on the clock's expanded axis
                    ends = self.axis.rows(cols["first"], cols["last"], cols["flags"])
                else:
                    ends = cols["first"], cols["last"]
                yield b, lo, hi, cols, ends

        pos, nanos = (self.axis.pos, self.axis.nanos) if self.axis is not None else (self.pos, self.nanos)
        for b, lo, hi, cols, (a_first, a_last) in prefetch(blocks()):
            t_first, t_end = clock_times.block_times(a_first, a_last, pos, nanos)
            block_first[b] = cols["first"][0]
            t_max = max(t_max, float(t_end.max()))
            max_depth = max(max_depth, int(cols["depth"].max()))
            a, z = np.searchsorted(marked, [lo, hi])
            mark_depth[a:z] = cols["depth"][marked[a:z] - lo]
            for level in levels:
                level.feed(lo, cols, t_first, t_end)
            if self._visit is not None:
                self._visit(cols)
        self._visit = None          # once: a level's file rebuilt later does not feed it again
        self._built = {k: level.finish() for k, level in enumerate(levels)}
        for k, table in self._built.items():
            if self.directory is not None:
                try:
                    store.save_arrays(self.directory / f"{self._name}-{k}.zst", table)
                except OSError:
                    pass
        return {"limits": limits, "extent": np.array([t_min, t_max, float(max_depth), float(n)]),
                "block_first": block_first, "starts": np.asarray(starts, np.int64), "mark_rows": marked,
                "mark_depth": mark_depth}

    def forget(self) -> None:
        """Drop the kept files (tests and benchmarks measuring the pass)."""
        derived.forget(self.directory, self._name)
        for k in range(8):
            derived.forget(self.directory, f"{self._name}-{k}")


def level_for(limits: np.ndarray, px: float) -> int:
    """The coarsest level whose table draws ``px`` per pixel exactly (everything it leaves out is
    narrower than a pixel), or -1: closer than the finest level."""
    for k, t in enumerate(limits.tolist()):
        if t <= px:
            return k
    return -1
