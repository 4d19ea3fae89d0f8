"""Behaviour variants of a method: its calls grouped by the path they took through it.

Two calls are one variant when they took the same set of transitions between their own blocks
(entry and exit, normal or by an exception, included): they differ at most in how often loops
repeated. Each variant: calls, share, mean own bytecodes, own blocks and time, the callers that
produce it, an example call (``THREAD:ROW``) and the example's path with loop repetitions
collapsed. Computed by :mod:`jbgui.model.method_profile` (one scan, cached).
"""

from __future__ import annotations

import numpy as np

from jbgui.model.analysis import Analysis
from jbgui.model.method_names import display_name
from jbgui.model.method_profile import MethodProfile, method_profile


def variants(analysis: Analysis, method: int, profile: MethodProfile | None = None) -> list[dict]:
    """Rows ``{"path", "calls", "share", "mean_own_bytecodes", "mean_own_blocks", "mean_nanos",
    "exceptional", "callers": [{"method", "calls"}], "example"}``, most frequent first."""
    profile = profile or method_profile(analysis, method)
    a = profile.arrays
    total = max(int(a["v_calls"].sum()), 1)
    paths = profile.paths()
    st = analysis.statics
    rows = []
    for i in range(len(a["v_calls"])):
        calls = int(a["v_calls"][i])
        sel = np.flatnonzero(a["c_variant"] == i)
        sel = sel[np.argsort(-a["c_calls"][sel], kind="stable")]
        callers = [{"method": display_name(st, int(a["c_method"][j])) if a["c_method"][j] else "<thread root>",
                    "calls": int(a["c_calls"][j])} for j in sel]
        rows.append({"path": paths[i] if i < len(paths) else None, "calls": calls, "share": calls / total,
                     "mean_own_bytecodes": int(a["v_bc"][i]) / calls, "mean_own_blocks": int(a["v_blocks"][i]) / calls,
                     "mean_nanos": float(a["v_nanos"][i]) / calls, "exceptional": bool(a["v_exc"][i]),
                     "callers": callers, "example": f"{int(a['v_thread'][i])}:{int(a['v_row'][i])}"})
    return rows
