"""The first blocks a chunk's payload leaves implied (filter bit ``FILTER_ENTRY_BLOCKS``).

The recorder gives a method's first block no probe when nothing jumps to it (agent option
``elide``, jbgui.instr.BlockElision): the block runs right after the method's start, so the entry
probe marks the start word with ``START_ENTRY_IMPLIED`` and the payload stores that one word for
two events. Decoding writes the block's word after the start word, or after the receiver word
that follows it, and clears the mark: readers see the events a probe in the block would have
recorded, at the positions the chunk headers and clock samples count (docs/trace-format.md).

Loop records (filter bit ``FILTER_LOOPS``, format version 3, below) are the other events a payload
leaves implied: three words for the block events of a tight loop's steps, a fourth when the
steps call a static leaf method, for the calls' events, and a fifth (format version 4) when those
calls run more of the leaf than its block 0. A chunk with that bit
has both expanded in one pass (:func:`expand_loops`); one without it takes :func:`expand`.
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
        i, j = _write_marked(words, i, out, j)
    return j


@numba.njit(cache=True, nogil=True, inline="always")
def _write_marked(words, i, out, j):
    """The marked start ``words[i]`` as its start, its receiver word where one follows, and its
    first block's word, from ``out[j]``; returns the next word's and the next event's index."""
    w = words[i]
    out[j] = w & _CLEAR
    j += 1
    if i + 1 < len(words) and (words[i + 1] & _RECEIVER_MASK) == _RECEIVER:
        out[j] = words[i + 1]
        j += 1
        i += 1
    out[j] = (w & _CLEAR_ALL) + _BLOCK_FROM_START
    return i + 1, j + 1


def expand(words: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` events that ``words`` (uint32) stand for; :class:`ValueError` when they stand
    for another number (a damaged or forged chunk), checked before anything is allocated."""
    marked = _marked(words)
    if len(words) + marked != count:
        raise ValueError(f"{len(words)} words with {marked} implied first blocks are not the chunk's {count} events")
    out = np.empty(count, np.uint32)
    _expand(words, out)
    return out


# ---------------------------------------------------------------------------------- loop records
#
# A chunk with FILTER_LOOPS (format version 3) stores a tight loop's block events as one loop
# record when the loop is left: extended(EXT_LOOP, back << LOOP_STEPS_BITS | steps), the BLOCK word
# of the loop's header H, extended(EXT_LOOP, LOOP_CYCLE_FLAG | mask). The mask's bit k stands for
# block lo + k, lo = H - back, whose word is H's word - back + k (a method's block words are
# consecutive, across pages); the cycle is those blocks in ascending order, rotated to start at
# H, and the record stands for the steps events cycle[s mod len(cycle)], s = 0 .. steps - 1, in
# place of its words (docs/trace-format.md). A fourth word extended(EXT_LOOP_CALL,
# k << METHOD_BITS | id) right after the third belongs to the record: each of those events that is
# block lo + k (bit k of the mask set) is followed by the three events of a call of the static leaf
# method id, its start, its block 0 and its end. A fifth word extended(EXT_LOOP_CALL,
# LOOP_PATH_FLAG | path) right after the fourth (format version 4) gives each call the leaf's
# blocks j of the path's bits instead of block 0 alone, ascending, word start + BLOCK_FROM_START + j:
# 2 + popcount(path) events a call, bit 0 always set. Decoding expands records and, with
# FILTER_ENTRY_BLOCKS too, marked starts in the same pass; a chunk without FILTER_LOOPS takes
# expand() above, unchanged.

_EXT_MASK = _RECEIVER_MASK
_LOOP = layout.EXT_LOOP << layout.SUBTYPE_SHIFT
_LOOP_CALL = layout.EXT_LOOP_CALL << layout.SUBTYPE_SHIFT
_CYCLE_FLAG = layout.LOOP_CYCLE_FLAG
_PATH_FLAG = layout.LOOP_PATH_FLAG
_STEPS_BITS = layout.LOOP_STEPS_BITS
_STEPS_MASK = layout.LOOP_STEPS_MAX
_BACK_MASK = (layout.LOOP_CYCLE_FLAG >> layout.LOOP_STEPS_BITS) - 1   # bits 20..25 (and bit 26 clear)
_SPAN = layout.LOOP_SPAN_MAX
_SPAN_MASK = (1 << layout.LOOP_SPAN_MAX) - 1
_TYPE_SHIFT = layout.TYPE_SHIFT
_TYPE_BLOCK = layout.TYPE_BLOCK
_BLOCK_WORD_MASK = layout.BLOCK_WORD_MASK
_VALUE_MASK = layout.VALUE_MASK
_METHOD_BITS = layout.METHOD_BITS   # a call word's value: k << METHOD_BITS | the leaf's method id
_METHOD_MASK = layout.MAX_METHOD_ID
_METHOD_SHIFT = layout.METHOD_SHIFT
_START = layout.TYPE_METHOD_START << layout.TYPE_SHIFT
_END_FROM_START = layout.END_FROM_START

# What _count_loops found wrong (0: nothing), at word ``at``; or, when not counting calls, the
# first call or path word it met (_A_CALL, not a problem: counting goes on from there with calls).
(_CUT_OFF, _NO_STEPS, _BACK, _NOT_BLOCK, _NOT_CYCLE, _NO_HEADER, _STRAY_CYCLE, _BEFORE, _BEYOND,
 _CALL_SPAN, _CALL_OFF_CYCLE, _STRAY_CALL, _A_CALL, _STRAY_PATH, _PATH_NO_ENTRY) = range(1, 16)


@numba.njit(cache=True, nogil=True)
def _calls(steps, back, mask, k):
    """How many of a record's ``steps`` events are its block lo + k (bit k of ``mask`` set): the
    cycle starts at bit ``back`` and visits the mask's bits in ascending order, around."""
    length = 0
    at = 0   # k's position in the cycle: the set bits before it, from back on and around
    for b in range(_SPAN):
        if (mask >> b) & 1:
            length += 1
            if (back <= b < k) or (k < back and (b >= back or b < k)):
                at += 1
    calls = steps // length
    if steps % length > at:
        calls += 1
    return calls


@numba.njit(cache=True, nogil=True)
def _popcount(x):
    """How many bits of ``x`` are set."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@numba.njit(cache=True, nogil=True)
def _count_loops(words, entry, i, events, marked, records, calls):
    """(events, marked starts, records, problem, at): the events ``words[i:]`` stand for, added to
    those counted before them (``events``, ``marked``, ``records``), or the first problem (one of
    the codes above) and the word where it is. Without ``calls`` it stops at the first call word
    (_A_CALL), and the caller goes on from there with ``calls``: chunks without call words take
    the loop LLVM specialises for ``calls`` false, measured as fast as the scan before call words
    (one that counts calls as it goes was up to 40 % slower on words without records). A path
    word (a call word with LOOP_PATH_FLAG) stops it too, and is counted with the call word before
    it: met on its own, it is not fifth in a record. (With the path word's code in the ``calls``
    part, the scan of 60,000 words without records and ``entry`` false went from 0.035 to 0.042 ms,
    what it takes with ``entry`` true, before and after: any code added there did as much, and
    moving it into a function of its own made both 0.056 ms.)"""
    n = len(words)
    while i < n:
        w = words[i]
        ext = w & _EXT_MASK
        if ext == _LOOP:
            if w & _CYCLE_FLAG:
                return events, marked, records, _STRAY_CYCLE, i
            if i + 2 >= n:
                return events, marked, records, _CUT_OFF, i
            steps = w & _STEPS_MASK
            back = (w >> _STEPS_BITS) & _BACK_MASK
            if steps == 0:
                return events, marked, records, _NO_STEPS, i
            if back >= _SPAN:
                return events, marked, records, _BACK, i
            header = words[i + 1]
            if (header >> _TYPE_SHIFT) != _TYPE_BLOCK:
                return events, marked, records, _NOT_BLOCK, i
            cycle = words[i + 2]
            if (cycle & _EXT_MASK) != _LOOP or not (cycle & _CYCLE_FLAG):
                return events, marked, records, _NOT_CYCLE, i
            mask = cycle & _SPAN_MASK
            if not ((mask >> back) & 1):
                return events, marked, records, _NO_HEADER, i
            if (header & _BLOCK_WORD_MASK) < back:
                return events, marked, records, _BEFORE, i
            top = _SPAN - 1
            while not ((mask >> top) & 1):
                top -= 1
            if np.int64(header & _BLOCK_WORD_MASK) - back + top > _BLOCK_WORD_MASK:
                return events, marked, records, _BEYOND, i
            events += steps
            records += 1
            i += 3
            continue
        if entry and (w & _FLAG_MASK) == _FLAGGED:
            marked += 1
            events += 2
            i += 1
            continue
        if ext != _LOOP_CALL:
            events += 1
            i += 1
            continue
        if not calls:
            return events, marked, records, _A_CALL, i
        # A path word is counted with the call word before it, below: one the scan meets here
        # follows no call word of a record.
        if w & _PATH_FLAG:
            return events, marked, records, _STRAY_PATH, i
        # A call word is a record's fourth word when the word three before it is a steps word: no
        # other word this scan passes over is one (a record's second and third words, and the call
        # and path words, are of other types), so that steps word starts the record just before.
        if i < 3 or (words[i - 3] & (_EXT_MASK | _CYCLE_FLAG)) != _LOOP:
            return events, marked, records, _STRAY_CALL, i
        k = (w & _VALUE_MASK) >> _METHOD_BITS
        if k >= _SPAN:
            return events, marked, records, _CALL_SPAN, i - 3
        mask = words[i - 1] & _SPAN_MASK
        if not ((mask >> k) & 1):
            return events, marked, records, _CALL_OFF_CYCLE, i - 3
        first = words[i - 3]
        per = 3   # a call's events: its start, its block 0, its end
        i += 1
        if i < n and (words[i] & (_EXT_MASK | _PATH_FLAG)) == _LOOP_CALL | _PATH_FLAG:
            # The record's fifth word, its path: the flag and LOOP_SPAN_MAX bits fill its value.
            path = words[i] & _SPAN_MASK
            if not (path & 1):
                return events, marked, records, _PATH_NO_ENTRY, i - 4
            per = 2 + _popcount(path)
            i += 1
        events += per * _calls(first & _STEPS_MASK, (first >> _STEPS_BITS) & _BACK_MASK, mask, k)
    return events, marked, records, 0, n


@numba.njit(cache=True, nogil=True)
def _fill_cycle(lo, back, mask, cycle):
    """A record's cycle into ``cycle``: the blocks lo + k of the mask's bits k, ascending, rotated
    to start at the header (k == back); returns its length."""
    length = 0
    for k in range(back, _SPAN):
        if (mask >> k) & 1:
            cycle[length] = lo + k
            length += 1
    for k in range(back):
        if (mask >> k) & 1:
            cycle[length] = lo + k
            length += 1
    return length


@numba.njit(cache=True, nogil=True)
def _expand_calls(call, steps, lo, cycle, length, out, j):
    """Writes the ``steps`` events of a record's ``cycle`` from ``out[j]``, each of its block
    lo + k followed by the three events of a call of the leaf (``call``: the record's fourth word);
    returns where they end."""
    target = lo + ((call & _VALUE_MASK) >> _METHOD_BITS)
    start = np.int64(_START) | (np.int64(call & _METHOD_MASK) << _METHOD_SHIFT)
    c = 0
    for _ in range(steps):
        block = cycle[c]
        out[j] = block
        j += 1
        if block == target:
            out[j] = start
            out[j + 1] = start + _BLOCK_FROM_START
            out[j + 2] = start + _END_FROM_START
            j += 3
        c += 1
        if c == length:
            c = 0
    return j


@numba.njit(cache=True, nogil=True)
def _expand_path_calls(call, path, steps, lo, cycle, length, leaf, out, j):
    """As _expand_calls, for a record with a fifth word: each call of the leaf is its start, its
    blocks j of the bits of ``path``, ascending, and its end (``leaf``: room for them). Apart from
    _expand_calls, which stays small enough to be inlined: one function for both, choosing by the
    path, made records with calls and no path 40-80 % slower to expand (records of 4 steps)."""
    target = lo + ((call & _VALUE_MASK) >> _METHOD_BITS)
    start = np.int64(_START) | (np.int64(call & _METHOD_MASK) << _METHOD_SHIFT)
    leaf[0] = start
    per = 1
    for b in range(_SPAN):
        if (path >> b) & 1:
            leaf[per] = start + _BLOCK_FROM_START + b
            per += 1
    leaf[per] = start + _END_FROM_START
    per += 1
    c = 0
    for _ in range(steps):
        block = cycle[c]
        out[j] = block
        j += 1
        if block == target:
            for e in range(per):
                out[j + e] = leaf[e]
            j += per
        c += 1
        if c == length:
            c = 0
    return j


@numba.njit(cache=True, nogil=True)
def _expand_loops(words, out, entry):
    """Writes the events of ``words`` (checked by _count_loops) to ``out``; returns how many."""
    cycle = np.empty(_SPAN, np.int64)
    leaf = np.empty(_SPAN + 2, np.int64)
    n = len(words)
    j = 0
    i = 0
    while i < n:
        w = words[i]
        if (w & _EXT_MASK) == _LOOP:
            steps = w & _STEPS_MASK
            back = (w >> _STEPS_BITS) & _BACK_MASK
            lo = np.int64(words[i + 1]) - back
            length = _fill_cycle(lo, back, words[i + 2] & _SPAN_MASK, cycle)
            if i + 3 < n and (words[i + 3] & _EXT_MASK) == _LOOP_CALL:
                if i + 4 < n and (words[i + 4] & (_EXT_MASK | _PATH_FLAG)) == _LOOP_CALL | _PATH_FLAG:
                    j = _expand_path_calls(words[i + 3], words[i + 4] & _SPAN_MASK, steps, lo, cycle, length,
                                           leaf, out, j)
                    i += 5
                    continue
                j = _expand_calls(words[i + 3], steps, lo, cycle, length, out, j)
                i += 4
                continue
            c = 0
            for _ in range(steps):
                out[j] = cycle[c]
                j += 1
                c += 1
                if c == length:
                    c = 0
            i += 3
            continue
        if not entry or (w & _FLAG_MASK) != _FLAGGED:
            out[j] = w
            j += 1
            i += 1
            continue
        i, j = _write_marked(words, i, out, j)
    return j


_PROBLEMS = {
    _CUT_OFF: "a loop record at word {at} is cut off by the end of the chunk ({n} words)",
    _NO_STEPS: "the loop record at word {at} has 0 steps",
    _BACK: "the loop record at word {at} puts its header {back} blocks above the lowest of its span, which has "
           f"{layout.LOOP_SPAN_MAX} blocks",
    _NOT_BLOCK: "the loop record at word {at} has word 0x{next:08x} where its header's BLOCK word belongs",
    _NOT_CYCLE: "the loop record at word {at} has word 0x{third:08x} where its cycle word (EXT_LOOP with "
                "LOOP_CYCLE_FLAG) belongs",
    _NO_HEADER: "the loop record at word {at} has a cycle without its header (mask 0x{mask:07x}, header bit {back})",
    _STRAY_CYCLE: "word {at} is a loop record's cycle word, not third in a record",
    _BEFORE: "the loop record at word {at} reaches {back} blocks below its header 0x{next:08x}, before its "
             "method's first block",
    _BEYOND: "the loop record at word {at} reaches beyond the last block word (header 0x{next:08x}, "
             "mask 0x{mask:07x})",
    _CALL_SPAN: "the loop record at word {at} has a call word 0x{fourth:08x} for block {call} of its span, which has "
                f"{layout.LOOP_SPAN_MAX} blocks",
    _CALL_OFF_CYCLE: "the loop record at word {at} has a call word 0x{fourth:08x} for block {call} of its span, "
                     "which is not on its cycle (mask 0x{mask:07x})",
    _STRAY_CALL: "word {at} is a loop record's call word (EXT_LOOP_CALL), not fourth in a record",
    _STRAY_PATH: "word {at} is a loop record's path word (EXT_LOOP_CALL with LOOP_PATH_FLAG), not fifth in a "
                 "record after its call word",
    _PATH_NO_ENTRY: "the loop record at word {at} has a path word 0x{fifth:08x} without its leaf's block 0 "
                    "(path 0x{path:07x})",
}


def expand_loops(words: np.ndarray, count: int, entry: bool) -> np.ndarray:
    """The ``count`` events that ``words`` (uint32, with loop records, some with a leaf's call
    word and some of those with its path word; with marked starts too when ``entry``) stand for;
    :class:`ValueError` when a record is malformed or they stand for another number of events (a
    damaged or forged chunk), checked before anything is allocated."""
    entry = bool(entry)
    events, marked, records, problem, at = _count_loops(words, entry, 0, 0, 0, 0, False)
    if problem == _A_CALL:
        events, marked, records, problem, at = _count_loops(words, entry, at, events, marked, records, True)
    if problem:
        n = len(words)
        word = lambda k: int(words[k]) if k < n else 0  # noqa: E731
        raise ValueError(_PROBLEMS[problem].format(
            at=at, n=n, back=(word(at) >> layout.LOOP_STEPS_BITS) & _BACK_MASK, next=word(at + 1), third=word(at + 2),
            mask=word(at + 2) & _SPAN_MASK, fourth=word(at + 3),
            call=(word(at + 3) & layout.VALUE_MASK) >> _METHOD_BITS, fifth=word(at + 4),
            path=word(at + 4) & _SPAN_MASK))
    if events != count:
        implied = f" and {marked} implied first blocks" if entry else ""
        raise ValueError(f"{len(words)} words with {records} loop records{implied} stand for {events} events, "
                         f"not the chunk's {count}")
    out = np.empty(count, np.uint32)
    _expand_loops(words, out, entry)
    return out
