"""How many of a trace's events loop events would spare (docs/loop-events.md), before building them.

    PYTHONPATH=. .venv/bin/python benchmarks/loop_share.py TRACE [TRACE ...]

The trace must be recorded with the instructions listed (``jbtrace record --instructions``): the
rules of docs/loop-events.md look at each instruction of a loop. For every innermost natural loop
of every method that ran (:mod:`jbgui.model.cfg`, with the run's exact block and edge counts) it
applies those rules and, for the loops that qualify, counts the block events of their bodies, and
the two words (loop word and count) each entry of the loop would still store. Printed per trace:

- ``loops``: the block events of qualifying loops, less two words per entry, as a share of all
  events: what the program's threads would no longer store.
- ``+ static leaves``: the same where a loop may also call a static method of one block that
  calls nothing (the extension in docs/loop-events.md): the callee's start and end words (and
  its implied block) go into the loop's cycle too.
- the loops that spare the most, with their method and line.

An estimate, not a replay: the words a loop stores today depend on block elision, which this
ignores (every block of a body counts as one event), and an entry's exit word pair is counted even
for a loop entered once. It reads the analysis the explorer builds (replayed once and cached).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import numpy as np

from jbgui.model import cfg as C
from jbgui.model import statics as S
from jbgui.model.analysis import Analysis

import listed_trace

# Instructions after which something other than the loop's own blocks may be recorded on the
# thread (a class load, a call, a handler), per docs/loop-events.md.
_DISQUALIFY = re.compile(r"^\s*\d+\s+(invoke\w+|new|anewarray|multianewarray|getstatic|putstatic|checkcast|"
                         r"instanceof|monitorenter|monitorexit|athrow|tableswitch|lookupswitch|\w*return)\b")
_FIELD = re.compile(r"^\s*\d+\s+(getfield|putfield)\s+(\S+)\.")
_STATIC_CALL = re.compile(r"^\s*\d+\s+invokestatic\s+(\S+)\.([^.(\s]+)(\(\S*)")


def _qualifies(st, gbs: list[int], owner: str, leaves: dict | None) -> list[int] | None:
    """The leaf-call words each of a loop body's blocks adds per execution (all 0 without
    ``leaves``), or None when a block breaks the rules."""
    extra = []
    for gb in gbs:
        if len(st.block_handlers(gb)) or st.b_is_handler[gb]:
            return None
        listing = st.instructions.get(gb)
        if listing is None:
            return None
        words = 0
        for line in listing.splitlines():
            call = _STATIC_CALL.match(line)
            if call and leaves is not None:
                leaf = leaves.get((call.group(1), call.group(2), call.group(3)))
                if leaf is None:
                    return None
                words += leaf
                continue
            if _DISQUALIFY.match(line):
                return None
            field = _FIELD.match(line)
            if field and field.group(2) != owner:
                return None
            if listed_trace.loads_class(line):
                return None
        extra.append(words)
    return extra


@dataclass
class LoopRow:
    method: str
    line: str
    entries: int
    events: int          # the block events of the body, and with leaves their calls' words
    spared: int          # events less two words per entry
    with_leaves: bool    # qualifies only with the static-leaf extension


def _static_leaves(st) -> dict:
    """(class, name, descriptor) -> words per call, for static methods of one block that call,
    allocate and throw nothing: start and end, and the block's word (implied by the start)."""
    out = {}
    for m in range(1, len(st.m_blocks)):
        if st.m_blocks[m] != 1 or st.m_block_base[m] < 0 or not st.m_flags[m] & S.M_STATIC:
            continue
        gb = int(st.m_block_base[m])
        listing = st.instructions.get(gb)
        if listing is None or st.b_site_begin[gb + 1] > st.b_site_begin[gb]:
            continue
        if any(_DISQUALIFY.match(line) and not re.match(r"^\s*\d+\s+\w*return\b", line)
               for line in listing.splitlines()):
            continue
        out[(st.c_name[int(st.m_class[m])], st.m_name[m], st.m_desc[m])] = 3
    return out


def loop_rows(analysis: Analysis) -> tuple[int, list[LoopRow]]:
    """The trace's event total, and one row per qualifying innermost loop that spares events."""
    st = analysis.statics
    total = sum(t.events for t in analysis.threads)
    counts = analysis.block_counts
    leaves = _static_leaves(st)
    rows = []
    for m in sorted({int(st.b_method[gb]) for gb in np.flatnonzero(counts)}):
        graph = C.method_cfg(analysis, m)
        if not graph.loops:
            continue
        parents = {lp.parent for lp in graph.loops}
        owner = st.c_name[int(st.m_class[m])]
        for i, loop in enumerate(graph.loops):
            body = set(loop.body)
            if i in parents or len(loop.back_edges) != 1:
                continue
            inside = [[e.dst for e in graph.edges if e.src == b and e.dst in body and e.kind != C.EXCEPTION]
                      for b in loop.body]
            if any(len(s) != 1 for s in inside):
                continue   # the cycle is not one path
            gbs = [graph.block_base + b for b in loop.body]
            back = sum(e.count for e in graph.edges if (e.src, e.dst) in loop.back_edges)
            entries = int(graph.counts[loop.header]) - back
            extra = _qualifies(st, gbs, owner, None)
            with_leaves = extra is None
            if with_leaves:
                extra = _qualifies(st, gbs, owner, leaves)
                if extra is None:
                    continue
            events = int(sum((1 + w) * int(graph.counts[b]) for b, w in zip(loop.body, extra)))
            if events - 2 * entries > 0:
                rows.append(LoopRow(graph.name, graph.lines[loop.header].split(" ")[0] if graph.lines[loop.header] else "?",
                                    entries, events, events - 2 * entries, with_leaves))
    return total, rows


def measure(path: str, top: int) -> None:
    analysis = listed_trace.open_listed(path)
    total, rows = loop_rows(analysis)
    plain = sum(r.spared for r in rows if not r.with_leaves)
    # A loop that calls no leaf has its leaf words 0: its row counts for both.
    leafy = sum(r.spared for r in rows)
    print(f"{path}: {total:,} events")
    print(f"  loops:            {plain:,} spared ({plain / max(total, 1):.1%})")
    print(f"  + static leaves:  {leafy:,} spared ({leafy / max(total, 1):.1%})")
    for r in sorted(rows, key=lambda r: -r.spared)[:top]:
        print(f"    {r.spared / max(total, 1):6.1%}  {r.method} line {r.line}: {r.events:,} events in "
              f"{r.entries:,} entries" + (" (with its leaf calls)" if r.with_leaves else ""))


def main(argv: list[str] | None = None) -> int:
    return listed_trace.main(argv, "loop_share", __doc__, measure, "loops", 8)


if __name__ == "__main__":
    sys.exit(main())
