"""``jbtrace check TRACE``: a sanity check of a trace (the Tracing JVM's ``check-trace``).

Prints one line per finding, ``severity: file: location: message``, then a summary line. Exit
status: 0 when the trace is sound (notes only: things the format documents as expected), 1 when
there are errors or warnings, 2 when the trace cannot be read at all. ``--json`` prints the
findings and the counts as one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from jbgui.model.check import ERROR, FATAL, NOTE, SEVERITIES, WARNING, run_check

NAME = "check"
HELP = "check a trace: files well formed, ids defined before use, counts agreeing, frames balanced"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--json", action="store_true", help="print the findings as one JSON object")
    parser.add_argument("--no-replay", action="store_true",
                        help="skip the call-structure check (which replays the trace)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print notes only in the counts")


def run(args: argparse.Namespace) -> int:
    def progress(done: int, total: int) -> None:
        print(f"\rchecking {args.trace}: {100 * done // max(total, 1)}%", end="", file=sys.stderr, flush=True)

    interactive = sys.stderr.isatty() and not args.json
    report = run_check(args.trace, replay=not args.no_replay, progress=progress if interactive else None)
    if interactive:
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    counts = {severity: report.count(severity) for severity in SEVERITIES}
    if args.json:
        json.dump({"trace": str(args.trace), "status": report.exit_status, "counts": counts,
                   "checked": report.stats, "findings": [f.to_dict() for f in report.findings]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
        return report.exit_status
    order = {severity: i for i, severity in enumerate(SEVERITIES)}
    for finding in sorted(report.findings, key=lambda f: order[f.severity]):
        if args.quiet and finding.severity == NOTE:
            continue
        print(finding.format(args.trace))
    s = report.stats
    verdict = {0: "sound", 1: "problems found", 2: "unreadable"}[report.exit_status]
    print(f"{args.trace}: {verdict}: {counts[FATAL] + counts[ERROR]} errors, {counts[WARNING]} warnings, "
          f"{counts[NOTE]} notes; checked {s['streams']} streams, {s['chunks']} chunks, {s['events']} events, "
          f"{s['threads']} threads")
    return report.exit_status
