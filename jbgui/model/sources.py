"""Source text for the method view, where it can be found: the JDK's ``lib/src.zip`` for JDK
classes, and the program's own tree for the others (its working directory, the folders of its
class path and their parents, with the usual ``src/``, ``src/main/java`` layouts).

Any other layout (the bundled example keeps its sources in ``resources/examples`` and its classes
in ``build/examples``) is found by a bounded search below those folders for ``pkg/File.java``:
at most :data:`SEARCH_DIRS` folders, :data:`SEARCH_DEPTH` levels down, skipping hidden folders and
the usual build output and virtual environments. A folder that held one source is tried first for
the next."""

from __future__ import annotations

import shlex
import zipfile
from functools import lru_cache
from pathlib import Path

from jbgui.model.format.launch_json import read_launch_json
from jbgui.model.tracedir import TraceDir

_SOURCE_ROOTS = ("", "src", "src/main/java", "src/test/java", "java", "source", "sources")
SEARCH_DIRS = 5000
SEARCH_DEPTH = 6
_SKIP = {"node_modules", "__pycache__", "site-packages", "target", ".git", ".venv", "venv", "build", "out", "dist"}


class SourceLocator:
    """Finds ``pkg/SourceFile.java`` for the classes of one trace."""

    def __init__(self, trace: TraceDir):
        self.trace = trace
        meta = trace.metadata if (trace.path / "trace.json").exists() else {}
        home = meta.get("jvm", {}).get("java_home") if isinstance(meta, dict) else None
        self.java_home = Path(home) if home else None
        self.roots = self._program_roots()
        self._found_roots: list[Path] = []
        self._searched: set[str] = set()
        self._zip: zipfile.ZipFile | None = None
        self._zip_names: dict[str, str] | None = None

    def _program_roots(self) -> list[Path]:
        roots: list[Path] = []
        launch = read_launch_json(self.trace.path)
        jvm = (self.trace.metadata.get("jvm") or {}) if (self.trace.path / "trace.json").exists() else {}
        cwd = Path(jvm.get("cwd") or launch.get("cwd") or self.trace.path.parent)
        candidates = [cwd]
        entries = jvm.get("class_path", "").split(":") if isinstance(jvm.get("class_path"), str) else []
        command = launch.get("command") or []
        if isinstance(command, str):
            command = shlex.split(command)
        for i, arg in enumerate(command):
            if arg in ("-cp", "-classpath", "--class-path") and i + 1 < len(command):
                entries.extend(command[i + 1].split(":"))
        for entry in entries:
            if entry:
                p = Path(entry) if Path(entry).is_absolute() else cwd / entry
                # sources beside the classes, or in the project the class folder was built in
                candidates.extend([p, p.parent, p.parent.parent])
        # Searched below (bounded) when no usual layout holds a source: the working directory
        # and the folders beside the class path entries.
        self._bases = []
        for base in [cwd] + [c for c in candidates[1:] if c.name not in _SKIP]:
            if base.is_dir() and base not in self._bases and base != Path(base.anchor):
                self._bases.append(base)
        for base in candidates:
            for sub in _SOURCE_ROOTS:
                d = base / sub if sub else base
                if d.is_dir() and d not in roots:
                    roots.append(d)
        return roots

    def lines(self, class_name: str, source_file: str | None) -> list[str] | None:
        """The source file's lines (index 0 is line 1), or None when it is not found."""
        if not source_file:
            return None
        package = class_name.rsplit("/", 1)[0] if "/" in class_name else ""
        rel = f"{package}/{source_file}" if package else source_file
        java_home = str(self.java_home) if self.java_home else ""
        found = _read_lines(tuple(self._found_roots + self.roots), rel, java_home)
        if found is None and rel not in self._searched:
            self._searched.add(rel)
            root = search_source(self._bases, rel)
            if root is not None:
                self._found_roots.insert(0, root)
                found = _read_lines((root,), rel, "")
        return found


def search_source(bases: list[Path], rel: str, max_dirs: int = SEARCH_DIRS,
                  max_depth: int = SEARCH_DEPTH) -> Path | None:
    """A folder below one of ``bases`` that holds ``rel`` (``pkg/File.java``), breadth first,
    looking at no more than ``max_dirs`` folders; None when none does."""
    seen = 0
    queue = [(base, 0) for base in bases]
    visited: set[Path] = set()
    while queue and seen < max_dirs:
        folder, depth = queue.pop(0)
        try:
            key = folder.resolve()
        except OSError:
            continue
        if key in visited:
            continue
        visited.add(key)
        seen += 1
        if (folder / rel).is_file():
            return folder
        if depth >= max_depth:
            continue
        try:
            children = sorted(e for e in folder.iterdir() if e.is_dir() and not e.is_symlink())
        except OSError:
            continue
        queue.extend((c, depth + 1) for c in children if not c.name.startswith(".") and c.name not in _SKIP)
    return None


@lru_cache(maxsize=64)
def _read_lines(roots: tuple[Path, ...], rel: str, java_home: str) -> list[str] | None:
    for root in roots:
        path = root / rel
        if path.is_file():
            try:
                return path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
    if java_home:
        names = _src_zip_names(java_home)
        member = names.get(rel)
        if member is not None:
            with zipfile.ZipFile(Path(java_home) / "lib" / "src.zip") as z:
                return z.read(member).decode("utf-8", errors="replace").splitlines()
    return None


@lru_cache(maxsize=4)
def _src_zip_names(java_home: str) -> dict[str, str]:
    """src.zip lists JDK sources as ``module/pkg/File.java``: map ``pkg/File.java`` to them."""
    path = Path(java_home) / "lib" / "src.zip"
    if not path.is_file():
        return {}
    try:
        with zipfile.ZipFile(path) as z:
            out = {}
            for name in z.namelist():
                if name.endswith(".java"):
                    module, _, rest = name.partition("/")
                    out.setdefault(rest if rest else module, name)
            return out
    except (OSError, zipfile.BadZipFile):
        return {}
