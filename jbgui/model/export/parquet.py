"""The calls and blocks tables as Parquet (needs pyarrow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jbgui.model.analysis import Analysis
from jbgui.model.export.common import (
    BLOCK_COLUMNS, CALL_COLUMNS, ExportError, ExportResult, IsCancelled, PARQUET_ROW_GROUP, Progress,
    _atomic_output, _check_table, select_threads)
from jbgui.model.export.rows import _Columns, _block_chunks, _call_chunks


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


def check_parquet() -> None:
    """Raise :class:`ExportError` (naming ``pip install pyarrow``) when Parquet cannot be written."""
    _pyarrow()


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as error:
        raise ExportError("Parquet export needs pyarrow: pip install pyarrow "
                          "(or install jbgui with its 'parquet' extra)") from error
    return pa, pq


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
