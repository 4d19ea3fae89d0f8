"""Per-thread totals over the call table that the summary and ``jbtrace stats`` show: calls per
method, calls per flag, the deepest call. One numba pass over the columns (chunk by chunk, so a
memory-mapped table of hundreds of millions of calls is read once, in bounded memory), kept beside
the columns so that a second open shows them at once."""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np

from jbgui.model import derived

CHUNK_ROWS = 1 << 22
FLAG_BITS = 16
_FILE = "call_summary.npz"


@numba.njit(cache=True, nogil=True)
def _summarize(method, flags, depth, counts, flag_counts, max_depth):
    for i in range(len(method)):
        m = method[i]
        if 0 < m < len(counts):
            counts[m] += 1
        f = flags[i]
        if f:
            for b in range(len(flag_counts)):
                if f & (1 << b):
                    flag_counts[b] += 1
        if depth[i] > max_depth:
            max_depth = depth[i]
    return max_depth


class Accumulator:
    """The summary fed block by block of rows in order: :func:`compute`'s own pass, or a pass that
    reads these columns anyway (the timeline's levels, :mod:`jbgui.model.timeline`), so that they
    are not decoded twice."""

    def __init__(self):
        self.counts = np.zeros(1, np.int64)
        self.flag_counts = np.zeros(FLAG_BITS, np.int64)
        self.max_depth = -1
        self.rows = 0

    def feed(self, method: np.ndarray, flags: np.ndarray, depth: np.ndarray) -> None:
        if len(method) and int(method.max()) >= len(self.counts):
            self.counts = np.concatenate([self.counts, np.zeros(int(method.max()) + 1 - len(self.counts), np.int64)])
        self.max_depth = _summarize(method, flags, depth, self.counts, self.flag_counts, self.max_depth)
        self.rows += len(method)

    def result(self) -> dict[str, np.ndarray]:
        ids = np.flatnonzero(self.counts)
        return {"method_ids": ids.astype(np.int64), "method_calls": self.counts[ids],
                "flag_counts": self.flag_counts.copy(), "max_depth": np.array([self.max_depth], np.int64)}


def compute(calls) -> dict[str, np.ndarray]:
    """One pass, a few million rows at a time, reading each piece from the store when the whole
    column is not decoded already (``keep=False``): three whole columns of a thread of hundreds
    of millions of calls would be gigabytes held for nothing after."""
    n = len(calls)
    acc = Accumulator()
    for lo in range(0, n, CHUNK_ROWS):
        hi = min(n, lo + CHUNK_ROWS)
        acc.feed(np.asarray(calls.window("method", lo, hi, keep=False)),
                 np.asarray(calls.window("flags", lo, hi, keep=False)),
                 np.asarray(calls.window("depth", lo, hi, keep=False)))
    return acc.result()


def is_stored(directory: Path | None) -> bool:
    return derived.is_stored(directory, _FILE)


def save(directory: Path | None, summary: dict[str, np.ndarray]) -> None:
    """Keep a summary computed by another pass (:class:`Accumulator`) where
    :func:`load_or_compute` finds it."""
    derived.save(directory, _FILE, summary)


def load_or_compute(calls, directory: Path | None) -> dict[str, np.ndarray]:
    return derived.load_or_compute(directory, _FILE, ("method_ids", "method_calls", "flag_counts", "max_depth"),
                                   lambda: compute(calls))


def flag_count(summary: dict, bit: int) -> int:
    """Calls with flag ``bit`` (a power of two)."""
    return int(summary["flag_counts"][int(bit).bit_length() - 1])
