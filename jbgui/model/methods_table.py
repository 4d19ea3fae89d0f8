"""The methods table: every method (or class, or package) of a merged tree with its calls, own
and total bytecodes, blocks and time, and exceptions thrown and caught — honouring the scope and
transforms the tree was built with.

Own weights are summed over the group's nodes; totals count recursion once (the inclusive weight
of the group's outermost nodes only), so a recursive method's total is not its own inclusive
weight times its depth, and a class whose methods call each other counts each stack once.
Sums are vectorised over the tree's nodes (``np.bincount``), whatever the number of calls.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

import numba
import numpy as np

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT

GROUPS = ("method", "class", "package")
NATIVE_GROUP = "(native/untraced)"
# Columns of a table, in the order a view shows them.
COLUMNS = ("calls", "self_bytecodes", "total_bytecodes", "self_blocks", "total_blocks", "self_time", "total_time",
           "thrown", "caught")
SORTS = {"calls": "calls", "self": "self_bytecodes", "total": "total_bytecodes"}


@dataclass
class MethodsTable:
    """One row per group: ``names[i]``, ``keys[i]`` (a method key for the method grouping —
    for native/untraced calls, one of the call sites' keys — else -1) and one int64 array per column of :data:`COLUMNS`; ``run`` holds the tree's totals
    (bytecodes, blocks, time, calls) for shares."""

    group: str
    names: list[str]
    keys: np.ndarray
    columns: dict[str, np.ndarray]
    run: dict[str, int]

    def __len__(self) -> int:
        return len(self.names)

    def order(self, column: str = "self_bytecodes", descending: bool = True) -> np.ndarray:
        """Row indices sorted by ``column`` (ties by name)."""
        if column == "name":
            idx = np.argsort(np.array(self.names, dtype=object), kind="stable")
            return idx[::-1] if descending else idx
        values = self.columns[column]
        by_name = np.argsort(np.array(self.names, dtype=object), kind="stable")
        idx = by_name[np.argsort(-values[by_name] if descending else values[by_name], kind="stable")]
        return idx

    def matching(self, text: str, regex: bool = False) -> np.ndarray:
        """Rows whose name contains ``text`` (case-insensitive), or matches it as a regular
        expression; raises ``re.error`` for a bad expression."""
        if not text:
            return np.arange(len(self.names))
        if regex:
            pattern = re.compile(text, re.IGNORECASE)
            return np.array([i for i, n in enumerate(self.names) if pattern.search(n)], np.int64)
        low = text.lower()
        return np.array([i for i, n in enumerate(self.names) if low in n.lower()], np.int64)

    def row(self, i: int) -> dict:
        return {"method": self.names[i], **{c: int(self.columns[c][i]) for c in COLUMNS}}

    def share(self, column: str, i: int) -> float:
        """The row's ``column`` as a fraction of the run's total of that weight."""
        weight = column.split("_", 1)[-1] if column != "calls" else "calls"
        total = self.run.get(weight, 0)
        return float(self.columns[column][i]) / total if total else 0.0


@numba.njit(cache=True, nogil=True)
def _table_sums(parent, key, row_of_key, shared, same_key, outer, calls, incl, counts, n_rows, near):
    """Per row: calls, own bytecodes/blocks/time, total (outermost nodes') bytecodes/blocks/time,
    thrown, caught — one pass over the nodes, exact in int64. A node's row is
    ``row_of_key[key]``; its own weight is its inclusive weight less its children's, so each
    node's inclusive weight is added to its row and taken from its parent's.

    Outermost (no ancestor in the same row): ``outer`` when given (non-empty), else for rows of
    one key the node's nearest same-key ancestor (which the tree keeps) tells, and for rows shared
    by several keys (native calls to one target from several sites) the chain of each node's
    nearest ancestors in a shared row (``near``, filled in node order; untouched when no row is
    shared) is walked."""
    out = np.zeros((n_rows, 9), np.int64)
    n = len(parent)
    given = len(outer) > 0
    any_shared = False
    for r in range(len(shared)):
        if shared[r]:
            any_shared = True
    for i in range(n):
        r = row_of_key[key[i]]
        p = parent[i]
        rp = -1
        if p >= 0:
            rp = row_of_key[key[p]]
        if given:
            o = outer[i]
        elif any_shared:
            if p < 0:
                near[i] = -1
            elif shared[rp]:
                near[i] = p
            else:
                near[i] = near[p]
            if shared[r]:
                j = near[i]
                o = True
                while j >= 0:
                    if row_of_key[key[j]] == r:
                        o = False
                        break
                    j = near[j]
            else:
                o = same_key[i] < 0
        else:
            o = same_key[i] < 0
        out[r, 0] += calls[i]
        for c in range(3):
            v = incl[i, c]
            out[r, 1 + c] += v
            if o:
                out[r, 4 + c] += v
            if p >= 0:
                out[rp, 1 + c] -= v
        out[r, 7] += counts[i, 0]
        out[r, 8] += counts[i, 1]
    return out


@numba.njit(cache=True, nogil=True)
def _outermost_rows_in(parent, same_key, row, shared, out, near):
    """Per node: no ancestor in the same row, for rows that are one key each (``shared[row]``
    false: the node's nearest same-key ancestor, which the tree keeps, tells) and rows shared by
    several keys (native calls to one target from several sites: a node-order pass that keeps
    each node's nearest ancestor in a shared row, and walks that short chain)."""
    n = len(parent)
    for i in range(n):
        p = parent[i]
        if p < 0:
            near[i] = -1
        elif shared[row[p]]:
            near[i] = p
        else:
            near[i] = near[p]
        r = row[i]
        if shared[r]:
            j = near[i]
            o = True
            while j >= 0:
                if row[j] == r:
                    o = False
                    break
                j = near[j]
            out[i] = o
        else:
            out[i] = same_key[i] < 0


def _outermost_rows(parent, same_key, row, shared) -> np.ndarray:
    """See :func:`_outermost_rows_in` (arrays allocated by numpy: huge pages)."""
    out = np.empty(len(parent), np.bool_)
    near = np.empty(len(parent), np.int32 if len(parent) < 2**31 - 1 else np.int64)
    _outermost_rows_in(parent, same_key, row, shared, out, near)
    return out


def _class_of_key(statics, keys: np.ndarray) -> np.ndarray:
    """Class id per key (-1 for native/untraced keys)."""
    out = np.full(len(keys), -1, np.int64)
    ok = (keys > 0) & (keys < min(CCT.SYNTHETIC_KEY, len(statics.m_class)))
    out[ok] = np.asarray(statics.m_class, np.int64)[keys[ok]]
    return out


def _rows_of_keys(statics, keys: np.ndarray, group: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(row names, row keys, row per key of ``keys``) for a grouping: what a table's rows are
    depends on the keys alone, not on the weights, so it is kept per key space (the trees
    derived from one tree by transforms share its keys)."""
    if group == "method":
        # native/untraced calls from different call sites to one target share a name and a row
        labels = np.array([MT.key_name(statics, k) for k in keys], dtype=object)
        names_u, first, linv = np.unique(labels, return_index=True, return_inverse=True)
        return [str(n) for n in names_u], keys[first].astype(np.int64), linv.ravel()
    kcls = _class_of_key(statics, keys)
    ucls, ucinv = np.unique(kcls, return_inverse=True)
    labels = []
    for c in ucls:
        if c < 0:
            labels.append(NATIVE_GROUP)
        else:
            name = statics.c_name[int(c)] if int(c) < len(statics.c_name) else ""
            if group == "class":
                labels.append(name.replace("/", ".") or f"<class {c}>")
            else:
                labels.append(name.rpartition("/")[0].replace("/", ".") or "(default package)")
    names_u, linv = np.unique(np.array(labels, dtype=object), return_inverse=True)
    return [str(n) for n in names_u], np.full(len(names_u), -1, np.int64), linv.ravel()[ucinv.ravel()]


_ROWS_KEPT = 8
_rows_kept: list[tuple] = []     # (keys, statics, group, rows): the last few, newest last
_rows_lock = threading.Lock()


def _rows(statics, keys: np.ndarray, group: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    with _rows_lock:
        for entry in _rows_kept:
            if entry[0] is keys and entry[1] is statics and entry[2] == group:
                return entry[3]
    rows = _rows_of_keys(statics, keys, group)
    with _rows_lock:
        _rows_kept.append((keys, statics, group, rows))
        del _rows_kept[:-_ROWS_KEPT]
    return rows


def compute(tree: MT.Tree, statics, group: str = "method") -> MethodsTable:
    """The table of ``tree`` grouped by method, class or package."""
    if group not in GROUPS:
        raise ValueError(f"group must be one of {', '.join(GROUPS)}")
    keys, dense = tree._key_space()    # every key value of the tree has a dense index
    names, row_keys, row_of_dense = _rows(statics, keys, group)
    names, row_keys = list(names), row_keys.copy()      # kept for the next table: not shared
    n = len(names)
    # a row per key value (keys are small integers): the pass maps each node's key itself, with
    # no per-node array of rows
    row_of_key = np.zeros(len(dense), np.int32)
    row_of_key[keys] = row_of_dense
    nodes = len(tree)
    idx = np.int32 if nodes < 2**31 - 1 else np.int64
    if group == "method":
        # a row is one key, except native targets called from several sites: the nearest
        # same-key ancestors (kept by the tree) decide the rest without a depth-first walk
        shared = np.bincount(row_of_dense, minlength=n) > 1
        outer = np.zeros(0, np.bool_)
        near = np.empty(nodes if shared.any() else 0, idx)
        same = tree.same_key_ancestor
    else:
        shared = np.zeros(n, np.bool_)
        outer = tree.outermost(row_of_key[tree.key])
        near = np.empty(0, idx)
        same = np.zeros(0, idx)
    sums = _table_sums(tree.parent, tree.key, row_of_key, shared, same, outer, tree.calls, tree.incl,
                       tree.own_counts, n, near)
    cols = {"calls": sums[:, 0]}
    for j, weight in enumerate(("bytecodes", "blocks", "time")):
        cols[f"self_{weight}"] = sums[:, 1 + j]
        cols[f"total_{weight}"] = sums[:, 4 + j]
    cols["thrown"] = sums[:, 7]
    cols["caught"] = sums[:, 8]
    # rows of keys the (transformed) tree no longer has: every node has at least one call
    present = cols["calls"] > 0
    if not present.all():
        keep = np.flatnonzero(present)
        names = [names[i] for i in keep]
        row_keys = row_keys[keep]
        cols = {k: v[keep] for k, v in cols.items()}
    run = {w: tree.total(w) for w in ("bytecodes", "blocks", "time", "calls")}
    return MethodsTable(group, names, row_keys, cols, run)


def run_table(analysis, tree=None) -> MethodsTable:
    """The whole run's untransformed methods table, cached beside the replay (computed from
    ``tree()``, or the run's merged tree, the first time)."""
    def build() -> dict[str, np.ndarray]:
        t = compute(tree() if tree is not None else MT.run_tree(analysis), analysis.statics)
        return {"names": np.array(t.names, dtype=str), "keys": t.keys,
                "columns": np.stack([t.columns[c] for c in COLUMNS], 1),
                "run": np.array([t.run[w] for w in _RUN])}
    a = MT.run_methods_table_arrays(analysis, build)
    run = a.get("run")
    if run is None:
        run = np.array([0] * len(_RUN))
    return MethodsTable("method", [str(n) for n in a["names"]], np.asarray(a["keys"], np.int64),
                        {c: np.asarray(a["columns"][:, i], np.int64) for i, c in enumerate(COLUMNS)},
                        {w: int(v) for w, v in zip(_RUN, run)})


_RUN = ("bytecodes", "blocks", "time", "calls")


def for_view(view, transforms=(), thread: int | None = None, group: str = "method") -> MethodsTable:
    """The table an aggregated view shows: the cached whole-run table when nothing is
    transformed, else computed from the transformed tree."""
    if not transforms and thread is None and group == "method":
        return run_table(view.analysis, view.base)
    return compute(view.tree(tuple(transforms), thread), view.analysis.statics, group)
