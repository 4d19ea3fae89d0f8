"""Code discovery: which code ran for the first time, and when — "what did this user action
exercise" is the code first run in its time range. Methods by the time of their first call, with
the class loads beside them; the range fields filter (seconds since the trace started).
Double-click a method to select its first call."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QGridLayout, QLabel, QVBoxLayout, QWidget

from jbgui.model.discovery import class_loads, first_block_runs, first_runs
from jbgui.model.method_names import display_name
from jbgui.ui.block_tables import Latest, RowsTable
from jbgui.ui.selection import CallRef, Selection

HEADERS = ["first run (s)", "first call", "what"]
MAX_ROWS = 20000


class DiscoveryView(QWidget):
    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis = None
        self.runs = None
        self.loads = None
        self.start = QDoubleSpinBox()
        self.end = QDoubleSpinBox()
        for box in (self.start, self.end):
            box.setDecimals(6)
            box.setRange(0, 1e6)
            box.setSuffix(" s")
            box.valueChanged.connect(lambda _v: self.fill())
        self.title = QLabel("")
        self.blocks_box = QCheckBox("blocks too")
        self.blocks_box.setToolTip("each basic block's first run (reads every stream once, then kept)")
        self.blocks_box.toggled.connect(self._blocks_toggled)
        self.block_runs = None
        self.block_worker = Latest(self, self._blocks_ready, self.title.setText)
        # Two short rows rather than one long one: the dock shares the window's right side with the
        # method view and must stay as narrow as it.
        row = QGridLayout()
        row.addWidget(QLabel("first run from"), 0, 0)
        row.addWidget(self.start, 0, 1)
        row.addWidget(QLabel("to"), 1, 0, Qt.AlignmentFlag.AlignRight)
        row.addWidget(self.end, 1, 1)
        row.addWidget(self.blocks_box, 1, 2)
        row.setColumnStretch(3, 1)
        # The title on a line of its own, wrapped, for the same reason.
        self.title.setWordWrap(True)
        self.table = RowsTable(HEADERS)
        self.table.cellDoubleClicked.connect(self._activate)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addLayout(row)
        box.addWidget(self.title)
        box.addWidget(self.table, 1)
        self.worker = Latest(self, self._ready, self.title.setText)

    def set_analysis(self, analysis) -> None:
        self.analysis = analysis
        self.runs = None
        self.block_runs = None
        self.blocks_box.setChecked(False)
        self.table.fill([])
        if analysis is not None:
            self.worker.run(_compute, analysis)

    def _ready(self, result) -> None:
        self.runs, self.loads = result
        last = float(max(self.runs["nanos"].max() if len(self.runs["nanos"]) else 0,
                         self.loads["nanos"].max() if len(self.loads["nanos"]) else 0)) / 1e9
        for box in (self.start, self.end):
            box.blockSignals(True)
        self.start.setValue(0)
        self.end.setValue(last + 0.001)
        for box in (self.start, self.end):
            box.blockSignals(False)
        self.fill()

    def _blocks_toggled(self, on: bool) -> None:
        if on and self.block_runs is None and self.analysis is not None:
            self.title.setText("finding each block's first run …")
            self.block_worker.run(_compute_blocks, self.analysis)
        else:
            self.fill()

    def _blocks_ready(self, runs) -> None:
        self.block_runs = runs
        self.fill()

    def set_range(self, start: float, end: float) -> None:
        """Show the code first run between ``start`` and ``end`` seconds."""
        self.start.setValue(start)
        self.end.setValue(end)

    def fill(self) -> None:
        if self.runs is None or self.analysis is None:
            return
        lo, hi = self.start.value() * 1e9, self.end.value() * 1e9
        st = self.analysis.statics
        m = (self.runs["nanos"] >= lo) & (self.runs["nanos"] < hi)
        c = (self.loads["nanos"] >= lo) & (self.loads["nanos"] < hi)
        items = [(float(ns), f"method {display_name(st, int(mid))}", f"{int(t)}:{int(r)}")
                 for mid, t, r, ns in zip(self.runs["method"][m], self.runs["thread"][m], self.runs["row"][m],
                                          self.runs["nanos"][m])]
        items += [(float(ns), f"class load {st.class_name_of_id(int(cid))}", "")
                  for cid, ns in zip(self.loads["class_id"][c], self.loads["nanos"][c])]
        blocks = 0
        if self.blocks_box.isChecked() and self.block_runs is not None:
            br = self.block_runs
            b = (br["nanos"] >= lo) & (br["nanos"] < hi)
            blocks = int(np.count_nonzero(b))
            items += [(float(ns), f"block {display_name(st, int(st.b_method[g]))} #{int(st.b_index[g])} "
                                  f"(line {st.b_lines[g] or '?'})", "")
                      for g, ns in zip(br["block"][b], br["nanos"][b])]
        items.sort(key=lambda x: x[0])
        self.title.setText(f"{int(np.count_nonzero(m)):,} methods first run, {int(np.count_nonzero(c)):,} "
                           f"classes loaded{f', {blocks:,} blocks first run' if blocks else ''} in this range")
        shown = items[:MAX_ROWS]
        self.table.fill([(f"{ns / 1e9:.6f}", call, what) for ns, what, call in shown],
                        [call for _ns, _w, call in shown], numeric={0})

    def _activate(self, row: int, _column: int) -> None:
        call = self.table.payload(row)
        if call:
            thread, r = map(int, call.split(":"))
            self.selection.select_call(CallRef(thread, r), self)


def _compute(_progress, _cancelled, analysis):
    return first_runs(analysis), class_loads(analysis)


def _compute_blocks(_progress, _cancelled, analysis):
    return first_block_runs(analysis)
