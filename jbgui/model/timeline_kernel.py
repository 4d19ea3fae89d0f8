"""The timeline's query, compiled by numba: which rectangles to draw for a time range at a given
resolution, found by walking the call tree instead of scanning calls.

A thread's calls are in preorder, so a call's subtree is the row range ``[row, end[row])`` and
``first`` (its first event) is sorted. The walk visits only what is drawn:

- a call at least a pixel wide is drawn, and its children overlapping the range are visited;
- a call narrower than a pixel is drawn, together with the siblings after it that end in the same
  pixel column, as one rectangle from its depth down to the deepest call among them; those
  siblings and their subtrees are one row range (preorder), found by a binary search, and their
  deepest depth comes from a range-maximum index over blocks of rows, so they are not visited.

The number of calls visited is therefore about the pixels times the depth, not the number of
calls, and the columns can stay memory-mapped: a query touches a few pages of them.

Event indices map to times through the thread's clock samples (linear between samples, as
:meth:`jbgui.model.analysis.ThreadReplay.times`); a trace without a clock uses event indices.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def subtree_max_depth(parent, depth):
    """For every row, the deepest depth in its subtree (rows in preorder)."""
    n = len(depth)
    out = np.empty(n, np.int32)
    for r in range(n):
        out[r] = depth[r]
    for r in range(n - 1, 0, -1):
        p = parent[r]
        if p >= 0 and out[r] > out[p]:
            out[p] = out[r]
    return out


SMALL_BLOCK = 256
LARGE_BLOCK = 65536


@numba.njit(cache=True)
def block_maxima(depth, size):
    """Maximum of ``depth`` over each block of ``size`` rows (a range-maximum index)."""
    n = len(depth)
    out = np.zeros((n + size - 1) // size, np.int32)
    for b in range(len(out)):
        m = 0
        for i in range(b * size, min(n, (b + 1) * size)):
            if depth[i] > m:
                m = depth[i]
        out[b] = m
    return out


@numba.njit(cache=True)
def range_max(depth, blocks_small, blocks_large, a, b):
    """max(depth[a:b]) in O(block sizes) whatever the range's length."""
    m = 0
    i = a
    while i < b:
        if i % LARGE_BLOCK == 0 and i + LARGE_BLOCK <= b:
            v = blocks_large[i // LARGE_BLOCK]
            i += LARGE_BLOCK
        elif i % SMALL_BLOCK == 0 and i + SMALL_BLOCK <= b:
            v = blocks_small[i // SMALL_BLOCK]
            i += SMALL_BLOCK
        else:
            v = depth[i]
            i += 1
        if v > m:
            m = v
    return m


@numba.njit(cache=True)
def time_of(e, pos, nanos):
    """Time of (fractional) event index ``e``: linear between clock samples, constant outside."""
    n = len(pos)
    if n < 2:
        return e
    if e <= pos[0]:
        return nanos[0]
    if e >= pos[n - 1]:
        return nanos[n - 1]
    lo, hi = 0, n - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if pos[mid] <= e:
            lo = mid
        else:
            hi = mid
    span = pos[hi] - pos[lo]
    if span <= 0:
        return nanos[lo]
    return nanos[lo] + (nanos[hi] - nanos[lo]) * (e - pos[lo]) / span


@numba.njit(cache=True)
def event_at(t, pos, nanos):
    """The (fractional) event index at time ``t``: the inverse of :func:`time_of`."""
    n = len(pos)
    if n < 2:
        return t
    if t <= nanos[0]:
        return pos[0]
    if t >= nanos[n - 1]:
        return pos[n - 1]
    lo, hi = 0, n - 1
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if nanos[mid] <= t:
            lo = mid
        else:
            hi = mid
    span = nanos[hi] - nanos[lo]
    if span <= 0:
        return pos[lo]
    return pos[lo] + (pos[hi] - pos[lo]) * (t - nanos[lo]) / span


SAMPLE = 4096


@numba.njit(cache=True)
def _last_started(first, sample, lo, hi, e):
    """The last row in [lo, hi) whose first event is <= e (lo - 1 if none). ``sample`` holds every
    SAMPLE-th value of ``first``: searching it first keeps a search on a memory-mapped column to a
    page or two instead of one page per step."""
    a, b = lo, hi
    if b - a > 2 * SAMPLE:
        sa = (a + SAMPLE - 1) // SAMPLE       # samples inside [a, b)
        sb = (b - 1) // SAMPLE + 1
        x, y = sa, sb
        while x < y:                           # first sample index with value > e
            mid = (x + y) >> 1
            if sample[mid] <= e:
                x = mid + 1
            else:
                y = mid
        if x > sa:
            a = max(a, (x - 1) * SAMPLE)
        if x < sb:
            b = min(b, x * SAMPLE)
    while a < b:
        mid = (a + b) >> 1
        if first[mid] <= e:
            a = mid + 1
        else:
            b = mid
    return a - 1


@numba.njit(cache=True)
def child_at(first, sample, last, end, parent, p, lo, hi, e):
    """The child of ``p`` (rows [lo, hi) are p's subtree without p; p = -1 for the top level)
    running at event ``e``, or else the first one starting after it; -1 if none."""
    if lo >= hi:
        return -1
    q = _last_started(first, sample, lo, hi, e)
    if q < lo:
        return lo  # every child starts after e
    while parent[q] != p:
        q = parent[q]
    if last[q] + 1 <= e:  # a call covers events [first, last + 1) of the time axis
        nxt = end[q]
        return nxt if nxt < hi else -1
    return q


@numba.njit(cache=True)
def call_at(first, sample, last, end, parent, depth, e, d):
    """The call at depth ``d`` running at event ``e`` (-1 if none)."""
    n = len(first)
    q = _last_started(first, sample, 0, n, e)
    # Every call running at e is q (the last call started by then) or one of its ancestors.
    while q >= 0 and depth[q] > d:
        q = parent[q]
    if q >= 0 and depth[q] == d and last[q] + 1 > e:
        return q
    return -1


@numba.njit(cache=True)
def query(first, sample, last, end, parent, depth, deep, maxd, blocks_small, blocks_large, pos, nanos, t0, t1, px,
          depth_lo, depth_hi, o_row, o_d0, o_d1, o_start, o_end, o_merged):
    """Rectangles for times [t0, t1) at ``px`` time units per pixel and depths
    [depth_lo, depth_hi]. Writes into the ``o_*`` arrays; returns how many (at most their length:
    a full buffer ends the walk early, and the caller asks again with a larger one). ``deep`` is
    the deepest depth a row stands for (its depth, or more for a level of detail's filler, see
    :mod:`jbgui.model.timeline_lod`); ``blocks_*`` index it."""
    n = len(first)
    cap = len(o_row)
    k = 0
    if n == 0 or t1 <= t0:
        return 0
    e0 = event_at(t0, pos, nanos)
    e1 = event_at(t1, pos, nanos)
    # explicit stack of (next sibling, limit, parent) to come back to
    st_next = np.empty(4096, np.int64)
    st_limit = np.empty(4096, np.int64)
    st_parent = np.empty(4096, np.int64)
    sp = 0
    cur = child_at(first, sample, last, end, parent, -1, 0, n, e0)
    limit = n
    par = -1
    while True:
        if cur < 0 or cur >= limit or first[cur] > e1:
            if sp == 0:
                break
            sp -= 1
            cur = st_next[sp]
            limit = st_limit[sp]
            par = st_parent[sp]
            continue
        s = time_of(float(first[cur]), pos, nanos)
        e = time_of(float(last[cur] + 1), pos, nanos)
        d = depth[cur]
        if d > depth_hi:
            cur = end[cur]
            continue
        if e - s < px:
            # Narrower than a pixel: one rectangle for this subtree and the siblings after it
            # that end in the same pixel column, down to the deepest call among them. The
            # siblings are a row range (preorder), found by a search, not a walk.
            boundary = event_at(t0 + (np.floor((s - t0) / px) + 1.0) * px, pos, nanos)
            lo = par + 1 if par >= 0 else 0
            nxt = child_at(first, sample, last, end, parent, par, lo, limit, boundary)
            if nxt < 0:
                nxt = limit
            if nxt <= cur:
                nxt = end[cur]
            d1 = range_max(deep, blocks_small, blocks_large, cur, nxt)
            tail = nxt - 1                      # the last row of the run: climb to its sibling
            while parent[tail] != par:
                tail = parent[tail]
            e_run = max(e, time_of(float(last[tail] + 1), pos, nanos))
            if d1 >= depth_lo:
                if k >= cap:
                    return k
                o_row[k] = cur
                o_d0[k] = d
                o_d1[k] = min(d1, depth_hi)
                o_start[k] = s
                o_end[k] = e_run
                o_merged[k] = 1
                k += 1
            cur = nxt
            continue
        if d >= depth_lo:
            if k >= cap:
                return k
            o_row[k] = cur
            o_d0[k] = d
            o_d1[k] = d
            o_start[k] = s
            o_end[k] = e
            o_merged[k] = 0
            k += 1
        if maxd[cur] > d and d < depth_hi and end[cur] > cur + 1:
            child = child_at(first, sample, last, end, parent, cur, cur + 1, end[cur], max(e0, float(first[cur])))
            if child >= 0:
                if sp == len(st_next):
                    st_next = _grow(st_next)
                    st_limit = _grow(st_limit)
                    st_parent = _grow(st_parent)
                st_next[sp] = end[cur]
                st_limit[sp] = limit
                st_parent[sp] = par
                sp += 1
                limit = end[cur]
                par = cur
                cur = child
                continue
        cur = end[cur]
    return k


@numba.njit(cache=True)
def loose_tree(depth, parent, end):
    """``parent`` and ``end`` of rows in preorder from their depths, where a row may sit more than
    one level below the row before it (a window of a thread's rows after the ancestors of its
    first row: the calls in between are not there): a row's parent is the nearest row before it
    that is shallower."""
    n = len(depth)
    stack = np.empty(64, np.int64)
    sp = 0
    for i in range(n):
        d = depth[i]
        while sp > 0 and depth[stack[sp - 1]] >= d:
            sp -= 1
            end[stack[sp]] = i
        parent[i] = stack[sp - 1] if sp > 0 else -1
        if sp == len(stack):
            stack = _grow(stack)
        stack[sp] = i
        sp += 1
    while sp > 0:
        sp -= 1
        end[stack[sp]] = n


@numba.njit(cache=True)
def _grow(a):
    out = np.empty(len(a) * 2, a.dtype)
    out[:len(a)] = a
    return out
