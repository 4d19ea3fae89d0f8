"""``jbtrace sql`` on real recorded programs: its answers equal what ``jbtrace calls`` and
``jbtrace stats`` print for the same trace; bad SQL is one line and exit status 2; the Parquet
export of the same tables reads back equal."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from jbgui.cli.main import main
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def trace(record, default_jdk) -> Path:
    run = record("exceptions", default_jdk)
    assert run.exit_code == 0, run.describe()
    Analysis.open(run.trace_dir)
    return run.trace_dir


def jbtrace(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def sql_csv(capsys, trace, query) -> list[dict]:
    status, out, err = jbtrace(capsys, "sql", trace, query, "--format", "csv")
    assert status == 0, err
    return list(csv.DictReader(io.StringIO(out)))


def test_calls_equal_jbtrace_calls(trace, capsys):
    status, out, _ = jbtrace(capsys, "calls", trace)
    assert status == 0
    printed = [line.split("\t") for line in out.splitlines()]
    rows = sql_csv(capsys, trace, "SELECT t.name AS thread, c.depth, "
                   "coalesce(m.qualified, s.target) AS method, c.flags FROM calls c JOIN threads t USING (thread) "
                   "LEFT JOIN methods m ON m.method = c.method LEFT JOIN call_sites s ON s.site = c.call_site "
                   "ORDER BY c.thread, c.row")
    assert len(rows) == len(printed) > 100
    names = {r["name"]: int(r["bit"]) for r in sql_csv(capsys, trace, "SELECT name, bit FROM flags")}
    shown = ("exceptional", "caught", "uncaught", "native", "untraced", "implicit", "truncated")
    for mine, theirs in zip(rows, printed):
        flags = int(mine["flags"])
        text = ",".join(n for n in shown if flags & names[n])
        assert [mine["thread"], mine["depth"], mine["method"], text] == theirs


def test_totals_equal_jbtrace_stats(trace, capsys):
    status, out, _ = jbtrace(capsys, "stats", trace, "--json")
    assert status == 0
    stats = json.loads(out)
    per_thread = {r["thread"]: r for r in sql_csv(capsys, trace, """
        SELECT t.name AS thread, t.events, count(c.row) AS calls, coalesce(max(c.depth) + 1, 0) AS max_depth,
               coalesce(sum(c.own_bytecodes), 0) AS bytecodes,
               count(*) FILTER (WHERE has_flag(c.flags, 'native')) AS native
        FROM threads t LEFT JOIN calls c USING (thread) GROUP BY ALL""")}
    for t in stats["threads"]:
        mine = per_thread[t["name"]]
        assert int(mine["events"]) == t["events"]
        assert int(mine["calls"]) == t["calls"]
        assert int(mine["max_depth"]) == t["max_depth"]
        assert int(mine["native"]) == t["native_calls"]
        # Own bytecodes of the calls add up to the thread's bytecodes (every block runs in a call).
        assert int(mine["bytecodes"]) == t["metrics"]["bytecodes"]
    blocks = sql_csv(capsys, trace, "SELECT sum(count) AS blocks, sum(count * bytecodes) AS bc FROM blocks")[0]
    assert int(blocks["blocks"]) == stats["run"]["blocks"]
    assert int(blocks["bc"]) == stats["run"]["metrics"]["bytecodes"]
    hottest = sql_csv(capsys, trace, """
        SELECT m.qualified AS method, sum(b.count * b.bytecodes) AS bytecodes FROM blocks b
        JOIN methods m USING (method) GROUP BY ALL ORDER BY bytecodes DESC, method LIMIT 5""")
    top = {m["method"]: m["bytecodes"] for m in stats["hottest_methods"][:5]}
    for row in hottest:
        if row["method"] in top:
            assert int(row["bytecodes"]) == top[row["method"]]
    assert hottest[0]["method"] == stats["hottest_methods"][0]["method"]
    exc = sql_csv(capsys, trace, "SELECT t.name AS thread, count(*) AS n, count(*) FILTER (WHERE catch_row = -1) AS "
                  "uncaught FROM exceptions JOIN threads t USING (thread) GROUP BY ALL")
    assert {r["thread"]: (int(r["n"]), int(r["uncaught"])) for r in exc} == \
        {t["name"]: (t["exceptions"], t["uncaught"]) for t in stats["threads"] if t["exceptions"]}


def test_exceptions_name_their_frames(trace, capsys):
    analysis = Analysis.open(trace)
    rows = sql_csv(capsys, trace, "SELECT e.thread, e.throw_row, e.catch_row, e.unwound, c.depth AS td, "
                   "k.depth AS cd, e.catch_method, k.method AS km FROM exceptions e JOIN calls c "
                   "ON c.thread = e.thread AND c.row = e.throw_row LEFT JOIN calls k "
                   "ON k.thread = e.thread AND k.row = e.catch_row ORDER BY e.thread, e.throw_event")
    assert rows and sum(len(t.exceptions) for t in analysis.threads) == len(rows)
    for r in rows:
        if int(r["catch_row"]) >= 0:
            assert int(r["unwound"]) == int(r["td"]) - int(r["cd"]) >= 0
            assert r["catch_method"] == r["km"]
        else:
            assert r["catch_method"] == ""
            assert int(r["unwound"]) == int(r["td"]) + 1


def test_receivers_and_edges_equal_the_analysis(trace, capsys):
    analysis = Analysis.open(trace)
    rows = sql_csv(capsys, trace, "SELECT site, class, count FROM receivers")
    assert Counter((int(r["site"]), int(r["class"])) for r in rows for _ in range(int(r["count"]))) == \
        Counter((int(s), int(c)) for s, c, n in analysis.receivers for _ in range(int(n)))
    total = sql_csv(capsys, trace, "SELECT count(*) AS n, sum(count) AS c FROM edges")[0]
    assert int(total["n"]) == len(analysis.edges)
    assert int(total["c"]) == int(analysis.edges[:, 2].sum())


@pytest.mark.parametrize("query, words", [
    ("SELEC 1", "syntax error"),
    ("SELECT nope FROM calls", "nope"),
    ("SELECT * FROM no_such_table", "no_such_table"),
    ("", "give a query"),
])
def test_bad_sql_is_one_line_and_status_2(trace, capsys, query, words):
    status, out, err = jbtrace(capsys, "sql", trace, query)
    assert status == 2
    assert out == ""
    assert err.startswith("jbtrace: error: ") and err.count("\n") == 1 and words in err


def test_bad_format_and_missing_trace(trace, capsys, tmp_path):
    status, _out, err = jbtrace(capsys, "sql", trace, "SELECT 1", "--format", "xml")
    assert status == 2 and "--format" in err
    status, _out, err = jbtrace(capsys, "sql", tmp_path / "none", "SELECT 1")
    assert status == 2 and err.startswith("jbtrace: error: ") and err.count("\n") == 1


def test_table_format_and_json(trace, capsys):
    status, out, _ = jbtrace(capsys, "sql", trace, "SELECT thread, name FROM threads ORDER BY thread")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == ["thread", "name"] and lines[-1].startswith("(")
    status, out, _ = jbtrace(capsys, "sql", trace, "SELECT count(*) AS n FROM calls", "--format", "json")
    assert json.loads(out) == [{"n": sum(len(t.calls) for t in Analysis.open(trace).threads)}]


def test_parquet_export_has_the_same_tables(trace, capsys, tmp_path):
    import duckdb
    out = tmp_path / "run"
    status, _o, err = jbtrace(capsys, "export", trace, "--format", "parquet", "--table", "all", "-o", out)
    assert status == 0, err
    analysis = Analysis.open(trace)
    for t in analysis.threads:
        if len(t.calls):
            assert (out / "calls" / f"thread={t.index}").is_dir()
    con = duckdb.connect()
    parquet = con.execute(f"SELECT * FROM read_parquet('{out}/calls/**/*.parquet', hive_partitioning = false) "
                          "ORDER BY thread, row")
    columns = [d[0] for d in parquet.description]
    rows = parquet.fetchall()
    status, text, _ = jbtrace(capsys, "sql", trace, "SELECT * FROM calls ORDER BY thread, row", "--format", "json")
    mine = json.loads(text)
    assert columns == list(mine[0])
    assert [list(r.values()) for r in mine] == [list(r) for r in rows]
    methods = con.execute(f"SELECT count(*) FROM '{out}/methods.parquet'").fetchone()[0]
    assert methods == int(sql_csv(capsys, trace, "SELECT count(*) AS n FROM methods")[0]["n"])


def test_docs_list_every_column():
    from jbgui.model.sql import TABLES
    text = (Path(__file__).resolve().parents[2] / "docs" / "sql.md").read_text()
    for table in TABLES:
        assert f"### `{table.name}`" in text
        section = text.split(f"### `{table.name}`", 1)[1].split("\n### ", 1)[0]
        assert [line.split("`")[1] for line in section.splitlines() if line.startswith("| `")] == list(table.names)
