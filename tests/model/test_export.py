"""Exports of real traces (jbgui.model.export), parsed back and held against the analyzer's own
numbers: Chrome trace JSON against a schema of the trace-event format and the nesting Perfetto
requires, collapsed stacks against the format's grammar and the analyzer's totals, the CSV tables
against the call tables and block counts, Parquet against the CSV.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import stat
import threading
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import export as E
from jbgui.model.analysis import CATCH_CLASS_INIT, CATCH_UNCAUGHT, Analysis, Flag
from jbgui.model.replay import Cancelled

COLLAPSED_LINE = re.compile(r"^[^;\n]+(;[^;\n]+)* \d+$")


@pytest.fixture(scope="module")
def exceptions(record, default_jdk) -> Analysis:
    """exception_paths: one thread of exceptions thrown and caught in every way."""
    run = record("exception_paths", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.fixture(scope="module")
def threads(record, default_jdk) -> Analysis:
    """multithread: workers, a pool, a producer and a consumer."""
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


# --------------------------------------------------------------------------------- helpers

def total_bytecodes(analysis: Analysis, threads=None) -> int:
    threads = analysis.threads if threads is None else threads
    return int(sum(t.block_counts @ analysis.statics.b_metrics[:, 0].astype(np.int64) for t in threads))


def class_of(analysis: Analysis, thread, row: int) -> str:
    """The dotted class a call belongs to, from the analyzer's own name of it."""
    return analysis.call_name(thread, row).split("(")[0].rsplit(".", 1)[0]


# A JSON schema of the trace-event format as these exports write it (the object form; "M", "X"
# and "i" events), checked by the small validator below: the subset of JSON Schema it uses.
NUMBER = {"type": "number"}
COUNT = {"type": "integer", "minimum": 0}
STRING = {"type": "string"}
TRACE_SCHEMA = {
    "type": "object", "required": ["traceEvents", "displayTimeUnit", "otherData"],
    "properties": {
        "traceEvents": {"type": "array"},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object", "required": ["clock", "truncated", "complete_events", "instant_events"],
                      "properties": {"clock": {"type": "boolean"}, "truncated": {"type": "boolean"},
                                     "complete_events": COUNT, "instant_events": COUNT}},
    },
}
EVENT_SCHEMAS = {
    "M": {"type": "object", "required": ["ph", "pid", "tid", "name", "args"], "additionalProperties": False,
          "properties": {"ph": {"const": "M"}, "pid": COUNT, "tid": COUNT,
                         "name": {"enum": ["process_name", "thread_name", "thread_sort_index"]},
                         "args": {"type": "object"}}},
    "X": {"type": "object", "required": ["ph", "pid", "tid", "ts", "dur", "name", "cat", "args"],
          "additionalProperties": False,
          "properties": {"ph": {"const": "X"}, "pid": COUNT, "tid": COUNT, "ts": NUMBER,
                         "dur": {"type": "number", "minimum": 0}, "name": STRING,
                         "cat": {"enum": ["app", "jdk", "native", "untraced"]},
                         "args": {"type": "object", "additionalProperties": False,
                                  "required": ["descriptor", "flags", "bytecodes", "self_bytecodes", "row"],
                                  "properties": {"descriptor": STRING, "flags": STRING, "bytecodes": COUNT,
                                                 "self_bytecodes": COUNT, "row": COUNT}}}},
    "i": {"type": "object", "required": ["ph", "s", "pid", "tid", "ts", "name", "cat", "args"],
          "additionalProperties": False,
          "properties": {"ph": {"const": "i"}, "s": {"enum": ["t", "p", "g"]}, "pid": COUNT, "tid": COUNT,
                         "ts": NUMBER, "name": STRING, "cat": {"enum": ["exception", "native"]},
                         "args": {"type": "object"}}},
}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def validate(value, schema: dict, where: str = "$") -> None:
    kind = schema.get("type")
    if kind in TYPES:
        assert isinstance(value, TYPES[kind]), f"{where}: {value!r} is not a {kind}"
    elif kind == "integer":
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: {value!r} is not an integer"
    elif kind == "number":
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: {value!r} is not a number"
    if "const" in schema:
        assert value == schema["const"], f"{where}: {value!r} != {schema['const']!r}"
    if "enum" in schema:
        assert value in schema["enum"], f"{where}: {value!r} not in {schema['enum']}"
    if "minimum" in schema:
        assert value >= schema["minimum"], f"{where}: {value!r} < {schema['minimum']}"
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            assert key in value, f"{where}: {key!r} missing"
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            assert set(value) <= set(properties), f"{where}: unexpected {set(value) - set(properties)}"
        for key, sub in properties.items():
            if key in value:
                validate(value[key], sub, f"{where}.{key}")


def load_chrome(path: Path, sample: int = 20_000) -> dict:
    """The file parsed and checked against the schema: every metadata and instant event, every
    complete event's keys, and the full schema on about ``sample`` complete events spread over the
    file (the pure-Python validator is slow; nesting is checked on all of them elsewhere)."""
    data = json.loads(path.read_text())
    validate(data, TRACE_SCHEMA)
    events = data["traceEvents"]
    complete_keys = set(EVENT_SCHEMAS["X"]["properties"])
    stride = max(1, len(events) // sample)
    for i, event in enumerate(events):
        phase = event.get("ph")
        assert phase in EVENT_SCHEMAS, f"event {i}: phase {phase!r}"
        if phase != "X" or i % stride == 0:
            validate(event, EVENT_SCHEMAS[phase], f"traceEvents[{i}]")
        else:
            assert event.keys() == complete_keys, f"traceEvents[{i}]: keys {sorted(event)}"
    return data


def ns(value) -> int:
    """A chrome timestamp (µs, three decimals) back in whole nanoseconds."""
    return round(value * 1000)


def assert_nested(events: list[dict], scale=ns) -> None:
    """Complete events of each track nest: sorted by start (longest first), each one ends no
    later than the innermost event still open when it starts (what Perfetto checks)."""
    by_track = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            by_track[(e["pid"], e["tid"])].append((scale(e["ts"]), scale(e["ts"]) + scale(e["dur"])))
    for track, spans in by_track.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ends: list[int] = []
        for start, end in spans:
            while open_ends and open_ends[-1] <= start and not (open_ends[-1] == start == end):
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1], f"track {track}: [{start}, {end}) overlaps its caller"
            open_ends.append(end)


def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def column(header: list[str], rows: list[list[str]], name: str, kind=int) -> np.ndarray:
    i = header.index(name)
    return np.array([kind(r[i]) for r in rows]) if kind is not str else [r[i] for r in rows]


# --------------------------------------------------------------------------------- chrome

def test_chrome_has_one_complete_event_per_call_nested_per_thread(threads, tmp_path):
    out = tmp_path / "t.json"
    result = E.export_chrome(threads, out)
    data = load_chrome(out)
    events = data["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == sum(len(t.calls) for t in threads.threads) == result.rows
    assert not result.truncated and result.has_clock and data["otherData"]["clock"] is True
    assert data["displayTimeUnit"] == "ns"
    assert_nested(events)

    pid = threads.trace.metadata["jvm"]["pid"]
    assert {e["pid"] for e in events} == {pid}
    named = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert named == {t.index: t.name for t in threads.threads}
    process = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert process and process[0]["args"]["name"].startswith("java ")

    # Each event is its call: name, descriptor, flags, bytecodes, and its times from the clock.
    st = threads.statics
    for t in threads.threads:
        calls = t.calls
        mine = sorted((e for e in complete if e["tid"] == t.index), key=lambda e: e["args"]["row"])
        rows = np.array([e["args"]["row"] for e in mine])
        assert np.array_equal(rows, np.arange(len(calls)))
        first = np.asarray(calls.first, np.int64)
        last = np.asarray(calls.last, np.int64)
        start = np.array([ns(e["ts"]) for e in mine])
        end = start + np.array([ns(e["dur"]) for e in mine])
        # Starts are the clock's times of the first events; ends never later than the last event's.
        assert np.array_equal(start, np.rint(t.times(first)).astype(np.int64))
        assert np.all(end <= np.rint(t.times(last + 1)).astype(np.int64))
        incl = np.asarray(calls.incl_bytecodes, np.int64)
        assert np.array_equal([e["args"]["bytecodes"] for e in mine], incl)
        assert np.array_equal([e["args"]["self_bytecodes"] for e in mine], calls.excl_bytecodes())
        for row in range(0, len(calls), max(1, len(calls) // 500)):
            e = mine[row]
            flags = int(calls.flags[row])
            assert e["name"] + e["args"]["descriptor"] == threads.call_name(t, row)
            assert e["args"]["flags"] == "|".join(n for n, bit in E.FLAG_NAMES if flags & bit)
            if flags & Flag.NATIVE:
                assert e["cat"] == "native"
            elif flags & Flag.UNTRACED:
                assert e["cat"] == "untraced"
            else:
                method = int(calls.method[row])
                assert e["cat"] == ("jdk" if method and st.m_flags[method] & 128 else "app")


def test_chrome_instants_mark_every_native_call_and_exception(exceptions, tmp_path):
    out = tmp_path / "e.json"
    result = E.export_chrome(exceptions, out)
    events = load_chrome(out)["traceEvents"]
    instants = [e for e in events if e["ph"] == "i"]
    assert all(e["s"] == "t" for e in instants)
    assert len(instants) == result.instants
    native_rows = sum(int(np.count_nonzero(np.asarray(t.calls.flags) & Flag.NATIVE)) for t in exceptions.threads)
    assert sum(e["cat"] == "native" for e in instants) == native_rows > 0
    native_x = {(e["tid"], e["args"]["row"]): e for e in events if e["ph"] == "X" and e["cat"] == "native"}
    for e in instants:
        if e["cat"] == "native":
            assert native_x[(e["tid"], e["args"]["row"])]["ts"] == e["ts"]

    main = exceptions.thread("main")
    throws = [e for e in instants if e["cat"] == "exception" and e["name"].startswith("throw")]
    catches = [e for e in instants if e["cat"] == "exception" and e["name"].startswith("catch")]
    assert len(throws) == len(main.exceptions) > 10
    caught = main.exceptions[main.exceptions["catch_row"] != CATCH_UNCAUGHT]
    assert len(catches) == len(caught)
    expected = Counter(exceptions.call_name(main, int(r)) for r in main.exceptions["throw_row"])
    assert Counter(e["args"]["thrown_in"] for e in throws) == expected
    expected = Counter("class initialization" if r == CATCH_CLASS_INIT else exceptions.call_name(main, r)
                       for r in caught["catch_row"].tolist())
    assert Counter(e["args"]["caught_in"] for e in catches) == expected
    # Each instant lies within the call that threw (or caught) the exception.
    spans = {e["args"]["row"]: (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
             if e["ph"] == "X" and e["tid"] == main.index}
    for e, row in zip(throws, main.exceptions["throw_row"].tolist()):
        assert spans[row][0] <= ns(e["ts"]) <= spans[row][1]


def test_chrome_filters_keep_what_they_say(threads, tmp_path):
    out = tmp_path / "f.json"
    worker = threads.thread("worker-0")
    result = E.export_chrome(threads, out, E.CallFilter(threads=["worker-0", str(threads.thread("main").index)]))
    events = load_chrome(out)["traceEvents"]
    assert {e["tid"] for e in events if e["ph"] != "M" or e["name"] != "process_name"} == {
        worker.index, threads.thread("main").index}
    assert result.rows == len(worker.calls) + len(threads.thread("main").calls)

    # --include: only the program's classes, nested among themselves; --max-depth on the kept depth.
    E.export_chrome(threads, out, E.CallFilter(include=["Main"]))
    events = load_chrome(out)["traceEvents"]
    kept = [e for e in events if e["ph"] == "X"]
    expected = 0
    top_level = 0
    for t in threads.threads:
        matching = set()
        for row in range(len(t.calls)):
            if class_of(threads, t, row).startswith("Main"):
                matching.add(row)
                parent = int(t.calls.parent[row])
                while parent >= 0 and parent not in matching:
                    parent = int(t.calls.parent[parent])
                top_level += parent < 0
        expected += len(matching)
    assert len(kept) == expected > 0
    assert all(e["name"].startswith("Main") for e in kept)
    assert_nested(events)
    result = E.export_chrome(threads, out, E.CallFilter(include=["Main"], max_depth=0))
    assert result.rows == top_level
    assert_nested(load_chrome(out)["traceEvents"])

    # A time range keeps the calls overlapping it, and the exceptions inside it.
    E.export_chrome(threads, out)
    everything = [e for e in load_chrome(out)["traceEvents"] if e["ph"] == "X"]
    starts = sorted(ns(e["ts"]) for e in everything)
    lo, hi = starts[len(starts) // 3] / 1e6, starts[len(starts) // 2] / 1e6     # milliseconds
    result = E.export_chrome(threads, out, E.CallFilter(start_ms=lo, end_ms=hi))
    inside = [e for e in load_chrome(out)["traceEvents"] if e["ph"] == "X"]
    overlapping = [e for e in everything if ns(e["ts"]) < hi * 1e6 and
                   (ns(e["ts"]) + ns(e["dur"]) > lo * 1e6 or ns(e["ts"]) >= lo * 1e6)]
    assert len(inside) == result.rows == len(overlapping) < len(everything)

    # Depth alone: calls of depth 0 and 1.
    result = E.export_chrome(threads, out, E.CallFilter(max_depth=1))
    assert result.rows == sum(int(np.count_nonzero(np.asarray(t.calls.depth) <= 1)) for t in threads.threads)


def test_chrome_event_cap_refuses_or_truncates_to_a_nested_prefix(exceptions, tmp_path):
    out = tmp_path / "capped.json"
    with pytest.raises(E.ExportError, match="--max-events"):
        E.export_chrome(exceptions, out, max_events=1000)
    assert not out.exists() and list(tmp_path.iterdir()) == []

    result = E.export_chrome(exceptions, out, max_events=1000, truncate=True)
    data = load_chrome(out)
    events = [e for e in data["traceEvents"] if e["ph"] != "M"]
    assert result.truncated and data["otherData"]["truncated"] is True
    assert 0 < len(events) == result.rows + result.instants <= 1000
    assert result.total > 1000 and "truncated" in result.warnings[0]
    # What is kept is everything that starts before the cut: callers of kept calls are kept too.
    kept_rows = {e["args"]["row"] for e in events if e["ph"] == "X"}
    main = exceptions.thread("main")
    for row in kept_rows:
        parent = int(main.calls.parent[row])
        assert parent < 0 or parent in kept_rows
    assert_nested(events)


def test_chrome_without_clock_uses_event_indices_and_says_so(threads, tmp_path):
    # The same recording without its clock samples (as a trace from a recorder without a clock).
    trace = tmp_path / "noclock"
    shutil.copytree(threads.trace.path, trace, ignore=shutil.ignore_patterns("analysis", "clock.bin"))
    analysis = Analysis.open(trace)
    out = tmp_path / "n.json"
    result = E.export_chrome(analysis, out)
    data = load_chrome(out)
    assert result.has_clock is False and data["otherData"]["clock"] is False
    assert "event indices" in data["otherData"]["time"]
    main = analysis.thread("main")
    complete = sorted((e for e in data["traceEvents"] if e["ph"] == "X" and e["tid"] == main.index),
                      key=lambda e: e["args"]["row"])
    assert [e["ts"] for e in complete] == np.asarray(main.calls.first).tolist()
    assert all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in complete)
    assert_nested(data["traceEvents"], scale=int)
    # The tables leave the times empty.
    E.export_csv(analysis, tmp_path / "n.csv")
    header, rows = read_csv(tmp_path / "n.csv")
    assert {r[header.index("start_ns")] for r in rows} == {""}


# --------------------------------------------------------------------------------- collapsed

@pytest.mark.parametrize("weight", E.WEIGHTS)
def test_collapsed_lines_match_the_grammar_and_add_up_to_the_analyzer(threads, tmp_path, weight):
    out = tmp_path / "t.folded"
    result = E.export_collapsed(threads, out, weight=weight)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == result.rows > 0
    assert all(COLLAPSED_LINE.match(line) for line in lines), [l for l in lines if not COLLAPSED_LINE.match(l)][:3]
    stacks = [line.rsplit(" ", 1)[0] for line in lines]
    assert len(set(stacks)) == len(stacks), "one line per distinct stack"
    counts = sum(int(line.rsplit(" ", 1)[1]) for line in lines)
    expected = {"bytecodes": total_bytecodes(threads),
                "calls": sum(len(t.calls) for t in threads.threads),
                "blocks": int(threads.block_counts.sum())}[weight]
    assert counts == expected


def test_collapsed_per_thread_and_depth(threads, tmp_path):
    out = tmp_path / "p.folded"
    E.export_collapsed(threads, out, per_thread=True, threads=["worker-0", "consumer"])
    per_thread = Counter()
    for line in out.read_text().splitlines():
        assert COLLAPSED_LINE.match(line)
        stack, count = line.rsplit(" ", 1)
        per_thread[stack.split(";")[0]] += int(count)
    assert per_thread == {name: total_bytecodes(threads, [threads.thread(name)]) for name in ("worker-0", "consumer")}
    # The worker's work is under its lambda, under Thread.run.
    assert any(line.startswith("worker-0;java.lang.Thread.run();") and "Main.work(int)" in line
               for line in out.read_text().splitlines())

    E.export_collapsed(threads, out, max_depth=2)
    lines = out.read_text().splitlines()
    assert max(len(line.rsplit(" ", 1)[0].split(";")) for line in lines) == 3
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == total_bytecodes(threads)


def test_collapsed_frames_name_methods_and_synthetic_calls(exceptions, tmp_path):
    out = tmp_path / "e.folded"
    E.export_collapsed(exceptions, out, weight="calls")
    frames = Counter()
    for line in out.read_text().splitlines():
        frames.update(line.rsplit(" ", 1)[0].split(";"))
    assert "Main.main(String[])" in frames
    assert any(f.endswith(" [native]") for f in frames) and any(f.endswith(" [untraced]") for f in frames)
    native_calls = sum(int(np.count_nonzero(np.asarray(t.calls.flags) & Flag.NATIVE)) for t in exceptions.threads)
    assert sum(int(line.rsplit(" ", 1)[1]) for line in out.read_text().splitlines()
               if line.rsplit(" ", 1)[0].endswith(" [native]")) == native_calls


# --------------------------------------------------------------------------------- tables

def test_csv_calls_table_equals_the_call_tables(threads, tmp_path):
    out = tmp_path / "calls.csv"
    result = E.export_csv(threads, out)
    header, rows = read_csv(out)
    assert header == [name for name, _, _ in E.CALL_COLUMNS]
    assert len(rows) == result.rows == sum(len(t.calls) for t in threads.threads)
    offset = 0
    for t in threads.threads:
        calls = t.calls
        part = rows[offset:offset + len(calls)]
        offset += len(calls)
        if not len(calls):
            continue
        assert {r[0] for r in part} == {str(t.index)} and {r[1] for r in part} == {t.name}
        for name, expected in (("row", np.arange(len(calls))), ("parent", calls.parent), ("depth", calls.depth),
                               ("first_event", calls.first), ("last_event", calls.last),
                               ("incl_bytecodes", calls.incl_bytecodes), ("incl_blocks", calls.incl_blocks),
                               ("excl_bytecodes", calls.excl_bytecodes()), ("excl_blocks", calls.excl_blocks())):
            assert np.array_equal(column(header, part, name), np.asarray(expected)), name
        start, end = column(header, part, "start_ns"), column(header, part, "end_ns")
        assert np.array_equal(start, np.rint(t.times(np.asarray(calls.first))).astype(np.int64))
        assert np.all(end >= start)
        parents = np.asarray(calls.parent)
        inner = parents >= 0
        assert np.all(start[inner] >= start[parents[inner]]) and np.all(end[inner] <= end[parents[inner]])
        names = [f"{c}.{m}{d}" for c, m, d in zip(column(header, part, "class", str), column(header, part, "method", str),
                                                 column(header, part, "descriptor", str))]
        expected_names = [threads.call_name(t, row) for row in range(len(calls))]
        if names != expected_names:     # the row where they part, not two lists of thousands
            row = next(r for r, (a, b) in enumerate(zip(names, expected_names)) if a != b)
            pytest.fail(f"thread {t.name!r} row {row} of {len(calls)}: CSV {names[row]!r}, call_name "
                        f"{expected_names[row]!r}; method {calls.at('method', row)} "
                        f"(column {int(np.asarray(calls.method)[row])}), call site {calls.at('call_site', row)} "
                        f"(column {int(np.asarray(calls.call_site)[row])}), flags {calls.at('flags', row)}")
        flags = column(header, part, "flags", str)
        assert flags == ["|".join(n for n, bit in E.FLAG_NAMES if f & bit) for f in np.asarray(calls.flags).tolist()]


def test_csv_blocks_table_equals_the_block_counts(exceptions, tmp_path):
    out = tmp_path / "blocks.csv"
    result = E.export_csv(exceptions, out, table="blocks")
    header, rows = read_csv(out)
    assert header == [name for name, _, _ in E.BLOCK_COLUMNS]
    counts = exceptions.block_counts
    assert len(rows) == result.rows == int(np.count_nonzero(counts))
    assert column(header, rows, "count").sum() == counts.sum()
    assert column(header, rows, "bytecodes").sum() == total_bytecodes(exceptions)
    st = exceptions.statics
    executed = np.nonzero(counts)[0]
    assert np.array_equal(column(header, rows, "method_id"), st.b_method[executed])
    assert np.array_equal(column(header, rows, "block"), st.b_index[executed])
    assert np.array_equal(column(header, rows, "start_offset"), st.b_start[executed])
    assert np.array_equal(column(header, rows, "end_offset"), st.b_end[executed])
    names = {f"{c}.{m}{d}" for c, m, d in zip(column(header, rows, "class", str), column(header, rows, "method", str),
                                              column(header, rows, "descriptor", str))}
    assert names == {st.method_qualified(int(m)) for m in st.b_method[executed]}
    assert any(line for line in column(header, rows, "lines", str))   # the program was compiled with -g

    # One thread's blocks count that thread's executions only.
    E.export_csv(exceptions, out, table="blocks", threads=["main"])
    header, rows = read_csv(out)
    assert column(header, rows, "count").sum() == exceptions.thread("main").block_counts.sum()


def test_parquet_equals_csv(threads, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    for table, thread_names in (("calls", ()), ("blocks", ()), ("calls", ("producer",))):
        E.export_csv(threads, tmp_path / "t.csv", table=table, threads=thread_names)
        result = E.export_parquet(threads, tmp_path / "t.parquet", table=table, threads=thread_names)
        header, rows = read_csv(tmp_path / "t.csv")
        read = pq.read_table(tmp_path / "t.parquet")
        assert read.column_names == header
        assert read.num_rows == len(rows) == result.rows
        columns = {name: kind for name, kind, _ in (E.CALL_COLUMNS if table == "calls" else E.BLOCK_COLUMNS)}
        for i, name in enumerate(header):
            values = read.column(name).to_pylist()
            expected = [r[i] for r in rows]
            if columns[name] == "string":
                assert values == expected, name
            else:
                assert [str(v) if v is not None else "" for v in values] == expected, name


def test_names_that_need_escaping_survive_every_format(record, default_jdk, tmp_path):
    run = record("odd_names", default_jdk)
    assert run.exit_code == 0, run.describe()
    analysis = Analysis.open(run.trace_dir)
    name = 'odd;name, "quoted"\tand\nsecond line'
    odd = analysis.thread(name)

    E.export_chrome(analysis, tmp_path / "t.json")
    events = load_chrome(tmp_path / "t.json")["traceEvents"]
    assert [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name" and
            e["tid"] == odd.index] == [name]

    E.export_csv(analysis, tmp_path / "t.csv", threads=[name])
    header, rows = read_csv(tmp_path / "t.csv")
    assert len(rows) == len(odd.calls) and {r[header.index("thread_name")] for r in rows} == {name}

    E.export_collapsed(analysis, tmp_path / "t.folded", per_thread=True)
    lines = (tmp_path / "t.folded").read_text().splitlines()
    assert all(COLLAPSED_LINE.match(line) for line in lines)
    frame = 'odd,name, "quoted"\tand second line'
    mine = [line for line in lines if line.startswith(frame + ";")]
    assert sum(int(line.rsplit(" ", 1)[1]) for line in mine) == total_bytecodes(analysis, [odd])
    assert any("Main.work(int)" in line for line in mine)

    pq = pytest.importorskip("pyarrow.parquet")
    E.export_parquet(analysis, tmp_path / "t.parquet", threads=[name])
    assert set(pq.read_table(tmp_path / "t.parquet").column("thread_name").to_pylist()) == {name}


# --------------------------------------------------------------------------------- files

def test_a_failed_or_cancelled_export_leaves_no_file(exceptions, tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("an older export\n")
    with pytest.raises(Cancelled):
        E.export_csv(exceptions, out, cancelled=lambda: True)
    with pytest.raises(E.ExportError, match="no thread named 'nobody'"):
        E.export_chrome(exceptions, out, E.CallFilter(threads=["nobody"]))
    assert out.read_text() == "an older export\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
    with pytest.raises(E.ExportError, match="is a directory"):
        E.export_csv(exceptions, tmp_path)
    with pytest.raises(E.ExportError, match="does not exist"):
        E.export_collapsed(exceptions, tmp_path / "missing" / "x.folded")
    for bad in (dict(table="rows"),):
        with pytest.raises(E.ExportError, match="unknown table"):
            E.export_csv(exceptions, out, **bad)
    with pytest.raises(E.ExportError, match="unknown weight"):
        E.export_collapsed(exceptions, out, weight="time")
    with pytest.raises(E.ExportError, match="empty time range"):
        E.export_chrome(exceptions, out, E.CallFilter(start_ms=5, end_ms=1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_an_existing_pipe_is_written_in_place_not_replaced(exceptions, tmp_path):
    """A named pipe (like /dev/null or a terminal) is not a file: renaming the finished export
    over it would replace it, so it is written directly."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()))
    reader.start()
    result = E.export_collapsed(exceptions, pipe, weight="calls")
    reader.join(timeout=60)
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert len(received[0].decode().splitlines()) == result.rows > 0
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def test_java_parameters():
    assert E.java_parameters("(Ljava/lang/String;[I[[Ljava/util/Map$Entry;JZ)V") == "(String,int[],Map$Entry[][],long,boolean)"
    assert E.java_parameters("()V") == "()"


@pytest.mark.slow
def test_javac_trace_to_every_format(default_jdk, record_command, tmp_path):
    """javac compiling one file: about 50 million events and 10 million calls, exported as the
    explorer's File → Export does."""
    source = Path(__file__).resolve().parents[1] / "programs" / "exception_paths" / "Main.java"
    run = record_command(default_jdk, ["-m", "jdk.compiler/com.sun.tools.javac.Main", "-d", "out", str(source)],
                         tmp_path)
    assert run.exit_code == 0, run.describe()
    analysis = Analysis.open(run.trace_dir)
    calls = sum(len(t.calls) for t in analysis.threads)
    assert calls > 1_000_000
    out = tmp_path / "exports"
    out.mkdir()

    # chrome: refused over the default cap, truncated to it on request, nested.
    with pytest.raises(E.ExportError, match="--max-events"):
        E.export_chrome(analysis, out / "t.json")
    result = E.export_chrome(analysis, out / "t.json", truncate=True)
    data = load_chrome(out / "t.json")
    events = [e for e in data["traceEvents"] if e["ph"] != "M"]
    assert result.truncated and len(events) == result.rows + result.instants <= E.DEFAULT_MAX_EVENTS
    assert result.total > E.DEFAULT_MAX_EVENTS
    assert_nested(events)

    # collapsed: every stack in the grammar, the counts adding up to every bytecode.
    E.export_collapsed(analysis, out / "t.folded", max_depth=40)
    counted = 0
    with open(out / "t.folded", encoding="utf-8") as f:
        for line in f:
            assert COLLAPSED_LINE.match(line.rstrip("\n")), line
            counted += int(line.rsplit(" ", 1)[1])
    assert counted == total_bytecodes(analysis)

    # csv: a header and one line per call (counted without reading the file at once).
    E.export_csv(analysis, out / "calls.csv")
    with open(out / "calls.csv", "rb") as f:
        lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    assert lines == calls + 1
    E.export_csv(analysis, out / "blocks.csv", table="blocks")

    # parquet: as many rows; the blocks table equal to the CSV.
    pq = pytest.importorskip("pyarrow.parquet")
    E.export_parquet(analysis, out / "calls.parquet")
    E.export_parquet(analysis, out / "blocks.parquet", table="blocks")
    assert pq.ParquetFile(out / "calls.parquet").metadata.num_rows == calls
    header, rows = read_csv(out / "blocks.csv")
    read = pq.read_table(out / "blocks.parquet")
    assert read.column_names == header and read.num_rows == len(rows)
    for i, name in enumerate(header):
        assert [str(v) for v in read.column(name).to_pylist()] == [r[i] for r in rows], name
    assert sorted(p.name for p in out.iterdir()) == ["blocks.csv", "blocks.parquet", "calls.csv", "calls.parquet",
                                                    "t.folded", "t.json"]
