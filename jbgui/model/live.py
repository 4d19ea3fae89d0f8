"""Progress of a trace while its program runs: threads, classes, events and bytes so far, read from
the trace directory the agent is writing (docs/trace-format.md).

Each :meth:`LiveProgress.poll` reads only what was appended since the previous one: the new lines
of ``threads.jsonl`` (a partial last line waits for the next poll), the new bytes of
``static.xml`` (counting ``<class `` openings; ``<`` never occurs escaped in attribute values or
text, so each one is a class element), and the new chunk headers of every event stream, seeking
over the payloads (a chunk whose payload is not all on disk yet is counted once it is). Nothing
here raises for a file that is missing, growing, cut or replaced: the agent writes while we read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from jbgui.model.errors import TraceError
from jbgui.model.format.chunks import StreamReader
from jbgui.model.format.files import check_regular, open_file
from jbgui.model.format.thread_table import MAX_LINE, parse_record
from jbgui.model.format.trace_json import read_trace_json

_CLASS_TAG = b"<class "
# static.xml is read in pieces of this size, so that a poll after a burst of class loading never
# holds the whole increment in memory at once.
_READ_BLOCK = 1 << 20


@dataclass
class _StreamCursor:
    offset: int = 0          # where the next chunk header starts (0: stream header not read yet)
    events: int = 0          # events in the whole chunks before ``offset``
    chunks: int = 0


@dataclass
class _TextCursor:
    offset: int = 0          # bytes consumed so far
    count: int = 0
    tail: bytes = b""        # the unconsumed end: a partial line, or the start of a split tag


@dataclass
class LiveProgress:
    """Incremental reader of a growing trace directory; :meth:`poll` returns the totals so far.

    Cheap enough to call several times a second on a trace of billions of events: each poll costs
    one ``stat`` and one header read per new chunk, and reads the text files' new bytes once.
    """

    trace_dir: Path
    _threads: _TextCursor = field(default_factory=_TextCursor)
    _classes: _TextCursor = field(default_factory=_TextCursor)
    _streams: dict[str, _StreamCursor] = field(default_factory=dict)
    _status: str | None = None
    _status_key: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.trace_dir = Path(self.trace_dir)

    def poll(self) -> dict:
        """``{"threads", "classes", "events", "chunks", "bytes", "status"}``.

        ``threads``: threads started (start records in threads.jsonl); ``classes``: class elements
        in static.xml; ``events``: events in the streams' whole chunks; ``bytes``: the event
        files' sizes; ``status``: trace.json's status (None before it exists, then ``"running"``,
        then ``"complete"``).
        """
        self._read_threads()
        self._read_static()
        events = chunks = size = 0
        events_dir = self.trace_dir / "events"
        try:
            names = sorted(e for e in os.listdir(events_dir) if e.endswith(".jbt"))
        except OSError:
            names = []
        for name in names:
            cursor = self._streams.setdefault(name, _StreamCursor())
            size += self._read_stream(events_dir / name, cursor)
            events += cursor.events
            chunks += cursor.chunks
        return {"threads": self._threads.count, "classes": self._classes.count, "events": events,
                "chunks": chunks, "bytes": size, "status": self._read_status()}

    # ------------------------------------------------------------------ pieces

    def _read_status(self) -> str | None:
        path = self.trace_dir / "trace.json"
        try:
            st = check_regular(path)
            key = (st.st_mtime_ns, st.st_size)
            if key != self._status_key:
                self._status = read_trace_json(path).metadata.get("status")
                self._status_key = key
        except (OSError, TraceError):
            pass  # not written yet, or being rewritten at this moment: keep what we knew
        return self._status

    @staticmethod
    def _new_bytes(path: Path, cursor: _TextCursor):
        """The bytes appended to ``path`` since ``cursor``, block by block (a file that shrank
        was replaced: start over)."""
        try:
            with open_file(path) as f:
                size = os.fstat(f.fileno()).st_size
                if size < cursor.offset:
                    cursor.offset, cursor.count, cursor.tail = 0, 0, b""
                f.seek(cursor.offset)
                while cursor.offset < size:
                    block = f.read(min(_READ_BLOCK, size - cursor.offset))
                    if not block:
                        return
                    cursor.offset += len(block)
                    yield block
        except (OSError, TraceError):
            return

    def _read_threads(self) -> None:
        cursor = self._threads
        for block in self._new_bytes(self.trace_dir / "threads.jsonl", cursor):
            text = cursor.tail + block
            end = text.rfind(b"\n") + 1   # a partial last line waits for the next poll
            for line in text[:end].splitlines():
                if b'"start"' not in line:
                    continue
                record, _why = parse_record(line)
                if record is not None and record["kind"] == "start":
                    cursor.count += 1
            cursor.tail = text[end:][-MAX_LINE:]   # a longer partial line is no thread record

    def _read_static(self) -> None:
        cursor = self._classes
        keep = len(_CLASS_TAG) - 1
        for block in self._new_bytes(self.trace_dir / "static.xml", cursor):
            # The tail kept from the previous block is shorter than the tag, so it holds no whole
            # tag: a tag split between two reads is counted once, by the read that completes it.
            text = cursor.tail + block
            cursor.count += text.count(_CLASS_TAG)
            cursor.tail = text[-keep:]

    @staticmethod
    def _read_stream(path: Path, cursor: _StreamCursor) -> int:
        """Count the chunks appended since the last poll; returns the file's size."""
        try:
            with StreamReader(path) as reader:
                if reader.size < cursor.offset:
                    cursor.offset, cursor.events, cursor.chunks = 0, 0, 0   # replaced
                start = cursor.offset or reader.header.header_size
                for record in reader.chunks(decode=False, start=start, expected_first=cursor.events):
                    if not record.ok:
                        break   # damaged, or its payload is still being written (jbtrace check says more)
                    cursor.events = record.header.first + record.header.count
                    cursor.chunks += 1
                    cursor.offset = record.header.end
                return reader.size
        except TraceError:
            try:
                return os.lstat(path).st_size
            except OSError:
                return 0
