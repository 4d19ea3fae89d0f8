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
from dataclasses import dataclass

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


def _class_of_key(statics, keys: np.ndarray) -> np.ndarray:
    """Class id per key (-1 for native/untraced keys)."""
    out = np.full(len(keys), -1, np.int64)
    ok = (keys > 0) & (keys < min(CCT.SYNTHETIC_KEY, len(statics.m_class)))
    out[ok] = np.asarray(statics.m_class, np.int64)[keys[ok]]
    return out


def compute(tree: MT.Tree, statics, group: str = "method") -> MethodsTable:
    """The table of ``tree`` grouped by method, class or package."""
    if group not in GROUPS:
        raise ValueError(f"group must be one of {', '.join(GROUPS)}")
    keys = tree.key
    if group == "method":
        uniq, kinv = np.unique(keys, return_inverse=True)
        # native/untraced calls from different call sites to one target share a name and a row
        labels = np.array([MT.key_name(statics, k) for k in uniq], dtype=object)
        names_u, first, linv = np.unique(labels, return_index=True, return_inverse=True)
        inv = linv.ravel()[kinv.ravel()]
        names = [str(n) for n in names_u]
        row_keys = uniq[first].astype(np.int64)
    else:
        cls = _class_of_key(statics, keys)
        ucls, cinv = np.unique(cls, return_inverse=True)
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
        inv = linv.ravel()[cinv.ravel()]
        names = [str(n) for n in names_u]
        row_keys = np.full(len(names), -1, np.int64)
    inv = inv.ravel().astype(np.int64)
    n = len(names)
    outer = tree.outermost(inv)

    def total(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        if mask is not None:
            return np.bincount(inv[mask], weights=values[mask], minlength=n).astype(np.int64)
        return np.bincount(inv, weights=values, minlength=n).astype(np.int64)

    cols = {"calls": total(tree.calls)}
    for weight in ("bytecodes", "blocks", "time"):
        cols[f"self_{weight}"] = total(tree.own(weight))
        cols[f"total_{weight}"] = total(tree.inclusive(weight), outer)
    cols["thrown"] = total(tree.thrown)
    cols["caught"] = total(tree.caught)
    run = {w: tree.total(w) for w in ("bytecodes", "blocks", "time", "calls")}
    return MethodsTable(group, names, row_keys, cols, run)
