"""Start the bridge's JVM once, with the recorder's engine (its block analysis and ASM) on the
class path."""

from __future__ import annotations

import threading
from pathlib import Path

import jpype
import jpype.config

from jbgui.agent.build import ENGINE_JAR, RUNTIME_JAR, AgentBuildError, ensure_agent, find_java_home
from jbgui.bridge.errors import BridgeError

_LOCK = threading.Lock()


def libjvm(java_home: Path) -> Path:
    """The JVM library of a JDK (asked for explicitly: JPype's own guess may pick another JDK)."""
    for candidate in ("lib/server/libjvm.so", "lib/client/libjvm.so"):
        path = Path(java_home) / candidate
        if path.exists():
            return path
    raise BridgeError(f"no libjvm.so under {java_home}: is it a JDK?")


def ensure_jvm() -> None:
    """Start the JVM (idempotent, thread-safe). Which JDK: ``$JAVA_HOME``, else the one ``javac``
    on PATH belongs to, as for building the agent."""
    if jpype.isJVMStarted():
        return
    with _LOCK:
        if jpype.isJVMStarted():
            return
        try:
            agent = ensure_agent()
            home = find_java_home()
        except AgentBuildError as error:
            raise BridgeError(f"cannot start the JVM bridge: {error}") from error
        jars = [str(agent.parent / ENGINE_JAR), str(agent.parent / RUNTIME_JAR)]
        # The JVM is started from a worker thread; destroying it at exit would wait for that
        # thread's attachment and hang the explorer's exit. It holds nothing that needs a clean
        # shutdown: the process's end ends it.
        jpype.config.destroy_jvm = False
        # The bridge reads class files; it runs nothing of the program's. A small serial heap.
        jpype.startJVM(str(libjvm(Path(home))), "-Xss4m", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
                       classpath=jars, convertStrings=True)


def jvm_java_home() -> str:
    """The ``java.home`` of the bridge's JVM."""
    ensure_jvm()
    return str(jpype.JClass("java.lang.System").getProperty("java.home"))
