"""The agent's instrumentation classes under their own unit tests (JUnit 5, Debian's ``junit5``):
small target methods whose bytecode each test spells out (tests/agent/java/jbgui/instr/Targets.java),
cut into blocks, measured, described and instrumented by the agent's own classes. Compiled against
the agent's jars and run by the JUnit Platform console launcher; the launcher's counts are checked
here, so a failing Java test fails this test with the launcher's report."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from jbgui.agent.build import ENGINE_JAR, RUNTIME_JAR, ensure_agent, find_java_home

JAVA_TESTS = Path(__file__).parent / "java"
JUNIT = Path("/usr/share/java")
LAUNCHER = JUNIT / "junit-platform-console-standalone.jar"
API = [JUNIT / "junit-jupiter-api.jar", JUNIT / "apiguardian-api.jar", JUNIT / "opentest4j.jar"]


def test_instrumentation_units_pass(tmp_path):
    if not LAUNCHER.is_file():
        pytest.fail("Debian's junit5 is not installed: run scripts/setup.sh")
    agent = ensure_agent()
    jars = [agent.parent / RUNTIME_JAR, agent.parent / ENGINE_JAR]
    java_home = find_java_home()
    classes = tmp_path / "classes"
    sources = sorted(map(str, JAVA_TESTS.rglob("*.java")))
    # -g: the targets' line numbers; --release 17: what the agent is built for
    compiled = subprocess.run([str(java_home / "bin" / "javac"), "-g", "--release", "17", "-encoding", "UTF-8",
                               "-cp", ":".join(map(str, [*jars, *(p for p in API if p.exists())])), "-d",
                               str(classes), *sources], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr
    run = subprocess.run([str(java_home / "bin" / "java"), "-jar", str(LAUNCHER), "--disable-banner",
                          "--details=tree", "--class-path", ":".join(map(str, [classes, *jars])),
                          "--select-package", "jbgui"], capture_output=True, text=True, timeout=300)
    report = run.stdout + run.stderr
    counts = {k: int(v) for v, k in re.findall(r"\[\s*(\d+) tests (found|successful|failed)\s*\]", report)}
    assert counts.get("failed") == 0 and run.returncode == 0, report
    assert counts.get("found", 0) >= 26 and counts["successful"] == counts["found"], report
