"""Butterfly of the selected method: its callers above and its callees below, each with calls
and weight across that edge — "who calls it, and what does it call". One click on a caller or a
callee walks there (selects that method everywhere)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT
from jbgui.ui.aggregate_state import AggregateState, LazyReload
from jbgui.ui.format import format_count
from jbgui.ui.merged_tree_view import format_weight
from jbgui.ui.selection import CallRef, Selection


def short_name(qualified: str) -> str:
    """``Class.method`` of ``pkg.Class.method(desc)`` (the full name is in the tooltip)."""
    head = qualified.split("(", 1)[0]
    tail = " [native/untraced]" if qualified.endswith("[native/untraced]") else ""
    return ".".join(head.split(".")[-2:]) + tail


def _butterfly(_progress, _cancelled, tree: MT.Tree, key: int, weight: str):
    """Worker: callers and callees of ``key`` in ``tree``."""
    return MT.butterfly(tree, key, weight)


class ButterflyView(LazyReload, QWidget):
    """Callers / method / callees of one method in the current aggregated tree."""

    def __init__(self, selection: Selection, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.state = state
        self.key = 0
        self.data: dict | None = None
        self.callers = self._list("Called by")
        self.callees = self._list("Calls")
        self.centre = QLabel("Select a method (in the methods table, a tree or the flame graph)")
        self.centre.setWordWrap(True)
        self.centre.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.centre.setStyleSheet("QLabel { font-weight: bold; padding: 6px; }")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.init_async(state)
        column.addWidget(self.busy)
        column.addWidget(self.callers, 1)
        column.addWidget(self.centre)
        column.addWidget(self.callees, 1)
        selection.methodSelected.connect(lambda m, _s: self.show_method(m))
        selection.callSelected.connect(self._call_selected)

    def reload(self) -> None:
        self.show_method(self.key)

    def _list(self, title: str) -> QTreeWidget:
        w = QTreeWidget()
        w.setHeaderLabels([title, "Calls", "Weight", "%"])
        w.setRootIsDecorated(False)
        w.setUniformRowHeights(True)
        header = w.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2, 3):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        w.itemClicked.connect(self._walk)
        return w

    def _call_selected(self, ref: CallRef | None, _source) -> None:
        if ref is not None and self.state.analysis is not None:
            method = int(self.state.analysis.thread(ref.thread).calls.method[ref.row])
            if method:
                self.show_method(method)

    def show_method(self, key: int) -> None:
        """Show ``key``'s callers and callees in the current tree (computed by the worker)."""
        self.key = int(key)
        tree = self.state.tree()
        if not self.key or self.state.view is None or tree is None:
            self.worker.cancel()
            self.callers.clear()
            self.callees.clear()
            self.data = None
            return
        self.compute(_butterfly, tree, self.key, self.state.weight, what="callers and callees")

    def apply(self, data: dict) -> None:
        self.callers.clear()
        self.callees.clear()
        if data["key"] != self.key:
            return
        w = self.state.weight
        self.data = data
        total = self.data["total"] or 1
        for target, rows in ((self.callers, self.data["callers"]), (self.callees, self.data["callees"])):
            for n in rows:
                item = QTreeWidgetItem([short_name(self.state.name(n.key)), format_count(n.calls), format_weight(w, n.weight),
                                        f"{100.0 * n.weight / total:.1f}%"])
                item.setData(0, Qt.ItemDataRole.UserRole, n.key)
                item.setToolTip(0, self.state.name(n.key))
                for c in (1, 2, 3):
                    item.setTextAlignment(c, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                target.addTopLevelItem(item)
        d = self.data
        self.centre.setText(f"{self.state.name(self.key)}\n{format_count(d['calls'])} calls · self "
                            f"{format_weight(w, d['self'])} · total {format_weight(w, d['total'])} {w}")

    def _walk(self, item: QTreeWidgetItem, _column: int) -> None:
        key = int(item.data(0, Qt.ItemDataRole.UserRole))
        if 0 < key < CCT.SYNTHETIC_KEY:
            self.selection.select_method(key, self)
        elif key > 0:
            self.show_method(key)
