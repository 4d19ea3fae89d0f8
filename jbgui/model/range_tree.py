"""The merged calling-context tree of a range selected in the timeline: "where did the work of
this stretch of the run go", as a flame graph or tree.

Per thread the range becomes events ``[e0, e1)`` (:func:`range_stats.event_range`) and the calls
starting in it one slice of rows (``searchsorted`` on ``first``). The tree holds the calls that ran
*entirely* inside the range (first and last event in it), each whole. A call running across an
edge is not in the tree (the trace does not say which of its own blocks ran inside without
re-reading the events, see :mod:`jbgui.model.range_stats`); its callees that ran inside are, as
roots. Among the rows starting in the range the only ones not contained are the calls running
across its end: the chain of callers of the last one (at most the stack's depth), so the
contained calls are the slice less those few rows, and the tree is built by the same kernel as
a thread's tree (:func:`cct.compute`) over them, with depths taken relative to each root. No
Python loop per call; threads' trees are merged with :meth:`Tree.remerge`.
"""

from __future__ import annotations

import numpy as np

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT
from jbgui.model import replay_kernel as K
from jbgui.model.analysis import Analysis
from jbgui.model.range_stats import _edge_rows, event_range

_COLUMNS = ("method", "call_site", "flags", "incl_bytecodes", "incl_blocks", "first", "last")


class _Rows:
    """Chosen rows of a call table as a call table (what :func:`cct.compute` reads)."""

    def __init__(self, columns: dict[str, np.ndarray], depth: np.ndarray):
        for name, values in columns.items():
            setattr(self, name, values)
        self.depth = depth

    def __len__(self) -> int:
        return len(self.depth)


def thread_range_tree(thread, e0: int, e1: int) -> MT.Tree | None:
    """The merged tree of ``thread``'s calls contained in events ``[e0, e1)``, or None when none is."""
    calls = thread.calls
    if e1 <= e0 or not len(calls):
        return None
    r0, r1 = (int(x) for x in calls.rows_starting_before([e0, e1]))
    if r1 <= r0:
        return None
    # rows starting in the range but ending after it: the callers chain of the last one
    crossing = np.array([r for r in _edge_rows(thread, r1 - 1, e1) if r >= r0], np.int64)
    local = crossing - r0

    def take(name: str) -> np.ndarray:
        # the range's rows only (the blocks that hold them), not the thread's column
        values = np.asarray(calls.window(name, r0, r1))
        return np.delete(values, local) if len(local) else values

    columns = {name: take(name) for name in _COLUMNS}
    parent = take("parent").astype(np.int64)
    depth = take("depth").astype(np.int64)
    n = len(depth)
    if n == 0:
        return None
    # a root: its caller started before the range or runs across its end
    is_root = (parent < r0) | np.isin(parent, crossing)
    root_of = np.maximum.accumulate(np.where(is_root, np.arange(n), 0))
    depth -= depth[root_of]
    exc = thread.exceptions
    if len(exc):
        exc = exc.copy()
        for f in ("throw_row", "catch_row"):
            rows = np.asarray(exc[f], np.int64)
            inside = (rows >= r0) & (rows < r1) & ~np.isin(rows, crossing)
            shifted = rows - r0 - np.searchsorted(crossing, rows)
            exc[f] = np.where(inside, shifted, -1)
    return MT.Tree.from_cct(CCT.compute(_Rows(columns, depth), K.F_NATIVE | K.F_UNTRACED, thread.axis, exc))


def range_tree(analysis: Analysis, start: float, stop: float, use_clock: bool = True,
               threads: list[int] | None = None) -> MT.Tree:
    """The merged tree of the calls that ran entirely inside ``[start, stop)`` of the timeline's
    axis (nanoseconds, or events when ``use_clock`` is false or the trace has no clock), over
    ``threads`` (indices; every thread when None), identical paths of different threads merged."""
    trees = []
    for thread in analysis.threads:
        if threads is not None and thread.index not in threads:
            continue
        e0, e1 = event_range(thread, start, stop, use_clock)
        tree = thread_range_tree(thread, e0, e1)
        if tree is not None and len(tree):
            trees.append(tree)
    if len(trees) <= 1:
        return trees[0] if trees else MT.Tree.concat([])
    return MT.Tree.concat(trees).remerge()
