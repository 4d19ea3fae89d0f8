"""The calling-context tree of a thread (BMW's CCT): one node per distinct path of calls from the
thread's root, with calls, inclusive bytecodes, blocks and time, and the exceptions thrown and
caught in that context.

It is computed from the replayed call table when first asked for (``jbtrace stats``, the
aggregated views, collapsed stacks), not during replay: building it costs a hash lookup per call,
which was half of the replay time of a javac trace, and most uses of a replay never need it. The
result is kept beside the thread's call columns.

The tree is exact: every distinct path gets its node, whatever the trace (an earlier version
capped it at 2^22 nodes and counted the rest in one node, which made per-context sums wrong).
Memory is proportional to the number of distinct contexts, which a real program keeps far below
its number of calls (javac: about one context per hundred calls); the calls themselves are read
a block of rows at a time from the analysis store.

Nodes are numbered in the order their first call starts, so a node's parent always has a smaller
number: a pass in node order is a preorder-compatible pass (parents before children).
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np

from jbgui.model import clock_times, derived
from jbgui.model import replay_kernel as K
from jbgui.model.replay import Cancelled

# Keys: a method id, or SYNTHETIC_KEY + call site for a call into native or untraced code.
SYNTHETIC_KEY = 1 << 20
# Kept for readers of trees cached by older versions, which capped the tree and counted the
# remaining contexts in one node with this key; exact trees never contain it.
OVERFLOW_KEY = -2
CHUNK_ROWS = 1 << 20
_EMPTY = K.EMPTY
# One file, one writer (:func:`for_thread`), every field. "-v2": the first version had two writers
# with different fields, and a tree kept by one without the exception counts was read back by the
# other as if it had them; such files are left unread.
# "-v3": stored with each parent as its distance back (small numbers, where node numbers are not)
# and without depths (one pass over the parents gives them): 40% smaller on javac's trace.
_FILE = "cct-v3.npz"
_OLD_FILES = ("cct.npz", "cct-v2.npz")
FIELDS = ("parent", "key", "calls", "incl_bytecodes", "incl_blocks", "flags")
# Fields that need the thread (its clock and exceptions), not only the call columns.
EXTRA_FIELDS = ("depth", "incl_time", "thrown", "caught")

# Node table columns.
_PARENT, _KEY, _CALLS, _INCL_BC, _INCL_BLOCKS, _FLAGS, _MEMO_KEY, _MEMO_NODE, _DEPTH, _TIME, _THROWN, _CAUGHT = \
    range(12)
_WIDTH = 12


@numba.njit(cache=True, nogil=True)
def _node(sc, table_k, table_v, nodes, parent, key, depth):
    if parent >= 0 and nodes[parent, _MEMO_KEY] == key:
        return nodes[parent, _MEMO_NODE]
    packed = ((parent + 1) << 32) | key
    slot = K._slot(table_k, packed)
    if table_k[slot] != _EMPTY:
        node = table_v[slot]
    else:
        node = sc[0]
        sc[0] = node + 1
        table_k[slot] = packed
        table_v[slot] = node
        nodes[node, _PARENT] = parent
        nodes[node, _KEY] = key
        nodes[node, _DEPTH] = depth
        nodes[node, _MEMO_KEY] = -1
    if parent >= 0:
        # each node remembers its last child: repeated calls skip the hash table
        nodes[parent, _MEMO_KEY] = key
        nodes[parent, _MEMO_NODE] = node
    return node


@numba.njit(cache=True, nogil=True)
def _add_rows(sc, table_k, table_v, nodes, at_depth, lo, method, site, flags, depth, incl_bc, incl_blocks,
              incl_time, synthetic_mask, exc_rows, exc_thrown, exc_caught):
    """Add a chunk of rows (preorder, the first being row ``lo``) to the tree. ``at_depth[d]`` is
    the node of the latest row at depth d: a row's parent is the latest row one level up.
    ``exc_rows`` (sorted) are rows of the chunk that threw or caught exceptions, with counts."""
    e = 0
    for r in range(len(method)):
        d = depth[r]
        parent = at_depth[d - 1] if d > 0 else -1
        if flags[r] & synthetic_mask:
            key = SYNTHETIC_KEY + site[r]
        else:
            key = method[r]
        node = _node(sc, table_k, table_v, nodes, parent, key, d)
        at_depth[d] = node
        nodes[node, _CALLS] += 1
        nodes[node, _INCL_BC] += incl_bc[r]
        nodes[node, _INCL_BLOCKS] += incl_blocks[r]
        nodes[node, _TIME] += incl_time[r]
        nodes[node, _FLAGS] |= flags[r]
        while e < len(exc_rows) and exc_rows[e] == lo + r:
            nodes[node, _THROWN] += exc_thrown[e]
            nodes[node, _CAUGHT] += exc_caught[e]
            e += 1


def _exception_counts(exceptions, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that threw or caught an exception (sorted) with how many they threw and caught."""
    if exceptions is None or not len(exceptions):
        z = np.zeros(0, np.int64)
        return z, z, z
    throw = np.asarray(exceptions["throw_row"], np.int64)
    catch = np.asarray(exceptions["catch_row"], np.int64)
    throw = throw[(throw >= 0) & (throw < n)]
    catch = catch[(catch >= 0) & (catch < n)]
    rows = np.union1d(throw, catch)
    thrown = np.zeros(len(rows), np.int64)
    caught = np.zeros(len(rows), np.int64)
    np.add.at(thrown, np.searchsorted(rows, throw), 1)
    np.add.at(caught, np.searchsorted(rows, catch), 1)
    return rows, thrown, caught


def _read(calls, name: str, lo: int, hi: int, ref: np.ndarray | None = None) -> np.ndarray:
    """Rows ``[lo, hi)`` of a column: by blocks from a call table, or a slice of the arrays of the
    row selections the flame graph and range statistics pass. ``ref``: the same rows of the
    column ``name`` is stored against, read already (see :data:`jbgui.model.store.REFERENCE`)."""
    window = getattr(calls, "window", None)
    # a pass over the thread: each block once, not kept in the call table's cache
    return window(name, lo, hi, keep=False, ref=ref) if window is not None else \
        np.asarray(getattr(calls, name))[lo:hi]


def _chunks(calls) -> list[tuple[int, int]]:
    """Row ranges read together: the store's blocks (each decoded on its own), or pieces of
    :data:`CHUNK_ROWS` of columns already in memory."""
    n = len(calls)
    stored = getattr(calls, "_stored", None)
    if stored is not None and not calls.is_decoded("depth"):     # a CallTable of the store
        starts = np.asarray(stored.starts, np.int64).tolist()
        return [(lo, hi) for lo, hi in zip(starts[:-1], starts[1:]) if hi > lo]
    return [(lo, min(n, lo + CHUNK_ROWS)) for lo in range(0, n, CHUNK_ROWS)]


def compute(calls, synthetic_mask: int, times=None, exceptions=None, progress=None,
            cancelled=None, clock: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """The exact tree of one thread's call table. ``times(events)`` gives nanoseconds of event
    indices (the thread's clock; without it, time is counted in events); ``exceptions`` is the
    thread's exception table. Between chunks of calls, ``progress(rows done, rows)`` is told
    and ``cancelled()`` asked (true: :class:`Cancelled` is raised). ``clock``: the samples
    ``times`` interpolates (event indices, nanoseconds), for a whole thread's table, whose rows
    are in start order: the same times, walked block by block (:mod:`jbgui.model.clock_times`).

    The calls are read a block of rows at a time (:meth:`jbgui.model.analysis.CallTable.window`):
    memory holds the tree and one block, never the thread's columns."""
    n = len(calls)
    sc = np.zeros(1, np.int64)
    nodes = np.zeros((1 << 12, _WIDTH), np.int64)
    table_k = np.full(1 << 13, _EMPTY, np.int64)
    table_v = np.zeros(1 << 13, np.int64)
    at_depth = np.full(64, -1, np.int64)
    exc_rows, exc_thrown, exc_caught = _exception_counts(exceptions, n)
    for lo, hi in _chunks(calls):
        if cancelled is not None and cancelled():
            raise Cancelled()
        if progress is not None:
            progress(lo, n)
        # at most one new node per row
        if int(sc[0]) + (hi - lo) + 1 > len(nodes):
            grown = np.zeros((max(int(sc[0]) + (hi - lo) + 1, 2 * len(nodes)), _WIDTH), np.int64)
            grown[:len(nodes)] = nodes
            nodes = grown
        while 2 * (int(sc[0]) + (hi - lo)) > len(table_k):
            table_k, table_v = K.rehash(table_k, table_v, 2 * len(table_k))
        depth = np.ascontiguousarray(_read(calls, "depth", lo, hi))
        deepest = int(depth.max()) + 2 if len(depth) else 2
        if deepest > len(at_depth):
            grown_at = np.full(max(deepest, 2 * len(at_depth)), -1, np.int64)
            grown_at[:len(at_depth)] = at_depth
            at_depth = grown_at
        first = _read(calls, "first", lo, hi)
        last = _read(calls, "last", lo, hi, ref=first)
        if clock is not None:
            t_first, t_last = clock_times.block_times(first, last, clock[0], clock[1], plus=0.0)
            spans = np.rint(t_last - t_first).astype(np.int64)
        elif times is not None:
            spans = np.rint(times(last) - times(first)).astype(np.int64)
        else:
            spans = (last - first).astype(np.int64)
        np.maximum(spans, 0, out=spans)
        e0, e1 = np.searchsorted(exc_rows, [lo, hi])
        # the columns as stored (no conversion: numba compiles the kernel for their dtypes)
        site = np.ascontiguousarray(_read(calls, "call_site", lo, hi))
        _add_rows(sc, table_k, table_v, nodes, at_depth, lo, np.ascontiguousarray(_read(calls, "method", lo, hi)),
                  site, np.ascontiguousarray(_read(calls, "flags", lo, hi, ref=site)), depth,
                  *(np.ascontiguousarray(_read(calls, name, lo, hi)) for name in ("incl_bytecodes", "incl_blocks")),
                  spans, synthetic_mask, exc_rows[e0:e1], exc_thrown[e0:e1], exc_caught[e0:e1])
    used = int(sc[0])
    cols = dict(zip(FIELDS + EXTRA_FIELDS, (_PARENT, _KEY, _CALLS, _INCL_BC, _INCL_BLOCKS, _FLAGS, _DEPTH, _TIME,
                                            _THROWN, _CAUGHT)))
    by_column = np.ascontiguousarray(nodes[:used].T)   # one transposing copy, then rows are columns
    return {name: by_column[col] for name, col in cols.items()}


def is_stored(directory: Path | None) -> bool:
    """Whether a thread's tree is kept in ``directory`` (its call columns' directory)."""
    return derived.is_stored(directory, _FILE)


def forget(directory: Path | None) -> None:
    """Drop the tree kept in ``directory`` (a thread's call columns' directory)."""
    derived.forget(directory, _FILE)


def for_thread(thread, progress=None, cancelled=None) -> dict[str, np.ndarray]:
    """The tree of a :class:`jbgui.model.analysis.ThreadReplay`: :data:`FIELDS` and, with the
    thread's clock and exceptions, :data:`EXTRA_FIELDS`; and ``capped`` (a one-element bool array,
    always False: the tree is exact). Computed once and kept beside the call columns; the only
    writer of that file."""
    calls = thread.calls

    def build() -> dict[str, np.ndarray]:
        clock = np.asarray(thread.clock, np.float64)
        fields = compute(calls, K.F_NATIVE | K.F_UNTRACED, thread.times, thread.exceptions, progress, cancelled,
                         clock=(clock[:, 0], clock[:, 1]) if len(clock) >= 2 else None)
        stored = {name: values for name, values in fields.items() if name not in ("parent", "depth")}
        stored["parent_gap"] = np.arange(len(fields["parent"]), dtype=np.int64) - fields["parent"]
        return {**stored, "capped": np.array([False])}
    if not len(calls):
        return {name: np.zeros(0, np.int64) for name in FIELDS + EXTRA_FIELDS} | {"capped": np.array([False])}
    for old in _OLD_FILES:      # read no more: not left to fill the disk
        derived.forget(calls.directory, old)
    stored = derived.load_or_compute(calls.directory, _FILE, _STORED, build, _valid)
    tree = {name: values for name, values in stored.items() if name != "parent_gap"}
    tree["parent"] = np.arange(len(stored["parent_gap"]), dtype=np.int64) - stored["parent_gap"]
    tree["depth"] = np.empty(len(tree["parent"]), np.int64)
    _depths(tree["parent"], tree["depth"])
    return tree


_STORED = ("parent_gap", *(n for n in FIELDS + EXTRA_FIELDS if n not in ("parent", "depth")), "capped")


def _valid(arrays: dict[str, np.ndarray]) -> bool:
    """A tree cached by a version that capped it is computed again, and so is one whose parents
    are not earlier nodes (damage: the depths are computed through them)."""
    gap = np.asarray(arrays["parent_gap"])
    n = len(gap)
    if any(len(arrays[name]) != n for name in _STORED if name != "capped"):
        return False
    if n and (gap.min() < 1 or (gap > np.arange(1, n + 1)).any()):
        return False
    return not bool(np.asarray(arrays["capped"]).any())


@numba.njit(cache=True, nogil=True)
def _depths(parent, out):  # pragma: no cover - numba
    """Each node's depth, parents first (a parent is always an earlier node)."""
    for i in range(len(parent)):
        p = parent[i]
        out[i] = 0 if p < 0 else out[p] + 1
