"""The flame graph of a timeline range, with real events on a trace of exception_paths: a
Shift+drag in the timeline fills the Range panel's flame graph with the merged tree of the calls
inside the range (the model's answer), a click on a frame zooms into it and selects its method,
"All" goes back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from jbgui.model import cct as CCT
from jbgui.model import range_tree as RT
from jbgui.ui.main_window import MainWindow


@pytest.fixture(scope="module")
def exceptions_trace(program_runs, default_jdk) -> Path:
    _untraced, run = program_runs("exception_paths", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def drag(qtbot, widget, a: QPoint, b: QPoint, modifier=Qt.KeyboardModifier.ShiftModifier):
    """A real press, moves with the button held, and release (QTest's mouseMove carries no buttons)."""
    def send(kind, pos, button, buttons):
        QApplication.sendEvent(widget, QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button,
                                                   buttons, modifier))
    left = Qt.MouseButton.LeftButton
    send(QEvent.Type.MouseButtonPress, a, left, left)
    for k in range(1, 9):
        send(QEvent.Type.MouseMove, a + (b - a) * k / 8, Qt.MouseButton.NoButton, left)
        qtbot.wait(5)
    send(QEvent.Type.MouseButtonRelease, b, left, Qt.MouseButton.NoButton)


def test_the_range_panel_shows_the_flame_graph_of_the_range(qtbot, exceptions_trace):
    from jbgui.ui import tasks

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    with qtbot.waitSignal(w.traceLoaded, timeout=120_000) as blocker:
        w.open_trace(exceptions_trace)
    loaded = blocker.args[0]
    w.tabs.setCurrentWidget(w.timeline)
    view = w.timeline
    view.show_all()
    qtbot.wait(20)
    (x0, x1), (y0, y1) = view.viewbox.viewRange()

    def pixel(x, y):
        return view.plot.mapFromScene(view.viewbox.mapViewToScene(QPointF(x, y)))
    y = y0 + 0.5 * (y1 - y0)
    with qtbot.waitSignal(view.rangeSelected, timeout=2000) as selected:
        drag(qtbot, view.plot.viewport(), pixel(x0 + 0.2 * (x1 - x0), y), pixel(x0 + 0.8 * (x1 - x0), y))
    start, stop = selected.args
    panel = w.range_view
    qtbot.waitUntil(lambda: panel.stats is not None, timeout=30_000)
    expected = RT.range_tree(loaded.analysis, start, stop, use_clock=panel.use_clock)
    tree = panel.tree
    assert tree is not None and len(tree) == len(expected) > 3
    assert tree.total("bytecodes") == expected.total("bytecodes") == panel.stats.total("bytecodes")
    assert int(tree.calls.sum()) == panel.stats.total("calls_contained")

    panel.tabs.setCurrentIndex(panel.tabs.indexOf(panel.flame.parentWidget()))
    w.range_dock.show()
    qtbot.waitUntil(lambda: panel.flame.isVisible() and panel.flame.width() > 100)
    canvas = panel.flame
    assert not panel.flame_all.isEnabled()
    # the widest root frame: click its middle (row 0 of an icicle)
    lay = canvas.layout_
    roots = tree.roots
    root = int(roots[np.argmax(lay.width[roots])])
    x = (lay.x[root] + lay.width[root] / 2) / lay.total * canvas.width()
    picked = []
    w.selection.methodSelected.connect(lambda m, src: picked.append((m, src)))
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(int(x), 5))
    assert canvas.zoom == root and panel.flame_all.isEnabled()
    key = int(tree.key[root])
    assert 0 < key < CCT.SYNTHETIC_KEY                   # a method's frame
    assert picked and picked[-1] == (key, panel)
    assert loaded.analysis.statics.method_qualified(key).split("(")[0].split(".")[-1] in panel.flame_status.text()
    qtbot.mouseClick(panel.flame_all, Qt.MouseButton.LeftButton)
    assert canvas.zoom == -1 and not panel.flame_all.isEnabled()
    assert "ran entirely inside the range" in panel.flame_status.text()
    qtbot.waitUntil(lambda: not tasks._RUNNING, timeout=60_000)
