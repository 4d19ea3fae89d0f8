"""``jbtrace export TRACE --format chrome|collapsed|csv|parquet -o FILE``: write a replayed trace
in a format other tools open (docs/exports.md). The work is done by :mod:`jbgui.model.export`;
this module parses and checks the options, and reports."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from jbgui.cli.trace_input import TraceInputError, open_analysis
from jbgui.model import TraceError
from jbgui.model import export as E

NAME = "export"
HELP = "write the replayed trace for other tools: Chrome trace JSON (Perfetto), collapsed stacks " \
       "(flame graphs), CSV or Parquet tables"
USAGE = ("jbtrace export TRACE --format chrome|collapsed|csv|parquet -o FILE [--thread NAME]...\n"
         "       chrome:    [--start MS] [--end MS] [--include PREFIX]... [--max-depth N] [--max-events N] "
         "[--truncate]\n"
         "       collapsed: [--weight bytecodes|calls|blocks] [--per-thread] [--max-depth N]\n"
         "       csv, parquet: [--table calls|blocks]")

# The format an output file's suffix implies when --format is not given.
SUFFIXES = {".json": "chrome", ".folded": "collapsed", ".collapsed": "collapsed", ".csv": "csv",
            ".parquet": "parquet", ".pq": "parquet"}
# Options that only one format (or two) reads: giving them with another is a mistake worth saying.
ONLY_FOR = {"start": ("chrome",), "end": ("chrome",), "include": ("chrome",), "max_events": ("chrome",),
            "truncate": ("chrome",), "weight": ("collapsed",), "per_thread": ("collapsed",),
            "max_depth": ("chrome", "collapsed"), "table": ("csv", "parquet")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Values are checked in run(), not by argparse, so that a bad one ends in one line
    # "jbtrace: error: …" like every other input error.
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--format", metavar="FORMAT",
                        help="chrome (trace-event JSON for ui.perfetto.dev and chrome://tracing), collapsed "
                             "(stacks for flamegraph.pl and speedscope), csv or parquet; default: from the "
                             "output file's suffix (.json, .folded, .csv, .parquet)")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the file to write ('-' for standard output, except parquet); written to a "
                             "temporary file first and renamed when complete")
    parser.add_argument("--thread", metavar="NAME", action="append", default=[],
                        help="only this thread (name or index); repeatable")
    chrome = parser.add_argument_group("chrome")
    chrome.add_argument("--start", metavar="MS", help="keep calls running at or after MS milliseconds since "
                        "the trace started (thousands of events for a trace without a clock)")
    chrome.add_argument("--end", metavar="MS", help="keep calls that started before MS milliseconds")
    chrome.add_argument("--include", metavar="PREFIX", action="append", default=None,
                        help="keep only calls of classes starting with PREFIX (dotted, e.g. 'com.example.'); "
                             "depth counts kept calls only. Repeatable")
    chrome.add_argument("--max-events", metavar="N",
                        help=f"refuse to write more than N events (default {E.DEFAULT_MAX_EVENTS:,}; 0: no cap)")
    chrome.add_argument("--truncate", action="store_true", default=None,
                        help="over --max-events, keep the earliest N events instead of refusing")
    chrome.add_argument("--max-depth", metavar="N", help="keep calls of depth N at most (0: top-level calls); "
                        "for collapsed stacks, deeper contexts count in their ancestor at depth N")
    collapsed = parser.add_argument_group("collapsed")
    collapsed.add_argument("--weight", metavar="WEIGHT",
                           help="count per stack: bytecodes (the context's own, default), calls or blocks")
    collapsed.add_argument("--per-thread", action="store_true", default=None,
                           help="put the thread's name first in every stack")
    tables = parser.add_argument_group("csv and parquet")
    tables.add_argument("--table", metavar="TABLE",
                        help="calls (one row per call, default) or blocks (one row per executed basic block); "
                             "parquet also takes 'all': every table of `jbtrace sql` into the directory -o DIR, "
                             "partitioned by thread (docs/sql.md)")


def run(args: argparse.Namespace) -> int:
    if not args.output:
        raise TraceInputError("give the output file with -o FILE (-o - for standard output)")
    fmt = _format(args)
    for option, formats in ONLY_FOR.items():
        if getattr(args, option) is not None and fmt not in formats:
            flag = "--" + option.replace("_", "-")
            raise TraceInputError(f"{flag} applies to --format {' and '.join(formats)} only")
    to_stdout = args.output == "-"
    try:
        if fmt == "parquet":
            if to_stdout:
                raise E.ExportError("parquet cannot go to standard output: give a file name with -o")
            E.check_parquet()
        every_table = fmt == "parquet" and args.table == "all"  # the SQL tables (jbgui.model.sql)
        if not to_stdout and not every_table:
            E.check_output(args.output)
        options = {} if every_table else _options(args, fmt)
    except E.ExportError as error:
        raise TraceInputError(str(error)) from error

    analysis = open_analysis(args.trace, progress=True)
    if every_table:
        from jbgui.model.sql import write_parquet
        try:
            written = write_parquet(analysis, args.output)
        except TraceError as error:
            raise TraceInputError(str(error)) from error
        print(f"jbtrace: wrote {len(written)} tables to {args.output} (parquet, partitioned by thread)", file=sys.stderr)
        return 0
    _warn_if_large(analysis, fmt, options)
    progress = _Progress(fmt) if sys.stderr.isatty() else None
    if progress is not None:
        options["progress"] = progress
    try:
        if to_stdout:
            writer = {"chrome": E.write_chrome, "collapsed": E.write_collapsed, "csv": E.write_csv}[fmt]
            result = writer(analysis, sys.stdout.buffer, **options)
            sys.stdout.buffer.flush()
        else:
            result = E.export(analysis, args.output, fmt, **options)
    except TraceError as error:
        raise TraceInputError(str(error)) from error
    finally:
        if progress is not None:
            progress.clear()
    for warning in result.warnings:
        print(f"jbtrace: warning: {warning}", file=sys.stderr)
    print(f"jbtrace: {_summary(result, args.output)}", file=sys.stderr)
    return 0


def _warn_if_large(analysis, fmt: str, options: dict) -> None:
    """Say before writing when the export will be large (jbgui.model.export_estimate)."""
    from jbgui.model import export_estimate as EE

    call_filter = options.get("filter")
    estimate = EE.estimate(analysis, fmt, threads=options.get("threads") or (call_filter.threads if call_filter else ()),
                           table=options.get("table", "calls"),
                           start_ms=call_filter.start_ms if call_filter else None,
                           end_ms=call_filter.end_ms if call_filter else None, max_events=options.get("max_events"))
    if estimate.large:
        advice = "--thread, --start/--end, --max-events" if fmt == "chrome" else "--thread"
        print(f"jbtrace: warning: the export will be {estimate.describe()}; narrow it with {advice}",
              file=sys.stderr)


def _format(args: argparse.Namespace) -> str:
    fmt = args.format
    if fmt is None:
        fmt = SUFFIXES.get(Path(args.output).suffix.lower())
        if fmt is None:
            raise TraceInputError(f"give --format ({', '.join(E.FORMATS)}): the name {args.output!r} does not say "
                                  "which")
    if fmt not in E.FORMATS:
        raise TraceInputError(f"unknown --format {fmt!r} (one of {', '.join(E.FORMATS)})")
    return fmt


def _options(args: argparse.Namespace, fmt: str) -> dict:
    """The model's keyword arguments for ``fmt``, every value checked."""
    threads = list(args.thread)
    if fmt == "chrome":
        max_events = _integer(args.max_events, "--max-events", E.DEFAULT_MAX_EVENTS)
        call_filter = E.CallFilter(threads=threads, start_ms=_number(args.start, "--start"),
                                   end_ms=_number(args.end, "--end"), include=list(args.include or ()),
                                   max_depth=_integer(args.max_depth, "--max-depth", None))
        call_filter.validate()
        return {"filter": call_filter, "max_events": max_events or None, "truncate": bool(args.truncate)}
    if fmt == "collapsed":
        weight = args.weight or "bytecodes"
        if weight not in E.WEIGHTS:
            raise TraceInputError(f"unknown --weight {weight!r} (one of {', '.join(E.WEIGHTS)})")
        return {"weight": weight, "per_thread": bool(args.per_thread), "threads": threads,
                "max_depth": _integer(args.max_depth, "--max-depth", None)}
    table = args.table or "calls"
    if table not in E.TABLES:
        raise TraceInputError(f"unknown --table {table!r} (one of {', '.join(E.TABLES)})")
    return {"table": table, "threads": threads}


def _number(text: str | None, flag: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise TraceInputError(f"{flag} takes milliseconds, not {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise TraceInputError(f"{flag} takes milliseconds since the trace started (0 or more), not {text!r}")
    return value


def _integer(text: str | None, flag: str, default: int | None) -> int | None:
    if text is None:
        return default
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise TraceInputError(f"{flag} takes a whole number, not {text!r}") from None
    if value < 0:
        raise TraceInputError(f"{flag} takes 0 or more, not {value}")
    return value


def _summary(result: E.ExportResult, output: str) -> str:
    where = "standard output" if output == "-" else output
    if result.format == "chrome":
        what = f"{result.rows:,} calls and {result.instants:,} instant events"
        if result.rows and not result.has_clock:
            what += " (no clock: times are event indices)"
    elif result.format == "collapsed":
        what = f"{result.rows:,} stacks"
    else:
        what = f"{result.rows:,} rows"
    return f"wrote {what} to {where} ({result.format})"


class _Progress:
    """A percentage on stderr while a long export runs (only on a terminal)."""

    def __init__(self, fmt: str):
        self.fmt = fmt
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        if percent != self.shown:
            self.shown = percent
            print(f"\rexporting ({self.fmt}): {percent}%", end="", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.shown >= 0:
            print("\r" + " " * 40 + "\r", end="", file=sys.stderr, flush=True)
