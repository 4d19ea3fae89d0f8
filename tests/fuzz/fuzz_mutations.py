"""Damage for the fuzz tests: each mutation takes a copy of a real trace directory recorded by the
agent and breaks one file of it the way the fuzz campaign of issue 12 did. Hand-written bytes are
the point here (malformed input); event words are re-encoded with a correct CRC so that the damage
reaches the replay rather than stopping at the chunk check.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model.format.chunks import decode_payload

STREAM_HEADER = struct.Struct("<4sHHIIqQ")
CHUNK_HEADER = struct.Struct("<4sBBHIIQII")
OUTSIDE_SECRET = "jbgui-fuzz-outside-secret"


# ---------------------------------------------------------------------- event streams

def read_chunks(path: Path) -> tuple[bytes, list[tuple[int, int, np.ndarray]]]:
    """A sound stream's file header and its chunks as (flags, first, words)."""
    data = path.read_bytes()
    head = data[:layout.STREAM_HEADER_SIZE]
    pos = layout.STREAM_HEADER_SIZE
    chunks = []
    while pos + layout.CHUNK_HEADER_SIZE <= len(data):
        _m, codec, filt, flags, count, length, first, _crc, _r = CHUNK_HEADER.unpack_from(data, pos)
        payload = data[pos + 32:pos + 32 + length]
        words = decode_payload(payload, codec, filt, count)
        chunks.append((flags, first, words.astype(np.uint32)))
        pos += 32 + length
    return head, chunks


def chunk_bytes(words: np.ndarray, first: int, flags: int = 0, *, count: int | None = None,
                payload: bytes | None = None, codec: int = layout.CODEC_ZLIB) -> bytes:
    """One chunk with a correct CRC (``count``/``payload`` may be given to lie about them)."""
    if payload is None:
        raw = np.ascontiguousarray(words, "<u4").tobytes()
        payload = zlib.compress(raw) if codec == layout.CODEC_ZLIB else raw
    n = len(words) if count is None else count
    return CHUNK_HEADER.pack(layout.CHUNK_MAGIC, codec, layout.FILTER_NONE, flags, n, len(payload), first,
                             zlib.crc32(payload), 0) + payload


def write_stream(path: Path, head: bytes, chunks: list[tuple[int, int, np.ndarray]]) -> None:
    """Re-encode chunks, their event indices renumbered so that only the words are damaged."""
    out = [head]
    first = 0
    for flags, _first, words in chunks:
        out.append(chunk_bytes(words, first, flags))
        first += len(words)
    path.unlink()
    path.write_bytes(b"".join(out))


def streams(trace: Path) -> list[Path]:
    return sorted((trace / "events").glob("T*.jbt"))


def _edit_words(trace: Path, rng: random.Random, edit: Callable[[np.ndarray, random.Random], np.ndarray]) -> None:
    path = rng.choice(streams(trace))
    head, chunks = read_chunks(path)
    k = rng.randrange(len(chunks))
    flags, first, words = chunks[k]
    chunks[k] = (flags, first, edit(words.copy(), rng))
    write_stream(path, head, chunks)


def flip_bit(words, rng):
    for _ in range(rng.randint(1, 8)):
        words[rng.randrange(len(words))] ^= np.uint32(1 << rng.randrange(32))
    return words


def block_out_of_range(words, rng):
    blocks = np.flatnonzero(words >> 30 == layout.TYPE_BLOCK)
    for i in rng.sample(list(blocks), min(len(blocks), 4)):
        words[i] = (words[i] & ~np.uint32(layout.BLOCK_MASK)) | np.uint32(rng.randrange(2048))
    return words


def random_words(words, rng):
    at = rng.randrange(len(words) + 1)
    extra = np.array([rng.getrandbits(32) for _ in range(rng.randint(1, 50))], np.uint32)
    return np.concatenate([words[:at], extra, words[at:]])


def random_ids(words, rng):
    kinds = [layout.method_start, layout.method_end,
             lambda m: layout.extended(layout.EXT_EXCEPTION_EXIT, m),
             lambda m: layout.block(m, rng.randrange(2048))]
    for _ in range(rng.randint(1, 20)):
        i = rng.randrange(len(words))
        words[i] = rng.choice(kinds)(rng.choice([0, 1, rng.randrange(layout.MAX_METHOD_ID + 1), layout.MAX_METHOD_ID]))
    return words


def random_extended(words, rng):
    for _ in range(rng.randint(1, 20)):
        i = rng.randrange(len(words))
        words[i] = layout.extended(rng.randrange(8), rng.choice([0, 1, layout.MAX_CLASS_ID, rng.getrandbits(27)]))
    return words


def drop_words(words, rng):
    a = rng.randrange(len(words))
    return np.concatenate([words[:a], words[a + rng.randint(1, 200):]])


def mutate_words(kind):
    return lambda trace, rng: _edit_words(trace, rng, kind)


@functools.lru_cache(maxsize=4)
def _zeros_deflated(size: int) -> bytes:
    z = zlib.compressobj()
    block = bytes(1 << 20)
    return b"".join(z.compress(block) for _ in range(size >> 20)) + z.flush()


def compression_bomb(trace: Path, rng: random.Random, size: int = 256 << 20, claimed: int | None = None) -> None:
    """A chunk claiming ``claimed`` events whose payload inflates to ``size`` bytes of zeros."""
    path = rng.choice(streams(trace))
    head, chunks = read_chunks(path)
    payload = _zeros_deflated(size)
    claimed = rng.choice([16, 1 << 20, (1 << 32) - 1]) if claimed is None else claimed
    data = path.read_bytes()
    first = sum(len(w) for _, _, w in chunks)
    path.unlink()
    path.write_bytes(data + chunk_bytes(np.zeros(0, np.uint32), first, count=claimed, payload=payload))


def chunk_header_lies(trace: Path, rng: random.Random) -> None:
    path = rng.choice(streams(trace))
    head, chunks = read_chunks(path)
    k = rng.randrange(len(chunks))
    out = [head]
    first = 0
    for i, (flags, _f, words) in enumerate(chunks):
        if i == k:
            lie = rng.choice(["count", "first", "flags", "codec"])
            if lie == "count":
                out.append(chunk_bytes(words, first, flags, count=rng.choice([0, len(words) + 1, (1 << 32) - 1])))
            elif lie == "first":
                out.append(chunk_bytes(words, rng.choice([0, first + 1, (1 << 63) - 1, (1 << 64) - 1]), flags))
            elif lie == "flags":
                out.append(chunk_bytes(words, first, rng.getrandbits(16)))
            else:
                payload = zlib.compress(words.tobytes())
                out.append(CHUNK_HEADER.pack(layout.CHUNK_MAGIC, rng.choice([2, 255]), rng.choice([0, 7]), flags,
                                             len(words), len(payload), first, zlib.crc32(payload), 0) + payload)
        else:
            out.append(chunk_bytes(words, first, flags))
        first += len(words)
    path.unlink()
    path.write_bytes(b"".join(out))


def garble_bytes(trace: Path, rng: random.Random) -> None:
    """Raw damage: CRC errors, bad magic, a cut file, a bad file header."""
    path = rng.choice(streams(trace))
    data = bytearray(path.read_bytes())
    how = rng.choice(["flip", "cut", "header", "garbage"])
    if how == "flip":
        for _ in range(rng.randint(1, 5)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == "cut":
        del data[rng.randrange(len(data)):]
    elif how == "header":
        offset = rng.choice([0, 4, 6, 8, 12])
        data[offset:offset + 4] = rng.getrandbits(32).to_bytes(4, "little")
    else:
        at = rng.randrange(len(data))
        data[at:at] = rng.randbytes(rng.randint(1, 100))
    path.unlink()
    path.write_bytes(bytes(data))


def deep_stack(trace: Path, depth: int) -> None:
    """One thread whose stream is a recursion ``depth`` calls deep (implicit starts of a method
    with blocks), then the matching ends."""
    from jbgui.model.statics import load_statics

    st = load_statics(trace)
    mid = next(m for m in range(1, len(st.m_name)) if st.m_blocks[m] > 0)
    down = np.tile(np.array([layout.method_start(mid), layout.block(mid, 0)], np.uint32), depth)
    up = np.full(depth, layout.method_end(mid), np.uint32)
    words = np.concatenate([down, up])
    path = streams(trace)[0]
    head = path.read_bytes()[:layout.STREAM_HEADER_SIZE]
    out = [head]
    for first in range(0, len(words), layout.BUFFER_MAX_EVENTS):
        part = words[first:first + layout.BUFFER_MAX_EVENTS]
        last = first + len(part) == len(words)
        out.append(chunk_bytes(part, first, layout.CHUNK_FLAG_LAST if last else 0))
    path.unlink()
    path.write_bytes(b"".join(out))
    # A complete trace.json would make check compare counts; the streams are what is tested.


# ---------------------------------------------------------------------- static.xml

_BAD_NUMBERS = ["-1", "0", "4294967296", "2147483648", "9223372036854775808", "-9223372036854775809", "abc",
                "1e5", "", " 7", "0x10", "99999999999999999999999999"]


def static_attribute(trace: Path, rng: random.Random) -> None:
    path = trace / "static.xml"
    text = path.read_text()
    tag, attr = rng.choice([("class", "id"), ("method", "id"), ("method", "block_pages"), ("method", "blocks"),
                            ("basic_block", "index"), ("basic_block", "start"), ("basic_block", "end"),
                            ("basic_block", "id"), ("call_site", "offset"), ("exception_handler", "basic_block_id"),
                            ("method", "access"), ("method", "code_length")])
    matches = [m for m in re.finditer(rf'<{tag} [^>]*?\b{attr}="([^"]*)"', text)]
    if not matches:
        return static_metrics(trace, rng)
    for m in rng.sample(matches, min(len(matches), rng.randint(1, 3))):
        a, b = m.span(1)
        value = rng.choice(_BAD_NUMBERS + ["100000"])
        text = text[:a] + value + " " * 0 + text[b:] if len(value) == b - a else text[:a] + value + text[b:]
        break   # spans move after an edit of another length: one edit per pass
    path.unlink()
    path.write_text(text)


def static_metrics(trace: Path, rng: random.Random) -> None:
    path = trace / "static.xml"
    text = path.read_text()
    spans = [m.span(1) for m in re.finditer(r'metrics="([^"]*)"', text)]
    a, b = rng.choice(spans)
    value = rng.choice(["x " * 19, "-5 " * 19, "2147483648 " * 19, "1", "", "9" * 30])
    path.unlink()
    path.write_text(text[:a] + value.strip() + text[b:])


def static_duplicate_ids(trace: Path, rng: random.Random) -> None:
    path = trace / "static.xml"
    text = path.read_text()
    ids = re.findall(r'<method id="(\d+)"', text)
    if len(ids) >= 2:
        a, b = rng.sample(ids, 2)
        text = text.replace(f'<method id="{b}"', f'<method id="{a}"', 1)
    path.unlink()
    path.write_text(text)


def static_truncate(trace: Path, rng: random.Random) -> None:
    path = trace / "static.xml"
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[:rng.randrange(len(data))])


def static_entities(trace: Path, rng: random.Random) -> None:
    """Entity tricks: an external entity naming a file outside the trace, a billion laughs."""
    path = trace / "static.xml"
    text = path.read_text()
    secret = trace.parent / "outside-secret.txt"
    secret.write_text(OUTSIDE_SECRET)
    doctype = rng.choice([
        f'<!DOCTYPE static_information [<!ENTITY x SYSTEM "file://{secret}">]>',
        '<!DOCTYPE static_information [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
        '<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
        '<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY x "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]>',
        f'<!DOCTYPE static_information SYSTEM "file://{secret}">',
    ])
    body = text.split("?>", 1)[1] if text.startswith("<?xml") else text
    # The entity lands in a class name and in a block's instructions.
    body = re.sub(r'(<class [^>]*?name=")([^"]*)"', r'\1&x;"', body, count=1)
    path.unlink()
    path.write_text('<?xml version="1.0"?>\n' + doctype + body)


# ---------------------------------------------------------------------- trace.json, threads.jsonl, clock.bin

def _rewrite_json(path: Path, value) -> None:
    path.unlink()
    path.write_text(value if isinstance(value, str) else json.dumps(value))


def trace_json_shape(trace: Path, rng: random.Random) -> None:
    path = trace / "trace.json"
    meta = json.loads(path.read_text())
    how = rng.randrange(6)
    if how == 0:
        _rewrite_json(path, rng.choice(["null", '"x"', "[1, 2]", "5", "", "{", "[" * 1_000_000 + "]" * 1_000_000]))
        return
    field_paths = [("agent", "options", "include"), ("agent", "options", "events"), ("agent", "options", "mode"),
                   ("agent", "options", "bba"), ("jvm", "java_home"), ("jvm", "pid"), ("jvm", "command"),
                   ("start",), ("start", "nanos"), ("counts",), ("counts", "events"), ("counts", "methods"),
                   ("status",), ("format_version",), ("event_layout",), ("agent",), ("agent", "options"),
                   ("limits",), ("end", "nanos")]
    keys = rng.choice(field_paths)
    value = rng.choice([None, -1e308, "x", [1, "a"], {"a": 1}, 2**70, -1, True, [[[[]]]], "9" * 1000])
    obj = meta
    for k in keys[:-1]:
        if not isinstance(obj.get(k), dict):
            obj[k] = {}
        obj = obj[k]
    obj[keys[-1]] = value
    _rewrite_json(path, meta)


def threads_shape(trace: Path, rng: random.Random) -> None:
    path = trace / "threads.jsonl"
    lines = path.read_text().splitlines()
    bad = rng.choice(["null", '"x"', "[1]", '{"kind": "start", "index": "a"}', '{"kind": "start", "index": 1e30}',
                      '{"kind": "start", "index": 99999999999999999999}', '{"kind": "end", "index": 1, "events": "x"}',
                      '{"kind": "start", "index": 1, "name": [1], "nanos": "x"}', "[" * 100_000 + "]" * 100_000,
                      '{"kind": "start", "index": -5}', '{"kind": "start", "index": 7, "name": "' + "n" * 200_000 + '"}',
                      '{"kind": "start", "index": 1, "daemon": "yes", "virtual": null}'])
    lines.insert(rng.randrange(len(lines) + 1), bad)
    path.unlink()
    path.write_text("\n".join(lines) + rng.choice(["\n", ""]))


def clock_extremes(trace: Path, rng: random.Random) -> None:
    path = trace / "clock.bin"
    data = bytearray(path.read_bytes()) if path.exists() else bytearray(b"JBCL" + struct.pack("<HH8x", 1, 32))
    how = rng.randrange(4)
    extremes = [-(1 << 63), (1 << 63) - 1, 0, -1, 1 << 62, rng.getrandbits(63)]
    if how == 0:
        for _ in range(rng.randint(1, 5)):
            data += struct.pack("<qqqq", rng.choice([1, 2, -1, 1 << 40]), rng.choice(extremes), rng.choice(extremes),
                                rng.choice([0, 1, -1]))
    elif how == 1 and len(data) > 48:
        n = (len(data) - 16) // 32
        k = rng.randrange(n)
        field = rng.randrange(4)
        struct.pack_into("<q", data, 16 + 32 * k + 8 * field, rng.choice(extremes))
    elif how == 2:
        data[rng.choice([0, 4, 6])] ^= 0xFF
    else:
        del data[rng.randrange(len(data)):]
    path.unlink()
    path.write_bytes(bytes(data))


# ---------------------------------------------------------------------- the file system

def fs_trick(trace: Path, rng: random.Random) -> None:
    outside = trace.parent / "outside-secret.txt"
    outside.write_text(OUTSIDE_SECRET + "\n")
    victim = rng.choice(streams(trace) + [trace / n for n in ("static.xml", "trace.json", "threads.jsonl",
                                                             "clock.bin")])
    how = rng.choice(["symlink-out", "loop", "dangling", "fifo", "directory", "big-name", "events-link"])
    if how == "big-name":
        (trace / "events" / "T99999999999999999999.jbt").write_bytes(streams(trace)[0].read_bytes())
        (trace / "events" / "Tabc.jbt").write_bytes(b"")
        return
    if how == "events-link":
        other = trace.parent / "elsewhere-events"
        os.rename(trace / "events", other)
        os.symlink(other, trace / "events")
        return
    victim.unlink()
    if how == "symlink-out":
        os.symlink(outside, victim)
    elif how == "loop":
        os.symlink(victim.name, victim)
    elif how == "dangling":
        os.symlink(trace / "no-such-file", victim)
    elif how == "fifo":
        os.mkfifo(victim)
    else:
        victim.mkdir()


MUTATIONS: dict[str, Callable[[Path, random.Random], None]] = {
    "flip-bit": mutate_words(flip_bit),
    "block-out-of-range": mutate_words(block_out_of_range),
    "random-words": mutate_words(random_words),
    "random-ids": mutate_words(random_ids),
    "random-extended": mutate_words(random_extended),
    "drop-words": mutate_words(drop_words),
    "chunk-header-lies": chunk_header_lies,
    "compression-bomb": lambda trace, rng: compression_bomb(trace, rng, size=rng.choice([32 << 20, 256 << 20])),
    "garble-bytes": garble_bytes,
    "static-attribute": static_attribute,
    "static-metrics": static_metrics,
    "static-duplicate-ids": static_duplicate_ids,
    "static-truncate": static_truncate,
    "static-entities": static_entities,
    "trace-json-shape": trace_json_shape,
    "threads-shape": threads_shape,
    "clock-extremes": clock_extremes,
    "fs-trick": fs_trick,
}


def commands(trace: Path, out: Path) -> list[list[str]]:
    """Every ``jbtrace`` subcommand that reads a trace."""
    t = str(trace)
    return [["check", t], ["check", "--json", "--no-replay", t], ["dump", t], ["dump", "-v", "--count", "2000", t],
            ["stats", t], ["stats", "--json", t], ["calls", t],
            ["export", t, "--format", "chrome", "-o", str(out / "c.json")],
            ["export", t, "--format", "collapsed", "-o", str(out / "c.txt")],
            ["export", t, "--format", "csv", "-o", str(out / "c.csv")]]
