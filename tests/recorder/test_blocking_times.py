"""Calls that block get their real durations: the recorder stamps the clock around them.

tests/programs/blocking sleeps 200 ms, waits 120 ms on a monitor and parks 80 ms, with short
computations between. Without the stamps the clock is known only at buffer flushes, and the
sleep replayed as 12 µs with its 200 ms given to whatever ran next. Scheduling on a busy machine
may lengthen a wait, never shorten it: each duration must lie in [asked, asked + 60 ms].
"""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model import blocking_times, call_queries
from jbgui.model.analysis import Analysis

SLACK_MS = 60.0


@pytest.fixture(scope="module")
def replayed(jdk, program_runs):
    _, traced = program_runs("blocking", jdk, blocking=True)
    assert traced.exit_code == 0, traced.describe()
    analysis = Analysis.open(traced.trace_dir)
    main = next(t for t in analysis.threads if t.name == "main")
    names = [analysis.statics.method_qualified(int(m)) if m else "" for m in np.asarray(main.calls.method)]
    return analysis, main, names, traced


def rows_of(names, method):
    return [i for i, n in enumerate(names) if n == method]


def the_native(jdk, names, *candidates):
    """The one call of the first candidate the trace has (the natives differ between JDKs)."""
    for method in candidates:
        rows = rows_of(names, method)
        if rows:
            assert len(rows) >= 1
            return rows
    pytest.fail(f"none of {candidates} in the trace on JDK {jdk.release}")


def test_blocking_natives_get_their_real_durations(jdk, replayed):
    _, main, names, _ = replayed
    sleep = the_native(jdk, names, "java.lang.Thread.sleepNanos0(J)V", "java.lang.Thread.sleep0(J)V",
                       "java.lang.Thread.sleep(J)V")
    wait = the_native(jdk, names, "java.lang.Object.wait0(J)V", "java.lang.Object.wait(J)V")
    park = the_native(jdk, names, "jdk.internal.misc.Unsafe.park(ZJ)V")
    ms = lambda rows: call_queries.duration(main, rows) / 1e6  # noqa: E731
    assert len(sleep) == 1 and 200.0 <= ms(sleep)[0] <= 200.0 + SLACK_MS, ms(sleep)
    # wait and park may wake up early and go again: together they last what was asked.
    assert 120.0 <= ms(wait).sum() <= 120.0 + SLACK_MS, ms(wait)
    assert 80.0 <= ms(park).sum() <= 80.0 + SLACK_MS, ms(park)
    # The sleep and the park are measured by their own stamps, not interpolated.
    assert blocking_times.exact(main, sleep).all()
    assert blocking_times.exact(main, park[-1:]).all()


def test_the_program_methods_contain_the_blocked_time(jdk, replayed):
    """nap, waitOn and park last at least what they blocked; the computation after each does not
    inherit the blocked time (it did before: 309 ms for the call after a 200 ms sleep)."""
    _, main, names, _ = replayed
    ms = lambda rows: call_queries.duration(main, rows) / 1e6  # noqa: E731
    assert ms(rows_of(names, "Main.nap(J)V"))[0] >= 200.0
    assert ms(rows_of(names, "Main.waitOn(J)V"))[0] >= 120.0
    assert ms(rows_of(names, "Main.park(J)V"))[0] >= 80.0
    spins = ms(rows_of(names, "Main.spin(I)J"))
    assert len(spins) == 4
    assert (spins[1:] < 80.0).all(), spins


def test_stamps_are_documented_records_in_clock_bin(jdk, replayed):
    analysis, main, _, _ = replayed
    clock = analysis.trace.clock()
    mine = clock[clock["stream"] == main.index]
    pairs = blocking_times.blocked_calls(mine)
    lengths = (pairs[:, 2] - pairs[:, 1]) / 1e6
    assert (lengths >= 200.0).sum() == 1, lengths
    assert ((lengths >= 80.0) & (lengths <= 80.0 + SLACK_MS)).sum() >= 1, lengths


def test_blocking_off_records_no_stamps(jdk, record):
    run = record("blocking", jdk, blocking=False)
    assert run.exit_code == 0, run.describe()
    analysis = Analysis.open(run.trace_dir)
    clock = analysis.trace.clock()
    assert len(clock) and not (clock["flags"] & 2).any()
    assert run.trace_json()["agent"]["options"]["blocking"] is False
