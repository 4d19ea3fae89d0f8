"""SQL over a replayed trace with DuckDB (docs/sql.md): the tables are defined here once, and
registered with an in-process DuckDB connection straight from the analysis's arrays.

The per-call columns are numpy arrays (memory-mapped from the analysis store where they are
large); DuckDB scans them in place. Columns that are not stored — a call's row number, its start and
end time (interpolated between clock samples), its own bytecodes and blocks — are computed when a
query names them (or selects ``*``), so that a count over a hundred million calls costs no memory.

The same definitions feed :func:`write_parquet`, which writes every table as Parquet (calls, blocks
and exceptions partitioned by thread, Hive style), so a directory of exported runs reads back in
DuckDB, Spark or any Parquet engine with the schema documented in docs/sql.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from jbgui.model.analysis import Analysis, Flag, ThreadReplay
from jbgui.model.errors import TraceError
from jbgui.model.statics import M_JDK


class SqlError(TraceError):
    """A query DuckDB refused (syntax, unknown table or column, a type error): the message is
    DuckDB's first line."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str          # DuckDB type
    doc: str


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]
    per_thread: bool   # has a ``thread`` column: partitioned by it in Parquet

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _cols(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*s) for s in spec)


# Every table, its columns in order and what they mean (docs/sql.md is written from these).
TABLES: tuple[Table, ...] = (
    Table("calls", "one row per replayed call, per thread in start order (preorder)", _cols(
        ("thread", "INTEGER", "thread index (threads.jsonl; `threads.thread`)"),
        ("row", "BIGINT", "the call's row in its thread's call table (start order)"),
        ("parent", "BIGINT", "row of the caller in the same thread, -1 at the top"),
        ("end_row", "BIGINT", "one past the last row of the call's subtree (its callees are rows row+1 .. end_row-1)"),
        ("depth", "INTEGER", "0 for a thread's top-level calls"),
        ("method", "INTEGER", "method id (`methods.method`); 0 for a synthetic row whose callee has no id"),
        ("call_site", "INTEGER", "the call site it was called from (`call_sites.site`), -1 when none matched"),
        ("caller_block", "INTEGER", "global index of the caller's block that made the call (`blocks.block`), -1 when none"),
        ("receiver", "INTEGER", "class id of the receiver `this` (`classes.class`), 0 when unknown"),
        ("exc_class", "INTEGER", "class id of the exception that ended the call, 0 when it returned"),
        ("first_event", "BIGINT", "index of the call's first event in its thread's stream"),
        ("last_event", "BIGINT", "index of its last event"),
        ("start_ns", "BIGINT", "start, ns since the trace started (interpolated between clock samples; NULL without a clock)"),
        ("end_ns", "BIGINT", "end, ns since the trace started (NULL without a clock)"),
        ("incl_bytecodes", "BIGINT", "bytecodes executed by the call and its callees"),
        ("own_bytecodes", "BIGINT", "bytecodes executed by the call itself"),
        ("incl_blocks", "BIGINT", "basic blocks executed by the call and its callees"),
        ("own_blocks", "BIGINT", "basic blocks executed by the call itself"),
        ("flags", "INTEGER", "flag bits (`flags` table; test with `flags & 8 <> 0` or `has_flag(flags, 'native')`)"),
    ), True),
    Table("methods", "one row per method of static.xml", _cols(
        ("method", "INTEGER", "method id"),
        ("class", "INTEGER", "class id of the declaring class (`classes.class`)"),
        ("class_name", "VARCHAR", "declaring class, dotted"),
        ("name", "VARCHAR", "method name"),
        ("descriptor", "VARCHAR", "JVM method descriptor"),
        ("qualified", "VARCHAR", "pkg.Class.name(descriptor), as `jbtrace calls` prints it"),
        ("blocks", "INTEGER", "basic blocks of the method"),
        ("flags", "INTEGER", "static flags: 1 native, 2 abstract, 4 intrinsic, 8 instrumented, 16 static, "
                             "32 hidden class, 64 called implicitly only, 128 JDK"),
        ("jdk", "BOOLEAN", "declared by a JDK class"),
    ), False),
    Table("classes", "one row per class of static.xml", _cols(
        ("class", "INTEGER", "class id"),
        ("name", "VARCHAR", "class name, dotted"),
        ("package", "VARCHAR", "package, dotted ('' for the default package)"),
        ("super", "VARCHAR", "superclass, dotted ('' when none)"),
        ("loader", "VARCHAR", "the defining class loader, as recorded"),
        ("source", "VARCHAR", "SourceFile attribute ('' when none)"),
        ("jdk", "BOOLEAN", "a JDK class"),
    ), False),
    Table("threads", "one row per replayed thread", _cols(
        ("thread", "INTEGER", "thread index"),
        ("name", "VARCHAR", "thread name"),
        ("events", "BIGINT", "events in the thread's stream"),
        ("calls", "BIGINT", "rows of its call table"),
        ("ended", "BOOLEAN", "the stream holds the thread's end record"),
    ), False),
    Table("blocks", "executed basic blocks per thread: one row per (thread, block) executed at least once", _cols(
        ("thread", "INTEGER", "thread index"),
        ("block", "INTEGER", "global block index (static order)"),
        ("method", "INTEGER", "method id"),
        ("block_index", "INTEGER", "index of the block within its method (code order)"),
        ("start_offset", "INTEGER", "bytecode offset of its first instruction"),
        ("end_offset", "INTEGER", "bytecode offset just past its last instruction"),
        ("bytecodes", "INTEGER", "bytecodes in one execution of the block"),
        ("count", "BIGINT", "times the thread executed it"),
    ), True),
    Table("edges", "block-to-block transitions over the whole run", _cols(
        ("from_block", "INTEGER", "global index of the block left"),
        ("to_block", "INTEGER", "global index of the block entered next in the same frame"),
        ("count", "BIGINT", "times the transition was taken"),
    ), False),
    Table("call_sites", "one row per call site of static.xml, with what replay counted there", _cols(
        ("site", "INTEGER", "call site index"),
        ("block", "INTEGER", "global index of the block holding it"),
        ("caller", "INTEGER", "method id of the method holding it"),
        ("offset", "INTEGER", "bytecode offset of the invoke instruction"),
        ("opcode", "VARCHAR", "invokevirtual, invokespecial, invokestatic, invokeinterface or invokedynamic"),
        ("target", "VARCHAR", "the invoked method as written: pkg.Class.name(descriptor)"),
        ("target_method", "INTEGER", "its method id when resolved, 0 otherwise"),
        ("calls", "BIGINT", "calls made at the site (all threads)"),
        ("receiver_types", "INTEGER", "distinct receiver classes seen (virtual and interface sites)"),
        ("receiver_changes", "BIGINT", "times the receiver class differed from the previous call's"),
    ), False),
    Table("receivers", "receiver classes per call site (the call sites' polymorphism)", _cols(
        ("site", "INTEGER", "call site index (`call_sites.site`)"),
        ("class", "INTEGER", "class id of the receiver"),
        ("count", "BIGINT", "calls at the site with that receiver class"),
    ), False),
    Table("exceptions", "one row per exception thrown (or re-thrown by class initialization)", _cols(
        ("thread", "INTEGER", "thread index"),
        ("exc_class", "INTEGER", "class id of the exception"),
        ("throw_row", "BIGINT", "row of the call it was thrown in"),
        ("throw_method", "INTEGER", "method id of that call"),
        ("throw_event", "BIGINT", "event index of the throw"),
        ("catch_row", "BIGINT", "row of the call that caught it; -1 it left the thread, -2 a static initializer "
                                "consumed it"),
        ("catch_method", "INTEGER", "method id of the catching call (NULL when not caught)"),
        ("catch_event", "BIGINT", "event index where execution resumed"),
        ("unwound", "INTEGER", "frames popped by the exception (0: caught where thrown; not caught: every "
                               "frame from the thrower to the top)"),
    ), True),
    Table("flags", "the call flag bits (docs/analysis.md)", _cols(
        ("name", "VARCHAR", "flag name"),
        ("bit", "INTEGER", "its value in `calls.flags`"),
    ), False),
)

TABLE_BY_NAME = {t.name: t for t in TABLES}

# calls columns that are not stored: computed for a query that names them.
_COMPUTED = ("row", "start_ns", "end_ns", "own_bytecodes", "own_blocks")
# stored column name in CallTable for each calls column read straight from the store.
_STORED = {"parent": "parent", "end_row": "end", "depth": "depth", "method": "method", "call_site": "call_site",
           "caller_block": "caller_block", "receiver": "receiver", "exc_class": "exc_class",
           "first_event": "first", "last_event": "last", "incl_bytecodes": "incl_bytecodes",
           "incl_blocks": "incl_blocks", "flags": "flags"}
_OPCODES = ("invokevirtual", "invokespecial", "invokestatic", "invokeinterface", "invokedynamic")
ALL_FLAGS = Flag.NAMES + (("callback", Flag.CALLBACK), ("inferred", Flag.INFERRED), ("no_start", Flag.NO_START),
                          ("before_wait", Flag.BEFORE_WAIT), ("after_wait", Flag.AFTER_WAIT))


def _duckdb():
    import duckdb  # imported on use: opening a trace does not pay for it
    return duckdb


@numba.njit(cache=True, nogil=True)
def _own(incl, parent):  # pragma: no cover - numba
    """A call's own count: its inclusive count less its direct callees' inclusive counts."""
    n = len(incl)
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i] = incl[i]
    for i in range(n):
        p = parent[i]
        if 0 <= p < n:
            out[p] -= incl[i]
    return out


def referenced(query: str) -> set[str] | None:
    """Identifiers a query names (lower case), or None when it selects ``*`` (every column):
    computed columns are only computed when named. ``count(*)`` is not a ``*`` selection."""
    text = re.sub(r"'(?:[^']|'')*'", " ", query)
    if re.search(r"\*", re.sub(r"\(\s*\*\s*\)", " ", text)) or re.search(r"\bcolumns\s*\(", text, re.I):
        return None
    return {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text)} | \
        {w.lower() for w in re.findall(r'"([^"]+)"', text)}


def _thread_calls(thread: ThreadReplay, wanted: set[str] | None) -> dict[str, np.ndarray]:
    """One thread's calls columns (without ``thread``): those the query names (all for ``*``),
    stored ones as decoded, computed ones computed; the others zeros that are never read."""
    calls = thread.calls
    n = len(calls)
    out: dict[str, np.ndarray] = {}
    want = (lambda name: True) if wanted is None else (lambda name: name in wanted)
    for name in TABLE_BY_NAME["calls"].names:
        if name == "thread":
            continue
        if not want(name):
            # Not named by the query, so never read: zeros from calloc cost no memory and spare
            # decoding a stored column.
            out[name] = np.zeros(n, np.int8)
        elif name in _STORED:
            out[name] = np.asarray(getattr(calls, _STORED[name]))
        elif name == "row":
            out[name] = np.arange(n, dtype=np.int64)
        elif name in ("start_ns", "end_ns"):
            events = calls.first if name == "start_ns" else calls.last
            if len(thread.clock) >= 2:
                out[name] = np.rint(thread.times(np.asarray(events))).astype(np.int64)
            else:
                out[name] = np.zeros(n, np.int8)  # NULLed by the view
        else:
            incl = calls.incl_bytecodes if name == "own_bytecodes" else calls.incl_blocks
            out[name] = _own(np.asarray(incl), np.asarray(calls.parent)) if n else np.zeros(0, np.int64)
    return out


def _dotted(name: str) -> str:
    return name.replace("/", ".")


def _methods(analysis: Analysis) -> dict[str, np.ndarray]:
    st = analysis.statics
    ids = np.array([m for m in range(1, st.max_method_id + 1) if st.m_name[m]], np.int64)
    cls = st.m_class[ids].astype(np.int32) if len(ids) else np.zeros(0, np.int32)
    class_names = [_dotted(st.c_name[int(c)] or "") for c in cls]
    names = [st.m_name[int(m)] for m in ids]
    descs = [st.m_desc[int(m)] for m in ids]
    flags = st.m_flags[ids].astype(np.int32) if len(ids) else np.zeros(0, np.int32)
    return {"method": ids.astype(np.int32), "class": cls, "class_name": np.array(class_names, object),
            "name": np.array(names, object), "descriptor": np.array(descs, object),
            "qualified": np.array([f"{c}.{n}{d}" for c, n, d in zip(class_names, names, descs)], object),
            "blocks": st.m_blocks[ids].astype(np.int32) if len(ids) else np.zeros(0, np.int32),
            "flags": flags, "jdk": (flags & M_JDK) != 0}


def _classes(analysis: Analysis) -> dict[str, np.ndarray]:
    st = analysis.statics
    ids = [c for c in range(len(st.c_name)) if st.c_name[c]]
    names = [_dotted(st.c_name[c]) for c in ids]
    return {"class": np.array(ids, np.int32), "name": np.array(names, object),
            "package": np.array([n.rpartition(".")[0] for n in names], object),
            "super": np.array([_dotted(st.c_super[c] or "") for c in ids], object),
            "loader": np.array([st.c_loader[c] or "" for c in ids], object),
            "source": np.array([st.c_source[c] or "" for c in ids], object),
            "jdk": np.asarray(st.c_jdk, bool)[ids] if len(ids) else np.zeros(0, bool)}


def _threads(analysis: Analysis) -> dict[str, np.ndarray]:
    ts = analysis.threads
    return {"thread": np.array([t.index for t in ts], np.int32), "name": np.array([t.name for t in ts], object),
            "events": np.array([t.events for t in ts], np.int64), "calls": np.array([len(t.calls) for t in ts], np.int64),
            "ended": np.array([bool(t.ended) for t in ts], bool)}


def _blocks(analysis: Analysis, thread: ThreadReplay) -> dict[str, np.ndarray]:
    st = analysis.statics
    counts = np.asarray(thread.block_counts[:st.n_blocks])
    gb = np.flatnonzero(counts)
    return {"block": gb.astype(np.int32), "method": st.b_method[gb].astype(np.int32),
            "block_index": st.b_index[gb].astype(np.int32), "start_offset": st.b_start[gb].astype(np.int32),
            "end_offset": st.b_end[gb].astype(np.int32), "bytecodes": st.b_metrics[gb, 0].astype(np.int32),
            "count": counts[gb].astype(np.int64)}


def _edges(analysis: Analysis) -> dict[str, np.ndarray]:
    e = np.asarray(analysis.edges, np.int64).reshape(-1, 3)
    order = np.lexsort((e[:, 1], e[:, 0]))
    e = e[order]
    return {"from_block": e[:, 0].astype(np.int32), "to_block": e[:, 1].astype(np.int32), "count": e[:, 2]}


def _receivers(analysis: Analysis) -> dict[str, np.ndarray]:
    r = np.asarray(analysis.receivers, np.int64).reshape(-1, 3)
    r = r[np.lexsort((r[:, 1], r[:, 0]))]
    return {"site": r[:, 0].astype(np.int32), "class": r[:, 1].astype(np.int32), "count": r[:, 2]}


def _call_sites(analysis: Analysis) -> dict[str, np.ndarray]:
    st = analysis.statics
    n = st.n_sites
    blocks = np.asarray(st.s_block[:n], np.int64)
    recv = np.asarray(analysis.receivers, np.int64).reshape(-1, 3)
    types = np.bincount(recv[:, 0], minlength=n)[:n] if len(recv) else np.zeros(n, np.int64)
    opcode = np.asarray(st.s_opcode[:n], np.int64)
    return {"site": np.arange(n, dtype=np.int32), "block": blocks.astype(np.int32),
            "caller": st.b_method[blocks].astype(np.int32) if n else np.zeros(0, np.int32),
            "offset": np.asarray(st.s_offset[:n], np.int32),
            "opcode": np.array([_OPCODES[o] if 0 <= o < len(_OPCODES) else "" for o in opcode], object),
            "target": np.array([st.site_qualified(s) for s in range(n)], object),
            "target_method": np.asarray(st.s_target[:n], np.int32),
            "calls": np.asarray(analysis.site_calls[:n], np.int64),
            "receiver_types": types.astype(np.int32),
            "receiver_changes": np.asarray(analysis.site_changes[:n], np.int64)}


def _exceptions(thread: ThreadReplay) -> dict[str, np.ndarray]:
    exc = thread.exceptions
    calls = thread.calls
    n = len(calls)
    throw = exc["throw_row"].astype(np.int64)
    catch = exc["catch_row"].astype(np.int64)
    ok_throw = (throw >= 0) & (throw < n)
    ok_catch = (catch >= 0) & (catch < n)
    method = np.asarray(calls.method)
    depth = np.asarray(calls.depth)
    t_method = np.where(ok_throw, method[np.where(ok_throw, throw, 0)] if n else 0, 0).astype(np.int32)
    c_method = np.where(ok_catch, method[np.where(ok_catch, catch, 0)] if n else 0, 0).astype(np.int32)
    t_depth = np.where(ok_throw, depth[np.where(ok_throw, throw, 0)] if n else 0, 0).astype(np.int64)
    c_depth = np.where(ok_catch, depth[np.where(ok_catch, catch, 0)] if n else 0, -1).astype(np.int64)
    return {"exc_class": exc["exc_class"].astype(np.int32), "throw_row": throw, "throw_method": t_method,
            "throw_event": exc["throw_event"].astype(np.int64), "catch_row": catch,
            "catch_method": c_method, "catch_event": exc["catch_event"].astype(np.int64),
            # not caught: every frame from the thrower up to the top (c_depth -1)
            "unwound": (t_depth - c_depth).astype(np.int32), "_caught": ok_catch}


def _select(table: Table, source: str, thread: int | None = None, nulls: Iterable[str] = ()) -> str:
    """``SELECT`` of a table's columns in order, cast to their documented types."""
    parts = []
    for c in table.columns:
        if c.name == "thread" and thread is not None:
            expr = f"{thread}"
        elif c.name in nulls:
            expr = "NULL"
        elif table.name == "exceptions" and c.name == "catch_method":
            expr = 'CASE WHEN "_caught" THEN "catch_method" END'
        else:
            expr = f'"{c.name}"'
        parts.append(f'CAST({expr} AS {c.type}) AS "{c.name}"')
    return f"SELECT {', '.join(parts)} FROM {source}"


def connect(analysis: Analysis, query: str | None = None, con=None):
    """A DuckDB connection with every table of :data:`TABLES` registered over ``analysis``.
    ``query``, when given, limits the computed calls columns to those it names."""
    duckdb = _duckdb()
    con = con if con is not None else duckdb.connect()
    wanted = referenced(query) if query is not None else None
    clock = all(len(t.clock) >= 2 for t in analysis.threads if len(t.calls)) and any(
        len(t.calls) for t in analysis.threads)

    def union(table: Table, sources: list[tuple[int, dict[str, np.ndarray]]], nulls=()) -> None:
        selects = []
        for index, data in sources:
            name = f"_{table.name}_t{index}"
            con.register(name, data)
            selects.append(_select(table, name, index, nulls))
        if not selects:  # an empty table of the right shape
            selects = [_select(table, "(SELECT 1) WHERE false", None, table.names)]
        con.execute(f'CREATE OR REPLACE TEMP VIEW "{table.name}" AS ' + " UNION ALL ".join(selects))

    calls_needed = wanted is None or bool(wanted & {"calls", "exceptions"})
    union(TABLE_BY_NAME["calls"], [(t.index, _thread_calls(t, wanted)) for t in analysis.threads]
          if calls_needed else [], () if clock else ("start_ns", "end_ns"))
    union(TABLE_BY_NAME["blocks"], [(t.index, _blocks(analysis, t)) for t in analysis.threads]
          if wanted is None or "blocks" in wanted else [])
    union(TABLE_BY_NAME["exceptions"], [(t.index, _exceptions(t)) for t in analysis.threads]
          if wanted is None or "exceptions" in wanted else [])
    singles = {"methods": _methods, "classes": _classes, "threads": _threads, "edges": _edges,
               "call_sites": _call_sites, "receivers": _receivers,
               "flags": lambda a: {"name": np.array([n for n, _ in ALL_FLAGS], object),
                                   "bit": np.array([b for _, b in ALL_FLAGS], np.int32)}}
    for name, build in singles.items():
        table = TABLE_BY_NAME[name]
        if wanted is not None and name not in wanted:
            union(table, [])
            continue
        data = build(analysis)
        con.register(f"_{name}", data)
        con.execute(f'CREATE OR REPLACE TEMP VIEW "{name}" AS ' + _select(table, f"_{name}"))
    con.execute("CREATE OR REPLACE TEMP MACRO has_flag(flags, name) AS "
                "(flags & (SELECT bit FROM (VALUES " + ", ".join(f"('{n}', {b})" for n, b in ALL_FLAGS) +
                ") f(n, bit) WHERE n = name)) <> 0")
    return con


@dataclass
class Result:
    """A query's answer: column names and rows of Python values (``truncated``: more rows than
    the ``max_rows`` asked for)."""

    columns: list[str]
    rows: list[tuple]
    truncated: bool = False


def query(analysis: Analysis, sql: str, max_rows: int | None = None) -> Result:
    """Run one SQL statement over the trace's tables; :class:`SqlError` when DuckDB refuses it.
    ``max_rows`` keeps the first rows only (the explorer's panel)."""
    duckdb = _duckdb()
    try:
        con = connect(analysis, sql)
        cursor = con.execute(sql)
        columns = [d[0] for d in cursor.description] if cursor.description else []
        if not cursor.description:
            rows = []
        elif max_rows is None:
            rows = cursor.fetchall()
        else:
            rows = cursor.fetchmany(max_rows + 1)
    except duckdb.Error as error:
        raise SqlError(_first_line(error)) from error
    truncated = max_rows is not None and len(rows) > max_rows
    return Result(columns, rows[:max_rows] if truncated else rows, truncated)


def _first_line(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    # DuckDB puts the useful half on the second line ("Parser Error: syntax error at or near …").
    if len(lines) > 1 and len(text) < 40:
        text = f"{text} {lines[1]}"
    return f"SQL: {text}"


def write_parquet(analysis: Analysis, directory: str | Path) -> list[Path]:
    """Every table as Parquet under ``directory``: ``calls/``, ``blocks/`` and ``exceptions/``
    partitioned by thread (``thread=N/*.parquet``, Hive style: read them back with
    ``read_parquet('DIR/calls/**/*.parquet', hive_partitioning = true)``), the others as
    ``NAME.parquet``. Returns what it wrote. zstd-compressed."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    con = connect(analysis)
    duckdb = _duckdb()
    try:
        for table in TABLES:
            target = directory / (table.name if table.per_thread else f"{table.name}.parquet")
            quoted = str(target).replace("'", "''")
            if table.per_thread:
                options = "FORMAT PARQUET, COMPRESSION zstd, PARTITION_BY (thread), WRITE_PARTITION_COLUMNS true, OVERWRITE_OR_IGNORE true"
            else:
                options = "FORMAT PARQUET, COMPRESSION zstd"
            con.execute(f"COPY (SELECT * FROM \"{table.name}\") TO '{quoted}' ({options})")
            written.append(target)
    except duckdb.Error as error:
        raise TraceError(f"{directory}: cannot write Parquet: {_first_line(error)}") from error
    finally:
        con.close()
    return written
