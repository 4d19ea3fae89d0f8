"""``jbtrace tree TRACE``: the merged calling-context tree (identical call paths merged), or with
``--inverted`` the callers tree — the explorer's merged tree and callers views, from the same
model code, with the same transforms."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from jbgui.cli import aggregate_args as A
from jbgui.model import merged_tree as MT
from jbgui.model import transforms as TR

NAME = "tree"
HELP = "the merged call tree (or, with --inverted, the callers tree) with calls and bytecodes"
USAGE = ("jbtrace tree TRACE [--inverted] [--only-my-code] [--include PREFIX]... [--focus METHOD] "
         "[--merge METHOD]... [--collapse-recursion] [--thread T] [--depth N] [--min-percent P] [--json]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    A.add_scope_arguments(parser)
    parser.add_argument("--inverted", action="store_true",
                        help="the callers tree: methods by own bytecodes, each expanded into the paths that called it")
    parser.add_argument("--focus", metavar="METHOD", default=None,
                        help="the method's outermost invocations as roots (pkg.Class.name or with a descriptor)")
    parser.add_argument("--merge", metavar="METHOD", action="append", default=[],
                        help="remove the method's frames, charging what they did to their callers. Repeatable")
    parser.add_argument("--collapse-recursion", action="store_true",
                        help="merge a method called directly by itself into its caller frame")
    parser.add_argument("--depth", type=int, metavar="N", default=None,
                        help="levels to print (default: 12 as text, all with --json; 6 with --inverted, whose "
                             "full tree has a path per call depth of every context)")
    parser.add_argument("--min-percent", type=float, metavar="P", default=None,
                        help="leave out nodes below P%% of the total (default: 0.5 as text, 0 with --json)")
    parser.add_argument("--json", action="store_true", help="nested JSON nodes")


def transforms(analysis, args: argparse.Namespace) -> tuple[TR.Transform, ...]:
    """The stack, in this order: only my code, focus, merges, collapse recursion."""
    stack = list(A.scope_transforms(args))
    if args.focus:
        stack.append(TR.Transform("focus-method", A.method_keys(analysis, args.focus, single=True)[0]))
    for spec in args.merge:
        stack.extend(TR.Transform("merge", k) for k in A.method_keys(analysis, spec, single=False))
    if args.collapse_recursion:
        stack.append(TR.Transform("collapse-recursion"))
    return tuple(stack)


def run(args: argparse.Namespace) -> int:
    if args.depth is not None and args.depth < 1:
        raise A.TraceInputError("--depth must be 1 or more")
    if args.min_percent is not None and not 0 <= args.min_percent <= 100:
        raise A.TraceInputError("--min-percent must be between 0 and 100")
    analysis, view, thread = A.open_view(args)
    tree = view.tree(transforms(analysis, args), thread)
    depth = args.depth if args.depth is not None else (6 if args.inverted else None if args.json else 12)
    min_percent = args.min_percent if args.min_percent is not None else (0.0 if args.json else 0.5)
    total = tree.total("bytecodes")
    floor = total * min_percent / 100.0
    names = _Names(analysis.statics)
    if args.inverted:
        nodes = _inverted(tree, names, depth, floor)
    else:
        nodes = _top_down(tree, names, depth, floor)
    out = sys.stdout
    if args.json:
        json.dump(nodes, out, indent=1)
        out.write("\n")
    else:
        out.write(f"total {total:,} bytecodes; per line: total% (own%) calls method\n")
        _print(nodes, out, total or 1, 0)
    return 0


class _Names:
    def __init__(self, statics):
        self.statics = statics
        self.cache: dict[int, str] = {}

    def __call__(self, key: int) -> str:
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = MT.key_name(self.statics, key)
        return got


def _top_down(tree: MT.Tree, names, depth: int | None, floor: float) -> list[dict]:
    incl = tree.inclusive("bytecodes")
    own = tree.own("bytecodes")

    def build(node: int, level: int) -> dict:
        kids = [] if depth is not None and level + 1 >= depth else _ordered(tree.children(node), incl, floor)
        return {"method": names(int(tree.key[node])), "calls": int(tree.calls[node]),
                "self_bytecodes": int(own[node]), "total_bytecodes": int(incl[node]),
                "children": [build(int(c), level + 1) for c in kids]}
    return [build(int(r), 0) for r in _ordered(tree.roots, incl, floor)]


def _ordered(nodes: np.ndarray, weight: np.ndarray, floor: float) -> np.ndarray:
    nodes = nodes[weight[nodes] >= floor] if floor > 0 else nodes
    return nodes[np.argsort(-weight[nodes], kind="stable")]


def _inverted(tree: MT.Tree, names, depth: int | None, floor: float) -> list[dict]:
    inv = MT.InvertedTree(tree, "bytecodes", MT.canonical_keys(names.statics, tree.dense_keys[0]))
    incl = tree.inclusive("bytecodes")
    outer = tree.outermost()

    def build(item: MT.CallerPath, level: int) -> dict:
        kids = [] if depth is not None and level + 1 >= depth else \
            [c for c in inv.callers(item) if c.self_weight >= floor]
        origins = item.origins
        return {"method": names(item.keys[-1]), "calls": item.calls, "self_bytecodes": item.self_weight,
                "total_bytecodes": int(incl[origins[outer[origins]]].sum()),
                "children": [build(c, level + 1) for c in kids]}
    return [build(r, 0) for r in inv.roots() if r.self_weight >= floor and (r.self_weight > 0 or floor == 0)]


def _print(nodes: list[dict], out, total: int, level: int) -> None:
    for node in nodes:
        out.write(f"{'  ' * level}{100 * node['total_bytecodes'] / total:5.1f}% ({100 * node['self_bytecodes'] / total:4.1f}%) "
                  f"{node['calls']:>10,}  {node['method']}\n")
        _print(node["children"], out, total, level + 1)
