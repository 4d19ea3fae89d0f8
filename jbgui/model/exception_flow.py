"""Exception flow: every exception replay recorded, as a chain — the block that threw it, each
frame it unwound with the block it left, and the handler block that caught it (or none) — and
those chains grouped by (type, throw site, catch site).

The chains come from the replay's exception records (``ThreadReplay.exceptions``,
``analysis.EXCEPTION_DTYPE``: the first frame the exception left, the frame that caught it, and
the events of both): the unwound frames are the throwing row and its ancestors below the catching
row, exactly the rows replay flagged ``EXCEPTIONAL``. The block a frame left is the caller block
of the frame below it (the call the exception came out of); the throwing frame's block is its last
own block before the exception; the handler is the block at the catch event. A handler block that
only stores the exception and jumps on (at most two bytecodes, no calls) is flagged as *caught and
ignored*.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from jbgui.model import derived, layout
from jbgui.model.analysis import CATCH_CLASS_INIT, CATCH_UNCAUGHT, Analysis, Flag, ThreadReplay
from jbgui.model.call_blocks import stream_index
from jbgui.model.call_queries import children_batch
from jbgui.model.method_names import display_name

_BACK_WINDOW = 4096
_CONTROL_CHANGING = 6


@dataclass
class ExceptionChain:
    thread: int
    type: str
    throw_row: int
    thrown_in: int              # method id (0: unknown)
    throw_block: int            # local block index, -1 unknown
    unwound: list[tuple[int, int, int]]   # (row, method, local block left), thrower first
    catch_row: int              # -1 uncaught, -2 consumed by class initialization
    caught_in: int              # method id, 0 when not caught in a traced frame
    handler_block: int          # local block index, -1
    ignored: bool               # the handler does nothing with it
    throw_event: int
    catch_event: int


def exception_chains(analysis: Analysis, limit: int | None = None) -> list[ExceptionChain]:
    """Every recorded exception of every thread as a chain, in thread and event order."""
    out = []
    for thread in analysis.threads:
        for rec in thread.exceptions:
            out.append(_chain(analysis, thread, rec))
            if limit is not None and len(out) >= limit:
                return out
    return out


def _chain(analysis: Analysis, thread: ThreadReplay, rec) -> ExceptionChain:
    st = analysis.statics
    calls = thread.calls
    throw_row, catch_row = int(rec["throw_row"]), int(rec["catch_row"])
    throw_event, catch_event = int(rec["throw_event"]), int(rec["catch_event"])
    exc_class = int(rec["exc_class"])
    if not exc_class and throw_row >= 0:
        exc_class = calls.at("exc_class", throw_row)
    unwound = []
    if throw_row != catch_row and throw_row >= 0:
        r = throw_row
        below = -1
        while r >= 0 and r != catch_row:
            if calls.at("flags", r) & (Flag.NATIVE | Flag.UNTRACED):
                # A call into native or untraced code the exception passed through: not a frame
                # replay saw (nor flags); the frame above left the block that made that call.
                below = r
                r = calls.at("parent", r)
                continue
            method = calls.at("method", r)
            if below < 0:
                left = _own_block_before(analysis, thread, r, calls.at("last", r))
            else:
                left = _local(st, method, calls.at("caller_block", below))
            unwound.append((r, method, left))
            below = r
            r = calls.at("parent", r)
    thrown_in = calls.at("method", throw_row) if throw_row >= 0 else 0
    if unwound:
        throw_block = unwound[0][2]
    elif throw_row >= 0:
        throw_block = _own_block_before(analysis, thread, throw_row, throw_event - 1)
    else:
        throw_block = -1
    caught_in, handler, ignored = 0, -1, False
    if catch_row >= 0:
        caught_in = calls.at("method", catch_row)
        handler = _block_at(analysis, thread, caught_in, catch_event)
        ignored = handler >= 0 and is_empty_handler(st, caught_in, handler)
    return ExceptionChain(thread.index, st.class_name_of_id(exc_class), throw_row, thrown_in, throw_block,
                          unwound, catch_row, caught_in, handler, ignored, throw_event, catch_event)


def is_empty_handler(st, method: int, local: int) -> bool:
    """A handler block that stores (or pops) the exception and goes on: no calls, at most two
    bytecodes (``astore``, ``goto``), and not the catch-all handler of a ``finally`` (which
    rethrows further on). A short block can also be a handler whose code begins at a jump target
    (a loop): with a listing, its instructions must be only a store/pop and a jump."""
    gb = int(st.m_block_base[method]) + local
    if int(st.b_metrics[gb, 0]) > 2 or len(st.block_sites(gb)):
        return False
    entries = np.flatnonzero(st.h_target == gb)
    if len(entries) and bool(np.all(st.h_catch_all[entries])):
        return False
    listing = st.instructions.get(gb)
    if listing:
        ops = [line.split()[1] for line in listing.strip().splitlines() if len(line.split()) > 1]
        return all(op.startswith(("astore", "pop", "goto")) for op in ops)
    return True


def _local(st, method: int, gb: int) -> int:
    base = int(st.m_block_base[method])
    return gb - base if base >= 0 and 0 <= gb - base < int(st.m_blocks[method]) else -1


def _words(analysis, thread, lo: int, hi: int) -> np.ndarray:
    return stream_index(analysis, thread).read(max(lo, 0), hi)


def _block_of(st, word: int) -> int:
    if (word >> layout.TYPE_SHIFT) != layout.TYPE_BLOCK:
        return -1
    return st.block_of_word(word & ((1 << layout.TYPE_SHIFT) - 1))


def _block_at(analysis, thread, method: int, event: int) -> int:
    """The block of ``method`` entered at ``event`` (or the next of its blocks in a few events)."""
    st = analysis.statics
    words = _words(analysis, thread, event, event + 8)
    for w in words.tolist():
        gb = _block_of(st, w)
        if gb >= 0 and int(st.b_method[gb]) == method:
            return _local(st, method, gb)
    return -1


def _own_block_before(analysis, thread, row: int, event: int) -> int:
    """The last block of the call's own (not in a callee) at or before ``event``."""
    st = analysis.statics
    calls = thread.calls
    method = calls.at("method", row)
    lo_row = calls.at("first", row)

    def first(c: int) -> int:
        return calls.at("first", c)

    # The Java callees of the row that start before the event (through native or untraced calls,
    # whose own range may hold an event of the row): their ranges are not the row's own events.
    # (single values from the blocks that hold them: this runs for one exception's frames)
    children, _ = children_batch(calls, row, -1, 1 << 62)
    spans = []
    stack = list(children[::-1])
    while stack:
        c = int(stack.pop())
        if first(c) > event:
            continue
        if calls.at("flags", c) & (Flag.NATIVE | Flag.UNTRACED):
            kids, _ = children_batch(calls, c, -1, 1 << 62)
            stack.extend(kids[::-1].tolist())
            continue
        spans.append((first(c), calls.at("last", c)))
    spans.sort()
    starts = np.array([a for a, _b in spans], np.int64)
    ends = np.array([b for _a, b in spans], np.int64)
    page_base = st.page_base.astype(np.int64)
    hi = event + 1
    while hi > lo_row:
        lo = max(lo_row, hi - _BACK_WINDOW)
        words = _words(analysis, thread, lo, hi).astype(np.int64)
        ev = np.arange(lo, lo + len(words))
        k = np.searchsorted(starts, ev, side="right") - 1
        inside = (k >= 0) & (ev <= ends[np.maximum(k, 0)]) if len(starts) else np.zeros(len(ev), np.bool_)
        page = (words >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
        block = (words >> layout.TYPE_SHIFT) == layout.TYPE_BLOCK
        base = np.where(page < len(page_base), page_base[np.minimum(page, len(page_base) - 1)], -1)
        gb = base + (words & (layout.BLOCKS_PER_PAGE - 1))
        valid = block & ~inside & (base >= 0) & (gb < st.n_blocks)
        mine = np.flatnonzero(valid)
        mine = mine[st.b_method[gb[mine]] == method]
        if len(mine):
            return _local(st, method, int(gb[mine[-1]]))
        hi = lo
    return -1


CACHE_VERSION = 4      # 4: the block each unwound frame left (unwound_blocks), part of the group


def grouped(analysis: Analysis, chains: list[ExceptionChain] | None = None, use_cache: bool = True) -> list[dict]:
    """The ``jbtrace exceptions`` rows: chains grouped by type, throw site, the unwound methods
    with the block each left (``unwound_blocks``, -1 unknown) and catch site, most frequent
    first. Without ``chains``, kept beside the analysis cache
    (following every exception reads a little of the stream around each)."""
    if chains is None:
        directory = analysis.cache_dir / "blockviews" if use_cache else None
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

        def compute() -> dict[str, np.ndarray]:
            rows = _group(analysis, exception_chains(analysis))
            return {"json": np.frombuffer(json.dumps(rows).encode("utf-8"), np.uint8)}
        arrays = derived.load_or_compute(directory, f"exceptions-v{CACHE_VERSION}.npz", ("json",), compute)
        return json.loads(bytes(arrays["json"]).decode("utf-8"))
    return _group(analysis, chains)


def _group(analysis: Analysis, chains: list[ExceptionChain]) -> list[dict]:
    st = analysis.statics
    groups: dict[tuple, dict] = {}
    for c in chains:
        unwound = [display_name(st, m) if m else "?" for _r, m, _b in c.unwound]
        left = [int(b) for _r, _m, b in c.unwound]
        if c.catch_row == CATCH_UNCAUGHT:
            caught = None
        elif c.catch_row == CATCH_CLASS_INIT:
            caught = "<class initialization>"
        else:
            caught = display_name(st, c.caught_in) if c.caught_in else "?"
        key = (c.type, c.thrown_in, c.throw_block, tuple(unwound), tuple(left), caught, c.handler_block)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"type": c.type, "thrown_in": display_name(st, c.thrown_in) if c.thrown_in else "?",
                               "throw_block": c.throw_block, "unwound": unwound, "unwound_blocks": left,
                               "caught_in": caught,
                               "handler_block": c.handler_block if c.catch_row >= 0 else None,
                               "ignored": c.ignored, "count": 0, "example": f"{c.thread}:{c.throw_row}"}
        g["count"] += 1
    return sorted(groups.values(), key=lambda g: -g["count"])
