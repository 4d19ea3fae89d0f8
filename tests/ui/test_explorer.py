"""The explorer on real traces: each view shows the right calls, counts and markers; the selection
stays linked across views; bad traces show an error and keep the window alive; ``--screenshot``.
The call tree's own behaviour is tested in test_calltree.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from jbgui.model.analysis import Flag
from jbgui.ui.main_window import MainWindow
from jbgui.ui.selection import CallRef


@pytest.fixture(scope="module")
def exceptions_trace(record, default_jdk) -> Path:
    run = record("exception_paths", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def threads_trace(record, default_jdk) -> Path:
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def native_trace(record, default_jdk) -> Path:
    run = record("native_calls", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    return w


def open_trace(qtbot, window, path, timeout=120_000):
    with qtbot.waitSignal(window.traceLoaded, timeout=timeout) as blocker:
        window.open_trace(path)
    return blocker.args[0]


def first_row(analysis, thread, prefix: str) -> int:
    calls = thread.calls
    for row in range(len(calls)):
        if analysis.call_name(thread, row).startswith(prefix):
            return row
    raise AssertionError(f"no call {prefix} in {thread.name}")


def wait_tasks(qtbot, view, timeout=60_000):
    qtbot.waitUntil(lambda: not view._tasks, timeout=timeout)


# ---------------------------------------------------------------------- opening


def test_opening_a_trace_fills_every_view(qtbot, window, threads_trace):
    loaded = open_trace(qtbot, window, threads_trace)
    a = loaded.analysis
    assert window.windowTitle().startswith(threads_trace.name)
    # summary: every thread with its call count
    data = window.summary.data
    assert [t["name"] for t in data["threads"]] == [t.name for t in a.threads]
    assert data["threads"][0]["calls"] == len(a.threads[0].calls)
    html = window.summary.browser.toPlainText()
    assert "worker-0" in html and "Hottest methods" in html
    # timeline: a lane per thread, rectangles painted
    window.tabs.setCurrentWidget(window.timeline)
    item = window.timeline.item
    assert [lane.timeline.thread.index for lane in item.lanes] == [t.index for t in a.threads]
    window.timeline.plot.viewport().repaint()
    assert item.last_paint_rects > 0
    # call tree: the threads at the top
    model = window.calltree.model
    assert model.rowCount() == len(a.threads)
    assert model.data(model.index(0, 0)).startswith(a.threads[0].name)


def test_a_bad_trace_shows_an_error_and_the_window_stays(qtbot, window, tmp_path, exceptions_trace):
    with qtbot.waitSignal(window.loadFailed, timeout=30_000) as blocker:
        window.open_trace(tmp_path / "nothing-here")
    assert "no such trace directory" in blocker.args[0]
    assert window.banner.isVisible() and "nothing-here" in window.banner.label.text()
    # not a trace at all
    (tmp_path / "empty").mkdir()
    with qtbot.waitSignal(window.loadFailed, timeout=30_000) as blocker:
        window.open_trace(tmp_path / "empty")
    assert "trace" in blocker.args[0]
    # a trace.json that is not JSON: a clear message naming the file
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "trace.json").write_text("{not json")
    with qtbot.waitSignal(window.loadFailed, timeout=30_000) as blocker:
        window.open_trace(broken)
    assert "trace.json" in blocker.args[0] and "Traceback" not in blocker.args[0]
    # a static.xml cut off in the middle: what is valid opens, the problem is shown
    cut = tmp_path / "cut"
    cut.mkdir()
    for name in ("trace.json", "threads.jsonl"):
        (cut / name).write_bytes((exceptions_trace / name).read_bytes())
    xml = (exceptions_trace / "static.xml").read_bytes()
    (cut / "static.xml").write_bytes(xml[: len(xml) // 2])
    (cut / "events").mkdir()
    with qtbot.waitSignal(window.traceLoaded, timeout=60_000):
        window.open_trace(cut)
    assert window.banner.isVisible() and "static.xml" in window.banner.label.text()
    loaded = open_trace(qtbot, window, exceptions_trace)
    assert loaded.analysis.threads
    assert not window.banner.isVisible()


def test_a_killed_programs_trace_opens_with_its_problems_shown(qtbot, window, start_program, default_jdk):
    import os
    import signal
    import time

    process, trace = start_program("long_running", default_jdk)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not any((trace / "events").glob("*.jbt")):
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    loaded = open_trace(qtbot, window, trace)
    main = loaded.analysis.thread("main")
    assert (np.asarray(main.calls.flags) & Flag.TRUNCATED).any()
    assert "cut off" in window.summary.browser.toPlainText()


def test_a_trace_with_untraced_virtual_threads_says_so_in_the_summary(qtbot, window, record, newest_jdk):
    if newest_jdk.release < 21:
        pytest.skip("virtual threads are JDK 21+, and this machine has no such JDK")
    run = record("virtual_threads", newest_jdk, virtual="0")
    assert run.exit_code == 0, run.describe()
    loaded = open_trace(qtbot, window, run.trace_dir)
    assert any("virtual threads" in p for p in loaded.analysis.problems)
    qtbot.mouseClick(window.tabs.tabBar(), Qt.MouseButton.LeftButton,
                     pos=window.tabs.tabBar().tabRect(window.tabs.indexOf(window.summary)).center())
    assert window.tabs.currentWidget() is window.summary
    assert "virtual threads, which were not traced" in window.summary.browser.toPlainText()


# ---------------------------------------------------------------------- selection


def test_selection_is_linked_across_views(qtbot, window, exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    main = a.thread("main")
    row = first_row(a, main, "Main.dive(")
    ref = CallRef(main.index, row)
    # chosen in the call tree
    tree = window.calltree
    index = tree.model.index_of(ref)
    tree.tree.setCurrentIndex(index)
    assert window.selection.call == ref
    assert window.timeline.item.selected == ref
    assert window.method_view.info is not None and window.method_view.info.name == "dive"
    # chosen in the timeline by a click on the call's rectangle
    window.tabs.setCurrentWidget(window.timeline)
    other = first_row(a, main, "Main.sameFrame(")
    window.timeline.reveal(CallRef(main.index, other), zoom=True)
    qtbot.wait(50)
    rect = window.timeline.item.call_rect(CallRef(main.index, other))
    vb = window.timeline.viewbox
    scene = vb.mapViewToScene(rect.center())
    view_pos = window.timeline.plot.mapFromScene(scene)
    qtbot.mouseClick(window.timeline.plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(view_pos.x()),
                                                                                             int(view_pos.y())))
    assert window.selection.call == CallRef(main.index, other)
    assert tree.current_ref() == CallRef(main.index, other)
    assert window.method_view.info.name == "sameFrame"


def test_summary_links_open_the_method_view(qtbot, window, exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    hottest = window.summary.data["hottest"][0]
    from PySide6.QtCore import QUrl

    window.summary._link(QUrl(f"method:{hottest['method']}"))
    assert window.method_view.info.method == hottest["method"]
    assert window.method_view.call is None


# ---------------------------------------------------------------------- timeline


def test_timeline_markers_are_the_replayed_exceptions(qtbot, window, exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    item = window.timeline.item
    lane = next(i for i, l in enumerate(item.lanes) if l.timeline.thread.name == "main")
    marks = item._marks[lane]
    main = loaded.analysis.thread("main")
    assert len(marks["throw_t"]) == len(main.exceptions) > 5
    assert len(marks["loads"]) == len(main.class_loads)


def test_timeline_zoom_pan_and_keys(qtbot, window, threads_trace):
    open_trace(qtbot, window, threads_trace)
    window.tabs.setCurrentWidget(window.timeline)
    view = window.timeline
    (x0, x1), _ = view.viewbox.viewRange()
    view.zoom(0.5)
    (y0, y1), _ = view.viewbox.viewRange()
    assert (y1 - y0) == pytest.approx((x1 - x0) / 2, rel=1e-6)
    view.pan(0.2)
    (z0, z1), _ = view.viewbox.viewRange()
    assert z0 == pytest.approx(y0 + 0.2 * (y1 - y0), rel=1e-6)
    qtbot.keyClick(view.plot, Qt.Key.Key_Home)
    (h0, h1), _ = view.viewbox.viewRange()
    assert h1 - h0 == pytest.approx((x1 - x0), rel=0.05)


def test_hover_describes_the_call(qtbot, window, exceptions_trace):
    from jbgui.ui.format import describe_call

    loaded = open_trace(qtbot, window, exceptions_trace)
    main = loaded.analysis.thread("main")
    row = first_row(loaded.analysis, main, "Main.dive(")
    text = describe_call(loaded.analysis, CallRef(main.index, row), loaded.timeline)
    assert "Main.dive(II)I" in text and "left by an exception" not in text.split("<i>")[0]
    assert "depth" in text and "bytecodes" in text


# ---------------------------------------------------------------------- method view


def test_method_view_counts_for_the_run_and_for_one_call(qtbot, window, exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    main = a.thread("main")
    row = first_row(a, main, "Main.dive(")
    ref = CallRef(main.index, row)
    window.selection.select_call(ref, None)
    view = window.method_view
    wait_tasks(qtbot, view)
    info = view.info
    st = a.statics
    blocks = list(st.method_blocks(info.method))
    assert [b.gb for b in info.blocks] == blocks
    # whole run: the analyzer's block counts
    view.whole.setChecked(True)
    assert view.current_counts() == {gb: int(a.block_counts[gb]) for gb in blocks}
    # this call: its own blocks, callees left out: they add up to its own block count
    view.this_call.setChecked(True)
    own = view.current_counts()
    calls = main.calls
    children = calls.children(row)
    expected_own = int(calls.incl_blocks[row]) - int(np.asarray(calls.incl_blocks)[children].sum())
    assert sum(own.values()) == expected_own > 0
    assert all(own[gb] <= a.block_counts[gb] for gb in own)
    text = view.browser.toPlainText()
    assert "#0" in text and "block executions (this call)" in text


def test_method_view_lists_bytecode_from_the_class_files(qtbot, window, exceptions_trace):
    """The trace has no instruction listing: the bridge reads the class files (the program's and
    the JDK's) and the blocks show their instructions."""
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    assert not a.statics.instructions
    main = a.thread("main")
    for prefix, opcode in (("Main.dive(", "invokestatic Main.dive"), ("java.lang.String.charAt(", "invokevirtual")):
        row = first_row(a, main, prefix)
        window.selection.select_call(CallRef(main.index, row), None)
        wait_tasks(qtbot, window.method_view)
        text = window.method_view.browser.toPlainText()
        assert opcode in text, text[:500]
        assert "no bytecode listing" not in text


def test_method_view_call_sites_go_to_the_callee(qtbot, window, exceptions_trace):
    loaded = open_trace(qtbot, window, exceptions_trace)
    a = loaded.analysis
    main = a.thread("main")
    row = first_row(a, main, "Main.dive(")
    window.selection.select_call(CallRef(main.index, row), None)
    view = window.method_view
    children = main.calls.children(row)
    made = {int(main.calls.call_site[c]) for c in children}
    site = next(s for b in view.info.blocks for s in b.sites if s.site in made)
    from PySide6.QtCore import QUrl

    view._link(QUrl(f"site:{site.site}"))
    child = window.selection.call
    assert child is not None and int(main.calls.parent[child.row]) == row
    assert int(main.calls.call_site[child.row]) == site.site
    # a site this call never used goes to the callee method
    unused = next((s for b in view.info.blocks for s in b.sites if s.site not in made and s.target_method), None)
    if unused is not None:
        view._link(QUrl(f"site:{unused.site}"))
        assert window.selection.call is None and view.info.method == unused.target_method


# ---------------------------------------------------------------------- command line


def test_screenshot_command(tmp_path, exceptions_trace):
    out = tmp_path / "shot.png"
    env = {**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-m", "jbgui.ui.app", str(exceptions_trace), "--screenshot", str(out),
                             "--select", "main:Main.dive", "--view", "method", "--size", "1200x800"],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert image.width() == 1200 and image.height() == 800
    missing = subprocess.run([sys.executable, "-m", "jbgui.ui.app", str(tmp_path / "none"), "--screenshot",
                              str(tmp_path / "x.png")], capture_output=True, text=True, timeout=300, env=env)
    assert missing.returncode == 2 and "no such trace directory" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_file_export_writes_a_chrome_trace_of_the_visible_range(qtbot, window, exceptions_trace, tmp_path,
                                                                 monkeypatch):
    import json

    from jbgui.ui.export_dialog import ExportDialog

    open_trace(qtbot, window, exceptions_trace)
    out = tmp_path / "visible.json"

    def accept(dialog):
        dialog.path.setText(str(out))
        dialog.visible.setChecked(True)
        return ExportDialog.DialogCode.Accepted

    monkeypatch.setattr(ExportDialog, "exec", accept)
    window.timeline.zoom(0.25)
    window.export("chrome", None, ".json")
    qtbot.waitUntil(lambda: out.exists() and "Exported" in window.statusBar().currentMessage(), timeout=60_000)
    data = json.loads(out.read_text())
    events = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    (x0, x1), _ = window.timeline.viewbox.viewRange()
    assert events
    assert all(e["ts"] < x1 / 1e3 and e["ts"] + e["dur"] > max(x0, 0) / 1e3 - 1 for e in events)
