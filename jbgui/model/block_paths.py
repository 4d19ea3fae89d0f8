"""The blocks a call executed itself, in order: paths, path signatures and loop iterations.

A call's *own* blocks are the BLOCK words of its method between its first and last event that do
not lie inside one of its callees (the call columns give every callee's event range). Calls of
native or untraced code are synthetic rows whose range may cover an event of the caller itself, so
they are not cut out; the Java callbacks below them are.

:func:`scan_calls` runs a numba kernel over the decoded chunks that hold a set of calls (only
those chunks are decoded) and gives per call a *path signature* (the set of distinct transitions
taken, entry and exit included: calls that differ only in how often loops repeated share it),
its own block count and bytecodes, and one record per loop entry with the number of times the
loop's back edges were taken during it. :func:`call_path` gives one call's exact sequence.
The stream readers are :mod:`jbgui.model.tracedir` and :mod:`jbgui.model.call_blocks`; this module
only wraps them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np

from jbgui.model import layout
from jbgui.model.analysis import Analysis, Flag, ThreadReplay
from jbgui.model.replay import Cancelled
from jbgui.model.call_blocks import stream_index
from jbgui.model.call_queries import children_in
from jbgui.model.tracedir import decode_payload

# A window of decoded events holds at least the calls that start in it; a call longer than this
# gets a window of its own (its whole range), and one longer than LONGEST_CALL is left out.
WINDOW_EVENTS = 1 << 23
LONGEST_CALL = 1 << 28
# Rows of the call table read together by a scan of a method's calls (see _row_windows).
GROUP_ROWS = 1 << 20

SYNTHETIC = Flag.NATIVE | Flag.UNTRACED

_TYPE_SHIFT = layout.TYPE_SHIFT
_METHOD_SHIFT = layout.METHOD_SHIFT
_PAGE_MASK = layout.MAX_METHOD_ID
_INDEX_MASK = layout.BLOCKS_PER_PAGE - 1
_BLOCK = layout.TYPE_BLOCK

# Pseudo-blocks of a signature: the transition into the first block comes from ENTRY, and the
# last block goes to EXIT_NORMAL or EXIT_EXCEPTION.
ENTRY = -1
EXIT_NORMAL = -2
EXIT_EXCEPTION = -3


@dataclass
class LoopTables:
    """A method's natural loops in the kernel's layout (local block indices)."""

    header_of: np.ndarray      # block -> loop whose header it is, -1
    innermost: np.ndarray      # block -> innermost loop containing it, -1
    parent: np.ndarray         # loop -> enclosing loop, -1
    in_body: np.ndarray        # (loops, blocks) bool

    @staticmethod
    def empty(n_blocks: int) -> LoopTables:
        return LoopTables(np.full(n_blocks, -1, np.int64), np.full(n_blocks, -1, np.int64),
                          np.zeros(0, np.int64), np.zeros((0, max(n_blocks, 1)), np.bool_))


@dataclass
class CallScan:
    """Per call of one method (all threads): ``thread``, ``row``, ``sig``, ``own_blocks``,
    ``own_bytecodes``, ``exceptional``; loop entries ``loop_call`` (index into the calls),
    ``loop_id``, ``loop_iters``; ``skipped``: calls longer than :data:`LONGEST_CALL` events;
    ``first``, ``last`` and ``caller`` of each call (read with the rows around it)."""

    thread: np.ndarray
    row: np.ndarray
    sig: np.ndarray
    own_blocks: np.ndarray
    own_bytecodes: np.ndarray
    exceptional: np.ndarray
    loop_call: np.ndarray
    loop_id: np.ndarray
    loop_iters: np.ndarray
    skipped: int = 0
    events_decoded: int = 0
    problems: list[str] = field(default_factory=list)
    # per call, beside ``row``: its first and last events, and its caller's method (0 at the top)
    first: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    last: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    caller: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


# ---------------------------------------------------------------------- the kernel

@numba.njit(cache=True, nogil=True)
def _mix(x):
    x = np.uint64(x) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, nogil=True)
def _seen(keys, stamps, stamp, key):
    """Insert ``key`` into the set of the current call (``stamp``); True if it was there."""
    mask = len(keys) - 1
    i = np.int64(_mix(key) & np.uint64(mask))
    while stamps[i] == stamp:
        if keys[i] == key:
            return True
        i = (i + 1) & mask
    stamps[i] = stamp
    keys[i] = key
    return False


@numba.njit(cache=True, nogil=True)
def _scan(words, wbase, rows, k0, first, last, end, flags, synthetic_mask, inferred_flag,
          method, page_base, b_method, b_bc, block_base, n_blocks,
          header_of, innermost, lparent, in_body,
          out_sig, out_blocks, out_bc, out_exc, rec, n_rec, set_keys, set_stamps,
          open_entry, iters, seq, seq_event, want_seq, stamp0):
    """Scan calls ``rows[k0:]`` while they lie inside ``words`` (events ``wbase`` onwards).

    Returns ``(k, n_rec, n_seq)``: the first call not done (outside the window, or too little
    room in ``rec``), the loop records written, the sequence length (``want_seq``)."""
    nw = len(words)
    n_loops = len(lparent)
    n_seq = 0
    k = k0
    while k < len(rows):
        r = rows[k]
        lo = first[r]
        hi = last[r]
        if lo < wbase or hi >= wbase + nw:
            break
        if n_rec + (hi - lo + 1) + n_loops >= len(rec):
            break
        stamp = stamp0 + k + 1
        sig = np.uint64(0)
        prev = -1
        nb = 0
        bc = 0
        for L in range(n_loops):
            open_entry[L] = 0
            iters[L] = 0
        e = lo
        c = r + 1
        stop = end[r]
        while e <= hi:
            while c < stop and (flags[c] & synthetic_mask) != 0:
                c += 1  # a native or untraced call: its Java callbacks (if any) come next
            if c < stop:
                seg_end = first[c] - 1
                skip_to = last[c] + 1
                # An exceptional end inferred at the caller's handler block: that block is ours.
                if (flags[c] & inferred_flag) != 0:
                    skip_to = last[c]
            else:
                seg_end = hi
                skip_to = hi + 1
            if seg_end > hi:
                seg_end = hi
            for ev in range(e, seg_end + 1):
                w = np.int64(words[ev - wbase])
                if (w >> _TYPE_SHIFT) != _BLOCK:
                    continue
                page = (w >> _METHOD_SHIFT) & _PAGE_MASK
                if page >= len(page_base):
                    continue
                base = page_base[page]
                if base < 0:
                    continue
                gb = base + (w & _INDEX_MASK)
                if gb >= len(b_method) or b_method[gb] != method:
                    continue
                b = gb - block_base
                if b < 0 or b >= n_blocks:
                    continue
                nb += 1
                bc += b_bc[gb]
                key = (prev + 4) * (n_blocks + 4) + b + 4
                if not _seen(set_keys, set_stamps, stamp, key):
                    sig += _mix(key)
                if n_loops:
                    # Leaving loops: those containing prev but not b.
                    if prev >= 0:
                        L = innermost[prev]
                        while L >= 0:
                            if not in_body[L, b] and open_entry[L]:
                                rec[n_rec, 0] = k
                                rec[n_rec, 1] = L
                                rec[n_rec, 2] = iters[L]
                                n_rec += 1
                                open_entry[L] = 0
                            L = lparent[L]
                    L = header_of[b]
                    if L >= 0:
                        if prev >= 0 and in_body[L, prev] and open_entry[L]:
                            iters[L] += 1            # a back edge
                        else:
                            if open_entry[L]:
                                rec[n_rec, 0] = k
                                rec[n_rec, 1] = L
                                rec[n_rec, 2] = iters[L]
                                n_rec += 1
                            open_entry[L] = 1
                            iters[L] = 0
                if want_seq:
                    seq[n_seq] = b
                    seq_event[n_seq] = ev
                    n_seq += 1
                prev = b
            if c >= stop:
                break
            e = skip_to
            c = end[c]
        exc = 1 if (flags[r] & 1) != 0 else 0
        exit_key = (prev + 4) * (n_blocks + 4) + (4 + (EXIT_EXCEPTION if exc else EXIT_NORMAL))
        if not _seen(set_keys, set_stamps, stamp, exit_key):
            sig += _mix(exit_key)
        for L in range(n_loops):
            if open_entry[L]:
                rec[n_rec, 0] = k
                rec[n_rec, 1] = L
                rec[n_rec, 2] = iters[L]
                n_rec += 1
                open_entry[L] = 0
        out_sig[k] = sig
        out_blocks[k] = nb
        out_bc[k] = bc
        out_exc[k] = exc
        k += 1
    return k, n_rec, n_seq


# ---------------------------------------------------------------------- driving it

class _Method:
    """Everything the kernel needs about one method."""

    def __init__(self, analysis: Analysis, method: int, loops: LoopTables | None):
        st = analysis.statics
        self.method = method
        self.block_base = int(st.m_block_base[method])
        self.n_blocks = int(st.m_blocks[method])
        self.page_base = st.page_base.astype(np.int64)
        self.b_method = st.b_method
        self.b_bc = st.b_metrics[:, 0].astype(np.int64)
        self.loops = loops or LoopTables.empty(self.n_blocks)
        size = 1
        while size < 4 * (3 * self.n_blocks + 64):
            size *= 2
        self.set_keys = np.zeros(size, np.int64)
        self.set_stamps = np.zeros(size, np.int64)
        n_loops = len(self.loops.parent)
        self.open_entry = np.zeros(max(n_loops, 1), np.int64)
        self.iters = np.zeros(max(n_loops, 1), np.int64)


class _Window:
    """Decoded events of a range of chunks, kept to serve the next calls."""

    def __init__(self, index, needed: np.ndarray | None = None):
        self.index = index
        self.needed = needed      # per chunk: holds an event of a call to scan
        self.base = 0
        self.words = np.zeros(0, np.uint32)
        self.decoded = 0

    def load(self, lo: int, hi: int, pool: ThreadPoolExecutor | None, at_least: int | None = None) -> None:
        """Hold events ``[lo, at_least)`` and, when the chunks up to ``hi`` are all needed, up to
        there: whole chunks, decoded in parallel. A chunk holding no call's event ends the window
        (unless the call being scanned needs it), so sparse calls cost their own chunks only."""
        ix = self.index
        c0 = max(int(np.searchsorted(ix.first, lo, side="right")) - 1, 0)
        c1 = int(np.searchsorted(ix.first, hi, side="left"))
        c1 = max(c1, c0 + 1)
        c1 = min(c1, len(ix.first))
        if self.needed is not None and c1 > c0 + 1:
            must = int(np.searchsorted(ix.first, at_least if at_least is not None else lo + 1, side="left"))
            gaps = np.flatnonzero(~self.needed[c0:c1])
            gaps = gaps[c0 + gaps >= must]
            if len(gaps):
                c1 = max(c0 + int(gaps[0]), c0 + 1)
        with open(ix.path, "rb") as handle:
            payloads = []
            for c in range(c0, c1):
                handle.seek(int(ix.offset[c]))
                payloads.append((handle.read(ix.length[c]), ix.codec[c], ix.filter[c], int(ix.count[c])))
        decode = lambda p: decode_payload(*p)  # noqa: E731
        parts = list(pool.map(decode, payloads)) if pool is not None and len(payloads) > 4 else \
            [decode(p) for p in payloads]
        self.base = int(ix.first[c0]) if c0 < len(ix.first) else 0
        self.words = np.concatenate(parts) if len(parts) > 1 else (parts[0] if parts else np.zeros(0, np.uint32))
        self.decoded += len(self.words)


def _needed(index, firsts: np.ndarray, lasts: np.ndarray) -> np.ndarray | None:
    """Per chunk of the stream: whether it holds an event of one of the calls (their first and
    last events given), so that an events window loads only those."""
    if not len(firsts) or not len(index.first):
        return None
    c_lo = np.maximum(np.searchsorted(index.first, firsts, side="right") - 1, 0)
    c_hi = np.maximum(np.searchsorted(index.first, lasts, side="right") - 1, 0)
    diff = np.zeros(len(index.first) + 1, np.int64)
    np.add.at(diff, c_lo, 1)
    np.add.at(diff, c_hi + 1, -1)
    return np.cumsum(diff[:-1]) > 0


def _thread_window(analysis: Analysis, thread: ThreadReplay, firsts: np.ndarray, lasts: np.ndarray) -> _Window:
    """An events window over ``thread``'s stream that loads only chunks holding an event of one of
    the calls."""
    index = stream_index(analysis, thread)
    return _Window(index, _needed(index, firsts, lasts))


def _columns(thread: ThreadReplay):
    calls = thread.calls
    return (np.asarray(calls.first), np.asarray(calls.last), np.asarray(calls.end), np.asarray(calls.flags))


def _scan_thread(analysis: Analysis, thread: ThreadReplay, rows: np.ndarray, m: _Method,
                 pool: ThreadPoolExecutor | None, want_seq: bool = False, window_events: int = WINDOW_EVENTS,
                 progress=None, cancelled=None, columns=None, window=None, stamp0: int = 0):
    """Run the kernel over ``rows`` (ascending) of one thread, decoding windows of at least
    ``window_events`` events (the next calls are usually close by). ``columns``: (first, last,
    end, flags) of some rows only (one call's subtree or a window of rows, ``rows`` and ``end``
    local to it) instead of the thread's whole columns. ``window``: the thread's events window,
    kept from one window of rows to the next; ``stamp0``: how many calls
    of the method were scanned before (each call's set of seen edges is told apart by its number
    among all of them)."""
    first, last, end, flags = columns if columns is not None else _columns(thread)
    n = len(rows)
    sig = np.zeros(n, np.uint64)
    blocks = np.zeros(n, np.int64)
    bc = np.zeros(n, np.int64)
    exc = np.zeros(n, np.int8)
    recs: list[np.ndarray] = []
    rec = np.zeros((1 << 16, 3), np.int64)
    n_rec = 0
    seq = np.zeros(1, np.int32)
    seq_event = np.zeros(1, np.int64)
    skipped = np.zeros(n, np.bool_)
    if window is None:
        window = _thread_window(analysis, thread, first[rows], last[rows])
    decoded_before = window.decoded
    L = m.loops
    k = 0
    while k < n:
        r = int(rows[k])
        lo, hi = int(first[r]), int(last[r]) + 1
        if hi - lo > LONGEST_CALL:
            skipped[k] = True
            k += 1
            continue
        if not (window.base <= lo and hi <= window.base + len(window.words)):
            if cancelled is not None and cancelled():
                raise Cancelled()
            if progress is not None:
                progress(k, n)
            window.load(lo, max(hi, lo + window_events), pool, hi)
        if want_seq and len(seq) < hi - lo:
            seq = np.zeros(hi - lo, np.int32)
            seq_event = np.zeros(hi - lo, np.int64)
        if len(rec) < (hi - lo) + len(L.parent) + 16:
            if n_rec:                 # the records so far, before a bigger buffer replaces this one
                recs.append(rec[:n_rec].copy())
            rec = np.zeros((2 * ((hi - lo) + len(L.parent) + 16), 3), np.int64)
            n_rec = 0
        k_next, n_rec, n_seq = _scan(
            window.words, window.base, rows, k, first, last, end, flags, SYNTHETIC, Flag.INFERRED,
            m.method, m.page_base, m.b_method, m.b_bc, m.block_base, m.n_blocks,
            L.header_of, L.innermost, L.parent, L.in_body,
            sig, blocks, bc, exc, rec, n_rec, m.set_keys, m.set_stamps, m.open_entry, m.iters,
            seq, seq_event, want_seq, stamp0)
        if k_next == k:
            # The record buffer is full, or the call does not fit the window: drain and retry.
            if n_rec:
                recs.append(rec[:n_rec].copy())
                n_rec = 0
                continue
            window.load(lo, max(hi, lo + window_events), pool, hi)
            if not (window.base <= lo and hi <= window.base + len(window.words)):
                skipped[k] = True   # the stream ends before the call does (a damaged tail)
                k += 1
            continue
        k = k_next
        if n_rec > len(rec) // 2:
            recs.append(rec[:n_rec].copy())
            n_rec = 0
    if n_rec:
        recs.append(rec[:n_rec].copy())
    loops = np.concatenate(recs) if recs else np.zeros((0, 3), np.int64)
    result = (sig, blocks, bc, exc, loops, skipped, window.decoded - decoded_before)
    if want_seq:
        return result, seq[:n_seq] if n else seq[:0], seq_event[:n_seq] if n else seq_event[:0]
    return result


class _RowBlocks:
    """A stored call table's blocks read in ascending order, each decoded once and dropped when
    the scan has passed it: ``first``, ``last``, ``flags``, ``method`` and, from the block alone,
    ``parent`` and ``end``."""

    NAMES = ("first", "last", "flags", "method")

    def __init__(self, calls, rows: np.ndarray) -> None:
        self.stored = calls._stored
        self.starts = np.asarray(self.stored.starts, np.int64)
        self.blocks: dict[int, dict[str, np.ndarray]] = {}
        self.scanned = rows               # the rows scanned (ascending), and their ends once read
        self.ends = np.full(len(rows), -1, np.int64)

    def block_of(self, row: int) -> int:
        return int(np.searchsorted(self.starts, row, side="right")) - 1

    def get(self, b: int) -> dict[str, np.ndarray]:
        got = self.blocks.get(b)
        if got is None:
            lo, hi = int(self.starts[b]), int(self.starts[b + 1])
            got = {name: self.stored.decode_rows(name, lo, hi) for name in self.NAMES}
            got.update(self.stored.block_links(b))
            self.blocks[b] = got
            a, z = np.searchsorted(self.scanned, [lo, hi])
            self.ends[a:z] = got["end"][self.scanned[a:z] - lo]
        return got

    def ends_of(self, i: int, j: int) -> np.ndarray:
        """The ends of the scanned rows ``[i, j)`` (reading the blocks that hold them)."""
        unknown = self.scanned[i:j][self.ends[i:j] < 0]
        if len(unknown):
            for b in np.unique(np.searchsorted(self.starts, unknown, side="right") - 1).tolist():
                self.get(b)
        return self.ends[i:j]

    def rows(self, name: str, lo: int, hi: int) -> np.ndarray:
        b0, b1 = self.block_of(lo), self.block_of(hi - 1)
        parts = [self.get(b)[name] for b in range(b0, b1 + 1)]
        whole = parts[0] if len(parts) == 1 else np.concatenate(parts)
        base = int(self.starts[b0])
        return whole[lo - base:hi - base]

    def forget_before(self, row: int) -> None:
        b = self.block_of(row)
        for old in [k for k in self.blocks if k < b]:
            del self.blocks[old]


def _row_windows(calls, rows: np.ndarray):
    """``(lo, rows - lo, columns, about)`` for groups of ``rows`` (ascending): ``columns`` are
    ``first``, ``last``, ``end`` (local) and ``flags`` of rows ``[lo, stop)``, which hold the
    group's subtrees, and ``about`` the group's own ``first``, ``last`` and callers (the method of
    each call's parent, 0 at the top). A scan reads the blocks around the method's calls once
    each, never the thread's whole columns (four of them are 7 GB on a 225 M-call thread).
    Nested calls (recursion) share a group; groups hold about :data:`GROUP_ROWS` rows. One group
    of whole columns when they are in memory already."""
    if calls._stored is None or all(calls.is_decoded(n) for n in ("first", "last", "end", "flags", "parent")):
        first, last = np.asarray(calls.first), np.asarray(calls.last)
        parent = np.asarray(calls.parent, np.int64)[rows]
        callers = np.zeros(len(rows), np.int64)
        callers[parent >= 0] = np.asarray(calls.method)[parent[parent >= 0]]
        columns = (first, last, np.asarray(calls.end), np.asarray(calls.flags))
        yield 0, rows, columns, (first[rows], last[rows], callers)
        return
    blocks = _RowBlocks(calls, rows)
    i, n = 0, len(rows)
    while i < n:
        lo = int(rows[i])
        blocks.forget_before(lo)
        # the rows before the limit, whose subtrees may push it further (nested calls)
        limit = lo + GROUP_ROWS
        while True:
            j = max(int(np.searchsorted(rows, limit)), i + 1)
            stop = int(blocks.ends_of(i, j).max())
            if stop <= limit:
                break
            limit = stop
        local = rows[i:j] - lo
        first, last, end, flags = (blocks.rows(name, lo, stop) for name in ("first", "last", "end", "flags"))
        parent = blocks.rows("parent", lo, stop)[local]
        inside = parent >= lo
        callers = np.zeros(len(local), np.int64)
        callers[inside] = blocks.rows("method", lo, stop)[parent[inside] - lo]
        before = parent[(parent >= 0) & ~inside]
        if len(before):           # a parent in a block already passed
            callers[(parent >= 0) & ~inside] = calls.values_at("method", before)
        yield lo, local, (first, last, end.astype(np.int64) - lo, flags), (first[local], last[local], callers)
        i = j


def _rows_of_method(calls, method: int) -> np.ndarray:
    """The rows of ``method``'s calls, reading the ``method`` column a block at a time."""
    stored = calls._stored
    if stored is None or calls.is_decoded("method"):
        return np.flatnonzero(np.asarray(calls.method) == method).astype(np.int64)
    starts = np.asarray(stored.starts, np.int64).tolist()
    parts = [np.flatnonzero(calls.window("method", lo, hi, keep=False) == method).astype(np.int64) + lo
             for lo, hi in zip(starts[:-1], starts[1:]) if hi > lo]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def method_rows(analysis: Analysis, method: int) -> list[tuple[ThreadReplay, np.ndarray]]:
    """The rows of every call of ``method``, per thread (threads without one left out)."""
    out = []
    for thread in analysis.threads:
        if not len(thread.calls):
            continue
        summary = thread.call_summary
        if method not in set(np.asarray(summary["method_ids"]).tolist()):
            continue
        rows = _rows_of_method(thread.calls, method)
        if len(rows):
            out.append((thread, rows))
    return out


def scan_calls(analysis: Analysis, method: int, loops: LoopTables | None = None,
               selected: list[tuple[ThreadReplay, np.ndarray]] | None = None,
               progress=None, cancelled=None) -> CallScan:
    """Signatures, own blocks and bytecodes, and loop entries of every call of ``method``
    (or of the ``selected`` rows per thread). ``progress(done, total)`` counts calls;
    ``cancelled()`` returning True stops with :class:`Cancelled`."""
    m = _Method(analysis, method, loops)
    parts = selected if selected is not None else method_rows(analysis, method)
    threads, rows, sigs, blocks, bcs, excs, lcall, lid, liters = [], [], [], [], [], [], [], [], []
    firsts, lasts, callers = [], [], []
    skipped = 0
    decoded = 0
    offset = 0
    with ThreadPoolExecutor(max_workers=2) as pool:
        total = sum(len(r) for _t, r in parts)
        done = 0

        def windows():
            for thread, trows in parts:
                events = _Window(stream_index(analysis, thread), None)
                for lo, wrows, columns, about in _row_windows(thread.calls, np.sort(trows)):
                    events.needed = _needed(events.index, about[0], about[1])
                    yield thread, events, lo, wrows, columns, about

        for thread, events, lo, wrows, columns, about in windows():
            report = None if progress is None else (lambda k, _n, base=done: progress(base + k, total))
            sig, nb, bc, exc, loops_rec, skip, dec = _scan_thread(analysis, thread, wrows, m, pool,
                                                                  progress=report, cancelled=cancelled,
                                                                  columns=columns, window=events,
                                                                  stamp0=done)
            done += len(wrows)
            keep = ~skip
            index = np.cumsum(keep) - 1
            skipped += int(skip.sum())
            decoded += dec
            threads.append(np.full(int(keep.sum()), thread.index, np.int64))
            rows.append(wrows[keep] + lo)
            sigs.append(sig[keep])
            blocks.append(nb[keep])
            bcs.append(bc[keep])
            excs.append(exc[keep])
            firsts.append(about[0][keep])
            lasts.append(about[1][keep])
            callers.append(about[2][keep])
            if len(loops_rec):
                lr = loops_rec[keep[loops_rec[:, 0]]]
                lcall.append(index[lr[:, 0]] + offset)
                lid.append(lr[:, 1])
                liters.append(lr[:, 2])
            offset += int(keep.sum())

    def cat(parts_, dtype):
        return np.concatenate(parts_).astype(dtype) if parts_ else np.zeros(0, dtype)
    return CallScan(cat(threads, np.int64), cat(rows, np.int64), cat(sigs, np.uint64), cat(blocks, np.int64),
                    cat(bcs, np.int64), cat(excs, np.int8), cat(lcall, np.int64), cat(lid, np.int64),
                    cat(liters, np.int64), skipped, decoded, first=cat(firsts, np.int64), last=cat(lasts, np.int64),
                    caller=cat(callers, np.int64))


@dataclass
class CallPath:
    """One call's own blocks in order (local block indices), the event of each, the calls made
    from each step, and how the call ended."""

    thread: int
    row: int
    method: int
    blocks: np.ndarray
    events: np.ndarray
    calls: list[tuple[int, int]]        # (step, child row), in order
    exceptional: bool
    exception: str | None               # the exception's class when it ended exceptionally


def call_path(analysis: Analysis, thread: ThreadReplay, row: int) -> CallPath:
    """The exact sequence of the call's own blocks, with the calls made from each block."""
    # Only the call's subtree is read (not the thread's whole columns: a path is asked for one call).
    _row, _stop, sub = thread.calls.subtree(row)
    method = int(sub["method"][0])
    m = _Method(analysis, method, None)
    if m.n_blocks == 0:
        seq = np.zeros(0, np.int32)
        events = np.zeros(0, np.int64)
    else:
        columns = (sub["first"], sub["last"], sub["end"], sub["flags"])
        _result, seq, events = _scan_thread(analysis, thread, np.zeros(1, np.int64), m, None, want_seq=True,
                                            window_events=1, columns=columns)
    local = children_in(sub["end"], 0, len(sub["end"]))
    children = local + row
    child_first = np.asarray(sub["first"])[local] if len(local) else np.zeros(0, np.int64)
    steps = np.searchsorted(events, child_first, side="left") - 1
    flags = int(sub["flags"][0])
    exc_class = int(sub["exc_class"][0])
    exceptional = bool(flags & Flag.EXCEPTIONAL)
    return CallPath(thread.index, row, method, seq.astype(np.int64), events.astype(np.int64),
                    [(int(s), int(c)) for s, c in zip(steps, children)], exceptional,
                    analysis.statics.class_name_of_id(exc_class) if exceptional else None)


# ---------------------------------------------------------------------- compressing a path

def compress(seq, max_period: int = 16, counts: bool = True) -> list:
    """Tandem repetitions folded: a list of items, each a block or ``(items, times)``; applied
    until nothing changes, so that nested loops fold inside out: ``3 4 5 4 5 4 5 6`` becomes
    ``[3, ((4, 5), 3), 6]``. With ``counts=False`` every ``times`` is 0, so that iterations whose
    inner loops ran a different number of times fold too (the collapsed path of a variant)."""
    items = [int(b) for b in seq]
    while True:
        folded = _fold(items, max_period, counts)
        if len(folded) == len(items):
            return folded
        items = folded


def _fold(items: list, max_period: int, counts: bool = True) -> list:
    out = []
    i = 0
    n = len(items)
    while i < n:
        best_p, best_times = 0, 1
        for p in range(1, min(max_period, (n - i) // 2) + 1):
            if items[i + p] != items[i]:
                continue
            times = 1
            while i + (times + 1) * p <= n and items[i + times * p:i + (times + 1) * p] == items[i:i + p]:
                times += 1
            if times > 1 and times * p > best_times * best_p:
                best_p, best_times = p, times
        if best_times > 1:
            body = items[i:i + best_p]
            out.append((tuple(body), best_times if counts else 0))
            i += best_p * best_times
        else:
            out.append(items[i])
            i += 1
    # Two folded runs of the same body next to each other (different counts) are one loop.
    merged = []
    for item in out:
        if merged and isinstance(item, tuple) and isinstance(merged[-1], tuple) and merged[-1][0] == item[0]:
            merged[-1] = (item[0], merged[-1][1] + item[1])
        else:
            merged.append(item)
    return merged


def render(items, counts: bool = True) -> str:
    """``#3 (#4 #5)×1200 #6``; with ``counts=False``, ``#3 (#4 #5)× #6``."""
    parts = []
    for item in items:
        if isinstance(item, tuple):
            body, times = item
            parts.append(f"({render(body, counts)})×{times if counts else ''}")
        else:
            parts.append(f"#{item}")
    return " ".join(parts)
