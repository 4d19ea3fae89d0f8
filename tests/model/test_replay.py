"""Replay of real traces recorded by the project's agent: call trees, exception records, synthetic
native/untraced rows, the handler-list fallback, killed programs, the cache and the commands.

The exactness check against the JDK's debugger is tests/model/test_replay_oracle.py; these tests
pin behaviour the oracle does not see (flags, synthetic rows, truncated and cached traces).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import TraceError
from jbgui.model.analysis import CATCH_CLASS_INIT, Analysis, Flag

APP = ("Main",)


def app_rows(analysis: Analysis, thread) -> list[int]:
    """Rows of the thread whose method belongs to the test program (classes Main, Main$…)."""
    calls = thread.calls
    out = []
    for row in range(len(calls)):
        m = int(calls.method[row])
        if m and analysis.statics.class_of_method(m).split("$")[0] in APP and not calls.flags[row] & (
                Flag.NATIVE | Flag.UNTRACED):
            out.append(row)
    return out


def short(analysis: Analysis, thread, row: int) -> str:
    name = analysis.call_name(thread, row)
    return name.split("(")[0]


def app_ancestor(analysis: Analysis, thread, row: int) -> int:
    calls = thread.calls
    while row >= 0:
        m = int(calls.method[row])
        if m and analysis.statics.class_of_method(m).split("$")[0] in APP:
            return row
        row = int(calls.parent[row])
    return -1


def app_shape(analysis: Analysis, thread_name: str = "main"):
    """What two recordings of one deterministic program must agree on: the application calls with
    their application depth and exceptional flag, and each exception's application throw and
    catch frames (as positions in that call list)."""
    thread = analysis.thread(thread_name)
    rows = app_rows(analysis, thread)
    position = {row: i for i, row in enumerate(rows)}
    calls = thread.calls
    depth = {}
    shape = []
    for row in rows:
        parent = app_ancestor(analysis, thread, int(calls.parent[row]))
        depth[row] = depth[parent] + 1 if parent >= 0 else 0
        shape.append((short(analysis, thread, row), depth[row], bool(calls.flags[row] & Flag.EXCEPTIONAL)))
    exceptions = []
    for e in thread.exceptions:
        throw = app_ancestor(analysis, thread, int(e["throw_row"]))
        catch = int(e["catch_row"])
        catch = position.get(catch) if catch >= 0 else "uncaught"
        if throw >= 0 and catch is not None:
            exceptions.append((position[throw], catch))
    return shape, exceptions


@pytest.fixture(scope="module")
def exception_trace(record, default_jdk) -> Analysis:
    run = record("exception_paths", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


def test_recursion_is_caught_by_the_outer_frame_whose_try_is_active(exception_trace):
    a = exception_trace
    main = a.thread("main")
    calls = main.calls
    dives = [r for r in app_rows(a, main) if short(a, main, r) == "Main.dive"]
    assert len(dives) == 9  # dive(4, 3) → n = 4, 3, 2, 1, 0, then dive(3, 1)
    dives = dives[:5]
    bottom = dives[-1]
    record = [e for e in main.exceptions if e["throw_row"] == bottom]
    assert len(record) == 1
    # n = 3 (the second dive frame) catches, although n = 2 and n = 1 are dive frames too.
    assert record[0]["catch_row"] == dives[1]
    assert a.statics.class_name_of_id(int(record[0]["exc_class"])) == "java.lang.ArithmeticException"
    for r in dives[2:]:
        assert calls.flags[r] & Flag.EXCEPTIONAL and not calls.flags[r] & Flag.INFERRED
    assert calls.flags[dives[1]] & Flag.CAUGHT and not calls.flags[dives[1]] & Flag.EXCEPTIONAL


def test_exception_in_the_same_frame_is_recorded_as_thrown_and_caught_there(exception_trace):
    a = exception_trace
    main = a.thread("main")
    same = [r for r in app_rows(a, main) if short(a, main, r) == "Main.sameFrame"]
    assert len(same) == 2  # sameFrame(0) returns, sameFrame(5) throws and catches
    records = {int(e["throw_row"]): int(e["catch_row"]) for e in main.exceptions}
    assert same[0] not in records
    assert records[same[1]] == same[1]
    assert not main.calls.flags[same[1]] & Flag.EXCEPTIONAL


def test_handler_lists_replay_a_trace_without_exit_records_the_same(record, default_jdk, exception_trace, tmp_path):
    """A JBInsTrace-style trace (no EXCEPTION_EXIT) is replayed from the handler lists; the
    application's calls and exceptions come out as with the exit records."""
    selection = tmp_path / "events.txt"
    selection.write_text("".join(f"event {e}\n" for e in (
        "class_load", "method_start", "method_end", "basic_block", "receiver_type")))
    run = record("exception_paths", default_jdk, events=selection)
    assert run.exit_code == 0, run.describe()
    without = Analysis.open(run.trace_dir)
    shape_with, exc_with = app_shape(exception_trace)
    shape_without, exc_without = app_shape(without)
    assert shape_without == shape_with
    assert exc_without == exc_with
    main = without.thread("main")
    inferred = np.asarray(main.calls.flags) & Flag.INFERRED
    assert inferred.any()  # the exits really were inferred


def test_native_calls_are_rows_and_reflection_nests_under_them(record, default_jdk):
    run = record("native_calls", default_jdk)
    assert run.exit_code == 0, run.describe()
    a = Analysis.open(run.trace_dir)
    main = a.thread("main")
    calls = main.calls
    arraycopy = [r for r in range(len(calls)) if a.call_name(main, r).startswith("java.lang.System.arraycopy(")]
    assert arraycopy, "System.arraycopy is native: a synthetic row per call"
    for r in arraycopy:
        assert calls.flags[r] & Flag.NATIVE
        if calls.end[r] == r + 1:  # no Java code ran inside (the JVM may construct an exception)
            assert calls.first[r] == calls.last[r]
    parents = {short(a, main, int(calls.parent[r])) for r in arraycopy}
    assert "Main.copy" in parents
    # Application code run by Method.invoke sits under a synthetic native row (the JVM's
    # reflective call), flagged as a callback.
    callbacks = [r for r in app_rows(a, main) if calls.flags[r] & Flag.CALLBACK]
    assert callbacks
    for r in callbacks:
        assert calls.flags[int(calls.parent[r])] & (Flag.NATIVE | Flag.UNTRACED)


def test_uncaught_exception_marks_the_thread_frames(record, default_jdk):
    run = record("thread_uncaught", default_jdk)
    a = Analysis.open(run.trace_dir)
    worker = a.thread("worker-fail")
    calls = worker.calls
    rows = {short(a, worker, r): r for r in app_rows(a, worker)}
    assert set(rows) >= {"Main$Failing.run", "Main.step", "Main.failDeep"}
    for name in ("Main$Failing.run", "Main.step", "Main.failDeep"):
        flags = int(calls.flags[rows[name]])
        assert flags & Flag.EXCEPTIONAL and flags & Flag.UNCAUGHT, (name, Flag.names(flags))
    uncaught = [e for e in worker.exceptions if e["catch_row"] < 0]
    assert len(uncaught) == 1
    assert uncaught[0]["throw_row"] == rows["Main.failDeep"]
    assert a.statics.class_name_of_id(int(uncaught[0]["exc_class"])) == "java.lang.IllegalStateException"
    # main is not affected
    main_flags = np.asarray(a.thread("main").calls.flags)
    assert not (main_flags & Flag.UNCAUGHT).any()


def test_an_exception_leaving_a_static_initializer_is_consumed_by_class_initialization(record, default_jdk):
    """Broken.<clinit> throws: the exception ends there (the JVM's class initialization consumes
    it); main then catches an ExceptionInInitializerError of its own, thrown where it used Broken."""
    run = record("static_init", default_jdk)
    assert run.exit_code == 0, run.describe()
    a = Analysis.open(run.trace_dir)
    main = a.thread("main")
    calls = main.calls
    rows = [r for r in app_rows(a, main)]
    clinit = next(r for r in rows if a.call_name(main, r).startswith("Main$Broken.<clinit>("))
    explode = next(r for r in rows if a.call_name(main, r).startswith("Main$Broken.explode("))
    assert calls.flags[clinit] & Flag.EXCEPTIONAL and calls.flags[clinit] & Flag.IMPLICIT
    assert not calls.flags[clinit] & Flag.UNCAUGHT
    record_ = next(e for e in main.exceptions if e["throw_row"] == explode)
    assert record_["catch_row"] == CATCH_CLASS_INIT
    assert a.statics.class_name_of_id(int(record_["exc_class"])) == "java.lang.IllegalStateException"
    main_row = next(r for r in rows if a.call_name(main, r).startswith("Main.main("))
    in_main = [e for e in main.exceptions if e["throw_row"] == main_row and e["catch_row"] == main_row]
    assert len(in_main) == 2, "ExceptionInInitializerError, then NoClassDefFoundError, both caught in main"
    assert not np.asarray(calls.flags)[main_row] & Flag.UNCAUGHT


def test_inclusive_counts_and_block_counts_agree(exception_trace):
    a = exception_trace
    for t in a.threads:
        calls = t.calls
        if not len(calls):
            continue
        tops = np.nonzero(np.asarray(calls.parent) == -1)[0]
        # top-level calls together cover every block the thread executed
        assert int(np.asarray(calls.incl_blocks)[tops].sum()) == int(t.block_counts.sum())
        assert (calls.excl_bytecodes() >= 0).all()
        assert (np.asarray(calls.end) > np.arange(len(calls))).all()
    assert int(a.block_counts.sum()) == sum(int(t.block_counts.sum()) for t in a.threads)


def test_killed_program_replays_with_truncated_frames(start_program, default_jdk):
    process, trace = start_program("long_running", default_jdk)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not any((trace / "events").glob("*.jbt")):
            time.sleep(0.2)
        time.sleep(1.5)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    a = Analysis.open(trace)
    main = a.thread("main")
    flags = np.asarray(main.calls.flags)
    assert len(flags) > 0
    assert (flags & Flag.TRUNCATED).any()
    assert not main.ended


def test_second_open_is_served_from_the_cache(exception_trace):
    path = exception_trace.trace.path
    started = time.perf_counter()
    again = Analysis.open(path)
    elapsed = time.perf_counter() - started
    assert again.from_cache
    assert elapsed < 1.0
    main, main2 = exception_trace.thread("main"), again.thread("main")
    assert np.array_equal(np.asarray(main.calls.method), np.asarray(main2.calls.method))
    assert np.array_equal(main.exceptions, main2.exceptions)


def test_a_changed_stream_is_replayed_again(record, default_jdk, tmp_path):
    run = record("hello", default_jdk)
    first = Analysis.open(run.trace_dir)
    assert not first.from_cache
    stream = next((run.trace_dir / "events").glob("*.jbt"))
    os.utime(stream, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    assert not Analysis.open(run.trace_dir).from_cache
    assert Analysis.open(run.trace_dir).from_cache


def test_not_a_trace_is_a_clear_error(tmp_path):
    with pytest.raises(TraceError, match="trace.json"):
        Analysis.open(tmp_path)
    with pytest.raises(TraceError, match="no such trace directory"):
        Analysis.open(tmp_path / "missing")


def jbtrace(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jbgui.cli", *args], capture_output=True, text=True, timeout=300)


def test_calls_command_prints_the_application_calls(exception_trace):
    out = jbtrace("calls", str(exception_trace.trace.path), "--include", "Main", "--thread", "main")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "main\t0\tMain.<clinit>()V\timplicit"
    assert lines[1] == "main\t0\tMain.main([Ljava/lang/String;)V\tcaught,implicit"
    assert lines[2] == "main\t1\tMain.sameFrame(I)I\t"
    assert lines[3] == "main\t1\tMain.sameFrame(I)I\tcaught"
    dive = [line for line in lines if "\tMain.dive(II)I" in line]
    assert dive[:5] == ["main\t1\tMain.dive(II)I\t", "main\t2\tMain.dive(II)I\tcaught",
                        "main\t3\tMain.dive(II)I\texceptional", "main\t4\tMain.dive(II)I\texceptional",
                        "main\t5\tMain.dive(II)I\texceptional"]
    every = jbtrace("calls", str(exception_trace.trace.path))
    assert len(every.stdout.splitlines()) == sum(len(t.calls) for t in exception_trace.threads)


def test_stats_command_json(exception_trace):
    out = jbtrace("stats", str(exception_trace.trace.path), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["run"]["threads"] == len(exception_trace.threads)
    assert data["run"]["metrics"]["bytecodes"] == sum(t["metrics"]["bytecodes"] for t in data["threads"])
    main = next(t for t in data["threads"] if t["name"] == "main")
    assert main["exceptions"] == len(exception_trace.thread("main").exceptions)
    dive = [m for m in data["hottest_methods"] if m["method"].startswith("Main.dive")]
    text = jbtrace("stats", str(exception_trace.trace.path))
    assert "hottest methods" in text.stdout and "bytecodes" in text.stdout


def test_bad_trace_argument_exits_2_without_traceback(tmp_path):
    out = jbtrace("calls", str(tmp_path / "nowhere"))
    assert out.returncode == 2
    assert "no such trace directory" in out.stderr
    assert "Traceback" not in out.stderr
