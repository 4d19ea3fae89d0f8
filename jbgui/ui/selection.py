"""The selection every view shares: one call (thread and row), or one method.

Views never talk to each other. Each holds the :class:`Selection`, calls :meth:`Selection.select_call`
when the user picks a call, and follows :attr:`Selection.callSelected` to show it. ``source`` is
the view that made the change, so that a view can ignore its own echo (and not, say, scroll away
from where the user clicked).

The selection also keeps the history of what was chosen (calls and methods), as a browser does:
:meth:`Selection.back` and :meth:`Selection.forward` walk it (the main window's Back and Forward,
Alt+Left and Alt+Right), announcing each step like any other choice (with ``source`` None).
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QObject, Signal

HISTORY_LIMIT = 500


class CallRef(NamedTuple):
    """One replayed call: the thread's index (as in threads.jsonl) and the row in its call table."""

    thread: int
    row: int


class Selection(QObject):
    """The current call and method, with a signal for each change, and their history."""

    # (CallRef or None, source): a call was chosen (None: nothing selected)
    callSelected = Signal(object, object)
    # (method id, source): a method was chosen without a particular call (e.g. from the summary)
    methodSelected = Signal(int, object)
    # (method id, block index within the method, source): a basic block was chosen (CFG, path)
    blockSelected = Signal(int, int, object)
    # the history moved or grew: Back/Forward may have become possible or impossible
    historyChanged = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.call: CallRef | None = None
        self.method: int = 0
        self.history: list[tuple[str, object]] = []   # ("call", CallRef) or ("method", id)
        self.position = -1                             # the entry shown now
        self._walking = False

    def select_call(self, ref: CallRef | None, source: object = None) -> None:
        """Make ``ref`` the current call (and its method the current method)."""
        if ref is not None:
            ref = CallRef(int(ref.thread), int(ref.row))
        if ref == self.call:
            return
        self.call = ref
        if ref is not None:
            self._remember(("call", ref))
        self.callSelected.emit(ref, source)

    def select_method(self, method_id: int, source: object = None) -> None:
        """Show ``method_id`` without a particular call (clears the current call)."""
        self.call = None
        self.method = int(method_id)
        self._remember(("method", self.method))
        self.methodSelected.emit(self.method, source)

    def select_block(self, method_id: int, block: int, source: object = None) -> None:
        """Point at block ``block`` of ``method_id`` (the current call stays selected)."""
        self.blockSelected.emit(int(method_id), int(block), source)

    def clear(self) -> None:
        """Nothing selected, and no history (a trace was opened or closed)."""
        self.call = None
        self.method = 0
        self.history.clear()
        self.position = -1
        self.historyChanged.emit()
        self.callSelected.emit(None, None)

    # ------------------------------------------------------------------ history

    def can_go_back(self) -> bool:
        return self.position > 0

    def can_go_forward(self) -> bool:
        return self.position + 1 < len(self.history)

    def back(self) -> bool:
        """Choose the previous entry of the history again; False when there is none."""
        return self._go(self.position - 1)

    def forward(self) -> bool:
        """Choose the next entry of the history again (after :meth:`back`); False when there is none."""
        return self._go(self.position + 1)

    def _go(self, position: int) -> bool:
        if not 0 <= position < len(self.history):
            return False
        self.position = position
        kind, value = self.history[position]
        self._walking = True
        try:
            if kind == "call":
                self.call = None        # so that select_call announces it even if it was current
                self.select_call(value, None)
            else:
                self.select_method(int(value), None)
        finally:
            self._walking = False
        self.historyChanged.emit()
        return True

    def _remember(self, entry: tuple[str, object]) -> None:
        if self._walking:
            return
        if 0 <= self.position < len(self.history) and self.history[self.position] == entry:
            return
        del self.history[self.position + 1:]          # a new choice ends the forward part
        self.history.append(entry)
        if len(self.history) > HISTORY_LIMIT:
            del self.history[:len(self.history) - HISTORY_LIMIT]
        self.position = len(self.history) - 1
        self.historyChanged.emit()
