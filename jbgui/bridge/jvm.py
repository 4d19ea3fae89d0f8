"""The bridge's JVM: started once per process (a JPype limit), lazily, from any thread, with the
recorder's engine jar (its block analysis, its describing code and ASM) on the class path.

Which JDK runs it: ``$JAVA_HOME``, else the JDK the ``javac`` on PATH belongs to, else the one of
``java`` on PATH; its ``libjvm.so`` is named to JPype explicitly, because JPype's own guess may pick
another JDK than the one the agent was built for. The JVM only reads class files: it never runs
the traced program's code, so one JVM serves every trace, whatever JDK recorded it (another JDK's
runtime image is read through that JDK's own ``jrt-fs.jar``, see :mod:`jbgui.bridge.sources`).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path

import jpype
import jpype.config

from jbgui.agent.build import ENGINE_JAR, JAVA_RELEASE, RUNTIME_JAR, AgentBuildError, ensure_agent
from jbgui.bridge.errors import BridgeError

_START_LOCK = threading.Lock()
# The Java class the bridge calls; its presence tells that the JVM has the engine on its class path.
STATIC_LISTING = "jbgui.instr.StaticListing"


def libjvm(java_home: str | Path) -> Path:
    """The JVM library of a JDK (``lib/server/libjvm.so``), named explicitly to JPype."""
    for candidate in ("lib/server/libjvm.so", "lib/client/libjvm.so", "lib/zero/libjvm.so"):
        path = Path(java_home) / candidate
        if path.exists():
            return path
    raise BridgeError(f"no libjvm.so under {java_home}: it is not a JDK (set JAVA_HOME to one, release "
                      f"{JAVA_RELEASE} or newer)")


def java_release(java_home: str | Path) -> int | None:
    """The feature release (17, 21, 25 …) of a JDK, from its ``release`` file; None if unknown."""
    try:
        text = (Path(java_home) / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(?:1\.)?(\d+)', text, re.MULTILINE)
    return int(match.group(1)) if match else None


def bridge_java_home() -> Path:
    """The JDK the bridge's JVM runs on: ``$JAVA_HOME``, else the JDK of ``javac``, then of ``java``
    on PATH (the same choice as building the agent, which needs ``javac``)."""
    env = os.environ.get("JAVA_HOME")
    if env and Path(env).is_dir():
        return Path(env)
    for tool in ("javac", "java"):
        found = shutil.which(tool)
        if found:
            return Path(found).resolve().parent.parent
    raise BridgeError("no JDK found for the JVM bridge: set JAVA_HOME, or install one "
                      "(on Debian: apt-get install openjdk-17-jdk-headless)")


def ensure_jvm() -> None:
    """Start the JVM if it is not running yet. Idempotent and thread-safe; costs about half a
    second the first time (longer when the agent's jars must be built first)."""
    if jpype.isJVMStarted():
        return
    with _START_LOCK:
        if jpype.isJVMStarted():
            _check_engine()
            return
        home = bridge_java_home()
        release = java_release(home)
        if release is not None and release < int(JAVA_RELEASE):
            raise BridgeError(f"the JVM bridge needs JDK {JAVA_RELEASE} or newer; {home} is JDK {release} "
                              "(set JAVA_HOME to a newer one)")
        library = libjvm(home)
        try:
            agent = ensure_agent()
        except AgentBuildError as error:
            raise BridgeError(f"cannot start the JVM bridge: {error}") from error
        jars = [str(agent.parent / ENGINE_JAR), str(agent.parent / RUNTIME_JAR)]
        # Started from a worker thread, a JVM destroyed at exit waits for that thread's attachment
        # and hangs the process's exit. It holds nothing that needs a clean shutdown.
        jpype.config.destroy_jvm = False
        try:
            # -Xrs and interrupt=False: signals (^C, SIGTERM) stay Python's; a small serial heap,
            # since the JVM only reads class files.
            jpype.startJVM("-Xrs", "-XX:+UseSerialGC", "-Xss4m", "-Djava.awt.headless=true",
                           jvmpath=str(library), classpath=jars, convertStrings=False, interrupt=False)
        except (OSError, RuntimeError) as error:
            raise BridgeError(f"cannot start the JVM bridge on {library}: {error}") from error
    _check_engine()


def _check_engine() -> None:
    """The engine must be loadable: not so when something else in this process started the JVM
    (JPype allows one per process) without it."""
    try:
        jpype.JClass(STATIC_LISTING)
    except (TypeError, jpype.JException) as error:
        raise BridgeError(f"the JVM of this process cannot load {STATIC_LISTING} ({error}): it was started "
                          "without jbgui's engine jar, and a process can start only one JVM") from error


def jvm_java_home() -> Path:
    """The ``java.home`` of the running bridge JVM (starting it if needed)."""
    ensure_jvm()
    return Path(str(jpype.JClass("java.lang.System").getProperty("java.home")))
