"""The preview the explorer paints while a trace is replayed (jbgui.model.preview), on a real
recording of several threads: the threads and their events are the replay's, each thread's
activity adds up to the events its clock covers, the replay's progress maps to times; and a
damaged clock or stream leaves the rest of the preview."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from jbgui.model.analysis import Analysis
from jbgui.model.preview import BUCKETS, preview


@pytest.fixture(scope="module")
def trace(record, default_jdk):
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def test_the_preview_has_the_replays_threads_and_events(trace):
    p = preview(trace)
    analysis = Analysis.open(trace)
    assert [t.index for t in p.threads] == [t.index for t in analysis.threads]
    assert {t.name for t in p.threads} >= {"main", "worker-0", "producer", "consumer"}
    replayed = {t.index: t for t in analysis.threads}
    for t in p.threads:
        assert t.events == replayed[t.index].events, t.name
        assert t.stream_bytes == (trace / "events" / f"T{t.index:06d}.jbt").stat().st_size
    assert p.has_clock and p.t_min < p.t_max


def test_a_threads_activity_adds_up_to_the_events_its_clock_covers(trace):
    p = preview(trace)
    busy = [t for t in p.threads if len(t.points) >= 2]
    assert busy
    for t in busy:
        assert len(t.activity) == BUCKETS and (t.activity >= 0).all()
        covered = t.points[-1, 0] - t.points[0, 0]
        assert t.activity.sum() == pytest.approx(covered, rel=1e-9, abs=1e-6), t.name
        # nothing outside the thread's own time
        edges = np.linspace(p.t_min, p.t_max, BUCKETS + 1)
        outside = (edges[1:] <= t.t_first) | (edges[:-1] >= t.t_last)
        assert not t.activity[outside].any(), t.name


def test_the_replays_progress_says_how_far_each_thread_has_come(trace):
    p = preview(trace)
    assert all(v == t.t_first for t, v in zip(p.threads, p.replayed_until(0).values()))
    assert all(v is None for v in p.replayed_until(p.total_bytes).values())
    first = p.threads[0]
    half = p.replayed_until(first.stream_bytes // 2)
    assert first.t_first <= half[first.index] <= first.t_last
    assert all(half[t.index] == t.t_first for t in p.threads[1:])


def test_a_damaged_clock_or_stream_leaves_the_rest(trace, tmp_path):
    copy = tmp_path / "t"
    shutil.copytree(trace, copy, ignore=shutil.ignore_patterns("analysis"))
    (copy / "clock.bin").write_bytes(b"not a clock file at all")
    p = preview(copy)
    assert len(p.threads) == len(preview(trace).threads)
    assert not p.has_clock and all(not t.activity.any() for t in p.threads)
    assert p.t_max == max(t.events for t in p.threads)          # events on the x axis
    stream = copy / "events" / f"T{p.threads[0].index:06d}.jbt"
    stream.write_bytes(stream.read_bytes()[:100])                # cut inside its first chunk
    cut = preview(copy)
    assert cut.threads[0].events == 0 and len(cut.threads) == len(p.threads)
    shutil.rmtree(copy / "events")
    assert preview(copy).threads == []


def test_the_replays_progress_moves_within_a_thread(trace, tmp_path, monkeypatch):
    """Progress is reported in stream bytes as the replay goes, within a stream too (a thread of
    a billion events used to hold the bar still until it ended): never backwards, never beyond
    the total, ending at it; the preview maps it to times."""
    from jbgui.model import replay

    copy = tmp_path / "t"
    shutil.copytree(trace, copy, ignore=shutil.ignore_patterns("analysis"))
    monkeypatch.setattr(replay, "BATCH_EVENTS", 4096)      # many batches from a small program
    seen: list[tuple[int, int]] = []
    Analysis.open(copy, progress=lambda done, total: seen.append((done, total)))
    p = preview(copy)
    total = p.total_bytes
    assert {t for _d, t in seen} == {total}
    done = [d for d, _t in seen]
    assert done == sorted(done) and done[-1] == total and max(done) <= total
    biggest = max(p.threads, key=lambda t: t.events)
    assert biggest.events > 4 * 4096
    start = sum(t.stream_bytes for t in p.threads[:p.threads.index(biggest)])
    inside = {d for d in done if start < d < start + biggest.stream_bytes}
    assert len(inside) >= 3, "the biggest thread's replay reported its progress as it went"
