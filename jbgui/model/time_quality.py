"""How far a call's times can be trusted.

The recorder stamps time only at a thread's start and end and at each buffer flush
(docs/trace-format.md, "Clock samples"); every event between two samples gets a time interpolated
linearly by event count. That is close when the thread ran code at an even pace between the two
samples, and wrong when it paused there: a ``Thread.sleep(200)`` between two flushes shows a few
microseconds, and the calls after it take the 200 ms instead.

A pause shows in the samples themselves: its interval has far more nanoseconds per event than
the thread's usual pace. A call's duration is called *interpolated* here when an end of it lies
inside such a slow interval and the interval is long compared with the call (so the pause could
be anywhere in or around the call). Calls whose ends sit in intervals of the usual pace, or that
span a pause from outside it, keep their measured times.

The recorder stamps blocking calls (and synchronized blocks that waited for their lock) exactly,
unless recorded with ``blocking=off``: the stamps are points of the thread's clock
(:func:`jbgui.model.blocking_times.clock_points`), and on its expanded axis
(:class:`jbgui.model.blocking_times.Axis`, which every call time here is read on) a stamped
call's ends fall on points, so it is not marked. What stays marked are pauses no stamp measured
(class loading, contended ``synchronized`` methods, every pause of a trace recorded without
stamps), and the natives that share one stamped wait with another native at the same event when
the trace does not say which of them waited (``ThreadReplay.shared_steps``; static.xml marks the
blocking calls, and replay places the natives beside one off its step: ``Axis``).
"""

from __future__ import annotations

import numpy as np

from jbgui.model.blocking_times import BESIDE_WAIT, SYNTHETIC, Axis

# An interval is slow when its nanoseconds per event exceed this many times the thread's usual
# pace (then a pause took at least 80% of it)... 10 left a 200 ms sleep in a 64 K-event interval of
# quick calls at 10.1 times the usual pace, marked or not by a few percent of timing.
SLOW_FACTOR = 5.0
# ...and this absolute pace (a traced thread that runs code records far more than one event per µs).
SLOW_NS_PER_EVENT = 1000.0
# A slow interval makes a call's duration interpolated when it is longer than this share of it.
TOLERANCE = 0.1


def slow_intervals(clock: np.ndarray) -> np.ndarray:
    """For a thread's clock samples ``(position, nanos)`` (n rows), a bool per interval (n - 1):
    did the thread pause somewhere in it (far fewer events per nanosecond than usual)?"""
    clock = np.asarray(clock, np.float64).reshape(-1, 2)
    if len(clock) < 2:
        return np.zeros(0, np.bool_)
    events = np.diff(clock[:, 0])
    nanos = np.diff(clock[:, 1])
    rate = nanos / np.maximum(events, 1.0)
    usual = usual_pace(rate, events)
    return (nanos > 0) & (rate > max(SLOW_FACTOR * usual, SLOW_NS_PER_EVENT))


def usual_pace(rate: np.ndarray, events: np.ndarray) -> float:
    """The pace at which half of the thread's events were recorded: the median of the intervals'
    nanoseconds per event, each interval weighted by its events. Unweighted, a thread's dozen
    intervals (buffers grow from 1 K to 64 K events) gave a few short, slow ones at start-up
    (class loading) the say, and a 200 ms sleep in a 64 K-event interval no longer stood out."""
    counted = events > 0
    if not counted.any():
        return 0.0
    r, w = rate[counted], events[counted]
    order = np.argsort(r, kind="stable")
    cumulative = np.cumsum(w[order])
    return float(r[order][np.searchsorted(cumulative, cumulative[-1] / 2.0)])


def uncertainty(clock: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Nanoseconds by which the duration of calls spanning events ``first..last`` (inclusive) may
    be off: the lengths of the slow clock intervals holding its start and its end (0 where an end
    falls on a sample or in an interval of the usual pace)."""
    clock = np.asarray(clock, np.float64).reshape(-1, 2)
    first = np.asarray(first, np.float64)
    n = len(first)
    if len(clock) < 2 or n == 0:
        return np.zeros(n)
    pos, nanos = clock[:, 0], clock[:, 1]
    slow = slow_intervals(clock)
    length = np.where(slow, np.diff(nanos), 0.0)

    def at(event: np.ndarray) -> np.ndarray:
        i = np.searchsorted(pos, event, side="right") - 1
        inside = (i >= 0) & (i < len(length)) & (pos[np.clip(i, 0, len(pos) - 1)] != event)
        return np.where(inside, length[np.clip(i, 0, len(length) - 1)], 0.0), np.where(inside, i, -1)

    start_len, start_i = at(first)
    end_len, end_i = at(np.asarray(last, np.float64) + 1.0)
    # Both ends in the same interval: the pause is counted once.
    return start_len + np.where(end_i == start_i, 0.0, end_len)


def interpolated(thread, rows: np.ndarray | None = None) -> np.ndarray:
    """A bool per call row of ``thread`` (a :class:`jbgui.model.analysis.ThreadReplay`; every row
    when ``rows`` is None): is its duration interpolated across a pause, so that it may be far off
    (more than :data:`TOLERANCE` of itself)? False for every call of a thread without a clock."""
    calls = thread.calls
    # given rows: only the blocks that hold them are decoded (a timeline asks for what it draws)
    if rows is None:
        first, last, flags = np.asarray(calls.first), np.asarray(calls.last), np.asarray(calls.flags)
    else:
        first, last, flags = (calls.values_at(name, rows) for name in ("first", "last", "flags"))
    if len(thread.clock) < 2:
        return np.zeros(len(first), np.bool_)
    return interpolated_spans(thread.axis, first, last, flags, thread.shared_steps)


def interpolated_spans(clock, first: np.ndarray, last: np.ndarray, flags: np.ndarray | None = None,
                       shared_steps: np.ndarray | None = None) -> np.ndarray:
    """:func:`interpolated` for calls given by their first and last events and flags (``clock``: a
    thread's clock points, or its :class:`jbgui.model.blocking_times.Axis`). Without ``flags``
    every call is taken to have recorded its own events. ``shared_steps``: the thread's
    ``ThreadReplay.shared_steps``; a call without events of its own at one of them is marked (it
    has the wait's span, which it may not have waited)."""
    first = np.asarray(first)
    if len(clock) < 2 or len(first) == 0:
        return np.zeros(len(first), np.bool_)
    axis = clock if isinstance(clock, Axis) else Axis(clock)
    flags = np.zeros(len(first), np.int64) if flags is None else np.asarray(flags, np.int64)
    start, end_last = axis.rows(first, last, flags)
    err = uncertainty(np.stack([axis.pos, axis.nanos], 1), start, end_last)
    duration = axis.times(np.asarray(end_last, np.float64) + 1.0) - axis.times(start)
    marked = err > TOLERANCE * np.maximum(duration, 0.0)
    if shared_steps is not None and len(shared_steps):
        marked |= ((flags & SYNTHETIC) != 0) & ((flags & BESIDE_WAIT) == 0) & (first == np.asarray(last)) & \
            np.isin(first, shared_steps)
    return marked
