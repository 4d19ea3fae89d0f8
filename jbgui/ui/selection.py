"""The selection every view shares: one call (thread and row), or one method.

Views never talk to each other. Each holds the :class:`Selection`, calls :meth:`Selection.select_call`
when the user picks a call, and follows :attr:`Selection.callSelected` to show it. ``source`` is
the view that made the change, so that a view can ignore its own echo (and not, say, scroll away
from where the user clicked).
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QObject, Signal


class CallRef(NamedTuple):
    """One replayed call: the thread's index (as in threads.jsonl) and the row in its call table."""

    thread: int
    row: int


class Selection(QObject):
    """The current call and method, with a signal for each change."""

    # (CallRef or None, source): a call was chosen (None: nothing selected)
    callSelected = Signal(object, object)
    # (method id, source): a method was chosen without a particular call (e.g. from the summary)
    methodSelected = Signal(int, object)
    # (method id, block index within the method, source): a basic block was chosen (CFG, path)
    blockSelected = Signal(int, int, object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.call: CallRef | None = None
        self.method: int = 0

    def select_call(self, ref: CallRef | None, source: object = None) -> None:
        """Make ``ref`` the current call (and its method the current method)."""
        if ref is not None:
            ref = CallRef(int(ref.thread), int(ref.row))
        if ref == self.call:
            return
        self.call = ref
        self.callSelected.emit(ref, source)

    def select_method(self, method_id: int, source: object = None) -> None:
        """Show ``method_id`` without a particular call (clears the current call)."""
        self.call = None
        self.method = int(method_id)
        self.methodSelected.emit(self.method, source)

    def select_block(self, method_id: int, block: int, source: object = None) -> None:
        """Point at block ``block`` of ``method_id`` (the current call stays selected)."""
        self.blockSelected.emit(int(method_id), int(block), source)

    def clear(self) -> None:
        self.call = None
        self.method = 0
        self.callSelected.emit(None, None)
