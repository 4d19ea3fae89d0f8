"""One monotonic event->time mapping per thread from its clock.bin records
(jbgui.model.blocking_times.clock_points), on records written by hand: each case is a shape the
recorder writes (docs/trace-format.md, "Clock samples" and "Stamps around blocking calls")."""

from __future__ import annotations

import numpy as np

from jbgui.model import layout
from jbgui.model.blocking_times import clock_points
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


def test_a_native_call_is_measured_by_its_stamps():
    # a flush at 100 just before the sleep (the same position), the sleep at event 100
    recs = records((0, 0, EXACT), (100, 10, EXACT), (100, 12, BEFORE), (100, 212, AFTER), (200, 220, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [100, 12], [101, 212], [200, 220]]
    # the native at event 100 spans [t(100), t(101)): exactly the stamps
    t = np.interp([100.0, 101.0], points[:, 0], points[:, 1])
    assert t.tolist() == [12.0, 212.0]


def test_a_call_that_records_events_ends_where_its_stamp_was_taken():
    # JDK 21+: Thread.sleep is Java (events 100..109) calling the native sleep0 at event 105
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (105, 11, BEFORE), (105, 211, AFTER),
                   (110, 212, AFTER), (200, 230, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [105, 11], [106, 211], [110, 212], [200, 230]]


def test_two_java_blocking_calls_in_a_row_stay_in_order():
    # write(byte[]) twice in one block: the second starts where the first ended (event 110)
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (110, 20, AFTER), (110, 21, BEFORE),
                   (120, 30, AFTER), (200, 40, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [110, 20], [110, 21], [120, 30], [200, 40]]


def test_natives_one_after_another_at_one_event_share_one_step():
    # Thread.sleep(50); Thread.sleep(70) in one block: both at event 100, where replay gives both
    # the span [t(100), t(101)); it runs from the first one's start to the last one's end
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 60, AFTER), (100, 61, BEFORE),
                   (100, 131, AFTER), (200, 140, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [101, 131], [200, 140]]


def test_a_sample_taken_while_the_thread_was_blocked_is_left_out():
    # the writer's sample at the thread's position while it sleeps
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 100, EXACT), (100, 210, AFTER), (200, 220, EXACT))
    points = clock_points(recs)
    assert points.tolist() == [[0, 0], [100, 10], [101, 210], [200, 220]]


def test_a_thread_blocked_when_the_trace_ends_has_the_call_end_at_the_last_sample():
    # a daemon thread parked at exit: the writer's end sample closes the call at event 100
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 500, EXACT))
    points = clock_points(recs)
    assert points.tolist() == [[0, 0], [100, 10], [101, 500]]


def test_a_call_that_threw_keeps_the_sample_taken_during_it():
    # an interrupted sleep: no stamp after it; its handler's events follow
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 50, EXACT), (150, 90, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert points.tolist() == [[0, 0], [100, 10], [101, 50], [150, 90]]


def test_a_stale_sample_gives_way_to_the_exact_stamp():
    # a sampler sample (not exact) read the position late: later time at an earlier x than the
    # stamp after a native; the stamp is exact and stays
    recs = records((0, 0, EXACT), (100, 10, BEFORE), (100, 210, AFTER), (100, 215, 0), (101, 214, EXACT))
    points = clock_points(recs)
    assert monotonic(points)
    assert [101.0, 210.0] in points.tolist()
    assert [100.0, 215.0] not in points.tolist()


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
