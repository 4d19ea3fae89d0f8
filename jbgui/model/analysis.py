"""A replayed trace: per-thread call trees as columns, block and edge counts, receivers,
exceptions, class loads and calling-context trees, cached next to the trace.

``Analysis.open(trace_dir)`` replays every stream once (:mod:`jbgui.model.replay`) and stores the
results in the analysis store (:mod:`jbgui.model.store`: zstd-compressed column chunks, a fraction of
the trace's size) under ``<trace>/analysis/``, or in the user cache directory when the trace
directory is read-only, ``JBGUI_CACHE_DIR`` is set, or the caller asks for it. A second open
checks the stored files (sizes and CRC-32s) and reads only the small ones; call columns are decoded
when first used.

The cache is untrusted input: a stored file that is missing, truncated, altered or of another
version, a ``meta.json`` of the wrong shape, an ``analysis`` that is a regular file or a symlink
are detected, and the trace is replayed again with a note (``Analysis.problems``). The cache is
written only in directories jbgui made (never through a symlink); a failed replay removes only its
own work directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jbgui.model import blocking_times
from jbgui.model import call_summary as CS
from jbgui.model import cct as CCT
from jbgui.model import derived
from jbgui.model import replay as R
from jbgui.model import replay_kernel as K
from jbgui.model import store as S
from jbgui.model.errors import TraceError
from jbgui.model.format.files import open_file
from jbgui.model.format.trace_json import untraced_virtual_threads
from jbgui.model.statics import Statics, load_statics
from jbgui.model.tracedir import TraceDir, stream_event_count

CACHE_FORMAT = 9
# meta.json larger than this is not one jbgui wrote.
MAX_META_BYTES = 64 << 20
# Rows in one stored block at most (the replay flushes its row buffer in blocks).
MAX_BLOCK_ROWS = 1 << 24
# The directory inside a trace (or inside the user cache) that jbgui owns.
CACHE_NAME = "analysis"


class Flag:
    """Row flags of a call (docs/analysis.md)."""

    EXCEPTIONAL = K.F_EXCEPTIONAL
    CAUGHT = K.F_CAUGHT
    UNCAUGHT = K.F_UNCAUGHT
    NATIVE = K.F_NATIVE
    UNTRACED = K.F_UNTRACED
    IMPLICIT = K.F_IMPLICIT
    TRUNCATED = K.F_TRUNCATED
    INFERRED = K.F_INFERRED
    NO_START = K.F_NO_START
    CALLBACK = K.F_CALLBACK
    BEFORE_WAIT = K.F_BEFORE_WAIT
    AFTER_WAIT = K.F_AFTER_WAIT

    # The names ``jbtrace calls`` prints, in its order.
    NAMES = (("exceptional", K.F_EXCEPTIONAL), ("caught", K.F_CAUGHT), ("uncaught", K.F_UNCAUGHT),
             ("native", K.F_NATIVE), ("untraced", K.F_UNTRACED), ("implicit", K.F_IMPLICIT),
             ("truncated", K.F_TRUNCATED))

    @staticmethod
    def names(flags: int) -> list[str]:
        return [name for name, bit in Flag.NAMES if flags & bit]


# catch_row values that are not rows: the exception left the thread; it left a static initializer
# and class initialization consumed it (the JVM then throws an ExceptionInInitializerError).
CATCH_UNCAUGHT = K.CATCH_UNCAUGHT
CATCH_CLASS_INIT = K.CATCH_CLASS_INIT

EXCEPTION_DTYPE = np.dtype([("throw_row", "<i8"), ("catch_row", "<i8"), ("throw_event", "<i8"),
                            ("catch_event", "<i8"), ("exc_class", "<i8")])
LOAD_DTYPE = np.dtype([("event", "<i8"), ("class_id", "<i8")])


class CallTable:
    """One thread's calls in start order (preorder): a column per field, each a numpy array
    decoded from the analysis store on first use.

    Columns: ``method`` (0 for a synthetic call whose target has no method id), ``parent`` (-1 at
    the top), ``depth``, ``first``/``last`` (event indices in the thread's stream), ``flags``
    (:class:`Flag`), ``call_site`` (-1 when no call site matched), ``caller_block``,
    ``receiver`` (class id, 0 unknown), ``exc_class`` (class of the exception that ended it),
    ``incl_blocks``/``incl_bytecodes`` (this call and everything below it), ``end`` (one past the
    last row of its subtree).
    """

    def __init__(self, directory: Path, rows: int, stored: S.StoredColumns | None = None):
        self.directory = directory
        self.rows = rows
        self._stored = stored
        self._lock = threading.Lock()
        if stored is None:
            for name, (_col, dtype) in R.COLUMNS.items():
                setattr(self, name, np.zeros(rows, dtype))

    @classmethod
    def of_replay(cls, directory: Path, result) -> "CallTable":
        """The call table that :func:`jbgui.model.replay.replay_stream` wrote into ``directory``
        (for tools and tests that replay one stream without an :class:`Analysis`)."""
        names = {col: name for name, (col, _d) in R.COLUMNS.items()}
        patches = np.asarray(result.patches, np.int64).reshape(-1, 3)
        stored = S.StoredColumns(directory, result.rows, result.blocks, result.frames, result.dtypes,
                                 S.patches_by_column(patches, names, result.rows)) if result.rows else None
        return cls(directory, result.rows, stored)

    def __getattr__(self, name: str):
        # A column is decoded from the store on first use and kept (an ordinary attribute after).
        if name in R.COLUMNS and "_stored" in self.__dict__:
            with self._lock:
                if name not in self.__dict__:
                    if name in S.DERIVED:
                        self._tree_column(name)
                    elif name in S.OWN_COUNT:
                        self.__dict__[name] = self._stored.column(name, parent=self._tree_column("parent"))
                    else:
                        ref = self.__dict__.get(S.REFERENCE[name]) if name in S.REFERENCE else None
                        self.__dict__[name] = self._stored.column(name, ref)
            return self.__dict__[name]
        raise AttributeError(name)

    def window(self, name: str, lo: int, hi: int, keep: bool = True, ref: np.ndarray | None = None) -> np.ndarray:
        """Rows ``[lo, hi)`` of a column, from the whole column when it is decoded already, else
        from the few blocks that hold them (kept in a small cache; ``parent``, ``end`` and
        ``incl_bytecodes`` too, each block's from that block alone, see
        :meth:`jbgui.model.store.StoredColumns.block_tree`): how views that show a region read a
        thread of any size. ``keep=False`` leaves the cache alone: a pass over a thread, block
        after block, reads each once, and keeping them would only hold memory. Read only. ``ref``
        (with ``keep=False``): see :meth:`jbgui.model.store.StoredColumns.decode_rows`."""
        whole = self.__dict__.get(name)
        if whole is not None or self._stored is None:
            return np.asarray(getattr(self, name))[max(lo, 0):hi]
        if not keep:
            if name in self._BLOCK_TREE:
                return self._stored.tree_window(name, lo, hi, keep=False)
            return self._stored.decode_rows(name, max(int(lo), 0), min(int(hi), self.rows), ref=ref)
        return self._blocks(name, lo, hi)

    _BLOCK_TREE = ("parent", "end", "incl_bytecodes")

    def _blocks(self, name: str, lo: int, hi: int) -> np.ndarray:
        if name in self._BLOCK_TREE:
            return self._stored.tree_window(name, lo, hi)
        return self._stored.window(name, lo, hi)

    def at(self, name: str, row: int) -> int:
        """One value of a column (see :meth:`values_at`)."""
        whole = self.__dict__.get(name)
        if whole is not None or self._stored is None:
            return int(getattr(self, name)[row])
        if not 0 <= row < self.rows:
            raise IndexError(f"row {row} out of range 0..{self.rows}")
        return int(self._blocks(name, row, row + 1)[0])

    def is_decoded(self, name: str) -> bool:
        """Whether the whole column is in memory (then a pass over it costs no decoding)."""
        return name in self.__dict__ or self._stored is None

    def rows_starting_before(self, events) -> np.ndarray:
        """For each event index: how many calls start before it (``searchsorted(first, events)``:
        ``first`` never decreases, rows being in start order). By a binary search over the blocks
        of the store when the column is not decoded (a dozen blocks read, not the column)."""
        events = np.atleast_1d(np.asarray(events, np.int64))
        whole = self.__dict__.get("first")
        if whole is not None or self._stored is None:
            first = np.asarray(self.first)
            if not len(first):
                return np.zeros(len(events), np.int64)
            info = np.iinfo(first.dtype)
            # keys of the column's own type: else numpy converts the whole column first
            keys = np.clip(events, info.min, info.max).astype(first.dtype)
            return np.searchsorted(first, keys, side="left").astype(np.int64)
        starts = np.asarray(self._stored.starts, np.int64)
        out = np.zeros(len(events), np.int64)
        # the last block whose first call starts before each event; then, a block at a time (each
        # decoded once for all its events), the calls of that block starting before it
        block = np.searchsorted(self.block_first(), events, side="left") - 1
        order = np.argsort(block, kind="stable")
        cuts = np.flatnonzero(np.diff(block[order])) + 1
        for group in np.split(order, cuts):
            b = int(block[group[0]])
            if b < 0:
                continue        # before the first call: none starts before it
            lo, hi = int(starts[b]), int(starts[b + 1])
            first = self.window("first", lo, hi, keep=False)
            out[group] = lo + np.searchsorted(first, events[group], side="left")
        return out

    _block_first: np.ndarray | None = None

    def block_first(self) -> np.ndarray:
        """Each stored block's first call's first event (nondecreasing), computed once by decoding
        ``first`` block by block and kept beside the columns."""
        if self._block_first is None:
            starts = np.asarray(self._stored.starts, np.int64)

            def compute() -> dict[str, np.ndarray]:
                return {"first": np.array([int(self._stored.decode_rows("first", int(lo), int(lo) + 1)[0])
                                           for lo in starts[:-1]], np.int64)}

            def valid(a: dict[str, np.ndarray]) -> bool:
                got = a["first"]
                return len(got) == len(starts) - 1 and bool((np.diff(got) >= 0).all())
            self._block_first = derived.load_or_compute(self.directory, "block-first", ("first",), compute,
                                                        valid)["first"]
        return self._block_first

    def values_at(self, name: str, rows) -> np.ndarray:
        """``name`` at the given rows, decoding only the blocks that hold them (see :meth:`window`)."""
        rows = np.asarray(rows, np.int64)
        whole = self.__dict__.get(name)
        if whole is not None or self._stored is None:
            return np.asarray(getattr(self, name))[rows]
        out = np.empty(rows.shape, np.int64 if name in self._BLOCK_TREE else self._stored.dtypes[name])
        if not rows.size:
            return out
        flat = rows.ravel()
        if flat.min() < 0 or flat.max() >= self.rows:
            raise IndexError(f"row out of range 0..{self.rows}")
        starts = self._stored.starts
        block = np.searchsorted(starts, flat, side="right") - 1
        result = out.ravel()
        for b in np.unique(block).tolist():
            sel = block == b
            lo = int(starts[b])
            result[sel] = self._blocks(name, lo, int(starts[b + 1]))[flat[sel] - lo]
        return result.reshape(rows.shape)

    def _tree_column(self, name: str) -> np.ndarray:
        """parent or end (not stored: one pass over depth gives both); the lock is held."""
        if name not in self.__dict__:
            depth = self.__dict__.get("depth")
            if depth is None:
                depth = self.__dict__["depth"] = self._stored.column("depth")
            self.__dict__["parent"], self.__dict__["end"] = self._stored.tree(depth)
        return self.__dict__[name]

    def __len__(self) -> int:
        return self.rows

    # A subtree of more rows than this is read from the whole columns (decoded once and kept):
    # reading it piecewise would hold as much and be asked for again.
    SUBTREE_ROWS = 1 << 22

    def subtree(self, row: int) -> tuple[int, int, dict[str, np.ndarray]]:
        """The rows ``[row, end)`` of ``row``'s subtree and their ``first``, ``last``, ``flags``,
        ``method``, ``exc_class`` and ``end`` (``end`` relative to ``row``: local row indices),
        decoding only the blocks that hold them when the whole columns are not decoded yet. What
        one call's views (its path, its blocks) read, without a pass over the thread's columns."""
        names = ("first", "last", "flags", "method", "exc_class")
        if self._stored is None or all(n in self.__dict__ for n in (*names, "end")):
            return self._subtree_of_columns(row)
        stop = self._subtree_stop(row)
        if stop - row > self.SUBTREE_ROWS:
            return self._subtree_of_columns(row)
        out = {n: self._stored.decode_rows(n, row, stop) for n in names}
        depth = self._stored.decode_rows("depth", row, stop).astype(np.int64)
        depth -= depth[0]
        parent = np.empty(len(depth), np.int64)
        end = np.empty(len(depth), np.int64)
        if S._tree_from_depth(depth, parent, end) >= 0:
            raise S.CacheDamaged(f"{self.directory}: depth column inconsistent in rows {row}..{stop}")
        got = self._stored.patches.get("end")
        if got is not None:
            rows, values = got
            a, b = np.searchsorted(rows, [row, stop])
            end[rows[a:b] - row] = np.clip(values[a:b] - row, 1, stop - row)
        out["end"] = end
        return row, stop, out

    def _subtree_of_columns(self, row: int) -> tuple[int, int, dict[str, np.ndarray]]:
        stop = int(self.end[row])
        out = {n: np.asarray(getattr(self, n))[row:stop] for n in ("first", "last", "flags", "method", "exc_class")}
        out["end"] = np.asarray(self.end[row:stop], np.int64) - row
        return row, stop, out

    def _subtree_stop(self, row: int) -> int:
        """The end of ``row``'s subtree from the depth column, block by block from ``row``."""
        got = self._stored.patches.get("end")
        if got is not None:
            rows, values = got
            i = int(np.searchsorted(rows, row))
            if i < len(rows) and rows[i] == row:
                return int(values[i])
        starts = self._stored.starts
        d = int(self._stored.decode_rows("depth", row, row + 1)[0])
        lo = row + 1
        while lo < self.rows:
            hi = int(starts[int(np.searchsorted(starts, lo, side="right"))]) if lo < starts[-1] else self.rows
            hi = max(min(hi, self.rows), lo + 1)
            shallower = np.flatnonzero(self._stored.decode_rows("depth", lo, hi) <= d)
            if len(shallower):
                return lo + int(shallower[0])
            lo = hi
        return self.rows

    def children(self, row: int) -> np.ndarray:
        """Rows of the direct children of ``row`` (-1: the thread's top-level calls)."""
        if row < 0:
            start, stop = 0, self.rows
        else:
            start, stop = row + 1, int(self.end[row])
        out = []
        c = start
        while c < stop and len(out) < 4096:
            out.append(c)
            c = int(self.end[c])
        if c >= stop:
            return np.array(out, np.int64)
        # Very wide: find the rest by the parent column.
        rest = np.nonzero(self.parent[c:stop] == row)[0] + c
        return np.concatenate([np.array(out, np.int64), rest])

    def excl_bytecodes(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Bytecodes executed by the calls themselves, without their callees."""
        incl = np.asarray(self.incl_bytecodes, np.int64)
        excl = incl.copy()
        if self.rows:
            parents = np.asarray(self.parent)
            has = parents >= 0
            np.subtract.at(excl, parents[has], incl[has])
        return excl if rows is None else excl[rows]

    def excl_blocks(self) -> np.ndarray:
        incl = np.asarray(self.incl_blocks, np.int64)
        excl = incl.copy()
        if self.rows:
            parents = np.asarray(self.parent)
            has = parents >= 0
            np.subtract.at(excl, parents[has], incl[has])
        return excl


@dataclass
class ThreadReplay:
    """The replay of one thread."""

    index: int
    name: str
    info: dict
    events: int
    ended: bool
    calls: CallTable
    exceptions: np.ndarray      # EXCEPTION_DTYPE: throw_row, catch_row (or CATCH_*), events, class
    class_loads: np.ndarray     # LOAD_DTYPE
    block_counts: np.ndarray    # per global block index
    clock: np.ndarray           # (position, nanos) exact samples, sorted
    problems: list[str]

    @property
    def cct(self) -> dict[str, np.ndarray]:
        """The calling-context tree (:mod:`jbgui.model.cct`): parent, key, calls,
        incl_bytecodes, incl_blocks, flags per node, their time and exception counts, and
        ``capped`` (:func:`jbgui.model.cct.for_thread`): from the run's trees, computed on first
        use and kept beside the replay (:meth:`Analysis.run_trees`)."""
        if self._cct is None:
            self._cct = CCT.for_thread(self)
        return self._cct

    @property
    def cct_ready(self) -> bool:
        """Whether the calling-context tree is at hand (computed, or kept beside the columns)
        rather than costing a pass over every call."""
        return self._cct is not None or CCT.is_stored(self.calls.directory.parent)

    _cct: dict | None = None
    # ``run_trees(progress, cancelled)``: the run's calling-context trees (set by Analysis)
    run_trees = None
    _summary: dict | None = None

    @property
    def call_summary(self) -> dict[str, np.ndarray]:
        """Calls per method (``method_ids``/``method_calls``), per flag bit (``flag_counts``) and
        the deepest depth (:mod:`jbgui.model.call_summary`), computed once and kept."""
        if self._summary is None:
            if len(self.calls):
                self._summary = CS.load_or_compute(self.calls, self.calls.directory)
            else:
                self._summary = {"method_ids": np.zeros(0, np.int64), "method_calls": np.zeros(0, np.int64),
                                 "flag_counts": np.zeros(CS.FLAG_BITS, np.int64), "max_depth": np.array([-1])}
        return self._summary

    @property
    def call_summary_ready(self) -> bool:
        """Whether :attr:`call_summary` is at hand (computed, or kept beside the columns)."""
        return self._summary is not None or CS.is_stored(self.calls.directory)

    def times(self, events: np.ndarray) -> np.ndarray:
        """Nanoseconds since the trace started for event indices (interpolated between the clock
        samples: when each event starts); the event indices themselves when the trace has no
        clock. A call's start and end: :meth:`spans`."""
        events = np.asarray(events, np.float64)
        if len(self.clock) < 2:
            return events
        return np.interp(events, self.clock[:, 0], self.clock[:, 1])

    _axis: blocking_times.Axis | None = None

    @property
    def axis(self) -> blocking_times.Axis:
        """The clock as call times read it (:class:`jbgui.model.blocking_times.Axis`)."""
        if self._axis is None:
            self._axis = blocking_times.Axis(self.clock)
        return self._axis

    _shared: np.ndarray | None = None

    @property
    def shared_steps(self) -> np.ndarray:
        """Positions of the clock's steps (waits the stamps measured between two events) at which
        more than one call without events of its own takes the step: natives one after another
        get the same span, and the stamps do not say which of them waited
        (:func:`jbgui.model.time_quality.interpolated` marks them). Natives beside a call that
        static.xml marks blocking (``Object.wait`` then ``System.nanoTime`` in one block, on JDK
        17) are placed off the step (``F_BEFORE_WAIT``, ``F_AFTER_WAIT``) and do not count: a
        trace recorded before static.xml said so has them here."""
        if self._shared is None:
            steps = self.axis.steps if len(self.clock) >= 2 else np.zeros(0, np.int64)
            shared = []
            if len(steps) and len(self.calls):
                lo = self.calls.rows_starting_before(steps)
                hi = self.calls.rows_starting_before(steps + 1)
                for p, a, b in zip(steps.tolist(), lo.tolist(), hi.tolist()):
                    if b - a < 2:
                        continue
                    rows = np.arange(a, b)
                    flags = self.calls.values_at("flags", rows)
                    # the natives that take the step: not those beside a blocking call
                    zero = (self.calls.values_at("last", rows) == p) & ((flags & blocking_times.SYNTHETIC) != 0) & \
                        ((flags & blocking_times.BESIDE_WAIT) == 0)
                    if int(zero.sum()) > 1:
                        shared.append(p)
            self._shared = np.array(shared, np.int64)
        return self._shared

    def spans(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """Start and end of the calls at ``rows``: nanoseconds (the timeline's, the call tree's,
        every reader's: :meth:`jbgui.model.blocking_times.Axis.spans`), or event indices
        ``[first, last + 1)`` when the trace has no clock."""
        rows = np.atleast_1d(np.asarray(rows, np.int64))
        calls = self.calls
        first = calls.values_at("first", rows)
        last = calls.values_at("last", rows)
        if len(self.clock) < 2:
            return first.astype(np.float64), last.astype(np.float64) + 1.0
        return self.axis.spans(first, last, calls.values_at("flags", rows))


class Analysis:
    """A replayed trace. Use :meth:`open`."""

    def __init__(self, trace: TraceDir, statics: Statics, threads: list[ThreadReplay], totals: dict,
                 problems: list[str], cache_dir: Path, from_cache: bool):
        self.trace = trace
        self.statics = statics
        self.threads = threads
        self.problems = problems
        self.cache_dir = cache_dir
        self.from_cache = from_cache
        self.block_counts: np.ndarray = totals["block_counts"]
        self.edges: np.ndarray = totals["edges"]          # (n, 3): from gb, to gb, count
        self.receivers: np.ndarray = totals["receivers"]  # (n, 3): call site, class id, count
        self.site_calls: np.ndarray = totals["site_calls"]
        self.site_changes: np.ndarray = totals["site_changes"]
        self.summary: dict = totals.get("summary", {})
        self._run_trees = None
        self._run_trees_lock = threading.Lock()
        for t in threads:
            t.run_trees = self.run_trees

    def run_trees(self, progress=None, cancelled=None) -> CCT.RunTrees:
        """Every thread's calling-context tree and the run's merged one (:func:`jbgui.model.cct.
        for_run`), built on first use (``progress(rows done, rows)``, ``cancelled()``) and kept
        beside the replay."""
        with self._run_trees_lock:
            if self._run_trees is None:
                self._run_trees = CCT.for_run(self.threads, self.cache_dir, progress, cancelled, self.statics)
            return self._run_trees

    def forget_run_trees(self) -> None:
        """Drop the run's trees, kept and in memory: the next use builds them again."""
        with self._run_trees_lock:
            self._run_trees = None
            CCT.forget(self.cache_dir)
            for t in self.threads:
                t._cct = None

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | Path, progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None, use_cache: bool = True,
             user_cache: bool = False) -> Analysis:
        """Replay the trace at ``path`` (or load the cached replay). ``progress(done, total)``
        is called with event counts; ``cancelled()`` returning True stops with
        :class:`jbgui.model.replay.Cancelled`. ``user_cache`` keeps the cache in the user cache
        directory rather than beside the trace (as ``JBGUI_CACHE_DIR`` does)."""
        trace = TraceDir(path)
        trace.metadata  # a clear error for a directory that is not a trace
        notes: list[str] = []
        root = cache_root(trace.path, user_cache, notes)
        statics = load_statics(trace.path, root if use_cache else None)
        replay_dir = root / "replay"
        stamp = _stamp(trace)
        if use_cache:
            try:
                meta = _read_meta(replay_dir)
                if meta is not None and meta["stamp"] == stamp:
                    analysis = cls._load(trace, statics, replay_dir, meta)
                    analysis.problems = notes + analysis.problems
                    return analysis
            except S.CacheDamaged as error:
                notes.append(f"the analysis cache was damaged ({error}); the trace was replayed again")
        analysis = cls._replay(trace, statics, root, stamp, progress, cancelled, notes)
        analysis.problems = notes + analysis.problems
        return analysis

    @staticmethod
    def is_cached(path: str | Path, user_cache: bool = False) -> bool:
        """Whether :meth:`open` would load a cached replay of the trace at ``path`` rather than
        replay it (a quick look: the cache's files are checked when it is opened)."""
        try:
            trace = TraceDir(path)
            meta = _read_meta(cache_root(trace.path, user_cache) / "replay")
            return meta is not None and meta["stamp"] == _stamp(trace)
        except (TraceError, S.CacheDamaged, OSError, KeyError, TypeError):
            return False

    @classmethod
    def _replay(cls, trace, statics, root, stamp, progress, cancelled, notes) -> Analysis:
        if (trace.path / "events" / "shared.jbt").exists():
            raise TraceError(f"{trace.path}: a mode-1 (shared stream) trace; replay reads per-thread streams "
                             "(record with mode=2, the default)")
        try:
            work = _make_work_dir(root)
        except OSError as error:
            # Nowhere to keep a cache (a read-only disk): replay into a directory of our own that
            # lives as long as the process.
            root = Path(tempfile.mkdtemp(prefix="jbgui-analysis-"))
            import atexit
            atexit.register(shutil.rmtree, root, True)
            notes.append(f"cannot write the analysis cache ({error.strerror or error}); it is kept in {root} "
                         "until jbgui exits")
            work = _make_work_dir(root)
        try:
            meta = cls._replay_into(trace, statics, work, stamp, progress, cancelled)
            replay_dir = root / "replay"
            _remove_own(replay_dir)
            try:
                os.rename(work, replay_dir)
            except OSError:
                # Another process put its replay of the same trace there meanwhile: ours replaces it.
                _remove_own(replay_dir)
                os.rename(work, replay_dir)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)   # only what this replay made
            raise
        return cls._load(trace, statics, replay_dir, meta, from_cache=False)

    @classmethod
    def _replay_into(cls, trace, statics, work, stamp, progress, cancelled) -> dict:
        kstatic = R.kernel_statics(statics)
        state = R.new_state(statics)
        problems = list(statics.problems) + _recording_limits(trace)
        indices = []
        for index in trace.stream_indices():
            # A stream that cannot be read (a FIFO, a device, unreadable, a link leading out or
            # nowhere) leaves its thread out, with a note: the other threads stay usable.
            try:
                with open_file(trace.stream_path(index)):
                    pass
            except (TraceError, FileNotFoundError) as error:
                problems.append(f"thread {index} left out: {error}")
                continue
            indices.append(index)
        total = sum((trace.stream_path(i).stat().st_size for i in indices))
        done_bytes = 0
        results = {}
        files = {}
        t0 = time.perf_counter()
        names = {col: name for name, (col, _d) in R.COLUMNS.items()}
        for index in indices:
            path = trace.stream_path(index)
            size = path.stat().st_size
            events = stream_event_count(path)
            replayed = [0]

            def step(n, base=done_bytes, size=size, events=max(events, 1), replayed=replayed):
                # within a stream, its bytes in proportion to its events replayed: a thread of
                # a billion events moves the bar as it goes
                replayed[0] += n
                if progress is not None:
                    progress(base + min(size, size * replayed[0] // events), total)
            tdir = work / f"T{index:06d}"
            result, state = R.replay_stream(statics, kstatic, state, path, tdir, step, cancelled, events)
            done_bytes += size
            if progress is not None:
                progress(done_bytes, total)
            results[index] = result
            problems.extend(result.problems)
            dense = result.counts
            nz = np.nonzero(dense)[0]
            patches = np.zeros((0, 3), np.int64) if not len(result.patches) else result.patches
            S.save_arrays(tdir / "extra.npz.zst", {
                "exceptions": result.exceptions, "loads": result.loads, "count_index": nz,
                "count_value": dense[nz], "patches": patches})
            files[index] = {p.name: S.file_record(p) for p in sorted(tdir.iterdir())}
            if result.unknown_ids:
                problems.append(f"thread {index}: {result.unknown_ids} events name method or block ids that "
                                "static.xml does not define")
        totals = _totals(statics, state, results)
        S.save_arrays(work / "totals.npz.zst", {k: v for k, v in totals.items() if isinstance(v, np.ndarray)})
        meta = {"format": CACHE_FORMAT, "stamp": stamp, "problems": problems, "seconds": time.perf_counter() - t0,
                "files": {"totals.npz.zst": S.file_record(work / "totals.npz.zst")},
                "threads": {str(i): {"rows": r.rows, "events": r.events, "ended": r.thread_ended,
                                     "inferred_exits": r.inferred_exits, "no_start": r.no_start,
                                     "unknown_ids": r.unknown_ids, "problems": r.problems,
                                     "dtypes": r.dtypes, "blocks": r.blocks, "frames": r.frames,
                                     "files": files[i]}
                            for i, r in results.items()}}
        del names
        (work / "meta.json").write_text(json.dumps(meta))
        return meta

    @classmethod
    def _load(cls, trace, statics, cache_dir, meta, from_cache=True) -> Analysis:
        infos = {t["index"]: t for t in trace.threads}
        clock = trace.clock()
        S.verify_files(cache_dir, meta["files"])
        with_totals = S.load_arrays(cache_dir / "totals.npz.zst")
        names = {col: name for name, (col, _d) in R.COLUMNS.items()}
        threads = []
        for key, entry in sorted(meta["threads"].items(), key=lambda kv: int(kv[0])):
            index = int(key)
            tdir = cache_dir / f"T{index:06d}"
            S.verify_files(tdir, entry["files"])
            extra = S.load_arrays(tdir / "extra.npz.zst")
            try:
                exc = extra["exceptions"].reshape(-1, 5)
                loads = extra["loads"].reshape(-1, 2)
                counts = np.zeros(statics.n_blocks, np.int64)
                counts[extra["count_index"]] = extra["count_value"]
                patches = extra["patches"].reshape(-1, 3).astype(np.int64)
            except (KeyError, ValueError, IndexError, TypeError) as error:
                raise S.CacheDamaged(f"{tdir}: extra arrays: {error}") from error
            rows = entry["rows"]
            stored = S.StoredColumns(tdir, rows, entry["blocks"], entry["frames"], entry["dtypes"],
                                     S.patches_by_column(patches, names, rows)) if rows else None
            samples = clock[clock["stream"] == index] if len(clock) else clock
            clk = blocking_times.clock_points(samples)  # stamps around blocking calls placed there
            if len(clk):
                start = trace.metadata.get("start", {}).get("nanos", clk[0, 1])
                clk[:, 1] -= start
            info = infos.get(index, {"index": index})
            threads.append(ThreadReplay(
                index=index, name=thread_label(info, index), info=info,
                events=entry["events"], ended=entry["ended"], calls=CallTable(tdir, rows, stored),
                exceptions=_records(exc, EXCEPTION_DTYPE), class_loads=_records(loads, LOAD_DTYPE),
                block_counts=counts, clock=clk, problems=entry["problems"]))
        try:
            totals = {k: with_totals[k] for k in ("block_counts", "edges", "receivers", "site_calls", "site_changes")}
            totals["edges"] = totals["edges"].reshape(-1, 3)
            totals["receivers"] = totals["receivers"].reshape(-1, 3)
        except (KeyError, ValueError) as error:
            raise S.CacheDamaged(f"{cache_dir}: totals: {error}") from error
        if len(totals["block_counts"]) != statics.n_blocks or len(totals["site_calls"]) != statics.n_sites:
            raise S.CacheDamaged(f"{cache_dir}: totals of another static.xml")
        return cls(trace, statics, threads, totals, list(meta["problems"]), cache_dir, from_cache)

    # ------------------------------------------------------------------ naming

    def call_name(self, thread: ThreadReplay, row: int) -> str:
        """``pkg.Cls.name(desc)`` of a call; a synthetic call is named by its call site."""
        calls = thread.calls
        method = calls.at("method", row)     # one value (the block holding it), not the column
        if method:
            name = self.statics.method_qualified(method)
            if name:
                return name
        site = calls.at("call_site", row)
        if site >= 0:
            return self.statics.site_qualified(site)
        return f"<method {method}>"

    def thread(self, key: int | str) -> ThreadReplay:
        for t in self.threads:
            if t.index == key or t.name == key:
                return t
        raise KeyError(key)


def thread_label(info: dict, index: int) -> str:
    """A thread's name in every view: its Java name; for a virtual thread without one (the
    default), ``virtual #ID`` with its Java id, as jstack and JFR write ``#ID``."""
    name = info.get("name") or info.get("end_name")
    if name:
        return name
    java_id = info.get("java_id")
    if info.get("virtual") is True and isinstance(java_id, int) and not isinstance(java_id, bool) and java_id >= 0:
        return f"virtual #{java_id}"
    return f"thread {index}"


def _records(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.zeros(len(arr), dtype)
    for i, name in enumerate(dtype.names):
        if len(arr):
            out[name] = arr[:, i]
    return out


def _recording_limits(trace) -> list[str]:
    """What trace.json says the recording left out, for the problems every view shows (Summary)."""
    try:
        untraced = untraced_virtual_threads(trace.metadata.get("limits"))
    except TraceError:
        return []   # no usable trace.json: its readers say why
    return [untraced] if untraced else []


def _totals(statics: Statics, state: K.State, results: dict) -> dict:
    counts = np.zeros(statics.n_blocks, np.int64)
    for r in results.values():
        counts += r.counts[:statics.n_blocks] if statics.n_blocks else 0
    used = state.edge_k != K.EMPTY
    keys = state.edge_k[used]
    edges = np.stack([keys >> 32, keys & 0xFFFFFFFF, state.edge_v[used]], 1) if len(keys) else np.zeros((0, 3), np.int64)
    used = state.recv_k != K.EMPTY
    keys = state.recv_k[used]
    recv = np.stack([keys >> 32, keys & 0xFFFFFFFF, state.recv_v[used]], 1) if len(keys) else np.zeros((0, 3), np.int64)
    n = statics.n_sites
    return {"block_counts": counts, "edges": edges, "receivers": recv,
            "site_calls": state.sstat[:n, K.SS_CALLS].copy(), "site_changes": state.sstat[:n, K.SS_CHANGES].copy()}


def _stamp(trace: TraceDir) -> str:
    """What the cached replay was computed from: sizes and times of every input file."""
    # trace.json names the run (its start time, pid, options): a cache copied from another trace
    # never matches, whatever the files' sizes and times.
    run = hashlib.sha1(json.dumps(trace.metadata, sort_keys=True, default=str).encode()).hexdigest()[:16]
    parts = [f"format={CACHE_FORMAT}", f"kernel={_kernel_version()}", f"run={run}"]
    for p in sorted([trace.path / "static.xml", trace.path / "threads.jsonl", trace.path / "trace.json"]
                    + list((trace.path / "events").glob("*.jbt"))):
        try:
            st = p.stat()
            parts.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
        except FileNotFoundError:
            parts.append(f"{p.name}:-")
    return "|".join(parts)


def _kernel_version() -> str:
    """A digest of the replay code, so that a changed replay never serves stale results."""
    digest = hashlib.sha1()
    here = Path(__file__).parent
    for name in ("replay_kernel.py", "replay.py", "statics.py", "analysis.py", "tracedir.py", "store.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:12]


def user_cache_base() -> Path:
    """Where caches go when not beside the trace: ``$JBGUI_CACHE_DIR``, else
    ``$JBGUI_CACHE/analysis`` (jbgui's cache, as for the agent), else
    ``$XDG_CACHE_HOME/jbgui/analysis`` (``~/.cache/jbgui/analysis``)."""
    env = os.environ.get("JBGUI_CACHE_DIR")
    if env:
        return Path(env)
    if os.environ.get("JBGUI_CACHE"):
        return Path(os.environ["JBGUI_CACHE"]) / CACHE_NAME
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "jbgui" / CACHE_NAME


def user_cache_dir(trace_path: Path) -> Path:
    """The user cache directory of one trace (named by a digest of its resolved path)."""
    return user_cache_base() / hashlib.sha1(str(Path(trace_path).resolve()).encode()).hexdigest()[:16]


def cache_root(trace_path: Path, user_cache: bool = False, notes: list[str] | None = None) -> Path:
    """The directory that holds a trace's cache: ``<trace>/analysis`` when the trace directory is
    writable (and neither ``user_cache`` nor ``JBGUI_CACHE_DIR`` asks otherwise), else the user
    cache directory. An ``analysis`` that is not a directory jbgui can own (a symlink, a regular
    file) is left alone, with a note, and the user cache used instead."""
    own = Path(trace_path) / CACHE_NAME
    if not user_cache and not os.environ.get("JBGUI_CACHE_DIR"):
        try:
            st = os.lstat(own)
        except FileNotFoundError:
            st = None
        except OSError:
            st = False
        if st is None and os.access(trace_path, os.W_OK | os.X_OK):
            return own
        if st and stat.S_ISDIR(st.st_mode) and os.access(own, os.W_OK | os.X_OK):
            return own
        if st and not stat.S_ISDIR(st.st_mode) and notes is not None:
            kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a directory"
            notes.append(f"{own} is {kind}, not a cache jbgui made: left alone; the analysis is cached in "
                         f"{user_cache_dir(trace_path)}")
    return user_cache_dir(trace_path)


def _cache_dir(trace_path: Path) -> Path:
    """The cache root of a trace (kept for callers that locate the statics cache)."""
    return cache_root(Path(trace_path))


WORK_PREFIX = "replay.tmp-"
STALE_UNOWNED_SECONDS = 3600    # a work directory of an earlier version (no process id in its name)


def _make_work_dir(root: Path) -> Path:
    """A fresh directory for one replay inside ``root`` (made if missing; never a symlink), named
    after this process, with the work directories of replays whose process is gone removed."""
    root.mkdir(parents=True, exist_ok=True)
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{root}: not a directory")
    _remove_stale_work(root)
    return Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-", dir=root))


def _remove_stale_work(root: Path) -> None:
    """A replay killed before it could clean up (SIGKILL, a crash, the machine stopping) leaves
    its work directory, as big as the replay got: removed here when the process named in it is
    gone (another process's replay still running is left alone), or when it is an earlier
    version's (no process id) and untouched for an hour."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(WORK_PREFIX):
            continue
        owner = entry.name[len(WORK_PREFIX):].split("-", 1)[0]
        try:
            if owner.isdigit():
                if _process_alive(int(owner)):
                    continue
            elif time.time() - entry.stat(follow_symlinks=False).st_mtime < STALE_UNOWNED_SECONDS:
                continue
            _remove_own(Path(entry.path))
        except OSError:
            pass        # someone else's, or gone meanwhile: not ours to insist on


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True                 # another user's process
    except (OverflowError, ValueError):
        return False                # a number no process has
    return True


def _remove_own(path: Path) -> None:
    """Remove a previous replay directory inside the cache root: a directory is removed without
    following symlinks inside it; anything else (a symlink planted there) is unlinked, never
    followed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _read_meta(replay_dir: Path) -> dict | None:
    """The replay's meta.json, checked for shape; None when there is no cache at all."""
    try:
        st = os.lstat(replay_dir)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise S.CacheDamaged(f"{replay_dir}: {error.strerror or error}") from error
    if not stat.S_ISDIR(st.st_mode):
        raise S.CacheDamaged(f"{replay_dir}: not a directory")
    path = replay_dir / "meta.json"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise S.CacheDamaged(f"{path}: not a regular file")
            text = f.read(MAX_META_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise S.CacheDamaged(f"{path}: {error.strerror or error}") from error
    if len(text) > MAX_META_BYTES:
        raise S.CacheDamaged(f"{path}: too large")
    try:
        meta = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise S.CacheDamaged(f"{path}: not JSON ({error})") from error
    if isinstance(meta, dict) and meta.get("format") != CACHE_FORMAT:
        return None     # another version's cache: replayed again, quietly
    _check_meta(meta, path)
    return meta


def _check_meta(meta, path: Path) -> None:
    """Raise CacheDamaged unless ``meta`` has the shape :meth:`Analysis._replay_into` writes."""
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise S.CacheDamaged(f"{path}: {what}")

    def is_int(v, lo=0, hi=1 << 62) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi

    def strings(v) -> bool:
        return isinstance(v, list) and all(isinstance(x, str) for x in v)

    need(isinstance(meta, dict), "not an object")
    need(isinstance(meta.get("stamp"), str), "no stamp")
    need(strings(meta.get("problems")), "problems of the wrong shape")
    need(isinstance(meta.get("files"), dict), "no file records")
    threads = meta.get("threads")
    need(isinstance(threads, dict), "threads of the wrong shape")
    columns = set(R.COLUMNS)
    for key, e in threads.items():
        need(isinstance(key, str) and key.isdigit() and len(key) < 12, f"thread key {key!r}")
        need(isinstance(e, dict), f"thread {key} of the wrong shape")
        need(is_int(e.get("rows")) and is_int(e.get("events")) and isinstance(e.get("ended"), bool)
             and strings(e.get("problems")) and isinstance(e.get("files"), dict), f"thread {key} fields")
        for k in ("inferred_exits", "no_start", "unknown_ids"):
            need(is_int(e.get(k)), f"thread {key}: {k}")
        dtypes, blocks, frames = e.get("dtypes"), e.get("blocks"), e.get("frames")
        need(isinstance(dtypes, dict) and set(dtypes) == columns and all(d in ("<i4", "<i8") for d in dtypes.values()),
             f"thread {key}: column types")
        need(isinstance(blocks, list) and all(is_int(b, 1, MAX_BLOCK_ROWS) for b in blocks)
             and sum(blocks) == e["rows"], f"thread {key}: blocks")
        if e["rows"]:
            need(isinstance(frames, dict) and set(frames) == columns - set(S.DERIVED) and all(
                isinstance(f, list) and len(f) == len(blocks) and all(is_int(x, 1) for x in f)
                for f in frames.values()), f"thread {key}: frames")
            for name, f in frames.items():
                rec = e["files"].get(f"{name}.zst")
                need(isinstance(rec, dict) and rec.get("size") == sum(f), f"thread {key}: {name} frames and file")
