"""Decoding chunks whose loop records stand for the block events of a loop's steps (FILTER_LOOPS,
format version 3), for the calls of a static leaf in them (a record's fourth word, EXT_LOOP_CALL),
and for the leaf's blocks each call runs (its fifth word, EXT_LOOP_CALL with LOOP_PATH_FLAG, format
version 4).

Hand-written payloads (kernel unit tests and malformed input), and random well-formed records
against a plain-Python expansion of docs/trace-format.md's rule.
"""

from __future__ import annotations

import struct
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
import zstandard

from jbgui.model import layout
from jbgui.model.format.chunks import MAX_CHUNK_EVENTS, Status, StreamReader, decode_payload

LOOPS = layout.FILTER_LOOPS
ENTRY = layout.FILTER_ENTRY_BLOCKS
PLANES = layout.FILTER_BYTE_PLANES
MARK = layout.START_ENTRY_IMPLIED
START5, END5, START6 = layout.method_start(5), layout.method_end(5), layout.method_start(6)
RECEIVER7 = layout.extended(layout.EXT_RECEIVER, 7)
H = layout.block(5, 10)   # a loop header in the middle of method 5's blocks


def steps_word(steps: int, back: int) -> int:
    return layout.extended(layout.EXT_LOOP, (back << layout.LOOP_STEPS_BITS) | steps)


def cycle_word(*bits: int) -> int:
    return layout.extended(layout.EXT_LOOP, layout.LOOP_CYCLE_FLAG | sum(1 << k for k in bits))


def call_word(k: int, leaf: int) -> int:
    return layout.extended(layout.EXT_LOOP_CALL, (k << layout.METHOD_BITS) | leaf)


def path_word(*blocks: int) -> int:
    return layout.extended(layout.EXT_LOOP_CALL, layout.LOOP_PATH_FLAG | sum(1 << j for j in blocks))


def record(header: int, steps: int, back: int, *bits: int, call: tuple[int, int] | None = None,
           path: tuple[int, ...] | None = None) -> list[int]:
    """A loop record; ``call=(k, leaf)``: with a fourth word, block lo + k calling method ``leaf``;
    ``path``: with a fifth word, each call running the leaf's blocks of those indices."""
    return ([steps_word(steps, back), header, cycle_word(*bits)] + ([call_word(*call)] if call else [])
            + ([path_word(*path)] if path is not None else []))


def leaf(method: int, *path: int) -> list[int]:
    """The events of a call of a static leaf: its start, its blocks of ``path`` (block 0 alone
    without one), its end."""
    return [layout.method_start(method), *(layout.block(method, j) for j in path or (0,)), layout.method_end(method)]


def planes(words: list[int]) -> bytes:
    """Byte k of every word, then byte k + 1 (filter FILTER_BYTE_PLANES, as the recorder writes it)."""
    return np.asarray(words, "<u4").view(np.uint8).reshape(len(words), 4).T.copy().tobytes()


def decode(words: list[int], count: int, filt: int = LOOPS) -> list[int]:
    return decode_payload(np.asarray(words, "<u4").tobytes(), layout.CODEC_NONE, filt, count).tolist()


def reference(words: list[int], entry: bool) -> list[int]:
    """The events ``words`` stand for, by the rule in docs/trace-format.md, one word at a time."""
    out: list[int] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w >> layout.SUBTYPE_SHIFT == layout.EXT_LOOP:   # type 0, subtype EXT_LOOP
            value, header, mask = w & layout.VALUE_MASK, words[i + 1], words[i + 2] & ((1 << layout.LOOP_SPAN_MAX) - 1)
            steps, back = value & layout.LOOP_STEPS_MAX, value >> layout.LOOP_STEPS_BITS
            lo = header - back
            blocks = [lo + k for k in range(layout.LOOP_SPAN_MAX) if mask >> k & 1]
            at = blocks.index(header)
            cycle = blocks[at:] + blocks[:at]
            calls: dict[int, list[int]] = {}
            if i + 3 < len(words) and words[i + 3] >> layout.SUBTYPE_SHIFT == layout.EXT_LOOP_CALL:
                value = words[i + 3] & layout.VALUE_MASK
                method = value & layout.MAX_METHOD_ID
                path = 1   # without a fifth word: block 0 alone
                if i + 4 < len(words) and words[i + 4] >> layout.SUBTYPE_SHIFT == layout.EXT_LOOP_CALL \
                        and words[i + 4] & layout.LOOP_PATH_FLAG:
                    path = words[i + 4] & ((1 << layout.LOOP_SPAN_MAX) - 1)
                    i += 1
                start = layout.method_start(method)
                calls[lo + (value >> layout.METHOD_BITS)] = [
                    start, *(start + layout.BLOCK_FROM_START + j for j in range(layout.LOOP_SPAN_MAX) if path >> j & 1),
                    layout.method_end(method)]
                i += 1
            for s in range(steps):
                out.append(cycle[s % len(cycle)])
                out += calls.get(cycle[s % len(cycle)], [])
            i += 3
        elif entry and w >> layout.TYPE_SHIFT == layout.TYPE_METHOD_START and w & MARK:
            out.append(w & ~MARK)
            if i + 1 < len(words) and words[i + 1] >> layout.SUBTYPE_SHIFT == layout.EXT_RECEIVER:
                i += 1
                out.append(words[i])
            out.append((w & ~(MARK | layout.START_RECEIVER_OWN)) + layout.BLOCK_FROM_START)
            i += 1
        else:
            out.append(w)
            i += 1
    return out


# ------------------------------------------------------------------------------- the constants

def test_the_record_s_fields_fit_their_words():
    assert (layout.FORMAT_VERSION, layout.READABLE_FORMAT_VERSIONS) == (4, (1, 2, 3, 4))
    assert layout.FILTER_LOOPS & (layout.FILTER_BYTE_PLANES | layout.FILTER_ENTRY_BLOCKS) == 0
    assert layout.EXT_LOOP == 5 and layout.EXT_LOOP <= layout.SUBTYPE_MASK
    # steps (bits 0-19), back (bits 20-25), the cycle flag (bit 26), all inside the 27-bit value
    assert layout.LOOP_STEPS_MAX == (1 << 20) - 1 and layout.LOOP_CYCLE_FLAG == 1 << 26
    assert ((layout.LOOP_SPAN_MAX - 1) << layout.LOOP_STEPS_BITS | layout.LOOP_STEPS_MAX) < layout.LOOP_CYCLE_FLAG
    assert (1 << layout.LOOP_SPAN_MAX) - 1 < layout.LOOP_CYCLE_FLAG <= layout.VALUE_MASK
    assert steps_word(7, 1) == (5 << 27) | (1 << 20) | 7
    assert cycle_word(0, 1, 3) == (5 << 27) | (1 << 26) | 0b1011
    # the fourth word: the call's block k (bits 19-23) and the leaf's method id (bits 0-18)
    assert layout.EXT_LOOP_CALL == 6 and layout.EXT_LOOP_CALL <= layout.SUBTYPE_MASK
    assert layout.METHOD_BITS == 19 and (layout.LOOP_SPAN_MAX - 1) < 1 << 5
    assert ((layout.LOOP_SPAN_MAX - 1) << layout.METHOD_BITS | layout.MAX_METHOD_ID) < 1 << 24
    assert call_word(3, 9) == (6 << 27) | (3 << 19) | 9
    assert leaf(9) == [layout.method_start(9), layout.method_start(9) + layout.BLOCK_FROM_START, layout.method_end(9)]
    assert leaf(9) == [0x40000000 | 9 << 11, 0xC0000000 | 9 << 11, 0x80000000 | 9 << 11]
    # the fifth word: the flag (bit 26), above every call word's value, and a path of 26 bits below it
    assert layout.LOOP_PATH_FLAG == 1 << 26 and call_word(layout.LOOP_SPAN_MAX - 1, layout.MAX_METHOD_ID) \
        & layout.VALUE_MASK < layout.LOOP_PATH_FLAG
    assert (1 << layout.LOOP_SPAN_MAX) - 1 < layout.LOOP_PATH_FLAG <= layout.VALUE_MASK
    assert (layout.LOOP_PATH_FLAG | (1 << layout.LOOP_SPAN_MAX) - 1) == layout.VALUE_MASK   # no bit left over
    assert path_word(0, 2) == (6 << 27) | (1 << 26) | 0b101
    assert leaf(9, 0, 2, 3) == [layout.method_start(9)] + [layout.method_start(9) + layout.BLOCK_FROM_START + j
                                                           for j in (0, 2, 3)] + [layout.method_end(9)]


# ------------------------------------------------------------------------------- expansion

def test_the_example_of_the_format_document():
    # bits {0, 1, 3}, back 1: blocks lo+1 (= H), lo+3, lo+0
    words = [START5, *record(H, 7, 1, 0, 1, 3), END5]
    cycle = [H, H + 2, H - 1]
    assert decode(words, 9) == [START5, *cycle, *cycle, H, END5]


def test_a_cycle_of_one_block():
    assert decode(record(H, 5, 0, 0), 5) == [H] * 5
    # the header may sit anywhere in the span, here at its top
    assert decode(record(H, 3, 25, 25), 3) == [H] * 3


def test_a_cycle_of_two_blocks_with_the_header_in_the_middle_of_the_span():
    # bits {1, 3}, back 3: H = lo + 3, then around to lo + 1 = H - 2
    assert decode(record(H, 5, 3, 1, 3), 5) == [H, H - 2, H, H - 2, H]


def test_a_longer_cycle_that_stops_in_its_middle():
    # bits {0, 2, 4, 7}, back 2: H = lo + 2, lo + 4, lo + 7, then lo + 0
    cycle = [H, H + 2, H + 5, H - 2]
    assert decode(record(H, 6, 2, 0, 2, 4, 7), 6) == cycle + cycle[:2]
    assert decode(record(H, 4, 2, 0, 2, 4, 7), 4) == cycle
    every = list(range(layout.LOOP_SPAN_MAX))
    assert decode(record(H, 30, 13, *every), 30) == [H - 13 + (13 + s) % 26 for s in range(30)]


def test_one_step_stands_for_one_event_in_three_words():
    # five words, three events: the payload is longer than its events
    assert decode([START5, *record(H, 1, 2, 0, 2, 5), END5], 3) == [START5, H, END5]


def test_the_cycle_s_blocks_continue_across_block_pages():
    last, first = layout.block(5, layout.BLOCKS_PER_PAGE - 1), layout.block(6, 0)
    assert last + 1 == first
    assert decode(record(last, 4, 0, 0, 1), 4) == [last, first, last, first]
    assert decode(record(first, 3, 1, 0, 1), 3) == [first, last, first]


def test_records_at_the_chunk_s_start_and_end_and_side_by_side():
    G = layout.block(9, 3)
    words = [*record(H, 2, 0, 0, 1), *record(G, 3, 1, 0, 1), layout.block(9, 7), *record(G, 1, 0, 0)]
    assert decode(words, 7) == [H, H + 1, G, G - 1, G, layout.block(9, 7), G]


def test_a_record_next_to_marked_starts():
    words = [START5 | MARK, RECEIVER7, *record(H, 3, 0, 0, 2),
             START6 | MARK, *record(layout.block(6, 4), 2, 1, 0, 1), START6 | MARK, END5]
    assert decode(words, 13, LOOPS | ENTRY) == [
        START5, RECEIVER7, layout.block(5, 0), H, H + 2, H,
        START6, layout.block(6, 0), layout.block(6, 4), layout.block(6, 3),
        START6, layout.block(6, 0), END5]
    # without FILTER_ENTRY_BLOCKS the marks are left alone: one event per word
    assert decode(words, 10, LOOPS) == [START5 | MARK, RECEIVER7, H, H + 2, H, START6 | MARK,
                                        layout.block(6, 4), layout.block(6, 3), START6 | MARK, END5]


# ------------------------------------------------------------------------------- calls of a leaf

LEAF = 9
CALL = leaf(LEAF)


def test_a_call_in_the_header_block():
    # cycle [H, H + 2, H - 1] (bits {0, 1, 3}, back 1); the header, bit 1, calls the leaf
    cycle = [H, H + 2, H - 1]
    assert decode(record(H, 5, 1, 0, 1, 3, call=(1, LEAF)), 5 + 2 * 3) == [H, *CALL, H + 2, H - 1, H, *CALL, H + 2]
    assert decode(record(H, 1, 1, 0, 1, 3, call=(1, LEAF)), 4) == [H, *CALL]
    assert decode(record(H, 6, 1, 0, 1, 3, call=(1, LEAF)), 12) == [H, *CALL, *cycle[1:], H, *CALL, *cycle[1:]]


def test_a_call_in_a_block_after_the_header():
    # bit 3, H + 2, the cycle's second block
    assert decode(record(H, 5, 1, 0, 1, 3, call=(3, LEAF)), 11) == [H, H + 2, *CALL, H - 1, H, H + 2, *CALL]
    # the steps end right before the call's block, then right after it
    assert decode(record(H, 4, 1, 0, 1, 3, call=(3, LEAF)), 7) == [H, H + 2, *CALL, H - 1, H]
    assert decode(record(H, 1, 1, 0, 1, 3, call=(3, LEAF)), 1) == [H]
    assert decode(record(H, 2, 1, 0, 1, 3, call=(3, LEAF)), 5) == [H, H + 2, *CALL]


def test_a_call_in_a_block_before_the_header_in_code_order():
    # k < back: bit 0, H - 1, the cycle's last block, after the header and H + 2
    assert decode(record(H, 5, 1, 0, 1, 3, call=(0, LEAF)), 8) == [H, H + 2, H - 1, *CALL, H, H + 2]
    # the steps end right before the call's block (no call at all), then right after it
    assert decode(record(H, 2, 1, 0, 1, 3, call=(0, LEAF)), 2) == [H, H + 2]
    assert decode(record(H, 3, 1, 0, 1, 3, call=(0, LEAF)), 6) == [H, H + 2, H - 1, *CALL]
    assert decode(record(H, 6, 1, 0, 1, 3, call=(0, LEAF)), 12) == [H, H + 2, H - 1, *CALL] * 2
    # the header at the top of the span, the call at its bottom
    assert decode(record(H, 3, 25, 0, 25, call=(0, LEAF)), 6) == [H, H - 25, *CALL, H]


def test_a_call_in_a_cycle_of_one_block():
    assert decode(record(H, 3, 0, 0, call=(0, LEAF)), 12) == [H, *CALL] * 3


def test_the_leaf_s_words_take_its_id_alone():
    # any method id, the largest included; the call word's block bits never reach the leaf's words
    top = layout.MAX_METHOD_ID
    assert decode(record(H, 2, 0, 0, 25, call=(25, top)), 5) == [H, H + 25, *leaf(top)]
    assert decode(record(H, 1, 0, 0, call=(0, 1)), 4) == [H, *leaf(1)]


def test_records_with_calls_amid_records_without_and_marked_starts():
    G = layout.block(9, 3)
    words = [START5 | MARK, RECEIVER7, *record(H, 3, 0, 0, 2, call=(2, LEAF)),
             *record(G, 3, 1, 0, 1), START6 | MARK, *record(G, 2, 0, 0, call=(0, 7)),
             *record(H, 2, 0, 0, 2), END5, *record(H, 1, 0, 0, 2, call=(0, LEAF))]
    want = [START5, RECEIVER7, layout.block(5, 0), H, H + 2, *CALL, H,
            G, G - 1, G, START6, layout.block(6, 0), G, *leaf(7), G, *leaf(7),
            H, H + 2, END5, H, *CALL]
    assert decode(words, len(want), LOOPS | ENTRY) == want == reference(words, entry=True)
    # without FILTER_ENTRY_BLOCKS the marks are left alone, the calls expanded all the same
    plain = reference(words, entry=False)
    assert decode(words, len(plain), LOOPS) == plain and plain[:3] == [START5 | MARK, RECEIVER7, H]
    assert plain.count(layout.method_start(LEAF)) == 2 and plain.count(layout.method_start(7)) == 2
    # counted across the first call word: 5 records, 2 marked starts (one before it, one after)
    with pytest.raises(ValueError, match=rf"22 words with 5 loop records and 2 implied first blocks stand for "
                                         rf"{len(want)} events, not the chunk's {len(want) + 1}"):
        decode(words, len(want) + 1, LOOPS | ENTRY)


def test_a_call_word_is_expanded_only_in_chunks_with_the_filter_bit():
    words = [START5, *record(H, 5, 0, 0, call=(0, LEAF)), END5]
    assert decode(words, 6, layout.FILTER_NONE) == words


def test_records_are_expanded_only_in_chunks_with_the_filter_bit():
    words = [START5, *record(H, 5, 0, 0), END5]
    assert decode(words, 5, layout.FILTER_NONE) == words
    assert decode([START5 | MARK, *record(H, 5, 0, 0)], 5, ENTRY) == [START5, layout.block(5, 0), *record(H, 5, 0, 0)]
    with pytest.raises(ValueError, match="implied first blocks are not the chunk's"):
        decode([START5 | MARK, *record(H, 5, 0, 0)], 6, ENTRY)


# ------------------------------------------------------------------------------- the leaf's path

def test_a_call_with_a_path_runs_the_path_s_blocks_in_ascending_order():
    # cycle [H, H + 2, H - 1] (bits {0, 1, 3}, back 1); the header calls the leaf, whose calls run
    # its blocks 0, 2 and 3: five events a call
    path = leaf(LEAF, 0, 2, 3)
    assert path == [layout.method_start(LEAF), layout.block(LEAF, 0), layout.block(LEAF, 2), layout.block(LEAF, 3),
                    layout.method_end(LEAF)]
    words = record(H, 5, 1, 0, 1, 3, call=(1, LEAF), path=(0, 2, 3))
    want = [H, *path, H + 2, H - 1, H, *path, H + 2]
    assert decode(words, 5 + 2 * 5) == want == reference(words, entry=False)
    assert decode(record(H, 1, 1, 0, 1, 3, call=(1, LEAF), path=(0, 3)), 5) == [H, *leaf(LEAF, 0, 3)]


@pytest.mark.parametrize("path", [(0,), (0, 1), (0, 2), (0, 1, 2, 3), (0, 5, 17), (0, 25), tuple(range(26))])
def test_paths_of_every_length(path):
    # two calls in five steps of the cycle [H, H + 2, H - 1]; each call 2 + len(path) events
    words = [START5, *record(H, 5, 1, 0, 1, 3, call=(3, LEAF), path=path), END5]
    call = leaf(LEAF, *path)
    assert len(call) == 2 + len(path)
    want = [START5, H, H + 2, *call, H - 1, H, H + 2, *call, END5]
    assert decode(words, 7 + 2 * len(call)) == want == reference(words, entry=False)
    with pytest.raises(ValueError, match=rf"7 words with 1 loop records stand for {len(want)} events, not the chunk's "
                                         rf"{len(want) - 1}"):
        decode(words, len(want) - 1)
    with pytest.raises(ValueError, match=rf"stand for {len(want)} events, not the chunk's {len(want) + 1}"):
        decode(words, len(want) + 1)


def test_a_path_of_block_0_alone_is_the_call_without_a_path():
    for k, steps in ((0, 3), (1, 5), (3, 7)):
        four = record(H, steps, 1, 0, 1, 3, call=(k, LEAF))
        five = record(H, steps, 1, 0, 1, 3, call=(k, LEAF), path=(0,))
        want = reference(four, entry=False)
        assert reference(five, entry=False) == want
        assert decode(five, len(want)) == decode(four, len(want)) == want


def test_a_path_on_a_call_off_the_cycle_s_first_block():
    # the header H = lo + 2 first; the call in lo + 7 (H + 5, third on the cycle) and in lo + 0
    # (H - 2, last on it, before the header in code order)
    cycle = [H, H + 2, H + 5, H - 2]
    path = (0, 1, 4)
    call = leaf(LEAF, *path)
    words = record(H, 6, 2, 0, 2, 4, 7, call=(7, LEAF), path=path)
    assert decode(words, 6 + len(call)) == [H, H + 2, H + 5, *call, H - 2, H, H + 2] == reference(words, False)
    words = record(H, 9, 2, 0, 2, 4, 7, call=(0, LEAF), path=path)
    want = [*cycle, *call, *cycle, *call, H]
    assert decode(words, len(want)) == want == reference(words, False)
    # the steps end right before the call's block: no call at all
    assert decode(record(H, 3, 2, 0, 2, 4, 7, call=(0, LEAF), path=path), 3) == cycle[:3]
    # a cycle across block pages, the header on one page and the call on the next
    last, first = layout.block(5, layout.BLOCKS_PER_PAGE - 1), layout.block(6, 0)
    assert decode(record(last, 4, 0, 0, 1, call=(1, LEAF), path=(0, 1)), 12) == [last, first, *leaf(LEAF, 0, 1)] * 2


def test_a_path_s_words_take_the_leaf_s_id_alone():
    top = layout.MAX_METHOD_ID
    every = tuple(range(layout.LOOP_SPAN_MAX))
    out = decode(record(H, 1, 0, 0, call=(0, top), path=every), 1 + 28)
    assert out == [H, *leaf(top, *every)] and out[-2] == layout.block(top, 25)
    assert decode(record(H, 1, 0, 0, call=(0, 1), path=(0, 25)), 5) == [H, *leaf(1, 0, 25)]


def test_records_with_paths_amid_records_with_calls_and_without_and_marked_starts():
    G = layout.block(9, 3)
    words = [START5 | MARK, RECEIVER7, *record(H, 3, 0, 0, 2, call=(2, LEAF), path=(0, 1, 3)),
             *record(G, 3, 1, 0, 1, call=(0, 7)), START6 | MARK, *record(G, 2, 0, 0, call=(0, 7), path=(0,)),
             *record(H, 2, 0, 0, 2), END5, *record(H, 5, 0, 0, 1, 2, call=(1, LEAF), path=(0, 4)),
             *record(G, 1, 0, 0, call=(0, 8)), *record(H, 1, 0, 0, call=(0, 8), path=(0, 2))]
    want = [START5, RECEIVER7, layout.block(5, 0), H, H + 2, *leaf(LEAF, 0, 1, 3), H,
            G, G - 1, *leaf(7), G, START6, layout.block(6, 0), G, *leaf(7), G, *leaf(7),
            H, H + 2, END5, H, H + 1, *leaf(LEAF, 0, 4), H + 2, H, H + 1, *leaf(LEAF, 0, 4),
            G, *leaf(8), H, *leaf(8, 0, 2)]
    assert decode(words, len(want), LOOPS | ENTRY) == want == reference(words, entry=True)
    plain = reference(words, entry=False)
    assert decode(words, len(plain), LOOPS) == plain and plain[:3] == [START5 | MARK, RECEIVER7, H]
    # counted across the first call word: 7 records, 2 marked starts (one before it, one after)
    with pytest.raises(ValueError, match=rf"{len(words)} words with 7 loop records and 2 implied first blocks stand "
                                         rf"for {len(want)} events, not the chunk's {len(want) - 1}"):
        decode(words, len(want) - 1, LOOPS | ENTRY)


def test_a_path_word_is_expanded_only_in_chunks_with_the_filter_bit():
    words = [START5, *record(H, 5, 0, 0, call=(0, LEAF), path=(0, 1)), END5]
    assert decode(words, 7, layout.FILTER_NONE) == words


def test_a_path_word_met_as_an_event_is_named_with_its_blocks():
    from jbgui.cli.dump import _Formatter
    from jbgui.model.check import _word_text, loop_word_fields

    assert loop_word_fields(path_word(0, 2, 25)) == "path=0x2000005 blocks=0,2,25"
    assert loop_word_fields(path_word()) == "path=0x0000000 blocks=-"
    assert loop_word_fields(call_word(3, 9)) == "value=0x0180009"   # a call word, as before
    assert loop_word_fields(cycle_word(0, 1)) == "value=0x4000003"
    assert _word_text(path_word(0, 3), None) == "LOOP_CALL path=0x0000009 blocks=0,3"
    dump = _Formatter(None, {})
    assert dump.describe(path_word(0, 1), layout.TYPE_EXTENDED) == "LOOP_CALL\tpath=0x0000003 blocks=0,1"
    assert dump.describe(call_word(1, 9), layout.TYPE_EXTENDED) == "LOOP_CALL\tvalue=0x0080009"


@pytest.mark.parametrize("filt", [LOOPS, LOOPS | PLANES, LOOPS | ENTRY | PLANES])
@pytest.mark.parametrize("codec", [layout.CODEC_NONE, layout.CODEC_ZLIB, layout.CODEC_ZSTD])
def test_codecs_and_byte_planes_through_decode_payload(filt, codec):
    words = [START5 | MARK, RECEIVER7, *record(H, 9, 1, 0, 1, 3), END5, *record(H, 1, 0, 0),
             *record(H, 7, 1, 0, 1, 3, call=(3, LEAF)), *record(H, 7, 1, 0, 1, 3, call=(0, LEAF), path=(0, 2))]
    raw = planes(words) if filt & PLANES else np.asarray(words, "<u4").tobytes()
    payload = {layout.CODEC_NONE: raw, layout.CODEC_ZLIB: zlib.compress(raw),
               layout.CODEC_ZSTD: zstandard.ZstdCompressor(level=1).compress(raw)}[codec]
    want = reference(words, entry=bool(filt & ENTRY))
    out = decode_payload(payload, codec, filt, len(want))
    assert out.dtype == np.uint32 and out.tolist() == want
    assert want[:3] == ([START5, RECEIVER7, layout.block(5, 0)] if filt & ENTRY else [START5 | MARK, RECEIVER7, H])


def test_a_payload_of_more_words_than_events_is_plausible_in_a_stream(tmp_path: Path):
    # 3 records of one step each: 36 bytes for 3 events, beyond the 4 bytes an event takes without records
    words = record(H, 1, 0, 0) * 3
    payload = np.asarray(words, "<u4").tobytes()
    head = struct.pack("<4sHHIIqQ", layout.STREAM_MAGIC, layout.FORMAT_VERSION, 32, 0, 1, 0, 0)

    def walk(filt: int):
        chunk = struct.pack("<4sBBHIIQII", layout.CHUNK_MAGIC, layout.CODEC_NONE, filt, 0, 3, len(payload), 0,
                            zlib.crc32(payload), 0)
        path = tmp_path / "T000001.jbt"
        path.write_bytes(head + chunk + payload)
        with StreamReader(path) as reader:
            return list(reader.chunks())

    [ok] = walk(LOOPS)
    assert ok.status is Status.OK and ok.words.tolist() == [H, H, H]
    [refused] = walk(layout.FILTER_NONE)
    assert refused.status is Status.IMPLAUSIBLE and refused.code == "chunk-size"


@pytest.mark.parametrize("codec", [layout.CODEC_NONE, layout.CODEC_ZLIB])
def test_five_words_an_event_are_plausible_in_a_stream_and_more_are_not(tmp_path: Path, codec):
    # records of one step whose block is not the call's: five words, 20 bytes, for each event
    head = struct.pack("<4sHHIIqQ", layout.STREAM_MAGIC, layout.FORMAT_VERSION, 32, 0, 1, 0, 0)

    def walk(words: list[int], count: int, pad: int = 0):
        raw = np.asarray(words, "<u4").tobytes()
        payload = zlib.compress(raw) if codec == layout.CODEC_ZLIB else raw
        payload += bytes(pad)   # beyond what the header may claim, whatever the codec
        chunk = struct.pack("<4sBBHIIQII", layout.CHUNK_MAGIC, codec, LOOPS, 0, count, len(payload), 0,
                            zlib.crc32(payload), 0)
        path = tmp_path / "T000001.jbt"
        path.write_bytes(head + chunk + payload)
        with StreamReader(path) as reader:
            return list(reader.chunks())

    words = record(H, 1, 0, 0, 1, call=(1, LEAF), path=(0, 1)) * 3
    [ok] = walk(words, 3)
    assert ok.status is Status.OK and ok.words.tolist() == [H, H, H]
    if codec == layout.CODEC_NONE:
        [refused] = walk(words, 3, pad=4)
        assert refused.status is Status.IMPLAUSIBLE and refused.code == "chunk-size"
        assert "64 bytes for 3 events" in refused.message


# ------------------------------------------------------------------------------- malformed input

MALFORMED = {
    "cut off, one word": ([START5, steps_word(3, 0)], "cut off by the end of the chunk"),
    "cut off, two words": ([steps_word(3, 0), H], "cut off by the end of the chunk"),
    "0 steps": (record(H, 0, 0, 0), "has 0 steps"),
    "back 26": (record(H, 3, 26, 0), "26 blocks above the lowest of its span"),
    "back 63": (record(H, 3, 63, 0), "63 blocks above"),
    "a start for the header": ([steps_word(3, 0), START5, cycle_word(0)], "where its header's BLOCK word belongs"),
    "an end for the header": ([steps_word(3, 0), END5, cycle_word(0)], "where its header's BLOCK word belongs"),
    "no cycle word": ([steps_word(3, 0), H, RECEIVER7], "where its cycle word"),
    "a steps word for the cycle": ([steps_word(3, 0), H, steps_word(3, 0)], "where its cycle word"),
    "a cycle without its header": (record(H, 3, 2, 0, 1, 3), "cycle without its header"),
    "a stray cycle word first": ([cycle_word(0), H, START5], "word 0 is a loop record's cycle word"),
    "a stray cycle word after a record": ([*record(H, 2, 0, 0), cycle_word(0)], "word 3 is a loop record's cycle"),
    "a cycle word for the header": ([steps_word(3, 0), cycle_word(0), cycle_word(0)], "header's BLOCK word"),
    "before the method's blocks": (record(layout.block(0, 1), 3, 2, 2), "before its method's first block"),
    "beyond the last block word": (record(layout.block(layout.MAX_METHOD_ID, layout.BLOCKS_PER_PAGE - 1), 3, 0, 0, 1),
                                   "beyond the last block word"),
    # the fourth word
    "a call off the cycle": (record(H, 3, 1, 0, 1, 3, call=(2, LEAF)), r"call word 0x30100009 for block 2 of its "
                             r"span, which is not on its cycle \(mask 0x000000b\)"),
    "a call beyond the mask's top": (record(H, 3, 0, 0, 1, call=(25, LEAF)), "block 25 of its span, which is not on"),
    "a call of block 26": (record(H, 3, 0, *range(26), call=(26, LEAF)), "for block 26 of its span, which has 26 blocks"),
    "a call of block 31": (record(H, 3, 0, 0, call=(31, LEAF)), "for block 31 of its span, which has 26 blocks"),
    "a call word with bit 24": (record(H, 3, 0, 0, call=(32, LEAF)), "for block 32 of its span, which has 26"),
    # bit 26 is LOOP_PATH_FLAG (format version 4): such a word is a path word, here fourth
    "a call word with bit 26": (record(H, 3, 0, 0, call=(128, LEAF)), "word 3 is a loop record's path word"),
    "a stray call word first": ([call_word(0, LEAF), H, START5], "word 0 is a loop record's call word"),
    "a stray call word after a block": ([H, call_word(0, LEAF)], "word 1 is a loop record's call word"),
    "a second call word": ([*record(H, 2, 0, 0, call=(0, LEAF)), call_word(0, LEAF)], "word 4 is a loop record's call"),
    "a call word after a word after a record": ([*record(H, 2, 0, 0), END5, call_word(0, LEAF)],
                                                "word 4 is a loop record's call word"),
    "a call word for the header": ([steps_word(3, 0), call_word(0, LEAF), cycle_word(0)], "header's BLOCK word"),
    "a call word for the cycle": ([steps_word(3, 0), H, call_word(0, LEAF), cycle_word(0)], "where its cycle word"),
    "a steps word after a cycle word, then a call": ([*record(H, 2, 0, 0), steps_word(3, 0), call_word(0, LEAF)],
                                                     "cut off by the end of the chunk"),
    # after a record with a call, whatever is wrong is found all the same
    "0 steps after a call": ([*record(H, 2, 0, 0, call=(0, LEAF)), *record(H, 0, 0, 0)], "word 4 has 0 steps"),
    "a stray cycle word after a call": ([*record(H, 2, 0, 0, call=(0, LEAF)), START5, cycle_word(0)],
                                        "word 5 is a loop record's cycle word"),
    "a call off the cycle after a call": ([*record(H, 2, 0, 0, call=(0, LEAF)), *record(H, 2, 0, 0, call=(1, LEAF))],
                                          "record at word 4 has a call word 0x30080009 for block 1 of its span, which "
                                          "is not on"),
    # the fifth word (format version 4)
    "a stray path word first": ([path_word(0), H, START5], r"word 0 is a loop record's path word \(EXT_LOOP_CALL with "
                                r"LOOP_PATH_FLAG\), not fifth in a record after its call word"),
    "a path word fourth in a record": ([*record(H, 2, 0, 0), path_word(0)], "word 3 is a loop record's path word"),
    "a path word after a block": ([H, path_word(0, 1)], "word 1 is a loop record's path word"),
    "a path word after records without calls": ([*record(H, 2, 0, 0), H, path_word(0)],
                                                "word 4 is a loop record's path word"),
    "a second path word": ([*record(H, 2, 0, 0, call=(0, LEAF), path=(0, 1)), path_word(0, 1)],
                           "word 5 is a loop record's path word"),
    "a path word after a word after a record with a call": ([*record(H, 2, 0, 0, call=(0, LEAF)), END5, path_word(0)],
                                                            "word 5 is a loop record's path word"),
    "a call word after a path word": ([*record(H, 2, 0, 0, call=(0, LEAF), path=(0,)), call_word(0, LEAF)],
                                      "word 5 is a loop record's call word"),
    "a path word for the header": ([steps_word(3, 0), path_word(0), cycle_word(0)], "header's BLOCK word"),
    "a path word for the cycle": ([steps_word(3, 0), H, path_word(0), cycle_word(0)], "where its cycle word"),
    "a path without block 0": (record(H, 3, 0, 0, call=(0, LEAF), path=(1, 2)),
                               r"the loop record at word 0 has a path word 0x34000006 without its leaf's block 0 "
                               r"\(path 0x0000006\)"),
    "an empty path": (record(H, 3, 0, 0, call=(0, LEAF), path=()), r"word 0x34000000 without its leaf's block 0"),
    "a path without block 0 after a path": ([*record(H, 2, 0, 0, call=(0, LEAF), path=(0, 1)),
                                             *record(H, 2, 0, 0, call=(0, LEAF), path=(3,))],
                                            "the loop record at word 5 has a path word 0x34000008 without its leaf's"),
    "a path without block 0 on a call off the cycle": (record(H, 3, 1, 0, 1, 3, call=(2, LEAF), path=(1,)),
                                                       "for block 2 of its span, which is not on its cycle"),
    "0 steps after a path": ([*record(H, 2, 0, 0, call=(0, LEAF), path=(0, 2)), *record(H, 0, 0, 0)],
                             "word 5 has 0 steps"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("filt", [LOOPS, LOOPS | ENTRY])
def test_a_malformed_record_is_refused(case, filt):
    words, message = MALFORMED[case]
    with pytest.raises(ValueError, match=message):
        decode(words, 3, filt)


def test_the_lowest_block_word_may_start_the_span():
    # the check above refuses one block less, no more
    assert decode(record(layout.block(0, 2), 3, 2, 0, 2), 3) == [layout.block(0, 2), layout.block(0, 0),
                                                                layout.block(0, 2)]


@pytest.mark.parametrize("count", [2, 7, 10, 12, 14, 16, 1000])
def test_a_count_the_calls_do_not_stand_for_is_refused(count):
    # two calls in five steps: 5 + 2 * 3 + 2 = 13 events with the start and end; not 7, the steps
    # alone, nor 10 or 16, one call less or more
    words = [START5, *record(H, 5, 1, 0, 1, 3, call=(3, LEAF)), END5]
    with pytest.raises(ValueError, match=rf"6 words with 1 loop records stand for 13 events, not the chunk's {count}"):
        decode(words, count)
    assert decode(words, 13) == [START5, H, H + 2, *CALL, H - 1, H, H + 2, *CALL, END5]


@pytest.mark.parametrize("count", [0, 8, 10, 11, 1000])
def test_a_count_the_records_do_not_stand_for_is_refused(count):
    # nine events, no other number
    words = [START5 | MARK, *record(H, 6, 0, 0, 1), END5]
    with pytest.raises(ValueError, match=r"stand for 9 events, not the chunk's" if count else "20 bytes for at most 0"):
        decode(words, count, LOOPS | ENTRY)
    assert len(decode(words, 9, LOOPS | ENTRY)) == 9


def test_a_payload_of_more_than_five_words_an_event_is_refused():
    # one record stands for at least one event in at most five words, so n events have at most 5 n words
    one = record(H, 1, 0, 0, 1, call=(1, LEAF), path=(0, 2))
    assert decode(one, 1) == [H]
    for codec, compress in ((layout.CODEC_ZLIB, zlib.compress), (layout.CODEC_ZSTD, zstandard.ZstdCompressor().compress)):
        assert decode_payload(compress(np.asarray(one * 5, "<u4").tobytes()), codec, LOOPS, 5).tolist() == [H] * 5
    with pytest.raises(ValueError, match="24 bytes for at most 5 words of 1 events"):
        decode([START5, *one], 1)
    with pytest.raises(ValueError, match="bytes for at most"):
        decode_payload(np.asarray(record(H, 1, 0, 0), "<u4").tobytes()[:-1], layout.CODEC_NONE, LOOPS, 1)
    with pytest.raises(ValueError, match="inflates to more than the 200 bytes of at most 50 words of 10 events"):
        decode_payload(zlib.compress(bytes(64 << 20)), layout.CODEC_ZLIB, LOOPS, 10)
    with pytest.raises(ValueError, match="inflates to more than the 100 bytes of at most 25 words of 5 events"):
        decode_payload(zlib.compress(np.asarray(one * 5 + [H], "<u4").tobytes()), layout.CODEC_ZLIB, LOOPS, 5)
    with pytest.raises(ValueError, match="decompresses to more than the 200 bytes"):
        decode_payload(zstandard.ZstdCompressor().compress(bytes(64 << 20)), layout.CODEC_ZSTD, LOOPS, 10)
    with pytest.raises(ValueError, match="decompresses to more than the 100 bytes"):
        decode_payload(zstandard.ZstdCompressor().compress(np.asarray(one * 5 + [H], "<u4").tobytes()),
                       layout.CODEC_ZSTD, LOOPS, 5)


def test_a_forged_chunk_claiming_a_huge_count_allocates_nothing():
    # Records claiming the most steps each, and counts up to the most a chunk may claim: the
    # first pass refuses the mismatch before the output (up to 16 MiB) exists.
    represented = 3 * layout.LOOP_STEPS_MAX
    words = record(H, layout.LOOP_STEPS_MAX, 0, 0) * 3
    payload = np.asarray(words, "<u4").tobytes()
    tracemalloc.start()
    try:
        for count in (MAX_CHUNK_EVENTS, represented - 1, represented + 1):
            with pytest.raises(ValueError, match="not the chunk's"):
                decode_payload(payload, layout.CODEC_NONE, LOOPS, count)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    with pytest.raises(ValueError, match="events in one chunk"):
        decode_payload(payload, layout.CODEC_NONE, LOOPS, MAX_CHUNK_EVENTS + 1)
    # what they do stand for decodes, in the 4 bytes an event takes
    out = decode_payload(payload, layout.CODEC_NONE, LOOPS, represented)
    assert out.nbytes == 4 * represented and (out == H).all()


@pytest.mark.parametrize("steps, path, other", [
    # A call in every step: four events a step, beyond what a chunk may claim; and the count the
    # steps alone would stand for.
    (layout.LOOP_STEPS_MAX, (), lambda steps: steps + 2),
    # A call of three blocks in every step: six events a step; and the count of calls without
    # their path.
    (1 << 16, (0, 1, 2), lambda steps: 4 * steps + 2),
])
def test_a_forged_chunk_of_calls_claiming_a_huge_count_allocates_nothing(steps, path, other):
    # Counts off by one either way, and the other count, all refused by the first pass.
    per = 1 + len(leaf(LEAF, *path))
    words = record(H, steps, 0, 0, call=(0, LEAF), path=path or None) + record(H, 2, 0, 0)
    payload = np.asarray(words, "<u4").tobytes()
    tracemalloc.start()
    try:
        for count in (MAX_CHUNK_EVENTS, other(steps), per * steps + 1, per * steps + 3):
            with pytest.raises(ValueError, match=f"stand for {per * steps + 2} events, not the chunk's {count}"):
                decode_payload(payload, layout.CODEC_NONE, LOOPS, count)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    out = decode_payload(payload, layout.CODEC_NONE, LOOPS, per * steps + 2)
    assert (out[:-2].reshape(-1, per) == [H, *leaf(LEAF, *path)]).all() and out[-2:].tolist() == [H, H]


# ------------------------------------------------------------------------------- random records

def random_words(rng: np.random.Generator, n_records: int, entry: bool) -> list[int]:
    """Well-formed payload words: records (some with a leaf's call word, some of those with its
    path word) amid starts (marked or
    not, some with receivers), ends and blocks, as a recorder with FILTER_LOOPS (and
    FILTER_ENTRY_BLOCKS) would store them."""
    words: list[int] = []
    for _ in range(n_records):
        for _ in range(int(rng.integers(0, 4))):
            method = int(rng.integers(1, layout.MAX_METHOD_ID))
            kind = int(rng.integers(0, 4))
            if kind == 0:
                words.append(layout.method_start(method) | (MARK if entry and rng.integers(0, 2) else 0))
                if rng.integers(0, 2):
                    words.append(layout.extended(layout.EXT_RECEIVER, int(rng.integers(1, 1 << 20))))
            elif kind == 1:
                words.append(layout.method_end(method))
            else:
                words.append(layout.block(method, int(rng.integers(0, layout.BLOCKS_PER_PAGE))))
        span = int(rng.integers(1, layout.LOOP_SPAN_MAX + 1))
        back = int(rng.integers(0, span))
        mask = int(rng.integers(0, 1 << span)) | (1 << back)
        header = layout.block(int(rng.integers(1, layout.MAX_METHOD_ID - 1)), int(rng.integers(0, layout.BLOCKS_PER_PAGE)))
        steps = int(rng.choice([1, 2, 3, int(rng.integers(1, 100)), int(rng.integers(1, 1 << 16))],
                               p=[0.15, 0.15, 0.1, 0.5, 0.1]))
        words += [steps_word(steps, back), header, layout.extended(layout.EXT_LOOP, layout.LOOP_CYCLE_FLAG | mask)]
        if rng.integers(0, 3) == 0:
            on_cycle = [k for k in range(span) if mask >> k & 1]
            words.append(call_word(int(rng.choice(on_cycle)), int(rng.integers(1, layout.MAX_METHOD_ID + 1))))
            if rng.integers(0, 2):
                blocks = int(rng.integers(1, layout.LOOP_SPAN_MAX + 1))
                words.append(path_word(0, *(j for j in range(1, blocks) if rng.integers(0, 2))))
    return words


@pytest.mark.parametrize("entry", [False, True])
def test_random_records_expand_as_the_reference_does(entry):
    rng = np.random.default_rng(20240531 + entry)
    for _ in range(3):
        words = random_words(rng, 150, entry)
        want = reference(words, entry)
        assert sum(w >> layout.SUBTYPE_SHIFT == layout.EXT_LOOP_CALL for w in words) > 20
        assert sum(w >> layout.SUBTYPE_SHIFT == layout.EXT_LOOP_CALL and w & layout.LOOP_PATH_FLAG for w in words) > 10
        filt = LOOPS | (ENTRY if entry else 0)
        assert decode(words, len(want), filt) == want
        # the same payload as the recorder writes it: byte planes, then zstd
        payload = zstandard.ZstdCompressor(level=1).compress(planes(words))
        assert decode_payload(payload, layout.CODEC_ZSTD, filt | PLANES, len(want)).tolist() == want
        with pytest.raises(ValueError, match="not the chunk's"):
            decode(words, len(want) + 1, filt)
