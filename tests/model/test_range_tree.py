"""The merged tree of a timeline range on a trace the agent records (exception_paths), checked
against independent answers: a range that is exactly one call gives that call's subtree, the
whole run gives the thread's tree, and any range's tree holds exactly the calls range_stats counts
as contained, with the same own bytecodes (counted row by row in the test)."""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model import cct as CCT
from jbgui.model import flame
from jbgui.model import merged_tree as MT
from jbgui.model import range_stats as RS
from jbgui.model import range_tree as RT
from jbgui.model import replay_kernel as K
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def exceptions(program_runs, default_jdk) -> Analysis:
    _untraced, run = program_runs("exception_paths", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


def paths(tree: MT.Tree) -> dict[tuple[int, ...], tuple[int, int, int, int]]:
    return {tree.path(n): (int(tree.calls[n]), int(tree.inclusive("bytecodes")[n]),
                           int(tree.inclusive("blocks")[n]), int(tree.thrown[n]))
            for n in range(len(tree))}


def test_a_range_of_one_call_is_that_calls_subtree(exceptions):
    a = exceptions
    main = a.thread("main")
    calls = main.calls
    # a call with callees, thrown exceptions inside, not the outermost
    depth = np.asarray(calls.depth)
    sizes = np.asarray(calls.end) - np.arange(len(calls))
    row = int(np.flatnonzero((depth >= 1) & (sizes > 5))[0])
    start, stop = float(calls.first[row]), float(calls.last[row]) + 1
    tree = RT.range_tree(a, start, stop, use_clock=False, threads=[main.index])
    expected = flame.call_subtree_tree(main, row)
    assert len(tree) == len(expected) > 5
    assert paths(tree) == paths(expected)


def test_the_whole_run_is_the_threads_tree(exceptions):
    a = exceptions
    main = a.thread("main")
    main.cct    # kept first by the thread, as the explorer's summary does: the same tree, exceptions included
    tree = RT.range_tree(a, 0, float(np.asarray(main.calls.last).max()) + 10, use_clock=False, threads=[main.index])
    assert paths(tree) == paths(MT.thread_tree(main))


def test_any_range_holds_the_contained_calls(exceptions):
    a = exceptions
    main = a.thread("main")
    calls = main.calls
    first, last = np.asarray(calls.first), np.asarray(calls.last)
    n_events = int(last.max()) + 1
    for lo, hi in ((0.25, 0.5), (0.1, 0.9), (0.6, 0.61)):
        start, stop = lo * n_events, hi * n_events
        tree = RT.range_tree(a, start, stop, use_clock=False, threads=[main.index])
        e0, e1 = RS.event_range(main, start, stop, use_clock=False)
        inside = [r for r in range(len(calls)) if e0 <= first[r] and last[r] < e1]   # the slow way
        outermost = [r for r in inside if not (e0 <= first[calls.parent[r]] and last[calls.parent[r]] < e1)
                     or calls.parent[r] < 0]
        assert int(tree.calls.sum()) == len(inside) > 0
        assert tree.total("bytecodes") == sum(int(calls.incl_bytecodes[r]) for r in outermost)
        stats = RS.range_stats(a, start, stop, use_clock=False, threads=[main.index])
        assert stats.total("calls_contained") == len(inside)
        assert stats.total("bytecodes") == tree.total("bytecodes")
        # the roots are the outermost contained calls' keys, merged: the method, or for a call into
        # native or untraced code (intrinsics such as Object.<init> too) the call site
        # (jbgui.model.cct); an outermost call of method 0 used to excuse any mismatch here
        synthetic = K.F_NATIVE | K.F_UNTRACED
        keys = {CCT.SYNTHETIC_KEY + int(calls.call_site[r]) if int(calls.flags[r]) & synthetic
                else int(calls.method[r]) for r in outermost}
        assert sorted(set(int(k) for k in tree.key[tree.roots])) == sorted(keys)
