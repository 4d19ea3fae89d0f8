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


# Options whose launch may leave java.instrument out of the boot layer (a limited set of modules),
# or whose effect the command line does not show (an @argfile, a VM options file).
_OPAQUE_OPTIONS = ("--limit-modules", "@", "-XX:VMOptionsFile")


def _java_launch(argv: list[str]) -> tuple[list[str], str | None, str | None]:
    """A ``java`` command line taken apart: the option words before what it runs, what it runs
    (``"jar"``, ``"module"``, ``"source"``, ``"class"``, or None when nothing: ``java -version``)
    and its name (the jar, ``module/class``, the file, the class; None if missing)."""
    options: list[str] = []
    words = iter(argv[1:])
    for word in words:
        if word == "-jar":
            return options, "jar", next(words, None)
        if word in ("-m", "--module"):
            return options, "module", next(words, None)
        if word.startswith("--module="):
            return options, "module", word.split("=", 1)[1]
        options.append(word)
        if word in _JAVA_OPTIONS_WITH_VALUE:
            options.append(next(words, ""))
            continue
        if word.startswith("-") or word.startswith("@"):
            continue
        # The first word that is not an option: a main class, or a source file (java Main.java).
        options.pop()
        return options, "source" if word.endswith(".java") else "class", word
    return options, None, None


def instrument_in_boot_layer(argv: list[str], env: Mapping[str, str]) -> bool:
    """Whether the ``java`` command ``argv`` certainly resolves ``java.instrument`` without
    ``-javaagent`` asking for it: a main class or ``-jar`` from the class path (not ``-m``, not a
    source file, whose launcher is jdk.compiler's main class; not ``--source``), and no
    ``--limit-modules``, @argfile or VM options file, on the command line or in
    ``JDK_JAVA_OPTIONS`` or ``JAVA_TOOL_OPTIONS``."""
    options, target, _ = _java_launch(argv)
    if target not in ("class", "jar"):
        return False
    words = [*options, *env.get("JDK_JAVA_OPTIONS", "").split(), *env.get("JAVA_TOOL_OPTIONS", "").split()]
    return not any(w in ("-m", "--module") or w.startswith(_OPAQUE_OPTIONS + ("--source", "--module=")) for w in words)


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
    _, target, name = _java_launch(argv)
    if target is None or name is None:
        return "java"
    if target == "jar":
        return Path(name).stem
    if target == "module":
        return _module_program(name)
    if target == "source":
        return Path(name).stem
    return _simple_name(name)


def _module_program(spec: str) -> str:
    """``module/main.Class`` names its main class; a bare module name stands for itself."""
    module, _, main_class = spec.partition("/")
    return _simple_name(main_class) if main_class else module


def _simple_name(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1] or qualified
