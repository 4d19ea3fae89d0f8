"""``jbtrace dump TRACE [-v]``: the event streams as text, one event per line (the Tracing JVM's
``traceparser``).

Each line is ``thread<TAB>index<TAB>word<TAB>EVENT<TAB>fields``: the thread index, the event's
index in its stream, the raw 32-bit word in hex, the event's name and its fields as numbers
(``m=METHOD b=BLOCK``, ``class=ID``, ``thread=N``). With ``-v`` the fields are resolved against
static.xml: method names with descriptors, block index with its bytecode range and source lines,
class names.

A stream that cannot be read to its end (a damaged chunk) is dumped up to the damage, then the
damage is reported naming the file and byte offset, and the exit status is 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

from jbgui.cli.trace_input import TraceInputError
from jbgui.model import TraceError, layout
from jbgui.model.check import EXT_NAMES, TYPE_NAMES, load_statics_cached, loop_word_fields, read_thread_table
from jbgui.model.statics import Statics
from jbgui.model.format.files import is_directory, show
from jbgui.model.tracedir import TraceDir, iter_stream

NAME = "dump"
HELP = "print the event streams, one event per line (raw, or with names: -v)"

BAD_TRACE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="resolve ids to names: methods with descriptors, blocks with offsets and lines, classes")
    parser.add_argument("--thread", metavar="T", action="append", default=[],
                        help="only this thread (index or name); repeatable")
    parser.add_argument("--from", dest="first", metavar="N", type=_non_negative, default=0,
                        help="start at event N of each stream (default 0)")
    parser.add_argument("--count", metavar="N", type=_non_negative, default=None,
                        help="at most N events per stream")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def run(args: argparse.Namespace) -> int:
    trace = Path(args.trace)
    try:
        trace_dir = TraceDir(trace)
    except TraceError as error:
        raise TraceInputError(str(error)) from error
    events_dir = trace / "events"
    if not is_directory(events_dir, trace):
        raise TraceInputError(f"{show(trace)}: not a trace directory (no events/ folder)")
    statics = None
    if args.verbose:
        try:
            statics = load_statics_cached(trace)
        except TraceError as error:
            raise TraceInputError(f"{error} (dump without -v prints the raw events)") from error
    threads, _ = read_thread_table(trace)
    names = {index: entry.name for index, entry in threads.items()}
    wanted = set(args.thread)
    try:
        streams = [trace_dir.stream_path(i) for i in trace_dir.stream_indices()]
    except TraceError as error:
        raise TraceInputError(str(error)) from error
    for problem in trace_dir.problems:
        print(f"jbtrace: warning: {problem}", file=sys.stderr)
    shared = events_dir / "shared.jbt"
    if os.path.lexists(shared):
        streams.append(shared)
    if not streams:
        print(f"jbtrace: warning: {show(events_dir)}: no event streams (the program recorded no events)", file=sys.stderr)
        return 0
    formatter = _Formatter(statics, names)
    out = sys.stdout
    status = 0
    for path in streams:
        shared_stream = path.name == "shared.jbt"
        thread = 0 if shared_stream else _thread_of(path)
        if not shared_stream and wanted and str(thread) not in wanted and names.get(thread) not in wanted:
            continue
        try:
            problem = _dump_stream(path, thread, shared_stream, args, formatter, wanted, names, out)
        except TraceError as error:
            problem = str(error)
        if problem:
            out.flush()
            print(f"jbtrace: error: {problem}", file=sys.stderr)
            status = BAD_TRACE
    out.flush()
    return status


def _thread_of(path: Path) -> int:
    try:
        return int(path.stem[1:])
    except ValueError:
        return -1


def _dump_stream(path: Path, thread: int, shared: bool, args, formatter: _Formatter, wanted: set[str],
                 names: dict[int, str], out) -> str | None:
    """Write one stream's events; returns the stream's damage, if any."""
    remaining = args.count
    current = thread
    for first, words, _flags, problem in iter_stream(path, 1 << 18):
        if remaining is not None and remaining <= 0:
            break
        lo = max(0, args.first - first)
        if lo < len(words):
            chunk = words[lo:]
            if remaining is not None:
                chunk = chunk[:remaining]
                remaining -= len(chunk)
            if shared:
                threads_col, current = _shared_threads(chunk, current)
                keep = None
                if wanted:
                    keep = np.array([str(t) in wanted or names.get(t) in wanted for t in threads_col.tolist()], bool)
                lines = formatter.lines(chunk, first + lo, threads_col, keep)
            else:
                lines = formatter.lines(chunk, first + lo, np.full(len(chunk), thread, np.int64), None)
            out.write(lines)
        if problem:
            return problem
    return None


def _shared_threads(words: np.ndarray, current: int) -> tuple[np.ndarray, int]:
    """Mode 1: the thread each event belongs to (the value of the last THREAD_SWITCH before it)."""
    w = words.astype(np.int64)
    switch = ((w >> layout.TYPE_SHIFT) == layout.TYPE_EXTENDED) & \
        (((w >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK) == layout.EXT_THREAD_SWITCH)
    values = np.where(switch, w & layout.VALUE_MASK, -1)
    at = np.where(switch, np.arange(len(w)), -1)
    last = np.maximum.accumulate(at) if len(at) else at
    threads = np.where(last >= 0, values[np.maximum(last, 0)], current)
    return threads, int(threads[-1]) if len(threads) else current


class _Formatter:
    """Turns batches of words into text; names are looked up once per distinct id."""

    def __init__(self, statics: Statics | None, thread_names: dict[int, str]):
        self.st = statics
        self.thread_names = thread_names
        self._method_names: dict[int, str] = {}
        self._block_text: dict[int, str] = {}

    def lines(self, words: np.ndarray, first: int, threads: np.ndarray, keep: np.ndarray | None) -> str:
        w = words.astype(np.int64)
        t = w >> layout.TYPE_SHIFT
        out = []
        for i, (word, typ, thread) in enumerate(zip(w.tolist(), t.tolist(), threads.tolist())):
            if keep is not None and not keep[i]:
                continue
            out.append(f"{thread}\t{first + i}\t0x{word:08x}\t{self.describe(word, typ)}\n")
        return "".join(out)

    def describe(self, word: int, typ: int) -> str:
        if typ != layout.TYPE_EXTENDED:
            mid = (word >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
            name = TYPE_NAMES[typ]
            if typ == layout.TYPE_BLOCK:
                index = word & layout.BLOCK_MASK
                return f"{name}\tm={mid} b={index}" + (self._block(word & layout.BLOCK_WORD_MASK) if self.st else "")
            text = f"{name}\tm={mid}" + (self._method(mid) if self.st else "")
            if typ == layout.TYPE_METHOD_START and word & layout.START_RECEIVER_OWN:
                # No RECEIVER word follows: the receiver's class is the method's own.
                own = self.st.class_name_of_id(int(self.st.m_class[mid])) if self.st and mid < len(self.st.m_class) \
                    else "own"
                text += f" receiver={own}"
            return text
        sub = (word >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK
        value = word & layout.VALUE_MASK
        name = EXT_NAMES.get(sub, f"RESERVED{sub}")
        if sub == layout.EXT_THREAD_SWITCH:
            label = self.thread_names.get(value)
            return f"{name}\tthread={value}" + (f" {label}" if label and self.st else "")
        if sub == layout.EXT_EXCEPTION_EXIT:
            return f"{name}\tm={value}" + (self._method(value) if self.st else "")
        if sub in (layout.EXT_LOOP, layout.EXT_LOOP_CALL):
            # a loop record's word left in the events (a chunk without FILTER_LOOPS): no class; a
            # path word (LOOP_CALL with LOOP_PATH_FLAG) as its path and the leaf's blocks in it
            return f"{name}\t{loop_word_fields(word)}"
        if self.st is None:
            return f"{name}\tclass={value}"
        return f"{name}\tclass={value} {self.st.class_name_of_id(value)}"

    def _method(self, mid: int) -> str:
        text = self._method_names.get(mid)
        if text is None:
            name = self.st.method_qualified(mid)
            text = f" {name}" if name else " <undefined method>"
            self._method_names[mid] = text
        return text

    def _block(self, low30: int) -> str:
        text = self._block_text.get(low30)
        if text is None:
            st = self.st
            gb = st.block_of_word(low30)
            if gb < 0 or gb >= st.n_blocks:
                text = " <undefined block>"
            else:
                mid = int(st.b_method[gb])
                lines = st.b_lines[gb]
                text = (f" {st.method_qualified(mid)} #{int(st.b_index[gb])} "
                        f"[{int(st.b_start[gb])},{int(st.b_end[gb])})" + (f" lines {lines}" if lines else ""))
            self._block_text[low30] = text
        return text
