"""The event stream container (``*.jbt``): a file header, then chunks (docs/trace-format.md).

:class:`StreamReader` is the one walker of that container. It yields every chunk's header with a
:class:`Status` — ok, cut off (the JVM was killed while writing it: expected at the end of a
running trace), bad magic, CRC error, implausible size, undecodable — and stops after the first
chunk that is not ok, because nothing after damage can be trusted to start at a chunk boundary.
Payloads are decoded only when asked, and never beyond what the header's event count allows: a
chunk that claims or inflates to more than :data:`MAX_CHUNK_EVENTS` events is refused, so a
compression bomb costs no more memory than a real chunk.
"""

from __future__ import annotations

import enum
import os
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import zstandard

from jbgui.model import layout
from jbgui.model.format import entry_blocks
from jbgui.model.errors import TraceError
from jbgui.model.format.files import open_file, show

_STREAM_HEADER = struct.Struct("<4sHHIIqQ")
_CHUNK_HEADER = struct.Struct("<4sBBHIIQII")

# The recorder flushes a thread's buffer of at most BUFFER_MAX_EVENTS events per chunk; allow far
# more than that (a future recorder may batch), but not what would make one chunk cost gigabytes.
MAX_CHUNK_EVENTS = 1 << 22
# zlib's worst case grows incompressible data by 5 bytes per 16 KiB stored block, plus a header.
_ZLIB_SLACK = 64
# Events lost before one chunk (the tracer could not flush): more than this is not a real trace.
MAX_LOST_EVENTS = 1 << 40


class Status(enum.Enum):
    """What the walk found at one chunk."""

    OK = "ok"
    CUT_OFF = "cut off"            # the file ends inside this chunk (header or payload)
    BAD_MAGIC = "bad magic"
    CRC_ERROR = "CRC error"
    IMPLAUSIBLE = "implausible"    # sizes or event index no recorder writes
    UNDECODABLE = "undecodable"    # codec/filter unknown, or the payload is not the words of n events


@dataclass(frozen=True)
class StreamHeader:
    """The 32-byte file header of an event stream."""

    version: int
    header_size: int
    kind: int
    thread: int
    nanos: int
    reserved: int


@dataclass(frozen=True)
class ChunkHeader:
    """One chunk header and where it lies (``offset``: the header's first byte)."""

    offset: int
    codec: int
    filter: int
    flags: int
    count: int
    length: int
    first: int
    crc: int
    reserved: int

    @property
    def payload_offset(self) -> int:
        return self.offset + layout.CHUNK_HEADER_SIZE

    @property
    def end(self) -> int:
        return self.offset + layout.CHUNK_HEADER_SIZE + self.length


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk as the walk met it: ``header`` (None when cut off inside the header), its status,
    a message naming file and offset when not ok, and the event words when decoding was asked."""

    offset: int
    status: Status
    header: ChunkHeader | None = None
    message: str = ""
    words: np.ndarray | None = None
    code: str = ""             # what ``jbtrace check`` calls the fault (cut-off, chunk-magic, crc, ...)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


class StreamHeaderError(TraceError):
    """The file header is unusable: nothing of the stream can be read. ``code`` names the fault
    (``short-header``, ``stream-magic``, ``stream-version``, ``header-size``); ``offset`` where."""

    def __init__(self, message: str, code: str, offset: int, empty: bool = False):
        super().__init__(message)
        self.code = code
        self.offset = offset
        self.empty = empty


class StreamReader:
    """One open ``.jbt`` file: its header, then its chunks on demand. Use as a context manager."""

    def __init__(self, path: Path, root: Path | None = None):
        self.path = Path(path)
        try:
            self._handle = open_file(self.path, root)
        except FileNotFoundError as error:
            raise TraceError(f"{show(self.path)}: missing") from error
        try:
            self.size = os.fstat(self._handle.fileno()).st_size
            self.header = self._read_header()
        except BaseException:
            self._handle.close()
            raise

    def __enter__(self) -> StreamReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._handle.close()

    def _read_header(self) -> StreamHeader:
        name = show(self.path)
        head = self._read(0, layout.STREAM_HEADER_SIZE)
        if len(head) < layout.STREAM_HEADER_SIZE:
            raise StreamHeaderError(f"{name}: {len(head)} bytes, shorter than the {layout.STREAM_HEADER_SIZE}-byte "
                                    "stream header", "short-header", 0, empty=not head)
        magic, version, header_size, kind, thread, nanos, reserved = _STREAM_HEADER.unpack_from(head, 0)
        if magic != layout.STREAM_MAGIC:
            raise StreamHeaderError(f"{name}: offset 0: not an event stream (magic {magic!r}, expected "
                                    f"{layout.STREAM_MAGIC!r})", "stream-magic", 0)
        if version not in layout.READABLE_FORMAT_VERSIONS:
            raise StreamHeaderError(f"{name}: offset 4: stream format version {version}; this jbgui reads versions "
                                    f"{', '.join(map(str, layout.READABLE_FORMAT_VERSIONS))}", "stream-version", 4)
        if header_size < layout.STREAM_HEADER_SIZE or header_size > self.size:
            raise StreamHeaderError(f"{name}: offset 6: header size {header_size}, expected "
                                    f"{layout.STREAM_HEADER_SIZE}", "header-size", 6)
        return StreamHeader(version, header_size, kind, thread, nanos, reserved)

    def _read(self, offset: int, n: int) -> bytes:
        try:
            self._handle.seek(offset)
            return self._handle.read(n)
        except OSError as error:
            raise TraceError(f"{show(self.path)}: offset {offset}: cannot read: {error.strerror}") from error

    def chunks(self, decode: bool = True, start: int | None = None, expected_first: int = 0
               ) -> Iterator[ChunkRecord]:
        """Walk the chunks from ``start`` (default: after the file header; then the first chunk
        there should start at event ``expected_first``). Every chunk is yielded; the walk ends
        after the first one that is not ok. ``decode=False`` reads the headers alone (payloads
        are skipped, their CRC unchecked)."""
        name = show(self.path)
        pos = self.header.header_size if start is None else start
        while pos < self.size:
            raw = self._read(pos, layout.CHUNK_HEADER_SIZE)
            if len(raw) < layout.CHUNK_HEADER_SIZE:
                yield ChunkRecord(pos, Status.CUT_OFF, None,
                                  f"{name}: offset {pos}: the stream ends inside a chunk header ({len(raw)} bytes)",
                                  code="cut-off")
                return
            magic, codec, filt, flags, count, length, first, crc, reserved = _CHUNK_HEADER.unpack_from(raw, 0)
            header = ChunkHeader(pos, codec, filt, flags, count, length, first, crc, reserved)
            if magic != layout.CHUNK_MAGIC:
                yield ChunkRecord(pos, Status.BAD_MAGIC, None, f"{name}: offset {pos}: bad chunk magic {magic!r}; "
                                  f"{self.size - pos} bytes ignored", code="chunk-magic")
                return
            code, problem = _implausible(header, expected_first)
            if problem:
                yield ChunkRecord(pos, Status.IMPLAUSIBLE, header, f"{name}: offset {pos}: {problem}; "
                                  f"{self.size - pos} bytes ignored", code=code)
                return
            if header.end > self.size:
                yield ChunkRecord(pos, Status.CUT_OFF, header, f"{name}: offset {pos}: the stream ends inside a "
                                  f"chunk: payload of {length} bytes, {self.size - header.payload_offset} present",
                                  code="cut-off")
                return
            words = None
            if decode:
                payload = self._read(header.payload_offset, length)
                if zlib.crc32(payload) != crc:
                    yield ChunkRecord(pos, Status.CRC_ERROR, header, f"{name}: offset {pos}: chunk CRC mismatch; "
                                      f"{self.size - pos} bytes ignored", code="crc")
                    return
                try:
                    words = decode_payload(payload, codec, filt, count)
                except ValueError as error:
                    yield ChunkRecord(pos, Status.UNDECODABLE, header, f"{name}: offset {pos}: chunk does not "
                                      f"decode ({error}); {self.size - pos} bytes ignored", code="chunk-decode")
                    return
            yield ChunkRecord(pos, Status.OK, header, "", words)
            expected_first = first + count
            pos = header.end

    def payload(self, header: ChunkHeader) -> np.ndarray:
        """The words of one chunk met by an earlier walk (random access; CRC checked again)."""
        payload = self._read(header.payload_offset, header.length)
        if len(payload) < header.length or zlib.crc32(payload) != header.crc:
            raise TraceError(f"{show(self.path)}: offset {header.offset}: chunk changed or damaged since it was indexed")
        try:
            return decode_payload(payload, header.codec, header.filter, header.count)
        except ValueError as error:
            raise TraceError(f"{show(self.path)}: offset {header.offset}: chunk does not decode ({error})") from error


def _implausible(h: ChunkHeader, expected_first: int) -> tuple[str, str]:
    """Why a chunk header cannot be from a recorder (``(code, reason)``; reason '' if it can)."""
    if h.count > MAX_CHUNK_EVENTS:
        return "chunk-size", f"a chunk of {h.count} events (at most {MAX_CHUNK_EVENTS} are plausible)"
    raw = _max_raw_size(h.filter, h.count)
    limit = raw + (raw // 1000 + _ZLIB_SLACK if h.codec == layout.CODEC_ZLIB else 0)
    if h.length > limit:
        return "chunk-size", f"a payload of {h.length} bytes for {h.count} events"
    lost = bool(h.flags & layout.CHUNK_FLAG_LOST_BEFORE)
    if h.first != expected_first and not (lost and expected_first < h.first <= expected_first + MAX_LOST_EVENTS):
        return "chunk-first", (f"chunk's first event index is {h.first}, expected {expected_first} "
                               "(chunks missing, repeated or out of order)")
    return "", ""


_LOCAL = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    """This thread's zstd decompressor: making one per chunk cost about a third of decoding the
    small chunks of a stream (a decompression context is allocated each time)."""
    d = getattr(_LOCAL, "zstd", None)
    if d is None:
        d = _LOCAL.zstd = zstandard.ZstdDecompressor()
    return d


def _max_raw_size(filt: int, count: int) -> int:
    """The most bytes a payload of ``count`` events decompresses to: 4 per event, but with loop
    records (FILTER_LOOPS) up to 20: a record is five words (its fourth a call word, its fifth the
    call's path; format version 4) for as little as one event (one step, not of the block with the
    call)."""
    return (20 if filt & layout.FILTER_LOOPS else 4) * count


def decode_payload(payload: bytes, codec: int, filt: int, count: int, copy: bool = True) -> np.ndarray:
    """The event words of one chunk payload; :class:`ValueError` when it is not ``count`` words.
    ``copy=False``: a read-only view of the decompressed bytes when no filter applies (a reader
    that only scans the words saves a copy of each chunk).

    Inflating is bounded by the event count: a payload that would inflate beyond ``4 * count``
    bytes (``20 * count`` with loop records, :func:`_max_raw_size`) is refused after that many
    bytes, whatever it would have grown to; the events take ``4 * count`` bytes."""
    if count > MAX_CHUNK_EVENTS:
        raise ValueError(f"{count} events in one chunk")
    want = 4 * count
    most = _max_raw_size(filt, count)
    of = f"at most {most // 4} words of {count} events" if filt & layout.FILTER_LOOPS else f"{count} events"
    if codec == layout.CODEC_ZLIB:
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(payload, most + 1)
        except zlib.error as error:
            raise ValueError(f"zlib: {error}") from error
        if len(raw) > most or inflater.unconsumed_tail:
            raise ValueError(f"inflates to more than the {most} bytes of {of}")
        if not inflater.eof:
            raise ValueError("the compressed data ends early")
    elif codec == layout.CODEC_ZSTD:
        try:
            # The frame states its size; refuse a bigger claim before anything is allocated.
            if zstandard.frame_content_size(payload) > most:
                raise ValueError(f"decompresses to more than the {most} bytes of {of}")
            raw = _decompressor().decompress(payload, max_output_size=most)
        except zstandard.ZstdError as error:
            raise ValueError(f"zstd: {error}") from error
    elif codec == layout.CODEC_NONE:
        raw = payload
    else:
        raise ValueError(f"unknown codec {codec}")
    if filt & layout.FILTER_LOOPS:
        # Loop records: three to five words for the steps of a loop, as few as one event or up to
        # LOOP_STEPS_MAX and the calls of a leaf in them; expanded together with marked starts when
        # FILTER_ENTRY_BLOCKS is set too.
        if len(raw) % 4 or len(raw) > most:
            raise ValueError(f"{len(raw)} bytes for {of}")
        planes = filt & ~(layout.FILTER_LOOPS | layout.FILTER_ENTRY_BLOCKS)
        words = _unfilter(raw, planes, len(raw) // 4, copy=False)
        return entry_blocks.expand_loops(words, count, bool(filt & layout.FILTER_ENTRY_BLOCKS))
    if filt & layout.FILTER_ENTRY_BLOCKS:
        # Fewer words than events: marked start words stand for their first block too.
        if len(raw) % 4 or len(raw) > want:
            raise ValueError(f"{len(raw)} bytes for at most {count} events")
        words = _unfilter(raw, filt & ~layout.FILTER_ENTRY_BLOCKS, len(raw) // 4, copy=False)
        return entry_blocks.expand(words, count)
    if len(raw) != want:
        raise ValueError(f"{len(raw)} bytes for {count} events")
    return _unfilter(raw, filt, count, copy)


def _unfilter(raw: bytes, filt: int, n: int, copy: bool) -> np.ndarray:
    planes = np.frombuffer(raw, dtype=np.uint8)
    if filt == layout.FILTER_BYTE_PLANES:
        return planes.reshape(4, n).T.copy().view("<u4").ravel().astype(np.uint32, copy=False)
    if filt == layout.FILTER_NONE:
        return planes.view("<u4").astype(np.uint32, copy=copy)
    raise ValueError(f"unknown filter {filt}")
