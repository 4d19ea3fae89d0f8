"""A replayed trace: per-thread call trees as columns, block and edge counts, receivers,
exceptions, class loads and calling-context trees, cached next to the trace.

``Analysis.open(trace_dir)`` replays every stream once (:mod:`jbgui.model.replay`) and stores the
results under ``<trace>/analysis/`` (or the user cache when the trace directory is read-only);
a second open maps the stored columns and takes well under a second.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jbgui.model import blocking_times
from jbgui.model import call_summary as CS
from jbgui.model import cct as CCT
from jbgui.model import replay as R
from jbgui.model import replay_kernel as K
from jbgui.model.errors import TraceError
from jbgui.model.statics import Statics, load_statics
from jbgui.model.tracedir import TraceDir

CACHE_FORMAT = 5
# Call columns larger than this are memory-mapped, smaller ones read into memory.
MAP_COLUMNS_ABOVE = 4 << 20


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
    """One thread's calls in start order (preorder): a column per field, memory-mapped.

    Columns: ``method`` (0 for a synthetic call whose target has no method id), ``parent`` (-1 at
    the top), ``depth``, ``first``/``last`` (event indices in the thread's stream), ``flags``
    (:class:`Flag`), ``call_site`` (-1 when no call site matched), ``caller_block``,
    ``receiver`` (class id, 0 unknown), ``exc_class`` (class of the exception that ended it),
    ``incl_blocks``/``incl_bytecodes`` (this call and everything below it), ``end`` (one past the
    last row of its subtree).
    """

    def __init__(self, directory: Path, rows: int, dtypes: dict[str, str] | None = None):
        self.directory = directory
        self.rows = rows
        dtypes = dtypes or {name: dtype for name, (_col, dtype) in R.COLUMNS.items()}
        for name in R.COLUMNS:
            dtype = dtypes[name]
            path = directory / f"{name}.bin"
            if rows * np.dtype(dtype).itemsize > MAP_COLUMNS_ABOVE:
                setattr(self, name, np.memmap(path, dtype=dtype, mode="r", shape=(rows,)))
            elif rows:
                # Small columns are read: every memory map holds a file descriptor open, and an
                # explorer with a few traces open would run out of them.
                setattr(self, name, np.fromfile(path, dtype=dtype, count=rows))
            else:
                setattr(self, name, np.zeros(0, dtype=dtype))

    def __len__(self) -> int:
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
        incl_bytecodes, incl_blocks, flags per node, and ``capped``. Computed on first use and
        kept beside the call columns."""
        if self._cct is None:
            self._cct = CCT.load_or_compute(self.calls, self.calls.directory, K.F_NATIVE | K.F_UNTRACED)
        return self._cct

    _cct: dict | None = None
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

    def times(self, events: np.ndarray) -> np.ndarray:
        """Nanoseconds since the trace started for event indices (interpolated between the clock
        samples); the event indices themselves when the trace has no clock."""
        events = np.asarray(events, np.float64)
        if len(self.clock) < 2:
            return events
        return np.interp(events, self.clock[:, 0], self.clock[:, 1])


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

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, path: str | Path, progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None, use_cache: bool = True) -> Analysis:
        """Replay the trace at ``path`` (or load the cached replay). ``progress(done, total)``
        is called with event counts; ``cancelled()`` returning True stops with
        :class:`jbgui.model.replay.Cancelled`."""
        trace = TraceDir(path)
        trace.metadata  # a clear error for a directory that is not a trace
        cache_dir = _cache_dir(trace.path)
        statics = load_statics(trace.path, cache_dir if use_cache else None)
        cache_dir = cache_dir / "replay"
        stamp = _stamp(trace)
        meta_path = cache_dir / "meta.json"
        if use_cache and meta_path.exists():
            try:
                meta = json.loads(meta_path.read_text())
                if meta.get("stamp") == stamp:
                    return cls._load(trace, statics, cache_dir, meta)
            except (OSError, ValueError, KeyError):
                pass
        return cls._replay(trace, statics, cache_dir, stamp, progress, cancelled)

    @classmethod
    def _replay(cls, trace, statics, cache_dir, stamp, progress, cancelled) -> Analysis:
        if (trace.path / "events" / "shared.jbt").exists():
            raise TraceError(f"{trace.path}: a mode-1 (shared stream) trace; replay reads per-thread streams "
                             "(record with mode=2, the default)")
        work = cache_dir.with_name(cache_dir.name + ".tmp")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        kstatic = R.kernel_statics(statics)
        state = R.new_state(statics)
        infos = {t["index"]: t for t in trace.threads}
        indices = trace.stream_indices()
        total = sum((trace.stream_path(i).stat().st_size for i in indices))
        done_bytes = 0
        problems = list(statics.problems)
        results = {}
        t0 = time.perf_counter()
        for index in indices:
            path = trace.stream_path(index)
            size = path.stat().st_size

            def step(_n, base=done_bytes):
                if progress is not None:
                    progress(base, total)
            result, state = R.replay_stream(statics, kstatic, state, path, work / f"T{index:06d}", step, cancelled)
            done_bytes += size
            if progress is not None:
                progress(done_bytes, total)
            results[index] = result
            problems.extend(result.problems)
            dense = result.counts
            nz = np.nonzero(dense)[0]
            np.savez(work / f"T{index:06d}" / "extra.npz", exceptions=result.exceptions, loads=result.loads,
                     count_index=nz, count_value=dense[nz])
            if result.unknown_ids:
                problems.append(f"thread {index}: {result.unknown_ids} events name method or block ids that "
                                "static.xml does not define")
        totals = _totals(statics, state, results)
        np.savez(work / "totals.npz", **{k: v for k, v in totals.items() if isinstance(v, np.ndarray)})
        meta = {"stamp": stamp, "problems": problems, "seconds": time.perf_counter() - t0,
                "threads": {str(i): {"rows": r.rows, "events": r.events, "ended": r.thread_ended,
                                     "inferred_exits": r.inferred_exits, "no_start": r.no_start,
                                     "unknown_ids": r.unknown_ids, "problems": r.problems,
                                     "dtypes": r.dtypes}
                            for i, r in results.items()}}
        (work / "meta.json").write_text(json.dumps(meta))
        shutil.rmtree(cache_dir, ignore_errors=True)
        work.rename(cache_dir)
        return cls._load(trace, statics, cache_dir, meta, from_cache=False)

    @classmethod
    def _load(cls, trace, statics, cache_dir, meta, from_cache=True) -> Analysis:
        infos = {t["index"]: t for t in trace.threads}
        clock = trace.clock()
        threads = []
        for key, entry in sorted(meta["threads"].items(), key=lambda kv: int(kv[0])):
            index = int(key)
            tdir = cache_dir / f"T{index:06d}"
            with np.load(tdir / "extra.npz") as extra:
                exc = extra["exceptions"]
                loads = extra["loads"]
                counts = np.zeros(statics.n_blocks, np.int64)
                counts[extra["count_index"]] = extra["count_value"]
            samples = clock[clock["stream"] == index] if len(clock) else clock
            clk = blocking_times.clock_points(samples)  # stamps around blocking calls placed there
            if len(clk):
                start = trace.metadata.get("start", {}).get("nanos", clk[0, 1])
                clk[:, 1] -= start
            info = infos.get(index, {"index": index})
            threads.append(ThreadReplay(
                index=index, name=info.get("name") or info.get("end_name") or f"thread {index}", info=info,
                events=entry["events"], ended=entry["ended"], calls=CallTable(tdir, entry["rows"], entry.get("dtypes")),
                exceptions=_records(exc, EXCEPTION_DTYPE), class_loads=_records(loads, LOAD_DTYPE),
                block_counts=counts, clock=clk, problems=entry["problems"]))
        with np.load(cache_dir / "totals.npz") as data:
            totals = {k: data[k] for k in data.files}
        return cls(trace, statics, threads, totals, meta["problems"], cache_dir, from_cache)

    # ------------------------------------------------------------------ naming

    def call_name(self, thread: ThreadReplay, row: int) -> str:
        """``pkg.Cls.name(desc)`` of a call; a synthetic call is named by its call site."""
        calls = thread.calls
        method = int(calls.method[row])
        if method:
            name = self.statics.method_qualified(method)
            if name:
                return name
        site = int(calls.call_site[row])
        if site >= 0:
            return self.statics.site_qualified(site)
        return f"<method {method}>"

    def thread(self, key: int | str) -> ThreadReplay:
        for t in self.threads:
            if t.index == key or t.name == key:
                return t
        raise KeyError(key)


def _records(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.zeros(len(arr), dtype)
    for i, name in enumerate(dtype.names):
        if len(arr):
            out[name] = arr[:, i]
    return out


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
    parts = [f"format={CACHE_FORMAT}", f"kernel={_kernel_version()}"]
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
    for name in ("replay_kernel.py", "replay.py", "statics.py", "analysis.py", "tracedir.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:12]


def _cache_dir(trace_path: Path) -> Path:
    """``<trace>/analysis`` when the trace directory is writable, else the user cache."""
    own = trace_path / "analysis"
    if os.access(trace_path, os.W_OK):
        return own
    base = Path(os.environ.get("JBGUI_CACHE", Path.home() / ".cache" / "jbgui")) / "analysis"
    return base / hashlib.sha1(str(trace_path.resolve()).encode()).hexdigest()[:16]
