"""``jbtrace sql TRACE "SELECT …"``: SQL over a replayed trace with DuckDB (docs/sql.md)."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from jbgui.cli.trace_input import TraceInputError, open_analysis

NAME = "sql"
HELP = "run an SQL query (DuckDB) over the trace's tables: calls, methods, classes, threads, blocks, " \
       "edges, call_sites, receivers, exceptions, flags (docs/sql.md)"
FORMATS = ("table", "csv", "json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("query", metavar="QUERY", help="one SQL statement, e.g. \"SELECT count(*) FROM calls\"")
    parser.add_argument("--format", metavar="FORMAT", default="table",
                        help="table (aligned text, default), csv (with a header line) or json (an array of objects)")


def run(args: argparse.Namespace) -> int:
    from jbgui.model.sql import SqlError, query  # DuckDB loads only for this command

    if args.format not in FORMATS:
        raise TraceInputError(f"unknown --format {args.format!r} (one of {', '.join(FORMATS)})")
    if not args.query.strip():
        raise TraceInputError("give a query, e.g. \"SELECT count(*) FROM calls\"")
    analysis = open_analysis(args.trace, progress=True)
    try:
        result = query(analysis, args.query)
    except SqlError as error:
        raise TraceInputError(str(error)) from error
    write(result, args.format, sys.stdout)
    return 0


def write(result, fmt: str, out) -> None:
    """Print a query's result as ``table``, ``csv`` or ``json``."""
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
    elif fmt == "json":
        json.dump([dict(zip(result.columns, _plain(row))) for row in result.rows], out, indent=1)
        out.write("\n")
    else:
        cells = [[_text(v) for v in row] for row in result.rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(result.columns)]
        numeric = [all(isinstance(row[i], (int, float)) or row[i] is None for row in result.rows)
                   for i in range(len(result.columns))]

        def line(values):
            return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()
        out.write(line(result.columns) + "\n")
        out.write("  ".join("-" * w for w in widths) + "\n")
        for row in cells:
            out.write(line(row) + "\n")
        out.write(f"({len(cells)} row{'s' if len(cells) != 1 else ''})\n")


def _text(value) -> str:
    return "NULL" if value is None else str(value)


def _plain(row):
    return [v if v is None or isinstance(v, (int, float, str, bool, list, dict)) else str(v) for v in row]
