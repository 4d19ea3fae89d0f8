"""Kernel unit tests of the merged tree's re-merge on small hand-made trees, where hidden nodes
make paths collide (the recorded programs rarely do): weights must add up exactly."""

from __future__ import annotations

import numpy as np

from jbgui.model import merged_tree as MT
from jbgui.model import transforms as TR


def tree(parent, key, calls, incl):
    n = len(parent)
    inc = np.zeros((n, 3), np.int64)
    inc[:, 0] = incl
    inc[:, 1] = np.asarray(incl) // 2
    inc[:, 2] = np.asarray(incl) * 10
    own = np.zeros((n, 2), np.int64)
    own[:, 0] = np.arange(n)
    return MT.Tree(np.asarray(parent, np.int64), np.asarray(key, np.int64),
                   np.zeros(n, np.int64), np.asarray(calls, np.int64), inc, own, np.zeros(n, np.int64))


def fix_depth(t: MT.Tree) -> MT.Tree:
    for i in range(len(t)):
        t.depth[i] = 0 if t.parent[i] < 0 else t.depth[t.parent[i]] + 1
    return t


# R(1) ─ A(2) ─ X(9) ─ B(3) ─ C(4)
#          └─── B(3) ─ D(5)
#          └─── X(9) ... (same node as above)
SAMPLE = dict(parent=[-1, 0, 1, 2, 3, 1, 5], key=[1, 2, 9, 3, 4, 3, 5], calls=[1, 2, 3, 4, 5, 6, 7],
              incl=[100, 90, 40, 30, 10, 45, 20])


def test_merging_a_method_merges_the_paths_it_separated():
    t = fix_depth(tree(**SAMPLE))
    merged = TR.merge_method(t, 9)
    paths = {merged.path(n): (int(merged.calls[n]), int(merged.inclusive()[n]), int(merged.thrown[n]))
             for n in range(len(merged))}
    assert paths == {
        (1,): (1, 100, 0), (1, 2): (2, 90, 1 + 2),          # X's own count goes to A
        (1, 2, 3): (4 + 6, 30 + 45, 3 + 5), (1, 2, 3, 4): (5, 10, 4), (1, 2, 3, 5): (7, 20, 6)}
    assert merged.total() == t.total()
    # own bytecodes: A keeps what X did itself (40 - 30)
    a = merged.find_path((1, 2))
    assert merged.own()[a] == 90 - 40 - 45 + (40 - 30)
    assert merged.inclusive("blocks")[a] == 45 and merged.inclusive("time")[a] == 900


def test_collapsing_direct_recursion_keeps_the_outermost_frame():
    # R ─ F ─ F ─ F ─ G
    t = fix_depth(tree(parent=[-1, 0, 1, 2, 3], key=[1, 7, 7, 7, 8], calls=[1, 1, 1, 1, 1],
                       incl=[50, 40, 30, 20, 5]))
    c = TR.collapse_recursion(t)
    assert {c.path(n): int(c.calls[n]) for n in range(len(c))} == {(1,): 1, (1, 7): 1, (1, 7, 8): 1}
    f = c.find_path((1, 7))
    assert c.inclusive()[f] == 40 and c.own()[f] == 35


def test_focus_on_a_method_with_nested_invocations():
    # R ─ F ─ X ─ F ─ Y ; R ─ Z ─ F
    t = fix_depth(tree(parent=[-1, 0, 1, 2, 3, 0, 5], key=[1, 7, 2, 7, 3, 4, 7], calls=[1] * 7,
                       incl=[100, 60, 50, 40, 10, 30, 25]))
    f = TR.focus_method(t, 7)
    assert {f.path(n): int(f.calls[n]) for n in range(len(f))} == {(7,): 2, (7, 2): 1, (7, 2, 7): 1,
                                                                   (7, 2, 7, 3): 1}
    assert f.total() == 60 + 25
    assert f.outermost().tolist() == [True, True, False, True]


def test_concat_then_remerge_merges_identical_paths_of_two_threads():
    a = fix_depth(tree(parent=[-1, 0], key=[1, 2], calls=[1, 3], incl=[10, 4]))
    b = fix_depth(tree(parent=[-1, 0, 0], key=[1, 2, 5], calls=[2, 1, 1], incl=[20, 6, 3]))
    m = MT.Tree.concat([a, b]).remerge()
    assert {m.path(n): (int(m.calls[n]), int(m.inclusive()[n])) for n in range(len(m))} == {
        (1,): (3, 30), (1, 2): (4, 10), (1, 5): (1, 3)}


def test_same_key_ancestors_after_transforms_equal_a_fresh_walk():
    # R ─ F ─ X ─ F ─ X ─ F ; R ─ X ─ F
    t = fix_depth(tree(parent=[-1, 0, 1, 2, 3, 4, 0, 6], key=[1, 7, 2, 7, 2, 7, 2, 7], calls=[1] * 8,
                       incl=[100, 60, 50, 40, 30, 20, 30, 10]))
    assert t.same_key_ancestor.tolist() == [-1, -1, -1, 1, 2, 3, -1, -1]
    for derived in (TR.merge_method(t, 2), TR.focus_method(t, 2), TR.collapse_recursion(t, 7),
                    TR.only_my_code(t, np.array([False, True, False] + [False] * 4 + [True]))):
        carried = derived.same_key_ancestor.copy()
        fresh = MT.Tree(derived.parent, derived.key, derived.depth, derived.calls, derived.incl,
                        derived.own_counts, derived.flags)
        assert carried.tolist() == fresh.same_key_ancestor.tolist()


def test_outermost_rows_equals_a_depth_first_walk_on_random_trees():
    """Rows of one key use the nearest same-key ancestor; rows shared by several keys walk the
    chain of shared-row ancestors: both equal the depth-first walk's answer."""
    from jbgui.model import merged_tree as MT
    from jbgui.model import methods_table as MTab

    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(1, 400))
        parent = np.array([-1 if i == 0 or rng.random() < 0.05 else int(rng.integers(0, i)) for i in range(n)], np.int64)
        key = rng.integers(1, 12, n).astype(np.int64)
        z = np.zeros(n, np.int64)
        tree = MT.Tree(parent, key, z, np.ones(n, np.int64), np.zeros((n, 3), np.int64), np.zeros((n, 2), np.int64), z)
        row_of_key = np.array([0, 0, 1, 2, 2, 2, 3, 4, 5, 6, 6, 7], np.int64)   # rows 0, 2, 6 shared
        row = row_of_key[key]
        shared = np.bincount(row_of_key[1:], minlength=8) > 1
        got = MTab._outermost_rows(parent, tree.same_key_ancestor, row, shared)
        assert got.tolist() == tree.outermost(row).tolist()
