"""The explorer's one search: a regular expression (case-insensitive) over methods' qualified
names, ``pkg.Cls.name(desc)ret`` as every view shows them. The aggregated views, the flame graph
and the timeline all highlight what :func:`method_matches` says, so a method matches everywhere or
nowhere.

Names are built once per trace (:func:`qualified_names`, about 0.1 s per 100,000 methods) and a
pattern is run over them on each keystroke; the number of calls that match comes from the calls
per method the replay already counted, so it costs no pass over the calls.
"""

from __future__ import annotations

import re
import weakref

import numpy as np

from jbgui.model import metrics as M

# (a weak reference to the statics, its names) for the few traces open lately: Statics is a
# dataclass, not hashable, so it is told apart by identity and the reference checks it is alive.
_NAMES: list[tuple[weakref.ref, list[str]]] = []
_KEPT = 4


def compile_search(text: str) -> tuple[re.Pattern | None, str]:
    """The pattern of a search text and an error ('' when it compiles; no pattern for '')."""
    if not text:
        return None, ""
    try:
        return re.compile(text, re.IGNORECASE), ""
    except re.error as error:
        return None, f"not a regular expression: {error}"


def qualified_names(statics) -> list[str]:
    """Every method id's qualified name ('' for ids without a method), kept per statics."""
    for ref, names in _NAMES:
        if ref() is statics:
            return names
    names = [statics.method_qualified(m) for m in range(statics.max_method_id + 1)]
    _NAMES[:] = [(ref, n) for ref, n in _NAMES[-(_KEPT - 1):] if ref() is not None] + [(weakref.ref(statics), names)]
    return names


def method_matches(statics, pattern: re.Pattern | None) -> np.ndarray:
    """Per method id: does its qualified name match ``pattern`` (all False without one)."""
    names = qualified_names(statics)
    out = np.zeros(max(len(names), 1), np.bool_)
    if pattern is not None:
        search = pattern.search
        for mid, name in enumerate(names):
            if name and search(name):
                out[mid] = True
    return out


def matching_calls(analysis, matches: np.ndarray) -> int:
    """How many calls of the run (all threads) are of a matching method."""
    calls = M.per_method(analysis)["calls"]
    n = min(len(calls), len(matches))
    return int(calls[:n][matches[:n]].sum())
