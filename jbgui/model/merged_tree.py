"""Merged calling-context trees: identical call paths merged, over one thread or the whole run,
with the aggregations every aggregated view shares — top-down children, the inverted (callers)
tree and the butterfly of one method.

A :class:`Tree` is a node table (one node per distinct path of method keys from a root) in which a
node's parent has a smaller index. It is built from the threads' exact calling-context trees
(:mod:`jbgui.model.cct`) and re-merged by :func:`remerge` when transforms hide or re-root nodes
(:mod:`jbgui.model.transforms`): every pass is over nodes, never over calls, so a transformed tree
of a trace of hundreds of millions of calls costs a pass over its few million contexts.

Weights: ``calls`` (calls of the node's own method in that context), and inclusive ``bytecodes``,
``blocks`` and ``time`` (nanoseconds, interpolated between clock samples); a node's own weight is
its inclusive weight less its children's. Exceptions ``thrown`` and ``caught`` are own quantities
(a hidden frame's go to the visible frame that stands for it).

Totals per method count recursion once: a method's total is the sum of inclusive weights of its
*outermost* nodes (no ancestor of the same method), as profilers count it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numba
import numpy as np

from jbgui.model import cct as CCT
from jbgui.model import derived
from jbgui.model import replay_kernel as K

WEIGHTS = ("bytecodes", "calls", "blocks", "time")
_INCL = {"bytecodes": 0, "blocks": 1, "time": 2}
_EMPTY = K.EMPTY
_OLD_FOREST_DIR = "merged_cct"      # the whole run's tree as earlier versions kept it
_METHODS_TABLE = "methods_table.npz"
# whether a re-merge checks the new children of receiving nodes for equal keys (see
# _remerge_plan); on javac's java/util/stream trace it leaves 166 of 662,036 lookups to toggling
# only my code and none of 1,581,181 to merging HashSet.add, for two light passes
CHECK_GROUPS = True


# one probe rule for both: the run's table here is the one cct builds
_pair_slot = CCT._pair_slot


@numba.njit(cache=True, nogil=True)
def _remerge_plan(parent, key, visible, root, kept, roots_pure, anc, receives, pure_old, check_groups):
    """First passes of :func:`_remerge`: each node's nearest visible ancestor (``anc``), which
    nodes receive a hidden node's children, which nodes' new node can take its children without
    the hash table (``pure_old``), and how many nodes need the table. ``root`` and ``kept`` may
    be empty: no node is made a root, every node is kept.

    A new node is *pure* when it stands for one old node alone and its new children have
    distinct keys: then they are created directly. An old node that receives no hidden node's
    children has distinct children (a merged tree's siblings differ). With ``check_groups``, the
    new children of each receiving node are also checked for equal keys (a small hash table of
    those nodes alone): where none are equal, the node stays pure, and a node looked up in the
    table whose key no other child of its parent has stands for itself alone, so its children
    are direct again. Merging a method hidden under few callers then looks up the callers' new
    children, not everything below them. Returns (number hashed, number of receiving nodes)."""
    n = len(parent)
    any_root = len(root) > 0
    any_dropped = len(kept) > 0
    n_receivers = 0
    for i in range(n):
        p = parent[i]
        a = -1
        if p >= 0:
            a = p if visible[p] else anc[p]
        anc[i] = a
        if not visible[i] and a >= 0 and (not any_dropped or kept[i]) and not receives[a]:
            receives[a] = True
            n_receivers += 1
    # equal keys among the new children of receiving nodes
    dup = np.zeros(n if check_groups else 0, np.bool_)
    group_dup = np.zeros(n if check_groups else 0, np.bool_)
    if check_groups and n_receivers:
        members = 0
        for i in range(n):
            a = anc[i]
            if visible[i] and a >= 0 and receives[a] and not (any_root and root[i]) and \
                    (not any_dropped or (kept[i] and kept[a])):
                members += 1
        size = 16
        while size < 2 * members + 2:
            size *= 2
        table = np.full(2 * size, _EMPTY, np.int64)
        for i in range(n):
            a = anc[i]
            if visible[i] and a >= 0 and receives[a] and not (any_root and root[i]) and \
                    (not any_dropped or (kept[i] and kept[a])):
                packed = ((a + 1) << 32) | key[i]
                slot = _pair_slot(table, packed)
                if table[2 * slot] == _EMPTY:
                    table[2 * slot] = packed
                    table[2 * slot + 1] = i
                else:
                    dup[i] = True
                    dup[table[2 * slot + 1]] = True
                    group_dup[a] = True
    # which nodes will need the hash table (purity does not depend on what the table finds):
    # size the table for those alone. ``sole``: the node's new node stands for it alone.
    sole = np.zeros(n if check_groups else 0, np.bool_)
    hashed = 0
    for i in range(n):
        if not visible[i] or (any_dropped and not kept[i]):
            continue
        a = anc[i]
        is_root = any_root and root[i]
        if is_root or a < 0:
            direct = roots_pure and not is_root
            alone = direct
        else:
            direct = pure_old[a]
            alone = direct or (check_groups and sole[a] and not dup[i])
        if not direct:
            hashed += 1
        if check_groups:
            sole[i] = alone
            pure_old[i] = alone and (not receives[i] or not group_dup[i])
        else:
            pure_old[i] = alone and not receives[i]
    return hashed, n_receivers


@numba.njit(cache=True, nogil=True)
def _remerge_fill(parent, key, visible, root, kept, calls, incl, own, flags, roots_pure, same, anc, pure_old,
                  table, o_parent, o_key, o_depth, o_calls, o_incl, o_own, o_flags, o_same, pure, o_roots):
    """The merging pass of :func:`_remerge`; returns the number of new nodes and of roots. ``anc``
    (each node's nearest visible ancestor, from the plan) is overwritten in node order with each
    node's new id (-1: dropped): an ancestor's entry is read after it was replaced, a node's own
    entry just before. The outputs need no initial values: a new node's entries are written when
    it is created (a store, not an addition to memory just zeroed), then added to."""
    n = len(parent)
    any_root = len(root) > 0
    any_dropped = len(kept) > 0
    m = 0
    r = 0
    for i in range(n):
        a = anc[i]
        if any_dropped and not kept[i]:
            anc[i] = -1
            continue
        if visible[i]:
            is_root = any_root and root[i]
            np_ = -1
            if not is_root and a >= 0:
                np_ = anc[a]
            created = False
            if (np_ >= 0 and pure[np_]) or (np_ < 0 and roots_pure):
                node = m
                m += 1
                created = True
                pure[node] = pure_old[i]
            else:
                packed = ((np_ + 1) << 32) | key[i]
                slot = _pair_slot(table, packed)
                if table[2 * slot] == _EMPTY:
                    node = m
                    m += 1
                    created = True
                    pure[node] = pure_old[i]     # false when it may stand for several old nodes
                    table[2 * slot] = packed
                    table[2 * slot + 1] = node
                else:
                    node = table[2 * slot + 1]
            anc[i] = node
            if created:
                o_parent[node] = np_
                o_key[node] = key[i]
                if np_ < 0:
                    o_depth[node] = 0
                    o_roots[r] = node
                    r += 1
                else:
                    o_depth[node] = o_depth[np_] + 1
                j = same[i]
                while j >= 0 and not (visible[j] and (not any_dropped or kept[j])):
                    j = same[j]
                o_same[node] = anc[j] if j >= 0 and not is_root else -1
                o_calls[node] = calls[i]
                for c in range(incl.shape[1]):
                    o_incl[node, c] = incl[i, c]
                for c in range(own.shape[1]):
                    o_own[node, c] = own[i, c]
                o_flags[node] = flags[i]
            else:
                o_calls[node] += calls[i]
                for c in range(incl.shape[1]):
                    o_incl[node, c] += incl[i, c]
                for c in range(own.shape[1]):
                    o_own[node, c] += own[i, c]
                o_flags[node] |= flags[i]
        else:
            t = anc[a] if a >= 0 else -1
            anc[i] = t
            if t >= 0:
                for c in range(own.shape[1]):
                    o_own[t, c] += own[i, c]
    return m, r


def _remerge(parent, key, visible, root, kept, calls, incl, own, flags, roots_pure, same, own_fits_32=False,
             check_groups=None):
    """Merge the visible kept nodes by (new parent, key): a hidden node's children attach to its
    nearest visible ancestor, a ``root`` node becomes a root. Own quantities (``own``) of hidden
    nodes go to the node that stands for them. ``root`` and ``kept`` may be None (no new roots,
    every node kept).

    Only paths that can collide are looked up in a hash table: under a new node that stands for
    exactly one old node which receives no hidden node's children, the new children are that old
    node's children, whose keys differ, so they are created directly. Transforms hide few nodes
    of a big tree, so most nodes take the direct way. ``roots_pure``: the new roots are the old
    roots alone, whose keys differ (so they too are created directly). ``same``: each node's
    nearest ancestor with the same key (-1: none); the result's is computed from it, skipping
    the ancestors that were hidden or dropped.

    The arrays are allocated here, by numpy, not in the kernels: numpy asks for transparent huge
    pages, and first touching hundreds of megabytes of small pages (page faults, reclaiming
    page cache) cost more than the merge itself on a busy machine. Every byte written per node
    counts (a tree of ten million nodes): node ids, keys, depths and flags are 32-bit, the
    exception counts too when ``own_fits_32`` (their sum over the tree fits), the inclusive
    weights are laid out by column (a view's pass over one weight reads that column alone), and
    own weights are not computed here (:meth:`Tree.own` derives one weight's when asked)."""
    n = len(parent)
    if check_groups is None:
        check_groups = CHECK_GROUPS
    idx = np.int32 if n < 2**31 - 1 else np.int64
    none = np.zeros(0, np.bool_)
    root = none if root is None else root
    kept = none if kept is None else kept
    anc = np.empty(n, idx)
    receives = np.zeros(n, np.bool_)
    pure_old = np.zeros(n, np.bool_)
    hashed, _ = _remerge_plan(parent, key, visible, root, kept, roots_pure, anc, receives, pure_old, check_groups)
    del receives
    size = 16
    while size < 2 * hashed + 2:
        size *= 2
    table = np.full(2 * size, _EMPTY, np.int64)
    o_parent = np.empty(n, idx)
    o_key = np.empty(n, np.result_type(key.dtype, np.int32))
    o_depth = np.empty(n, np.int32)
    o_calls = np.empty(n, np.int64)
    o_incl = np.empty((incl.shape[1], n), np.int64).T
    o_own = np.empty((n, own.shape[1]), np.int32 if own_fits_32 else np.int64)
    o_flags = np.empty(n, np.result_type(flags.dtype, np.int32))
    o_same = np.empty(n, idx)
    pure = np.empty(n, np.bool_)
    o_roots = np.empty(n, np.int64)
    m, r = _remerge_fill(parent, key, visible, root, kept, calls, incl, own, flags, roots_pure, same, anc, pure_old,
                         table, o_parent, o_key, o_depth, o_calls, o_incl, o_own, o_flags, o_same, pure,
                         o_roots)
    return m, o_roots[:r].copy(), o_parent, o_key, o_depth, o_calls, o_incl, o_own, o_flags, o_same


@numba.njit(cache=True, nogil=True)
def _column_sums(a):
    """Sum of each column of a 2-d array, in int64 (numpy's axis-0 sum of a narrower type
    through a cast is many times slower)."""
    out = np.zeros(a.shape[1], np.int64)
    for i in range(a.shape[0]):
        for c in range(a.shape[1]):
            out[c] += a[i, c]
    return out


@numba.njit(cache=True, nogil=True)
def _key_presence(key):
    """Per key value up to the largest: whether a node has it (a negative key marks the last
    value, as numpy's indexing did)."""
    top = 0
    for k in key:
        if k > top:
            top = k
    present = np.zeros(top + 1, np.bool_)
    for k in key:
        present[k] = True
    return present


@numba.njit(cache=True, nogil=True)
def _own_column_in(parent, incl, own):
    for i in range(len(parent)):
        p = parent[i]
        if p >= 0:
            own[p] -= incl[i]


def _own_column(parent, incl):
    """One weight's own values: inclusive less the children's inclusive."""
    own = np.array(incl, np.int64)
    _own_column_in(parent, incl, own)
    return own


@numba.njit(cache=True, nogil=True)
def _subtract_children_in(parent, incl, own):
    for i in range(len(parent)):
        p = parent[i]
        if p >= 0:
            for c in range(incl.shape[1]):
                own[p, c] -= incl[i, c]


def _subtract_children(parent, incl):
    """Own weights: inclusive less the children's inclusive (arrays allocated by numpy, see
    :func:`_remerge`)."""
    own = np.array(incl, np.int64)
    _subtract_children_in(parent, incl, own)
    return own


_csr = CCT.children_csr      # one counting sort of children for the run's trees and these


@numba.njit(cache=True, nogil=True)
def _csr_by_group(group, n_groups):
    """Nodes listed by group, in node order within a group (a counting sort)."""
    start = np.zeros(n_groups + 1, np.int64)
    for i in range(len(group)):
        start[group[i] + 1] += 1
    for g in range(n_groups):
        start[g + 1] += start[g]
    fill = start[:-1].copy()
    out = np.empty(len(group), np.int64)
    for i in range(len(group)):
        g = group[i]
        out[fill[g]] = i
        fill[g] += 1
    return start, out


@numba.njit(cache=True, nogil=True)
def _subtree_sums_in(parent, out):
    for i in range(len(parent) - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            out[p] += out[i]


def _subtree_sums(parent, values):
    """Inclusive sums of a per-node value (children have larger indices than their parent)."""
    out = np.array(values, np.int64)
    _subtree_sums_in(parent, out)
    return out


_same_group_ancestor = CCT.same_group_ancestor


@dataclass
class Tree:
    """A merged calling-context tree (see the module's docstring). ``incl`` columns are
    bytecodes, blocks, time; ``own`` columns are thrown, caught."""

    parent: np.ndarray
    key: np.ndarray
    depth: np.ndarray
    calls: np.ndarray
    incl: np.ndarray     # (n, 3) int64, by row or (transformed trees) by column
    own_counts: np.ndarray  # (n, 2) int64 or int32: exceptions thrown, caught
    flags: np.ndarray

    def __len__(self) -> int:
        return len(self.parent)

    # ------------------------------------------------------------------ weights

    def inclusive(self, weight: str = "bytecodes") -> np.ndarray:
        """Inclusive weight per node (for ``calls``: calls in the node's subtree, itself included)."""
        if weight == "calls":
            return self._incl_calls
        return self.incl[:, _INCL[weight]]

    def own(self, weight: str = "bytecodes") -> np.ndarray:
        """Own weight per node (for ``calls``: the node's own calls)."""
        if weight == "calls":
            return self.calls
        c = _INCL[weight]
        full = self.__dict__.get("_own")
        if full is not None:
            return full[:, c]
        cols = self.__dict__.setdefault("_own_columns", {})
        if c not in cols:       # one weight's pass, not all three (a view shows one weight)
            cols[c] = _own_column(self.parent, self.incl[:, c])
        return cols[c]

    @cached_property
    def _incl_calls(self) -> np.ndarray:
        return _subtree_sums(self.parent, self.calls)

    @cached_property
    def _own(self) -> np.ndarray:
        return _subtract_children(self.parent, self.incl)

    @property
    def own_matrix(self) -> np.ndarray:
        """Own bytecodes, blocks, time per node, as (n, 3)."""
        return self._own

    @property
    def thrown(self) -> np.ndarray:
        return self.own_counts[:, 0]

    @property
    def caught(self) -> np.ndarray:
        return self.own_counts[:, 1]

    # ------------------------------------------------------------------ structure

    @cached_property
    def roots(self) -> np.ndarray:
        return np.flatnonzero(self.parent < 0)

    @cached_property
    def _children(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR: children of node i are ``child_list[child_start[i]:child_start[i+1]]``, in node order."""
        return _csr(self.parent)

    def children(self, node: int) -> np.ndarray:
        """Children of ``node`` (-1: the roots), in node order."""
        if node < 0:
            return self.roots
        start, lst = self._children
        return lst[start[node]:start[node + 1]]

    def path(self, node: int) -> tuple[int, ...]:
        """Keys from the root to ``node``."""
        out = []
        while node >= 0:
            out.append(int(self.key[node]))
            node = int(self.parent[node])
        return tuple(reversed(out))

    def find_path(self, path: tuple[int, ...]) -> int:
        """The node with these keys from a root, or -1."""
        node = -1
        for k in path:
            kids = self.children(node)
            hit = kids[self.key[kids] == k]
            if not len(hit):
                return -1
            node = int(hit[0])
        return node

    def outermost(self, group: np.ndarray | None = None) -> np.ndarray:
        """Per node: no ancestor in the same group (default: the same method key)."""
        if group is None:
            return self._outermost_keys
        start, lst = self._children
        return _same_group_ancestor(start, lst, self.roots, np.asarray(group, np.int64)) < 0

    @cached_property
    def _outermost_keys(self) -> np.ndarray:
        return self.same_key_ancestor < 0

    @cached_property
    def same_key_ancestor(self) -> np.ndarray:
        """Per node: the nearest ancestor with the same key, -1 when none (a tree made by
        :meth:`remerge` gets it from the pass that made it)."""
        start, lst = self._children
        return _same_group_ancestor(start, lst, self.roots, self.dense_keys[1])

    key_space: tuple[np.ndarray, np.ndarray] | None = None

    def _key_space(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct keys sorted, dense index per key value), shared by the trees derived from
        this one (transforms never invent keys)."""
        if self.key_space is None:
            present = _key_presence(self.key)
            # dense indices in 32 bits: there are far fewer keys than nodes, and this is per node
            self.key_space = (np.flatnonzero(present).astype(np.int64), (np.cumsum(present) - 1).astype(np.int32))
        return self.key_space

    @cached_property
    def dense_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, index of each node's key among them), without a sort of the nodes: keys are
        small integers. ``keys`` may hold keys no node of this tree has (a transform dropped
        them)."""
        if not len(self.key):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        keys, index = self._key_space()
        return keys, index[self.key]

    @cached_property
    def nodes_by_key(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(keys, start, nodes): nodes of ``keys[i]`` are ``nodes[start[i]:start[i+1]]``, in
        node order (a counting sort by key; keys without nodes have empty ranges)."""
        keys, dense = self.dense_keys
        start, nodes = _csr_by_group(dense, len(keys))
        return keys, start, nodes

    def nodes_of(self, key: int) -> np.ndarray:
        keys, start, nodes = self.nodes_by_key
        i = int(np.searchsorted(keys, key))
        if i >= len(keys) or keys[i] != key:
            return np.zeros(0, np.int64)
        return nodes[start[i]:start[i + 1]]

    def total(self, weight: str = "bytecodes") -> int:
        """The whole tree's weight (sum over roots)."""
        if weight == "calls" and "_incl_calls" not in self.__dict__:
            return int(np.sum(self.calls, dtype=np.int64))     # every node's calls: no subtree sums
        return int(self.inclusive(weight)[self.roots].sum())

    # ------------------------------------------------------------------ building

    @classmethod
    def from_cct(cls, c: dict[str, np.ndarray]) -> Tree:
        n = len(c["parent"])
        incl = np.zeros((n, 3), np.int64)
        incl[:, 0] = c["incl_bytecodes"]
        incl[:, 1] = c["incl_blocks"]
        incl[:, 2] = c["incl_time"]
        own = np.zeros((n, 2), np.int64)
        own[:, 0] = c["thrown"]
        own[:, 1] = c["caught"]
        return cls(np.asarray(c["parent"], np.int64), np.asarray(c["key"], np.int64),
                   np.asarray(c["depth"], np.int64), np.asarray(c["calls"], np.int64), incl, own,
                   np.asarray(c["flags"], np.int64))

    @classmethod
    def concat(cls, trees: list[Tree]) -> Tree:
        """Trees side by side (node ids shifted), not yet merged."""
        if not trees:
            z = np.zeros(0, np.int64)
            return cls(z, z, z, z, np.zeros((0, 3), np.int64), np.zeros((0, 2), np.int64), z)
        parents, offset = [], 0
        for t in trees:
            parents.append(np.where(t.parent >= 0, t.parent + offset, -1))
            offset += len(t)
        return cls(np.concatenate(parents), *(np.concatenate([getattr(t, f) for t in trees])
                                               for f in ("key", "depth", "calls", "incl", "own_counts", "flags")))

    def remerge(self, visible: np.ndarray | None = None, root: np.ndarray | None = None,
                kept: np.ndarray | None = None) -> Tree:
        """The tree with hidden nodes removed (children attached to the nearest visible
        ancestor), ``root`` nodes made roots, nodes outside ``kept`` dropped, and identical
        paths merged. ``kept`` is expected to be the subtrees of the ``root`` nodes (as the focus
        transforms make them): the nearest same-key ancestors are carried over only then."""
        n = len(self)
        visible = np.ones(n, np.bool_) if visible is None else np.asarray(visible, np.bool_)
        root = None if root is None else np.asarray(root, np.bool_)
        kept = None if kept is None else np.asarray(kept, np.bool_)
        if root is not None and not root.any():
            root = None
        if kept is not None and kept.all():
            kept = None
        top = self.roots
        roots_pure = (root is None and bool(np.all(visible[top] | (False if kept is None else ~kept[top])))
                      and len(np.unique(self.key[top])) == len(top))
        m, roots, *cols = _remerge(self.parent, self.key, visible, root, kept, self.calls, self.incl,
                                   self.own_counts, self.flags, roots_pure, self.same_key_ancestor,
                                   own_fits_32=self.own_bound < 2**31)
        # views, not copies: copying a tree of millions of nodes costs more than the memory saved
        out = Tree(*(c[:m] for c in cols[:-1]))
        out.__dict__["same_key_ancestor"] = cols[-1][:m]   # computed in the same pass,
        out.__dict__["roots"] = roots                       # as the roots
        out.__dict__["own_bound"] = self.own_bound          # hidden nodes' counts go to kept ones
        out.key_space = self._key_space()
        return out

    @cached_property
    def own_bound(self) -> int:
        """An upper bound of any node's exception counts in this tree or one derived from it (a
        re-merge adds a hidden node's counts to one node, never more): the larger column sum."""
        if not len(self):
            return 0
        return int(_column_sums(self.own_counts).max())

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The columns to store; node ids, keys, depths, flags and exception counts narrowed to
        32 bits when they fit (a cached tree of millions of nodes then loads in half the time)."""
        def narrow(a: np.ndarray) -> np.ndarray:
            a = np.asarray(a)
            if a.size and (a.max() >= 2**31 or a.min() < -2**31):
                return a
            return a.astype(np.int32)
        return {"parent": narrow(self.parent), "key": narrow(self.key), "depth": narrow(self.depth),
                "calls": self.calls, "incl": self.incl, "own": narrow(self.own_counts), "flags": narrow(self.flags)}


def thread_tree(thread, progress=None, cancelled=None) -> Tree:
    """The merged tree of one :class:`~jbgui.model.analysis.ThreadReplay` (its exact CCT).
    ``progress(done, total)`` hears of the calls read while it is built the first time;
    ``cancelled()`` stops that (see :func:`jbgui.model.cct.compute`)."""
    return Tree.from_cct(CCT.for_thread(thread, progress, cancelled))


def run_tree(analysis, threads=None, progress=None, cancelled=None) -> Tree:
    """The merged tree of the whole run (every thread's paths merged), or of ``threads``
    (indices). The whole run's: the forest of the run's trees (:meth:`jbgui.model.analysis.
    Analysis.run_trees`), kept beside the replay with the threads' trees."""
    chosen = analysis.threads if threads is None else [analysis.thread(i) for i in threads]
    if len(chosen) == 1:
        return thread_tree(chosen[0], progress, cancelled)
    if threads is None:
        shutil.rmtree(Path(analysis.cache_dir) / _OLD_FOREST_DIR, ignore_errors=True)     # 835 MB on javac's
        run = analysis.run_trees(progress, cancelled)
        calls, incl, own, flags = run.forest_tree()
        tree = Tree(run.parent, run.key, run.depth, calls, incl, own, flags)
        tree.__dict__["same_key_ancestor"] = run.same_key      # kept with the trees (see cct)
        return tree
    trees = [thread_tree(t, progress, cancelled) for t in chosen]
    return Tree.concat(trees).remerge()


def forget_cached(analysis) -> None:
    """Drop every tree kept for ``analysis`` (the run's calling-context trees and the methods
    table): the next request builds them from the call columns (benchmarks and tests of the
    first time)."""
    analysis.forget_run_trees()
    shutil.rmtree(Path(analysis.cache_dir) / _OLD_FOREST_DIR, ignore_errors=True)
    derived.forget(analysis.cache_dir, _METHODS_TABLE)


def run_methods_table_arrays(analysis, compute) -> dict[str, np.ndarray]:
    """The whole run's untransformed methods table (``compute()`` builds it as arrays), cached
    beside the replay: the table a user sees first when the aggregated views open."""
    return derived.load_or_compute(analysis.cache_dir, _METHODS_TABLE, ("names", "keys", "columns", "run"),
                                   compute)


# ---------------------------------------------------------------------- inverted and butterfly


@dataclass
class CallerPath:
    """One node of the inverted tree: the suffix ``keys`` (the method first, then its caller,
    the caller's caller...), the merged-tree nodes of the method it covers (``origins``) and
    their ancestors at the suffix's last key (``current``)."""

    keys: tuple[int, ...]
    origins: np.ndarray
    current: np.ndarray
    calls: int
    self_weight: int


class InvertedTree:
    """Callers (bottom-up): methods by own weight; a method's children are the methods that
    called it, each with the own weight and calls of the method that came through that path."""

    def __init__(self, tree: Tree, weight: str = "bytecodes", canonical: np.ndarray | None = None):
        """``canonical`` maps a key to the key that stands for it (see :func:`canonical_keys`:
        native calls to one target from several call sites are one method here)."""
        self.tree = tree
        self.weight = weight
        self._own = tree.own(weight)
        self.canonical = canonical

    def _canon(self, keys: np.ndarray) -> np.ndarray:
        if self.canonical is None:
            return keys
        inside = keys < len(self.canonical)
        return np.where(inside, self.canonical[np.where(inside, keys, 0)], keys)

    def _group(self, keys_prefix: tuple[int, ...], origins: np.ndarray, current: np.ndarray,
               group_keys: np.ndarray, append: bool) -> list[CallerPath]:
        if not len(origins):
            return []
        order = np.argsort(group_keys, kind="stable")
        gk = group_keys[order]
        uniq, first = np.unique(gk, return_index=True)
        bounds = np.append(first, len(order))
        w = self._own[origins][order]
        c = self.tree.calls[origins][order]
        ws = np.add.reduceat(w, first) if len(first) else w[:0]
        cs = np.add.reduceat(c, first) if len(first) else c[:0]
        out = []
        for i, k in enumerate(uniq):
            sl = order[bounds[i]:bounds[i + 1]]
            keys = keys_prefix + (int(k),) if append else (int(k),)
            out.append(CallerPath(keys, origins[sl], current[sl], int(cs[i]), int(ws[i])))
        out.sort(key=lambda p: (-p.self_weight, -p.calls, p.keys[-1]))
        return out

    def roots(self) -> list[CallerPath]:
        """Every method, by own weight (heaviest first)."""
        keys, start, nodes = self.tree.nodes_by_key
        counts = np.diff(start)
        group = np.repeat(np.arange(len(keys)), counts)
        ws = np.bincount(group, weights=self._own[nodes], minlength=len(keys))
        cs = np.bincount(group, weights=self.tree.calls[nodes], minlength=len(keys))
        canon = self._canon(keys)
        merged: dict[int, CallerPath] = {}
        for i in np.flatnonzero(counts):
            k = int(canon[i])
            sl = nodes[start[i]:start[i + 1]]
            got = merged.get(k)
            if got is None:
                merged[k] = CallerPath((k,), sl, sl, int(cs[i]), int(ws[i]))
            else:
                both = np.concatenate([got.origins, sl])
                merged[k] = CallerPath((k,), both, both, got.calls + int(cs[i]), got.self_weight + int(ws[i]))
        out = list(merged.values())
        out.sort(key=lambda p: (-p.self_weight, -p.calls, p.keys[-1]))
        return out

    def callers(self, item: CallerPath) -> list[CallerPath]:
        """The methods that called ``item``'s path, each with what came through it."""
        parents = self.tree.parent[item.current]
        has = parents >= 0
        return self._group(item.keys, item.origins[has], parents[has], self._canon(self.tree.key[parents[has]]),
                           append=True)

    def top_level_share(self, item: CallerPath) -> tuple[int, int]:
        """(calls, own weight) of ``item``'s method reached with no further caller (a root)."""
        top = self.tree.parent[item.current] < 0
        return int(self.tree.calls[item.origins[top]].sum()), int(self._own[item.origins[top]].sum())


@dataclass
class Neighbour:
    """A caller or callee of a method in the butterfly: its key (-1: no caller, a thread's
    root), the calls across that edge and the weight (the method's inclusive weight through
    that caller, or the callee's inclusive weight under the method)."""

    key: int
    calls: int
    weight: int


def butterfly(tree: Tree, key: int, weight: str = "bytecodes") -> dict:
    """Callers and callees of the method ``key``: calls across each edge (every call), and the
    weight across it counted once per stack — a caller's weight is the method's inclusive weight
    in its outermost invocations made by that caller (so the callers' weights add up to the
    method's total), a callee's the inclusive weight of its outermost invocations made by the
    method. Also the method's calls, own weight and total (recursion counted once)."""
    nodes = tree.nodes_of(key)
    incl = tree.inclusive(weight) if weight != "calls" else tree.calls
    outermost = tree.outermost()
    parents = tree.parent[nodes]
    caller_keys = np.where(parents >= 0, tree.key[np.maximum(parents, 0)], -1)
    callers = _sum_by(caller_keys, tree.calls[nodes], np.where(outermost[nodes], incl[nodes], 0))
    start, lst = tree._children
    kids = np.concatenate([lst[start[n]:start[n + 1]] for n in nodes]) if len(nodes) else np.zeros(0, np.int64)
    callees = _sum_by(tree.key[kids], tree.calls[kids], np.where(outermost[kids], incl[kids], 0))
    outer = nodes[outermost[nodes]]
    return {"key": int(key), "calls": int(tree.calls[nodes].sum()), "self": int(tree.own(weight)[nodes].sum()),
            "total": int(tree.inclusive(weight)[outer].sum()), "callers": callers, "callees": callees}


def _sum_by(keys: np.ndarray, calls: np.ndarray, weight: np.ndarray) -> list[Neighbour]:
    if not len(keys):
        return []
    uniq, inv = np.unique(keys, return_inverse=True)
    c = np.bincount(inv, weights=calls, minlength=len(uniq)).astype(np.int64)
    w = np.zeros(len(uniq), np.int64)
    np.add.at(w, inv, weight)
    out = [Neighbour(int(k), int(a), int(b)) for k, a, b in zip(uniq, c, w)]
    out.sort(key=lambda x: (-x.weight, -x.calls, x.key))
    return out


def canonical_keys(statics, keys: np.ndarray) -> np.ndarray:
    """Per key value (up to ``keys.max()``): the smallest key of the same name — native or
    untraced calls to one target from several call sites share a name and are one method."""
    keys = np.asarray(keys, np.int64)
    out = np.arange(int(keys.max()) + 1 if len(keys) else 1, dtype=np.int64)
    first: dict[str, int] = {}
    for k in np.unique(keys[keys >= CCT.SYNTHETIC_KEY]).tolist():
        out[k] = first.setdefault(key_name(statics, k), k)
    return out


def key_name(statics, key: int) -> str:
    """``pkg.Cls.name(desc)`` of a node key; a native/untraced call by its call site."""
    key = int(key)
    if key == -1:
        return "(thread root)"
    if key >= CCT.SYNTHETIC_KEY:
        return statics.site_qualified(key - CCT.SYNTHETIC_KEY) + " [native/untraced]"
    return statics.method_qualified(key) or f"<method {key}>"
