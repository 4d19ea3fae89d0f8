"""Run → Run traced… on real programs: the program runs in its own JVM under the agent, its output
reaches the console, progress arrives while it runs, Stop keeps a complete trace, the trace opens
by itself; a program that cannot start says why; configurations are saved and validated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jbgui.launch import LaunchError
from jbgui.launch.session import RecordingSession
from jbgui.model.live import LiveProgress
from jbgui.ui.main_window import MainWindow
from jbgui.ui.run_config import RunConfig, RunConfigStore, find_jdks
from jbgui.ui.run_dialog import RunDialog


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.show()
    return w


def config_for(classes: Path, tmp_path: Path, main: str = "Main", **kw) -> RunConfig:
    return RunConfig(name=kw.pop("name", main), main=main, classpath=[str(classes)], cwd=str(tmp_path),
                     traces_dir=str(tmp_path / "traces"), **kw)


def test_a_traced_run_streams_output_and_opens_its_trace(qtbot, window, compile_program, default_jdk, tmp_path):
    classes = compile_program("exception_paths", default_jdk)
    outputs: list[tuple[str, bool]] = []
    window.runner.output.connect(lambda text, err: outputs.append((text, err)))
    with qtbot.waitSignal(window.traceLoaded, timeout=180_000) as loaded:
        assert window.run_config(config_for(classes, tmp_path, java_home=str(default_jdk.home)))
    trace = loaded.args[0].path
    assert trace.parent == tmp_path / "traces"
    assert json.loads((trace / "trace.json").read_text())["status"] == "complete"
    launch = json.loads((trace / "launch.json").read_text())
    assert launch["exit_code"] == 0 and launch["command"][-1] == "Main"
    expected = (Path(__file__).parents[1] / "programs" / "exception_paths" / "expected_stdout.txt").read_text()
    assert "".join(t for t, err in outputs if not err) == expected
    assert expected.splitlines()[0] in window.console.text.toPlainText()
    assert window.console_dock.isVisible()
    assert "exit status 0" in window.console.line.text()


def test_stop_ends_the_program_and_keeps_a_complete_trace(qtbot, window, compile_program, default_jdk, tmp_path):
    classes = compile_program("long_running", default_jdk)
    progress: list[dict] = []
    window.runner.progress.connect(progress.append)
    assert window.run_config(config_for(classes, tmp_path))
    qtbot.waitUntil(lambda: any(p.get("events", 0) > 0 for p in progress), timeout=120_000)
    assert window.runner.running()
    assert "events" in window.console.line.text()
    with qtbot.waitSignal(window.traceLoaded, timeout=180_000) as loaded:
        window.runner.stop()
    trace = loaded.args[0].path
    meta = json.loads((trace / "trace.json").read_text())
    assert meta["status"] == "complete"
    assert json.loads((trace / "launch.json").read_text())["exit_code"] == 128 + 15
    assert loaded.args[0].analysis.thread("main").calls


def test_a_missing_main_class_shows_the_jvms_message(qtbot, window, compile_program, default_jdk, tmp_path):
    classes = compile_program("hello", default_jdk)
    errors: list[str] = []
    window.runner.output.connect(lambda text, err: errors.append(text) if err else None)
    with qtbot.waitSignal(window.runner.finished, timeout=120_000) as finished:
        assert window.run_config(config_for(classes, tmp_path, main="NoSuchMain"))
    recording = finished.args[0]
    assert recording.exit_status == 1
    assert "NoSuchMain" in "".join(errors)
    assert "NoSuchMain" in window.console.text.toPlainText()


def test_a_jdk_that_does_not_exist_fails_with_a_message(qtbot, window, compile_program, default_jdk, tmp_path):
    classes = compile_program("hello", default_jdk)
    with qtbot.waitSignal(window.runner.failed, timeout=30_000) as failed:
        assert not window.run_config(config_for(classes, tmp_path, java_home=str(tmp_path / "no-jdk")))
    assert "is not a JDK" in failed.args[0]
    assert window.banner.isVisible()
    assert not window.runner.running()


def test_run_configurations_are_saved_and_validated(qtbot, tmp_path, compile_program, default_jdk):
    store = RunConfigStore(tmp_path / "runs.json")
    classes = compile_program("hello", default_jdk)
    dialog = RunDialog(store)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert not ok.isEnabled() and "main class" in dialog.message.text()
    dialog.main.setText("not a class!")
    assert not ok.isEnabled() and "not a class name" in dialog.message.text()
    dialog.main.setText("Main")
    dialog.classpath.setText(str(classes))
    dialog.cwd.setText(str(tmp_path))
    dialog.args.setText("one 'two words'")
    dialog.include.setText("missing-filter.txt")
    assert not ok.isEnabled() and "include filter" in dialog.message.text()
    dialog.include.setText("")
    dialog.level.setCurrentText("method")
    assert ok.isEnabled(), dialog.message.text()
    config = dialog.config()
    assert config.argv() == ["java", "-cp", str(classes), "Main", "one", "two words"]
    options = config.recorder_options(tmp_path / "t")
    assert options.level == "method" and options.jdk is True
    store.save(config)
    again = RunConfigStore(tmp_path / "runs.json")
    assert [c.to_dict() for c in again.configs] == [config.to_dict()]
    # a damaged store is set aside, and the store starts empty saying so
    (tmp_path / "runs.json").write_text("{oops")
    broken = RunConfigStore(tmp_path / "runs.json")
    assert broken.configs == [] and "unreadable" in broken.problem
    assert (tmp_path / "runs.json.bad").exists()


def test_jar_configurations(tmp_path):
    jar = tmp_path / "app.jar"
    jar.write_bytes(b"PK")
    config = RunConfig(main="app.jar", cwd=str(tmp_path), args="x", jvm_options="-Xmx64m")
    assert config.argv() == ["java", "-Xmx64m", "-jar", "app.jar", "x"]
    assert config.problems() == []
    assert "does not exist" in RunConfig(main="other.jar", cwd=str(tmp_path)).problems()[0]


def test_the_jdks_of_this_machine_are_offered(default_jdk):
    homes = [Path(home) for _label, home in find_jdks()]
    assert default_jdk.home.resolve() in homes


def test_live_progress_counts_a_finished_trace_exactly(record, default_jdk):
    run = record("multithread", default_jdk)
    meta = json.loads((run.trace_dir / "trace.json").read_text())
    progress = LiveProgress(run.trace_dir).poll()
    assert progress["events"] == meta["counts"]["events"]
    assert progress["classes"] == meta["counts"]["classes"]
    assert progress["threads"] == meta["counts"]["threads"]
    assert progress["status"] == "complete"


def test_a_session_refuses_bad_input_before_starting(tmp_path):
    from jbgui.launch import RecorderOptions

    with pytest.raises(LaunchError, match="working directory"):
        RecordingSession(["java", "Main"], RecorderOptions(out=tmp_path / "t"), cwd=tmp_path / "nope").start()
    with pytest.raises(LaunchError, match="not a JDK"):
        RecordingSession(["java", "Main"], RecorderOptions(out=tmp_path / "t"), java_home=tmp_path).start()
    assert not (tmp_path / "t").exists()
