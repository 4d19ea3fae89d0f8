"""What every export shares: options, results, errors, the tables' columns, thread selection and
the atomic output file (a failed or cancelled export never leaves a file that looks valid)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jbgui.model.analysis import Analysis, Flag, ThreadReplay
from jbgui.model.errors import TraceError
from jbgui.model.replay import Cancelled


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
