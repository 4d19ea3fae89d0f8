"""The call tree widget: the lazy tree (:mod:`jbgui.ui.calltree_model`) with its search line and
buttons to the next exception or native call, following the shared selection. Icons are painted
by :mod:`jbgui.ui.calltree_icons`. A search through more than :data:`SEARCH_IN_BACKGROUND_ABOVE`
calls runs as a :class:`Task`.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView, QHBoxLayout, QLabel, QLineEdit, QToolButton, QTreeView, QVBoxLayout, QWidget,
)
from shiboken6 import isValid

from jbgui.model import call_queries as Q
from jbgui.model import search as SE
from jbgui.model.analysis import Analysis
# The model's and the icons' names, for the view's users (and tests) that know this module only.
from jbgui.ui.calltree_icons import ICON_SIZE, KIND_NAMES, KINDS, kind_icon, kind_of  # noqa: F401
from jbgui.ui.calltree_model import (  # noqa: F401
    BATCH, COL_CALL, COL_CALLS, COL_DURATION, COL_EXCL_BC, COL_EXCL_BL, COL_FLAGS, COL_INCL_BC, COL_INCL_BL,
    COLUMN_WIDTHS, COLUMNS, EARLIER, LATER, MAX_SHOWN, STEP, CallTreeModel, first_thread_slot, short_name,
)
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.tasks import Task

SEARCH_IN_BACKGROUND_ABOVE = 1_000_000

# Columns hidden until asked for (right-click on the header): the tree must fit a narrow dock.
HIDDEN_COLUMNS = (COL_INCL_BL, COL_EXCL_BL)
MIN_NAME_WIDTH = 150     # the name column is never narrower
FLAGS_MIN_WIDTH = 40     # the last column (flags) keeps at least this much in view
NAME_ROOM = 110          # pixels a name needs beside its indentation (or half the column)
INDENT, MIN_INDENT = 12, 2


class _Tree(QTreeView):
    """A QTreeView without "expand everything below" (``*``): on a call tree of millions of
    nodes it would fetch them all; it tells its widget when it is resized (to fit the columns)."""

    resized = None

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.resized is not None:
            self.resized()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_Asterisk:
            event.ignore()
            return
        super().keyPressEvent(event)


class CallTreeView(QWidget):
    """The call tree with its search line and navigation buttons, following the shared
    :class:`Selection`."""

    # A search or jump ended: the call found (a CallRef) or None.
    searchFinished = Signal(object)

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis: Analysis | None = None
        self._open_first = False         # the first thread is opened when the view is first seen
        self.background_above = SEARCH_IN_BACKGROUND_ABOVE
        self.task: Task | None = None
        self._quiet = False

        self.model = CallTreeModel(self)
        self.tree = _Tree()
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setIndentation(INDENT)  # call stacks run deep: keep names in view (see _fit_columns)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setAllColumnsShowFocus(True)
        self.tree.setExpandsOnDoubleClick(True)
        self.tree.setModel(self.model)
        header = self.tree.header()
        header.setStretchLastSection(True)
        for column, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(column, width)
        for column in HIDDEN_COLUMNS:
            header.hideSection(column)
        # Right-click on the header: choose the columns.
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._column_menu)
        self.tree.resized = self._fit_columns
        self._level = 0
        self.tree.selectionModel().currentChanged.connect(self._current_changed)
        self.tree.activated.connect(self._activated)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a call by name (Enter: next, Shift+Enter: previous)")
        self.search.setClearButtonEnabled(True)
        self.search.installEventFilter(self)
        self.search.textChanged.connect(lambda _text: self.status.setText(""))
        self.status = QLabel("")
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # Actions with window-wide shortcuts: they work from the timeline too, starting at the
        # selected call (the tree follows the selection). The main window may put them in a menu.
        self.find_action = self._action("Find a call", QKeySequence.StandardKey.Find, self.focus_search)
        self.next_exception_action = self._action("Next exception", "Ctrl+E", lambda: self.next_exception(False))
        self.previous_exception_action = self._action("Previous exception", "Ctrl+Shift+E",
                                                      lambda: self.next_exception(True))
        self.next_native_action = self._action("Next native call", "Ctrl+N", lambda: self.next_native(False))
        self.previous_native_action = self._action("Previous native call", "Ctrl+Shift+N",
                                                   lambda: self.next_native(True))
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.setSpacing(2)
        for text, action in (("◀", self.previous_exception_action), ("Exception ▶", self.next_exception_action),
                             ("◀", self.previous_native_action), ("Native ▶", self.next_native_action)):
            if action is self.previous_native_action:
                buttons.addSpacing(10)
            button = QToolButton()
            button.setDefaultAction(action)
            button.setText(text)
            button.setToolTip(f"{action.text()} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})")
            buttons.addWidget(button)
        buttons.addWidget(self.status, 1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.search)
        layout.addLayout(buttons)
        layout.addWidget(self.tree, 1)
        self.setFocusProxy(self.tree)
        selection.callSelected.connect(self._on_selected)

    def _action(self, text: str, shortcut, slot) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    # ------------------------------------------------------------------ content

    def set_analysis(self, analysis: Analysis | None) -> None:
        """Show ``analysis`` (None: nothing)."""
        self._cancel_task()
        self.analysis = analysis
        self.model.set_analysis(analysis)
        self.model.matches = None
        self.status.setText("")
        self.search.clear()          # a search of the previous trace means nothing in this one
        self._level = 0
        self._fit_columns()
        # The first thread's calls are opened when the view is first seen.
        self._open_first = analysis is not None and bool(analysis.threads)
        if self.isVisible():
            self._open_first_thread()

    def highlight(self, text: str) -> None:
        """Give the calls of methods matching the explorer's search (:mod:`jbgui.model.search`)
        the search colour; '' or an invalid expression: none."""
        pattern, _error = SE.compile_search(text)
        self.model.matches = SE.method_matches(self.analysis.statics, pattern) \
            if pattern is not None and self.analysis is not None else None
        self.tree.viewport().update()

    def set_scope(self, mine) -> None:
        """Only my code (``mine``: per method id, from the explorer's scope) or every call (None).
        The tree starts again from its threads and opens down to the selected call (or, when the
        scope hides it, to the call that stands for it)."""
        if self.analysis is None or mine is self.model.mine:
            return
        self._quiet = True
        try:
            self.model.set_scope(mine)
        finally:
            self._quiet = False
        ref = self.selection.call
        if ref is None or not self.reveal(ref):
            self._open_first = True
            if self.isVisible():
                self._open_first_thread()

    def _open_first_thread(self) -> None:
        if not self._open_first or self.analysis is None:
            return
        self._open_first = False
        analysis = self.analysis
        # The first thread with calls open, as a start.
        # (what opening reads is the few blocks of rows its calls lie in, whatever the thread's size)
        self._open_thread(analysis, first_thread_slot(analysis))

    def _open_thread(self, analysis: Analysis, slot: int) -> None:
        if not isValid(self) or self.analysis is not analysis:
            return          # another trace (or none) is shown by now
        self.status.setText("")
        main = self.model.thread_index(slot)
        self.model.fetchMore(main)   # now, not at the view's next layout
        self.tree.expand(main)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._open_first_thread()

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.model.refresh_style()
            self.tree.viewport().update()
        super().changeEvent(event)

    def eventFilter(self, watched, event) -> bool:
        if watched is self.search and event.type() == QEvent.Type.KeyPress:
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.find(backwards=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.tree.setFocus()
                return True
        return super().eventFilter(watched, event)

    # ------------------------------------------------------------------ selection

    def current_ref(self) -> CallRef | None:
        return self.model.call_ref(self.tree.currentIndex())

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._quiet:
            return
        ref = self.model.call_ref(current)
        if ref is not None:
            self.selection.select_call(ref, self)

    def _on_selected(self, ref, source) -> None:
        if source is self or self.analysis is None:
            return
        if ref is None:
            self.tree.clearSelection()
            return
        self.reveal(ref)

    def _activated(self, index: QModelIndex) -> None:
        place = self.model.placeholder(index)
        if not place:
            return
        # Children leaving the window may take the current row with them: Qt then makes another
        # row current, which is not the user choosing a call.
        self._quiet = True
        try:
            if place == EARLIER:
                self.model.show_earlier(index.parent())
            else:
                self.model.show_later(index.parent())
        finally:
            self._quiet = False

    def reveal(self, ref: CallRef) -> bool:
        """Open the tree down to a call, make it current and scroll to it (without announcing it
        to the selection). False for a call this trace does not have."""
        index = self.model.index_of(ref)
        if not index.isValid():
            return False
        chain = []
        parent = index.parent()
        while parent.isValid():
            chain.append(parent)
            parent = parent.parent()
        self._quiet = True
        try:
            for p in reversed(chain):
                self.tree.expand(p)
            self.tree.setCurrentIndex(index)
        finally:
            self._quiet = False
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self._show_name(len(chain))
        return True

    def _show_name(self, level: int) -> None:
        """Deep calls are indented far right: rather than widen the name column (which pushes
        the numbers off-screen), indent less, so that the name and the numbers stay in view."""
        self._level = level
        self._fit_columns()
        bar = self.tree.horizontalScrollBar()
        QTimer.singleShot(0, lambda: bar.setValue(0))

    def _fit_columns(self) -> None:
        """The number columns keep their widths and stay in view; the name column takes what is
        left (at least :data:`MIN_NAME_WIDTH`), and the indentation shrinks for deep calls so
        that the current call's name fits in it."""
        header = self.tree.header()
        last = max((c for c in range(header.count()) if not header.isSectionHidden(c)), default=0)
        numbers = sum(header.sectionSize(c) for c in range(1, header.count())
                      if c != last and not header.isSectionHidden(c))
        width = max(MIN_NAME_WIDTH, self.tree.viewport().width() - numbers - FLAGS_MIN_WIDTH)
        header.resizeSection(0, width)
        room = width - max(NAME_ROOM, width // 2)
        indent = int(max(MIN_INDENT, min(INDENT, room // max(self._level + 1, 1))))
        if indent != self.tree.indentation():
            self.tree.setIndentation(indent)

    def _column_menu(self, pos) -> None:
        from PySide6.QtWidgets import QMenu

        header = self.tree.header()
        menu = QMenu(self)
        for column in range(1, len(COLUMNS)):
            action = menu.addAction(COLUMNS[column])
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(column))
            action.toggled.connect(lambda on, c=column: self.show_column(c, on))
        menu.popup(header.mapToGlobal(pos))

    def show_column(self, column: int, shown: bool) -> None:
        """Show or hide a number column (the name column always shows)."""
        if column > 0:
            self.tree.header().setSectionHidden(column, not shown)
            self._fit_columns()

    # ------------------------------------------------------------------ search and jumps

    def find(self, backwards: bool = False) -> None:
        """The next (previous) call whose name contains the search text, through every thread."""
        text = self.search.text().strip()
        if self.analysis is None or not text:
            return
        analysis = self.analysis

        def finder(cancelled):
            return lambda thread, after, back: Q.find_calls(analysis, thread, text, after, back, cancelled)
        self._search(finder, backwards, f"searching for “{text}” …", f"no match for “{text}”")

    def next_exception(self, backwards: bool = False) -> None:
        """The next (previous) call that threw, was left by or caught an exception."""
        self._jump(Q.EXCEPTION_FLAGS, backwards, "exception")

    def next_native(self, backwards: bool = False) -> None:
        """The next (previous) native call."""
        self._jump(Q.NATIVE_FLAGS, backwards, "native call")

    def _jump(self, mask: int, backwards: bool, what: str) -> None:
        if self.analysis is None:
            return

        def finder(cancelled):
            return lambda thread, after, back: Q.next_flagged(thread, after, mask, back, cancelled)
        self._search(finder, backwards, f"looking for the {what} …", f"no {what}")

    def _start_point(self, backwards: bool) -> tuple[int, int]:
        """(thread slot, row) to search from: the tree's current call (a thread: its start), else
        the selected call, else the start (the end, backwards) of everything."""
        start = self.model.search_start(self.tree.currentIndex(), backwards)
        if start is not None:
            return start
        ref = self.selection.call
        if ref is not None and self.model.has_thread(ref.thread):
            return self.model.slot_of(ref.thread), ref.row
        if backwards:
            last = len(self.analysis.threads) - 1
            return last, len(self.analysis.threads[last].calls)
        return 0, -1

    def _search(self, finder, backwards: bool, busy: str, none: str) -> None:
        analysis = self.analysis
        if not analysis.threads:
            return
        self._cancel_task()
        slot, row = self._start_point(backwards)

        def work(_progress, cancelled):
            return Q.search_threads(analysis, slot, row, finder(cancelled), backwards, cancelled)

        if sum(len(t.calls) for t in analysis.threads) <= self.background_above:
            self._search_done(analysis, none, work(None, lambda: False))
            return
        self.status.setText(busy)
        task = Task(work, name="calltree-search")
        task.succeeded.connect(lambda hit, a=analysis: self._search_done(a, none, hit))
        task.failed.connect(self._search_failed)
        self.task = task
        task.start()

    def _search_failed(self, message: str) -> None:
        self.status.setText(message)
        self.searchFinished.emit(None)

    def _search_done(self, analysis: Analysis, none: str, hit: Q.Hit | None) -> None:
        if analysis is not self.analysis:
            return
        self.task = None
        if hit is None:
            self.status.setText(none)
            self.searchFinished.emit(None)
            return
        ref = CallRef(analysis.threads[hit.slot].index, hit.row)
        self.status.setText("wrapped around" if hit.wrapped else "")
        self.reveal(ref)
        self.selection.select_call(ref, self)
        self.searchFinished.emit(ref)

    def _cancel_task(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None
