"""``jbtrace methods TRACE``: every method with its calls, own and total bytecodes and blocks —
the explorer's methods table, from the same model code."""

from __future__ import annotations

import argparse
import json
import sys

from jbgui.cli import aggregate_args as A
from jbgui.model import methods_table as MTab

NAME = "methods"
HELP = "the methods table: calls, own (self) and total bytecodes, blocks per method"
USAGE = ("jbtrace methods TRACE [--only-my-code] [--include PREFIX]... [--exclude PREFIX]... "
         "[--sort calls|self|total] [--group method|class|package] [--thread T] [--limit N] [--json]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    A.add_scope_arguments(parser)
    parser.add_argument("--sort", choices=tuple(MTab.SORTS), default="self",
                        help="order by calls, own bytecodes (self, default) or total bytecodes (recursion counted once)")
    parser.add_argument("--group", choices=MTab.GROUPS, default="method", help="one row per method (default), class or package")
    parser.add_argument("--limit", type=int, metavar="N", default=None,
                        help="at most N rows (default: all with --json, 40 as text)")
    parser.add_argument("--json", action="store_true", help="a JSON array of rows")


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise A.TraceInputError("--limit must be 0 or more")
    analysis, view, thread = A.open_view(args)
    table = MTab.for_view(view, A.scope_transforms(args), thread, args.group)
    order = table.order(MTab.SORTS[args.sort])
    limit = args.limit if args.limit is not None else (None if args.json else 40)
    order = order[:limit] if limit is not None else order
    out = sys.stdout
    if args.json:
        rows = [{"method": table.names[i], "calls": int(table.columns["calls"][i]),
                 "self_bytecodes": int(table.columns["self_bytecodes"][i]),
                 "total_bytecodes": int(table.columns["total_bytecodes"][i]),
                 "blocks": int(table.columns["self_blocks"][i]),
                 "total_blocks": int(table.columns["total_blocks"][i]),
                 "thrown": int(table.columns["thrown"][i]), "caught": int(table.columns["caught"][i])}
                for i in order]
        json.dump(rows, out, indent=1)
        out.write("\n")
        return 0
    total = table.run["bytecodes"] or 1
    out.write(f"{'calls':>12} {'self bytecodes':>16} {'self%':>6} {'total bytecodes':>16} {'total%':>6} "
              f"{'blocks':>12}  {args.group}\n")
    for i in order:
        c = table.columns
        out.write(f"{c['calls'][i]:>12,} {c['self_bytecodes'][i]:>16,} {100 * c['self_bytecodes'][i] / total:>5.1f}% "
                  f"{c['total_bytecodes'][i]:>16,} {100 * c['total_bytecodes'][i] / total:>5.1f}% "
                  f"{c['self_blocks'][i]:>12,}  {table.names[i]}\n")
    return 0
