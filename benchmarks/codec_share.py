"""What the writer's codec spends on a trace, phase by phase, and what fewer words would spare it.

    PYTHONPATH=. .venv/bin/python benchmarks/codec_share.py TRACE [--levels 1,-1,-4] [--tenths]

The agent's writer compresses each chunk of stored words on its own with zstd at level -1
(jbgui.zstd.ZstdCodec.LEVEL; level 1 until 2026-12-02); at level=method on javac that is most of
the writer's CPU. This script reads every chunk's stored words back (the payload as the writer
compressed it, before any reader expands it), compresses them again, one chunk at a time as the
writer does, and prints per zstd level and per shape of the words:

- ``as stored``: the words as they are;
- ``no ends``: without the method-end words (what a format that implied every end would hand zstd);
- ``ends constant``: every end word the same (an end that does not name its method);
- ``no receivers``: without the receiver words.

For each: the raw bytes, the seconds on this core (the best of three passes), the speed in
megabytes of the stored words per second, and the bytes written per stored word. ``--tenths``
also prints the speed of level 1 on each tenth of the chunks in stream order: javac's parser
phase compresses at about twice the speed of its attribution and code generation.

It measures Python's zstandard (its bundled libzstd), not the agent's zstd-jni: the same codec,
other builds, so read the ratios between rows, not the absolute speeds. Exit status 2 with a
message on a missing or damaged trace.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import zstandard

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.format.chunks import Status, StreamReader
from jbgui.model.tracedir import TraceDir

_DECOMPRESSOR = zstandard.ZstdDecompressor()
SHAPES = ("as stored", "no ends", "ends constant", "no receivers")
END_CONSTANT = layout.TYPE_METHOD_END << layout.TYPE_SHIFT


def stored_words(payload: bytes, codec: int, count: int) -> np.ndarray:
    """The words a chunk's payload holds as the writer stored them (no reader's expansion)."""
    if codec == layout.CODEC_ZSTD:
        try:
            raw = _DECOMPRESSOR.decompress(payload, max_output_size=20 * count)
        except zstandard.ZstdError as error:
            raise TraceError(f"a chunk of {count} events does not decompress: {error}") from error
    elif codec == layout.CODEC_NONE:
        raw = payload
    else:
        raise TraceError(f"codec {codec}: this script reads zstd chunks (the agent's codec) only")
    if len(raw) % 4:
        raise TraceError(f"a payload of {len(raw)} bytes is not whole words")
    return np.frombuffer(raw, dtype="<u4")


def shaped(words: np.ndarray, shape: str) -> np.ndarray:
    """``words`` as the named shape (see the module's docstring)."""
    kind = words >> layout.TYPE_SHIFT
    if shape == "as stored":
        return words
    if shape == "no ends":
        return words[kind != layout.TYPE_METHOD_END]
    if shape == "ends constant":
        out = words.copy()
        out[kind == layout.TYPE_METHOD_END] = END_CONSTANT
        return out
    if shape == "no receivers":
        receiver = (kind == layout.TYPE_EXTENDED) & (((words >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK)
                                                     == layout.EXT_RECEIVER)
        return words[~receiver]
    raise ValueError(shape)


def read_chunks(trace: Path) -> list[np.ndarray]:
    """Every chunk's stored words, stream by stream, in order."""
    t = TraceDir(trace)
    chunks: list[np.ndarray] = []
    for index in t.stream_indices():
        with StreamReader(t.stream_path(index)) as reader, open(t.stream_path(index), "rb") as f:
            for record in reader.chunks(decode=False):
                if not record.ok:
                    if record.status is not Status.CUT_OFF:
                        raise TraceError(record.message)
                    break
                h = record.header
                f.seek(h.payload_offset)
                payload = f.read(h.length)
                if zlib.crc32(payload) != h.crc:
                    raise TraceError(f"{t.stream_path(index)}: offset {h.offset}: chunk CRC mismatch")
                chunks.append(stored_words(payload, h.codec, h.count))
    return chunks


def compress_seconds(chunks: list[bytes], level: int, passes: int = 3) -> tuple[float, int]:
    """The best of ``passes`` timings of compressing every chunk on its own, and the bytes out."""
    c = zstandard.ZstdCompressor(level=level)
    best, out = float("inf"), 0
    for _ in range(passes):
        began = time.perf_counter()
        out = sum(len(c.compress(b)) for b in chunks)
        best = min(best, time.perf_counter() - began)
    return best, out


def tenths(n: int) -> list[slice]:
    """Ten consecutive slices of ``n`` items, as even as they can be."""
    bounds = [n * k // 10 for k in range(11)]
    return [slice(bounds[k], bounds[k + 1]) for k in range(10)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--levels", default="1,-1,-4", help="zstd levels, comma-separated (default 1,-1,-4)")
    parser.add_argument("--tenths", action="store_true", help="also level 1's speed on each tenth of the chunks")
    args = parser.parse_args(argv)
    try:
        levels = [int(x) for x in args.levels.split(",")]
    except ValueError:
        print(f"codec_share: --levels {args.levels!r}: integers separated by commas", file=sys.stderr)
        return 2
    try:
        chunks = read_chunks(args.trace)
    except TraceError as error:
        print(f"codec_share: {error}", file=sys.stderr)
        return 2
    if not chunks:
        print(f"codec_share: {args.trace}: no chunk of events", file=sys.stderr)
        return 2
    stored = sum(len(w) for w in chunks)
    print(f"{args.trace}: {len(chunks):,} chunks, {stored:,} stored words ({4 * stored / 1e6:,.0f} MB)")
    print(f"{'shape':<14} {'level':>5} {'raw MB':>9} {'seconds':>8} {'MB/s stored':>12} {'bytes/word':>10}")
    for shape in SHAPES:
        data = [shaped(w, shape).tobytes() for w in chunks]
        raw = sum(len(b) for b in data)
        for level in (levels if shape == "as stored" else levels[:1]):
            seconds, out = compress_seconds(data, level)
            print(f"{shape:<14} {level:>5} {raw / 1e6:>9,.0f} {seconds:>8.3f} {4 * stored / seconds / 1e6:>12,.0f} "
                  f"{out / stored:>10.4f}")
    if args.tenths:
        data = [w.tobytes() for w in chunks]
        for k, part in enumerate(tenths(len(data))):
            seconds, out = compress_seconds(data[part], levels[0], passes=1)
            raw = sum(len(b) for b in data[part])
            print(f"  tenth {k + 1:>2}: {raw / seconds / 1e6:,.0f} MB/s, {out / (raw / 4):.4f} bytes/word")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
