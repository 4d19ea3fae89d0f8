"""``trace.json``: the run's metadata (docs/trace-format.md).

Read once here and given its shape: the whole file must be a JSON object, and every field jbgui
uses must have its type (a list of strings for the agent's ``include``, an integer for a count…).
A field of the wrong type is removed and said in ``problems``, so that every consumer can use
``metadata.get("agent", {}).get("options", {})`` and find what it expects or nothing. Unknown
fields (a newer recorder's) are kept as they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from jbgui.model.errors import TraceError
from jbgui.model.format.files import read_bytes, show
from jbgui.model.format.problems import Problem

# trace.json holds the command line; a few MiB is already an absurd one.
MAX_BYTES = 16 << 20

_STRINGS = [str]
_COUNT = "count"            # a non-negative integer
_SCHEMA = {
    "format": str, "format_version": int, "status": str,
    "agent": {"version": str,
              "options": {"out": str, "level": str, "bba": str, "mode": int, "jdk": bool, "instructions": bool,
                          "record": bool, "cache": str, "clock_micros": _COUNT, "virtual": _COUNT, "include": _STRINGS,
                          "exclude": _STRINGS, "events": _STRINGS}},
    "jvm": {"java_version": str, "vm_name": str, "java_home": str, "pid": int, "command": str, "cwd": str,
            "class_path": str},
    "start": {"epoch_ms": int, "nanos": int},
    "end": {"epoch_ms": int, "nanos": int, "reason": str},
    "event_layout": {"type_bits": int, "method_bits": int, "block_bits": int},
    "counts": {"threads": _COUNT, "classes": _COUNT, "classes_instrumented": _COUNT, "methods": _COUNT,
               "events": _COUNT, "chunks": _COUNT, "event_bytes": _COUNT, "lost_events": _COUNT},
    "limits": {"method_ids_exhausted": bool, "classes_not_instrumented": _COUNT, "virtual_threads_untraced": bool,
               "virtual_threads_traced": _COUNT, "virtual_threads_max": _COUNT},
}


# Recorders before 2026-11-29 traced no virtual thread; since, the first ``virtual_threads_max``.
VIRTUAL_THREADS_UNTRACED = "the program ran virtual threads, which are not traced: what they ran is not in the trace"


def untraced_virtual_threads(limits) -> str | None:
    """The sentence for trace.json's ``limits.virtual_threads_untraced``, or None when the
    recording left no virtual thread out: one wording for the record report, jbtrace check and
    the explorer's problems."""
    if not (isinstance(limits, dict) and limits.get("virtual_threads_untraced") is True):
        return None
    most = limits.get("virtual_threads_max")
    if not isinstance(most, int) or isinstance(most, bool):
        return VIRTUAL_THREADS_UNTRACED
    if most == 0:
        return ("the program ran virtual threads, which were not traced (agent option virtual=0): "
                "what they ran is not in the trace")
    return (f"the program ran more virtual threads than the recorder traces (the first {most:,}; agent option "
            f"virtual=N): what the others ran is not in the trace")


class TraceJsonError(TraceError):
    """trace.json cannot be used at all. ``code``: ``missing``, ``unreadable``, ``bad-json``;
    ``offset``/``line`` where the JSON breaks."""

    def __init__(self, message: str, code: str, offset: int | None = None, line: int | None = None):
        super().__init__(message)
        self.code = code
        self.offset = offset
        self.line = line


@dataclass
class TraceJson:
    """The metadata (a dict of the documented shape) and the fields removed from it."""

    metadata: dict
    problems: list[Problem] = field(default_factory=list)


def read_trace_json(path: Path) -> TraceJson:
    """Read and shape ``trace.json``; :class:`TraceJsonError` when it is missing, unreadable or
    not a JSON object."""
    path = Path(path)
    name = show(path)
    try:
        data = read_bytes(path, MAX_BYTES)
    except FileNotFoundError as error:
        raise TraceJsonError(f"{name}: missing; this is not a jbgui trace directory", "missing") from error
    except TraceError as error:
        raise TraceJsonError(str(error), "unreadable") from error
    try:
        meta = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise TraceJsonError(f"{name}: offset {error.start}: not UTF-8 text", "bad-json", offset=error.start) from error
    except json.JSONDecodeError as error:
        raise TraceJsonError(f"{name}: line {error.lineno}, column {error.colno}: not JSON: {error.msg}",
                             "bad-json", offset=error.pos, line=error.lineno) from error
    except (ValueError, RecursionError) as error:
        # RecursionError: arrays or objects nested deeper than any metadata (the JSON parser recurses).
        raise TraceJsonError(f"{name}: not JSON that can be read: "
                             f"{'nested too deeply' if isinstance(error, RecursionError) else error}",
                             "bad-json") from error
    if not isinstance(meta, dict):
        raise TraceJsonError(f"{name}: not a JSON object but {type(meta).__name__}", "bad-json")
    problems: list[Problem] = []
    _shape(meta, _SCHEMA, "", name, problems)
    return TraceJson(meta, problems)


def _shape(obj: dict, schema: dict, prefix: str, name: str, problems: list[Problem]) -> None:
    for key, kind in schema.items():
        if key not in obj:
            continue
        value = obj[key]
        where = f"{prefix}{key}"
        if isinstance(kind, dict):
            if isinstance(value, dict):
                _shape(value, kind, where + ".", name, problems)
                continue
        elif value is None and kind is not _STRINGS or _fits(value, kind):
            continue    # null: unknown (a recorder may write it for a value it could not get)
        problems.append(Problem(name, f"{where} is {_brief(value)}, not {_describe(kind)} (ignored)", "bad-field"))
        del obj[key]


def _fits(value, kind) -> bool:
    if kind is int or kind == _COUNT:
        return isinstance(value, int) and not isinstance(value, bool) and \
            (0 if kind == _COUNT else -(1 << 63)) <= value < (1 << 63)
    if kind is _STRINGS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, kind)


def _describe(kind) -> str:
    if isinstance(kind, dict):
        return "an object"
    if kind is _STRINGS:
        return "a list of strings"
    if kind == _COUNT:
        return "a non-negative integer"
    return {int: "an integer", str: "a string", bool: "true or false"}[kind]


def _brief(value) -> str:
    text = json.dumps(value)[:40] if not isinstance(value, (dict, list)) else type(value).__name__
    return {"dict": "an object", "list": "a list"}.get(text, text)
