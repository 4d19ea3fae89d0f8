"""Behaviour variants of the selected method: in how many ways is it really used, and who
triggers the rare one. One row per path (loop repetitions collapsed): calls, share, mean own
bytecodes and time, callers, and an example call — double-click a row to select it."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from jbgui.model.method_names import display_name
from jbgui.model.method_profile import method_profile
from jbgui.model.variants import variants
from jbgui.ui.block_tables import Latest, RowsTable, short_method
from jbgui.ui.format import format_count, format_duration
from jbgui.ui.selection import CallRef, Selection

HEADERS = ["calls", "share", "path (loop repetitions collapsed)", "own bytecodes", "time", "example", "callers"]


class MethodFollower(QWidget):
    """A view of the selected method (the method of the selected call, or a chosen method)."""

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis = None
        self.method = 0
        selection.callSelected.connect(self._on_call)
        selection.methodSelected.connect(self._on_method)

    def set_analysis(self, analysis) -> None:
        self.analysis = analysis
        self.method = 0

    def _on_call(self, ref, source) -> None:
        if self.analysis is not None and ref is not None:
            self.show_method(int(self.analysis.thread(ref.thread).calls.method[ref.row]))

    def _on_method(self, method: int, source) -> None:
        self.show_method(method)

    def show_method(self, method: int) -> None:
        if self.analysis is None or not method or method == self.method:
            return
        if not int(self.analysis.statics.m_blocks[method]):
            return
        self.method = method
        self.compute()

    def _progress(self, done: int, total: int) -> None:
        if total:
            self.title.setText(f"{display_name(self.analysis.statics, self.method)}: reading the blocks of its "
                               f"{total:,} calls, {100 * done // total}% (the first time only; kept afterwards) …")

    def compute(self) -> None:
        raise NotImplementedError


class VariantsView(MethodFollower):
    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(selection, parent)
        self.title = QLabel("Select a call or a method")
        self.title.setWordWrap(True)
        self.table = RowsTable(HEADERS)
        self.table.cellDoubleClicked.connect(self._activate)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.title)
        box.addWidget(self.table, 1)
        self.worker = Latest(self, self._ready, self.title.setText, self._progress)
        self.rows: list[dict] = []

    def compute(self) -> None:
        self.title.setText(f"{display_name(self.analysis.statics, self.method)}: reading its calls' blocks …")
        self.worker.run(_compute, self.analysis, self.method)

    def _ready(self, result) -> None:
        method, rows, calls = result
        if method != self.method:
            return
        self.rows = rows
        self.title.setText(f"<b>{display_name(self.analysis.statics, method)}</b>: {format_count(calls)} calls "
                           f"in {len(rows)} variant{'s' if len(rows) != 1 else ''} (double-click: select the "
                           "example call)")
        self.table.fill([(f"{r['calls']:,}", f"{100 * r['share']:.2f}%",
                          (r["path"] or "…") + ("  ⇒ exception" if r["exceptional"] else ""),
                          f"{r['mean_own_bytecodes']:.1f}", format_duration(r["mean_nanos"]), r["example"],
                          "; ".join(f"{short_method(c['method'])} ×{format_count(c['calls'])}" for c in r["callers"][:3]))
                         for r in rows], [r["example"] for r in rows], numeric={0, 1, 3, 4},
                        tips=["callers:\n" + "\n".join(f"{c['method']} ×{c['calls']:,}" for c in r["callers"][:12])
                              for r in rows])

    def _activate(self, row: int, _column: int) -> None:
        example = self.table.payload(row)
        if example:
            thread, call = map(int, example.split(":"))
            self.selection.select_call(CallRef(thread, call), self)


def _compute(progress, cancelled, analysis, method: int):
    profile = method_profile(analysis, method, progress=progress, cancelled=cancelled)
    return method, variants(analysis, method, profile), profile.calls
