"""Chrome trace-event JSON (Perfetto's UI, ``chrome://tracing``): one track per thread, one
complete event per call, instant events for exceptions and native calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

from jbgui import __version__
from jbgui.model.analysis import CATCH_CLASS_INIT, CATCH_UNCAUGHT, Analysis, Flag, ThreadReplay
from jbgui.model.call_queries import exclusive
from jbgui.model.export.common import (
    CallFilter, DEFAULT_MAX_EVENTS, ExportError, ExportResult, IsCancelled, Progress, _atomic_output,
    has_clock, select_threads)
from jbgui.model.export.naming import _Names, _flag_text
from jbgui.model.export.rows import _Chunk, _Timer, _timed_chunks
from jbgui.model.export.text import _KeyedBools, _KeyedPool, _concat, _ints, _json_string, _micros


def export_chrome(analysis: Analysis, path: str | Path, filter: CallFilter | None = None,
                  max_events: int | None = DEFAULT_MAX_EVENTS, truncate: bool = False,
                  progress: Progress = None, cancelled: IsCancelled = None) -> ExportResult:
    """Chrome trace-event JSON of the calls ``filter`` keeps. More than ``max_events`` events
    (complete plus instant; None: no cap) raise :class:`ExportError`, or with ``truncate`` keep the
    earliest ``max_events`` and record a warning."""
    with _atomic_output(path) as out:
        return write_chrome(analysis, out, filter, max_events, truncate, progress, cancelled, str(path))


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
