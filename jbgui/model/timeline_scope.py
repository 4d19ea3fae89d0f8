"""Only my code in the timeline: which rows of a table the timeline walks (:class:`jbgui.model.timeline._Table`)
the scope shows, and at which depth.

The rule is the call tree's and the aggregated views' (:func:`jbgui.model.call_queries.shown_rows`):
a call shows when it is mine, top-level, or called by my code (the one call that entered a run of
JDK or library frames, standing for the run); it is drawn one level below its nearest shown
ancestor. So a run of hidden frames collapses into the call that entered it, and a callback into
my code below them is drawn right under that call.

Both kinds of table are handled exactly for what they hold:

- a *window* of rows (zoomed in): every call of the rows it decoded, after the calls running where
  it starts. Their true parents come from the call table (``parent``, by block); the few parents
  before the window are on two chains of ancestors walked once per window;
- a *level of detail* (zoomed out): closed under ancestors, so every kept call's shown-ness and
  depth are exact. A filler (a run of calls narrower than a pixel) follows the rule of its first
  call and is drawn one row deep: under a JDK call it may stand for hidden calls only, or for
  callbacks the first call does not show, and how deep its calls go under the scope is not in the
  level (the recorded extent counts hidden frames). What it stands for is narrower than a pixel;
  zoomed in far enough for a window, the drawing is exact.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def scope_pass(parent, method, mine, ext_method, ext_near, shown, sdepth):  # pragma: no cover - numba
    """Rows in preorder, each with its parent as an index into the same arrays (``>= 0``), -1 for a
    top-level call, or ``-2 - k`` for a parent outside them (entry ``k`` of ``ext_method``: its
    method, ``ext_near``: the depth under the scope of its nearest shown ancestor-or-self).
    Fills ``shown`` and ``sdepth`` (the depth under the scope, meaningful where shown)."""
    n = len(parent)
    near = np.empty(n, np.int64)      # depth under the scope of the nearest shown ancestor-or-self
    top = len(mine)
    for i in range(n):
        p = parent[i]
        m = method[i]
        own = 0 <= m < top and mine[m]
        if p == -1:
            s = True
            base = -1
        elif p >= 0:
            pm = method[p]
            s = own or (0 <= pm < top and mine[pm])
            base = near[p]
        else:
            k = -2 - p
            pm = ext_method[k]
            s = own or (0 <= pm < top and mine[pm])
            base = ext_near[k]
        shown[i] = s
        sdepth[i] = base + 1
        near[i] = base + 1 if s else base
    return near


def _pass(parent: np.ndarray, method: np.ndarray, mine: np.ndarray, ext_method=None, ext_near=None):
    n = len(parent)
    shown = np.zeros(n, np.bool_)
    sdepth = np.zeros(n, np.int64)
    ext_method = np.zeros(0, np.int64) if ext_method is None else np.asarray(ext_method, np.int64)
    ext_near = np.zeros(0, np.int64) if ext_near is None else np.asarray(ext_near, np.int64)
    near = scope_pass(np.ascontiguousarray(parent, np.int64), np.ascontiguousarray(method, np.int64),
                      np.ascontiguousarray(mine, np.bool_), ext_method, ext_near, shown, sdepth)
    return shown, sdepth, near


def level_scope(parent: np.ndarray, method: np.ndarray, mine: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``shown`` and depth under the scope of a level's rows (``parent``: their tree, from
    :func:`jbgui.model.timeline_kernel.loose_tree`, exact for a level: it holds every ancestor)."""
    shown, sdepth, _near = _pass(parent, method, mine)
    return shown, sdepth


def _chain(calls, row: int) -> np.ndarray:
    """``row`` and its ancestors, root first."""
    out = [int(row)]
    p = calls.at("parent", int(row))
    while p >= 0:
        out.append(p)
        p = calls.at("parent", p)
    return np.array(out[::-1], np.int64)


def _chain_scope(calls, row: int, mine: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of ``row``'s chain (root first) with their shown-ness, depth and nearest shown depth."""
    rows = _chain(calls, row)
    parent = np.arange(-1, len(rows) - 1, dtype=np.int64)
    method = calls.values_at("method", rows).astype(np.int64)
    shown, sdepth, near = _pass(parent, method, mine)
    return rows, shown, sdepth, near


def window_scope(calls, anc_rows: np.ndarray, lo: int, hi: int, mine: np.ndarray):
    """``shown`` and depth under the scope of a window's rows: ``anc_rows`` (calls running where it
    starts, nested, outermost first) then rows ``[lo, hi)`` of the call table."""
    anc_rows = np.asarray(anc_rows, np.int64)
    n_anc = len(anc_rows)
    shown = np.zeros(n_anc + hi - lo, np.bool_)
    sdepth = np.zeros(n_anc + hi - lo, np.int64)
    if n_anc:
        rows, s, d, _near = _chain_scope(calls, int(anc_rows[-1]), mine)
        at = np.searchsorted(rows, anc_rows)
        if (at >= len(rows)).any() or not np.array_equal(rows[np.minimum(at, len(rows) - 1)], anc_rows):
            # not one chain (cannot happen for the level's parent links): each on its own
            for j, r in enumerate(anc_rows.tolist()):
                rr, ss, dd, _n = _chain_scope(calls, r, mine)
                shown[j], sdepth[j] = ss[-1], dd[-1]
        else:
            shown[:n_anc], sdepth[:n_anc] = s[at], d[at]
    if hi <= lo:
        return shown, sdepth
    method = np.asarray(calls.window("method", lo, hi), np.int64)
    parent = np.asarray(calls.window("parent", lo, hi), np.int64)
    index = parent - lo
    before = (parent >= 0) & (parent < lo)
    ext_method = ext_near = None
    if before.any():
        # every parent before the window holds row lo: it is on lo's chain
        rows, _s, _d, near = _chain_scope(calls, lo, mine)
        rows, near = rows[:-1], near[:-1]
        k = np.searchsorted(rows, parent[before])
        k = np.minimum(k, max(len(rows) - 1, 0))
        if not len(rows) or not np.array_equal(rows[k], parent[before]):
            raise ValueError("a call's parent before the window is not an ancestor of its first row")
        index[before] = -2 - k
        ext_method = calls.values_at("method", rows).astype(np.int64)
        ext_near = near
    index[parent < 0] = -1
    s, d, _near = _pass(index, method, mine, ext_method, ext_near)
    shown[n_anc:], sdepth[n_anc:] = s, d
    return shown, sdepth


class StandIns:
    """Depths under the scope of single rows (a selected call, exception marks): the depth of the
    row's nearest shown ancestor-or-self, the call that stands for it. Walks up the call table,
    remembering every row it passes, so marks in the same stacks share the walk."""

    def __init__(self, calls, mine: np.ndarray):
        self.calls = calls
        self.mine = mine
        self._memo: dict[int, tuple[int, int]] = {}     # row -> (depth under the scope, method)

    def _is_mine(self, method: int) -> bool:
        return 0 <= method < len(self.mine) and bool(self.mine[method])

    def depth(self, row: int) -> int:
        memo, calls = self._memo, self.calls
        path = []
        x = int(row)
        while x >= 0 and x not in memo:
            path.append(x)
            x = calls.at("parent", x)
        above = memo.get(x)             # the first remembered ancestor (None: above the top)
        for y in reversed(path):
            m = calls.at("method", y)
            if above is None:
                near = 0                 # a top-level call always shows
            else:
                shown = self._is_mine(m) or self._is_mine(above[1])
                near = above[0] + 1 if shown else above[0]
            above = memo[y] = (near, m)
        return memo[int(row)][0]

    def depths(self, rows) -> np.ndarray:
        return np.array([self.depth(int(r)) for r in np.asarray(rows).tolist()], np.int64)
