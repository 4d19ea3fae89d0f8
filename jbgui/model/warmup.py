"""Compile every numba kernel of the analyzer once, at set-up time, into numba's on-disk cache, so
that no open of a trace pays for compilation (``python -m jbgui.model.warmup TRACE``; scripts/setup.sh
runs it on the bundled example's trace).

Kernels are compiled for the argument types they meet at run time, so the warm-up does what an open
does, on a real trace: replay it, open it again from the store, build the timeline and query it,
walk the call tree, compute the metrics, the calling-context trees, the exports and an SQL query.
Every kernel must be declared ``cache=True`` (``kernels()`` lists those that are not); ``--check``
in a fresh process then reports the kernels that were compiled rather than loaded from the cache.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np



def _model_modules() -> tuple[str, ...]:
    """Every module of jbgui.model (subpackages included), so that a kernel added anywhere is
    checked for cache=True without anyone remembering to list it here."""
    import pkgutil

    import jbgui.model as model
    names = [m.name[len("jbgui.model."):] for m in pkgutil.walk_packages(model.__path__, "jbgui.model.")]
    return tuple(sorted(n for n in names if n != "warmup"))


MODULES = _model_modules()


def kernels() -> dict[str, object]:
    """Every numba dispatcher defined in the analyzer's modules, by ``module.name``."""
    from numba.core.registry import CPUDispatcher

    out = {}
    for name in MODULES:
        try:
            module = importlib.import_module(f"jbgui.model.{name}")
        except ImportError:
            continue
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.__module__ == module.__name__:
                out[f"{name}.{attr}"] = value
    return out


def uncached(dispatchers: dict[str, object]) -> list[str]:
    """Kernels declared without ``cache=True``: they would compile in every process."""
    return [name for name, d in dispatchers.items() if type(d._cache).__name__ == "NullCache"]


def _try(label: str, failures: list[str], fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - a warm-up step that fails only costs its kernels
        failures.append(f"{label}: {type(error).__name__}: {error}")
        return None


def exercise(trace: Path) -> list[str]:
    """Run what opening and exploring ``trace`` runs; returns the steps that failed."""


    from jbgui.model import call_queries as Q
    from jbgui.model import metrics
    from jbgui.model.analysis import Analysis
    from jbgui.model.timeline import TimelineModel

    failures: list[str] = []
    Analysis.open(trace)                        # replay (and the store's writer)
    analysis = Analysis.open(trace)             # from the store
    timeline = _try("timeline", failures, TimelineModel, analysis)
    for t in analysis.threads:
        if not len(t.calls):
            continue
        if timeline is not None:
            tl = _try("timeline thread", failures, timeline.thread_timeline, t.index)
            if tl is not None and tl.rows:
                span = tl.t_max - tl.t_min
                for px in (span / 1000, span / 1e6, 1e-9):
                    _try("timeline query", failures, tl.query, tl.t_min, tl.t_max, max(px, 1e-9))
                _try("call_at", failures, tl.call_near, tl.t_min + span / 2, 1, span / 1000)
                _try("marks", failures, timeline.exception_marks, tl)
        _try("children", failures, Q.children_batch, t.calls, -1)
        _try("child_count", failures, Q.child_count, t.calls, 0)
        _try("child_at", failures, Q.child_at, t.calls, 0, 0)
        _try("child_index", failures, Q.child_index, t.calls, -1, 0)
        _try("count_siblings", failures, Q.count_siblings, t.calls, 0, 0)
        _try("exclusive", failures, Q.exclusive, t, np.arange(min(len(t.calls), 10)))
        _try("thread_totals", failures, Q.thread_totals, t)
        _try("find_calls", failures, Q.find_calls, analysis, t, "main")
        _try("cct", failures, lambda: t.cct)
    _try("metrics", failures, metrics.compute, analysis)
    _try("summary", failures, metrics.run_summary, analysis)
    try:
        from jbgui.model import export as E
        for fmt in ("chrome", "collapsed", "csv"):
            with tempfile.TemporaryDirectory() as tmp:
                _try(f"export {fmt}", failures, E.export, analysis, Path(tmp) / f"out.{fmt}", fmt)
    except ImportError as error:
        failures.append(f"export: {error}")
    from jbgui.model import sql
    _try("sql", failures, sql.query, analysis, "SELECT sum(own_bytecodes), sum(own_blocks) FROM calls")
    _try("sql", failures, sql.query, analysis, "SELECT count(*) FROM calls")
    _try("aggregated views", failures, _aggregated, analysis)
    # the run's trees read back from the file the aggregated views kept (a later open's path)
    _try("aggregated views, kept", failures, _aggregated, Analysis.open(trace))
    _try("block views", failures, _block_views, analysis)
    _try("range statistics", failures, _range, analysis)
    return failures


def _aggregated(analysis) -> None:
    """The aggregated views: merged trees, a transform, the methods table, the flame graph."""
    from jbgui.model import flame, methods_table
    from jbgui.model import transforms as TR
    view = TR.AggregateView(analysis)
    tree = view.tree()
    hottest = int(tree.key[int(np.argmax(tree.own("bytecodes")))])
    for stack in ((), (TR.Transform("only-my-code"),), (TR.Transform("merge", hottest),),
                  (TR.Transform("collapse-recursion"),), (TR.Transform("focus-method", hottest),)):
        t = view.tree(stack)
        methods_table.compute(t, analysis.statics)
        layout = flame.layout(t)
        layout.rects(min_width=float(np.sum(t.calls)) / 1000)
    busiest = max(analysis.threads, key=lambda t: len(t.calls))
    view.tree((), busiest.index)
    for t in analysis.threads:
        view.tree((), t.index)
    if len(busiest.calls):      # the merged tree of one call's subtree and of a range of calls
        from jbgui.model import range_tree
        flame.call_subtree_tree(busiest, 0)
        first, last = int(busiest.calls.at("first", 0)), int(busiest.calls.at("last", 0))
        range_tree.thread_range_tree(busiest, first + (last - first) // 4, last)


def _block_views(analysis) -> None:
    """The block views on the method whose blocks ran most: CFG, profile (variants, loops), one
    call's path, exception flow, first runs."""
    from jbgui.model import block_paths, cfg, discovery, exception_flow, method_profile
    st = analysis.statics
    counts = np.zeros(st.n_blocks, np.int64)
    for t in analysis.threads:
        counts += t.block_counts
    method = int(st.b_method[int(np.argmax(counts))])
    cfg.method_cfg(analysis, method)
    method_profile.method_profile(analysis, method)
    # the table read block by block (earlier steps may have decoded the whole columns, which the
    # profile then uses), and the attribution with its sequences
    from jbgui.model import store_rows
    for t in analysis.threads:
        if t.calls._stored is not None and len(t.calls):
            store_rows.rows_with(t.calls._stored, "method", method)
    scan = block_paths.scan_calls(analysis, method, cfg.method_cfg(analysis, method).loop_tables())
    block_paths.call_sequences(analysis, method, scan, np.arange(min(len(scan.row), 3)))
    for t in analysis.threads:
        rows = np.flatnonzero(np.asarray(t.calls.method) == method)
        if len(rows):
            block_paths.call_path(analysis, t, int(rows[0]))
            cfg.call_cfg(analysis, t, int(rows[0]))
            break
    exception_flow.grouped(analysis)
    discovery.first_runs(analysis)
    discovery.first_block_runs(analysis)


def _range(analysis) -> None:
    """Range statistics over the middle of the busiest thread."""
    from jbgui.model import range_stats
    busiest = max(analysis.threads, key=lambda t: len(t.calls))
    calls = busiest.calls
    for use_clock in (True, False):
        lo, hi = (busiest.times(np.array([float(calls.first[0]), float(np.max(calls.last))]))
                  if use_clock else (float(calls.first[0]), float(np.max(calls.last))))
        range_stats.range_stats(analysis, lo + (hi - lo) / 4, hi - (hi - lo) / 4, use_clock)


def cache_report(dispatchers: dict[str, object]) -> tuple[int, int, list[str]]:
    """(kernels loaded from the cache, compiled, names of the compiled ones) in this process."""
    hits = misses = 0
    compiled = []
    for name, d in dispatchers.items():
        h = sum(d.stats.cache_hits.values())
        m = sum(d.stats.cache_misses.values())
        hits += h
        misses += m
        if m:
            compiled.append(name)
    return hits, misses, compiled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jbgui.model.warmup", description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="a small recorded trace (copied: its own directory is not written)")
    parser.add_argument("--check", action="store_true",
                        help="report kernels this process compiled instead of loading them (exit 1 if any)")
    args = parser.parse_args(argv)
    source = Path(args.trace)
    if not (source / "trace.json").is_file():
        print(f"warmup: {source}: not a trace directory", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jbgui-warmup-") as tmp:
        trace = Path(tmp) / "trace"
        shutil.copytree(source, trace, ignore=shutil.ignore_patterns("analysis"))
        os.environ.pop("JBGUI_CACHE_DIR", None)
        failures = exercise(trace)
    dispatchers = kernels()
    hits, misses, compiled = cache_report(dispatchers)
    missing = uncached(dispatchers)
    print(f"warmup: {len(dispatchers)} kernels, {hits} signatures loaded from numba's cache, {misses} compiled, "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    for name in missing:
        print(f"warmup: kernel {name} is not declared cache=True: it compiles in every process", file=sys.stderr)
    for failure in failures:
        print(f"warmup: step failed (its kernels compile on first use): {failure}", file=sys.stderr)
    if args.check and (compiled or missing):
        print(f"warmup: compiled in this process: {', '.join(compiled)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
