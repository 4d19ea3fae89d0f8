"""What loop_share.py and path_share.py share: a trace whose static.xml lists each block's
instructions (``jbtrace record --instructions``), which their rules read, and a command line that
measures one trace after another."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Callable

from jbgui.cli.trace_input import BAD_INPUT, TraceInputError, open_analysis
from jbgui.model.analysis import Analysis

_LDC = re.compile(r"^\s*\d+\s+ldc\w*\s+(\S+)")


def loads_class(line: str) -> bool:
    """Whether a listed instruction is an ``ldc`` of a class, method handle or dynamic constant,
    which may load a class (an event on the thread); one of a number or a string loads none."""
    ldc = _LDC.match(line)
    return bool(ldc) and not (ldc.group(1)[0] in "\"-" or ldc.group(1)[0].isdigit())


def open_listed(path: str) -> Analysis:
    """The trace's analysis; a clear error when it has no listings (its rules could not be checked,
    which must not read as "0% spared")."""
    analysis = open_analysis(path)
    if not analysis.statics.instructions:
        raise TraceInputError(f"{path}: recorded without instruction listings; record it again with "
                              "`jbtrace record --instructions`")
    return analysis


def main(argv: list[str] | None, prog: str, doc: str, measure: Callable[[str, int], None], what: str,
         top: int) -> int:
    """The script ``prog``'s command line, ``TRACE [TRACE ...] [--top N]``: measures each trace in
    turn; exit status 2 on bad input."""
    parser = argparse.ArgumentParser(prog=f"{prog}.py", description=doc.splitlines()[0])
    parser.add_argument("traces", nargs="+", metavar="TRACE")
    parser.add_argument("--top", type=int, default=top, help=f"{what} to list per trace (default {top})")
    args = parser.parse_args(argv)
    for path in args.traces:
        try:
            measure(path, args.top)
        except TraceInputError as error:
            print(f"{prog}: {error}", file=sys.stderr)
            return BAD_INPUT
    return 0
