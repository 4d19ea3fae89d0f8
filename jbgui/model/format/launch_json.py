"""``launch.json``: how ``jbtrace record`` ran the program (docs/trace-format.md): command,
traced_command, cwd, exit_code, wall_seconds, started_epoch_ms, agent_jar, agent_options,
jbgui_version. Optional: a trace recorded without ``jbtrace record`` has none, so reading it never
fails — a missing, unreadable or malformed file, or a field of the wrong type, is left out."""

from __future__ import annotations

import json
from pathlib import Path

from jbgui.model.errors import TraceError
from jbgui.model.format.files import read_bytes

MAX_BYTES = 16 << 20
_FIELDS = {"command": list, "traced_command": list, "cwd": str, "exit_code": int, "wall_seconds": (int, float),
           "started_epoch_ms": int, "agent_jar": str, "agent_options": (str, dict), "jbgui_version": str}


def read_launch_json(trace_dir: Path) -> dict:
    """The launch record of the trace at ``trace_dir`` ({} when there is none that can be read);
    ``command`` and ``traced_command`` are lists of strings when present."""
    path = Path(trace_dir) / "launch.json"
    try:
        launch = json.loads(read_bytes(path, MAX_BYTES, Path(trace_dir)).decode("utf-8"))
    except (OSError, TraceError, ValueError, RecursionError):
        return {}
    if not isinstance(launch, dict):
        return {}
    for key, kind in _FIELDS.items():
        value = launch.get(key)
        if value is None:
            continue
        if not isinstance(value, kind) or isinstance(value, bool) or \
                (kind is list and not all(isinstance(v, str) for v in value)):
            del launch[key]
    return launch
