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
measured, and its callers with it. Every other clock sample stays at ``x = position``.
"""

from __future__ import annotations

import numpy as np

from jbgui.model import layout


def clock_points(samples: np.ndarray) -> np.ndarray:
    """The ``(x, nanos)`` points, as float64 of shape (n, 2) sorted by x, that map a thread's
    event indices to time, from its clock.bin records (``TraceDir.clock()`` rows of one stream).
    Samples at one x keep their file order, which is the order the thread took them in."""
    if not len(samples):
        return np.zeros((0, 2))
    flags = np.asarray(samples["flags"], np.int64)
    after = (flags & (layout.CLOCK_FLAG_BLOCKING | layout.CLOCK_FLAG_AFTER)) == (
        layout.CLOCK_FLAG_BLOCKING | layout.CLOCK_FLAG_AFTER)
    x = np.asarray(samples["position"], np.float64) + after
    points = np.stack([x, np.asarray(samples["nanos"], np.float64)], 1)
    return points[np.argsort(points[:, 0], kind="stable")]


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
