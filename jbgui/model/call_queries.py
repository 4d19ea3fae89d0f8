"""Queries over a thread's call table for the call tree and navigation: the children of a call in
batches, a call's ancestors, its exclusive counts and duration, the next call whose name contains
a text, the next call with given flags, and a search that runs through every thread and wraps.

Everything reads the columns where the analyzer left them: the whole column when it is decoded,
else the blocks of rows a query touches (``CallTable.window``), so a call tree over a thread of a
hundred million calls holds a few blocks, not the thread:

- children are found by jumping from a child to the row after its subtree (``end``), in numba,
  so a batch of a call's children costs the batch, whatever the subtrees below them hold;
- exclusive counts (inclusive minus the children's inclusive) are computed for the rows asked
  for, by the same jumps, never for the whole table;
- a name search matches the *names* once (each method id, and the call sites that synthetic
  rows are named by), then scans the ``method`` column chunk by chunk with a lookup table, and
  stops at the first chunk with a hit.

No Qt here: the explorer's call tree (``jbgui.ui.calltree_view``) and any other client share it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np

from jbgui.model.analysis import Analysis, Flag, ThreadReplay

# Rows scanned per step of a search: the first step is small (hits are often near), later ones
# grow to a size where numpy's per-call overhead does not count and cancellation is still noticed.
FIRST_CHUNK = 1 << 14
CHUNK = 1 << 21

EXCEPTION_FLAGS = int(Flag.EXCEPTIONAL | Flag.CAUGHT | Flag.UNCAUGHT)
NATIVE_FLAGS = int(Flag.NATIVE)

Cancelled = Callable[[], bool]


def _never() -> bool:
    return False


# ---------------------------------------------------------------------- tree structure


@numba.njit(cache=True, nogil=True)
def _count_children(end, start, stop, limit, through):  # pragma: no cover - numba
    """How many children a walk from child row ``start`` takes (see :func:`_walk_children`)."""
    n = 0
    c = start
    while c < stop:
        if n >= limit and c > through:
            break
        n += 1
        nxt = end[c]
        if nxt <= c:  # a damaged column must not loop forever
            break
        c = nxt
    return n


@numba.njit(cache=True, nogil=True)
def _walk_children(end, start, stop, limit, through, out):  # pragma: no cover - numba
    """Children from row ``start`` on, below ``stop``: at least ``limit`` of them (when there are
    that many) and at least up to the one whose subtree holds row ``through``. Returns the row
    after the last one taken (the next child, or ``stop``)."""
    c = start
    for i in range(len(out)):
        out[i] = c
        nxt = end[c]
        if nxt <= c:
            return stop
        c = nxt
    return c


@numba.njit(cache=True, nogil=True)
def _walk_block(end_block, base, top, c, stop, remaining, through, out, collect):  # pragma: no cover - numba
    """:func:`_walk_children` within one block of rows (``end_block`` = the block's ``end``):
    from child ``c`` on while it lies in ``[base, top)``; returns the next child and how many were
    taken."""
    k = 0
    while c < stop and base <= c < top:
        if k >= remaining and c > through:
            break
        if collect:
            out[k] = c
        k += 1
        nxt = end_block[c - base]
        if nxt <= c:        # a damaged column must not loop forever
            return stop, k
        c = nxt
    return c, k


_NO_OUT = np.zeros(0, np.int64)


@numba.njit(cache=True, nogil=True)
def _walk_shown(end_block, shown, base, top, c, stop, remaining, through, out, collect):  # pragma: no cover - numba
    """:func:`_walk_block` under a scope: a hidden row is stepped into (calls shown below it are
    children of the call being walked), a shown one is taken and jumped over."""
    k = 0
    while c < stop and base <= c < top:
        if not shown[c - base]:
            c += 1
            continue
        if k >= remaining and c > through:
            break
        if collect:
            out[k] = c
        k += 1
        nxt = end_block[c - base]
        if nxt <= c:
            return stop, k
        c = nxt
    return c, k


def _chunk(calls, row: int) -> tuple[int, int]:
    """The rows read together around ``row``: its block of the store, or the whole table."""
    stored = calls._stored
    if stored is None:
        return 0, len(calls)
    starts = stored.starts
    b = int(np.searchsorted(starts, row, side="right")) - 1
    return int(starts[b]), int(starts[b + 1])


_SHOWN_KEPT = 64     # blocks whose shown rows are kept, per thread and scope


def shown_rows(calls, lo: int, hi: int, mine: np.ndarray) -> np.ndarray:
    """Which rows of ``[lo, hi)`` (a chunk of :func:`_chunk`) the "only my code" scope shows:
    calls of my methods, top-level calls, and calls my code made (the one call that entered each
    run of other frames, which stands for the whole run). ``mine`` is per method id."""
    cache = calls.__dict__.setdefault("_shown", {})
    key = (id(mine), lo, hi)
    got = cache.get(key)
    if got is not None and got[0] is mine:
        return got[1]
    method = np.asarray(calls.window("method", lo, hi), np.int64)
    parent = np.asarray(calls.window("parent", lo, hi), np.int64)
    inside = parent >= lo
    parent_method = np.zeros(len(method), np.int64)
    parent_method[inside] = method[parent[inside] - lo]
    outside = (parent >= 0) & ~inside
    if outside.any():        # the calls open at the chunk's start: a few rows
        parent_method[outside] = calls.values_at("method", parent[outside])
    shown = _of_mine(mine, method) | (parent < 0) | ((parent >= 0) & _of_mine(mine, parent_method))
    if len(cache) >= _SHOWN_KEPT:
        del cache[next(iter(cache))]
    cache[key] = (mine, shown)
    return shown


def _of_mine(mine: np.ndarray, method: np.ndarray) -> np.ndarray:
    """``mine`` at method ids (an id the mask does not cover is not mine)."""
    ok = (method >= 0) & (method < len(mine))
    return ok & mine[np.where(ok, method, 0)]


def is_shown(calls, row: int, mine: np.ndarray | None) -> bool:
    """Does the scope show call ``row`` (every call without a scope)?"""
    if mine is None:
        return True
    lo, hi = _chunk(calls, row)
    return bool(shown_rows(calls, lo, hi, mine)[row - lo])


def shown_parent(calls, row: int, mine: np.ndarray | None) -> int:
    """The call the tree shows ``row`` under: its parent, or under a scope its nearest shown
    ancestor (-1: the thread)."""
    p = calls.at("parent", row)
    while p >= 0 and not is_shown(calls, p, mine):
        p = calls.at("parent", p)
    return p


def _walk(calls, start: int, stop: int, limit: int, through: int, collect: bool,
          mine: np.ndarray | None = None) -> tuple[np.ndarray, int, int]:
    """Siblings from row ``start`` on, below ``stop``, jumping over their subtrees: at least
    ``limit`` of them and at least up to the one holding row ``through``. Returns (their rows when
    ``collect``, how many, the row after the last). On the whole ``end`` column when it is decoded,
    else block by block (:meth:`jbgui.model.analysis.CallTable.window`): a walk costs the siblings
    it takes and the blocks they lie in, never a pass over the thread.

    Under a scope (``mine``, per method id, see :func:`shown_rows`) the siblings are the shown
    calls whose nearest shown ancestor is the walked call: hidden calls are stepped into, so the
    walk also costs the hidden calls between them."""
    if start >= stop:
        return _NO_OUT, 0, stop
    if mine is not None:
        return _walk_scoped(calls, start, stop, limit, through, collect, mine)
    if calls.is_decoded("end"):
        end = np.asarray(calls.end)
        n = _count_children(end, start, stop, limit, through)
        if not collect:
            return _NO_OUT, n, int(_skip(end, start, stop, n))
        out = np.empty(n, np.int64)
        return out, n, int(_walk_children(end, start, stop, limit, through, out))
    starts = calls._stored.starts
    parts, n, c = [], 0, start
    while c < stop and (n < limit or c <= through):
        b = int(np.searchsorted(starts, c, side="right")) - 1
        base, top = int(starts[b]), int(starts[b + 1])
        end_block = calls._stored.block_tree(b)["end"]
        out = np.empty(min(top, stop) - c, np.int64) if collect else _NO_OUT
        c, k = _walk_block(end_block, base, top, c, stop, limit - n, through, out, collect)
        c = int(c)
        if collect:
            parts.append(out[:k])
        n += int(k)
        if not k:
            break
    rows = (np.concatenate(parts) if parts else _NO_OUT) if collect else _NO_OUT
    return rows, n, c


def _walk_scoped(calls, start, stop, limit, through, collect, mine):
    parts, n, c = [], 0, start
    while c < stop and (n < limit or c <= through):
        lo, hi = _chunk(calls, c)
        end_chunk = np.asarray(calls.window("end", lo, hi), np.int64)
        out = np.empty(min(hi, stop) - c, np.int64) if collect else _NO_OUT
        before = c
        c, k = _walk_shown(end_chunk, shown_rows(calls, lo, hi, mine), lo, hi, c, stop, limit - n, through, out,
                           collect)
        c = int(c)
        if collect:
            parts.append(out[:k])
        n += int(k)
        if c == before:
            break
    rows = (np.concatenate(parts) if parts else _NO_OUT) if collect else _NO_OUT
    return rows, n, c


def _stop(calls, row: int) -> int:
    return len(calls) if row < 0 else calls.at("end", row)


def children_batch(calls, row: int, start: int = -1, limit: int = 500, through: int = -1,
                   mine: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Children of ``row`` (-1: the thread's top-level calls), in order, beginning with the child
    at row ``start`` (-1: the first child): ``limit`` of them, or more when needed to reach the
    child whose subtree holds row ``through``. Returns ``(rows, next)``: ``next`` is the row of
    the child after the last one returned, or the end of ``row``'s subtree when none is left.

    Costs the number of children returned, not the size of their subtrees: a call with a million
    children hands out its first 500 at once, and the 150,000th in well under a millisecond."""
    stop = _stop(calls, row)
    if start < 0:
        start = row + 1
    if start >= stop:
        return np.zeros(0, np.int64), stop
    out, _n, nxt = _walk(calls, start, stop, limit, through, True, mine)
    return out, min(int(nxt), stop)


def children_in(end: np.ndarray, row: int, stop: int) -> np.ndarray:
    """Every child of ``row`` in an ``end`` column (or a piece of one, in its own row numbers)
    whose subtree ends at ``stop``."""
    start = row + 1
    if start >= stop:
        return np.zeros(0, np.int64)
    n = _count_children(end, start, stop, 1 << 62, -1)
    out = np.empty(n, np.int64)
    _walk_children(end, start, stop, 1 << 62, -1, out)
    return out


@numba.njit(cache=True, nogil=True)
def _count_all(end, start, stop):  # pragma: no cover - numba
    n = 0
    c = start
    while c < stop:
        n += 1
        nxt = end[c]
        if nxt <= c:
            break
        c = nxt
    return n


def child_count(calls, row: int, mine: np.ndarray | None = None) -> int:
    """How many direct children ``row`` has (-1: top-level calls); costs that number."""
    stop = _stop(calls, row)
    return _walk(calls, row + 1, stop, 1 << 62, -1, False, mine)[1] if stop > row + 1 else 0


def has_children(calls, row: int, mine: np.ndarray | None = None) -> bool:
    """Does ``row`` have a child (a shown one, under a scope)?"""
    stop = _stop(calls, row)
    return stop > row + 1 and (mine is None or _walk(calls, row + 1, stop, 1, -1, False, mine)[1] > 0)


@numba.njit(cache=True, nogil=True)
def _skip(end, start, stop, count):  # pragma: no cover - numba
    c = start
    for _ in range(count):
        if c >= stop:
            break
        nxt = end[c]
        if nxt <= c:
            return stop
        c = nxt
    return c


def child_at(calls, row: int, k: int, mine: np.ndarray | None = None) -> int:
    """The row of the ``k``-th child of ``row`` (-1: top-level calls), counting from 0; the end
    of ``row``'s subtree when it has no more than ``k`` children. Costs ``k``. Under a scope, a
    row from which that child is the next shown one (a walk from there starts with it)."""
    stop = _stop(calls, row)
    if k <= 0 and mine is None:
        return min(row + 1, stop)
    if k <= 0:
        first = _walk(calls, row + 1, stop, 1, -1, True, mine)[0]
        return int(first[0]) if len(first) else stop
    return min(_walk(calls, row + 1, stop, k, -1, False, mine)[2], stop)


def child_index(calls, row: int, child: int, mine: np.ndarray | None = None) -> int:
    """Which child of ``row`` (-1: top-level calls) the call at row ``child`` is (0 for the
    first); costs that number. ``child`` must be a child of ``row``."""
    return _walk(calls, row + 1, child, 1 << 62, -1, False, mine)[1]


def count_siblings(calls, start: int, child: int, mine: np.ndarray | None = None) -> int:
    """How many siblings lie from the call at row ``start`` up to (not including) its later
    sibling ``child``; costs that number."""
    return _walk(calls, start, child, 1 << 62, -1, False, mine)[1]


def ancestors(thread: ThreadReplay, row: int, mine: np.ndarray | None = None) -> list[int]:
    """The rows from the thread's top-level call down to ``row`` itself (root first); under a
    scope the shown ones only, down to ``row`` or, when it is hidden, the call that stands for it."""
    calls = thread.calls
    out = [int(row)]
    p = calls.at("parent", int(row))
    while p >= 0:
        out.append(p)
        p = calls.at("parent", p)
    out.reverse()
    return out if mine is None else [r for r in out if is_shown(calls, r, mine)]


# ---------------------------------------------------------------------- per-call numbers


@numba.njit(cache=True, nogil=True)
def _exclusive(end, incl, rows, out):  # pragma: no cover - numba
    for i in range(len(rows)):
        r = rows[i]
        total = 0
        c = r + 1
        stop = end[r]
        while c < stop:
            total += incl[c]
            nxt = end[c]
            if nxt <= c:
                break
            c = nxt
        out[i] = incl[r] - total


def exclusive(thread: ThreadReplay, rows, column: str = "incl_bytecodes", mine: np.ndarray | None = None) -> np.ndarray:
    """What the calls at ``rows`` did themselves: ``column`` (an inclusive count,
    ``incl_bytecodes`` or ``incl_blocks``) minus their children's. Costs the number of their
    children (``CallTable.excl_bytecodes`` computes every row of the table instead). Under a
    scope, minus their shown children's: the hidden calls in between are charged to them."""
    rows = np.atleast_1d(np.asarray(rows, np.int64))
    out = np.zeros(len(rows), np.int64)
    if len(rows):
        calls = thread.calls
        if mine is None and calls.is_decoded("end") and calls.is_decoded(column):
            _exclusive(np.asarray(calls.end), np.asarray(getattr(calls, column)), rows, out)
            return out
        incl = calls.values_at(column, rows).astype(np.int64)
        ends = calls.values_at("end", rows)
        for i, (r, stop) in enumerate(zip(rows.tolist(), ends.tolist())):
            children, _n, _next = _walk(calls, r + 1, stop, 1 << 62, -1, True, mine)
            out[i] = incl[i] - (int(calls.values_at(column, children).astype(np.int64).sum()) if len(children) else 0)
    return out


def exclusive_bytecodes(thread: ThreadReplay, rows, mine: np.ndarray | None = None) -> np.ndarray:
    return exclusive(thread, rows, "incl_bytecodes", mine)


def exclusive_blocks(thread: ThreadReplay, rows, mine: np.ndarray | None = None) -> np.ndarray:
    return exclusive(thread, rows, "incl_blocks", mine)


def has_clock(thread: ThreadReplay) -> bool:
    """Are the thread's times nanoseconds (clock samples), or event indices?"""
    return len(thread.clock) >= 2


def duration(thread: ThreadReplay, rows) -> np.ndarray:
    """How long the calls at ``rows`` ran: nanoseconds from the clock samples (as the timeline
    draws them, from the first event to the one after the last), or their number of events when
    the trace has no clock (see :func:`has_clock`)."""
    start, end = thread.spans(rows)
    return end - start


def thread_totals(thread: ThreadReplay) -> dict:
    """A thread as one node: its calls, and the inclusive bytecodes and blocks and the span of
    its top-level calls together."""
    calls = thread.calls
    n = len(calls)
    if not n:
        return {"calls": 0, "incl_bytecodes": 0, "incl_blocks": 0, "duration": 0.0, "top_level": 0}
    tops, _ = children_batch(calls, -1, limit=n)
    start, end = thread.spans(tops)
    return {"calls": n, "incl_bytecodes": int(calls.values_at("incl_bytecodes", tops).astype(np.int64).sum()),
            "incl_blocks": int(calls.values_at("incl_blocks", tops).astype(np.int64).sum()),
            "duration": float(end.max() - start.min()), "top_level": len(tops)}


def caught_here(thread: ThreadReplay, row: int) -> np.ndarray:
    """The exception records (``EXCEPTION_DTYPE``) whose exception call ``row`` caught."""
    exc = thread.exceptions
    return exc[exc["catch_row"] == row] if len(exc) else exc


# ---------------------------------------------------------------------- names


class _Names:
    """Lower-case names of one analysis's methods and of the call sites that name synthetic rows,
    built once; the matches of the last few search texts."""

    def __init__(self, analysis: Analysis):
        st = analysis.statics
        n = st.max_method_id + 1
        classes = [c.replace("/", ".").lower() for c in st.c_name]
        m_class = st.m_class.tolist()
        self.named = np.zeros(max(n, 1), np.bool_)
        self.heads: list[str] = [""] * n      # pkg.cls.name
        self.descs: list[str] = [""] * n      # (desc)ret
        for mid in range(1, n):
            name = st.m_name[mid]
            if name:
                self.named[mid] = True
                self.heads[mid] = f"{classes[m_class[mid]]}.{name.lower()}"
                self.descs[mid] = st.m_desc[mid].lower()
        # A synthetic row carries its call site's resolved target as its method; the rows named
        # by their site (Analysis.call_name) are the ones whose target has no name.
        targets = np.asarray(st.s_target, np.int64)
        unnamed = ~self.named[np.where((targets >= 0) & (targets < n), targets, 0)]
        self.sites = np.flatnonzero(unnamed).astype(np.int64)
        self.site_names = [st.site_qualified(int(s)).lower() for s in self.sites]
        self._memo: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def match(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(a boolean table by method id, the sorted call sites) whose names contain ``text``
        (lower case). The descriptor counts only when the text has a parenthesis, so that
        ``String`` finds String's methods and not every method taking a String."""
        hit = self._memo.get(text)
        if hit is not None:
            return hit
        if "(" in text:
            mask = [bool(h) and text in h + d for h, d in zip(self.heads, self.descs)]
            sites = [s for s, name in zip(self.sites.tolist(), self.site_names) if text in name]
        else:
            mask = [bool(h) and text in h for h in self.heads]
            sites = [s for s, name in zip(self.sites.tolist(), self.site_names) if text in name.partition("(")[0]]
        hit = (np.array(mask, np.bool_) if mask else np.zeros(1, np.bool_), np.array(sites, np.int64))
        if len(self._memo) > 16:
            self._memo.clear()
        self._memo[text] = hit
        return hit


_NAMES: "weakref.WeakKeyDictionary[Analysis, _Names]" = weakref.WeakKeyDictionary()


def _names(analysis: Analysis) -> _Names:
    names = _NAMES.get(analysis)
    if names is None:
        names = _Names(analysis)
        _NAMES[analysis] = names
    return names


def name_matches(analysis: Analysis, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Method ids and call sites (the names of synthetic rows) whose qualified name contains
    ``text``, ignoring case."""
    table, sites = _names(analysis).match(text.strip().lower())
    return np.flatnonzero(table), sites


# ---------------------------------------------------------------------- scans


def _scan(n: int, after: int, backwards: bool, test, cancelled: Cancelled) -> int:
    """The first row after ``after`` (the last before it, ``backwards``; ``after < 0`` then means
    from the end) for which ``test(lo, hi)`` (a boolean array over rows lo..hi-1) holds; -1."""
    size = FIRST_CHUNK
    if backwards:
        hi = min(after, n) if after >= 0 else n
        while hi > 0 and not cancelled():
            lo = max(0, hi - size)
            hits = np.flatnonzero(test(lo, hi))
            if len(hits):
                return lo + int(hits[-1])
            hi = lo
            size = min(size * 4, CHUNK)
        return -1
    lo = max(after + 1, 0)
    while lo < n and not cancelled():
        hi = min(n, lo + size)
        hits = np.flatnonzero(test(lo, hi))
        if len(hits):
            return lo + int(hits[0])
        lo = hi
        size = min(size * 4, CHUNK)
    return -1


def find_calls(analysis: Analysis, thread: ThreadReplay, text: str, after_row: int = -1, backwards: bool = False,
               cancelled: Cancelled = _never) -> int:
    """The first call after ``after_row`` (``backwards``: the last one before it; ``after_row <
    0`` then means from the end) whose qualified name (``pkg.Cls.name``, with the descriptor when
    ``text`` holds a parenthesis) contains ``text``, ignoring case; -1 when there is none.

    Synthetic native and untraced rows are named as :meth:`Analysis.call_name` names them: by
    their method when it is known, else by their call site's target."""
    text = text.strip().lower()
    calls = thread.calls
    if not text or not len(calls):
        return -1
    table, sites = _names(analysis).match(text)
    if not table.any() and not len(sites):
        return -1
    n_methods = len(table)
    named = _names(analysis).named
    def test(lo: int, hi: int) -> np.ndarray:
        method = np.asarray(calls.window("method", lo, hi))
        known = (method >= 0) & (method < n_methods)
        ids = np.where(known, method, 0)
        hit = table[ids]
        if len(sites):
            by_site = ~named[ids]
            if by_site.any():
                hit[by_site] = np.isin(np.asarray(calls.window("call_site", lo, hi))[by_site], sites)
        return hit

    return _scan(len(calls), after_row, backwards, test, cancelled)


def next_flagged(thread: ThreadReplay, after_row: int, mask: int, backwards: bool = False,
                 cancelled: Cancelled = _never) -> int:
    """The first call after ``after_row`` (``backwards``: the last before it, ``after_row < 0``
    meaning from the end) with any flag of ``mask`` (for example :data:`EXCEPTION_FLAGS`,
    :data:`NATIVE_FLAGS`); -1 when there is none."""
    calls = thread.calls
    mask = int(mask)
    return _scan(len(calls), after_row, backwards, lambda lo, hi: (np.asarray(calls.window("flags", lo, hi)) & mask) != 0,
                 cancelled)


@dataclass(frozen=True)
class Hit:
    """Where a search through the threads stopped: the thread's position in
    ``Analysis.threads``, the row, and whether the search went past the last thread's end (the
    first thread's start, backwards) to get there."""

    slot: int
    row: int
    wrapped: bool


def search_threads(analysis: Analysis, slot: int, row: int, find: Callable[[ThreadReplay, int, bool], int],
                   backwards: bool = False, cancelled: Cancelled = _never) -> Hit | None:
    """Search from call ``row`` of thread ``analysis.threads[slot]`` (``row`` -1: from before its
    first call; backwards, ``row`` = its number of calls: from after its last) through the
    following threads (preceding ones, ``backwards``), wrapping around to the start point.

    ``find(thread, after_row, backwards)`` is one thread's search (:func:`find_calls`,
    :func:`next_flagged` with the other arguments bound); it gets explicit bounds (-1 forwards,
    the number of calls backwards). The start call itself is found last, when nothing else is."""
    threads = analysis.threads
    n = len(threads)
    if not n:
        return None
    slot = min(max(slot, 0), n - 1)
    step = -1 if backwards else 1
    # The start thread after (before) the start row, the others in turn, then the start thread
    # again up to the start row itself.
    plan: list[tuple[int, int, bool]] = [(slot, row, False)]
    s, wrapped = slot, False
    for _ in range(n - 1):
        s += step
        wrapped = wrapped or not 0 <= s < n
        s %= n
        plan.append((s, -2, wrapped))
    plan.append((slot, -2, True))
    for s, after, wrapped in plan:
        if cancelled():
            return None
        thread = threads[s]
        rows = len(thread.calls)
        if after == -2:
            after = rows if backwards else -1
        if backwards and after <= 0:
            continue  # nothing before the thread's first call (and after_row < 0 means the end)
        found = find(thread, after, backwards)
        if found >= 0:
            # (the second pass over the start thread finds nothing the first pass skipped: that
            # one found nothing after the start row)
            return Hit(s, found, wrapped)
    return None
