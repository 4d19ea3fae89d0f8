"""Calls that block get their real durations: the recorder stamps the clock around them (agent
option ``blocking``, on by default).

tests/programs/blocking sleeps 200 ms, waits 120 ms on a monitor and parks 80 ms (with a blocker:
``setBlocker`` starts at the very event the native park is recorded at), with short computations
between, then enters a ``synchronized`` block whose lock another thread holds for 300 ms, and
measures each of these calls itself (``measured NAME NANOS`` lines on stderr).
Without the stamps the clock is known only at buffer flushes, and the sleep replayed as 12 µs with
its 200 ms given to whatever ran next.

The checks hold under any load: a blocking native lasts at least what was asked (the OS may wake
it late, never early) and at most what the program measured around the call that contains it
(its stamps lie between the program's two clock reads); the calls around it are ordered by the
stamps, not by how long anything took. Nothing here needs the machine to be quiet.
"""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model import blocking_times, call_queries
from jbgui.model import replay_kernel as K
from jbgui.model import time_quality as TQ
from jbgui.model.analysis import Analysis

ASKED_MS = {"nap": 200.0, "waitOn": 120.0, "park": 80.0}
NATIVES = {"nap": ("java.lang.Thread.sleepNanos0(J)V", "java.lang.Thread.sleep0(J)V", "java.lang.Thread.sleep(J)V"),
           "waitOn": ("java.lang.Object.wait0(J)V", "java.lang.Object.wait(J)V"),
           "park": ("jdk.internal.misc.Unsafe.park(ZJ)V",)}


@pytest.fixture(scope="module")
def replayed(jdk, program_runs):
    _, traced = program_runs("blocking", jdk)          # the default options: stamps on
    assert traced.exit_code == 0, traced.describe()
    analysis = Analysis.open(traced.trace_dir)
    main = next(t for t in analysis.threads if t.name == "main")
    names = [analysis.statics.method_qualified(int(m)) if m else "" for m in np.asarray(main.calls.method)]
    measured = [(line.split()[1], int(line.split()[2]) / 1e6) for line in traced.stderr.splitlines()
                if line.startswith("measured ")]
    assert [n for n, _ in measured] == ["spin", "nap", "spin", "waitOn", "spin", "park", "spin", "lockedOut",
                                        "monitorenter"], traced.stderr
    released = next(int(line.split()[1]) for line in traced.stderr.splitlines() if line.startswith("released "))
    measured.append(("released", released))
    return analysis, main, names, traced, measured


def rows_of(names, method):
    return [i for i, n in enumerate(names) if n == method]


WRAPPERS = {"nap": "Main.nap(J)J", "waitOn": "Main.waitOn(J)V", "park": "Main.park(J)V"}


def the_native(jdk, names, wrapper, main=None):
    """The calls of the first candidate native the trace has (they differ between JDKs), under
    the program's method ``wrapper`` (``main``: the thread, to look in that subtree only)."""
    below = None
    if main is not None:
        (top,) = rows_of(names, WRAPPERS[wrapper])
        below = range(top + 1, int(main.calls.end[top]))
    for method in NATIVES[wrapper]:
        rows = [r for r in rows_of(names, method) if below is None or r in below]
        if rows:
            return rows
    pytest.fail(f"none of {NATIVES[wrapper]} in the trace on JDK {jdk.release}")


def ms(main, rows):
    return call_queries.duration(main, np.asarray(rows, np.int64)) / 1e6


def measured_ms(measured, name):
    return dict((n, v) for n, v in measured if n != "spin")[name]


def interpolated_ms(analysis, main, row) -> float:
    """How long the clock samples around call ``row``'s first and last events span: the times
    of events between two samples are interpolated, so a call's start or end may land anywhere
    in its window. On a quiet machine a window is a fraction of a millisecond; under load a
    thread may lose the processor inside one (CI once measured a wrapper 1.06 ms over the
    program's own measurement)."""
    clock = analysis.trace.clock()
    mine = clock[clock["stream"] == main.index]
    positions, nanos = mine["position"].astype(np.int64), mine["nanos"].astype(np.int64)
    total = 0
    for x in (int(main.calls.first[row]), int(main.calls.last[row])):
        # A sample at position p was taken after p events: event x lies after the samples at
        # positions up to x (a stamp pair around a blocking call shares one) and before those past it.
        before, after = nanos[positions <= x], nanos[positions > x]
        if len(before) and len(after):
            total += int(after.min() - before.max())
    return total / 1e6


def test_stamps_are_recorded_by_default(jdk, replayed):
    *_, traced, _ = replayed
    assert traced.trace_json()["agent"]["options"]["blocking"] is True


@pytest.mark.parametrize("wrapper", ["nap", "waitOn", "park"])
def test_blocking_natives_get_their_real_durations(jdk, replayed, wrapper):
    """asked <= the native's duration <= what the program measured around its wrapper; measured
    by its own stamps, so exact and not marked interpolated."""
    _, main, names, _, measured = replayed
    natives = the_native(jdk, names, wrapper, main)
    durations = ms(main, natives)
    # wait and park may wake up early and go again: together they last at least what was asked
    assert ASKED_MS[wrapper] <= durations.sum() <= measured_ms(measured, wrapper), (durations, measured)
    if wrapper == "nap":
        assert len(natives) == 1
    last = natives[-1:]
    assert blocking_times.exact(main, last).all(), names[last[0]]
    assert not TQ.interpolated(main, np.asarray(last)).any()
    assert not len(main.shared_steps), main.shared_steps


def test_a_native_beside_a_blocking_one_in_its_block_does_not_take_the_wait(jdk, replayed):
    """JDK 17's ``LOCK.wait(left)`` is a native followed in its block by the loop's
    ``System.nanoTime()``, and nap's ``System.nanoTime()`` comes just before the native
    ``Thread.sleep``: replay puts each pair at one event, the wait's stamps' (on later JDKs the
    blocking natives sit inside instrumented JDK methods and this does not arise). The neighbour
    lies on its side of the wait, lasts next to nothing, weighs nothing, and the wait keeps its
    stamps' span (both nanoTime calls took the whole wait, 120 and 200 ms, and were hatched)."""
    _, main, names, _, _ = replayed
    first = np.asarray(main.calls.first)
    last = np.asarray(main.calls.last)
    flags = np.asarray(main.calls.flags)
    nano = "java.lang.System.nanoTime()J"
    checked = 0
    for wrapper, side in (("waitOn", K.F_AFTER_WAIT), ("nap", K.F_BEFORE_WAIT)):
        for wait in the_native(jdk, names, wrapper, main):
            beside = [r for r in (wait - 1, wait + 1) if names[r] == nano and first[r] == first[wait] == last[r]]
            if jdk.release != 17:
                assert not beside, (wrapper, names[wait])
                continue
            assert len(beside) == 1, (wrapper, [names[r] for r in range(wait - 2, wait + 3)])
            (r,) = beside
            assert flags[r] & side and not flags[wait] & blocking_times.BESIDE_WAIT, (wrapper, flags[r], flags[wait])
            (w_start, w_end), (n_start, n_end) = (main.spans(np.array([x])) for x in (wait, r))
            assert (n_start[0] >= w_end[0]) if side == K.F_AFTER_WAIT else (n_end[0] <= w_start[0]), wrapper
            assert (n_end[0] - n_start[0]) / 1e6 < 1.0, (wrapper, n_end[0] - n_start[0])
            assert call_queries.duration(main, np.array([r]))[0] / 1e6 < 1.0
            assert main.axis.weight_spans(first[[r]], last[[r]], flags[[r]])[0] == 0
            checked += 1
    if jdk.release == 17:
        assert checked >= 2


def test_a_call_starting_at_the_natives_event_starts_after_it(jdk, replayed):
    """parkNanos(blocker, n) calls setBlocker, Unsafe.park, setBlocker: on JDK 17 the second
    setBlocker's START is the event the park is recorded at (replay gives both first = p). It
    starts when the park returned and lasts microseconds (it lasted the whole park, 80 ms, when
    the stamp after the park was placed at the event after it)."""
    _, main, names, _, _ = replayed
    parks = the_native(jdk, names, "park", main)
    start, end = main.spans(np.asarray(parks))
    parent = np.asarray(main.calls.parent)
    first = np.asarray(main.calls.first)
    for row, park_end in zip(parks, end.tolist()):
        siblings = np.flatnonzero(parent == parent[row])
        after = siblings[siblings > row]
        assert len(after), names[parent[row]]
        nxt = int(after[0])
        s, e = main.spans(np.array([nxt]))
        assert s[0] >= park_end, (names[nxt], s[0], park_end)
        assert (e[0] - s[0]) / 1e6 < 1.0, (names[nxt], e[0] - s[0])
        if jdk.release == 17:
            assert first[nxt] == first[row] and names[nxt].endswith("setBlocker(Ljava/lang/Thread;Ljava/lang/Object;)V")


def test_the_program_methods_contain_the_blocked_time_and_the_next_call_does_not(jdk, replayed):
    """nap, waitOn and park last at least what their natives blocked and at most what the program
    measured around them, to within what the model says is uncertain; the computation after each
    starts after the blocked time ends (it took the 200 ms of the sleep before the stamps)."""
    _, main, names, _, measured = replayed
    for method, wrapper in (("Main.nap(J)J", "nap"), ("Main.waitOn(J)V", "waitOn"), ("Main.park(J)V", "park")):
        rows = rows_of(names, method)
        assert len(rows) == 1, method
        natives = the_native(jdk, names, wrapper, main)
        got = ms(main, rows)[0]
        assert ms(main, natives).sum() <= got, (method, got)
        slack = TQ.uncertainty(main.clock, main.calls.values_at("first", np.array(rows)),
                               main.calls.values_at("last", np.array(rows)))[0] / 1e6
        assert got <= measured_ms(measured, wrapper) + 1.0 + slack, (method, got, measured)
    spins = rows_of(names, "Main.spin(I)J")
    assert len(spins) == 4
    blocked_end = [main.spans(np.asarray(the_native(jdk, names, w, main)[-1:]))[1][0] for w in ("nap", "waitOn", "park")]
    spin_start, spin_end = main.spans(np.asarray(spins[1:]))
    assert (spin_start >= np.array(blocked_end)).all(), (spin_start, blocked_end)
    assert ((spin_end - spin_start) / 1e6 < np.array([ASKED_MS[w] for w in ("nap", "waitOn", "park")]) / 2).all()


def test_a_contended_synchronized_block_is_stamped(jdk, replayed):
    """lockedOut() waits at a monitorenter while "holder" keeps the lock 300 ms: the recorder reads
    the clock around every monitorenter and stamps the ones that waited. The wait is a step of the
    main thread's clock inside lockedOut: it lasts at most what the program measured around the
    monitorenter, ends after the holder's last clock read with the lock held, and is at least
    100 ms (the holder's 300 ms less however late the main thread got there)."""
    analysis, main, names, _, measured = replayed
    row = rows_of(names, "Main.lockedOut()J")
    assert len(row) == 1
    first, last = int(main.calls.first[row[0]]), int(main.calls.last[row[0]])
    clock = analysis.trace.clock()
    pairs = blocking_times.blocked_calls(clock[clock["stream"] == main.index])
    inside = pairs[(pairs[:, 0] > first) & (pairs[:, 0] <= last)]
    waits = inside[(inside[:, 2] - inside[:, 1]) >= 100e6]
    assert len(waits) == 1, (inside[:, 2] - inside[:, 1]) / 1e6
    start_ns, end_ns = int(waits[0, 1]), int(waits[0, 2])
    assert (end_ns - start_ns) / 1e6 <= measured_ms(measured, "monitorenter"), (end_ns - start_ns, measured)
    assert end_ns >= dict(measured)["released"]
    # on the timeline: lockedOut contains the wait as a step of its own (no call of its drawn there)
    at = int(waits[0, 0])
    assert at in main.axis.steps.tolist()
    assert ms(main, row)[0] >= (end_ns - start_ns) / 1e6
    # ``t = System.nanoTime(); synchronized (HELD)``: the native before the monitorenter is at the
    # wait's event too; it ran before the wait and takes none of it (it took all 300 ms)
    first = np.asarray(main.calls.first)
    inside = np.arange(row[0] + 1, int(main.calls.end[row[0]]))
    at_wait = inside[(first[inside] == at) & (np.asarray(main.calls.last)[inside] == at)]
    assert [names[r] for r in at_wait] == ["java.lang.System.nanoTime()J"], [names[r] for r in at_wait]
    assert main.calls.flags[at_wait[0]] & K.F_BEFORE_WAIT
    start, end = main.spans(at_wait)
    assert end[0] - start[0] < 1e6 and end[0] <= start_ns, (start, end, start_ns)


def test_every_thread_maps_events_to_time_monotonically(jdk, replayed):
    """One mapping per thread (blocking_times.clock_points): events and times never go back, no
    call of any thread lasts a negative time, and no call starts before an earlier sibling ends."""
    analysis, *_ = replayed
    for thread in analysis.threads:
        clock = np.asarray(thread.clock)
        assert (np.diff(clock[:, 0]) >= 0).all() and (np.diff(clock[:, 1]) >= 0).all(), thread.name
        n = len(thread.calls)
        if not n:
            continue
        start, end = thread.spans(np.arange(n))
        assert (end >= start).all(), thread.name
        parent = np.asarray(thread.calls.parent)
        for p in np.unique(parent).tolist():
            kids = np.flatnonzero(parent == p)
            first = np.asarray(thread.calls.first)[kids]
            stamped = np.isin(first, thread.axis.steps)
            # siblings: each starts where or after the one before ends (the stamps' steps
            # included), but for natives without stamps, which keep one event's time as before,
            # and natives sharing a step (marked interpolated: see ThreadReplay.shared_steps)
            overlap = start[kids[1:]] < end[kids[:-1]]
            shared = np.isin(first, thread.shared_steps)
            bad = overlap & (stamped[1:] | stamped[:-1]) & ~(shared[1:] & shared[:-1])
            assert not bad.any(), (thread.name, p)


def test_stamps_are_documented_records_in_clock_bin(jdk, replayed):
    analysis, main, _, _, measured = replayed
    clock = analysis.trace.clock()
    mine = clock[clock["stream"] == main.index]
    pairs = blocking_times.blocked_calls(mine)
    names = [analysis.statics.method_qualified(int(m)) if m else "" for m in np.asarray(main.calls.method)]
    for wrapper in ("nap", "waitOn", "park"):
        # the pairs inside the wrapper (those of the loops' System.nanoTime calls are not
        # pairs): together they blocked at least what was asked, at most what was measured
        (row,) = rows_of(names, WRAPPERS[wrapper])
        first, last = int(main.calls.first[row]), int(main.calls.last[row])
        inside = pairs[(pairs[:, 0] >= first) & (pairs[:, 0] <= last)]
        lengths = (inside[:, 2] - inside[:, 1]) / 1e6
        assert ASKED_MS[wrapper] <= lengths.sum() <= measured_ms(measured, wrapper), (wrapper, lengths, measured)
        if wrapper == "nap":
            assert (lengths >= ASKED_MS[wrapper]).sum() == 1, lengths


def test_blocking_off_records_no_stamps(jdk, record):
    run = record("blocking", jdk, blocking=False)
    assert run.exit_code == 0, run.describe()
    analysis = Analysis.open(run.trace_dir)
    clock = analysis.trace.clock()
    assert len(clock) and not (clock["flags"] & 2).any()
    assert run.trace_json()["agent"]["options"]["blocking"] is False


@pytest.mark.parametrize("wrapper", ["nap", "park"])
def test_the_aggregated_views_weigh_a_blocking_call_by_its_wait(jdk, replayed, wrapper):
    """The merged tree's time of the program's wrapper holds the wait its natives' stamps
    measured (a flame graph by time shows the sleep as 200 ms, not as the few microseconds of
    events around it), and no more than the program measured around the wrapper."""
    from jbgui.model import merged_tree as MT
    analysis, main, names, _, measured = replayed
    tree = MT.thread_tree(main)
    node = next(n for n in range(len(tree)) if analysis.statics.method_qualified(int(tree.key[n])) == WRAPPERS[wrapper]
                and tree.key[n] < (1 << 20))
    wrapper_ms = tree.inclusive("time")[node] / 1e6
    natives_ms = ms(main, the_native(jdk, names, wrapper, main)).sum()
    (row,) = rows_of(names, WRAPPERS[wrapper])
    slack_ms = 1.0 + interpolated_ms(analysis, main, row)
    assert ASKED_MS[wrapper] <= natives_ms <= wrapper_ms <= measured_ms(measured, wrapper) + slack_ms, \
        (natives_ms, wrapper_ms, slack_ms, measured)
