"""What every aggregated view shows, shared: the trace's :class:`AggregateView` (model), which
thread (or the whole run), the weight, only-my-code with its include/exclude prefixes (remembered
per program), the transform stack and the search text. Views read :meth:`tree` and redraw on
:attr:`changed`; they never talk to each other."""

from __future__ import annotations

import hashlib
import json
import re

from PySide6.QtCore import QObject, Signal

from jbgui.model import merged_tree as MT
from jbgui.model import transforms as TR
from jbgui.model.scope import Scope, ScopeRules
from jbgui.ui import settings as S


def program_key(analysis) -> str:
    """What identifies "the program" for remembered prefixes: its main class or command."""
    jvm = analysis.trace.metadata.get("jvm", {}) if isinstance(analysis.trace.metadata, dict) else {}
    command = str(jvm.get("command") or "").split(" ")[0] if isinstance(jvm, dict) else ""
    return command or analysis.trace.path.name


class AggregateState(QObject):
    """The shared scope, transforms and search of the aggregated views."""

    changed = Signal()          # the tree (thread, weight, scope or transforms) changed
    searchChanged = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.analysis = None
        self.view: TR.AggregateView | None = None
        self.thread: int | None = None
        self.weight = "bytecodes"
        self.only_mine = False
        self.transforms: list[TR.Transform] = []
        self.rules = ScopeRules()
        self.search = ""
        self.search_error = ""
        self._pattern: re.Pattern | None = None

    # ------------------------------------------------------------------ trace

    def set_analysis(self, analysis) -> None:
        self.analysis = analysis
        self.transforms = []
        self.thread = None
        self.search, self._pattern, self.search_error = "", None, ""
        if analysis is None:
            self.view = None
        else:
            self.rules = self._remembered_rules(analysis)
            self.view = TR.AggregateView(analysis, Scope.of_trace(analysis, self.rules))
            self.only_mine = bool(S.settings().value(f"scope/{self._key()}/only_mine", False, type=bool))
        self.changed.emit()
        self.searchChanged.emit()

    def _key(self) -> str:
        # a stable digest (str hashes change between processes)
        return "p" + hashlib.sha1(program_key(self.analysis).encode()).hexdigest()[:16] if self.analysis is not None else ""

    def _remembered_rules(self, analysis) -> ScopeRules:
        self.analysis = analysis
        raw = S.settings().value(f"scope/{self._key()}/rules", "")
        try:
            data = json.loads(raw) if raw else {}
            return ScopeRules(tuple(str(p) for p in data.get("include", [])), tuple(str(p) for p in data.get("exclude", [])))
        except (ValueError, AttributeError, TypeError):
            return ScopeRules()

    # ------------------------------------------------------------------ what is shown

    @property
    def stack(self) -> tuple[TR.Transform, ...]:
        """The transforms applied: only my code first when on, then the user's stack."""
        return ((TR.Transform("only-my-code"),) if self.only_mine else ()) + tuple(self.transforms)

    def tree(self) -> MT.Tree | None:
        if self.view is None:
            return None
        return self.view.tree(self.stack, self.thread)

    def name(self, key: int) -> str:
        return MT.key_name(self.analysis.statics, int(key)) if self.analysis is not None else ""

    # ------------------------------------------------------------------ changes

    def set_thread(self, thread: int | None) -> None:
        if thread != self.thread:
            self.thread = thread
            self.changed.emit()

    def set_weight(self, weight: str) -> None:
        if weight != self.weight and weight in MT.WEIGHTS:
            self.weight = weight
            self.changed.emit()

    def set_only_mine(self, on: bool) -> None:
        if bool(on) != self.only_mine:
            self.only_mine = bool(on)
            if self.analysis is not None:
                S.settings().setValue(f"scope/{self._key()}/only_mine", self.only_mine)
            self.changed.emit()

    def set_rules(self, include: list[str], exclude: list[str]) -> None:
        rules = ScopeRules(tuple(p for p in include if p.strip()), tuple(p for p in exclude if p.strip()))
        if rules == self.rules or self.view is None:
            return
        self.rules = rules
        self.view.set_scope(self.view.scope.with_rules(rules))
        s = S.settings()
        s.setValue(f"scope/{self._key()}/rules", json.dumps({"include": list(rules.include), "exclude": list(rules.exclude)}))
        s.sync()
        self.changed.emit()

    def push(self, transform: TR.Transform) -> None:
        self.transforms.append(transform)
        self.changed.emit()

    def undo(self, keep: int | None = None) -> None:
        """Drop the last transform, or keep only the first ``keep``."""
        keep = len(self.transforms) - 1 if keep is None else keep
        if 0 <= keep < len(self.transforms):
            del self.transforms[keep:]
            self.changed.emit()

    def set_search(self, text: str) -> None:
        self.search = text
        self.search_error = ""
        self._pattern = None
        if text:
            try:
                self._pattern = re.compile(text, re.IGNORECASE)
            except re.error as error:
                self.search_error = f"not a regular expression: {error}"
        self.searchChanged.emit()

    def matches(self, name: str) -> bool:
        return bool(self._pattern is not None and self._pattern.search(name))

    def matching_keys(self, keys) -> set[int]:
        """Keys whose names match the search (empty without a search)."""
        if self._pattern is None:
            return set()
        return {int(k) for k in keys if self._pattern.search(self.name(int(k)))}


class LazyReload:
    """Mixin for a view widget: a state change reloads it at once when it is visible, otherwise
    when it is next shown — the views in hidden tabs do not recompute on every change."""

    _dirty = False

    def reload(self) -> None:  # pragma: no cover - every view defines it
        raise NotImplementedError

    def state_changed(self) -> None:
        if self.isVisible():
            self._dirty = False
            self.reload()
        else:
            self._dirty = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dirty:
            self._dirty = False
            self.reload()
