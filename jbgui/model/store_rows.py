"""A method's calls read from the analysis store without decoding a column whole.

:func:`rows_with` gives the rows of a thread's call table that hold one value of a column (the
calls of one method) with their first and last events, flags and parent, walking each stored
block once. It reads the store's blocks by the rules :mod:`jbgui.model.store` defines and owns
(its packing, ``pack``; its transforms ``DELTA_FIRST``, ``SPAN_LAST``, ``BY_SITE``; its patches):
the checks below stop the import when those change. It lives beside the store, not
in it, so that it is no part of the replay code's digest (``analysis._kernel_version``):
changing it never makes a trace replay again.
"""

from __future__ import annotations

import os
import threading

import numba
import numpy as np
import zstandard

from jbgui.model import store as S

# The store's rules this reader follows; if one changes, this module must follow it.
assert S.DELTA_FIRST == ("first", "depth") and S.SPAN_LAST == ("last",) and "flags" in S.BY_SITE
assert S.REFERENCE["flags"] == "call_site" and S.REFERENCE["last"] == "first"
assert {"first", "last", "depth"} <= set(S.PLANES) and not {"method", "call_site", "flags"} & set(S.PLANES)
assert S._WIDTHS == (1, 2, 4, 8)

# What rows_with() gathers for each row it selects, besides the row's parent.
GATHERED = ("first", "last", "flags")


def rows_with(stored: S.StoredColumns, column: str, value: int, blocks=None, pool=None) -> dict[str, np.ndarray]:
    """The rows of ``blocks`` (default: all) whose ``column`` holds ``value`` (the calls of one
    method), with their ``first``, ``last`` and ``flags``, their ``parent`` (-1 at the top) and
    the parent's value of ``column`` (``parent_value``, -1 at the top): what the store's
    ``decode_rows`` and ``block_tree`` give for those rows, without decoding any block of a
    column whole. A block without such a row decodes ``column`` alone; a block with them decodes
    ``depth``, ``first``, ``last``, ``call_site`` and ``flags`` and one kernel walks it once:
    depths and first events summed as it goes, ``last`` and the parent read at the selected rows
    only, and the flags' chains (stored by call site) followed for those rows' call sites only.
    Blocks run on ``pool`` when given (zstd and the kernel release the GIL)."""
    blocks = range(len(stored.blocks)) if blocks is None else blocks
    files = {}
    try:
        for name in (column, "depth") + GATHERED + ("call_site",):
            if name not in files:
                files[name] = os.open(stored.directory / f"{name}.zst", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as error:
        for fd in files.values():
            os.close(fd)
        raise S.CacheDamaged(f"{stored.directory}: {error.strerror or error}") from error
    try:
        one = lambda i: _rows_with_in_block(stored, files, column, value, i)  # noqa: E731
        parts = [p for p in (pool.map(one, blocks) if pool is not None else map(one, blocks)) if p is not None]
    finally:
        for fd in files.values():
            os.close(fd)
    keys = ("row", *GATHERED, "parent", "parent_value")
    out = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.int64) for k in keys}
    # parents open before their block started: the end-patched rows before it that end after it
    outside = np.flatnonzero(out["parent"] <= -2)
    if len(outside):
        rows, values = stored.patches.get("end", (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        block_of = np.searchsorted(stored.starts, out["row"][outside], side="right") - 1
        for b in np.unique(block_of).tolist():
            sel = outside[block_of == b]
            base = int(stored.starts[b])
            open_rows = np.asarray(rows[(rows < base) & (values > base)], np.int64)
            level = -2 - out["parent"][sel]           # the depth of the parent
            if level.max() >= len(open_rows):
                raise S.CacheDamaged(f"{stored.directory}: block {b}: a call's parent is not among the "
                                   f"{len(open_rows)} calls open at its start")
            out["parent"][sel] = open_rows[level]
        out["parent_value"][outside] = _values_at(stored, column, out["parent"][outside])
    for name in GATHERED:
        got = stored.patches.get(name)
        if got is not None and len(got[0]) and len(out["row"]):
            rows, values = got
            at = np.minimum(np.searchsorted(rows, out["row"]), len(rows) - 1)
            hit = rows[at] == out["row"]
            out[name][hit] = values[at[hit]]
    return out


def _values_at(stored: S.StoredColumns, name: str, rows: np.ndarray) -> np.ndarray:
    """``name`` at ``rows`` (any order), decoding each block that holds one once."""
    out = np.empty(len(rows), np.int64)
    block_of = np.searchsorted(stored.starts, rows, side="right") - 1
    for b in np.unique(block_of).tolist():
        sel = np.flatnonzero(block_of == b)
        lo, hi = int(stored.starts[b]), int(stored.starts[b + 1])
        out[sel] = stored.decode_rows(name, lo, hi)[rows[sel] - lo]
    return out


_LOCAL = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    """This thread's zstd decompressor (one per frame cost a tenth of decoding a block's frames)."""
    d = getattr(_LOCAL, "zstd", None)
    if d is None:
        d = _LOCAL.zstd = zstandard.ZstdDecompressor()
    return d


def _raw_block(stored: S.StoredColumns, fd: int, name: str, i: int) -> tuple[np.ndarray, int, int]:
    """Block ``i`` of a column as packed (:func:`jbgui.model.store.pack`): its bytes, width and whether in planes."""
    offsets = stored.frames[name]
    lo, hi = int(stored.starts[i]), int(stored.starts[i + 1])
    itemsize = stored.dtypes[name].itemsize
    try:
        frame = os.pread(fd, int(offsets[i + 1] - offsets[i]), int(offsets[i]))
        if len(frame) != offsets[i + 1] - offsets[i]:
            raise S.CacheDamaged(f"{stored.directory / name}.zst: cut off before rows {lo}..{hi}")
        raw = _decompressor().decompress(frame, max_output_size=1 + (hi - lo) * itemsize)
    except (zstandard.ZstdError, OSError) as error:
        raise S.CacheDamaged(f"{stored.directory / name}.zst: rows {lo}..{hi}: {error}") from error
    header = raw[0] if raw else 0xFF
    code, planes = header & 0x0F, bool(header & S._PLANES_BIT)
    if header & ~(0x0F | S._PLANES_BIT) or code >= len(S._WIDTHS) or S._WIDTHS[code] > itemsize \
            or len(raw) != 1 + (hi - lo) * S._WIDTHS[code]:
        raise S.CacheDamaged(f"{stored.directory / name}.zst: rows {lo}..{hi}: not a block of {hi - lo} values")
    return np.frombuffer(raw, np.uint8), S._WIDTHS[code], int(planes and S._WIDTHS[code] > 1)


def _packed_values(block: tuple[np.ndarray, int, int], n: int) -> np.ndarray:
    """The values of a block from :func:`_raw_block` (a view of its bytes unless in planes)."""
    raw, width, planes = block
    if planes:
        out = np.empty(n, np.int64)
        S._from_planes(raw, width, n, out)
        return out
    return np.frombuffer(raw.data, f"<i{width}", count=n, offset=1)


def _packed_at_rows(block: tuple[np.ndarray, int, int], n: int, rows: np.ndarray) -> np.ndarray:
    """The values of a block from :func:`_raw_block` at ``rows`` only, as int64."""
    raw, width, planes = block
    if not planes:
        return np.frombuffer(raw.data, f"<i{width}", count=n, offset=1)[rows].astype(np.int64)
    v = np.zeros(len(rows), np.int64)
    for k in range(width):
        v |= raw[1 + k * n + rows].astype(np.int64) << (8 * k)
    if width < 8:
        v -= (v >> (8 * width - 1)) << (8 * width)
    return v


def _rows_with_in_block(stored: S.StoredColumns, files: dict[str, int], column: str, value: int, i: int):
    lo, hi = int(stored.starts[i]), int(stored.starts[i + 1])
    n = hi - lo
    if not n:
        return None
    key = _packed_values(_raw_block(stored, files[column], column, i), n)
    local = np.flatnonzero(key == value).astype(np.int64)
    if not len(local):
        return None
    m = len(local)
    depth, first, last, site, flags = (_raw_block(stored, files[name], name, i)
                                       for name in ("depth", "first", "last", "call_site", "flags"))
    # parents and first events: one walk over the depths' and first events' steps (DELTA_FIRST)
    parent = np.empty(m, np.int64)
    firsts = np.empty(m, np.int64)
    bad = _walk_block(depth[0], depth[1], first[0], first[1], n, local, parent, firsts)
    if bad >= 0:
        raise S.CacheDamaged(f"{stored.directory / 'depth'}.zst: rows {lo}..{hi}: a depth that cannot be at row {lo + bad}")
    inside = parent >= 0
    parent_value = np.full(m, -1, np.int64)
    parent_value[inside] = key[parent[inside]]
    parent[inside] += lo
    lasts = firsts + _packed_at_rows(last, n, local)          # SPAN_LAST
    # flags (BY_SITE): each selected row's call site's chain, summed up to it
    sites = _packed_values(site, n)
    chains = np.unique(sites[local])
    if chains[0] < -1 or chains[-1] >= S.MAX_SITE:
        raise S.CacheDamaged(f"{stored.directory / 'call_site'}.zst: rows {lo}..{hi}: a call site out of range")
    if len(chains) <= 8:
        mask = sites == chains[0]
        for c in chains[1:].tolist():
            mask |= sites == c
        on = np.flatnonzero(mask)
    else:
        on = np.flatnonzero(np.isin(sites, chains, kind="table"))
    order = np.argsort(sites[on], kind="stable")
    values = _packed_at_rows(flags, n, on[order])
    sums = np.cumsum(values)
    head = np.flatnonzero(np.r_[True, np.diff(sites[on][order]) != 0])    # each chain's first row
    sums -= np.repeat(sums[head] - values[head], np.diff(np.r_[head, len(order)]))
    flag_of = np.empty(len(on), np.int64)
    flag_of[order] = sums
    flags_ = flag_of[np.searchsorted(on, local)]
    return {"row": local + lo, "first": firsts, "last": lasts, "flags": flags_, "parent": parent,
            "parent_value": parent_value}


@numba.njit(cache=True, nogil=True)
def _plane_value(raw, width, n, i):  # pragma: no cover - numba
    """Value ``i`` of a block of ``n`` values stored as byte planes (:func:`jbgui.model.store.pack`; plain bytes at
    width 1), sign-extended."""
    if width == 1:
        v = np.int64(raw[1 + i])
        return v - ((v >> 7) << 8)
    if width == 2:
        v = np.int64(raw[1 + i]) | (np.int64(raw[1 + n + i]) << 8)
        return v - ((v >> 15) << 16)
    if width == 4:
        v = (np.int64(raw[1 + i]) | (np.int64(raw[1 + n + i]) << 8) | (np.int64(raw[1 + 2 * n + i]) << 16)
             | (np.int64(raw[1 + 3 * n + i]) << 24))
        return v - ((v >> 31) << 32)
    v = np.int64(0)
    for k in range(8):
        v |= np.int64(raw[1 + k * n + i]) << (8 * k)
    return v


@numba.njit(cache=True, nogil=True, inline="always")
def _plane1(raw, n, i):  # pragma: no cover - numba
    v = np.int64(raw[1 + i])
    return v - ((v >> 7) << 8)


@numba.njit(cache=True, nogil=True, inline="always")
def _plane2(raw, n, i):  # pragma: no cover - numba
    v = np.int64(raw[1 + i]) | (np.int64(raw[1 + n + i]) << 8)
    return v - ((v >> 15) << 16)


@numba.njit(cache=True, nogil=True, inline="always")
def _plane4(raw, n, i):  # pragma: no cover - numba
    v = (np.int64(raw[1 + i]) | (np.int64(raw[1 + n + i]) << 8) | (np.int64(raw[1 + 2 * n + i]) << 16)
         | (np.int64(raw[1 + 3 * n + i]) << 24))
    return v - ((v >> 31) << 32)


@numba.njit(cache=True, nogil=True, inline="always")
def _plane8(raw, n, i):  # pragma: no cover - numba
    v = np.int64(0)
    for k in range(8):
        v |= np.int64(raw[1 + k * n + i]) << (8 * k)
    return v


def _rows_walker(depth_width: int, first_width: int):
    """:func:`_walk_block`'s loop for blocks of these widths (0: any, read at run time). A loop of
    its own per width reads each plane directly: the width tested on every row cost 1.6 to 2.5
    times the time on javac's blocks (depth 1 or 2 bytes, first 4)."""
    read = {1: _plane1, 2: _plane2, 4: _plane4, 8: _plane8}
    read_depth = read.get(depth_width, _plane_value)
    read_first = read.get(first_width, _plane_value)
    generic = not (depth_width and first_width)

    @numba.njit(cache=True, nogil=True)
    def walk(depth, dw, first, fw, n, local, parent, firsts, stack, d0):  # pragma: no cover - numba
        m = len(local)
        d = np.int64(0)
        f = np.int64(0)
        prev = d0
        j = 0
        for i in range(n):
            if generic:
                d += _plane_value(depth, dw, n, i)
                f += _plane_value(first, fw, n, i)
            else:
                d += read_depth(depth, n, i)
                f += read_first(first, n, i)
            if d < 0 or d > prev + 1:
                return i
            prev = d
            stack[d] = i
            if j < m and local[j] == i:
                firsts[j] = f
                if d == 0:
                    parent[j] = -1
                else:
                    p = stack[d - 1]
                    parent[j] = p if p >= 0 else -2 - (d - 1)
                j += 1
        return -1
    return walk


_walk_any = _rows_walker(0, 0)
_walk_d1_f4 = _rows_walker(1, 4)
_walk_d2_f4 = _rows_walker(2, 4)
_walk_d1_f8 = _rows_walker(1, 8)
_walk_d2_f8 = _rows_walker(2, 8)


@numba.njit(cache=True, nogil=True)
def _walk_block(depth, depth_width, first, first_width, n, local, parent, firsts):  # pragma: no cover - numba
    """One walk over a block's ``depth`` and ``first`` (both :data:`jbgui.model.store.DELTA_FIRST`, in
    :data:`jbgui.model.store.PLANES`): for each row of ``local`` (ascending) its first event and its parent, the
    latest row one level up (keeping the latest row at each depth); where no row of the block
    is, a call open before the block: ``-2 - its depth``; -1 at the top. Returns -1, or the first
    row whose depth cannot follow the previous row's. The widths of big traces (depth 1 or 2
    bytes, first 4 or 8: a block's first row holds its absolute event) have loops of their own
    (:func:`_rows_walker`)."""
    if n == 0:
        return -1
    d0 = _plane_value(depth, depth_width, n, 0)
    if d0 < 0 or d0 > (1 << 24):
        return 0
    stack = np.empty(d0 + n + 1, np.int64)
    for k in range(d0 + 1):
        stack[k] = -1
    if depth_width == 1 and first_width == 4:
        return _walk_d1_f4(depth, 1, first, 4, n, local, parent, firsts, stack, d0)
    if depth_width == 2 and first_width == 4:
        return _walk_d2_f4(depth, 2, first, 4, n, local, parent, firsts, stack, d0)
    if depth_width == 1 and first_width == 8:
        return _walk_d1_f8(depth, 1, first, 8, n, local, parent, firsts, stack, d0)
    if depth_width == 2 and first_width == 8:
        return _walk_d2_f8(depth, 2, first, 8, n, local, parent, firsts, stack, d0)
    return _walk_any(depth, depth_width, first, first_width, n, local, parent, firsts, stack, d0)
    _sums_at(first, first_width, n, local, firsts)
    depths = np.empty(n, np.int64)
    _sums_at(depth, depth_width, n, np.arange(n), depths)
    d0 = depths[0]
    if d0 < 0 or d0 > (1 << 24):
        return 0
    stack = np.empty(d0 + n + 1, np.int64)
    for k in range(d0 + 1):
        stack[k] = -1
    prev = d0
    j = 0
    for i in range(n):
        d = depths[i]
        if d < 0 or d > prev + 1:
            return i
        prev = d
        stack[d] = i
        if j < m and local[j] == i:
            if d == 0:
                parent[j] = -1
            else:
                p = stack[d - 1]
                parent[j] = p if p >= 0 else -2 - (d - 1)
            j += 1
    return -1
    d0 = _step(depth, depth_width, n, 0)
    if d0 < 0 or d0 > (1 << 24):
        return 0
    stack = np.empty(d0 + n + 1, np.int64)
    for k in range(d0 + 1):
        stack[k] = -1
    d = np.int64(0)
    f = np.int64(0)
    prev = d0
    j = 0
    for i in range(n):
        d += _step(depth, depth_width, n, i)
        f += _step(first, first_width, n, i)
        if d < 0 or d > prev + 1:
            return i
        prev = d
        stack[d] = i
        if j < m and local[j] == i:
            firsts[j] = f
            if d == 0:
                parent[j] = -1
            else:
                p = stack[d - 1]
                parent[j] = p if p >= 0 else -2 - (d - 1)
            j += 1
    return -1
