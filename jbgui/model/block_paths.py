"""The blocks a call executed itself, in order: paths, path signatures and loop iterations.

A call's *own* blocks are the BLOCK words of its method between its first and last event that do
not lie inside one of its callees (the call columns give every callee's event range). Calls of
native or untraced code are synthetic rows whose range may cover an event of the caller itself, so
they are not cut out; the Java callbacks below them are.

:func:`call_path` gives one call's exact sequence (:func:`_scan` over its range, reading its
subtree's rows). :func:`scan_calls` gives, for every call of a method, a *path signature* (the
set of distinct transitions taken, entry and exit included: calls that differ only in how often
loops repeated share it), its own block count and bytecodes, and one record per loop entry with
the number of times the loop's back edges were taken during it. It reads the method's calls from
the call table (:func:`method_calls`, :func:`jbgui.model.store_rows.rows_with`), picks the
method's BLOCK words out of the chunks holding them (:func:`_own_words`) and gives each to the
innermost of its calls running there (:func:`_attribute`): the same own blocks, since a word of
the method inside a callee's range belongs to a deeper call of the method. The stream readers
are :mod:`jbgui.model.tracedir` and :mod:`jbgui.model.call_blocks`; this module only wraps them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numba
import numpy as np

from jbgui.model import layout
from jbgui.model import store_rows as SR
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
    flags: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    orphans: int = 0        # the method's words outside every one of its calls (a damaged trace)


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
def _scan(words, wbase, rows, k0, first, last, end, flags, synthetic_mask,
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
                # (an exceptional end inferred at the caller's handler block is the event before
                # that block: replay pops such frames there, so the handler block is ours anyway)
                skip_to = last[c] + 1
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
            window.words, window.base, rows, k, first, last, end, flags, SYNTHETIC,
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


# ---------------------------------------------------------------------- every call of a method

@dataclass
class MethodCalls:
    """The calls of one method on one thread, in row order: ``row``, ``first``, ``last``, ``flags``
    and ``caller`` (the method of the call's parent, 0 at the top)."""

    thread: ThreadReplay
    row: np.ndarray
    first: np.ndarray
    last: np.ndarray
    flags: np.ndarray
    caller: np.ndarray


# The sets of transitions of the open calls are tables indexed by transition (no hashing) when
# they hold at most this many entries in all (a method's blocks plus 4, squared, per level of
# recursion); else hashed.
DIRECT_SETS = 1 << 22
# Blocks of the call table read between two looks at ``cancelled`` and ``progress``.
TABLE_BATCH = 64
# Chunks of a stream decoded by one task of the pool.
CHUNK_BATCH = 32


def method_calls(analysis: Analysis, method: int, threads: list[ThreadReplay] | None = None, pool=None,
                 progress=None, cancelled=None) -> list[MethodCalls]:
    """Every call of ``method`` per thread (threads without one left out), read from the call
    table block by block (:func:`jbgui.model.store.rows_with`: a block without such a call
    decodes only its ``method`` column), never as whole columns. ``progress(done, total)`` counts
    blocks of the call table."""
    out = []
    todo = []
    for thread in (analysis.threads if threads is None else threads):
        if not len(thread.calls):
            continue
        summary = thread.call_summary
        if method in set(np.asarray(summary["method_ids"]).tolist()):
            todo.append(thread)
    total = sum(len(t.calls._stored.blocks) if t.calls._stored is not None else 1 for t in todo)
    done = 0
    for thread in todo:
        calls = thread.calls
        stored = calls._stored
        if stored is None or all(calls.is_decoded(n) for n in ("first", "last", "flags", "method", "parent")):
            rows = np.flatnonzero(np.asarray(calls.method) == method).astype(np.int64)
            parent = np.asarray(calls.parent, np.int64)[rows]
            caller = np.zeros(len(rows), np.int64)
            caller[parent >= 0] = np.asarray(calls.method)[parent[parent >= 0]]
            got = MethodCalls(thread, rows, np.asarray(calls.first, np.int64)[rows],
                              np.asarray(calls.last, np.int64)[rows], np.asarray(calls.flags, np.int64)[rows], caller)
            done += 1
        else:
            parts = []
            n_blocks = len(stored.blocks)
            for lo in range(0, n_blocks, TABLE_BATCH):
                if cancelled is not None and cancelled():
                    raise Cancelled()
                if progress is not None:
                    progress(done, total)
                parts.append(SR.rows_with(stored, "method", method, range(lo, min(lo + TABLE_BATCH, n_blocks)), pool))
                done += min(TABLE_BATCH, n_blocks - lo)
            cat = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
            got = MethodCalls(thread, cat["row"], cat["first"], cat["last"], cat["flags"],
                              np.maximum(cat["parent_value"], 0))
        if len(got.row):
            out.append(got)
    return out


@numba.njit(cache=True, nogil=True)
def _own_words(words, base, pages, page_block, n_blocks, out_ev, out_b, k):  # pragma: no cover - numba
    """The BLOCK words of one method in ``words`` (events ``base`` onwards): its pages
    ``pages``, page ``j``'s first block being ``page_block[j]`` of the method's ``n_blocks``.
    Appends each word's event and local block to ``out_ev``/``out_b`` from ``k``; returns the new
    length."""
    n_pages = len(pages)
    if n_pages == 1:
        want = (np.int64(_BLOCK) << (_TYPE_SHIFT - _METHOD_SHIFT)) | pages[0]
        b0 = page_block[0]
        for i in range(len(words)):
            w = np.int64(words[i])
            if (w >> _METHOD_SHIFT) == want:
                b = b0 + (w & _INDEX_MASK)
                if b < n_blocks:
                    out_ev[k] = base + i
                    out_b[k] = b
                    k += 1
        return k
    for i in range(len(words)):
        w = np.int64(words[i])
        if (w >> _TYPE_SHIFT) != _BLOCK:
            continue
        page = (w >> _METHOD_SHIFT) & _PAGE_MASK
        for j in range(n_pages):
            if page == pages[j]:
                b = page_block[j] + (w & _INDEX_MASK)
                if b < n_blocks:
                    out_ev[k] = base + i
                    out_b[k] = b
                    k += 1
                break
    return k


@numba.njit(cache=True, nogil=True)
def _nesting(first, last, flags, synthetic_mask):  # pragma: no cover - numba
    """The deepest nesting of a method's calls in one another (1 without recursion), as
    :func:`_attribute`'s stack holds them."""
    stack = np.empty(len(first) + 1, np.int64)
    sp = 0
    deepest = 1
    for k in range(len(first)):
        if flags[k] & synthetic_mask:
            continue
        while sp > 0 and last[stack[sp - 1]] < first[k]:
            sp -= 1
        stack[sp] = k
        sp += 1
        if sp > deepest:
            deepest = sp
    return deepest


# _attribute's state: where it stopped in the events, the next call to open, the stack's depth,
# loop records and sequence steps written, events outside every call.
_POS, _NEXT, _SP, _NREC, _NSEQ, _ORPHANS = range(6)
_DONE, _REC_FULL, _SEQ_FULL = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def _attribute(evs, bs, final, first, last, flags, synthetic_mask, b_bc, n_blocks,
               header_of, innermost, lparent, in_body,
               state, stack, lv, lv_sig, lv_loop, set_keys, set_stamps, direct, stamp0,
               out, out_sig, rec, margin, want, seq):  # pragma: no cover - numba
    """Give each of a method's BLOCK words (events ``evs``, local blocks ``bs``, ascending) to
    the innermost of the method's calls (``first``/``last``/``flags`` in row order) running at
    its event, as calls open and end around it, and keep per call its path signature
    (``out_sig``: the set of distinct transitions, entry and exit included), own blocks, own
    bytecodes and exceptional end (``out``) and loop entries (``rec``: call, loop, iterations),
    as :func:`_scan` does; with ``want[k]``, call ``k``'s steps go to ``seq`` (call, block).
    Open calls form a stack whose levels keep each call's state (``lv``: previous block, own
    blocks, own bytecodes; ``lv_sig``; ``lv_loop``: each loop's open entry, then its
    iterations), so a recursive call's words interleave freely with its caller's. Each turn of
    the loop does one thing: close the top call (it ended before the next call opens or the next
    word), open the next call, or give the next word away. ``final``: no words follow, every
    call is opened and closed. Resumable: returns ``_REC_FULL`` or ``_SEQ_FULL`` when a buffer is
    nearly full (``state`` says where it stopped), else ``_DONE``."""
    n_calls = len(first)
    n_loops = len(lparent)
    n_ev = len(evs)
    big = np.int64(1) << 62
    width = n_blocks + 4
    while True:
        pos = state[_POS]
        if pos < n_ev:
            ev = evs[pos]
        elif final:
            ev = big
        else:
            return _DONE
        if state[_NREC] + margin > len(rec):
            return _REC_FULL
        if state[_NSEQ] + 1 > len(seq):
            return _SEQ_FULL
        sp = state[_SP]
        nxt = state[_NEXT]
        until = ev
        if nxt < n_calls and first[nxt] < until:
            until = first[nxt]
        if sp > 0 and last[stack[sp - 1]] < until:
            # close the top call: its exit, its loops still open
            lvl = sp - 1
            k = stack[lvl]
            exc = 1 if (flags[k] & 1) != 0 else 0
            key = (lv[lvl, 0] + 4) * width + (4 + (EXIT_EXCEPTION if exc else EXIT_NORMAL))
            sig = lv_sig[lvl]
            if direct:
                if set_stamps[lvl, key] != stamp0 + k + 1:
                    sig += _mix(key)
            elif not _seen(set_keys[lvl], set_stamps[lvl], stamp0 + k + 1, key):
                sig += _mix(key)
            for L in range(n_loops):
                if lv_loop[lvl, L]:
                    n = state[_NREC]
                    rec[n, 0] = k
                    rec[n, 1] = L
                    rec[n, 2] = lv_loop[lvl, n_loops + L]
                    state[_NREC] = n + 1
            out_sig[k] = sig
            out[k, 0] = lv[lvl, 1]
            out[k, 1] = lv[lvl, 2]
            out[k, 2] = exc
            state[_SP] = lvl
            continue
        if nxt < n_calls and first[nxt] <= ev:
            k = nxt
            state[_NEXT] = nxt + 1
            if flags[k] & synthetic_mask:
                # a call whose callee never started: no block of its own
                exc = 1 if (flags[k] & 1) != 0 else 0
                out_sig[k] = _mix(3 * width + (4 + (EXIT_EXCEPTION if exc else EXIT_NORMAL)))
                out[k, 0] = 0
                out[k, 1] = 0
                out[k, 2] = exc
            else:
                stack[sp] = k
                lv[sp, 0] = -1
                lv[sp, 1] = 0
                lv[sp, 2] = 0
                lv_sig[sp] = np.uint64(0)
                for L in range(2 * n_loops):
                    lv_loop[sp, L] = 0
                state[_SP] = sp + 1
            continue
        if pos >= n_ev:
            return _DONE          # final: every call opened and closed
        state[_POS] = pos + 1
        if sp == 0:
            state[_ORPHANS] += 1
            continue
        lvl = sp - 1
        k = stack[lvl]
        b = bs[pos]
        prev = lv[lvl, 0]
        lv[lvl, 1] += 1
        lv[lvl, 2] += b_bc[b]
        key = (prev + 4) * width + b + 4
        if direct:
            if set_stamps[lvl, key] != stamp0 + k + 1:
                set_stamps[lvl, key] = stamp0 + k + 1
                lv_sig[lvl] += _mix(key)
        elif not _seen(set_keys[lvl], set_stamps[lvl], stamp0 + k + 1, key):
            lv_sig[lvl] += _mix(key)
        if n_loops:
            # leaving loops: those containing prev but not b
            if prev >= 0:
                L = innermost[prev]
                while L >= 0:
                    if not in_body[L, b] and lv_loop[lvl, L]:
                        n = state[_NREC]
                        rec[n, 0] = k
                        rec[n, 1] = L
                        rec[n, 2] = lv_loop[lvl, n_loops + L]
                        state[_NREC] = n + 1
                        lv_loop[lvl, L] = 0
                    L = lparent[L]
            L = header_of[b]
            if L >= 0:
                if prev >= 0 and in_body[L, prev] and lv_loop[lvl, L]:
                    lv_loop[lvl, n_loops + L] += 1            # a back edge
                else:
                    if lv_loop[lvl, L]:
                        n = state[_NREC]
                        rec[n, 0] = k
                        rec[n, 1] = L
                        rec[n, 2] = lv_loop[lvl, n_loops + L]
                        state[_NREC] = n + 1
                    lv_loop[lvl, L] = 1
                    lv_loop[lvl, n_loops + L] = 0
        if want[k]:
            n = state[_NSEQ]
            seq[n, 0] = k
            seq[n, 1] = b
            state[_NSEQ] = n + 1
        lv[lvl, 0] = b


class _Attribution:
    """:func:`_attribute`'s buffers and state for the calls of one method on one thread."""

    def __init__(self, m: _Method, calls: MethodCalls, stamp0: int, want: np.ndarray | None = None):
        self.m = m
        self.calls = calls
        n = len(calls.row)
        self.first = np.ascontiguousarray(calls.first, np.int64)
        self.last = np.ascontiguousarray(calls.last, np.int64)
        self.flags = np.ascontiguousarray(calls.flags, np.int64)
        levels = int(_nesting(self.first, self.last, self.flags, SYNTHETIC)) + 1
        n_loops = len(m.loops.parent)
        self.state = np.zeros(6, np.int64)
        self.stack = np.zeros(levels, np.int64)
        self.lv = np.zeros((levels, 3), np.int64)
        self.lv_sig = np.zeros(levels, np.uint64)
        self.lv_loop = np.zeros((levels, 2 * max(n_loops, 1)), np.int64)
        keys = (m.n_blocks + 4) ** 2
        self.direct = keys * levels <= DIRECT_SETS
        if self.direct:
            self.set_keys = np.zeros((1, 1), np.int64)
            self.set_stamps = np.zeros((levels, keys), np.int64)
        else:
            size = len(m.set_keys)
            self.set_keys = np.zeros((levels, size), np.int64)
            self.set_stamps = np.zeros((levels, size), np.int64)
        self.stamp0 = stamp0
        self.sig = np.zeros(n, np.uint64)
        self.out = np.zeros((n, 3), np.int64)      # own blocks, own bytecodes, exceptional
        # room kept in the loop records for one step: every open call closing every loop
        self.margin = (levels + 2) * (n_loops + 1)
        self.rec = np.zeros((max(1 << 16, 4 * self.margin), 3), np.int64)
        self.recs: list[np.ndarray] = []
        self.want = np.zeros(n, np.bool_) if want is None else want
        self.seq = np.zeros((1 << 16 if want is not None and want.any() else 1, 2), np.int64)
        self.seqs: list[np.ndarray] = []
        self.b_bc = np.ascontiguousarray(m.b_bc[m.block_base:m.block_base + m.n_blocks])

    def feed(self, evs: np.ndarray, bs: np.ndarray, final: bool = False) -> None:
        """The method's words of the next events (ascending), or ``final`` after the last."""
        L = self.m.loops
        self.state[_POS] = 0
        while True:
            status = _attribute(evs, bs, final, self.first, self.last, self.flags, SYNTHETIC, self.b_bc,
                                self.m.n_blocks, L.header_of, L.innermost, L.parent, L.in_body,
                                self.state, self.stack, self.lv, self.lv_sig, self.lv_loop, self.set_keys,
                                self.set_stamps, self.direct, self.stamp0, self.out, self.sig, self.rec,
                                self.margin, self.want, self.seq)
            if status == _REC_FULL:
                self.recs.append(self.rec[:self.state[_NREC]].copy())
                self.state[_NREC] = 0
            elif status == _SEQ_FULL:
                self.seqs.append(self.seq[:self.state[_NSEQ]].copy())
                self.seq = np.zeros((2 * len(self.seq), 2), np.int64)
                self.state[_NSEQ] = 0
            else:
                return

    @property
    def blocks(self) -> np.ndarray:
        return self.out[:, 0]

    @property
    def bc(self) -> np.ndarray:
        return self.out[:, 1]

    @property
    def exc(self) -> np.ndarray:
        return self.out[:, 2].astype(np.int8)

    def loops(self) -> np.ndarray:
        """The loop records by call (a recursive call's are written between its caller's), each
        call's in the order its loops ended."""
        recs = np.concatenate(self.recs + [self.rec[:self.state[_NREC]]])
        return recs[np.argsort(recs[:, 0], kind="stable")]

    def steps(self) -> np.ndarray:
        parts = self.seqs + [self.seq[:self.state[_NSEQ]]]
        return np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)


def _chunk_groups(index, firsts: np.ndarray, lasts: np.ndarray) -> list[np.ndarray]:
    """The chunks of a stream holding an event of one of the calls, in groups of consecutive
    needed chunks of at most :data:`CHUNK_BATCH` (one task of the pool each)."""
    needed = _needed(index, firsts, lasts)
    if needed is None:
        return []
    chunks = np.flatnonzero(needed)
    if not len(chunks):
        return []
    cut = np.flatnonzero(np.diff(chunks) != 1) + 1
    groups = []
    for run in np.split(chunks, cut):
        groups.extend(run[i:i + CHUNK_BATCH] for i in range(0, len(run), CHUNK_BATCH))
    return groups


def _words_of(m: _Method, pages: np.ndarray, page_block: np.ndarray):
    """A pool task: the method's BLOCK words of a group of consecutive chunks (events, local
    blocks, events decoded), the group's payloads read at once."""
    def task(args):
        path, index, group = args
        c0, c1 = int(group[0]), int(group[-1])
        start = int(index.offset[c0])
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read(int(index.offset[c1]) + int(index.length[c1]) - start)
        counts = index.count[group]
        out_ev = np.empty(int(counts.max()) if len(counts) else 0, np.int64)
        out_b = np.empty(len(out_ev), np.int64)
        evs, bs, decoded = [], [], 0
        for c in group.tolist():
            at = int(index.offset[c]) - start
            payload = data[at:at + int(index.length[c])]
            words = decode_payload(payload, index.codec[c], index.filter[c], int(index.count[c]), copy=False)
            k = _own_words(words, int(index.first[c]), pages, page_block, m.n_blocks, out_ev, out_b, 0)
            if k:
                evs.append(out_ev[:k].copy())
                bs.append(out_b[:k].copy())
            decoded += len(words)
        return (np.concatenate(evs) if evs else np.zeros(0, np.int64),
                np.concatenate(bs) if bs else np.zeros(0, np.int64), decoded)
    return task


def _pages(analysis: Analysis, m: _Method) -> tuple[np.ndarray, np.ndarray]:
    """The block pages of the method's words and the local block each page starts at."""
    base = m.page_base
    pages = np.flatnonzero((base >= m.block_base) & (base < m.block_base + m.n_blocks)).astype(np.int64)
    return pages, (base[pages] - m.block_base).astype(np.int64)


def _attribute_thread(analysis: Analysis, m: _Method, calls: MethodCalls, stamp0: int, pool,
                      want: np.ndarray | None = None, progress=None, cancelled=None) -> tuple[_Attribution, int]:
    """Decode the chunks holding ``calls`` (only those of calls in ``want`` when given), give
    the method's words to its calls; returns the attribution and the events decoded."""
    att = _Attribution(m, calls, stamp0, want)
    index = stream_index(analysis, calls.thread)
    sel = slice(None) if want is None else want
    groups = _chunk_groups(index, att.first[sel], att.last[sel])
    pages, page_block = _pages(analysis, m)
    decoded = 0
    if m.n_blocks and len(pages):
        task = _words_of(m, pages, page_block)
        jobs = [(index.path, index, g) for g in groups]
        results = pool.map(task, jobs) if pool is not None else map(task, jobs)
        try:
            for i, (evs, bs, n) in enumerate(results):
                if cancelled is not None and cancelled():
                    raise Cancelled()
                if progress is not None:
                    progress(i, len(jobs))
                att.feed(evs, bs)
                decoded += n
        finally:
            if hasattr(results, "close"):
                results.close()
    att.feed(np.zeros(0, np.int64), np.zeros(0, np.int64), final=True)
    return att, decoded


def scan_calls(analysis: Analysis, method: int, loops: LoopTables | None = None,
               threads: list[ThreadReplay] | None = None, progress=None, cancelled=None) -> CallScan:
    """Signatures, own blocks and bytecodes, and loop entries of every call of ``method`` (on
    ``threads``, default all). Reads the call table block by block (:func:`method_calls`) and
    only the stream chunks that hold the method's calls, decoded two at a time; the method's
    BLOCK words are picked out by a kernel and given to the innermost of its calls running
    there (:func:`_attribute`): no per-event Python, no window of the thread's events, no
    whole column. ``progress(done, total)`` counts calls; ``cancelled()`` returning True stops
    with :class:`Cancelled`."""
    m = _Method(analysis, method, loops)
    parts = []
    # progress in calls, known before the table is read (the call summary counts them): the
    # table's blocks make the first part of the way, the stream's chunks the rest
    expected = 0
    for thread in (analysis.threads if threads is None else threads):
        if len(thread.calls):
            summary = thread.call_summary
            ids = np.asarray(summary["method_ids"])
            expected += int(np.asarray(summary["method_calls"])[ids == method].sum())
    expected = max(expected, 1)
    table_share = 0.3

    def table_progress(done, total):
        if progress is not None:
            progress(int(expected * table_share * done / max(total, 1)), expected)
    with ThreadPoolExecutor(max_workers=2) as pool:
        per_thread = method_calls(analysis, method, threads, pool, table_progress, cancelled)
        total = sum(len(c.row) for c in per_thread)
        done = 0
        stamp0 = 0
        for calls in per_thread:
            report = None if progress is None else \
                (lambda i, n, base=done, size=len(calls.row):
                 progress(int(expected * (table_share + (1 - table_share) * (base + size * i / max(n, 1))
                                          / max(total, 1))), expected))
            att, decoded = _attribute_thread(analysis, m, calls, stamp0, pool, progress=report, cancelled=cancelled)
            parts.append((calls, att, decoded))
            stamp0 += len(calls.row)
            done += len(calls.row)
    if progress is not None:
        progress(expected, expected)

    def cat(arrays, dtype):
        return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)
    offsets = np.cumsum([0] + [len(c.row) for c, _a, _d in parts])
    recs = [a.loops() for _c, a, _d in parts]
    lcall = [r[:, 0] + off for r, off in zip(recs, offsets)]
    return CallScan(cat([np.full(len(c.row), c.thread.index) for c, _a, _d in parts], np.int64),
                    cat([c.row for c, _a, _d in parts], np.int64),
                    cat([a.sig for _c, a, _d in parts], np.uint64), cat([a.blocks for _c, a, _d in parts], np.int64),
                    cat([a.bc for _c, a, _d in parts], np.int64), cat([a.exc for _c, a, _d in parts], np.int8),
                    cat(lcall, np.int64), cat([r[:, 1] for r in recs], np.int64), cat([r[:, 2] for r in recs], np.int64),
                    0, int(sum(d for _c, _a, d in parts)),
                    first=cat([c.first for c, _a, _d in parts], np.int64),
                    last=cat([c.last for c, _a, _d in parts], np.int64),
                    caller=cat([c.caller for c, _a, _d in parts], np.int64),
                    flags=cat([c.flags for c, _a, _d in parts], np.int64),
                    orphans=int(sum(a.state[_ORPHANS] for _c, a, _d in parts)))


def call_sequences(analysis: Analysis, method: int, scan: CallScan, which: np.ndarray) -> list[np.ndarray]:
    """The own blocks in order (local indices) of the calls ``which`` (indices into ``scan``'s
    calls), from the stream chunks holding them alone (:func:`scan_calls`' attribution run again
    for those calls and the method's calls nested in them)."""
    m = _Method(analysis, method, None)
    out: list[np.ndarray] = [np.zeros(0, np.int64)] * len(which)
    which = np.asarray(which, np.int64)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for index in np.unique(scan.thread[which]).tolist():
            on = np.flatnonzero(scan.thread == index)
            mine = np.flatnonzero(scan.thread[which] == index)
            wanted = np.unique(which[mine])
            # the wanted calls and the method's calls nested in them (which take their own words):
            # calls in row order nest after their caller, up to its last event
            first, last = scan.first[on], scan.last[on]
            lo = wanted - int(on[0])
            hi = np.searchsorted(first, last[lo], side="right")
            cover = np.zeros(len(on) + 1, np.int64)
            np.add.at(cover, lo, 1)
            np.add.at(cover, hi, -1)
            take = np.flatnonzero(np.cumsum(cover[:-1]) > 0)
            sub = on[take]
            thread = analysis.thread(index)
            calls = MethodCalls(thread, scan.row[sub], scan.first[sub], scan.last[sub], scan.flags[sub],
                                scan.caller[sub])
            want = np.isin(sub, wanted)
            att, _decoded = _attribute_thread(analysis, m, calls, 0, pool, want=want)
            steps = att.steps()
            steps = steps[np.argsort(steps[:, 0], kind="stable")]
            k = np.searchsorted(sub, which[mine])        # each wanted call's index among these
            bounds = np.searchsorted(steps[:, 0], k, side="left")
            ends = np.searchsorted(steps[:, 0], k, side="right")
            for i, a, z in zip(mine.tolist(), bounds.tolist(), ends.tolist()):
                out[i] = steps[a:z, 1].copy()
    return out


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
