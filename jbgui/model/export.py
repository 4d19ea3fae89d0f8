"""Exports of a replayed trace in formats other tools open (docs/exports.md).

- **chrome**: Chrome trace-event JSON (Perfetto's UI, ``chrome://tracing``): one track per thread,
  one complete event (``ph: "X"``) per call, instant events for exceptions and native calls.
- **collapsed**: collapsed stacks (``frame;frame;frame count``) from the calling-context trees,
  the input of ``flamegraph.pl`` and speedscope.
- **csv** / **parquet**: two tables, one row per call (``calls``) or per executed basic block
  (``blocks``).

Everything is written chunk by chunk, straight to the file, from columns rendered to text by numpy
(:class:`_Text`): no Python loop runs per call, per event or per output line, and no export holds
its whole output in memory. Output goes to a temporary file beside the target, renamed into place
only when complete, so a failed or cancelled export never leaves a file that looks valid.

Times are nanoseconds since the trace started, interpolated between each thread's clock samples
(:meth:`ThreadReplay.times`) and rounded to whole nanoseconds, then clamped so that every call lies
within its caller and ends no later than its next sibling starts (a native call detected at the
event where its sibling starts would otherwise overlap it). A trace whose threads lack clock
samples is exported in event indices instead, and says so.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numba
import numpy as np

from jbgui import __version__
from jbgui.model.analysis import CATCH_CLASS_INIT, CATCH_UNCAUGHT, Analysis, Flag, ThreadReplay
from jbgui.model.call_queries import exclusive
from jbgui.model.cct import OVERFLOW_KEY, SYNTHETIC_KEY
from jbgui.model.errors import TraceError
from jbgui.model.replay import Cancelled
from jbgui.model.statics import M_JDK, Statics

FORMATS = ("chrome", "collapsed", "csv", "parquet")
TABLES = ("calls", "blocks")
WEIGHTS = ("bytecodes", "calls", "blocks")
DEFAULT_MAX_EVENTS = 1_000_000
# Rows rendered at a time: large enough that numpy's per-call overhead vanishes, small enough that
# a chunk's text stays a few megabytes.
CHUNK_ROWS = 1 << 16
# Rows per Parquet row group: readers like row groups of hundreds of thousands of rows.
PARQUET_ROW_GROUP = 1 << 19

# Every row flag, by the name the exports use (``jbtrace calls``' names first, in its order).
FLAG_NAMES: tuple[tuple[str, int], ...] = Flag.NAMES + (
    ("callback", Flag.CALLBACK), ("inferred", Flag.INFERRED), ("no_start", Flag.NO_START))

# The calls table: column name, Arrow type name, meaning (docs/exports.md repeats these).
CALL_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("thread", "int32", "thread index (threads.jsonl)"),
    ("thread_name", "string", "thread name"),
    ("row", "int64", "the call's row in its thread's call table (start order)"),
    ("parent", "int64", "row of the caller, -1 at the top"),
    ("depth", "int32", "0 for a thread's top-level calls"),
    ("method_id", "int32", "method id of static.xml, 0 when unknown"),
    ("class", "string", "declaring class, dotted (the call site's owner for a synthetic row)"),
    ("method", "string", "method name"),
    ("descriptor", "string", "JVM method descriptor"),
    ("flags", "string", "row flags joined by '|' (empty when none)"),
    ("first_event", "int64", "index of the call's first event in the thread's stream"),
    ("last_event", "int64", "index of its last event"),
    ("start_ns", "int64", "start, ns since the trace started (empty without a clock)"),
    ("end_ns", "int64", "end, ns since the trace started (empty without a clock)"),
    ("incl_bytecodes", "int64", "bytecodes executed by the call and its callees"),
    ("excl_bytecodes", "int64", "bytecodes executed by the call itself"),
    ("incl_blocks", "int64", "basic blocks executed by the call and its callees"),
    ("excl_blocks", "int64", "basic blocks executed by the call itself"),
)

BLOCK_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("class", "string", "declaring class, dotted"),
    ("method", "string", "method name"),
    ("descriptor", "string", "JVM method descriptor"),
    ("method_id", "int32", "method id of static.xml"),
    ("block", "int32", "block index within the method (0-based, code order)"),
    ("start_offset", "int32", "bytecode offset of the block's first instruction"),
    ("end_offset", "int32", "bytecode offset just past its last instruction"),
    ("lines", "string", "source lines of the block, space-separated (empty without line numbers)"),
    ("count", "int64", "times the block was executed"),
    ("bytecodes", "int64", "bytecodes executed in it: count x the block's bytecodes"),
)


class ExportError(TraceError):
    """An export cannot be written: a bad option value, an unwritable output, too many events.
    The message says which and what to do."""


@dataclass
class CallFilter:
    """Which calls a Chrome export keeps.

    ``threads``: thread names or indices (empty: every thread). ``start_ms``/``end_ms``: keep calls
    overlapping this time range, in milliseconds since the trace started (thousands of events for a
    trace without a clock). ``include``: keep only calls of classes starting with one of these
    dotted prefixes; a kept call's depth then counts kept callers only. ``max_depth``: keep calls
    of depth at most this (0: top-level calls only), after ``include``.
    """

    threads: Sequence[str | int] = ()
    start_ms: float | None = None
    end_ms: float | None = None
    include: Sequence[str] = ()
    max_depth: int | None = None

    def validate(self) -> None:
        for name in ("start_ms", "end_ms"):
            value = getattr(self, name)
            if value is not None and not np.isfinite(value):
                raise ExportError(f"{name.replace('_ms', '')} time must be a number of milliseconds, not {value}")
        if self.start_ms is not None and self.end_ms is not None and self.start_ms >= self.end_ms:
            raise ExportError(f"empty time range: start {self.start_ms} ms is not before end {self.end_ms} ms")
        if self.max_depth is not None and self.max_depth < 0:
            raise ExportError(f"max depth must be 0 or more, not {self.max_depth}")
        for prefix in self.include:
            if not prefix.strip():
                raise ExportError("an include prefix is empty")

    def describe(self) -> dict:
        return {"threads": [str(t) for t in self.threads], "start_ms": self.start_ms, "end_ms": self.end_ms,
                "include": list(self.include), "max_depth": self.max_depth}


@dataclass
class ExportResult:
    """What an export wrote: ``rows`` is lines for collapsed stacks, rows for tables, complete
    events for Chrome (``instants`` counts its instant events); ``total`` is what the filter
    kept before truncation; ``has_clock`` is False when times are event indices."""

    path: str
    format: str
    rows: int = 0
    instants: int = 0
    total: int = 0
    truncated: bool = False
    has_clock: bool = True
    warnings: list[str] = field(default_factory=list)


Progress = Callable[[int, int], None] | None
IsCancelled = Callable[[], bool] | None


# ====================================================================== public entry points

def export(analysis: Analysis, path: str | Path, format: str, **options) -> ExportResult:
    """Export in ``format`` (one of :data:`FORMATS`) with that format's keyword options: the one
    entry point for a caller that lets the user pick the format."""
    functions = {"chrome": export_chrome, "collapsed": export_collapsed, "csv": export_csv,
                 "parquet": export_parquet}
    if format not in functions:
        raise ExportError(f"unknown export format {format!r} (one of {', '.join(FORMATS)})")
    return functions[format](analysis, path, **options)


def export_chrome(analysis: Analysis, path: str | Path, filter: CallFilter | None = None,
                  max_events: int | None = DEFAULT_MAX_EVENTS, truncate: bool = False,
                  progress: Progress = None, cancelled: IsCancelled = None) -> ExportResult:
    """Chrome trace-event JSON of the calls ``filter`` keeps. More than ``max_events`` events
    (complete plus instant; None: no cap) raise :class:`ExportError`, or with ``truncate`` keep the
    earliest ``max_events`` and record a warning."""
    with _atomic_output(path) as out:
        return write_chrome(analysis, out, filter, max_events, truncate, progress, cancelled, str(path))


def export_collapsed(analysis: Analysis, path: str | Path, weight: str = "bytecodes", per_thread: bool = False,
                     threads: Sequence[str | int] = (), max_depth: int | None = None, progress: Progress = None,
                     cancelled: IsCancelled = None) -> ExportResult:
    """Collapsed stacks, one line per distinct calling context, weighted by exclusive
    ``bytecodes``, ``calls`` or exclusive ``blocks``; ``per_thread`` puts the thread name first;
    ``max_depth`` folds deeper contexts into their ancestor at that depth (0: top-level calls)."""
    with _atomic_output(path) as out:
        return write_collapsed(analysis, out, weight, per_thread, threads, max_depth, progress, cancelled, str(path))


def export_csv(analysis: Analysis, path: str | Path, table: str = "calls", threads: Sequence[str | int] = (),
               progress: Progress = None, cancelled: IsCancelled = None) -> ExportResult:
    """One table (``calls`` or ``blocks``) as CSV with a header line."""
    with _atomic_output(path) as out:
        return write_csv(analysis, out, table, threads, progress, cancelled, str(path))


def export_parquet(analysis: Analysis, path: str | Path, table: str = "calls", threads: Sequence[str | int] = (),
                   progress: Progress = None, cancelled: IsCancelled = None) -> ExportResult:
    """One table (``calls`` or ``blocks``) as Parquet; needs pyarrow."""
    pa, pq = _pyarrow()
    _check_table(table)
    selected = select_threads(analysis, threads)
    result = ExportResult(str(path), "parquet")
    columns = CALL_COLUMNS if table == "calls" else BLOCK_COLUMNS
    chunks = _call_chunks(analysis, selected, progress, cancelled, result) if table == "calls" else \
        _block_chunks(analysis, selected, cancelled)
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind, _ in columns])
    with _atomic_output(path, binary_path=True) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            pending, rows = [], 0
            for cols in chunks:
                pending.append(_arrow_table(pa, schema, columns, cols))
                rows += cols.n
                if rows >= PARQUET_ROW_GROUP:
                    writer.write_table(pa.concat_tables(pending), row_group_size=rows)
                    result.rows += rows
                    pending, rows = [], 0
            if pending or not result.rows:
                writer.write_table(pa.concat_tables(pending) if pending else schema.empty_table())
                result.rows += rows
    result.total = result.rows
    return result


def check_output(path: str | Path) -> None:
    """Raise :class:`ExportError` when ``path`` cannot be written (a directory, a missing or
    read-only directory): worth knowing before a long export starts."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise ExportError(f"{path}: is a directory; give the output file's name")
    if not directory.is_dir():
        raise ExportError(f"{path}: the directory {directory} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ExportError(f"{path}: cannot write in {directory} (permission denied)")


def check_parquet() -> None:
    """Raise :class:`ExportError` (naming ``pip install pyarrow``) when Parquet cannot be written."""
    _pyarrow()


def select_threads(analysis: Analysis, wanted: Sequence[str | int]) -> list[ThreadReplay]:
    """The threads named (by name or index) in ``wanted``; every thread when it is empty."""
    if not wanted:
        return list(analysis.threads)
    keys = {str(w) for w in wanted}
    chosen = [t for t in analysis.threads if t.name in keys or str(t.index) in keys]
    found = {t.name for t in chosen} | {str(t.index) for t in chosen}
    missing = [w for w in keys if w not in found]
    if missing:
        names = ", ".join(t.name for t in analysis.threads[:12]) + (", …" if len(analysis.threads) > 12 else "")
        raise ExportError(f"no thread named {', '.join(repr(m) for m in sorted(missing))} in this trace "
                          f"(threads: {names})")
    return chosen


def has_clock(threads: Sequence[ThreadReplay]) -> bool:
    """True when every thread with calls has clock samples to interpolate between (as the
    timeline decides): only then do times of different threads share an axis."""
    with_calls = [t for t in threads if len(t.calls)] or list(threads)
    return bool(with_calls) and all(len(t.clock) >= 2 for t in with_calls)


# ====================================================================== writing (to a stream)

def write_chrome(analysis: Analysis, out: BinaryIO, filter: CallFilter | None = None,
                 max_events: int | None = DEFAULT_MAX_EVENTS, truncate: bool = False,
                 progress: Progress = None, cancelled: IsCancelled = None, label: str = "-") -> ExportResult:
    """:func:`export_chrome` to a binary stream."""
    filter = filter or CallFilter()
    filter.validate()
    if max_events is not None and max_events < 0:
        raise ExportError(f"max events must be 0 or more, not {max_events}")
    threads = select_threads(analysis, filter.threads)
    clock = has_clock(threads)
    result = ExportResult(label, "chrome", has_clock=clock)
    unit = 1_000_000.0 if clock else 1000.0      # time units per millisecond: ns, or events as µs
    window = (-np.inf if filter.start_ms is None else filter.start_ms * unit,
              np.inf if filter.end_ms is None else filter.end_ms * unit)
    names = _Names(analysis.statics)
    include = tuple(p.replace("/", ".") for p in filter.include)
    plan = _ChromePlan(names, include, filter.max_depth, window, clock)

    total_rows = sum(len(t.calls) for t in threads)
    # With a cap the calls are walked twice (count, then write): progress spans both walks.
    passes = 1 if max_events is None else 2
    cutoff = np.inf
    if max_events is not None:
        counted = (lambda done, _total: progress(done, passes * total_rows)) if progress is not None else None
        kept, starts = _count_chrome(plan, threads, max_events, counted, cancelled)
        if kept > max_events:
            if not truncate:
                raise ExportError(
                    f"the export would hold {kept:,} events, more than --max-events {max_events:,}: narrow it "
                    "(--thread, --start/--end, --include, --max-depth), raise the cap, or truncate (--truncate)")
            cutoff = starts[max_events] if max_events < len(starts) else np.inf
            result.truncated = True
        result.total = kept

    pid = int(analysis.trace.metadata.get("jvm", {}).get("pid") or 1)
    jvm = analysis.trace.metadata.get("jvm", {})
    out.write(b'{"traceEvents":[\n')
    meta = [{"ph": "M", "pid": pid, "tid": 0, "name": "process_name",
             "args": {"name": f"java {jvm.get('command', '')}".strip()}}]
    for t in threads:
        meta.append({"ph": "M", "pid": pid, "tid": t.index, "name": "thread_name", "args": {"name": t.name}})
        meta.append({"ph": "M", "pid": pid, "tid": t.index, "name": "thread_sort_index",
                     "args": {"sort_index": t.index}})
    out.write(",\n".join(json.dumps(m, separators=(",", ":")) for m in meta).encode())

    done = (passes - 1) * total_rows
    for t in threads:
        for chunk in plan.chunks(t, cancelled):
            keep = plan.keep(chunk) & (chunk.start < cutoff)
            rows = np.nonzero(keep)[0]
            if len(rows):
                out.write(_chrome_complete(plan, chunk, rows, pid))
                native = rows[(chunk.flags[rows] & Flag.NATIVE) != 0]
                if len(native):
                    out.write(_chrome_native_instants(plan, chunk, native, pid))
                result.rows += len(rows)
                result.instants += len(native)
            done += chunk.n
            if progress is not None:
                progress(done, passes * total_rows)
        text, n = _chrome_exception_instants(analysis, plan, t, pid, cutoff)
        out.write(text)
        result.instants += n
    if max_events is None:
        result.total = result.rows + result.instants
    if result.truncated:
        shown = f"{cutoff / unit:,.3f} ms" if clock else f"event {cutoff:,.0f}"
        result.warnings.append(f"chrome export truncated to the first {result.rows + result.instants:,} of "
                               f"{result.total:,} events (those starting before {shown}); narrow the export (threads, "
                               "time range, class prefixes, depth) to see the rest")
    other = {"exporter": f"jbgui {__version__}", "trace": str(analysis.trace.path), "jvm": jvm,
             "clock": clock,
             "time": ("nanoseconds since the trace started, interpolated between clock samples, written as "
                      "microseconds" if clock else
                      "this trace has no clock samples: times are event indices, written as if they were "
                      "microseconds (1 ms = 1000 events); threads do not share a time axis"),
             "filter": filter.describe(), "complete_events": result.rows, "instant_events": result.instants,
             "truncated": result.truncated, "warnings": result.warnings}
    out.write(b'\n],\n"displayTimeUnit":"ns",\n"otherData":')
    out.write(json.dumps(other, separators=(",", ":")).encode())
    out.write(b"}\n")
    return result


COLLAPSED_MAX_DEPTH = 1024


def write_collapsed(analysis: Analysis, out: BinaryIO, weight: str = "bytecodes", per_thread: bool = False,
                    threads: Sequence[str | int] = (), max_depth: int | None = None, progress: Progress = None,
                    cancelled: IsCancelled = None, label: str = "-") -> ExportResult:
    """:func:`export_collapsed` to a binary stream."""
    if weight not in WEIGHTS:
        raise ExportError(f"unknown weight {weight!r} (one of {', '.join(WEIGHTS)})")
    if max_depth is not None and max_depth < 0:
        raise ExportError(f"max depth must be 0 or more, not {max_depth}")
    selected = select_threads(analysis, threads)
    result = ExportResult(label, "collapsed")
    capped: list[str] = []
    # Each line spells its whole stack, so a chain of n nested calls is n lines of up to n frames:
    # quadratic in the depth (a recursion a million deep would be terabytes). Without an explicit
    # --max-depth, deeper contexts count in their ancestor at COLLAPSED_MAX_DEPTH.
    limit = COLLAPSED_MAX_DEPTH if max_depth is None else max_depth
    folded: list[int] = []
    for level_lines, n in _merged_contexts(analysis, selected, weight, per_thread, limit, capped, progress,
                                           cancelled, folded):
        out.write(level_lines)
        result.rows += n
    result.total = result.rows
    if folded and max_depth is None:
        result.warnings.append(
            f"calling contexts {folded[0]:,} calls deep: those deeper than {COLLAPSED_MAX_DEPTH:,} count in their "
            f"caller at depth {COLLAPSED_MAX_DEPTH:,} (--max-depth chooses another depth)")
    if capped:
        result.warnings.append(
            f"the calling-context tree of {', '.join(capped)} reached its size cap: calls in contexts beyond it "
            "count in their nearest context the tree holds (or in a '(more contexts)' frame at the top)")
    return result


def write_csv(analysis: Analysis, out: BinaryIO, table: str = "calls", threads: Sequence[str | int] = (),
              progress: Progress = None, cancelled: IsCancelled = None, label: str = "-") -> ExportResult:
    """:func:`export_csv` to a binary stream."""
    _check_table(table)
    selected = select_threads(analysis, threads)
    result = ExportResult(label, "csv")
    columns = CALL_COLUMNS if table == "calls" else BLOCK_COLUMNS
    chunks = _call_chunks(analysis, selected, progress, cancelled, result) if table == "calls" else \
        _block_chunks(analysis, selected, cancelled)
    out.write((",".join(name for name, _, _ in columns) + "\n").encode())
    for cols in chunks:
        out.write(_csv_rows(columns, cols))
        result.rows += cols.n
    result.total = result.rows
    return result


# ====================================================================== output files

@contextmanager
def _atomic_output(path: str | Path, binary_path: bool = False) -> Iterator:
    """A temporary file beside ``path`` (a stream, or its path with ``binary_path``), renamed to
    ``path`` when the block completes and removed when it fails.

    A ``path`` that exists and is not a regular file (``/dev/null``, a named pipe, a terminal) is
    written in place: renaming over it would replace the device or pipe with a file."""
    path = Path(path)
    check_output(path)
    if path.exists() and not path.is_file():
        try:
            if binary_path:
                yield str(path)
            else:
                with open(path, "wb", buffering=1 << 20) as stream:
                    yield stream
        except OSError as error:
            raise ExportError(f"{path}: cannot write: {error.strerror or error}") from error
        return
    directory = path.parent if str(path.parent) else Path(".")
    tmp = directory / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part"
    try:
        # os.open with 0o666 lets the umask decide the final permissions, as for any new file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        raise ExportError(f"{path}: cannot write here: {error.strerror or error}") from error
    try:
        if binary_path:
            os.close(fd)
            yield str(tmp)
        else:
            with os.fdopen(fd, "wb", buffering=1 << 20) as stream:
                yield stream
        os.replace(tmp, path)
    except OSError as error:
        _unlink(tmp)
        raise ExportError(f"{path}: cannot write: {error.strerror or error}") from error
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _check_cancelled(cancelled: IsCancelled) -> None:
    if cancelled is not None and cancelled():
        raise Cancelled("export cancelled")


def _check_table(table: str) -> None:
    if table not in TABLES:
        raise ExportError(f"unknown table {table!r} (one of {', '.join(TABLES)})")


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as error:
        raise ExportError("Parquet export needs pyarrow: pip install pyarrow "
                          "(or install jbgui with its 'parquet' extra)") from error
    return pa, pq


# ====================================================================== names

_PRIMITIVES = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long", "S": "short",
               "Z": "boolean", "V": "void"}
_DESCRIPTOR_TYPE = re.compile(r"(\[*)(?:L([^;]+);|([BCDFIJSZV]))")


def java_parameters(descriptor: str) -> str:
    """``(Ljava/lang/String;[I)V`` → ``(String,int[])``: parameter types by simple name."""
    inside = descriptor[1:descriptor.find(")")] if descriptor.startswith("(") else ""
    out = []
    for dims, ref, prim in _DESCRIPTOR_TYPE.findall(inside):
        name = ref.rsplit("/", 1)[-1] if ref else _PRIMITIVES[prim]
        out.append(name + "[]" * len(dims))
    return "(" + ",".join(out) + ")"


class _Names:
    """Names of calls, computed once per distinct method or call site.

    A call is named by its *name key*: its method id when the method is known, else
    ``site_base + call site`` (a synthetic row's target), else 0 (unknown)."""

    def __init__(self, statics: Statics):
        self.st = statics
        self.named = np.array([bool(n) for n in statics.m_name], np.bool_)
        self.site_base = len(statics.m_name)
        self.jdk = np.zeros(self.site_base + statics.n_sites + 1, np.bool_)
        self.jdk[:self.site_base] = (np.asarray(statics.m_flags, np.int64) & M_JDK) != 0
        self._parts: dict[int, tuple[str, str, str]] = {}

    def keys(self, method: np.ndarray, site: np.ndarray) -> np.ndarray:
        method = method.astype(np.int64)
        site = site.astype(np.int64)
        ok = (method > 0) & (method < len(self.named))
        ok[ok] = self.named[method[ok]]
        return np.where(ok, method, np.where(site >= 0, self.site_base + site, 0))

    def parts(self, key: int) -> tuple[str, str, str]:
        """(dotted class, method name, descriptor) of a name key."""
        got = self._parts.get(key)
        if got is None:
            st = self.st
            if 0 < key < self.site_base and self.named[key]:
                got = (st.class_of_method(key).replace("/", "."), st.m_name[key], st.m_desc[key])
            elif key >= self.site_base:
                owner, _, rest = st.s_call[key - self.site_base].partition(":")
                paren = rest.find("(")
                name, desc = (rest[:paren], rest[paren:]) if paren >= 0 else (rest, "")
                got = (owner.replace("/", ".") or "<invokedynamic>", name, desc)
            else:
                got = ("<unknown>", "<unknown>", "")
            self._parts[key] = got
        return got

    def pool(self, render: Callable[[tuple[str, str, str]], str], encode: Callable[[str], bytes]) -> _KeyedPool:
        """A pool of ``render(parts)`` per name key."""
        return _KeyedPool(lambda key: render(self.parts(key)), encode)


def _flag_text(flags: int) -> str:
    return "|".join(name for name, bit in FLAG_NAMES if flags & bit)


# ====================================================================== text rendering

# Output is built as bytes, a chunk of rows at a time: every field of every row is rendered into
# one array (numbers by the kernels below, strings gathered from pools of distinct values), and
# the fields are placed side by side row by row. Numba runs the byte loops; no Python code runs
# per row.

class _Text:
    """Byte strings of a chunk of rows, back to back in ``data``, one length per row."""

    __slots__ = ("data", "lengths")

    def __init__(self, data: np.ndarray, lengths: np.ndarray):
        self.data = data
        self.lengths = lengths


@numba.njit(cache=True, nogil=True)
def _render_ints(values, out, lengths):  # pragma: no cover - numba
    """Decimal text of each value, back to back in ``out``; returns the bytes used."""
    digits = np.empty(20, np.uint8)
    pos = 0
    for i in range(len(values)):
        v = values[i]
        begin = pos
        if v < 0:
            out[pos] = 45           # '-'
            pos += 1
            v = -v
        k = 0
        while True:
            digits[k] = 48 + v % 10
            v //= 10
            k += 1
            if v == 0:
                break
        for j in range(k):
            out[pos + j] = digits[k - 1 - j]
        pos += k
        lengths[i] = pos - begin
    return pos


@numba.njit(cache=True, nogil=True)
def _render_micros(ns, out, lengths):  # pragma: no cover - numba
    """Nanoseconds as microseconds with three decimals, exactly (``1234567`` → ``1234.567``)."""
    digits = np.empty(24, np.uint8)
    pos = 0
    for i in range(len(ns)):
        v = ns[i]
        begin = pos
        if v < 0:
            out[pos] = 45
            pos += 1
            v = -v
        k = 0
        while True:
            digits[k] = 48 + v % 10
            v //= 10
            k += 1
            if k == 3:
                digits[k] = 46      # '.'
                k += 1
            if v == 0 and k > 4:
                break
        for j in range(k):
            out[pos + j] = digits[k - 1 - j]
        pos += k
        lengths[i] = pos - begin
    return pos


@numba.njit(cache=True, nogil=True)
def _gather(pool, offsets, pool_lengths, index, out, lengths):  # pragma: no cover - numba
    pos = 0
    for i in range(len(index)):
        j = index[i]
        n = pool_lengths[j]
        o = offsets[j]
        for k in range(n):
            out[pos + k] = pool[o + k]
        pos += n
        lengths[i] = n
    return pos


@numba.njit(cache=True, nogil=True)
def _place(out, position, data, lengths):  # pragma: no cover - numba
    src = 0
    for i in range(len(position)):
        p = position[i]
        n = lengths[i]
        for k in range(n):
            out[p + k] = data[src + k]
        src += n
        position[i] = p + n


@numba.njit(cache=True, nogil=True)
def _place_literal(out, position, literal):  # pragma: no cover - numba
    n = len(literal)
    for i in range(len(position)):
        p = position[i]
        for k in range(n):
            out[p + k] = literal[k]
        position[i] = p + n


def _ints(values: np.ndarray) -> _Text:
    """Decimal text of integers."""
    # INT64_MIN has no positive counterpart: clipped, so that the renderer's negation never overflows.
    values = np.maximum(np.ascontiguousarray(values, np.int64), -np.iinfo(np.int64).max)
    out = np.empty(20 * len(values), np.uint8)
    lengths = np.empty(len(values), np.int64)
    used = _render_ints(values, out, lengths)
    return _Text(out[:used], lengths)


def _micros(ns: np.ndarray) -> _Text:
    """Nanoseconds as microseconds with exactly three decimals (no float rounding)."""
    ns = np.maximum(np.ascontiguousarray(ns, np.int64), -np.iinfo(np.int64).max)
    out = np.empty(24 * len(ns), np.uint8)
    lengths = np.empty(len(ns), np.int64)
    used = _render_micros(ns, out, lengths)
    return _Text(out[:used], lengths)


def _concat(parts: list[bytes | _Text], n: int) -> _Text:
    """Row-wise concatenation of literals (the same bytes in every row) and per-row texts."""
    lengths = np.zeros(n, np.int64)
    for part in parts:
        lengths += len(part) if isinstance(part, bytes) else part.lengths
    ends = np.cumsum(lengths)
    out = np.empty(int(ends[-1]) if n else 0, np.uint8)
    position = ends - lengths
    for part in parts:
        if isinstance(part, bytes):
            if part:
                _place_literal(out, position, np.frombuffer(part, np.uint8))
        else:
            _place(out, position, part.data, part.lengths)
    return _Text(out, lengths)


class _KeyedPool:
    """Strings rendered once per key (a name key, a flags value, a block), encoded for the output,
    and gathered per row by key."""

    def __init__(self, render: Callable[[int], str], encode: Callable[[str], bytes] = str.encode):
        self.render = render
        self.encode = encode
        self.slot = np.full(1024, -1, np.int64)       # key -> index into items
        self.items: list[str] = []
        self.encoded: list[bytes] = []
        self._bytes: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._objects: np.ndarray | None = None

    def indices(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, np.int64)
        if not len(keys):
            return keys
        top = int(keys.max())
        if top >= len(self.slot):
            grown = np.full(max(top + 1, 2 * len(self.slot)), -1, np.int64)
            grown[:len(self.slot)] = self.slot
            self.slot = grown
        index = self.slot[keys]
        missing = index < 0
        if missing.any():
            for key in np.unique(keys[missing]).tolist():
                self.slot[key] = len(self.items)
                self.items.append(self.render(key))
                self.encoded.append(self.encode(self.items[-1]))
            self._bytes = self._objects = None
            index = self.slot[keys]
        return index

    def text(self, keys: np.ndarray) -> _Text:
        index = self.indices(keys)
        if self._bytes is None:
            lengths = np.fromiter((len(b) for b in self.encoded), np.int64, len(self.encoded))
            self._bytes = (np.frombuffer(b"".join(self.encoded), np.uint8), np.cumsum(lengths) - lengths, lengths)
        pool, offsets, pool_lengths = self._bytes
        out = np.empty(int(pool_lengths[index].sum()), np.uint8)
        lengths = np.empty(len(index), np.int64)
        _gather(pool, offsets, pool_lengths, index, out, lengths)
        return _Text(out, lengths)

    def strings(self, keys: np.ndarray) -> np.ndarray:
        index = self.indices(keys)
        if self._objects is None:
            self._objects = np.array(self.items + [""], dtype=object)[:-1]
        return self._objects[index]


class _KeyedBools:
    """A yes/no per key, decided once per distinct key (does this class match a prefix?)."""

    def __init__(self, test: Callable[[int], bool]):
        self.test = test
        self.known = np.full(1024, -1, np.int8)

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, np.int64)
        if len(keys) and int(keys.max()) >= len(self.known):
            grown = np.full(max(int(keys.max()) + 1, 2 * len(self.known)), -1, np.int8)
            grown[:len(self.known)] = self.known
            self.known = grown
        value = self.known[keys]
        missing = value < 0
        if missing.any():
            for key in np.unique(keys[missing]).tolist():
                self.known[key] = 1 if self.test(key) else 0
            value = self.known[keys]
        return value == 1


def _csv_field(text: str) -> bytes:
    if any(c in text for c in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text.encode("utf-8", "surrogateescape")


def _json_string(text: str) -> bytes:
    return json.dumps(text).encode()


# ====================================================================== call chunks with times

@numba.njit(cache=True, nogil=True)
def _nest(depth, keep, start, end, kept_depth, stack_start, stack_end, stack_kept):  # pragma: no cover - numba
    """Clamp each call (in start order) into its caller and count its kept callers.

    The caller of a call at depth d is the last call seen at depth d - 1, so a stack indexed by
    depth, carried from chunk to chunk, holds every open caller's (clamped) times."""
    for i in range(len(depth)):
        d = depth[i]
        s = start[i]
        e = end[i]
        k = 0
        if d > 0:
            ps = stack_start[d - 1]
            pe = stack_end[d - 1]
            if s < ps:
                s = ps
            if s > pe:
                s = pe
            if e > pe:
                e = pe
            k = stack_kept[d - 1]
        if e < s:
            e = s
        start[i] = s
        end[i] = e
        kept_depth[i] = k
        stack_start[d] = s
        stack_end[d] = e
        stack_kept[d] = k + (1 if keep[i] else 0)


@dataclass
class _Chunk:
    """Rows ``lo``..``lo + n`` of one thread's calls with their times (clamped to nest)."""

    thread: ThreadReplay
    lo: int
    n: int
    has_clock: bool
    method: np.ndarray
    site: np.ndarray
    flags: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    first: np.ndarray
    last: np.ndarray
    start: np.ndarray      # ns (or events without a clock)
    end: np.ndarray
    kept_depth: np.ndarray | None = None
    name_keys: np.ndarray | None = None


class _Timer:
    """Event index → integer time of one thread (ns with a clock, the index itself without)."""

    def __init__(self, thread: ThreadReplay, clock: bool):
        self.thread = thread
        self.clock = clock and len(thread.clock) >= 2

    def __call__(self, events: np.ndarray) -> np.ndarray:
        if not self.clock:
            return np.asarray(events, np.int64)
        return np.rint(self.thread.times(events)).astype(np.int64)


def _timed_chunks(thread: ThreadReplay, clock: bool, cancelled: IsCancelled,
                  keep_rows: Callable[[_Chunk], np.ndarray] | None = None) -> Iterator[_Chunk]:
    """The thread's calls chunk by chunk with start and end times that nest: [t(first),
    t(last + 1)), an end cut back to where the next sibling starts, then each call clamped into
    its caller. ``keep_rows(chunk)`` (optional) marks the rows whose kept descendants count them
    as callers (``kept_depth``)."""
    calls = thread.calls
    n = len(calls)
    if not n:
        return
    timer = _Timer(thread, clock)
    max_depth = int(np.max(calls.depth)) + 1
    stack_start = np.zeros(max_depth, np.int64)
    stack_end = np.zeros(max_depth, np.int64)
    stack_kept = np.zeros(max_depth, np.int64)
    all_parent, all_first = calls.parent, calls.first
    for lo in range(0, n, CHUNK_ROWS):
        _check_cancelled(cancelled)
        hi = min(n, lo + CHUNK_ROWS)
        first = np.asarray(calls.first[lo:hi], np.int64)
        last = np.asarray(calls.last[lo:hi], np.int64)
        parent = np.asarray(calls.parent[lo:hi], np.int64)
        after = np.asarray(calls.end[lo:hi], np.int64)       # the row after each subtree
        start = timer(first)
        end = timer(last + 1)
        # An end that reaches past the next sibling's start (a synthetic row detected at the event
        # where that sibling starts) is cut back to it.
        has_next = np.nonzero(after < n)[0]
        if len(has_next):
            nxt = after[has_next]
            sibling = np.asarray(all_parent[nxt], np.int64) == parent[has_next]
            rows, nxt = has_next[sibling], nxt[sibling]
            if len(rows):
                end[rows] = np.minimum(end[rows], timer(np.asarray(all_first[nxt], np.int64)))
        chunk = _Chunk(thread, lo, hi - lo, timer.clock, np.asarray(calls.method[lo:hi], np.int64),
                       np.asarray(calls.call_site[lo:hi], np.int64), np.asarray(calls.flags[lo:hi], np.int64),
                       np.asarray(calls.depth[lo:hi], np.int64), parent, first, last, start, end)
        keep = keep_rows(chunk) if keep_rows is not None else np.ones(chunk.n, np.bool_)
        chunk.kept_depth = np.empty(chunk.n, np.int64)
        _nest(chunk.depth, keep, chunk.start, chunk.end, chunk.kept_depth, stack_start, stack_end, stack_kept)
        yield chunk


# ====================================================================== chrome

_CATEGORIES = ("app", "jdk", "native", "untraced")


class _ChromePlan:
    """What a Chrome export keeps of each chunk, and how it names it."""

    def __init__(self, names: _Names, include: tuple[str, ...], max_depth: int | None,
                 window: tuple[float, float], clock: bool):
        self.names = names
        self.include = include
        self.max_depth = max_depth
        self.window = window
        self.clock = clock
        self.time = _micros if clock else _ints
        self.matching = _KeyedBools(lambda key: key != 0 and names.parts(key)[0].startswith(include))
        self.name_pool = names.pool(lambda p: f"{p[0]}.{p[1]}", _json_string)
        self.native_pool = names.pool(lambda p: f"native {p[0]}.{p[1]}", _json_string)
        self.desc_pool = names.pool(lambda p: p[2], _json_string)
        self.flag_pool = _KeyedPool(_flag_text, _json_string)
        self.category_pool = _KeyedPool(lambda k: _CATEGORIES[k], _json_string)

    def matches(self, chunk: _Chunk) -> np.ndarray:
        """Rows of classes the include prefixes name (every row without prefixes)."""
        if chunk.name_keys is None:
            chunk.name_keys = self.names.keys(chunk.method, chunk.site)
        if not self.include:
            return np.ones(chunk.n, np.bool_)
        return self.matching(chunk.name_keys)

    def keep(self, chunk: _Chunk) -> np.ndarray:
        keep = self.matches(chunk)
        if self.max_depth is not None:
            depth = chunk.kept_depth if self.include else chunk.depth
            keep &= depth <= self.max_depth
        lo, hi = self.window
        if np.isfinite(lo) or np.isfinite(hi):
            keep &= (chunk.start < hi) & ((chunk.end > lo) | (chunk.start >= lo))
        return keep

    def chunks(self, thread: ThreadReplay, cancelled: IsCancelled) -> Iterator[_Chunk]:
        return _timed_chunks(thread, self.clock, cancelled, self.matches)


def _count_chrome(plan: _ChromePlan, threads: list[ThreadReplay], limit: int, progress: Progress,
                  cancelled: IsCancelled) -> tuple[int, np.ndarray]:
    """Events the plan keeps, and the ``limit + 1`` earliest start times among them (sorted)."""
    total = 0
    done = 0
    earliest = np.zeros(0, np.int64)
    for t in threads:
        for chunk in plan.chunks(t, cancelled):
            done += chunk.n
            if progress is not None:
                progress(done, 0)
            rows = np.nonzero(plan.keep(chunk))[0]
            starts = chunk.start[rows]
            native = starts[(chunk.flags[rows] & Flag.NATIVE) != 0]
            total += len(rows) + len(native)
            earliest = _smallest(np.concatenate([earliest, starts, native]), limit + 1)
        times = _exception_times(plan, t)
        total += len(times)
        earliest = _smallest(np.concatenate([earliest, times]), limit + 1)
    return total, np.sort(earliest)


def _smallest(values: np.ndarray, k: int) -> np.ndarray:
    if len(values) <= k:
        return values
    return np.partition(values, k - 1)[:k]


def _chrome_complete(plan: _ChromePlan, chunk: _Chunk, rows: np.ndarray, pid: int) -> bytes:
    """Complete events (``ph: "X"``), one per row, each preceded by ``,\n``."""
    keys = chunk.name_keys[rows]
    flags = chunk.flags[rows]
    jdk = plan.names.jdk[keys]
    category = np.where(flags & Flag.NATIVE, 2, np.where(flags & Flag.UNTRACED, 3, np.where(jdk, 1, 0)))
    start, end = chunk.start[rows], chunk.end[rows]
    incl = np.asarray(chunk.thread.calls.incl_bytecodes[chunk.lo:chunk.lo + chunk.n], np.int64)[rows]
    excl = exclusive(chunk.thread, rows + chunk.lo, "incl_bytecodes")
    text = _concat([
        f',\n{{"ph":"X","pid":{pid},"tid":{chunk.thread.index},"ts":'.encode(), plan.time(start),
        b',"dur":', plan.time(end - start), b',"name":', plan.name_pool.text(keys),
        b',"cat":', plan.category_pool.text(category),
        b',"args":{"descriptor":', plan.desc_pool.text(keys), b',"flags":', plan.flag_pool.text(flags),
        b',"bytecodes":', _ints(incl), b',"self_bytecodes":', _ints(excl), b',"row":', _ints(rows + chunk.lo),
        b"}}"], len(rows))
    return text.data.tobytes()


def _chrome_native_instants(plan: _ChromePlan, chunk: _Chunk, rows: np.ndarray, pid: int) -> bytes:
    """An instant event where each native call (a synthetic row) happens."""
    text = _concat([
        f',\n{{"ph":"i","s":"t","pid":{pid},"tid":{chunk.thread.index},"ts":'.encode(), plan.time(chunk.start[rows]),
        b',"name":', plan.native_pool.text(chunk.name_keys[rows]), b',"cat":"native","args":{"row":',
        _ints(rows + chunk.lo), b"}}"], len(rows))
    return text.data.tobytes()


def _exception_times(plan: _ChromePlan, thread: ThreadReplay) -> np.ndarray:
    """Times of the exception instants (throws, then catches) the plan keeps."""
    throw, catch = _exception_events(plan, thread)
    return np.concatenate([throw[1], catch[1]])


def _exception_events(plan: _ChromePlan, thread: ThreadReplay):
    """((records, times) of throws, (records, times) of catches) inside the plan's window."""
    exc = thread.exceptions
    timer = _Timer(thread, plan.clock)
    lo, hi = plan.window
    out = []
    for event_field, present in (("throw_event", exc["throw_event"] >= 0),
                                 ("catch_event", (exc["catch_event"] >= 0) & (exc["catch_row"] != CATCH_UNCAUGHT))):
        records = exc[present]
        times = timer(records[event_field]) if len(records) else np.zeros(0, np.int64)
        inside = (times >= lo) & (times < hi)
        out.append((records[inside], times[inside]))
    return out[0], out[1]


def _chrome_exception_instants(analysis: Analysis, plan: _ChromePlan, thread: ThreadReplay, pid: int,
                               cutoff: float) -> tuple[bytes, int]:
    """Instant events for the thread's exceptions: one where each is thrown, one where it is
    caught. Exceptions are few next to calls, so each is written as plain JSON."""
    st = analysis.statics
    events = []
    (throws, throw_times), (catches, catch_times) = _exception_events(plan, thread)

    def where(row: int) -> str:
        if row == CATCH_UNCAUGHT:
            return "uncaught"
        if row == CATCH_CLASS_INIT:
            return "class initialization"
        return analysis.call_name(thread, row) if 0 <= row < len(thread.calls) else "?"

    for kind, records, times in (("throw", throws, throw_times), ("catch", catches, catch_times)):
        for record, t in zip(records.tolist(), times.tolist()):
            if t >= cutoff:
                continue
            throw_row, catch_row, _te, _ce, exc_class = record
            name = st.class_name_of_id(int(exc_class))      # "?" when the recorder could not tell
            label = f"{kind} {name}" if name != "?" else f"{kind} (exception of unknown class)"
            args = json.dumps({"exception": name, "thrown_in": where(int(throw_row)),
                               "caught_in": where(int(catch_row))}, separators=(",", ":"))
            ts = plan.time(np.array([t], np.int64)).data.tobytes().decode()
            events.append(f',\n{{"ph":"i","s":"t","pid":{pid},"tid":{thread.index},"ts":{ts},'
                          f'"name":{json.dumps(label)},"cat":"exception","args":{args}}}')
    return "".join(events).encode(), len(events)


# ====================================================================== tables

@dataclass
class _Columns:
    """One chunk of a table: integer columns (None: empty), string columns as a pool and each
    row's key into it, and columns holding one value for the whole chunk."""

    n: int
    ints: dict[str, np.ndarray | None]
    strings: dict[str, tuple[_KeyedPool, np.ndarray]]
    constants: dict[str, str | int]


def _call_chunks(analysis: Analysis, threads: list[ThreadReplay], progress: Progress,
                 cancelled: IsCancelled, result: ExportResult) -> Iterator[_Columns]:
    clock = has_clock(threads)
    result.has_clock = clock
    names = _Names(analysis.statics)
    pools = {"class": names.pool(lambda p: p[0], _csv_field), "method": names.pool(lambda p: p[1], _csv_field),
             "descriptor": names.pool(lambda p: p[2], _csv_field)}
    flag_pool = _KeyedPool(_flag_text, _csv_field)
    total = sum(len(t.calls) for t in threads)
    done = 0
    for t in threads:
        calls = t.calls
        for chunk in _timed_chunks(t, clock, cancelled):
            lo, hi = chunk.lo, chunk.lo + chunk.n
            keys = names.keys(chunk.method, chunk.site)
            incl_bc = np.asarray(calls.incl_bytecodes[lo:hi], np.int64)
            incl_bl = np.asarray(calls.incl_blocks[lo:hi], np.int64)
            rows = np.arange(lo, hi, dtype=np.int64)
            yield _Columns(chunk.n, {
                "row": rows, "parent": chunk.parent, "depth": chunk.depth,
                "method_id": np.where(keys < names.site_base, keys, chunk.method), "first_event": chunk.first,
                "last_event": chunk.last, "start_ns": chunk.start if clock else None,
                "end_ns": chunk.end if clock else None, "incl_bytecodes": incl_bc,
                "excl_bytecodes": exclusive(t, rows, "incl_bytecodes"), "incl_blocks": incl_bl,
                "excl_blocks": exclusive(t, rows, "incl_blocks")},
                {**{name: (pool, keys) for name, pool in pools.items()}, "flags": (flag_pool, chunk.flags)},
                {"thread": t.index, "thread_name": t.name})
            done += chunk.n
            if progress is not None:
                progress(done, total)


def _block_chunks(analysis: Analysis, threads: list[ThreadReplay], cancelled: IsCancelled) -> Iterator[_Columns]:
    """The blocks table: executed blocks in static order, counted over the selected threads."""
    st = analysis.statics
    if len(threads) == len(analysis.threads):
        counts = np.asarray(analysis.block_counts[:st.n_blocks], np.int64)
    else:
        counts = np.zeros(st.n_blocks, np.int64)
        for t in threads:
            counts += t.block_counts[:st.n_blocks]
    executed = np.nonzero(counts)[0]
    names = _Names(st)
    pools = {"class": names.pool(lambda p: p[0], _csv_field), "method": names.pool(lambda p: p[1], _csv_field),
             "descriptor": names.pool(lambda p: p[2], _csv_field)}
    lines = _KeyedPool(lambda gb: st.b_lines[gb] or "", _csv_field)
    for lo in range(0, len(executed), CHUNK_ROWS):
        _check_cancelled(cancelled)
        gb = executed[lo:lo + CHUNK_ROWS]
        method = st.b_method[gb].astype(np.int64)
        yield _Columns(len(gb), {
            "method_id": method, "block": st.b_index[gb], "start_offset": st.b_start[gb],
            "end_offset": st.b_end[gb], "count": counts[gb],
            "bytecodes": counts[gb] * st.b_metrics[gb, 0].astype(np.int64)},
            {**{name: (pool, method) for name, pool in pools.items()}, "lines": (lines, gb)}, {})


def _csv_rows(columns: tuple[tuple[str, str, str], ...], cols: _Columns) -> bytes:
    parts: list[bytes | _Text] = []
    for i, (name, _kind, _doc) in enumerate(columns):
        if i:
            parts.append(b",")
        if name in cols.constants:
            value = cols.constants[name]
            parts.append(_csv_field(value) if isinstance(value, str) else str(value).encode())
        elif name in cols.strings:
            pool, keys = cols.strings[name]
            parts.append(pool.text(keys))
        elif cols.ints[name] is not None:
            parts.append(_ints(cols.ints[name]))
        # else: a column without values in this export stays empty
    parts.append(b"\n")
    return _concat(parts, cols.n).data.tobytes()


def _arrow_table(pa, schema, columns: tuple[tuple[str, str, str], ...], cols: _Columns):
    arrays = []
    for name, kind, _doc in columns:
        arrow_type = getattr(pa, kind)()
        if name in cols.constants:
            arrays.append(pa.array([cols.constants[name]] * cols.n, arrow_type))
        elif name in cols.strings:
            pool, keys = cols.strings[name]
            arrays.append(pa.array(pool.strings(keys), arrow_type))
        elif cols.ints[name] is not None:
            arrays.append(pa.array(np.asarray(cols.ints[name]).astype(kind)))
        else:
            arrays.append(pa.nulls(cols.n, arrow_type))
    return pa.Table.from_arrays(arrays, schema=schema)


# ====================================================================== collapsed stacks

@numba.njit(cache=True, nogil=True)
def _tree_depth(parent):  # pragma: no cover - numba
    """Depth of every node of a tree whose parents come before their children (-1: a root)."""
    depth = np.zeros(len(parent), np.int64)
    for i in range(len(parent)):
        p = parent[i]
        if p >= 0:
            depth[i] = depth[p] + 1
    return depth


def _frame(text: str) -> str:
    """A frame name collapsed stacks can hold: no ';' (the separator) and no line breaks."""
    text = text.replace(";", ",").replace("\n", " ").replace("\r", " ").strip()
    return text or "?"


@numba.njit(cache=True, nogil=True)
def _fold_deep(parent, depth, fold, w):  # pragma: no cover - numba
    """Add the weight of every node deeper than ``fold`` to its ancestor at depth ``fold``."""
    anc = np.arange(len(parent))
    for i in range(len(parent)):
        if depth[i] > fold:
            anc[i] = anc[parent[i]]
            w[anc[i]] += w[i]
            w[i] = 0


def _thread_total(thread: ThreadReplay, column: str) -> int:
    """The sum of a column over the thread's top-level calls: its whole count."""
    calls = thread.calls
    total = 0
    for lo in range(0, len(calls), 1 << 22):
        top = np.asarray(calls.parent[lo:lo + (1 << 22)]) < 0
        total += int(np.asarray(getattr(calls, column)[lo:lo + (1 << 22)], np.int64)[top].sum())
    return total


def _merged_contexts(analysis: Analysis, threads: list[ThreadReplay], weight: str, per_thread: bool,
                     max_depth: int | None, capped: list[str], progress: Progress,
                     cancelled: IsCancelled, folded: list[int] | None = None) -> Iterator[tuple[bytes, int]]:
    """Lines ``frame;…;frame count`` of every calling context with a non-zero count, level by level.

    The threads' calling-context trees are merged into one by frame names (contexts of different
    threads, and contexts whose frames print the same, add up), one tree level at a time with
    numpy; only two levels of path strings are held at once. A tree capped during replay keeps
    its totals: its overflow node (whose inclusive counts include its own nested calls again) is
    given what the thread's top-level calls hold beyond the rest of the tree."""
    names = _Names(analysis.statics)
    frame_ids: dict[str, int] = {}
    frame_list: list[str] = []

    def frame_id(text: str) -> int:
        text = _frame(text)
        got = frame_ids.get(text)
        if got is None:
            got = frame_ids[text] = len(frame_list)
            frame_list.append(text)
        return got

    parents, frames, weights = [], [], []
    offset = 0
    for t in threads:
        cct = t.cct
        parent = np.asarray(cct.get("parent", np.zeros(0, np.int64)), np.int64)
        if not len(parent):
            continue
        key = np.asarray(cct["key"], np.int64)
        native = (np.asarray(cct["flags"], np.int64) & Flag.NATIVE) != 0
        if weight == "calls":
            w = np.asarray(cct["calls"], np.int64)
        else:
            column = "incl_bytecodes" if weight == "bytecodes" else "incl_blocks"
            incl = np.asarray(cct[column], np.int64)
            w = incl.copy()
            has = parent >= 0
            np.subtract.at(w, parent[has], incl[has])
        overflow = key == OVERFLOW_KEY
        if overflow.any():
            capped.append(t.name)
            if weight != "calls":
                w[overflow] = 0
                w[np.nonzero(overflow)[0][0]] = max(0, _thread_total(t, column) - int(w.sum()))
        # One frame name per distinct (key, native) pair.
        pair = key * 2 + native
        uniq, inverse = np.unique(pair, return_inverse=True)
        ids = np.array([frame_id(_context_frame(names, int(p) >> 1, bool(p & 1))) for p in uniq.tolist()], np.int64)
        frame = ids[inverse]
        if per_thread:
            # The thread becomes a root frame above its top-level contexts.
            parent = np.concatenate([[-1], np.where(parent >= 0, parent + 1, 0)])
            frame = np.concatenate([[frame_id(t.name)], frame])
            w = np.concatenate([[0], w])
        parents.append(np.where(parent >= 0, parent + offset, -1))
        frames.append(frame)
        weights.append(w)
        offset += len(parent)
    if not parents:
        return
    parent = np.concatenate(parents)
    frame = np.concatenate(frames)
    w = np.concatenate(weights)
    if np.any(parent >= np.arange(len(parent))):
        raise ExportError("a calling-context tree lists a context before its caller; replay the trace again")
    depth = _tree_depth(parent)
    if max_depth is not None:
        fold = max_depth + (1 if per_thread else 0)
        if int(depth.max()) > fold:
            if folded is not None:
                folded.append(int(depth.max()) + 1)
            _fold_deep(parent, depth, fold, w)
            keep = depth <= fold       # parents come first, so the kept nodes keep their numbering order
            renumber = np.cumsum(keep) - 1
            parent = np.where(parent[keep] >= 0, renumber[np.maximum(parent[keep], 0)], -1)
            frame, w, depth = frame[keep], w[keep], depth[keep]
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    frame_text = np.array(frame_list + [""], dtype=object)[:-1]
    merged = np.empty(len(parent), np.int64)     # each node's merged node, numbered within its level
    previous_paths = np.zeros(0, dtype=object)
    n_frames = len(frame_list)
    for level in range(len(bounds) - 1):
        _check_cancelled(cancelled)
        if progress is not None:
            progress(int(bounds[level]), len(parent))      # contexts done
        nodes = order[bounds[level]:bounds[level + 1]]
        up = merged[parent[nodes]] if level else np.full(len(nodes), -1, np.int64)
        uniq, inverse = np.unique((up + 1) * n_frames + frame[nodes], return_inverse=True)
        merged[nodes] = inverse
        counts = np.zeros(len(uniq), np.int64)
        np.add.at(counts, inverse, w[nodes])
        up_of, frame_of = uniq // n_frames - 1, uniq % n_frames
        paths = frame_text[frame_of] if not level else previous_paths[up_of] + ";" + frame_text[frame_of]
        shown = counts > 0
        if shown.any():
            lines = paths[shown] + " " + counts[shown].astype(str).astype(object)
            yield ("\n".join(lines.tolist()) + "\n").encode("utf-8", "surrogateescape"), int(shown.sum())
        previous_paths = paths


def _context_frame(names: _Names, key: int, native: bool) -> str:
    """The frame name of a calling-context key: ``pkg.Cls.method(Params)``."""
    if key == OVERFLOW_KEY:
        return "(more contexts)"
    if key >= SYNTHETIC_KEY:
        cls, method, desc = names.parts(names.site_base + key - SYNTHETIC_KEY)
        return f"{cls}.{method}{java_parameters(desc)} [{'native' if native else 'untraced'}]"
    if not 0 < key < names.site_base or not names.named[key]:
        return f"<method {key}>"
    cls, method, desc = names.parts(key)
    return f"{cls}.{method}{java_parameters(desc)}"
