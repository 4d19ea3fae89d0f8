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

One module per format (:mod:`.chrome`, :mod:`.collapsed`, :mod:`.csv`, :mod:`.parquet`) over shared
naming (:mod:`.naming`), text rendering (:mod:`.text`), row walking (:mod:`.rows`) and options,
results and output files (:mod:`.common`); this package keeps every public name importable from
``jbgui.model.export``.
"""

from __future__ import annotations

from pathlib import Path

from jbgui.model.analysis import Analysis
from jbgui.model.export.common import (
    FORMATS, TABLES, WEIGHTS, DEFAULT_MAX_EVENTS, CHUNK_ROWS, PARQUET_ROW_GROUP, FLAG_NAMES, CALL_COLUMNS,
    BLOCK_COLUMNS, ExportError, CallFilter, ExportResult, Progress, IsCancelled, check_output, select_threads,
    has_clock)
from jbgui.model.export.naming import java_parameters
from jbgui.model.export.chrome import export_chrome, write_chrome
from jbgui.model.export.collapsed import COLLAPSED_MAX_DEPTH, export_collapsed, write_collapsed
from jbgui.model.export.csv import export_csv, write_csv
from jbgui.model.export.parquet import check_parquet, export_parquet

__all__ = [
    'FORMATS', 'TABLES', 'WEIGHTS', 'DEFAULT_MAX_EVENTS', 'CHUNK_ROWS', 'PARQUET_ROW_GROUP', 'FLAG_NAMES',
    'CALL_COLUMNS', 'BLOCK_COLUMNS', 'ExportError', 'CallFilter', 'ExportResult', 'Progress', 'IsCancelled',
    'check_output', 'select_threads', 'has_clock', 'java_parameters', 'export_chrome', 'write_chrome',
    'COLLAPSED_MAX_DEPTH', 'export_collapsed', 'write_collapsed', 'export_csv', 'write_csv', 'check_parquet',
    'export_parquet', "export"
]


def export(analysis: Analysis, path: str | Path, format: str, **options) -> ExportResult:
    """Export in ``format`` (one of :data:`FORMATS`) with that format's keyword options: the one
    entry point for a caller that lets the user pick the format."""
    functions = {"chrome": export_chrome, "collapsed": export_collapsed, "csv": export_csv,
                 "parquet": export_parquet}
    if format not in functions:
        raise ExportError(f"unknown export format {format!r} (one of {', '.join(FORMATS)})")
    return functions[format](analysis, path, **options)
