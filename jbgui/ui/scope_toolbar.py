"""The aggregated views' toolbar: which thread, which weight, only my code with its include and
exclude prefixes (remembered per program), the transform stack as an undoable breadcrumb, and a
search (regular expression) with its match count — shared by every aggregated view."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget,
)

from jbgui.model import merged_tree as MT
from jbgui.ui.aggregate_state import AggregateState


def _prefixes(text: str) -> list[str]:
    return [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]


class ScopeToolbar(QWidget):
    """Controls of an :class:`AggregateState`."""

    def __init__(self, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self.thread = QComboBox()
        self.thread.setToolTip("The whole run (every thread's paths merged) or one thread")
        self.thread.currentIndexChanged.connect(self._thread_changed)
        self.weight = QComboBox()
        self.weight.addItems(list(MT.WEIGHTS))
        self.weight.setToolTip("Weigh by bytecodes executed (deterministic), calls, basic blocks or time "
                               "(interpolated between clock samples)")
        self.weight.currentTextChanged.connect(state.set_weight)
        self.only_mine = QCheckBox("Only my code")
        self.only_mine.setToolTip("Collapse every run of JDK and library frames into the call that entered it")
        self.only_mine.toggled.connect(state.set_only_mine)
        self.include = QLineEdit()
        self.include.setPlaceholderText("also mine: prefixes, comma-separated")
        self.include.setToolTip("Package or class prefixes counted as my code (e.g. com.sun.tools.javac)")
        self.exclude = QLineEdit()
        self.exclude.setPlaceholderText("not mine: prefixes")
        for edit in (self.include, self.exclude):
            edit.editingFinished.connect(self._rules_changed)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search (regular expression)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(state.set_search)
        self.matches = QLabel()
        self.crumbs = QHBoxLayout()
        self.crumbs.setSpacing(2)
        row1 = QHBoxLayout()
        row1.addWidget(QLabel("Thread"))
        row1.addWidget(self.thread)
        row1.addWidget(QLabel("Weight"))
        row1.addWidget(self.weight)
        row1.addWidget(self.only_mine)
        row1.addWidget(self.include, 1)
        row1.addWidget(self.exclude, 1)
        row2 = QHBoxLayout()
        row2.addWidget(QLabel("Transforms:"))
        row2.addLayout(self.crumbs, 1)
        row2.addWidget(self.search, 1)
        row2.addWidget(self.matches)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 2, 4, 2)
        column.addLayout(row1)
        column.addLayout(row2)
        state.changed.connect(self.refresh)
        state.ready.connect(self._count_matches)
        state.searchChanged.connect(self._count_matches)

    def refresh(self) -> None:
        """Show the state (after a new trace, or a change from a view's context menu)."""
        a = self.state.analysis
        self.thread.blockSignals(True)
        self.thread.clear()
        self.thread.addItem("Whole run", None)
        if a is not None:
            for t in a.threads:
                self.thread.addItem(f"{t.name} [{t.index}]", t.index)
        self.thread.setCurrentIndex(max(0, self.thread.findData(self.state.thread)) if self.state.thread is not None else 0)
        self.thread.blockSignals(False)
        for widget, value in ((self.only_mine, self.state.only_mine),):
            widget.blockSignals(True)
            widget.setChecked(value)
            widget.blockSignals(False)
        if not self.include.hasFocus():
            self.include.setText(", ".join(self.state.rules.include))
        if not self.exclude.hasFocus():
            self.exclude.setText(", ".join(self.state.rules.exclude))
        self._breadcrumb()
        self._count_matches()

    def _thread_changed(self, _i: int) -> None:
        self.state.set_thread(self.thread.currentData())

    def _rules_changed(self) -> None:
        self.state.set_rules(_prefixes(self.include.text()), _prefixes(self.exclude.text()))

    def _breadcrumb(self) -> None:
        while self.crumbs.count():
            item = self.crumbs.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        st = self.state.analysis.statics if self.state.analysis is not None else None
        root = QPushButton("Complete tree")
        root.setFlat(True)
        root.setToolTip("Undo every transform")
        root.setEnabled(bool(self.state.transforms))
        root.clicked.connect(lambda: self.state.undo(0))
        self.crumbs.addWidget(root)
        for i, t in enumerate(self.state.transforms):
            b = QPushButton("› " + t.label(st))
            b.setFlat(True)
            b.setToolTip("Go back to this step (undo the transforms after it)")
            b.setEnabled(i < len(self.state.transforms) - 1)
            b.clicked.connect(lambda _c=False, keep=i + 1: self.state.undo(keep))
            self.crumbs.addWidget(b)
        if self.state.transforms:
            undo = QPushButton("Undo")
            undo.setToolTip("Drop the last transform")
            undo.clicked.connect(lambda: self.state.undo())
            self.crumbs.addWidget(undo)
        self.crumbs.addStretch(1)

    def _count_matches(self) -> None:
        if self.search.text() != self.state.search:      # typed elsewhere (the timeline)
            self.search.blockSignals(True)
            self.search.setText(self.state.search)
            self.search.blockSignals(False)
        if self.state.search_error:
            self.matches.setText(self.state.search_error)
            return
        if not self.state.search:
            self.matches.setText("")
            return
        tree = self.state.tree()
        if tree is None:
            self.matches.setText("")
            return
        keys = np.unique(tree.key)
        hit = self.state.matching_keys(keys)
        nodes = int(np.isin(tree.key, np.fromiter(hit, np.int64, len(hit))).sum()) if hit else 0
        self.matches.setText(f"{len(hit):,} methods, {nodes:,} contexts match")
