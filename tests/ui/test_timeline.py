"""The timeline driven by real mouse and key events on traces the agent records: hover, lanes
(overview, collapsing), labels, interpolated times, range selection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QToolTip

from jbgui.ui.main_window import MainWindow
from jbgui.ui.selection import CallRef


@pytest.fixture(scope="module")
def exceptions_trace(record, default_jdk) -> Path:
    run = record("exception_paths", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def threads_trace(record, default_jdk) -> Path:
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


def open_trace(qtbot, window, path, timeout=120_000):
    with qtbot.waitSignal(window.traceLoaded, timeout=timeout) as blocker:
        window.open_trace(path)
    window.tabs.setCurrentWidget(window.timeline)
    qtbot.wait(50)
    return blocker.args[0]


def first_row(analysis, thread, prefix: str) -> int:
    for row in range(len(thread.calls)):
        if analysis.call_name(thread, row).startswith(prefix):
            return row
    raise AssertionError(f"no call {prefix} in {thread.name}")


def call_pixel(view, ref: CallRef) -> QPoint:
    """Where a call's rectangle is on the plot's viewport, in pixels (its middle)."""
    rect = view.item.call_rect(ref)
    scene = view.viewbox.mapViewToScene(rect.center())
    return view.plot.mapFromScene(scene)


def test_hovering_a_bar_describes_its_call(qtbot, window, exceptions_trace, capsys):
    loaded = open_trace(qtbot, window, exceptions_trace)
    view = window.timeline
    main = loaded.analysis.thread("main")
    row = first_row(loaded.analysis, main, "Main.dive(")
    ref = CallRef(main.index, row)
    view.reveal(ref, zoom=True)
    qtbot.wait(50)
    at = call_pixel(view, ref)
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(0, 0))
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(1, 0))
    qtbot.waitUntil(lambda: view.hovered is not None, timeout=2000)
    assert view.hovered.thread == main.index
    assert loaded.analysis.call_name(main, view.hovered.row).startswith("Main.dive(")
    assert "Main.dive(II)I" in view.hover_text
    assert "Main.dive(II)I" in QToolTip.text()
    # nothing was printed by a failing slot (Qt prints a slot's exception and goes on)
    assert "Error" not in capsys.readouterr().err
