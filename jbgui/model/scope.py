"""Which classes are "mine": the program's own code, as opposed to the JDK and libraries, for the
"only my code" scope of the aggregated views.

What "mine" means (in this order; the first rule that applies decides):

1. An exclude or include package prefix the user gave (``org.gjt.sp.util``, ``com/foo/``): the
   longest matching prefix wins, an exclude over an include of the same length. A prefix matches
   a class name that equals it or continues it with ``.`` or ``$`` (``com.foo`` matches
   ``com.foo.Bar`` and ``com.foo$X`` but not ``com.foobar.X``); a prefix ending in ``.`` matches
   by plain prefix. Includes make even JDK classes mine (javac's own ``com.sun.tools.javac``).
2. A JDK class (static.xml's ``jdk`` attribute) is never mine.
3. A class whose ``.class`` file is under a *directory* of the program's class path is mine; one
   found in a jar of the class path is a library, not mine — unless the class path is a single
   jar (``java -jar app.jar`` or ``-cp app.jar``), which is then the program itself.
4. When the class path cannot tell (it is not recorded, or its directories and jars are not on
   this machine): a class defined by the application class loader (``app``) is mine, others
   (bootstrap, platform, custom loaders) are not.

A hidden class (a lambda's ``Main$$Lambda$14/0x…``) is judged by the class that defined it (the
name before ``$$``).

The class path is the one the JVM reported (trace.json ``jvm.class_path``, relative entries
against ``jvm.cwd``) or, when that is empty, the ``-cp``/``-classpath``/``--class-path``/``-jar``
of launch.json's command when that command runs ``java`` (a ``javac`` command's ``-cp`` is the
class path of the code it compiles, not its own).
"""

from __future__ import annotations

import json
import os
import shlex
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jbgui.model.statics import Statics


def normalize_prefix(prefix: str) -> str:
    """A package prefix in internal form (``a/b/C``), without surrounding blanks."""
    return prefix.strip().replace(".", "/")


@dataclass(frozen=True)
class ScopeRules:
    """The user's include and exclude prefixes (internal or dotted form)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass
class ClassPath:
    """The program's class path as recorded in a trace."""

    entries: list[Path] = field(default_factory=list)
    single_jar: bool = False

    @classmethod
    def of_trace(cls, trace_path: str | Path, metadata: dict | None = None) -> ClassPath:
        trace_path = Path(trace_path)
        if metadata is None:
            try:
                metadata = json.loads((trace_path / "trace.json").read_text())
            except (OSError, ValueError):
                metadata = {}
        jvm = metadata.get("jvm") if isinstance(metadata, dict) else None
        jvm = jvm if isinstance(jvm, dict) else {}
        try:
            launch = json.loads((trace_path / "launch.json").read_text())
        except (OSError, ValueError):
            launch = {}
        launch = launch if isinstance(launch, dict) else {}
        cwd = Path(str(jvm.get("cwd") or launch.get("cwd") or trace_path.parent))
        raw: list[str] = []
        jar_launch = False
        value = jvm.get("class_path")
        if isinstance(value, str) and value:
            raw = [e for e in value.split(os.pathsep) if e]
        else:
            command = launch.get("command") or []
            if isinstance(command, str):
                command = shlex.split(command)
            if command and isinstance(command[0], str) and Path(command[0]).name in ("java", "java.exe"):
                for i, arg in enumerate(command[:-1]):
                    if arg in ("-cp", "-classpath", "--class-path"):
                        raw = [e for e in str(command[i + 1]).split(os.pathsep) if e]
                        break
                    if arg == "-jar":
                        raw, jar_launch = [str(command[i + 1])], True
                        break
        entries = [Path(e) if Path(e).is_absolute() else cwd / e for e in raw]
        single = jar_launch or (len(entries) == 1 and entries[0].suffix == ".jar")
        return cls(entries, single)

    def origins(self, class_names: list[str]) -> dict[str, str]:
        """``"dir"`` or ``"jar"`` per class name found on this class path (internal names)."""
        out: dict[str, str] = {}
        wanted = set(class_names)
        for entry in self.entries:
            if entry.is_dir():
                for name in list(wanted):
                    if (entry / (name + ".class")).is_file():
                        out[name] = "dir"
                        wanted.discard(name)
            elif entry.is_file() and entry.suffix in (".jar", ".zip"):
                try:
                    with zipfile.ZipFile(entry) as z:
                        names = {n[:-6] for n in z.namelist() if n.endswith(".class")}
                except (OSError, zipfile.BadZipFile):
                    continue
                for name in wanted & names:
                    out[name] = "dir" if self.single_jar else "jar"
                wanted -= names
        return out

    @property
    def readable(self) -> bool:
        return any(e.exists() for e in self.entries)


def _host_class(name: str) -> str:
    """The class that defined a hidden class (``Main$$Lambda$3/0x…`` → ``Main``)."""
    cut = name.find("$$")
    return name[:cut] if cut > 0 else name.split("/0x", 1)[0]


def _prefix_matches(prefix: str, name: str) -> bool:
    if not prefix:
        return False
    if prefix.endswith("/") or prefix.endswith("$"):
        return name.startswith(prefix)
    return name == prefix or (name.startswith(prefix) and name[len(prefix)] in "/$")


def rule_verdict(rules: ScopeRules, name: str) -> bool | None:
    """True (include), False (exclude) or None (no prefix matches) for an internal class name."""
    best_len, verdict = -1, None
    for p in rules.include:
        q = normalize_prefix(p)
        if _prefix_matches(q, name) and len(q) > best_len:
            best_len, verdict = len(q), True
    for p in rules.exclude:
        q = normalize_prefix(p)
        if _prefix_matches(q, name) and len(q) >= best_len:
            best_len, verdict = len(q), False
    return verdict


class Scope:
    """"Mine" per class and per method of one trace (see the module's docstring for the rules)."""

    def __init__(self, statics: Statics, class_path: ClassPath, rules: ScopeRules = ScopeRules()):
        self.statics = statics
        self.class_path = class_path
        self.rules = rules
        self._base = self._base_classes()
        self.class_mask = self._apply_rules(self._base)
        self.method_mask = np.zeros(len(statics.m_class), np.bool_)
        if len(statics.m_class):
            self.method_mask[:] = self.class_mask[np.asarray(statics.m_class, np.int64)]
            self.method_mask[0] = False

    @classmethod
    def of_trace(cls, analysis, rules: ScopeRules = ScopeRules()) -> Scope:
        """The scope of an opened :class:`~jbgui.model.analysis.Analysis`."""
        return cls(analysis.statics, ClassPath.of_trace(analysis.trace.path, analysis.trace.metadata), rules)

    def with_rules(self, rules: ScopeRules) -> Scope:
        """The same trace with other prefixes (the class path is not read again)."""
        other = Scope.__new__(Scope)
        other.statics, other.class_path, other.rules, other._base = self.statics, self.class_path, rules, self._base
        other.class_mask = other._apply_rules(self._base)
        other.method_mask = np.zeros(len(self.statics.m_class), np.bool_)
        if len(self.statics.m_class):
            other.method_mask[:] = other.class_mask[np.asarray(self.statics.m_class, np.int64)]
            other.method_mask[0] = False
        return other

    def _base_classes(self) -> np.ndarray:
        st = self.statics
        n = len(st.c_name)
        mine = np.zeros(n, np.bool_)
        candidates = [cid for cid in range(n) if st.c_name[cid] and not st.c_jdk[cid]]
        hosts = {cid: _host_class(st.c_name[cid]) for cid in candidates}
        origins = self.class_path.origins(sorted(set(hosts.values()))) if self.class_path.readable else {}
        for cid in candidates:
            origin = origins.get(hosts[cid])
            if origin is not None:
                mine[cid] = origin == "dir"
            elif not self.class_path.readable:
                mine[cid] = st.c_loader[cid] == "app"
        return mine

    def _apply_rules(self, base: np.ndarray) -> np.ndarray:
        if not (self.rules.include or self.rules.exclude):
            return base.copy()
        out = base.copy()
        for cid, name in enumerate(self.statics.c_name):
            if name:
                verdict = rule_verdict(self.rules, _host_class(name))
                if verdict is not None:
                    out[cid] = verdict
        return out

    def key_mask(self, n_keys: int) -> np.ndarray:
        """Mine per node key (method ids; synthetic keys for native/untraced calls are never mine)."""
        out = np.zeros(n_keys, np.bool_)
        m = min(n_keys, len(self.method_mask))
        out[:m] = self.method_mask[:m]
        return out
