"""Collapsed stacks (``frame;frame;frame count``) from the calling-context trees: the input of
``flamegraph.pl`` and speedscope."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import numba
import numpy as np

from jbgui.model.analysis import Analysis, Flag, ThreadReplay
from jbgui.model.cct import OVERFLOW_KEY
from jbgui.model.export.common import (
    ExportError, ExportResult, IsCancelled, Progress, WEIGHTS, _atomic_output, _check_cancelled,
    select_threads)
from jbgui.model.export.naming import _Names, _context_frame, _frame


def export_collapsed(analysis: Analysis, path: str | Path, weight: str = "bytecodes", per_thread: bool = False,
                     threads: Sequence[str | int] = (), max_depth: int | None = None, progress: Progress = None,
                     cancelled: IsCancelled = None) -> ExportResult:
    """Collapsed stacks, one line per distinct calling context, weighted by exclusive
    ``bytecodes``, ``calls`` or exclusive ``blocks``; ``per_thread`` puts the thread name first;
    ``max_depth`` folds deeper contexts into their ancestor at that depth (0: top-level calls)."""
    with _atomic_output(path) as out:
        return write_collapsed(analysis, out, weight, per_thread, threads, max_depth, progress, cancelled, str(path))


COLLAPSED_MAX_DEPTH = 1024


def write_collapsed(analysis: Analysis, out: BinaryIO, weight: str = "bytecodes", per_thread: bool = False,
                    threads: Sequence[str | int] = (), max_depth: int | None = None, progress: Progress = None,
                    cancelled: IsCancelled = None, label: str = "-") -> ExportResult:
    """:func:`export_collapsed` to a binary stream."""
    if weight not in WEIGHTS:
        raise ExportError(f"unknown weight {weight!r} (one of {', '.join(WEIGHTS)})")
    if max_depth is not None and max_depth < 0:
        raise ExportError(f"max depth must be 0 or more, not {max_depth}")
    selected = select_threads(analysis, threads)
    result = ExportResult(label, "collapsed")
    capped: list[str] = []
    # Each line spells its whole stack, so a chain of n nested calls is n lines of up to n frames:
    # quadratic in the depth (a recursion a million deep would be terabytes). Without an explicit
    # --max-depth, deeper contexts count in their ancestor at COLLAPSED_MAX_DEPTH.
    limit = COLLAPSED_MAX_DEPTH if max_depth is None else max_depth
    folded: list[int] = []
    for level_lines, n in _merged_contexts(analysis, selected, weight, per_thread, limit, capped, progress,
                                           cancelled, folded):
        out.write(level_lines)
        result.rows += n
    result.total = result.rows
    if folded and max_depth is None:
        result.warnings.append(
            f"calling contexts {folded[0]:,} calls deep: those deeper than {COLLAPSED_MAX_DEPTH:,} count in their "
            f"caller at depth {COLLAPSED_MAX_DEPTH:,} (--max-depth chooses another depth)")
    if capped:
        result.warnings.append(
            f"the calling-context tree of {', '.join(capped)} reached its size cap: calls in contexts beyond it "
            "count in their nearest context the tree holds (or in a '(more contexts)' frame at the top)")
    return result


@numba.njit(cache=True, nogil=True)
def _tree_depth(parent):  # pragma: no cover - numba
    """Depth of every node of a tree whose parents come before their children (-1: a root)."""
    depth = np.zeros(len(parent), np.int64)
    for i in range(len(parent)):
        p = parent[i]
        if p >= 0:
            depth[i] = depth[p] + 1
    return depth


@numba.njit(cache=True, nogil=True)
def _fold_deep(parent, depth, fold, w):  # pragma: no cover - numba
    """Add the weight of every node deeper than ``fold`` to its ancestor at depth ``fold``."""
    anc = np.arange(len(parent))
    for i in range(len(parent)):
        if depth[i] > fold:
            anc[i] = anc[parent[i]]
            w[anc[i]] += w[i]
            w[i] = 0


def _thread_total(thread: ThreadReplay, column: str) -> int:
    """The sum of a column over the thread's top-level calls: its whole count."""
    calls = thread.calls
    total = 0
    for lo in range(0, len(calls), 1 << 22):
        top = np.asarray(calls.parent[lo:lo + (1 << 22)]) < 0
        total += int(np.asarray(getattr(calls, column)[lo:lo + (1 << 22)], np.int64)[top].sum())
    return total


def _merged_contexts(analysis: Analysis, threads: list[ThreadReplay], weight: str, per_thread: bool,
                     max_depth: int | None, capped: list[str], progress: Progress,
                     cancelled: IsCancelled, folded: list[int] | None = None) -> Iterator[tuple[bytes, int]]:
    """Lines ``frame;…;frame count`` of every calling context with a non-zero count, level by level.

    The threads' calling-context trees are merged into one by frame names (contexts of different
    threads, and contexts whose frames print the same, add up), one tree level at a time with
    numpy; only two levels of path strings are held at once. A tree capped during replay keeps
    its totals: its overflow node (whose inclusive counts include its own nested calls again) is
    given what the thread's top-level calls hold beyond the rest of the tree."""
    names = _Names(analysis.statics)
    frame_ids: dict[str, int] = {}
    frame_list: list[str] = []

    def frame_id(text: str) -> int:
        text = _frame(text)
        got = frame_ids.get(text)
        if got is None:
            got = frame_ids[text] = len(frame_list)
            frame_list.append(text)
        return got

    parents, frames, weights = [], [], []
    offset = 0
    for t in threads:
        cct = t.cct
        parent = np.asarray(cct.get("parent", np.zeros(0, np.int64)), np.int64)
        if not len(parent):
            continue
        key = np.asarray(cct["key"], np.int64)
        native = (np.asarray(cct["flags"], np.int64) & Flag.NATIVE) != 0
        if weight == "calls":
            w = np.asarray(cct["calls"], np.int64)
        else:
            column = "incl_bytecodes" if weight == "bytecodes" else "incl_blocks"
            incl = np.asarray(cct[column], np.int64)
            w = incl.copy()
            has = parent >= 0
            np.subtract.at(w, parent[has], incl[has])
        overflow = key == OVERFLOW_KEY
        if overflow.any():
            capped.append(t.name)
            if weight != "calls":
                w[overflow] = 0
                w[np.nonzero(overflow)[0][0]] = max(0, _thread_total(t, column) - int(w.sum()))
        # One frame name per distinct (key, native) pair.
        pair = key * 2 + native
        uniq, inverse = np.unique(pair, return_inverse=True)
        ids = np.array([frame_id(_context_frame(names, int(p) >> 1, bool(p & 1))) for p in uniq.tolist()], np.int64)
        frame = ids[inverse]
        if per_thread:
            # The thread becomes a root frame above its top-level contexts.
            parent = np.concatenate([[-1], np.where(parent >= 0, parent + 1, 0)])
            frame = np.concatenate([[frame_id(t.name)], frame])
            w = np.concatenate([[0], w])
        parents.append(np.where(parent >= 0, parent + offset, -1))
        frames.append(frame)
        weights.append(w)
        offset += len(parent)
    if not parents:
        return
    parent = np.concatenate(parents)
    frame = np.concatenate(frames)
    w = np.concatenate(weights)
    if np.any(parent >= np.arange(len(parent))):
        raise ExportError("a calling-context tree lists a context before its caller; replay the trace again")
    depth = _tree_depth(parent)
    if max_depth is not None:
        fold = max_depth + (1 if per_thread else 0)
        if int(depth.max()) > fold:
            if folded is not None:
                folded.append(int(depth.max()) + 1)
            _fold_deep(parent, depth, fold, w)
            keep = depth <= fold       # parents come first, so the kept nodes keep their numbering order
            renumber = np.cumsum(keep) - 1
            parent = np.where(parent[keep] >= 0, renumber[np.maximum(parent[keep], 0)], -1)
            frame, w, depth = frame[keep], w[keep], depth[keep]
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    frame_text = np.array(frame_list + [""], dtype=object)[:-1]
    merged = np.empty(len(parent), np.int64)     # each node's merged node, numbered within its level
    previous_paths = np.zeros(0, dtype=object)
    n_frames = len(frame_list)
    for level in range(len(bounds) - 1):
        _check_cancelled(cancelled)
        if progress is not None:
            progress(int(bounds[level]), len(parent))      # contexts done
        nodes = order[bounds[level]:bounds[level + 1]]
        up = merged[parent[nodes]] if level else np.full(len(nodes), -1, np.int64)
        uniq, inverse = np.unique((up + 1) * n_frames + frame[nodes], return_inverse=True)
        merged[nodes] = inverse
        counts = np.zeros(len(uniq), np.int64)
        np.add.at(counts, inverse, w[nodes])
        up_of, frame_of = uniq // n_frames - 1, uniq % n_frames
        paths = frame_text[frame_of] if not level else previous_paths[up_of] + ";" + frame_text[frame_of]
        shown = counts > 0
        if shown.any():
            lines = paths[shown] + " " + counts[shown].astype(str).astype(object)
            yield ("\n".join(lines.tolist()) + "\n").encode("utf-8", "surrogateescape"), int(shown.sum())
        previous_paths = paths
