"""Code discovery: when each method and each block ran for the first time, beside the class loads,
so that "what code first ran in this time range" lists what a user action exercised (feature
location).

A method's first call per thread is its first row in the thread's call table (rows are in start
order); the earliest over threads is its first run. A block's first run is the first BLOCK word
naming it in a stream (every chunk is decoded once, by a numba kernel, no per-event Python). Both
are kept beside each thread's call columns (:mod:`jbgui.model.derived`)."""

from __future__ import annotations

import numba
import numpy as np

from jbgui.model import derived, layout
from jbgui.model.analysis import Analysis
from jbgui.model.call_blocks import stream_index


@numba.njit(cache=True, nogil=True)
def _first_rows(method, base, out):
    """Rows ``base`` onwards: the first row of each method not seen before (``out[m] < 0``)."""
    n_methods = len(out)
    for r in range(len(method)):
        m = method[r]
        if 0 < m < n_methods and out[m] < 0:
            out[m] = base + r
    return out


def _first_rows_of(calls, n_methods: int) -> np.ndarray:
    """Each method's first row in a thread, reading its ``method`` column a block at a time."""
    out = np.full(n_methods, -1, np.int64)
    stored = calls._stored
    starts = np.asarray(stored.starts, np.int64).tolist() if stored is not None else [0, len(calls)]
    for lo, hi in zip(starts[:-1], starts[1:]):
        if hi > lo:
            _first_rows(np.ascontiguousarray(calls.window("method", lo, hi, keep=False)), lo, out)
    return out


def first_runs(analysis: Analysis) -> dict[str, np.ndarray]:
    """``method``, ``thread``, ``row``, ``nanos`` (since the trace started) of every method that ran,
    ordered by time."""
    st = analysis.statics
    n_methods = len(st.m_class)
    methods, threads, rows, nanos = [], [], [], []
    for thread in analysis.threads:
        if not len(thread.calls):
            continue
        calls = thread.calls
        arrays = derived.load_or_compute(
            calls.directory, "first_rows.npz", ("first_row",),
            lambda: {"first_row": _first_rows_of(calls, n_methods)},
            lambda a: len(a["first_row"]) == n_methods)
        first_row = arrays["first_row"]
        ran = np.flatnonzero(first_row >= 0)
        r = first_row[ran]
        methods.append(ran)
        threads.append(np.full(len(ran), thread.index, np.int64))
        rows.append(r)
        nanos.append(thread.times(calls.values_at("first", r)))
    if not methods:
        empty = np.zeros(0, np.int64)
        return {"method": empty, "thread": empty, "row": empty, "nanos": np.zeros(0)}
    m, t, r, ns = (np.concatenate(x) for x in (methods, threads, rows, nanos))
    order = np.lexsort((t, ns))
    m, t, r, ns = m[order], t[order], r[order], ns[order]
    _u, keep = np.unique(m, return_index=True)   # earliest over threads
    keep = np.sort(keep)
    return {"method": m[keep], "thread": t[keep], "row": r[keep], "nanos": ns[keep]}


def class_loads(analysis: Analysis) -> dict[str, np.ndarray]:
    """``class_id``, ``thread``, ``nanos`` of every recorded class load, ordered by time."""
    ids, threads, nanos = [], [], []
    for thread in analysis.threads:
        loads = thread.class_loads
        if len(loads):
            ids.append(loads["class_id"])
            threads.append(np.full(len(loads), thread.index, np.int64))
            nanos.append(thread.times(loads["event"]))
    if not ids:
        empty = np.zeros(0, np.int64)
        return {"class_id": empty, "thread": empty, "nanos": np.zeros(0)}
    c, t, ns = (np.concatenate(x) for x in (ids, threads, nanos))
    order = np.argsort(ns, kind="stable")
    return {"class_id": c[order], "thread": t[order], "nanos": ns[order]}


def first_run_in(analysis: Analysis, start_nanos: float, end_nanos: float) -> dict[str, np.ndarray]:
    """The methods that ran for the first time in ``[start, end)`` (nanoseconds since the trace
    started), in the order they first ran."""
    runs = first_runs(analysis)
    sel = (runs["nanos"] >= start_nanos) & (runs["nanos"] < end_nanos)
    return {k: v[sel] for k, v in runs.items()}


# The event word's fields (jbgui.model.layout owns them), as module constants numba folds in.
_TYPE_SHIFT, _TYPE_BLOCK = layout.TYPE_SHIFT, layout.TYPE_BLOCK
_METHOD_SHIFT, _MAX_METHOD_ID, _BLOCK_MASK = layout.METHOD_SHIFT, layout.MAX_METHOD_ID, layout.BLOCK_MASK


@numba.njit(cache=True, nogil=True)
def _first_blocks(words, base, page_base, out):
    """``out[gb]``: the first event index of block ``gb`` (-1 until seen), over a batch of words
    starting at event ``base``."""
    for i in range(len(words)):
        w = np.int64(words[i])
        if (w >> _TYPE_SHIFT) != _TYPE_BLOCK:
            continue
        page = (w >> _METHOD_SHIFT) & _MAX_METHOD_ID
        if page >= len(page_base) or page_base[page] < 0:
            continue
        gb = page_base[page] + (w & _BLOCK_MASK)
        if gb < len(out) and out[gb] < 0:
            out[gb] = base + i


def first_block_runs(analysis: Analysis) -> dict[str, np.ndarray]:
    """``block`` (global index), ``thread``, ``event``, ``nanos`` of every block that ran, by time:
    its first execution over all threads."""
    assert layout.TYPE_SHIFT == 30 and layout.METHOD_SHIFT == 11 and layout.BLOCKS_PER_PAGE == 2048
    st = analysis.statics
    n = st.n_blocks
    page_base = st.page_base.astype(np.int64)
    blocks, threads, events, nanos = [], [], [], []
    for thread in analysis.threads:
        if not len(thread.calls):
            continue

        def compute(thread=thread) -> dict[str, np.ndarray]:
            out = np.full(max(n, 1), -1, np.int64)
            index = stream_index(analysis, thread)
            for first, words in index.chunks(0, index.events):
                _first_blocks(words, first, page_base, out)
            return {"first_event": out}
        arrays = derived.load_or_compute(thread.calls.directory, "first_blocks.npz", ("first_event",), compute,
                                         lambda a: len(a["first_event"]) == max(n, 1))
        first = arrays["first_event"][:n]
        ran = np.flatnonzero(first >= 0)
        blocks.append(ran)
        threads.append(np.full(len(ran), thread.index, np.int64))
        events.append(first[ran])
        nanos.append(thread.times(first[ran]))
    if not blocks:
        empty = np.zeros(0, np.int64)
        return {"block": empty, "thread": empty, "event": empty, "nanos": np.zeros(0)}
    b, t, e, ns = (np.concatenate(x) for x in (blocks, threads, events, nanos))
    order = np.lexsort((t, ns))
    b, t, e, ns = b[order], t[order], e[order], ns[order]
    _u, keep = np.unique(b, return_index=True)
    keep = np.sort(keep)
    return {"block": b[keep], "thread": t[keep], "event": e[keep], "nanos": ns[keep]}
