"""A thread that records without pause gets a clock sample at least every SAMPLE_EVENTS events,
although one of its buffers (one chunk) holds up to BUFFER_MAX_EVENTS: between two samples time
is interpolated by event count, and the fewer events an interval holds, the shorter the pause it
can hide (jbgui/model/time_quality.py). Until buffers grew to 262,144 events the only samples of
such a thread were its buffers' hand-overs; now a full SAMPLE_EVENTS before the end of a buffer
takes an exact sample instead (ThreadTrace.overflow)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model.format.chunks import StreamReader
from jbgui.model.format.clock import read_clock
from jbgui.model.tracedir import TraceDir

RUNTIME = Path(__file__).resolve().parents[2] / "jbgui" / "agent" / "java" / "jbgui" / "runtime"


def sample_events() -> int:
    """ThreadTrace.SAMPLE_EVENTS, from the one place that defines it."""
    (value,) = re.findall(r"static final int SAMPLE_EVENTS = (\d+);", (RUNTIME / "ThreadTrace.java").read_text())
    return int(value)


def test_a_busy_threads_samples_are_no_further_apart_than_before_buffers_grew(record, jdk):
    every = sample_events()
    assert every < layout.BUFFER_MAX_EVENTS
    # level=method: no marked starts and no loop records, so a sample's position counts stored
    # words, and 3,000,000 calls of an instance method on its own class make 6,000,000 of them
    run = record("hot_loop", jdk, level="method")
    assert run.exit_code == 0, run.describe()
    assert "sum 33863034100160" in run.stdout
    trace = TraceDir(run.trace_dir)
    main = next(row["index"] for row in trace.threads if row.get("name") == "main")

    with StreamReader(trace.stream_path(main)) as reader:
        counts = [record.header.count for record in reader.chunks(decode=False) if record.ok]
    total = sum(counts)
    assert total > 6_000_000
    # the buffer grew past what one sample interval holds: some chunks are bigger than it
    assert max(counts) > 2 * every, counts

    samples, problems = read_clock(run.trace_dir / "clock.bin")
    assert problems == []
    positions = np.unique(samples["position"][samples["stream"] == main])
    assert positions[-1] == total, (positions[-5:], total)
    # from the first event to the last, no interval longer than a sample's (a probe stores at
    # most three words past the limit before it tests it)
    gaps = np.diff(np.concatenate([[0], positions]))
    assert gaps.max() <= every + 3, (int(gaps.max()), every)
    # and they are samples, not hand-overs: several per chunk of the big ones
    assert len(positions) >= total // every
