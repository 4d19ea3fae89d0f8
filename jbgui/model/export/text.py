"""Rendering columns to text without a Python loop per row: integers and microseconds by numba,
keyed string pools gathered by index, row-wise concatenation of literals and texts."""

from __future__ import annotations

import json
from collections.abc import Callable

import numba
import numpy as np



class _Text:
    """Byte strings of a chunk of rows, back to back in ``data``, one length per row."""

    __slots__ = ("data", "lengths")

    def __init__(self, data: np.ndarray, lengths: np.ndarray):
        self.data = data
        self.lengths = lengths


@numba.njit(cache=True, nogil=True)
def _render_ints(values, out, lengths):  # pragma: no cover - numba
    """Decimal text of each value, back to back in ``out``; returns the bytes used."""
    digits = np.empty(20, np.uint8)
    pos = 0
    for i in range(len(values)):
        v = values[i]
        begin = pos
        if v < 0:
            out[pos] = 45           # '-'
            pos += 1
            v = -v
        k = 0
        while True:
            digits[k] = 48 + v % 10
            v //= 10
            k += 1
            if v == 0:
                break
        for j in range(k):
            out[pos + j] = digits[k - 1 - j]
        pos += k
        lengths[i] = pos - begin
    return pos


@numba.njit(cache=True, nogil=True)
def _render_micros(ns, out, lengths):  # pragma: no cover - numba
    """Nanoseconds as microseconds with three decimals, exactly (``1234567`` → ``1234.567``)."""
    digits = np.empty(24, np.uint8)
    pos = 0
    for i in range(len(ns)):
        v = ns[i]
        begin = pos
        if v < 0:
            out[pos] = 45
            pos += 1
            v = -v
        k = 0
        while True:
            digits[k] = 48 + v % 10
            v //= 10
            k += 1
            if k == 3:
                digits[k] = 46      # '.'
                k += 1
            if v == 0 and k > 4:
                break
        for j in range(k):
            out[pos + j] = digits[k - 1 - j]
        pos += k
        lengths[i] = pos - begin
    return pos


@numba.njit(cache=True, nogil=True)
def _gather(pool, offsets, pool_lengths, index, out, lengths):  # pragma: no cover - numba
    pos = 0
    for i in range(len(index)):
        j = index[i]
        n = pool_lengths[j]
        o = offsets[j]
        for k in range(n):
            out[pos + k] = pool[o + k]
        pos += n
        lengths[i] = n
    return pos


@numba.njit(cache=True, nogil=True)
def _place(out, position, data, lengths):  # pragma: no cover - numba
    src = 0
    for i in range(len(position)):
        p = position[i]
        n = lengths[i]
        for k in range(n):
            out[p + k] = data[src + k]
        src += n
        position[i] = p + n


@numba.njit(cache=True, nogil=True)
def _place_literal(out, position, literal):  # pragma: no cover - numba
    n = len(literal)
    for i in range(len(position)):
        p = position[i]
        for k in range(n):
            out[p + k] = literal[k]
        position[i] = p + n


def _ints(values: np.ndarray) -> _Text:
    """Decimal text of integers."""
    # INT64_MIN has no positive counterpart: clipped, so that the renderer's negation never overflows.
    values = np.maximum(np.ascontiguousarray(values, np.int64), -np.iinfo(np.int64).max)
    out = np.empty(20 * len(values), np.uint8)
    lengths = np.empty(len(values), np.int64)
    used = _render_ints(values, out, lengths)
    return _Text(out[:used], lengths)


def _micros(ns: np.ndarray) -> _Text:
    """Nanoseconds as microseconds with exactly three decimals (no float rounding)."""
    ns = np.maximum(np.ascontiguousarray(ns, np.int64), -np.iinfo(np.int64).max)
    out = np.empty(24 * len(ns), np.uint8)
    lengths = np.empty(len(ns), np.int64)
    used = _render_micros(ns, out, lengths)
    return _Text(out[:used], lengths)


def _concat(parts: list[bytes | _Text], n: int) -> _Text:
    """Row-wise concatenation of literals (the same bytes in every row) and per-row texts."""
    lengths = np.zeros(n, np.int64)
    for part in parts:
        lengths += len(part) if isinstance(part, bytes) else part.lengths
    ends = np.cumsum(lengths)
    out = np.empty(int(ends[-1]) if n else 0, np.uint8)
    position = ends - lengths
    for part in parts:
        if isinstance(part, bytes):
            if part:
                _place_literal(out, position, np.frombuffer(part, np.uint8))
        else:
            _place(out, position, part.data, part.lengths)
    return _Text(out, lengths)


class _KeyedPool:
    """Strings rendered once per key (a name key, a flags value, a block), encoded for the output,
    and gathered per row by key."""

    def __init__(self, render: Callable[[int], str], encode: Callable[[str], bytes] = str.encode):
        self.render = render
        self.encode = encode
        self.slot = np.full(1024, -1, np.int64)       # key -> index into items
        self.items: list[str] = []
        self.encoded: list[bytes] = []
        self._bytes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._objects: np.ndarray | None = None

    def indices(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, np.int64)
        if not len(keys):
            return keys
        top = int(keys.max())
        if top >= len(self.slot):
            grown = np.full(max(top + 1, 2 * len(self.slot)), -1, np.int64)
            grown[:len(self.slot)] = self.slot
            self.slot = grown
        index = self.slot[keys]
        missing = index < 0
        if missing.any():
            for key in np.unique(keys[missing]).tolist():
                self.slot[key] = len(self.items)
                self.items.append(self.render(key))
                self.encoded.append(self.encode(self.items[-1]))
            self._bytes = self._objects = None
            index = self.slot[keys]
        return index

    def text(self, keys: np.ndarray) -> _Text:
        index = self.indices(keys)
        if self._bytes is None:
            lengths = np.fromiter((len(b) for b in self.encoded), np.int64, len(self.encoded))
            self._bytes = (np.frombuffer(b"".join(self.encoded), np.uint8), np.cumsum(lengths) - lengths, lengths)
        pool, offsets, pool_lengths = self._bytes
        out = np.empty(int(pool_lengths[index].sum()), np.uint8)
        lengths = np.empty(len(index), np.int64)
        _gather(pool, offsets, pool_lengths, index, out, lengths)
        return _Text(out, lengths)

    def strings(self, keys: np.ndarray) -> np.ndarray:
        index = self.indices(keys)
        if self._objects is None:
            self._objects = np.array(self.items + [""], dtype=object)[:-1]
        return self._objects[index]


class _KeyedBools:
    """A yes/no per key, decided once per distinct key (does this class match a prefix?)."""

    def __init__(self, test: Callable[[int], bool]):
        self.test = test
        self.known = np.full(1024, -1, np.int8)

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, np.int64)
        if len(keys) and int(keys.max()) >= len(self.known):
            grown = np.full(max(int(keys.max()) + 1, 2 * len(self.known)), -1, np.int8)
            grown[:len(self.known)] = self.known
            self.known = grown
        value = self.known[keys]
        missing = value < 0
        if missing.any():
            for key in np.unique(keys[missing]).tolist():
                self.known[key] = 1 if self.test(key) else 0
            value = self.known[keys]
        return value == 1


def _csv_field(text: str) -> bytes:
    if any(c in text for c in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text.encode("utf-8", "surrogateescape")


def _json_string(text: str) -> bytes:
    return json.dumps(text).encode()
