"""Method view <-> control-flow graph, with real clicks on a trace of tests/programs/block_views:
a click anywhere in a block of the method view selects that block in the CFG, and a click on a
block of the CFG marks and scrolls to it in the method view."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from jbgui.model.method_names import resolve_methods
from jbgui.ui.main_window import MainWindow
from jbgui.ui import colors
from jbgui.ui.selection import CallRef

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


@pytest.fixture(scope="module")
def trace(record, default_jdk):
    run = record("block_views", default_jdk, jdk=False, instructions=True)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def test_a_block_clicked_in_either_view_is_selected_in_the_other(qtbot, trace):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 1000)
    w.show()
    with qtbot.waitSignal(w.traceLoaded, timeout=120_000):
        w.open_trace(trace)
    w.block_views.dock.show()
    w.method_dock.show()      # a layout remembered by an earlier test may have hidden it
    panel = w.block_views
    panel.setCurrentWidget(panel.cfg)
    cfg, mv = panel.cfg, w.method_view
    a = w.loaded.analysis
    mid = resolve_methods(a.statics, "Main.check", single=True)[0]
    thread = a.threads[0]
    row = int(np.flatnonzero(np.asarray(thread.calls.method) == mid)[0])
    w.selection.select_call(CallRef(thread.index, row))
    qtbot.waitUntil(lambda: cfg.cfg is not None and cfg.cfg.method == mid and bool(cfg.items), timeout=30_000)
    qtbot.waitUntil(lambda: mv.info is not None and mv.info.method == mid and len(mv._block_starts) == 3)
    seen = []
    w.selection.blockSelected.connect(lambda m, b, src: seen.append((m, b, src)))

    # method view -> CFG: click in block 2's text (not on a link)
    qtbot.waitUntil(lambda: mv.browser.isVisible() and mv.browser.viewport().height() > 100)
    qtbot.waitUntil(lambda: mv.block_at(QPoint(mv.block_position(2).x() + 60, mv.block_position(2).y())) == 2)
    pos = mv.block_position(2)
    inside = QPoint(pos.x() + 60, pos.y())       # past the "#2" link, on the block's offsets
    assert not mv.browser.anchorAt(inside) and mv.block_at(inside) == 2
    qtbot.mouseClick(mv.browser.viewport(), Qt.MouseButton.LeftButton, pos=inside)
    assert seen[-1] == (mid, 2, mv)
    assert cfg.selected_block == 2 and cfg.items[2].pen().color().name() == colors.pick(colors.CFG_SELECTED)
    assert mv.selected_block == 2 and colors.pick(colors.CFG_SELECTED) in mv.browser.toHtml()

    # the "#0" link of block 0 does the same
    link = mv.block_position(0)
    assert mv.browser.anchorAt(link) == "block:0"
    qtbot.mouseClick(mv.browser.viewport(), Qt.MouseButton.LeftButton, pos=link)
    assert seen[-1] == (mid, 0, mv) and cfg.selected_block == 0 and mv.selected_block == 0

    # CFG -> method view: a click on block 1 in the graph marks block 1 there
    qtbot.mouseClick(cfg.view.viewport(), Qt.MouseButton.LeftButton, pos=cfg.block_center(1))
    assert seen[-1] == (mid, 1, cfg)
    assert mv.selected_block == 1 and cfg.selected_block == 1
    # and block 1 is the one drawn with the selection bar
    html = mv.browser.toHtml()
    assert html.count(colors.pick(colors.CFG_SELECTED)) == 1
    # (each block's bar cell comes just before its anchor: block 1's lies between b0's and b1's)
    assert html.index('name="b0"') < html.index(colors.pick(colors.CFG_SELECTED)) < html.index('name="b1"')
