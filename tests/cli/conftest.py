"""Fixtures for running the real ``jbtrace`` on real JVMs.

``jbtrace(args, cwd=…, input=…)`` runs ``python -m jbgui.cli`` as a user would and captures its
streams; ``start_jbtrace`` starts it without waiting; ``run_bare`` runs a command untraced, for
comparison. ``compile_java(sources)`` compiles Java sources given as text with the default JDK's
``javac``. The shared fixtures ``agent_jar`` and ``default_jdk`` come from tests/conftest.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_SOURCES = REPO / "resources" / "examples" / "example"
JBTRACE_TIMEOUT_S = 300


def jbtrace_env() -> dict[str, str]:
    """Our environment without the variables that make every JVM print or behave differently."""
    env = dict(os.environ)
    for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"):
        env.pop(name, None)
    return env


def jbtrace_command(args: Sequence[str]) -> list[str]:
    """The command line of ``jbtrace <args>`` with this interpreter (works installed or not)."""
    return [sys.executable, "-m", "jbgui.cli", *args]


@pytest.fixture(scope="session")
def jbtrace(agent_jar: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``jbtrace(args, cwd=…, input=None)``; the agent is built before the first run."""

    def run(args: Sequence[str], *, cwd: Path, input: str | None = None,
            timeout: float = JBTRACE_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            jbtrace_command(args), cwd=cwd, input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True, text=True, timeout=timeout, env=jbtrace_env(),
        )

    return run


@pytest.fixture(scope="session")
def start_jbtrace(agent_jar: Path) -> Callable[..., subprocess.Popen[str]]:
    """``start_jbtrace(args, cwd=…)``: jbtrace in a session of its own, stdout and stderr piped.

    Its own session, so that a test may signal it without signalling pytest.
    """

    def start(args: Sequence[str], *, cwd: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            jbtrace_command(args), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=jbtrace_env(), start_new_session=True,
        )

    return start


@pytest.fixture(scope="session")
def run_bare() -> Callable[..., subprocess.CompletedProcess[str]]:
    """``run_bare(argv, cwd=…)``: the same command without jbtrace, for comparison."""

    def run(argv: Sequence[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True,
                              timeout=JBTRACE_TIMEOUT_S, env=jbtrace_env(), stdin=subprocess.DEVNULL)

    return run


@pytest.fixture(scope="session")
def compile_java(default_jdk, tmp_path_factory) -> Callable[[dict[str, str]], Path]:
    """``compile_java({"Main.java": source, …}) -> classes directory``."""

    def compile_(sources: dict[str, str]) -> Path:
        root = tmp_path_factory.mktemp("java")
        source_dir, classes = root / "src", root / "classes"
        source_dir.mkdir()
        for name, text in sources.items():
            (source_dir / name).write_text(text)
        result = subprocess.run(
            [default_jdk.javac, "-g", "-d", str(classes), *map(str, sorted(source_dir.glob("*.java")))],
            capture_output=True, text=True, timeout=JBTRACE_TIMEOUT_S,
        )
        assert result.returncode == 0, f"javac failed:\n{result.stderr}"
        return classes

    return compile_


@pytest.fixture(scope="session")
def example_classes(compile_java) -> Path:
    """The bundled example (resources/examples), compiled."""
    return compile_java({p.name: p.read_text() for p in EXAMPLE_SOURCES.glob("*.java")})
