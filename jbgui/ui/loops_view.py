"""Loop profile of the selected method: how many iterations does this loop do? One row per
natural loop: entries, iterations per entry (mean, most, histogram) and the entries with the most
iterations. Clicking a row selects the loop's header block; double-clicking selects the call of
its largest entry."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from jbgui.model.loop_profile import loops
from jbgui.model.method_names import display_name
from jbgui.model.method_profile import method_profile
from jbgui.ui.block_tables import Latest, RowsTable
from jbgui.ui.format import format_count
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.variants_view import MethodFollower

HEADERS = ["header", "line", "entries", "mean iterations", "most", "iterations: entries", "largest entries"]


def histogram_text(iterations: dict[str, int], limit: int = 8) -> str:
    """``0: 153,331 · 1: 5,779 · …`` by falling number of entries."""
    top = sorted(iterations.items(), key=lambda kv: (-kv[1], int(kv[0])))[:limit]
    text = " · ".join(f"{n}: {format_count(e)}" for n, e in sorted(top, key=lambda kv: int(kv[0])))
    return text + (" · …" if len(iterations) > limit else "")


class LoopsView(MethodFollower):
    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(selection, parent)
        self.title = QLabel("Select a call or a method")
        self.title.setWordWrap(True)
        self.table = RowsTable(HEADERS)
        self.table.cellClicked.connect(self._clicked)
        self.table.cellDoubleClicked.connect(self._activate)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.title)
        box.addWidget(self.table, 1)
        self.worker = Latest(self, self._ready, self.title.setText, self._progress)
        self.rows: list[dict] = []

    def _progress(self, done: int, total: int) -> None:
        if total:
            self.title.setText(f"{display_name(self.analysis.statics, self.method)}: reading the blocks of its "
                               f"{total:,} calls, {100 * done // total}% (the first time only; kept afterwards) …")

    def compute(self) -> None:
        self.title.setText(f"{display_name(self.analysis.statics, self.method)}: reading its calls' blocks …")
        self.worker.run(_compute, self.analysis, self.method)

    def _ready(self, result) -> None:
        method, rows = result
        if method != self.method:
            return
        self.rows = rows
        name = display_name(self.analysis.statics, method)
        self.title.setText(f"<b>{name}</b>: {len(rows)} loop{'s' if len(rows) != 1 else ''} "
                           "(iterations = back edges taken per entry; double-click: the call with the most)"
                           if rows else f"<b>{name}</b> has no loops")
        self.table.fill([(f"#{r['header_block']}", r["lines"] or "?", f"{r['entries']:,}", f"{r['mean_iterations']:.2f}",
                          f"{r['max_iterations']:,}", histogram_text(r["iterations"]),
                          ", ".join(f"{o['iterations']:,} in {o['call']}" for o in r["outliers"][:3]))
                         for r in rows], rows, numeric={2, 3, 4})

    def _clicked(self, row: int, _column: int) -> None:
        r = self.table.payload(row)
        if r is not None:
            self.selection.select_block(self.method, r["header_block"], self)

    def _activate(self, row: int, _column: int) -> None:
        r = self.table.payload(row)
        if r is not None and r["outliers"]:
            thread, call = map(int, r["outliers"][0]["call"].split(":"))
            self.selection.select_call(CallRef(thread, call), self)


def _compute(progress, cancelled, analysis, method: int):
    return method, loops(analysis, method, method_profile(analysis, method, progress=progress, cancelled=cancelled))
