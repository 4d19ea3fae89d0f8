"""A method's control-flow graph with exact counts: blocks, edges, dominators, natural loops.

Nodes are the method's basic blocks (static.xml). Edges come from three places:

- the transitions replay counted (every edge taken at least once, with its count);
- the static information: a block whose last instruction does not always change control
  (``control_changing`` metric 0) falls through to the block that starts where it ends, and, when
  the trace lists instructions, a branch names its target offset: these give never-taken edges;
- the exception handler lists: an edge from each covered block to its handler (kind
  ``exception``), counted when an exception was caught that way.

An edge is a ``back`` edge when its target dominates its source; the natural loop of a header is
the header with every block that reaches one of its back edges' sources without passing it.
Counts are for the whole run, or for one call (:func:`call_cfg`) from its own path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from jbgui.model.analysis import Analysis, ThreadReplay
from jbgui.model.block_paths import LoopTables, call_path
from jbgui.model.statics import Statics

NORMAL, BACK, EXCEPTION = "normal", "back", "exception"
_CONTROL_CHANGING = 6   # index in layout.METRIC_NAMES
_BRANCH = re.compile(r"^\s*\d+\s+(if\w*|goto(?:_w)?|jsr(?:_w)?)\s+(\d+)\s*$")


@dataclass
class Edge:
    src: int
    dst: int
    count: int
    kind: str
    static: bool = False     # known from the code, not only because it was taken


@dataclass
class Loop:
    header: int
    body: list[int]
    back_edges: list[tuple[int, int]]
    parent: int = -1         # index of the enclosing loop, -1


@dataclass
class Cfg:
    """The graph of one method; blocks are local indices 0..n-1."""

    method: int
    name: str
    block_base: int
    counts: np.ndarray
    first_offset: list[int]
    last_offset: list[int]
    lines: list[str]
    bytecodes: list[int]
    handler: list[bool]
    edges: list[Edge]
    idom: list[int]
    loops: list[Loop] = field(default_factory=list)
    call: str | None = None  # THREAD:ROW when the counts are one call's

    @property
    def n_blocks(self) -> int:
        return len(self.counts)

    def loop_tables(self) -> LoopTables:
        """The loops in :mod:`jbgui.model.block_paths`' kernel layout."""
        n = self.n_blocks
        tables = LoopTables.empty(n)
        if not self.loops:
            return tables
        in_body = np.zeros((len(self.loops), max(n, 1)), np.bool_)
        for i, loop in enumerate(self.loops):
            in_body[i, loop.body] = True
            tables.header_of[loop.header] = i
        # innermost: the smallest loop holding the block
        sizes = [len(loop.body) for loop in self.loops]
        for i in sorted(range(len(self.loops)), key=lambda i: -sizes[i]):
            tables.innermost[self.loops[i].body] = i
        tables.parent = np.array([loop.parent for loop in self.loops], np.int64)
        tables.in_body = in_body
        return tables

    def to_json(self) -> dict:
        """The ``jbtrace cfg --format json`` shape."""
        out = {"method": self.name,
               "blocks": [{"id": b, "count": int(self.counts[b]), "first_offset": self.first_offset[b],
                           "lines": [int(x) for x in self.lines[b].split()]} for b in range(self.n_blocks)],
               "edges": [{"from": e.src, "to": e.dst, "count": e.count, "kind": e.kind} for e in self.edges],
               "loops": [{"header": lp.header, "body": lp.body} for lp in self.loops]}
        if self.call:
            out["call"] = self.call
        return out


def method_cfg(analysis: Analysis, method: int) -> Cfg:
    """The graph of ``method`` with whole-run counts."""
    st = analysis.statics
    base, n = int(st.m_block_base[method]), int(st.m_blocks[method])
    counts = np.asarray(analysis.block_counts[base:base + n], np.int64) if n else np.zeros(0, np.int64)
    return _build(st, method, counts, _run_edges(analysis, method))


def _run_edges(analysis: Analysis, method: int) -> dict[tuple[int, int], int]:
    """The transitions between the method's blocks the replay counted over the whole run."""
    st = analysis.statics
    base, n = int(st.m_block_base[method]), int(st.m_blocks[method])
    taken: dict[tuple[int, int], int] = {}
    if n and len(analysis.edges):
        e = analysis.edges
        sel = (e[:, 0] >= base) & (e[:, 0] < base + n) & (e[:, 1] >= base) & (e[:, 1] < base + n)
        for a, b, c in e[sel]:
            taken[(int(a) - base, int(b) - base)] = int(c)
    return taken


def call_cfg(analysis: Analysis, thread: ThreadReplay, row: int) -> Cfg:
    """The graph of the call's method with the counts of that call alone."""
    path = call_path(analysis, thread, row)
    st = analysis.statics
    n = int(st.m_blocks[path.method])
    counts = np.bincount(path.blocks, minlength=n)[:n].astype(np.int64) if n else np.zeros(0, np.int64)
    # Every edge the run took is drawn; those this call did not take count 0 here.
    taken = {key: 0 for key in _run_edges(analysis, path.method)}
    for a, b in zip(path.blocks[:-1].tolist(), path.blocks[1:].tolist()):
        taken[(a, b)] = taken.get((a, b), 0) + 1
    cfg = _build(st, path.method, counts, taken)
    cfg.call = f"{thread.index}:{row}"
    return cfg


def _build(st: Statics, method: int, counts: np.ndarray, taken: dict[tuple[int, int], int]) -> Cfg:
    base, n = int(st.m_block_base[method]), int(st.m_blocks[method])
    starts = [int(st.b_start[base + i]) for i in range(n)]
    ends = [int(st.b_end[base + i]) for i in range(n)]
    by_start = {s: i for i, s in enumerate(starts)}
    static: set[tuple[int, int]] = set()
    handlers: set[tuple[int, int]] = set()
    for i in range(n):
        gb = base + i
        if st.b_metrics[gb, _CONTROL_CHANGING] == 0 and ends[i] in by_start:
            static.add((i, by_start[ends[i]]))
        listing = st.instructions.get(gb)
        if listing:
            match = _BRANCH.match(listing.strip().splitlines()[-1])
            if match and int(match.group(2)) in by_start:
                static.add((i, by_start[int(match.group(2))]))
        for h in st.block_handlers(gb):
            target = int(st.h_target[h])
            if base <= target < base + n:
                handlers.add((i, target - base))
    pairs = set(taken) | static | handlers
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in sorted(pairs):
        succ[a].append(b)
    idom = dominators(n, succ)
    edges = []
    for a, b in sorted(pairs):
        if (a, b) in handlers and (a, b) not in static:
            kind = EXCEPTION
        elif dominates(idom, b, a):
            kind = BACK
        else:
            kind = NORMAL
        edges.append(Edge(a, b, taken.get((a, b), 0), kind, (a, b) in static or (a, b) in handlers))
    cfg = Cfg(method=method, name=st.method_qualified(method), block_base=base, counts=counts,
              first_offset=starts, last_offset=ends, lines=[st.b_lines[base + i] for i in range(n)],
              bytecodes=[int(st.b_metrics[base + i, 0]) for i in range(n)],
              handler=[bool(st.b_is_handler[base + i]) for i in range(n)], edges=edges, idom=idom)
    cfg.loops = natural_loops(n, succ, [(e.src, e.dst) for e in edges if e.kind == BACK])
    return cfg


def dominators(n: int, succ: list[list[int]], entry: int = 0) -> list[int]:
    """Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm); -1 for the entry
    and for blocks not reachable from it."""
    if n == 0:
        return []
    order: list[int] = []
    seen = [False] * n
    stack = [(entry, 0)]
    seen[entry] = True
    while stack:   # iterative depth-first search for the postorder
        node, i = stack.pop()
        if i < len(succ[node]):
            stack.append((node, i + 1))
            nxt = succ[node][i]
            if not seen[nxt]:
                seen[nxt] = True
                stack.append((nxt, 0))
        else:
            order.append(node)
    rpo = order[::-1]
    number = {b: i for i, b in enumerate(rpo)}
    preds: list[list[int]] = [[] for _ in range(n)]
    for a in range(n):
        for b in succ[a]:
            if seen[a]:
                preds[b].append(a)
    idom = [-1] * n
    idom[entry] = entry

    def intersect(a: int, b: int) -> int:
        while a != b:
            while number[a] > number[b]:
                a = idom[a]
            while number[b] > number[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            new = -1
            for p in preds[b]:
                if idom[p] != -1:
                    new = p if new == -1 else intersect(p, new)
            if new != idom[b]:
                idom[b] = new
                changed = True
    idom[entry] = -1
    return idom


def dominates(idom: list[int], a: int, b: int) -> bool:
    """Whether block ``a`` dominates block ``b``."""
    if not 0 <= b < len(idom):
        return False
    while b != -1:
        if b == a:
            return True
        b = idom[b]
    return False


def natural_loops(n: int, succ: list[list[int]], back_edges: list[tuple[int, int]]) -> list[Loop]:
    """One loop per header: the header and every block reaching a back edge's source without
    passing the header; ``parent`` is the smallest other loop holding the header."""
    preds: list[list[int]] = [[] for _ in range(n)]
    for a in range(n):
        for b in succ[a]:
            preds[b].append(a)
    by_header: dict[int, list[tuple[int, int]]] = {}
    for a, b in back_edges:
        by_header.setdefault(b, []).append((a, b))
    loops = []
    for header, backs in sorted(by_header.items()):
        body = {header}
        work = [a for a, _b in backs if a != header]
        body.update(work)
        while work:
            x = work.pop()
            for p in preds[x]:
                if p not in body:
                    body.add(p)
                    work.append(p)
        loops.append(Loop(header, sorted(body), sorted(backs)))
    for i, loop in enumerate(loops):
        best = -1
        for j, other in enumerate(loops):
            if j != i and loop.header in other.body and len(other.body) > len(loop.body) and \
                    (best < 0 or len(other.body) < len(loops[best].body)):
                best = j
        loop.parent = best
    return loops


def to_dot(cfg: Cfg) -> str:
    """The graph in Graphviz's language: edge width and label by count, never-run blocks and
    never-taken edges dashed and grey, exception edges dotted, back edges bold."""
    top = max([e.count for e in cfg.edges] + [1])
    lines = ["digraph cfg {", '  graph [fontname="sans" fontsize=10 ranksep=0.35 nodesep=0.3];',
             '  node [shape=box fontname="monospace" fontsize=9 style=rounded margin="0.12,0.06"];',
             '  edge [fontname="sans" fontsize=8];',
             f'  label="{_esc(cfg.name)}{" call " + cfg.call if cfg.call else ""}"; labelloc=t;']
    for b in range(cfg.n_blocks):
        count = int(cfg.counts[b])
        label = f"#{b}  @{cfg.first_offset[b]}\\nline {cfg.lines[b] or '?'}\\n×{count:,}"
        style = 'style="rounded,dashed" color=grey fontcolor=grey' if count == 0 else ""
        if cfg.handler[b]:
            style += " peripheries=2"
        lines.append(f'  b{b} [label="{label}" {style}];')
    for e in cfg.edges:
        width = 0.6 + 3.4 * (e.count / top) ** 0.5 if e.count else 0.6
        attrs = [f'penwidth={width:.2f}', f'label="{e.count:,}"' if e.count else 'label=""']
        if e.count == 0:
            attrs.append('style=dashed color=grey')
        if e.kind == EXCEPTION:
            attrs.append('style=dotted color="#c03030" constraint=false')
        elif e.kind == BACK:
            attrs.append('color="#3050c0"')
        lines.append(f"  b{e.src} -> b{e.dst} [{' '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
