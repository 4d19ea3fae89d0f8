"""The recorder's clock stamps around blocking calls, and the one event->time mapping per thread
that every reader of call times goes through.

A thread stamps the clock (``System.nanoTime``) just before and just after every call that may
block — sleep, ``Object.wait``, park, waiting for a process, blocking file and socket I/O, a
contended monitor (the list is ``jbgui.instr.BlockingCalls`` in the agent) — as clock.bin records
flagged ``CLOCK_FLAG_BLOCKING`` (and ``CLOCK_FLAG_AFTER`` for the second), at the thread's event
position (docs/trace-format.md, "Clock samples").

**Every record lies at ``x = position``** (:func:`clock_points`): a native call (``Thread.sleep``
on JDK 17, the ``Object.wait`` native, ``Unsafe.park``) records no event, so both its stamps carry
the same position ``p`` and the time it blocked is a *vertical step* at ``x = p``: between event
``p - 1`` and event ``p`` no event ran, the thread waited.

Replay puts such a call at ``first = last = p`` (a synthetic ``NATIVE``/``UNTRACED`` row), the
same event at which the next call may start (``LockSupport.park`` calls ``setBlocker`` right after
``Unsafe.park``: its START is event ``p`` too). No one function of the event index can give the
native the step and its next sibling none, and ``[t(first), t(last + 1))`` for both made the
sibling last the whole wait (and the timeline's sub-pixel merging, which takes siblings to be
disjoint, drew it down to the sibling's callees). So call times are read on an *expanded axis*
(:class:`Axis`): each step gets a unit of its own, ``[p + s - 1, p + s]`` where ``s`` counts the
steps up to ``p``; an event ``k`` lies at ``k + s(k)``; a synthetic row starts before the step at
its position and, when it recorded nothing, spans exactly that unit. Then a native lasts what its
stamps measured, the call that ended just before it ends before it, the call that starts just
after it starts after it, siblings never overlap, and a trace without steps reads exactly as
``np.interp`` over its samples (the same values, to the bit).
"""

from __future__ import annotations

import numba
import numpy as np

from jbgui.model import layout
from jbgui.model.clock_times import _end_at, _interp_at
from jbgui.model.replay_kernel import F_AFTER_WAIT, F_BEFORE_WAIT, F_NATIVE, F_UNTRACED

# Rows that stand for a call recording no event of its own (replay's synthetic rows): they ran
# between event ``first - 1`` and event ``first``, where a step of the clock lies if they blocked.
SYNTHETIC = F_NATIVE | F_UNTRACED
# Synthetic rows that replay knows ran beside a wait at the same event (a blocking call, a
# monitorenter), not in it.
BESIDE_WAIT = F_BEFORE_WAIT | F_AFTER_WAIT


def clock_points(samples: np.ndarray) -> np.ndarray:
    """The ``(x, nanos)`` points, as float64 of shape (n, 2), that map a thread's event indices to
    time, from its clock.bin records (``TraceDir.clock()`` rows of one stream, in the order
    :func:`jbgui.model.format.clock.read_clock` gives: by position, then time).

    The mapping is one per thread and every reader takes it from here (``ThreadReplay.clock``;
    call spans through :class:`Axis`). Both columns are non-decreasing. Rules:

    - Every record lies at ``x = position``: a sample, a stamp before a blocking call, a stamp
      after one. The stamps of a call that recorded no event (a native) share one position, so
      the wait is a vertical step there; the stamp after a call that recorded events (JDK 21's
      Java ``Thread.sleep``) lies where its own events end. A sample another thread took while
      the thread was blocked (the writer finishing it, the optional sampler) lies inside the
      step, or, with no stamp after it (the thread was still blocked when the trace ended, or
      the call threw), is the step's top: the call's end.
    - Blocking stamps are exact and win, then the samples the thread took itself: a sample that
      contradicts one of them (a later time at an earlier ``x``, as a sampler's sample with a
      stale position) is left out; then any point still left that would make time go backwards
      along ``x`` is left out (the earlier on ``x`` stays).
    - At one ``x`` only the earliest and the latest time stay: a step from the first to the last
      (several natives one after another with no event between share it, as replay gives them
      one event).

    ``np.interp`` over these points gives the time an event *starts* (the latest at a step);
    call spans, which also need where a call before a step *ends*, come from :class:`Axis`. A
    trace without blocking stamps gives exactly its samples at ``x = position``."""
    if not len(samples):
        return np.zeros((0, 2))
    positions = np.asarray(samples["position"], np.float64)
    nanos = np.asarray(samples["nanos"], np.float64)
    flags = np.asarray(samples["flags"], np.int64)
    order = np.argsort(positions, kind="stable")        # (read_clock's order already)
    points = np.stack([positions[order], nanos[order]], 1)
    f = flags[order]
    rank = np.where(f & layout.CLOCK_FLAG_BLOCKING, 2, np.where(f & layout.CLOCK_FLAG_EXACT, 1, 0))
    return _steps_only(_monotonic(points, rank))


def _monotonic(points: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """``points`` (sorted by x) without those whose time is earlier than a point before them. A
    point that one before it contradicts wins when it ranks higher (``rank``: 2 a blocking stamp,
    1 an exact sample the thread took itself, 0 a sampler's): the one before goes."""
    if len(points) < 2:
        return points
    t = points[:, 1]
    if (t[1:] >= np.maximum.accumulate(t)[:-1]).all():
        return points
    out: list[int] = []
    for i in range(len(points)):
        while out and t[out[-1]] > t[i] and rank[i] > rank[out[-1]]:
            out.pop()
        if not out or t[i] >= t[out[-1]]:
            out.append(i)
    return points[out]


def _steps_only(points: np.ndarray) -> np.ndarray:
    """At each x, the earliest and the latest point (one when their times are equal)."""
    if len(points) < 2:
        return points
    x, t = points[:, 0], points[:, 1]
    starts = np.flatnonzero(np.r_[True, x[1:] != x[:-1]])
    ends = np.flatnonzero(np.r_[x[1:] != x[:-1], True])
    if len(starts) == len(points):
        return points
    keep = np.zeros(len(points), bool)
    keep[starts] = True
    keep[ends[t[ends] != t[starts]]] = True
    return points[keep]


class Axis:
    """A thread's mapping as call times read it: every vertical step of :func:`clock_points`
    (several times at one ``x``: a wait between two events) gets a unit of its own, so that a call
    recorded at that event without events of its own (a native) spans the wait and nothing else.

    Positions on this axis: event ``k`` lies at ``k + s(k)``, with ``s(k)`` the number of steps at
    positions ``<= k``; a step at ``p`` runs from ``p + s(p) - 1`` (its earliest time) to
    ``p + s(p)`` (its latest). A call spans ``[start, end)``: a synthetic row (``NATIVE``,
    ``UNTRACED``) starts at ``first + s(first - 1)``, before the step at its event, any other row
    at its START event, ``first + s(first)``; a synthetic row that recorded nothing
    (``first == last``) ends one unit after its start, any other row after its last event,
    ``last + s(last) + 1``. Without steps every position is the event index itself.

    Which synthetic row takes a step: static.xml marks the calls the recorder stamps (``blocking``
    call sites), and replay flags the natives beside one in its block (``F_BEFORE_WAIT``,
    ``F_AFTER_WAIT``, :func:`jbgui.model.replay.beside_waits`): those record no event either, so
    they sit at the wait's event too, but did not wait. One after the wait spans the unit after
    the step (event ``first``'s, as a native at an event without a step); one before it spans
    nothing at the step's bottom (``rows`` gives it ``last = start - 1``: event ``first - 1``'s
    unit may be the end of the call before it); neither weighs anything. Any other
    synthetic row at a step takes it; two of them at one step both do
    (``ThreadReplay.shared_steps``, marked interpolated)."""

    def __init__(self, clock: np.ndarray):
        clock = _steps_only(np.asarray(clock, np.float64).reshape(-1, 2))
        x = clock[:, 0]
        bottom = np.r_[x[1:] == x[:-1], False] if len(x) else np.zeros(0, bool)
        self.steps = x[bottom].astype(np.int64)            # sorted: positions with a step
        self.nanos = np.ascontiguousarray(clock[:, 1])
        if len(self.steps):
            self.pos = x + np.searchsorted(self.steps, x, side="right") - bottom
        else:
            self.pos = x
        self.pos = np.ascontiguousarray(self.pos, np.float64)
        self._slopes = None         # each segment's slope, computed once (see weight_spans)

    def __len__(self) -> int:
        return len(self.pos)

    def events(self, events) -> np.ndarray:
        """Axis positions of event indices (where each event starts)."""
        events = np.asarray(events)
        if not len(self.steps):
            return events
        return events + np.searchsorted(self.steps, events, side="right")

    def rows(self, first, last, flags) -> tuple[np.ndarray, np.ndarray]:
        """Axis positions ``(start, last)`` of calls (``first``, ``last``, ``flags`` per call, or of
        a level of detail's rows), integers like the event indices: a call covers
        ``[start, last + 1)``. The timeline's walk reads these in place of the events."""
        first = np.asarray(first, np.int64)
        last = np.asarray(last, np.int64)
        if not len(self.steps):
            return first, last
        start, end_last = self._positions(first, last, flags, False)
        return start, end_last

    def weight_rows(self, first, last, flags) -> tuple[np.ndarray, np.ndarray]:
        """Axis positions ``(start, end)`` of the time calls are weighed by in the aggregated views
        (calling-context trees): from a call's first event to its last, as before the stamps, so
        that a call's callees never add up to more than the call; a native that recorded nothing
        and blocked spans its wait (its unit of the axis), one that did not block nothing."""
        first = np.asarray(first, np.int64)
        last = np.asarray(last, np.int64)
        if not len(self.steps):
            return first, last
        return self._positions(first, last, flags, True)

    def weight_spans(self, first, last, flags) -> np.ndarray:
        """The nanoseconds calls are weighed by (int64, never negative): equal to
        ``clock_times.block_spans(*self.weight_rows(first, last, flags), self.pos, self.nanos)``
        in one pass, without the positions' arrays between (the calling-context trees read every
        call's: 2.2 s of CPU in two passes on javac's 225 M calls, 0.9 s in one). ``first`` and
        ``last`` of any integer type, a block of calls in start order (any order is right, only
        slower); at least two clock points."""
        first = np.asarray(first)
        out = np.empty(len(first), np.int64)
        if len(first):
            if self._slopes is None:
                with np.errstate(divide="ignore", invalid="ignore"):    # segments of no length: never used
                    self._slopes = np.diff(self.nanos) / np.diff(self.pos)
            _weight_spans(first, np.asarray(last), np.asarray(flags), self.steps, SYNTHETIC, self.pos, self.nanos,
                          self._slopes, out)
        return out

    def _positions(self, first, last, flags, weights: bool) -> tuple[np.ndarray, np.ndarray]:
        shape = first.shape         # (a single call may come as a 0-d array)
        first, last = first.reshape(-1), np.broadcast_to(last, shape).reshape(-1)
        flags = np.broadcast_to(np.asarray(flags), shape).reshape(-1)
        start = np.empty(len(first), np.int64)
        end = np.empty(len(first), np.int64)
        _axis_rows(first, last, flags, self.steps, SYNTHETIC, weights, start, end)
        return start.reshape(shape), end.reshape(shape)

    def times(self, positions) -> np.ndarray:
        """Nanoseconds at axis positions (linear between points, constant outside)."""
        positions = np.asarray(positions, np.float64)
        if len(self.pos) < 2:
            return positions
        return np.interp(positions, self.pos, self.nanos)

    def spans(self, first, last, flags) -> tuple[np.ndarray, np.ndarray]:
        """Start and end times of calls: what the timeline draws, the call tree and hover say."""
        start, end_last = self.rows(first, last, flags)
        return self.times(start), self.times(np.asarray(end_last, np.float64) + 1.0)


@numba.njit(cache=True, nogil=True)
def _steps_up_to(steps, v, lo, hi):  # pragma: no cover - numba
    """How many of ``steps`` (sorted) are ``<= v``, given that ``steps[:lo]`` are and
    ``steps[hi:]`` are not."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if steps[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True, inline="always")
def _role(flags, synthetic):  # pragma: no cover - numba
    """How a call stands to a step at its event (:func:`_call_positions`): 0 a call that recorded
    events, 1 a synthetic row (it takes the step: it waited, or the trace does not say which),
    2 one after the blocking call beside it, 3 one before it (``F_AFTER_WAIT``, ``F_BEFORE_WAIT``)."""
    if not flags & synthetic:
        return 0
    if flags & F_AFTER_WAIT:
        return 2
    if flags & F_BEFORE_WAIT:
        return 3
    return 1


@numba.njit(cache=True, nogil=True, inline="always")
def _call_positions(steps, x, y, role, j, weights):  # pragma: no cover - numba
    """One call's start and end positions on the axis (:meth:`Axis.rows`, or with ``weights``
    :meth:`Axis.weight_rows`) from its first and last events ``x``, ``y``, its :func:`_role`, and
    ``j`` moved to the steps ``<= x``: ``(s, e, j)``. ``j`` is where the previous call left it
    (walking forward from there, searching from the start only when ``x`` is behind it); the end
    gallops from ``j``. Inlined into the kernels that call it once per call."""
    n = len(steps)
    if j > 0 and steps[j - 1] > x:          # back: search from the start
        j = _steps_up_to(steps, x, 0, j)
    while j < n and steps[j] <= x:
        j += 1
    on_step = j > 0 and steps[j - 1] == x
    s = x + j
    if role != 0 and x == y:
        if not on_step or role == 2:        # event x's unit (after the step); weighs nothing
            return s, s, j
        if role == 3:                       # nothing, at the step's bottom: no unit is its own
            return s - 1, s - (1 if weights else 2), j
        return s - 1, s - 1 + (1 if weights else 0), j      # the step
    if (role == 1 or role == 3) and on_step:     # a native with callbacks: from before the step
        s -= 1
    if y >= x:
        k = j
        step = 1
        while k + step - 1 < n and steps[k + step - 1] <= y:     # gallop: steps[:k] <= y
            k += step
            step *= 2
        k = _steps_up_to(steps, y, k, min(k + step - 1, n))
    else:
        k = _steps_up_to(steps, y, 0, n)
    return s, y + k, j


@numba.njit(cache=True, nogil=True)
def _axis_rows(first, last, flags, steps, synthetic, weights, start, end):  # pragma: no cover - numba
    """:meth:`Axis.rows` (``weights`` False) or :meth:`Axis.weight_rows` (True) in one pass:
    ``s(k)``, the steps at positions ``<= k``, found by walking ``steps`` (sorted) along ``first``
    (in start order within a block of calls; any order is right, only slower) and galloping from
    there to ``last``, instead of a binary search per value."""
    j = 0                       # steps[:j] <= x < steps[j:]
    for i in range(len(first)):
        start[i], end[i], j = _call_positions(steps, first[i], last[i], _role(flags[i], synthetic), j, weights)


@numba.njit(cache=True, nogil=True)
def _weight_spans(first, last, flags, steps, synthetic, pos, nanos, slopes, out):  # pragma: no cover - numba
    """:meth:`Axis.weight_spans`: :func:`_axis_rows` (``weights`` True) and
    :func:`jbgui.model.clock_times._block_spans` in one loop (the positions by the inlined
    :func:`_call_positions`, the spans' lines repeated: a call per value costs several times the loop's work).
    Mostly no step of the axis lies among a block's events: then every position is its event plus
    the steps before the block, no search per value; and a call that starts and ends within one
    segment of the clock points, not on one, takes the segment's slope straight away."""
    n = len(steps)
    m = len(pos)
    low = high = np.int64(first[0])
    for i in range(len(first)):
        low = min(low, np.int64(first[i]), np.int64(last[i]))
        high = max(high, np.int64(first[i]), np.int64(last[i]))
    below = 0                   # steps[:below] < low
    while below < n and steps[below] < low:
        below += 1
    no_step = below == n or steps[below] > high
    j = 0                       # steps[:j] <= x < steps[j:]
    q = 0                       # the clock point of the position s
    p_first = pos[0]
    p_last = pos[m - 1]
    for i in range(len(first)):
        x = np.int64(first[i])
        y = np.int64(last[i])
        if no_step:
            s = x + below
            e = y + below
        else:
            s, e, j = _call_positions(steps, x, y, _role(flags[i], synthetic), j, True)
        # the span from s to e (clock_times._block_spans)
        xs = np.float64(s)
        ys = np.float64(e)
        while q > 0 and pos[q] > xs:
            q -= 1
        while q + 1 < m and pos[q + 1] <= xs:
            q += 1
        if p_first < xs < ys < p_last and pos[q] != xs and pos[q + 1] > ys:     # within one segment
            t0 = slopes[q] * (xs - pos[q]) + nanos[q]
            t1 = slopes[q] * (ys - pos[q]) + nanos[q]
        else:
            if xs < p_first or xs >= p_last or pos[q] == xs:
                t0 = _interp_at(xs, q, pos, nanos)
            else:
                t0 = slopes[q] * (xs - pos[q]) + nanos[q]
            k = q if ys >= xs else 0
            if k + 1 < m and pos[k + 1] <= ys:
                t1 = _end_at(xs, ys, q, pos, nanos)
            elif ys < p_first or ys >= p_last or pos[k] == ys:
                t1 = _interp_at(ys, k, pos, nanos)
            else:
                t1 = slopes[k] * (ys - pos[k]) + nanos[k]
        span = np.rint(t1 - t0)
        out[i] = np.int64(span) if span > 0 else 0


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
    """For the calls at ``rows`` of a replayed thread: True where both ends of the call's span fall
    on a clock point the thread took itself (on :class:`Axis`), so its duration is measured, not
    interpolated."""
    rows = np.atleast_1d(np.asarray(rows, np.int64))
    axis = thread.axis
    if len(axis) < 2:
        return np.zeros(len(rows), bool)
    calls = thread.calls
    firsts = np.asarray(calls.first)
    lasts = np.asarray(calls.last)
    start, end_last = axis.rows(firsts[rows], lasts[rows], calls.values_at("flags", rows))
    measured = np.isin(start, axis.pos) & np.isin(end_last + 1, axis.pos)
    # Calls that record no event of their own (natives) made one after another sit at the same
    # event, and those replay could not tell apart (neither beside a blocking call) get the same
    # span: the stamps measured only one of them, so neither is exact.
    n = len(firsts)
    for step in (-1, 1):
        other = np.clip(rows + step, 0, max(n - 1, 0))
        o_start, o_end = axis.rows(firsts[other], lasts[other], calls.values_at("flags", other))
        same = (other != rows) & (o_start == start) & (o_end == end_last)
        measured &= ~same
    return measured
