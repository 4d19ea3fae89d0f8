"""The aggregated views' model on a recorded program with a known call structure
(tests/programs/aggregate): merged trees, methods table, callers, butterfly, transforms and only my
code, each checked against the per-invocation call table (an oracle written as a plain loop over
the calls) or against counts the program fixes."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from jbgui.model import cct as CCT
from jbgui.model import flame
from jbgui.model import merged_tree as MT
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.model.analysis import Analysis, Flag
from jbgui.model.method_names import resolve_methods
from jbgui.model.scope import Scope, ScopeRules


@pytest.fixture(scope="module")
def run(record, default_jdk):
    result = record("aggregate", default_jdk)
    assert result.exit_code == 0, result.describe()
    assert result.stdout.strip() == "60 720 a,bb,ccc,dddd"
    return result


@pytest.fixture(scope="module")
def analysis(run) -> Analysis:
    return Analysis.open(run.trace_dir)


@pytest.fixture(scope="module")
def view(analysis) -> TR.AggregateView:
    return TR.AggregateView(analysis)


def mid(analysis, spec: str) -> int:
    return resolve_methods(analysis.statics, spec, single=True)[0]


def main_thread(analysis):
    return next(t for t in analysis.threads if t.name == "main")


def call_keys(thread) -> np.ndarray:
    calls = thread.calls
    synthetic = (np.asarray(calls.flags) & (Flag.NATIVE | Flag.UNTRACED)) != 0
    return np.where(synthetic, CCT.SYNTHETIC_KEY + np.asarray(calls.call_site, np.int64),
                    np.asarray(calls.method, np.int64))


def oracle_paths(thread, visible=None) -> dict[tuple, list[int]]:
    """Per path of keys (of visible calls): [calls, inclusive bytecodes] — one loop over calls."""
    calls = thread.calls
    keys = call_keys(thread)
    parent = np.asarray(calls.parent)
    incl = np.asarray(calls.incl_bytecodes)
    path: dict[int, tuple] = {}
    out: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for r in range(len(calls)):
        p = int(parent[r])
        base = path[p] if p >= 0 else ()
        if visible is None or visible[r]:
            path[r] = base + (int(keys[r]),)
            entry = out[path[r]]
            entry[0] += 1
            entry[1] += int(incl[r])
        else:
            path[r] = base
    return dict(out)


def tree_rows(thread, tree: MT.Tree) -> np.ndarray:
    """The tree's node of each call (by the path of keys from the root)."""
    calls = thread.calls
    keys = call_keys(thread)
    parent = np.asarray(calls.parent)
    node_of = {tree.path(n): n for n in range(len(tree))}
    path: dict[int, tuple] = {}
    out = np.empty(len(calls), np.int64)
    for r in range(len(calls)):
        p = int(parent[r])
        path[r] = (path[p] if p >= 0 else ()) + (int(keys[r]),)
        out[r] = node_of[path[r]]
    return out


def tree_paths(tree: MT.Tree) -> dict[tuple, list[int]]:
    incl = tree.inclusive("bytecodes")
    return {tree.path(n): [int(tree.calls[n]), int(incl[n])] for n in range(len(tree))}


# ---------------------------------------------------------------------- merged tree


def test_thread_tree_equals_the_calls_aggregated_by_path(analysis, view):
    for thread in analysis.threads:
        tree = view.base(thread.index)
        assert tree_paths(tree) == oracle_paths(thread)
        assert int(tree.calls.sum()) == len(thread.calls)


def test_run_tree_merges_identical_paths_of_every_thread(analysis, view):
    expected: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for thread in analysis.threads:
        for path, (c, b) in oracle_paths(thread).items():
            expected[path][0] += c
            expected[path][1] += b
    assert tree_paths(view.base()) == dict(expected)


def _built(analysis) -> dict[str, np.ndarray]:
    _run, arrays = CCT.build_run(analysis.threads)
    return arrays


@pytest.mark.parametrize("stored", [True, False], ids=["stored-columns", "columns-in-memory"])
def test_tiny_local_trees_build_the_same_trees(analysis, monkeypatch, stored):
    """The builder merges a local tree into the thread's tree on another thread while the next one
    fills (cct's docstring): with local trees of 16 nodes (pieces of 50 rows for columns in memory)
    every kind of parent, a call closed in a later tree, a merge per few dozen calls, the trees
    equal those built with one local tree, and the calls aggregated by path."""
    expected = _built(analysis)
    assert CCT.LOCAL_NODES > max(len(t.calls) for t in analysis.threads)      # one local tree above
    monkeypatch.setattr(CCT, "LOCAL_NODES", 16)
    if not stored:
        monkeypatch.setattr(CCT, "_stored_reader", lambda calls: None)
        monkeypatch.setattr(CCT, "PIECE_ROWS", 50)
    got = _built(analysis)
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert np.array_equal(got[name], expected[name]), name
    # many local trees filled: the main thread's tree has far more nodes than one holds
    assert len(main_thread(analysis).calls) > 10_000 and len(expected["key"]) > 20 * 16


def test_time_and_exceptions_are_summed_per_context(analysis, view):
    thread = main_thread(analysis)
    tree = view.base(thread.index)
    calls = thread.calls
    # a context's time is its calls' times from their first event to their last (a native that
    # blocked: its stamps), each rounded to a nanosecond
    start, end = thread.axis.weight_rows(np.asarray(calls.first), np.asarray(calls.last), np.asarray(calls.flags))
    spans = np.maximum(np.rint(thread.axis.times(end) - thread.axis.times(start)), 0)
    assert int(tree.inclusive("time")[tree.roots].sum()) == int(spans[np.asarray(calls.depth) == 0].sum())
    node_of_row = tree_rows(thread, tree)
    for node in range(min(len(tree), 200)):
        rows = np.flatnonzero(node_of_row == node)
        assert int(tree.inclusive("time")[node]) == int(spans[rows].sum()), node
    exc = thread.exceptions
    assert int(tree.thrown.sum()) == int(np.count_nonzero(exc["throw_row"] >= 0))


def test_leaf_is_called_three_times_by_a_and_five_times_by_b(analysis, view):
    tree = view.base(main_thread(analysis).index)
    leaf, a, b = mid(analysis, "Main.leaf"), mid(analysis, "Main.a"), mid(analysis, "Main.b")
    by_caller = {int(tree.key[tree.parent[n]]): int(tree.calls[n]) for n in tree.nodes_of(leaf)}
    assert by_caller == {a: 3, b: 5}


# ---------------------------------------------------------------------- methods table


def test_methods_table_equals_the_call_table(analysis, view):
    thread = main_thread(analysis)
    table = MTab.compute(view.base(thread.index), analysis.statics)
    calls = thread.calls
    keys = call_keys(thread)
    own = calls.excl_bytecodes()
    incl = np.asarray(calls.incl_bytecodes)
    parent = np.asarray(calls.parent)
    # oracle: total counts a call only when no ancestor is a call of the same row; rows are per
    # name (native calls to one target from several call sites share a row)
    names = {int(k): MT.key_name(analysis.statics, int(k)) for k in np.unique(keys)}
    expected: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    stack_names: dict[int, frozenset] = {}
    for r in range(len(calls)):
        p = int(parent[r])
        above = stack_names[p] if p >= 0 else frozenset()
        name = names[int(keys[r])]
        entry = expected[name]
        entry[0] += 1
        entry[1] += int(own[r])
        if name not in above:
            entry[2] += int(incl[r])
        stack_names[r] = above | {name}
    assert set(table.names) == set(expected)
    for i, name in enumerate(table.names):
        assert [table.columns["calls"][i], table.columns["self_bytecodes"][i],
                table.columns["total_bytecodes"][i]] == expected[name], name


def test_recursion_is_counted_once_in_a_total(analysis, view):
    thread = main_thread(analysis)
    table = MTab.compute(view.base(thread.index), analysis.statics)
    fact = mid(analysis, "Main.fact")
    i = int(np.flatnonzero(table.keys == fact)[0])
    rows = np.flatnonzero(np.asarray(thread.calls.method) == fact)
    assert table.columns["calls"][i] == len(rows) == 6
    outermost = rows[0]
    assert table.columns["total_bytecodes"][i] == int(thread.calls.incl_bytecodes[outermost])
    assert table.columns["total_bytecodes"][i] < int(np.asarray(thread.calls.incl_bytecodes)[rows].sum())


def test_class_and_package_groups_sum_the_methods(analysis, view):
    tree = view.base(main_thread(analysis).index)
    methods = MTab.compute(tree, analysis.statics, "method")
    classes = MTab.compute(tree, analysis.statics, "class")
    packages = MTab.compute(tree, analysis.statics, "package")
    for t in (classes, packages):
        assert t.columns["calls"].sum() == methods.columns["calls"].sum()
        assert t.columns["self_bytecodes"].sum() == methods.columns["self_bytecodes"].sum()
    main_row = classes.names.index("Main")
    own_rows = [i for i, n in enumerate(methods.names) if n.startswith("Main.")]
    assert classes.columns["calls"][main_row] == sum(methods.columns["calls"][i] for i in own_rows)
    # Main.main encloses every other Main method: the class's total is main's total
    main_method = methods.names.index("Main.main([Ljava/lang/String;)V")
    assert classes.columns["total_bytecodes"][main_row] == methods.columns["total_bytecodes"][main_method]


def test_filter_and_sort(analysis, view):
    table = MTab.compute(view.base(), analysis.statics)
    hits = table.matching("main.leaf")
    assert [table.names[i] for i in hits] == ["Main.leaf(I)I"]
    assert len(table.matching(r"^Main\.(a|b)\(", regex=True)) == 2
    order = table.order("calls")
    values = table.columns["calls"][order]
    assert (np.diff(values) <= 0).all()


# ---------------------------------------------------------------------- callers, butterfly


def test_callers_tree_of_leaf(analysis, view):
    tree = view.base(main_thread(analysis).index)
    inv = MT.InvertedTree(tree)
    leaf, a, b = mid(analysis, "Main.leaf"), mid(analysis, "Main.a"), mid(analysis, "Main.b")
    item = next(r for r in inv.roots() if r.keys == (leaf,))
    assert item.calls == 8
    assert item.self_weight == int(tree.own()[tree.nodes_of(leaf)].sum())
    callers = {c.keys[-1]: c for c in inv.callers(item)}
    assert set(callers) == {a, b}
    assert callers[a].calls == 3 and callers[b].calls == 5
    assert callers[a].self_weight + callers[b].self_weight == item.self_weight
    main = mid(analysis, "Main.main")
    assert [c.keys for c in inv.callers(callers[a])] == [(leaf, a, main)]
    # roots are ordered by own weight
    weights = [r.self_weight for r in inv.roots()]
    assert weights == sorted(weights, reverse=True)


def test_butterfly_of_leaf_and_of_a(analysis, view):
    tree = view.base(main_thread(analysis).index)
    leaf, a, b = mid(analysis, "Main.leaf"), mid(analysis, "Main.a"), mid(analysis, "Main.b")
    bf = MT.butterfly(tree, leaf)
    assert {n.key: n.calls for n in bf["callers"]} == {a: 3, b: 5}
    assert bf["callees"] == []
    assert bf["calls"] == 8
    bf_a = MT.butterfly(tree, a)
    assert {n.key: n.calls for n in bf_a["callees"]} == {leaf: 3}
    leaf_under_a = tree.nodes_of(leaf)[tree.key[tree.parent[tree.nodes_of(leaf)]] == a]
    assert bf_a["callees"][0].weight == int(tree.inclusive()[leaf_under_a].sum())
    assert bf_a["self"] + bf_a["callees"][0].weight == bf_a["total"]


# ---------------------------------------------------------------------- transforms


def test_merge_method_charges_callees_to_the_caller(analysis, view):
    thread = main_thread(analysis)
    a = mid(analysis, "Main.a")
    merged = view.tree((TR.Transform("merge", a),), thread.index)
    keys = call_keys(thread)
    assert tree_paths(merged) == oracle_paths(thread, visible=keys != a)
    base = view.base(thread.index)
    main = mid(analysis, "Main.main")
    main_node = base.nodes_of(main)[0]
    a_node = base.nodes_of(a)[0]
    main_after = merged.nodes_of(main)[0]
    assert merged.own()[main_after] == base.own()[main_node] + base.own()[a_node]
    leaf = mid(analysis, "Main.leaf")
    under_main = [n for n in merged.nodes_of(leaf) if merged.key[merged.parent[n]] == main]
    assert [int(merged.calls[n]) for n in under_main] == [3]
    assert merged.total() == base.total()


def test_focus_method_makes_its_invocations_roots(analysis, view):
    thread = main_thread(analysis)
    leaf = mid(analysis, "Main.leaf")
    fact = mid(analysis, "Main.fact")
    focused = view.tree((TR.Transform("focus-method", leaf),), thread.index)
    assert len(focused.roots) == 1 and focused.key[focused.roots[0]] == leaf
    assert focused.calls[focused.roots[0]] == 8
    # recursion: only the outermost fact is a root, the inner ones stay below it
    on_fact = view.tree((TR.Transform("focus-method", fact),), thread.index)
    assert [int(on_fact.calls[r]) for r in on_fact.roots] == [1]
    assert int(on_fact.calls.sum()) == 6
    assert on_fact.total() == int(thread.calls.incl_bytecodes[np.flatnonzero(np.asarray(thread.calls.method) == fact)[0]])


def test_focus_subtree_keeps_one_context(analysis, view):
    thread = main_thread(analysis)
    base = view.base(thread.index)
    b = mid(analysis, "Main.b")
    node = int(base.nodes_of(b)[0])
    focused = view.tree((TR.Transform("focus-subtree", path=base.path(node)),), thread.index)
    assert focused.path(int(focused.roots[0])) == (b,)
    assert len(focused.roots) == 1
    assert focused.total() == int(base.inclusive()[node])
    assert int(focused.calls.sum()) == 1 + 5


def test_collapse_recursion(analysis, view):
    thread = main_thread(analysis)
    fact = mid(analysis, "Main.fact")
    for transform in (TR.Transform("collapse-recursion"), TR.Transform("collapse-recursion", fact)):
        collapsed = view.tree((transform,), thread.index)
        nodes = collapsed.nodes_of(fact)
        assert len(nodes) == 1
        assert int(collapsed.calls[nodes[0]]) == 1
        assert collapsed.own()[nodes[0]] == collapsed.inclusive()[nodes[0]]
        assert collapsed.total() == view.base(thread.index).total()


def test_transform_stack_is_applied_in_order(analysis, view):
    thread = main_thread(analysis)
    leaf, a = mid(analysis, "Main.leaf"), mid(analysis, "Main.a")
    stack = (TR.Transform("merge", a), TR.Transform("focus-method", leaf))
    tree = view.tree(stack, thread.index)
    assert int(tree.calls.sum()) == 8
    # a prefix is served from the cache
    assert view.tree(stack[:1], thread.index) is view.tree(stack[:1], thread.index)


# ---------------------------------------------------------------------- only my code


def test_mine_is_the_class_path_directory(analysis):
    scope = Scope.of_trace(analysis)
    st = analysis.statics
    mine = {st.c_name[c] for c in np.flatnonzero(scope.class_mask)}
    assert "Main" in mine
    assert not any(n.startswith("java/") for n in mine)
    assert all(n == "Main" or n.startswith("Main$") for n in mine), mine
    with_rules = scope.with_rules(ScopeRules(include=("java.util.Arrays",), exclude=("Main",)))
    assert with_rules.method_mask[mid(analysis, "java.util.Arrays.sort([Ljava/lang/Object;Ljava/util/Comparator;)")]
    assert not with_rules.method_mask[mid(analysis, "Main.leaf")]


def test_only_my_code_collapses_runs_of_jdk_frames(analysis, view):
    thread = main_thread(analysis)
    scope = view.scope
    keys = call_keys(thread)
    mine_key = scope.key_mask(int(keys.max()) + 1)[keys]
    parent = np.asarray(thread.calls.parent)
    visible = mine_key | (parent < 0)
    visible[parent >= 0] |= mine_key[parent[parent >= 0]]
    tree = view.tree((TR.Transform("only-my-code"),), thread.index)
    assert tree_paths(tree) == oracle_paths(thread, visible=visible)
    assert tree.total() == view.base(thread.index).total()
    # Arrays.sort is shown as the call my code made, with its inclusive weight; the JDK frames
    # under it are gone, and my comparator (called back from the JDK) sits right under it
    sort = mid(analysis, "java.util.Arrays.sort([Ljava/lang/Object;Ljava/util/Comparator;)")
    (sort_node,) = tree.nodes_of(sort)
    sort_rows = np.flatnonzero(np.asarray(thread.calls.method) == sort)
    assert int(tree.inclusive()[sort_node]) == int(thread.calls.incl_bytecodes[sort_rows[0]])
    below = {MT.key_name(analysis.statics, int(tree.key[c])) for c in tree.children(sort_node)}
    assert below and all(name.startswith("Main") for name in below), below
    compare = mid(analysis, "Main.compareLengths")
    assert int(tree.calls[tree.nodes_of(compare)].sum()) == int(np.count_nonzero(np.asarray(thread.calls.method) == compare))
    # println is a leaf: nothing of mine below it
    println = [n for n in range(len(tree)) if MT.key_name(analysis.statics, int(tree.key[n])).startswith("java.io.PrintStream.println")]
    assert println and all(len(tree.children(n)) == 0 for n in println)


def test_only_my_code_methods_table_keeps_the_entered_jdk_calls(analysis, view):
    tree = view.tree((TR.Transform("only-my-code"),), main_thread(analysis).index)
    table = MTab.compute(tree, analysis.statics)
    names = set(table.names)
    assert "Main.leaf(I)I" in names
    assert "java.util.Arrays.sort([Ljava/lang/Object;Ljava/util/Comparator;)V" in names
    assert not any(n.startswith("java.util.TimSort") or n.startswith("java.util.ComparableTimSort") for n in names)


# ---------------------------------------------------------------------- flame graph


def test_flame_layout_nests_children_inside_parents(analysis, view):
    tree = view.base(main_thread(analysis).index)
    for weight in MT.WEIGHTS:
        lay = flame.layout(tree, weight)
        p = tree.parent
        has = p >= 0
        assert (lay.x[has] >= lay.x[p[has]]).all()
        assert (lay.x[has] + lay.width[has] <= lay.x[p[has]] + lay.width[p[has]]).all()
        assert lay.total == tree.total(weight)
    lay = flame.layout(tree)
    main = int(tree.nodes_of(mid(analysis, "Main.main"))[0])
    rects = lay.rects(zoom=main)
    assert rects["x"].min() == 0 and (rects["x"] + rects["width"]).max() == lay.width[main]
    assert rects["depth"].min() == 0
    x, w, d = lay.frame(main)
    assert lay.at(x + w // 2, d) in (main, *[int(c) for c in tree.children(tree.parent[main])])


def test_flame_rects_merge_frames_narrower_than_a_pixel(analysis, view):
    tree = view.base()
    lay = flame.layout(tree)
    everything = lay.rects()
    coarse = lay.rects(min_width=lay.total / 100)
    assert len(coarse["x"]) < len(everything["x"])
    assert (coarse["width"][coarse["node"] >= 0] >= lay.total / 100).all()
    assert (coarse["key"] == flame.MERGED_KEY).any()


def test_flame_of_one_calls_subtree(analysis):
    thread = main_thread(analysis)
    b = mid(analysis, "Main.b")
    row = int(np.flatnonzero(np.asarray(thread.calls.method) == b)[0])
    tree = flame.call_subtree_tree(thread, row)
    assert tree.total() == int(thread.calls.incl_bytecodes[row])
    assert int(tree.calls.sum()) == 6
    assert tree.path(int(tree.roots[0])) == (b,)


def test_butterfly_of_a_recursive_method_counts_each_stack_once(analysis, view):
    tree = view.base(main_thread(analysis).index)
    fact = mid(analysis, "Main.fact")
    bf = MT.butterfly(tree, fact)
    assert sum(n.weight for n in bf["callers"]) == bf["total"]
    by_key = {n.key: n for n in bf["callers"]}
    assert by_key[fact].calls == 5 and by_key[fact].weight == 0        # the nested calls
    assert by_key[mid(analysis, "Main.main")].calls == 1
    assert {n.key: n.calls for n in bf["callees"]}[fact] == 5


def test_the_cached_run_table_equals_the_computed_one(analysis):
    fresh = TR.AggregateView(analysis)
    computed = MTab.compute(fresh.base(), analysis.statics)
    for _ in range(2):      # computed and stored, then read back
        cached = MTab.for_view(TR.AggregateView(analysis))
        assert cached.names == computed.names
        assert (cached.keys == computed.keys).all()
        for c in MTab.COLUMNS:
            assert (cached.columns[c] == computed.columns[c]).all(), c
        assert cached.run == computed.run


def test_callers_tree_shows_native_calls_to_one_target_as_one_method(analysis, view):
    tree = view.base(main_thread(analysis).index)
    canonical = MT.canonical_keys(analysis.statics, tree.dense_keys[0])
    inv = MT.InvertedTree(tree, canonical=canonical)
    names = [MT.key_name(analysis.statics, r.keys[0]) for r in inv.roots()]
    assert len(names) == len(set(names))
    table = MTab.compute(tree, analysis.statics)
    by_name = {MT.key_name(analysis.statics, r.keys[0]): r for r in inv.roots()}
    for i, name in enumerate(table.names):
        assert by_name[name].calls == table.columns["calls"][i]
        assert by_name[name].self_weight == table.columns["self_bytecodes"][i]


def test_outermost_carried_through_transforms_equals_a_fresh_walk(analysis, view):
    a, fact = mid(analysis, "Main.a"), mid(analysis, "Main.fact")
    for stack in ((TR.Transform("only-my-code"),), (TR.Transform("merge", a),), (TR.Transform("focus-method", fact),),
                  (TR.Transform("only-my-code"), TR.Transform("collapse-recursion"))):
        tree = view.tree(stack)
        fresh = MT.Tree(tree.parent, tree.key, tree.depth, tree.calls, tree.incl, tree.own_counts, tree.flags)
        assert (tree.same_key_ancestor == fresh.same_key_ancestor).all(), stack


def test_flame_rects_lay_out_only_what_is_visible_exactly(analysis, view):
    """The visible-only layout draws exactly the frames a full layout places at least a pixel
    wide inside the zoomed frame, at the same positions, and merges the narrower children of
    drawn frames into pixel columns covering the same total width."""
    tree = view.base()
    lay = flame.layout(tree)
    x, width, depth, parent = lay.x, lay.width, np.asarray(lay.depth, np.int64), tree.parent
    for zoom in [-1, *[int(n) for n in tree.children(int(tree.roots[np.argmax(width[tree.roots])]))][:3]]:
        base_x = int(x[zoom]) if zoom >= 0 else 0
        base_d = int(depth[zoom]) if zoom >= 0 else 0
        span = int(width[zoom]) if zoom >= 0 else lay.total
        inside = np.ones(len(tree), np.bool_) if zoom < 0 else (
            (x >= base_x) & (x < base_x + span) & (depth >= base_d))
        for pixels in (10, 100, 1000, 10**9):
            step = max(span / pixels, 1)
            got = lay.rects(zoom=zoom, min_width=span / pixels)
            want = np.flatnonzero(inside & (width >= step))
            drawn = got["node"] >= 0
            assert sorted(got["node"][drawn].tolist()) == want.tolist()
            order = np.argsort(got["node"][drawn])
            assert (got["x"][drawn][order] == x[want] - base_x).all()
            assert (got["depth"][drawn][order] == depth[want] - base_d).all()
            is_drawn = np.zeros(len(tree), np.bool_)
            is_drawn[want] = True
            small = np.flatnonzero((width < step) & (width > 0) & (parent >= 0))
            small = small[is_drawn[parent[small]]]
            # merged rectangles: one per (row, pixel column) that has narrow frames
            buckets = {(int(d), int((xx - base_x) // step)) for d, xx in zip(depth[small] - base_d, x[small])}
            assert int((~drawn).sum()) == len(buckets)
