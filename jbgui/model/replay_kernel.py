"""The sequential heart of replay: one pass over a thread's events with an explicit call stack.

Replay is a state machine (which frame does this event belong to? did an exception unwind frames
to get here?), so it cannot be a fixed sequence of numpy operations. It is a plain loop compiled
by numba. :mod:`jbgui.model.replay` owns the buffers, files and batching.

The kernel is resumable: it stops when an output buffer is nearly full (returning why), the caller
flushes or grows the buffer and calls again with the same state, so a stream of any length is
replayed in bounded memory.

Speed: the functions are compiled without numba's reference counting (``_nrt=False``; nothing
here allocates, except :func:`rehash`). With it, every array taken out of a tuple or passed to an
inlined helper got an atomic count update that numba could not prune in a loop this branchy, and
the loop ran at 20 million events per second instead of 130 (measured on the demo trace). The
common events (a block continuing the top frame, a start matching the next call site, a normal
end, a receiver) are handled by :func:`_fast`, which takes plain arrays; everything unusual goes
to :func:`_slow_event`, which takes the whole state.

Semantics (docs/analysis.md has the full statement):
- a BLOCK of the top frame's method continues that frame; a handler-entry block is a catch;
- a START is matched against the call sites of the caller's current block, in order; call sites
  passed over, and those left when the block is left normally, are calls whose callee never
  started: synthetic NATIVE or UNTRACED rows; a START matching no site is IMPLICIT (static
  initializer, JVM upcall), or, while a native/untraced/virtual call is pending, a CALLBACK nested
  under a synthetic row for that call;
- EXCEPTION_EXIT pops a frame exceptionally; an event that no longer belongs to the top frame is
  resolved by unwinding to the frame whose current block lists the handler (seed §4), for traces
  without exception-exit records and where a record could not be written;
- an exception that leaves a static initializer goes no further: the JVM's class initialization
  consumes it (CATCH_CLASS_INIT) and throws an ExceptionInInitializerError of its own.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

from jbgui.model import layout

# The event word's fields (docs/trace-format.md), from the one definition in layout: numba reads
# module-level integers as compile-time constants, so naming them costs nothing in the loop.
_TYPE_SHIFT = layout.TYPE_SHIFT
_METHOD_SHIFT = layout.METHOD_SHIFT
_METHOD_MASK = layout.MAX_METHOD_ID
_BLOCK_MASK = layout.BLOCK_MASK
_SUBTYPE_SHIFT = layout.SUBTYPE_SHIFT
_SUBTYPE_MASK = layout.SUBTYPE_MASK
_VALUE_MASK = layout.VALUE_MASK
_T_EXT, _T_START, _T_END, _T_BLOCK = (layout.TYPE_EXTENDED, layout.TYPE_METHOD_START, layout.TYPE_METHOD_END,
                                      layout.TYPE_BLOCK)
_X_LOAD, _X_RECEIVER, _X_EXIT, _X_THROWABLE = (layout.EXT_CLASS_LOAD, layout.EXT_RECEIVER,
                                               layout.EXT_EXCEPTION_EXIT, layout.EXT_THROWABLE)
# A start word marked so stands for its receiver word too, of the method's own class (MT_CLASS).
_RECEIVER_OWN = layout.START_RECEIVER_OWN

# Row columns (int64 in the kernel's buffer, one row of it per column so that each column is
# contiguous when flushed; stored narrower on disk).
COL_METHOD, COL_PARENT, COL_DEPTH, COL_FIRST, COL_LAST, COL_FLAGS, COL_SITE, COL_CALLER_BLOCK, \
    COL_RECEIVER, COL_EXC_CLASS, COL_INCL_BLOCKS, COL_INCL_BYTECODES, COL_END = range(13)
N_COLS = 13

# Row flags.
F_EXCEPTIONAL = 1     # left by an exception
F_CAUGHT = 2          # an exception was caught in this call
F_UNCAUGHT = 4        # the exception that ended it left the thread
F_NATIVE = 8          # synthetic: a call into a native method
F_UNTRACED = 16       # synthetic: a call into code that records nothing
F_IMPLICIT = 32       # started without a matching call site (static initializer, JVM upcall, thread root)
F_TRUNCATED = 64      # start or end not in the trace (running before tracing began, cut off)
F_INFERRED = 128      # its exceptional end was inferred from the handler lists, not recorded
F_NO_START = 256      # began before the trace (with TRUNCATED)
F_CALLBACK = 512      # called from native/untraced code (its parent is a synthetic row)
# Synthetic rows beside a wait in one block (a call site static.xml marks blocking, or the
# block's monitorenter), with only natives or untraced calls between: they record no event, so
# they sit at the same event as the wait's stamps, and these say on which side of the wait they
# ran (replay.beside_waits; blocking_times.Axis gives the wait to the waiting call, not to them).
F_BEFORE_WAIT = 1024
F_AFTER_WAIT = 2048

# Scalar state slots.
S_DEPTH, S_NEXT_ROW, S_CUM_BLOCKS, S_CUM_BC, S_UNWINDING, S_UNW_ROW, S_UNW_EVENT, S_UNW_CLASS, \
    S_LAST_POPPED, S_LAST_STARTED, S_N_PATCHES, S_N_EXC, S_N_LOADS, S_N_EPISODE, S_POS, \
    S_BUF_BASE, S_UNKNOWN_IDS, S_INFERRED, S_NO_START, S_EDGES_USED, S_RECV_USED, \
    S_LAST_EVENT, S_UNW_INIT = range(23)
N_SCALARS = 23

# Stack frame fields.
ST_ROW, ST_METHOD, ST_SYN, ST_SITE, ST_BLOCK, ST_PTR, ST_CBLK, ST_CBC, ST_FLAGS = range(9)
N_ST = 9
# Static block fields (blk has one extra row so that B_SITE0/B_HND0 of gb + 1 end gb's ranges).
B_METHOD, B_BC, B_SITE0, B_HND0, B_IS_HANDLER = range(5)
# Call-site fields (SI_STEP: the F_BEFORE_WAIT/F_AFTER_WAIT bit of its synthetic row); site
# kinds mirror jbgui.model.statics.
SI_KIND, SI_KEY, SI_TARGET, SI_STEP = range(4)
SITE_DIRECT, SITE_NATIVE, SITE_UNTRACED, SITE_VIRTUAL, SITE_DYNAMIC = range(5)
# Handler fields.
H_TARGET, H_CATCH_ALL = range(2)
# Method fields and flags (flags mirror jbgui.model.statics; M_UPCALL is replay's own).
MT_KEY, MT_FLAGS, MT_BLOCKS, MT_CLASS = range(4)
M_NATIVE, M_HIDDEN_CLASS, M_IMPLICIT_ONLY, M_UPCALL, M_LAMBDA_BODY = 1, 32, 64, 256, 512
# Site statistics.
SS_CALLS, SS_LAST_RECEIVER, SS_CHANGES = range(3)

# Why the kernel returned.
DONE, ROWS_FULL, PATCHES_FULL, EXC_FULL, LOADS_FULL, EPISODE_FULL, STACK_FULL, EDGES_FULL, \
    RECV_FULL = range(9)

EMPTY = -1
# catch_row of an exception record: it left the thread (uncaught), or it left a static initializer
# and the JVM's class initialization consumed it (rethrowing an ExceptionInInitializerError in the
# frame that triggered the initialization, a new exception of its own).
CATCH_UNCAUGHT = -1
CATCH_CLASS_INIT = -2

Static = namedtuple("Static", "page_base blk sites hnd meth max_sites")
State = namedtuple("State", "sc st rows patches exc loads ep counts sstat edge_k edge_v recv_k recv_v")


# ---------------------------------------------------------------------- small pieces (inlined)

@numba.njit(cache=True, _nrt=False)
def _probe(keys, key, i):
    mask = len(keys) - 1
    while keys[i] != key and keys[i] != EMPTY:
        i = (i + 1) & mask
    return i


@numba.njit(cache=True, _nrt=False)
def _slot(keys, key):
    """Slot of ``key`` in an open-addressing table of ``keys`` (linear probing; EMPTY ends a
    probe). The probe loop is a separate function: a loop inlined into the replay loop keeps numba
    from pruning reference-count updates there, which made the whole loop five times slower."""
    mask = len(keys) - 1
    i = (((key ^ (key >> 29)) * 0x5851F42D4C957F2D) >> 17) & mask
    k = keys[i]
    if k == key or k == EMPTY:
        return i
    return _probe(keys, key, i)


@numba.njit(cache=True, _nrt=False)
def _set(sc, rows, patches, row, col, value):
    """Set a row field: in the buffer, or as a patch when the row was already flushed."""
    base = sc[S_BUF_BASE]
    if row >= base:
        rows[col, row - base] = value
    else:
        n = sc[S_N_PATCHES]
        patches[n, 0] = row
        patches[n, 1] = col
        patches[n, 2] = value
        sc[S_N_PATCHES] = n + 1


@numba.njit(cache=True, _nrt=False)
def _push(sc, st, rows, method, ev, site, caller_block, flags, syn):
    """Open a row for a new frame on top of the stack; returns the row index."""
    d = sc[S_DEPTH]
    row = sc[S_NEXT_ROW]
    sc[S_NEXT_ROW] = row + 1
    r = row - sc[S_BUF_BASE]
    parent = -1
    if d > 0:
        parent = st[d - 1, ST_ROW]
        if st[d - 1, ST_SYN] == 1:
            flags |= F_CALLBACK
    rows[COL_METHOD, r] = method
    rows[COL_PARENT, r] = parent
    rows[COL_DEPTH, r] = d
    rows[COL_FIRST, r] = ev
    rows[COL_LAST, r] = ev
    rows[COL_FLAGS, r] = flags
    rows[COL_SITE, r] = site
    rows[COL_CALLER_BLOCK, r] = caller_block
    rows[COL_RECEIVER, r] = 0
    rows[COL_EXC_CLASS, r] = 0
    rows[COL_INCL_BLOCKS, r] = 0
    rows[COL_INCL_BYTECODES, r] = 0
    rows[COL_END, r] = row + 1
    st[d, ST_ROW] = row
    st[d, ST_METHOD] = method
    st[d, ST_SYN] = syn
    st[d, ST_SITE] = site
    st[d, ST_BLOCK] = -1
    st[d, ST_PTR] = -1
    st[d, ST_CBLK] = sc[S_CUM_BLOCKS]
    st[d, ST_CBC] = sc[S_CUM_BC]
    st[d, ST_FLAGS] = flags
    sc[S_DEPTH] = d + 1
    sc[S_LAST_STARTED] = row
    return row


@numba.njit(cache=True, _nrt=False)
def _pop(sc, st, rows, patches, ev, extra_flags):
    """Close the top frame at event ``ev``; returns (row, final flags)."""
    d = sc[S_DEPTH] - 1
    sc[S_DEPTH] = d
    row = st[d, ST_ROW]
    flags = st[d, ST_FLAGS] | extra_flags
    blocks = sc[S_CUM_BLOCKS] - st[d, ST_CBLK]
    bc = sc[S_CUM_BC] - st[d, ST_CBC]
    base = sc[S_BUF_BASE]
    if row >= base:
        r = row - base
        rows[COL_LAST, r] = ev
        rows[COL_FLAGS, r] = flags
        rows[COL_INCL_BLOCKS, r] = blocks
        rows[COL_INCL_BYTECODES, r] = bc
        rows[COL_END, r] = sc[S_NEXT_ROW]
    else:
        _set(sc, rows, patches, row, COL_LAST, ev)
        _set(sc, rows, patches, row, COL_FLAGS, flags)
        _set(sc, rows, patches, row, COL_INCL_BLOCKS, blocks)
        _set(sc, rows, patches, row, COL_INCL_BYTECODES, bc)
        _set(sc, rows, patches, row, COL_END, sc[S_NEXT_ROW])
    sc[S_LAST_POPPED] = row
    return row, flags


@numba.njit(cache=True, _nrt=False)
def _enter_block(blk, sc, st, counts, edge_k, edge_v, f, gb):
    """Frame f moves to block gb: count it and the edge from its previous block."""
    prev = st[f, ST_BLOCK]
    if prev >= 0:
        key = (prev << 32) | gb
        slot = _slot(edge_k, key)
        if edge_k[slot] == EMPTY:
            edge_k[slot] = key
            sc[S_EDGES_USED] += 1
        edge_v[slot] += 1
    st[f, ST_BLOCK] = gb
    st[f, ST_PTR] = blk[gb, B_SITE0]
    counts[gb] += 1
    sc[S_CUM_BLOCKS] += 1
    sc[S_CUM_BC] += blk[gb, B_BC]


# ---------------------------------------------------------------------- the unusual cases

@numba.njit(cache=True, _nrt=False)
def _emit_site(S, T, site, caller_block, ev):
    """A call whose callee never started: a synthetic row, opened and closed at once."""
    flags = (F_NATIVE if S.sites[site, SI_KIND] == SITE_NATIVE else F_UNTRACED) | S.sites[site, SI_STEP]
    _push(T.sc, T.st, T.rows, S.sites[site, SI_TARGET], ev, site,
          caller_block, flags, 1)
    T.sstat[site, SS_CALLS] += 1
    _pop(T.sc, T.st, T.rows, T.patches, ev, 0)


@numba.njit(cache=True, _nrt=False)
def _leave_block(S, T, f, ev):
    """Frame f leaves its current block normally: the call sites not yet matched were executed
    and their callees never started."""
    b = T.st[f, ST_BLOCK]
    if b < 0:
        return
    end = S.blk[b + 1, B_SITE0]
    p = T.st[f, ST_PTR]
    while p < end:
        _emit_site(S, T, p, b, ev)
        p += 1
    T.st[f, ST_PTR] = end


@numba.njit(cache=True, _nrt=False)
def _exception(T, throw_row, catch_row, throw_ev, catch_ev, cls):
    n = T.sc[S_N_EXC]
    T.exc[n, 0] = throw_row
    T.exc[n, 1] = catch_row
    T.exc[n, 2] = throw_ev
    T.exc[n, 3] = catch_ev
    T.exc[n, 4] = cls
    T.sc[S_N_EXC] = n + 1


@numba.njit(cache=True, _nrt=False)
def _catch(T, f, ev):
    """An exception is caught in frame f at event ev: end the unwinding episode (or record an
    exception thrown and caught within f)."""
    if T.sc[S_UNWINDING] == 1:
        _exception(T, T.sc[S_UNW_ROW], T.st[f, ST_ROW], T.sc[S_UNW_EVENT], ev, T.sc[S_UNW_CLASS])
        T.sc[S_UNWINDING] = 0
        T.sc[S_N_EPISODE] = 0
    else:
        _exception(T, T.st[f, ST_ROW], T.st[f, ST_ROW], ev, ev, 0)
    T.st[f, ST_FLAGS] |= F_CAUGHT


@numba.njit(cache=True, _nrt=False)
def _unwind_pop(T, ev, inferred):
    """Pop the top frame as left by an exception, as part of the current unwinding episode."""
    row, flags = _pop(T.sc, T.st, T.rows, T.patches, ev, F_EXCEPTIONAL | (F_INFERRED if inferred else 0))
    if T.sc[S_UNWINDING] == 0:
        T.sc[S_UNWINDING] = 1
        T.sc[S_UNW_ROW] = row
        T.sc[S_UNW_EVENT] = ev
        T.sc[S_UNW_CLASS] = 0
        T.sc[S_N_EPISODE] = 0
    n = T.sc[S_N_EPISODE]
    T.ep[n, 0] = row
    T.ep[n, 1] = flags
    T.sc[S_N_EPISODE] = n + 1
    if inferred:
        T.sc[S_INFERRED] += 1


@numba.njit(cache=True, _nrt=False)
def _uncaught(T):
    """The unwinding episode reached the bottom of the thread: the exception was not caught."""
    for i in range(T.sc[S_N_EPISODE]):
        _set(T.sc, T.rows, T.patches, T.ep[i, 0], COL_FLAGS, T.ep[i, 1] | F_UNCAUGHT)
    _exception(T, T.sc[S_UNW_ROW], -1, T.sc[S_UNW_EVENT], T.sc[S_LAST_EVENT], T.sc[S_UNW_CLASS])
    T.sc[S_UNWINDING] = 0
    T.sc[S_N_EPISODE] = 0


@numba.njit(cache=True, _nrt=False)
def _caught_somewhere(T, ev):
    """Code runs again while an exception was propagating: it was caught where no handler entry is
    recorded (native or untraced code, or a handler without a block word of its own)."""
    top = T.sc[S_DEPTH] - 1
    if top >= 0:
        _catch(T, top, ev)
    else:
        _uncaught(T)


@numba.njit(cache=True, _nrt=False)
def _top_java(T):
    """Index of the topmost frame of Java code (-1 if none)."""
    d = T.sc[S_DEPTH] - 1
    while d >= 0 and T.st[d, ST_SYN] == 1:
        d -= 1
    return d


@numba.njit(cache=True, _nrt=False)
def _close_synthetic_above(T, f, ev, extra):
    """Close the synthetic (native/untraced) frames above frame f: those calls returned to f."""
    while T.sc[S_DEPTH] - 1 > f:
        _pop(T.sc, T.st, T.rows, T.patches, ev, extra)


@numba.njit(cache=True, _nrt=False)
def _find_frame(S, T, method, gb):
    """The nearest Java frame of ``method`` whose current block lists handler block ``gb``
    (``gb < 0``: any frame of the method); -1 if none."""
    d = T.sc[S_DEPTH] - 1
    while d >= 0:
        if T.st[d, ST_SYN] == 0 and T.st[d, ST_METHOD] == method:
            if gb < 0:
                return d
            if _lists_handler(S, T.st[d, ST_BLOCK], gb):
                return d
        d -= 1
    return -1


@numba.njit(cache=True, _nrt=False)
def _lists_handler(S, b, gb):
    """Does block b list handler block gb?"""
    if b < 0:
        return False
    for h in range(S.blk[b, B_HND0], S.blk[b + 1, B_HND0]):
        if S.hnd[h, H_TARGET] == gb:
            return True
    return False


@numba.njit(cache=True, _nrt=False)
def _has_catch_all(S, b):
    if b < 0:
        return False
    for h in range(S.blk[b, B_HND0], S.blk[b + 1, B_HND0]):
        if S.hnd[h, H_CATCH_ALL] == 1:
            return True
    return False


@numba.njit(cache=True, _nrt=False)
def _enter(S, T, f, gb):
    _enter_block(S.blk, T.sc, T.st, T.counts, T.edge_k, T.edge_v, f, gb)


@numba.njit(cache=True, _nrt=False)
def _on_block(S, T, gb, ev):
    bm = S.blk[gb, B_METHOD]
    f = _top_java(T)
    if f >= 0 and T.st[f, ST_METHOD] == bm and (S.blk[gb, B_IS_HANDLER] == 0 or T.sc[S_UNWINDING] == 1
                                                  or _lists_handler(S, T.st[f, ST_BLOCK], gb)):
        _close_synthetic_above(T, f, ev - 1, 0)
        if S.blk[gb, B_IS_HANDLER] == 1 or T.sc[S_UNWINDING] == 1:
            # A handler entry, or a block reached after a child's exceptional exit through a
            # handler whose own block records nothing: the exception is caught here.
            _catch(T, f, ev)
        else:
            _leave_block(S, T, f, ev)
        _enter(S, T, f, gb)
        return
    # The block does not continue the top frame: an exception unwound frames without records
    # (or records are missing). Seed §4: unwind to the frame whose current block lists the
    # handler; in recursion that may be an outer frame of the same method.
    if S.blk[gb, B_IS_HANDLER] == 1:
        f = _find_frame(S, T, bm, gb)
        if f >= 0:
            while T.sc[S_DEPTH] - 1 > f:
                _unwind_pop(T, ev - 1, True)
            _catch(T, f, ev)
            _enter(S, T, f, gb)
            return
    f = _find_frame(S, T, bm, -1)
    if f >= 0:
        # Frames above f ended without a record (events lost, or an exception caught by code that
        # records no handler entry).
        while T.sc[S_DEPTH] - 1 > f:
            _unwind_pop(T, ev - 1, True)
        if T.sc[S_UNWINDING] == 1:
            _catch(T, f, ev)
        _enter(S, T, f, gb)
        return
    # A frame that began before tracing (or whose start was lost).
    if T.sc[S_UNWINDING] == 1:
        _caught_somewhere(T, ev)
    d = T.sc[S_DEPTH]
    caller_block = T.st[d - 1, ST_BLOCK] if d > 0 else -1
    _push(T.sc, T.st, T.rows, bm, ev, -1, caller_block, F_TRUNCATED | F_NO_START, 0)
    T.sc[S_NO_START] += 1
    _enter(S, T, T.sc[S_DEPTH] - 1, gb)


@numba.njit(cache=True, _nrt=False)
def _site_ahead(S, T, f, mid):
    """Does a call site still ahead in frame f's current block call ``mid``?"""
    b = T.st[f, ST_BLOCK]
    if b < 0:
        return False
    key = S.meth[mid, MT_KEY]
    for s in range(T.st[f, ST_PTR], S.blk[b + 1, B_SITE0]):
        if S.sites[s, SI_KEY] == key:
            return True
    return False


@numba.njit(cache=True, _nrt=False)
def _on_start(S, T, mid, ev):
    if T.sc[S_UNWINDING] == 1:
        _caught_somewhere(T, ev)
    d = T.sc[S_DEPTH]
    sc, st, rows = T.sc, T.st, T.rows
    if d == 0:
        _push(sc, st, rows, mid, ev, -1, -1, F_IMPLICIT, 0)
        return
    top = d - 1
    if st[top, ST_SYN] == 1:
        f = _top_java(T)
        if f >= 0 and _site_ahead(S, T, f, mid):
            # The native/untraced call returned, and its caller makes its next call.
            _close_synthetic_above(T, f, ev - 1, 0)
            top = f
        else:
            _push(sc, st, rows, mid, ev, -1, -1, 0, 0)  # a callback from it
            return
    b = st[top, ST_BLOCK]
    mflags = S.meth[mid, MT_FLAGS]
    if b < 0 or mflags & M_IMPLICIT_ONLY:
        flags = F_IMPLICIT if S.meth[st[top, ST_METHOD], MT_BLOCKS] > 0 else 0
        _push(sc, st, rows, mid, ev, -1, b, flags, 0)
        return
    key = S.meth[mid, MT_KEY]
    hidden = (mflags & M_HIDDEN_CLASS) != 0
    p = st[top, ST_PTR]
    end = S.blk[b + 1, B_SITE0]
    match = -1
    s = p
    while s < end:
        if S.sites[s, SI_KEY] == key or (hidden and S.sites[s, SI_KIND] == SITE_DYNAMIC):
            match = s
            break
        s += 1
    if match >= 0:
        while p < match:  # calls made before this one whose callees never started
            _emit_site(S, T, p, b, ev)
            p += 1
        st[top, ST_PTR] = match + 1
        T.sstat[match, SS_CALLS] += 1
        _push(sc, st, rows, mid, ev, match, b, 0, 0)
        return
    if p < end and S.sites[p, SI_KIND] != SITE_DIRECT and not mflags & M_UPCALL:
        # Java code called back from the pending call (reflection, a native method, an untraced
        # dispatch target): nest it under a synthetic row for that call.
        if mflags & M_LAMBDA_BODY and S.sites[p, SI_KIND] == SITE_NATIVE:
            # A lambda's body runs from its hidden proxy class, reached by a virtual or
            # interface call: when one is pending after a native call in the block (JDK 21+'s
            # Thread.runWith calls the native ensureMaterializedForStackWalk, then task.run()),
            # the native call returned and the lambda is that call's.
            q = p + 1
            while q < end and S.sites[q, SI_KIND] != SITE_VIRTUAL:
                q += 1
            if q < end:
                while p < q:
                    _emit_site(S, T, p, b, ev)
                    p += 1
        flags = (F_NATIVE if S.sites[p, SI_KIND] == SITE_NATIVE else F_UNTRACED) | S.sites[p, SI_STEP]
        _push(sc, st, rows, S.sites[p, SI_TARGET], ev, p, b, flags, 1)
        T.sstat[p, SS_CALLS] += 1
        st[top, ST_PTR] = p + 1
        _push(sc, st, rows, mid, ev, -1, -1, 0, 0)
        return
    _push(sc, st, rows, mid, ev, -1, b, F_IMPLICIT, 0)


@numba.njit(cache=True, _nrt=False)
def _on_end(S, T, mid, ev, exceptional):
    f = _top_java(T)
    if f >= 0 and T.st[f, ST_METHOD] == mid:
        _close_synthetic_above(T, f, ev - 1, F_EXCEPTIONAL if exceptional else 0)
    else:
        f = _find_frame(S, T, mid, -1)
        if f < 0:
            # Ends without a recorded start: a zero-length truncated row.
            if T.sc[S_UNWINDING] == 1 and not exceptional:
                _caught_somewhere(T, ev)
            d = T.sc[S_DEPTH]
            caller_block = T.st[d - 1, ST_BLOCK] if d > 0 else -1
            _push(T.sc, T.st, T.rows, mid, ev, -1, caller_block, F_TRUNCATED | F_NO_START, 0)
            T.sc[S_NO_START] += 1
            if exceptional:
                _unwind_pop(T, ev, False)
                if T.sc[S_DEPTH] == 0:
                    _uncaught(T)
            else:
                _pop(T.sc, T.st, T.rows, T.patches, ev, 0)
            return
        while T.sc[S_DEPTH] - 1 > f:  # frames whose exits were not recorded
            _unwind_pop(T, ev - 1, True)
    if not exceptional:
        if T.sc[S_UNWINDING] == 1:
            _catch(T, f, ev)
        _leave_block(S, T, f, ev)
        _pop(T.sc, T.st, T.rows, T.patches, ev, 0)
        return
    if T.sc[S_UNWINDING] == 1 and _has_catch_all(S, T.st[f, ST_BLOCK]):
        # javac's handler of a synchronized block records no block word (it covers itself): it
        # caught the exception, and this frame rethrows it.
        _catch(T, f, ev)
    _unwind_pop(T, ev, False)
    if S.meth[mid, MT_FLAGS] & M_IMPLICIT_ONLY:
        # A static initializer left by an exception: class initialization consumes it. The episode
        # ends at the next event but the THROWABLE that names the exception's class.
        T.sc[S_UNW_INIT] = ev + 1
    elif T.sc[S_DEPTH] == 0:
        _uncaught(T)


@numba.njit(cache=True, _nrt=False)
def _consumed_by_class_init(T):
    """End the unwinding episode at the static initializer it left (see CATCH_CLASS_INIT)."""
    _exception(T, T.sc[S_UNW_ROW], CATCH_CLASS_INIT, T.sc[S_UNW_EVENT], T.sc[S_UNW_INIT] - 1, T.sc[S_UNW_CLASS])
    T.sc[S_UNWINDING] = 0
    T.sc[S_N_EPISODE] = 0
    T.sc[S_UNW_INIT] = 0


@numba.njit(cache=True, _nrt=False)
def _on_receiver(T, cls):
    row = T.sc[S_LAST_STARTED]
    if row < 0:
        return
    _set(T.sc, T.rows, T.patches, row, COL_RECEIVER, cls)
    d = T.sc[S_DEPTH] - 1
    if d < 0 or T.st[d, ST_ROW] != row:
        return
    site = T.st[d, ST_SITE]
    if site >= 0:
        _count_receiver(T.sc, T.recv_k, T.recv_v, T.sstat, site, cls)


@numba.njit(cache=True, _nrt=False)
def _count_receiver(sc, recv_k, recv_v, sstat, site, cls):
    """One call at ``site`` with a receiver of class ``cls``: the site's receiver counts and its
    changes of class (both replay paths)."""
    key = (site << 32) | cls
    slot = _slot(recv_k, key)
    if recv_k[slot] == EMPTY:
        recv_k[slot] = key
        sc[S_RECV_USED] += 1
    recv_v[slot] += 1
    last = sstat[site, SS_LAST_RECEIVER]
    if last != cls:
        if last != 0:
            sstat[site, SS_CHANGES] += 1
        sstat[site, SS_LAST_RECEIVER] = cls


@numba.njit(cache=True, _nrt=False)
def _block_of(S, page, index):
    """The global block of a BLOCK word's page and index, or -1 when static.xml defines none
    there: an undefined page, or an index beyond its method's blocks (never an out-of-bounds
    read, whatever the word says)."""
    if page >= len(S.page_base):
        return -1
    base = S.page_base[page]
    if base < 0:
        return -1
    gb = base + index
    if gb >= len(S.blk) - 1 or S.blk[gb, B_METHOD] != S.blk[base, B_METHOD]:
        return -1
    return gb


@numba.njit(cache=True, _nrt=False)
def _known_method(S, mid):
    return 0 < mid < len(S.meth) and S.meth[mid, MT_KEY] >= 0


@numba.njit(cache=True, _nrt=False)
def _slow_event(S, T, w, ev):
    """Every event the fast paths of :func:`replay` do not handle."""
    t = w >> _TYPE_SHIFT
    sub = (w >> _SUBTYPE_SHIFT) & _SUBTYPE_MASK
    if T.sc[S_UNW_INIT] != 0 and not (t == _T_EXT and sub == _X_THROWABLE):
        _consumed_by_class_init(T)
    if t == _T_BLOCK:
        gb = _block_of(S, (w >> _METHOD_SHIFT) & _METHOD_MASK, w & _BLOCK_MASK)
        if gb < 0:
            T.sc[S_UNKNOWN_IDS] += 1
        else:
            _on_block(S, T, gb, ev)
    elif t == _T_START or t == _T_END:
        mid = (w >> _METHOD_SHIFT) & _METHOD_MASK
        if not _known_method(S, mid):
            T.sc[S_UNKNOWN_IDS] += 1
        elif t == _T_START:
            _on_start(S, T, mid, ev)
            if w & _RECEIVER_OWN:
                # The start stands for its receiver word too: the method's own class.
                _on_receiver(T, S.meth[mid, MT_CLASS])
        else:
            _on_end(S, T, mid, ev, False)
    else:
        val = w & _VALUE_MASK
        if sub == _X_EXIT:
            if not _known_method(S, val):
                T.sc[S_UNKNOWN_IDS] += 1
            else:
                _on_end(S, T, val, ev, True)
        elif sub == _X_THROWABLE:
            row = T.sc[S_LAST_POPPED]
            if row >= 0:
                _set(T.sc, T.rows, T.patches, row, COL_EXC_CLASS, val)
            if T.sc[S_UNWINDING] == 1:
                T.sc[S_UNW_CLASS] = val
        elif sub == _X_RECEIVER:
            _on_receiver(T, val)
        elif sub == _X_LOAD:
            n = T.sc[S_N_LOADS]
            T.loads[n, 0] = ev
            T.loads[n, 1] = val
            T.sc[S_N_LOADS] = n + 1


@numba.njit(cache=True, _nrt=False)
def _room(S, T):
    """DONE if every buffer has room for the worst single event, else what to make room in."""
    sc = T.sc
    d = sc[S_DEPTH]
    if sc[S_NEXT_ROW] - sc[S_BUF_BASE] + S.max_sites + 6 > T.rows.shape[1]:
        return ROWS_FULL
    if sc[S_N_PATCHES] + 8 * (d + sc[S_N_EPISODE] + S.max_sites + 4) > len(T.patches):
        return PATCHES_FULL
    if sc[S_N_EXC] + 4 > len(T.exc):
        return EXC_FULL
    if sc[S_N_LOADS] + 1 > len(T.loads):
        return LOADS_FULL
    if sc[S_N_EPISODE] + d + 4 > len(T.ep):
        return EPISODE_FULL
    if d + S.max_sites + 4 > len(T.st):
        return STACK_FULL
    if 2 * (sc[S_EDGES_USED] + 2) > len(T.edge_k):
        return EDGES_FULL
    if 2 * (sc[S_RECV_USED] + 2) > len(T.recv_k):
        return RECV_FULL
    return DONE


@numba.njit(cache=True, _nrt=False)
def _budget(S, T):
    """How many fast-path events fit in the buffers after the worst slow event's margin (a fast
    event adds at most one row, edge, receiver entry, context node and frame, five patches)."""
    sc = T.sc
    d = sc[S_DEPTH]
    margin = S.max_sites + 8
    room = min(4096,
               T.rows.shape[1] - (sc[S_NEXT_ROW] - sc[S_BUF_BASE]) - margin,
               len(T.edge_k) // 2 - sc[S_EDGES_USED] - 2,
               len(T.recv_k) // 2 - sc[S_RECV_USED] - 2,
               len(T.st) - d - margin,
               (len(T.patches) - sc[S_N_PATCHES] - 8 * (d + sc[S_N_EPISODE] + margin)) // 16)
    return max(0, room)


@numba.njit(cache=True, _nrt=False)
def _fast_receiver(sc, st, rows, recv_k, recv_v, sstat, top, cls):
    """The receiver's class of the frame ``top``, just started (its row in the buffer): the fast
    path's :func:`_on_receiver`."""
    rows[COL_RECEIVER, sc[S_LAST_STARTED] - sc[S_BUF_BASE]] = cls
    site = st[top, ST_SITE]
    if site >= 0:
        _count_receiver(sc, recv_k, recv_v, sstat, site, cls)


@numba.njit(cache=True, _nrt=False)
def _fast(words, first, k, stop, sc, st, rows, patches, counts, edge_k, edge_v, recv_k, recv_v, sstat, page_base,
          blk, sites, meth):
    """Handle events from ``k`` while they are common ones, up to ``stop``; returns the index of
    the first event left for :func:`_slow_event` (or ``stop``). Takes plain arrays only: reading
    arrays out of the state tuples inside the loop costs a reference-count update each time."""
    n_pages = len(page_base)
    n_meth = len(meth)
    n_blk = len(blk) - 1
    while k < stop:
        d = sc[S_DEPTH]
        if sc[S_UNWINDING] != 0 or d == 0 or st[d - 1, ST_SYN] != 0:
            return k
        top = d - 1
        w = np.int64(words[k])
        t = w >> _TYPE_SHIFT
        if t == _T_BLOCK:
            page = (w >> _METHOD_SHIFT) & _METHOD_MASK
            if page >= n_pages:
                return k
            base = page_base[page]
            if base < 0:
                return k
            gb = base + (w & _BLOCK_MASK)
            if gb >= n_blk:
                return k
            b = st[top, ST_BLOCK]
            if blk[gb, B_METHOD] != st[top, ST_METHOD] or blk[base, B_METHOD] != st[top, ST_METHOD] or \
                    blk[gb, B_IS_HANDLER] != 0 or (b >= 0 and st[top, ST_PTR] < blk[b + 1, B_SITE0]):
                return k
            # The next block of the top frame, every call of the previous block matched.
            _enter_block(blk, sc, st, counts, edge_k, edge_v, top, gb)
        elif t == _T_START:
            mid = (w >> _METHOD_SHIFT) & _METHOD_MASK
            b = st[top, ST_BLOCK]
            if mid == 0 or mid >= n_meth or b < 0 or meth[mid, MT_KEY] < 0:
                return k
            p = st[top, ST_PTR]
            if p >= blk[b + 1, B_SITE0] or sites[p, SI_KEY] != meth[mid, MT_KEY] \
                    or meth[mid, MT_FLAGS] & M_IMPLICIT_ONLY != 0:
                return k
            # The callee of the next call site of the caller's block.
            st[top, ST_PTR] = p + 1
            sstat[p, SS_CALLS] += 1
            _push(sc, st, rows, mid, first + k, p, b, 0, 0)
            if w & _RECEIVER_OWN:
                # The start stands for its receiver word too: the method's own class.
                _fast_receiver(sc, st, rows, recv_k, recv_v, sstat, d, meth[mid, MT_CLASS])
        elif t == _T_END:
            mid = (w >> _METHOD_SHIFT) & _METHOD_MASK
            b = st[top, ST_BLOCK]
            if mid != st[top, ST_METHOD] or (b >= 0 and st[top, ST_PTR] < blk[b + 1, B_SITE0]):
                return k
            _pop(sc, st, rows, patches, first + k, 0)
        elif (w >> _SUBTYPE_SHIFT) & _SUBTYPE_MASK == _X_RECEIVER:
            # A receiver's class, right after the start of an instance method.
            row = sc[S_LAST_STARTED]
            if row < sc[S_BUF_BASE] or st[top, ST_ROW] != row:
                return k
            _fast_receiver(sc, st, rows, recv_k, recv_v, sstat, top, w & _VALUE_MASK)
        else:
            return k
        sc[S_LAST_EVENT] = first + k
        k += 1
    return k


@numba.njit(cache=True, _nrt=False, nogil=True)
def replay(S, T, words, first):
    """Replay ``words`` (event ``k`` is the stream's event ``first + k``) from ``T.sc[S_POS]`` on.
    Returns DONE, or the buffer to make room in before calling again."""
    n = len(words)
    k = T.sc[S_POS]
    while k < n:
        code = _room(S, T)
        if code != DONE:
            T.sc[S_POS] = k
            return code
        stop = min(n, k + _budget(S, T))
        k = _fast(words, first, k, stop, T.sc, T.st, T.rows, T.patches, T.counts, T.edge_k, T.edge_v,
                  T.recv_k, T.recv_v, T.sstat, S.page_base, S.blk, S.sites, S.meth)
        if k < stop or stop == k and k < n and _budget(S, T) == 0:
            # One event the fast path does not handle (the room check above covers it).
            _slow_event(S, T, np.int64(words[k]), first + k)
            T.sc[S_LAST_EVENT] = first + k
            k += 1
    T.sc[S_POS] = k
    return DONE


@numba.njit(cache=True)
def rehash(keys, vals, new_size):
    """A table of ``new_size`` slots with the same entries."""
    out_k = np.full(new_size, EMPTY, np.int64)
    out_v = np.zeros(new_size, np.int64)
    for i in range(len(keys)):
        if keys[i] != EMPTY:
            j = _slot(out_k, keys[i])
            out_k[j] = keys[i]
            out_v[j] = vals[i]
    return out_k, out_v


@numba.njit(cache=True, _nrt=False)
def finish(S, T, thread_ended):
    """The stream ended. Open frames: if the thread ended they were left by an uncaught exception
    (a trace without exception-exit records); otherwise the trace was cut off (truncated)."""
    ev = T.sc[S_LAST_EVENT]
    if T.sc[S_UNW_INIT] != 0:
        _consumed_by_class_init(T)
    if thread_ended and T.sc[S_DEPTH] > 0:
        while T.sc[S_DEPTH] > 0:
            _unwind_pop(T, ev, True)
        _uncaught(T)
        return
    if T.sc[S_UNWINDING] == 1:
        if T.sc[S_DEPTH] == 0:
            _uncaught(T)
        else:
            T.sc[S_UNWINDING] = 0
    while T.sc[S_DEPTH] > 0:
        _pop(T.sc, T.st, T.rows, T.patches, ev, F_TRUNCATED)


@numba.njit(cache=True, _nrt=False)
def cut(S, T, ev):
    """Events were lost before ``ev``: the stack is unknown from here; close every frame."""
    if T.sc[S_UNW_INIT] != 0:
        _consumed_by_class_init(T)
    T.sc[S_UNWINDING] = 0
    T.sc[S_N_EPISODE] = 0
    while T.sc[S_DEPTH] > 0:
        _pop(T.sc, T.st, T.rows, T.patches, ev, F_TRUNCATED)
