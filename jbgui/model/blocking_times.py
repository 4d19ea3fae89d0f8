"""The recorder's clock stamps around blocking calls, and where they put time on the event axis.

A thread stamps the clock (``System.nanoTime``) just before and just after every call that may
block — sleep, ``Object.wait``, park, waiting for a process, blocking file and socket I/O (the
list is ``jbgui.instr.BlockingCalls`` in the agent) — as clock.bin records flagged
``CLOCK_FLAG_BLOCKING`` (and ``CLOCK_FLAG_AFTER`` for the second), at the thread's event
position (docs/trace-format.md, "Clock samples").

Both stamps of a call that records nothing itself (a native: ``Thread.sleep`` on JDK 17, the
``Object.wait`` native, ``Unsafe.park``) carry the same position ``p``. Replay puts such a call at
event ``p`` and gives it the span ``[t(p), t(p + 1))``; so the stamp before the call is placed at
``x = p`` and the one after it at ``x = p + 1``: the call then lasts exactly what the two stamps
measured, and its callers with it. A call that records events itself (JDK 21's Java
``Thread.sleep``, ``FileOutputStream.write(byte[])``) has its stamp after it at ``x = position``,
where its own events end. Every other clock sample stays at ``x = position``.
:func:`clock_points` turns a thread's records into one monotonic mapping and says how it settles
samples that disagree.
"""

from __future__ import annotations

import numpy as np

from jbgui.model import layout


def clock_points(samples: np.ndarray) -> np.ndarray:
    """The ``(x, nanos)`` points, as float64 of shape (n, 2), that map a thread's event indices to
    time, from its clock.bin records (``TraceDir.clock()`` rows of one stream, in the order
    :func:`jbgui.model.format.clock.read_clock` gives: by position, then time).

    The mapping is one per thread and every reader takes it from here (``ThreadReplay.clock``):
    levels, range statistics, timeline queries, calling-context tree times and exports agree.
    Both columns are non-decreasing. Points at one ``x`` form a vertical step, in time order:
    the events before ``x`` end at its earliest time and event ``x`` starts at its latest (what
    ``np.interp`` and :mod:`jbgui.model.clock_times` read there); points at one time form a flat
    step. Rules, in order:

    - A stamp taken before a blocking call lies at ``x = position``. The stamp after it lies at
      ``x = position + 1`` when the call recorded no event (a native, or untraced code: replay
      puts it at event ``position`` with the span ``[t(p), t(p + 1))``, which the two stamps then
      measure), else at ``x = position``: the callee's events end where the stamp was taken.
    - Several such calls one after another with no event between (all at event ``p``, where replay
      gives each the same span) share one step: ``t(p)`` is the first one's start and
      ``t(p + 1)`` the last one's end. The stamps between are left out.
    - A sample another thread took (the writer finishing a thread, the optional sampler) while the
      thread was blocked in such a call, between its two stamps, carries nothing the stamps do not
      and is left out; without a stamp after it (the thread was still blocked when the trace
      ended, or the call threw) it marks the call's end, at ``x = position + 1``.
    - Blocking stamps are exact and win: a sample that contradicts one (a later time at an
      earlier ``x``, as a sample another thread took with a stale position) is left out; then any
      point still left that would make time go backwards along ``x`` is left out (the earlier on
      ``x`` stays), so neither column ever decreases.

    A trace without blocking stamps gives exactly the points it gave before (the samples at
    ``x = position``), so its times are the same to the bit."""
    if not len(samples):
        return np.zeros((0, 2))
    positions = np.asarray(samples["position"], np.int64)
    nanos = np.asarray(samples["nanos"], np.int64)
    flags = np.asarray(samples["flags"], np.int64)
    if not (flags & layout.CLOCK_FLAG_BLOCKING).any():
        points = np.stack([positions.astype(np.float64), nanos.astype(np.float64)], 1)
        return _monotonic(points[np.argsort(points[:, 0], kind="stable")])   # (read_clock's order already)
    xs: list[float] = []
    ts: list[float] = []
    kinds: list[int] = []      # 0 sample, 1 before, 2 after a call that recorded no event
    open_at = -1               # position of a blocking call under way that recorded no event yet
    loose = None               # a sample another thread took during that call: its end, if no stamp follows
    for position, t, flag in zip(positions.tolist(), nanos.tolist(), flags.tolist()):
        if open_at >= 0 and position > open_at:
            if loose is not None:      # the call ended without its stamp (it threw)
                xs.append(loose[0]), ts.append(loose[1]), kinds.append(0)
            open_at, loose = -1, None
        if flag & layout.CLOCK_FLAG_BLOCKING and not flag & layout.CLOCK_FLAG_AFTER:
            if kinds and kinds[-1] == 2 and xs[-1] == position + 1:
                # Another call at the same event right after one that recorded nothing: the
                # first one's end goes, this one's start is not needed; its end closes the step.
                xs.pop(), ts.pop(), kinds.pop()
            else:
                xs.append(float(position)), ts.append(float(t)), kinds.append(1)
            open_at, loose = position, None
        elif flag & layout.CLOCK_FLAG_BLOCKING:
            if position == open_at:
                xs.append(float(position + 1)), ts.append(float(t)), kinds.append(2)
            else:
                xs.append(float(position)), ts.append(float(t)), kinds.append(0)
            open_at, loose = -1, None
        elif position == open_at:
            loose = (float(position + 1), float(t))
        else:
            xs.append(float(position)), ts.append(float(t)), kinds.append(0)
    if loose is not None:
        xs.append(loose[0]), ts.append(loose[1]), kinds.append(0)
    points = np.stack([np.asarray(xs, np.float64), np.asarray(ts, np.float64)], 1).reshape(-1, 2)
    order = np.argsort(points[:, 0], kind="stable")
    return _monotonic(points[order], np.asarray(kinds, np.int8)[order] > 0)


def _monotonic(points: np.ndarray, stamps: np.ndarray | None = None) -> np.ndarray:
    """``points`` (sorted by x) without those whose time is earlier than a point before them. A
    blocking stamp (``stamps``) that a sample before it contradicts wins: the sample goes."""
    if len(points) < 2:
        return points
    t = points[:, 1]
    if (t[1:] >= np.maximum.accumulate(t)[:-1]).all():
        return points
    if stamps is None:
        stamps = np.zeros(len(points), bool)
    out: list[int] = []
    for i in range(len(points)):
        while out and t[out[-1]] > t[i] and stamps[i] and not stamps[out[-1]]:
            out.pop()
        if not out or t[i] >= t[out[-1]]:
            out.append(i)
    return points[out]


def blocked_calls(samples: np.ndarray) -> np.ndarray:
    """The blocking calls a thread's stamps measured, as an array of (position, start nanos,
    end nanos) rows: each stamp before a call paired with the next stamp after one at the same
    or a later position. A stamp left without its partner (the call threw, or the trace was cut
    off) pairs with nothing."""
    out = []
    pending = None
    for position, nanos, flags in zip(samples["position"].tolist(), samples["nanos"].tolist(),
                                      samples["flags"].tolist()):
        if not flags & layout.CLOCK_FLAG_BLOCKING:
            continue
        if flags & layout.CLOCK_FLAG_AFTER:
            if pending is not None and position >= pending[0]:
                out.append((pending[0], pending[1], nanos))
            pending = None
        else:
            pending = (position, nanos)
    return np.array(out, np.int64).reshape(-1, 3)


def exact(thread, rows) -> np.ndarray:
    """For the calls at ``rows`` of a replayed thread: True where both ends of the call's span
    (event ``first`` and event ``last + 1``) fall on a clock sample the thread took itself, so
    its duration is measured, not interpolated."""
    rows = np.atleast_1d(np.asarray(rows, np.int64))
    clock = np.asarray(thread.clock)
    if len(clock) < 2:
        return np.zeros(len(rows), bool)
    xs = clock[:, 0]
    firsts = np.asarray(thread.calls.first)
    lasts = np.asarray(thread.calls.last)
    first = firsts[rows].astype(np.float64)
    last = lasts[rows].astype(np.float64) + 1.0
    measured = np.isin(first, xs) & np.isin(last, xs)
    # Calls that record no event of their own (natives) made one after another sit at the same
    # event and get the same span: the stamps measured only one of them, so neither is exact.
    n = len(firsts)
    for step in (-1, 1):
        other = np.clip(rows + step, 0, max(n - 1, 0))
        same = (other != rows) & (firsts[other] == firsts[rows]) & (lasts[other] == lasts[rows])
        measured &= ~same
    return measured
