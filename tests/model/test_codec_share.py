"""benchmarks/codec_share.py, the writer's codec re-run on a trace's stored words: the shapes of
the words it compares (hand-written words: a kernel unit test), its reading of a chunk's stored
words and its split of the chunks into tenths."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import zstandard

from jbgui.model import layout
from jbgui.model.errors import TraceError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import codec_share  # noqa: E402


def start(method: int) -> int:
    return (layout.TYPE_METHOD_START << layout.TYPE_SHIFT) | (method << layout.METHOD_SHIFT)


def end(method: int) -> int:
    return (layout.TYPE_METHOD_END << layout.TYPE_SHIFT) | (method << layout.METHOD_SHIFT)


def receiver(class_id: int) -> int:
    return (layout.TYPE_EXTENDED << layout.TYPE_SHIFT) | (layout.EXT_RECEIVER << layout.SUBTYPE_SHIFT) | class_id


def block(method: int, index: int) -> int:
    return (layout.TYPE_BLOCK << layout.TYPE_SHIFT) | (method << layout.METHOD_SHIFT) | index


def throwable(class_id: int) -> int:
    return (layout.TYPE_EXTENDED << layout.TYPE_SHIFT) | (layout.EXT_THROWABLE << layout.SUBTYPE_SHIFT) | class_id


WORDS = np.array([start(5), receiver(9), block(5, 0), start(7), end(7), throwable(3), end(5)], dtype=np.uint32)


def test_the_shapes_drop_or_flatten_exactly_their_words():
    assert codec_share.shaped(WORDS, "as stored").tolist() == WORDS.tolist()
    assert codec_share.shaped(WORDS, "no ends").tolist() == \
        [start(5), receiver(9), block(5, 0), start(7), throwable(3)]
    assert codec_share.shaped(WORDS, "ends constant").tolist() == \
        [start(5), receiver(9), block(5, 0), start(7), end(0), throwable(3), end(0)]
    # an extended word of another subtype (the throwable's class) stays
    assert codec_share.shaped(WORDS, "no receivers").tolist() == \
        [start(5), block(5, 0), start(7), end(7), throwable(3), end(5)]
    # the stored words themselves are left alone
    assert WORDS[4] == end(7)


def test_a_chunks_stored_words_come_back_as_the_writer_compressed_them():
    payload = zstandard.ZstdCompressor(level=1).compress(WORDS.astype("<u4").tobytes())
    assert codec_share.stored_words(payload, layout.CODEC_ZSTD, len(WORDS)).tolist() == WORDS.tolist()
    assert codec_share.stored_words(WORDS.astype("<u4").tobytes(), layout.CODEC_NONE, 7).tolist() == WORDS.tolist()
    with pytest.raises(TraceError, match="not whole words"):
        codec_share.stored_words(b"\0\0\0\0\0", layout.CODEC_NONE, 2)
    with pytest.raises(TraceError, match="does not decompress"):
        codec_share.stored_words(payload[:6] + b"\xff" * 12, layout.CODEC_ZSTD, len(WORDS))
    with pytest.raises(TraceError, match="codec 1"):
        codec_share.stored_words(b"", layout.CODEC_ZLIB, 0)


def test_tenths_cover_every_chunk_once_in_order():
    for n in (0, 3, 10, 27):
        parts = codec_share.tenths(n)
        assert len(parts) == 10
        covered = [i for part in parts for i in range(n)[part]]
        assert covered == list(range(n))
    assert [len(range(27)[p]) for p in codec_share.tenths(27)] == [2, 3, 3, 2, 3, 3, 2, 3, 3, 3]


def test_a_missing_trace_is_a_message_and_exit_status_2(tmp_path, capsys):
    assert codec_share.main([str(tmp_path / "absent")]) == 2
    assert "codec_share:" in capsys.readouterr().err


def test_a_damaged_chunk_is_a_message_and_exit_status_2(record, jdk, capsys):
    run = record("hello", jdk, level="method")
    assert run.exit_code == 0, run.describe()
    assert codec_share.main([str(run.trace_dir), "--levels", "1"]) == 0
    assert "as stored" in capsys.readouterr().out
    stream = sorted((run.trace_dir / "events").glob("T*.jbt"))[0]
    data = bytearray(stream.read_bytes())
    data[layout.STREAM_HEADER_SIZE + layout.CHUNK_HEADER_SIZE + 1] ^= 0xFF   # the first payload's second byte
    stream.write_bytes(bytes(data))
    assert codec_share.main([str(run.trace_dir)]) == 2
    assert "CRC mismatch" in capsys.readouterr().err
