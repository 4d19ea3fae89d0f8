"""The explorer on damaged traces (issue 12): every failure while loading is the banner, and a
load that ends after its window was closed does not raise in the worker thread."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from jbgui.ui.main_window import MainWindow


@pytest.fixture(scope="module")
def small_trace(record, default_jdk) -> Path:
    run = record("exceptions", default_jdk, jdk=False)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def _copy(trace: Path, tmp_path: Path) -> Path:
    out = tmp_path / "trace"
    shutil.copytree(trace, out, symlinks=True)
    shutil.rmtree(out / "analysis", ignore_errors=True)
    return out


def test_a_fifo_as_static_xml_is_a_banner_not_a_hang(qtbot, small_trace, tmp_path):
    trace = _copy(small_trace, tmp_path)
    (trace / "static.xml").unlink()
    os.mkfifo(trace / "static.xml")
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.loadFailed, timeout=60_000) as blocker:
        w.open_trace(trace)
    assert "not a regular file (a FIFO)" in blocker.args[0]
    assert w.banner.isVisible()
    assert "FIFO" in w.banner.label.text()


def test_problems_of_a_damaged_trace_are_in_the_banner(qtbot, small_trace, tmp_path):
    trace = _copy(small_trace, tmp_path)
    shutil.copy(next((trace / "events").glob("T*.jbt")), trace / "events" / "T99999999999999999999.jbt")
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.traceLoaded, timeout=120_000) as blocker:
        w.open_trace(trace)
    assert any("not a stream name" in p for p in blocker.args[0].problems)
    assert w.banner.isVisible()


def test_a_failed_load_racing_the_window_teardown(qtbot, small_trace, tmp_path):
    """The window is closed and deleted while its load fails: the worker thread's signals find
    their object gone, and nothing is raised there."""
    trace = _copy(small_trace, tmp_path)
    (trace / "trace.json").unlink()
    (trace / "trace.json").write_text("[" * 100_000 + "]" * 100_000)
    raised: list[BaseException] = []
    previous = threading.excepthook
    threading.excepthook = lambda args: raised.append(args.exc_value)
    try:
        for _ in range(5):
            w = MainWindow()
            w.show()
            w.open_trace(trace)
            task = w.task
            w.close()
            w.deleteLater()
            QApplication.processEvents()
            assert task is not None
            assert task.wait(60)
            QApplication.processEvents()
    finally:
        threading.excepthook = previous
    assert not raised, raised
