"""Dynamic metrics of a replayed trace (seed §4.1, after Dufour et al.): bytecodes executed and
the 19 per-block metrics summed over the run, per thread, method, class and package; polymorphism
per call site; an opcode histogram when blocks carry instruction listings; the calling-context
tree's hottest contexts (BMW).

Everything is a weighted sum of static per-block numbers by replayed block counts, so it is a few
vectorised operations whatever the trace's size.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from jbgui.model import layout
from jbgui.model.analysis import Analysis, Flag, ThreadReplay
from jbgui.model.call_summary import flag_count
from jbgui.model.cct import OVERFLOW_KEY, SYNTHETIC_KEY
from jbgui.model.format.launch_json import read_launch_json
from jbgui.model.replay_kernel import CATCH_UNCAUGHT


def block_metric_totals(analysis: Analysis, counts: np.ndarray) -> dict[str, int]:
    """The 19 metrics summed over executed blocks (``counts`` per global block index)."""
    st = analysis.statics
    if not st.n_blocks:
        return {name: 0 for name in layout.METRIC_NAMES}
    # einsum accumulates the int32 metrics in int64 without copying them to int64 first (a
    # matmul of int64 arrays has no BLAS path and the copy alone costs more than the sum).
    sums = np.einsum("i,ij->j", counts.astype(np.int64, copy=False), st.b_metrics)
    return {name: int(v) for name, v in zip(layout.METRIC_NAMES, sums)}


def per_method(analysis: Analysis) -> dict[str, np.ndarray]:
    """Per method id: calls (all threads), blocks executed, bytecodes executed (its own)."""
    st = analysis.statics
    n = st.max_method_id + 1
    calls = np.zeros(n, np.int64)
    for t in analysis.threads:
        summary = t.call_summary
        ids = summary["method_ids"]
        keep = ids < n
        calls[ids[keep]] += summary["method_calls"][keep]
    blocks = np.bincount(st.b_method, weights=analysis.block_counts, minlength=n)[:n].astype(np.int64) \
        if st.n_blocks else np.zeros(n, np.int64)
    bytecodes = np.bincount(st.b_method, weights=analysis.block_counts * st.b_metrics[:, 0], minlength=n)[:n] \
        .astype(np.int64) if st.n_blocks else np.zeros(n, np.int64)
    return {"calls": calls, "blocks": blocks, "bytecodes": bytecodes}


def _group(names: list[str], values: dict[str, np.ndarray], key) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for mid, name in enumerate(names):
        if not name:
            continue
        entry = out.setdefault(key(name), {k: 0 for k in values})
        for k, arr in values.items():
            entry[k] += int(arr[mid])
    return out


def per_class_and_package(analysis: Analysis, methods: dict[str, np.ndarray]):
    st = analysis.statics
    classes = [st.class_of_method(mid) if st.m_name[mid] else "" for mid in range(st.max_method_id + 1)]
    by_class = _group(classes, methods, lambda c: c.replace("/", "."))
    by_package = _group(classes, methods, lambda c: c.rpartition("/")[0].replace("/", ".") or "(default)")
    return by_class, by_package


def polymorphism(analysis: Analysis, top: int | None = None) -> list[dict]:
    """Virtual and interface call sites that saw more than one receiver class, most calls first
    (the first ``top`` of them when given)."""
    st = analysis.statics
    recv = analysis.receivers
    if not len(recv):
        return []
    types = np.bincount(recv[:, 0], minlength=st.n_sites)
    sites = np.nonzero(types > 1)[0]
    order = sites[np.argsort(-analysis.site_calls[sites], kind="stable")][:top]
    # Rows grouped by site once, so each site's receivers are a slice rather than a scan.
    recv = recv[np.argsort(recv[:, 0], kind="stable")]
    starts = np.searchsorted(recv[:, 0], order, side="left")
    out = []
    for s, lo in zip(order, starts):
        rows = recv[lo:lo + int(types[s])]
        rows = rows[np.argsort(-rows[:, 2], kind="stable")]
        block = int(st.s_block[s])
        out.append({
            "site": int(s), "caller": st.method_qualified(int(st.b_method[block])), "offset": int(st.s_offset[s]),
            "target": st.site_qualified(int(s)), "calls": int(analysis.site_calls[s]),
            "receiver_types": int(len(rows)), "type_changes": int(analysis.site_changes[s]),
            "receivers": [{"class": st.class_name_of_id(int(c)), "calls": int(n)} for _s, c, n in rows]})
    return out


def opcode_histogram(analysis: Analysis) -> dict[str, int]:
    """Executions per opcode mnemonic; empty when the trace has no instruction listings
    (agent option ``instructions=on``)."""
    st = analysis.statics
    hist: Counter = Counter()
    for gb, text in st.instructions.items():
        n = int(analysis.block_counts[gb])
        if not n:
            continue
        for line in text.splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2:
                hist[parts[1]] += n
    return dict(hist.most_common())


def hottest_contexts(analysis: Analysis, thread: ThreadReplay, top: int = 20) -> list[dict]:
    """Calling contexts with the most exclusive bytecodes (BMW's calling-context tree). The tree
    is exact (no node stands for several contexts), so no context's weight is counted twice."""
    cct = thread.cct
    if not len(cct.get("parent", ())):
        return []
    incl = cct["incl_bytecodes"]
    excl = incl.copy()
    parents = cct["parent"]
    has = parents >= 0
    np.subtract.at(excl, parents[has], incl[has])
    order = np.argsort(-excl, kind="stable")[:top]
    out = []
    for node in order:
        path = []
        n = int(node)
        while n >= 0 and len(path) < 64:
            path.append(_context_name(analysis, int(cct["key"][n])))
            n = int(parents[n])
        out.append({"context": list(reversed(path)), "calls": int(cct["calls"][node]),
                    "incl_bytecodes": int(incl[node]), "excl_bytecodes": int(excl[node])})
    return out


def _context_name(analysis: Analysis, key: int) -> str:
    if key == OVERFLOW_KEY:
        return "(more contexts: the calling-context tree is capped)"
    if key >= SYNTHETIC_KEY:
        return analysis.statics.site_qualified(key - SYNTHETIC_KEY) + " [native/untraced]"
    return analysis.statics.method_qualified(key) or f"<method {key}>"


def thread_summary(analysis: Analysis, thread: ThreadReplay) -> dict:
    calls = thread.calls
    summary = thread.call_summary
    return {
        "index": thread.index, "name": thread.name, "events": thread.events, "calls": len(calls),
        "max_depth": int(summary["max_depth"][0]) + 1,
        "blocks": int(thread.block_counts.sum()),
        "metrics": block_metric_totals(analysis, thread.block_counts),
        "exceptions": len(thread.exceptions),
        "uncaught": int(np.count_nonzero(thread.exceptions["catch_row"] == CATCH_UNCAUGHT)) if len(thread.exceptions) else 0,
        "native_calls": flag_count(summary, Flag.NATIVE),
        "untraced_calls": flag_count(summary, Flag.UNTRACED),
        "implicit_calls": flag_count(summary, Flag.IMPLICIT),
        "truncated_calls": flag_count(summary, Flag.TRUNCATED),
        "class_loads": len(thread.class_loads),
    }


def compute(analysis: Analysis, top: int = 20) -> dict:
    """Every metric, as plain data (what ``jbtrace stats --json`` prints)."""
    st = analysis.statics
    methods = per_method(analysis)
    by_class, by_package = per_class_and_package(analysis, methods)
    hot = np.argsort(-methods["bytecodes"], kind="stable")[:top]
    return {
        "trace": str(analysis.trace.path),
        "run": {"threads": len(analysis.threads), "events": int(sum(t.events for t in analysis.threads)),
                "calls": int(sum(len(t.calls) for t in analysis.threads)),
                "blocks": int(analysis.block_counts.sum()),
                "metrics": block_metric_totals(analysis, analysis.block_counts)},
        "threads": [thread_summary(analysis, t) for t in analysis.threads],
        "hottest_methods": [{"method": st.method_qualified(int(m)), "calls": int(methods["calls"][m]),
                             "blocks": int(methods["blocks"][m]), "bytecodes": int(methods["bytecodes"][m])}
                            for m in hot if methods["bytecodes"][m] > 0],
        "classes": dict(sorted(by_class.items(), key=lambda kv: -kv[1]["bytecodes"])[:top]),
        "packages": dict(sorted(by_package.items(), key=lambda kv: -kv[1]["bytecodes"])),
        "polymorphic_sites": polymorphism(analysis, top),
        "opcodes": opcode_histogram(analysis),
        "hottest_contexts": {t.name: hottest_contexts(analysis, t, 5) for t in analysis.threads},
        "problems": analysis.problems,
    }


def run_summary(analysis: Analysis, top: int = 15) -> dict:
    """What the explorer's summary page shows, as plain data: the run's metadata and launch
    record, the whole run's metrics, each thread's summary, the hottest methods by their own
    bytecodes (with method ids), polymorphic call sites and the trace's problems."""
    st = analysis.statics
    per = per_method(analysis)
    own = per["bytecodes"]
    hot = [int(m) for m in np.argsort(-own, kind="stable")[:top] if own[m] > 0]
    launch = read_launch_json(analysis.trace.path)
    return {
        "metadata": analysis.trace.metadata,
        "launch": launch,
        "run_metrics": block_metric_totals(analysis, analysis.block_counts),
        "threads": [thread_summary(analysis, t) for t in analysis.threads],
        "hottest": [{"method": m, "name": st.method_qualified(m), "calls": int(per["calls"][m]),
                     "bytecodes": int(own[m])} for m in hot],
        "polymorphic": polymorphism(analysis, 5),
        "problems": list(analysis.problems),
    }
