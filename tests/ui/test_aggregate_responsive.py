"""The aggregated views compute off the GUI thread: while the calling-context tree of a real
recorded program (tests/programs/aggregate_large, about two million calls) is built, the GUI
thread keeps running its timers, the views say "computing…", and once the workers are done they
show the model's values."""

from __future__ import annotations

import gc
import time

import pytest
from PySide6.QtCore import QTimer

from jbgui.model import merged_tree as MT
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.model.analysis import Analysis
from jbgui.ui.aggregate_panel import AggregatePanel
from jbgui.ui.selection import Selection


@pytest.fixture(scope="module")
def analysis(record, default_jdk) -> Analysis:
    run = record("aggregate_large", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


def forget_trees(a: Analysis) -> None:
    """Drop the cached trees: the next request builds them from the call columns."""
    MT.forget_cached(a)


def test_gui_thread_keeps_ticking_while_the_tree_builds(qtbot, analysis):
    forget_trees(analysis)
    panel = AggregatePanel(Selection())
    qtbot.addWidget(panel)
    panel.resize(1200, 700)
    panel.show()
    qtbot.waitExposed(panel)
    panel.state.set_only_mine(False)
    qtbot.waitUntil(panel.idle, timeout=60000)
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    marks: dict[str, float] = {}
    panel.state.computing.connect(lambda: marks.setdefault("computing", time.perf_counter()))
    panel.state.ready.connect(lambda: marks.setdefault("ready", time.perf_counter()))
    # The objects every earlier test of the session left are not the build's: collected and frozen
    # now, a full collection of them cannot fall inside the build (in a full suite run one took
    # 1.8 s, holding the GIL, and was the whole "stall": gc.callbacks showed it start 40 ms into
    # the build and end 60 ms before it was done).
    gc.collect()
    gc.freeze()
    try:
        timer.start()
        fresh = Analysis.open(analysis.trace.path)      # a new model: nothing cached in memory
        panel.set_analysis(fresh)
        # set_analysis returned at once: the tree is being built on a worker
        assert panel.state.busy and panel.state.tree() is None
        assert panel.methods.busy.isVisible() and panel.methods.busy.text().startswith("computing")
        qtbot.waitUntil(panel.idle, timeout=120000)
        timer.stop()
    finally:
        gc.unfreeze()
    during = [t for t in ticks if marks["computing"] <= t <= marks["ready"]]
    build = marks["ready"] - marks["computing"]
    # the timer fired all along the build (a build on the GUI thread would allow no tick at all)
    assert build > 0.05, f"the tree built in {build:.3f} s: too small a program to tell"
    assert len(during) >= 3, f"{len(during)} ticks during a {build:.2f} s build"
    gaps = [b - a for a, b in zip(during, during[1:])]
    print(f"build {build:.3f} s, {len(during)} ticks, max gap {max(gaps, default=0):.3f} s")
    assert max(gaps, default=0) < max(0.5, build / 3), f"the GUI thread stalled {max(gaps):.2f} s"
    assert not panel.methods.busy.isVisible()
    # the views show the model's values
    view = TR.AggregateView(Analysis.open(analysis.trace.path))
    table = MTab.compute(view.base(), fresh.statics)
    model = panel.methods.model
    assert model.rowCount() == len(table)
    i = next(k for k, n in enumerate(table.names) if n.startswith("Main.leaf("))
    r = next(k for k in range(model.rowCount()) if str(model.value(k, 0)).startswith("Main.leaf("))
    assert model.value(r, 1) == table.columns["calls"][i] == 6 * 4 ** 8
    assert model.value(r, 2) == table.columns["self_bytecodes"][i]


def test_latest_request_wins(qtbot, analysis):
    """Changes faster than the worker: only the last settings' tree is shown."""
    panel = AggregatePanel(Selection())
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_analysis(Analysis.open(analysis.trace.path))
    panel.state.set_only_mine(False)
    main = next(t.index for t in analysis.threads if t.name == "main")
    panel.state.set_thread(main)
    panel.state.set_only_mine(True)
    panel.state.set_only_mine(False)
    panel.state.set_thread(None)
    panel.state.set_thread(main)
    qtbot.waitUntil(panel.idle, timeout=120000)
    expected = TR.AggregateView(analysis).tree((), main)
    tree = panel.state.tree()
    assert len(tree) == len(expected) and tree.total() == expected.total()
    model = panel.methods.model
    assert sum(model.value(r, 1) for r in range(model.rowCount())) == int(expected.calls.sum())


def test_hidden_views_compute_nothing_until_shown(qtbot, analysis):
    """A trace opened with the aggregated views hidden builds no tree; showing them does."""
    panel = AggregatePanel(Selection())
    qtbot.addWidget(panel)
    panel.set_analysis(Analysis.open(analysis.trace.path))
    assert not panel.state.busy and panel.state.tree() is None
    panel.show()
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: panel.idle() and panel.state.tree() is not None, timeout=120000)
    assert panel.methods.model.rowCount() > 0
