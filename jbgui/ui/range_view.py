"""The range panel: what happened in the time range selected in the timeline (Shift+drag, or
"Range of call"): calls, own bytecodes and blocks, exceptions and class loads per thread, and the
hot methods by own bytecodes within the range. Computed by :mod:`jbgui.model.range_stats` off the
GUI thread; a method row selects that method everywhere.

Calls running across an edge of the range did part of their work outside it; they are counted
apart ("edge calls") rather than split.
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QHeaderView, QLabel, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from jbgui.model import range_stats as RS
from jbgui.model.analysis import Analysis
from jbgui.ui.format import format_count, format_duration
from jbgui.ui.selection import Selection
from jbgui.ui.tasks import Task

METHOD_COLUMNS = ("Method", "Calls", "Own bytecodes", "Share", "Own blocks")
THREAD_COLUMNS = ("Thread", "Calls started", "Contained", "Own bytecodes", "Blocks", "Exceptions", "Class loads",
                  "Edge calls")


def _number(value: int | float, text: str | None = None) -> QTableWidgetItem:
    item = QTableWidgetItem(text if text is not None else format_count(value))
    item.setData(Qt.ItemDataRole.UserRole, value)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


class RangeView(QWidget):
    """Statistics of the timeline's selected range."""

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis: Analysis | None = None
        self.use_clock = True
        self.stats: RS.RangeStats | None = None
        self.range: tuple[float, float] | None = None
        self._task: Task | None = None
        self.header = QLabel("Shift+drag in the timeline (or press R on a call) to select a range.")
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.methods = QTableWidget(0, len(METHOD_COLUMNS))
        self.methods.setHorizontalHeaderLabels(METHOD_COLUMNS)
        self.threads = QTableWidget(0, len(THREAD_COLUMNS))
        self.threads.setHorizontalHeaderLabels(THREAD_COLUMNS)
        for table in (self.methods, self.threads):
            table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
            table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
            table.verticalHeader().hide()
            table.setWordWrap(False)
            header = table.horizontalHeader()
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            for c in range(1, table.columnCount()):
                header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.methods.itemActivated.connect(self._method_chosen)
        self.methods.cellClicked.connect(lambda r, _c: self._method_chosen(self.methods.item(r, 0)))
        self.extra = QLabel()
        self.extra.setWordWrap(True)
        self.extra.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.methods)
        split.addWidget(self.threads)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(split, 1)
        layout.addWidget(self.extra)

    def set_trace(self, analysis: Analysis | None) -> None:
        self.analysis = analysis
        self.show_range(math.nan, math.nan)

    def show_range(self, start: float, stop: float, use_clock: bool | None = None) -> None:
        """Compute and show the statistics of [start, stop) (nan: no range)."""
        if use_clock is not None:
            self.use_clock = use_clock
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.stats = None
        if self.analysis is None or math.isnan(start) or math.isnan(stop) or stop <= start:
            self.range = None
            self.header.setText("Shift+drag in the timeline (or press R on a call) to select a range.")
            self.methods.setRowCount(0)
            self.threads.setRowCount(0)
            self.extra.clear()
            return
        self.range = (start, stop)
        self.header.setText("Counting the range …")
        task = Task(lambda _p, _c, a, s, e, u: RS.range_stats(a, s, e, use_clock=u), self.analysis, start, stop,
                    self.use_clock, name="range")
        task.succeeded.connect(lambda stats, t=task: self._done(t, stats))
        task.failed.connect(lambda message: self.header.setText(f"The range could not be counted: {message}"))
        self._task = task
        task.start()

    def _done(self, task: Task, stats: RS.RangeStats) -> None:
        if task is not self._task:
            return
        self._task = None
        self.stats = stats
        a = self.analysis
        width = format_duration(stats.stop - stats.start) if stats.unit == "ns" else f"{stats.stop - stats.start:,.0f} events"
        where = (f"{format_duration(stats.start)} … {format_duration(stats.stop)}" if stats.unit == "ns"
                 else f"events {stats.start:,.0f} … {stats.stop:,.0f}")
        total_bc = stats.total("bytecodes")
        self.header.setText(
            f"<b>Range of {width}</b> ({where}): {format_count(stats.total('calls_started'))} calls started, "
            f"{format_count(stats.total('calls_contained'))} ran entirely inside, "
            f"{format_count(total_bc)} own bytecodes and {format_count(stats.total('blocks'))} blocks executed "
            f"by them, {format_count(stats.total('exceptions'))} exceptions thrown, "
            f"{format_count(stats.total('class_loads'))} classes loaded.")
        self.methods.setSortingEnabled(False)
        self.methods.setRowCount(len(stats.methods))
        for i, (method, calls, bc, blocks) in enumerate(stats.methods.tolist()):
            name = a.statics.method_qualified(int(method)) if method else "native or untraced"
            item = QTableWidgetItem(name or f"method {method}")
            item.setData(Qt.ItemDataRole.UserRole, int(method))
            item.setToolTip(name)
            self.methods.setItem(i, 0, item)
            self.methods.setItem(i, 1, _number(calls))
            self.methods.setItem(i, 2, _number(bc))
            share = bc / total_bc if total_bc else 0.0
            self.methods.setItem(i, 3, _number(share, f"{100 * share:.1f} %"))
            self.methods.setItem(i, 4, _number(blocks))
        self.threads.setRowCount(len(stats.threads))
        for i, t in enumerate(stats.threads):
            self.threads.setItem(i, 0, QTableWidgetItem(f"{t.name} #{t.index}"))
            for c, value in enumerate((t.calls_started, t.calls_contained, t.bytecodes, t.blocks, t.exceptions,
                                       t.class_loads, len(t.edge_rows)), start=1):
                self.threads.setItem(i, c, _number(value))
        parts = []
        if stats.exceptions:
            top = sorted(stats.exceptions.items(), key=lambda kv: -kv[1])[:8]
            parts.append("Exceptions: " + ", ".join(f"{html.escape(a.statics.class_name_of_id(c))} ×{n}"
                                                    for c, n in top))
        if stats.class_loads:
            names = [a.statics.class_name_of_id(c) for c in stats.class_loads[:12]]
            more = f" and {len(stats.class_loads) - 12:,} more" if len(stats.class_loads) > 12 else ""
            parts.append("Classes loaded: " + html.escape(", ".join(names)) + more)
        edges = sum(len(t.edge_rows) for t in stats.threads)
        if edges:
            parts.append(f"{edges} calls run across an edge of the range; their own work is not counted above.")
        self.extra.setText("<br>".join(parts))

    def methods_text(self) -> str:
        """The method table as text (one row per line), for a quick look and for tests."""
        rows = []
        for r in range(self.methods.rowCount()):
            rows.append("\t".join(self.methods.item(r, c).text() for c in range(self.methods.columnCount())))
        return "\n".join(rows)

    def _method_chosen(self, item: QTableWidgetItem | None) -> None:
        if item is None:
            return
        method = item.data(Qt.ItemDataRole.UserRole)
        row_item = self.methods.item(item.row(), 0)
        method = row_item.data(Qt.ItemDataRole.UserRole) if row_item is not None else method
        if method:
            self.selection.select_method(int(method), self)
