"""The calls and blocks tables as CSV with a header line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

from jbgui.model.analysis import Analysis
from jbgui.model.export.common import (
    BLOCK_COLUMNS, CALL_COLUMNS, ExportResult, IsCancelled, Progress, _atomic_output, _check_table,
    select_threads)
from jbgui.model.export.rows import _Columns, _block_chunks, _call_chunks
from jbgui.model.export.text import _Text, _concat, _csv_field, _ints


def export_csv(analysis: Analysis, path: str | Path, table: str = "calls", threads: Sequence[str | int] = (),
               progress: Progress = None, cancelled: IsCancelled = None) -> ExportResult:
    """One table (``calls`` or ``blocks``) as CSV with a header line."""
    with _atomic_output(path) as out:
        return write_csv(analysis, out, table, threads, progress, cancelled, str(path))


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
