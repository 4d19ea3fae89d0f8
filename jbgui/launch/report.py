"""What a recording produced: ``launch.json``, and a summary read from ``trace.json``.

Only ``trace.json``'s run metadata is read here (docs/trace-format.md, "trace.json"); reading
events is the model's business. Every field is read defensively: a summary must never fail
because an agent of another version wrote one field fewer.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from jbgui import __version__
from jbgui.model.errors import TraceError
from jbgui.model.format.trace_json import read_trace_json, untraced_virtual_threads

LAUNCH_FILE = "launch.json"
TRACE_FILE = "trace.json"
AGENT_LOG = "agent.log"


@dataclass(frozen=True)
class TraceSummary:
    """The run metadata of a trace directory, as far as it could be read.

    ``problem`` is ``None`` for a complete trace and otherwise says, in words, why the trace is
    missing or incomplete.
    """

    trace_dir: Path
    status: str | None
    counts: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    bytes_on_disk: int = 0
    problem: str | None = None


def directory_bytes(root: Path) -> int:
    """Total size of the regular files under ``root`` (symbolic links are not followed)."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                stat = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue  # vanished while we walked: nothing to count
            if not os.path.islink(os.path.join(dirpath, name)):
                total += stat.st_size
    return total


def read_trace_summary(trace_dir: Path) -> TraceSummary:
    """Read ``trace_dir/trace.json``; never raises for a missing or malformed file."""
    trace_dir = Path(trace_dir)
    size = directory_bytes(trace_dir) if trace_dir.is_dir() else 0
    path = trace_dir / TRACE_FILE
    if not path.is_file():
        return TraceSummary(
            trace_dir, None, bytes_on_disk=size,
            problem=f"no trace was recorded (no {TRACE_FILE}): the JVM stopped before the agent "
                    "started tracing; the reason is above (for example the agent refused its options)",
        )
    try:
        meta = read_trace_json(path).metadata
    except TraceError as error:
        return TraceSummary(trace_dir, None, bytes_on_disk=size,
                            problem=f"{error}: the trace is damaged")
    status = meta.get("status")
    counts = meta.get("counts") if isinstance(meta.get("counts"), dict) else {}
    limits = meta.get("limits") if isinstance(meta.get("limits"), dict) else {}
    problem = None
    if status == "running":
        problem = ("the trace is incomplete (status 'running'): the JVM ended without the agent's "
                   "final flush (killed, halted or crashed); what was flushed still loads")
    elif status != "complete":
        problem = f"the trace has an unexpected status {status!r}"
    return TraceSummary(trace_dir, status, counts, limits, size, problem)


def human_bytes(count: int) -> str:
    """``1536`` → ``'1.5 KiB'``: sizes as people read them."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _number(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def format_summary(summary: TraceSummary, exit_status: int, wall_seconds: float) -> str:
    """A few lines for stderr: what was recorded, or plainly why no complete trace was."""
    if summary.status is None:
        return (f"jbtrace: {summary.problem}\n"
                f"jbtrace: program exit status {exit_status} after {wall_seconds:.2f} s; "
                f"trace directory {summary.trace_dir}")
    counts = summary.counts
    lines = [f"jbtrace: recorded {summary.trace_dir} ({summary.status}), program exit status {exit_status}"]
    classes = _number(counts.get("classes"))
    if isinstance(counts.get("classes_instrumented"), int):
        classes += f" ({counts['classes_instrumented']:,} instrumented)"
    lines.append(f"  threads {_number(counts.get('threads'))}   classes {classes}   "
                 f"methods {_number(counts.get('methods'))}")
    events, event_bytes = counts.get("events"), counts.get("event_bytes")
    per_event = (f" ({event_bytes / events:.2f} bytes/event)"
                 if isinstance(events, int) and isinstance(event_bytes, int) and events > 0 else "")
    lines.append(f"  events {_number(events)} in {_number(event_bytes)} bytes{per_event}   "
                 f"on disk {human_bytes(summary.bytes_on_disk)}   wall {wall_seconds:.2f} s")
    lost = counts.get("lost_events")
    if isinstance(lost, int) and lost > 0:
        lines.append(f"  warning: {lost:,} events were lost (the writer could not keep up); "
                     f"see {AGENT_LOG}")
    if summary.limits.get("method_ids_exhausted"):
        lines.append("  warning: the method id space ran out; classes loaded afterwards were not "
                     f"traced (see {AGENT_LOG})")
    untraced = untraced_virtual_threads(summary.limits)
    if untraced:
        lines.append(f"  warning: {untraced}")
    if summary.problem is not None:
        lines.append(f"jbtrace: {summary.problem}")
    return "\n".join(lines)


def write_launch_file(trace_dir: Path, record: dict) -> Path:
    """Write ``trace_dir/launch.json`` (docs/trace-format.md) atomically and return its path."""
    path = Path(trace_dir) / LAUNCH_FILE
    temporary = path.with_name(LAUNCH_FILE + ".tmp")
    temporary.write_text(json.dumps({**record, "jbgui_version": __version__}, indent=2) + "\n",
                         encoding="utf-8")
    os.replace(temporary, path)
    return path
