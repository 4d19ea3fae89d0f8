"""The block views in the explorer, driven by real events on a real trace of
tests/programs/block_views: the CFG draws the method's blocks with their counts, a click on a
block selects it (the method view scrolls there), the path steps with the keyboard and buttons
and the CFG follows, variants and loops show the known answers and jump to calls."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QPalette, QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsPathItem, QGraphicsSimpleTextItem

from jbgui.model.method_names import resolve_methods
from jbgui.ui import colors
from jbgui.ui.cfg_view import BlockItem
from jbgui.ui.format import format_count
from jbgui.ui.main_window import MainWindow
from jbgui.ui.selection import CallRef

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


@pytest.fixture(scope="module")
def trace(record, default_jdk):
    run = record("block_views", default_jdk, jdk=False, instructions=True)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture
def window(qtbot, trace):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 1000)
    w.show()
    with qtbot.waitSignal(w.traceLoaded, timeout=120_000):
        w.open_trace(trace)
    w.block_views.dock.show()
    return w


def calls_of(window, spec):
    a = window.loaded.analysis
    mid = resolve_methods(a.statics, spec, single=True)[0]
    thread = a.threads[0]
    return mid, thread, np.flatnonzero(np.asarray(thread.calls.method) == mid)


def double_click(qtbot, table, pos):
    # A view acts on a double click only on the item its press went to, as with a real mouse.
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_the_cfg_follows_the_selection_and_a_click_selects_a_block(qtbot, window):
    panel = window.block_views
    panel.setCurrentWidget(panel.cfg)
    mid, thread, rows = calls_of(window, "Main.check")
    window.selection.select_call(CallRef(thread.index, int(rows[0])))
    qtbot.waitUntil(lambda: panel.cfg.cfg is not None and panel.cfg.cfg.method == mid and bool(panel.cfg.items),
                    timeout=30_000)
    cfg = panel.cfg
    assert cfg.cfg.counts.tolist() == [4, 0, 4]
    # the never-run block is dashed grey; the taken edge is labelled with its count
    assert cfg.items[1].pen().style() == Qt.PenStyle.DashLine
    assert "ran 0 times" in cfg.items[1].toolTip() and "idiv" in cfg.items[1].toolTip()   # the listing
    labels = [item.text() for item in cfg.scene.items() if hasattr(item, "text") and callable(item.text)]
    assert "4" in labels and any("×0" in t for t in labels)
    seen = []
    window.selection.blockSelected.connect(lambda m, b, src: seen.append((m, b)))
    qtbot.mouseClick(cfg.view.viewport(), Qt.MouseButton.LeftButton, pos=cfg.block_center(2))
    assert seen[-1] == (mid, 2)
    assert cfg.selected_block == 2 and cfg.items[2].pen().color().name() == "#ff8c00"
    # the method view is showing this method: a block link clicked there outlines the block here
    qtbot.waitUntil(lambda: window.method_view.info is not None and window.method_view.info.method == mid)
    window.method_view.browser.anchorClicked.emit(__import__("PySide6.QtCore", fromlist=["QUrl"]).QUrl("block:0"))
    assert cfg.selected_block == 0
    # selected call counts
    cfg.this_call.click()
    qtbot.waitUntil(lambda: cfg.cfg is not None and cfg.cfg.call == f"{thread.index}:{int(rows[0])}", timeout=30_000)
    assert cfg.cfg.counts.tolist() == [1, 0, 1]


def edge_items(cfg_view):
    return {item.data(0): item for item in cfg_view.scene.items()
            if isinstance(item, QGraphicsPathItem) and item.data(0) is not None}


def test_the_cfg_draws_back_and_exception_edges_apart_and_zooms(qtbot, window):
    panel = window.block_views
    panel.setCurrentWidget(panel.cfg)
    cfg = panel.cfg
    mid, thread, rows = calls_of(window, "Main.loop")
    window.selection.select_method(mid)
    qtbot.waitUntil(lambda: cfg.cfg is not None and cfg.cfg.method == mid and bool(cfg.items), timeout=30_000)
    assert "Main.loop(I)I</b> — 4 blocks, 1 loop (whole run)" in cfg.title.text()
    edges = edge_items(cfg)
    assert set(edges) == {(0, 1), (1, 2), (2, 1), (1, 3)}
    back, body = edges[(2, 1)].pen(), edges[(0, 1)].pen()
    # the back edge blue, as thick as the hottest edge (19 of 19), the entry edge thinner (6)
    assert back.color().name() == colors.CFG_BACK[0] and body.color().name() != colors.CFG_BACK[0]
    assert back.widthF() > body.widthF() and back.style() == Qt.PenStyle.SolidLine
    mid1, _t, _rows = calls_of(window, "Main.level1")
    window.selection.select_method(mid1)
    qtbot.waitUntil(lambda: cfg.cfg is not None and cfg.cfg.method == mid1 and bool(cfg.items), timeout=30_000)
    caught = edge_items(cfg)[(0, 2)].pen()          # to the handler: dotted red
    assert caught.style() == Qt.PenStyle.DotLine and caught.color().name() == colors.CFG_EXCEPTION[0]
    assert cfg.items[2].pen().color().name() == colors.CFG_EXCEPTION[0]      # the handler block itself
    # the whole graph stays in view when the view gets smaller (until the user zooms)
    def whole_graph_shown():
        return cfg.view.viewport().rect().contains(cfg.view.mapFromScene(cfg.scene.sceneRect()).boundingRect())
    assert whole_graph_shown()
    window.resize(1000, 600)
    qtbot.waitUntil(lambda: cfg.view.viewport().height() < 400)
    assert whole_graph_shown()
    # the wheel zooms in around the cursor, dragging pans
    scale = cfg.view.transform().m11()
    center = cfg.view.viewport().rect().center()
    wheel = QWheelEvent(QPointF(center), QPointF(cfg.view.viewport().mapToGlobal(center)), QPoint(0, 0),
                        QPoint(0, 240), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(cfg.view.viewport(), wheel)
    assert cfg.view.transform().m11() == pytest.approx(scale * 1.44)
    assert cfg.view.dragMode() == cfg.view.DragMode.ScrollHandDrag


def test_the_cfg_keeps_an_edge_s_count_off_its_thick_line(qtbot, window):
    """dot places an edge's count beside the line as dot draws it; here a line is as thick as its
    count is large (up to 5 points), and ran over its own count (check's "4" and loop's "19" were
    under their lines). Each count now clears its edge's stroked line yet stays beside it, on an
    opaque plate of the view's background, over the edges."""
    panel = window.block_views
    panel.setCurrentWidget(panel.cfg)
    cfg = panel.cfg
    paper = cfg.view.palette().color(QPalette.ColorRole.Base)
    thick = []
    for spec in ("Main.check", "Main.loop", "Main.classify", "Main.level1"):
        mid, _thread, _rows = calls_of(window, spec)
        window.selection.select_method(mid)
        qtbot.waitUntil(lambda: cfg.cfg is not None and cfg.cfg.method == mid and bool(cfg.items), timeout=30_000)
        edges = edge_items(cfg)
        counts = {(e.src, e.dst): e.count for e in cfg.cfg.edges}
        texts = [item for item in cfg.scene.items() if isinstance(item, QGraphicsSimpleTextItem)
                 and not isinstance(item.parentItem(), BlockItem)]
        for curve in cfg.layout_.edges:
            count = counts.get((curve.src, curve.dst))
            if not count:
                continue
            # the edge's label: its count, the one nearest where dot put it
            def off(item, x=curve.label[0], y=curve.label[1]):
                c = item.sceneBoundingRect().center()
                return (c.x() - x) ** 2 + (c.y() - y) ** 2
            label = min((t for t in texts if t.text() == format_count(count)), key=off)
            edge = edges[(curve.src, curve.dst)]
            line = edge.shape()                        # the path as stroked with the edge's pen
            rect = label.sceneBoundingRect()
            where = f"{spec} edge {curve.src}->{curve.dst} (width {edge.pen().widthF():.1f})"
            assert not line.intersects(rect), f"{where}: its count {label.text()!r} at {rect} is on the line"
            assert line.intersects(rect.adjusted(-10, -10, 10, 10)), f"{where}: its count is not beside it"
            plate = label.parentItem()
            assert plate is not None and plate.brush().color() == paper and plate.brush().color().alpha() == 255
            assert plate.sceneBoundingRect().contains(rect) and plate.zValue() > edge.zValue()
            if edge.pen().widthF() >= 4:
                thick.append(where)
    assert len(thick) >= 3, thick


def test_the_path_steps_and_the_cfg_follows(qtbot, window):
    panel = window.block_views
    panel.setCurrentWidget(panel.path)
    mid, thread, rows = calls_of(window, "Main.loop")
    window.selection.select_call(CallRef(thread.index, int(rows[2])))        # loop(2)
    qtbot.waitUntil(lambda: panel.path.path is not None and panel.path.path.row == int(rows[2]), timeout=30_000)
    path = panel.path
    assert "#0 (#1 #2)×2 #1 #3" in path.summary.text()
    assert path.steps.count() == 7 and path.current_block() == 0
    qtbot.mouseClick(path.forward, Qt.MouseButton.LeftButton)
    assert path.current_block() == 1
    path.steps.setFocus()
    qtbot.keyClick(path.steps, Qt.Key.Key_Down)
    qtbot.keyClick(path.steps, Qt.Key.Key_Down)
    assert path.current_block() == 1 and path.position.text() == "3 / 7"
    qtbot.mouseClick(path.back, Qt.MouseButton.LeftButton)
    assert path.current_block() == 2
    assert panel.cfg.selected_block == 2          # the CFG followed the step
    assert "⇒ return" in path.steps.item(6).text()
    # a step that made a call: double-click selects that call (Main.level1 calls level2 from #0)
    l1_mid, _t, l1_rows = calls_of(window, "Main.level1")
    window.selection.select_call(CallRef(thread.index, int(l1_rows[0])))
    qtbot.waitUntil(lambda: path.path is not None and path.path.row == int(l1_rows[0]), timeout=30_000)
    assert "→ Main.level2(I)I" in path.steps.item(0).text()
    rect = path.steps.visualItemRect(path.steps.item(0))
    qtbot.mouseClick(path.steps.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(path.steps.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    ref = window.selection.call
    assert window.loaded.analysis.call_name(thread, ref.row) == "Main.level2(I)I"


def test_variants_and_loops_show_the_known_answers_and_jump(qtbot, window):
    panel = window.block_views
    panel.setCurrentWidget(panel.variants)
    mid, thread, rows = calls_of(window, "Main.classify")
    window.selection.select_method(mid)
    qtbot.waitUntil(lambda: len(panel.variants.rows) == 3, timeout=30_000)
    table = panel.variants.table
    assert [table.item(r, 0).text() for r in range(3)] == ["5", "3", "2"]
    assert [table.item(r, 2).text() for r in range(3)] == ["#0 #1", "#0 #2 #3", "#0 #2 #4"]
    assert table.item(2, 6).text() == "Main.rare ×2"
    # double-click the rare variant: its example call is selected
    rect = table.visualItemRect(table.item(2, 0))
    double_click(qtbot, table, rect.center())
    ref = window.selection.call
    assert ref is not None and window.loaded.analysis.call_name(thread, ref.row) == "Main.classify(I)I"
    assert panel.variants.rows[2]["example"] == f"{ref.thread}:{ref.row}"

    panel.setCurrentWidget(panel.loops)
    loop_mid, _thread, loop_rows = calls_of(window, "Main.loop")
    window.selection.select_method(loop_mid)
    qtbot.waitUntil(lambda: len(panel.loops.rows) == 1, timeout=30_000)
    lt = panel.loops.table
    assert (lt.item(0, 0).text(), lt.item(0, 2).text(), lt.item(0, 4).text()) == ("#1", "6", "10")
    assert lt.item(0, 5).text() == "0: 1 · 1: 1 · 2: 1 · 3: 2 · 10: 1"
    double_click(qtbot, lt, lt.visualItemRect(lt.item(0, 0)).center())
    assert window.selection.call == CallRef(thread.index, int(loop_rows[-1]))   # loop(10)


def test_exceptions_and_discovery_tables(qtbot, window):
    panel = window.block_views
    panel.setCurrentWidget(panel.exceptions)
    qtbot.waitUntil(lambda: len(panel.exceptions.rows) == 2, timeout=30_000)
    t = panel.exceptions.table
    assert [t.item(r, 0).text() for r in range(2)] == ["2", "1"]
    # read left to right as the exception went: thrown, the frames it then left (each at its block), caught
    assert [t.item(0, c).text() for c in (2, 3, 4)] == ["Main.level3 #1", "Main.level2 #0", "Main.level1 #2"]
    assert "unwound Main.level3(I)I #1 → Main.level2(I)I #0" in t.item(0, 3).toolTip()
    assert [t.item(1, c).text() for c in (2, 3, 4, 5)] == ["Main.level3 #1", "—", "Main.ignore #2",
                                                           "caught and ignored"]
    panel.setCurrentWidget(panel.discovery)
    d = panel.discovery
    qtbot.waitUntil(lambda: d.runs is not None, timeout=30_000)
    names = [d.table.item(r, 2).text() for r in range(d.table.rowCount())]
    assert "method Main.check(I)I" in names
    a = window.loaded.analysis
    at = float(d.runs["nanos"][[a.statics.method_qualified(int(m)) for m in d.runs["method"]].index("Main.check(I)I")])
    # type the range into the fields, as a user would
    for spin, value in ((d.end, at / 1e9 + 1.5e-6), (d.start, at / 1e9 - 1.5e-6)):
        spin.lineEdit().selectAll()
        qtbot.keyClicks(spin.lineEdit(), f"{value:.6f}")
        qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    shown = [d.table.item(r, 2).text() for r in range(d.table.rowCount())]
    assert "method Main.check(I)I" in shown and len(shown) < len(names)
    # blocks too: check's entry block first ran with the method; its never-taken branch never
    qtbot.mouseClick(d.blocks_box, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: d.block_runs is not None, timeout=30_000)
    d.set_range(0, at / 1e9 + 1)
    shown = [d.table.item(r, 2).text() for r in range(d.table.rowCount())]
    assert "block Main.check(I)I #0 (line 29)" in shown and "block Main.check(I)I #2 (line 32)" in shown
    assert not any(t.startswith("block Main.check(I)I #1") for t in shown)


def test_a_block_view_s_screenshot(trace, tmp_path):
    """``jbgui TRACE --screenshot FILE --view loops --select ...``: the block view alone, at the
    window's size, with the selected call's method; a view that follows a call needs one."""
    import os
    import subprocess
    import sys

    from PySide6.QtGui import QImage

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = tmp_path / "loops.png"
    result = subprocess.run([sys.executable, "-m", "jbgui.ui.app", str(trace), "--screenshot", str(out), "--view",
                             "loops", "--select", "main:Main.loop", "--size", "1500x620"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1500, 620)
    dark = sum(image.pixelColor(x, y).lightness() < 100 for x in range(0, 1500, 3) for y in range(0, 620, 3))
    assert dark > 100                     # text was drawn, not an empty dock
    missing = subprocess.run([sys.executable, "-m", "jbgui.ui.app", str(trace), "--screenshot",
                              str(tmp_path / "x.png"), "--view", "cfg"], capture_output=True, text=True, timeout=300,
                             env=env)
    assert missing.returncode == 2 and "--view cfg needs --select" in missing.stderr
