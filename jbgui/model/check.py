"""A sanity check of a trace directory against docs/trace-format.md, like the Tracing JVM's
check-trace: every file readable and well formed, the counts of trace.json and threads.jsonl
agreeing with the streams, every id defined before use, and the call structure balanced where
the format says it must be.

:func:`check_trace` returns structured :class:`Finding` objects (severity, file, location,
message) that ``jbtrace check`` prints and the explorer can show. Severities:

- ``fatal``: the trace cannot be read at all (no such directory, not a trace, an unsupported
  format version);
- ``error``: the trace breaks the format's contract (damaged chunk, counts that disagree, an
  undefined id, a frame without an exit record the format does not explain);
- ``warning``: the trace is valid but incomplete (the JVM was killed, events were lost);
- ``note``: what the format documents as expected (a partial last chunk of a killed JVM's
  trace, class id 0, constructors and StackOverflowError frames without exit records).

Streams are read chunk by chunk, so a trace of any size is checked in bounded memory. Nothing here
imports Qt.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model import statics as S
from jbgui.model.errors import TraceError
from jbgui.model.format.files import is_directory
from jbgui.model.format.chunks import Status, StreamHeaderError, StreamReader
from jbgui.model.format.thread_table import MAX_INDEX, ThreadEntry  # noqa: F401 (part of this module's API)
from jbgui.model.format.thread_table import read_thread_table as _read_threads
from jbgui.model.format.trace_json import TraceJsonError, read_trace_json, untraced_virtual_threads

FATAL, ERROR, WARNING, NOTE = "fatal", "error", "warning", "note"
SEVERITIES = (FATAL, ERROR, WARNING, NOTE)

# Event names, as ``jbtrace dump`` prints them.
TYPE_NAMES = {layout.TYPE_METHOD_START: "START", layout.TYPE_METHOD_END: "END", layout.TYPE_BLOCK: "BLOCK"}
EXT_NAMES = {layout.EXT_CLASS_LOAD: "CLASS_LOAD", layout.EXT_RECEIVER: "RECEIVER",
             layout.EXT_EXCEPTION_EXIT: "EXCEPTION_EXIT", layout.EXT_THREAD_SWITCH: "THREAD_SWITCH",
             layout.EXT_THROWABLE: "THROWABLE",
             # Words of loop records, gone once a FILTER_LOOPS chunk is decoded: named for a stray one.
             # A LOOP_CALL word is a record's call word, or with LOOP_PATH_FLAG its path word (format
             # version 4): loop_word_fields tells them apart.
             layout.EXT_LOOP: "LOOP", layout.EXT_LOOP_CALL: "LOOP_CALL"}
_LOOP_SUBTYPES = (layout.EXT_LOOP, layout.EXT_LOOP_CALL)

_BATCH_EVENTS = 1 << 20
_MAX_EXAMPLES = 5


@dataclass(frozen=True)
class Finding:
    """One thing :func:`check_trace` found. ``file`` is relative to the trace directory ("" for the
    directory itself); ``offset`` is a byte offset in it, ``event`` an event index in a stream,
    ``line`` a line number; ``thread`` a thread index where one applies; ``code`` a short stable
    name of the kind of finding."""

    severity: str
    file: str
    message: str
    code: str = ""
    offset: int | None = None
    event: int | None = None
    line: int | None = None
    thread: int | None = None

    @property
    def location(self) -> str:
        if self.offset is not None:
            return f"offset {self.offset}"
        if self.line is not None:
            return f"line {self.line}"
        if self.event is not None:
            return f"event {self.event}"
        return ""

    def format(self, trace: str | Path | None = None) -> str:
        """``severity: file: location: message``, the file under ``trace`` when given."""
        where = self.file
        if trace is not None:
            where = str(Path(trace) / self.file) if self.file else str(trace)
        parts = [self.severity] + [p for p in (where, self.location) if p]
        return ": ".join(parts) + ": " + self.message

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class CheckReport:
    """The findings, and what was checked (streams, chunks, events, threads)."""

    path: Path
    findings: list[Finding] = field(default_factory=list)
    stats: dict = field(default_factory=lambda: {"streams": 0, "chunks": 0, "events": 0, "threads": 0})

    def add(self, severity: str, file: str, message: str, code: str = "", **where) -> None:
        self.findings.append(Finding(severity, file, message, code, **where))

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def exit_status(self) -> int:
        """0 clean (notes only), 1 errors or warnings, 2 the trace cannot be read at all."""
        return exit_status(self.findings)


def exit_status(findings: list[Finding]) -> int:
    severities = {f.severity for f in findings}
    if FATAL in severities:
        return 2
    return 1 if severities & {ERROR, WARNING} else 0


def check_trace(path: str | Path, *, replay: bool = True, analysis=None,
                progress: Callable[[int, int], None] | None = None) -> list[Finding]:
    """Check the trace directory at ``path``; see :func:`run_check`."""
    return run_check(path, replay=replay, analysis=analysis, progress=progress).findings


def run_check(path: str | Path, *, replay: bool = True, analysis=None,
              progress: Callable[[int, int], None] | None = None) -> CheckReport:
    """Check the trace directory at ``path``. ``replay=False`` skips the call-structure check
    (which replays the trace with :class:`jbgui.model.analysis.Analysis`, or uses ``analysis``
    when given); ``progress(done_bytes, total_bytes)`` follows the stream scan."""
    report = CheckReport(Path(path))
    _Checker(report, progress).run(replay, analysis)
    return report


# ---------------------------------------------------------------------- thread table

def read_thread_table(trace_path: str | Path, partial_last_line_ok: bool = True
                      ) -> tuple[dict[int, ThreadEntry], list[Finding]]:
    """threads.jsonl, tolerant of any damage: the threads by index, and what was wrong with it
    (as findings; a partial last line is a note where a killed JVM explains it)."""
    path = Path(trace_path) / "threads.jsonl"
    try:
        table = _read_threads(path)
    except TraceError as error:
        return {}, [Finding(ERROR, path.name, _strip(str(error), path), "unreadable")]
    findings = []
    for p in table.problems:
        code, text = p.code, p.text
        if code == "partial-line" and not partial_last_line_ok:
            code, text = "bad-record", "not a thread record (JSON object with 'kind' and 'index'; cut off)"
        findings.append(Finding(NOTE if code == "partial-line" else ERROR, path.name, text, code, line=p.line,
                                thread=p.thread))
    return table.threads, findings


# ---------------------------------------------------------------------- the checker

@dataclass
class _Stream:
    """What the chunk walk learnt about one stream file."""

    rel: str
    thread: int          # thread index (per-thread) or 0 (shared)
    events: int = 0
    chunks: int = 0
    last_flag: bool = False
    lost: bool = False
    cut_off: bool = False
    damaged: bool = False
    readable: bool = True


class _Tally:
    """Word-check findings of one stream, aggregated per kind: the first event and a count."""

    def __init__(self):
        self.items: dict[str, list] = {}

    def add(self, code: str, severity: str, mask: np.ndarray, first: int, describe: Callable[[int], str]) -> None:
        hits = np.flatnonzero(mask)
        if not len(hits):
            return
        item = self.items.get(code)
        if item is None:
            i = int(hits[0])
            self.items[code] = [severity, first + i, len(hits), describe(i)]
        else:
            item[2] += len(hits)

    def findings(self, rel: str, thread: int | None) -> list[Finding]:
        out = []
        for code, (severity, event, count, message) in self.items.items():
            more = f" ({count} events like this; the first is shown)" if count > 1 else ""
            out.append(Finding(severity, rel, message + more, code, event=event, thread=thread))
        return out


class _Checker:
    def __init__(self, report: CheckReport, progress):
        self.r = report
        self.path = report.path
        self.progress = progress
        self.metadata: dict | None = None
        self.running = False
        self.statics: S.Statics | None = None
        self.static_truncated = False
        self.threads: dict[int, ThreadEntry] = {}
        self.streams: list[_Stream] = []

    # ------------------------------------------------------------------ driver

    def run(self, replay: bool, analysis) -> None:
        r = self.r
        if not self.path.exists():
            r.add(FATAL, "", f"{self.path}: no such trace directory", "missing")
            return
        if not self.path.is_dir():
            r.add(FATAL, "", f"{self.path}: not a directory", "not-a-directory")
            return
        has_events = (self.path / "events").is_dir()
        if not (self.path / "trace.json").exists() and not (self.path / "static.xml").exists() and not has_events:
            r.add(FATAL, "", f"{self.path}: not a jbgui trace directory (no trace.json, static.xml or events/)",
                  "not-a-trace")
            return
        if not self._check_metadata():
            return
        self._check_statics()
        self.threads, found = read_thread_table(self.path, partial_last_line_ok=self.running)
        r.findings.extend(found)
        r.stats["threads"] = len(self.threads)
        self._check_streams()
        self._check_counts()
        if replay:
            self._check_frames(analysis)

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.path).as_posix()

    # ------------------------------------------------------------------ trace.json

    def _check_metadata(self) -> bool:
        """False when the trace cannot be read at all."""
        r = self.r
        try:
            read = read_trace_json(self.path / "trace.json")
        except TraceJsonError as error:
            if error.code == "missing":
                r.add(ERROR, "trace.json", "missing: the run's metadata and status are unknown", "missing")
            else:
                r.add(ERROR, "trace.json", _strip(str(error), self.path / "trace.json"), error.code,
                      offset=error.offset)
            return True
        for problem in read.problems:
            r.add(ERROR, "trace.json", problem.text, problem.code)
        meta = read.metadata
        self.metadata = meta
        if meta.get("format") != "jbgui-trace":
            r.add(ERROR, "trace.json", f"format {meta.get('format')!r}, expected 'jbgui-trace'", "format")
        version = meta.get("format_version")
        if version not in layout.READABLE_FORMAT_VERSIONS:
            r.add(FATAL, "trace.json", f"format version {version}; this jbgui reads versions "
                  f"{', '.join(map(str, layout.READABLE_FORMAT_VERSIONS))}",
                  "format-version")
            return False
        status = meta.get("status")
        if status == "running":
            self.running = True
            r.add(WARNING, "trace.json", "status 'running': the JVM did not finish (killed, halted or crashed); "
                  "the trace ends where it was cut off", "running")
        elif status != "complete":
            r.add(ERROR, "trace.json", f"status {status!r}, expected 'complete' or 'running'", "status")
        widths = meta.get("event_layout")
        expected = {"type_bits": 2, "method_bits": layout.METHOD_BITS, "block_bits": layout.BLOCK_BITS}
        if isinstance(widths, dict) and widths != expected:
            r.add(ERROR, "trace.json", f"event_layout {widths}, this jbgui reads {expected}", "event-layout")
        return True

    def _option(self, name: str):
        """An agent option as trace.json repeats it (None when unknown)."""
        agent = (self.metadata or {}).get("agent")
        options = agent.get("options") if isinstance(agent, dict) else None
        return options.get(name) if isinstance(options, dict) else None

    def _events_selected(self) -> set[str] | None:
        events = self._option("events")
        return set(events) if isinstance(events, list) else None

    # ------------------------------------------------------------------ static.xml

    def _check_statics(self) -> None:
        r = self.r
        xml = self.path / "static.xml"
        if not _lexists(xml):
            r.add(ERROR, "static.xml", "missing: ids cannot be checked", "missing")
            return
        try:
            self.statics = S.load_statics(self.path, _statics_cache(self.path))
        except TraceError as error:
            r.add(ERROR, "static.xml", _strip(str(error), xml), "unreadable")
            return
        size = _size(xml)
        for problem in self.statics.problems:
            self.static_truncated = True
            text = _strip(problem, xml).removeprefix("static.xml: ")
            line = None
            if text.startswith("line "):
                head, _, rest = text.partition(": ")
                line = int(head[5:]) if head[5:].isdigit() else None
                text = rest
            if "malformed" in text or "not integers" in text:   # statics.py's words for bad values
                r.add(ERROR, "static.xml", text, "malformed", line=line)
            elif self.running:
                r.add(NOTE, "static.xml", f"{text}; a killed JVM's static.xml may end inside a class "
                      f"({size} bytes)", "truncated", line=line)
            else:
                r.add(ERROR, "static.xml", f"{text}; file of {size} bytes", "truncated", line=line)
        st = self.statics
        unresolved = int((st.h_target < 0).sum())
        if unresolved:
            r.add(ERROR, "static.xml", f"{unresolved} exception handlers name basic_block_id values that no block "
                  "has", "undefined-handler")

    # ------------------------------------------------------------------ streams

    def _check_streams(self) -> None:
        events_dir = self.path / "events"
        shared = events_dir / "shared.jbt"
        files: list[tuple[Path, int, int]] = []   # path, expected kind, expected thread
        has_shared = _lexists(shared)
        if is_directory(events_dir, self.path):
            try:
                names = sorted(p for p in events_dir.glob("T*.jbt"))
            except OSError as error:
                self.r.add(ERROR, "events", f"cannot list: {error.strerror}", "unreadable")
                names = []
            for p in names:
                digits = p.name[1:-4]
                if digits.isascii() and digits.isdigit() and len(digits) <= 10 and 0 < int(digits) <= MAX_INDEX:
                    files.append((p, layout.STREAM_KIND_THREAD, int(digits)))
                else:
                    self.r.add(ERROR, self._rel(p), "not a stream name (events/T<thread index>.jbt)", "stream-name")
            if has_shared:
                if files:
                    self.r.add(ERROR, "events", "both a shared stream (mode 1) and per-thread streams (mode 2)",
                               "mixed-modes")
                files.append((shared, layout.STREAM_KIND_SHARED, 0))
        elif _lexists(events_dir):
            self.r.add(ERROR, "events", "not a directory inside the trace (a file, or a link leading out)",
                       "unreadable")
        if self._option("mode") == 1 and not has_shared and self._expect_events():
            self.r.add(ERROR, "events/shared.jbt", "missing: trace.json says mode 1", "missing")
        total = sum(_size(p) for p, _k, _t in files) or 1
        done = 0
        checker = _WordChecker(self.statics, self._events_selected(), set(self.threads))
        for p, kind, thread in files:
            self.streams.append(self._walk(p, kind, thread, checker))
            done += _size(p)
            if self.progress is not None:
                self.progress(done, total)
        self.r.stats["streams"] = len(self.streams)
        self.r.stats["chunks"] = sum(s.chunks for s in self.streams)
        self.r.stats["events"] = sum(s.events for s in self.streams)

    def _expect_events(self) -> bool:
        counts = (self.metadata or {}).get("counts", {})
        return isinstance(counts, dict) and bool(counts.get("events"))

    def _walk(self, path: Path, kind: int, thread: int, checker: _WordChecker) -> _Stream:
        """Walk one stream chunk by chunk: structure here, words in ``checker``."""
        r = self.r
        rel = self._rel(path)
        info = _Stream(rel, thread)
        tally = _Tally()
        tag = thread if kind == layout.STREAM_KIND_THREAD else None
        cut_severity = NOTE if self.running else ERROR
        try:
            reader = StreamReader(path, self.path)
        except StreamHeaderError as error:
            severity = cut_severity if error.empty else ERROR
            r.add(severity, rel, _strip(str(error), path), error.code, offset=error.offset, thread=tag)
            info.readable = False
            return info
        except TraceError as error:
            r.add(ERROR, rel, _strip(str(error), path), "unreadable", thread=tag)
            info.readable = False
            return info
        with reader:
            size = reader.size
            h = reader.header
            if h.header_size != layout.STREAM_HEADER_SIZE:
                r.add(ERROR, rel, f"header size {h.header_size}, expected {layout.STREAM_HEADER_SIZE}",
                      "header-size", offset=6, thread=tag)
            if h.kind != kind:
                r.add(ERROR, rel, f"stream kind {h.kind}, expected {kind} for this file name", "stream-kind",
                      offset=8, thread=tag)
            if h.thread != thread:
                r.add(ERROR, rel, f"thread index {h.thread} in the header, {thread} in the file name",
                      "stream-thread", offset=12, thread=tag)
            expected_first = 0
            batch: list[np.ndarray] = []
            batch_first = 0
            state = checker.new_state(kind)
            for record in reader.chunks():
                pos = record.offset
                text = re.sub(r"^offset \d+: ", "", _strip(record.message, path))   # the finding has the offset
                if record.status is Status.CUT_OFF:
                    r.add(cut_severity, rel, text, "cut-off", offset=pos, thread=tag)
                    info.cut_off = True
                    break
                if record.status is Status.CRC_ERROR:
                    partial = self.running and record.header.end == size
                    r.add(NOTE if partial else ERROR, rel,
                          f"chunk CRC mismatch{' in the last chunk (partly written when the JVM was killed)' if partial else ''}"
                          f"; {size - pos} bytes not checked", "crc", offset=pos, thread=tag)
                    info.damaged = not partial
                    info.cut_off = partial
                    break
                if not record.ok:
                    r.add(ERROR, rel, text, record.code, offset=pos, thread=tag)
                    info.damaged = True
                    break
                c = record.header
                if info.last_flag:
                    r.add(ERROR, rel, "a chunk follows the chunk flagged as the stream's last", "after-last",
                          offset=pos, thread=tag)
                gap = False
                if c.flags & layout.CHUNK_FLAG_LOST_BEFORE:
                    info.lost = True
                    lost = f"{c.first - expected_first} events" if c.first > expected_first else "events"
                    r.add(WARNING, rel, f"{lost} were lost before event {c.first} (the tracer could not flush)",
                          "lost-events", offset=pos, event=c.first, thread=tag)
                    gap = True
                if c.reserved:
                    r.add(ERROR, rel, f"reserved chunk header field is {c.reserved}, expected 0", "chunk-reserved",
                          offset=pos + 28, thread=tag)
                if batch and (gap or sum(map(len, batch)) >= _BATCH_EVENTS):
                    checker.check(state, _join(batch), batch_first, tally)
                    batch = []
                if gap:
                    state.after_gap()
                if not batch:
                    batch_first = c.first
                batch.append(record.words)
                info.chunks += 1
                info.events += c.count
                info.last_flag = bool(c.flags & layout.CHUNK_FLAG_LAST)
                expected_first = c.first + c.count
            if batch:
                checker.check(state, _join(batch), batch_first, tally)
            checker.finish(state, tally, expected_first, complete=not self.running and not info.cut_off
                           and not info.damaged)
        r.findings.extend(tally.findings(rel, tag))
        return info

    # ------------------------------------------------------------------ cross-checks

    def _check_counts(self) -> None:
        r = self.r
        complete = self.metadata is not None and not self.running
        per_thread = [s for s in self.streams if s.rel.startswith("events/T")]
        shared = [s for s in self.streams if s.rel == "events/shared.jbt"]
        for s in per_thread:
            entry = self.threads.get(s.thread)
            if entry is None or entry.start is None:
                if self.threads or complete:
                    r.add(ERROR if complete else NOTE, "threads.jsonl",
                          f"no start record for thread {s.thread}, which has a stream", "no-start-record",
                          thread=s.thread)
                continue
            if entry.end is None:
                if complete:
                    r.add(ERROR, "threads.jsonl", f"no end record for thread {s.thread} ({entry.name}) in a "
                          "complete trace", "no-end-record", thread=s.thread)
                continue
            events = entry.end.get("events")
            if isinstance(events, int) and events != s.events and s.readable and not s.damaged:
                r.add(NOTE if s.cut_off and self.running else ERROR, "threads.jsonl", f"thread {s.thread} ({entry.name}): the end record says "
                      f"{events} events, {s.rel} holds {s.events}", "event-count", thread=s.thread)
            ended = entry.end.get("alive_at_exit") is False
            if complete and s.readable and not s.damaged and ended != s.last_flag:
                said = "ended" if ended else "was alive at exit"
                flagged = "is" if s.last_flag else "is not"
                r.add(ERROR, s.rel, f"thread {s.thread} {said} (threads.jsonl), but its last chunk {flagged} "
                      "flagged as the stream's last", "last-flag", thread=s.thread)
        if not per_thread and not shared and self.threads:
            counted = {i for i, e in self.threads.items() if e.end and e.end.get("events")}
            if counted:
                r.add(ERROR, "events", f"no event streams, but threads.jsonl records events for threads "
                      f"{sorted(counted)}", "no-streams")
        if not complete:
            return
        counts = self.metadata.get("counts") if self.metadata else None
        if not isinstance(counts, dict):
            r.add(ERROR, "trace.json", "no 'counts' object", "counts")
            return
        lost = counts.get("lost_events")
        if lost:
            r.add(WARNING, "trace.json", f"{lost} events were lost (the tracer could not flush)", "lost-events")
        untraced = untraced_virtual_threads(self.metadata.get("limits"))
        if untraced:
            r.add(WARNING, "trace.json", untraced, "virtual-threads-untraced")
        if all(s.readable and not s.damaged and not s.cut_off for s in self.streams):
            for key, have, what in (("events", self.r.stats["events"], "the streams hold"),
                                    ("chunks", self.r.stats["chunks"], "the streams hold")):
                if isinstance(counts.get(key), int) and counts[key] != have:
                    r.add(ERROR, "trace.json", f"counts.{key} is {counts[key]}, {what} {have}", f"count-{key}")
        started = sum(1 for e in self.threads.values() if e.start is not None)
        if isinstance(counts.get("threads"), int) and counts["threads"] != started:
            r.add(ERROR, "trace.json", f"counts.threads is {counts['threads']}, threads.jsonl starts {started}",
                  "count-threads")
        st = self.statics
        if st is not None and not self.static_truncated:
            n_classes = sum(1 for name in st.c_name if name)
            # The recorder counts method ids, and a method of more than 2048 blocks owns one id
            # per page of blocks (docs/trace-format.md, "Limits"): count the extra pages too.
            n_methods = int((st.m_key >= 0).sum()) + int(((st.page_base >= 0) & (st.m_key < 0)).sum())
            for key, have in (("classes", n_classes), ("methods", n_methods)):
                if isinstance(counts.get(key), int) and counts[key] != have:
                    r.add(ERROR, "trace.json", f"counts.{key} is {counts[key]}, static.xml defines {have}",
                          f"count-{key}")

    # ------------------------------------------------------------------ call structure

    def _check_frames(self, analysis) -> None:
        r = self.r
        if any(s.rel == "events/shared.jbt" for s in self.streams):
            r.add(NOTE, "events/shared.jbt", "frames not checked: replay reads per-thread streams (mode 2)",
                  "frames-not-checked")
            return
        if not self.streams:
            return
        if analysis is None:
            if self.metadata is None or self.statics is None:
                r.add(NOTE, "", "frames not checked: the trace cannot be replayed without trace.json and "
                      "static.xml", "frames-not-checked")
                return
            from jbgui.model.analysis import Analysis
            try:
                analysis = Analysis.open(self.path)
            except TraceError as error:
                r.add(NOTE, "", f"frames not checked: {error}", "frames-not-checked")
                return
            except Exception as error:  # noqa: BLE001 - an analyzer failure is a finding, never a traceback
                r.add(ERROR, "", f"the analyzer could not replay this trace: {type(error).__name__}: {error}",
                      "replay-failed")
                return
        try:
            meta = json.loads((analysis.cache_dir / "meta.json").read_text())
        except (OSError, ValueError) as error:
            r.add(NOTE, "", f"frames not checked: no replay summary ({error})", "frames-not-checked")
            return
        selected = self._events_selected()
        exits_recorded = selected is None or "exception_exit" in selected
        lost_threads = {s.thread for s in self.streams if s.lost or s.damaged}
        scanned_unknown = {f.thread for f in r.findings if f.code.startswith("undefined-") and f.thread is not None}
        unknown_throwables = {f.thread for f in r.findings if f.code == "unknown-class-throwable"}
        for thread in analysis.threads:
            entry = meta.get("threads", {}).get(str(thread.index), {})
            rel = f"events/T{thread.index:06d}.jbt"
            who = f"thread {thread.index} ({thread.name})"
            if entry.get("unknown_ids") and thread.index not in scanned_unknown:
                r.add(ERROR, rel, f"{who}: replay met {entry['unknown_ids']} undefined ids", "replay-unknown-ids",
                      thread=thread.index)
            if entry.get("inferred_exits") or entry.get("no_start"):
                _frame_findings(r, analysis, thread, rel, who, exits_recorded, thread.index in lost_threads,
                                thread.index in unknown_throwables)


def _frame_findings(r: CheckReport, analysis, thread, rel: str, who: str, exits_recorded: bool, lost: bool,
                    unknown_throwables: bool) -> None:
    """Classify the frames replay had to close without a record, or open without one."""
    from jbgui.model.analysis import Flag

    calls = thread.calls
    flags = np.asarray(calls.flags)
    last = np.asarray(calls.last)
    st = analysis.statics
    exc = thread.exceptions
    order = np.argsort(exc["throw_event"], kind="stable")
    throw_events = exc["throw_event"][order]

    def exception_class(row: int) -> str | None:
        """The class of the exception whose unwinding closed the row ('' unknown, None no record)."""
        j = int(np.searchsorted(throw_events, last[row], side="right")) - 1
        if j < 0:
            return None
        cls = int(exc["exc_class"][order[j]]) or int(calls.exc_class[row])
        return st.c_name[cls] if 0 < cls < len(st.c_name) else ""

    # A THROWABLE of class 0 in this thread means a StackOverflowError left frames (documented).
    overflow = ("java/lang/StackOverflowError", "") if unknown_throwables else ("java/lang/StackOverflowError",)

    groups: dict[str, list[int]] = {}
    final = thread.events - 1
    for row in np.flatnonzero(flags & Flag.INFERRED):
        row = int(row)
        method = int(calls.method[row])
        if not exits_recorded:
            kind = "no-exit-records"
        elif method and st.m_name[method] == "<init>":
            kind = "constructor"
        elif exception_class(row) in overflow:
            kind = "stack-overflow"
        elif thread.ended and flags[row] & Flag.UNCAUGHT and last[row] >= final:
            kind = "open-at-end"
        elif lost:
            kind = "lost"
        else:
            kind = "missing-exit"
        groups.setdefault(kind, []).append(row)
    for row in np.flatnonzero(flags & Flag.NO_START):
        groups.setdefault("lost-start" if lost else "no-start", []).append(int(row))

    texts = {
        "no-exit-records": (NOTE, "frames left by exceptions replayed from the handler lists: the trace was "
                                  "recorded without exception_exit events"),
        "constructor": (NOTE, "constructor frames left by an exception without an EXCEPTION_EXIT (documented: "
                              "thrown before super()/this() completed)"),
        "stack-overflow": (NOTE, "frames left by a StackOverflowError without an EXCEPTION_EXIT (documented: no "
                                 "stack left to record it)"),
        "lost": (WARNING, "frames without an exit record where events were lost"),
        "lost-start": (WARNING, "frames without a START record where events were lost"),
        "open-at-end": (ERROR, "frames still open when the thread ended (depth should be 0): no END or "
                               "EXCEPTION_EXIT"),
        "missing-exit": (ERROR, "frames ended without an END or EXCEPTION_EXIT record (the exit was inferred from "
                                "the handler lists)"),
        "no-start": (ERROR, "frames ended without a START record"),
    }
    for kind, rows in groups.items():
        severity, text = texts[kind]
        examples = ", ".join(f"{analysis.call_name(thread, row)} (events {int(calls.first[row])}..{int(last[row])})"
                             for row in rows[:_MAX_EXAMPLES if severity != NOTE else 1])
        more = f", and {len(rows) - _MAX_EXAMPLES} more" if severity != NOTE and len(rows) > _MAX_EXAMPLES else ""
        r.add(severity, rel, f"{who}: {len(rows)} {text}: {examples}{more}", f"frames-{kind}",
              event=int(last[rows[0]]), thread=thread.index)


# ---------------------------------------------------------------------- event words

@dataclass
class _WordState:
    kind: int
    prev: int = -1          # the previous word (-1: none, or unknown after a gap)
    thread: int = 0         # mode 1: the thread of the last THREAD_SWITCH

    def after_gap(self) -> None:
        self.prev = -1


class _WordChecker:
    """Vectorised checks of event words against static.xml: ids defined, RECEIVER and THROWABLE
    placement, THREAD_SWITCH values."""

    def __init__(self, statics: S.Statics | None, selected: set[str] | None, threads: set[int]):
        self.st = statics
        self.receivers = selected is None or "receiver_type" in selected
        self.throwables = selected is None or "exception_exit" in selected
        self.threads = np.array(sorted(threads), np.int64)
        if statics is None:
            return
        st = statics
        self.m_ok = st.m_key >= 0
        ctor = np.array([name == "<init>" for name in st.m_name], np.bool_)
        self.m_instrumented = (st.m_flags & S.M_INSTRUMENTED) != 0
        self.m_instance = self.m_ok & ((st.m_flags & S.M_STATIC) == 0) & ~ctor & self.m_instrumented
        page_base = st.page_base.astype(np.int64)
        limit = np.full(len(page_base), -1, np.int64)
        valid = page_base >= 0
        if valid.any() and st.n_blocks:
            owners = st.b_method[page_base[valid]]
            limit[valid] = st.m_block_base[owners] + st.m_blocks[owners]
        self.page_base = page_base
        self.page_limit = limit
        self.c_ok = np.array([bool(name) for name in st.c_name], np.bool_)

    def new_state(self, kind: int) -> _WordState:
        return _WordState(kind)

    def check(self, state: _WordState, words: np.ndarray, first: int, tally: _Tally) -> None:
        w = words.astype(np.int64)
        n = len(w)
        t = w >> layout.TYPE_SHIFT
        mid = (w >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
        sub = (w >> layout.SUBTYPE_SHIFT) & 0x7
        val = w & layout.VALUE_MASK
        ext = t == layout.TYPE_EXTENDED
        prev = np.empty(n, np.int64)
        prev[0] = state.prev
        prev[1:] = w[:-1]
        state.prev = int(w[-1])

        tally.add("zero-word", ERROR, w == 0, first, lambda i: "all-zero event word (ids start at 1: never valid)")
        reserved = ext & (sub > layout.EXT_THROWABLE)
        tally.add("reserved-subtype", ERROR, reserved, first,
                  lambda i: f"extended event of reserved subtype {int(sub[i])} (value {int(val[i])}"
                            + (f"; a loop record's word, {loop_word_fields(int(w[i]))}, which only the payload "
                               "of a chunk with FILTER_LOOPS holds" if int(sub[i]) in _LOOP_SUBTYPES else "") + ")")
        switch = ext & (sub == layout.EXT_THREAD_SWITCH)
        if state.kind == layout.STREAM_KIND_THREAD:
            tally.add("switch-in-thread-stream", ERROR, switch, first,
                      lambda i: f"THREAD_SWITCH thread={int(val[i])} in a per-thread stream (mode 1 only)")
        elif len(self.threads):
            unknown = switch & ~np.isin(val, self.threads)
            tally.add("switch-unknown-thread", ERROR, unknown, first,
                      lambda i: f"THREAD_SWITCH to thread {int(val[i])}, which threads.jsonl does not list")

        # Placement: RECEIVER right after the START of an instance method, THROWABLE right after an
        # EXCEPTION_EXIT (both are written with it in one step), and the other way round.
        p_known = prev >= 0
        p_t = prev >> layout.TYPE_SHIFT
        p_start = p_known & (p_t == layout.TYPE_METHOD_START)
        p_exit = p_known & (p_t == layout.TYPE_EXTENDED) & (((prev >> layout.SUBTYPE_SHIFT) & 7) == layout.EXT_EXCEPTION_EXIT)
        receiver = ext & (sub == layout.EXT_RECEIVER)
        throwable = ext & (sub == layout.EXT_THROWABLE)
        tally.add("throwable-misplaced", ERROR, throwable & p_known & ~p_exit, first,
                  lambda i: f"THROWABLE class={int(val[i])} not right after an EXCEPTION_EXIT")
        if self.throwables:
            tally.add("throwable-missing", ERROR, p_exit & ~throwable, first - 1,
                      lambda i: "EXCEPTION_EXIT not followed by its THROWABLE")

        # A start marked START_RECEIVER_OWN stands for its receiver (the method's own class).
        p_own = p_start & ((prev & layout.START_RECEIVER_OWN) != 0)
        if self.st is None:
            tally.add("receiver-misplaced", ERROR, receiver & p_known & ~(p_start & ~p_own), first,
                      lambda i: f"RECEIVER class={int(val[i])} not right after a START")
            return
        m_ok, n_m = self.m_ok, len(self.m_ok)
        p_mid = (prev >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
        p_instance = p_start & (p_mid < n_m) & self.m_instance[np.minimum(p_mid, n_m - 1)]
        tally.add("receiver-misplaced", ERROR, receiver & p_known & ~(p_instance & ~p_own), first,
                  lambda i: f"RECEIVER class={int(val[i])} not right after the START of an instance method "
                            f"without START_RECEIVER_OWN (after {_word_text(int(prev[i]), self.st)})")
        if self.receivers:
            tally.add("receiver-missing", ERROR, p_instance & ~p_own & ~receiver, first - 1,
                      lambda i: f"START of instance method {self.st.method_qualified(int(p_mid[i]))} not followed "
                                "by its RECEIVER")
        own = (t == layout.TYPE_METHOD_START) & ((w & layout.START_RECEIVER_OWN) != 0)
        own_instance = (mid < n_m) & self.m_instance[np.minimum(mid, n_m - 1)]
        tally.add("receiver-own-misplaced", ERROR, own & ~own_instance, first,
                  lambda i: f"START of {_word_text(int(w[i]) & ~layout.START_RECEIVER_OWN, self.st)} marked "
                            "START_RECEIVER_OWN, which only an instance method's start may be")

        # Ids defined in static.xml.
        clamp = np.minimum(mid, n_m - 1)
        defined = (mid < n_m) & m_ok[clamp]
        for typ, name in ((layout.TYPE_METHOD_START, "START"), (layout.TYPE_METHOD_END, "END")):
            tally.add(f"undefined-method-{name.lower()}", ERROR, (t == typ) & ~defined, first,
                      lambda i, name=name: f"{name} m={int(mid[i])}: static.xml defines no method with this id")
        calls = ((t == layout.TYPE_METHOD_START) | (t == layout.TYPE_METHOD_END)) & defined
        tally.add("uninstrumented-method", ERROR, calls & ~self.m_instrumented[clamp], first,
                  lambda i: f"{TYPE_NAMES[int(t[i])]} of {self.st.method_qualified(int(mid[i]))}, which static.xml "
                            "lists as not instrumented")
        exits = ext & (sub == layout.EXT_EXCEPTION_EXIT)
        v_ok = (val < n_m) & m_ok[np.minimum(val, n_m - 1)]
        tally.add("undefined-method-exception_exit", ERROR, exits & ~v_ok, first,
                  lambda i: f"EXCEPTION_EXIT m={int(val[i])}: static.xml defines no method with this id")
        blocks = t == layout.TYPE_BLOCK
        n_p = len(self.page_base)
        pclamp = np.minimum(mid, n_p - 1)
        base = np.where(mid < n_p, self.page_base[pclamp], -1)
        gb = base + (w & (layout.BLOCKS_PER_PAGE - 1))
        tally.add("undefined-block-page", ERROR, blocks & (base < 0), first,
                  lambda i: f"BLOCK m={int(mid[i])} b={int(w[i] & layout.BLOCK_MASK)}: static.xml has no method or block "
                            "page with this id")
        tally.add("undefined-block", ERROR, blocks & (base >= 0) & (gb >= self.page_limit[pclamp]), first,
                  lambda i: f"BLOCK m={int(mid[i])} b={int(w[i] & layout.BLOCK_MASK)}: beyond the blocks static.xml lists for "
                            f"{self.st.method_qualified(int(self.st.b_method[base[i]]))}")
        n_c = len(self.c_ok)
        c_ok = (val < n_c) & self.c_ok[np.minimum(val, n_c - 1)]
        loads = ext & (sub == layout.EXT_CLASS_LOAD)
        tally.add("undefined-class-class_load", ERROR, loads & ~c_ok, first,
                  lambda i: f"CLASS_LOAD class={int(val[i])}: static.xml defines no class with this id")
        for mask, name in ((receiver, "RECEIVER"), (throwable, "THROWABLE")):
            tally.add(f"undefined-class-{name.lower()}", ERROR, mask & (val != 0) & ~c_ok, first,
                      lambda i, name=name: f"{name} class={int(val[i])}: static.xml defines no class with this id")
            tally.add(f"unknown-class-{name.lower()}", NOTE, mask & (val == 0), first,
                      lambda i, name=name: f"{name} class=0: the class could not be looked up (documented: no "
                                           "stack left, as in a StackOverflowError)")

    def finish(self, state: _WordState, tally: _Tally, end: int, complete: bool) -> None:
        """The stream ended: a START or EXCEPTION_EXIT last must have had its second word."""
        if not complete or state.prev < 0:
            return
        prev = state.prev
        t = prev >> layout.TYPE_SHIFT
        if self.throwables and t == layout.TYPE_EXTENDED and (prev >> layout.SUBTYPE_SHIFT) & 7 == \
                layout.EXT_EXCEPTION_EXIT:
            tally.add("throwable-missing", ERROR, np.ones(1, np.bool_), end - 1,
                      lambda i: "EXCEPTION_EXIT not followed by its THROWABLE (last event)")
        if self.st is not None and self.receivers and t == layout.TYPE_METHOD_START \
                and not prev & layout.START_RECEIVER_OWN:
            mid = (prev >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
            if mid < len(self.m_instance) and self.m_instance[mid]:
                tally.add("receiver-missing", ERROR, np.ones(1, np.bool_), end - 1,
                          lambda i: f"START of instance method {self.st.method_qualified(mid)} not followed by its "
                                    "RECEIVER (last event)")


def loop_word_fields(word: int) -> str:
    """The fields of a loop record's word (EXT_LOOP or EXT_LOOP_CALL) met as an event: its value in
    hex, but for a path word (EXT_LOOP_CALL with LOOP_PATH_FLAG, format version 4) its path and the
    leaf's blocks j of the path's bits, ascending, as ``jbtrace dump`` prints them."""
    value = word & layout.VALUE_MASK
    if (word >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK == layout.EXT_LOOP_CALL and value & layout.LOOP_PATH_FLAG:
        path = value & ((1 << layout.LOOP_SPAN_MAX) - 1)
        blocks = ",".join(str(j) for j in range(layout.LOOP_SPAN_MAX) if path >> j & 1)
        return f"path=0x{path:07x} blocks={blocks or '-'}"
    return f"value=0x{value:07x}"


def _word_text(word: int, st: S.Statics | None) -> str:
    t = word >> layout.TYPE_SHIFT
    if t != layout.TYPE_EXTENDED:
        mid = (word >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
        name = st.method_qualified(mid) if st is not None and t != layout.TYPE_BLOCK else ""
        return f"{TYPE_NAMES[t]} m={mid}" + (f" ({name})" if name else "")
    sub = (word >> layout.SUBTYPE_SHIFT) & 7
    if sub in _LOOP_SUBTYPES:
        return f"{EXT_NAMES[sub]} {loop_word_fields(word)}"
    return f"{EXT_NAMES.get(sub, f'EXT{sub}')} {word & layout.VALUE_MASK}"


def _lexists(path: Path) -> bool:
    try:
        os.lstat(path)
        return True
    except OSError:
        return False


def _size(path: Path) -> int:
    """A file's size without following a link (0 when it cannot be had)."""
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def _join(parts: list[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _strip(message: str, path: Path) -> str:
    """A model error's message without its leading ``<path>: ``."""
    prefix = f"{path}: "
    return message[len(prefix):] if message.startswith(prefix) else message


def _statics_cache(trace_path: Path) -> Path | None:
    """Where Analysis keeps the parsed static.xml, so that check, dump and replay parse it once."""
    try:
        from jbgui.model.analysis import _cache_dir
    except ImportError:  # pragma: no cover - the analyzer moved it
        return None
    return _cache_dir(trace_path)


def load_statics_cached(trace_path: str | Path) -> S.Statics:
    """static.xml of a trace, through the analyzer's cache (raises TraceError when it is missing)."""
    return S.load_statics(Path(trace_path), _statics_cache(Path(trace_path)))
