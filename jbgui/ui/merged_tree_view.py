"""Merged call tree (top-down): identical call paths merged, with calls, inclusive and own
weights and shares — where the run's weight goes, path by path. Children are sorted and indexed
only when a node is expanded, so a tree of millions of contexts opens at once. The
per-invocation call tree (calltree_view) stays beside it."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QHeaderView, QMenu, QTreeView, QVBoxLayout, QWidget

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT
from jbgui.model import transforms as TR
from jbgui.ui import colors
from jbgui.ui.aggregate_state import AggregateState, LazyReload
from jbgui.ui.format import format_count, format_duration
from jbgui.ui.selection import Selection

HEADERS = ("Method", "Total %", "Total", "Self", "Calls")


def format_weight(weight: str, value: float) -> str:
    return format_duration(value) if weight == "time" else format_count(value)


class MergedTreeModel(QAbstractItemModel):
    """A :class:`Tree` as a Qt tree; internal ids are node + 1."""

    def __init__(self, state: AggregateState, parent=None):
        super().__init__(parent)
        self.state = state
        self.tree: MT.Tree | None = None
        self._kids: dict[int, np.ndarray] = {}
        self._row: dict[int, int] = {}
        self.total = 0

    def set_tree(self, tree: MT.Tree | None, kids: dict[int, np.ndarray] | None = None) -> None:
        """Show ``tree``; ``kids`` are children lists already sorted (by the worker)."""
        self.beginResetModel()
        self.tree = tree
        self._kids, self._row = {}, {}
        for node, got in (kids or {}).items():
            self._kids[node] = got
            for i, c in enumerate(got.tolist()):
                self._row[c] = i
        self.total = self.tree.total(self.state.weight) if self.tree is not None else 0
        self.endResetModel()

    def kids(self, node: int) -> np.ndarray:
        """Children of ``node`` (-1: roots), heaviest first."""
        got = self._kids.get(node)
        if got is None:
            nodes = self.tree.children(node)
            weight = self.tree.inclusive(self.state.weight)[nodes]
            got = nodes[np.argsort(-weight, kind="stable")]
            self._kids[node] = got
            for i, c in enumerate(got.tolist()):
                self._row[c] = i
        return got

    def node(self, index: QModelIndex) -> int:
        return int(index.internalId()) - 1 if index.isValid() else -1

    def index(self, row, column, parent=QModelIndex()):
        if self.tree is None:
            return QModelIndex()
        kids = self.kids(self.node(parent))
        if not 0 <= row < len(kids):
            return QModelIndex()
        return self.createIndex(row, column, int(kids[row]) + 1)

    def parent(self, index=QModelIndex()):  # type: ignore[override]
        if not index.isValid() or self.tree is None:
            return QModelIndex()
        p = int(self.tree.parent[self.node(index)])
        if p < 0:
            return QModelIndex()
        if p not in self._row:
            self.kids(int(self.tree.parent[p]))
        return self.createIndex(self._row[p], 0, p + 1)

    def rowCount(self, parent=QModelIndex()) -> int:
        if self.tree is None or parent.column() > 0:
            return 0
        return len(self.kids(self.node(parent)))

    def hasChildren(self, parent=QModelIndex()) -> bool:
        if self.tree is None:
            return False
        n = self.node(parent)
        return len(self.tree.children(n)) > 0

    def columnCount(self, parent=QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    def values(self, node: int) -> tuple[str, float, int, int, int]:
        """(name, total share %, total, self, calls) of a node, in the current weight."""
        w = self.state.weight
        incl = int(self.tree.inclusive(w)[node])
        return (self.state.name(int(self.tree.key[node])), 100.0 * incl / self.total if self.total else 0.0, incl,
                int(self.tree.own(w)[node]), int(self.tree.calls[node]))

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.tree is None:
            return None
        node, c = self.node(index), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            name, share, incl, own, calls = self.values(node)
            return (name, f"{share:.1f}%", format_weight(self.state.weight, incl), format_weight(self.state.weight, own),
                    format_count(calls))[c]
        if role == Qt.ItemDataRole.TextAlignmentRole and c > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole and c == 0 and self.state.matches(self.state.name(int(self.tree.key[node]))):
            return colors.search_row_brush()
        if role == Qt.ItemDataRole.ToolTipRole and c == 0:
            return self.state.name(int(self.tree.key[node]))
        return None


OPENED_LEVELS = 4


def _prepare(_progress, _cancelled, tree: MT.Tree, weight: str):
    """Worker: what the first screen needs — children lists, weights, the heaviest path's first
    levels sorted — so that the GUI thread only indexes arrays."""
    tree.children(-1)
    incl = tree.inclusive(weight)
    tree.own(weight)
    kids, node = {}, -1
    for _ in range(OPENED_LEVELS + 1):
        nodes = tree.children(node)
        kids[node] = nodes[np.argsort(-incl[nodes], kind="stable")]
        if not len(nodes):
            break
        node = int(kids[node][0])
    return tree, kids


class MergedTreeView(LazyReload, QWidget):
    """The merged tree; selecting a node selects its method everywhere."""

    def __init__(self, selection: Selection, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.state = state
        self.model = MergedTreeModel(state, self)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(HEADERS)):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.view.selectionModel().currentChanged.connect(self._current_changed)
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
                self.model.set_tree(None)
            return
        self.compute(_prepare, tree, self.state.weight, what="the tree")

    def apply(self, result) -> None:
        tree, kids = result
        self.model.set_tree(tree, kids)
        self.view.selectionModel().currentChanged.connect(self._current_changed, Qt.ConnectionType.UniqueConnection)
        # open the heaviest path a few levels, which is what one looks at first
        index = self.model.index(0, 0)
        for _ in range(OPENED_LEVELS):
            if not index.isValid():
                break
            self.view.expand(index)
            index = self.model.index(0, 0, index)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node = self.model.node(current)
        if node >= 0:
            key = int(self.model.tree.key[node])
            if 0 < key < CCT.SYNTHETIC_KEY:
                self.selection.select_method(key, self)

    def _menu(self, pos) -> None:
        node = self.model.node(self.view.indexAt(pos))
        if node < 0:
            return
        tree = self.model.tree
        key = int(tree.key[node])
        menu = QMenu(self)
        entries = [("Focus on this subtree", TR.Transform("focus-subtree", path=tree.path(node))),
                   ("Focus on this method", TR.Transform("focus-method", key)),
                   ("Merge this method", TR.Transform("merge", key)),
                   ("Collapse its recursion", TR.Transform("collapse-recursion", key))]
        for text, transform in entries:
            action = QAction(text, menu)
            action.triggered.connect(lambda _c=False, t=transform: self.state.push(t))
            menu.addAction(action)
        menu.exec(self.view.viewport().mapToGlobal(pos))
