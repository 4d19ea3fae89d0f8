"""Decoding chunks whose start words stand for their method's first block too (FILTER_ENTRY_BLOCKS).

Hand-written payloads (a kernel unit test and malformed input): the recorded traces are compared
with and without the recorder's elision in tests/recorder/test_entry_elision.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model.format.chunks import decode_payload

MARK = layout.START_ENTRY_IMPLIED
START5, START6 = layout.method_start(5), layout.method_start(6)
RECEIVER7 = layout.extended(layout.EXT_RECEIVER, 7)


def payload(words: list[int]) -> bytes:
    return np.array(words, dtype="<u4").tobytes()


def decode(words: list[int], count: int, filt: int = layout.FILTER_NONE) -> list[int]:
    return decode_payload(payload(words), layout.CODEC_NONE, filt | layout.FILTER_ENTRY_BLOCKS, count).tolist()


def test_a_marked_start_gets_its_first_block_after_the_receiver():
    words = [START5 | MARK, RECEIVER7, layout.block(5, 3), START6 | MARK, layout.method_end(6), START6 | MARK]
    assert decode(words, 9) == [START5, RECEIVER7, layout.block(5, 0), layout.block(5, 3),
                                START6, layout.block(6, 0), layout.method_end(6),
                                START6, layout.block(6, 0)]


def test_byte_planes_are_undone_before():
    words = np.array([START5 | MARK, layout.method_end(5)], dtype="<u4")
    planes = words.view(np.uint8).reshape(2, 4).T.copy().tobytes()
    out = decode_payload(planes, layout.CODEC_NONE, layout.FILTER_BYTE_PLANES | layout.FILTER_ENTRY_BLOCKS, 3)
    assert out.tolist() == [START5, layout.block(5, 0), layout.method_end(5)]


@pytest.mark.parametrize("count", [2, 4, 1_000_000])
def test_a_count_the_words_do_not_stand_for_is_refused(count):
    # Two words, one marked: three events, no other number. A forged count allocates nothing.
    with pytest.raises(ValueError, match="implied first blocks|bytes for at most"):
        decode([START5 | MARK, layout.method_end(5)], count)


def test_a_payload_longer_than_its_events_is_refused():
    with pytest.raises(ValueError, match="bytes for at most 1 events"):
        decode([START5, layout.method_end(5)], 1)
