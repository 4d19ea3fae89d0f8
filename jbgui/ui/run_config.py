"""Run configurations: what Run → Run traced… runs (the program, its class path and arguments, the
JVM and its options, the recorder's options), saved so that a run can be repeated in one click,
and the JDKs of this machine to choose from.

Where traces go: a fresh ``<program>-<YYYYmmdd-HHMMSS>`` folder (as ``jbtrace record`` names it)
in the configuration's ``traces_dir`` when one is given (relative to the working directory), else
in ``traces/`` in the working directory — beside the program, where a user looks for it — or, when
the working directory is not writable, in ``~/jbgui-traces``.

Configurations are kept in ``run-configs.json`` in the explorer's configuration folder
(``~/.config/jbgui``, or ``$JBGUI_CONFIG_DIR``), most recently used first.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from jbgui.launch import RecorderOptions, default_trace_dir
from jbgui.launch.options import BLOCK_ANALYSES, LEVELS, MODES
from jbgui.ui import settings as S

STORE_FILE = "run-configs.json"
MAX_CONFIGS = 30
FALLBACK_TRACES_DIR = Path.home() / "jbgui-traces"
OLDEST_JDK_RELEASE = 17
# A main class: a binary name with dots (com.example.Main, Outer$Inner), optionally after a
# module name and a slash (com.example/com.example.Main).
_MAIN_CLASS = re.compile(r"([\w$.]+/)?[\w$]+(\.[\w$]+)*")


@dataclass
class RunConfig:
    """One program to run traced.

    ``main`` is a main class, or a jar (a path ending in ``.jar``: ``java -jar``, which ignores the
    class path). ``args`` and ``jvm_options`` are split as a shell would (quotes group words).
    Relative paths (class path entries, the jar, filter files, ``traces_dir``) are relative to
    the working directory ``cwd`` (empty: the explorer's own). ``java_home`` empty: ``java`` on
    PATH. The recorder's options are those of ``jbtrace record``.
    """

    name: str = ""
    main: str = ""
    classpath: list[str] = field(default_factory=list)
    args: str = ""
    jvm_options: str = ""
    cwd: str = ""
    java_home: str = ""
    traces_dir: str = ""
    include: str = ""
    exclude: str = ""
    jdk: bool = True
    level: str = "block"
    bba: str = "default"
    mode: int = 2
    instructions: bool = False
    virtual_threads: int = 1000        # the agent's limit (jbtrace record --virtual-threads)

    # ------------------------------------------------------------------ derived

    @property
    def is_jar(self) -> bool:
        return self.main.strip().lower().endswith(".jar")

    @property
    def workdir(self) -> Path:
        """The program's working directory (absolute)."""
        return (Path(self.cwd).expanduser() if self.cwd.strip() else Path.cwd()).absolute()

    def label(self) -> str:
        """The name shown in lists: ``name``, else the main class's simple name or the jar's."""
        main = self.main.strip()
        fallback = Path(main).name if self.is_jar else main.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
        return self.name.strip() or fallback or "(unnamed)"

    def argv(self) -> list[str]:
        """The untraced command line: ``java [JVM options] [-cp CP] (MAIN | -jar JAR) [args]``
        (``ValueError`` for unbalanced quotes; :meth:`problems` reports them first)."""
        argv = ["java", *shlex.split(self.jvm_options)]
        main = self.main.strip()
        if self.is_jar:
            argv += ["-jar", main]
        else:
            if self.classpath:
                argv += ["-cp", os.pathsep.join(self.classpath)]
            argv.append(main)
        return argv + shlex.split(self.args)

    def command_line(self) -> str:
        """:meth:`argv` as one line a shell would take."""
        return shlex.join(self.argv())

    def _path(self, text: str) -> Path | None:
        if not text.strip():
            return None
        path = Path(text.strip()).expanduser()
        return path if path.is_absolute() else self.workdir / path

    def traces_parent(self) -> Path:
        """The folder that receives this configuration's traces (see the module's docstring)."""
        chosen = self._path(self.traces_dir)
        if chosen is not None:
            return chosen
        beside = self.workdir / "traces"
        writable = beside if beside.is_dir() else self.workdir
        return beside if os.access(writable, os.W_OK) else FALLBACK_TRACES_DIR

    def output_dir(self) -> Path:
        """A fresh trace directory for one run."""
        return default_trace_dir(self.argv(), self.traces_parent())

    def recorder_options(self, out: Path) -> RecorderOptions:
        """The recorder's options for a run writing its trace to ``out``."""
        return RecorderOptions(out=Path(out), include=self._path(self.include), exclude=self._path(self.exclude),
                               jdk=self.jdk, level=self.level, bba=self.bba, mode=self.mode,
                               instructions=self.instructions, virtual_threads=self.virtual_threads)

    # ------------------------------------------------------------------ checks

    def problems(self) -> list[str]:
        """What keeps this configuration from running, in words (empty: it can run)."""
        out = []
        main = self.main.strip()
        if not main:
            out.append("Say which program to run: a main class (com.example.Main) or a jar.")
        elif self.is_jar:
            if not self._path(main).is_file():
                where = "" if Path(main).expanduser().is_absolute() else " in the working directory"
                out.append(f"The jar {main} does not exist{where}.")
        elif not _MAIN_CLASS.fullmatch(main):
            out.append(f"{main!r} is not a class name: use dots, as in com.example.Main (or choose a jar).")
        if self.cwd.strip() and not self.workdir.is_dir():
            out.append(f"The working directory {self.cwd} does not exist.")
        home = Path(self.java_home.strip()).expanduser() if self.java_home.strip() else None
        if home is not None and not (home / "bin" / "java").is_file():
            why = "it has no bin/java" if home.is_dir() else "the folder does not exist"
            out.append(f"{self.java_home} is not a JDK: {why}.")
        for label, value in (("include filter", self.include), ("exclude filter", self.exclude)):
            path = self._path(value)
            if path is not None and not path.is_file():
                out.append(f"The {label} file {value} does not exist.")
        for label, value in (("arguments", self.args), ("JVM options", self.jvm_options)):
            try:
                shlex.split(value)
            except ValueError as error:
                out.append(f"The {label} cannot be split into words: {error}.")
        if self.level not in LEVELS:
            out.append(f"Unknown level {self.level!r}.")
        if self.bba not in BLOCK_ANALYSES:
            out.append(f"Unknown block analysis {self.bba!r}.")
        if self.mode not in MODES:
            out.append(f"Unknown trace mode {self.mode!r}.")
        return out

    def warnings(self) -> list[str]:
        """Doubts that do not keep it from running (java itself ignores a missing class path entry)."""
        out = []
        if self.is_jar and self.classpath:
            out.append("java -jar ignores the class path: the jar's manifest names its own.")
        missing = [entry for entry in self.classpath if not self._path(entry).exists()]
        if missing:
            out.append("Not found, on the class path: " + ", ".join(missing) + ".")
        return out

    # ------------------------------------------------------------------ storage

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict) -> "RunConfig":
        """A configuration from stored JSON; fields of a wrong type or unknown ones are dropped
        (defaults stand in), so that a hand-edited or older file still loads."""
        defaults = RunConfig()
        values = {}
        for f in fields(RunConfig):
            if f.name not in data:
                continue
            value, default = data[f.name], getattr(defaults, f.name)
            if isinstance(default, bool):
                ok = isinstance(value, bool)
            elif isinstance(default, int):
                ok = isinstance(value, int) and not isinstance(value, bool)
            elif isinstance(default, list):
                ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            else:
                ok = isinstance(value, str)
            if ok:
                values[f.name] = list(value) if isinstance(value, list) else value
        return RunConfig(**values)


class RunConfigStore:
    """Saved configurations, most recently used first, one per label, as JSON.

    A file that cannot be read is moved aside (``run-configs.json.bad``) and the store starts
    empty; ``problem`` then says so, for the window to show. A failed write also lands in
    ``problem`` (and :meth:`save` returns False): the run itself goes on.
    """

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path is not None else S.config_dir() / STORE_FILE
        self.problem: str | None = None
        self.configs: list[RunConfig] = self._read()

    def _read(self) -> list[RunConfig]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, list):
                raise ValueError("not a list of configurations")
            return [RunConfig.from_dict(d) for d in data if isinstance(d, dict)]
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as error:
            bad = self.path.with_name(self.path.name + ".bad")
            try:
                self.path.replace(bad)
                kept = f"it was moved to {bad.name}"
            except OSError:
                kept = "it was left as it is"
            self.problem = f"The saved run configurations in {self.path} cannot be read ({error}); {kept}."
            return []

    def labels(self) -> list[str]:
        return [c.label() for c in self.configs]

    def get(self, label: str) -> RunConfig | None:
        return next((c for c in self.configs if c.label() == label), None)

    def save(self, config: RunConfig) -> bool:
        """Store ``config`` at the front (replacing the one of the same label): call it whenever
        a configuration runs, so that the most recently used comes first."""
        label = config.label()
        self.configs = ([RunConfig.from_dict(config.to_dict())]
                        + [c for c in self.configs if c.label() != label])[:MAX_CONFIGS]
        return self._write()

    def delete(self, label: str) -> bool:
        self.configs = [c for c in self.configs if c.label() != label]
        return self._write()

    def unique_label(self, base: str) -> str:
        """``base``, or ``base (2)``, ``base (3)``… : a label no saved configuration has."""
        taken = set(self.labels())
        if base not in taken:
            return base
        number = 2
        while f"{base} ({number})" in taken:
            number += 1
        return f"{base} ({number})"

    def _write(self) -> bool:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps([c.to_dict() for c in self.configs], indent=1) + "\n", encoding="utf-8")
            tmp.replace(self.path)
        except OSError as error:
            self.problem = f"The run configurations cannot be saved in {self.path}: {error.strerror or error}."
            return False
        return True


def jdk_release(home: Path) -> str | None:
    """``JAVA_VERSION`` from ``home/release``, or None when ``home`` is not a JDK image."""
    try:
        text = (home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="([^"]+)"', text, re.MULTILINE)
    return match.group(1) if match else None


def _feature(version: str) -> int:
    parts = version.split(".")
    if parts[0] == "1" and len(parts) > 1:      # 1.8.0_392
        parts = parts[1:]
    digits = re.match(r"\d+", parts[0])
    return int(digits.group()) if digits else 0


def find_jdks() -> list[tuple[str, str]]:
    """``(label, home)`` of the JDKs here of release 17 or newer: ``$JAVA_HOME``, those of
    ``javac`` and ``java`` on PATH, then each one under /usr/lib/jvm; links resolved, each once."""
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    for tool in ("javac", "java"):
        found = shutil.which(tool)
        if found:
            homes.append(Path(found).resolve().parent.parent)
    jvm = Path("/usr/lib/jvm")
    try:
        homes.extend(sorted(jvm.iterdir()))
    except OSError:
        pass
    out: list[tuple[str, str]] = []
    seen: set[Path] = set()
    for home in homes:
        try:
            real = home.resolve()
        except OSError:
            continue
        if real in seen:
            continue
        version = jdk_release(real)
        if version is None or _feature(version) < OLDEST_JDK_RELEASE or not (real / "bin" / "java").is_file():
            continue
        seen.add(real)
        out.append((f"{version}  ({real})", str(real)))
    return out
