"""The stream decoder on hand-made chunks: byte planes, zlib, CRC, truncation and corruption.

Hand-written bytes are for malformed input only; recorded traces are tested in tests/recorder.
"""

import struct
import zlib

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.tracedir import read_stream


def stream_bytes(chunks: list[np.ndarray]) -> bytes:
    out = bytearray(struct.pack("<4sHHIIqQ", b"JBTS", 1, 32, 0, 1, 0, 0))
    first = 0
    for words in chunks:
        planes = words.astype("<u4").view(np.uint8).reshape(-1, 4).T.copy().tobytes()
        payload = zlib.compress(planes, 1)
        out += struct.pack("<4sBBHIIQII", b"JBCK", 1, 1, 0, len(words), len(payload), first, zlib.crc32(payload), 0)
        out += payload
        first += len(words)
    return bytes(out)


WORDS = [np.array([layout.method_start(3), layout.block(3, 0), layout.block(3, 1), layout.method_end(3)], dtype=np.uint32),
         np.arange(1, 5000, dtype=np.uint32) * 7919]


def test_round_trip(tmp_path):
    path = tmp_path / "T000001.jbt"
    path.write_bytes(stream_bytes(WORDS))
    stream = read_stream(path)
    assert np.array_equal(stream.events, np.concatenate(WORDS))
    assert [c.first for c in stream.chunks] == [0, 4]
    assert stream.problems == []


def test_cut_off_last_chunk_is_dropped_silently(tmp_path):
    data = stream_bytes(WORDS)
    path = tmp_path / "T000001.jbt"
    path.write_bytes(data[:-10])
    stream = read_stream(path)
    assert np.array_equal(stream.events, WORDS[0])
    assert stream.problems == []


def test_corrupt_chunk_is_reported_with_file_and_offset(tmp_path):
    data = bytearray(stream_bytes(WORDS))
    second = 32 + 32 + struct.unpack_from("<I", data, 32 + 12)[0]
    data[second + 40] ^= 0xFF  # inside the second payload
    path = tmp_path / "T000001.jbt"
    path.write_bytes(bytes(data))
    stream = read_stream(path)
    assert np.array_equal(stream.events, WORDS[0])
    assert stream.problems and f"offset {second}" in stream.problems[0] and "CRC" in stream.problems[0]
    with pytest.raises(TraceError, match="CRC"):
        read_stream(path, strict=True)


def test_not_a_stream(tmp_path):
    path = tmp_path / "x.jbt"
    path.write_bytes(b"hello, this is not a trace at all....")
    with pytest.raises(TraceError, match="not an event stream"):
        read_stream(path)
