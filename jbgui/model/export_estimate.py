"""How big an export will be, before it is written.

A Chrome export of a large program's main thread runs to many gigabytes, collapsed stacks to a
few; the explorer's export dialog and ``jbtrace export`` say so first (and offer the event cap)
rather than fill a disk. The estimate costs about as much as opening the trace: per thread, the
calls per method that the replay already counted (:attr:`ThreadReplay.call_summary`) times the
bytes a row of that method takes in the format (its name plus the fixed fields), a time range
by ``searchsorted`` on the call starts, and for collapsed stacks the calling-context tree when it
was computed before (else an upper bound, one line per call).

Estimates are within a factor of two of the real size for traces of the test programs (the
tests check it); they are meant for "13 GB" against "40 MB", not for the last byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numba
import numpy as np

from jbgui.model.analysis import Analysis, ThreadReplay

# Fixed bytes per row besides the method's name, by format (measured on real exports).
CHROME_EVENT_BYTES = 150        # {"ph":"X","pid":..,"tid":..,"ts":..,"dur":..,"name":..,"cat":..,"args":{..}}
CSV_CALL_BYTES = 75             # the numeric columns of a calls row
CSV_BLOCK_BYTES = 60            # a blocks row besides its method's name
PARQUET_RATIO = 0.2             # compressed columns, against CSV
COLLAPSED_FRAME_BYTES = 1       # the ";" between frames
COLLAPSED_LINE_BYTES = 12       # " <weight>\n"
# Collapsed stacks write parameter types as Java names ("String[]"), shorter than descriptors.
COLLAPSED_NAME_SHARE = 0.6
# Above this the dialog and the command line warn.
WARN_BYTES = 1 << 30


@dataclass
class Estimate:
    """An export's estimated size: ``bytes`` written and the ``rows`` (events, lines or rows) it
    would hold without a cap; ``capped_rows`` and ``capped_bytes`` when an event cap keeps fewer;
    ``upper_bound`` when the estimate can only say "at most"."""

    bytes: int
    rows: int
    capped_rows: int | None = None
    capped_bytes: int | None = None
    upper_bound: bool = False

    @property
    def written(self) -> int:
        """Bytes the export writes (with its cap)."""
        return self.capped_bytes if self.capped_bytes is not None else self.bytes

    @property
    def large(self) -> bool:
        """Would the export write more than :data:`WARN_BYTES`?"""
        return self.written >= WARN_BYTES

    def describe(self) -> str:
        """``about 13.2 GB (84,000,000 events)`` and the like."""
        size = human_bytes(self.bytes)
        rows = f"{self.rows:,}"
        text = f"{'at most' if self.upper_bound else 'about'} {size} ({rows} rows)"
        if self.capped_rows is not None:
            text += f"; the event cap keeps the first {self.capped_rows:,} ({human_bytes(self.written)})"
        return text


def human_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _threads(analysis: Analysis, wanted: Sequence[str | int]) -> list[ThreadReplay]:
    if not wanted:
        return list(analysis.threads)
    out = []
    for t in analysis.threads:
        if t.name in wanted or str(t.index) in {str(w) for w in wanted}:
            out.append(t)
    return out


def _name_lengths(analysis: Analysis, cache: dict[int, int], methods: np.ndarray) -> np.ndarray:
    st = analysis.statics
    out = np.empty(len(methods), np.int64)
    for i, m in enumerate(methods.tolist()):
        n = cache.get(m)
        if n is None:
            n = cache[m] = len(st.method_qualified(m)) if m > 0 else 24
        out[i] = n
    return out


def _calls_in_range(thread: ThreadReplay, start_ns: float | None, end_ns: float | None) -> float:
    """The share of the thread's calls starting in [start_ns, end_ns) (1 without a range)."""
    calls = thread.calls
    n = len(calls)
    if not n or (start_ns is None and end_ns is None):
        return 1.0
    clock = np.asarray(thread.clock)
    lo, hi = -np.inf if start_ns is None else start_ns, np.inf if end_ns is None else end_ns
    if len(clock) >= 2:
        lo_e, hi_e = np.interp([max(lo, clock[0, 1]), min(hi, clock[-1, 1])], clock[:, 1], clock[:, 0])
        lo_e = lo_e if np.isfinite(lo) else -np.inf
        hi_e = hi_e if np.isfinite(hi) else np.inf
    else:
        lo_e, hi_e = lo, hi
    first = np.asarray(calls.first)
    info = np.iinfo(first.dtype)
    keys = np.clip(np.array([lo_e, hi_e]), info.min, info.max).astype(first.dtype)
    r0, r1 = np.searchsorted(first, keys)
    return max(0, int(r1) - int(r0)) / n


def estimate(analysis: Analysis, fmt: str, threads: Sequence[str | int] = (), table: str = "calls",
             start_ms: float | None = None, end_ms: float | None = None,
             max_events: int | None = None) -> Estimate:
    """The estimated size of ``jbgui.model.export.export(analysis, path, fmt, ...)`` with these
    options (``start_ms``/``end_ms``: the Chrome export's time range; ``max_events``: its cap)."""
    selected = _threads(analysis, threads)
    names: dict[int, int] = {}
    total_bytes = 0.0
    rows = 0.0
    upper = False
    start_ns = None if start_ms is None else start_ms * 1e6
    end_ns = None if end_ms is None else end_ms * 1e6
    for thread in selected:
        if not len(thread.calls):
            continue
        if fmt == "collapsed":
            b, r, bound = _collapsed(analysis, thread, names)
            total_bytes += b
            rows += r
            upper |= bound
            continue
        if fmt in ("csv", "parquet") and table == "blocks":
            counts = np.asarray(thread.block_counts)
            used = np.flatnonzero(counts)
            rows += len(used)
            st = analysis.statics
            b_method = np.asarray(getattr(st, "b_method", np.zeros(0, np.int64)))
            if len(b_method) >= len(counts):
                lengths = _name_lengths(analysis, names, np.unique(b_method[used]))
                per_row = CSV_BLOCK_BYTES + float(lengths.mean()) if len(lengths) else CSV_BLOCK_BYTES
            else:
                per_row = CSV_BLOCK_BYTES + 40
            total_bytes += len(used) * per_row
            continue
        summary = thread.call_summary
        methods = np.asarray(summary["method_ids"], np.int64)
        counts = np.asarray(summary["method_calls"], np.int64)
        share = _calls_in_range(thread, start_ns, end_ns) if fmt == "chrome" else 1.0
        fixed = CHROME_EVENT_BYTES if fmt == "chrome" else CSV_CALL_BYTES
        named = float((counts * (_name_lengths(analysis, names, methods) + fixed)).sum())
        accounted = int(counts.sum())
        missing = max(0, len(thread.calls) - accounted)       # synthetic calls without a method
        named += missing * (fixed + 24)
        total_bytes += share * named
        rows += share * len(thread.calls)
    if fmt == "parquet":
        total_bytes *= PARQUET_RATIO
    result = Estimate(int(total_bytes), int(rows), upper_bound=upper)
    if fmt == "chrome" and max_events is not None and rows > max_events:
        result.capped_rows = int(max_events)
        result.capped_bytes = int(total_bytes * max_events / rows)
    return result


SYNTHETIC = 1 << 20     # calling-context tree keys from here on are call sites (jbgui.model.cct)


@numba.njit(cache=True, nogil=True)
def _path_bytes(parent, own):  # pragma: no cover - numba
    """Sum over the nodes of a tree (parents before children) of the bytes of the path to each:
    the line of collapsed stacks that node becomes."""
    n = len(parent)
    path = np.zeros(n, np.int64)
    total = 0
    for i in range(n):
        p = parent[i]
        path[i] = own[i] + (path[p] if 0 <= p < i else 0)
        total += path[i]
    return total


def _collapsed(analysis: Analysis, thread: ThreadReplay, names: dict[int, int]) -> tuple[float, float, bool]:
    """Bytes and lines of one thread's collapsed stacks: from its calling-context tree when it was
    computed before, else at most one line per call."""
    calls = thread.calls
    n = len(calls)
    step = max(1, n // 100_000)
    depth = np.asarray(calls.depth)[::step].astype(np.float64)
    method = np.asarray(calls.method)[::step].astype(np.int64)
    uniq, inverse = np.unique(method, return_inverse=True)
    name = _name_lengths(analysis, names, uniq)[inverse].astype(np.float64)
    frame = float(name.mean()) * COLLAPSED_NAME_SHARE + COLLAPSED_FRAME_BYTES
    if thread.cct_ready:
        cct = thread.cct
        keys = np.asarray(cct["key"], np.int64)
        uniq, inverse = np.unique(keys, return_inverse=True)
        lengths = [(_name_lengths(analysis, names, np.array([k]))[0] if 0 < k < SYNTHETIC else 30) for k in uniq.tolist()]
        own = (np.array(lengths, np.float64) * COLLAPSED_NAME_SHARE).astype(np.int64)[inverse] + COLLAPSED_FRAME_BYTES
        total = _path_bytes(np.asarray(cct["parent"], np.int64), own)
        nodes = len(keys)
        return float(total) + nodes * COLLAPSED_LINE_BYTES, nodes, False
    line = (float(depth.mean()) + 1) * frame + COLLAPSED_LINE_BYTES
    return n * line, n, True
