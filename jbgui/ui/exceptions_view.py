"""Exception flow of the whole run: each exception's type, the block that threw it, the frames it
unwound, and the handler that caught it (or uncaught), grouped with counts; handlers that ignore
the exception are flagged. Double-click a row to select the frame that threw an example."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from jbgui.model.exception_flow import grouped
from jbgui.ui.block_tables import Latest, RowsTable, short_class, short_method
from jbgui.ui.selection import CallRef, Selection

# As the exception went: thrown, the frames it then unwound (each with the block it left), caught.
HEADERS = ["count", "type", "thrown in", "then unwound", "caught in", "ignored"]
# Fitted widths at most (pixels): the chain gets the most room, the last column the rest.
WIDEST = {1: 300, 2: 300, 3: 420, 4: 300}


class ExceptionsView(QWidget):
    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis = None
        self.title = QLabel("")
        self.title.setWordWrap(True)
        self.table = RowsTable(HEADERS)
        self.table.cellDoubleClicked.connect(self._activate)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.title)
        box.addWidget(self.table, 1)
        self.worker = Latest(self, self._ready, self.title.setText)
        self.rows: list[dict] = []
        self.computed = False

    def set_analysis(self, analysis) -> None:
        self.analysis = analysis
        self.computed = False
        self.table.fill([])
        self.title.setText("")

    def ensure(self) -> None:
        """Compute once per trace, when first shown (every exception's chain is read)."""
        if self.analysis is not None and not self.computed:
            self.computed = True
            self.title.setText("following every exception …")
            self.worker.run(_compute, self.analysis)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.ensure()

    def _ready(self, rows) -> None:
        self.rows = rows
        total = sum(r["count"] for r in rows)
        self.title.setText(f"{total:,} exceptions in {len(rows)} flows (throw site → unwound frames → catch "
                           "site); double-click: select the throwing call")
        self.table.fill([(f"{r['count']:,}", short_class(r["type"]), f"{_short(r['thrown_in'])} #{r['throw_block']}",
                          _chain(r, _short, after_thrower=True) or ("—" if r["unwound"] else "(caught where thrown)"),
                          f"{_short(r['caught_in'])} #{r['handler_block']}" if r["caught_in"] else "uncaught",
                          "caught and ignored" if r["ignored"] else "")
                         for r in rows], [r["example"] for r in rows], numeric={0},
                        tips=[f"{r['type']}\nthrown in {r['thrown_in']} #{r['throw_block']}\nunwound "
                              f"{_chain(r, str) or '(no frame)'}\ncaught in "
                              f"{(r['caught_in'] + ' #' + str(r['handler_block'])) if r['caught_in'] else '(uncaught)'}"
                              for r in rows], widest=WIDEST)

    def _activate(self, row: int, _column: int) -> None:
        example = self.table.payload(row)
        if example:
            thread, call = map(int, example.split(":"))
            if call >= 0:
                self.selection.select_call(CallRef(thread, call), self)


def _chain(row: dict, name, after_thrower: bool = False) -> str:
    """``A #3 → B #0``: the frames unwound with the block each left (``after_thrower``: those
    after the throwing frame, which the "thrown in" column shows)."""
    pairs = list(zip(row["unwound"], row.get("unwound_blocks", [])))
    return " → ".join(f"{name(m)} #{b}" for m, b in pairs[1 if after_thrower else 0:])


def _short(method: str) -> str:
    return method if method.startswith("<") else short_method(method)


def _compute(_progress, _cancelled, analysis):
    return grouped(analysis)
