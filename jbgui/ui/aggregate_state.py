"""What every aggregated view shows, shared: the trace's :class:`AggregateView` (model), which
thread (or the whole run), the weight, only-my-code with its include/exclude prefixes (remembered
per program), the transform stack and the search text. Views read :meth:`tree` and redraw on
:attr:`ready`; they never talk to each other.

Nothing heavy runs on the GUI thread: the transformed tree is computed by a worker
(:class:`Latest`: a newer request cancels an older one, whose result is dropped), and each view
computes what it draws from that tree in its own worker, showing "computing…" meanwhile
(:class:`BusyLabel`). Workers only touch model objects; their results reach the widgets through
queued signals on the GUI thread."""

from __future__ import annotations

import hashlib
import json
import re
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel
from shiboken6 import isValid

from jbgui.model import merged_tree as MT
from jbgui.model import search as SE
from jbgui.model import transforms as TR
from jbgui.model.scope import Scope, ScopeRules
from jbgui.ui import settings as S
from jbgui.ui.tasks import Task


class Latest:
    """Runs ``fn(progress, cancelled, *args)`` on a worker thread; only the newest run's result
    reaches ``done`` (on the GUI thread), an older run still going is cancelled and ignored.
    ``busy`` is true from :meth:`run` until the newest run's result (or failure) arrived."""

    def __init__(self, owner: QObject, done, failed=None, progress=None, name: str = "aggregate"):
        self.owner = owner
        self.done = done
        self.failed = failed
        self.progress = progress
        self.name = name
        self.task: Task | None = None
        self.busy = False

    def run(self, fn, *args) -> Task:
        self.cancel()
        task = Task(fn, *args, name=self.name)
        # a result may arrive after the owner was closed (the window went away mid-computation)
        live = lambda t: t is self.task and isValid(self.owner)  # noqa: E731
        task.succeeded.connect(lambda result, t=task: self._finish(self.done, result) if live(t) else None)
        task.failed.connect(lambda message, t=task: self._finish(self.failed, message) if live(t) else None)
        if self.progress is not None:
            task.progress.connect(lambda done, total, t=task: self.progress(done, total) if live(t) else None)
        self.task = task
        self.busy = True
        task.start()
        return task

    def _finish(self, callback, value) -> None:
        self.busy = False
        if callback is not None:
            callback(value)

    def cancel(self) -> None:
        """Forget the running request (its result will be dropped)."""
        if self.task is not None:
            self.task.cancel()
            self.task = None
        self.busy = False


class BusyLabel(QLabel):
    """"computing…" (with progress when known) above a view while its data are computed."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setStyleSheet("QLabel { color: #5f6368; padding: 2px 6px; }")
        self.hide()

    def start(self, what: str = "") -> None:
        self.setText(f"computing {what}…" if what else "computing…")
        self.show()

    def progress(self, done: int, total: int) -> None:
        if total:
            self.setText(f"computing… {100.0 * done / total:.0f}%")
            self.show()

    def stop(self, error: str = "") -> None:
        if error:
            self.setText(error)
            self.show()
        else:
            self.hide()


def _compute_tree(progress, cancelled, view, stack, thread):
    """Worker: the transformed tree (the model caches it for the next request)."""
    return view.tree(stack, thread, progress=progress, cancelled=cancelled)


def program_key(analysis) -> str:
    """What identifies "the program" for remembered prefixes: its main class or command."""
    jvm = analysis.trace.metadata.get("jvm", {}) if isinstance(analysis.trace.metadata, dict) else {}
    command = str(jvm.get("command") or "").split(" ")[0] if isinstance(jvm, dict) else ""
    return command or analysis.trace.path.name


class AggregateState(QObject):
    """The shared scope, transforms and search of the aggregated views."""

    changed = Signal()          # the settings (thread, weight, scope or transforms) changed
    stale = Signal()            # the tree of the new settings is not there yet: a visible view requests it
    computing = Signal()        # a tree for the new settings is being computed
    ready = Signal()            # :meth:`tree` is the tree of the current settings: views redraw
    progress = Signal(object, object)
    failed = Signal(str)
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
        self._tree: MT.Tree | None = None
        self._worker = Latest(self, self._tree_done, self._tree_failed, self.progress.emit, name="aggregate-tree")
        self.last_seconds = 0.0     # how long the latest tree took (shown in the status)
        self._started = 0.0

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
        self._changed()
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
        """The tree of the current settings, or None while it is being computed (or no trace)."""
        return self._tree

    @property
    def busy(self) -> bool:
        return self._worker.busy

    def _changed(self) -> None:
        """Settings changed: tell the toolbar, then get the tree — at once when the model has it
        cached (undo, toggling back), else on a worker while the views show "computing…"."""
        self.changed.emit()
        self._worker.cancel()
        if self.view is None:
            self._tree = None
            self.ready.emit()
            return
        cached = self.view.cached(self.stack, self.thread)
        if cached is not None:
            self._tree = cached
            self.ready.emit()
            return
        self._tree = None
        self.stale.emit()

    def request(self) -> None:
        """Compute the tree of the current settings on the worker, unless it is there or on its
        way: called by visible views, so that a trace opened with the aggregated views hidden
        costs nothing."""
        if self._tree is not None or self.view is None or self._worker.busy:
            return
        self._started = time.perf_counter()
        self.computing.emit()
        self._worker.run(_compute_tree, self.view, self.stack, self.thread)

    def _tree_done(self, tree) -> None:
        self._tree = tree
        self.last_seconds = time.perf_counter() - self._started
        self.ready.emit()

    def _tree_failed(self, message: str) -> None:
        self.failed.emit(message)

    def name(self, key: int) -> str:
        return MT.key_name(self.analysis.statics, int(key)) if self.analysis is not None else ""

    # ------------------------------------------------------------------ changes

    def set_thread(self, thread: int | None) -> None:
        if thread != self.thread:
            self.thread = thread
            self._changed()

    def set_weight(self, weight: str) -> None:
        if weight != self.weight and weight in MT.WEIGHTS:
            self.weight = weight
            self.changed.emit()
            if not self.busy:
                self.ready.emit()   # the same tree, other weights: views redraw

    def set_only_mine(self, on: bool) -> None:
        if bool(on) != self.only_mine:
            self.only_mine = bool(on)
            if self.analysis is not None:
                S.settings().setValue(f"scope/{self._key()}/only_mine", self.only_mine)
            self._changed()

    def set_rules(self, include: list[str], exclude: list[str]) -> None:
        rules = ScopeRules(tuple(p for p in include if p.strip()), tuple(p for p in exclude if p.strip()))
        if rules == self.rules or self.view is None:
            return
        self.rules = rules
        self.view.set_scope(self.view.scope.with_rules(rules))
        s = S.settings()
        s.setValue(f"scope/{self._key()}/rules", json.dumps({"include": list(rules.include), "exclude": list(rules.exclude)}))
        s.sync()
        self._changed()

    def push(self, transform: TR.Transform) -> None:
        self.transforms.append(transform)
        self._changed()

    def undo(self, keep: int | None = None) -> None:
        """Drop the last transform, or keep only the first ``keep``."""
        keep = len(self.transforms) - 1 if keep is None else keep
        if 0 <= keep < len(self.transforms):
            del self.transforms[keep:]
            self._changed()

    def set_search(self, text: str) -> None:
        """The explorer's one search (:mod:`jbgui.model.search`): the aggregated views, the flame
        graph and the timeline highlight its matches."""
        if text == self.search:
            return
        self.search = text
        self._pattern, self.search_error = SE.compile_search(text)
        self.searchChanged.emit()

    @property
    def pattern(self) -> re.Pattern | None:
        return self._pattern

    def matches(self, name: str) -> bool:
        return bool(self._pattern is not None and self._pattern.search(name))

    def matching_keys(self, keys) -> set[int]:
        """Keys whose names match the search (empty without a search)."""
        if self._pattern is None:
            return set()
        return {int(k) for k in keys if self._pattern.search(self.name(int(k)))}


class LazyReload:
    """Mixin for a view widget: a new tree reloads it at once when it is visible, otherwise
    when it is next shown — the views in hidden tabs do not recompute on every change. While
    the state computes a tree, the view shows "computing…" (its ``busy`` label) and drops what
    its own worker was computing from the old tree."""

    _dirty = False

    def reload(self) -> None:  # pragma: no cover - every view defines it
        raise NotImplementedError

    def init_async(self, state: AggregateState) -> None:
        """Call from ``__init__``: ``self.busy`` label, ``self.worker`` and the state's signals."""
        self.busy = BusyLabel()
        self.worker = Latest(self, self._computed, self._failed, self.busy.progress, name=type(self).__name__)
        self.state = state
        state.ready.connect(self.state_changed)
        state.stale.connect(self._state_stale)
        state.computing.connect(self._state_computing)
        state.progress.connect(self.busy.progress)
        state.failed.connect(self.busy.stop)

    def _state_stale(self) -> None:
        if self.isVisible():
            self.state.request()
        else:
            self._dirty = True

    def _state_computing(self) -> None:
        self.worker.cancel()
        self.busy.start("the tree")

    def compute(self, fn, *args, what: str = "") -> None:
        """Run ``fn(progress, cancelled, *args)`` on the view's worker; :meth:`apply` gets its
        result on the GUI thread."""
        self.busy.start(what)
        self.worker.run(fn, *args)

    def _computed(self, result) -> None:
        self.busy.stop()
        self.apply(result)

    def _failed(self, message: str) -> None:
        self.busy.stop(message)

    def apply(self, result) -> None:  # pragma: no cover - views that compute define it
        raise NotImplementedError

    @property
    def idle(self) -> bool:
        """Nothing being computed for this view (tests wait for it)."""
        return not self.worker.busy

    def state_changed(self) -> None:
        self.busy.stop()    # the tree is here; what the view computes from it says so itself
        if self.isVisible():
            self._dirty = False
            self.reload()
        else:
            self._dirty = True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._dirty:
            self._dirty = False
            if self.state.tree() is None and self.state.view is not None:
                self.state.request()    # its arrival reloads the view
            else:
                self.reload()
