"""Facts about a recorded trace, for the recorder's behaviour tests.

:class:`TraceFacts` opens a trace directory with the project's own reader
(``jbgui.model.tracedir``) and answers the questions the tests ask: how many times did this
method start, end normally, or leave by an exception, on which thread; which blocks ran. Word
layout constants come from ``jbgui.model.layout``, which a test of the model checks against the
agent's ``EventLayout.java``.
"""

from __future__ import annotations

import struct
from functools import cached_property
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model.layout import (
    BLOCKS_PER_PAGE,
    EXT_EXCEPTION_EXIT,
    EXT_THREAD_SWITCH,
    EXT_THROWABLE,
    MAX_METHOD_ID,
    METHOD_SHIFT,
    SUBTYPE_SHIFT,
    TYPE_BLOCK,
    TYPE_METHOD_START,
    TYPE_SHIFT,
    VALUE_MASK,
)
from jbgui.model.tracedir import TraceDir, decode_payload


# The first fields of a chunk header (docs/trace-format.md, "Event stream files"): magic, codec,
# filter, flags, number of events, payload length.
CHUNK_HEADER = struct.Struct("<4sBBHII")


def exception_exit_word(method_id: int) -> int:
    return layout.extended(EXT_EXCEPTION_EXIT, method_id)


def unmark(words: np.ndarray) -> np.ndarray:
    """``words`` (uint32) with the START_RECEIVER_OWN mark cleared in start words."""
    marked = ((words >> TYPE_SHIFT) == TYPE_METHOD_START) & ((words & np.uint32(layout.START_RECEIVER_OWN)) != 0)
    return np.where(marked, words & np.uint32(~layout.START_RECEIVER_OWN & 0xFFFFFFFF), words).astype(np.uint32)


class TraceFacts:
    """Counts and sequences of events in one trace directory."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.trace = TraceDir(self.path)
        self._events: dict[int, np.ndarray] = {}

    @cached_property
    def metadata(self) -> dict:
        return self.trace.metadata

    # Threads ---------------------------------------------------------------------------------

    @cached_property
    def thread_rows(self) -> list[dict]:
        """One dict per thread: its start record, updated by its end record (``alive_at_exit``)."""
        return list(self.trace.threads)

    @cached_property
    def thread_indices(self) -> list[int]:
        """Threads with an event stream."""
        return self.trace.stream_indices()

    def thread_names(self) -> list[str]:
        """Names as the threads had them when they started (a thread may rename itself)."""
        return [row.get("name") for row in self.thread_rows]

    def thread(self, name: str) -> int:
        """The index of the one thread called ``name``."""
        indices = [row["index"] for row in self.thread_rows if row.get("name") == name]
        assert len(indices) == 1, f"expected one thread named {name!r}, found {indices}: {self.thread_names()}"
        return indices[0]

    def thread_row(self, index: int) -> dict:
        return next(row for row in self.thread_rows if row["index"] == index)

    def events(self, thread: int) -> np.ndarray:
        if thread not in self._events:
            words = self.trace.stream_events(thread)
            assert words.dtype == np.uint32, words.dtype
            self._events[thread] = words
        return self._events[thread]

    def all_events(self) -> list[tuple[int, np.ndarray]]:
        return [(t, self.events(t)) for t in self.thread_indices]

    # Methods ---------------------------------------------------------------------------------

    @property
    def methods(self):
        """Method id -> ``jbgui.model.tracedir.MethodInfo``."""
        return self.trace.methods

    def method_ids(self, class_name: str, method: str, desc: str | None = None) -> list[int]:
        """Ids of every method ``class_name.method`` (any loader), optionally of one descriptor."""
        return sorted(m.id for m in self.trace.find_methods(class_name, method, desc))

    def method_id(self, class_name: str, method: str, desc: str | None = None) -> int:
        ids = self.method_ids(class_name, method, desc)
        assert len(ids) == 1, f"expected one method {class_name}.{method}{desc or ''}, found ids {ids}"
        return ids[0]

    def attributes(self, method_id: int) -> dict:
        """The ``<method>`` element's attributes in static.xml."""
        return self.methods[method_id].attrs

    def class_attributes(self, method_id: int) -> dict:
        """The attributes of the ``<class>`` element that holds a method."""
        return self.trace.classes[self.methods[method_id].class_id].attrs

    def class_of(self, method_id: int) -> str:
        return self.methods[method_id].class_name

    def class_name(self, class_id: int | None) -> str | None:
        """The name of a class id (of CLASS_LOAD, RECEIVER, THROWABLE words); None if unknown."""
        info = self.trace.classes.get(class_id) if class_id is not None else None
        return info.name if info is not None else None

    def throwable_names(self, thread: int, method_id: int) -> list[str | None]:
        """For each exceptional exit of a method: the class name its THROWABLE word gives."""
        return [self.class_name(c) for c in self.throwables_after_exits(thread, method_id)]

    # Counting --------------------------------------------------------------------------------
    # Start words are compared without their START_RECEIVER_OWN mark (a receiver of the method's
    # own class, format version 2): the same call, whatever its receiver.

    def unmarked(self, thread: int) -> np.ndarray:
        """One thread's words with start words unmarked (see above)."""
        return unmark(self.events(thread))

    def _count_word(self, word: int, thread: int | None) -> int:
        threads = [thread] if thread is not None else self.thread_indices
        return sum(int(np.count_nonzero(self.unmarked(t) == np.uint32(word))) for t in threads)

    def starts(self, method_id: int, thread: int | None = None) -> int:
        return self._count_word(layout.method_start(method_id), thread)

    def ends(self, method_id: int, thread: int | None = None) -> int:
        return self._count_word(layout.method_end(method_id), thread)

    def exception_exits(self, method_id: int, thread: int | None = None) -> int:
        return self._count_word(exception_exit_word(method_id), thread)

    def frames(self, method_id: int, thread: int | None = None) -> tuple[int, int, int]:
        """(starts, normal ends, exceptional exits) of a method."""
        return (
            self.starts(method_id, thread),
            self.ends(method_id, thread),
            self.exception_exits(method_id, thread),
        )

    def call_sequence(self, thread: int, method_ids: list[int]) -> list[str]:
        """The start/end/exception-exit words of the given methods on one thread, in order, as
        readable tokens: ``S<id>``, ``E<id>``, ``X<id>``."""
        words = self.unmarked(thread)
        names = {}
        for mid in method_ids:
            names[layout.method_start(mid)] = f"S{mid}"
            names[layout.method_end(mid)] = f"E{mid}"
            names[exception_exit_word(mid)] = f"X{mid}"
        wanted = np.isin(words, np.array(list(names), dtype=np.uint32))
        return [names[int(w)] for w in words[wanted]]

    def block_words(self, thread: int, method_id: int, pages: int = 1) -> np.ndarray:
        """The block words of one method (all its pages) on one thread, in order."""
        words = self.events(thread)
        is_block = (words >> TYPE_SHIFT) == TYPE_BLOCK
        owner = (words >> METHOD_SHIFT) & MAX_METHOD_ID
        mine = is_block & (owner >= method_id) & (owner < method_id + pages)
        return words[mine]

    def block_indices(self, thread: int, method_id: int, pages: int = 1) -> list[int]:
        """The block indices (within the method, pages undone) of one method on one thread."""
        words = self.block_words(thread, method_id, pages).astype(np.int64)
        page = ((words >> METHOD_SHIFT) & MAX_METHOD_ID) - method_id
        return (page * BLOCKS_PER_PAGE + (words & (BLOCKS_PER_PAGE - 1))).tolist()

    def count_type(self, event_type: int) -> int:
        return sum(int(np.count_nonzero((w >> TYPE_SHIFT) == event_type)) for _, w in self.all_events())

    def count_extended(self, subtype: int) -> int:
        """Extended words of one subtype (EXT_*) on all threads."""
        return sum(
            int(np.count_nonzero(((w >> TYPE_SHIFT) == 0) & ((w >> SUBTYPE_SHIFT) == subtype)))
            for _, w in self.all_events()
        )

    def started_methods(self) -> set[int]:
        """Ids of the methods that started at least once, on any thread."""
        started: set[int] = set()
        for _, words in self.all_events():
            starts = words[(words >> TYPE_SHIFT) == TYPE_METHOD_START]
            started.update(np.unique((starts >> METHOD_SHIFT) & MAX_METHOD_ID).tolist())
        return started

    def count_words_chunkwise(self, thread: int, words: list[int]) -> dict[int, int]:
        """How often each of ``words`` occurs in one thread's stream, decoding one chunk at a
        time: for traces of billions of events, which do not fit in memory at once."""
        wanted = np.array(words, dtype=np.uint32)
        counts = np.zeros(len(words), dtype=np.int64)
        for codec, filt, count, payload in self.raw_chunks(thread):
            decoded = unmark(decode_payload(payload, codec, filt, count))
            counts += (decoded[:, None] == wanted[None, :]).sum(axis=0)
        return dict(zip(words, counts.tolist()))

    def raw_chunks(self, thread: int):
        """One thread's chunks as written: (codec, filter, event count, payload bytes) each."""
        with open(self.trace.stream_path(thread), "rb") as stream:
            header = stream.read(layout.STREAM_HEADER_SIZE)
            assert header[:4] == layout.STREAM_MAGIC
            while True:
                chunk = stream.read(layout.CHUNK_HEADER_SIZE)
                if len(chunk) < layout.CHUNK_HEADER_SIZE:
                    break
                magic, codec, filt, _flags, count, length = CHUNK_HEADER.unpack_from(chunk)
                assert magic == layout.CHUNK_MAGIC, f"bad chunk magic at {stream.tell() - len(chunk)}"
                yield codec, filt, count, stream.read(length)

    def chunk_codecs(self) -> set[int]:
        """The codecs (layout.CODEC_*) of every thread's chunks."""
        return {codec for thread in self.thread_indices for codec, _f, _n, _p in self.raw_chunks(thread)}

    def shared_by_thread(self) -> tuple[np.ndarray, np.ndarray]:
        """Mode 1: the shared stream's words without THREAD_SWITCH words, and for each the thread
        index that the last THREAD_SWITCH before it named."""
        words = self.trace.shared_stream().events
        is_switch = ((words >> TYPE_SHIFT) == 0) & ((words >> SUBTYPE_SHIFT) == EXT_THREAD_SWITCH)
        switch_at = np.flatnonzero(is_switch)
        assert len(switch_at) and switch_at[0] == 0, "a shared stream starts with a THREAD_SWITCH"
        # The switch in force at each position: the last switch at or before it.
        owner = (words[switch_at] & VALUE_MASK)[np.searchsorted(switch_at, np.arange(len(words)), side="right") - 1]
        return words[~is_switch], owner[~is_switch].astype(np.int64)

    def block_events(self) -> int:
        """Block events of all threads."""
        return self.count_type(TYPE_BLOCK)

    def words_after(self, thread: int, word: int) -> list[int]:
        """The word that directly follows each occurrence of ``word`` on a thread."""
        words = self.events(thread)
        at = np.flatnonzero(words == np.uint32(word))
        at = at[at + 1 < len(words)]
        return [int(w) for w in words[at + 1]]

    def throwables_after_exits(self, thread: int, method_id: int) -> list[int | None]:
        """For each exceptional exit of a method: the class id of the THROWABLE word right after
        it, or None when the next word is something else."""
        found = []
        for word in self.words_after(thread, exception_exit_word(method_id)):
            is_throwable = word >> TYPE_SHIFT == 0 and word >> SUBTYPE_SHIFT == EXT_THROWABLE
            found.append(word & VALUE_MASK if is_throwable else None)
        return found


@pytest.fixture(scope="session")
def facts():
    """``facts(trace_dir) -> TraceFacts``, cached per trace directory."""
    cache: dict[Path, TraceFacts] = {}

    def open_(trace_dir: Path) -> TraceFacts:
        trace_dir = Path(trace_dir)
        if trace_dir not in cache:
            cache[trace_dir] = TraceFacts(trace_dir)
        return cache[trace_dir]

    return open_
