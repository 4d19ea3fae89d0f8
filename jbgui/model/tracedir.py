"""Open a trace directory (docs/trace-format.md): metadata, thread table, static information, event
streams and clock samples.

Reading is tolerant in the way the format promises: a trace cut off by SIGKILL loads up to the last
complete chunk, a static.xml without its closing tag loads up to the last complete class, a
partial last line of threads.jsonl is ignored. Damage in the middle of a file is reported in
:attr:`TraceDir.problems` (and by :func:`read_stream` raising :class:`TraceError` when asked to be
strict); the valid part stays usable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.format.chunks import ChunkHeader, Status, StreamReader, decode_payload  # noqa: F401 (re-exported)
from jbgui.model.format.clock import read_clock
from jbgui.model.format.files import is_directory, show
from jbgui.model.format.static_xml import StaticReader
from jbgui.model.format.thread_table import MAX_INDEX, read_thread_table
from jbgui.model.format.trace_json import read_trace_json

Chunk = ChunkHeader     # the name this module's callers know a chunk header by


@dataclass
class StreamFile:
    """A decoded event stream: the words, the chunks they came from, and what was wrong."""

    path: Path
    kind: int
    thread: int
    events: np.ndarray
    chunks: list[ChunkHeader]
    problems: list[str] = field(default_factory=list)


def read_stream(path: Path, strict: bool = False) -> StreamFile:
    """Decode every valid chunk of one ``.jbt`` file into a uint32 array of event words.

    A truncated last chunk (the JVM was killed while writing) is dropped silently; a chunk with a
    bad magic, CRC or size stops decoding there and is reported in ``problems`` (or raised with
    ``strict``).
    """
    with StreamReader(path) as reader:
        chunks: list[ChunkHeader] = []
        parts: list[np.ndarray] = []
        problems: list[str] = []
        for record in reader.chunks():
            if record.ok:
                chunks.append(record.header)
                parts.append(record.words)
            elif record.status is not Status.CUT_OFF:
                problems.append(record.message)
        header = reader.header
    if strict and problems:
        raise TraceError(problems[0])
    return StreamFile(Path(path), header.kind, header.thread, _join(parts), chunks, problems)


def iter_stream(path: Path, batch_events: int = 1 << 22):
    """Decode one ``.jbt`` file piecewise: yield ``(first_index, words, flags, problem)`` batches of
    at most about ``batch_events`` events (whole chunks), reading the file chunk by chunk so that a
    stream of any size is replayed in bounded memory.

    ``flags`` is the OR of the chunk flags of the batch. The last yielded batch may carry
    ``problem`` (a damaged chunk: decoding stops there, as in :func:`read_stream`); a file cut off
    mid-chunk ends silently, like a trace of a killed JVM.
    """
    with StreamReader(path) as reader:
        parts: list[np.ndarray] = []
        pending = 0
        flags_or = 0
        first = 0
        problem = None
        for record in reader.chunks():
            if not record.ok:
                if record.status is not Status.CUT_OFF:
                    problem = record.message
                break
            h = record.header
            if parts and h.flags & layout.CHUNK_FLAG_LOST_BEFORE:
                # Events are missing before this chunk: a batch never spans the gap.
                yield first, _join(parts), flags_or, None
                parts, pending, flags_or = [], 0, 0
            if not parts:
                first = h.first
            parts.append(record.words)
            pending += h.count
            flags_or |= h.flags
            if pending >= batch_events:
                yield first, _join(parts), flags_or, None
                parts, pending, flags_or = [], 0, 0
        if parts or problem:
            yield first, _join(parts), flags_or, problem


def stream_event_count(path: Path) -> int:
    """How many events a ``.jbt`` file holds, from its chunk headers alone (payloads are skipped,
    so this reads a few bytes per chunk). A damaged or cut-off end stops the count there; an
    unreadable file counts 0."""
    try:
        with StreamReader(path) as reader:
            end = 0
            for record in reader.chunks(decode=False):
                if not record.ok:
                    break
                end = record.header.first + record.header.count
            return end
    except TraceError:
        return 0


def _join(parts: list[np.ndarray]) -> np.ndarray:
    if not parts:
        return np.zeros(0, dtype=np.uint32)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


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
    """A trace directory, opened lazily: each part is read on first use (by the readers of
    :mod:`jbgui.model.format`, which validate it)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise TraceError(f"{show(self.path)}: no such trace directory")
        self.problems: list[str] = []
        self._metadata: dict | None = None
        self._threads: list[dict] | None = None
        self._clock: np.ndarray | None = None
        self._classes: dict[int, ClassInfo] | None = None
        self._methods: dict[int, MethodInfo] | None = None
        self._blocks: dict[int, dict] | None = None

    # ------------------------------------------------------------------ metadata and threads

    @property
    def metadata(self) -> dict:
        """trace.json, every field jbgui uses of its documented type (others removed)."""
        if self._metadata is None:
            read = read_trace_json(self.path / "trace.json")
            self.problems.extend(str(p) for p in read.problems)
            self._metadata = read.metadata
        return self._metadata

    @property
    def complete(self) -> bool:
        return self.metadata.get("status") == "complete"

    @property
    def threads(self) -> list[dict]:
        """One dict per thread index: its start record updated by its end record."""
        if self._threads is None:
            try:
                table = read_thread_table(self.path / "threads.jsonl")
            except TraceError as error:
                self.problems.append(str(error))
                self._threads = []
                return self._threads
            self.problems.extend(str(p) for p in table.problems)
            self._threads = [entry.merged() for entry in table.threads.values()]
        return self._threads

    def stream_path(self, thread_index: int) -> Path:
        return self.path / "events" / f"T{thread_index:06d}.jbt"

    def stream_indices(self) -> list[int]:
        """Thread indices that have a stream file (mode 2): files named ``T<6+ digits>.jbt`` with
        an index a thread can have."""
        events = self.path / "events"
        if not is_directory(events, self.path):
            return []
        out = []
        try:
            names = sorted(p.name for p in events.glob("T*.jbt"))
        except OSError as error:
            raise TraceError(f"{show(events)}: cannot list: {error.strerror}") from error
        for name in names:
            digits = name[1:-4]
            if digits.isascii() and digits.isdigit() and len(digits) <= 10 and 0 < int(digits) <= MAX_INDEX \
                    and name == self.stream_path(int(digits)).name:
                out.append(int(digits))
            else:
                self.problems.append(f"{show(events / name)}: not a stream name (events/T<thread index>.jbt); ignored")
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
        """Clock samples as a structured array (stream, position, nanos, flags), implausible ones
        left out (said in :attr:`problems`)."""
        if self._clock is None:
            start = None
            try:
                start = self.metadata.get("start", {}).get("nanos")
            except TraceError:
                pass
            self._clock, problems = read_clock(self.path / "clock.bin", start)
            self.problems.extend(problems)
        return self._clock

    # ------------------------------------------------------------------ static information

    def _load_static(self) -> None:
        classes: dict[int, ClassInfo] = {}
        methods: dict[int, MethodInfo] = {}
        blocks: dict[int, dict] = {}
        reader = StaticReader(self.path / "static.xml")
        for record in reader.classes():
            classes[record.id] = ClassInfo(record.id, record.name, record.attrs)
            for m in record.methods:
                if m.id is None:
                    continue
                methods[m.id] = MethodInfo(m.id, record.id, record.name, m.name, m.desc, m.pages, m.blocks, m.attrs)
                for b in m.block_list:
                    word = ((m.id + b.index // layout.BLOCKS_PER_PAGE) << layout.BLOCK_BITS) \
                        | (b.index % layout.BLOCKS_PER_PAGE)
                    blocks[word] = {"method": m.id, "index": b.index, "id": str(word), "start": str(b.start),
                                    "end": str(b.end), "lines": b.lines, "metrics": b.metrics}
        problems = reader.problems
        if reader.cut_off and self._running():
            problems = problems[:-1]     # a killed JVM's static.xml ends inside a class: the format says so
        self.problems.extend(problems)
        self._classes, self._methods, self._blocks = classes, methods, blocks

    def _running(self) -> bool:
        try:
            return self.metadata.get("status") == "running"
        except TraceError:
            return False

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
    return ((words >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK).astype(np.uint8)


def values(words: np.ndarray) -> np.ndarray:
    return (words & layout.VALUE_MASK).astype(np.int64)
