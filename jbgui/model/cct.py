"""Calling-context trees (BMW's CCT): one node per distinct path of calls from a thread's root,
with calls, inclusive bytecodes, blocks and time, and the exceptions thrown and caught in that
context; per thread, and for the whole run with every thread's identical paths merged (the
*forest*).

They are computed from the replayed call tables when first asked for (``jbtrace stats``, the
aggregated views, collapsed stacks), not during replay: most uses of a replay never need them.
The run's trees are built together and kept in one file beside the replay (:func:`for_run`): the
forest's structure (each node's parent and key) once, and per thread the forest nodes it visited
with its own weights. A thread's tree is those nodes; the forest's weights are the threads' summed.
So the run's merged tree costs no more disk than its threads' trees.

The trees are exact: every distinct path gets its node, whatever the trace (an earlier version
capped them at 2^22 nodes and counted the rest in one node, which made per-context sums wrong).
Memory is proportional to the number of distinct contexts, which a real program keeps far below
its number of calls (javac: one context per seventeen calls); the calls themselves are read a
block of rows at a time from the analysis store.

Nodes are numbered in the order their first call starts (a thread's tree), or their first call in
the first thread that made it (the forest), so a node's parent always has a smaller number: a pass
in node order is a preorder-compatible pass (parents before children).

**Building, block by block.** Two levels. A piece of rows is first merged into a *local* tree
whose hash table and node rows stay in a core's cache (a store block of javac's main thread holds
about 22 K distinct contexts for 260 K calls); then each local node is looked up once in the run's
table (millions of nodes, each lookup a cache miss): ten to twenty times fewer of those than one
per call. The inclusive bytecodes of a stored table come from each call's own count (how the store
keeps them; see :mod:`jbgui.model.store`) through a stack of the open calls that lives across
blocks: a call's inclusive count is its own plus its callees', known when it ends, or its patch (a
call still open when its block was written).

**Three stages.** Two threads decode the next blocks of rows (:data:`AHEAD` of them), one merges
rows into a local tree, and one merges the full local tree before into the thread's tree and the
forest (two local trees take turns). The builder of a local tree never touches the thread's tree: a call it closes that
belongs to the thread's tree or to the local tree being merged leaves its inclusive count in a
short list (:func:`_close_to`) that the merger adds; a node whose parent is in the local tree being
merged names that parent by its number there (resolved by the merger through the earlier tree's
node map). Between two local trees the builder waits for the merger, so there is never more than
one local tree behind it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np

from jbgui.model import derived
from jbgui.model import replay_kernel as K
from jbgui.model import store as S
from jbgui.model.replay import Cancelled

# Keys: a method id, or SYNTHETIC_KEY + call site for a call into native or untraced code.
SYNTHETIC_KEY = 1 << 20
# Kept for readers of trees cached by older versions, which capped the tree and counted the
# remaining contexts in one node with this key; exact trees never contain it.
OVERFLOW_KEY = -2
_EMPTY = K.EMPTY
# The run's trees, one file beside the replay (see the module's docstring); earlier versions kept
# one file per thread beside its columns (``cct-v3`` and older): removed when seen.
RUN_FILE = "cct-run-v2"         # v2: the forest's same-key ancestors kept too
_OLD_RUN_FILES = ("cct-run-v1",)
_OLD_FILES = ("cct.npz", "cct-v2.npz", "cct-v3.npz")
FIELDS = ("parent", "key", "calls", "incl_bytecodes", "incl_blocks", "flags")
# Fields that need the thread (its clock and exceptions), not only the call columns.
EXTRA_FIELDS = ("depth", "incl_time", "thrown", "caught")
# A thread's weights per node, as stored and as the kernels keep them (columns of ``_ROW``).
WEIGHTS = ("calls", "incl_bytecodes", "incl_blocks", "incl_time", "flags", "thrown", "caught")

# A local node is one row of 8 int64, a cache line: its parent tag, key and depth
# (``key | depth << 32``), its first child and its next sibling as last seen (each ``key | node <<
# 32``), calls and flags (``calls | flags << 32``: a piece has fewer than 2^31 rows, flags fit 32
# bits), inclusive bytecodes, blocks and time. The two memos skip the table for most calls: a
# method calls much the same sequence of callees each time (a loop's body, a visitor's steps), so
# a call's node is mostly its previous sibling's (the same callee again) or that sibling's next
# one, and a first call its parent's first child; both rows are in the core's cache, just used.
# Exceptions thrown and caught (``thrown | caught << 32``) are rare: a column of their own.
_L_PTAG, _L_KEYDEPTH, _L_MEMO, _L_CALLS_FLAGS, _L_BC, _L_BLOCKS, _L_TIME, _L_NEXT = range(8)
# A local node's parent tag: 0 at the top, 3t + 1 for thread node t (a call open when the local
# tree before began), 3l + 2 for local node l, 3l + 3 for node l of the local tree before (being
# merged while this one fills); packed with the key into one int64.
_KEY_BITS = 29          # a key is a method id (< 2^19) or SYNTHETIC_KEY + a call site (< 2^28)
# What a stack entry's node is (its column 1): a node of the thread's tree, of the local tree
# filling, or of the local tree before (see the module's docstring); _NO_CALL: no call at that
# depth since its parent's began (the next call there is a first child).
_IN_THREAD, _IN_LOCAL, _IN_PREVIOUS, _NO_CALL = 0, 1, 2, -1
_LOW = (1 << 32) - 1
_NO_MEMO = _LOW         # no key is 2^32 - 1
# A thread's node is a row of 8 int64 too: the weights (:data:`WEIGHTS`) and its last child
# (``key | node << 32``); its forest node and parent, written once when it is made, are columns.
_T_CALLS, _T_BC, _T_BLOCKS, _T_TIME, _T_FLAGS, _T_THROWN, _T_CAUGHT, _T_MEMO = range(8)
_ROW = 8
PIECE_ROWS = 1 << 18    # rows read together when the columns are in memory
GUESS_CALLS_PER_CONTEXT = 16    # room made at first for a thread's nodes: its calls / this ...
MAX_GUESS = 1 << 24             # ... at most (a table of 512 MB, rows resident as they are used)
# Nodes of a local tree at most (its rows of 64 bytes and table of 32 bytes a node: 96 MB): the
# larger, the fewer of its nodes are looked up in the run's table, which costs a cache miss each,
# while its own lookups mostly find recently used nodes (measured on the first 104 M calls of
# javac's trace, thread CPU at load 8: 64 K nodes 3.2 s local + 3.8 s merging 13.5 M nodes, 256 K
# 3.5 + 2.0 s for 9.5 M, 1 M 3.7 + 1.6 s for 6.7 M). A local tree lives across pieces of rows.
LOCAL_NODES = 1 << 20
# Threads decoding pieces of rows, and pieces decoded (or being decoded) ahead of the one being
# merged into the local tree: a queue deeper than the threads lets the decoders use a core the
# builder leaves idle while it waits for the merger or is descheduled (about 12 MB a piece).
DECODERS = 2
AHEAD = 6


def _rows(n: int) -> np.ndarray:
    """``n`` rows of :data:`_ROW` int64, each on one cache line (64-byte aligned)."""
    flat = np.empty(n * _ROW + _ROW, np.int64)
    skip = (-flat.ctypes.data % 64) // 8
    return flat[skip:skip + n * _ROW].reshape(n, _ROW)


@numba.njit(cache=True, nogil=True, inline="always")
def _hash(key):  # pragma: no cover - numba
    return ((key ^ (key >> 29)) * 0x5851F42D4C957F2D) >> 17


@numba.njit(cache=True, nogil=True)
def _pair_slot(table, key):  # pragma: no cover - numba
    """Slot of ``key`` in a table of (key, value) pairs side by side (one cache line holds both):
    linear probing, EMPTY ends a probe."""
    mask = (len(table) >> 1) - 1
    i = _hash(key) & mask
    while True:
        k = table[2 * i]
        if k == key or k == _EMPTY:
            return i
        i = (i + 1) & mask


@numba.njit(cache=True, nogil=True)
def _pair_rehash(table, slots):  # pragma: no cover - numba
    out = np.full(2 * slots, _EMPTY, np.int64)
    for i in range(len(table) >> 1):
        k = table[2 * i]
        if k != _EMPTY:
            j = _pair_slot(out, k)
            out[2 * j] = k
            out[2 * j + 1] = table[2 * i + 1]
    return out


# inline="always": numba puts its lines into the caller (the local-tree kernel calls it once per
# row; as a call it cost 0.6 s of javac's 5.8-6.2 s there)
@numba.njit(cache=True, nogil=True, inline="always")
def _close_to(level, st, loc, pend):  # pragma: no cover - numba
    """Close the open calls at ``level`` and above (own counts): each one's inclusive count (its
    patch, else its own count plus its callees') goes to its node and to its caller. ``st``: the
    stack, rows (node, where the node is: ``_IN_*``, accumulated, patched, patch value), its height
    in ``st[-1, 0]``. A node of the local tree filling gets its count here; any other node's count
    is listed in ``pend`` (rows: where, node, count; their number in ``pend[-1, 0]``) for the
    merger (:func:`_merge_local`), which owns the thread's tree. At most one entry per call that
    was open when the local tree began: ``pend`` has a row per stack row."""
    top = st[len(st) - 1, 0]
    while top > level:
        top -= 1
        incl = st[top, 4] if st[top, 3] else st[top, 2]
        if st[top, 1] == _IN_LOCAL:
            loc[st[top, 0], _L_BC] += incl
        else:
            k = pend[len(pend) - 1, 0]
            pend[k, 0] = st[top, 1]
            pend[k, 1] = st[top, 0]
            pend[k, 2] = incl
            pend[len(pend) - 1, 0] = k + 1
        if top > 0:
            st[top - 1, 2] += incl
    st[len(st) - 1, 0] = top


@numba.njit(cache=True, nogil=True)
def _local_rows(method, site, flags, depth, bc, blocks, spans, synthetic_mask, own_mode, patch_rows,
                patch_values, exc_rows, exc_thrown, exc_caught, lt, used, loc, lexc, st, pend,
                state):  # pragma: no cover - numba
    """Merge rows of one piece (preorder, below the open calls of the stack ``st``) into the local
    tree: rows of ``loc``, their keys in the pair table ``lt``, its filled slots listed in ``used``,
    exceptions in ``lexc``; closed calls of other trees listed in ``pend`` (:func:`_close_to`).
    The stack's row below its height is the last call at that depth (a call's previous sibling).
    ``own_mode``: ``bc`` holds own counts, ``patch_*`` the inclusive counts of patched rows (piece
    rows, sorted); else ``bc`` is inclusive. ``exc_*``: piece rows that threw or caught
    exceptions (sorted), with counts. ``state``: (next row, next exception, next patch, local
    nodes, used slots), carried from call to call. Stops at the piece's end (returns 0), when the
    local tree is full (1: merge it, then call again), or at a row whose depth or key cannot be
    (returns -1, the row in ``state[0]``)."""
    e = state[1]
    pk = state[2]
    nloc = state[3]
    nused = state[4]
    height = len(st) - 1
    mask = (len(lt) >> 1) - 1
    full = len(loc)
    status = 0
    r = state[0]
    while r < len(method):
        if nloc == full:
            status = 1
            break
        d = np.int64(depth[r])
        if d < 0 or d > st[height, 0] or d >= height - 1:     # (the row above it is written too)
            status = -1
            break
        if own_mode:
            _close_to(d, st, loc, pend)
        if flags[r] & synthetic_mask:
            key = SYNTHETIC_KEY + np.int64(site[r])
        else:
            key = np.int64(method[r])
        if key < 0 or key >= (1 << _KEY_BITS):
            status = -1
            break
        node = -1
        # the previous sibling: the same callee again is the same node; else its next sibling
        sib_where = st[d, 1]
        sib = st[d, 0]
        if sib_where == _IN_LOCAL:
            if (loc[sib, _L_KEYDEPTH] & _LOW) == key:
                node = sib
            else:
                memo = loc[sib, _L_NEXT]
                if (memo & _LOW) == key:
                    node = memo >> 32
        p = -1
        plocal = False
        ptag = 0
        if d > 0:
            p = st[d - 1, 0]
            where = st[d - 1, 1]
            plocal = where == _IN_LOCAL
            if plocal:
                if node < 0 and sib_where == _NO_CALL:
                    memo = loc[p, _L_MEMO]
                    if (memo & _LOW) == key:
                        node = memo >> 32
                ptag = 3 * p + 2
            elif where == _IN_THREAD:
                ptag = 3 * p + 1
            else:
                ptag = 3 * p + 3
        if node < 0:
            packed = (ptag << _KEY_BITS) | key
            i = _hash(packed) & mask
            while True:
                k = lt[2 * i]
                if k == packed:
                    node = lt[2 * i + 1]
                    break
                if k == _EMPTY:
                    node = nloc
                    nloc += 1
                    lt[2 * i] = packed
                    lt[2 * i + 1] = node
                    used[nused] = i
                    nused += 1
                    loc[node, _L_PTAG] = ptag
                    loc[node, _L_KEYDEPTH] = key | (d << 32)
                    loc[node, _L_MEMO] = _NO_MEMO
                    loc[node, _L_CALLS_FLAGS] = 0
                    loc[node, _L_BC] = 0
                    loc[node, _L_BLOCKS] = 0
                    loc[node, _L_TIME] = 0
                    loc[node, _L_NEXT] = _NO_MEMO
                    lexc[node] = 0
                    break
                i = (i + 1) & mask
            if sib_where == _IN_LOCAL:
                loc[sib, _L_NEXT] = key | (node << 32)
            elif plocal and sib_where == _NO_CALL:
                loc[p, _L_MEMO] = key | (node << 32)
        loc[node, _L_CALLS_FLAGS] = (loc[node, _L_CALLS_FLAGS] + 1) | ((np.int64(flags[r]) & _LOW) << 32)
        loc[node, _L_BLOCKS] += blocks[r]
        loc[node, _L_TIME] += spans[r]
        while e < len(exc_rows) and exc_rows[e] == r:
            lexc[node] += exc_thrown[e] + (exc_caught[e] << 32)
            e += 1
        st[d, 0] = node
        st[d, 1] = _IN_LOCAL
        st[d + 1, 1] = _NO_CALL         # its first callee has no previous sibling
        if own_mode:
            st[d, 2] = bc[r]
            while pk < len(patch_rows) and patch_rows[pk] < r:
                pk += 1
            if pk < len(patch_rows) and patch_rows[pk] == r:
                st[d, 3] = 1
                st[d, 4] = patch_values[pk]
            else:
                st[d, 3] = 0
        else:
            loc[node, _L_BC] += bc[r]
        st[height, 0] = d + 1
        r += 1
    state[0] = r
    state[1] = e
    state[2] = pk
    state[3] = nloc
    state[4] = nused
    return status


@numba.njit(cache=True, nogil=True)
def _merge_local(loc, lexc, nloc, lt, used, nused, gmap_before, pend, gt, f_parent, f_key, f_depth, f_count, tmap,
                 tw, t_forest, t_parent, t_count, gmap, first):  # pragma: no cover - numba
    """Add the local tree to the thread's tree and the forest: each local node (parents first)
    found or made under its thread parent (the parent's last child first; else the forest node
    under the parent's forest node, by the pair table ``gt``, and the thread's node of that forest
    node, by ``tmap``), its sums added to the thread node's row of ``tw``; each local node's thread
    node goes to ``gmap`` (``gmap_before``: the local tree before's). New forest nodes get
    ``f_parent``, ``f_key``, ``f_depth`` (``f_count[0]`` nodes); new thread nodes ``t_forest``,
    ``t_parent`` (``t_count[0]`` nodes). Then the counts the builder left in ``pend`` are added
    and the local table is emptied. Room is the caller's business. ``first``: the forest was
    empty when the thread began, so its nodes are the forest's, one for one (no ``tmap`` to look
    in: half the cache misses of a merge)."""
    for l in range(nloc):
        ptag = loc[l, _L_PTAG]
        kind = ptag % 3
        if ptag == 0:
            tp = -1
        elif kind == 1:
            tp = (ptag - 1) // 3
        elif kind == 2:
            tp = gmap[(ptag - 2) // 3]
        else:
            tp = gmap_before[(ptag - 3) // 3]
        kd = loc[l, _L_KEYDEPTH]
        k = kd & _LOW
        node = -1
        if tp >= 0:
            memo = tw[tp, _T_MEMO]
            if (memo & _LOW) == k:
                node = memo >> 32
        if node < 0:
            fp = -1 if tp < 0 else tp if first else t_forest[tp]
            packed = ((fp + 1) << 32) | k
            s = _pair_slot(gt, packed)
            if gt[2 * s] == packed:
                f = gt[2 * s + 1]
            else:
                f = f_count[0]
                f_count[0] = f + 1
                gt[2 * s] = packed
                gt[2 * s + 1] = f
                f_parent[f] = fp
                f_key[f] = k
                f_depth[f] = kd >> 32
                if not first:
                    tmap[f] = -1
            node = f if first else tmap[f]
            if first and node == t_count[0]:
                t_count[0] = node + 1
                t_forest[node] = f
                t_parent[node] = tp
                for c in range(_ROW):
                    tw[node, c] = 0
                tw[node, _T_MEMO] = _NO_MEMO
            elif not first and node < 0:
                node = t_count[0]
                t_count[0] = node + 1
                tmap[f] = node
                t_forest[node] = f
                t_parent[node] = tp
                for c in range(_ROW):
                    tw[node, c] = 0
                tw[node, _T_MEMO] = _NO_MEMO
            if tp >= 0:
                tw[tp, _T_MEMO] = k | (node << 32)
        gmap[l] = node
        cf = loc[l, _L_CALLS_FLAGS]
        tw[node, _T_CALLS] += cf & _LOW
        tw[node, _T_FLAGS] |= cf >> 32
        tw[node, _T_BC] += loc[l, _L_BC]
        tw[node, _T_BLOCKS] += loc[l, _L_BLOCKS]
        tw[node, _T_TIME] += loc[l, _L_TIME]
        exc = lexc[l]
        if exc:
            tw[node, _T_THROWN] += exc & _LOW
            tw[node, _T_CAUGHT] += exc >> 32
    _add_pending(pend, gmap_before, tw)
    for i in range(nused):
        lt[2 * used[i]] = _EMPTY


@numba.njit(cache=True, nogil=True)
def _add_pending(pend, gmap_before, tw):  # pragma: no cover - numba
    """Add the inclusive counts :func:`_close_to` listed to their thread nodes, and empty the list."""
    for i in range(pend[len(pend) - 1, 0]):
        node = pend[i, 1] if pend[i, 0] == _IN_THREAD else gmap_before[pend[i, 1]]
        tw[node, _T_BC] += pend[i, 2]
    pend[len(pend) - 1, 0] = 0


@numba.njit(cache=True, nogil=True)
def _restack(st, gmap_before):  # pragma: no cover - numba
    """Between two local trees, once the one before is merged: the stack's nodes of that tree
    become thread nodes (by its ``gmap_before``), those of the tree just filled become nodes of
    the tree before."""
    for d in range(st[len(st) - 1, 0]):
        if st[d, 1] == _IN_PREVIOUS:
            st[d, 0] = gmap_before[st[d, 0]]
            st[d, 1] = _IN_THREAD
        elif st[d, 1] == _IN_LOCAL:
            st[d, 1] = _IN_PREVIOUS


# ---------------------------------------------------------------- reading the call columns

def _exception_counts(exceptions, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows that threw or caught an exception (sorted) with how many they threw and caught."""
    if exceptions is None or not len(exceptions):
        z = np.zeros(0, np.int64)
        return z, z, z
    throw = np.asarray(exceptions["throw_row"], np.int64)
    catch = np.asarray(exceptions["catch_row"], np.int64)
    throw = throw[(throw >= 0) & (throw < n)]
    catch = catch[(catch >= 0) & (catch < n)]
    rows = np.union1d(throw, catch)
    thrown = np.zeros(len(rows), np.int64)
    caught = np.zeros(len(rows), np.int64)
    np.add.at(thrown, np.searchsorted(rows, throw), 1)
    np.add.at(caught, np.searchsorted(rows, catch), 1)
    return rows, thrown, caught


_COLUMNS = ("depth", "method", "call_site", "flags", "first", "last", "incl_blocks")


def _stored_reader(calls):
    """For a call table read from the analysis store, block by block: ``read(lo, hi)`` gives the
    rows' columns (``lo``, ``hi``: one of the store's blocks, as :func:`_pieces` gives them) with the
    bytecodes as the store keeps them (own counts, and the patched rows' inclusive counts); None for
    columns held in memory (a row selection, a decoded table). Each column's file is opened once
    and its blocks read where they lie (what ``decode_rows`` does for one block, without opening
    the file and finding the block again each time: 0.6 s of CPU, with the GIL held, on javac's
    865 blocks of eight columns); ``close()`` closes the files."""
    stored = getattr(calls, "_stored", None)
    if stored is None or calls.is_decoded("depth"):
        return None
    prow, pval = stored.patches.get("incl_bytecodes", (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    starts = np.asarray(stored.starts, np.int64)
    block_of = {int(lo): b for b, lo in enumerate(starts[:-1].tolist())}
    files: dict[str, int] = {}
    lock = threading.Lock()

    def frame(name: str, b: int) -> bytes:
        with lock:
            fd = files.get(name)
            if fd is None:
                try:
                    fd = files[name] = S._nofollow(stored.directory / f"{name}.zst", os.O_RDONLY)
                except OSError as error:
                    raise S.CacheDamaged(f"{stored.directory / name}.zst: {error.strerror or error}") from error
        offsets = stored.frames[name]
        at, size = int(offsets[b]), int(offsets[b + 1] - offsets[b])
        data = os.pread(fd, size, at)
        if len(data) != size:
            raise S.CacheDamaged(f"{stored.directory / name}.zst: cut off in block {b}")
        return data

    def column(name: str, b: int, lo: int, hi: int, ref=None) -> np.ndarray:
        out = np.empty(hi - lo, stored.dtypes[name])
        stored._decode_into(name, frame(name, b), out, 0, hi - lo, ref)
        stored._patch(name, out, lo, hi)
        S._check_range(name, out, len(out), stored.directory)
        return out

    def read(lo: int, hi: int) -> dict[str, np.ndarray]:
        b = block_of.get(lo)
        if b is None or int(starts[b + 1]) != hi:
            raise ValueError(f"rows {lo}..{hi} are not a block of the store")
        cols = {"depth": column("depth", b, lo, hi), "method": column("method", b, lo, hi),
                "call_site": column("call_site", b, lo, hi)}
        cols["flags"] = column("flags", b, lo, hi, ref=cols["call_site"])
        cols["first"] = column("first", b, lo, hi)
        cols["last"] = column("last", b, lo, hi, ref=cols["first"])
        cols["incl_blocks"] = column("incl_blocks", b, lo, hi)
        cols["bc"] = np.empty(hi - lo, stored.dtypes["incl_bytecodes"])      # own counts: not patched
        stored._decode_into("incl_bytecodes", frame("incl_bytecodes", b), cols["bc"], 0, hi - lo, None)
        a, z = np.searchsorted(prow, [lo, hi])
        cols["patch_rows"] = np.asarray(prow[a:z], np.int64) - lo
        cols["patch_values"] = np.asarray(pval[a:z], np.int64)
        return cols

    def close() -> None:
        with lock:
            for fd in files.values():
                os.close(fd)
            files.clear()
    read.close = close
    return read


def _memory_reader(calls):
    """``read(lo, hi)`` of columns in memory (inclusive bytecodes, no patches)."""
    def read(lo: int, hi: int) -> dict[str, np.ndarray]:
        cols = {name: np.asarray(getattr(calls, name))[lo:hi] for name in _COLUMNS}
        cols["bc"] = np.asarray(calls.incl_bytecodes)[lo:hi]
        cols["patch_rows"] = cols["patch_values"] = np.zeros(0, np.int64)
        return cols
    return read


def _pieces(calls) -> list[tuple[int, int]]:
    """Row ranges read together: the store's blocks (each decoded on its own), or pieces of
    :data:`PIECE_ROWS` of columns in memory."""
    n = len(calls)
    stored = getattr(calls, "_stored", None)
    if stored is not None and not calls.is_decoded("depth"):
        starts = np.asarray(stored.starts, np.int64).tolist()
        return [(lo, hi) for lo, hi in zip(starts[:-1], starts[1:]) if hi > lo]
    return [(lo, min(n, lo + PIECE_ROWS)) for lo in range(0, n, PIECE_ROWS)]


# ---------------------------------------------------------------- the builder

class _LocalTree:
    """One local tree's buffers (see :func:`_local_rows`): its node rows, pair table, filled
    slots, the thread node of each of its nodes once merged, and the counts of other trees' calls
    it closed (:func:`_close_to`)."""

    def __init__(self, nodes: int):
        self.lt = np.full(4 * nodes, _EMPTY, np.int64)      # pairs, half full at most
        self.used = np.empty(nodes, np.int64)
        self.loc = _rows(nodes)
        self.exc = np.empty(nodes, np.int64)
        self.gmap = np.empty(nodes, np.int64)
        self.pend = np.zeros((1, 3), np.int64)


def _pending(st: np.ndarray) -> np.ndarray:
    """An empty list for :func:`_close_to`: a row per stack row (each call open when a local tree
    begins closes at most once while it fills), the count in the last."""
    return np.zeros((len(st), 3), np.int64)


class _Builder:
    """The forest being built (its table and node columns) and one thread's tree at a time."""

    def __init__(self, capacity: int = 1 << 12):
        """``capacity``: nodes to make room for at once (then the arrays grow four times over, the
        table twice, when they fill: every growth copies them and rehashes the table at a cache
        miss a node)."""
        capacity = 1 << max(12, int(capacity) - 1).bit_length()
        # the forest's table (pairs, half full at most) is filled on a thread of its own: the
        # first merge needs it, not the first rows (javac: 512 MB, 0.25 s of page faults that
        # the build waited for before decoding a row)
        self._gt = None
        filler = ThreadPoolExecutor(1)
        self._gt_filled = filler.submit(np.full, 4 * capacity, _EMPTY, np.int64)
        filler.shutdown(wait=False)     # its one task still runs
        self.f = [np.empty(capacity, np.int64) for _ in range(3)]      # parent, key, depth
        self.f_count = np.zeros(1, np.int64)
        # forest node -> node of the current thread, made for the second thread (the first
        # thread's nodes are the forest's)
        self.tmap = np.zeros(0, np.int64)

    @property
    def gt(self) -> np.ndarray:
        if self._gt is None:
            self._gt = self._gt_filled.result()
            self._gt_filled = None
        return self._gt

    @gt.setter
    def gt(self, table: np.ndarray) -> None:
        self._gt = table

    def forest(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = int(self.f_count[0])
        return tuple(a[:m] for a in self.f)

    def thread(self, calls, synthetic_mask: int, axis=None, exceptions=None, progress=None,
               cancelled=None, rows_before: int = 0, rows_total: int | None = None) -> dict[str, np.ndarray]:
        """One thread's tree, merged into the forest as it is built: its nodes' ``forest`` node,
        ``parent`` (a node of this thread's) and :data:`WEIGHTS`. ``progress(rows_before + rows
        done, rows_total)``."""
        n = len(calls)
        total = n if rows_total is None else rows_total
        stored = _stored_reader(calls)
        own_mode = stored is not None
        read = stored or _memory_reader(calls)
        pieces = _pieces(calls)
        exc_rows, exc_thrown, exc_caught = _exception_counts(exceptions, n)
        local = 1 << max(4, min(LOCAL_NODES, len(calls) + 1) - 1).bit_length()     # a power of two
        # two local trees take turns: one fills while the other is merged (the module's docstring)
        trees = [_LocalTree(local), _LocalTree(local)]
        cur = trees[0]
        st = np.zeros((65, 5), np.int64)        # the stack of open calls; its height in the last row
        cur.pend = _pending(st)
        # a real program makes one context per few dozen calls (javac: 17); grown when needed
        cap = int(min(max(1024, n // GUESS_CALLS_PER_CONTEXT), MAX_GUESS))
        tw = _rows(cap)
        t_cols = [np.empty(cap, np.int64) for _ in range(2)]     # forest node, parent
        t_count = np.zeros(1, np.int64)
        state = np.zeros(5, np.int64)
        first = int(self.f_count[0]) == 0
        if not first and len(self.tmap) < len(self.f[0]):
            self.tmap = np.full(len(self.f[0]), -1, np.int64)

        def merge(tree: _LocalTree, gmap_before: np.ndarray, nloc: int, nused: int) -> None:
            """On the merger's thread: the only code that touches the thread's tree and the forest."""
            nonlocal tw, t_cols
            t_used, f_used = int(t_count[0]), int(self.f_count[0])
            if t_used + nloc > len(tw):          # at most one new node per local node
                size = max(t_used + nloc, 4 * len(tw))
                grown = _rows(size)
                grown[:t_used] = tw[:t_used]
                tw = grown
                t_cols = [np.concatenate([a[:t_used], np.empty(size - t_used, np.int64)]) for a in t_cols]
            if f_used + nloc > len(self.f[0]):
                size = max(f_used + nloc, 4 * len(self.f[0]))
                self.f = [np.concatenate([a[:f_used], np.empty(size - f_used, np.int64)]) for a in self.f]
                if len(self.tmap):
                    self.tmap = np.concatenate([self.tmap[:f_used], np.full(size - f_used, -1, np.int64)])
            if 2 * (f_used + nloc) > len(self.gt) >> 1:
                slots = len(self.gt) >> 1
                while 2 * (f_used + nloc) > slots:
                    slots *= 2
                self.gt = _pair_rehash(self.gt, slots)
            _merge_local(tree.loc, tree.exc, nloc, tree.lt, tree.used, nused, gmap_before, tree.pend, self.gt, *self.f,
                         self.f_count, self.tmap, tw, *t_cols, t_count, tree.gmap, first)

        merging = None          # the merge of the local tree before
        before = np.zeros(0, np.int64)      # that tree's node map

        def hand_off() -> None:
            """The filled local tree to the merger, once the one before is merged; the other
            tree's buffers to fill."""
            nonlocal merging, before, cur
            if merging is not None:
                merging.result()
            _restack(st, before)
            merging = merger.submit(merge, cur, before, int(state[3]), int(state[4]))
            before = cur.gmap
            cur = trees[1] if cur is trees[0] else trees[0]
            cur.pend = _pending(st)
            state[3] = state[4] = 0

        def spans_of(cols) -> np.ndarray:
            # a call's time: from its first event to its last (a native that blocked: its wait,
            # measured by the clock's stamps; see Axis.weight_rows and weight_spans), else events
            first, last = cols["first"], cols["last"]
            if axis is not None and len(axis) >= 2:
                return axis.weight_spans(first, last, cols["flags"])
            return np.maximum(last.astype(np.int64) - first, 0)

        def prepared(lo: int, hi: int):
            cols = read(lo, hi)
            depth = cols["depth"]
            return cols, spans_of(cols), int(depth.max()) + 2 if len(depth) else 2

        # the next pieces are decoded on two threads and the local tree before merged on another
        # while this one fills (zstd and the kernels release the GIL): decoding is the longest of
        # the three, and with one piece decoded ahead the builder waited for it (javac: 7 s of 21)
        with ThreadPoolExecutor(DECODERS) as pool, ThreadPoolExecutor(1) as merger:
            ahead = [pool.submit(prepared, *piece) for piece in pieces[:AHEAD]]
            try:
                for k, (lo, hi) in enumerate(pieces):
                    if cancelled is not None and cancelled():
                        raise Cancelled()
                    if progress is not None:
                        progress(rows_before + lo, total)
                    cols, spans, deepest = ahead.pop(0).result()
                    if k + AHEAD < len(pieces):
                        ahead.append(pool.submit(prepared, *pieces[k + AHEAD]))
                    if deepest >= len(st) - 1:
                        grown = np.zeros((max(deepest + 1, 2 * len(st)), 5), np.int64)
                        grown[:len(st) - 1] = st[:-1]
                        grown[-1] = st[-1]
                        st = grown
                    e0, e1 = np.searchsorted(exc_rows, [lo, hi])
                    state[:3] = 0
                    while True:
                        status = _local_rows(
                            cols["method"], cols["call_site"], cols["flags"], cols["depth"], cols["bc"],
                            cols["incl_blocks"], spans, synthetic_mask, own_mode, cols["patch_rows"],
                            cols["patch_values"], exc_rows[e0:e1] - lo, exc_thrown[e0:e1], exc_caught[e0:e1],
                            cur.lt, cur.used, cur.loc, cur.exc, st, cur.pend, state)
                        if status < 0:
                            error = S.CacheDamaged if own_mode else ValueError
                            raise error(f"{getattr(calls, 'directory', 'calls')}: a call's depth or method cannot "
                                        f"be, row {lo + int(state[0])}")
                        if status == 0:
                            break
                        hand_off()
                hand_off()
                merging.result()
            except BaseException:
                for future in ahead:
                    future.cancel()
                raise
            finally:
                if stored is not None:
                    pool.shutdown(wait=True)        # no decoder left reading: close the files
                    stored.close()
        _restack(st, before)            # every open call's node is the thread's now
        if own_mode:
            pend = _pending(st)
            _close_to(0, st, cur.loc, pend)
            _add_pending(pend, before, tw)
        m = int(t_count[0])
        forest_ids, parent = (a[:m] for a in t_cols)
        if not first:
            self.tmap[forest_ids] = -1          # ready for the next thread
        return {"forest": forest_ids, "parent": parent, "weights": tw[:m]}


def _columns(weights: np.ndarray, order: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """A thread's :data:`WEIGHTS` as columns from its node rows (``order``: the rows to take, in
    this order): one pass reading rows, writing columns."""
    m = len(weights) if order is None else len(order)
    out = {name: np.empty(m, np.int64) for name in WEIGHTS}
    _gather(weights, np.arange(m, dtype=np.int64) if order is None else order, *out.values())
    return out


@numba.njit(cache=True, nogil=True)
def _gather(rows, order, calls, bc, blocks, time, flags, thrown, caught):  # pragma: no cover - numba
    for i in range(len(order)):
        r = order[i]
        calls[i] = rows[r, _T_CALLS]
        bc[i] = rows[r, _T_BC]
        blocks[i] = rows[r, _T_BLOCKS]
        time[i] = rows[r, _T_TIME]
        flags[i] = rows[r, _T_FLAGS]
        thrown[i] = rows[r, _T_THROWN]
        caught[i] = rows[r, _T_CAUGHT]


def _thread_fields(rows: dict[str, np.ndarray], f_key: np.ndarray, f_depth: np.ndarray) -> dict[str, np.ndarray]:
    """A thread's tree in the fields :func:`compute` gives, from its nodes' forest nodes."""
    forest = rows["forest"]
    return {"parent": rows["parent"], "key": f_key[forest], "depth": f_depth[forest], **_columns(rows["weights"])}


def compute(calls, synthetic_mask: int, axis=None, exceptions=None, progress=None,
            cancelled=None) -> dict[str, np.ndarray]:
    """The exact tree of one call table (a thread's, or chosen rows of one, in start order).
    ``axis``: the thread's :class:`jbgui.model.blocking_times.Axis`, which a call's time is read
    on (:meth:`~jbgui.model.blocking_times.Axis.weight_rows`; without a clock, in events);
    ``exceptions`` is the thread's exception table. Between pieces of calls,
    ``progress(rows done, rows)`` is told and ``cancelled()`` asked (true: :class:`Cancelled` is
    raised). Memory holds the tree and two blocks of rows, never a stored thread's columns."""
    builder = _Builder(min(MAX_GUESS, len(calls) // GUESS_CALLS_PER_CONTEXT))
    rows = builder.thread(calls, synthetic_mask, axis, exceptions, progress, cancelled)
    _parent, f_key, f_depth = builder.forest()
    return _thread_fields(rows, f_key, f_depth)


# ---------------------------------------------------------------- the run's trees, kept

class RunTrees:
    """The forest's structure and each thread's nodes (see the module's docstring). A thread's
    weights are read when first needed (from the file the trees were kept in, or from memory
    when just built): the merged tree of the run reads the largest thread's straight into its
    own arrays."""

    def __init__(self, parent: np.ndarray, key: np.ndarray, forest_ids: dict[int, np.ndarray | None],
                 rows: dict[int, int], read, dtype, same_key: np.ndarray, forest=None):
        self.parent = parent            # the forest's, per node (int32 when it fits)
        self.key = key
        self.same_key = same_key        # per node its nearest ancestor of the same key, -1: none (int64)
        self.forest_ids = forest_ids    # thread index -> its nodes' forest nodes (None: the first ones)
        self.rows = rows                # thread index -> its number of nodes
        self._read = read               # (thread index, out) -> {weight: array}
        self._dtype = dtype             # (thread index, weight) -> its type
        self.depth = np.empty(len(parent), np.int32)
        _depths(parent, self.depth)
        self._forest = forest           # forest_tree's arrays, made with the trees (given once)

    @property
    def threads(self) -> list[int]:
        return list(self.rows)

    def dtype(self, index: int, name: str) -> np.dtype:
        """The type one thread's weight is kept in."""
        return self._dtype(index, name)

    def weights(self, index: int, out: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """One thread's :data:`WEIGHTS` per node (into ``out``'s arrays when given)."""
        return self._read(index, out)

    def thread_tree(self, index: int) -> dict[str, np.ndarray]:
        """One thread's tree: :data:`FIELDS`, :data:`EXTRA_FIELDS` and ``capped``."""
        if index not in self.rows:
            z = np.zeros(0, np.int64)
            return {name: z for name in FIELDS + EXTRA_FIELDS} | {"capped": np.array([False])}
        m = self.rows[index]
        forest = self.forest_ids[index]
        if forest is None:          # the forest's first nodes: the same parents
            parent, key, depth = self.parent[:m], self.key[:m], self.depth[:m]
        else:
            node_of = np.full(len(self.parent), -1, np.int64)   # the thread's node of a forest node
            node_of[forest] = np.arange(m)
            fp = self.parent[forest]
            parent = np.where(fp >= 0, node_of[np.maximum(fp, 0)], -1)
            key, depth = self.key[forest], self.depth[forest]
        w = self.weights(index)
        return {"parent": np.asarray(parent, np.int64), "key": np.asarray(key, np.int64),
                "depth": np.asarray(depth, np.int64), **{name: np.asarray(w[name], np.int64) for name in WEIGHTS},
                "capped": np.array([False])}

    def forest_tree(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The forest's weights, every thread's summed (flags or-ed): ``calls``; ``incl``, (n, 3)
        by column: bytecodes, blocks, time; ``own``, (n, 2) by column: thrown, caught; ``flags``.
        The thread that made the forest's first nodes is read straight into them; the others are
        added node by node. Arrays of the caller's own: those made with the trees are given once."""
        forest, self._forest = self._forest, None
        if forest is not None:
            return forest
        n = len(self.parent)
        calls = np.empty(n, np.int64)
        incl = np.empty((n, 3), np.int64, order="F")
        # exception counts side by side, in 32 bits when every thread's fit (their sums are far
        # below 2^31): a re-merge reads and adds a node's two at once (by column, or 64 bits, the
        # toggle of only my code cost twice the time on javac's forest)
        wide = any(self.dtype(i, name) != np.int32 for i in self.rows for name in ("thrown", "caught"))
        own = np.empty((n, 2), np.int64 if wide else np.int32)
        flags = np.empty(n, np.int32)
        columns = {"calls": calls, "incl_bytecodes": incl[:, 0], "incl_blocks": incl[:, 1], "incl_time": incl[:, 2],
                   "flags": flags, "thrown": own[:, 0], "caught": own[:, 1]}
        first = next((i for i, f in self.forest_ids.items() if f is None), None)
        m = 0 if first is None else self.rows[first]
        if first is not None:
            self.weights(first, {name: col[:m] for name, col in columns.items()})
        for col in columns.values():
            col[m:] = 0
        for i, forest in self.forest_ids.items():
            if forest is not None:
                w = self.weights(i)
                _scatter(forest, *(w[name] for name in WEIGHTS), *(columns[name] for name in WEIGHTS))
        return calls, incl, own, flags


@numba.njit(cache=True, nogil=True)
def _scatter(ids, calls, bc, blocks, time, flags, thrown, caught,
             o_calls, o_bc, o_blocks, o_time, o_flags, o_thrown, o_caught):  # pragma: no cover - numba
    for i in range(len(ids)):
        f = ids[i]
        o_calls[f] += calls[i]
        o_bc[f] += bc[i]
        o_blocks[f] += blocks[i]
        o_time[f] += time[i]
        o_flags[f] |= flags[i]
        o_thrown[f] += thrown[i]
        o_caught[f] += caught[i]


def build_run(threads, progress=None, cancelled=None) -> tuple[RunTrees, dict[str, np.ndarray]]:
    """Every thread's tree and the forest, from their call tables (see :func:`compute`), and the
    arrays to keep. The thread of most calls first: its nodes are the forest's first, in order,
    kept as such (no list of forest nodes)."""
    run, arrays = _build_run(threads, progress, cancelled)
    return run, arrays()


def _build_run(threads, progress=None, cancelled=None):
    """:func:`build_run`, the arrays to keep given as a function: the first thread's columns are
    gathered from its node rows when first asked for (by the save, on its own thread, or a reader
    of that thread's weights), not before the merged tree can be had (the forest's weights are
    gathered from the rows at once)."""
    total = sum(len(t.calls) for t in threads)
    builder = _Builder(min(MAX_GUESS, total // GUESS_CALLS_PER_CONTEXT))
    before = 0
    weights, forest_ids, rows = {}, {}, {}
    for t in sorted(threads, key=lambda t: -len(t.calls)):
        if not len(t.calls):
            continue
        got = builder.thread(t.calls, K.F_NATIVE | K.F_UNTRACED, t.axis, t.exceptions, progress, cancelled,
                             rows_before=before, rows_total=total)
        before += len(t.calls)
        forest_ids[t.index] = got["forest"]
        rows[t.index] = len(got["forest"])
        weights[t.index] = got["weights"]
    parent, key, _depth = builder.forest()
    # the same-key ancestors on a thread of their own meanwhile (0.4 s on javac's 12.9 M contexts;
    # the rest below takes as long, on this thread)
    with ThreadPoolExecutor(1) as pool:
        same = pool.submit(lambda p, k: _narrow(same_key_ancestor(p, k)), parent, key)
        if len(parent) < 2**31 - 1:     # every parent, key and gap fits 32 bits: one pass
            parent32, key32, parent_gap = (np.empty(len(parent), np.int32) for _ in range(3))
            _narrow_forest(parent, key, parent32, key32, parent_gap)
            parent, key = parent32, key32
        else:
            parent, key = _narrow(parent), _narrow(key)
            parent_gap = _narrow(np.arange(len(parent), dtype=np.int64) - parent)
        forest = _post_threads(rows, forest_ids, weights, len(parent))
        same_key = same.result()
    first = next(iter(rows), None)
    first_rows = weights.pop(first) if first is not None else None
    lock = threading.Lock()

    def columns(index: int) -> dict[str, np.ndarray]:
        """A thread's weight columns (the first thread's gathered from its rows when first asked
        for; the rows are let go then)."""
        nonlocal first_rows
        with lock:
            if index not in weights:
                weights[index] = _thread_columns(first_rows)
                first_rows = None
            return weights[index]

    def read(index: int, out=None) -> dict[str, np.ndarray]:
        w = columns(index)
        if out is None:
            return w
        for name, values in out.items():
            values[:] = w[name]
        return out

    def arrays() -> dict[str, np.ndarray]:
        got = {"parent_gap": parent_gap, "key": key, "threads": np.array(sorted(rows), np.int64), "same_key": same_key}
        for index in rows:
            if forest_ids[index] is not None:
                got[f"t{index}.forest"] = forest_ids[index]
            got.update({f"t{index}.{name}": values for name, values in columns(index).items()})
        return got
    return RunTrees(parent, key, forest_ids, rows, read, lambda i, name: columns(i)[name].dtype, same_key,
                    forest), arrays


def _thread_columns(w: np.ndarray) -> dict[str, np.ndarray]:
    """A thread's node rows as :data:`WEIGHTS` columns, flags and exception counts narrowed to 32
    bits when they fit (each on its own)."""
    m = len(w)
    columns = {name: np.empty(m, np.int64 if name in _WIDE else np.int32) for name in WEIGHTS}
    if not _gather_run(w, *columns.values(), *_NO_FOREST):     # a flag or count beyond 32 bits
        columns = {name: values if name in _WIDE else _narrow(values) for name, values in _columns(w).items()}
    return columns


_WIDE = ("calls", "incl_bytecodes", "incl_blocks", "incl_time")     # sums: always 64 bits


def _post_threads(rows: dict, forest_ids: dict, weights: dict, n: int):
    """The forest's weights as :meth:`RunTrees.forest_tree` gives them, the first thread's gathered
    from its node rows (it made the forest's first nodes, in order: no list of them kept) and the
    others' added; or None when a flag or exception count does not fit 32 bits (then forest_tree
    sums them when asked). The other threads' weights become columns and their forest nodes are
    narrowed, in place; the first thread's rows stay as they are."""
    first = next(iter(rows), None)
    if first is None:
        return None
    forest = (np.empty(n, np.int64), np.empty((n, 3), np.int64, order="F"), np.empty((n, 2), np.int32),
              np.empty(n, np.int32))
    fits = _gather_run(weights[first], *_NO_COLUMNS, *forest)
    forest_ids[first] = None
    for index in rows:
        if index != first:
            weights[index] = _thread_columns(weights[index])
            forest_ids[index] = _narrow(forest_ids[index])
            fits = fits and all(weights[index][name].dtype == np.int32 for name in ("thrown", "caught"))
    if not fits:
        return None
    calls, incl, own, flags = forest
    m = len(weights[first])
    calls[m:] = 0
    incl[m:] = 0
    own[m:] = 0
    flags[m:] = 0
    for index in rows:
        if index != first:
            w = weights[index]
            _scatter(forest_ids[index], *(w[name] for name in WEIGHTS), calls, incl[:, 0], incl[:, 1],
                     incl[:, 2], flags, own[:, 0], own[:, 1])
    return forest


_NO_COLUMNS = tuple(np.zeros(0, np.int64 if name in _WIDE else np.int32) for name in WEIGHTS)
_NO_FOREST = (np.zeros(0, np.int64), np.zeros((0, 3), np.int64, order="F"), np.zeros((0, 2), np.int32),
              np.zeros(0, np.int32))


@numba.njit(cache=True, nogil=True)
def _gather_run(rows, calls, bc, blocks, time, flags, thrown, caught, f_calls, f_incl, f_own,
                f_flags):  # pragma: no cover - numba
    """A thread's node rows as columns (flags and exception counts in 32 bits), and into the
    forest's columns too when they are given (the first thread's: its nodes are the forest's
    first); False as soon as a flag or count does not fit 32 bits (the columns are then unusable)."""
    forest = len(f_calls) > 0
    own = len(calls) > 0
    for i in range(len(rows) if own or forest else 0):
        fl = rows[i, _T_FLAGS]
        th = rows[i, _T_THROWN]
        ca = rows[i, _T_CAUGHT]
        if fl < -(1 << 31) or fl >= (1 << 31) or th < -(1 << 31) or th >= (1 << 31) or ca < -(1 << 31) \
                or ca >= (1 << 31):
            return False
        c = rows[i, _T_CALLS]
        b = rows[i, _T_BC]
        bl = rows[i, _T_BLOCKS]
        t = rows[i, _T_TIME]
        if own:
            calls[i] = c
            bc[i] = b
            blocks[i] = bl
            time[i] = t
            flags[i] = fl
            thrown[i] = th
            caught[i] = ca
        if forest:
            f_calls[i] = c
            f_incl[i, 0] = b
            f_incl[i, 1] = bl
            f_incl[i, 2] = t
            f_own[i, 0] = th
            f_own[i, 1] = ca
            f_flags[i] = fl
    return True


@numba.njit(cache=True, nogil=True)
def _narrow_forest(parent, key, parent32, key32, gap32):  # pragma: no cover - numba
    """``parent`` and ``key`` in 32 bits and each node's distance back to its parent (node less
    parent), for a forest of fewer than 2^31 - 1 nodes (keys are below 2^29)."""
    for i in range(len(parent)):
        p = parent[i]
        parent32[i] = p
        key32[i] = key[i]
        gap32[i] = i - p


def _narrow(a: np.ndarray) -> np.ndarray:
    """32 bits when every value fits (half the memory to write and read)."""
    a = np.asarray(a)
    if a.dtype == np.int32 or (len(a) and (a.max() >= 2**31 or a.min() < -2**31)):
        return a
    return a.astype(np.int32)


def _from_file(f: S.ColumnFile, thread_indices: set[int], statics=None) -> RunTrees | None:
    """The kept trees, or None when they cannot be this run's (damage, another version): every
    parent an earlier node, every key a method or call site of ``statics`` (views index tables
    with them), every thread node a forest node, every weight column of its thread's length."""
    try:
        got = f.read(["parent_gap", "key", "threads"])
        gap, key = got["parent_gap"], got["key"]
        n = len(gap)
        if len(key) != n or f.rows("same_key") != n:
            return None
        parent = np.empty(n, np.int32 if n < 2**31 else np.int64)
        if _parents_from_gaps(gap, parent) >= 0:
            return None
        same_key = np.empty(n, np.int64)
        f.read(["same_key"], {"same_key": same_key})
        if _bad_same_key(same_key, key) >= 0:
            return None
        if n and (key.min() < 0 or key.max() >= (1 << _KEY_BITS)):
            return None
        if n and statics is not None:
            method = key <= statics.max_method_id
            site = (key >= SYNTHETIC_KEY) & (key < SYNTHETIC_KEY + statics.n_sites)
            if not np.all(method | site):
                return None
        indices = [int(i) for i in got["threads"]]
        if not set(indices) <= thread_indices or len(set(indices)) != len(indices):
            return None
        forest_ids, rows = {}, {}
        for index in indices:
            m = f.rows(f"t{index}.calls")
            if any(f.rows(f"t{index}.{name}") != m for name in WEIGHTS):
                return None
            forest = f.read([f"t{index}.forest"])[f"t{index}.forest"] if f"t{index}.forest" in f.arrays else None
            if forest is None and (m > n or any(i is None for i in forest_ids.values())):
                return None
            if forest is not None and (len(forest) != m or (m and (forest.min() < 0 or forest.max() >= n))):
                return None
            forest_ids[index], rows[index] = forest, m
    except (KeyError, ValueError, TypeError, AttributeError):
        return None

    def read(index: int, out=None) -> dict[str, np.ndarray]:
        names = [f"t{index}.{name}" for name in WEIGHTS]
        got = f.read(names, None if out is None else {f"t{index}.{k}": v for k, v in out.items()})
        return {name: got[f"t{index}.{name}"] for name in WEIGHTS}
    return RunTrees(parent, key, forest_ids, rows, read, lambda i, name: f.arrays[f"t{i}.{name}"][0], same_key)


@numba.njit(cache=True, nogil=True)
def _bad_same_key(same, key):  # pragma: no cover - numba
    """The first node whose kept same-key ancestor is not an earlier node of its key, else -1."""
    for i in range(len(same)):
        a = same[i]
        if a < -1 or a >= i or (a >= 0 and key[a] != key[i]):
            return i
    return -1


@numba.njit(cache=True, nogil=True)
def _csr_in(parent, start, out):  # pragma: no cover - numba
    """Counts by parent, their running sums, then each child placed at its parent's next
    place; that moves each parent's start to the next parent's, so the starts are shifted back
    (no array of fill positions: ten million nodes' worth of pages less to touch)."""
    n = len(parent)
    for i in range(n):
        if parent[i] >= 0:
            start[parent[i] + 1] += 1
    for i in range(n):
        start[i + 1] += start[i]
    for i in range(n):
        p = parent[i]
        if p >= 0:
            out[start[p]] = i
            start[p] += 1
    for i in range(n, 0, -1):
        start[i] = start[i - 1]
    start[0] = 0


def children_csr(parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Children lists in node order (a counting sort by parent): the children of node i are
    ``out[start[i]:start[i + 1]]``."""
    n = len(parent)
    idx = np.int32 if n < 2**31 - 1 else np.int64     # half the pages to touch
    start = np.zeros(n + 1, idx)
    out = np.empty(n - int(np.count_nonzero(np.asarray(parent) < 0)), idx)
    _csr_in(parent, start, out)
    return start, out


@numba.njit(cache=True, nogil=True)
def same_group_ancestor(child_start, child_list, roots, group):  # pragma: no cover - numba
    """Per node: the nearest ancestor in the same group, -1 when none — a depth-first walk
    keeping, per group, the deepest node of the current path in it."""
    n = len(group)
    out = np.full(n, -1, np.int64)
    if n == 0:
        return out
    top_of = np.full(group.max() + 1, -1, np.int64)
    stack_node = np.empty(n + 1, np.int64)
    stack_next = np.empty(n + 1, np.int64)
    for r in roots:
        top = 0
        stack_node[0] = r
        stack_next[0] = child_start[r]
        out[r] = top_of[group[r]]
        top_of[group[r]] = r
        while top >= 0:
            node = stack_node[top]
            nxt = stack_next[top]
            if nxt < child_start[node + 1]:
                stack_next[top] = nxt + 1
                c = child_list[nxt]
                out[c] = top_of[group[c]]
                top_of[group[c]] = c
                top += 1
                stack_node[top] = c
                stack_next[top] = child_start[c]
            else:
                top_of[group[node]] = out[node]
                top -= 1
    return out


def same_key_ancestor(parent: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Per node of a forest: its nearest ancestor with the same key, -1 when none. Kept with the
    run's trees: the first toggle of only my code or transform of the run's merged tree needs it
    (0.3-0.4 s to compute on javac's 12.9 M contexts)."""
    key = np.asarray(key)
    if not len(key):
        return np.zeros(0, np.int64)
    present = np.zeros(int(key.max()) + 1, np.bool_)     # keys as dense indices (as Tree.dense_keys)
    present[key] = True
    dense = (np.cumsum(present) - 1).astype(np.int32)[key]
    start, lst = children_csr(parent)
    roots = np.flatnonzero(np.asarray(parent) < 0)
    return same_group_ancestor(start, lst, roots, dense)


@numba.njit(cache=True, nogil=True)
def _parents_from_gaps(gap, out):  # pragma: no cover - numba
    """Each node's parent from its distance back; the first node whose parent would not be an
    earlier node (nor -1), else -1."""
    for i in range(len(gap)):
        p = i - np.int64(gap[i])
        if p < -1 or p >= i:
            return i
        out[i] = p
    return -1


# The run's trees being written, by file: saved on a thread of their own once built (compressing
# them took 1.1-1.6 s on javac's 12.9 M contexts, which the views need not wait for; at a lower
# priority than the views, which are computed meanwhile, on the same cores). Written to a
# temporary name and renamed (store.save_columns): a reader meets the whole file or none. Anything
# that reads, asks for or removes the file first waits for its save (:func:`saved`); the saves
# are waited for when the process exits (before thread pools refuse work: store.save_columns
# compresses on a pool).
_saving: dict[Path, threading.Thread] = {}
_saving_lock = threading.Lock()


def _finish_saves() -> None:
    with _saving_lock:
        pending = list(_saving.values())
    for thread in pending:
        thread.join()


# threading's exit hooks run last registered first: this one before concurrent.futures' (imported
# above), which stops every pool from taking work (the interpreter's own atexit runs after both)
threading._register_atexit(_finish_saves)


def _lower_priority() -> None:
    """This thread (and the threads it starts, which inherit it) yields the cores to the views
    computed meanwhile (Linux: a thread's nice value; elsewhere nothing changes)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass


def _save_in_background(path: Path, arrays) -> None:
    """Save ``arrays()`` (made on the saving thread) as ``path``."""
    with _saving_lock:
        earlier = _saving.get(path)

        def save() -> None:
            try:
                _lower_priority()
                if earlier is not None:
                    earlier.join()      # one writer of a file at a time: the later trees are kept
                S.save_columns(path, arrays())
            except OSError:
                pass            # not kept: built again next time
            finally:
                with _saving_lock:
                    if _saving.get(path) is thread:
                        del _saving[path]
        thread = threading.Thread(target=save, name=f"save {path.name}")
        _saving[path] = thread
        thread.start()


def saved(cache_dir: Path | None) -> None:
    """Wait until the run's trees being saved in ``cache_dir`` are written (at once when none are)."""
    if cache_dir is None:
        return
    with _saving_lock:
        thread = _saving.get(Path(cache_dir) / f"{RUN_FILE}.zst")
    if thread is not None:
        thread.join()


def is_stored(cache_dir: Path | None) -> bool:
    """Whether the run's trees are kept in ``cache_dir`` (the replay's directory), or being saved there."""
    if cache_dir is None:
        return False
    with _saving_lock:
        if Path(cache_dir) / f"{RUN_FILE}.zst" in _saving:
            return True
    return (Path(cache_dir) / f"{RUN_FILE}.zst").is_file()


def forget(cache_dir: Path | None) -> None:
    """Drop the run's trees kept in ``cache_dir`` (once any save there is done)."""
    if cache_dir is not None:
        saved(cache_dir)
        (Path(cache_dir) / f"{RUN_FILE}.zst").unlink(missing_ok=True)


def for_run(threads, cache_dir: Path | None, progress=None, cancelled=None, statics=None) -> RunTrees:
    """The run's trees (:class:`RunTrees`) of ``threads`` (every :class:`~jbgui.model.analysis.
    ThreadReplay` of the run), kept in ``cache_dir`` (the replay's directory): read when kept
    there and sound (keys checked against ``statics``), else built and kept. The only writer of
    that file, which it saves on a thread of its own (:func:`saved` waits for it)."""
    path = Path(cache_dir) / f"{RUN_FILE}.zst" if cache_dir is not None else None
    indices = {t.index for t in threads}
    if path is not None:
        saved(cache_dir)
        for old in _OLD_RUN_FILES:
            (Path(cache_dir) / f"{old}.zst").unlink(missing_ok=True)
        for t in threads:       # per-thread files of earlier versions: read no more
            for old in _OLD_FILES:
                derived.forget(t.calls.directory, old)
        try:
            run = _from_file(S.ColumnFile(path), indices, statics)
            if run is not None:
                return run
        except S.CacheDamaged:
            pass        # missing, damaged or of another version: built again
    run, arrays = _build_run(threads, progress, cancelled)
    if path is not None:
        _save_in_background(path, arrays)
    return run


def for_thread(thread, progress=None, cancelled=None) -> dict[str, np.ndarray]:
    """The tree of a :class:`jbgui.model.analysis.ThreadReplay`: :data:`FIELDS` and, with the
    thread's clock and exceptions, :data:`EXTRA_FIELDS`; and ``capped`` (a one-element bool array,
    always False: the tree is exact). From the run's trees (:func:`for_run`) when the thread
    belongs to an analysis, else computed."""
    run_trees = getattr(thread, "run_trees", None)
    if run_trees is not None:
        return run_trees(progress, cancelled).thread_tree(thread.index)
    fields = compute(thread.calls, K.F_NATIVE | K.F_UNTRACED, thread.axis, thread.exceptions, progress, cancelled)
    return {**fields, "capped": np.array([False])}


@numba.njit(cache=True, nogil=True)
def _depths(parent, out):  # pragma: no cover - numba
    """Each node's depth, parents first (a parent is always an earlier node)."""
    for i in range(len(parent)):
        p = parent[i]
        out[i] = 0 if p < 0 else out[p] + 1
