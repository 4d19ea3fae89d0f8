"""Run → Run traced… in the main window: the program's output reaches the console dock and its
trace opens by itself when it ends; a run that cannot start says why in the banner. (The pieces
are tested on their own in test_run_controller.py, test_run_config.py and test_run_session.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from jbgui.ui.main_window import MainWindow
from jbgui.ui.run_config import RunConfig

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    return w


def config_for(classes: Path, tmp_path: Path, **kw) -> RunConfig:
    return RunConfig(name="run", main="Main", classpath=[str(classes)], cwd=str(tmp_path),
                     traces_dir=str(tmp_path / "traces"), **kw)


def test_a_traced_run_shows_its_output_and_opens_its_trace(qtbot, window, compile_program, default_jdk, tmp_path):
    classes = compile_program("exception_paths", default_jdk)
    with qtbot.waitSignal(window.traceLoaded, timeout=180_000) as loaded:
        assert window.run_config(config_for(classes, tmp_path, java_home=str(default_jdk.home)))
    trace = loaded.args[0].path
    assert trace.parent == tmp_path / "traces"
    assert json.loads((trace / "trace.json").read_text())["status"] == "complete"
    assert json.loads((trace / "launch.json").read_text())["exit_code"] == 0
    expected = (PROGRAMS / "exception_paths" / "expected_stdout.txt").read_text()
    window.console.flush()
    assert expected.splitlines()[0] in window.console.text.toPlainText()
    assert window.console_dock.isVisible()
    assert "exit status 0" in window.console.line.text()


def test_a_run_that_cannot_start_says_why(qtbot, window, compile_program, default_jdk, tmp_path):
    classes = compile_program("hello", default_jdk)
    with qtbot.waitSignal(window.runner.failed, timeout=30_000) as failed:
        assert not window.run_config(config_for(classes, tmp_path, java_home=str(tmp_path / "no-jdk")))
    assert "is not a JDK" in failed.args[0]
    assert window.banner.isVisible()
    assert not window.runner.running()


def test_a_run_ending_while_a_trace_is_open_asks_before_replacing_it(qtbot, window, compile_program, default_jdk,
                                                                      tmp_path):
    classes = compile_program("hello", default_jdk)
    config = config_for(classes, tmp_path, java_home=str(default_jdk.home))
    with qtbot.waitSignal(window.traceLoaded, timeout=180_000) as first:
        assert window.run_config(config)
    opened = first.args[0].path
    # A second run ends while the first trace is open: it stays open, the new one is offered.
    with qtbot.waitSignal(window.runner.finished, timeout=180_000) as finished:
        assert window.run_config(config)
    qtbot.wait(200)
    assert window.task is None and window.loaded.path == opened
    second = finished.args[0].trace_dir
    assert second != opened
    assert window.open_run_button.isVisible() and second.name in window.open_run_button.text()
    with qtbot.waitSignal(window.traceLoaded, timeout=120_000) as now:
        qtbot.mouseClick(window.open_run_button, Qt.MouseButton.LeftButton)
    assert now.args[0].path == second and not window.open_run_button.isVisible()
