"""Where class files come from: a class path (directories and jars, read directly) and a JDK's
runtime image (``lib/modules``, read through the ``jrt:`` file system of that JDK, which only Java
reads well).

:func:`class_source_for_trace` builds the source of a traced run: the class path its JVM reported
(trace.json's ``jvm.class_path``, relative entries against ``jvm.cwd``), or else the one its
command line names (launch.json's ``command``: ``-cp``, ``-classpath``, ``--class-path``, ``-jar``),
and the JDK that ran it (``jvm.java_home``).
"""

from __future__ import annotations

import os
import shlex
import threading
import zipfile
from pathlib import Path
from typing import Iterable

import jpype

from jbgui.bridge.errors import BridgeError
from jbgui.bridge.jvm import ensure_jvm, java_release, jvm_java_home
from jbgui.model.errors import TraceError
from jbgui.model.format.launch_json import read_launch_json
from jbgui.model.tracedir import TraceDir

# The jrt file systems opened so far, by JDK home: opening another JDK's image loads its
# jrt-fs.jar in a class loader of its own, which is worth doing once per process.
_IMAGES: dict[str, object] = {}
_IMAGES_LOCK = threading.Lock()


def split_class_path(value: str) -> list[str]:
    """The entries of a class path string (``a:b/c.jar``), empty ones dropped."""
    return [entry for entry in value.split(os.pathsep) if entry]


class ClassSource:
    """Class bytes by name, from a JDK's runtime image and a class path, looked up as the JVM
    does: a class whose package belongs to one of the JDK's modules comes from the image (such a
    package cannot be split onto the class path), any other from the first class path entry that
    holds it.

    ``classpath`` is a list of entries or one class path string (``-cp`` syntax). Relative entries
    are resolved against ``cwd`` (default: the current directory); ``dir/*`` stands for the jars
    in ``dir``, as for ``java``; a jar's manifest ``Class-Path`` is followed. ``java_home`` is the
    JDK whose image holds the JDK classes; None means the bridge JVM's own.

    Two sources with the same entries and JDK are equal, so listings cached for one serve the
    other. Reading is thread-safe.
    """

    def __init__(self, classpath: Iterable[str | Path] | str = (), java_home: str | Path | None = None,
                 cwd: str | Path | None = None):
        entries = split_class_path(classpath) if isinstance(classpath, str) else [str(e) for e in classpath]
        base = Path(cwd) if cwd is not None else Path.cwd()
        self.classpath: list[Path] = _expand(entries, base)
        self.java_home: Path | None = Path(java_home) if java_home else None
        self._jars: dict[Path, zipfile.ZipFile | None] = {}
        self._versions: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    @property
    def key(self) -> tuple:
        """What identifies the source: its entries and its JDK."""
        return (tuple(str(p) for p in self.classpath), str(self.java_home) if self.java_home else "")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClassSource) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"ClassSource({[str(p) for p in self.classpath]!r}, java_home={self.java_home})"

    def describe(self) -> str:
        """Where classes are looked for, for messages."""
        where = ", ".join(str(p) for p in self.classpath) or "an empty class path"
        image = f"the runtime image of {self.java_home}" if self.java_home else "the bridge JVM's runtime image"
        return f"{where}; {image}"

    def read(self, name: str) -> bytes:
        """The class file of ``name`` (``java/lang/String`` or ``java.lang.String``).

        Raises BridgeError naming the class and where it was looked for when it is nowhere."""
        return self.find(name)[0]

    def find(self, name: str) -> tuple[bytes, str]:
        """The class file of ``name`` and where it was found (a file, ``jar!/entry`` or
        ``jrt:/module/entry``)."""
        internal = name.replace(".", "/")  # a binary name never holds a dot of its own
        rel = internal + ".class"
        in_image, found = self._read_image(rel)
        if found is not None:
            return found
        if not in_image:
            with self._lock:
                for entry in self.classpath:
                    found = self._read_entry(entry, rel)
                    if found is not None:
                        return found
        raise BridgeError(f"class {internal.replace('/', '.')} not found in {self.describe()}")

    # ------------------------------------------------------------------ class path

    def _read_entry(self, entry: Path, rel: str) -> tuple[bytes, str] | None:
        if entry.is_dir():
            path = entry / rel
            if path.is_file():
                try:
                    return path.read_bytes(), str(path)
                except OSError as error:
                    raise BridgeError(f"cannot read {path}: {error}") from error
            return None
        jar = self._jar(entry)
        if jar is None:
            return None
        for member in self._versioned(jar, rel):
            try:
                return jar.read(member), f"{entry}!/{member}"
            except KeyError:
                continue
            except (OSError, zipfile.BadZipFile, RuntimeError) as error:
                raise BridgeError(f"cannot read {member} from {entry}: {error}") from error
        return None

    def _jar(self, path: Path) -> zipfile.ZipFile | None:
        if path not in self._jars:
            try:
                self._jars[path] = zipfile.ZipFile(path) if path.is_file() else None
            except (OSError, zipfile.BadZipFile):
                self._jars[path] = None  # as java does, a class path entry that is no jar is skipped
        return self._jars[path]

    def _versioned(self, jar: zipfile.ZipFile, rel: str) -> list[str]:
        """The entries that may hold ``rel``: in a multi-release jar, ``META-INF/versions/N/rel``
        for the run's release N down to 9 first, as the JVM that ran the program would pick."""
        versions = self._versions.get(jar.filename)
        if versions is None:
            versions = self._versions[jar.filename] = self._release_folders(jar)
        return [f"{folder}{rel}" for folder in versions] + [rel]

    def _release_folders(self, jar: zipfile.ZipFile) -> list[str]:
        try:
            manifest = jar.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
        except (KeyError, OSError, zipfile.BadZipFile):
            return []
        if "multi-release: true" not in manifest.lower():
            return []
        release = java_release(self.java_home) if self.java_home else None
        if release is None:
            release = java_release(jvm_java_home()) or 9
        return [f"META-INF/versions/{v}/" for v in range(release, 8, -1)]

    # ------------------------------------------------------------------ runtime image

    def _read_image(self, rel: str) -> tuple[bool, tuple[bytes, str] | None]:
        """Whether the class's package is one of the image's, and the class from
        ``/packages/<pkg>/<module>`` of the JDK's jrt file system."""
        if "/" not in rel:
            return False, None  # the JDK has no class in the unnamed package
        fs = self._image()
        Files = jpype.JClass("java.nio.file.Files")
        package = rel.rsplit("/", 1)[0].replace("/", ".")
        try:
            packages = fs.getPath("/packages", package)
            if not Files.isDirectory(packages):
                return False, None
            stream = Files.list(packages)
            try:
                modules = [str(p.getFileName()) for p in stream.toArray()]
            finally:
                stream.close()
            for module in modules:
                path = fs.getPath("/modules", module, rel)
                if Files.isRegularFile(path):
                    return True, (bytes(Files.readAllBytes(path)), f"jrt:/{module}/{rel}")
        except jpype.JException as error:
            raise BridgeError(f"cannot read {rel} from the runtime image of "
                              f"{self.java_home or 'the bridge JVM'}: {error}") from error
        return True, None

    def _image(self):
        """The jrt file system of ``java_home`` (the bridge JVM's own when None or the same)."""
        ensure_jvm()
        own = jvm_java_home()
        home = self.java_home.resolve() if self.java_home else own.resolve()
        key = str(home)
        with _IMAGES_LOCK:
            fs = _IMAGES.get(key)
            if fs is not None:
                return fs
            FileSystems = jpype.JClass("java.nio.file.FileSystems")
            URI = jpype.JClass("java.net.URI")
            if home == own.resolve():
                fs = FileSystems.getFileSystem(URI.create("jrt:/"))
            else:
                if not (home / "lib" / "modules").is_file() or not (home / "lib" / "jrt-fs.jar").is_file():
                    raise BridgeError(f"{home} is not a JDK with a runtime image (lib/modules and lib/jrt-fs.jar): "
                                      "its classes cannot be read")
                env = jpype.JClass("java.util.HashMap")()
                env.put("java.home", str(home))
                try:
                    # Another JDK's image: read by that JDK's own jrt-fs.jar, which knows its format.
                    fs = FileSystems.newFileSystem(URI.create("jrt:/"), env)
                except jpype.JException as error:
                    raise BridgeError(f"cannot open the runtime image of {home}: {error}") from error
            _IMAGES[key] = fs
            return fs


def _expand(entries: list[str], cwd: Path) -> list[Path]:
    """Class path entries as ``java`` reads them: relative against ``cwd``, ``dir/*`` as the jars
    in ``dir`` (sorted: the JVM's order is unspecified), manifests' ``Class-Path`` followed."""
    out: list[Path] = []
    pending = [Path(e) if Path(e).is_absolute() else cwd / e for e in entries]
    while pending:
        path = pending.pop(0)
        if path.name == "*":
            folder = path.parent
            jars = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".jar") if folder.is_dir() else []
            pending[:0] = jars
            continue
        if path in out:
            continue
        out.append(path)
        if path.suffix.lower() == ".jar" and path.is_file():
            pending[:0] = [p for p in _manifest_class_path(path) if p not in out]
    return out


def _manifest_class_path(jar: Path) -> list[Path]:
    """The ``Class-Path`` of a jar's manifest, relative to the jar's folder."""
    try:
        with zipfile.ZipFile(jar) as z:
            manifest = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return []
    # Manifest lines are continued by a line starting with one space.
    lines = manifest.replace("\r\n", "\n").replace("\r", "\n").replace("\n ", "").splitlines()
    for line in lines:
        if line.lower().startswith("class-path:"):
            return [jar.parent / p for p in line.split(":", 1)[1].split()]
    return []


def classpath_from_command(command: list[str]) -> list[str] | None:
    """The class path a ``java`` command line names: the value of ``-cp``, ``-classpath``,
    ``--class-path`` (the last one wins, as for ``java``) or the jar of ``-jar``; ``["."]`` when
    it names none (``java``'s default, ``CLASSPATH`` aside). None when the command is not
    ``java`` (``javac`` and the other JDK tools run on the JDK's image alone)."""
    if not command or Path(command[0]).name not in ("java", "java.exe"):
        return None
    entries: list[str] | None = None
    i = 1
    while i < len(command):
        arg = command[i]
        if arg in ("-cp", "-classpath", "--class-path") and i + 1 < len(command):
            entries = split_class_path(command[i + 1])
            i += 2
            continue
        if arg.startswith("--class-path="):
            entries = split_class_path(arg.split("=", 1)[1])
        elif arg == "-jar":
            # The jar is the whole class path (its manifest's Class-Path is followed later).
            return [command[i + 1]] if i + 1 < len(command) else []
        elif arg in ("-m", "--module") or arg.startswith("--module="):
            break
        elif not arg.startswith("-"):
            break  # the main class (or source file): the program's arguments follow
        elif arg in ("-p", "--module-path", "--upgrade-module-path", "--add-modules", "--limit-modules",
                     "--add-reads", "--add-exports", "--add-opens", "--patch-module", "-d", "--describe-module"):
            i += 1  # options whose value is the next argument
        i += 1
    return entries if entries is not None else ["."]


def class_source_for_trace(trace_dir: str | Path) -> ClassSource:
    """The class path and JDK of the run a trace records.

    The class path is the one its JVM reported in trace.json (``jvm.class_path`` against
    ``jvm.cwd``); traces without it fall back to launch.json's ``command`` and ``cwd``. The JDK is
    trace.json's ``jvm.java_home`` (the bridge JVM's own when absent). Raises BridgeError when the
    directory is not a trace."""
    path = Path(trace_dir)
    try:
        meta = TraceDir(path).metadata
    except TraceError as error:
        raise BridgeError(f"cannot find the class files of {path}: {error}") from error
    jvm = meta.get("jvm") if isinstance(meta.get("jvm"), dict) else {}
    launch = read_launch_json(path)
    cwd = Path(jvm.get("cwd") or launch.get("cwd") or path.parent)
    if isinstance(jvm.get("class_path"), str):
        entries = split_class_path(jvm["class_path"])
    else:
        command = launch.get("command") or []
        if isinstance(command, str):
            command = shlex.split(command)
        entries = classpath_from_command([str(c) for c in command]) or []
    return ClassSource(entries, jvm.get("java_home") or None, cwd=cwd)
