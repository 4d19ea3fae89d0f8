"""Everything the variants and loop views need about one method, from one scan of its calls,
kept beside the analysis cache (``<cache>/blockviews/m<id>.npz``) so that the second look at a
hot method reads a few kilobytes instead of decoding the chunks that hold its calls again.

Per variant (calls sharing a path signature, :mod:`jbgui.model.block_paths`): calls, summed own
bytecodes, own blocks and inclusive nanoseconds, whether it ended by an exception, an example call
and its collapsed path; per (variant, caller method): calls. Per loop: a histogram of iterations
per entry, and the entries with the most iterations (outliers) with their calls.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from jbgui.model import derived
from jbgui.model.analysis import Analysis
from jbgui.model.block_paths import call_sequences, compress, render, scan_calls
from jbgui.model.cfg import Cfg, method_cfg

# 2: signatures of calls on a second thread no longer lose edges seen on the first (version 1 files are
# left unread); 3: no call left out for its length, a recursive call's words given to the innermost
# call running (block_paths.scan_calls)
VERSION = 3
OUTLIERS = 5          # per loop
MAX_PATHS = 500       # variants whose collapsed path is computed (the most frequent)
_KEYS = ("v_sig", "v_calls", "v_bc", "v_blocks", "v_nanos", "v_exc", "v_thread", "v_row", "v_path",
         "c_variant", "c_method", "c_calls", "l_loop", "l_iters", "l_entries",
         "o_loop", "o_iters", "o_thread", "o_row", "skipped", "decoded")


@dataclass
class MethodProfile:
    method: int
    cfg: Cfg
    arrays: dict[str, np.ndarray]
    from_cache: bool

    @property
    def calls(self) -> int:
        return int(self.arrays["v_calls"].sum())

    def paths(self) -> list[str]:
        raw = bytes(self.arrays["v_path"]).decode("utf-8")
        return raw.split("\n") if raw else []


_LOCKS: dict[tuple[str, int], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def method_profile(analysis: Analysis, method: int, use_cache: bool = True, progress=None,
                   cancelled=None) -> MethodProfile:
    """Variants and loop histograms of ``method`` over the whole run (cached). Two callers asking
    for the same method at once (the variants and loop views) share one computation."""
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault((str(analysis.cache_dir), method), threading.Lock())
    with lock:
        return _profile(analysis, method, use_cache, progress, cancelled)


def _profile(analysis: Analysis, method: int, use_cache: bool, progress, cancelled) -> MethodProfile:
    cfg = method_cfg(analysis, method)
    directory = analysis.cache_dir / "blockviews" if use_cache else None
    computed = []

    def compute() -> dict[str, np.ndarray]:
        computed.append(True)
        return _compute(analysis, method, cfg, progress, cancelled)

    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
    arrays = derived.load_or_compute(directory, f"m{method}-v{VERSION}.npz", _KEYS, compute)
    return MethodProfile(method, cfg, arrays, not computed)


def _compute(analysis: Analysis, method: int, cfg: Cfg, progress=None, cancelled=None) -> dict[str, np.ndarray]:
    scan = scan_calls(analysis, method, cfg.loop_tables(), progress=progress, cancelled=cancelled)
    n = len(scan.row)
    nanos = np.zeros(n, np.float64)
    callers = scan.caller
    for index in np.unique(scan.thread).tolist():
        sel = np.flatnonzero(scan.thread == index)
        thread = analysis.thread(index)
        nanos[sel] = thread.times(scan.last[sel]) - thread.times(scan.first[sel])
    # Variants: one per signature, exceptional ends apart (the signature's exit pseudo-block says
    # it, this keeps the flag at hand).
    sigs, inverse = np.unique(scan.sig, return_inverse=True)
    v = len(sigs)
    v_calls = np.bincount(inverse, minlength=v).astype(np.int64)
    v_bc = np.bincount(inverse, weights=scan.own_bytecodes, minlength=v).astype(np.int64)
    v_blocks = np.bincount(inverse, weights=scan.own_blocks, minlength=v).astype(np.int64)
    v_nanos = np.bincount(inverse, weights=nanos, minlength=v)
    # The example of a variant is its call with the most own blocks (the first such): its loops
    # repeated most, so its collapsed path shows them as loops.
    example = np.zeros(v, np.int64)
    if n:
        # (two passes over the calls; a three-key sort of them took 0.3 s for 1.5 M calls)
        most = np.full(v, -1, np.int64)
        np.maximum.at(most, inverse, scan.own_blocks)
        cand = np.flatnonzero(scan.own_blocks == most[inverse])
        example[:] = n
        np.minimum.at(example, inverse[cand], cand)
    v_exc = scan.exceptional[example].astype(np.int8) if n else np.zeros(0, np.int8)
    v_thread = scan.thread[example] if n else np.zeros(0, np.int64)
    v_row = scan.row[example] if n else np.zeros(0, np.int64)
    order = np.lexsort((example, -v_calls)) if v else np.zeros(0, np.int64)
    remap = np.empty(v, np.int64)
    remap[order] = np.arange(v)
    inverse = remap[inverse] if n else inverse
    sigs, v_calls, v_bc, v_blocks, v_nanos, v_exc, v_thread, v_row = (
        a[order] for a in (sigs, v_calls, v_bc, v_blocks, v_nanos, v_exc, v_thread, v_row))
    # the examples' paths, from the chunks holding them alone
    shown = example[order][:MAX_PATHS] if v else np.zeros(0, np.int64)
    paths = [render(compress(blocks, counts=False), counts=False)
             for blocks in call_sequences(analysis, method, scan, shown)]
    # Callers per variant.
    key = inverse * (int(callers.max()) + 1 if n else 1) + callers
    ukey, ccount = np.unique(key, return_counts=True)
    width = int(callers.max()) + 1 if n else 1
    # Loops: histogram of iterations per entry, and the largest entries.
    l_loop, l_iters, l_entries = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    o_loop, o_iters, o_thread, o_row = [], [], [], []
    if len(scan.loop_id):
        pair = scan.loop_id * (int(scan.loop_iters.max()) + 1) + scan.loop_iters
        upair, l_entries = np.unique(pair, return_counts=True)
        span = int(scan.loop_iters.max()) + 1
        l_loop, l_iters = upair // span, upair % span
        for loop in np.unique(scan.loop_id):
            sel = np.flatnonzero(scan.loop_id == loop)
            top = sel[np.argsort(-scan.loop_iters[sel], kind="stable")[:OUTLIERS]]
            o_loop.extend([int(loop)] * len(top))
            o_iters.extend(scan.loop_iters[top].tolist())
            o_thread.extend(scan.thread[scan.loop_call[top]].tolist())
            o_row.extend(scan.row[scan.loop_call[top]].tolist())
    return {"v_sig": sigs, "v_calls": v_calls, "v_bc": v_bc, "v_blocks": v_blocks, "v_nanos": v_nanos,
            "v_exc": v_exc, "v_thread": v_thread, "v_row": v_row,
            "v_path": np.frombuffer("\n".join(paths).encode("utf-8"), np.uint8),
            "c_variant": ukey // width, "c_method": ukey % width, "c_calls": ccount.astype(np.int64),
            "l_loop": l_loop, "l_iters": l_iters, "l_entries": l_entries.astype(np.int64),
            "o_loop": np.array(o_loop, np.int64), "o_iters": np.array(o_iters, np.int64),
            "o_thread": np.array(o_thread, np.int64), "o_row": np.array(o_row, np.int64),
            "skipped": np.array([scan.skipped]), "decoded": np.array([scan.events_decoded])}
