"""What a new user hit in the main window, each with real events: Back/Forward over the
selection's history, a restored window taller than the screen, the summary's thread table in a
narrow pane, the method view's "selected call" with nothing selected, exception types shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF, QTextDocument

from jbgui.ui.main_window import MainWindow
from jbgui.ui.selection import CallRef


@pytest.fixture(scope="module")
def exceptions_trace(program_runs, default_jdk) -> Path:
    _untraced, run = program_runs("exception_paths", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def sleeps_trace(program_runs, default_jdk) -> Path:
    _untraced, run = program_runs("sleeps", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


def open_trace(qtbot, window, path):
    with qtbot.waitSignal(window.traceLoaded, timeout=120_000) as blocker:
        window.open_trace(path)
    return blocker.args[0]


def settle(qtbot):
    from jbgui.ui import tasks

    qtbot.waitUntil(lambda: not tasks._RUNNING, timeout=60_000)
    qtbot.wait(50)


def rows_named(a, thread, prefix):
    return [r for r in range(len(thread.calls)) if a.call_name(thread, r).startswith(prefix)]


def test_back_and_forward_walk_the_calls_and_methods_chosen(qtbot, window, exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    main = a.thread("main")
    first, second = rows_named(a, main, "Main.dive(")[:2]
    assert not window.back_action.isEnabled() and not window.forward_action.isEnabled()
    window.selection.select_call(CallRef(main.index, first), None)
    window.selection.select_call(CallRef(main.index, second), None)
    method = int(main.calls.method[first])
    window.selection.select_method(method, None)
    assert window.back_action.isEnabled() and not window.forward_action.isEnabled()
    window.activateWindow()
    window.calltree.tree.setFocus()
    qtbot.keyClick(window.calltree.tree, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert window.selection.call == CallRef(main.index, second)
    assert window.calltree.current_ref() == CallRef(main.index, second)     # the views follow
    assert window.timeline.item.selected == CallRef(main.index, second)
    # the toolbar's button, clicked
    button = window.findChild(type(window.addToolBar("x")), "toolbar-navigation").widgetForAction(window.back_action)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert window.selection.call == CallRef(main.index, first)
    assert not window.back_action.isEnabled() and window.forward_action.isEnabled()
    qtbot.keyClick(window.calltree.tree, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert window.selection.call == CallRef(main.index, second)
    qtbot.keyClick(window.calltree.tree, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert window.selection.call is None and window.selection.method == method
    # a new choice after going back ends the forward part
    window.selection.back()
    window.selection.select_call(CallRef(main.index, first), None)
    assert not window.selection.can_go_forward()
    settle(qtbot)


def test_a_restored_window_taller_than_the_screen_keeps_its_status_bar_on_screen(qtbot):
    tall = MainWindow()
    qtbot.addWidget(tall)
    room = tall.screen().availableGeometry()
    tall.setGeometry(room.left(), room.top(), room.width(), room.height() * 3)
    tall.save_layout()
    restored = MainWindow()
    qtbot.addWidget(restored)
    restored.show()
    qtbot.waitExposed(restored)
    frame = restored.frameGeometry()
    # (its width cannot go below what the docks need; the height is what hid the status bar)
    assert frame.height() <= room.height() and frame.top() >= room.top()
    bar = restored.statusBar()
    bottom = bar.mapToGlobal(bar.rect().bottomLeft())
    assert bottom.y() <= room.bottom()


def test_the_thread_table_keeps_numbers_whole_and_tells_twins_apart(qtbot, window, sleeps_trace):
    loaded = open_trace(qtbot, window, sleeps_trace)
    browser = window.summary.browser
    text = browser.toPlainText()
    twins = [t for t in loaded.analysis.threads if t.name == "twin"]
    assert len(twins) == 2
    for t in twins:
        assert f"twin #{t.index}" in text
    # a narrow pane: no number of the table is broken over two lines
    window.summary.resize(260, 600)
    doc: QTextDocument = browser.document()
    doc.setTextWidth(240)
    doc.size()                      # lays the whole document out
    layout = doc.documentLayout()
    block = doc.begin()
    numbers = 0
    while block.isValid():
        if re.fullmatch(r"[\d,.]+( [MG]| [µm]?s| ns)?", block.text().strip() or "x"):
            numbers += 1
            line = QFontMetricsF(block.charFormat().font()).lineSpacing()
            assert layout.blockBoundingRect(block).height() < 1.8 * line, block.text()
        block = block.next()
    assert numbers > 10
    settle(qtbot)


def test_selected_call_counts_are_off_with_nothing_selected_and_the_exception_is_named(qtbot, window,
                                                                                       exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    main = a.thread("main")
    from jbgui.model.analysis import Flag

    left = next(r for r in rows_named(a, main, "Main.dive(") if int(main.calls.flags[r]) & Flag.EXCEPTIONAL)
    window.selection.select_call(CallRef(main.index, left), None)
    view = window.method_view
    qtbot.waitUntil(lambda: view.this_call.isChecked(), timeout=5000)
    exc = a.statics.class_name_of_id(int(main.calls.exc_class[left]))
    assert f"left by {exc}" in view.header.text()
    settle(qtbot)
    window.selection.select_call(None, None)
    assert not view.this_call.isChecked() and not view.this_call.isEnabled() and view.whole.isChecked()
    assert view.call is None and "selected call" not in view.header.text()
    settle(qtbot)


def test_the_export_dialog_estimates_the_size_offers_the_cap_and_exports_the_selected_range(
        qtbot, window, exceptions_trace, tmp_path, monkeypatch):
    import json
    import os

    from jbgui.model import export as X
    from jbgui.ui.export_dialog import ExportDialog

    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    # the estimate, against the real export of the whole run
    whole = tmp_path / "whole.json"
    X.export(a, whole, "chrome", max_events=None)
    dialog = ExportDialog(window, "chrome", None, ".json", loaded.path, [t.name for t in a.threads], None, None,
                          analysis=a)
    qtbot.addWidget(dialog)
    dialog.cap.setValue(0)
    qtbot.waitUntil(lambda: dialog.estimate is not None and dialog.estimate.capped_rows is None, timeout=10_000)
    assert 0.5 <= dialog.estimate.bytes / os.path.getsize(whole) <= 2
    assert "about" in dialog.size_label.text()
    dialog.cap.setValue(100)
    qtbot.waitUntil(lambda: "event cap keeps the first 100" in dialog.size_label.text(), timeout=10_000)
    # above the warning threshold the dialog says so and offers the cap
    dialog.warn_bytes = 1000
    dialog.cap.setValue(0)
    qtbot.waitUntil(lambda: "a large file" in dialog.size_label.text(), timeout=10_000)
    assert "event cap" in dialog.size_label.text()
    dialog.close()
    settle(qtbot)

    # a range selected in the timeline is what File → Export writes
    view = window.timeline
    main = a.thread("main")
    row = next(r for r in range(len(main.calls)) if a.call_name(main, r).startswith("Main.dive("))
    window.selection.select_call(CallRef(main.index, row), None)
    view.range_from_selected()
    start, stop = view.selected_range
    out = tmp_path / "range.json"

    def accept(d):
        assert d.range.isChecked()
        d.path.setText(str(out))
        return ExportDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", accept)
    window.export("chrome", None, ".json")
    qtbot.waitUntil(lambda: out.exists() and "Exported" in window.statusBar().currentMessage(), timeout=60_000)
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e.get("ph") == "X"]
    assert events
    assert all(e["ts"] < stop / 1e3 + 1 and e["ts"] + e["dur"] > start / 1e3 - 1 for e in events)
    names = {e["name"] for e in events}
    assert any("dive" in n for n in names)
    settle(qtbot)


def test_twin_threads_are_exported_one_at_a_time(qtbot, window, sleeps_trace, tmp_path, monkeypatch):
    import csv

    from jbgui.ui.export_dialog import ExportDialog

    loaded = open_trace(qtbot, window, sleeps_trace)
    twins = [t for t in loaded.analysis.threads if t.name == "twin"]
    second = twins[1]
    out = tmp_path / "twin.csv"

    def accept(d):
        labels = [d.thread.itemText(i) for i in range(d.thread.count())]
        assert f"twin #{twins[0].index}" in labels and f"twin #{second.index}" in labels
        d.thread.setCurrentIndex(labels.index(f"twin #{second.index}"))
        d.path.setText(str(out))
        return ExportDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", accept)
    window.export("csv", "calls", ".csv")
    qtbot.waitUntil(lambda: out.exists() and "Exported" in window.statusBar().currentMessage(), timeout=60_000)
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(second.calls) != len(twins[0].calls)
    settle(qtbot)


def test_the_analysis_cache_goes_where_the_setting_says(qtbot, tmp_path, monkeypatch, exceptions_trace):
    """File → Analysis cache: beside the trace by default; "in the user cache directory" keeps the
    trace directory as recorded (the next open replays into the user cache); back again, beside."""
    import shutil

    monkeypatch.delenv("JBGUI_CACHE_DIR", raising=False)
    monkeypatch.setenv("JBGUI_CACHE", str(tmp_path / "cache"))
    trace = tmp_path / "t"
    shutil.copytree(exceptions_trace, trace, ignore=shutil.ignore_patterns("analysis"))
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    assert w.cache_beside.isChecked() and not w.cache_user.isChecked()
    assert str(tmp_path / "cache") in w.cache_user.text()

    def open_(path):
        with qtbot.waitSignal(w.traceLoaded, timeout=120_000) as blocker:
            w.open_trace(path)
        return blocker.args[0].analysis

    w.cache_user.trigger()
    assert w.cache_user.isChecked()
    a = open_(trace)
    assert not (trace / "analysis").exists()
    assert Path(a.cache_dir).resolve().is_relative_to((tmp_path / "cache" / "analysis").resolve())
    # remembered: a new window starts with the choice made
    again = MainWindow()
    qtbot.addWidget(again)
    assert again.cache_user.isChecked()
    w.cache_beside.trigger()
    a = open_(trace)
    assert (trace / "analysis").is_dir()
    assert Path(a.cache_dir).resolve().is_relative_to((trace / "analysis").resolve())
    settle(qtbot)
