"""Random access to a thread's events, and the blocks one call executed itself.

The analyzer keeps per-block counts for the whole run; the method view also shows them for one
selected call. That needs the call's own events: the BLOCK words between its first and last event
that are not inside one of its callees. Streams are compressed chunk by chunk, so a
:class:`StreamIndex` reads the chunk headers once and then decodes only the chunks a range needs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model.analysis import Analysis, ThreadReplay
from jbgui.model.call_queries import children_in
from jbgui.model.format.chunks import ChunkHeader, StreamReader


class StreamIndex:
    """Where each chunk of a ``.jbt`` file lies, and which events it holds."""

    def __init__(self, path: Path):
        self.path = Path(path)
        headers: list[ChunkHeader] = []
        with StreamReader(self.path) as reader:
            for record in reader.chunks(decode=False):
                if not record.ok:
                    break  # damage or a cut-off end: the analyzer reported it; stop where it stopped
                headers.append(record.header)
        self.headers = headers
        self.offset = np.array([h.payload_offset for h in headers], np.int64)
        self.first = np.array([h.first for h in headers], np.int64)
        self.count = np.array([h.count for h in headers], np.int64)
        self.codec = [h.codec for h in headers]
        self.filter = [h.filter for h in headers]
        self.length = [h.length for h in headers]

    @property
    def events(self) -> int:
        return int(self.first[-1] + self.count[-1]) if len(self.first) else 0

    def chunks(self, lo: int, hi: int):
        """Yield ``(first, words)`` for every chunk holding events of ``[lo, hi)``."""
        if hi <= lo or not len(self.first):
            return
        c0 = max(int(np.searchsorted(self.first, lo, side="right")) - 1, 0)
        c1 = int(np.searchsorted(self.first, hi, side="left"))
        with StreamReader(self.path) as reader:
            for c in range(c0, c1):
                yield int(self.first[c]), reader.payload(self.headers[c])

    def read(self, lo: int, hi: int) -> np.ndarray:
        """Events ``[lo, hi)`` as words (fewer when the stream ends before ``hi``)."""
        parts = []
        for first, words in self.chunks(lo, hi):
            parts.append(words[max(lo - first, 0):max(hi - first, 0)])
        return np.concatenate(parts) if parts else np.zeros(0, np.uint32)


_INDEXES: dict[Path, StreamIndex] = {}
_LOCK = threading.Lock()


def stream_index(analysis: Analysis, thread: ThreadReplay) -> StreamIndex:
    path = analysis.trace.stream_path(thread.index)
    with _LOCK:
        index = _INDEXES.get(path)
        if index is None or index.path.stat().st_size != _size(path):
            index = StreamIndex(path)
            _INDEXES[path] = index
        return index


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def call_block_counts(analysis: Analysis, thread: ThreadReplay, row: int,
                      progress: Callable[[int, int], None] | None = None,
                      cancelled: Callable[[], bool] | None = None) -> dict[int, int]:
    """How often each block (global block index) ran in call ``row`` itself, its callees'
    events left out. Reads only the chunks of the call's event range, one at a time."""
    _row, _stop, sub = thread.calls.subtree(row)     # the call's rows only, not the whole columns
    lo, hi = int(sub["first"][0]), int(sub["last"][0]) + 1
    children = children_in(sub["end"], 0, len(sub["end"]))   # every child, by subtree jumps
    c_first = np.asarray(sub["first"])[children].astype(np.int64)
    c_last = np.asarray(sub["last"])[children].astype(np.int64)
    st = analysis.statics
    page_base = st.page_base.astype(np.int64)
    method = int(sub["method"][0])
    own = np.zeros(max(st.n_blocks, 1), np.int64)
    index = stream_index(analysis, thread)
    done = 0
    for first, words in index.chunks(lo, hi):
        if cancelled is not None and cancelled():
            break
        a, b = max(lo, first), min(hi, first + len(words))
        if b <= a:
            continue
        w = words[a - first:b - first].astype(np.int64)
        # Inside a child: between its first and last event (difference array over the window).
        inside = np.zeros(b - a + 1, np.int64)
        k0 = int(np.searchsorted(c_last, a, side="left"))
        k1 = int(np.searchsorted(c_first, b, side="left"))
        if k1 > k0:
            s = np.clip(c_first[k0:k1], a, b) - a
            e = np.clip(c_last[k0:k1] + 1, a, b) - a
            np.add.at(inside, s, 1)
            np.add.at(inside, e, -1)
        mask = np.cumsum(inside[:-1]) == 0
        blocks = mask & ((w >> layout.TYPE_SHIFT) == layout.TYPE_BLOCK)
        page = (w[blocks] >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
        valid = page < len(page_base)
        base = np.where(valid, page_base[np.minimum(page, len(page_base) - 1)], -1)
        gb = base + (w[blocks] & (layout.BLOCKS_PER_PAGE - 1))
        gb = gb[(base >= 0) & (gb < st.n_blocks)]
        if len(gb):
            own += np.bincount(gb, minlength=len(own))[:len(own)]
        done += b - a
        if progress is not None:
            progress(done, hi - lo)
    blocks_of_method = st.method_blocks(method) if method else range(0)
    return {gb: int(own[gb]) for gb in blocks_of_method if own[gb]}
