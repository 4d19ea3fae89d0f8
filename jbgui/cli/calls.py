"""``jbtrace calls TRACE``: the replayed calls, one row per call, per thread in start order."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from jbgui.cli.trace_input import open_analysis
from jbgui.model.analysis import Analysis, Flag, ThreadReplay

NAME = "calls"
HELP = "print the replayed calls, one per line: thread, depth, method, flags"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--format", choices=("tsv",), default="tsv",
                        help="tab-separated: thread, depth, class.method(descriptor), flags (default)")
    parser.add_argument("--include", metavar="PREFIX", action="append", default=[],
                        help="keep only calls of classes starting with PREFIX (dotted, e.g. 'com.example.'); "
                             "depth counts kept calls only. Repeatable")
    parser.add_argument("--thread", metavar="NAME", action="append", default=[],
                        help="only this thread (name or index); repeatable")


def run(args: argparse.Namespace) -> int:
    analysis = open_analysis(args.trace, progress=True)
    out = sys.stdout
    wanted = set(args.thread)
    for thread in analysis.threads:
        if wanted and thread.name not in wanted and str(thread.index) not in wanted:
            continue
        write_thread(analysis, thread, args.include, out)
    out.flush()
    return 0


def write_thread(analysis: Analysis, thread: ThreadReplay, include: list[str], out) -> None:
    calls = thread.calls
    n = len(calls)
    if not n:
        return
    names = _NameCache(analysis)
    methods = np.asarray(calls.method)
    sites = np.asarray(calls.call_site)
    flags = np.asarray(calls.flags)
    if include:
        prefixes = tuple(p.replace("/", ".") for p in include)
        keep = names.matches(methods, sites, prefixes)
        # Depth among kept calls: the number of kept strict ancestors, by a difference array over
        # each kept call's subtree (rows are in preorder; ``end`` closes a subtree).
        diff = np.zeros(n + 1, np.int64)
        kept = np.nonzero(keep)[0]
        np.add.at(diff, kept + 1, 1)
        np.add.at(diff, np.asarray(calls.end)[kept], -1)
        depth = np.cumsum(diff)[:n]
        rows = kept
    else:
        depth = np.asarray(calls.depth)
        rows = np.arange(n)
    label = thread.name
    buf = []
    for row in rows:
        buf.append(f"{label}\t{depth[row]}\t{names.name(int(methods[row]), int(sites[row]))}\t"
                   f"{','.join(Flag.names(int(flags[row])))}\n")
        if len(buf) >= 4096:
            out.write("".join(buf))
            buf.clear()
    out.write("".join(buf))


class _NameCache:
    """Names of methods and call-site targets, computed once per id."""

    def __init__(self, analysis: Analysis):
        self.st = analysis.statics
        self.methods: dict[int, str] = {}
        self.sites: dict[int, str] = {}

    def name(self, method: int, site: int) -> str:
        if method:
            got = self.methods.get(method)
            if got is None:
                got = self.methods[method] = self.st.method_qualified(method) or f"<method {method}>"
            return got
        got = self.sites.get(site)
        if got is None:
            got = self.sites[site] = self.st.site_qualified(site) if site >= 0 else "<unknown>"
        return got

    def matches(self, methods: np.ndarray, sites: np.ndarray, prefixes: tuple[str, ...]) -> np.ndarray:
        """Rows whose class starts with one of the prefixes (vectorised over distinct ids)."""
        st = self.st
        ids = np.unique(methods[methods > 0])
        ok_methods = np.zeros(st.max_method_id + 1, np.bool_)
        for mid in ids:
            ok_methods[mid] = st.class_of_method(int(mid)).replace("/", ".").startswith(prefixes)
        keep = ok_methods[methods]
        synthetic = methods == 0
        if synthetic.any():
            ok_sites = np.zeros(max(st.n_sites, 1), np.bool_)
            for s in np.unique(sites[synthetic & (sites >= 0)]):
                ok_sites[s] = st.s_call[int(s)].partition(":")[0].replace("/", ".").startswith(prefixes)
            keep[synthetic] = ok_sites[np.maximum(sites[synthetic], 0)] & (sites[synthetic] >= 0)
        return keep
