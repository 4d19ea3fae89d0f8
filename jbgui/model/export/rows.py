"""The rows exports walk: a thread's calls chunk by chunk with their times (interpolated between
clock samples and clamped into their callers), and the calls and blocks tables' columns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numba
import numpy as np

from jbgui.model.analysis import Analysis, ThreadReplay
from jbgui.model.call_queries import exclusive
from jbgui.model.export.common import (
    CHUNK_ROWS, ExportResult, IsCancelled, Progress, _check_cancelled, has_clock)
from jbgui.model.export.naming import _Names, _flag_text
from jbgui.model.export.text import _KeyedPool, _csv_field


@dataclass
class _Chunk:
    """Rows ``lo``..``lo + n`` of one thread's calls with their times (clamped to nest)."""

    thread: ThreadReplay
    lo: int
    n: int
    has_clock: bool
    method: np.ndarray
    site: np.ndarray
    flags: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    first: np.ndarray
    last: np.ndarray
    start: np.ndarray      # ns (or events without a clock)
    end: np.ndarray
    kept_depth: np.ndarray | None = None
    name_keys: np.ndarray | None = None


class _Timer:
    """Event index → integer time of one thread (ns with a clock, the index itself without)."""

    def __init__(self, thread: ThreadReplay, clock: bool):
        self.thread = thread
        self.clock = clock and len(thread.clock) >= 2

    def __call__(self, events: np.ndarray) -> np.ndarray:
        if not self.clock:
            return np.asarray(events, np.int64)
        return np.rint(self.thread.times(events)).astype(np.int64)


def _timed_chunks(thread: ThreadReplay, clock: bool, cancelled: IsCancelled,
                  keep_rows: Callable[[_Chunk], np.ndarray] | None = None) -> Iterator[_Chunk]:
    """The thread's calls chunk by chunk with start and end times that nest: [t(first),
    t(last + 1)), an end cut back to where the next sibling starts, then each call clamped into
    its caller. ``keep_rows(chunk)`` (optional) marks the rows whose kept descendants count them
    as callers (``kept_depth``)."""
    calls = thread.calls
    n = len(calls)
    if not n:
        return
    timer = _Timer(thread, clock)
    max_depth = int(np.max(calls.depth)) + 1
    stack_start = np.zeros(max_depth, np.int64)
    stack_end = np.zeros(max_depth, np.int64)
    stack_kept = np.zeros(max_depth, np.int64)
    all_parent, all_first = calls.parent, calls.first
    for lo in range(0, n, CHUNK_ROWS):
        _check_cancelled(cancelled)
        hi = min(n, lo + CHUNK_ROWS)
        first = np.asarray(calls.first[lo:hi], np.int64)
        last = np.asarray(calls.last[lo:hi], np.int64)
        parent = np.asarray(calls.parent[lo:hi], np.int64)
        after = np.asarray(calls.end[lo:hi], np.int64)       # the row after each subtree
        start = timer(first)
        end = timer(last + 1)
        # An end that reaches past the next sibling's start (a synthetic row detected at the event
        # where that sibling starts) is cut back to it.
        has_next = np.nonzero(after < n)[0]
        if len(has_next):
            nxt = after[has_next]
            sibling = np.asarray(all_parent[nxt], np.int64) == parent[has_next]
            rows, nxt = has_next[sibling], nxt[sibling]
            if len(rows):
                end[rows] = np.minimum(end[rows], timer(np.asarray(all_first[nxt], np.int64)))
        chunk = _Chunk(thread, lo, hi - lo, timer.clock, np.asarray(calls.method[lo:hi], np.int64),
                       np.asarray(calls.call_site[lo:hi], np.int64), np.asarray(calls.flags[lo:hi], np.int64),
                       np.asarray(calls.depth[lo:hi], np.int64), parent, first, last, start, end)
        keep = keep_rows(chunk) if keep_rows is not None else np.ones(chunk.n, np.bool_)
        chunk.kept_depth = np.empty(chunk.n, np.int64)
        _nest(chunk.depth, keep, chunk.start, chunk.end, chunk.kept_depth, stack_start, stack_end, stack_kept)
        yield chunk


@dataclass
class _Columns:
    """One chunk of a table: integer columns (None: empty), string columns as a pool and each
    row's key into it, and columns holding one value for the whole chunk."""

    n: int
    ints: dict[str, np.ndarray | None]
    strings: dict[str, tuple[_KeyedPool, np.ndarray]]
    constants: dict[str, str | int]


def _call_chunks(analysis: Analysis, threads: list[ThreadReplay], progress: Progress,
                 cancelled: IsCancelled, result: ExportResult) -> Iterator[_Columns]:
    clock = has_clock(threads)
    result.has_clock = clock
    names = _Names(analysis.statics)
    pools = {"class": names.pool(lambda p: p[0], _csv_field), "method": names.pool(lambda p: p[1], _csv_field),
             "descriptor": names.pool(lambda p: p[2], _csv_field)}
    flag_pool = _KeyedPool(_flag_text, _csv_field)
    total = sum(len(t.calls) for t in threads)
    done = 0
    for t in threads:
        calls = t.calls
        for chunk in _timed_chunks(t, clock, cancelled):
            lo, hi = chunk.lo, chunk.lo + chunk.n
            keys = names.keys(chunk.method, chunk.site)
            incl_bc = np.asarray(calls.incl_bytecodes[lo:hi], np.int64)
            incl_bl = np.asarray(calls.incl_blocks[lo:hi], np.int64)
            rows = np.arange(lo, hi, dtype=np.int64)
            yield _Columns(chunk.n, {
                "row": rows, "parent": chunk.parent, "depth": chunk.depth,
                "method_id": np.where(keys < names.site_base, keys, chunk.method), "first_event": chunk.first,
                "last_event": chunk.last, "start_ns": chunk.start if clock else None,
                "end_ns": chunk.end if clock else None, "incl_bytecodes": incl_bc,
                "excl_bytecodes": exclusive(t, rows, "incl_bytecodes"), "incl_blocks": incl_bl,
                "excl_blocks": exclusive(t, rows, "incl_blocks")},
                {**{name: (pool, keys) for name, pool in pools.items()}, "flags": (flag_pool, chunk.flags)},
                {"thread": t.index, "thread_name": t.name})
            done += chunk.n
            if progress is not None:
                progress(done, total)


def _block_chunks(analysis: Analysis, threads: list[ThreadReplay], cancelled: IsCancelled) -> Iterator[_Columns]:
    """The blocks table: executed blocks in static order, counted over the selected threads."""
    st = analysis.statics
    if len(threads) == len(analysis.threads):
        counts = np.asarray(analysis.block_counts[:st.n_blocks], np.int64)
    else:
        counts = np.zeros(st.n_blocks, np.int64)
        for t in threads:
            counts += t.block_counts[:st.n_blocks]
    executed = np.nonzero(counts)[0]
    names = _Names(st)
    pools = {"class": names.pool(lambda p: p[0], _csv_field), "method": names.pool(lambda p: p[1], _csv_field),
             "descriptor": names.pool(lambda p: p[2], _csv_field)}
    lines = _KeyedPool(lambda gb: st.b_lines[gb] or "", _csv_field)
    for lo in range(0, len(executed), CHUNK_ROWS):
        _check_cancelled(cancelled)
        gb = executed[lo:lo + CHUNK_ROWS]
        method = st.b_method[gb].astype(np.int64)
        yield _Columns(len(gb), {
            "method_id": method, "block": st.b_index[gb], "start_offset": st.b_start[gb],
            "end_offset": st.b_end[gb], "count": counts[gb],
            "bytecodes": counts[gb] * st.b_metrics[gb, 0].astype(np.int64)},
            {**{name: (pool, method) for name, pool in pools.items()}, "lines": (lines, gb)}, {})


@numba.njit(cache=True, nogil=True)
def _nest(depth, keep, start, end, kept_depth, stack_start, stack_end, stack_kept):  # pragma: no cover - numba
    """Clamp each call (in start order) into its caller and count its kept callers.

    The caller of a call at depth d is the last call seen at depth d - 1, so a stack indexed by
    depth, carried from chunk to chunk, holds every open caller's (clamped) times."""
    for i in range(len(depth)):
        d = depth[i]
        s = start[i]
        e = end[i]
        k = 0
        if d > 0:
            ps = stack_start[d - 1]
            pe = stack_end[d - 1]
            if s < ps:
                s = ps
            if s > pe:
                s = pe
            if e > pe:
                e = pe
            k = stack_kept[d - 1]
        if e < s:
            e = s
        start[i] = s
        end[i] = e
        kept_depth[i] = k
        stack_start[d] = s
        stack_end[d] = e
        stack_kept[d] = k + (1 if keep[i] else 0)
