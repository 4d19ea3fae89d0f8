"""Turn a user's Java command line into the traced one.

``java`` takes the agent as ``-javaagent:<jar>=<options>``. The other JDK launchers (``javac``,
``jar``, ``jshell``, …) run their tool inside a JVM too, and pass ``-J<flag>`` on to that JVM, so
they take ``-J-javaagent:…``. Either way the flag goes right after ``argv[0]``: for ``java`` it must
precede the main class, after which every word belongs to the program.

A ``java`` command that runs a class or a jar from the class path gets the agent as
``-agentlib:instrument=<jar>=<options>`` instead: the same JPLIS agent library that
``-javaagent`` names (HotSpot turns ``-javaagent:X`` into exactly that), without the
``jdk.module.addmods=java.instrument`` property ``-javaagent`` also sets. That property alone
makes JDK 17 to 25 give up the CDS archive's module graph ("optimized module handling: disabled
due to incompatible property", ``-Xlog:cds``), so the module system is built at start-up:
49-64 ms of ``Initialize module system`` against 3 ms (``-Xlog:startuptime``, an agent whose
premain does nothing), and 743 classes loaded before the agent to redefine instead of 671 (a
traced hello world). An application on the class path resolves ``java.instrument`` anyway (a
system module that exports an API is a default root of the unnamed module); one started with
``-m`` does not, and the JVM would then abort ("processing of -javaagent failed"), so such
launches, and those whose modules cannot be told from the command line, keep ``-javaagent``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Literal, Mapping

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


def agent_flag(kind: LauncherKind, agent_jar: Path, agent_options: str, argv: list[str] | None = None,
               env: Mapping[str, str] | None = None) -> str:
    """The one word that loads the agent: ``-agentlib:instrument=…`` for a ``java`` command
    ``argv`` whose boot layer holds ``java.instrument`` (:func:`instrument_in_boot_layer`; ``env``
    is the environment it runs in, ``os.environ`` by default), else ``-javaagent:…`` or, for JDK
    tools, ``-J-javaagent:…``."""
    if "=" in str(agent_jar):
        # The JVM splits -javaagent at the first '=': a jar path holding one cannot be named.
        raise LaunchError(f"the agent jar's path {str(agent_jar)!r} contains '=', which -javaagent cannot carry")
    if kind == "java" and argv is not None and instrument_in_boot_layer(argv, os.environ if env is None else env):
        return f"-agentlib:instrument={agent_jar}={agent_options}"
    flag = f"-javaagent:{agent_jar}={agent_options}"
    return flag if kind == "java" else "-J" + flag


# Options after which the boot layer may lack java.instrument (a main module, a limited set),
# or whose effect the command line does not show (an @argfile).
_MODULE_LAUNCH = ("-m", "--module", "--limit-modules")


def instrument_in_boot_layer(argv: list[str], env: Mapping[str, str]) -> bool:
    """Whether the ``java`` command ``argv`` certainly resolves ``java.instrument`` without
    ``-javaagent`` asking for it: a main class or ``-jar`` from the class path, no ``-m``, no
    ``--limit-modules``, no @argfile, not a source file (its launcher is a module's), and neither
    in ``JDK_JAVA_OPTIONS`` nor ``JAVA_TOOL_OPTIONS``."""
    for name in ("JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS"):
        words = env.get(name, "").split()
        if any(w in _MODULE_LAUNCH or w.startswith(("--module=", "--limit-modules=", "@")) for w in words):
            return False
    words = iter(argv[1:])
    for word in words:
        if word in _MODULE_LAUNCH or word.startswith(("--module=", "--limit-modules=", "@", "--source", "-XX:VMOptionsFile")):
            return False
        if word == "-jar":
            return True
        if word in _JAVA_OPTIONS_WITH_VALUE:
            next(words, None)
            continue
        if word.startswith("-"):
            continue
        # The first word that is not an option: the main class, or a source file.
        return not word.endswith(".java")
    return False   # no main class: java -version and the like gain nothing


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


def traced_command(argv: list[str], agent_jar: Path, agent_options: str,
                   env: Mapping[str, str] | None = None) -> list[str]:
    """The traced command line for a user's ``java``/JDK-tool command line (see :func:`check_command`)
    that will run in ``env`` (``os.environ`` by default)."""
    return insert_agent(argv, agent_flag(check_command(argv), agent_jar, agent_options, argv, env))


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
