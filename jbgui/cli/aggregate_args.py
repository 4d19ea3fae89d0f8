"""Options shared by ``jbtrace methods`` and ``jbtrace tree``: which thread, only my code with
include/exclude prefixes, and the transform stack, turned into the model's aggregated view."""

from __future__ import annotations

import argparse

from jbgui.cli.trace_input import TraceInputError, open_analysis
from jbgui.model import TraceError
from jbgui.model import transforms as TR
from jbgui.model.method_names import resolve_methods
from jbgui.model.scope import Scope, ScopeRules


def add_scope_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--only-my-code", action="store_true",
                        help="collapse every run of JDK and library frames into the call that entered it "
                             "(mine: classes from the program's class path directories, as the GUI decides)")
    parser.add_argument("--include", metavar="PREFIX", action="append", default=[],
                        help="also count classes under PREFIX (e.g. 'com.sun.tools.javac') as mine; "
                             "implies --only-my-code. Repeatable")
    parser.add_argument("--exclude", metavar="PREFIX", action="append", default=[],
                        help="never count classes under PREFIX as mine; implies --only-my-code. Repeatable")
    parser.add_argument("--thread", metavar="T", default=None, help="one thread (name or index) instead of all")


def thread_index(analysis, spec: str | None) -> int | None:
    """The index of the thread named or numbered ``spec`` (None: the whole run)."""
    if spec is None:
        return None
    for t in analysis.threads:
        if t.name == spec or str(t.index) == spec:
            return t.index
    names = ", ".join(f"{t.index} ({t.name})" for t in analysis.threads[:12])
    raise TraceInputError(f"no thread {spec!r} in this trace; threads: {names}")


def scope_transforms(args: argparse.Namespace) -> tuple[TR.Transform, ...]:
    mine = args.only_my_code or args.include or args.exclude
    return (TR.Transform("only-my-code"),) if mine else ()


def method_keys(analysis, spec: str, single: bool) -> list[int]:
    try:
        return resolve_methods(analysis.statics, spec, single=single)
    except TraceError as error:
        raise TraceInputError(str(error)) from error


def open_view(args: argparse.Namespace) -> tuple[object, TR.AggregateView, int | None]:
    """(analysis, aggregated view with the scope of ``args``, thread index or None)."""
    analysis = open_analysis(args.trace, progress=True)
    thread = thread_index(analysis, args.thread)
    scope = Scope.of_trace(analysis, ScopeRules(tuple(args.include), tuple(args.exclude)))
    return analysis, TR.AggregateView(analysis, scope), thread
