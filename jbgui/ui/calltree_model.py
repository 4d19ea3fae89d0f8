"""The call tree's lazy Qt model: threads at the top, their calls below, with counts, durations
and flags. It reads the replayed trace through public APIs only (:mod:`jbgui.model.call_queries`,
:class:`jbgui.model.analysis.Analysis`).

Laziness (a javac run has calls with hundreds of thousands of children, and hundreds of millions
of calls in all):

- the model keeps no Python object per node: an index's internal id packs the thread's slot and
  the call's row (``(row + 1) << SLOT_BITS | slot``); only a call the user opened gets a
  :class:`_Children` record, holding numpy arrays;
- opening a call fetches its first :data:`BATCH` children (``canFetchMore``/``fetchMore``) from
  :func:`jbgui.model.call_queries.children_batch`, which jumps over subtrees instead of scanning
  them, so a call with a million children opens at once;
- an open call shows a *window* of at most :data:`MAX_SHOWN` consecutive children, with an
  "… earlier calls" row above it and a "… more calls" row below it while there are any;
  activating one (double-click, Enter) shows :data:`STEP` more. QTreeView lays out every row of
  every open call whenever anything changes, so the window, not the number of children, bounds
  what a change costs;
- revealing a call (selected elsewhere, or found) moves each ancestor's window to the child on
  the way in one step, whether it is the 10th child or the 900,000th.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from jbgui.model import call_queries as Q
from jbgui.model import time_quality as TQ
from jbgui.model.analysis import Analysis, Flag
from jbgui.ui import colors
from jbgui.ui.calltree_icons import KIND_NAMES, KINDS, kind_icon, kind_of
from jbgui.ui.format import flag_words, format_count, format_duration, split_name
from jbgui.ui.selection import CallRef

# Children fetched when a call is opened (fetchMore), and around a call revealed far from
# those shown.
BATCH = 500
# Children one activation of an "earlier"/"more" row adds.
STEP = 2000
# The most children of one call the tree holds at once: QTreeView lays out every row of an open
# call whenever anything changes, at a few microseconds per row in a Python model (150,000 rows:
# 1.5 s per layout); a window of them keeps it to some 50 ms.
MAX_SHOWN = 6000

SLOT_BITS = 20
SLOT_MASK = (1 << SLOT_BITS) - 1
EARLIER, LATER = 1, 2               # the rows above and below a window of children
EARLIER_BIT = 1 << 61               # their ids: the parent's id with one of these bits
LATER_BIT = 1 << 62

COL_CALL, COL_CALLS, COL_INCL_BC, COL_EXCL_BC, COL_INCL_BL, COL_EXCL_BL, COL_DURATION, COL_FLAGS = range(8)
COLUMNS = ("Call", "Calls", "Incl. bytecodes", "Excl. bytecodes", "Incl. blocks", "Excl. blocks", "Duration", "Flags")
COLUMN_TIPS = (
    "The called method (the class without its package); the full name is in the tooltip",
    "Calls in the subtree: this call and every call below it",
    "Bytecodes executed by this call and everything it called",
    "Bytecodes executed by this call itself (inclusive minus its callees' inclusive)",
    "Basic blocks executed by this call and everything it called",
    "Basic blocks executed by this call itself",
    "From the call's first event to its end (from the clock samples; "
    "in events when the trace has no clock)",
    "What is unusual about the call",
)
COLUMN_WIDTHS = (330, 64, 92, 92, 84, 84, 72, 200)
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
# QTreeView asks every row's flags whenever it lays out an open call: one constant, no lookups.
ITEM_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


def short_name(qualified: str) -> str:
    """``pkg.Cls$Inner.name(desc)`` → ``Cls$Inner.name``."""
    cls, name, _desc = split_name(qualified)
    return f"{cls.rsplit('.', 1)[-1]}.{name}" if cls else name or qualified



def first_thread_slot(analysis: Analysis) -> int:
    """The thread the call tree opens first: ``main``, else the first."""
    return next((s for s, t in enumerate(analysis.threads) if t.name == "main"), 0)


def read_ahead(analysis: Analysis) -> None:
    """Read what the call tree's first open of its first thread reads (its top calls, their
    columns, the clock's shared steps; the kernels they run), so that a loader can do it on the
    second core before the tree is shown: the tree then finds the blocks decoded and the kernels
    loaded (on jEdit's start-up, 0.5 s of the explorer's first paint)."""
    if not analysis.threads:
        return
    thread = analysis.threads[first_thread_slot(analysis)]
    calls = thread.calls
    if not len(calls):
        return
    Q.child_count(calls, -1, None)
    rows, _next = Q.children_batch(calls, -1, 0, BATCH, mine=None)
    if len(rows):
        Q.exclusive_bytecodes(thread, rows, None)
        Q.exclusive_blocks(thread, rows, None)
        Q.duration(thread, rows)
        TQ.interpolated(thread, rows)

class _Children:
    """The children of one opened call (or of a thread: its top-level calls) that the tree
    shows: a window of consecutive children, ``lo`` to ``lo + len(rows)``, with the numbers
    the columns show for them; an "earlier calls" row above when ``lo > 0``, a "more calls" row
    below when children follow."""

    __slots__ = ("first", "stop", "total", "lo", "rows", "excl_bytecodes", "excl_blocks", "duration",
                 "interpolated", "opened", "before_shown", "after_shown")

    def __init__(self, first: int, stop: int, total: int):
        self.first = first       # row of the first child
        self.stop = stop         # end of the parent's subtree
        self.total = total       # children in all
        self.lo = 0              # which child rows[0] is
        self.rows = np.zeros(0, np.int64)
        self.excl_bytecodes = np.zeros(0, np.int64)
        self.excl_blocks = np.zeros(0, np.int64)
        self.duration = np.zeros(0, np.float64)
        self.interpolated = np.zeros(0, np.bool_)   # durations interpolated across a pause
        self.opened = False
        self.before_shown = False  # the rows the model announced, which may lag lo and rows
        self.after_shown = False   # for a moment while the window changes

    def position(self, row: int) -> int:
        """Where child ``row`` is among the children shown (-1: not shown)."""
        i = int(np.searchsorted(self.rows, row))
        return i if i < len(self.rows) and self.rows[i] == row else -1

    @property
    def offset(self) -> int:
        return 1 if self.before_shown else 0


class CallTreeModel(QAbstractItemModel):
    """Threads, then their calls, as a lazy Qt tree (see the module's docstring)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.analysis: Analysis | None = None
        self._nodes: dict[tuple[int, int], _Children] = {}
        self._slots: dict[int, int] = {}
        self._totals: dict[int, dict] = {}
        self._names: dict[tuple[int, int], str] = {}   # (method or -1, site) -> qualified name
        self._clock: list[bool] = []
        # Per method id: does it match the explorer's search (None: no search); matching calls get
        # the search colour behind their name.
        self.matches: np.ndarray | None = None
        # Per method id: "mine" under the only-my-code scope (None: every call shown). Runs of
        # other frames show as the one call that entered them (see call_queries.shown_rows).
        self.mine: np.ndarray | None = None
        self._has: dict[tuple[int, int], bool] = {}    # (slot, row) -> has shown children, under the scope
        self.refresh_style()

    # ------------------------------------------------------------------ content and style

    def set_analysis(self, analysis: Analysis | None) -> None:
        if analysis is not None and len(analysis.threads) > SLOT_MASK:
            raise ValueError(f"{len(analysis.threads)} threads: the call tree shows at most {SLOT_MASK}")
        self.beginResetModel()
        self.analysis = analysis
        self.mine = None
        self._nodes.clear()
        self._has.clear()
        self._totals.clear()
        self._names.clear()
        self._slots = {t.index: slot for slot, t in enumerate(analysis.threads)} if analysis else {}
        self._clock = [Q.has_clock(t) for t in analysis.threads] if analysis else []
        self.endResetModel()

    def set_scope(self, mine: np.ndarray | None) -> None:
        """Show only my code (``mine`` per method id; see :attr:`mine`) or, with None, every call.
        The tree starts again from its threads."""
        if mine is self.mine:
            return
        self.beginResetModel()
        self.mine = mine
        self._nodes.clear()
        self._has.clear()
        self.endResetModel()

    def refresh_style(self) -> None:
        """Icons and colours for the current palette (light or dark)."""
        dark = colors.is_dark()
        app = QApplication.instance()
        ratio = app.devicePixelRatio() if app is not None else 1.0
        self.icons = {kind: kind_icon(kind, dark, ratio) for kind in KIND_NAMES + ("",)}
        self.text_colors = {name: QColor(d if dark else light) for name, _bit, light, d in KINDS}
        self._bold = QFont()
        self._bold.setBold(True)
        self._italic = QFont()
        self._italic.setItalic(True)
        match = colors.qcolor(colors.SEARCH_MATCH, dark)
        self.match_brush = QBrush(match)
        self.match_text = colors.text_color_for(match)

    # ------------------------------------------------------------------ ids

    @staticmethod
    def pack(slot: int, row: int, place: int = 0) -> int:
        """The internal id of a call (row -1: the thread), or with ``place`` of the "earlier"
        (:data:`EARLIER`) or "more" (:data:`LATER`) row below that call."""
        bits = EARLIER_BIT if place == EARLIER else LATER_BIT if place == LATER else 0
        return ((row + 1) << SLOT_BITS) | slot | bits

    @staticmethod
    def unpack(internal: int) -> tuple[int, int, int]:
        place = EARLIER if internal & EARLIER_BIT else LATER if internal & LATER_BIT else 0
        internal &= ~(EARLIER_BIT | LATER_BIT)
        return internal & SLOT_MASK, (internal >> SLOT_BITS) - 1, place

    def locate(self, index: QModelIndex) -> tuple[int, int, int] | None:
        """(thread slot, row, place) of an index: row -1 is the thread itself; for an "earlier"
        or "more" row (``place`` :data:`EARLIER` or :data:`LATER`), the call it belongs to."""
        if not index.isValid() or self.analysis is None:
            return None
        return self.unpack(int(index.internalId()))

    def call_ref(self, index: QModelIndex) -> CallRef | None:
        """The call at ``index`` (None for a thread or an "earlier"/"more" row)."""
        where = self.locate(index)
        if where is None or where[1] < 0 or where[2]:
            return None
        return CallRef(self.analysis.threads[where[0]].index, where[1])

    def placeholder(self, index: QModelIndex) -> int:
        """:data:`EARLIER` or :data:`LATER` for the rows that show more children, else 0."""
        where = self.locate(index)
        return where[2] if where is not None else 0

    def slot_of(self, thread_index: int) -> int:
        return self._slots[thread_index]

    def has_thread(self, thread_index: int) -> bool:
        """Is a thread of this index in the tree?"""
        return thread_index in self._slots

    def search_start(self, index: QModelIndex, backwards: bool) -> tuple[int, int] | None:
        """(thread slot, row) a search from ``index`` starts after (before, ``backwards``): the
        call itself, the thread's start, or for an "earlier"/"more" row the edge of the window
        of children it stands beside. None for no index."""
        where = self.locate(index)
        if where is None:
            return None
        slot, row, place = where
        node = self._opened(slot, row) if place else None
        if node is not None and len(node.rows):
            if place == EARLIER:   # from just before the first child shown
                return slot, int(node.rows[0]) - (0 if backwards else 1)
            return slot, self._next(slot, node) - (0 if backwards else 1)   # after the last one's subtree
        return slot, (max(row, 0) if backwards else row)

    def thread_index(self, slot: int) -> QModelIndex:
        return self.createIndex(slot, 0, self.pack(slot, -1))

    # ------------------------------------------------------------------ the window of children

    def _node(self, slot: int, row: int) -> _Children:
        key = (slot, row)
        node = self._nodes.get(key)
        if node is None:
            calls = self.analysis.threads[slot].calls
            stop = len(calls) if row < 0 else calls.at("end", row)
            node = _Children(row + 1, stop, Q.child_count(calls, row, self.mine))
            self._nodes[key] = node
        return node

    def _opened(self, slot: int, row: int) -> _Children | None:
        return self._nodes.get((slot, row))

    def shown(self, parent: QModelIndex) -> tuple[int, int, int]:
        """(first child shown, children shown, children in all) below ``parent``."""
        where = self.locate(parent)
        node = self._opened(where[0], where[1]) if where is not None and not where[2] else None
        return (node.lo, len(node.rows), node.total) if node is not None else (0, 0, 0)

    def fetched(self, parent: QModelIndex) -> int:
        """How many children of ``parent`` the tree holds (without the "earlier"/"more" rows)."""
        return self.shown(parent)[1]

    def _next(self, slot: int, node: _Children) -> int:
        """The row of the child after the window."""
        if len(node.rows):
            return self.analysis.threads[slot].calls.at("end", int(node.rows[-1]))
        return Q.child_at(self.analysis.threads[slot].calls, node.first - 1, node.lo, self.mine)

    def _add(self, parent: QModelIndex, slot: int, node: _Children, rows: np.ndarray, front: bool) -> None:
        if not len(rows):
            return
        thread = self.analysis.threads[slot]
        parts = (rows, Q.exclusive_bytecodes(thread, rows, self.mine), Q.exclusive_blocks(thread, rows, self.mine),
                 Q.duration(thread, rows),
                 TQ.interpolated(thread, rows))
        at = node.offset if front else node.offset + len(node.rows)
        self.beginInsertRows(parent, at, at + len(rows) - 1)
        olds = (node.rows, node.excl_bytecodes, node.excl_blocks, node.duration, node.interpolated)
        joined = [np.concatenate([new, old] if front else [old, new]) for new, old in zip(parts, olds)]
        node.rows, node.excl_bytecodes, node.excl_blocks, node.duration, node.interpolated = joined
        if front:
            node.lo -= len(rows)
        self.endInsertRows()

    def _drop(self, parent: QModelIndex, node: _Children, count: int, front: bool) -> None:
        count = min(count, len(node.rows))
        if count <= 0:
            return
        at = node.offset if front else node.offset + len(node.rows) - count
        self.beginRemoveRows(parent, at, at + count - 1)
        keep = slice(count, None) if front else slice(0, len(node.rows) - count)
        node.rows, node.excl_bytecodes, node.excl_blocks, node.duration, node.interpolated = (
            node.rows[keep], node.excl_bytecodes[keep], node.excl_blocks[keep], node.duration[keep],
            node.interpolated[keep])
        if front:
            node.lo += count
        self.endRemoveRows()

    def _sync(self, parent: QModelIndex, node: _Children) -> None:
        """Show the "earlier" and "more" rows exactly when there are children before and after
        the window."""
        want = node.lo > 0
        if want != node.before_shown:
            if want:
                self.beginInsertRows(parent, 0, 0)
                node.before_shown = True
                self.endInsertRows()
            else:
                self.beginRemoveRows(parent, 0, 0)
                node.before_shown = False
                self.endRemoveRows()
        want = node.lo + len(node.rows) < node.total
        if want != node.after_shown:
            at = node.offset + len(node.rows)
            if want:
                self.beginInsertRows(parent, at, at)
                node.after_shown = True
                self.endInsertRows()
            else:
                self.beginRemoveRows(parent, at, at)
                node.after_shown = False
                self.endRemoveRows()

    def _where(self, parent: QModelIndex) -> tuple[int, int, _Children] | None:
        where = self.locate(parent)
        if where is None or where[2]:
            return None
        slot, row, _ = where
        return slot, row, self._node(slot, row)

    def _open(self, parent: QModelIndex) -> None:
        found = self._where(parent)
        if found is None:
            return
        slot, row, node = found
        if not node.opened:
            node.opened = True
            rows, _next = Q.children_batch(self.analysis.threads[slot].calls, row, node.first, BATCH, mine=self.mine)
            self._add(parent, slot, node, rows, front=False)
            self._sync(parent, node)

    def show_later(self, parent: QModelIndex, count: int = STEP) -> int:
        """Show ``count`` more children of ``parent`` after those shown (what the "more" row
        does); the first ones shown make way when more than :data:`MAX_SHOWN` would be."""
        found = self._where(parent)
        if found is None:
            return 0
        slot, row, node = found
        node.opened = True
        rows, _next = Q.children_batch(self.analysis.threads[slot].calls, row, self._next(slot, node), count,
                                       mine=self.mine)
        self._add(parent, slot, node, rows, front=False)
        self._drop(parent, node, len(node.rows) - MAX_SHOWN, front=True)
        self._sync(parent, node)
        return len(rows)

    def show_earlier(self, parent: QModelIndex, count: int = STEP) -> int:
        """Show ``count`` more children of ``parent`` before those shown (the "earlier" row)."""
        found = self._where(parent)
        if found is None:
            return 0
        slot, row, node = found
        node.opened = True
        lo = max(0, node.lo - count)
        calls = self.analysis.threads[slot].calls
        rows, _next = Q.children_batch(calls, row, Q.child_at(calls, row, lo, self.mine), node.lo - lo, mine=self.mine)
        self._add(parent, slot, node, rows, front=True)
        self._drop(parent, node, len(node.rows) - MAX_SHOWN, front=False)
        self._sync(parent, node)
        return len(rows)

    def _show_child(self, parent: QModelIndex, slot: int, row: int, child: int) -> int:
        """Make child row ``child`` of ``row`` shown and return its position below ``parent``:
        the window grows to it when it is near, else moves to it, in one step either way."""
        node = self._node(slot, row)
        node.opened = True
        if node.position(child) >= 0:
            return node.offset + node.position(child)
        calls = self.analysis.threads[slot].calls
        context = BATCH // 2
        if len(node.rows) and child > node.rows[-1]:
            nxt = self._next(slot, node)
            gap = Q.count_siblings(calls, nxt, child, self.mine)
            k = node.lo + len(node.rows) + gap
            if gap <= STEP:
                rows, _next = Q.children_batch(calls, row, nxt, gap + 1 + context, mine=self.mine)
                self._add(parent, slot, node, rows, front=False)
                self._drop(parent, node, len(node.rows) - MAX_SHOWN, front=True)
                self._sync(parent, node)
                return node.offset + node.position(child)
        else:
            k = Q.child_index(calls, row, child, self.mine)
            if len(node.rows) and 0 < node.lo - k <= STEP:
                self.show_earlier(parent, node.lo - k + context)
                return node.offset + node.position(child)
        # Far from what is shown: a new window around the child.
        self._drop(parent, node, len(node.rows), front=True)
        node.lo = max(0, k - context)
        rows, _next = Q.children_batch(calls, row, Q.child_at(calls, row, node.lo, self.mine), BATCH, mine=self.mine)
        self._add(parent, slot, node, rows, front=False)
        self._sync(parent, node)
        return node.offset + node.position(child)

    def canFetchMore(self, parent: QModelIndex) -> bool:
        """Only for a call never opened: QTreeView asks again whenever it lays out an open
        call, and would fetch a batch each time; more children come from the "more" row."""
        where = self.locate(parent)
        if where is None or where[2]:
            return False
        slot, row, _ = where
        if row >= 0 and self.analysis.threads[slot].calls.at("end", row) <= row + 1:
            return False
        node = self._opened(slot, row)
        return node is None or not node.opened

    def fetchMore(self, parent: QModelIndex) -> None:
        self._open(parent)

    def index_of(self, ref: CallRef) -> QModelIndex:
        """The index of a call, making each ancestor show the child on the way (in one step
        each, however far down its list of children). Invalid for an unknown call."""
        if self.analysis is None or ref.thread not in self._slots:
            return QModelIndex()
        slot = self._slots[ref.thread]
        thread = self.analysis.threads[slot]
        if not 0 <= ref.row < len(thread.calls):
            return QModelIndex()
        index = self.thread_index(slot)
        parent_row = -1
        for row in Q.ancestors(thread, ref.row, self.mine):
            position = self._show_child(index, slot, parent_row, row)
            index = self.index(position, 0, index)
            parent_row = row
        return index

    # ------------------------------------------------------------------ structure

    def index(self, r: int, column: int, parent: QModelIndex = QModelIndex()) -> QModelIndex:
        # Called for every row of an open call at each layout of the view: kept lean.
        if self.analysis is None or r < 0 or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(r, column, self.pack(r, -1)) if r < len(self.analysis.threads) else QModelIndex()
        internal = parent.internalId()
        if internal & (EARLIER_BIT | LATER_BIT):
            return QModelIndex()
        slot = internal & SLOT_MASK
        node = self._nodes.get((slot, (internal >> SLOT_BITS) - 1))
        if node is None:
            return QModelIndex()
        if node.before_shown:
            if r == 0:
                return self.createIndex(r, column, internal | EARLIER_BIT)
            r -= 1
        if r < len(node.rows):
            return self.createIndex(r + node.offset, column, ((int(node.rows[r]) + 1) << SLOT_BITS) | slot)
        if r == len(node.rows) and node.after_shown:
            return self.createIndex(r + node.offset, column, internal | LATER_BIT)
        return QModelIndex()

    def parent(self, index: QModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        where = self.locate(index)
        if where is None:
            return QModelIndex()
        slot, row, place = where
        if place:
            p = row                  # an "earlier"/"more" row's parent is the call it belongs to
        elif row < 0:
            return QModelIndex()
        else:
            p = Q.shown_parent(self.analysis.threads[slot].calls, row, self.mine)
        if p < 0:
            return self.thread_index(slot)
        grandparent = Q.shown_parent(self.analysis.threads[slot].calls, p, self.mine)
        node = self._opened(slot, grandparent)
        position = node.position(p) if node is not None else -1
        return self.createIndex(node.offset + position, 0, self.pack(slot, p)) if position >= 0 else QModelIndex()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        if self.analysis is None:
            return 0
        if not parent.isValid():
            return len(self.analysis.threads)
        if parent.column() > 0:
            return 0
        slot, row, place = self.unpack(int(parent.internalId()))
        node = self._opened(slot, row)
        if place or node is None:
            return 0
        return node.offset + len(node.rows) + (1 if node.after_shown else 0)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: QModelIndex = QModelIndex()) -> bool:
        if self.analysis is None:
            return False
        if not parent.isValid():
            return bool(self.analysis.threads)
        if parent.column() > 0:
            return False
        slot, row, place = self.unpack(int(parent.internalId()))
        if place:
            return False
        calls = self.analysis.threads[slot].calls
        if row < 0:
            return len(calls) > 0
        if self.mine is None:
            return calls.at("end", row) > row + 1
        has = self._has.get((slot, row))
        if has is None:
            has = self._has[(slot, row)] = Q.has_children(calls, row, self.mine)
        return has

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        return ITEM_FLAGS

    # ------------------------------------------------------------------ data

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TIPS[section]
        if role == Qt.ItemDataRole.TextAlignmentRole and COL_CALLS <= section <= COL_DURATION:
            return RIGHT
        return None

    def call_name(self, slot: int, row: int) -> str:
        """The qualified name of a call (cached by method, or by call site for synthetic rows)."""
        thread = self.analysis.threads[slot]
        method = thread.calls.at("method", row)
        key = (method, -1) if method else (-1, thread.calls.at("call_site", row))
        name = self._names.get(key)
        if name is None:
            name = self.analysis.call_name(thread, row)
            if len(self._names) > 200_000:
                self._names.clear()
            self._names[key] = name
        return name

    def format_duration(self, slot: int, value: float) -> str:
        return format_duration(value) if self._clock[slot] else f"{value:,.0f} ev"

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        where = self.locate(index)
        if where is None:
            return None
        slot, row, place = where
        column = index.column()
        if place:
            return self._placeholder_data(slot, row, place, column, role)
        if row < 0:
            return self._thread_data(slot, column, role)
        thread = self.analysis.threads[slot]
        calls = thread.calls
        if role == Qt.ItemDataRole.DisplayRole:
            if column == COL_CALL:
                return short_name(self.call_name(slot, row))
            if column == COL_FLAGS:
                return self.flags_text(slot, row)
            value = self._number(slot, row, column)
            if column == COL_DURATION:
                text = self.format_duration(slot, value)
                return f"≈ {text}" if self.interpolated(slot, row) else text
            return format_count(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return RIGHT if COL_CALLS <= column <= COL_DURATION else None
        if role == Qt.ItemDataRole.DecorationRole and column == COL_CALL:
            return self.icons[kind_of(calls.at("flags", row))]
        if role == Qt.ItemDataRole.BackgroundRole and column == COL_CALL and self.matches is not None:
            method = calls.at("method", row)
            return self.match_brush if 0 <= method < len(self.matches) and self.matches[method] else None
        if role == Qt.ItemDataRole.ForegroundRole and column in (COL_CALL, COL_FLAGS):
            if self.matches is not None and self.data(index, Qt.ItemDataRole.BackgroundRole) is not None:
                return self.match_text
            kind = kind_of(calls.at("flags", row))
            return self.text_colors[kind] if kind else None
        if role == Qt.ItemDataRole.FontRole and column == COL_CALL:
            flags = calls.at("flags", row)
            if flags & Flag.UNCAUGHT:
                return self._bold
            if flags & (Flag.NATIVE | Flag.UNTRACED):
                return self._italic
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            if column in (COL_CALL, COL_FLAGS):
                return self.call_tooltip(slot, row)
            if column != COL_DURATION:
                return f"{self._number(slot, row, column):,}"
            if self.interpolated(slot, row):
                return ("≈: interpolated between clock samples across a pause of the thread (a blocking call "
                        "or the JVM); the timeline can show events instead of time")
            return None
        if role == Qt.ItemDataRole.UserRole:
            return CallRef(thread.index, row)
        return None

    def _number(self, slot: int, row: int, column: int):
        calls = self.analysis.threads[slot].calls
        if column == COL_CALLS:
            return calls.at("end", row) - row
        if column == COL_INCL_BC:
            return calls.at("incl_bytecodes", row)
        if column == COL_INCL_BL:
            return calls.at("incl_blocks", row)
        node = self._opened(slot, Q.shown_parent(calls, row, self.mine))
        position = node.position(row) if node is not None else -1
        if position < 0:   # an index kept from before the window moved
            return 0
        if column == COL_EXCL_BC:
            return int(node.excl_bytecodes[position])
        if column == COL_EXCL_BL:
            return int(node.excl_blocks[position])
        return float(node.duration[position])

    def interpolated(self, slot: int, row: int) -> bool:
        """Is the call's duration interpolated across a pause (:mod:`jbgui.model.time_quality`)?"""
        calls = self.analysis.threads[slot].calls
        node = self._opened(slot, Q.shown_parent(calls, row, self.mine))
        position = node.position(row) if node is not None else -1
        return bool(node.interpolated[position]) if position >= 0 else False

    def flags_text(self, slot: int, row: int) -> str:
        """What is unusual about a call, in words, with the class of the exception that ended it
        ("left by IllegalStateException")."""
        calls = self.analysis.threads[slot].calls
        flags = calls.at("flags", row)
        words = flag_words(flags)
        exc = calls.at("exc_class", row)
        if exc and flags & (Flag.EXCEPTIONAL | Flag.UNCAUGHT):
            name = self.analysis.statics.class_name_of_id(exc).rsplit(".", 1)[-1]
            if flags & Flag.UNCAUGHT:        # "uncaught X" says that it left the call too
                words = [w for w in words if w != "left by an exception"]
            words = [f"uncaught {name}" if w == "uncaught exception" else
                     f"left by {name}" if w == "left by an exception" else w for w in words]
        return ", ".join(words)

    def _thread_data(self, slot: int, column: int, role: int):
        thread = self.analysis.threads[slot]
        if role == Qt.ItemDataRole.DisplayRole:
            if column == COL_CALL:
                return f"{thread.name} #{thread.index}"     # two threads may share a name
            if column == COL_FLAGS:
                return "" if thread.ended else "thread did not end in the trace"
            if column in (COL_EXCL_BC, COL_EXCL_BL):
                return ""
            totals = self.thread_totals(slot)
            if column == COL_DURATION:
                return self.format_duration(slot, totals["duration"])
            return format_count(totals[{COL_CALLS: "calls", COL_INCL_BC: "incl_bytecodes",
                                        COL_INCL_BL: "incl_blocks"}[column]])
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return RIGHT if COL_CALLS <= column <= COL_DURATION else None
        if role == Qt.ItemDataRole.DecorationRole and column == COL_CALL:
            return self.icons[""]
        if role == Qt.ItemDataRole.FontRole and column == COL_CALL:
            return self._bold
        if role == Qt.ItemDataRole.ToolTipRole:
            totals = self.thread_totals(slot)
            lines = [f"<b>thread {html.escape(thread.name)}</b> (index {thread.index})",
                     f"{totals['calls']:,} calls, {totals['top_level']:,} at the top level",
                     f"{totals['incl_bytecodes']:,} bytecodes, {totals['incl_blocks']:,} blocks",
                     f"{len(thread.exceptions):,} exceptions thrown"]
            if not thread.ended:
                lines.append("<i>its end is not in the trace</i>")
            lines.extend(html.escape(p) for p in thread.problems[:5])
            return "<br>".join(lines)
        return None

    def _placeholder_data(self, slot: int, parent_row: int, place: int, column: int, role: int):
        node = self._opened(slot, parent_row)
        if node is None:
            return None
        if place == EARLIER:
            first_shown = int(node.rows[0]) if len(node.rows) else node.stop
            left, calls_left, word = node.lo, first_shown - node.first, "earlier"
        else:
            left = node.total - node.lo - len(node.rows)
            calls_left, word = node.stop - self._next(slot, node), "more"
        if role == Qt.ItemDataRole.DisplayRole and column == COL_CALL:
            return f"… {left:,} {word} calls (double-click or Enter: show {min(left, STEP):,})"
        if role == Qt.ItemDataRole.DisplayRole and column == COL_CALLS:
            return format_count(calls_left)
        if role == Qt.ItemDataRole.TextAlignmentRole and column == COL_CALLS:
            return RIGHT
        if role == Qt.ItemDataRole.ForegroundRole:
            app = QApplication.instance()
            return app.palette().color(QPalette.ColorRole.PlaceholderText) if app is not None else None
        if role == Qt.ItemDataRole.FontRole:
            return self._italic
        if role == Qt.ItemDataRole.DecorationRole and column == COL_CALL:
            return self.icons[""]
        if role == Qt.ItemDataRole.ToolTipRole:
            return (f"children {node.lo + 1:,} to {node.lo + len(node.rows):,} of {node.total:,} are shown; "
                    f"{left:,} {word} children with {calls_left:,} calls in their subtrees")
        return None

    def thread_totals(self, slot: int) -> dict:
        totals = self._totals.get(slot)
        if totals is None:
            totals = self._totals[slot] = Q.thread_totals(self.analysis.threads[slot])
        return totals

    def call_tooltip(self, slot: int, row: int) -> str:
        """Rich text: the full name, where the call is, what is unusual about it, and the
        exceptions that ended it or that it caught."""
        analysis = self.analysis
        thread = analysis.threads[slot]
        calls = thread.calls
        flags = calls.at("flags", row)
        lines = [f"<b>{html.escape(self.call_name(slot, row))}</b>",
                 f"thread {html.escape(thread.name)}, depth {calls.at('depth', row)}, row {row:,}"]
        receiver = calls.at("receiver", row)
        if receiver:
            lines.append(f"receiver {html.escape(analysis.statics.class_name_of_id(receiver))}")
        words = flag_words(flags)
        if words:
            lines.append("<i>" + html.escape(", ".join(words)) + "</i>")
        exc = calls.at("exc_class", row)
        if flags & (Flag.EXCEPTIONAL | Flag.UNCAUGHT) and exc:
            lines.append("left by " + html.escape(analysis.statics.class_name_of_id(exc)))
        if flags & Flag.CAUGHT:
            caught = Q.caught_here(thread, row)
            for record in caught[:5]:
                thrower = int(record["throw_row"])
                where = short_name(self.call_name(slot, thrower)) if 0 <= thrower < len(calls) else "?"
                lines.append(f"caught {html.escape(analysis.statics.class_name_of_id(int(record['exc_class'])))}"
                             f" thrown in {html.escape(where)}")
            if len(caught) > 5:
                lines.append(f"… and {len(caught) - 5:,} more caught here")
        return "<br>".join(lines)
