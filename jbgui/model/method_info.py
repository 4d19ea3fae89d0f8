"""What the method view shows about one method: its blocks with their counts, metrics, call sites
(callee resolved, with call counts and receiver types), handlers and successors."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from jbgui.model import layout
from jbgui.model import statics as S
from jbgui.model.analysis import Analysis

SITE_KIND_WORDS = {S.SITE_DIRECT: "traced", S.SITE_NATIVE: "native", S.SITE_UNTRACED: "untraced",
                   S.SITE_VIRTUAL: "virtual", S.SITE_DYNAMIC: "invokedynamic"}


@dataclass
class SiteInfo:
    """One call site of a block."""

    site: int
    offset: int
    opcode: str
    target: str                  # pkg.Cls.name(desc) as written at the site
    kind: str                    # traced, native, untraced, virtual, invokedynamic
    target_method: int           # resolved method id (0: unknown)
    calls: int                   # calls replay matched to this site (all threads)
    receivers: list[tuple[str, int]] = field(default_factory=list)   # (class, calls), most first
    type_changes: int = 0


@dataclass
class HandlerInfo:
    type: str                    # exception class, '' for a catch-all (finally)
    block_index: int             # the handler's block in this method (-1 unknown)


@dataclass
class BlockInfo:
    index: int
    gb: int
    start: int
    end: int
    lines: list[int]
    metrics: dict[str, int]
    count: int                   # executions in the whole run
    sites: list[SiteInfo]
    handlers: list[HandlerInfo]
    successors: list[tuple[int, int]]   # (block index in this method, times taken)
    is_handler: bool
    instructions: str | None


@dataclass
class MethodInfo:
    method: int
    class_name: str              # dotted
    name: str
    desc: str
    source_file: str
    flags: list[str]
    calls: int
    blocks: list[BlockInfo]

    @property
    def qualified(self) -> str:
        return f"{self.class_name}.{self.name}{self.desc}"


_OPCODE_NAMES = {0: "invokevirtual", 1: "invokespecial", 2: "invokestatic", 3: "invokeinterface", 4: "invokedynamic"}


def method_info(analysis: Analysis, method: int) -> MethodInfo:
    st = analysis.statics
    if not 0 < method <= st.max_method_id or not st.m_name[method]:
        raise KeyError(f"no method with id {method}")
    cls = int(st.m_class[method])
    flags_value = int(st.m_flags[method])
    flags = [word for bit, word in ((S.M_NATIVE, "native"), (S.M_ABSTRACT, "abstract"),
                                    (S.M_INTRINSIC, "intrinsic (not instrumented)"), (S.M_STATIC, "static"),
                                    (S.M_JDK, "JDK")) if flags_value & bit]
    if not flags_value & S.M_INSTRUMENTED and not flags_value & (S.M_NATIVE | S.M_ABSTRACT):
        flags.append("not instrumented")
    calls = 0
    for t in analysis.threads:      # the calls per method the replay counted, not a pass over the calls
        if len(t.calls):
            summary = t.call_summary
            hit = np.flatnonzero(np.asarray(summary["method_ids"]) == method)
            calls += int(np.asarray(summary["method_calls"])[hit].sum()) if len(hit) else 0
    blocks_range = st.method_blocks(method)
    base = blocks_range.start if len(blocks_range) else 0
    edges = analysis.edges
    out_edges: dict[int, list[tuple[int, int]]] = {}
    if len(blocks_range) and len(edges):
        sel = (edges[:, 0] >= blocks_range.start) & (edges[:, 0] < blocks_range.stop)
        for frm, to, n in edges[sel].tolist():
            if blocks_range.start <= to < blocks_range.stop:
                out_edges.setdefault(int(frm), []).append((int(to) - base, int(n)))
    recv = analysis.receivers
    blocks = []
    for gb in blocks_range:
        sites = []
        for s in st.block_sites(gb):
            receivers: list[tuple[str, int]] = []
            if len(recv):
                rows = recv[recv[:, 0] == s]
                rows = rows[np.argsort(-rows[:, 2], kind="stable")]
                receivers = [(st.class_name_of_id(int(c)), int(n)) for _s, c, n in rows.tolist()]
            sites.append(SiteInfo(
                site=s, offset=int(st.s_offset[s]), opcode=_OPCODE_NAMES.get(int(st.s_opcode[s]), "?"),
                target=st.site_qualified(s), kind=SITE_KIND_WORDS.get(int(st.s_kind[s]), "?"),
                target_method=int(st.s_target[s]), calls=int(analysis.site_calls[s]) if s < len(analysis.site_calls) else 0,
                receivers=receivers,
                type_changes=int(analysis.site_changes[s]) if s < len(analysis.site_changes) else 0))
        handlers = []
        for h in st.block_handlers(gb):
            target = int(st.h_target[h])
            handlers.append(HandlerInfo(st.h_type[h].replace("/", "."),
                                        target - base if blocks_range.start <= target < blocks_range.stop else -1))
        lines = [int(x) for x in st.b_lines[gb].split()] if st.b_lines[gb] else []
        blocks.append(BlockInfo(
            index=int(st.b_index[gb]), gb=gb, start=int(st.b_start[gb]), end=int(st.b_end[gb]), lines=lines,
            metrics={name: int(v) for name, v in zip(layout.METRIC_NAMES, st.b_metrics[gb].tolist())},
            count=int(analysis.block_counts[gb]), sites=sites, handlers=handlers,
            successors=sorted(out_edges.get(gb, []), key=lambda e: -e[1]), is_handler=bool(st.b_is_handler[gb]),
            instructions=st.instructions.get(gb)))
    return MethodInfo(method, st.c_name[cls].replace("/", "."), st.m_name[method], st.m_desc[method],
                      st.c_source[cls], flags, calls, blocks)
