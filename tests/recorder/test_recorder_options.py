"""Agent options: filters, the event selection, and bad options stopping the JVM before main."""

from __future__ import annotations

import pytest

from jbgui.model import layout

# ---------------------------------------------------------------------------------------------
# Bad options: a clear message and no untraced run.


def assert_stopped_before_main(run, *words: str) -> None:
    assert run.exit_code != 0, run.describe()
    assert "Hello, world!" not in run.stdout, "main ran although the agent could not start"
    for word in words:
        assert word in run.stderr, f"stderr does not name {word!r}\n{run.describe()}"


def test_bad_level_stops_the_jvm(jdk, record):
    run = record("hello", jdk, level="bogus")
    assert_stopped_before_main(run, "level", "bogus")


def test_unknown_option_stops_the_jvm(jdk, record):
    run = record("hello", jdk, colour="blue")
    assert_stopped_before_main(run, "colour")


def test_missing_include_file_stops_the_jvm(jdk, record, tmp_path):
    missing = tmp_path / "no-such-include.txt"
    run = record("hello", jdk, include=missing)
    assert_stopped_before_main(run, str(missing))


def test_an_include_file_of_absurd_size_stops_the_jvm(jdk, record, tmp_path):
    huge = tmp_path / "include.txt"
    with huge.open("wb") as out:
        out.truncate(17 << 20)  # sparse: 17 MiB of zero bytes, over the agent's 16 MiB bound
    run = record("hello", jdk, include=huge)
    assert_stopped_before_main(run, str(huge), "is over")


def test_unwritable_output_directory_stops_the_jvm(jdk, record, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    out = blocker / "trace"
    run = record("hello", jdk, out=out)
    assert_stopped_before_main(run, str(out))
    assert not out.exists()


def test_output_directory_under_proc_stops_the_jvm(jdk, record):
    run = record("hello", jdk, out="/proc/jbgui-cannot-write-here")
    assert_stopped_before_main(run, "/proc/jbgui-cannot-write-here")


def test_bad_event_selection_file_stops_the_jvm(jdk, record, tmp_path):
    events = tmp_path / "events.txt"
    events.write_text("event method_start\nevent no_such_event\n")
    run = record("hello", jdk, events=events)
    assert_stopped_before_main(run, "no_such_event")


# ---------------------------------------------------------------------------------------------
# Filters and event selection, on the exceptions program.


def same_behaviour(untraced, traced) -> None:
    assert traced.exit_code == untraced.exit_code, traced.describe()
    assert traced.stdout == untraced.stdout
    assert traced.trace_json()["status"] == "complete"


def started_classes(trace) -> set[str]:
    return {trace.class_of(mid) for mid in trace.started_methods()}


def test_jdk_off_traces_only_the_program(jdk, program_runs, facts):
    untraced, traced = program_runs("exceptions", jdk, jdk=False)
    same_behaviour(untraced, traced)
    trace = facts(traced.trace_dir)
    classes = started_classes(trace)
    assert classes == {"Main", "Main$Fragile"}
    assert trace.frames(trace.method_id("Main", "recurse", "(II)I"), trace.thread("main")) == (7, 3, 4)


@pytest.fixture
def filter_file(tmp_path):
    def write(*prefixes: str):
        path = tmp_path / "filter.txt"
        path.write_text("# class prefixes, one a line\n" + "\n".join(prefixes) + "\n")
        return path

    return write


def test_include_filter(jdk, record, untraced_run, facts, filter_file):
    traced = record("exceptions", jdk, include=filter_file("Main$Fragile"))
    same_behaviour(untraced_run("exceptions", jdk), traced)
    trace = facts(traced.trace_dir)
    assert started_classes(trace) == {"Main$Fragile"}
    assert trace.frames(trace.method_id("Main$Fragile", "<init>", "(I)V")) == (3, 2, 1)


def test_exclude_filter(jdk, record, untraced_run, facts, filter_file):
    traced = record("exceptions", jdk, exclude=filter_file("Main$Fragile", "java/lang/String"))
    same_behaviour(untraced_run("exceptions", jdk), traced)
    trace = facts(traced.trace_dir)
    classes = started_classes(trace)
    assert "Main" in classes
    assert not [c for c in classes if c.startswith(("Main$Fragile", "java/lang/String"))]
    assert "java/lang/Integer" in classes or "java/lang/Throwable" in classes


def test_without_exception_exit_events(jdk, record, untraced_run, facts, tmp_path):
    """A JBInsTrace-style trace: the event selection leaves out exception_exit."""
    events = tmp_path / "events.txt"
    events.write_text(
        "# the seed's events only\nevent class_load\nevent method_start\nevent method_end\n"
        "event basic_block\nevent receiver_type\n"
    )
    traced = record("exceptions", jdk, events=events)
    same_behaviour(untraced_run("exceptions", jdk), traced)
    assert "exception_exit" not in traced.trace_json()["agent"]["options"]["events"]
    trace = facts(traced.trace_dir)
    from_facts = trace.frames(trace.method_id("Main", "recurse", "(II)I"), trace.thread("main"))
    assert from_facts == (7, 3, 0)
    assert trace.count_extended(layout.EXT_EXCEPTION_EXIT) == 0
    assert trace.count_extended(layout.EXT_THROWABLE) == 0  # comes with EXCEPTION_EXIT only


def test_record_off_instruments_and_records_nothing(jdk, record, untraced_run):
    """record=off: every class instrumented as usual, no event recorded. Every thread then gets
    the shared discarding trace from Tracer.enter (ThreadTrace.DISCARD), several threads at once
    (the multithread program: workers, a pool, a producer and a consumer): the program prints and
    exits as untraced, and the trace is complete and empty."""
    import json

    untraced = untraced_run("multithread", jdk)
    run = record("multithread", jdk, record="off")
    assert run.exit_code == untraced.exit_code == 0, run.describe()
    assert run.stdout == untraced.stdout
    meta = json.loads((run.trace_dir / "trace.json").read_text())
    assert meta["status"] == "complete"
    assert meta["agent"]["options"]["record"] is False
    assert meta["counts"]["events"] == 0 and meta["counts"]["lost_events"] == 0
    assert meta["counts"]["classes_instrumented"] > 100
    assert not list((run.trace_dir / "events").glob("*.jbt")) or all(
        p.stat().st_size <= layout.STREAM_HEADER_SIZE for p in (run.trace_dir / "events").glob("*.jbt"))
