"""Loop profile of a method: each natural loop of its control-flow graph (:mod:`jbgui.model.cfg`),
how often it was entered, and how many iterations each entry ran (iterations = times the loop's
back edges were taken during that entry), with the entries that ran the most iterations and the
calls they were in. Computed by :mod:`jbgui.model.method_profile` (one scan, cached)."""

from __future__ import annotations

import numpy as np

from jbgui.model.analysis import Analysis
from jbgui.model.method_profile import MethodProfile, method_profile


def loops(analysis: Analysis, method: int, profile: MethodProfile | None = None) -> list[dict]:
    """Rows ``{"header_block", "body", "first_offset", "lines", "entries", "iterations": {"N": entries},
    "mean_iterations", "max_iterations", "outliers": [{"iterations", "call"}]}``, one per loop in
    header order."""
    profile = profile or method_profile(analysis, method)
    a = profile.arrays
    cfg = profile.cfg
    out = []
    for i, loop in enumerate(cfg.loops):
        sel = np.flatnonzero(a["l_loop"] == i)
        iters = a["l_iters"][sel]
        entries = a["l_entries"][sel]
        total = int(entries.sum())
        osel = np.flatnonzero(a["o_loop"] == i)
        out.append({"header_block": loop.header, "body": loop.body,
                    "first_offset": cfg.first_offset[loop.header], "lines": cfg.lines[loop.header],
                    "entries": total,
                    "iterations": {str(int(n)): int(e) for n, e in zip(iters, entries)},
                    "mean_iterations": float((iters * entries).sum() / total) if total else 0.0,
                    "max_iterations": int(iters.max()) if len(iters) else 0,
                    "outliers": [{"iterations": int(a["o_iters"][j]),
                                  "call": f"{int(a['o_thread'][j])}:{int(a['o_row'][j])}"} for j in osel]})
    return out
