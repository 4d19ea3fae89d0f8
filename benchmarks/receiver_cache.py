"""How often an instance method's entry probe takes its slow path, under four caches of receiver classes.

    PYTHONPATH=. .venv/bin/python benchmarks/receiver_cache.py TRACE [TRACE ...]

An entry probe records a receiver of its method's own class as a mark on the start word
(EventLayout.START_RECEIVER_OWN); any other receiver gets a receiver word, stored on the fast path
when the receiver's class is a cached one and looked up on the slow path (a call, a hash lookup
and the table of own classes: jbgui.runtime.ThreadTrace.startInstance) otherwise. The trace holds
every such receiver's class in order, so the slow paths of a cache can be counted exactly from it,
on any trace, without timing anything:

- ``thread``: the class the thread last looked up on the slow path alone (the agent until
  2026-12-01);
- ``usual``: each method's usual class (the first its slow path met, set once: Tracer.USUAL,
  constants in C2's code), then the thread's last class (the agent of 2026-12-01);
- ``two usual``: each method's first two classes its slow path met, then the thread's last class
  (the agent since 2026-12-02);
- ``method``: each method's last class looked up on the slow path (a table by method id). Built
  and measured twice, on 2026-11-27 (256 slots) and 2026-12-01 (one slot per method id): it took
  two thirds of the slow paths away but added a load from a 2 MB table to every fast path, and
  the runs were no faster (docs/recorder-cost.md).

The tables by method are counted per thread (the agent shares them). Printed per trace: the
instance starts with a receiver word, and each cache's slow paths as a share of them. Marked starts
never take the slow path (after the first receiver of the class, which all count alike).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numba
import numpy as np

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.tracedir import TraceDir, iter_stream


@numba.njit(cache=True)
def _count(words, state, last_of_method, usual, pair):
    """Adds to state = [receivers, thread misses, usual-then-thread misses, method misses, the
    thread's last class alone, method of a start whose receiver word is in the next batch (-1:
    none), the thread's last class behind the usual ones, two-usual-then-thread misses, the
    thread's last class behind the two usual ones]."""
    n = words.shape[0]
    pending = state[5]
    for i in range(n):
        w = np.int64(words[i])
        if pending >= 0:
            m = pending
            pending = -1
            if (w >> layout.TYPE_SHIFT) == layout.TYPE_EXTENDED and ((w >> layout.SUBTYPE_SHIFT) & 7) == layout.EXT_RECEIVER:
                c = w & layout.VALUE_MASK
                state[0] += 1
                if c != state[4]:
                    state[1] += 1
                    state[4] = c
                if c != usual[m] and c != state[6]:
                    state[2] += 1
                    state[6] = c
                    if usual[m] < 0:
                        usual[m] = c
                if c != last_of_method[m]:
                    state[3] += 1
                    last_of_method[m] = c
                if c != pair[m, 0] and c != pair[m, 1] and c != state[8]:
                    state[7] += 1
                    state[8] = c
                    if pair[m, 0] < 0:
                        pair[m, 0] = c
                    elif pair[m, 1] < 0:
                        pair[m, 1] = c
        if (w >> layout.TYPE_SHIFT) == layout.TYPE_METHOD_START and (w & layout.START_RECEIVER_OWN) == 0:
            pending = (w >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
    state[5] = pending


COUNTS = [0, 1, 2, 3, 7]   # receivers, then the slow paths of: thread, usual, method, two usual


def _fresh():
    slots = layout.MAX_METHOD_ID + 1
    return (np.array([0, 0, 0, 0, -1, -1, -1, 0, -1], dtype=np.int64), np.full(slots, -1, dtype=np.int64),
            np.full(slots, -1, dtype=np.int64), np.full((slots, 2), -1, dtype=np.int64))


def count_words(words: np.ndarray) -> tuple[int, int, int, int, int]:
    """(receivers, slow paths of the thread, usual, method and two-usual caches) of one thread's words."""
    state, last_of_method, usual, pair = _fresh()
    _count(words, state, last_of_method, usual, pair)
    return tuple(int(state[k]) for k in COUNTS)


def measure(trace: Path) -> tuple[int, int, int, int, int]:
    t = TraceDir(trace)
    total = np.zeros(len(COUNTS), dtype=np.int64)
    for index in t.stream_indices():
        state, last_of_method, usual, pair = _fresh()
        for _first, words, _flags, problem in iter_stream(t.stream_path(index)):
            if problem:
                print(f"  {trace}: thread {index}: {problem}", file=sys.stderr)
            _count(words, state, last_of_method, usual, pair)
        total += state[COUNTS]
    return tuple(int(x) for x in total)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.split("\n\n")[1])
        return 2
    for trace in argv:
        try:
            receivers, thread, usual, method, two = measure(Path(trace))
        except TraceError as error:
            print(f"receiver_cache: {error}", file=sys.stderr)
            return 2
        share = (lambda k: k / receivers if receivers else 0.0)
        print(f"{trace}: {receivers:,} receivers not of their method's own class; slow paths: "
              f"thread's last class {thread:,} ({share(thread):.2%}), "
              f"method's usual class then thread's last {usual:,} ({share(usual):.2%}), "
              f"method's last class {method:,} ({share(method):.2%}), "
              f"method's two usual classes then thread's last {two:,} ({share(two):.2%})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
