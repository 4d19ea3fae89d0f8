"""Run configurations: what Run → Run traced… runs (the program, its class path and arguments,
the JVM and its options, the recorder's options), saved so that a run can be repeated in one
click, and the JDKs of the machine to choose from."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from jbgui.launch import RecorderOptions, default_trace_dir
from jbgui.ui import settings as S

STORE_FILE = "run-configs.json"
MAX_CONFIGS = 30


@dataclass
class RunConfig:
    """One program to run traced. ``main`` is a main class, or a jar (a path ending in ``.jar``:
    ``java -jar``). Traces go to a fresh folder in ``traces_dir`` (default: ``traces`` in the
    working directory)."""

    name: str = ""
    main: str = ""
    classpath: list[str] = field(default_factory=list)
    args: str = ""
    jvm_options: str = ""
    cwd: str = ""
    java_home: str = ""                # empty: the JDK of `java` on PATH
    traces_dir: str = ""
    include: str = ""
    exclude: str = ""
    jdk: bool = True
    level: str = "block"
    bba: str = "default"
    mode: int = 2
    instructions: bool = False

    @property
    def is_jar(self) -> bool:
        return self.main.endswith(".jar")

    @property
    def workdir(self) -> Path:
        return Path(self.cwd).expanduser() if self.cwd else Path.cwd()

    def argv(self) -> list[str]:
        """The untraced command line: ``java [JVM options] [-cp …] (MAIN | -jar JAR) [args]``."""
        argv = ["java", *shlex.split(self.jvm_options)]
        if self.classpath and not self.is_jar:
            argv += ["-cp", os.pathsep.join(self.classpath)]
        argv += ["-jar", self.main] if self.is_jar else [self.main]
        return argv + shlex.split(self.args)

    def output_dir(self) -> Path:
        parent = Path(self.traces_dir).expanduser() if self.traces_dir else self.workdir / "traces"
        if not parent.is_absolute():
            parent = self.workdir / parent
        return default_trace_dir(self.argv(), parent)

    def recorder_options(self, out: Path) -> RecorderOptions:
        def path(text: str) -> Path | None:
            if not text:
                return None
            p = Path(text).expanduser()
            return p if p.is_absolute() else self.workdir / p
        return RecorderOptions(out=out, include=path(self.include), exclude=path(self.exclude), jdk=self.jdk,
                               level=self.level, bba=self.bba, mode=self.mode, instructions=self.instructions)

    def problems(self) -> list[str]:
        """What keeps this configuration from running, in words (empty: it can run)."""
        out = []
        if not self.main.strip():
            out.append("say which program to run: a main class (com.example.Main) or a jar")
        elif self.is_jar and not (self.workdir / Path(self.main).expanduser()).is_file():
            out.append(f"the jar {self.main} does not exist")
        elif not self.is_jar and not re.fullmatch(r"[\w$]+(\.[\w$]+)*(/[\w$.]+)?", self.main.strip()):
            out.append(f"{self.main!r} is not a class name (use dots: com.example.Main)")
        if self.cwd and not self.workdir.is_dir():
            out.append(f"the working directory {self.cwd} does not exist")
        if self.java_home and not (Path(self.java_home) / "bin" / "java").exists():
            out.append(f"{self.java_home} is not a JDK (no bin/java)")
        for label, value in (("include filter", self.include), ("exclude filter", self.exclude)):
            if value:
                p = Path(value).expanduser()
                if not (p if p.is_absolute() else self.workdir / p).is_file():
                    out.append(f"the {label} file {value} does not exist")
        try:
            shlex.split(self.args)
            shlex.split(self.jvm_options)
        except ValueError as error:
            out.append(f"arguments: {error}")
        return out

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict) -> "RunConfig":
        known = {f.name for f in fields(RunConfig)}
        return RunConfig(**{k: v for k, v in data.items() if k in known})

    def label(self) -> str:
        return self.name or (Path(self.main).name if self.is_jar else self.main.rsplit(".", 1)[-1]) or "(unnamed)"


class RunConfigStore:
    """Saved configurations, most recently used first, as JSON in the configuration folder.
    A damaged file is set aside (``.bad``) and the store starts empty, saying so in ``problem``."""

    def __init__(self, path: Path | None = None):
        self.path = path or S.config_dir() / STORE_FILE
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
        except (OSError, ValueError, TypeError) as error:
            bad = self.path.with_suffix(".json.bad")
            try:
                self.path.replace(bad)
            except OSError:
                pass
            self.problem = f"{self.path}: unreadable run configurations ({error}); kept as {bad.name}"
            return []

    def save(self, config: RunConfig) -> None:
        """Store ``config`` (by label) at the front of the list."""
        label = config.label()
        self.configs = [config] + [c for c in self.configs if c.label() != label]
        self.configs = self.configs[:MAX_CONFIGS]
        self._write()

    def delete(self, label: str) -> None:
        self.configs = [c for c in self.configs if c.label() != label]
        self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps([c.to_dict() for c in self.configs], indent=1), encoding="utf-8")
        tmp.replace(self.path)


def find_jdks() -> list[tuple[str, str]]:
    """(label, home) of the JDKs here, release 17 or newer: JAVA_HOME, the one of ``java`` on
    PATH, and those under /usr/lib/jvm."""
    homes: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        homes.append(Path(os.environ["JAVA_HOME"]))
    java = shutil.which("java")
    if java:
        homes.append(Path(java).resolve().parent.parent)
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        homes.extend(sorted(jvm.iterdir()))
    out: list[tuple[str, str]] = []
    seen: set[Path] = set()
    for home in homes:
        try:
            real = home.resolve()
            release = (real / "release").read_text()
        except OSError:
            continue
        match = re.search(r'^JAVA_VERSION="([^"]+)"', release, re.MULTILINE)
        if real in seen or not match or not (real / "bin" / "java").exists():
            continue
        version = match.group(1)
        feature = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
        if feature < 17:
            continue
        seen.add(real)
        out.append((f"{version}  ({real})", str(real)))
    return out
