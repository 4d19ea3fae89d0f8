"""Flame-graph layout of a merged tree: one rectangle per node, ``x`` and ``width`` in units of
the chosen weight (bytecodes, calls, blocks, time), ``depth`` from the root. Children are laid
left to right in the order they first ran, inside their parent, so a zoom on a frame is the rectangles whose
``x`` falls inside it. What the screen cannot show apart (frames narrower than a pixel) is merged
here, per pixel column and row, into one rectangle, so a view draws at most a few rectangles per pixel column.

The layout is computed for a tree of the whole run, one thread or a call's subtree
(:func:`call_subtree_tree`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT
from jbgui.model import replay_kernel as K

MERGED_KEY = -3


@numba.njit(cache=True, nogil=True)
def _place(parent, width, x):
    """Children side by side inside their parent, in node order (the order they first ran):
    one pass, since a parent's index is smaller than its children's."""
    n = len(parent)
    used = np.zeros(n, np.int64)
    roots_used = 0
    for i in range(n):
        p = parent[i]
        if p >= 0:
            x[i] = x[p] + used[p]
            used[p] += width[i]
        else:
            x[i] = roots_used
            roots_used += width[i]


@numba.njit(cache=True, nogil=True)
def _visible(parent, width, zoom, min_width):
    """What a zoom on ``zoom`` (-1: everything) shows, in one pass over the nodes that visits
    only the children of drawn frames: the drawn frames (at least ``min_width`` wide, inside the
    zoomed frame) and the narrower children of drawn frames (merged by the caller), with their x
    relative to the zoomed frame. A narrow frame's subtree is never visited, so the cost is a
    scan of the parent column plus what is drawn, not a layout of every node."""
    n = len(parent)
    drawn = np.zeros(n, np.bool_)
    rel = np.empty(n, np.int64)
    used = np.empty(n, np.int64)
    nodes = np.empty(n, np.int64)
    small = np.empty(n, np.int64)
    k = 0
    s = 0
    roots_used = 0
    start = 0
    if zoom >= 0:
        drawn[zoom] = True
        rel[zoom] = 0
        used[zoom] = 0
        nodes[0] = zoom
        k = 1
        start = zoom + 1
    for i in range(start, n):
        p = parent[i]
        if p >= 0:
            if not drawn[p]:
                continue
            xi = rel[p] + used[p]
            used[p] += width[i]
        elif zoom < 0:
            xi = roots_used
            roots_used += width[i]
        else:
            continue
        if width[i] >= min_width:
            drawn[i] = True
            rel[i] = xi
            used[i] = 0
            nodes[k] = i
            k += 1
        elif width[i] > 0 and p >= 0:
            rel[i] = xi
            small[s] = i
            s += 1
    out_nodes = nodes[:k].copy()
    out_small = small[:s].copy()
    x_nodes = np.empty(k, np.int64)
    for j in range(k):
        x_nodes[j] = rel[out_nodes[j]]
    x_small = np.empty(s, np.int64)
    for j in range(s):
        x_small[j] = rel[out_small[j]]
    return out_nodes, x_nodes, out_small, x_small


@dataclass
class FlameLayout:
    """Rectangles of a tree's nodes (index = node id). ``x`` of every node is computed only when
    asked (:meth:`rects` lays out just what is visible)."""

    tree: MT.Tree
    weight: str
    width: np.ndarray
    depth: np.ndarray
    total: int
    _x: np.ndarray | None = field(default=None, repr=False)

    @property
    def x(self) -> np.ndarray:
        """Left edge of every node (a pass over the whole tree, done once)."""
        if self._x is None:
            x = np.zeros(len(self.width), np.int64)
            if len(x):
                _place(self.tree.parent, self.width, x)
            self._x = x
        return self._x

    def frame(self, node: int) -> tuple[int, int, int]:
        """(x, width, depth) of a node."""
        return int(self.x[node]), int(self.width[node]), int(self.depth[node])

    def subtree(self, node: int) -> np.ndarray:
        """Nodes of ``node``'s subtree (itself first): those laid inside it, deeper."""
        if node < 0:
            return np.arange(len(self.x))
        x0, w, d = self.frame(node)
        inside = (self.x >= x0) & (self.x < x0 + w) & (self.depth > d) | (np.arange(len(self.x)) == node)
        # zero-width frames at the right edge sit outside every parent; they are never drawn
        return np.flatnonzero(inside & ((self.width > 0) | (np.arange(len(self.x)) == node)))

    def rects(self, zoom: int = -1, x0: float | None = None, x1: float | None = None,
              min_width: float = 0.0) -> dict[str, np.ndarray]:
        """What to draw when zoomed on ``zoom`` (-1: everything), for the visible span
        [x0, x1) in zoomed weight units, with the frames narrower than ``min_width`` (a pixel)
        under a drawn frame merged into one rectangle per pixel column and row, of key
        :data:`MERGED_KEY`. Returns arrays ``node`` (-1 for
        merged), ``key``, ``x``, ``width``, ``depth`` (depth and x relative to the zoomed frame)."""
        base_d = int(self.depth[zoom]) if zoom >= 0 else 0
        span = int(self.width[zoom]) if zoom >= 0 else self.total
        lo = x0 if x0 is not None else 0
        hi = min(x1 if x1 is not None else span, span)
        step = max(min_width, 1)
        nodes, out_x, small, sx = _visible(self.tree.parent, self.width, int(zoom), float(step))
        inside = (out_x < hi) & (out_x + self.width[nodes] > lo)
        nodes, out_x = nodes[inside], out_x[inside]
        out_w, out_d = self.width[nodes], self.depth[nodes] - base_d
        out_nodes = nodes
        if len(small):
            # one rectangle per pixel column and row: the narrow frames there, merged
            col = (sx // step).astype(np.int64)
            cols = int(span // step) + 2
            bucket = (self.depth[small] - base_d) * cols + col
            uniq, inv = np.unique(bucket, return_inverse=True)
            inv = inv.ravel()
            gx = np.full(len(uniq), np.iinfo(np.int64).max)
            np.minimum.at(gx, inv, sx)
            gw = np.bincount(inv, weights=self.width[small], minlength=len(uniq)).astype(np.int64)
            gw = np.maximum(np.minimum(gw, int(step)), 1)
            keep = (gx < hi) & (gx + gw > lo)
            out_nodes = np.concatenate([out_nodes, np.full(int(keep.sum()), -1)])
            out_x = np.concatenate([out_x, gx[keep]])
            out_w = np.concatenate([out_w, gw[keep]])
            out_d = np.concatenate([out_d, (uniq // cols)[keep]])
        keys = np.where(out_nodes >= 0, self.tree.key[np.maximum(out_nodes, 0)], MERGED_KEY)
        return {"node": out_nodes, "key": keys, "x": out_x, "width": out_w, "depth": out_d}

    def at(self, x: float, depth: int, zoom: int = -1) -> int:
        """The node under (x, depth) in the zoomed coordinates, or -1."""
        base_x = self.x[zoom] if zoom >= 0 else 0
        base_d = self.depth[zoom] if zoom >= 0 else 0
        ax, ad = x + base_x, depth + base_d
        hit = np.flatnonzero((self.depth == ad) & (self.x <= ax) & (self.x + self.width > ax))
        if zoom >= 0 and len(hit):
            zx, zw, _ = self.frame(zoom)
            hit = hit[(self.x[hit] >= zx) & (self.x[hit] < zx + zw)]
        return int(hit[0]) if len(hit) else -1


def layout(tree: MT.Tree, weight: str = "bytecodes") -> FlameLayout:
    """The layout of ``tree``: siblings left to right in the order they first ran (positions are
    computed for what is drawn, see :meth:`FlameLayout.rects`)."""
    width = np.ascontiguousarray(tree.inclusive(weight), np.int64)
    total = int(width[tree.roots].sum()) if len(tree) else 0
    return FlameLayout(tree, weight, width, tree.depth, total)


class _Slice:
    """Rows [lo, hi) of a call table as a call table (depths relative to ``base``)."""

    def __init__(self, calls, lo: int, hi: int, base: int):
        for name in ("method", "call_site", "flags", "incl_bytecodes", "incl_blocks", "first", "last"):
            setattr(self, name, np.asarray(calls.window(name, lo, hi)))
        self.depth = np.asarray(calls.window("depth", lo, hi)).astype(np.int64) - base
        self.rows = hi - lo

    def __len__(self) -> int:
        return self.rows


def call_subtree_tree(thread, row: int) -> MT.Tree:
    """The merged tree of one call's subtree (the call as the only root)."""
    calls = thread.calls
    lo, hi = int(row), calls.at("end", int(row))
    sl = _Slice(calls, lo, hi, calls.at("depth", int(row)))
    exc = thread.exceptions
    if len(exc):
        exc = exc.copy()
        for f in ("throw_row", "catch_row"):
            inside = (exc[f] >= lo) & (exc[f] < hi)
            exc[f] = np.where(inside, exc[f] - lo, -1)
    return MT.Tree.from_cct(CCT.compute(sl, K.F_NATIVE | K.F_UNTRACED, thread.axis, exc))

