"""Open a trace directory (docs/trace-format.md): metadata, thread table, static information, event
streams and clock samples.

Reading is tolerant in the way the format promises: a trace cut off by SIGKILL loads up to the last
complete chunk, a static.xml without its closing tag loads up to the last complete class, a
partial last line of threads.jsonl is ignored. Damage in the middle of a file is reported in
:attr:`TraceDir.problems` (and by :func:`read_stream` raising :class:`TraceError` when asked to be
strict); the valid part stays usable.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree

from jbgui.model import layout
from jbgui.model.errors import TraceError

_STREAM_HEADER = struct.Struct("<4sHHIIqQ")
_CHUNK_HEADER = struct.Struct("<4sBBHIIQII")


@dataclass(frozen=True)
class Chunk:
    """One chunk header, with where its payload lies in the file."""

    offset: int
    codec: int
    filter: int
    flags: int
    count: int
    length: int
    first: int
    crc: int


@dataclass
class StreamFile:
    """A decoded event stream: the words, the chunks they came from, and what was wrong."""

    path: Path
    kind: int
    thread: int
    events: np.ndarray
    chunks: list[Chunk]
    problems: list[str] = field(default_factory=list)


def read_stream(path: Path, strict: bool = False) -> StreamFile:
    """Decode every valid chunk of one ``.jbt`` file into a uint32 array of event words.

    A truncated last chunk (the JVM was killed while writing) is dropped silently; a chunk with a
    bad magic, CRC or size stops decoding there and is reported in ``problems`` (or raised with
    ``strict``).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TraceError(f"{path}: cannot read: {error.strerror}") from error
    if len(data) < layout.STREAM_HEADER_SIZE:
        raise TraceError(f"{path}: {len(data)} bytes, shorter than the {layout.STREAM_HEADER_SIZE}-byte stream header")
    magic, version, header_size, kind, thread, _nanos, _reserved = _STREAM_HEADER.unpack_from(data, 0)
    if magic != layout.STREAM_MAGIC:
        raise TraceError(f"{path}: offset 0: not an event stream (magic {magic!r}, expected {layout.STREAM_MAGIC!r})")
    if version != layout.FORMAT_VERSION:
        raise TraceError(f"{path}: format version {version}; this jbgui reads version {layout.FORMAT_VERSION}")
    pos = header_size
    chunks: list[Chunk] = []
    parts: list[np.ndarray] = []
    problems: list[str] = []
    while pos < len(data):
        if len(data) - pos < layout.CHUNK_HEADER_SIZE:
            break  # a header cut off by the end of the file: the JVM was killed mid-write
        magic, codec, filt, flags, count, length, first, crc, _r = _CHUNK_HEADER.unpack_from(data, pos)
        if magic != layout.CHUNK_MAGIC:
            problems.append(f"{path}: offset {pos}: bad chunk magic {magic!r}; {len(data) - pos} bytes ignored")
            break
        start = pos + layout.CHUNK_HEADER_SIZE
        if start + length > len(data):
            break  # payload cut off by the end of the file
        payload = data[start:start + length]
        if zlib.crc32(payload) != crc:
            problems.append(f"{path}: offset {pos}: chunk CRC mismatch; {len(data) - pos} bytes ignored")
            break
        try:
            words = decode_payload(payload, codec, filt, count)
        except (zlib.error, ValueError) as error:
            problems.append(f"{path}: offset {pos}: chunk does not decode ({error}); {len(data) - pos} bytes ignored")
            break
        chunks.append(Chunk(pos, codec, filt, flags, count, length, first, crc))
        parts.append(words)
        pos = start + length
    if strict and problems:
        raise TraceError(problems[0])
    events = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint32)
    return StreamFile(path, kind, thread, events, chunks, problems)


def iter_stream(path: Path, batch_events: int = 1 << 22):
    """Decode one ``.jbt`` file piecewise: yield ``(first_index, words, flags, problem)`` batches of
    at most about ``batch_events`` events (whole chunks), reading the file chunk by chunk so that a
    stream of any size is replayed in bounded memory.

    ``flags`` is the OR of the chunk flags of the batch. The last yielded batch may carry
    ``problem`` (a damaged chunk: decoding stops there, as in :func:`read_stream`); a file cut off
    mid-chunk ends silently, like a trace of a killed JVM.
    """
    path = Path(path)
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise TraceError(f"{path}: cannot read: {error.strerror}") from error
    with handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(layout.STREAM_HEADER_SIZE)
        if len(head) < layout.STREAM_HEADER_SIZE:
            raise TraceError(f"{path}: {len(head)} bytes, shorter than the {layout.STREAM_HEADER_SIZE}-byte stream header")
        magic, version, header_size, _kind, _thread, _nanos, _reserved = _STREAM_HEADER.unpack_from(head, 0)
        if magic != layout.STREAM_MAGIC:
            raise TraceError(f"{path}: offset 0: not an event stream (magic {magic!r}, expected {layout.STREAM_MAGIC!r})")
        if version != layout.FORMAT_VERSION:
            raise TraceError(f"{path}: format version {version}; this jbgui reads version {layout.FORMAT_VERSION}")
        pos = header_size
        handle.seek(pos)
        parts: list[np.ndarray] = []
        pending = 0
        flags_or = 0
        first = 0
        problem = None
        while pos < size:
            header = handle.read(layout.CHUNK_HEADER_SIZE)
            if len(header) < layout.CHUNK_HEADER_SIZE:
                break
            magic, codec, filt, flags, count, length, chunk_first, crc, _r = _CHUNK_HEADER.unpack_from(header, 0)
            if magic != layout.CHUNK_MAGIC:
                problem = f"{path}: offset {pos}: bad chunk magic {magic!r}; {size - pos} bytes ignored"
                break
            payload = handle.read(length)
            if len(payload) < length:
                break
            if zlib.crc32(payload) != crc:
                problem = f"{path}: offset {pos}: chunk CRC mismatch; {size - pos} bytes ignored"
                break
            try:
                words = decode_payload(payload, codec, filt, count)
            except (zlib.error, ValueError) as error:
                problem = f"{path}: offset {pos}: chunk does not decode ({error}); {size - pos} bytes ignored"
                break
            if parts and flags & layout.CHUNK_FLAG_LOST_BEFORE:
                # Events are missing before this chunk: a batch never spans the gap.
                yield first, _join(parts), flags_or, None
                parts, pending, flags_or = [], 0, 0
            if not parts:
                first = chunk_first
            parts.append(words)
            pending += count
            flags_or |= flags
            pos += layout.CHUNK_HEADER_SIZE + length
            if pending >= batch_events:
                yield first, _join(parts), flags_or, None
                parts, pending, flags_or = [], 0, 0
        if parts or problem:
            yield first, _join(parts), flags_or, problem


def stream_event_count(path: Path) -> int:
    """How many events a ``.jbt`` file holds, from its chunk headers alone (payloads are skipped,
    so this reads a few bytes per chunk). A damaged or cut-off end stops the count there."""
    total = 0
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(layout.STREAM_HEADER_SIZE)
            if len(head) < layout.STREAM_HEADER_SIZE:
                return 0
            pos = _STREAM_HEADER.unpack_from(head, 0)[2]
            while pos + layout.CHUNK_HEADER_SIZE <= size:
                handle.seek(pos)
                header = handle.read(layout.CHUNK_HEADER_SIZE)
                magic, _c, _f, _fl, count, length, _first, _crc, _r = _CHUNK_HEADER.unpack_from(header, 0)
                if magic != layout.CHUNK_MAGIC:
                    break
                total += count
                pos += layout.CHUNK_HEADER_SIZE + length
    except OSError:
        return total
    return total


def _join(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.uint32)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def decode_payload(payload: bytes, codec: int, filt: int, count: int) -> np.ndarray:
    """The event words of one chunk payload."""
    if codec == layout.CODEC_ZLIB:
        raw = zlib.decompress(payload)
    elif codec == layout.CODEC_NONE:
        raw = payload
    else:
        raise ValueError(f"unknown codec {codec}")
    if len(raw) != 4 * count:
        raise ValueError(f"{len(raw)} bytes for {count} events")
    planes = np.frombuffer(raw, dtype=np.uint8)
    if filt == layout.FILTER_BYTE_PLANES:
        return planes.reshape(4, count).T.copy().view("<u4").ravel().astype(np.uint32, copy=False)
    if filt == layout.FILTER_NONE:
        return planes.view("<u4").astype(np.uint32)
    raise ValueError(f"unknown filter {filt}")


@dataclass(frozen=True)
class MethodInfo:
    """A method of static.xml."""

    id: int
    class_id: int
    class_name: str
    name: str
    desc: str
    pages: int
    blocks: int
    attrs: dict

    @property
    def qualified(self) -> str:
        return f"{self.class_name.replace('/', '.')}.{self.name}{self.desc}"


@dataclass(frozen=True)
class ClassInfo:
    """A class of static.xml."""

    id: int
    name: str
    attrs: dict


class TraceDir:
    """A trace directory, opened lazily: each part is read on first use."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise TraceError(f"{self.path}: no such trace directory")
        self.problems: list[str] = []
        self._metadata: dict | None = None
        self._classes: dict[int, ClassInfo] | None = None
        self._methods: dict[int, MethodInfo] | None = None
        self._blocks: dict[int, dict] | None = None

    # ------------------------------------------------------------------ metadata and threads

    @property
    def metadata(self) -> dict:
        """trace.json."""
        if self._metadata is None:
            path = self.path / "trace.json"
            try:
                self._metadata = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError as error:
                raise TraceError(f"{path}: missing; this is not a jbgui trace directory") from error
            except (OSError, ValueError) as error:
                raise TraceError(f"{path}: unreadable: {error}") from error
        return self._metadata

    @property
    def complete(self) -> bool:
        return self.metadata.get("status") == "complete"

    @property
    def threads(self) -> list[dict]:
        """One dict per thread index: its start record updated by its end record."""
        by_index: dict[int, dict] = {}
        path = self.path / "threads.jsonl"
        if not path.exists():
            return []
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                self.problems.append(f"{path}: line {number}: not JSON (cut off?)")
                continue
            entry = by_index.setdefault(record["index"], {"index": record["index"]})
            if record.get("kind") == "start":
                entry.update({k: v for k, v in record.items() if k != "kind"})
                entry["start_nanos"] = record.get("nanos")
            else:
                entry["end_name"] = record.get("name")
                entry["events"] = record.get("events")
                entry["end_nanos"] = record.get("nanos")
                entry["alive_at_exit"] = record.get("alive_at_exit")
        return [by_index[k] for k in sorted(by_index)]

    def stream_path(self, thread_index: int) -> Path:
        return self.path / "events" / f"T{thread_index:06d}.jbt"

    def stream_indices(self) -> list[int]:
        """Thread indices that have a stream file (mode 2)."""
        out = []
        for p in sorted((self.path / "events").glob("T*.jbt")):
            try:
                out.append(int(p.stem[1:]))
            except ValueError:
                continue
        return out

    def stream(self, thread_index: int) -> StreamFile:
        stream = read_stream(self.stream_path(thread_index))
        self.problems.extend(stream.problems)
        return stream

    def stream_events(self, thread_index: int) -> np.ndarray:
        """All event words of one thread's stream (mode 2)."""
        return self.stream(thread_index).events

    def shared_stream(self) -> StreamFile:
        """The shared stream of a mode-1 trace."""
        stream = read_stream(self.path / "events" / "shared.jbt")
        self.problems.extend(stream.problems)
        return stream

    def clock(self) -> np.ndarray:
        """Clock samples as a structured array (stream, position, nanos, flags)."""
        path = self.path / "clock.bin"
        dtype = np.dtype([("stream", "<i8"), ("position", "<i8"), ("nanos", "<i8"), ("flags", "<i8")])
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return np.zeros(0, dtype=dtype)
        if data[:4] != layout.CLOCK_MAGIC:
            raise TraceError(f"{path}: offset 0: not a clock file (magic {data[:4]!r})")
        body = data[layout.CLOCK_HEADER_SIZE:]
        whole = len(body) // layout.CLOCK_RECORD_SIZE * layout.CLOCK_RECORD_SIZE
        return np.frombuffer(body[:whole], dtype=dtype)

    # ------------------------------------------------------------------ static information

    def _load_static(self) -> None:
        path = self.path / "static.xml"
        classes: dict[int, ClassInfo] = {}
        methods: dict[int, MethodInfo] = {}
        blocks: dict[int, dict] = {}
        if not path.exists():
            raise TraceError(f"{path}: missing")
        # resolve_entities/no_network: static.xml is data, never a reason to fetch or expand anything.
        parser_args = dict(events=("end",), tag="class", recover=True, resolve_entities=False,
                           no_network=True, huge_tree=True)
        try:
            for _event, element in etree.iterparse(str(path), **parser_args):
                class_id = int(element.get("id"))
                name = element.get("name")
                classes[class_id] = ClassInfo(class_id, name, dict(element.attrib))
                for m in element.iterfind("method"):
                    if m.get("id") is None:
                        continue
                    mid = int(m.get("id"))
                    info = MethodInfo(mid, class_id, name, m.get("name"), m.get("desc"),
                                      int(m.get("block_pages", "1")), int(m.get("blocks", "0")), dict(m.attrib))
                    methods[mid] = info
                    for b in m.iterfind("basic_block"):
                        blocks[int(b.get("id"))] = {"method": mid, "index": int(b.get("index")), **b.attrib}
                element.clear()
        except etree.XMLSyntaxError as error:
            self.problems.append(f"{path}: {error} (the part before it is loaded)")
        self._classes, self._methods, self._blocks = classes, methods, blocks

    @property
    def classes(self) -> dict[int, ClassInfo]:
        if self._classes is None:
            self._load_static()
        return self._classes

    @property
    def methods(self) -> dict[int, MethodInfo]:
        """Method id → method (only the first id of a paged method)."""
        if self._methods is None:
            self._load_static()
        return self._methods

    @property
    def blocks(self) -> dict[int, dict]:
        """Block id (low 30 bits of its event word) → attributes, with ``method`` and ``index``."""
        if self._blocks is None:
            self._load_static()
        return self._blocks

    def find_methods(self, class_name: str, method_name: str, desc: str | None = None) -> list[MethodInfo]:
        """Methods by class internal name (``pkg/Cls``) and name (and descriptor)."""
        return [m for m in self.methods.values()
                if m.class_name == class_name and m.name == method_name and (desc is None or m.desc == desc)]


# ---------------------------------------------------------------------- vectorised decoding

def event_types(words: np.ndarray) -> np.ndarray:
    return (words >> layout.TYPE_SHIFT).astype(np.uint8)


def method_ids(words: np.ndarray) -> np.ndarray:
    """The method (page) id field of type 1–3 words."""
    return ((words >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID).astype(np.int64)


def block_indices(words: np.ndarray) -> np.ndarray:
    return (words & (layout.BLOCKS_PER_PAGE - 1)).astype(np.int64)


def subtypes(words: np.ndarray) -> np.ndarray:
    """The subtype of extended (type 0) words; meaningless for the others."""
    return ((words >> layout.SUBTYPE_SHIFT) & 0x7).astype(np.uint8)


def values(words: np.ndarray) -> np.ndarray:
    return (words & layout.VALUE_MASK).astype(np.int64)
