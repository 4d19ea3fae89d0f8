"""RecordingSession (jbgui.launch, no Qt) on real JVMs: what the explorer's runs rest on. It checks
its inputs as jbtrace record does, runs the program in a working directory of its choice, hands
its output to a callback and writes the same launch.json."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from jbgui.launch import LaunchError, RecorderOptions
from jbgui.launch.session import RecordingSession, with_java_home

LAUNCH_KEYS = {"command", "traced_command", "cwd", "exit_code", "wall_seconds", "started_epoch_ms", "agent_jar",
               "agent_options", "jbgui_version"}
PROGRAMS = Path(__file__).resolve().parents[1] / "programs"


def test_a_session_records_in_its_working_directory(compile_program, default_jdk, agent_jar, tmp_path):
    classes = compile_program("hello", default_jdk)
    workdir = tmp_path / "work"
    workdir.mkdir()
    pieces: list[tuple[str, bool, str]] = []
    session = RecordingSession(
        ["java", "-cp", str(classes), "Main"], RecorderOptions(out=Path("trace"), level="method"),
        cwd=workdir, java_home=default_jdk.home, agent_jar=agent_jar,
        on_output=lambda text, err: pieces.append((text, err, threading.current_thread().name)))
    session.start()
    assert session.poll() is None or session.recording is not None
    recording = session.wait(timeout=120)
    assert session.poll() is recording and not session.running()
    # Relative recorder paths are the program's: the trace is in its working directory.
    assert recording.trace_dir == workdir / "trace"
    assert recording.exit_status == 0 and recording.summary.status == "complete"
    assert recording.command[0] == default_jdk.java
    launch = json.loads((workdir / "trace" / "launch.json").read_text())
    assert set(launch) == LAUNCH_KEYS
    assert launch["cwd"] == str(workdir) and launch["exit_code"] == 0
    assert launch["command"] == [default_jdk.java, "-cp", str(classes), "Main"]
    assert launch["traced_command"][1].startswith(f"-agentlib:instrument={agent_jar}=")
    assert launch["agent_options"]["level"] == "method"
    assert "".join(t for t, err, _ in pieces if not err) == (PROGRAMS / "hello" / "expected_stdout.txt").read_text()
    assert {name for _, _, name in pieces} <= {"jbgui-run-stdout", "jbgui-run-stderr"}
    progress = session.progress()
    assert progress["status"] == "complete" and progress["events"] == recording.summary.counts["events"]
    assert not progress["running"] and progress["seconds"] == pytest.approx(recording.wall_seconds, abs=0.01)


def test_bad_input_is_refused_before_anything_starts(tmp_path, agent_jar):
    out = tmp_path / "trace"

    def start(**kw):
        argv = kw.pop("argv", ["java", "Main"])
        options = kw.pop("options", RecorderOptions(out=out))
        return RecordingSession(argv, options, agent_jar=agent_jar, **kw).start()

    with pytest.raises(LaunchError, match="working directory .* does not exist"):
        start(cwd=tmp_path / "nowhere")
    with pytest.raises(LaunchError, match="is not a JDK: the folder does not exist"):
        start(java_home=tmp_path / "no-jdk")
    with pytest.raises(LaunchError, match="is not a JDK: it has no bin/java"):
        start(java_home=tmp_path)
    with pytest.raises(LaunchError, match="include filter file .* does not exist"):
        start(options=RecorderOptions(out=out, include=Path("missing.txt")), cwd=tmp_path)
    with pytest.raises(LaunchError, match="not a JDK launcher"):
        start(argv=["sh", "-c", "true"])
    with pytest.raises(LaunchError, match="no-such-java-launcher: command not found") as missing:
        start(argv=["no-such-java-launcher", "Main"])
    assert missing.value.exit_status == 127
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(LaunchError, match="not empty"):
        start(options=RecorderOptions(out=tmp_path / "busy"))
    assert not out.exists()   # nothing ran, and no empty trace directory was left behind


def test_java_home_replaces_only_jdk_launchers(default_jdk):
    assert with_java_home(["java", "-cp", "x", "Main"], default_jdk.home) == [default_jdk.java, "-cp", "x", "Main"]
    assert with_java_home(["/usr/bin/javac", "A.java"], default_jdk.home) == [default_jdk.javac, "A.java"]
    assert with_java_home(["java", "Main"], None) == ["java", "Main"]
    assert with_java_home(["mvn", "test"], default_jdk.home) == ["mvn", "test"]
