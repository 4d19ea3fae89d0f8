"""Code discovery: when each method ran for the first time, beside the class loads, so that "what
code first ran in this time range" lists what a user action exercised (feature location).

A method's first call per thread is its first row in the thread's call table (rows are in start
order); the earliest over threads is its first run. Kept beside each thread's call columns
(:mod:`jbgui.model.derived`)."""

from __future__ import annotations

import numba
import numpy as np

from jbgui.model import derived
from jbgui.model.analysis import Analysis


@numba.njit(cache=True, nogil=True)
def _first_rows(method, n_methods):
    out = np.full(n_methods, -1, np.int64)
    for r in range(len(method)):
        m = method[r]
        if 0 < m < n_methods and out[m] < 0:
            out[m] = r
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
            lambda: {"first_row": _first_rows(np.asarray(calls.method), n_methods)},
            lambda a: len(a["first_row"]) == n_methods)
        first_row = arrays["first_row"]
        ran = np.flatnonzero(first_row >= 0)
        r = first_row[ran]
        methods.append(ran)
        threads.append(np.full(len(ran), thread.index, np.int64))
        rows.append(r)
        nanos.append(thread.times(np.asarray(calls.first)[r]))
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
