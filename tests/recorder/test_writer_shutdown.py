"""The JVM's exit waits for the trace writer as long as it makes progress, and no longer.

A cold start on a loaded machine (every class loaded before the agent described at the exit of a
short program) once took longer than the fixed two minutes the exit used to wait: the trace ended
"incomplete" with all its events still queued. Now the exit gives up only on a writer that has
handled nothing for a while (120 s; ``-Djbgui.writerStallSeconds`` here). The writer is slowed
with ``-Djbgui.writerDelayMillis`` (a pause before each item it handles).
"""

from __future__ import annotations

import json


def _status(run) -> str:
    return json.loads((run.trace_dir / "trace.json").read_text())["status"]


def test_a_slow_writer_that_keeps_going_finishes_the_trace(jdk, record, run_untraced):
    # About 900 items (one per class described, then the event chunks) at 5 ms each: several
    # seconds of writing after main returns, longer than the 2 s the exit allows a stalled writer.
    traced = record("hello", jdk, jvm_args=["-Djbgui.writerDelayMillis=5", "-Djbgui.writerStallSeconds=2"])
    assert traced.exit_code == 0 and traced.stdout == run_untraced("hello", jdk).stdout, traced.describe()
    assert _status(traced) == "complete", traced.describe()
    meta = json.loads((traced.trace_dir / "trace.json").read_text())
    assert meta["counts"]["events"] > 1000 and meta["counts"]["lost_events"] == 0


def test_a_stalled_writer_is_left_and_the_trace_says_incomplete(jdk, record):
    # Each item takes 4 s: the writer handles nothing for more than the 1 s allowed.
    traced = record("hello", jdk, jvm_args=["-Djbgui.writerDelayMillis=4000", "-Djbgui.writerStallSeconds=1"])
    assert traced.exit_code == 0, traced.describe()
    assert _status(traced) == "incomplete", traced.describe()
