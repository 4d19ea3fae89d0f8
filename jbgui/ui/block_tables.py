"""What the block-view tables share: a read-only table filled from rows, and running the model
off the GUI thread with only the latest result shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from shiboken6 import isValid
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from jbgui.ui.tasks import Task


def short_method(method: str) -> str:
    """``Class.name`` of ``pkg.Class.name(desc)`` (tables show this; the full name is a tooltip)."""
    return ".".join(method.split("(")[0].rsplit(".", 2)[-2:])


def short_class(name: str) -> str:
    return name.rsplit(".", 1)[-1]


class RowsTable(QTableWidget):
    """A sortable-looking, read-only table; ``fill(rows)`` with one tuple of texts per row and
    ``payloads``, one object per row kept for activation."""

    def __init__(self, headers: list[str], parent=None):
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.horizontalHeader().setStretchLastSection(True)
        self.setWordWrap(False)
        self.payloads: list = []

    def fill(self, rows: list[tuple], payloads: list | None = None, numeric: set[int] = frozenset(),
             tips: list[str] | None = None, widest: dict[int, int] | None = None) -> None:
        """``widest``: the widest a column may be fitted to (default 420 pixels); the last column
        takes what is left."""
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(str(text))
                if tips is not None:
                    item.setToolTip(tips[r])
                if c in numeric:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, item)
        self.payloads = list(payloads or [None] * len(rows))
        self.resizeColumnsToContents()
        for c in range(self.columnCount() - 1):
            self.setColumnWidth(c, min(self.columnWidth(c), (widest or {}).get(c, 420)))

    def payload(self, row: int):
        return self.payloads[row] if 0 <= row < len(self.payloads) else None


class Latest:
    """Runs ``fn(progress, cancelled, *args)`` on a worker; only the newest run's result reaches
    ``done`` (an older one still running is cancelled)."""

    def __init__(self, owner, done, failed, progress=None):
        self.owner = owner
        self.done = done
        self.failed = failed
        self.progress = progress
        self.task: Task | None = None

    def run(self, fn, *args) -> Task:
        if self.task is not None:
            self.task.cancel()
        task = Task(fn, *args, name="blockviews")
        # A result may arrive after its view was closed (the window went away mid-computation).
        live = lambda t: t is self.task and isValid(self.owner)  # noqa: E731
        task.succeeded.connect(lambda result, t=task: self.done(result) if live(t) else None)
        task.failed.connect(lambda message, t=task: self.failed(message) if live(t) else None)
        if self.progress is not None:
            task.progress.connect(lambda done, total, t=task: self.progress(done, total) if live(t) else None)
        self.task = task
        task.start()
        return task
