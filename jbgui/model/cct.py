"""The calling-context tree of a thread (BMW's CCT): one node per distinct path of calls from the
thread's root, with calls and inclusive bytecodes and blocks.

It is computed from the replayed call table when first asked for (``jbtrace stats``, collapsed
stacks), not during replay: building it costs a hash lookup per call, which was half of the replay
time of a javac trace, and most uses of a replay never need it. The result is kept beside the
thread's call columns.

The tree is capped at :data:`NODE_LIMIT` nodes so that memory stays bounded whatever the trace;
past the cap, every new context is counted in one node with key :data:`OVERFLOW_KEY` (and the
result says so).
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np

from jbgui.model import derived
from jbgui.model import replay_kernel as K

# Keys: a method id, or SYNTHETIC_KEY + call site for a call into native or untraced code.
SYNTHETIC_KEY = 1 << 20
OVERFLOW_KEY = -2
NODE_LIMIT = 1 << 22
CHUNK_ROWS = 1 << 20
_EMPTY = K.EMPTY
_FILE = "cct.npz"
FIELDS = ("parent", "key", "calls", "incl_bytecodes", "incl_blocks", "flags")

# Node table columns.
_PARENT, _KEY, _CALLS, _INCL_BC, _INCL_BLOCKS, _FLAGS, _MEMO_KEY, _MEMO_NODE = range(8)
# Scalars.
_N, _USED, _OVERFLOW = range(3)


@numba.njit(cache=True)
def _node(sc, table_k, table_v, nodes, parent, key, limit):
    if parent >= 0 and nodes[parent, _MEMO_KEY] == key:
        return nodes[parent, _MEMO_NODE]
    packed = ((parent + 1) << 32) | key
    slot = K._slot(table_k, packed)
    if table_k[slot] != _EMPTY:
        node = table_v[slot]
    elif sc[_N] >= limit:
        node = sc[_OVERFLOW] - 1
        if node < 0:
            node = sc[_N]
            sc[_N] = node + 1
            sc[_OVERFLOW] = node + 1
            nodes[node, _PARENT] = -1
            nodes[node, _KEY] = OVERFLOW_KEY
    else:
        node = sc[_N]
        sc[_N] = node + 1
        sc[_USED] += 1
        table_k[slot] = packed
        table_v[slot] = node
        nodes[node, _PARENT] = parent
        nodes[node, _KEY] = key
    if parent >= 0:
        # each node remembers its last child: repeated calls skip the hash table
        nodes[parent, _MEMO_KEY] = key
        nodes[parent, _MEMO_NODE] = node
    return node


@numba.njit(cache=True)
def _add_rows(sc, table_k, table_v, nodes, at_depth, method, site, flags, depth, incl_bc, incl_blocks, limit,
              synthetic_mask):
    """Add a chunk of rows (preorder) to the tree. ``at_depth[d]`` is the node of the latest row at
    depth d: a row's parent is the latest row one level up."""
    for r in range(len(method)):
        d = depth[r]
        parent = at_depth[d - 1] if d > 0 else -1
        if flags[r] & synthetic_mask:
            key = SYNTHETIC_KEY + site[r]
        else:
            key = method[r]
        node = _node(sc, table_k, table_v, nodes, parent, key, limit)
        at_depth[d] = node
        nodes[node, _CALLS] += 1
        nodes[node, _INCL_BC] += incl_bc[r]
        nodes[node, _INCL_BLOCKS] += incl_blocks[r]
        nodes[node, _FLAGS] |= flags[r]


def compute(calls, synthetic_mask: int, limit: int = NODE_LIMIT) -> tuple[dict[str, np.ndarray], bool]:
    """The tree of one thread's call table, in bounded memory; returns (fields, capped)."""
    n = len(calls)
    sc = np.zeros(3, np.int64)
    cap = 1 << 12
    nodes = np.zeros((cap, 8), np.int64)
    table_k = np.full(1 << 13, _EMPTY, np.int64)
    table_v = np.zeros(1 << 13, np.int64)
    max_depth = int(np.asarray(calls.depth).max()) + 2 if n else 2
    at_depth = np.full(max_depth, -1, np.int64)
    columns = [np.asarray(getattr(calls, name)) for name in
               ("method", "call_site", "flags", "depth", "incl_bytecodes", "incl_blocks")]
    for lo in range(0, n, CHUNK_ROWS):
        hi = min(n, lo + CHUNK_ROWS)
        need = min(int(sc[_N]) + (hi - lo) + 1, limit + 1)
        if need > len(nodes):
            grown = np.zeros((max(need, 2 * len(nodes)), 8), np.int64)
            grown[:len(nodes)] = nodes
            nodes = grown
        while 2 * min(int(sc[_USED]) + (hi - lo), limit) > len(table_k):
            table_k, table_v = K.rehash(table_k, table_v, 2 * len(table_k))
        _add_rows(sc, table_k, table_v, nodes, at_depth,
                  *(np.ascontiguousarray(c[lo:hi], np.int64) for c in columns), limit, synthetic_mask)
    used = int(sc[_N])
    out = {name: nodes[:used, col].copy() for name, col in zip(
        FIELDS, (_PARENT, _KEY, _CALLS, _INCL_BC, _INCL_BLOCKS, _FLAGS))}
    return out, bool(sc[_OVERFLOW])


def load_or_compute(calls, directory: Path | None, synthetic_mask: int) -> dict[str, np.ndarray]:
    """The thread's tree from ``directory/cct.npz``, computed and stored there first if needed.
    The dict also holds ``capped`` (a one-element bool array)."""
    def build() -> dict[str, np.ndarray]:
        fields, capped = compute(calls, synthetic_mask)
        return {**fields, "capped": np.array([capped])}
    return derived.load_or_compute(directory, _FILE, (*FIELDS, "capped"), build)
