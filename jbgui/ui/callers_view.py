"""Callers (bottom-up, inverted tree): methods by own weight; expanding a method shows the
paths that called it, each with the own weight and calls of the method that came through it —
"who makes this expensive method run". Expanded lazily."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtWidgets import QHeaderView, QTreeView, QVBoxLayout, QWidget

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT
from jbgui.ui import colors
from jbgui.ui.aggregate_state import AggregateState, LazyReload
from jbgui.ui.format import format_count
from jbgui.ui.merged_tree_view import format_weight
from jbgui.ui.selection import Selection

HEADERS = ("Method / called by", "Self %", "Self", "Calls")


@dataclass
class _Item:
    path: MT.CallerPath
    parent: int
    row: int
    children: list[int] | None = field(default=None)


class CallersModel(QAbstractItemModel):
    """The inverted tree; internal ids are item index + 1."""

    def __init__(self, state: AggregateState, parent=None):
        super().__init__(parent)
        self.state = state
        self.inverted: MT.InvertedTree | None = None
        self.items: list[_Item] = []
        self.roots: list[int] = []
        self.total = 0

    def set_inverted(self, inverted: MT.InvertedTree | None, roots: list[MT.CallerPath]) -> None:
        """Show the inverted tree whose ``roots`` the worker computed."""
        self.beginResetModel()
        self.items, self.roots = [], []
        self.inverted = inverted
        if inverted is not None:
            self.total = inverted.tree.total(inverted.weight)
            self.roots = self._add(roots, -1)
        self.endResetModel()

    def _add(self, paths: list[MT.CallerPath], parent: int) -> list[int]:
        out = []
        for row, p in enumerate(paths):
            self.items.append(_Item(p, parent, row))
            out.append(len(self.items) - 1)
        return out

    def _children(self, item: int) -> list[int]:
        if item < 0:
            return self.roots
        it = self.items[item]
        if it.children is None:
            it.children = self._add(self.inverted.callers(it.path), item)
        return it.children

    def item(self, index: QModelIndex) -> int:
        return int(index.internalId()) - 1 if index.isValid() else -1

    def index(self, row, column, parent=QModelIndex()):
        if self.inverted is None:
            return QModelIndex()
        kids = self._children(self.item(parent))
        if not 0 <= row < len(kids):
            return QModelIndex()
        return self.createIndex(row, column, kids[row] + 1)

    def parent(self, index=QModelIndex()):  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        p = self.items[self.item(index)].parent
        if p < 0:
            return QModelIndex()
        return self.createIndex(self.items[p].row, 0, p + 1)

    def rowCount(self, parent=QModelIndex()) -> int:
        if self.inverted is None or parent.column() > 0:
            return 0
        return len(self._children(self.item(parent)))

    def hasChildren(self, parent=QModelIndex()) -> bool:
        if self.inverted is None:
            return False
        i = self.item(parent)
        if i < 0:
            return bool(self.roots)
        it = self.items[i]
        if it.children is not None:
            return bool(it.children)
        return bool((self.inverted.tree.parent[it.path.current] >= 0).any())

    def columnCount(self, parent=QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def path(self, index: QModelIndex) -> MT.CallerPath | None:
        i = self.item(index)
        return self.items[i].path if i >= 0 else None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        p = self.path(index)
        if p is None:
            return None
        c = index.column()
        name = self.state.name(p.keys[-1])
        if role == Qt.ItemDataRole.DisplayRole:
            share = 100.0 * p.self_weight / self.total if self.total else 0.0
            return (name, f"{share:.1f}%", format_weight(self.state.weight, p.self_weight), format_count(p.calls))[c]
        if role == Qt.ItemDataRole.TextAlignmentRole and c > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and c == 0 and self.state.matches(name):
            return colors.search_row_brush()
        if role == Qt.ItemDataRole.ToolTipRole and c == 0:
            return " ← ".join(self.state.name(k) for k in p.keys)
        return None


def _invert(_progress, _cancelled, tree: MT.Tree, weight: str, statics):
    """Worker: the inverted tree and its roots (every method by own weight)."""
    inverted = MT.InvertedTree(tree, weight, MT.canonical_keys(statics, tree.dense_keys[0]))
    roots = inverted.roots()
    tree.total(weight)
    return inverted, roots


class CallersView(LazyReload, QWidget):
    """The callers tree; selecting a row selects its method everywhere."""

    def __init__(self, selection: Selection, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.state = state
        self.model = CallersModel(state, self)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(HEADERS)):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.init_async(state)
        column.addWidget(self.busy)
        column.addWidget(self.view)
        state.searchChanged.connect(lambda: self.view.viewport().update())

    def reload(self) -> None:
        tree = self.state.tree()
        if tree is None:
            if self.state.view is None:
                self.worker.cancel()
                self.model.set_inverted(None, [])
            return
        self.compute(_invert, tree, self.state.weight, self.state.analysis.statics, what="the callers")

    def apply(self, result) -> None:
        self.model.set_inverted(*result)
        self.view.selectionModel().currentChanged.connect(self._current_changed, Qt.ConnectionType.UniqueConnection)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        p = self.model.path(current)
        if p is not None and 0 < p.keys[-1] < CCT.SYNTHETIC_KEY:
            self.selection.select_method(p.keys[-1], self)
