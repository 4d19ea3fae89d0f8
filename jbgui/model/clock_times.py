"""Times of event indices between a thread's clock samples (``np.interp``, linear between
samples, constant outside), for passes over blocks of calls in start order: one walk over the
samples per block instead of a binary search per value, with numpy's arithmetic so that every
value is the same to the bit."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _interp_at(x, j, pos, nanos):  # pragma: no cover - numba
    """``np.interp(x, pos, nanos)`` given ``pos[j] <= x < pos[j + 1]`` (or ``x`` outside the
    samples), with numpy's arithmetic, so the value is the same to the last bit."""
    n = len(pos)
    if x < pos[0]:
        return nanos[0]
    if x >= pos[n - 1]:
        return nanos[n - 1]
    if pos[j] == x:
        return nanos[j]
    slope = (nanos[j + 1] - nanos[j]) / (pos[j + 1] - pos[j])
    return slope * (x - pos[j]) + nanos[j]


@numba.njit(cache=True, nogil=True, inline="always")
def _end_at(x, y, j, pos, nanos):  # pragma: no cover - numba
    """``np.interp(y, pos, nanos)`` for ``y >= x``, ``j`` being the sample of ``x``: galloping
    forward from ``j`` (a call ends mostly within a few samples of its start)."""
    n = len(pos)
    k = j if y >= x else 0      # (an end before the start cannot happen; never read wrong)
    step = 1
    while k + step < n and pos[k + step] <= y:     # gallop: pos[k] <= y stays true
        k += step
        step *= 2
    hi = min(k + step, n)                             # pos[hi] > y, or hi == n
    while hi - k > 1:
        mid = (k + hi) >> 1
        if pos[mid] <= y:
            k = mid
        else:
            hi = mid
    return _interp_at(y, k, pos, nanos)


# The two kernels below repeat their few lines on purpose: numba does not inline a helper taking
# arrays here, and a call per value made them six times slower.

@numba.njit(cache=True, nogil=True)
def _block_times(first, last, plus, pos, nanos, slopes, t_first, t_end):  # pragma: no cover - numba
    """``np.interp`` of ``first`` and of ``last + plus`` over the clock samples (``pos`` increasing,
    at least two), walking the samples instead of a binary search per value: ``first`` never
    decreases within a block but where an axis start steps back by one unit
    (:class:`jbgui.model.blocking_times.Axis`: a native's start, before the step at its event),
    and the walk steps back with it; a call ends at or after its start. Each segment's slope is
    computed once (``slopes``: the same division, so the same bits; a division per value was
    most of the cost)."""
    n = len(pos)
    j = 0
    for i in range(len(first)):
        x = np.float64(first[i])
        while j > 0 and pos[j] > x:
            j -= 1
        while j + 1 < n and pos[j + 1] <= x:
            j += 1
        if x < pos[0] or x >= pos[n - 1] or pos[j] == x:
            t_first[i] = _interp_at(x, j, pos, nanos)
        else:
            t_first[i] = slopes[j] * (x - pos[j]) + nanos[j]
        y = np.float64(last[i]) + plus
        k = j if y >= x else 0
        if k + 1 < n and pos[k + 1] <= y:          # ends in a later segment: search for it
            t_end[i] = _end_at(x, y, j, pos, nanos)
        elif y < pos[0] or y >= pos[n - 1] or pos[k] == y:
            t_end[i] = _interp_at(y, k, pos, nanos)
        else:
            t_end[i] = slopes[k] * (y - pos[k]) + nanos[k]


def _slopes(pos: np.ndarray, nanos: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):      # segments of no length: never used
        return np.diff(nanos) / np.diff(pos)


@numba.njit(cache=True, nogil=True)
def _block_spans(first, last, pos, nanos, slopes, out):  # pragma: no cover - numba
    """What :func:`block_spans` returns, in one pass: the arithmetic of :func:`_block_times` (with
    ``plus`` 0), then ``np.rint``."""
    n = len(pos)
    j = 0
    for i in range(len(first)):
        x = np.float64(first[i])
        while j > 0 and pos[j] > x:
            j -= 1
        while j + 1 < n and pos[j + 1] <= x:
            j += 1
        if x < pos[0] or x >= pos[n - 1] or pos[j] == x:
            t0 = _interp_at(x, j, pos, nanos)
        else:
            t0 = slopes[j] * (x - pos[j]) + nanos[j]
        y = np.float64(last[i])
        k = j if y >= x else 0
        if k + 1 < n and pos[k + 1] <= y:
            t1 = _end_at(x, y, j, pos, nanos)
        elif y < pos[0] or y >= pos[n - 1] or pos[k] == y:
            t1 = _interp_at(y, k, pos, nanos)
        else:
            t1 = slopes[k] * (y - pos[k]) + nanos[k]
        span = np.rint(t1 - t0)
        out[i] = np.int64(span) if span > 0 else 0


def block_times(first: np.ndarray, last: np.ndarray, pos: np.ndarray, nanos: np.ndarray,
                plus: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Times of a block of calls (``first`` nondecreasing, ``last >= first``): equal to
    ``np.interp(first, pos, nanos)`` and ``np.interp(last + plus, pos, nanos)`` (the event
    indices themselves without two samples), in one walk over the samples. ``plus`` 1: a call's
    end as the timeline draws it (one past its last event); 0: its last event."""
    first = np.asarray(first)
    if len(pos) < 2 or not len(first):
        return first.astype(np.float64), np.asarray(last, np.float64) + plus
    t_first = np.empty(len(first), np.float64)
    t_end = np.empty(len(first), np.float64)
    pos = np.ascontiguousarray(pos, np.float64)
    nanos = np.ascontiguousarray(nanos, np.float64)
    _block_times(first, np.asarray(last), float(plus), pos, nanos, _slopes(pos, nanos), t_first, t_end)
    return t_first, t_end


def block_spans(first: np.ndarray, last: np.ndarray, pos: np.ndarray, nanos: np.ndarray) -> np.ndarray:
    """Nanoseconds from each call's first event to its last (int64, rounded to the nearest, never
    negative), for a block of calls as :func:`block_times` takes them: equal to
    ``np.maximum(np.rint(np.interp(last) - np.interp(first)), 0)``, in one pass."""
    first = np.asarray(first)
    if len(pos) < 2 or not len(first):
        return np.maximum(np.asarray(last, np.int64) - first, 0)
    out = np.empty(len(first), np.int64)
    pos = np.ascontiguousarray(pos, np.float64)
    nanos = np.ascontiguousarray(nanos, np.float64)
    _block_spans(first, np.asarray(last), pos, nanos, _slopes(pos, nanos), out)
    return out
