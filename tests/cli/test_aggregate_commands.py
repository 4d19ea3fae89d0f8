"""``jbtrace methods`` and ``jbtrace tree`` on a recorded program with a known call structure
(tests/programs/aggregate): their JSON against the model and against the program's counts, and
one clear line (exit 2) for bad input. Most runs call ``jbtrace``'s ``main`` in this process (a
fresh interpreter costs seconds of imports per run); one runs the real command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from jbgui.cli.main import main
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def trace(record, default_jdk):
    run = record("aggregate", default_jdk)
    assert run.exit_code == 0, run.describe()
    Analysis.open(run.trace_dir)   # replay once, before the commands run
    return run.trace_dir


@pytest.fixture
def jbtrace(capsys):
    """``jbtrace(args) -> (exit status, stdout, stderr)`` through the command's ``main``."""
    def run(args):
        capsys.readouterr()
        try:
            status = main([str(a) for a in args])
        except SystemExit as error:   # argparse's own usage errors
            status = error.code
        out, err = capsys.readouterr()
        return status, out, err
    return run


def run_json(jbtrace, *args):
    status, out, err = jbtrace([*args, "--json"])
    assert status == 0, err
    return json.loads(out)


def find(nodes, method_prefix):
    for node in nodes:
        if node["method"].startswith(method_prefix):
            return node
    return None


def test_methods_json_equals_the_model(jbtrace, trace):
    rows = run_json(jbtrace, "methods", trace, "--thread", "main")
    a = Analysis.open(trace)
    table = MTab.compute(TR.AggregateView(a).base(a.thread("main").index), a.statics)
    assert len(rows) == len(table)
    by_name = {r["method"]: r for r in rows}
    for i, name in enumerate(table.names):
        r = by_name[name]
        assert (r["calls"], r["self_bytecodes"], r["total_bytecodes"], r["blocks"]) == (
            table.columns["calls"][i], table.columns["self_bytecodes"][i], table.columns["total_bytecodes"][i],
            table.columns["self_blocks"][i])
    leaf = by_name["Main.leaf(I)I"]
    assert leaf["calls"] == 8
    assert [r["self_bytecodes"] for r in rows] == sorted((r["self_bytecodes"] for r in rows), reverse=True)


def test_methods_sorted_by_calls_only_my_code(jbtrace, trace):
    rows = run_json(jbtrace, "methods", trace, "--only-my-code", "--sort", "calls")
    calls = [r["calls"] for r in rows]
    assert calls == sorted(calls, reverse=True)
    names = {r["method"] for r in rows}
    assert "java.util.Arrays.sort([Ljava/lang/Object;Ljava/util/Comparator;)V" in names
    assert not any(n.startswith("java.util.TimSort") for n in names)
    # --include makes JDK classes mine: TimSort appears, under Arrays.sort
    rows = run_json(jbtrace, "methods", trace, "--include", "java.util", "--sort", "total")
    assert any(r["method"].startswith("java.util.TimSort") for r in rows)


def test_tree_json_has_the_known_counts(jbtrace, trace):
    roots = run_json(jbtrace, "tree", trace, "--thread", "main", "--only-my-code")
    main = find(roots, "Main.main")
    assert main is not None and main["calls"] == 1
    a, b = find(main["children"], "Main.a("), find(main["children"], "Main.b(")
    assert find(a["children"], "Main.leaf")["calls"] == 3
    assert find(b["children"], "Main.leaf")["calls"] == 5
    assert main["total_bytecodes"] == main["self_bytecodes"] + sum(c["total_bytecodes"] for c in main["children"])


def test_tree_focus_merge_and_recursion(jbtrace, trace):
    roots = run_json(jbtrace, "tree", trace, "--focus", "Main.leaf")
    assert [(r["method"], r["calls"]) for r in roots] == [("Main.leaf(I)I", 8)]
    roots = run_json(jbtrace, "tree", trace, "--thread", "main", "--merge", "Main.a", "--merge", "Main.b")
    main = find(roots, "Main.main")
    assert find(main["children"], "Main.leaf")["calls"] == 8
    assert find(main["children"], "Main.a(") is None
    roots = run_json(jbtrace, "tree", trace, "--focus", "Main.fact", "--collapse-recursion")
    assert [(r["method"], r["calls"], r["children"]) for r in roots] == [("Main.fact(I)I", 1, [])]


def test_inverted_tree_lists_the_callers(jbtrace, trace):
    roots = run_json(jbtrace, "tree", trace, "--inverted", "--thread", "main", "--depth", "3")
    leaf = find(roots, "Main.leaf")
    assert leaf["calls"] == 8
    assert sorted((c["method"].split("(")[0], c["calls"]) for c in leaf["children"]) == [("Main.a", 3), ("Main.b", 5)]
    assert sum(c["self_bytecodes"] for c in leaf["children"]) == leaf["self_bytecodes"]
    assert all(len(c["children"]) == 0 for r in roots for cc in r["children"] for c in cc["children"])
    selfs = [r["self_bytecodes"] for r in roots]
    assert selfs == sorted(selfs, reverse=True)


def test_text_output_is_an_indented_tree(jbtrace, trace):
    status, out, err = jbtrace(["tree", trace, "--thread", "main", "--only-my-code", "--depth", "3", "--min-percent", "0"])
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("total ")
    main_line = next(line for line in lines if "Main.main(" in line)
    assert main_line.startswith("  ") is False and "%" in main_line
    assert any(line.startswith("  ") and "Main.a(" in line for line in lines)
    status, out, _err = jbtrace(["methods", trace, "--limit", "3"])
    assert status == 0 and len(out.splitlines()) == 4


@pytest.mark.parametrize("args, message", [
    (["tree", "{trace}", "--focus", "Main.nothing"], "no method 'Main.nothing'"),
    (["tree", "{trace}", "--thread", "nosuch"], "no thread 'nosuch'"),
    (["methods", "{trace}", "--limit", "-1"], "--limit"),
    (["tree", "{trace}", "--depth", "0"], "--depth"),
    (["methods", "/nonexistent/trace"], "/nonexistent/trace"),
])
def test_bad_input_is_one_line_and_exit_2(jbtrace, trace, args, message):
    status, _out, err = jbtrace([a.format(trace=trace) for a in args])
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jbtrace: error:") and message in lines[0], err


def test_the_real_command(trace):
    """The installed entry point, in its own process, as a user runs it."""
    import subprocess
    import sys
    result = subprocess.run([sys.executable, "-m", "jbgui.cli", "tree", str(trace), "--focus", "Main.leaf", "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert [(r["method"], r["calls"]) for r in json.loads(result.stdout)] == [("Main.leaf(I)I", 8)]
    result = subprocess.run([sys.executable, "-m", "jbgui.cli", "tree", str(trace), "--merge", "Main.nothing"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "no method" in result.stderr
