""""Only my code" in the per-invocation call tree, driven from the explorer's one toolbar toggle
on a program whose structure is known: ``Main.sortWords`` enters the JDK (``Arrays.sort``), which
calls back into the program through a method reference (a lambda class of ``Main``, which is
mine) (untraced: a hidden class) whose ``compareLengths`` calls ``Integer.compare`` (JDK under my
code under JDK)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from jbgui.model import call_queries as Q
from jbgui.model.scope import Scope
from jbgui.ui.calltree_model import COL_EXCL_BC
from jbgui.ui.format import format_count
from jbgui.ui.main_window import MainWindow
from jbgui.ui.selection import CallRef


@pytest.fixture(scope="module")
def trace(record, default_jdk):
    run = record("aggregate", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


def settle(qtbot):
    from jbgui.ui import tasks

    qtbot.waitUntil(lambda: not tasks._RUNNING, timeout=60_000)
    qtbot.wait(50)


def children(model, index) -> list[tuple[str, int]]:
    """(name, row) of every call the tree shows below ``index`` (fetching them first)."""
    if model.canFetchMore(index):
        model.fetchMore(index)
    out = []
    for r in range(model.rowCount(index)):
        child = model.index(r, 0, index)
        ref = model.call_ref(child)
        if ref is not None:
            out.append((model.call_name(model.slot_of(ref.thread), ref.row), ref.row))
    return out


def test_the_toggle_collapses_jdk_runs_into_the_call_that_entered_them(qtbot, window, trace):
    with qtbot.waitSignal(window.traceLoaded, timeout=120_000) as blocker:
        window.open_trace(trace)
    a = blocker.args[0].analysis
    state = window.aggregated.state
    state.set_only_mine(False)
    main = a.thread("main")
    calls = main.calls
    names = [a.call_name(main, r) for r in range(len(calls))]
    sort = next(r for r, n in enumerate(names) if n.startswith("java.util.Arrays.sort("))
    model = window.calltree.model
    sort_index = model.index_of(CallRef(main.index, sort))
    full = children(model, sort_index)
    assert full and not any("Main" in n for n, _ in full)      # the JDK's sort machinery first

    window.tabs.setCurrentWidget(window.aggregated)
    bar = window.aggregated.toolbar
    qtbot.mouseClick(bar.only_mine, Qt.MouseButton.LeftButton, pos=QPoint(5, bar.only_mine.height() // 2))
    assert state.only_mine and model.mine is not None
    mine = Scope.of_trace(a).method_mask
    # compareLengths' calls (mine, reached through hidden JDK frames and the untraced lambda's
    # Comparator.compare) are Arrays.sort's children now, and show the JDK calls they made
    # (String.length, Integer.compare) as leaves
    sort_index = model.index_of(CallRef(main.index, sort))
    scoped = children(model, sort_index)
    compares = [r for r in range(sort + 1, calls.at("end", sort)) if names[r].startswith("Main.compareLengths(")]
    assert [r for _n, r in scoped] == compares and len(compares) >= 3
    last = model.index(len(scoped) - 1, 0, sort_index)      # the first one also loads a class
    leaves = [n.split("(")[0] for n, _ in children(model, last)]
    assert leaves == ["java.lang.String.length", "java.lang.String.length", "java.lang.Integer.compare"]
    # Arrays.sort's own bytecodes now include the hidden JDK frames' (everything but the lambdas')
    incl = np.asarray(calls.incl_bytecodes, np.int64)
    excl = model.data(model.index(sort_index.row(), COL_EXCL_BC, sort_index.parent()), Qt.ItemDataRole.DisplayRole)
    assert excl == format_count(int(incl[sort] - incl[compares].sum()))
    # a hidden call selected elsewhere shows as the call that stands for it
    hidden = next(r for r in range(sort + 1, calls.at("end", sort)) if not Q.is_shown(calls, r, mine))
    window.selection.select_call(CallRef(main.index, hidden), window.timeline)
    current = window.calltree.current_ref()
    assert current == CallRef(main.index, Q.shown_parent(calls, hidden, mine))
    # the timeline draws the same: compareLengths right below Arrays.sort, and a click there
    # selects it (unscoped, hidden JDK frames lie between them)
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    tl = view.item.lane_of(main.index).timeline
    target = CallRef(main.index, compares[-1])
    assert tl.depth_of(sort) + 1 == tl.depth_of(compares[-1]) < int(calls.depth[compares[-1]])
    view.axis_choice.setCurrentIndex(1)          # events: exact widths
    view.selection.select_call(CallRef(main.index, sort), window.calltree)
    view.item.set_collapsed(view.item.lane_of(main.index), False)
    view.reveal(CallRef(main.index, sort), zoom=True)
    view.reveal(target)               # scrolled down to it
    qtbot.wait(50)
    rect = view.item.call_rect(target)
    point = view.plot.mapFromScene(view.viewbox.mapViewToScene(rect.center()))
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert window.selection.call == target
    # off again: every call
    qtbot.mouseClick(bar.only_mine, Qt.MouseButton.LeftButton, pos=QPoint(5, bar.only_mine.height() // 2))
    assert model.mine is None
    assert children(model, model.index_of(CallRef(main.index, sort))) == full
    assert view.item.lane_of(main.index).timeline.depth_of(compares[-1]) == int(calls.depth[compares[-1]])
    settle(qtbot)
