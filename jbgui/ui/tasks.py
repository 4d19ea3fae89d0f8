"""Run slow work (replay, JVM calls, queries over millions of rows) off the GUI thread.

A :class:`Task` runs a plain function on a Python thread and reports through Qt signals, which
Qt delivers on the GUI thread (the task object lives there). The function receives a
``progress(done, total)`` callable and a ``cancelled()`` predicate; it should call ``progress``
now and then and stop early when ``cancelled()`` turns true.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

# Tasks alive: a task must outlive its thread even when its starter forgets it.
_RUNNING: set["Task"] = set()


class Task(QObject):
    """``fn(progress, cancelled, *args)`` on a worker thread."""

    progress = Signal(object, object)   # done, total (ints; may exceed 2**31)
    succeeded = Signal(object)          # fn's return value
    failed = Signal(str)                # a message for the user
    done = Signal()                     # after succeeded or failed (or when cancelled)

    def __init__(self, fn: Callable[..., Any], *args: Any, name: str = "task", parent: QObject | None = None):
        super().__init__(parent)
        self._fn = fn
        self._args = args
        self._cancel = threading.Event()
        self.name = name
        self.thread: threading.Thread | None = None

    def start(self) -> "Task":
        _RUNNING.add(self)
        self.thread = threading.Thread(target=self._run, name=f"jbgui-{self.name}", daemon=True)
        self.thread.start()
        return self

    def cancel(self) -> None:
        self._cancel.set()

    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ends (tests and shutdown only)."""
        if self.thread is not None:
            self.thread.join(timeout)
            return not self.thread.is_alive()
        return True

    def _run(self) -> None:
        try:
            result = self._fn(self._report, self.cancelled, *self._args)
        except Exception as error:  # noqa: BLE001 - every failure reaches the user as a message
            if not self.cancelled():
                self._emit(self.failed, _message(error))
        else:
            if not self.cancelled():
                self._emit(self.succeeded, result)
        finally:
            self._emit(self.done)
            _RUNNING.discard(self)

    def _report(self, done: int, total: int) -> None:
        self._emit(self.progress, done, total)

    def _emit(self, signal, *args) -> None:
        """Emit unless the window that owned this task was closed meanwhile (its C++ object is
        gone: there is no one left to tell)."""
        try:
            signal.emit(*args)
        except RuntimeError:
            self._cancel.set()


def _message(error: BaseException) -> str:
    """What the user reads: the error's own message for the errors our layers raise on bad
    input, the exception type and the innermost frame for anything unexpected."""
    from jbgui.launch import LaunchError
    from jbgui.model import TraceError

    if isinstance(error, (TraceError, LaunchError, OSError)):
        return str(error)
    try:
        from jbgui.bridge import BridgeError
    except ImportError:  # pragma: no cover - the bridge is optional at import time
        BridgeError = ()  # type: ignore[assignment]
    if BridgeError and isinstance(error, BridgeError):
        return str(error)
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" ({frame.filename.rsplit('/', 1)[-1]}:{frame.lineno})" if frame else ""
    return f"internal error: {type(error).__name__}: {error}{where}"
