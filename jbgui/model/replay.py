"""Replay one thread's stream into columnar call-tree files, in bounded memory.

Drives :mod:`jbgui.model.replay_kernel` batch by batch: it hands the kernel decoded events, and
when the kernel stops because a buffer is full, flushes rows to the column files, sets aside
patches (end fields of rows that were flushed while their frame was still open), or grows a
table. Memory use is the batch plus the buffers, whatever the stream's length.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from queue import Empty, Queue
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model import replay_kernel as K
from jbgui.model import store as S
from jbgui.model.prefetch import prefetch
from jbgui.model.statics import Statics
from jbgui.model.tracedir import iter_stream, stream_event_count

# On-disk type of each row column (the kernel works in int64). Columns holding event or row
# indices are narrowed to 32 bits for a stream of fewer than 2**31 events (NARROW): a fifth less
# to write and to read back.
COLUMNS: dict[str, tuple[int, str]] = {
    "method": (K.COL_METHOD, "<i4"),
    "parent": (K.COL_PARENT, "<i8"),
    "depth": (K.COL_DEPTH, "<i4"),
    "first": (K.COL_FIRST, "<i8"),
    "last": (K.COL_LAST, "<i8"),
    "flags": (K.COL_FLAGS, "<i4"),
    "call_site": (K.COL_SITE, "<i4"),
    "caller_block": (K.COL_CALLER_BLOCK, "<i4"),
    "receiver": (K.COL_RECEIVER, "<i4"),
    "exc_class": (K.COL_EXC_CLASS, "<i4"),
    "incl_blocks": (K.COL_INCL_BLOCKS, "<i8"),
    "incl_bytecodes": (K.COL_INCL_BYTECODES, "<i8"),
    "end": (K.COL_END, "<i8"),
}

NARROW = ("parent", "first", "last", "end", "incl_blocks")
NARROW_LIMIT = (1 << 31) - 1


def column_dtypes(events: int) -> dict[str, str]:
    """The on-disk type of each column for a stream of ``events`` events."""
    narrow = events <= NARROW_LIMIT
    return {name: ("<i4" if narrow and name in NARROW else dtype) for name, (_col, dtype) in COLUMNS.items()}


BATCH_EVENTS = 1 << 22
ROWS_BUFFER = 1 << 18


class Cancelled(Exception):
    """Replay was cancelled by its caller."""


def kernel_statics(st: Statics) -> K.Static:
    """The arrays the kernel reads, in the kernel's layout."""
    n_b = st.n_blocks
    blk = np.zeros((n_b + 1, 5), np.int64)
    if n_b:
        blk[:n_b, K.B_METHOD] = st.b_method
        blk[:n_b, K.B_BC] = st.b_metrics[:, 0]
        blk[:n_b, K.B_IS_HANDLER] = st.b_is_handler
    blk[n_b, K.B_METHOD] = -1
    blk[:, K.B_SITE0] = st.b_site_begin
    blk[:, K.B_HND0] = st.b_handler_begin
    sites = np.zeros((max(st.n_sites, 1), 4), np.int64)
    sites[:st.n_sites, K.SI_KIND] = st.s_kind
    sites[:st.n_sites, K.SI_KEY] = st.s_key
    sites[:st.n_sites, K.SI_TARGET] = st.s_target
    sites[:st.n_sites, K.SI_STEP] = beside_waits(st)
    hnd = np.zeros((max(len(st.h_block), 1), 2), np.int64)
    hnd[:len(st.h_block), K.H_TARGET] = st.h_target
    hnd[:len(st.h_block), K.H_CATCH_ALL] = st.h_catch_all
    meth = np.zeros((len(st.m_key), 4), np.int64)
    meth[:, K.MT_KEY] = st.m_key
    meth[:, K.MT_FLAGS] = st.m_flags
    meth[:, K.MT_BLOCKS] = st.m_blocks
    meth[:, K.MT_CLASS] = st.m_class  # the receiver of a start marked START_RECEIVER_OWN
    for mid in range(1, len(st.m_name)):
        name = st.m_name[mid]
        if (name == "loadClass" and st.m_desc[mid] == "(Ljava/lang/String;)Ljava/lang/Class;") or \
                st.class_of_method(mid) == "java/lang/invoke/MethodHandleNatives":
            meth[mid, K.MT_FLAGS] |= K.M_UPCALL
        elif name.startswith("lambda$"):
            meth[mid, K.MT_FLAGS] |= K.M_LAMBDA_BODY   # javac's lambda bodies
    sites_per_block = np.diff(st.b_site_begin)
    return K.Static(page_base=st.page_base.astype(np.int64), blk=blk, sites=sites, hnd=hnd, meth=meth,
                    max_sites=int(sites_per_block.max()) if len(sites_per_block) else 0)


def beside_waits(st: Statics) -> np.ndarray:
    """Per call site, the flag its synthetic row gets for where it ran against a wait beside it
    (``K.F_BEFORE_WAIT``, ``K.F_AFTER_WAIT``, or 0): a native or untraced call in the block of a
    blocking native (``s_blocking``, the calls the recorder stamps) or of a ``monitorenter``
    (``b_monitor``, stamped when it waited), with only such calls between. None of them records
    an event, so replay puts them all at the event the wait's stamps lie at, and the stamps
    measured the wait (JDK 17's ``LOCK.wait(ms)`` then the loop's ``System.nanoTime()`` in one
    block: both took the 120 ms wait; ``t = System.nanoTime(); synchronized (lock)`` gave the
    nanoTime the time it waited for the lock). After one wait and before another, a call is after."""
    out = np.zeros(st.n_sites, np.int64)
    blocking = np.asarray(st.s_blocking, np.bool_)
    silent = np.isin(st.s_kind, (K.SITE_NATIVE, K.SITE_UNTRACED))     # never starts: records no event
    begin = st.b_site_begin
    # each wait as (its block, where the sites before it end, where those after it begin): a
    # blocking call is itself neither, a monitorenter lies between two sites
    calls = np.flatnonzero(blocking & silent)
    monitors = np.flatnonzero(np.asarray(st.b_monitor) >= 0)
    waits = [(int(st.s_block[b]), b, b + 1) for b in calls.tolist()]
    for gb in monitors.tolist():
        at = int(begin[gb]) + int(st.b_monitor[gb])
        waits.append((gb, at, at))
    for gb, before_end, after_start in waits:
        lo, hi = int(begin[gb]), int(begin[gb + 1])
        q = before_end - 1
        while q >= lo and silent[q] and not blocking[q]:
            if not out[q]:
                out[q] = K.F_BEFORE_WAIT
            q -= 1
        q = after_start
        while q < hi and silent[q] and not blocking[q]:
            out[q] = K.F_AFTER_WAIT
            q += 1
    return out


def _table(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(n, K.EMPTY, np.int64), np.zeros(n, np.int64)


def new_state(st: Statics) -> K.State:
    n_sites = max(st.n_sites, 1)
    edge_k, edge_v = _table(1 << 16)
    recv_k, recv_v = _table(1 << 12)
    return K.State(
        sc=np.zeros(K.N_SCALARS, np.int64), st=np.zeros((1 << 12, K.N_ST), np.int64),
        rows=np.zeros((K.N_COLS, ROWS_BUFFER), np.int64), patches=np.zeros((1 << 16, 3), np.int64),
        exc=np.zeros((1 << 12, 5), np.int64), loads=np.zeros((1 << 12, 2), np.int64),
        ep=np.zeros((1 << 12, 2), np.int64), counts=np.zeros(max(st.n_blocks, 1), np.int64),
        sstat=np.zeros((n_sites, 3), np.int64), edge_k=edge_k, edge_v=edge_v, recv_k=recv_k, recv_v=recv_v)


def _grow(arr: np.ndarray) -> np.ndarray:
    shape = (len(arr) * 2,) + arr.shape[1:]
    out = np.zeros(shape, arr.dtype)
    out[:len(arr)] = arr
    return out


@dataclass
class ThreadResult:
    """What replaying one stream produced besides the row columns."""

    rows: int = 0
    events: int = 0
    thread_ended: bool = False
    exceptions: np.ndarray = field(default_factory=lambda: np.zeros((0, 5), np.int64))
    loads: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    counts: np.ndarray | None = None
    problems: list[str] = field(default_factory=list)
    unknown_ids: int = 0
    inferred_exits: int = 0
    no_start: int = 0
    dtypes: dict[str, str] = field(default_factory=dict)
    patches: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.int64))
    blocks: list[int] = field(default_factory=list)           # rows per stored block
    frames: dict[str, list[int]] = field(default_factory=dict)  # compressed size per block, per column


class _ColumnWriter:
    """Converts flushed row buffers to their column types and compresses them into the store
    (:class:`jbgui.model.store.ColumnWriter`) on a thread of its own, so that both overlap the
    replay; at most a few buffers wait (bounded memory). The kernel's buffer itself is handed
    over, and a free one taken in its place (:meth:`swap`): the replay's thread copies nothing."""

    BUFFERS = 4         # in the kernel's hands, queued, being converted

    def __init__(self, directory: Path, dtypes: dict[str, str]):
        self.store = S.ColumnWriter(directory, dtypes)
        self.dtypes = dtypes
        self.queue: Queue = Queue(maxsize=self.BUFFERS - 2)
        self.free: Queue = Queue()
        self.made = 1       # the kernel's first buffer is the state's
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="jbgui-columns", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            rows, n = item
            if self.error is None:
                try:
                    self.store.write({name: rows[col, :n].astype(self.dtypes[name])
                                      for name, (col, _d) in COLUMNS.items()})
                except BaseException as error:  # reported by swap() or close()
                    self.error = error
            self.free.put(rows)

    def swap(self, rows: np.ndarray, n: int) -> np.ndarray:
        """Hand over the first ``n`` rows of the buffer ``rows``; returns a buffer of the same
        shape to go on with (its contents are not cleared: the kernel writes every column of a
        row it opens)."""
        if self.error is not None:
            raise self.error
        self.queue.put((rows, n))
        try:
            spare = self.free.get_nowait()
        except Empty:
            if self.made < self.BUFFERS:
                self.made += 1
                return np.empty_like(rows)
            spare = self.free.get()
        if spare.shape != rows.shape:       # the kernel's buffer grew meanwhile
            return np.empty_like(rows)
        return spare

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        self.store.close()
        if self.error is not None:
            raise self.error

    def abort(self) -> None:
        """Stop without raising (the replay failed or was cancelled); the caller removes the files."""
        self.error = self.error or Cancelled()
        self.queue.put(None)
        self.thread.join()
        self.store.abort()


class ThreadReplayer:
    """Replays one stream into the compressed column files of ``out_dir`` (:mod:`jbgui.model.store`)."""

    def __init__(self, statics: Statics, kstatic: K.Static, state: K.State, out_dir: Path,
                 dtypes: dict[str, str] | None = None):
        self.statics = statics
        self.S = kstatic
        self.T = state
        self.out_dir = out_dir
        self.dtypes = dtypes or column_dtypes(0)
        out_dir.mkdir(parents=True, exist_ok=True)
        self.writer = _ColumnWriter(out_dir, self.dtypes)
        self.patches: list[np.ndarray] = []
        self.exc: list[np.ndarray] = []
        self.loads: list[np.ndarray] = []

    # ------------------------------------------------------------------ buffer handling

    def _flush_rows(self) -> None:
        T = self.T
        n = int(T.sc[K.S_NEXT_ROW] - T.sc[K.S_BUF_BASE])
        if n:
            self.T = T = T._replace(rows=self.writer.swap(T.rows, n))
        T.sc[K.S_BUF_BASE] = T.sc[K.S_NEXT_ROW]

    def _drain(self) -> None:
        T = self.T
        n = int(T.sc[K.S_N_PATCHES])
        if n:
            self.patches.append(T.patches[:n].copy())
            T.sc[K.S_N_PATCHES] = 0
        n = int(T.sc[K.S_N_EXC])
        if n:
            self.exc.append(T.exc[:n].copy())
            T.sc[K.S_N_EXC] = 0
        n = int(T.sc[K.S_N_LOADS])
        if n:
            self.loads.append(T.loads[:n].copy())
            T.sc[K.S_N_LOADS] = 0

    def _make_room(self, code: int) -> None:
        T = self.T
        if code == K.ROWS_FULL:
            self._flush_rows()
        elif code in (K.PATCHES_FULL, K.EXC_FULL, K.LOADS_FULL):
            before = (int(T.sc[K.S_N_PATCHES]), int(T.sc[K.S_N_EXC]), int(T.sc[K.S_N_LOADS]))
            self._drain()
            if before == (0, 0, 0) or code == K.PATCHES_FULL and before[0] == 0:
                self.T = T._replace(patches=_grow(T.patches))
        elif code == K.EPISODE_FULL:
            self.T = T._replace(ep=_grow(T.ep))
        elif code == K.STACK_FULL:
            self.T = T._replace(st=_grow(T.st))
        elif code == K.EDGES_FULL:
            keys, vals = K.rehash(T.edge_k, T.edge_v, 2 * len(T.edge_k))
            self.T = T._replace(edge_k=keys, edge_v=vals)
        elif code == K.RECV_FULL:
            keys, vals = K.rehash(T.recv_k, T.recv_v, 2 * len(T.recv_k))
            self.T = T._replace(recv_k=keys, recv_v=vals)
        # the kernel's capacity checks are conservative; a buffer that is empty yet too small grows
        if code == K.ROWS_FULL and self.T.sc[K.S_NEXT_ROW] == self.T.sc[K.S_BUF_BASE]:
            if self.S.max_sites + 8 > self.T.rows.shape[1]:
                rows = np.zeros((K.N_COLS, 2 * self.T.rows.shape[1]), np.int64)
                self.T = self.T._replace(rows=rows)

    # ------------------------------------------------------------------ running

    def feed(self, words: np.ndarray, first: int) -> None:
        self.T.sc[K.S_POS] = 0
        while True:
            code = K.replay(self.S, self.T, words, first)
            if code == K.DONE:
                return
            self._make_room(code)

    def cut(self, first: int) -> None:
        self._ensure_finish_room()
        K.cut(self.S, self.T, first - 1)

    def _ensure_finish_room(self) -> None:
        T = self.T
        self._drain()
        need = 8 * (int(T.sc[K.S_DEPTH]) + int(T.sc[K.S_N_EPISODE]) + 8)
        while len(self.T.patches) < need:
            self.T = self.T._replace(patches=_grow(self.T.patches))
        while len(self.T.ep) < int(T.sc[K.S_N_EPISODE]) + int(T.sc[K.S_DEPTH]) + 8:
            self.T = self.T._replace(ep=_grow(self.T.ep))

    def finish(self, thread_ended: bool, result: ThreadResult) -> None:
        self._ensure_finish_room()
        K.finish(self.S, self.T, thread_ended)
        self._flush_rows()
        self._drain()
        self.writer.close()
        T = self.T
        rows = int(T.sc[K.S_NEXT_ROW])
        # Fields of rows flushed while their frame was open: kept as patches, applied on reading.
        result.patches = S.dedupe_patches(np.concatenate(self.patches)) if self.patches and rows else \
            np.zeros((0, 3), np.int64)
        result.blocks = list(self.writer.store.blocks)
        result.frames = {name: list(f) for name, f in self.writer.store.frames.items()}
        result.rows = rows
        result.thread_ended = thread_ended
        result.exceptions = np.concatenate(self.exc) if self.exc else np.zeros((0, 5), np.int64)
        result.loads = np.concatenate(self.loads) if self.loads else np.zeros((0, 2), np.int64)
        result.counts = T.counts.copy()
        result.unknown_ids = int(T.sc[K.S_UNKNOWN_IDS])
        result.inferred_exits = int(T.sc[K.S_INFERRED])
        result.no_start = int(T.sc[K.S_NO_START])


def reset_thread_state(T: K.State) -> K.State:
    """The same tables, emptied of one thread's stack and rows (edges, receivers and call-site
    counters keep accumulating over threads)."""
    T.sc[:] = 0
    T.counts[:] = 0
    return T


def replay_stream(statics: Statics, kstatic: K.Static, state: K.State, stream: Path, out_dir: Path,
                  progress: Callable[[int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None,
                  events: int | None = None) -> tuple[ThreadResult, K.State]:
    """Replay one per-thread stream file; returns its result and the (possibly grown) state.
    ``events``: the stream's event count (:func:`stream_event_count`), when the caller has it."""
    result = ThreadResult()
    result.dtypes = column_dtypes(stream_event_count(stream) if events is None else events)
    replayer = ThreadReplayer(statics, kstatic, reset_thread_state(state), out_dir, result.dtypes)
    try:
        return _replay_stream(replayer, result, stream, progress, cancelled)
    except BaseException:
        replayer.writer.abort()
        raise


def _replay_stream(replayer: ThreadReplayer, result: ThreadResult, stream: Path,
                   progress: Callable[[int], None] | None,
                   cancelled: Callable[[], bool] | None) -> tuple[ThreadResult, K.State]:
    ended = False
    events = 0
    for first, words, flags, problem in prefetch(iter_stream(stream, BATCH_EVENTS)):
        if cancelled is not None and cancelled():
            raise Cancelled()
        if flags & layout.CHUNK_FLAG_LOST_BEFORE and events:
            replayer.cut(first)
            result.problems.append(f"{stream}: events were lost before event {first}; frames open there "
                                   "are marked truncated")
        if len(words):
            replayer.feed(words, first)
            events = first + len(words)
        if flags & layout.CHUNK_FLAG_LAST:
            ended = True
        if problem:
            result.problems.append(problem)
            ended = False
        if progress is not None:
            progress(len(words))
    result.events = events
    replayer.finish(ended, result)
    return result, replayer.T
