"""Methods table: which methods (or classes, packages) cost most — calls, own and total
bytecodes, blocks, time, exceptions, with shares of the run; sortable by any column, filterable
by name. Selecting a row selects the method everywhere; the context menu focuses, merges or
collapses it in every aggregated view."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QMenu, QTableView, QVBoxLayout,
    QWidget,
)

from jbgui.model import cct as CCT
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.ui import colors
from jbgui.ui.aggregate_state import AggregateState, LazyReload
from jbgui.ui.format import format_count, format_duration
from jbgui.ui.selection import Selection

# (header, column of the model table or None for the name, share of which run total)
HEADERS = (("Name", None), ("Calls", "calls"), ("Self", "self_bytecodes"), ("Self %", "self_bytecodes"),
           ("Total", "total_bytecodes"), ("Total %", "total_bytecodes"), ("Self blocks", "self_blocks"),
           ("Total blocks", "total_blocks"), ("Self time", "self_time"), ("Total time", "total_time"),
           ("Thrown", "thrown"), ("Caught", "caught"))
SHARE_COLUMNS = (3, 5)
TIME_COLUMNS = (8, 9)
# The name column's width: what the view has left after the columns that answer "which methods
# cost most" (calls, self, self %, total, total %), within these bounds. At a fixed 420 pixels, a
# table in a narrow tab showed names alone, every number scrolled off to the right.
NAME_WIDTH = 420
NAME_MIN_WIDTH = 160
KEY_COLUMNS = (1, 2, 3, 4, 5)


class _Table(QTableView):
    """Tells its widget when it is resized (to fit the name column)."""

    resized = None

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.resized is not None:
            self.resized()


class MethodsModel(QAbstractTableModel):
    """Rows of a :class:`MethodsTable` in the current sort and filter order."""

    def __init__(self, state: AggregateState, parent=None):
        super().__init__(parent)
        self.state = state
        self.table: MTab.MethodsTable | None = None
        self.rows = np.zeros(0, np.int64)
        self.group = "method"
        self.filter = ""
        self.sort_column, self.descending = 2, True

    def set_table(self, table: MTab.MethodsTable | None) -> None:
        """Show ``table`` (computed by the view's worker) in the current sort and filter."""
        self.beginResetModel()
        self.table = table
        self._order()
        self.endResetModel()

    def _order(self) -> None:
        if self.table is None:
            self.rows = np.zeros(0, np.int64)
            return
        column = HEADERS[self.sort_column][1] or "name"
        order = self.table.order(column, self.descending if column != "name" else not self.descending)
        if self.filter:
            try:
                keep = set(self.table.matching(self.filter, regex=True).tolist())
            except Exception:
                keep = set(self.table.matching(self.filter).tolist())
            order = np.array([i for i in order if i in keep], np.int64)
        self.rows = order

    def set_filter(self, text: str) -> None:
        self.beginResetModel()
        self.filter = text
        self._order()
        self.endResetModel()

    def sort(self, column: int, order=Qt.SortOrder.DescendingOrder) -> None:
        self.beginResetModel()
        self.sort_column = column
        self.descending = order == Qt.SortOrder.DescendingOrder
        self._order()
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section][0]
        return None

    def value(self, row: int, column: int) -> int | float | str:
        """The number (or name) shown at (row, column)."""
        i = int(self.rows[row])
        name, col = HEADERS[column]
        if col is None:
            return self.table.names[i]
        if column in SHARE_COLUMNS:
            return 100.0 * self.table.share(col, i)
        return int(self.table.columns[col][i])

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.table is None:
            return None
        r, c = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            v = self.value(r, c)
            if c == 0:
                return v
            if c in SHARE_COLUMNS:
                return f"{v:.1f}%"
            if c in TIME_COLUMNS:
                return format_duration(v)
            return format_count(v)
        if role == Qt.ItemDataRole.TextAlignmentRole and c > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and c == 0:
            return self.table.names[int(self.rows[r])]
        if role == Qt.ItemDataRole.BackgroundRole and c == 0 and self.state.matches(self.table.names[int(self.rows[r])]):
            return colors.search_row_brush()
        return None

    def key(self, row: int) -> int:
        """The method key of a row (0 when the row is not one method)."""
        if self.table is None or self.group != "method" or not 0 <= row < len(self.rows):
            return 0
        return int(self.table.keys[int(self.rows[row])])

    def row_of_key(self, key: int) -> int:
        if self.table is None or self.group != "method":
            return -1
        hit = np.flatnonzero(self.table.keys[self.rows] == key)
        return int(hit[0]) if len(hit) else -1


def _compute_table(_progress, _cancelled, view, stack, thread, group):
    """Worker: the methods table of the current tree (the whole run's untransformed one is
    read from the analysis cache)."""
    return MTab.for_view(view, stack, thread, group)


class MethodsTableView(LazyReload, QWidget):
    """The methods table with its group switch and name filter."""

    def __init__(self, selection: Selection, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.state = state
        self.model = MethodsModel(state, self)
        self.group = QComboBox()
        self.group.addItems([g.capitalize() for g in MTab.GROUPS])
        self.group.setToolTip("One row per method, class or package")
        self.group.currentIndexChanged.connect(self._group_changed)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter by name or package (regular expression)")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.model.set_filter)
        self.count = QLabel()
        top = QHBoxLayout()
        top.addWidget(self.group)
        top.addWidget(self.filter, 1)
        top.addWidget(self.count)
        self.table = _Table()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSortIndicator(2, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, NAME_WIDTH)
        self.table.resized = self._fit_name
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        self.model.modelReset.connect(self._update_count)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(top)
        self.init_async(state)
        column.addWidget(self.busy)
        column.addWidget(self.table, 1)
        state.searchChanged.connect(lambda: self.table.viewport().update())
        selection.methodSelected.connect(self._method_selected)

    def _fit_name(self) -> None:
        """The name column takes what the key number columns leave (see :data:`NAME_WIDTH`); a
        width the user dragged holds until the view is resized again."""
        header = self.table.horizontalHeader()
        numbers = sum(header.sectionSize(c) for c in KEY_COLUMNS if not header.isSectionHidden(c))
        room = self.table.viewport().width() - numbers
        header.resizeSection(0, int(min(NAME_WIDTH, max(NAME_MIN_WIDTH, room))))

    def reload(self) -> None:
        state = self.state
        if state.view is None:
            self.worker.cancel()
            self.model.set_table(None)
        elif state.tree() is not None:
            self.compute(_compute_table, state.view, state.stack, state.thread, self.model.group, what="the table")

    def apply(self, table) -> None:
        self.model.set_table(table)

    def _update_count(self) -> None:
        total = len(self.model.table) if self.model.table is not None else 0
        self.count.setText(f"{len(self.model.rows):,} of {total:,}")

    def _group_changed(self, i: int) -> None:
        self.model.group = MTab.GROUPS[i]
        self.reload()

    def _row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        key = self.model.key(current.row())
        if 0 < key < CCT.SYNTHETIC_KEY:
            self.selection.select_method(key, self)

    def _method_selected(self, method: int, source) -> None:
        if source is self:
            return
        row = self.model.row_of_key(method)
        if row >= 0:
            self.table.selectRow(row)
            self.table.scrollTo(self.model.index(row, 0))

    def _menu(self, pos) -> None:
        key = self.model.key(self.table.indexAt(pos).row())
        if not key:
            return
        menu = QMenu(self)
        for text, kind in (("Focus on this method", "focus-method"), ("Merge this method", "merge"),
                           ("Collapse its recursion", "collapse-recursion")):
            action = QAction(text, menu)
            action.triggered.connect(lambda _c=False, k=kind: self.state.push(TR.Transform(k, key)))
            menu.addAction(action)
        menu.exec(self.table.viewport().mapToGlobal(pos))
