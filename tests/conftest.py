"""Shared fixtures: the JDKs on this machine, compiled test programs, and traced/untraced runs.

Every JDK found is a fixture parameter (``jdk``), so each recorder test runs once per JDK: the one
``JAVA_HOME`` or the ``javac`` on PATH names, and every JDK of release 17 or newer installed under
``/usr/lib/jvm`` (Debian's 17 and, for example, a Temurin 25 beside it).

Test programs live in ``tests/programs/<name>/`` (Java sources, class ``Main`` in the default
package). ``compile_program`` compiles one with a given JDK's ``javac`` once per session.
``record`` runs a compiled program with the agent, straight through ``java``, loading it as
``jbtrace record`` does (``-agentlib:instrument=…`` from the class path);
``run_untraced`` runs it without. Both return a :class:`JavaRun`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pytest

from jbgui.launch.command import agent_flag

TESTS_DIR = Path(__file__).resolve().parent
PROGRAMS_DIR = TESTS_DIR / "programs"
JVM_DIR = Path("/usr/lib/jvm")
OLDEST_SUPPORTED_RELEASE = 17
# A traced run that takes longer than this is hung; fail the test instead of the whole session.
RUN_TIMEOUT_S = 300


# --------------------------------------------------------------------------------------------
# JDKs


@dataclass(frozen=True)
class Jdk:
    """An installed JDK: its home directory and feature release (17, 21, 25, …)."""

    home: Path
    release: int
    version: str
    # Test id: "jdk17", or "jdk17-<dir name>" when two JDKs of one release are installed.
    id: str = ""

    @property
    def java(self) -> str:
        return str(self.home / "bin" / "java")

    @property
    def javac(self) -> str:
        return str(self.home / "bin" / "javac")


def _read_jdk(home: Path) -> Jdk | None:
    """The JDK at ``home``, or None when it is not a JDK with javac."""
    home = home.resolve()
    release_file = home / "release"
    if not (home / "bin" / "javac").exists() or not release_file.exists():
        return None
    match = re.search(r'^JAVA_VERSION="([^"]+)"', release_file.read_text(), re.MULTILINE)
    if not match:
        return None
    version = match.group(1)
    feature = version.split(".")[0]
    if feature == "1":  # 1.8.0_x
        feature = version.split(".")[1]
    return Jdk(home=home, release=int(feature), version=version, id=f"jdk{feature}")


def default_jdk_home() -> Path | None:
    """``JAVA_HOME`` when it holds a javac, else the JDK that the ``javac`` on PATH belongs to."""
    env = os.environ.get("JAVA_HOME")
    if env and (Path(env) / "bin" / "javac").exists():
        return Path(env)
    javac = shutil.which("javac")
    return Path(javac).resolve().parent.parent if javac else None


def find_jdks() -> list[Jdk]:
    """The default JDK first, then every other JDK of release 17 or newer under /usr/lib/jvm."""
    found: dict[Path, Jdk] = {}
    candidates = []
    default = default_jdk_home()
    if default is not None:
        candidates.append(default)
    if JVM_DIR.is_dir():
        candidates.extend(sorted(JVM_DIR.iterdir()))
    for home in candidates:
        jdk = _read_jdk(home)
        if jdk is not None and jdk.release >= OLDEST_SUPPORTED_RELEASE and jdk.home not in found:
            found[jdk.home] = jdk
    jdks = list(found.values())
    releases = [j.release for j in jdks]
    return [
        replace(j, id=f"jdk{j.release}-{j.home.name}") if releases.count(j.release) > 1 else j for j in jdks
    ]


JDKS = find_jdks()


@pytest.fixture(scope="session", params=JDKS, ids=[j.id for j in JDKS])
def jdk(request: pytest.FixtureRequest) -> Jdk:
    """Each JDK on the machine in turn."""
    return request.param


@pytest.fixture(scope="session")
def default_jdk() -> Jdk:
    """The JDK named by JAVA_HOME or PATH: for tests too slow to repeat on every JDK."""
    if not JDKS:
        pytest.fail("no JDK with javac found: install openjdk-17-jdk-headless or set JAVA_HOME")
    return JDKS[0]


@pytest.fixture(scope="session")
def newest_jdk() -> Jdk:
    """The JDK of the newest release on the machine: for tests of what only new releases have."""
    if not JDKS:
        pytest.fail("no JDK with javac found: install openjdk-17-jdk-headless or set JAVA_HOME")
    return max(JDKS, key=lambda j: j.release)


# --------------------------------------------------------------------------------------------
# The agent


@pytest.fixture(scope="session")
def agent_jar() -> Path:
    """The agent jar, built from the sources in the package if they changed."""
    from jbgui.agent.build import AgentBuildError, ensure_agent

    try:
        return ensure_agent()
    except AgentBuildError as error:
        pytest.fail(f"cannot build the agent: {error}")


# --------------------------------------------------------------------------------------------
# Compiling programs


def program_sources(source_dir: Path) -> list[Path]:
    files = sorted(source_dir.rglob("*.java"))
    if not files:
        raise FileNotFoundError(f"no Java sources under {source_dir}")
    return files


@pytest.fixture(scope="session")
def compile_program(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``compile_program(name_or_dir, jdk) -> classes dir``, cached for the session.

    ``name_or_dir`` is a program under tests/programs or a directory of sources (generated ones).
    The program is compiled by the same JDK that will run it, so class files of every release the
    machine has reach the agent.
    """
    cache: dict[tuple[str, str], Path] = {}

    def compile_(program: str | Path, jdk: Jdk) -> Path:
        source_dir = Path(program) if isinstance(program, Path) else PROGRAMS_DIR / program
        sources = program_sources(source_dir)
        digest = hashlib.sha256()
        for path in sources:
            digest.update(path.read_bytes())
        key = (str(source_dir), jdk.id + digest.hexdigest())
        if key not in cache:
            out = tmp_path_factory.mktemp(f"classes-{source_dir.name}-{jdk.id}")
            cmd = [jdk.javac, "-g", "-encoding", "UTF-8", "-d", str(out), *map(str, sources)]
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
            if result.returncode != 0:
                pytest.fail(f"javac failed on {source_dir}:\n{result.stderr}")
            cache[key] = out
        return cache[key]

    return compile_


# --------------------------------------------------------------------------------------------
# Running programs


@dataclass
class JavaRun:
    """One finished JVM: what it printed, how it ended, and where its trace went (if traced)."""

    command: list[str]
    exit_code: int
    stdout: str
    stderr: str
    trace_dir: Path | None = None
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def trace_json(self) -> dict:
        """The trace's trace.json."""
        assert self.trace_dir is not None, "an untraced run has no trace"
        return json.loads((self.trace_dir / "trace.json").read_text())

    def describe(self) -> str:
        """For assertion messages: the command and the tail of stderr."""
        tail = "\n".join(self.stderr.splitlines()[-30:])
        return f"command: {' '.join(self.command)}\nexit code: {self.exit_code}\nstderr (tail):\n{tail}"


def agent_argument(agent_jar: Path, out: Path, options: Mapping[str, object],
                   java_args: Sequence[str] | None = None) -> str:
    """The agent's word for a ``java`` command of ``java_args`` (after ``java``), as ``jbtrace
    record`` loads it (jbgui.launch.command.agent_flag: ``-agentlib:instrument=<jar>=…`` from the
    class path, else ``-javaagent:<jar>=…``; without ``java_args``, ``-javaagent``), with options
    ``out=<dir>,key=value,…``; a value of True/False becomes on/off."""
    parts = [f"out={out}"]
    for key, value in options.items():
        if value is True:
            value = "on"
        elif value is False:
            value = "off"
        parts.append(f"{key}={value}")
    argv = ["java", *java_args] if java_args is not None else None
    return agent_flag("java", agent_jar, ",".join(parts), argv, clean_env())


def clean_env() -> dict[str, str]:
    """The environment without options that would make the JVM print or behave differently."""
    env = dict(os.environ)
    for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"):
        env.pop(name, None)
    return env


def run_java(
    jdk: Jdk,
    java_args: Sequence[str],
    *,
    cwd: Path,
    jvm_args: Sequence[str] = (),
    timeout: float = RUN_TIMEOUT_S,
    trace_dir: Path | None = None,
) -> JavaRun:
    """Run ``java <jvm_args> <java_args>`` in ``cwd`` and capture everything."""
    command = [jdk.java, *jvm_args, *java_args]
    started = time.perf_counter()
    result = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=clean_env(), stdin=subprocess.DEVNULL
    )
    return JavaRun(
        command=command,
        exit_code=result.returncode,
        stdout=result.stdout,
        stderr=result.stderr,
        trace_dir=trace_dir,
        seconds=time.perf_counter() - started,
    )


@pytest.fixture(scope="session")
def run_untraced(compile_program, tmp_path_factory) -> Callable[..., JavaRun]:
    """``run_untraced(program, jdk, args=()) -> JavaRun``: the program without the agent."""

    def run(program: str | Path, jdk: Jdk, args: Sequence[str] = (), *, jvm_args: Sequence[str] = ()) -> JavaRun:
        classes = compile_program(program, jdk)
        cwd = tmp_path_factory.mktemp("run")
        return run_java(jdk, ["-cp", str(classes), "Main", *args], cwd=cwd, jvm_args=jvm_args)

    return run


@pytest.fixture(scope="session")
def run_command() -> Callable[..., JavaRun]:
    """``run_command(jdk, java_args, cwd) -> JavaRun``: any ``java`` command line, untraced."""

    def run(jdk: Jdk, java_args: Sequence[str], cwd: Path, *, timeout: float = RUN_TIMEOUT_S) -> JavaRun:
        return run_java(jdk, java_args, cwd=cwd, timeout=timeout)

    return run


@pytest.fixture(scope="session")
def record_command(agent_jar) -> Callable[..., JavaRun]:
    """``record_command(jdk, java_args, cwd, *, out=None, **agent_options) -> JavaRun``.

    Any ``java`` command line (``java_args`` without ``java`` itself) with the agent, writing its
    trace to ``out`` (default ``cwd/trace``).
    """

    def run(jdk: Jdk, java_args: Sequence[str], cwd: Path, /, *, jvm_args: Sequence[str] = (), out: Path | str | None = None,
            timeout: float = RUN_TIMEOUT_S, **options: object) -> JavaRun:
        out = Path(out) if out is not None else cwd / "trace"
        agent = agent_argument(agent_jar, out, options, [*jvm_args, *java_args])
        return run_java(jdk, java_args, cwd=cwd, jvm_args=[agent, *jvm_args], trace_dir=out, timeout=timeout)

    return run


@pytest.fixture(scope="session")
def record(compile_program, record_command, tmp_path_factory) -> Callable[..., JavaRun]:
    """``record(program, jdk, args=(), **agent_options) -> JavaRun`` with ``trace_dir`` set.

    Runs ``java -agentlib:instrument=<jar>=out=<dir>,<options> -cp <classes> Main <args>`` directly
    (:func:`agent_argument`). Agent
    options are passed as written (``level="method"``, ``mode=1``; True/False become on/off);
    ``out`` may be given to choose the trace directory (default: a fresh one in the run's
    working directory).
    """

    def run(program: str | Path, jdk: Jdk, /, args: Sequence[str] = (), *, jvm_args: Sequence[str] = (),
            **options: object) -> JavaRun:
        classes = compile_program(program, jdk)
        cwd = tmp_path_factory.mktemp("rec")
        return record_command(jdk, ["-cp", str(classes), "Main", *args], cwd, jvm_args=jvm_args, **options)

    return run


@pytest.fixture(scope="session")
def start_program(compile_program, agent_jar, tmp_path_factory) -> Callable[..., tuple[subprocess.Popen, Path | None]]:
    """``start_program(program, jdk, traced=True, **agent_options) -> (process, trace_dir)``.

    Starts the program without waiting for it (stdout and stderr are pipes), in a session of its
    own so that a test can signal it alone. The caller must wait for or kill the process; one a
    failed test left running is killed when the session ends.
    """
    started: list[subprocess.Popen] = []

    def start(program: str | Path, jdk: Jdk, /, traced: bool = True, **options: object):
        classes = compile_program(program, jdk)
        cwd = tmp_path_factory.mktemp("started")
        out = Path(options.pop("out", cwd / "trace")) if traced else None
        jvm_args = [agent_argument(agent_jar, out, options, ["-cp", str(classes), "Main"])] if traced else []
        process = subprocess.Popen(
            [jdk.java, *jvm_args, "-cp", str(classes), "Main"], cwd=cwd, env=clean_env(), text=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        started.append(process)
        return process, out

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()


@pytest.fixture(scope="session")
def untraced_run(run_untraced) -> Callable[..., JavaRun]:
    """``untraced_run(program, jdk, args=())``: like ``run_untraced``, run once per session."""
    cache: dict[tuple, JavaRun] = {}

    def run(program: str | Path, jdk: Jdk, args: Sequence[str] = ()) -> JavaRun:
        key = (str(program), jdk.id, tuple(args))
        if key not in cache:
            cache[key] = run_untraced(program, jdk, args)
        return cache[key]

    return run


@pytest.fixture(scope="session")
def program_runs(record, untraced_run) -> Callable[..., tuple[JavaRun, JavaRun]]:
    """``program_runs(program, jdk, args=(), **options) -> (untraced, traced)``, cached per session.

    Several tests look at one program's trace; the JVMs run once.
    """
    cache: dict[tuple, JavaRun] = {}

    def runs(program: str | Path, jdk: Jdk, /, args: Sequence[str] = (), **options: object) -> tuple[JavaRun, JavaRun]:
        key = (str(program), jdk.id, tuple(args), tuple(sorted(options.items())))
        if key not in cache:
            cache[key] = record(program, jdk, args, **options)
        return untraced_run(program, jdk, args), cache[key]

    return runs
