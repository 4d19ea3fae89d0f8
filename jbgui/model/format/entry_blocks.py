"""The first blocks a chunk's payload leaves implied (filter bit ``FILTER_ENTRY_BLOCKS``).

The recorder gives a method's first block no probe when nothing jumps to it (agent option
``elide``, jbgui.instr.BlockElision): the block runs right after the method's start, so the entry
probe marks the start word with ``START_ENTRY_IMPLIED`` and the payload stores that one word for
two events. Decoding writes the block's word after the start word, or after the receiver word
that follows it, and clears the mark: readers see the events a probe in the block would have
recorded, at the positions the chunk headers and clock samples count (docs/trace-format.md).
"""

from __future__ import annotations

import numba
import numpy as np

from jbgui.model import layout

_FLAG_MASK = (3 << layout.TYPE_SHIFT) | layout.START_ENTRY_IMPLIED
_FLAGGED = (layout.TYPE_METHOD_START << layout.TYPE_SHIFT) | layout.START_ENTRY_IMPLIED
_RECEIVER_MASK = (3 << layout.TYPE_SHIFT) | (7 << layout.SUBTYPE_SHIFT)
_RECEIVER = layout.EXT_RECEIVER << layout.SUBTYPE_SHIFT
_CLEAR = 0xFFFFFFFF ^ layout.START_ENTRY_IMPLIED
# The block word follows from the start word without any of its marks (START_RECEIVER_OWN stays on
# the start word, for the readers of receivers).
_CLEAR_ALL = _CLEAR ^ layout.START_RECEIVER_OWN
_BLOCK_FROM_START = (layout.TYPE_BLOCK - layout.TYPE_METHOD_START) << layout.TYPE_SHIFT


@numba.njit(cache=True, nogil=True)
def _marked(words):
    k = 0
    for i in range(len(words)):
        if (words[i] & _FLAG_MASK) == _FLAGGED:
            k += 1
    return k


@numba.njit(cache=True, nogil=True)
def _expand(words, out):
    n = len(words)
    j = 0
    i = 0
    while i < n:
        w = words[i]
        if (w & _FLAG_MASK) != _FLAGGED:
            out[j] = w
            j += 1
            i += 1
            continue
        start = w & _CLEAR
        out[j] = start
        j += 1
        if i + 1 < n and (words[i + 1] & _RECEIVER_MASK) == _RECEIVER:
            out[j] = words[i + 1]
            j += 1
            i += 1
        out[j] = (w & _CLEAR_ALL) + _BLOCK_FROM_START
        j += 1
        i += 1
    return j


def expand(words: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` events that ``words`` (uint32) stand for; :class:`ValueError` when they stand
    for another number (a damaged or forged chunk), checked before anything is allocated."""
    marked = _marked(words)
    if len(words) + marked != count:
        raise ValueError(f"{len(words)} words with {marked} implied first blocks are not the chunk's {count} events")
    out = np.empty(count, np.uint32)
    _expand(words, out)
    return out
