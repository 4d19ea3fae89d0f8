"""The views only a basic-block trace can show, on the command line: ``jbtrace cfg``, ``path``,
``variants``, ``loops``, ``exceptions`` and ``discovery``. Each is a subcommand module of its own
(the classes below); the model is in :mod:`jbgui.model.cfg`, :mod:`~jbgui.model.block_paths`,
:mod:`~jbgui.model.variants`, :mod:`~jbgui.model.loop_profile`,
:mod:`~jbgui.model.exception_flow` and :mod:`~jbgui.model.discovery`."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from types import SimpleNamespace

from jbgui.cli.trace_input import TraceInputError, open_analysis
from jbgui.model.block_paths import LONGEST_CALL
from jbgui.model.analysis import Analysis, ThreadReplay
from jbgui.model.method_names import MethodNameError, display_name, resolve_methods


def _method(analysis: Analysis, spec: str) -> int:
    """The one method ``spec`` names; it must have blocks (a graph, paths, loops)."""
    try:
        method = resolve_methods(analysis.statics, spec, single=True)[0]
    except MethodNameError as error:
        raise TraceInputError(str(error)) from error
    if not int(analysis.statics.m_blocks[method]):
        raise TraceInputError(f"{display_name(analysis.statics, method)} has no basic blocks "
                              "(native, abstract or not instrumented)")
    return method


def parse_call(analysis: Analysis, text: str) -> tuple[ThreadReplay, int]:
    """``THREAD:ROW`` (thread index or name) as a thread and a row of its call table."""
    thread_key, sep, row_text = text.rpartition(":")
    if not sep or not row_text.isdigit():
        raise TraceInputError(f"{text!r}: a call is THREAD:ROW (thread index or name, row number)")
    try:
        thread = analysis.thread(int(thread_key) if thread_key.isdigit() else thread_key)
    except KeyError:
        names = ", ".join(f"{t.index} ({t.name})" for t in analysis.threads)
        raise TraceInputError(f"{text!r}: no thread {thread_key!r}; threads: {names}") from None
    row = int(row_text)
    if row >= len(thread.calls):
        raise TraceInputError(f"{text!r}: thread {thread.index} has {len(thread.calls)} calls")
    return thread, row


def _dump(obj) -> None:
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


# ---------------------------------------------------------------------- cfg

def _cfg_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("method", metavar="METHOD", help="pkg.Class.name or pkg.Class.name(descriptor)")
    parser.add_argument("--call", metavar="THREAD:ROW", help="counts of this call only (default: whole run)")
    parser.add_argument("--format", choices=("json", "dot", "svg"), default="json",
                        help="json (default), Graphviz dot, or svg (laid out by Graphviz's dot)")


def _cfg_run(args: argparse.Namespace) -> int:
    from jbgui.model import cfg as C
    analysis = open_analysis(args.trace)
    method = _method(analysis, args.method)
    if args.call:
        thread, row = parse_call(analysis, args.call)
        if int(thread.calls.method[row]) != method:
            raise TraceInputError(f"{args.call} is a call of {analysis.call_name(thread, row)}, "
                                  f"not of {display_name(analysis.statics, method)}")
        graph = C.call_cfg(analysis, thread, row)
    else:
        graph = C.method_cfg(analysis, method)
    if args.format == "json":
        _dump(graph.to_json())
    elif args.format == "dot":
        sys.stdout.write(C.to_dot(graph))
    else:
        dot = shutil.which("dot")
        if dot is None:
            raise TraceInputError("--format svg needs Graphviz's dot (Debian package graphviz)")
        result = subprocess.run([dot, "-Tsvg"], input=C.to_dot(graph), capture_output=True, text=True)
        if result.returncode != 0:
            raise TraceInputError(f"dot failed: {result.stderr.strip()}")
        sys.stdout.write(result.stdout)
    return 0


cfg = SimpleNamespace(NAME="cfg", HELP="control-flow graph of a method with exact block and edge counts",
                      add_arguments=_cfg_args, run=_cfg_run)


# ---------------------------------------------------------------------- path

def _path_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("call", metavar="THREAD:ROW", help="the call (thread index or name, row)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def path_json(analysis: Analysis, thread: ThreadReplay, row: int) -> dict:
    """The ``jbtrace path --json`` object."""
    from jbgui.model.block_paths import call_path, compress, render
    p = call_path(analysis, thread, row)
    st = analysis.statics
    base = int(st.m_block_base[p.method]) if p.method else -1
    steps = []
    by_step: dict[int, list[int]] = {}
    for step, child in p.calls:
        by_step.setdefault(step, []).append(child)
    for i, b in enumerate(p.blocks.tolist()):
        steps.append({"block": b, "first_offset": int(st.b_start[base + b]), "lines": st.b_lines[base + b],
                      "event": int(p.events[i]),
                      "calls": [{"row": c, "method": analysis.call_name(thread, c)} for c in by_step.get(i, [])]})
    before = by_step.get(-1, [])
    return {"call": f"{thread.index}:{row}", "method": analysis.call_name(thread, row),
            "compressed": render(compress(p.blocks)), "blocks": len(steps), "steps": steps,
            "calls_before_first_block": [{"row": c, "method": analysis.call_name(thread, c)} for c in before],
            "exit": {"kind": "exception", "type": p.exception} if p.exceptional else {"kind": "return"}}


def _path_run(args: argparse.Namespace) -> int:
    analysis = open_analysis(args.trace)
    thread, row = parse_call(analysis, args.call)
    method = int(thread.calls.method[row])
    if not method or not int(analysis.statics.m_blocks[method]):
        raise TraceInputError(f"{args.call} is a call of {analysis.call_name(thread, row)}, which records no "
                              "blocks (native, untraced or not instrumented)")
    out = path_json(analysis, thread, row)
    if args.json:
        _dump(out)
        return 0
    print(f"{out['call']}  {out['method']}")
    print(f"  {out['compressed']}")
    for i, s in enumerate(out["steps"]):
        calls = ", ".join(c["method"] for c in s["calls"])
        if calls:
            print(f"  step {i}: #{s['block']} (line {s['lines'] or '?'}) calls {calls}")
    exit_ = out["exit"]
    print(f"  exit: {'exception ' + exit_['type'] if exit_['kind'] == 'exception' else 'return'}")
    return 0


path = SimpleNamespace(NAME="path", HELP="the blocks one call executed itself, in order, with the calls it made",
                       add_arguments=_path_args, run=_path_run)


# ---------------------------------------------------------------------- variants

def _method_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("method", metavar="METHOD", help="pkg.Class.name or pkg.Class.name(descriptor)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _variants_run(args: argparse.Namespace) -> int:
    from jbgui.model.method_profile import method_profile
    from jbgui.model.variants import variants as compute
    analysis = open_analysis(args.trace)
    method = _method(analysis, args.method)
    profile = method_profile(analysis, method)
    rows = compute(analysis, method, profile)
    skipped = int(profile.arrays["skipped"][0])
    if skipped:
        print(f"jbtrace: warning: {skipped} calls longer than {LONGEST_CALL:,} events are left out", file=sys.stderr)
    if args.json:
        _dump(rows)
        return 0
    print(f"{display_name(analysis.statics, method)}: {sum(r['calls'] for r in rows):,} calls, {len(rows)} variants")
    for r in rows:
        callers = "; ".join(f"{c['method']} ×{c['calls']:,}" for c in r["callers"][:3])
        print(f"{r['calls']:>12,} {100 * r['share']:6.2f}%  {r['path']}{'  (exception)' if r['exceptional'] else ''}")
        print(f"{'':21}own bytecodes {r['mean_own_bytecodes']:.1f}, {r['mean_nanos']:.0f} ns; "
              f"example {r['example']}; from {callers}")
    return 0


variants = SimpleNamespace(NAME="variants", HELP="a method's calls grouped by the path they took through it",
                           add_arguments=_method_args, run=_variants_run)


# ---------------------------------------------------------------------- loops

def _loops_run(args: argparse.Namespace) -> int:
    from jbgui.model.loop_profile import loops as compute
    analysis = open_analysis(args.trace)
    method = _method(analysis, args.method)
    rows = compute(analysis, method)
    if args.json:
        _dump(rows)
        return 0
    print(f"{display_name(analysis.statics, method)}: {len(rows)} loops")
    for r in rows:
        print(f"loop at #{r['header_block']} (line {r['lines'] or '?'}): entered {r['entries']:,} times, "
              f"{r['mean_iterations']:.1f} iterations per entry, at most {r['max_iterations']:,}")
        for n, e in sorted(r["iterations"].items(), key=lambda kv: int(kv[0]))[:40]:
            print(f"  {int(n):>8,} iterations: {e:,} entries")
        print("  most iterations: " + ", ".join(f"{o['iterations']:,} in {o['call']}" for o in r["outliers"]))
    return 0


loops = SimpleNamespace(NAME="loops", HELP="a method's loops: entries and iterations per entry",
                        add_arguments=_method_args, run=_loops_run)


# ---------------------------------------------------------------------- exceptions

def _trace_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="TRACE", help="a trace directory")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _exceptions_run(args: argparse.Namespace) -> int:
    from jbgui.model.exception_flow import grouped
    analysis = open_analysis(args.trace)
    rows = grouped(analysis)
    if args.json:
        _dump(rows)
        return 0
    for r in rows:
        caught = f"caught in {r['caught_in']} #{r['handler_block']}" if r["caught_in"] else "uncaught"
        flag = "  (caught and ignored)" if r["ignored"] else ""
        chain = " → ".join(f"{m} #{b}" for m, b in zip(r["unwound"], r["unwound_blocks"]))
        print(f"{r['count']:>8,}  {r['type']} thrown in {r['thrown_in']} #{r['throw_block']}, "
              f"unwound {chain or '(no frame)'}, {caught}{flag}")
    return 0


exceptions = SimpleNamespace(NAME="exceptions", HELP="every exception as throw site, unwound frames and catch site, "
                             "grouped", add_arguments=_trace_args, run=_exceptions_run)


# ---------------------------------------------------------------------- discovery

def _discovery_args(parser: argparse.ArgumentParser) -> None:
    _trace_args(parser)
    parser.add_argument("--from", dest="start", type=float, default=0.0, metavar="SECONDS",
                        help="only code first run at or after this time (seconds since the trace started)")
    parser.add_argument("--to", dest="end", type=float, default=float("inf"), metavar="SECONDS",
                        help="only code first run before this time")
    parser.add_argument("--blocks", action="store_true",
                        help="basic blocks instead of methods (reads every stream once, then cached)")


def _discovery_run(args: argparse.Namespace) -> int:
    from jbgui.model.discovery import first_block_runs, first_run_in
    analysis = open_analysis(args.trace)
    if args.blocks:
        runs = first_block_runs(analysis)
        st = analysis.statics
        sel = (runs["nanos"] >= args.start * 1e9) & (runs["nanos"] < args.end * 1e9)
        rows = [{"method": display_name(st, int(st.b_method[b])), "block": int(st.b_index[b]),
                 "lines": st.b_lines[b], "seconds": float(ns) / 1e9, "thread": int(t), "event": int(e)}
                for b, t, e, ns in zip(runs["block"][sel], runs["thread"][sel], runs["event"][sel], runs["nanos"][sel])]
        if args.json:
            _dump(rows)
        else:
            for r in rows:
                print(f"{r['seconds']:12.6f}s  {r['method']} #{r['block']} (line {r['lines'] or '?'})")
        return 0
    runs = first_run_in(analysis, args.start * 1e9, args.end * 1e9)
    rows = [{"method": display_name(analysis.statics, int(m)), "seconds": float(ns) / 1e9,
             "first_call": f"{int(t)}:{int(r)}"}
            for m, t, r, ns in zip(runs["method"], runs["thread"], runs["row"], runs["nanos"])]
    if args.json:
        _dump(rows)
        return 0
    for r in rows:
        print(f"{r['seconds']:12.6f}s  {r['first_call']:>14}  {r['method']}")
    return 0


discovery = SimpleNamespace(NAME="discovery", HELP="when each method ran for the first time (--from/--to: "
                            "code first run in a time range)", add_arguments=_discovery_args, run=_discovery_run)

SUBCOMMANDS = (cfg, path, variants, loops, exceptions, discovery)
