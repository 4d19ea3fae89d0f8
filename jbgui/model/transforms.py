"""Transforms of the merged calling-context tree (Firefox Profiler's idea, exact here): only my
code, focus on a subtree, focus on a method, merge a method, collapse recursion.

Each transform decides, from the current tree's paths alone, which nodes stay visible, which
become roots and which are dropped; :meth:`Tree.remerge` then attaches the children of hidden
nodes to their nearest visible ancestor and merges paths that became identical. A hidden node's
own weight thus goes to the visible node that stands for it, and a visible node keeps its
inclusive weight: exactly "collapsed into the call that entered it". Transforms apply in order
(a stack): each works on the result of the ones before, so a stack is undone by dropping its
last entry. All views that aggregate (methods table, merged tree, callers, butterfly, flame
graph) read the same transformed tree from :class:`AggregateView`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numba
import numpy as np

from jbgui.model import merged_tree as MT
from jbgui.model.replay import Cancelled
from jbgui.model.scope import Scope


@dataclass(frozen=True)
class Transform:
    """One entry of the stack. ``kind`` is one of :data:`KINDS`; ``method`` a key (method id)
    for the method transforms; ``path`` the keys from a root to the focused node for
    ``focus-subtree``."""

    kind: str
    method: int = 0
    path: tuple[int, ...] = ()

    def label(self, statics) -> str:
        """Short text for a breadcrumb."""
        short = _short(MT.key_name(statics, self.method)) if self.method else ""
        if self.kind == "only-my-code":
            return "only my code"
        if self.kind == "focus-subtree":
            return "focus " + " › ".join(_short(MT.key_name(statics, k)) for k in self.path[-2:])
        if self.kind == "focus-method":
            return f"focus {short}"
        if self.kind == "merge":
            return f"merge {short}"
        if self.kind == "collapse-recursion":
            return f"collapse recursion {short}" if self.method else "collapse recursion"
        return self.kind


KINDS = ("only-my-code", "focus-subtree", "focus-method", "merge", "collapse-recursion")


def _short(name: str) -> str:
    head = name.split("(", 1)[0]
    parts = head.split(".")
    return ".".join(parts[-2:])


@numba.njit(cache=True, nogil=True)
def _under_key(parent, key, target):
    """Per node: some strict ancestor has key ``target``."""
    n = len(parent)
    out = np.zeros(n, np.bool_)
    for i in range(n):
        p = parent[i]
        if p >= 0 and (out[p] or key[p] == target):
            out[i] = True
    return out


@numba.njit(cache=True, nogil=True)
def _mine_or_entered(parent, key, mine_keys):
    """Visible under only-my-code: my frames, roots, and frames my code called."""
    n = len(parent)
    out = np.empty(n, np.bool_)
    for i in range(n):
        p = parent[i]
        out[i] = mine_keys[key[i]] or p < 0 or mine_keys[key[p]]
    return out


@numba.njit(cache=True, nogil=True)
def _in_subtree(parent, node):
    n = len(parent)
    out = np.zeros(n, np.bool_)
    if node < 0:
        return out
    out[node] = True
    for i in range(node + 1, n):
        p = parent[i]
        if p >= 0 and out[p]:
            out[i] = True
    return out


def only_my_code(tree: MT.Tree, mine_keys: np.ndarray) -> MT.Tree:
    """Keep my methods, and of every run of other frames the one call that entered it (a root,
    or a call made by my code); the rest of the run is collapsed into it."""
    if len(mine_keys) <= int(tree.key.max(initial=0)):
        mine_keys = np.concatenate([mine_keys, np.zeros(int(tree.key.max()) + 1 - len(mine_keys), np.bool_)])
    return tree.remerge(visible=_mine_or_entered(tree.parent, tree.key, mine_keys))


def merge_method(tree: MT.Tree, key: int) -> MT.Tree:
    """Remove the method's frames; its callees become its caller's, its own weight the caller's."""
    return tree.remerge(visible=tree.key != key)


def focus_method(tree: MT.Tree, key: int) -> MT.Tree:
    """The method's outermost invocations as roots, with everything they called."""
    under = _under_key(tree.parent, tree.key, key)
    root = (tree.key == key) & ~under
    return tree.remerge(root=root, kept=root | under)


def focus_subtree(tree: MT.Tree, path: tuple[int, ...]) -> MT.Tree:
    """The node with this path as the only root, with its subtree (empty when no such path)."""
    node = tree.find_path(tuple(path))
    kept = _in_subtree(tree.parent, node)
    root = np.zeros(len(tree), np.bool_)
    if node >= 0:
        root[node] = True
    return tree.remerge(root=root, kept=kept)


def collapse_recursion(tree: MT.Tree, key: int = 0) -> MT.Tree:
    """``key`` given: its invocations inside another of its invocations are removed (what they
    called stays, under the outermost one). ``key`` 0: direct recursion of every method is
    collapsed (a frame called by the same method)."""
    if key:
        hidden = (tree.key == key) & _under_key(tree.parent, tree.key, key)
    else:
        has = tree.parent >= 0
        hidden = np.zeros(len(tree), np.bool_)
        hidden[has] = tree.key[has] == tree.key[tree.parent[has]]
    return tree.remerge(visible=~hidden)


def apply(tree: MT.Tree, transforms: tuple[Transform, ...] | list[Transform], scope: Scope | None = None) -> MT.Tree:
    """The tree after every transform of the stack, in order. ``only-my-code`` needs ``scope``."""
    for t in transforms:
        if t.kind == "only-my-code":
            if scope is None:
                raise ValueError("only-my-code needs a scope")
            mine = scope.key_mask(int(tree.key.max()) + 1 if len(tree) else 1)
            tree = only_my_code(tree, mine)
        elif t.kind == "merge":
            tree = merge_method(tree, t.method)
        elif t.kind == "focus-method":
            tree = focus_method(tree, t.method)
        elif t.kind == "focus-subtree":
            tree = focus_subtree(tree, t.path)
        elif t.kind == "collapse-recursion":
            tree = collapse_recursion(tree, t.method)
        else:
            raise ValueError(f"unknown transform {t.kind!r}")
    return tree


class AggregateView:
    """What every aggregated view shows: the merged tree of the whole run or one thread, with
    the transform stack applied; transformed trees are kept (a few) so that undoing a transform
    or toggling a scope back is immediate.

    Safe to call from worker threads: one computation at a time (a lock), and a request that is
    cancelled between two steps raises :class:`~jbgui.model.replay.Cancelled` without caching anything partial."""

    CACHED = 8

    def __init__(self, analysis, scope: Scope | None = None):
        self.analysis = analysis
        self.scope = scope if scope is not None else Scope.of_trace(analysis)
        self._bases: dict = {}
        self._cache: OrderedDict = OrderedDict()
        self._lock = threading.RLock()

    def base(self, thread: int | None = None, progress=None, cancelled=None) -> MT.Tree:
        """The untransformed tree of the run (None) or of one thread index."""
        with self._lock:
            if thread not in self._bases:
                _check(cancelled)
                self._bases[thread] = MT.run_tree(self.analysis, progress=progress, cancelled=cancelled) \
                    if thread is None else MT.thread_tree(self.analysis.thread(thread), progress, cancelled)
            return self._bases[thread]

    def cached(self, transforms: tuple[Transform, ...] = (), thread: int | None = None) -> MT.Tree | None:
        """The tree when it is ready without computing (None otherwise)."""
        transforms = tuple(transforms)
        if not transforms:
            return self._bases.get(thread)
        return self._cache.get((thread, transforms))

    def set_scope(self, scope: Scope) -> None:
        """Other include/exclude prefixes: trees that used the old scope are forgotten."""
        self.scope = scope
        # a snapshot first: a worker may be adding a tree meanwhile
        self._cache = OrderedDict((k, v) for k, v in list(self._cache.items())
                                  if not any(t.kind == "only-my-code" for t in k[1]))

    def tree(self, transforms: tuple[Transform, ...] = (), thread: int | None = None,
             progress=None, cancelled=None) -> MT.Tree:
        """The transformed tree (cached by stack and thread; a prefix of the stack is reused).
        ``progress(done, total)`` hears of the steps; ``cancelled()`` stops between them."""
        transforms = tuple(transforms)
        key = (thread, transforms)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            if not transforms:
                return self.base(thread, progress, cancelled)
            tree = self.tree(transforms[:-1], thread, progress, cancelled)
            _check(cancelled)
            scope = self.scope
            tree = apply(tree, transforms[-1:], scope)
            if scope is not self.scope and any(t.kind == "only-my-code" for t in transforms):
                return tree     # the prefixes changed meanwhile: not cached under the new ones
            self._cache[key] = tree
            while len(self._cache) > self.CACHED:
                self._cache.popitem(last=False)
            return tree


def _check(cancelled) -> None:
    if cancelled is not None and cancelled():
        raise Cancelled()
