"""Queries over call tables (jbgui.model.call_queries) on real traces, each checked against a
plain reference: CallTable.children and the whole-table exclusive counts, the parent column,
Analysis.call_name over every row, the flags column."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import call_queries as Q
from jbgui.model.analysis import Analysis, Flag

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"


@pytest.fixture(scope="module")
def exceptions(program_runs, default_jdk) -> Analysis:
    _untraced, run = program_runs("exception_paths", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.fixture(scope="module")
def threads(program_runs, default_jdk) -> Analysis:
    _untraced, run = program_runs("threads", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.fixture(scope="module")
def wide(program_runs, default_jdk) -> Analysis:
    untraced, run = program_runs("wide_calls", default_jdk)
    expected = (PROGRAMS_DIR / "wide_calls" / "expected_stdout.txt").read_text()
    assert run.exit_code == 0 and run.stdout == untraced.stdout == expected, run.describe()
    return Analysis.open(run.trace_dir)


def row_of(analysis: Analysis, thread, prefix: str) -> int:
    return next(r for r in range(len(thread.calls)) if analysis.call_name(thread, r).startswith(prefix))


def names_of_rows(analysis: Analysis, thread) -> list[str]:
    """Analysis.call_name of every row (computed once per method and call site)."""
    calls = thread.calls
    keys = np.stack([np.asarray(calls.method, np.int64), np.asarray(calls.call_site, np.int64)], 1)
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    names = [analysis.call_name(thread, int(r)) for r in first]
    return [names[i] for i in inverse.ravel()]


def reference_matches(names: list[str], text: str) -> list[int]:
    text = text.lower()
    if "(" in text:
        return [r for r, name in enumerate(names) if text in name.lower()]
    return [r for r, name in enumerate(names) if text in name.lower().partition("(")[0]]


def all_found(step, first=-1, limit=None) -> list[int]:
    """The rows ``step`` visits from ``first`` until it returns -1 (at most ``limit`` of them)."""
    out, row = [], first
    while limit is None or len(out) < limit:
        row = step(row)
        if row < 0:
            break
        out.append(row)
        assert len(out) < 1_000_000, "the search does not end"
    return out


# ---------------------------------------------------------------------- structure


def test_children_batches_are_the_children_of_the_call_table(exceptions):
    main = exceptions.thread("main")
    calls = main.calls
    parents = np.unique(np.asarray(calls.parent))
    sample = np.concatenate([[-1], parents[parents >= 0][:1500]])
    for row in sample.tolist():
        expected = calls.children(row)
        rows, nxt = Q.children_batch(calls, row, limit=len(calls))
        assert np.array_equal(rows, expected), row
        assert nxt == (len(calls) if row < 0 else int(calls.end[row]))
        assert Q.child_count(calls, row) == len(expected)


def test_batches_continue_where_they_stopped_and_reach_a_given_row(wide):
    main = wide.thread("main")
    calls = main.calls
    app = row_of(wide, main, "Main.main(")
    children = calls.children(app)
    assert len(children) > 200_000
    first, nxt = Q.children_batch(calls, app, limit=500)
    assert np.array_equal(first, children[:500]) and nxt == children[500]
    second, nxt2 = Q.children_batch(calls, app, nxt, limit=500)
    assert np.array_equal(second, children[500:1000]) and nxt2 == children[1000]
    # "through": up to the child whose subtree holds the row, however far, in one call
    target = int(children[150_000])
    through, _ = Q.children_batch(calls, app, nxt2, limit=10, through=target)
    assert np.array_equal(through, children[1000:150_001])
    assert Q.child_at(calls, app, 150_000) == target
    assert Q.child_index(calls, app, target) == 150_000
    assert Q.count_siblings(calls, int(children[1000]), target) == 149_000
    assert Q.child_at(calls, app, len(children)) == int(calls.end[app])
    rest, end = Q.children_batch(calls, app, int(children[-3]), limit=500)
    assert np.array_equal(rest, children[-3:]) and end == int(calls.end[app])


def test_ancestors_run_from_the_root_to_the_row(exceptions):
    main = exceptions.thread("main")
    calls = main.calls
    dive = [r for r in range(len(calls)) if exceptions.call_name(main, r).startswith("Main.dive(")]
    deepest = dive[4]
    chain = Q.ancestors(main, deepest)
    assert chain[-1] == deepest
    assert int(calls.parent[chain[0]]) == -1
    assert len(chain) == int(calls.depth[deepest]) + 1
    for parent, child in zip(chain, chain[1:]):
        assert int(calls.parent[child]) == parent
    assert chain[-5:] == dive[:5]


def test_exclusive_counts_equal_the_whole_table_computation(exceptions, wide):
    for analysis in (exceptions, wide):
        for thread in analysis.threads:
            calls = thread.calls
            rows = np.arange(len(calls))
            assert np.array_equal(Q.exclusive_bytecodes(thread, rows), calls.excl_bytecodes())
            assert np.array_equal(Q.exclusive_blocks(thread, rows), calls.excl_blocks())
    main = wide.thread("main")
    app = row_of(wide, main, "Main.main(")
    assert Q.exclusive_bytecodes(main, [app])[0] == main.calls.excl_bytecodes()[app]


def test_duration_uses_the_clock_or_counts_events(exceptions):
    main = exceptions.thread("main")
    calls = main.calls
    rows = np.array([0, 5, len(calls) - 1])
    first, last = np.asarray(calls.first)[rows], np.asarray(calls.last)[rows]
    assert Q.has_clock(main)
    assert np.allclose(Q.duration(main, rows), main.times(last + 1.0) - main.times(first))
    assert (Q.duration(main, rows) > 0).all()
    clockless = dataclasses.replace(main, clock=np.zeros((0, 2)))
    assert not Q.has_clock(clockless)
    assert np.array_equal(Q.duration(clockless, rows), (last + 1 - first).astype(np.float64))


def test_thread_totals_cover_the_thread(threads):
    for thread in threads.threads:
        totals = Q.thread_totals(thread)
        assert totals["calls"] == len(thread.calls)
        assert totals["incl_blocks"] == int(thread.block_counts.sum())
        tops = thread.calls.children(-1)
        assert totals["top_level"] == len(tops)
        assert totals["incl_bytecodes"] == int(np.asarray(thread.calls.incl_bytecodes)[tops].sum())


def test_caught_here_lists_the_exceptions_a_call_caught(exceptions):
    main = exceptions.thread("main")
    dive = [r for r in range(len(main.calls)) if exceptions.call_name(main, r).startswith("Main.dive(")]
    caught = Q.caught_here(main, dive[1])
    assert len(caught) == 1 and caught[0]["throw_row"] == dive[4]
    assert exceptions.statics.class_name_of_id(int(caught[0]["exc_class"])) == "java.lang.ArithmeticException"
    assert not len(Q.caught_here(main, dive[0]))


# ---------------------------------------------------------------------- search


@pytest.mark.parametrize("text", ["Main.dive", "main.", "MAIN.SAMEFRAME", "invokeBasic", "String",
                                  "System.arraycopy(Ljava", "Class;.clone"])
def test_find_calls_finds_every_matching_row_in_order(exceptions, text):
    main = exceptions.thread("main")
    expected = reference_matches(names_of_rows(exceptions, main), text)
    assert expected, text
    limit = 300  # "String" matches some 100,000 calls: their first and last ones
    forward = all_found(lambda r: Q.find_calls(exceptions, main, text, r), limit=limit)
    assert forward == expected[:limit]
    backward = all_found(lambda r: Q.find_calls(exceptions, main, text, r, backwards=True),
                         first=len(main.calls), limit=limit)
    assert backward == expected[::-1][:limit]
    assert Q.find_calls(exceptions, main, text, -1, backwards=True) == expected[-1]


def test_synthetic_rows_are_found_by_their_call_site(exceptions):
    main = exceptions.thread("main")
    calls = main.calls
    row = Q.find_calls(exceptions, main, "MethodHandle.invokeBasic")
    assert row >= 0 and int(calls.method[row]) == 0
    assert calls.flags[row] & (Flag.NATIVE | Flag.UNTRACED)


def test_find_calls_without_a_match(exceptions):
    main = exceptions.thread("main")
    assert Q.find_calls(exceptions, main, "no.such.Method") == -1
    assert Q.find_calls(exceptions, main, "   ") == -1
    assert Q.find_calls(exceptions, main, "Main.dive", len(main.calls)) == -1


@pytest.mark.parametrize("mask", [Q.EXCEPTION_FLAGS, Q.NATIVE_FLAGS, int(Flag.UNCAUGHT)])
def test_next_flagged_visits_the_flagged_rows(threads, mask):
    for thread in threads.threads:
        expected = np.flatnonzero(np.asarray(thread.calls.flags) & mask).tolist()
        assert all_found(lambda r: Q.next_flagged(thread, r, mask)) == expected
        backward = all_found(lambda r: Q.next_flagged(thread, r, mask, backwards=True),
                             first=len(thread.calls))
        assert backward == expected[::-1]


def test_search_through_threads_goes_on_in_the_next_thread_and_wraps(threads):
    a = threads
    flagged = [(slot, int(r)) for slot, t in enumerate(a.threads)
               for r in np.flatnonzero(np.asarray(t.calls.flags) & Flag.UNCAUGHT)]
    assert len({slot for slot, _ in flagged}) >= 2, "two threads end with uncaught exceptions"

    def find(thread, after, backwards):
        return Q.next_flagged(thread, after, int(Flag.UNCAUGHT), backwards)

    hits, slot, row = [], 0, -1
    for _ in range(len(flagged)):
        hit = Q.search_threads(a, slot, row, find)
        assert hit is not None and not hit.wrapped
        hits.append((hit.slot, hit.row))
        slot, row = hit.slot, hit.row
    assert hits == flagged
    again = Q.search_threads(a, slot, row, find)
    assert (again.slot, again.row, again.wrapped) == (*flagged[0], True)
    back = Q.search_threads(a, *flagged[0], find, backwards=True)
    assert (back.slot, back.row, back.wrapped) == (*flagged[-1], True)
    back = Q.search_threads(a, *flagged[1], find, backwards=True)
    assert (back.slot, back.row, back.wrapped) == (*flagged[0], False)
    # one match only: found again from itself, wrapped
    only = flagged[0]

    def find_only(thread, after, backwards):
        hit = find(thread, after, backwards)
        return hit if thread is a.threads[only[0]] and hit == only[1] else -1

    first = Q.search_threads(a, *only, find_only)
    assert (first.slot, first.row, first.wrapped) == (*only, True)
    assert Q.search_threads(a, 0, -1, lambda t, af, b: -1) is None
    assert Q.search_threads(a, 0, -1, find, cancelled=lambda: True) is None
