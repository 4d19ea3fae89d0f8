"""RunController and ConsolePane on real JVMs: a run records a complete trace and its output
arrives (standard error told apart), progress arrives while it runs, Stop keeps a complete trace,
a program the JVM cannot start still ends with its message, a run that cannot start says why; and
the console stays fast and bounded under a flood of output."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from jbgui.ui.console import MAX_BLOCKS, ConsolePane, RunController, progress_text
from jbgui.ui.run_config import RunConfig

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
RUN_TIMEOUT_MS = 180_000


@pytest.fixture
def controller(qtbot):
    c = RunController()
    pane = ConsolePane(c)
    qtbot.addWidget(pane)
    c.pane = pane
    c.outputs = []
    c.progresses = []
    c.output.connect(lambda text, err: c.outputs.append((text, err)))
    c.progress.connect(c.progresses.append)
    yield c
    if c.running():
        c.stop()
        c.stop()
        qtbot.waitUntil(lambda: not c.running(), timeout=RUN_TIMEOUT_MS)


def config_for(classes: Path, tmp_path: Path, main: str = "Main", **kw) -> RunConfig:
    return RunConfig(name=kw.pop("name", main), main=main, classpath=[str(classes)], cwd=str(tmp_path), **kw)


def text_of(outputs, stderr: bool) -> str:
    return "".join(t for t, err in outputs if err == stderr)


def test_a_run_records_a_complete_trace_and_streams_both_outputs(qtbot, controller, compile_program, default_jdk,
                                                                 tmp_path):
    classes = compile_program("main_throws", default_jdk)
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as finished:
        assert controller.start(config_for(classes, tmp_path, java_home=str(default_jdk.home)))
        assert controller.running()
    recording = finished.args[0]
    assert recording.exit_status == 1                   # main ended with an uncaught exception
    assert recording.trace_dir.parent == tmp_path / "traces"
    assert recording.summary.status == "complete" and recording.summary.problem is None
    meta = json.loads((recording.trace_dir / "trace.json").read_text())
    assert meta["status"] == "complete" and meta["jvm"]["java_home"].startswith(str(default_jdk.home))
    assert json.loads((recording.trace_dir / "launch.json").read_text())["exit_code"] == 1
    expected = (PROGRAMS / "main_throws" / "expected_stdout.txt").read_text()
    assert text_of(controller.outputs, stderr=False) == expected
    assert "IllegalArgumentException: bad input: empty string" in text_of(controller.outputs, stderr=True)
    assert not controller.running()
    pane = controller.pane
    pane.flush()
    shown = pane.text.toPlainText()
    assert expected.splitlines()[0] in shown and "bad input: empty string" in shown
    assert "exit status 1" in pane.line.text() and "complete trace" in pane.line.text()
    assert not pane.stop_button.isEnabled()


def test_stop_ends_a_running_program_and_keeps_a_complete_trace(qtbot, controller, compile_program, default_jdk,
                                                               tmp_path):
    classes = compile_program("long_running", default_jdk)
    assert controller.start(config_for(classes, tmp_path))
    qtbot.waitUntil(lambda: "ready" in text_of(controller.outputs, stderr=False), timeout=RUN_TIMEOUT_MS)
    qtbot.waitUntil(lambda: any(p["events"] > 0 for p in controller.progresses), timeout=RUN_TIMEOUT_MS)
    moving = [p for p in controller.progresses if p["events"] > 0][0]
    assert moving["running"] and moving["status"] == "running" and moving["classes"] > 0 and moving["bytes"] > 0
    assert controller.running()
    pane = controller.pane
    assert pane.line.text().startswith("running ") and "events" in pane.line.text()
    assert pane.stop_button.isEnabled()
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as finished:
        pane.stop_button.click()
        assert pane.stop_button.text() == "Kill"
    recording = finished.args[0]
    assert recording.exit_status == 128 + 15            # ended by SIGTERM
    assert recording.summary.status == "complete"
    meta = json.loads((recording.trace_dir / "trace.json").read_text())
    assert meta["status"] == "complete" and meta["counts"]["events"] >= moving["events"]
    assert "exit status 143 (killed by signal 15)" in pane.line.text()
    assert pane.stop_button.text() == "Stop" and not pane.stop_button.isEnabled()


def test_a_main_class_that_does_not_exist_ends_with_the_jvms_message(qtbot, controller, compile_program,
                                                                     default_jdk, tmp_path):
    classes = compile_program("hello", default_jdk)
    with qtbot.waitSignal(controller.finished, timeout=RUN_TIMEOUT_MS) as finished:
        assert controller.start(config_for(classes, tmp_path, main="NoSuchMain"))
    recording = finished.args[0]
    assert recording.exit_status == 1
    assert "Could not find or load main class NoSuchMain" in text_of(controller.outputs, stderr=True)
    # The agent ran before the JVM gave up, so its trace is whole: the exit status tells the story.
    assert recording.summary.status == "complete" and recording.summary.problem is None
    assert "exit status 1" in controller.pane.line.text()


def test_a_run_that_cannot_start_fails_with_the_reason(qtbot, controller, compile_program, default_jdk, tmp_path):
    classes = compile_program("hello", default_jdk)
    with qtbot.waitSignal(controller.failed, timeout=10_000) as failed:
        assert not controller.start(config_for(classes, tmp_path, java_home=str(tmp_path / "no-jdk")))
    assert "is not a JDK" in failed.args[0] and "no-jdk" in failed.args[0]
    assert not controller.running() and controller.session is None
    assert not (tmp_path / "traces").exists() or not any((tmp_path / "traces").iterdir())
    assert controller.pane.line.text() == "The program could not start"
    controller.pane.flush()
    assert "is not a JDK" in controller.pane.text.toPlainText()
    with qtbot.waitSignal(controller.failed, timeout=10_000) as failed:
        assert not controller.start(replace(config_for(classes, tmp_path), cwd=str(tmp_path / "gone")))
    assert "working directory" in failed.args[0]


def test_the_progress_line_reads_as_documented():
    assert progress_text({"seconds": 3.21, "threads": 4, "classes": 1024, "events": 5_352_630,
                          "bytes": int(1.2 * 1024 * 1024)}) == \
        "running 3.2 s · threads 4 · classes 1,024 · events 5,352,630 · 1.2 MiB"


def test_the_console_keeps_up_with_a_flood_of_output(qtbot):
    pane = ConsolePane(RunController())
    qtbot.addWidget(pane)
    pane.show()
    started = time.perf_counter()
    for batch in range(50):                             # 50 polls' worth, 200,000 lines in all
        pane.controller.output.emit("".join(f"line {batch * 4000 + i} of a busy program\n" for i in range(4000)),
                                    batch % 7 == 3)
    pane.flush()
    qtbot.wait(10)
    elapsed = time.perf_counter() - started
    document = pane.text.document()
    assert document.blockCount() <= MAX_BLOCKS + 2
    text = pane.text.toPlainText()
    assert text.rstrip().endswith("line 199999 of a busy program")
    assert "lines of output not shown" in text
    assert elapsed < 10, f"{elapsed:.1f} s to show 200,000 lines"
    # Standard error is drawn in the error colour, standard output in the text colour.
    pane.clear()
    pane.append("out\n", False)
    pane.append("err\n", True)
    pane.flush()
    block = document.firstBlock()
    out_colour = block.begin().fragment().charFormat().foreground().color()
    err_colour = block.next().begin().fragment().charFormat().foreground().color()
    assert err_colour != out_colour and err_colour.red() > err_colour.green()
