"""One monotonic event->time mapping per thread from its clock.bin records
(jbgui.model.blocking_times.clock_points), and call spans on its expanded axis
(blocking_times.Axis), on records written by hand: each case is a shape the recorder writes
(docs/trace-format.md, "Clock samples" and "Stamps around blocking calls")."""

from __future__ import annotations

import numpy as np

from jbgui.model import layout
from jbgui.model.blocking_times import SYNTHETIC, Axis, clock_points
from jbgui.model.replay_kernel import F_AFTER_WAIT, F_BEFORE_WAIT
from jbgui.model.format.clock import DTYPE

EXACT = layout.CLOCK_FLAG_EXACT
BEFORE = EXACT | layout.CLOCK_FLAG_BLOCKING
AFTER = BEFORE | layout.CLOCK_FLAG_AFTER


def records(*rows) -> np.ndarray:
    """(position, nanos, flags) rows of stream 1, in read_clock's order (position, then time)."""
    out = np.zeros(len(rows), DTYPE)
    for i, (position, nanos, flags) in enumerate(rows):
        out[i] = (1, position, nanos, flags)
    order = np.lexsort((out["nanos"], out["position"]))
    return out[order]


def monotonic(points: np.ndarray) -> bool:
    return bool((np.diff(points[:, 0]) >= 0).all() and (np.diff(points[:, 1]) >= 0).all())


def test_samples_without_stamps_are_the_points_themselves():
    recs = records((0, 0, EXACT), (100, 50, EXACT), (100, 60, EXACT), (300, 200, 0))
    points = clock_points(recs)
    assert points.tolist() == [[0, 0], [100, 50], [100, 60], [300, 200]]


def test_a_native_call_is_a_step_at_its_event():
    # a flush at 100 just before the sleep (the same position), the sleep at event 100: the
    # thread waited between event 99 and event 100, a vertical step there
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 212, AFTER), (200, 220, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [100, 212], [200, 220]]
    # event 100 starts after the wait
    assert np.interp(100.0, points[:, 0], points[:, 1]) == 212.0


def test_a_call_that_records_events_ends_where_its_stamp_was_taken():
    # JDK 21+: Thread.sleep is Java (events 100..109) calling the native sleep0 at event 105
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (105, 11, BEFORE), (105, 211, AFTER),
                   (110, 212, AFTER), (200, 230, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [105, 11], [105, 211], [110, 212], [200, 230]]


def test_two_java_blocking_calls_in_a_row_stay_in_order():
    # write(byte[]) twice in one block: the second starts where the first ended (event 110)
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (110, 20, AFTER), (110, 21, BEFORE),
                   (120, 30, AFTER), (200, 40, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [110, 20], [110, 21], [120, 30], [200, 40]]


def test_natives_one_after_another_at_one_event_share_one_step():
    # Thread.sleep(50); Thread.sleep(70) in one block: both at event 100, where replay gives both
    # one event; the step runs from the first one's start to the last one's end
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 60, AFTER), (100, 61, BEFORE),
                   (100, 131, AFTER), (200, 140, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [100, 131], [200, 140]]


def test_a_sample_taken_while_the_thread_was_blocked_is_inside_the_step():
    # the writer's sample at the thread's position while it sleeps
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 100, EXACT), (100, 210, AFTER), (200, 220, EXACT))
    points = clock_points(recs)
    assert points.tolist() == [[0, 0], [100, 10], [100, 210], [200, 220]]


def test_a_thread_blocked_when_the_trace_ends_has_the_call_end_at_the_last_sample():
    # a daemon thread parked at exit: the writer's end sample closes the call at event 100
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 500, EXACT))
    points = clock_points(recs)
    assert points.tolist() == [[0, 0], [100, 10], [100, 500]]


def test_a_call_that_threw_keeps_the_sample_taken_during_it():
    # an interrupted sleep: no stamp after it; its handler's events follow
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 50, EXACT), (150, 90, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [100, 50], [150, 90]]


def test_a_stale_sample_gives_way_to_the_exact_ones():
    # a sampler sample (not exact) read the position late: a later time at an earlier x than the
    # thread's own flush sample after a native; the exact ones stay
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 210, AFTER), (100, 215, 0), (101, 214, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [100, 210], [101, 214]]


# ------------------------------------------------------------------ call spans on the axis

NATIVE = SYNTHETIC & -SYNTHETIC      # one synthetic flag (NATIVE)


def spans(points, calls):
    """(start, end) of calls given as (first, last, flags)."""
    first, last, flags = (np.array(c, np.int64) for c in zip(*calls))
    start, end = Axis(points).spans(first, last, flags)
    return list(zip(start.tolist(), end.tolist()))


def test_a_native_spans_its_stamps_and_its_neighbours_do_not():
    """LockSupport.park as replay gives it: setBlocker (events 96..99), Unsafe.park (a native: no
    event, stamped at 100), setBlocker again from event 100 (its START) to 103, all in parkNanos
    (90..110). The native lasts the wait; the call before ends before it, the one after starts
    after it (with [t(first), t(last + 1)) on one mapping it lasted the whole wait)."""
    points = clock_points(records((0, 0, EXACT), (100, 1000, BEFORE), (100, 81000, AFTER), (200, 82000, EXACT)))
    got = spans(points, [(90, 110, 0), (96, 99, 0), (100, 100, NATIVE), (100, 103, 0)])
    parked, before, native, after = got
    assert native == (1000.0, 81000.0)
    assert before[1] == 1000.0 and after[0] == 81000.0
    assert after[1] - after[0] == 4 * 10.0       # its four events (100..103) at the pace after the wait
    assert parked[0] < before[0] and parked[1] > after[1]
    assert parked[1] - parked[0] > 80000


def test_natives_at_one_event_share_the_step_and_unstamped_ones_keep_an_event():
    # two natives at event 100 (one stamped), and a native at 150 without stamps
    points = clock_points(records((0, 0, EXACT), (100, 1000, BEFORE), (100, 5000, AFTER), (200, 6000, EXACT)))
    got = spans(points, [(100, 100, NATIVE), (100, 100, NATIVE), (150, 150, NATIVE), (150, 160, 0)])
    assert got[0] == got[1] == (1000.0, 5000.0)
    assert got[2] == (5500.0, 5510.0)             # one event of the pace there, as without stamps
    assert got[3] == (5500.0, 5610.0)


def test_natives_beside_a_blocking_call_are_off_its_step():
    """JDK 17's ``LOCK.wait(ms)`` then the loop's ``System.nanoTime()`` in one block, and a
    ``nanoTime()`` before a native ``Thread.sleep``: three natives at event 100, the stamps
    measured the blocking one. Replay flags the others (replay.beside_waits): the one after the
    wait spans event 100's unit, after the step, the one before it nothing, at the step's bottom
    (event 99's unit is where a call before it may end); the wait spans its stamps; neither
    neighbour weighs anything."""
    points = clock_points(records((0, 0, EXACT), (100, 1000, BEFORE), (100, 5000, AFTER), (200, 6000, EXACT)))
    calls = [(100, 100, NATIVE | F_BEFORE_WAIT), (100, 100, NATIVE), (100, 100, NATIVE | F_AFTER_WAIT),
             (100, 104, 0)]
    before, wait, after, nxt = spans(points, calls)
    assert wait == (1000.0, 5000.0)
    assert before == (1000.0, 1000.0)
    assert after == (5000.0, 5010.0)            # event 100's, at the pace after it
    assert nxt[0] == 5000.0                     # the call starting at event 100 starts after the wait too
    first, last, flags = (np.array(c, np.int64) for c in zip(*calls))
    assert Axis(points).weight_spans(first, last, flags).tolist() == [0, 4000, 0, 40]


def test_without_steps_spans_are_the_interpolation_itself():
    points = clock_points(records((0, 0, EXACT), (100, 333, EXACT), (700, 1000, EXACT)))
    rng = np.random.default_rng(3)
    first = np.sort(rng.integers(0, 700, 200))
    last = first + rng.integers(0, 50, 200)
    flags = rng.choice([0, NATIVE], 200)
    start, end = Axis(points).spans(first, last, flags)
    assert np.array_equal(start, np.interp(first.astype(np.float64), points[:, 0], points[:, 1]))
    assert np.array_equal(end, np.interp(last + 1.0, points[:, 0], points[:, 1]))


def test_axis_positions_keep_the_order_of_calls():
    """Rows in preorder keep non-decreasing starts on the axis, and a row ends where the next
    sibling starts or before: what the timeline's walk relies on."""
    points = clock_points(records((0, 0, EXACT), (10, 100, BEFORE), (10, 900, AFTER), (30, 1000, BEFORE),
                                  (30, 1500, AFTER), (40, 1600, EXACT)))
    axis = Axis(points)
    assert axis.steps.tolist() == [10, 30]
    first = np.array([5, 10, 10, 20, 30, 30])
    last = np.array([9, 10, 19, 29, 30, 35])
    flags = np.array([0, NATIVE, 0, 0, NATIVE, 0])
    start, end_last = axis.rows(first, last, flags)
    assert start.tolist() == [5, 10, 11, 21, 31, 32]
    assert (end_last + 1).tolist() == [10, 11, 21, 31, 32, 38]
    assert (np.diff(start) >= 0).all() and (end_last[:-1] + 1 <= start[1:]).all()


def test_every_mix_gives_a_monotonic_mapping():
    """Random streams of what a thread and the writer record: the mapping never goes back."""
    rng = np.random.default_rng(14)
    for _ in range(300):
        rows, position, t = [(0, 0, EXACT)], 0, 0
        for _ in range(rng.integers(1, 30)):
            kind = rng.integers(0, 5)
            t += int(rng.integers(0, 100))
            if kind == 0:
                position += int(rng.integers(0, 50))
                rows.append((position, t, EXACT))
            elif kind in (1, 2):                       # a blocking call, native or not
                rows.append((position, t, BEFORE))
                if rng.integers(0, 3) == 0:            # a writer sample while blocked
                    t += int(rng.integers(0, 50))
                    rows.append((position, t, EXACT))
                position += 0 if kind == 1 else int(rng.integers(1, 20))
                t += int(rng.integers(0, 300))
                if rng.integers(0, 6):                 # else it threw
                    rows.append((position, t, AFTER))
            elif kind == 3:                            # a stale sampler sample
                rows.append((max(position - int(rng.integers(0, 5)), 0), t, 0))
            else:
                position += 1
        points = clock_points(records(*rows))
        assert monotonic(points), rows


def _rows_by_search(axis: Axis, first, last, flags, weights: bool):
    """Axis.rows and Axis.weight_rows as their definitions say, with a binary search per value:
    the reference the one-pass kernel must equal."""
    steps = axis.steps
    synthetic = (flags & SYNTHETIC) != 0
    after = synthetic & ((flags & F_AFTER_WAIT) != 0)
    before = synthetic & ~after & ((flags & F_BEFORE_WAIT) != 0)
    takes = synthetic & ~after & ~before
    on_step = np.isin(first, steps)
    alone = synthetic & (first == last)
    start = first + np.searchsorted(steps, first, side="right") - ((takes | before) & on_step)
    # beside a wait, recording nothing: the unit after the step, or nothing at its bottom; weightless
    end = np.where(alone, start, last + np.searchsorted(steps, last, side="right"))
    if weights:
        end = end + (alone & takes & on_step)
    else:
        end = end - (alone & before & on_step)
    return start, end


def test_axis_positions_in_one_pass_equal_the_search_per_value():
    """Axis.rows and weight_rows walk the steps along a block of calls; in start order (the
    passes' case), with starts that step back, and in any order they give what a binary search per
    value gives; and the times read on them equal np.interp on the axis to the bit, also where a
    native's start steps back below the clock point of the call before it."""
    from jbgui.model import clock_times

    rng = np.random.default_rng(21)
    for case in range(400):
        n_steps = int(rng.integers(1, 40))
        steps = np.unique(rng.integers(0, 400, n_steps))
        points = [(0, 0, EXACT)]
        t = 0
        for p in steps.tolist():
            t += int(rng.integers(1, 1000))
            points.append((int(p), t, BEFORE))
            t += int(rng.integers(1, 5000))       # a wait: a step of the axis
            points.append((int(p), t, AFTER))
        points.append((500, t + 10, EXACT))
        axis = Axis(clock_points(records(*points)))
        assert np.array_equal(axis.steps, steps)
        n = int(rng.integers(1, 400))
        first = np.sort(rng.integers(-5, 520, n))
        if case % 3 == 1:       # some starts on the steps themselves, natives among them
            first[::3] = rng.choice(steps, len(first[::3]))
            first = np.sort(first)
        if case % 3 == 2:       # any order
            rng.shuffle(first)
        last = first + rng.geometric(0.05, n) - 1
        flags = np.where(rng.random(n) < 0.4, NATIVE, 0)
        flags |= np.where(flags != 0, rng.choice([0, 0, F_BEFORE_WAIT, F_AFTER_WAIT], n), 0)
        natives_alone = (flags != 0) & (rng.random(n) < 0.7)
        last[natives_alone] = first[natives_alone]          # natives that recorded nothing
        for weights in (False, True):
            got = axis.weight_rows(first, last, flags) if weights else axis.rows(first, last, flags)
            want = _rows_by_search(axis, first, last, flags, weights)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), (case, weights)
        start, end_last = axis.rows(first, last, flags)
        t_start, t_end = clock_times.block_times(start, end_last, axis.pos, axis.nanos)
        assert np.array_equal(t_start, np.interp(start.astype(np.float64), axis.pos, axis.nanos))
        assert np.array_equal(t_end, np.interp(end_last + 1.0, axis.pos, axis.nanos))
        w_start, w_end = axis.weight_rows(first, last, flags)
        spans = np.rint(np.interp(w_end.astype(np.float64), axis.pos, axis.nanos)
                        - np.interp(w_start.astype(np.float64), axis.pos, axis.nanos))
        assert np.array_equal(clock_times.block_spans(w_start, w_end, axis.pos, axis.nanos),
                              np.maximum(spans, 0).astype(np.int64))
        # the one pass the calling-context trees take, of the columns' types as stored
        want = clock_times.block_spans(w_start, w_end, axis.pos, axis.nanos)
        assert np.array_equal(axis.weight_spans(first, last, flags), want), case
        assert np.array_equal(axis.weight_spans(first.astype(np.int32), last.astype(np.int32),
                                                flags.astype(np.int32)), want), case
        for lo in range(0, n, 3):      # short blocks: mostly no step among their events
            assert np.array_equal(axis.weight_spans(first[lo:lo + 3], last[lo:lo + 3], flags[lo:lo + 3]),
                                  want[lo:lo + 3]), (case, lo)
    no_steps = Axis(clock_points(records((0, 0, EXACT), (300, 7000, EXACT), (500, 9000, EXACT))))
    assert not len(no_steps.steps)
    first = np.sort(rng.integers(-5, 520, 300))
    last = first + rng.geometric(0.05, 300) - 1
    flags = np.where(rng.random(300) < 0.4, NATIVE, 0)
    w_start, w_end = no_steps.weight_rows(first, last, flags)
    assert np.array_equal(no_steps.weight_spans(first, last, flags),
                          clock_times.block_spans(w_start, w_end, no_steps.pos, no_steps.nanos))
