"""The SQL panel: a query over the open trace's tables (docs/sql.md), run off the GUI thread by
:func:`jbgui.model.sql.query`, its rows in a table; selecting a row that names a call (columns
``thread`` and ``row``) selects that call in every view."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSplitter,
                               QTableView, QVBoxLayout, QWidget)

from jbgui.model.analysis import Analysis
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.tasks import Task

MAX_ROWS = 10_000
EXAMPLE = ("SELECT c.thread, c.row, m.qualified, c.own_bytecodes\nFROM calls c JOIN methods m USING (method)\n"
           "ORDER BY c.own_bytecodes DESC LIMIT 100")


class _RowsModel(QAbstractTableModel):
    def __init__(self):
        super().__init__()
        self.columns: list[str] = []
        self.rows: list[tuple] = []

    def set_result(self, columns: list[str], rows: list[tuple]) -> None:
        self.beginResetModel()
        self.columns, self.rows = columns, rows
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt's name
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        value = self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return "NULL" if value is None else str(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.columns[section]
        return None


class SqlView(QWidget):
    """A query box (Ctrl+Return runs it), a status line and the result rows."""

    def __init__(self, selection: Selection, analysis: Callable[[], Analysis | None], parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis = analysis
        self.task: Task | None = None
        self.editor = QPlainTextEdit(EXAMPLE)
        self.editor.setObjectName("sql-query")
        self.run_button = QPushButton("Run")
        self.run_button.setToolTip("Run the query (Ctrl+Return)")
        self.run_button.clicked.connect(self.run)
        self.status = QLabel("Tables: calls, methods, classes, threads, blocks, edges, call_sites, receivers, "
                             "exceptions, flags (docs/sql.md)")
        self.status.setWordWrap(True)
        self.model = _RowsModel()
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.editor)
        line = QHBoxLayout()
        line.addWidget(self.status, 1)
        line.addWidget(self.run_button)
        top_layout.addLayout(line)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(self.table)
        split.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(split)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self.editor, activated=self.run)

    def run(self) -> None:
        """Run the query in the box over the open trace."""
        analysis = self.analysis()
        if analysis is None:
            self.status.setText("Open a trace first.")
            return
        if self.task is not None:
            self.task.cancel()
        from jbgui.model.sql import query  # DuckDB loads on first use
        text = self.editor.toPlainText()
        self.status.setText("Running…")
        self.run_button.setEnabled(False)
        self.task = Task(lambda _p, _c: query(analysis, text, MAX_ROWS), name="sql", parent=self)
        self.task.succeeded.connect(self._show)
        self.task.failed.connect(self._failed)
        self.task.done.connect(lambda: self.run_button.setEnabled(True))
        self.task.start()

    def _show(self, result) -> None:
        self.model.set_result(result.columns, result.rows)
        self.table.resizeColumnsToContents()
        more = f" (the first {MAX_ROWS:,} shown)" if result.truncated else ""
        hint = " · select a row to select its call" if {"thread", "row"} <= set(result.columns) else ""
        self.status.setText(f"{len(result.rows):,} rows{more}{hint}")

    def _failed(self, message: str) -> None:
        self.model.set_result([], [])
        self.status.setText(message.splitlines()[0] if message else "The query failed.")

    def _row_chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        cols = self.model.columns
        if not current.isValid() or "thread" not in cols or "row" not in cols:
            return
        values = self.model.rows[current.row()]
        thread, row = values[cols.index("thread")], values[cols.index("row")]
        analysis = self.analysis()
        if analysis is None or not isinstance(thread, int) or not isinstance(row, int):
            return
        for t in analysis.threads:
            if t.index == thread and 0 <= row < len(t.calls):
                self.selection.select_call(CallRef(thread, row), self)
                return
