"""Turn a user's Java command line into the traced one.

``java`` takes the agent as ``-javaagent:<jar>=<options>``. The other JDK launchers (``javac``,
``jar``, ``jshell``, …) run their tool inside a JVM too, and pass ``-J<flag>`` on to that JVM, so
they take ``-J-javaagent:…``. Either way the flag goes right after ``argv[0]``: for ``java`` it must
precede the main class, after which every word belongs to the program.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Literal

from jbgui.launch.errors import COMMAND_NOT_FOUND, LaunchError

LauncherKind = Literal["java", "tool"]

# The JDK's own launchers that start a JVM and understand -J (JDK 17 to 25, bin/).
JDK_TOOLS = frozenset({
    "jar", "jarsigner", "javac", "javadoc", "javap", "jcmd", "jconsole", "jdb", "jdeprscan",
    "jdeps", "jfr", "jhsdb", "jimage", "jinfo", "jlink", "jmap", "jmod", "jnativescan", "jpackage",
    "jps", "jrunscript", "jshell", "jstack", "jstat", "jstatd", "jwebserver", "keytool",
    "rmiregistry", "serialver",
})

# java options whose value is the next word (the rest use `--opt=value` or carry it attached).
_JAVA_OPTIONS_WITH_VALUE = frozenset({
    "-cp", "-classpath", "--class-path", "-p", "--module-path", "--upgrade-module-path",
    "--add-modules", "--limit-modules", "--add-reads", "--add-exports", "--add-opens",
    "--patch-module", "--enable-native-access", "-d", "--describe-module", "--source",
})


def _launcher_name(path: str) -> str:
    name = os.path.basename(path)
    return name[:-4] if name.lower().endswith(".exe") else name


def classify_launcher(argv0: str) -> LauncherKind | None:
    """``"java"``, ``"tool"`` (a JDK launcher taking ``-J``), or ``None`` for anything else.

    The name decides first; a name we do not know (a versioned ``java17`` link, a newer tool)
    is followed through its symbolic links: a program that lives in a JDK's ``bin`` beside
    ``java`` (a directory with a ``release`` file above it) is a JDK launcher.
    """
    name = _launcher_name(argv0)
    if name == "java":
        return "java"
    if name in JDK_TOOLS:
        return "tool"
    found = shutil.which(argv0)
    if found is None:
        return None
    real = Path(found).resolve()
    if _launcher_name(real.name) == "java":
        return "java"
    jdk_home = real.parent.parent
    # A JDK image has bin/java and a `release` file at its top (/usr/bin beside /usr/bin/java
    # is not one).
    if real.parent.name == "bin" and (real.parent / "java").is_file() and (jdk_home / "release").is_file():
        return "tool"
    return None


def agent_flag(kind: LauncherKind, agent_jar: Path, agent_options: str) -> str:
    """The one word that loads the agent: ``-javaagent:…`` or, for JDK tools, ``-J-javaagent:…``."""
    if "=" in str(agent_jar):
        # The JVM splits -javaagent at the first '=': a jar path holding one cannot be named.
        raise LaunchError(f"the agent jar's path {str(agent_jar)!r} contains '=', which -javaagent cannot carry")
    flag = f"-javaagent:{agent_jar}={agent_options}"
    return flag if kind == "java" else "-J" + flag


def insert_agent(argv: list[str], flag: str) -> list[str]:
    """``argv`` with ``flag`` right after ``argv[0]``."""
    return [argv[0], flag, *argv[1:]]


def check_command(argv: list[str]) -> LauncherKind:
    """How ``argv`` takes the agent, or :class:`LaunchError` when it cannot take it.

    An empty command or one that is neither ``java`` nor a JDK launcher is a usage error (2);
    a command that cannot be found is 127, as in a shell.
    """
    if not argv:
        raise LaunchError("no command to run: give a java command line, e.g. java -cp build Main")
    kind = classify_launcher(argv[0])
    if kind is None:
        if shutil.which(argv[0]) is None:
            raise LaunchError(f"{argv[0]}: command not found", COMMAND_NOT_FOUND)
        raise LaunchError(
            f"{argv[0]!r} is not a JDK launcher: the command must start with java (or a JDK tool "
            "such as javac or jshell) so that the agent can be loaded into its JVM"
        )
    return kind


def traced_command(argv: list[str], agent_jar: Path, agent_options: str) -> list[str]:
    """The traced command line for a user's ``java``/JDK-tool command line (see :func:`check_command`)."""
    return insert_agent(argv, agent_flag(check_command(argv), agent_jar, agent_options))


def program_name(argv: list[str]) -> str:
    """A short name for the program: the main class's simple name, the jar's stem, the module
    name, the source file's stem, or the launcher's name (``javac``)."""
    if not argv:
        return "program"
    launcher = _launcher_name(argv[0])
    if launcher != "java":
        return launcher or "program"
    words = iter(argv[1:])
    for word in words:
        if word in ("-jar",):
            jar = next(words, None)
            return Path(jar).stem if jar else "java"
        if word in ("-m", "--module"):
            return _module_program(next(words, None) or "java")
        if word.startswith("--module="):
            return _module_program(word.split("=", 1)[1])
        if word in _JAVA_OPTIONS_WITH_VALUE:
            next(words, None)
            continue
        if word.startswith("-") or word.startswith("@"):
            continue
        # The first word that is not an option: a main class, or a source file (java Main.java).
        if word.endswith(".java"):
            return Path(word).stem
        return _simple_name(word)
    return "java"


def _module_program(spec: str) -> str:
    """``module/main.Class`` names its main class; a bare module name stands for itself."""
    module, _, main_class = spec.partition("/")
    return _simple_name(main_class) if main_class else module


def _simple_name(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1] or qualified
