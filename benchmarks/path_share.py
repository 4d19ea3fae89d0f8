"""How many of a trace's events "path ends" would spare, before building them.

    PYTHONPATH=. .venv/bin/python benchmarks/path_share.py TRACE [TRACE ...]

The proposal measured here (docs/recorder-cost.md, "Path ends, and the kernel's floor, measured"): a method without a
loop visits its blocks in ascending order, each at most once per call, so the blocks one call ran
are a set, which fits in the 11 block bits that an end word leaves at 0 today. Such a method's
block probes would add a bit to a local (``iinc``, a register) instead of storing a word, and the
exit probe would store the end word with the bits set; readers would put the blocks back in
before the end, as they put back a first block marked START_ENTRY_IMPLIED. The trace must be
recorded with the instructions listed (``jbtrace record --instructions``). Printed per trace:

- ``no calls``: methods without a loop and without a call or anything that could put another
  event on the thread before the end (the rules of docs/loop-events.md for a loop's body, less
  the ones about handlers), of at most 12 blocks: their block events after block 0 (which the
  start already implies), all spared.
- ``+ with calls``: also such methods that make calls, if the pending bits were stored as one
  word before each call and at the end. Estimated: their block events after block 0, less one
  word per call they made (an upper bound on the words the flushes would store).
- the methods that spare the most.

An estimate, not a replay: a call that ends by an exception would store its blocks in the handler,
which this ignores (exceptions are rare in the traces measured). It reads the analysis the explorer
builds (replayed once and cached).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import numpy as np

from jbgui.model import cfg as C
from jbgui.model.analysis import Analysis

import listed_trace

# Bits an end word leaves free (its block bits), one per block after block 0.
PATH_BLOCKS_MAX = 12

# Instructions after which something other than the method's own blocks may be recorded before its
# end (a class load and its initializer, a monitor's stamp, a thrown exception's handler).
_DISQUALIFY = re.compile(r"^\s*\d+\s+(new|anewarray|multianewarray|getstatic|putstatic|checkcast|"
                         r"instanceof|monitorenter|monitorexit|athrow|jsr|ret)\b")
_INVOKE = re.compile(r"^\s*\d+\s+invoke\w+\b")


@dataclass
class PathRow:
    method: str
    calls: int
    blocks: int          # the method's block count
    events: int          # its block events after block 0
    spared: int          # events less the flush words (0 without calls)
    made_calls: int      # calls it made (invoke instructions executed)


def _invokes(listing: str) -> int | None:
    """How many invoke instructions a block holds; None when it breaks the rules."""
    invokes = 0
    for line in listing.splitlines():
        if _DISQUALIFY.match(line) or listed_trace.loads_class(line):
            return None
        if _INVOKE.match(line):
            invokes += 1
    return invokes


def path_rows(analysis: Analysis) -> tuple[int, list[PathRow]]:
    """The trace's event total, and one row per qualifying method that ran a block after its first."""
    st = analysis.statics
    total = sum(t.events for t in analysis.threads)
    counts = analysis.block_counts
    rows = []
    for m in sorted({int(st.b_method[gb]) for gb in np.flatnonzero(counts)}):
        n = int(st.m_blocks[m])
        base = int(st.m_block_base[m])
        if n < 2 or n > PATH_BLOCKS_MAX or base < 0:
            continue
        if any(st.b_is_handler[base + b] or len(st.block_handlers(base + b)) for b in range(n)):
            continue
        listings = [st.instructions.get(base + b) for b in range(n)]
        invokes = [None if listing is None else _invokes(listing) for listing in listings]
        if any(k is None for k in invokes):
            continue
        graph = C.method_cfg(analysis, m)
        if graph.loops:
            continue
        events = int(sum(int(counts[base + b]) for b in range(1, n)))
        if events == 0:
            continue
        # Calls made: each block's executions times its invoke instructions.
        made = sum(int(counts[base + b]) * invokes[b] for b in range(n))
        rows.append(PathRow(graph.name, int(graph.counts[0]), n, events, max(events - made, 0), made))
    return total, rows


def measure(path: str, top: int) -> None:
    analysis = listed_trace.open_listed(path)
    total, rows = path_rows(analysis)
    plain = sum(r.spared for r in rows if r.made_calls == 0)
    with_calls = sum(r.spared for r in rows)
    print(f"{path}: {total:,} events")
    print(f"  no calls:      {plain:,} spared ({plain / max(total, 1):.1%}) in "
          f"{sum(1 for r in rows if r.made_calls == 0):,} methods")
    print(f"  + with calls:  {with_calls:,} spared ({with_calls / max(total, 1):.1%}) in {len(rows):,} methods")
    for r in sorted(rows, key=lambda r: -r.spared)[:top]:
        print(f"    {r.spared / max(total, 1):6.1%}  {r.method}: {r.blocks} blocks, {r.calls:,} calls, "
              f"{r.events:,} block events after the first" + (f", {r.made_calls:,} calls made" if r.made_calls else ""))


def main(argv: list[str] | None = None) -> int:
    return listed_trace.main(argv, "path_share", __doc__, measure, "methods", 10)


if __name__ == "__main__":
    sys.exit(main())
