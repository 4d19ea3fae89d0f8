"""The call tree on real traces: threads at the top, children with the call table's numbers,
flag words, icons and colours per kind of call, native calls holding their callbacks, search,
jumps to exceptions and native calls, the shared selection both ways, and laziness on a call with
200,000 children (wide_calls)."""

from __future__ import annotations

import html
import time

import numpy as np
import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor

from jbgui.model import call_queries as Q
from jbgui.model import time_quality as TQ
from jbgui.model.analysis import Analysis, Flag
from jbgui.ui import calltree_view as CT
from jbgui.ui.calltree_view import (
    BATCH, COL_CALL, COL_CALLS, COL_DURATION, COL_EXCL_BC, COL_EXCL_BL, COL_FLAGS, COL_INCL_BC, COL_INCL_BL, EARLIER,
    KIND_NAMES, LATER, MAX_SHOWN, STEP, CallTreeView, kind_icon, kind_of,
)
from jbgui.ui.format import flag_words, format_count, format_duration
from jbgui.ui.selection import CallRef, Selection

DISPLAY = Qt.ItemDataRole.DisplayRole


def open_trace(program_runs, default_jdk, program: str) -> Analysis:
    untraced, run = program_runs(program, default_jdk)
    assert run.exit_code == untraced.exit_code, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.fixture(scope="module")
def exceptions(program_runs, default_jdk) -> Analysis:
    return open_trace(program_runs, default_jdk, "exception_paths")


@pytest.fixture(scope="module")
def natives(program_runs, default_jdk) -> Analysis:
    return open_trace(program_runs, default_jdk, "native_calls")


@pytest.fixture(scope="module")
def threads(program_runs, default_jdk) -> Analysis:
    return open_trace(program_runs, default_jdk, "threads")


@pytest.fixture(scope="module")
def wide(program_runs, default_jdk) -> Analysis:
    return open_trace(program_runs, default_jdk, "wide_calls")


@pytest.fixture
def make_view(qtbot):
    def make(analysis: Analysis) -> tuple[CallTreeView, Selection]:
        selection = Selection()
        view = CallTreeView(selection)
        qtbot.addWidget(view)
        view.resize(1100, 600)
        view.show()
        qtbot.waitExposed(view)
        view.set_analysis(analysis)
        return view, selection
    return make


def expand(qtbot, view: CallTreeView, index: QModelIndex) -> None:
    """Open a row as a click on its arrow does (QTreeView fetches at its next layout)."""
    view.tree.expand(index)
    qtbot.waitUntil(lambda: view.model.rowCount(index) > 0, timeout=5000)


def rows_named(analysis: Analysis, thread, prefix: str) -> list[int]:
    return [r for r in range(len(thread.calls)) if analysis.call_name(thread, r).startswith(prefix)]


def child_index(view: CallTreeView, parent: QModelIndex, row: int) -> QModelIndex:
    model = view.model
    for i in range(model.rowCount(parent)):
        index = model.index(i, 0, parent)
        ref = model.call_ref(index)
        if ref is not None and ref.row == row:
            return index
    raise AssertionError(f"row {row} is not shown below {model.data(parent)}")


def text(view: CallTreeView, index: QModelIndex, column: int) -> str:
    return view.model.data(index.siblingAtColumn(column), DISPLAY)


def assert_revealed(view: CallTreeView, ref: CallRef) -> None:
    """``ref`` is the tree's current row, every ancestor is open, and the row is in view."""
    index = view.tree.currentIndex()
    assert view.model.call_ref(index) == ref
    parent = index.parent()
    while parent.isValid():
        assert view.tree.isExpanded(parent), view.model.data(parent)
        parent = parent.parent()
    rect = view.tree.visualRect(index)
    assert rect.isValid() and view.tree.viewport().rect().intersects(rect)


# ---------------------------------------------------------------------- content


def test_the_top_level_lists_the_threads(make_view, threads):
    view, _ = make_view(threads)
    model = view.model
    assert model.rowCount() == len(threads.threads)
    for slot, thread in enumerate(threads.threads):
        index = model.index(slot, 0)
        assert model.data(index) == f"{thread.name} #{thread.index}"   # threads may share a name
        assert text(view, index, COL_CALLS) == format_count(len(thread.calls))
        assert text(view, index, COL_INCL_BL) == format_count(int(thread.block_counts.sum()))
        assert model.call_ref(index) is None
        assert model.hasChildren(index) == (len(thread.calls) > 0)
    assert [t.name for t in threads.threads][:1] == ["main"]
    # main is opened to begin with: its top-level calls
    main = model.index(0, 0)
    assert view.tree.isExpanded(main)
    shown = [model.call_ref(model.index(i, 0, main)).row for i in range(model.rowCount(main))]
    assert shown == threads.thread("main").calls.children(-1).tolist()


def test_children_carry_the_numbers_of_the_call_table(qtbot, make_view, exceptions):
    view, _ = make_view(exceptions)
    model = view.model
    main = exceptions.thread("main")
    calls = main.calls
    app = rows_named(exceptions, main, "Main.main(")[0]
    index = model.index_of(CallRef(main.index, app))
    expand(qtbot, view, index)
    children = calls.children(app)
    assert 0 < len(children) < BATCH
    assert model.rowCount(index) == len(children)
    excl_bc, excl_bl = calls.excl_bytecodes(), calls.excl_blocks()
    for i, row in enumerate(children.tolist()):
        child = model.index(i, 0, index)
        assert model.call_ref(child) == CallRef(main.index, row)
        assert model.parent(child) == index
        name = exceptions.call_name(main, row)
        assert text(view, child, COL_CALL) == CT.short_name(name)
        assert html.escape(name) in model.data(child, Qt.ItemDataRole.ToolTipRole)
        assert text(view, child, COL_CALLS) == format_count(int(calls.end[row]) - row)
        assert text(view, child, COL_INCL_BC) == format_count(int(calls.incl_bytecodes[row]))
        assert text(view, child, COL_EXCL_BC) == format_count(int(excl_bc[row]))
        assert text(view, child, COL_INCL_BL) == format_count(int(calls.incl_blocks[row]))
        assert text(view, child, COL_EXCL_BL) == format_count(int(excl_bl[row]))
        span = main.times(np.array([calls.first[row], int(calls.last[row]) + 1]))
        approx = "≈ " if TQ.interpolated(main, np.array([row]))[0] else ""
        assert text(view, child, COL_DURATION) == approx + format_duration(span[1] - span[0])
        words = ", ".join(flag_words(int(calls.flags[row])))
        if int(calls.flags[row]) & Flag.EXCEPTIONAL:
            # the exception's class is in the row, not only in the tooltip
            exc = exceptions.statics.class_name_of_id(int(calls.exc_class[row])).rsplit(".", 1)[-1]
            words = words.replace("left by an exception", f"left by {exc}")
        assert text(view, child, COL_FLAGS) == words
        assert model.hasChildren(child) == (int(calls.end[row]) > row + 1)
    for column in range(COL_CALLS, COL_DURATION + 1):
        alignment = model.data(model.index(0, column, index), Qt.ItemDataRole.TextAlignmentRole)
        assert alignment & Qt.AlignmentFlag.AlignRight


def test_unusual_calls_have_their_words_icons_and_colours(make_view, exceptions, threads):
    view, _ = make_view(exceptions)
    model = view.model
    main = exceptions.thread("main")
    calls = main.calls
    dive = rows_named(exceptions, main, "Main.dive(")
    cases = {"exceptional": dive[4], "caught": dive[1]}
    flags = np.asarray(calls.flags)
    cases["native"] = int(np.flatnonzero((flags & Flag.NATIVE) & ~(flags & Flag.EXCEPTIONAL))[0])
    cases["untraced"] = int(np.flatnonzero((flags & Flag.UNTRACED) & ~(flags & Flag.EXCEPTIONAL))[0])
    cases["implicit"] = rows_named(exceptions, main, "Main.<clinit>(")[0]
    cases["callback"] = int(np.flatnonzero((flags & Flag.CALLBACK) & ~(flags & (Flag.EXCEPTIONAL | Flag.CAUGHT)))[0])
    words = {"exceptional": "left by ArithmeticException", "caught": "caught an exception", "native": "native call",
             "untraced": "untraced call", "implicit": "implicit (no call site)",
             "callback": "called back from native code"}
    images, colours = {}, {}
    for kind, row in cases.items():
        index = model.index_of(CallRef(main.index, row))
        assert kind_of(int(calls.flags[row])) == kind
        assert words[kind] in text(view, index, COL_FLAGS)
        images[kind] = model.data(index, Qt.ItemDataRole.DecorationRole).toImage()
        colours[kind] = QColor(model.data(index, Qt.ItemDataRole.ForegroundRole)).name()
    # the exception that ended a call, and the one a call caught, are in the tooltips
    assert "java.lang.ArithmeticException" in model.data(model.index_of(CallRef(main.index, dive[4])),
                                                         Qt.ItemDataRole.ToolTipRole)
    assert "caught java.lang.ArithmeticException" in model.data(model.index_of(CallRef(main.index, dive[1])),
                                                                Qt.ItemDataRole.ToolTipRole)
    # uncaught (threads: "doomed" dies of an exception) and truncated (DestroyJavaVM never ends)
    view.set_analysis(threads)
    for kind, bit, word in (("uncaught", Flag.UNCAUGHT, "uncaught IllegalStateException"),
                            ("truncated", Flag.TRUNCATED, "truncated")):
        # a row of that kind (a JDK thread's call may also carry a word of higher rank, e.g.
        # the Reference Handler's implicit, never-ending loop when a collection ran meanwhile)
        thread, row = next((t, int(r)) for t in threads.threads
                           for r in np.flatnonzero(np.asarray(t.calls.flags) & bit)[::-1]
                           if kind_of(int(t.calls.flags[r])) == kind)
        index = view.model.index_of(CallRef(thread.index, row))
        assert kind_of(int(thread.calls.flags[row])) == kind
        assert word in text(view, index, COL_FLAGS)
        images[kind] = view.model.data(index, Qt.ItemDataRole.DecorationRole).toImage()
        colours[kind] = QColor(view.model.data(index, Qt.ItemDataRole.ForegroundRole)).name()
    kinds = sorted(images)
    assert len(kinds) == 8
    for i, a in enumerate(kinds):
        for b in kinds[i + 1:]:
            assert images[a] != images[b], (a, b)
            assert colours[a] != colours[b], (a, b)
    # an ordinary call: a blank icon (names stay aligned) and the palette's colour
    ordinary = next(r for r in range(len(calls)) if not calls.flags[r])
    view.set_analysis(exceptions)
    index = view.model.index_of(CallRef(main.index, ordinary))
    assert view.model.data(index, Qt.ItemDataRole.ForegroundRole) is None
    assert text(view, index, COL_FLAGS) == ""


@pytest.mark.parametrize("dark", [False, True])
def test_icons_differ_in_shape_not_only_in_colour(qapp, dark):
    masks = {}
    for kind in KIND_NAMES:
        image = kind_icon(kind, dark).toImage()
        alpha = [image.pixelColor(x, y).alpha() > 96 for y in range(image.height()) for x in range(image.width())]
        assert sum(alpha) > 10, kind  # something is drawn
        masks[kind] = tuple(alpha)
    assert len(set(masks.values())) == len(KIND_NAMES)
    blank = kind_icon("", dark).toImage()
    assert all(blank.pixelColor(x, y).alpha() == 0 for y in range(blank.height()) for x in range(blank.width()))


def test_native_calls_hold_their_callbacks(qtbot, make_view, natives):
    view, _ = make_view(natives)
    model = view.model
    main = natives.thread("main")
    calls = main.calls
    # Method.invoke of Target.safe: the application code sits under a synthetic native row
    safe = [r for r in rows_named(natives, main, "Main$Target.safe(") if calls.flags[r] & Flag.CALLBACK]
    assert safe
    for row in safe:
        native = int(calls.parent[row])
        assert calls.flags[native] & (Flag.NATIVE | Flag.UNTRACED)
        assert view.reveal(CallRef(main.index, native))
        native_index = view.tree.currentIndex()
        assert model.hasChildren(native_index)
        expand(qtbot, view, native_index)
        child = child_index(view, native_index, row)
        assert model.parent(child) == native_index
        assert "called back from native code" in text(view, child, COL_FLAGS)
        kind = kind_of(int(calls.flags[row]))  # safe(2) caught an exception: that shows first
        assert kind == ("caught" if calls.flags[row] & Flag.CAUGHT else "callback")
        assert model.data(child, Qt.ItemDataRole.DecorationRole).toImage() == model.icons[kind].toImage()
    assert any(not calls.flags[row] & Flag.CAUGHT for row in safe)
    # System.arraycopy: a native row of its own under Main.copy
    copy = rows_named(natives, main, "Main.copy(")[0]
    assert view.reveal(CallRef(main.index, copy))
    copy_index = view.tree.currentIndex()
    expand(qtbot, view, copy_index)
    names = [text(view, model.index(i, 0, copy_index), COL_CALL) for i in range(model.rowCount(copy_index))]
    assert "System.arraycopy" in names
    arraycopy = model.index(names.index("System.arraycopy"), 0, copy_index)
    assert "native call" in text(view, arraycopy, COL_FLAGS)
    assert model.data(arraycopy, Qt.ItemDataRole.DecorationRole).toImage() == model.icons["native"].toImage()


# ---------------------------------------------------------------------- search and jumps


def expected_matches(analysis: Analysis, needle: str) -> list[CallRef]:
    """Every call (thread by thread, in row order) whose name without the descriptor contains
    ``needle``, ignoring case."""
    out = []
    for thread in analysis.threads:
        calls = thread.calls
        keys = np.stack([np.asarray(calls.method, np.int64), np.asarray(calls.call_site, np.int64)], 1)
        unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        hit = np.array([needle.lower() in analysis.call_name(thread, int(r)).lower().partition("(")[0]
                        for r in first], np.bool_)
        out.extend(CallRef(thread.index, int(r)) for r in np.flatnonzero(hit[inverse.ravel()]))
    return out


def test_search_finds_the_calls_in_order_and_wraps(qtbot, make_view, threads):
    view, selection = make_view(threads)
    expected = expected_matches(threads, "Main.")
    assert len({ref.thread for ref in expected}) >= 4   # main, alpha, beta, doomed, handled
    view.search.setText("Main.")
    found = []
    for _ in range(12):
        qtbot.keyClick(view.search, Qt.Key.Key_Return)
        found.append(selection.call)
        assert_revealed(view, selection.call)
    assert found == expected[:12]
    qtbot.keyClick(view.search, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert selection.call == expected[10]
    # into the next thread: from the last match of one thread to the first of the next
    last_of_first = max(i for i, ref in enumerate(expected) if ref.thread == expected[0].thread)
    selection.select_call(expected[last_of_first], None)
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert selection.call == expected[last_of_first + 1] and view.status.text() == ""
    # past the end: round to the first match, and say so
    selection.select_call(expected[-1], None)
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert selection.call == expected[0]
    assert "wrapped" in view.status.text()
    qtbot.keyClick(view.search, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert selection.call == expected[-1]
    # nothing: the selection stays, the status says so
    view.search.setText("NoSuchMethodAnywhere")
    with qtbot.waitSignal(view.searchFinished) as blocker:
        qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert blocker.args == [None]
    assert selection.call == expected[-1]
    assert "no match" in view.status.text()


def test_search_runs_in_the_background_for_big_traces(qtbot, make_view, exceptions):
    view, selection = make_view(exceptions)
    view.background_above = 0
    main = exceptions.thread("main")
    dive = rows_named(exceptions, main, "Main.dive(")
    view.search.setText("main.dive")
    with qtbot.waitSignal(view.searchFinished, timeout=30_000) as blocker:
        view.find()
        assert view.task is not None and "searching" in view.status.text()
    assert blocker.args == [CallRef(main.index, dive[0])]
    assert selection.call == CallRef(main.index, dive[0])
    assert_revealed(view, selection.call)
    with qtbot.waitSignal(view.searchFinished, timeout=30_000) as blocker:
        view.find(backwards=True)
    assert blocker.args == [CallRef(main.index, dive[-1])]


@pytest.mark.parametrize("what", ["exception", "native"])
def test_next_exception_and_native_call_expand_their_ancestors(qtbot, make_view, natives, what):
    view, selection = make_view(natives)
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    mask, key = (Q.EXCEPTION_FLAGS, Qt.Key.Key_E) if what == "exception" else (Q.NATIVE_FLAGS, Qt.Key.Key_N)
    expected = [CallRef(t.index, int(r)) for t in natives.threads
                for r in np.flatnonzero(np.asarray(t.calls.flags) & mask)]
    view.tree.setFocus()
    for ref in expected[:6]:
        qtbot.keyClick(view.tree, key, Qt.KeyboardModifier.ControlModifier)
        assert selection.call == ref
        assert_revealed(view, ref)
        flags = int(natives.thread(ref.thread).calls.flags[ref.row])
        assert flags & mask
    qtbot.keyClick(view.tree, key, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert selection.call == expected[4]
    # from a call deep in the tree (not the tree's current row: chosen elsewhere)
    selection.select_call(expected[-2], None)
    (view.next_exception if what == "exception" else view.next_native)()
    assert selection.call == expected[-1]
    assert_revealed(view, expected[-1])


# ---------------------------------------------------------------------- selection


def test_a_call_selected_elsewhere_is_revealed_and_selected(qtbot, make_view, exceptions):
    view, selection = make_view(exceptions)
    main = exceptions.thread("main")
    dive = rows_named(exceptions, main, "Main.dive(")
    ref = CallRef(main.index, dive[4])     # five frames of recursion below main
    with qtbot.assertNotEmitted(view.searchFinished):
        selection.select_call(ref, source="timeline")
    assert_revealed(view, ref)
    chain = Q.ancestors(main, ref.row)
    index = view.tree.currentIndex()
    for row in reversed(chain[:-1]):
        index = index.parent()
        assert view.model.call_ref(index) == CallRef(main.index, row)
    assert view.model.call_ref(index.parent()) is None  # the thread
    # a thread the tree does not show (another trace): ignored, nothing breaks
    selection.select_call(CallRef(9999, 0), source="elsewhere")
    assert view.model.call_ref(view.tree.currentIndex()) == ref
    selection.clear()
    assert not view.tree.selectionModel().hasSelection()


def test_choosing_a_call_in_the_tree_selects_it_everywhere(qtbot, make_view, exceptions):
    view, selection = make_view(exceptions)
    main = exceptions.thread("main")
    model = view.model
    top = model.index(0, 0)   # main's thread: its top-level calls are shown
    first = model.index(1, 0, top)
    ref = model.call_ref(first)
    view.tree.scrollTo(first)
    rect = view.tree.visualRect(first)
    with qtbot.waitSignal(selection.callSelected) as blocker:
        qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [ref, view]
    assert selection.call == ref
    with qtbot.waitSignal(selection.callSelected) as blocker:
        qtbot.keyClick(view.tree, Qt.Key.Key_Down)
    assert blocker.args == [model.call_ref(model.index(2, 0, top)), view]
    # a thread row is not a call: the selection stays
    view.tree.setCurrentIndex(top)
    assert selection.call == CallRef(main.index, model.call_ref(model.index(2, 0, top)).row)


def test_closing_the_trace_empties_the_tree(make_view, exceptions):
    view, _ = make_view(exceptions)
    view.set_analysis(None)
    assert view.model.rowCount() == 0
    view.find()
    view.next_exception()
    assert view.model.rowCount() == 0


# ---------------------------------------------------------------------- laziness


def test_a_call_with_200000_children_opens_with_a_batch_and_reveals_late_children_at_once(qtbot, make_view, wide):
    view, selection = make_view(wide)
    model = view.model
    main = wide.thread("main")
    calls = main.calls
    app = rows_named(wide, main, "Main.main(")[0]
    children = calls.children(app)
    assert len(children) > 200_000
    index = model.index_of(CallRef(main.index, app))
    started = time.perf_counter()
    expand(qtbot, view, index)
    qtbot.wait(1)
    opened = time.perf_counter() - started
    assert model.shown(index) == (0, BATCH, len(children))
    assert model.rowCount(index) == BATCH + 1
    more = model.index(BATCH, 0, index)
    assert model.placeholder(more) == LATER
    assert f"{len(children) - BATCH:,} more calls" in model.data(more)
    # a late child, chosen elsewhere: one step, a window around it, not 150,000 rows
    late = CallRef(main.index, int(children[150_000]))
    started = time.perf_counter()
    selection.select_call(late, source="timeline")
    revealed = time.perf_counter() - started
    assert_revealed(view, late)
    lo, count, total = model.shown(index)
    assert lo <= 150_000 < lo + count and count <= MAX_SHOWN and total == len(children)
    assert model.placeholder(model.index(0, 0, index)) == EARLIER
    assert model.rowCount(index) == count + 2
    # every child shown is the right one
    shown = [model.call_ref(model.index(i, 0, index)).row for i in range(1, count + 1)]
    assert shown == children[lo:lo + count].tolist()
    # "earlier" and "more" rows grow the window, which never holds more than MAX_SHOWN children
    view.tree.activated.emit(model.index(0, 0, index))
    assert model.shown(index)[:2] == (lo - STEP, count + STEP)
    for _ in range(3):
        view.tree.activated.emit(model.index(model.rowCount(index) - 1, 0, index))
    lo2, count2, _ = model.shown(index)
    assert count2 == MAX_SHOWN and lo2 + count2 == lo + count + 3 * STEP
    assert selection.call == late  # the window moved; the selection did not
    # the next exception after the late child: the next leaf that threw (every 50,000th)
    view.tree.setCurrentIndex(model.index_of(late))
    view.next_exception()
    thrower = int(children[199_999])
    assert selection.call == CallRef(main.index, thrower)
    assert calls.flags[thrower] & Flag.EXCEPTIONAL
    assert_revealed(view, selection.call)
    # from the first child back to the last leaf, by the search (wrapping past the start)
    selection.select_call(CallRef(main.index, int(children[0])), source="timeline")
    view.search.setText("Main.leaf")
    view.find(backwards=True)
    assert selection.call == CallRef(main.index, thrower)
    assert "wrapped" in view.status.text()
    # generous bounds: a batch and one window, not a loop over 150,000 children
    assert opened < 2.0 and revealed < 2.0, (opened, revealed)


# ---------------------------------------------------------------------- layout


def assert_numbers_in_view(view: CallTreeView) -> None:
    header = view.tree.header()
    width = view.tree.viewport().width()
    shown = [c for c in (COL_CALLS, COL_INCL_BC, COL_EXCL_BC, COL_DURATION) if not header.isSectionHidden(c)]
    assert len(shown) == 4
    for column in shown:
        left = header.sectionViewportPosition(column)
        assert 0 <= left and left + header.sectionSize(column) <= width, (column, left, width)


def test_the_numbers_stay_in_view_in_a_narrow_pane_and_after_revealing_a_deep_call(qtbot, make_view, exceptions):
    view, selection = make_view(exceptions)
    view.resize(600, 600)       # about the default call tree dock
    qtbot.wait(20)
    assert_numbers_in_view(view)
    main = exceptions.thread("main")
    deepest = int(np.argmax(np.asarray(main.calls.depth)))
    depth = int(main.calls.depth[deepest])
    assert depth >= 15
    selection.select_call(CallRef(main.index, deepest), None)
    qtbot.wait(20)
    assert_revealed(view, CallRef(main.index, deepest))
    assert_numbers_in_view(view)
    assert view.tree.horizontalScrollBar().value() == 0
    # the name itself is in view: the indentation left room for it in the name column
    rect = view.tree.visualRect(view.tree.currentIndex())
    assert rect.left() + 100 <= view.tree.header().sectionSize(COL_CALL)


def test_the_find_text_does_not_carry_over_into_the_next_trace(qtbot, make_view, exceptions, threads):
    view, _ = make_view(exceptions)
    qtbot.keyClicks(view.search, "dive")
    qtbot.keyClick(view.search, Qt.Key.Key_Return)
    assert view.search.text() == "dive"
    view.set_analysis(threads)
    assert view.search.text() == "" and view.status.text() == ""
