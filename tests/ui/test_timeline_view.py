"""The timeline driven by real mouse and key events on traces the agent records: hover, lanes
(overview, collapsing), labels, interpolated times, range selection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtWidgets import QDockWidget, QToolTip

from jbgui.ui.main_window import MainWindow
from jbgui.ui.selection import CallRef


def recorded(program_runs, jdk, program: str) -> Path:
    """The trace of a program of tests/programs, recorded once per session."""
    _untraced, run = program_runs(program, jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def exceptions_trace(program_runs, default_jdk) -> Path:
    return recorded(program_runs, default_jdk, "exception_paths")


@pytest.fixture(scope="module")
def threads_trace(program_runs, default_jdk) -> Path:
    return recorded(program_runs, default_jdk, "multithread")


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


def settle(qtbot):
    """Let the views' background work (block listings, range counts) end and be delivered
    before the test's window goes (pytest-qt closes it before fixtures end)."""
    from jbgui.ui import tasks

    qtbot.waitUntil(lambda: not tasks._RUNNING, timeout=60_000)
    qtbot.wait(50)


def open_trace(qtbot, window, path, timeout=120_000):
    with qtbot.waitSignal(window.traceLoaded, timeout=timeout) as blocker:
        window.open_trace(path)
    window.tabs.setCurrentWidget(window.timeline)
    qtbot.wait(50)
    return blocker.args[0]


def first_row(analysis, thread, prefix: str) -> int:
    for row in range(len(thread.calls)):
        if analysis.call_name(thread, row).startswith(prefix):
            return row
    raise AssertionError(f"no call {prefix} in {thread.name}")


def call_pixel(view, ref: CallRef) -> QPoint:
    """Where a call's rectangle is on the plot's viewport, in pixels (its middle)."""
    rect = view.item.call_rect(ref)
    scene = view.viewbox.mapViewToScene(rect.center())
    return view.plot.mapFromScene(scene)


def test_hovering_a_bar_describes_its_call(qtbot, window, exceptions_trace, capsys):
    loaded = open_trace(qtbot, window, exceptions_trace)
    view = window.timeline
    main = loaded.analysis.thread("main")
    row = first_row(loaded.analysis, main, "Main.dive(")
    ref = CallRef(main.index, row)
    view.reveal(ref, zoom=True)
    qtbot.wait(50)
    at = call_pixel(view, ref)
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(0, 0))
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(1, 0))
    qtbot.waitUntil(lambda: view.hovered is not None, timeout=2000)
    assert view.hovered.thread == main.index
    assert loaded.analysis.call_name(main, view.hovered.row).startswith("Main.dive(")
    assert "Main.dive(II)I" in view.hover_text
    assert "Main.dive(II)I" in QToolTip.text()
    # nothing was printed by a failing slot (Qt prints a slot's exception and goes on)
    assert "Error" not in capsys.readouterr().err


@pytest.fixture(scope="module")
def sleeps_trace(program_runs, default_jdk) -> Path:
    # With the recorder's clock stamps around blocking calls (blocking=on, the default).
    _untraced, run = program_runs("sleeps", default_jdk, blocking="on")   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def sleeps_unstamped_trace(program_runs, default_jdk) -> Path:
    """The same program recorded without the clock stamps around blocking calls (blocking=off):
    the sleep's time is known only from the samples at buffer flushes, so it is interpolated."""
    _untraced, run = program_runs("sleeps", default_jdk, blocking="off")
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def view_pixel(view, x: float, y: float) -> QPoint:
    scene = view.viewbox.mapViewToScene(QPointF(x, y))
    return view.plot.mapFromScene(scene)


def repaint(view):
    view.plot.viewport().repaint()


def test_every_lane_fits_on_one_screen_and_a_header_click_expands_it(qtbot, window, threads_trace):
    loaded = open_trace(qtbot, window, threads_trace)
    view = window.timeline
    item = view.item
    busy = [lane for lane in item.lanes if lane.timeline.rows]
    assert len(busy) >= 8
    assert all(lane.collapsed for lane in item.lanes)
    view.show_all()
    _, (y0, y1) = view.viewbox.viewRange()
    assert y0 <= 0 and y1 >= item.height          # the whole run: every lane on screen
    # Lanes carry the thread's index beside its name.
    assert all(f"#{lane.timeline.thread.index}" in lane.title() for lane in item.lanes)
    # A real click on the header of the deepest lane expands it; another collapses it again.
    lane = max(busy, key=lambda l: l.timeline.max_depth)
    assert lane.levels == 3 < lane.timeline.max_depth + 1
    height = item.height
    at = view_pixel(view, (view.model.t_min + view.model.t_max) / 2, lane.top + 0.5)
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert not lane.collapsed and lane.levels == lane.timeline.max_depth + 1
    assert item.height == pytest.approx(height + lane.timeline.max_depth + 1 - 3)
    at = view_pixel(view, (view.model.t_min + view.model.t_max) / 2, lane.top + 0.5)
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert lane.collapsed and item.height == pytest.approx(height)
    # Selecting a call below a collapsed lane's levels elsewhere expands its lane.
    tl = lane.timeline
    deep = int(np.flatnonzero(np.asarray(tl.depth) >= 4)[0])
    window.selection.select_call(CallRef(tl.thread.index, deep), None)
    assert not lane.collapsed
    # The overview menu lists every thread.
    view._fill_lanes_menu()
    names = [a.text() for a in view.lanes_menu.actions() if "#" in a.text()]
    assert len(names) == len(item.lanes)
    settle(qtbot)


@pytest.fixture(scope="module")
def grid_trace(program_runs, default_jdk) -> Path:
    return recorded(program_runs, default_jdk, "call_grid")


def test_every_bar_with_room_carries_its_name(qtbot, window, grid_trace):
    loaded = open_trace(qtbot, window, grid_trace)
    a = loaded.analysis
    for dock in window.findChildren(QDockWidget):   # the timeline alone: its widths are what is tested
        dock.hide()
    view = window.timeline
    view.axis_choice.setCurrentIndex(1)          # events: exact widths
    main = a.thread("main")
    chains = [r for r in range(len(main.calls)) if a.call_name(main, r).startswith("Main.chain(")
              and a.call_name(main, int(main.calls.parent[r])).startswith("Main.main(")]
    assert len(chains) == 30
    view.go_to_lane(main.index)
    lane = view.item.lane_of(main.index)
    tl = lane.timeline
    x0, x1 = float(main.calls.first[chains[0]]), float(main.calls.last[chains[-1]]) + 1
    depth = int(main.calls.depth[chains[0]])
    qtbot.wait(20)
    view.viewbox.setXRange(x0, x1, padding=0)
    view.viewbox.setYRange(lane.depth0 + depth, lane.depth0 + depth + 26, padding=0)
    qtbot.wait(20)
    repaint(view)
    (vx0, vx1), (vy0, vy1) = view.viewbox.viewRange()
    px = view.viewbox.width() / (vx1 - vx0)
    rects = tl.query(vx0, vx1, 1 / px, depth, depth + 24)
    widths = (np.minimum(rects.end, vx1) - np.maximum(rects.start, vx0)) * px
    top = lane.depth0 + rects.depth
    medium = np.flatnonzero((widths >= 40) & ~rects.merged & (top >= vy0) & (top + 1 <= vy1))
    assert len(medium) > 600          # some 30 chains of 25 calls, a few dozen pixels each
    labelled = {r for t, r, _ in view.item.last_labels if t == main.index}
    missing = [int(rects.row[i]) for i in medium if int(rects.row[i]) not in labelled]
    assert not missing, f"{len(missing)} of {len(medium)} bars unlabelled"


def shown_unhatched(qtbot, window, thread, row):
    """Selects call ``row`` and zooms the timeline onto it: drawn, and not hatched as interpolated."""
    ref = CallRef(thread.index, row)
    window.selection.select_call(ref, None)
    view = window.timeline
    view.reveal(ref, zoom=True)
    qtbot.wait(20)
    repaint(view)
    assert (thread.index, row) not in view.item.last_interpolated
    return view, ref


def test_a_stamped_sleep_is_exact_and_not_hatched(qtbot, window, sleeps_trace):
    from jbgui.model import call_queries as Q
    from jbgui.model import time_quality as TQ

    loaded = open_trace(qtbot, window, sleeps_trace)
    a = loaded.analysis
    main = a.thread("main")
    row = first_row(a, main, "java.lang.Thread.sleep(")
    seconds = float(Q.duration(main, np.array([row]))[0]) / 1e9
    assert 0.199 <= seconds <= 0.5, seconds          # the recorder stamped the clock around it
    assert not TQ.interpolated(main, np.array([row]))[0]
    shown_unhatched(qtbot, window, main, row)
    settle(qtbot)


def test_interpolated_times_are_hatched_and_said(qtbot, window, sleeps_unstamped_trace):
    from jbgui.model import time_quality as TQ

    loaded = open_trace(qtbot, window, sleeps_unstamped_trace)
    a = loaded.analysis
    view = window.timeline
    main = a.thread("main")
    row = first_row(a, main, "java.lang.Thread.sleep(")
    ref = CallRef(main.index, row)
    window.selection.select_call(ref, None)
    view.reveal(ref, zoom=True)
    qtbot.wait(20)
    repaint(view)
    assert (main.index, row) in view.item.last_interpolated
    assert all(TQ.interpolated(a.thread(t), np.array([r]))[0] for t, r in view.item.last_interpolated)
    at = call_pixel(view, ref)
    qtbot.mouseMove(view.plot.viewport(), at)
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(1, 0))
    qtbot.waitUntil(lambda: view.hovered == ref, timeout=2000)
    assert "duration ≈" in view.hover_text and "interpolated" in view.hover_text
    # Events as the x axis: exact, nothing hatched, the lane on its own events.
    view.axis_choice.setCurrentIndex(1)
    assert not view.model.has_clock and view.unit == "events"
    view.reveal(ref, zoom=True)
    repaint(view)
    assert view.item.last_interpolated == []
    start, end = view.item.call_rect(ref).left(), view.item.call_rect(ref).right()
    assert (start, end) == (float(main.calls.first[row]), float(main.calls.last[row]) + 1.0)
    settle(qtbot)


def test_twins_are_told_apart_by_their_index(qtbot, window, sleeps_trace):
    loaded = open_trace(qtbot, window, sleeps_trace)
    twins = [lane.title() for lane in window.timeline.item.lanes if lane.timeline.thread.name == "twin"]
    assert len(twins) == 2 and twins[0] != twins[1]


def drag(qtbot, widget, a: QPoint, b: QPoint, modifier=Qt.KeyboardModifier.ShiftModifier):
    """A real press, moves with the button held, and release (QTest's mouseMove carries no buttons)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication

    def send(kind, pos, button, buttons):
        event = QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, buttons, modifier)
        QApplication.sendEvent(widget, event)

    left = Qt.MouseButton.LeftButton
    send(QEvent.Type.MouseButtonPress, a, left, left)
    steps = 8
    for k in range(1, steps + 1):
        p = a + (b - a) * k / steps
        send(QEvent.Type.MouseMove, p, Qt.MouseButton.NoButton, left)
        qtbot.wait(5)
    send(QEvent.Type.MouseButtonRelease, b, left, Qt.MouseButton.NoButton)


def test_shift_drag_selects_a_range_and_its_statistics_show(qtbot, window, exceptions_trace):
    from jbgui.model import range_stats as RS

    loaded = open_trace(qtbot, window, exceptions_trace)
    view = window.timeline
    view.show_all()
    qtbot.wait(20)
    (x0, x1), (y0, y1) = view.viewbox.viewRange()
    a_x, b_x = x0 + 0.3 * (x1 - x0), x0 + 0.6 * (x1 - x0)
    y = y0 + 0.5 * (y1 - y0)
    before = view.viewbox.viewRange()
    with qtbot.waitSignal(view.rangeSelected, timeout=2000) as selected:
        drag(qtbot, view.plot.viewport(), view_pixel(view, a_x, y), view_pixel(view, b_x, y))
    start, stop = selected.args
    px = (x1 - x0) / view.viewbox.width()
    assert start == pytest.approx(a_x, abs=3 * px) and stop == pytest.approx(b_x, abs=3 * px)
    assert view.selected_range == (start, stop)
    assert view.viewbox.viewRange()[0] == pytest.approx(before[0])     # a range drag does not pan
    panel = window.range_view
    qtbot.waitUntil(lambda: panel.stats is not None, timeout=10_000)
    expected = RS.range_stats(loaded.analysis, start, stop)
    assert panel.stats.total("calls_started") == expected.total("calls_started") > 0
    assert [int(m) for m in panel.stats.methods["method"][:5]] == [int(m) for m in expected.methods["method"][:5]]
    first_method = loaded.analysis.statics.method_qualified(int(expected.methods["method"][0]))
    assert first_method.split("(")[0] in panel.methods_text()
    # Esc clears it
    view.plot.setFocus()
    qtbot.keyClick(view.plot, Qt.Key.Key_Escape)
    assert view.selected_range is None
    settle(qtbot)


def test_exception_markers_name_their_exception(qtbot, window, exceptions_trace):
    """Zoomed in on an exception the program itself throws, its marker carries the exception's
    class name. The exception is the program's own (thrown in a method of ``Main``), not whatever
    the thread threw first (JDK start-up work, such as java.lang.invoke's bootstrap, can throw and
    catch its own), and the view is centred on the throw with its neighbouring markers out of reach,
    so the label has room however long the throwing call took (java.lang.invoke's bootstrap can
    fall inside it, and put the next throw a few pixels away when zoomed on the whole call)."""
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    view = window.timeline
    main = a.thread("main")
    lane = view.item.lane_of(main.index)
    marks = view.item.model.exception_marks(lane.timeline)
    exc_class = marks["exc_class"]                 # marks are in the order of the exceptions table
    exc = main.exceptions
    throw_row = np.asarray(exc["throw_row"])
    own = [k for k in range(len(throw_row))
           if exc_class[k] > 0 and throw_row[k] >= 0
           and a.statics.method_qualified(int(main.calls.method[throw_row[k]])).startswith("Main.")]
    assert len(own) >= 10, "the program throws at least ten exceptions of known class"
    t = np.sort(marks["throw_t"])

    def room(k: int) -> float:
        i = int(np.searchsorted(t, marks["throw_t"][k]))
        before = t[i] - t[i - 1] if i > 0 else np.inf
        after = t[i + 1] - t[i] if i + 1 < len(t) else np.inf
        return min(before, after)

    k = max(own, key=room)
    assert room(k) > 0
    row = int(throw_row[k])
    view.go_to_lane(main.index)
    view.reveal(CallRef(main.index, row), zoom=True)
    # the markers drawn lie within one view width left of the view: none but this one, here
    centre, half = float(marks["throw_t"][k]), 0.3 * room(k)
    if not np.isfinite(half):
        half = 1e6
    view.viewbox.setXRange(centre - half, centre + half, padding=0)
    repaint(view)
    expected = a.statics.class_name_of_id(int(exc_class[k])).replace("/", ".").rsplit(".", 1)[-1]
    assert expected.endswith("Exception")
    assert view.item.last_exception_labels == [expected]


def test_search_highlights_matching_calls_and_counts_them(qtbot, window, grid_trace):
    """Typing a regular expression in the timeline's highlight field: every visible call of a
    matching method is drawn in the search colour (and only those), the count says how many
    methods and calls match (30 chains of 25 calls of Main.chain: 750), and the aggregated views'
    search follows."""
    import re

    from jbgui.ui import colors

    loaded = open_trace(qtbot, window, grid_trace)
    a = loaded.analysis
    for dock in window.findChildren(QDockWidget):
        dock.hide()
    view = window.timeline
    view.axis_choice.setCurrentIndex(1)
    main = a.thread("main")
    method = np.asarray(main.calls.method)
    chain_ids = {m for m in range(a.statics.max_method_id + 1)
                 if re.search(r"main\.chain", a.statics.method_qualified(m), re.IGNORECASE)}
    assert len(chain_ids) == 1
    chains = np.flatnonzero(np.isin(method, list(chain_ids)))
    assert len(chains) == 750
    view.go_to_lane(main.index)
    lane = view.item.lane_of(main.index)
    depth = int(main.calls.depth[chains[0]])
    view.viewbox.setXRange(float(main.calls.first[chains[0]]), float(main.calls.last[chains[-1]]) + 1, padding=0)
    view.viewbox.setYRange(lane.depth0 + depth - 2, lane.depth0 + depth + 26, padding=0)
    view.search.setFocus()
    qtbot.keyClicks(view.search, r"Main\.chain")
    qtbot.wait(20)
    assert view.search_info.text() == "1 methods, 750 calls"
    assert window.aggregated.state.search == r"Main\.chain"
    assert window.aggregated.toolbar.search.text() == r"Main\.chain"
    repaint(view)
    matched = {r for t, r in view.item.last_matched if t == main.index}
    assert matched, "nothing drawn as a match"
    assert all(int(method[r]) in chain_ids for r in matched)
    # every chain call drawn on its own (not merged) in view is drawn as a match
    (vx0, vx1), (vy0, vy1) = view.viewbox.viewRange()
    px = view.viewbox.width() / (vx1 - vx0)
    rects = view.item.lane_of(main.index).timeline.query(vx0, vx1, 1 / px, depth - 2, depth + 26)
    top = lane.depth0 + rects.depth
    shown = {int(r) for r, m, merged, t in zip(rects.row, rects.method, rects.merged, top)
             if int(m) in chain_ids and not merged and vy0 <= t and t + 1 <= vy1}
    assert len(shown) > 600 and shown <= matched
    # the pixels: a matching call in the search colour, its caller (Main.main) faded
    image = view.plot.viewport().grab().toImage()
    ref = CallRef(main.index, int(chains[5]))
    rect = view.item.call_rect(ref)
    corner = view.plot.mapFromScene(view.viewbox.mapViewToScene(QPointF(rect.center().x(), rect.top())))
    pixel = image.pixelColor(corner.x(), corner.y() + 2).name()
    assert pixel == colors.pick(colors.SEARCH_MATCH)
    # the per-invocation call tree gives the same calls the search colour
    from PySide6.QtCore import Qt as _Qt
    tree = window.calltree.model
    chain_index = tree.index_of(CallRef(main.index, int(chains[5])))
    caller_index = tree.index_of(CallRef(main.index, int(main.calls.parent[chains[0]])))
    background = tree.data(chain_index, _Qt.ItemDataRole.BackgroundRole)
    assert background is not None and background.color().name() == colors.pick(colors.SEARCH_MATCH)
    assert tree.data(caller_index, _Qt.ItemDataRole.BackgroundRole) is None
    # a bad expression says so and highlights nothing
    view.search.clear()
    qtbot.keyClicks(view.search, "chain(")
    assert view.search_info.text().startswith("not a regular expression")
    assert view.item.matches is None
    view.search.clear()
    assert view.search_info.text() == "" and view.item.matches is None
    assert tree.data(chain_index, _Qt.ItemDataRole.BackgroundRole) is None
    # typed in the aggregated views' toolbar: the timeline follows
    window.aggregated.toolbar.search.setText("Main.main")
    assert view.search.text() == "Main.main"
    assert view.search_info.text() == "1 methods, 1 calls"
    settle(qtbot)


def test_virtual_threads_have_lanes_of_their_own_said_virtual(qtbot, window, record, newest_jdk, capsys):
    if newest_jdk.release < 21:
        pytest.skip("virtual threads are JDK 21+, and this machine has no such JDK")
    run = record("virtual_threads", newest_jdk, args=["3"])
    assert run.exit_code == 0, run.describe()
    loaded = open_trace(qtbot, window, run.trace_dir)
    view = window.timeline
    titles = {lane.timeline.thread.name: lane.title() for lane in view.item.lanes}
    assert {name for name, title in titles.items() if "·  virtual" in title} == {"vt-0", "vt-1", "vt-2"}
    assert "virtual" not in titles["main"]
    # A click on vt-1's sleepy selects that call, in that thread, and hovering it names it.
    vt1 = loaded.analysis.thread("vt-1")
    ref = CallRef(vt1.index, first_row(loaded.analysis, vt1, "Main.sleepy("))
    view.reveal(ref, zoom=True)
    qtbot.wait(50)
    at = call_pixel(view, ref)
    qtbot.mouseMove(view.plot.viewport(), at)
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(1, 0))
    qtbot.waitUntil(lambda: view.hovered is not None, timeout=2000)
    assert view.hovered == ref and "Main.sleepy(I)I" in view.hover_text
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=at + QPoint(1, 0))
    assert window.selection.call == ref
    # sleepy spans its 20 ms sleep, stamped around the park: its virtual thread was unmounted
    # then, and its frames kept their time.
    start, end = view.item.call_rect(ref).left(), view.item.call_rect(ref).right()
    assert end - start >= 0.019
    assert "Error" not in capsys.readouterr().err
    settle(qtbot)


def test_lanes_are_drawn_zoomed_in_to_a_few_nanoseconds(qtbot, window, exceptions_trace):
    # Qt culls an item by its bounding rectangle in int device pixels: with the whole run as that
    # rectangle, a view a few nanoseconds wide made the run billions of pixels wide and every lane
    # went unpainted (seen as empty lanes around a 1 µs call of a 9 s run).
    loaded = open_trace(qtbot, window, exceptions_trace)
    view = window.timeline
    main = loaded.analysis.thread("main")
    ref = CallRef(main.index, first_row(loaded.analysis, main, "Main.dive("))
    rect = view.item.call_rect(ref)
    run = view.model.t_max - view.model.t_min
    width = 8.0                                          # nanoseconds across the whole plot
    assert run / width * view.viewbox.width() > 2 ** 31  # the run would not fit an int of pixels
    view.viewbox.setXRange(rect.left() + rect.width() / 2 - width / 2, rect.left() + rect.width() / 2 + width / 2,
                           padding=0)
    view.viewbox.setYRange(rect.top() - 2, rect.bottom() + 2, padding=0)
    view.item.last_paint_rects = -1
    image = view.plot.viewport().grab().toImage()
    assert view.item.last_paint_rects > 0
    # The call's rectangle fills the middle of the plot in its colour (not the background).
    middle = image.pixelColor(image.width() // 2, view.plot.mapFromScene(
        view.viewbox.mapViewToScene(rect.center())).y())
    assert middle.saturation() > 40, middle.name()
    settle(qtbot)


@pytest.fixture(scope="module")
def blocking_trace(program_runs, default_jdk) -> Path:
    return recorded(program_runs, default_jdk, "blocking")


def test_a_wait_beside_another_native_says_its_own_time(qtbot, window, blocking_trace):
    """tests/programs/blocking's waitOn: on JDK 17 ``LOCK.wait(left)`` and the loop's
    ``System.nanoTime()`` after it are natives at one event, the wait's stamps'. Hovered with the
    mouse, the wait's bar gives its measured duration, not an interpolated one, and is not
    hatched; the nanoTime lasts under a millisecond (both had the wait's span, hatched, before
    replay told them apart)."""
    from jbgui.model import call_queries as Q

    loaded = open_trace(qtbot, window, blocking_trace)
    a = loaded.analysis
    main = a.thread("main")
    top = first_row(a, main, "Main.waitOn(")
    waits = [r for r in range(top + 1, int(main.calls.end[top])) if a.call_name(main, r).startswith("java.lang.Object.wait")]
    row = waits[-1]
    view, ref = shown_unhatched(qtbot, window, main, row)
    at = call_pixel(view, ref)
    qtbot.mouseMove(view.plot.viewport(), at)
    qtbot.mouseMove(view.plot.viewport(), at + QPoint(1, 0))
    qtbot.waitUntil(lambda: view.hovered == ref, timeout=2000)
    assert "duration " in view.hover_text and "duration ≈" not in view.hover_text, view.hover_text
    after = row + 1
    if a.call_name(main, after).startswith("java.lang.System.nanoTime("):     # JDK 17: at the wait's event
        assert main.calls.first[after] == main.calls.first[row]
        assert float(Q.duration(main, np.array([after]))[0]) < 1e6
    settle(qtbot)
