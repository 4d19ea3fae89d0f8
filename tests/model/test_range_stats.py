"""Range statistics and interpolated times on traces the agent records, checked against the call
table row by row (the model computes them vectorised; the tests count them the slow way)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jbgui.model import call_queries as Q
from jbgui.model import range_stats as R
from jbgui.model import time_quality as T
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def sleeps(program_runs, default_jdk) -> Analysis:
    # Without the recorder's clock stamps around blocking calls (blocking=off): the sleep's time
    # is known only from the samples at buffer flushes.
    _untraced, run = program_runs("sleeps", default_jdk, blocking="off")   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.fixture(scope="module")
def exceptions(program_runs, default_jdk) -> Analysis:
    _untraced, run = program_runs("exception_paths", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


def rows_named(a: Analysis, thread, prefix: str) -> list[int]:
    return [r for r in range(len(thread.calls)) if a.call_name(thread, r).startswith(prefix)]


def test_a_sleep_between_clock_samples_is_marked_interpolated(sleeps):
    a = sleeps
    main = a.thread("main")
    sleep = rows_named(a, main, "java.lang.Thread.sleep(")
    assert len(sleep) == 1
    row = sleep[0]
    measured = Q.duration(main, [row])[0]
    # The recorder has no stamp inside the sleep: its measured time is far below 200 ms ...
    assert measured < 50e6
    # ... and the GUI says so, for the sleep and for the work after it that took its time.
    flags = T.interpolated(main)
    assert flags[row]
    after = [r for r in rows_named(a, main, "Main.work(") if r > row]
    assert flags[after[0]]
    # The pause is the length of the slow interval that holds the sleep's both ends.
    assert T.uncertainty(main.clock, main.calls.first[[row]], main.calls.last[[row]])[0] > 100e6
    # Calls of the usual pace are not marked: most of the thread.
    step_rows = np.array(rows_named(a, main, "Main.step("))
    assert np.mean(flags[step_rows]) < 0.5
    # A thread without a clock has nothing interpolated.
    class NoClock:
        calls = main.calls
        clock = np.zeros((0, 2))
    assert not T.interpolated(NoClock()).any()


def test_slow_intervals_are_those_far_above_the_usual_pace():
    clock = np.array([[0, 0], [1000, 20_000], [2000, 40_000], [2010, 200_040_000], [3000, 200_060_000]], float)
    assert T.slow_intervals(clock).tolist() == [False, False, True, False]
    # a call inside the slow interval: the whole interval is its uncertainty
    assert T.uncertainty(clock, np.array([2003]), np.array([2005]))[0] == 200_000_000
    # a call that spans it from outside: exact enough
    assert T.uncertainty(clock, np.array([1500]), np.array([2500]))[0] == 0


def brute_force(a: Analysis, e0: int, e1: int, thread):
    calls = thread.calls
    first, last = np.asarray(calls.first), np.asarray(calls.last)
    started = [r for r in range(len(calls)) if e0 <= first[r] < e1]
    contained = [r for r in started if last[r] < e1]
    own = {}
    for r in contained:
        children = [c for c in contained if calls.parent[c] == r]
        bc = int(calls.incl_bytecodes[r]) - sum(int(calls.incl_bytecodes[c]) for c in children)
        m = int(calls.method[r])
        calls_, total = own.get(m, (0, 0))
        own[m] = (calls_ + 1, total + bc)
    return started, contained, own


@pytest.mark.parametrize("fraction", [(0.0, 1.01), (0.3, 0.55), (0.6, 0.61)])
def test_range_statistics_equal_the_call_table_counted_call_by_call(exceptions, fraction):
    a = exceptions
    main = a.thread("main")
    t_all = main.times(np.array([0.0, float(main.calls.last[0]) + 1.0]))
    start = t_all[0] + fraction[0] * (t_all[1] - t_all[0])
    stop = t_all[0] + fraction[1] * (t_all[1] - t_all[0])
    stats = R.range_stats(a, start, stop, threads=[main.index], top=0)
    part = stats.threads[0]
    started, contained, own = brute_force(a, part.first_event, part.stop_event, main)
    assert part.calls_started == len(started) and part.calls_contained == len(contained)
    assert {int(m): (int(c), int(b)) for m, c, b, _ in stats.methods} == own
    assert part.bytecodes == sum(b for _, b in own.values())
    assert list(stats.methods["bytecodes"]) == sorted(stats.methods["bytecodes"], reverse=True)
    thrown = main.exceptions["throw_event"]
    assert part.exceptions == int(((thrown >= part.first_event) & (thrown < part.stop_event)).sum())
    loads = main.class_loads["event"]
    assert part.class_loads == int(((loads >= part.first_event) & (loads < part.stop_event)).sum())
    # edge calls run across an edge, and are not counted as contained
    for r in part.edge_rows:
        assert main.calls.first[r] < part.first_event <= main.calls.last[r] or \
            main.calls.first[r] < part.stop_event <= main.calls.last[r]
        assert r not in contained


def test_the_range_of_a_call_holds_its_subtree(exceptions):
    a = exceptions
    main = a.thread("main")
    row = rows_named(a, main, "Main.dive(")[0]
    start, stop = R.call_range(a, main.index, row)
    stats = R.range_stats(a, start, stop, threads=[main.index])
    part = stats.threads[0]
    subtree = int(main.calls.end[row]) - row
    assert part.calls_contained >= subtree
    assert part.bytecodes >= int(main.calls.incl_bytecodes[row])
    events = R.range_stats(a, float(main.calls.first[row]), float(main.calls.last[row]) + 1, use_clock=False,
                           threads=[main.index])
    assert events.unit == "events" and events.threads[0].calls_contained == subtree
    assert events.threads[0].bytecodes == int(main.calls.incl_bytecodes[row])


def test_a_calls_own_time_range_gives_back_its_events_exactly():
    """The time of an event inverted is the event again, though floating point may bring it back
    a hair above (930272.0000001 -> 930273 left a call out of its own range, 1 recording in 3):
    on clocks of real shape (segments of thousands of events, times around 1e9 ns, steps, runs of
    samples at one time), every event's time maps back to it, as a range's start and as its stop."""
    from types import SimpleNamespace
    rng = np.random.default_rng(930272)
    misses = 0
    for _ in range(40):
        pos = np.cumsum(rng.integers(1, 20000, 30)).astype(np.float64)
        nanos = 1e9 + np.cumsum(rng.random(30) * 1e6)
        step = int(rng.integers(1, 29))
        pos[step] = pos[step - 1]                  # a blocking call's stamps: a step
        flat = int(rng.integers(2, 29))
        nanos[flat] = nanos[flat - 1]              # the clock did not move over a run of events
        nanos = np.maximum.accumulate(nanos)
        thread = SimpleNamespace(clock=np.stack([pos, nanos], 1))
        events = rng.integers(int(pos[0]) + 1, int(pos[-1]) - 1, 200)
        for e in events.tolist():
            t = float(np.interp(float(e), pos, nanos))
            misses += float(np.ceil(np.interp(t, nanos, pos))) != e      # what the naive inverse gets
            if np.searchsorted(pos, e) < len(pos) and np.interp(float(e) - 1, pos, nanos) == t:
                continue                            # on a run of equal times: not one event's time
            e0, _ = R.event_range(thread, t, t + 1e9)
            _, e1 = R.event_range(thread, 0.0, t)
            assert e0 == e, (e, e0)
            assert e1 == e, (e, e1)
    assert misses > 0       # the naive inverse does miss on such clocks
