"""The aggregated views on a recorded program with a known call structure
(tests/programs/aggregate), driven with real mouse and key events: the values they show against
the model, selection linking, only my code, the transform breadcrumb, search and the flame graph's
zoom."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from jbgui.model import merged_tree as MT
from jbgui.model import methods_table as MTab
from jbgui.model import transforms as TR
from jbgui.model.analysis import Analysis
from jbgui.model.method_names import resolve_methods
from jbgui.ui.aggregate_panel import AggregatePanel
from jbgui.ui.flame_view import ROW_HEIGHT
from jbgui.ui.selection import Selection


@pytest.fixture(scope="module")
def analysis(record, default_jdk) -> Analysis:
    run = record("aggregate", default_jdk)
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.fixture
def panel(qtbot, analysis):
    selection = Selection()
    p = AggregatePanel(selection)
    qtbot.addWidget(p)
    p.resize(1400, 800)
    p.show()
    qtbot.waitExposed(p)
    p.set_analysis(analysis)
    # only my code and its prefixes are remembered per program: start each test without them
    p.state.set_only_mine(False)
    p.state.set_rules([], [])
    p.selection = selection
    settle(qtbot, p)
    return p


def settle(qtbot, panel) -> None:
    """Wait for the workers: the tree and every visible view's data computed and shown."""
    qtbot.waitUntil(panel.idle, timeout=60000)


def mid(analysis, spec):
    return resolve_methods(analysis.statics, spec, single=True)[0]


def main_index(analysis) -> int:
    return next(t.index for t in analysis.threads if t.name == "main")


def row_of(model, name_prefix: str) -> int:
    for r in range(model.rowCount()):
        if str(model.value(r, 0)).startswith(name_prefix):
            return r
    raise AssertionError(f"no row {name_prefix}")


def click_row(qtbot, view, index):
    view.scrollTo(index)
    rect = view.visualRect(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_methods_table_shows_the_model_values_and_selects_the_method(qtbot, panel, analysis):
    model = panel.methods.model
    table = MTab.compute(TR.AggregateView(analysis).base(), analysis.statics)
    assert model.rowCount() == len(table)
    r = row_of(model, "Main.leaf(")
    i = table.names.index("Main.leaf(I)I")
    assert model.value(r, 1) == table.columns["calls"][i] == 8
    assert model.value(r, 2) == table.columns["self_bytecodes"][i]
    assert model.value(r, 4) == table.columns["total_bytecodes"][i]
    got = []
    panel.selection.methodSelected.connect(lambda m, s: got.append(m))
    click_row(qtbot, panel.methods.table, model.index(r, 0))
    assert got[-1] == mid(analysis, "Main.leaf")
    settle(qtbot, panel)
    # the butterfly follows the selection: callers a (3 calls) and b (5 calls)
    bf = panel.butterfly
    callers = {bf.callers.topLevelItem(k).text(0).split("(")[0]: bf.callers.topLevelItem(k).text(1)
               for k in range(bf.callers.topLevelItemCount())}
    assert callers == {"Main.a": "3", "Main.b": "5"}


def test_methods_table_sorts_and_filters_by_real_events(qtbot, panel):
    table = panel.methods.table
    header = table.horizontalHeader()
    # click the Calls header: sorted by calls, descending first
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(header.sectionViewportPosition(1) + 10, header.height() // 2))
    model = panel.methods.model
    values = [model.value(r, 1) for r in range(model.rowCount())]
    assert values == sorted(values, reverse=True) or values == sorted(values)
    qtbot.keyClicks(panel.methods.filter, "Main\\.(a|b)\\(")
    names = [model.value(r, 0) for r in range(model.rowCount())]
    assert sorted(n.split("(")[0] for n in names) == ["Main.a", "Main.b"]
    assert panel.methods.count.text().startswith("2 of ")


def test_thread_and_only_my_code_from_the_toolbar(qtbot, panel, analysis):
    bar = panel.toolbar
    assert not bar.only_mine.isChecked()
    bar.thread.setCurrentIndex(bar.thread.findData(main_index(analysis)))
    assert panel.state.thread == main_index(analysis)
    qtbot.mouseClick(bar.only_mine, Qt.MouseButton.LeftButton, pos=QPoint(5, bar.only_mine.height() // 2))
    assert panel.state.only_mine
    settle(qtbot, panel)
    expected = TR.AggregateView(analysis).tree((TR.Transform("only-my-code"),), main_index(analysis))
    table = MTab.compute(expected, analysis.statics)
    model = panel.methods.model
    assert model.rowCount() == len(table)
    names = {model.value(r, 0) for r in range(model.rowCount())}
    assert "java.util.Arrays.sort([Ljava/lang/Object;Ljava/util/Comparator;)V" in names
    assert not any(n.startswith("java.util.TimSort") for n in names)
    # an include prefix typed into the toolbar makes java.util mine: TimSort comes back
    bar.include.setFocus()
    qtbot.keyClicks(bar.include, "java.util")
    qtbot.keyClick(bar.include, Qt.Key.Key_Return)
    settle(qtbot, panel)
    names = {model.value(r, 0) for r in range(model.rowCount())}
    assert any(n.startswith("java.util.TimSort") for n in names)


def test_merged_tree_view_matches_the_model_and_transforms_undo(qtbot, panel, analysis):
    panel.tabs.setCurrentWidget(panel.merged)
    panel.toolbar.thread.setCurrentIndex(panel.toolbar.thread.findData(main_index(analysis)))
    settle(qtbot, panel)
    model = panel.merged.model
    tree = TR.AggregateView(analysis).base(main_index(analysis))
    roots = [model.index(r, 0) for r in range(model.rowCount())]
    assert sorted(model.node(i) for i in roots) == sorted(tree.roots.tolist())
    # find main → a → leaf by walking the model
    main = next(i for i in roots if model.data(i).startswith("Main.main"))
    a = next(model.index(r, 0, main) for r in range(model.rowCount(main))
             if model.data(model.index(r, 0, main)).startswith("Main.a("))
    leaf = model.index(0, 0, a)
    assert model.data(leaf).startswith("Main.leaf")
    assert model.data(model.index(0, 4, a)) == "3"
    node = model.node(a)
    assert model.values(node)[2] == int(tree.inclusive()[node])
    # merge Main.a through the state (what the context menu does): leaf under main with 8 calls
    panel.state.push(TR.Transform("merge", mid(analysis, "Main.a")))
    panel.state.push(TR.Transform("merge", mid(analysis, "Main.b")))
    settle(qtbot, panel)
    roots = [model.index(r, 0) for r in range(model.rowCount())]
    main = next(i for i in roots if model.data(i).startswith("Main.main"))
    leaf = next(model.index(r, 0, main) for r in range(model.rowCount(main))
                if model.data(model.index(r, 0, main)).startswith("Main.leaf"))
    assert model.data(model.index(leaf.row(), 4, main)) == "8"
    # the breadcrumb: two steps; clicking "Undo" drops the last one
    buttons = [panel.toolbar.crumbs.itemAt(k).widget() for k in range(panel.toolbar.crumbs.count())
               if panel.toolbar.crumbs.itemAt(k).widget() is not None]
    assert [b.text() for b in buttons][:3] == ["Complete tree", "› merge Main.a", "› merge Main.b"]
    undo = next(b for b in buttons if b.text() == "Undo")
    qtbot.mouseClick(undo, Qt.MouseButton.LeftButton)
    assert len(panel.state.transforms) == 1
    settle(qtbot, panel)
    buttons = [panel.toolbar.crumbs.itemAt(k).widget() for k in range(panel.toolbar.crumbs.count())
               if panel.toolbar.crumbs.itemAt(k).widget() is not None]
    complete = next(b for b in buttons if b.text() == "Complete tree")
    qtbot.mouseClick(complete, Qt.MouseButton.LeftButton)
    assert panel.state.transforms == []


def test_callers_view_lists_the_paths_that_called_leaf(qtbot, panel, analysis):
    panel.toolbar.thread.setCurrentIndex(panel.toolbar.thread.findData(main_index(analysis)))
    panel.tabs.setCurrentWidget(panel.callers)
    settle(qtbot, panel)
    model = panel.callers.model
    leaf = next(model.index(r, 0) for r in range(model.rowCount()) if model.data(model.index(r, 0)).startswith("Main.leaf"))
    assert model.data(model.index(leaf.row(), 3)) == "8"
    view = panel.callers.view
    view.scrollTo(leaf)
    view.setCurrentIndex(leaf)
    qtbot.keyClick(view, Qt.Key.Key_Right)     # expand with the keyboard
    assert view.isExpanded(leaf)
    rows = {model.data(model.index(r, 0, leaf)).split("(")[0]: model.data(model.index(r, 3, leaf))
            for r in range(model.rowCount(leaf))}
    assert rows == {"Main.a": "3", "Main.b": "5"}


def test_search_highlights_and_counts(qtbot, panel, analysis):
    panel.toolbar.thread.setCurrentIndex(panel.toolbar.thread.findData(main_index(analysis)))
    settle(qtbot, panel)
    qtbot.keyClicks(panel.toolbar.search, "Main\\.(leaf|fact)")
    tree = TR.AggregateView(analysis).base(main_index(analysis))
    leaf, fact = mid(analysis, "Main.leaf"), mid(analysis, "Main.fact")
    contexts = len(tree.nodes_of(leaf)) + len(tree.nodes_of(fact))
    assert panel.toolbar.matches.text() == f"2 methods, {contexts} contexts match"
    model = panel.methods.model
    r = row_of(model, "Main.leaf(")
    assert model.data(model.index(r, 0), Qt.ItemDataRole.BackgroundRole) is not None
    assert model.data(model.index(row_of(model, "Main.a("), 0), Qt.ItemDataRole.BackgroundRole) is None
    qtbot.keyClicks(panel.toolbar.search, "(")
    assert panel.toolbar.matches.text().startswith("not a regular expression")


def test_flame_graph_zooms_on_click_and_goes_back(qtbot, panel, analysis):
    panel.toolbar.thread.setCurrentIndex(panel.toolbar.thread.findData(main_index(analysis)))
    panel.tabs.setCurrentWidget(panel.flame)
    qtbot.waitExposed(panel.flame.canvas)
    settle(qtbot, panel)
    canvas = panel.flame.canvas
    lay = canvas.layout_
    tree = lay.tree
    assert lay.total == TR.AggregateView(analysis).base(main_index(analysis)).total()
    main = int(tree.nodes_of(mid(analysis, "Main.main"))[0])
    x, w, d = lay.frame(main)
    pos = QPoint(int((x + w / 2) / lay.total * canvas.width()), d * ROW_HEIGHT + ROW_HEIGHT // 2)
    assert canvas.node_at(pos.toPointF()) == main
    got = []
    panel.selection.methodSelected.connect(lambda m, s: got.append(m))
    qtbot.mouseMove(canvas, pos)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=pos)
    assert canvas.zoom == main
    assert got[-1] == mid(analysis, "Main.main")
    drawn = canvas.rects()
    assert drawn["x"].min() == 0 and (drawn["x"] + drawn["width"]).max() == w
    assert "Main.main" in panel.flame.status.text() or panel.flame.crumbs.count() >= 2
    # main fills the width: its widest child is one row below, where the layout put it
    kids = tree.children(main)
    a = int(kids[np.argmax(lay.width[kids])])
    ax, aw, ad = lay.frame(a)
    pos_a = QPoint(int((ax - x + aw / 2) / w * canvas.width()), (ad - d) * ROW_HEIGHT + ROW_HEIGHT // 2)
    assert canvas.node_at(pos_a.toPointF()) == a
    assert "total" in canvas.describe(a) and f"{int(tree.calls[a])} calls" in canvas.describe(a)
    # breadcrumb "All" goes back
    all_button = panel.flame.crumbs.itemAt(0).widget()
    assert all_button.text() == "All"
    qtbot.mouseClick(all_button, Qt.MouseButton.LeftButton)
    assert canvas.zoom == -1
    # weight by calls: the layout's total is the number of calls
    panel.toolbar.weight.setCurrentText("calls")
    settle(qtbot, panel)
    assert panel.flame.canvas.layout_.total == len(analysis.thread(main_index(analysis)).calls)
    # flip: the root row is drawn at the bottom
    qtbot.mouseClick(panel.flame.flip, Qt.MouseButton.LeftButton, pos=QPoint(5, panel.flame.flip.height() // 2))
    assert canvas.flipped
    roots = canvas.layout_.tree.roots
    root = int(roots[np.argmax(canvas.layout_.width[roots])])
    rx, rw, _ = canvas.layout_.frame(root)
    bottom = QPoint(int((rx + rw / 2) / canvas.layout_.total * canvas.width()), canvas.height() - ROW_HEIGHT // 2)
    assert canvas.node_at(bottom.toPointF()) == root
    image = canvas.grab().toImage()
    assert image.pixelColor(bottom.x(), bottom.y()) != image.pixelColor(bottom.x(), 2)


def test_only_my_code_and_prefixes_are_remembered_for_the_program(qtbot, analysis):
    first = AggregatePanel(Selection())
    qtbot.addWidget(first)
    first.set_analysis(analysis)
    first.state.set_rules(["com.example"], ["com.example.gen"])
    first.state.set_only_mine(True)
    second = AggregatePanel(Selection())
    qtbot.addWidget(second)
    second.set_analysis(analysis)
    assert second.state.only_mine
    assert second.toolbar.only_mine.isChecked()
    assert second.toolbar.include.text() == "com.example"
    assert second.toolbar.exclude.text() == "com.example.gen"
    second.state.set_only_mine(False)
    second.state.set_rules([], [])


def test_methods_table_keeps_the_cost_columns_in_view_when_the_tab_is_narrow(qtbot, panel):
    """In a narrow tab the name column gives way to the numbers that answer "which methods cost
    most" (it was a fixed 420 pixels: only names showed); in a wide one it is 420 pixels again."""
    from jbgui.ui import methods_table_view as MV

    table = panel.methods.table
    header = table.horizontalHeader()

    def right_edge(column):
        return header.sectionViewportPosition(column) + header.sectionSize(column)

    panel.resize(760, 800)
    qtbot.waitUntil(lambda: header.sectionSize(0) < MV.NAME_WIDTH, timeout=5000)
    assert table.viewport().width() >= MV.NAME_MIN_WIDTH + header.sectionSize(1) + header.sectionSize(2)
    assert header.sectionSize(0) >= MV.NAME_MIN_WIDTH
    assert right_edge(2) <= table.viewport().width()      # calls and own bytecodes in view
    panel.resize(2400, 800)
    qtbot.waitUntil(lambda: header.sectionSize(0) == MV.NAME_WIDTH, timeout=5000)
    assert right_edge(5) <= table.viewport().width()
