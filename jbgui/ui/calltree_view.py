"""The replayed call tree: threads at the top, calls below, fetched lazily so that a call with a
million callees opens at once; icons and colours for the unusual calls; search by name and jumps
to the next exception or native call.

The model keeps no Python object per node: an index's internal id packs the thread's slot and the
row (``slot << 40 | row + 1``), and children lists are numpy arrays, filled in batches.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPointF, QRectF, Qt
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence, QPainter, QPainterPath, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QToolButton, QTreeView, QVBoxLayout, QWidget,
)

from jbgui.model import call_queries as Q
from jbgui.model.analysis import Analysis, Flag
from jbgui.ui import colors
from jbgui.ui.format import flag_words, format_count, format_duration
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.tasks import Task

BATCH = 500
ROW_SHIFT = 40
COLUMNS = ("Call", "Calls", "Incl. bytecodes", "Own bytecodes", "Incl. blocks", "Own blocks", "Duration", "Flags")
EXCEPTION_FLAGS = int(Flag.EXCEPTIONAL | Flag.CAUGHT | Flag.UNCAUGHT)
SEARCH_IN_BACKGROUND_ABOVE = 1 << 20

# Kinds of call, most telling first: (flag, name, colour light, colour dark).
KINDS = (
    (Flag.UNCAUGHT, "uncaught", "#b71c1c", "#ff6e6e"),
    (Flag.EXCEPTIONAL, "exceptional", "#d84315", "#ff9e80"),
    (Flag.NATIVE, "native", "#616161", "#bdbdbd"),
    (Flag.UNTRACED, "untraced", "#9e9e9e", "#8a8a8a"),
    (Flag.CAUGHT, "caught", "#2e7d32", "#81c784"),
    (Flag.CALLBACK, "callback", "#6a1b9a", "#ce93d8"),
    (Flag.IMPLICIT, "implicit", "#1565c0", "#90caf9"),
    (Flag.TRUNCATED, "truncated", "#546e7a", "#b0bec5"),
)


def kind_of(flags: int) -> str:
    for bit, name, _l, _d in KINDS:
        if flags & bit:
            return name
    return "call"


def _icon(kind: str, dark: bool) -> QPixmap:
    """A 14×14 pixmap: a distinct shape and colour per kind of call."""
    color = {name: QColor(d if dark else l) for _b, name, l, d in KINDS}.get(kind, QColor("#78909c"))
    pm = QPixmap(14, 14)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(QPen(color, 1.6))
    p.setBrush(QBrush(color))
    if kind == "uncaught":          # a cross in a disc
        p.drawEllipse(QRectF(1, 1, 12, 12))
        p.setPen(QPen(QColor("#ffffff"), 1.8))
        p.drawLine(QPointF(4.5, 4.5), QPointF(9.5, 9.5))
        p.drawLine(QPointF(9.5, 4.5), QPointF(4.5, 9.5))
    elif kind == "exceptional":     # a downward triangle: the frame was left by an exception
        p.drawPolygon(QPolygonF([QPointF(1.5, 3), QPointF(12.5, 3), QPointF(7, 12)]))
    elif kind == "native":          # a filled square
        p.drawRect(QRectF(2.5, 2.5, 9, 9))
    elif kind == "untraced":        # a hollow square
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(2.5, 2.5, 9, 9))
    elif kind == "caught":          # a check mark
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(color, 2.2))
        path = QPainterPath(QPointF(2, 7.5))
        path.lineTo(5.5, 11)
        path.lineTo(12, 3)
        p.drawPath(path)
    elif kind == "callback":        # an arrow turning back up
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(color, 1.8))
        p.drawArc(QRectF(2, 3, 9, 9), 90 * 16, 180 * 16)
        p.setBrush(QBrush(color))
        p.drawPolygon(QPolygonF([QPointF(6.5, 0.5), QPointF(10, 3), QPointF(6.5, 5.5)]))
    elif kind == "implicit":        # a diamond
        p.drawPolygon(QPolygonF([QPointF(7, 1), QPointF(13, 7), QPointF(7, 13), QPointF(1, 7)]))
    elif kind == "truncated":       # a dashed circle
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(color, 1.6, Qt.PenStyle.DashLine))
        p.drawEllipse(QRectF(2, 2, 10, 10))
    else:                           # an ordinary call: a small dot
        p.drawEllipse(QRectF(4.5, 4.5, 5, 5))
    p.end()
    return pm


class CallTreeModel(QAbstractItemModel):
    """Threads, then their calls, as a lazy Qt tree."""

    def __init__(self, analysis: Analysis | None = None, parent=None):
        super().__init__(parent)
        self.analysis = analysis
        self._children: dict[tuple[int, int], np.ndarray] = {}
        self._fetched: dict[tuple[int, int], int] = {}
        self._own: dict[tuple[int, int], tuple[int, int]] = {}
        dark = colors.is_dark()
        self._icons = {name: _icon(name, dark) for name in [k[1] for k in KINDS] + ["call"]}
        self._colors = {name: QColor(d if dark else l) for _b, name, l, d in KINDS}

    # ------------------------------------------------------------------ ids

    @staticmethod
    def pack(slot: int, row: int) -> int:
        return (slot << ROW_SHIFT) | (row + 1)

    @staticmethod
    def unpack(internal: int) -> tuple[int, int]:
        return internal >> ROW_SHIFT, (internal & ((1 << ROW_SHIFT) - 1)) - 1

    def node(self, index: QModelIndex) -> tuple[int, int] | None:
        """(thread slot, row) of an index (row -1: the thread itself)."""
        if not index.isValid():
            return None
        return self.unpack(int(index.internalId()))

    def children_of(self, slot: int, row: int) -> np.ndarray:
        key = (slot, row)
        kids = self._children.get(key)
        if kids is None:
            calls = self.analysis.threads[slot].calls
            kids = calls.children(row) if len(calls) else np.zeros(0, np.int64)
            self._children[key] = kids
        return kids

    # ------------------------------------------------------------------ structure

    def index(self, r: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
        if self.analysis is None:
            return QModelIndex()
        if not parent.isValid():
            if 0 <= r < len(self.analysis.threads):
                return self.createIndex(r, column, self.pack(r, -1))
            return QModelIndex()
        slot, row = self.node(parent)
        kids = self.children_of(slot, row)
        if 0 <= r < len(kids):
            return self.createIndex(r, column, self.pack(slot, int(kids[r])))
        return QModelIndex()

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        node = self.node(index)
        if node is None:
            return QModelIndex()
        slot, row = node
        if row < 0:
            return QModelIndex()
        calls = self.analysis.threads[slot].calls
        p = int(calls.parent[row])
        if p < 0:
            return self.createIndex(slot, 0, self.pack(slot, -1))
        gp = int(calls.parent[p])
        siblings = self.children_of(slot, gp)
        position = int(np.searchsorted(siblings, p))
        return self.createIndex(position, 0, self.pack(slot, p))

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        if self.analysis is None:
            return 0
        if not parent.isValid():
            return len(self.analysis.threads)
        if parent.column() > 0:
            return 0
        return self._fetched.get(self.node(parent), 0)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: QModelIndex = QModelIndex()) -> bool:
        if self.analysis is None:
            return False
        if not parent.isValid():
            return bool(self.analysis.threads)
        slot, row = self.node(parent)
        calls = self.analysis.threads[slot].calls
        if row < 0:
            return len(calls) > 0
        return int(calls.end[row]) > row + 1

    def canFetchMore(self, parent: QModelIndex) -> bool:
        if self.analysis is None or not parent.isValid():
            return False
        node = self.node(parent)
        return self._fetched.get(node, 0) < len(self.children_of(*node))

    def fetchMore(self, parent: QModelIndex) -> None:
        node = self.node(parent)
        self.fetch_to(parent, self._fetched.get(node, 0) + BATCH)

    def fetch_to(self, parent: QModelIndex, count: int) -> None:
        """Make at least ``count`` children of ``parent`` available (all there are, at most)."""
        node = self.node(parent)
        have = self._fetched.get(node, 0)
        total = len(self.children_of(*node))
        want = min(max(count, have), total)
        if want > have:
            self.beginInsertRows(parent, have, want - 1)
            self._fetched[node] = want
            self.endInsertRows()

    # ------------------------------------------------------------------ content

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def own(self, slot: int, row: int) -> tuple[int, int]:
        key = (slot, row)
        value = self._own.get(key)
        if value is None:
            bc, bl = Q.own_counts(self.analysis.threads[slot], np.array([row]))
            value = (int(bc[0]), int(bl[0]))
            self._own[key] = value
        return value

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        node = self.node(index)
        if node is None:
            return None
        slot, row = node
        thread = self.analysis.threads[slot]
        column = index.column()
        if row < 0:
            if role == Qt.ItemDataRole.DisplayRole:
                if column == 0:
                    return f"{thread.name}  (thread {thread.index})"
                if column == 1:
                    return format_count(len(thread.calls))
                if column == 2:
                    return format_count(int(thread.block_counts @ self.analysis.statics.b_metrics[:, 0])) \
                        if self.analysis.statics.n_blocks else "0"
                if column == 4:
                    return format_count(int(thread.block_counts.sum()))
            if role == Qt.ItemDataRole.TextAlignmentRole and column > 0:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        calls = thread.calls
        flags = int(calls.flags[row])
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return self.short_name(thread, row)
            if column == 1:
                return format_count(int(calls.end[row]) - row)
            if column == 2:
                return format_count(int(calls.incl_bytecodes[row]))
            if column == 3:
                return format_count(self.own(slot, row)[0])
            if column == 4:
                return format_count(int(calls.incl_blocks[row]))
            if column == 5:
                return format_count(self.own(slot, row)[1])
            if column == 6:
                times = thread.times(np.array([calls.first[row], int(calls.last[row]) + 1]))
                return format_duration(times[1] - times[0]) if len(thread.clock) >= 2 else \
                    f"{int(calls.last[row]) - int(calls.first[row]) + 1:,} ev"
            if column == 7:
                return ", ".join(flag_words(flags))
        elif role == Qt.ItemDataRole.DecorationRole and column == 0:
            return self._icons[kind_of(flags)]
        elif role == Qt.ItemDataRole.ForegroundRole:
            kind = kind_of(flags)
            if kind in ("uncaught", "exceptional", "native", "untraced") or (column == 7 and kind != "call"):
                return self._colors[kind]
        elif role == Qt.ItemDataRole.ToolTipRole:
            text = self.analysis.call_name(thread, row)
            words = flag_words(flags)
            if words:
                text += "\n" + ", ".join(words)
            exc = int(calls.exc_class[row])
            if flags & Flag.EXCEPTIONAL and exc:
                text += "\nexception " + self.analysis.statics.class_name_of_id(exc)
            return text
        elif role == Qt.ItemDataRole.TextAlignmentRole and column > 0 and column < 7:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif role == Qt.ItemDataRole.UserRole:
            return CallRef(thread.index, row)
        return None

    def short_name(self, thread, row: int) -> str:
        full = self.analysis.call_name(thread, row)
        head = full.partition("(")[0]
        cls, _, name = head.rpartition(".")
        return f"{cls.rsplit('.', 1)[-1]}.{name}" if cls else head

    # ------------------------------------------------------------------ finding indexes

    def slot_of(self, thread_index: int) -> int:
        for slot, t in enumerate(self.analysis.threads):
            if t.index == thread_index:
                return slot
        raise KeyError(thread_index)

    def index_of(self, ref: CallRef) -> QModelIndex:
        """The index of a call, fetching what its ancestors need to show it."""
        slot = self.slot_of(ref.thread)
        thread = self.analysis.threads[slot]
        parent = self.index(slot, 0)
        for row in Q.ancestors(thread, ref.row) + [ref.row]:
            p = int(thread.calls.parent[row])
            siblings = self.children_of(slot, p)
            position = int(np.searchsorted(siblings, row))
            self.fetch_to(parent, position + 1)
            parent = self.index(position, 0, parent)
        return parent


class CallTreeView(QWidget):
    """The call tree with its search line and navigation buttons."""

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis: Analysis | None = None
        self.model = CallTreeModel(None, self)
        self.tree = QTreeView()
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setModel(self.model)
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a method (Enter: next, Shift+Enter: previous)")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(lambda: self.find(backwards=False))
        self.status = QLabel("")
        self._task: Task | None = None
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        for text, tip, shortcut, slot in (
                ("◀ exc", "Previous exception", "Ctrl+Shift+E", lambda: self.jump(EXCEPTION_FLAGS, True)),
                ("exc ▶", "Next exception (Ctrl+E)", "Ctrl+E", lambda: self.jump(EXCEPTION_FLAGS, False)),
                ("◀ native", "Previous native call", "Ctrl+Shift+N", lambda: self.jump(int(Flag.NATIVE), True)),
                ("native ▶", "Next native call (Ctrl+N)", "Ctrl+N", lambda: self.jump(int(Flag.NATIVE), False))):
            button = QToolButton()
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            action = QAction(tip, self)
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
            buttons.addWidget(button)
        find_action = QAction("Find", self)
        find_action.setShortcut(QKeySequence.StandardKey.Find)
        find_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        find_action.triggered.connect(self.focus_search)
        self.addAction(find_action)
        buttons.addStretch(1)
        buttons.addWidget(self.status)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.search)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)
        selection.callSelected.connect(self._on_selected)
        self._echo = False

    def keyPressEvent(self, event) -> None:
        if self.search.hasFocus() and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.find(backwards=True)
            return
        super().keyPressEvent(event)

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def set_analysis(self, analysis: Analysis | None) -> None:
        self.analysis = analysis
        self.model.beginResetModel()
        self.model.analysis = analysis
        self.model._children.clear()
        self.model._fetched.clear()
        self.model._own.clear()
        self.model.endResetModel()
        self.status.setText("")
        if analysis is not None:
            header = self.tree.header()
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
            self.tree.setColumnWidth(0, 320)
            for column in range(1, len(COLUMNS) - 1):
                self.tree.setColumnWidth(column, 95)
            self.tree.expand(self.model.index(0, 0))

    # ------------------------------------------------------------------ selection

    def current_ref(self) -> CallRef | None:
        index = self.tree.currentIndex()
        node = self.model.node(index)
        if node is None or self.analysis is None:
            return None
        slot, row = node
        return CallRef(self.analysis.threads[slot].index, row)

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._echo:
            return
        node = self.model.node(current)
        if node is None or node[1] < 0 or self.analysis is None:
            return
        self.selection.select_call(CallRef(self.analysis.threads[node[0]].index, node[1]), self)

    def _on_selected(self, ref, source) -> None:
        if ref is None or source is self or self.analysis is None:
            return
        self.reveal(ref)

    def reveal(self, ref: CallRef) -> None:
        """Expand down to a call, select it and scroll to it."""
        try:
            index = self.model.index_of(ref)
        except (KeyError, IndexError):
            return
        parent = index.parent()
        chain = []
        while parent.isValid():
            chain.append(parent)
            parent = parent.parent()
        for p in reversed(chain):
            self.tree.expand(p)
        self._echo = True
        try:
            self.tree.setCurrentIndex(index)
        finally:
            self._echo = False
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    # ------------------------------------------------------------------ navigation

    def _start_point(self) -> tuple[int, int]:
        """(thread slot, row) to search from: the current call, else before the first call."""
        ref = self.current_ref()
        if ref is None:
            return 0, -1
        return self.model.slot_of(ref.thread), ref.row

    def jump(self, mask: int, backwards: bool) -> None:
        if self.analysis is None:
            return
        self._search(lambda thread, after, back: Q.next_flagged(thread, after, mask, back), backwards,
                     "exception" if mask == EXCEPTION_FLAGS else "native call")

    def find(self, backwards: bool = False) -> None:
        text = self.search.text().strip()
        if self.analysis is None or not text:
            return
        analysis = self.analysis
        self._search(lambda thread, after, back: Q.find_call(analysis, thread, text, after, back), backwards,
                     f"'{text}'")

    def _search(self, query, backwards: bool, what: str) -> None:
        """Run ``query(thread, after, backwards)`` from the current call through the threads,
        in the background when the tables are big."""
        threads = self.analysis.threads
        start_slot, start_row = self._start_point()
        order = list(range(start_slot, len(threads))) + list(range(0, start_slot))
        if backwards:
            order = [start_slot] + list(range(start_slot - 1, -1, -1)) + list(range(len(threads) - 1, start_slot, -1))

        def run(_progress, cancelled):
            for i, slot in enumerate(order):
                if cancelled():
                    return None
                after = start_row if i == 0 else -1
                if backwards and i > 0:
                    after = len(threads[slot].calls)
                row = query(threads[slot], after, backwards)
                if row >= 0:
                    return CallRef(threads[slot].index, row)
            return None

        big = sum(len(t.calls) for t in threads) > SEARCH_IN_BACKGROUND_ABOVE
        if not big:
            self._found(run(None, lambda: False), what)
            return
        if self._task is not None:
            self._task.cancel()
        self.status.setText(f"searching for {what} …")
        task = Task(run, name="search")
        task.succeeded.connect(lambda ref: self._found(ref, what))
        task.failed.connect(self.status.setText)
        self._task = task
        task.start()

    def _found(self, ref: CallRef | None, what: str) -> None:
        if ref is None:
            self.status.setText(f"no {what}")
            return
        self.status.setText("")
        self.reveal(ref)
        self.selection.select_call(ref, self)
