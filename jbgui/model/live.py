"""Progress of a trace while the program runs: threads, classes, events and bytes so far, read
from the trace directory the agent is writing (docs/trace-format.md).

Each poll reads only what was appended since the last one: new lines of threads.jsonl, new bytes
of static.xml (counting ``<class `` openings), new chunk headers of each stream (their event
counts; a chunk still being written is counted once it is whole). Nothing here raises for a file
that is missing, growing or cut: the agent is writing while we read.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from jbgui.model import layout
from jbgui.model.tracedir import _CHUNK_HEADER, _STREAM_HEADER

_CLASS_TAG = b"<class "


@dataclass
class _StreamCursor:
    offset: int = 0          # where the next chunk header starts (0: stream header not read yet)
    events: int = 0


@dataclass
class LiveProgress:
    """Incremental reader of a growing trace directory; :meth:`poll` returns the totals so far."""

    trace_dir: Path
    _threads: int = 0
    _thread_offset: int = 0
    _classes: int = 0
    _static_offset: int = 0
    _static_tail: bytes = b""
    _streams: dict[str, _StreamCursor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.trace_dir = Path(self.trace_dir)

    def poll(self) -> dict:
        """``{"threads", "classes", "events", "bytes", "status"}`` (status: None before trace.json
        exists, then "running" or "complete")."""
        self._read_threads()
        self._read_static()
        events = 0
        size = 0
        events_dir = self.trace_dir / "events"
        try:
            names = [e for e in os.listdir(events_dir) if e.endswith(".jbt")]
        except OSError:
            names = []
        for name in names:
            path = events_dir / name
            cursor = self._streams.setdefault(name, _StreamCursor())
            size += self._read_stream(path, cursor)
            events += cursor.events
        return {"threads": self._threads, "classes": self._classes, "events": events, "bytes": size,
                "status": self._status()}

    # ------------------------------------------------------------------ pieces

    def _status(self) -> str | None:
        try:
            return json.loads((self.trace_dir / "trace.json").read_text()).get("status")
        except (OSError, ValueError, AttributeError):
            return None  # not written yet, or being rewritten at this moment

    def _read_threads(self) -> None:
        path = self.trace_dir / "threads.jsonl"
        try:
            with open(path, "rb") as f:
                f.seek(self._thread_offset)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1  # a partial last line waits for the next poll
        for line in data[:end].splitlines():
            if b'"kind": "start"' in line or b'"kind":"start"' in line:
                self._threads += 1
        self._thread_offset += end

    def _read_static(self) -> None:
        path = self.trace_dir / "static.xml"
        try:
            with open(path, "rb") as f:
                f.seek(self._static_offset)
                data = f.read()
        except OSError:
            return
        if not data:
            return
        # The tail kept from the last poll is shorter than the tag, so it holds no whole tag: a tag
        # split between two polls is counted once, in the poll that completes it.
        text = self._static_tail + data
        self._classes += text.count(_CLASS_TAG)
        self._static_tail = text[-(len(_CLASS_TAG) - 1):]
        self._static_offset += len(data)

    def _read_stream(self, path: Path, cursor: _StreamCursor) -> int:
        """Read the chunk headers appended since the last poll; returns the file's size."""
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if cursor.offset == 0:
                    head = f.read(layout.STREAM_HEADER_SIZE)
                    if len(head) < layout.STREAM_HEADER_SIZE or head[:4] != layout.STREAM_MAGIC:
                        return size
                    cursor.offset = _STREAM_HEADER.unpack_from(head, 0)[2]
                while cursor.offset + layout.CHUNK_HEADER_SIZE <= size:
                    f.seek(cursor.offset)
                    header = f.read(layout.CHUNK_HEADER_SIZE)
                    magic, _c, _f, _fl, count, length, _first, _crc, _r = _CHUNK_HEADER.unpack_from(header, 0)
                    if magic != layout.CHUNK_MAGIC:
                        break
                    if cursor.offset + layout.CHUNK_HEADER_SIZE + length > size:
                        break  # still being written
                    cursor.events += count
                    cursor.offset += layout.CHUNK_HEADER_SIZE + length
                return size
        except OSError:
            return 0
