"""The range panel: what happened in the time range selected in the timeline (Shift+drag, or
"Range of call"): calls, own bytecodes and blocks, exceptions and class loads per thread, and the
hot methods by own bytecodes within the range, and the flame graph of the range (the merged tree
of the calls that ran entirely inside it, :mod:`jbgui.model.range_tree`). Computed by
:mod:`jbgui.model.range_stats` and :mod:`jbgui.model.range_tree` off the GUI thread; a method row
or a clicked frame selects that method everywhere (a frame click also zooms into it).

Calls running across an edge of the range did part of their work outside it; they are counted
apart ("edge calls") rather than split.
"""

from __future__ import annotations

import html
import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSizePolicy, QTableWidget, QTableWidgetItem, QTabWidget,
    QVBoxLayout, QWidget,
)

from jbgui.model import cct as CCT
from jbgui.model import flame
from jbgui.model import range_stats as RS
from jbgui.model import range_tree as RT
from jbgui.model.analysis import Analysis
from jbgui.ui import colors
from jbgui.ui.aggregate_state import AggregateState
from jbgui.ui.flame_view import FlameCanvas
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
        # The flame graph's own naming state: the Aggregated tab's scope and transforms do not
        # apply to a range (it only lends the canvas method names, no search).
        self.names = AggregateState(self)
        self.flame = FlameCanvas(self.names)
        self.flame.setMinimumHeight(60)
        self.flame.frameClicked.connect(self._frame_clicked)
        self.flame.frameHovered.connect(self._frame_hovered)
        self.flame_all = QPushButton("All")
        self.flame_all.setToolTip("Back to the whole range")
        self.flame_all.clicked.connect(lambda: self._zoom(-1))
        self.flame_status = QLabel()
        self.flame_status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        flame_box = QWidget()
        flame_row = QHBoxLayout()
        flame_row.addWidget(self.flame_all)
        flame_row.addWidget(self.flame_status, 1)
        flame_column = QVBoxLayout(flame_box)
        flame_column.setContentsMargins(0, 0, 0, 0)
        flame_column.addLayout(flame_row)
        flame_column.addWidget(self.flame, 1)
        self.tree = None
        self._hues = None
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.methods, "Hot methods")
        self.tabs.addTab(flame_box, "Flame graph")
        self.tabs.addTab(self.threads, "Threads")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.extra)

    def set_trace(self, analysis: Analysis | None) -> None:
        self.analysis = analysis
        self.names.analysis = analysis     # names only: no scope is built for the range's graph
        self._hues = colors.method_hues(analysis.statics) if analysis is not None else None
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
            self._show_tree(None)
            return
        self.range = (start, stop)
        self.header.setText("Counting the range …")
        task = Task(_compute, self.analysis, start, stop, self.use_clock, name="range")
        task.succeeded.connect(lambda stats, t=task: self._done(t, stats))
        task.failed.connect(lambda message: self.header.setText(f"The range could not be counted: {message}"))
        self._task = task
        task.start()

    def _done(self, task: Task, result) -> None:
        if task is not self._task:
            return
        self._task = None
        stats, tree = result
        self.stats = stats
        self._show_tree(tree)
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
            top = sorted(stats.exceptions.items(), key=lambda kv: -kv[1])[:4]
            parts.append("Exceptions: " + ", ".join(f"{html.escape(a.statics.class_name_of_id(c))} ×{n}"
                                                    for c, n in top))
        if stats.class_loads:
            # a few names: a long list would take the flame graph's height in a bottom dock
            names = [a.statics.class_name_of_id(c) for c in stats.class_loads[:5]]
            more = f" and {len(stats.class_loads) - 5:,} more" if len(stats.class_loads) > 5 else ""
            parts.append("Classes loaded: " + html.escape(", ".join(names)) + more)
        edges = sum(len(t.edge_rows) for t in stats.threads)
        if edges:
            parts.append(f"{edges} calls run across an edge of the range; their own work is not counted above.")
        self.extra.setText("<br>".join(parts))

    # ------------------------------------------------------------------ flame graph

    def _show_tree(self, tree) -> None:
        self.tree = tree
        lay = flame.layout(tree, "bytecodes") if tree is not None and len(tree) else None
        self.flame.set_layout(lay, self._hues)
        self._zoom(-1)

    def _zoom(self, node: int) -> None:
        self.flame.zoom = node
        self.flame.update()
        self.flame_all.setEnabled(node >= 0)
        lay = self.flame.layout_
        if lay is None:
            self.flame_status.setText("No call ran entirely inside the range." if self.range else "")
        elif node < 0:
            self.flame_status.setText(f"{format_count(lay.total)} bytecodes of the {format_count(int(self.tree.calls.sum()))} "
                                      f"calls that ran entirely inside the range, in {len(self.tree):,} contexts "
                                      "(calls across an edge are left out). Click a frame to zoom.")
        else:
            self.flame_status.setText(self.flame.describe(node).replace("\n", " · "))

    def _frame_clicked(self, node: int) -> None:
        self._zoom(node)
        key = int(self.flame.layout_.tree.key[node])
        if 0 < key < CCT.SYNTHETIC_KEY:
            self.selection.select_method(key, self)

    def _frame_hovered(self, node: int) -> None:
        if node >= 0:
            self.flame_status.setText(self.flame.describe(node).replace("\n", " · "))

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


def _compute(_progress, _cancelled, analysis, start, stop, use_clock):
    return (RS.range_stats(analysis, start, stop, use_clock=use_clock),
            RT.range_tree(analysis, start, stop, use_clock=use_clock))
