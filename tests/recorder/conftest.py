"""Facts about a recorded trace, for the recorder's behaviour tests.

:class:`TraceFacts` opens a trace directory with the project's own reader (``jbgui.model``) and
answers the questions the tests ask: how many times did this method start, end normally, or
leave by an exception, on which thread; which blocks ran. Event words are decoded here from
docs/trace-format.md rather than through the reader's decoder, so the tests check the recorder
against the written contract.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np
import pytest

# docs/trace-format.md, "Event words".
TYPE_SHIFT = 30
METHOD_SHIFT = 11
METHOD_MASK = (1 << 19) - 1
BLOCK_MASK = (1 << 11) - 1
BLOCKS_PER_PAGE = 1 << 11
TYPE_METHOD_START = 1
TYPE_METHOD_END = 2
TYPE_BLOCK = 3
SUBTYPE_SHIFT = 27
VALUE_MASK = (1 << SUBTYPE_SHIFT) - 1
EXT_CLASS_LOAD = 0
EXT_RECEIVER = 1
EXT_EXCEPTION_EXIT = 2
EXT_THREAD_SWITCH = 3
EXT_THROWABLE = 4


def start_word(method_id: int) -> int:
    return (TYPE_METHOD_START << TYPE_SHIFT) | (method_id << METHOD_SHIFT)


def end_word(method_id: int) -> int:
    return (TYPE_METHOD_END << TYPE_SHIFT) | (method_id << METHOD_SHIFT)


def extended_word(subtype: int, value: int) -> int:
    return (subtype << SUBTYPE_SHIFT) | value


def exception_exit_word(method_id: int) -> int:
    return extended_word(EXT_EXCEPTION_EXIT, method_id)


def block_word(method_id: int, block_index: int) -> int:
    """The word of block ``block_index`` of the method whose first id is ``method_id`` (paged)."""
    page, index = divmod(block_index, BLOCKS_PER_PAGE)
    return (TYPE_BLOCK << TYPE_SHIFT) | ((method_id + page) << METHOD_SHIFT) | index


class TraceFacts:
    """Counts and sequences of events in one trace directory."""

    EXT_CLASS_LOAD = EXT_CLASS_LOAD
    EXT_RECEIVER = EXT_RECEIVER
    EXT_EXCEPTION_EXIT = EXT_EXCEPTION_EXIT
    EXT_THROWABLE = EXT_THROWABLE

    def __init__(self, path: Path):
        from jbgui.model.tracedir import TraceDir

        self.path = Path(path)
        self.trace = TraceDir(self.path)
        self._events: dict[int, np.ndarray] = {}

    @cached_property
    def metadata(self) -> dict:
        return self.trace.metadata

    # Threads ---------------------------------------------------------------------------------

    @cached_property
    def thread_rows(self) -> list[dict]:
        return list(self.trace.threads)

    @cached_property
    def thread_indices(self) -> list[int]:
        return sorted({row["index"] for row in self.thread_rows})

    def thread_names(self) -> list[str]:
        """Names as the threads had them when they started (a thread may rename itself)."""
        return [row["name"] for row in self.thread_rows if row.get("kind", "start") == "start"]

    def thread(self, name: str) -> int:
        """The index of the one thread called ``name``."""
        indices = {
            row["index"] for row in self.thread_rows if row.get("name") == name
        }
        assert len(indices) == 1, f"expected one thread named {name!r}, found {sorted(indices)}: {self.thread_names()}"
        return indices.pop()

    def events(self, thread: int) -> np.ndarray:
        if thread not in self._events:
            words = np.asarray(self.trace.stream_events(thread))
            assert words.dtype == np.uint32, words.dtype
            self._events[thread] = words
        return self._events[thread]

    def all_events(self) -> list[tuple[int, np.ndarray]]:
        return [(t, self.events(t)) for t in self.thread_indices]

    # Methods ---------------------------------------------------------------------------------

    @cached_property
    def methods(self) -> dict[int, tuple]:
        return dict(self.trace.methods)

    def method_ids(self, class_name: str, method: str, desc: str | None = None) -> list[int]:
        """Ids of every method ``class_name.method`` (any loader), optionally of one descriptor."""
        return sorted(
            mid
            for mid, (cls, name, descriptor, *_rest) in self.methods.items()
            if cls == class_name and name == method and (desc is None or descriptor == desc)
        )

    def method_id(self, class_name: str, method: str, desc: str | None = None) -> int:
        ids = self.method_ids(class_name, method, desc)
        assert len(ids) == 1, f"expected one method {class_name}.{method}{desc or ''}, found ids {ids}"
        return ids[0]

    def attributes(self, method_id: int) -> dict:
        entry = self.methods[method_id]
        return entry[3] if len(entry) > 3 else {}

    # Counting --------------------------------------------------------------------------------

    def _count_word(self, word: int, thread: int | None) -> int:
        threads = [thread] if thread is not None else self.thread_indices
        return sum(int(np.count_nonzero(self.events(t) == np.uint32(word))) for t in threads)

    def starts(self, method_id: int, thread: int | None = None) -> int:
        return self._count_word(start_word(method_id), thread)

    def ends(self, method_id: int, thread: int | None = None) -> int:
        return self._count_word(end_word(method_id), thread)

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
        words = self.events(thread)
        names = {}
        for mid in method_ids:
            names[start_word(mid)] = f"S{mid}"
            names[end_word(mid)] = f"E{mid}"
            names[exception_exit_word(mid)] = f"X{mid}"
        wanted = np.isin(words, np.array(list(names), dtype=np.uint32))
        return [names[int(w)] for w in words[wanted]]

    def block_words(self, thread: int, method_id: int, pages: int = 1) -> np.ndarray:
        """The block words of one method (all its pages) on one thread, in order."""
        words = self.events(thread)
        is_block = (words >> TYPE_SHIFT) == TYPE_BLOCK
        owner = (words >> METHOD_SHIFT) & METHOD_MASK
        mine = is_block & (owner >= method_id) & (owner < method_id + pages)
        return words[mine]

    def block_indices(self, thread: int, method_id: int, pages: int = 1) -> list[int]:
        """The block indices (within the method, pages undone) of one method on one thread."""
        words = self.block_words(thread, method_id, pages).astype(np.int64)
        page = ((words >> METHOD_SHIFT) & METHOD_MASK) - method_id
        return (page * BLOCKS_PER_PAGE + (words & BLOCK_MASK)).tolist()

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
            started.update(np.unique((starts >> METHOD_SHIFT) & METHOD_MASK).tolist())
        return started

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
