"""``threads.jsonl``: the thread table, one JSON object per line (docs/trace-format.md).

Every record is checked for its shape once here: an object with ``kind`` ``start`` or ``end`` and
an integer ``index``; the other known fields must have their types (a field of the wrong type is
dropped and said). A partial last line is what a killed JVM leaves; a line too long to be a thread
record is skipped without being held in memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from jbgui.model.errors import TraceError
from jbgui.model.format.files import open_file, show
from jbgui.model.format.problems import Problem

# Thread records are a few hundred bytes; a thread name is at most a few KiB in practice.
MAX_LINE = 1 << 16
MAX_THREADS = 1 << 20
MAX_INDEX = (1 << 31) - 1

_FIELDS = {"java_id": int, "name": str, "daemon": bool, "virtual": bool, "group": str, "nanos": int,
           "events": int, "alive_at_exit": bool}


@dataclass
class ThreadEntry:
    """A thread of threads.jsonl: its start record and end record (either may be missing)."""

    index: int
    start: dict | None = None
    end: dict | None = None

    @property
    def name(self) -> str:
        for record in (self.start, self.end):
            if record and record.get("name"):
                return str(record["name"])
        return ""

    def merged(self) -> dict:
        """The start record's fields, with the end record's as ``end_name``, ``events``,
        ``end_nanos`` and ``alive_at_exit``, and the start's time as ``start_nanos``."""
        entry = {"index": self.index}
        if self.start is not None:
            entry.update({k: v for k, v in self.start.items() if k != "kind"})
            entry["start_nanos"] = self.start.get("nanos")
        if self.end is not None:
            entry["end_name"] = self.end.get("name")
            entry["events"] = self.end.get("events")
            entry["end_nanos"] = self.end.get("nanos")
            entry["alive_at_exit"] = self.end.get("alive_at_exit")
        return entry


@dataclass
class ThreadTable:
    """The threads by index (sorted) and what was wrong with the file."""

    threads: dict[int, ThreadEntry] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    partial_last_line: bool = False


def read_thread_table(path: Path) -> ThreadTable:
    """Read ``threads.jsonl`` (an empty table when it is missing). Raises :class:`TraceError`
    only when the file cannot be opened (not a regular file, unreadable)."""
    path = Path(path)
    name = show(path)
    table = ThreadTable()
    try:
        handle = open_file(path)
    except FileNotFoundError:
        return table
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline(MAX_LINE + 1)
            except OSError as error:
                raise TraceError(f"{name}: cannot read: {error.strerror}") from error
            if not raw:
                break
            number += 1
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):     # skip the rest of the long line
                    raw = handle.readline(MAX_LINE + 1)
                table.problems.append(Problem(name, f"a line longer than {MAX_LINE} bytes: not a thread record",
                                              "bad-record", line=number))
                continue
            last_unterminated = not raw.endswith(b"\n")
            if not raw.strip():
                continue
            record, why = parse_record(raw)
            if record is None:
                if last_unterminated:
                    table.partial_last_line = True
                    table.problems.append(Problem(name, "partial last line (the JVM was killed while writing it)",
                                                  "partial-line", line=number))
                else:
                    table.problems.append(Problem(name, f"not a thread record ({why})", "bad-record", line=number))
                continue
            for key in [k for k, kind in _FIELDS.items() if record.get(k) is not None and not _is(record[k], kind)]:
                table.problems.append(Problem(name, f"{key} {str(record[key])[:40]!r} is not of type "
                                              f"{_FIELDS[key].__name__} (ignored)", "bad-field", line=number))
                del record[key]
            index, kind = record["index"], record["kind"]
            entry = table.threads.get(index)
            if entry is None:
                if len(table.threads) >= MAX_THREADS:
                    table.problems.append(Problem(name, f"more than {MAX_THREADS} threads: the rest is ignored",
                                                  "too-many", line=number))
                    break
                entry = table.threads[index] = ThreadEntry(index)
            if getattr(entry, kind) is not None:
                table.problems.append(Problem(name, f"thread {index} has a second {kind} record",
                                              f"duplicate-{kind}", line=number, thread=index))
                continue
            setattr(entry, kind, record)
    for entry in table.threads.values():
        if entry.start is None:
            table.problems.append(Problem(name, f"thread {entry.index} has an end record but no start record",
                                          "end-without-start", thread=entry.index))
    table.threads = dict(sorted(table.threads.items()))
    return table


def parse_record(raw: bytes) -> tuple[dict | None, str]:
    """One line as a thread record (an object with ``kind`` and ``index``), or None and why not."""
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None, "not JSON"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    index, kind = record.get("index"), record.get("kind")
    if kind not in ("start", "end"):
        return None, "'kind' is neither 'start' nor 'end'"
    if not _is(index, int) or not 0 < index <= MAX_INDEX:
        return None, f"'index' {str(index)[:40]!r} is not a thread index"
    return record, ""


def _is(value, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool) and -(1 << 63) <= value < (1 << 63)
    return isinstance(value, kind)
