"""Where class files come from: the program's class path (folders and jars, read directly) and a
JDK's runtime image (``lib/modules``, read through the ``jrt:`` file system of that JDK)."""

from __future__ import annotations

import json
import shlex
import threading
import zipfile
from pathlib import Path

import jpype

from jbgui.bridge.errors import BridgeError
from jbgui.bridge.jvm import ensure_jvm, jvm_java_home


class ClassSource:
    """Class bytes by internal name (``pkg/Cls``), from a class path and a JDK image."""

    def __init__(self, classpath: list[str | Path], java_home: str | Path | None = None):
        self.classpath = [Path(p) for p in classpath]
        self.java_home = Path(java_home) if java_home else None
        self._jars: dict[Path, zipfile.ZipFile] = {}
        self._jrt = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        where = [str(p) for p in self.classpath] or ["(empty class path)"]
        return ", ".join(where) + f"; JDK image {self.java_home or 'of the bridge JVM'}"

    def read(self, name: str) -> bytes:
        """The class file of ``name`` (internal form, ``java/lang/String``); BridgeError when it
        is nowhere."""
        rel = name.replace(".", "/") + ".class"
        with self._lock:
            for entry in self.classpath:
                if entry.is_dir():
                    path = entry / rel
                    if path.is_file():
                        return path.read_bytes()
                elif entry.is_file():
                    jar = self._jar(entry)
                    if jar is not None:
                        for member in (rel, f"META-INF/versions/{rel}"):
                            try:
                                return jar.read(member)
                            except KeyError:
                                continue
            data = self._read_image(rel)
        if data is None:
            raise BridgeError(f"class {name.replace('/', '.')} not found in {self.describe()}")
        return data

    def _jar(self, path: Path) -> zipfile.ZipFile | None:
        jar = self._jars.get(path)
        if jar is None:
            try:
                jar = zipfile.ZipFile(path)
            except (OSError, zipfile.BadZipFile):
                return None
            self._jars[path] = jar
        return jar

    def _read_image(self, rel: str) -> bytes | None:
        """From ``/packages/<pkg>/<module>/…`` of the JDK's jrt file system."""
        ensure_jvm()
        fs = self._filesystem()
        Files = jpype.JClass("java.nio.file.Files")
        package = rel.rsplit("/", 1)[0].replace("/", ".") if "/" in rel else ""
        packages = fs.getPath("/packages", package)
        if not package or not Files.isDirectory(packages):
            return None
        stream = Files.list(packages)
        try:
            modules = [str(p.getFileName()) for p in stream.toArray()]
        finally:
            stream.close()
        for module in modules:
            path = fs.getPath("/modules", module, rel)
            if Files.isRegularFile(path):
                return bytes(Files.readAllBytes(path))
        return None

    def _filesystem(self):
        if self._jrt is None:
            FileSystems = jpype.JClass("java.nio.file.FileSystems")
            URI = jpype.JClass("java.net.URI")
            home = self.java_home
            if home is None or Path(home).resolve() == Path(jvm_java_home()).resolve():
                self._jrt = FileSystems.getFileSystem(URI.create("jrt:/"))
            else:
                if not (Path(home) / "lib" / "jrt-fs.jar").exists():
                    raise BridgeError(f"{home}: not a JDK with a runtime image (no lib/jrt-fs.jar)")
                env = jpype.JClass("java.util.HashMap")()
                env.put("java.home", str(home))
                # Another JDK's image: its own jrt-fs.jar reads it.
                self._jrt = FileSystems.newFileSystem(URI.create("jrt:/"), env)
        return self._jrt


def classpath_of(command: list[str], cwd: Path) -> list[Path]:
    """The class path a ``java`` command line names (-cp, -classpath, --class-path, -jar and the
    jar's manifest Class-Path), resolved against ``cwd``."""
    entries: list[str] = []
    jar: str | None = None
    i = 1
    while i < len(command):
        arg = command[i]
        if arg in ("-cp", "-classpath", "--class-path") and i + 1 < len(command):
            entries.extend(command[i + 1].split(":"))
            i += 2
            continue
        if arg.startswith("--class-path="):
            entries.extend(arg.split("=", 1)[1].split(":"))
        elif arg == "-jar" and i + 1 < len(command):
            jar = command[i + 1]
            break
        elif not arg.startswith("-"):
            break  # the main class: program arguments follow
        i += 1
    paths = [Path(e) if Path(e).is_absolute() else cwd / e for e in entries if e]
    if jar is not None:
        jar_path = Path(jar) if Path(jar).is_absolute() else cwd / jar
        paths.insert(0, jar_path)
        try:
            with zipfile.ZipFile(jar_path) as z:
                manifest = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
            lines = manifest.replace("\r\n", "\n").replace("\n ", "").splitlines()
            for line in lines:
                if line.lower().startswith("class-path:"):
                    paths.extend(jar_path.parent / p for p in line.split(":", 1)[1].split())
        except (OSError, KeyError, zipfile.BadZipFile):
            pass
    if not entries and jar is None:
        paths.append(cwd)  # java's default class path is the working directory
    return paths


_SOURCES: dict[Path, ClassSource] = {}


def class_source_for_trace(trace_dir: str | Path) -> ClassSource:
    """The class path and JDK of the run a trace records (launch.json and trace.json)."""
    trace_dir = Path(trace_dir).resolve()
    source = _SOURCES.get(trace_dir)
    if source is not None:
        return source
    try:
        meta = json.loads((trace_dir / "trace.json").read_text())
    except (OSError, ValueError):
        meta = {}
    try:
        launch = json.loads((trace_dir / "launch.json").read_text())
    except (OSError, ValueError):
        launch = {}
    jvm = meta.get("jvm") or {}
    if isinstance(jvm.get("class_path"), str):
        # What the JVM itself reported (java.class.path), relative to its working directory.
        cwd = Path(jvm.get("cwd") or launch.get("cwd") or trace_dir.parent)
        classpath = [Path(e) if Path(e).is_absolute() else cwd / e for e in jvm["class_path"].split(":") if e]
    else:
        command = launch.get("command") or []
        if isinstance(command, str):
            command = shlex.split(command)
        cwd = Path(launch.get("cwd") or trace_dir.parent)
        classpath = classpath_of(list(command), cwd) if command else [cwd]
    home = jvm.get("java_home")
    source = ClassSource(classpath, home)
    _SOURCES[trace_dir] = source
    return source
