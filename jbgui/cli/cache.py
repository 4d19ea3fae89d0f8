"""``jbtrace cache TRACE [--size] [--clear]``: where a trace's analysis cache is, how big, and
removing it (docs/analysis.md)."""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
from pathlib import Path

from jbgui.cli.trace_input import TraceInputError
from jbgui.model import TraceError
from jbgui.model.analysis import CACHE_NAME, user_cache_dir
from jbgui.model.tracedir import TraceDir

NAME = "cache"
HELP = "show the size of a trace's analysis cache (beside the trace or in the user cache directory) or clear it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--size", action="store_true", help="print where the cache is and its size in bytes "
                        "beside the trace's own size (the default)")
    parser.add_argument("--clear", action="store_true", help="remove the cache (it is rebuilt on the next open)")


def locations(trace: Path) -> list[Path]:
    """Every place a cache of ``trace`` may be: beside it, and in the user cache directory."""
    return [trace / CACHE_NAME, user_cache_dir(trace)]


def _size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):     # never follows symlinks
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def _own_directory(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def run(args: argparse.Namespace) -> int:
    trace = Path(args.trace)
    try:
        TraceDir(trace).metadata
    except TraceError as error:
        raise TraceInputError(str(error)) from error
    trace_size = _size(trace / "events") + ((trace / "static.xml").stat().st_size if (trace / "static.xml").is_file() else 0)
    out = sys.stdout
    if args.clear:
        removed = 0
        for place in locations(trace):
            if place.is_symlink() or (place.exists() and not _own_directory(place)):
                print(f"jbtrace: warning: {place} is not a directory jbgui made: left alone", file=sys.stderr)
                continue
            if _own_directory(place):
                size = _size(place)
                try:
                    shutil.rmtree(place)
                except OSError as error:
                    raise TraceInputError(f"{place}: cannot remove: {error.strerror or error}") from error
                removed += 1
                out.write(f"removed {place} ({size:,} bytes)\n")
        if not removed:
            out.write("no cache\n")
        return 0
    found = False
    for place in locations(trace):
        if _own_directory(place):
            found = True
            size = _size(place)
            ratio = f"{size / trace_size:.2f}" if trace_size else "-"
            out.write(f"{place}\t{size}\t{ratio} of the trace ({trace_size} bytes of events and static.xml)\n")
    if not found:
        out.write("no cache\n")
    return 0
