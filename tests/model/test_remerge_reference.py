"""The merged tree's re-merge and the methods table's one-pass sums against straightforward
versions written as plain Python loops over paths: on random trees (keys from a small alphabet,
so that hidden nodes make paths collide; random hidden, re-rooted and dropped nodes) and on the
trees of a recorded program (every transform, and random masks)."""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model import merged_tree as MT
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.model.analysis import Analysis
from jbgui.model.scope import Scope

# ---------------------------------------------------------------------- the straightforward versions


def reference_remerge(tree: MT.Tree, visible, root, kept) -> dict[tuple, dict]:
    """Per path of the re-merged tree: calls, inclusive weights, exception counts, flags, and the
    first old node merged into it (the new tree's nodes come in that order)."""
    n = len(tree)
    visible = np.ones(n, bool) if visible is None else visible
    root = np.zeros(n, bool) if root is None else root
    kept = np.ones(n, bool) if kept is None else kept
    path: dict[int, tuple | None] = {}     # old node -> the new path that stands for it (None: none)
    out: dict[tuple, dict] = {}
    for i in range(n):
        if not kept[i]:
            path[i] = None
            continue
        p = int(tree.parent[i])
        # the nearest visible ancestor's path (a dropped ancestor leaves none)
        a = p
        while a >= 0 and not visible[a]:
            a = int(tree.parent[a])
        above = path[a] if a >= 0 else None
        if visible[i]:
            mine = (int(tree.key[i]),) if root[i] or above is None else above + (int(tree.key[i]),)
            path[i] = mine
            e = out.setdefault(mine, {"calls": 0, "incl": np.zeros(3, np.int64), "own": np.zeros(2, np.int64),
                                      "flags": 0, "first": i})
            e["calls"] += int(tree.calls[i])
            e["incl"] += np.asarray(tree.incl[i], np.int64)
            e["own"] += np.asarray(tree.own_counts[i], np.int64)
            e["flags"] |= int(tree.flags[i])
        else:
            path[i] = above
            if above is not None:
                out[above]["own"] += np.asarray(tree.own_counts[i], np.int64)
    return out


def reference_table(tree: MT.Tree, row_of_key: np.ndarray, n_rows: int) -> np.ndarray:
    """The nine columns per row: calls, own and total (outermost nodes of the row) weights,
    thrown, caught — by walking each node's ancestors and children."""
    n = len(tree)
    row = row_of_key[np.asarray(tree.key, np.int64)]
    own = np.array(tree.incl, np.int64)
    for i in range(n):
        p = int(tree.parent[i])
        if p >= 0:
            own[p] -= np.asarray(tree.incl[i], np.int64)
    out = np.zeros((n_rows, 9), np.int64)
    for i in range(n):
        r = row[i]
        a, outer = int(tree.parent[i]), True
        while a >= 0:
            if row[a] == r:
                outer = False
                break
            a = int(tree.parent[a])
        out[r, 0] += int(tree.calls[i])
        out[r, 1:4] += own[i]
        if outer:
            out[r, 4:7] += np.asarray(tree.incl[i], np.int64)
        out[r, 7:9] += np.asarray(tree.own_counts[i], np.int64)
    return out


def check_remerge(tree: MT.Tree, visible=None, root=None, kept=None) -> MT.Tree:
    """Both ways of deciding which nodes need the hash table (checking the receiving nodes'
    new children for equal keys, or not) give the reference's tree."""
    want = reference_remerge(tree, visible, root, kept)
    saved = MT.CHECK_GROUPS
    try:
        for check in (True, False):
            MT.CHECK_GROUPS = check
            got = check_remerge_against(tree, want, visible, root, kept)
    finally:
        MT.CHECK_GROUPS = saved
    return got


def check_remerge_against(tree: MT.Tree, want, visible, root, kept) -> MT.Tree:
    got = tree.remerge(visible=visible, root=root, kept=kept)
    paths = [got.path(n) for n in range(len(got))]
    assert len(got) == len(want) and set(paths) == set(want)
    # the new nodes in the order of the first old node each stands for
    assert [want[p]["first"] for p in paths] == sorted(want[p]["first"] for p in paths)
    for node, p in enumerate(paths):
        e = want[p]
        assert int(got.calls[node]) == e["calls"], p
        assert np.asarray(got.incl[node], np.int64).tolist() == e["incl"].tolist(), p
        assert np.asarray(got.own_counts[node], np.int64).tolist() == e["own"].tolist(), p
        assert int(got.flags[node]) == e["flags"], p
    parent = np.asarray(got.parent, np.int64)
    has = parent >= 0
    assert (parent[has] < np.flatnonzero(has)).all()
    assert (np.asarray(got.depth)[has] == np.asarray(got.depth)[parent[has]] + 1).all()
    assert (np.asarray(got.depth)[~has] == 0).all()
    assert got.roots.tolist() == np.flatnonzero(~has).tolist()
    fresh = MT.Tree(got.parent, got.key, got.depth, got.calls, got.incl, got.own_counts, got.flags)
    assert got.same_key_ancestor.tolist() == fresh.same_key_ancestor.tolist()
    for w in ("bytecodes", "blocks", "time"):
        kids = {}
        for node in range(len(got)):
            if parent[node] >= 0:
                kids[int(parent[node])] = kids.get(int(parent[node]), 0) + int(got.inclusive(w)[node])
        assert got.own(w).tolist() == [int(got.inclusive(w)[node]) - kids.get(node, 0) for node in range(len(got))]
    assert got.total("calls") == int(got.inclusive("calls")[got.roots].sum()) == sum(e["calls"] for e in want.values())
    return got


def check_table(tree: MT.Tree, statics=None) -> None:
    """The table's one pass against the reference, for rows of one key and rows shared by
    several keys (a made-up grouping of key values, or the method grouping of ``statics``)."""
    keys, dense = tree._key_space()
    if statics is not None:
        names, _, row_of_dense = MTab._rows(statics, keys, "method")
        n_rows = len(names)
    else:
        row_of_dense = (np.arange(len(keys)) * 7 // 10).astype(np.int64)   # every few keys share a row
        n_rows = int(row_of_dense.max()) + 1 if len(keys) else 0
    row_of_key = np.zeros(len(dense), np.int32)
    row_of_key[keys] = row_of_dense
    shared = np.bincount(row_of_dense, minlength=n_rows) > 1
    near = np.empty(len(tree), np.int32)
    got = MTab._table_sums(tree.parent, tree.key, row_of_key, shared, tree.same_key_ancestor, np.zeros(0, np.bool_),
                           tree.calls, tree.incl, tree.own_counts, n_rows, near)
    assert got.tolist() == reference_table(tree, row_of_key, n_rows).tolist()


# ---------------------------------------------------------------------- random trees


def random_tree(rng, n: int, n_keys: int) -> MT.Tree:
    """A merged tree: siblings have distinct keys (roots need not: trees of several threads side
    by side)."""
    parent = np.full(n, -1, np.int64)
    key = np.zeros(n, np.int64)
    used: dict[int, set] = {}
    for i in range(n):
        p = -1 if i == 0 or rng.random() < 0.03 else int(rng.integers(max(0, i - 30), i))
        free = [k for k in range(1, n_keys + 1) if k not in used.get(p, ())] if p >= 0 else []
        if not free:
            p, free = -1, list(range(1, n_keys + 1))
        parent[i], key[i] = p, free[int(rng.integers(len(free)))]
        if p >= 0:
            used.setdefault(p, set()).add(int(key[i]))
    depth = np.zeros(n, np.int64)
    for i in range(n):
        depth[i] = 0 if parent[i] < 0 else depth[parent[i]] + 1
    calls = rng.integers(1, 5, n).astype(np.int64)
    # inclusive weights that are at least the children's
    incl = rng.integers(0, 50, (n, 3)).astype(np.int64)
    for i in range(n - 1, 0, -1):
        if parent[i] >= 0:
            incl[parent[i]] += incl[i]
    own = rng.integers(0, 3, (n, 2)).astype(np.int64)
    flags = rng.integers(0, 16, n).astype(np.int64)
    return MT.Tree(parent, key, depth, calls, incl, own, flags)


def focus_masks(rng, tree: MT.Tree, p: float) -> tuple[np.ndarray, np.ndarray]:
    """(root, kept) as the focus transforms make them: roots with no root above them, kept
    exactly the roots' subtrees (what :meth:`Tree.remerge` expects)."""
    n = len(tree)
    candidate = rng.random(n) < p
    root = np.zeros(n, bool)
    kept = np.zeros(n, bool)
    for i in range(n):
        q = int(tree.parent[i])
        if q >= 0 and kept[q]:
            kept[i] = True
        elif candidate[i]:
            root[i] = kept[i] = True
    return root, kept


@pytest.mark.parametrize("seed", range(12))
def test_remerge_equals_the_path_by_path_version_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    tree = random_tree(rng, n, int(rng.integers(1, 8)))
    check_remerge(tree)                                        # merging identical paths only
    for p_hidden in (0.02, 0.3, 0.8):
        visible = rng.random(n) >= p_hidden
        derived = check_remerge(tree, visible=visible)
        # a transformed tree transformed again (32-bit columns, weights by column)
        check_remerge(derived, visible=rng.random(len(derived)) >= p_hidden)
        check_table(derived)
        for p_root in (0.01, 0.1, 0.5):
            root, kept = focus_masks(rng, tree, p_root)
            check_remerge(tree, visible=visible, root=root, kept=kept)
            check_remerge(tree, root=root, kept=kept)
    check_table(tree)


def test_remerge_edge_cases():
    rng = np.random.default_rng(99)
    tree = random_tree(rng, 50, 3)
    n = len(tree)
    only_roots = np.asarray(tree.parent) < 0
    check_remerge(tree, visible=np.zeros(n, bool))                      # nothing visible: empty
    check_remerge(tree, root=np.zeros(n, bool), kept=np.zeros(n, bool))  # nothing kept: empty
    check_remerge(tree, root=only_roots, kept=np.ones(n, bool))           # the roots made roots
    check_remerge(tree, visible=only_roots)
    check_remerge(tree, visible=~only_roots)                            # roots hidden: children become roots
    chain = MT.Tree(np.array([-1, 0, 1, 2, 3]), np.array([5, 5, 5, 5, 5]), np.arange(5), np.ones(5, np.int64),
                    np.array([[50, 5, 500], [40, 4, 400], [30, 3, 300], [20, 2, 200], [10, 1, 100]]),
                    np.ones((5, 2), np.int64), np.array([1, 2, 4, 8, 16]))
    got = check_remerge(chain, visible=np.array([True, False, True, False, True]))
    assert got.same_key_ancestor.tolist() == [-1, 0, 1]
    empty = MT.Tree(*(np.zeros(0, np.int64) for _ in range(4)), np.zeros((0, 3), np.int64),
                    np.zeros((0, 2), np.int64), np.zeros(0, np.int64))
    assert len(empty.remerge()) == 0


def test_exception_counts_stay_64_bit_when_their_sum_may_not_fit():
    rng = np.random.default_rng(5)
    tree = random_tree(rng, 40, 3)
    tree.own_counts[0, 0] = 2**31 - 5
    got = check_remerge(tree, visible=rng.random(40) >= 0.5)
    assert got.own_counts.dtype == np.int64
    small = check_remerge(random_tree(rng, 40, 3), visible=rng.random(40) >= 0.5)
    assert small.own_counts.dtype == np.int32


# ---------------------------------------------------------------------- a recorded program


@pytest.fixture(scope="module")
def analysis(record, default_jdk) -> Analysis:
    result = record("aggregate", default_jdk)
    assert result.exit_code == 0, result.describe()
    return Analysis.open(result.trace_dir)


def test_remerge_equals_the_path_by_path_version_on_a_recorded_program(analysis):
    view = TR.AggregateView(analysis)
    base = view.base()
    rng = np.random.default_rng(3)
    n = len(base)
    mine = Scope.of_trace(analysis).key_mask(int(base.key.max()) + 1)
    check_remerge(base, visible=TR._mine_or_entered(base.parent, base.key, mine))
    hot = int(base.key[int(np.argmax(base.own("bytecodes")))])
    check_remerge(base, visible=np.asarray(base.key) != hot)
    for p_hidden in (0.01, 0.5):
        root, kept = focus_masks(rng, base, 0.01)
        check_remerge(base, visible=rng.random(n) >= p_hidden, root=root, kept=kept)
        check_remerge(base, visible=rng.random(n) >= p_hidden)
    check_table(base, analysis.statics)
    for stack in ((TR.Transform("only-my-code"),), (TR.Transform("merge", hot),),
                  (TR.Transform("only-my-code"), TR.Transform("collapse-recursion")),
                  (TR.Transform("focus-method", hot),)):
        check_table(view.tree(stack), analysis.statics)


def test_methods_table_of_a_transformed_tree_equals_the_reference(analysis):
    """The whole table (names, rows dropped when empty, totals) against the reference sums."""
    view = TR.AggregateView(analysis)
    tree = view.tree((TR.Transform("only-my-code"),))
    table = MTab.compute(tree, analysis.statics)
    keys, dense = tree._key_space()
    names, row_keys, row_of_dense = MTab._rows(analysis.statics, keys, "method")
    row_of_key = np.zeros(len(dense), np.int64)
    row_of_key[keys] = row_of_dense
    want = reference_table(tree, row_of_key, len(names))
    present = want[:, 0] > 0
    assert table.names == [names[i] for i in np.flatnonzero(present)]
    where = {"calls": 0, "self_bytecodes": 1, "self_blocks": 2, "self_time": 3, "total_bytecodes": 4,
             "total_blocks": 5, "total_time": 6, "thrown": 7, "caught": 8}
    for c in MTab.COLUMNS:
        assert table.columns[c].tolist() == want[present, where[c]].tolist(), c
    assert table.run == {"bytecodes": int(tree.inclusive()[tree.roots].sum()),
                         "blocks": int(tree.inclusive("blocks")[tree.roots].sum()),
                         "time": int(tree.inclusive("time")[tree.roots].sum()), "calls": int(np.sum(tree.calls))}
