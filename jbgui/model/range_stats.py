"""What happened in a stretch of a run: the statistics of a range selected in the timeline.

A range is given on the timeline's axis: nanoseconds since the trace started (every thread on
one clock), or event indices (each thread's own stream) for a trace without a clock or when the
timeline's x-axis is events. Per thread it becomes an event range ``[e0, e1)``; calls are rows in
start order, so the calls starting in it are one slice of rows (a binary search on ``first``),
and everything is counted in one sequential pass over that slice, a block of the store at a time
(a numba kernel reading the columns in order; no Python loop per call, memory for one block).

Exact counts: calls started in the range, calls *contained* in it (started and ended inside),
their own bytecodes and blocks (inclusive minus their children's, all of which are inside too),
exceptions thrown, classes loaded. A call running across an edge of the range (at most the depth
of the stack at each edge) did part of its own work outside: it is listed as an edge call and
not split, since the trace does not say which of its own blocks ran inside without re-reading
the events.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from jbgui.model.analysis import Analysis, ThreadReplay


@dataclass
class ThreadRange:
    """One thread's part of a range."""

    index: int
    name: str
    first_event: int          # the event range [first_event, stop_event)
    stop_event: int
    calls_started: int = 0    # calls whose first event is in the range
    calls_contained: int = 0  # ... and whose last event is too
    bytecodes: int = 0        # own bytecodes of the contained calls
    blocks: int = 0           # own blocks of the contained calls
    exceptions: int = 0       # thrown in the range
    class_loads: int = 0
    edge_rows: list[int] = field(default_factory=list)   # calls running across an edge


@dataclass
class RangeStats:
    """The statistics of a range over the chosen threads."""

    start: float
    stop: float
    unit: str                      # "ns" or "events"
    threads: list[ThreadRange]
    # Hot methods by own bytecodes in the range: method id, calls, own bytecodes, own blocks,
    # sorted by own bytecodes (most first).
    methods: np.ndarray
    exceptions: dict[int, int]     # exception class id -> times thrown
    class_loads: list[int]         # class ids loaded, in load order per thread

    def total(self, what: str) -> int:
        """A thread column summed over the threads (``calls_started``, ``bytecodes``, ...)."""
        return int(sum(getattr(t, what) for t in self.threads))


METHOD_DTYPE = np.dtype([("method", "<i8"), ("calls", "<i8"), ("bytecodes", "<i8"), ("blocks", "<i8")])


def event_range(thread: ThreadReplay, start: float, stop: float, use_clock: bool = True) -> tuple[int, int]:
    """The events ``[e0, e1)`` of ``thread`` in the range ``[start, stop)`` of the timeline's axis
    (nanoseconds when ``use_clock`` and the thread has clock samples, else event indices)."""
    clock = np.asarray(thread.clock)
    if use_clock and len(clock) >= 2:
        # The inverse of the timeline's interpolation: times are non-decreasing in events, and
        # where several samples share a time (a run of events the clock did not move over) the
        # range starts at the first of them and stops at the last: np.interp takes the last of
        # equal values, so the start is inverted over the samples reversed and negated. (Taking
        # the last for both left a call that starts on such a run out of its own range.)
        times, positions = clock[:, 1], clock[:, 0]
        e0 = float(np.interp(-start, -times[::-1], positions[::-1]))
        e1 = float(np.interp(stop, times, positions))
    else:
        e0, e1 = start, stop
    # The first event at or after each end. An event's own time inverted comes back a hair above
    # the event (930272.0000001): within a millionth of an event it is that event (a call's own
    # range left the call out of it, 1 recording in 3).
    return int(np.ceil(e0 - 1e-6)), int(np.ceil(e1 - 1e-6))


@numba.njit(cache=True, nogil=True)
def _count_rows(base, r0, stop, method, parent, last, incl_bc, incl_bl, ext_rows, ext_last, ext_method,
                m_calls, m_bc, m_bl):  # pragma: no cover
    """Over a chunk of rows (row ``base`` onwards) of the range's rows ``[r0, r1)``: calls
    contained (last < stop) counted per method, with their own bytecodes and blocks: each
    contained call adds its inclusive counts to its method and takes them off its parent's method
    when the parent is contained too (a contained call's children all are). A parent before the
    chunk (but in the range) is looked up in ``ext_rows`` (sorted) with its last event and method.
    Returns (contained, own bytecodes, own blocks)."""
    n_methods = len(m_calls)
    contained = 0
    total_bc = 0
    total_bl = 0
    for i in range(len(method)):
        if last[i] >= stop:
            continue
        contained += 1
        m = method[i]
        if m < 0 or m >= n_methods:
            m = 0
        bc = incl_bc[i]
        bl = incl_bl[i]
        m_calls[m] += 1
        m_bc[m] += bc
        m_bl[m] += bl
        total_bc += bc
        total_bl += bl
        p = parent[i]
        if p >= r0:
            if p >= base:
                p_last = last[p - base]
                pm = method[p - base]
            else:
                k = np.searchsorted(ext_rows, p)
                if k >= len(ext_rows) or ext_rows[k] != p:
                    continue
                p_last = ext_last[k]
                pm = ext_method[k]
            if p_last < stop:
                if pm < 0 or pm >= n_methods:
                    pm = 0
                m_bc[pm] -= bc
                m_bl[pm] -= bl
                total_bc -= bc
                total_bl -= bl
    return contained, total_bc, total_bl


def _chunks(calls, r0: int, r1: int) -> list[tuple[int, int]]:
    """``[r0, r1)`` cut at the store's blocks (each decoded once), or whole when in memory."""
    stored = calls._stored
    if stored is None:
        return [(r0, r1)]
    starts = np.asarray(stored.starts, np.int64)
    cuts = starts[(starts > r0) & (starts < r1)].tolist()
    bounds = [r0, *cuts, r1]
    return list(zip(bounds[:-1], bounds[1:]))


def _count_range(calls, r0: int, r1: int, stop: int, m_calls, m_bc, m_bl) -> tuple[int, int, int]:
    """:func:`_count_rows` over rows ``[r0, r1)``, a block at a time (memory holds a block)."""
    contained = total_bc = total_bl = 0
    for lo, hi in _chunks(calls, r0, r1):
        cols = [np.ascontiguousarray(calls.window(name, lo, hi, keep=False)) for name in
                ("method", "parent", "last", "incl_bytecodes", "incl_blocks")]
        parent = cols[1]
        outside = np.unique(parent[(parent >= r0) & (parent < lo)]).astype(np.int64)
        ext_last = calls.values_at("last", outside).astype(np.int64) if len(outside) else np.zeros(0, np.int64)
        ext_method = calls.values_at("method", outside).astype(np.int64) if len(outside) else np.zeros(0, np.int64)
        c, bc, bl = _count_rows(lo, r0, stop, *cols, outside, ext_last, ext_method, m_calls, m_bc, m_bl)
        contained += int(c)
        total_bc += int(bc)
        total_bl += int(bl)
    return contained, total_bc, total_bl


def _edge_rows(thread: ThreadReplay, row: int, event: int) -> list[int]:
    """The calls running across ``event`` (started before it, not ended): ``row`` is the last call
    started before it; walk up its callers (at most the stack's depth)."""
    calls = thread.calls
    out = []
    while row >= 0:
        if calls.at("last", row) >= event:
            out.append(row)
        row = calls.at("parent", row)
    return out[::-1]


def range_stats(analysis: Analysis, start: float, stop: float, use_clock: bool = True,
                threads: list[int] | None = None, top: int = 50) -> RangeStats:
    """Statistics of the range ``[start, stop)`` over ``threads`` (thread indices; every thread
    when None). ``top`` hot methods are kept (all with ``top=0``)."""
    n_methods = analysis.statics.max_method_id + 1
    m_calls = np.zeros(n_methods, np.int64)
    m_bytecodes = np.zeros(n_methods, np.int64)
    m_blocks = np.zeros(n_methods, np.int64)
    exceptions: dict[int, int] = {}
    loads: list[int] = []
    parts = []
    has_clock = use_clock and any(len(t.clock) >= 2 for t in analysis.threads if len(t.calls))
    for thread in analysis.threads:
        if threads is not None and thread.index not in threads:
            continue
        e0, e1 = event_range(thread, start, stop, use_clock)
        part = ThreadRange(thread.index, thread.name, e0, e1)
        parts.append(part)
        if e1 <= e0:
            continue
        calls = thread.calls
        if len(calls):
            r0, r1 = (int(x) for x in calls.rows_starting_before([e0, e1]))
            part.calls_started = r1 - r0
            if r1 > r0:
                part.calls_contained, part.bytecodes, part.blocks = _count_range(calls, r0, r1, e1, m_calls,
                                                                                 m_bytecodes, m_blocks)
            edges = _edge_rows(thread, r0 - 1, e0) if r0 > 0 else []
            if r1 > r0:
                edges += [r for r in _edge_rows(thread, r1 - 1, e1) if r >= r0]
            part.edge_rows = edges
        exc = thread.exceptions
        if len(exc):
            thrown = exc[(exc["throw_event"] >= e0) & (exc["throw_event"] < e1)]
            part.exceptions = len(thrown)
            for cls, count in zip(*np.unique(thrown["exc_class"], return_counts=True)):
                exceptions[int(cls)] = exceptions.get(int(cls), 0) + int(count)
        cl = thread.class_loads
        if len(cl):
            chosen = cl[(cl["event"] >= e0) & (cl["event"] < e1)]
            part.class_loads = len(chosen)
            loads.extend(int(c) for c in chosen["class_id"])
    used = np.flatnonzero(m_calls)
    order = used[np.argsort(-m_bytecodes[used], kind="stable")]
    if top:
        order = order[:top]
    methods = np.zeros(len(order), METHOD_DTYPE)
    methods["method"], methods["calls"] = order, m_calls[order]
    methods["bytecodes"], methods["blocks"] = m_bytecodes[order], m_blocks[order]
    return RangeStats(float(start), float(stop), "ns" if has_clock else "events", parts, methods, exceptions, loads)


def call_range(analysis: Analysis, thread_index: int, row: int, use_clock: bool = True) -> tuple[float, float]:
    """The range a call covers on the timeline's axis: [its first event, the one after its last)."""
    thread = analysis.thread(thread_index)
    first, last = float(thread.calls.at("first", row)), float(thread.calls.at("last", row)) + 1.0
    clock = np.asarray(thread.clock)
    if use_clock and len(clock) >= 2:
        return float(np.interp(first, clock[:, 0], clock[:, 1])), float(np.interp(last, clock[:, 0], clock[:, 1]))
    return first, last
