"""``jbtrace stats TRACE``: dynamic metrics of a run, as text or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from jbgui.cli.trace_input import open_analysis
from jbgui.model import metrics

NAME = "stats"
HELP = "print dynamic metrics: bytecodes and block metrics per thread, method, class and package, " \
       "polymorphic call sites, opcodes, hottest calling contexts"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--json", action="store_true", help="print everything as one JSON document")
    parser.add_argument("--top", type=int, default=20, metavar="N", help="rows per table (default 20)")


def run(args: argparse.Namespace) -> int:
    analysis = open_analysis(args.trace, progress=True)
    data = metrics.compute(analysis, top=args.top)
    if args.json:
        json.dump(data, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    print_text(data, sys.stdout)
    return 0


def print_text(data: dict, out) -> None:
    run = data["run"]
    w = out.write
    w(f"trace    {data['trace']}\n")
    w(f"run      {run['threads']} threads, {run['events']:,} events, {run['calls']:,} calls, "
      f"{run['blocks']:,} blocks, {run['metrics']['bytecodes']:,} bytecodes\n\n")
    w("metrics (whole run)\n")
    for name, value in run["metrics"].items():
        w(f"  {name:<26}{value:>16,}\n")
    w("\nthreads\n")
    w(f"  {'thread':<24}{'events':>14}{'calls':>12}{'bytecodes':>16}{'depth':>7}{'exc':>6}{'uncaught':>9}"
      f"{'native':>9}{'untraced':>10}\n")
    for t in data["threads"]:
        w(f"  {t['name'][:23]:<24}{t['events']:>14,}{t['calls']:>12,}{t['metrics']['bytecodes']:>16,}"
          f"{t['max_depth']:>7}{t['exceptions']:>6}{t['uncaught']:>9}{t['native_calls']:>9,}{t['untraced_calls']:>10,}\n")
    w("\nhottest methods (own bytecodes)\n")
    for m in data["hottest_methods"]:
        w(f"  {m['bytecodes']:>14,}  {m['calls']:>10,} calls  {m['method']}\n")
    w("\npackages (own bytecodes)\n")
    for name, p in list(data["packages"].items())[:20]:
        w(f"  {p['bytecodes']:>14,}  {p['calls']:>10,} calls  {name}\n")
    if data["polymorphic_sites"]:
        w("\npolymorphic call sites (more than one receiver class)\n")
        for s in data["polymorphic_sites"]:
            kinds = ", ".join(f"{r['class']} {r['calls']:,}" for r in s["receivers"][:4])
            w(f"  {s['calls']:>10,} calls  {s['receiver_types']} types  {s['type_changes']:,} changes  "
              f"{s['caller']} @{s['offset']} -> {s['target']}: {kinds}\n")
    if data["opcodes"]:
        w("\nopcodes executed\n")
        for name, n in list(data["opcodes"].items())[:30]:
            w(f"  {n:>14,}  {name}\n")
    w("\nhottest calling contexts (own bytecodes)\n")
    for thread, contexts in data["hottest_contexts"].items():
        for c in contexts[:3]:
            path = " > ".join(p.rsplit("(", 1)[0] for p in c["context"][-4:])
            w(f"  {c['excl_bytecodes']:>14,}  {thread}: {path}\n")
