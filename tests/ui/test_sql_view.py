"""The explorer's SQL panel on a real trace: a query typed and run with Ctrl+Return fills the
table with DuckDB's answer; clicking a row that names a call selects that call; bad SQL shows
one line and keeps the panel usable."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from jbgui.ui.main_window import MainWindow


@pytest.fixture(scope="module")
def trace(record, default_jdk) -> Path:
    run = record("exceptions", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def test_query_and_select_a_call(qtbot, trace):
    window = MainWindow()
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    with qtbot.waitSignal(window.traceLoaded, timeout=120_000) as blocker:
        window.open_trace(trace)
    analysis = blocker.args[0].analysis
    qtbot.keyClick(window, Qt.Key.Key_6, Qt.KeyboardModifier.ControlModifier)
    view = window.sql_view
    qtbot.waitUntil(lambda: window.sql_dock.isVisible(), timeout=20_000)
    view.editor.setFocus()
    view.editor.selectAll()
    qtbot.keyClicks(view.editor, "SELECT thread, row, depth FROM calls WHERE depth = 2 ORDER BY thread, row LIMIT 5")
    qtbot.keyClick(view.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: view.model.rowCount() == 5, timeout=120_000)
    assert view.model.columns == ["thread", "row", "depth"]
    thread, row, depth = view.model.rows[3]
    t = analysis.thread(thread)
    assert int(t.calls.depth[row]) == depth == 2
    # Click the fourth row: the call becomes the selection of every view.
    index = view.model.index(3, 1)
    view.table.scrollTo(index)
    qtbot.waitUntil(lambda: view.table.viewport().rect().contains(view.table.visualRect(index).center()),
                    timeout=10_000)
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=view.table.visualRect(index).center())
    assert window.selection.call == (thread, row)
    assert "select a row" in view.status.text()
    # Bad SQL: one line in the status, the rows cleared, the panel still answers afterwards.
    view.editor.selectAll()
    qtbot.keyClicks(view.editor, "SELEC nothing")
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "syntax error" in view.status.text(), timeout=120_000)
    assert view.model.rowCount() == 0 and "\n" not in view.status.text()
    qtbot.waitUntil(view.run_button.isEnabled, timeout=10_000)
    view.editor.selectAll()
    qtbot.keyClicks(view.editor, "SELECT count(*) AS n FROM threads")
    qtbot.mouseClick(view.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=120_000)
    assert view.model.columns == ["n"], view.status.text()
    assert view.model.rows[0][0] == len(analysis.threads)
    window.close()
