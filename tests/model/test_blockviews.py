"""Control-flow graphs, paths, variants, loops, exception flow and discovery on a program whose
answers are known by construction (tests/programs/block_views/Main.java), and the ``jbtrace``
commands' JSON on the same trace."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from jbgui.cli.main import main
from jbgui.model import cfg as C
from jbgui.model.analysis import Analysis, Flag
from jbgui.model.block_paths import call_path, compress, render
from jbgui.model.discovery import first_block_runs, first_run_in, first_runs
from jbgui.model.exception_flow import exception_chains, grouped
from jbgui.model.loop_profile import loops
from jbgui.model.method_names import resolve_methods
from jbgui.model.method_profile import method_profile
from jbgui.model.replay import Cancelled
from jbgui.model.variants import variants


@pytest.fixture(scope="module")
def trace(record, default_jdk):
    # JDK classes untraced (small and quick); instructions listed, so branch targets are known.
    run = record("block_views", default_jdk, jdk=False, instructions=True)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def analysis(trace):
    return Analysis.open(trace)


def mid(analysis, spec):
    return resolve_methods(analysis.statics, spec, single=True)[0]


def edges(graph):
    return {(e.src, e.dst): (e.count, e.kind) for e in graph.edges}


def test_the_loop_graph_has_its_counts_back_edge_and_natural_loop(analysis):
    g = C.method_cfg(analysis, mid(analysis, "Main.loop"))
    # trips 0, 1, 2, 3, 3, 10: 6 calls, 19 iterations; the condition runs 19 + 6 times
    assert g.counts.tolist() == [6, 25, 19, 6]
    assert edges(g) == {(0, 1): (6, "normal"), (1, 2): (19, "normal"), (2, 1): (19, "back"),
                        (1, 3): (6, "normal")}
    assert [(lp.header, lp.body) for lp in g.loops] == [(1, [1, 2])]


def test_a_never_taken_branch_is_an_edge_with_count_zero(analysis):
    g = C.method_cfg(analysis, mid(analysis, "Main.check"))
    assert g.counts.tolist() == [4, 0, 4]
    assert edges(g) == {(0, 1): (0, "normal"), (0, 2): (4, "normal"), (1, 2): (0, "normal")}
    dot = C.to_dot(g)
    assert 'b1 [label="#1  @7\\nline 30\\n×0" style="rounded,dashed" color=grey' in dot
    assert "b0 -> b1 [penwidth=0.60 label=\"\" style=dashed color=grey]" in dot


def test_exception_edges_go_to_handlers(analysis):
    g = C.method_cfg(analysis, mid(analysis, "Main.level1"))
    kinds = edges(g)
    assert kinds[(0, 2)] == (2, "exception")     # both calls caught the exception in handler #2
    assert g.handler == [False, False, True]


def test_one_call_s_path_and_graph(analysis):
    thread = analysis.threads[0]
    loop = mid(analysis, "Main.loop")
    rows = np.flatnonzero(np.asarray(thread.calls.method) == loop)
    assert len(rows) == 6
    p = call_path(analysis, thread, int(rows[-1]))        # loop(10)
    assert p.blocks.tolist() == [0] + [1, 2] * 10 + [1, 3]
    assert render(compress(p.blocks)) == "#0 (#1 #2)×10 #1 #3"
    assert render(compress(p.blocks, counts=False), counts=False) == "#0 (#1 #2)× #1 #3"
    assert not p.exceptional and p.calls == []
    g = C.call_cfg(analysis, thread, int(rows[2]))         # loop(2)
    assert g.counts.tolist() == [1, 3, 2, 1] and edges(g)[(2, 1)] == (2, "back")
    # a call's path names the calls made from each block, and the exception that ended it
    level3 = mid(analysis, "Main.level3")
    row = int(np.flatnonzero(np.asarray(thread.calls.method) == level3)[0])
    p = call_path(analysis, thread, row)
    assert p.blocks.tolist() == [0, 1] and p.exceptional and p.exception == "java.lang.IllegalStateException"
    main_row = int(np.flatnonzero(np.asarray(thread.calls.method) == mid(analysis, "Main.main"))[0])
    p = call_path(analysis, thread, main_row)
    called = {analysis.call_name(thread, c) for _s, c in p.calls}
    assert {"Main.loop(I)I", "Main.common()I", "Main.rare()I", "Main.check(I)I", "Main.ignore()V"} <= called


def test_variants_are_the_three_paths_with_their_callers(analysis):
    rows = variants(analysis, mid(analysis, "Main.classify"))
    assert [(r["path"], r["calls"], r["share"]) for r in rows] == [
        ("#0 #1", 5, 0.5), ("#0 #2 #3", 3, 0.3), ("#0 #2 #4", 2, 0.2)]
    assert [r["callers"] for r in rows] == [[{"method": "Main.common()I", "calls": 5}],
                                            [{"method": "Main.common()I", "calls": 3}],
                                            [{"method": "Main.rare()I", "calls": 2}]]
    assert [r["mean_own_bytecodes"] for r in rows] == [4.0, 6.0, 6.0]
    thread = analysis.threads[0]
    for r in rows:
        t, row = map(int, r["example"].split(":"))
        assert analysis.call_name(analysis.thread(t), row) == "Main.classify(I)I"
    # loop repetitions do not make variants: trips 1..10 are one, 0 trips another
    loop_rows = variants(analysis, mid(analysis, "Main.loop"))
    assert [(r["path"], r["calls"]) for r in loop_rows] == [("#0 (#1 #2)× #1 #3", 5), ("#0 #1 #3", 1)]
    assert thread.calls is not None


def test_the_loop_profile_has_the_trip_counts(analysis):
    (row,) = loops(analysis, mid(analysis, "Main.loop"))
    assert row["header_block"] == 1 and row["entries"] == 6
    assert row["iterations"] == {"0": 1, "1": 1, "2": 1, "3": 2, "10": 1}
    assert row["outliers"][0]["iterations"] == 10
    t, r = map(int, row["outliers"][0]["call"].split(":"))
    assert call_path(analysis, analysis.thread(t), r).blocks.tolist().count(2) == 10
    assert loops(analysis, mid(analysis, "Main.classify")) == []


def test_the_profile_is_cached_and_the_same_from_the_cache(analysis):
    method = mid(analysis, "Main.classify")
    first = method_profile(analysis, method)
    again = method_profile(analysis, method)
    assert again.from_cache
    assert again.arrays["v_calls"].tolist() == first.arrays["v_calls"].tolist() == [5, 3, 2]
    assert method_profile(analysis, method, use_cache=False).paths() == first.paths()
    seen = []
    method_profile(analysis, method, use_cache=False, progress=lambda done, total: seen.append((done, total)))
    assert seen and all(total == 10 for _done, total in seen)
    with pytest.raises(Cancelled):
        method_profile(analysis, method, use_cache=False, cancelled=lambda: True)


def test_exception_flow_chains_agree_with_the_replay_flags(analysis):
    chains = exception_chains(analysis)
    thread = analysis.threads[0]
    flags = np.asarray(thread.calls.flags)
    exceptional = set(np.flatnonzero(flags & Flag.EXCEPTIONAL).tolist())
    unwound = {r for c in chains for r, _m, _b in c.unwound}
    assert unwound == exceptional and len(exceptional) == 5
    rows = grouped(analysis, chains)
    assert rows == [
        {"type": "java.lang.IllegalStateException", "thrown_in": "Main.level3(I)I", "throw_block": 1,
         "unwound": ["Main.level3(I)I", "Main.level2(I)I"], "unwound_blocks": [1, 0],
         "caught_in": "Main.level1(I)I", "handler_block": 2,
         "ignored": False, "count": 2, "example": rows[0]["example"]},
        {"type": "java.lang.IllegalStateException", "thrown_in": "Main.level3(I)I", "throw_block": 1,
         "unwound": ["Main.level3(I)I"], "unwound_blocks": [1], "caught_in": "Main.ignore()V", "handler_block": 2,
         "ignored": True, "count": 1, "example": rows[1]["example"]}]
    # the catching frames are flagged CAUGHT by replay, and the block each unwound frame left is
    # the block of the call the exception came out of
    caught_rows = {c.catch_row for c in chains}
    assert all(flags[r] & Flag.CAUGHT for r in caught_rows)
    level2_left = [b for c in chains for _r, m, b in c.unwound if m == mid(analysis, "Main.level2")]
    assert level2_left == [0, 0]


def test_discovery_orders_first_runs(analysis):
    runs = first_runs(analysis)
    names = [analysis.statics.method_qualified(int(m)) for m in runs["method"]]
    order = [names.index(n) for n in ("Main.main([Ljava/lang/String;)V", "Main.loop(I)I", "Main.common()I",
                                      "Main.classify(I)I", "Main.rare()I", "Main.check(I)I", "Main.level1(I)I")]
    assert order == sorted(order)
    assert np.all(np.diff(runs["nanos"]) >= 0)
    at = runs["nanos"][names.index("Main.check(I)I")]
    window = first_run_in(analysis, at, at + 1)
    assert [analysis.statics.method_qualified(int(m)) for m in window["method"]] == ["Main.check(I)I"]
    # blocks: loop(0) runs first, so the loop body #2 first runs after the exit block #3; the
    # branch of check that is never taken never runs
    blocks = first_block_runs(analysis)
    st = analysis.statics
    base = {spec: int(st.m_block_base[mid(analysis, spec)]) for spec in ("Main.loop", "Main.check")}
    order = blocks["block"].tolist()
    loop = [order.index(base["Main.loop"] + i) for i in range(4)]
    assert loop[0] < loop[1] < loop[3] < loop[2]
    assert base["Main.check"] + 0 in order and base["Main.check"] + 1 not in order
    assert np.all(np.diff(blocks["nanos"]) >= 0)


def run_json(capsys, *args):
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_commands_print_the_model_s_json(trace, capsys):
    t = str(trace)
    g = run_json(capsys, "cfg", t, "Main.check")
    assert g["method"] == "Main.check(I)I"
    assert [(b["id"], b["count"], b["first_offset"], b["lines"]) for b in g["blocks"]] == [
        (0, 4, 0, [29]), (1, 0, 7, [30]), (2, 4, 14, [32])]
    assert {(e["from"], e["to"], e["count"], e["kind"]) for e in g["edges"]} == {
        (0, 1, 0, "normal"), (0, 2, 4, "normal"), (1, 2, 0, "normal")}
    rows = run_json(capsys, "variants", t, "Main.classify", "--json")
    assert [(r["path"], r["calls"], r["callers"][0]["method"]) for r in rows] == [
        ("#0 #1", 5, "Main.common()I"), ("#0 #2 #3", 3, "Main.common()I"), ("#0 #2 #4", 2, "Main.rare()I")]
    (loop,) = run_json(capsys, "loops", t, "Main.loop", "--json")
    assert (loop["header_block"], loop["entries"], loop["iterations"]) == (
        1, 6, {"0": 1, "1": 1, "2": 1, "3": 2, "10": 1})
    example = rows[2]["example"]
    call = run_json(capsys, "cfg", t, "Main.classify", "--call", example)
    assert [b["count"] for b in call["blocks"]] == [1, 0, 1, 0, 1]
    p = run_json(capsys, "path", t, example, "--json")
    assert p["compressed"] == "#0 #2 #4" and p["exit"] == {"kind": "return"}
    ex = run_json(capsys, "exceptions", t, "--json")
    assert [(r["caught_in"], r["unwound"], r["unwound_blocks"], r["count"], r["ignored"]) for r in ex] == [
        ("Main.level1(I)I", ["Main.level3(I)I", "Main.level2(I)I"], [1, 0], 2, False),
        ("Main.ignore()V", ["Main.level3(I)I"], [1], 1, True)]
    assert main(["exceptions", t]) == 0
    text = capsys.readouterr().out
    assert "unwound Main.level3(I)I #1 → Main.level2(I)I #0, caught in Main.level1(I)I #2" in text
    first = run_json(capsys, "discovery", t, "--json")
    assert "Main.check(I)I" in [r["method"] for r in first]
    blocks = run_json(capsys, "discovery", t, "--blocks", "--json")
    assert [r["block"] for r in blocks if r["method"] == "Main.check(I)I"] == [0, 2]


def test_bad_names_and_calls_are_one_line(trace, capsys):
    t = str(trace)
    assert main(["variants", t, "Main.nothere"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jbtrace: error: no method 'Main.nothere'") and "Main.classify(I)I" in err
    assert err.count("\n") == 1
    assert main(["path", t, "1:99999999"]) == 2
    assert "thread 1 has" in capsys.readouterr().err
    assert main(["cfg", t, "Main.check", "--call", "nonsense"]) == 2
    assert "THREAD:ROW" in capsys.readouterr().err
    assert main(["variants", t, "java.io.PrintStream.println(Ljava/lang/String;)V"]) == 2   # JDK untraced here
    assert "has no basic blocks" in capsys.readouterr().err
    # a name of several overloads: one line naming them, for every command that takes a METHOD
    for command in (["cfg"], ["variants", "--json"], ["loops"]):
        assert main([command[0], t, "java.io.PrintStream.println", *command[1:]]) == 2
        err = capsys.readouterr().err
        assert err.startswith("jbtrace: error: 'java.io.PrintStream.println' is ambiguous: ") and err.count("\n") == 1
        # the overloads in the order static.xml lists them (the class file's), the rest counted
        shown, _, more = err.split("ambiguous: ", 1)[1].strip().partition(" and ")
        names = shown.split(", ")
        assert all(n.startswith("java.io.PrintStream.println(") and n.endswith("V") for n in names), names
        assert len(names) + (int(more.split()[0]) if more else 0) == 10      # PrintStream's ten println
        assert err.rstrip().endswith(" and 2 more")        # ten overloads: the first eight named


@pytest.fixture(scope="module")
def exception_paths(record, default_jdk):
    run = record("exception_paths", default_jdk)     # JDK classes traced too
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


def test_exception_chains_agree_with_replay_on_a_program_with_jdk_code(exception_paths):
    analysis = exception_paths
    chains = exception_chains(analysis)
    assert chains
    st = analysis.statics
    for thread in analysis.threads:
        flags = np.asarray(thread.calls.flags)
        # Frames of traced code only: replay also marks a native/untraced call still open when its
        # caller rethrows as left exceptionally, though the exception never passed through it.
        java = (flags & (Flag.NATIVE | Flag.UNTRACED)) == 0
        exceptional = set(np.flatnonzero((flags & Flag.EXCEPTIONAL != 0) & java).tolist())
        unwound = {r for c in chains if c.thread == thread.index for r, _m, _b in c.unwound}
        assert unwound == exceptional, thread.name
    for c in chains:
        if c.catch_row >= 0:
            thread = analysis.thread(c.thread)
            assert int(thread.calls.flags[c.catch_row]) & Flag.CAUGHT
            if c.handler_block >= 0:
                assert st.b_is_handler[int(st.m_block_base[c.caught_in]) + c.handler_block]
    rows = grouped(analysis, use_cache=False)
    assert sum(r["count"] for r in rows) == len(chains)
    assert grouped(analysis) == rows == grouped(analysis)   # computed, then from the cache


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_cfg_as_dot_and_svg(trace, capsys):
    assert main(["cfg", str(trace), "Main.loop", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert 'b2 -> b1 [penwidth=4.00 label="19" color="#3050c0"];' in dot      # the back edge, blue
    assert main(["cfg", str(trace), "Main.loop", "--format", "svg"]) == 0
    svg = capsys.readouterr().out
    assert "<svg" in svg and svg.count('class="node"') == 4 and svg.count('class="edge"') == 4


def test_a_recursive_loop_s_entries_and_paths(analysis):
    """walk(2, 3) -> walk(1, 2) -> walk(0, 1): each call's loop entry counts its own iterations
    (3, 2, 1), though the inner calls run inside the outer loops; the outer two calls take the
    recursing path, the innermost does not."""
    method = mid(analysis, "Main.walk")
    (row,) = loops(analysis, method)
    assert row["entries"] == 3 and row["iterations"] == {"1": 1, "2": 1, "3": 1}
    thread = analysis.threads[0]
    rows = np.flatnonzero(np.asarray(thread.calls.method) == method)
    assert [o["call"] for o in row["outliers"]] == [f"{thread.index}:{int(r)}" for r in rows]
    assert [o["iterations"] for o in row["outliers"]] == [3, 2, 1]
    # the scan's loop records by call, though the inner calls' loops ended first
    from jbgui.model.block_paths import scan_calls
    scan = scan_calls(analysis, method, C.method_cfg(analysis, method).loop_tables())
    assert scan.loop_call.tolist() == [0, 1, 2] and scan.loop_iters.tolist() == [3, 2, 1]
    found = variants(analysis, method)
    assert [(r["calls"], sorted((c["method"], c["calls"]) for c in r["callers"])) for r in found] == [
        (2, [("Main.main([Ljava/lang/String;)V", 1), ("Main.walk(II)I", 1)]), (1, [("Main.walk(II)I", 1)])]
    # #1 the loop's test, #4 the recursive call, #5 the loop's step: the first iteration recurses
    assert [r["path"] for r in found] == ["#0 #1 #2 #3 #4 (#5 #1 #2)× #5 #1 #6", "#0 #1 #2 #3 #5 #1 #6"]
    assert [call_path(analysis, thread, int(r)).blocks.tolist().count(5) for r in rows] == [3, 2, 1]
