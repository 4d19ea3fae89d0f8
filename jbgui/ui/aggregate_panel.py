"""The aggregated views together: the scope toolbar above the methods table, the merged tree,
the callers tree, the butterfly and the flame graph, which all show the same
:class:`AggregateState` (thread, weight, only my code, transforms, search)."""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter, QTabWidget, QVBoxLayout, QWidget
from PySide6.QtCore import Qt

from jbgui.ui.aggregate_state import AggregateState
from jbgui.ui.butterfly_view import ButterflyView
from jbgui.ui.callers_view import CallersView
from jbgui.ui.flame_view import FlameView
from jbgui.ui.merged_tree_view import MergedTreeView
from jbgui.ui.methods_table_view import MethodsTableView
from jbgui.ui.scope_toolbar import ScopeToolbar
from jbgui.ui.selection import Selection


class AggregatePanel(QWidget):
    """Toolbar and tabs of the aggregated views, with the butterfly beside them."""

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = AggregateState(self)
        self.toolbar = ScopeToolbar(self.state)
        self.methods = MethodsTableView(selection, self.state)
        self.merged = MergedTreeView(selection, self.state)
        self.callers = CallersView(selection, self.state)
        self.flame = FlameView(selection, self.state)
        self.butterfly = ButterflyView(selection, self.state)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.methods, "Methods")
        self.tabs.addTab(self.merged, "Merged tree")
        self.tabs.addTab(self.callers, "Callers")
        self.tabs.addTab(self.flame, "Flame graph")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tabs)
        split.addWidget(self.butterfly)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.toolbar)
        column.addWidget(split, 1)

    def set_analysis(self, analysis) -> None:
        """Show ``analysis`` (None: nothing)."""
        self.state.set_analysis(analysis)

    def idle(self) -> bool:
        """No tree and no view's data being computed (tests wait for it)."""
        views = (self.methods, self.merged, self.callers, self.flame, self.butterfly)
        return not self.state.busy and all(v.idle for v in views)
