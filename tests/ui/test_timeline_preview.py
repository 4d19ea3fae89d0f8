"""The timeline before the replay is done (jbgui.ui.timeline_preview) on a real recording: the
threads' lanes with their activity, darker where the replay has come, hover harmless, and gone
once the calls are drawn or the opening failed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from jbgui.model.preview import BUCKETS, preview
from jbgui.ui import colors
from jbgui.ui.main_window import MainWindow
from jbgui.ui.timeline_preview import LANE


@pytest.fixture(scope="module")
def threads_trace(program_runs, default_jdk) -> Path:
    _untraced, run = program_runs("multithread", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture
def window(qtbot):
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    w.tabs.setCurrentWidget(w.timeline)
    return w


def pixel_of(view, x: float, y: float):
    scene = view.viewbox.mapViewToScene(QPointF(x, y))
    return view.plot.mapFromScene(scene)


def busiest(p, lane: int) -> tuple[float, float]:
    """The middle of a lane's busiest bucket, low in its bar (view coordinates)."""
    t = p.threads[lane]
    edges = np.linspace(p.t_min, p.t_max, BUCKETS + 1)
    i = int(np.argmax(t.activity))
    from jbgui.ui.timeline_preview import GAP
    return (edges[i] + edges[i + 1]) / 2, lane * (LANE + GAP) + LANE - 0.1


def test_the_preview_paints_every_thread_and_darkens_what_is_replayed(qtbot, window, threads_trace):
    p = preview(threads_trace)
    view = window.timeline
    view.set_preview(p)
    qtbot.wait(50)
    view.plot.viewport().repaint()
    assert view.preview_item.last_painted_lanes == [t.name for t in p.threads]
    assert "replaying" in view.info.text()
    lane = max(range(len(p.threads)), key=lambda k: p.threads[k].events)
    where = pixel_of(view, *busiest(p, lane))
    image = view.plot.viewport().grab().toImage()
    assert image.pixelColor(where).name() == colors.qcolor(colors.PREVIEW_PENDING).name()
    # the replay has read every stream: the bars are the replayed colour
    view.set_preview_progress(p.total_bytes)
    view.plot.viewport().repaint()
    image = view.plot.viewport().grab().toImage()
    assert image.pixelColor(where).name() == colors.qcolor(colors.PREVIEW_REPLAYED).name()
    # the pointer over it describes nothing and raises nothing
    qtbot.mouseMove(view.plot.viewport(), where)
    qtbot.wait(50)
    assert view.hover_text == ""


def test_the_calls_replace_the_preview(qtbot, window, threads_trace, tmp_path):
    copy = tmp_path / "t"       # no cache: a real replay, with its progress
    shutil.copytree(threads_trace, copy, ignore=shutil.ignore_patterns("analysis"))
    formats = []
    with qtbot.waitSignal(window.traceLoaded, timeout=120_000):
        window.open_trace(copy)
        window.task.progress.connect(lambda done, total: formats.append((done, total, window.progress.format())))
    assert window.timeline.preview_item is None and window.timeline.item is not None
    # replayed, the bar says what comes next rather than standing at 100 %
    done, total, shown = formats[-1]
    assert done == total and shown == "building the timeline", formats[-3:]
    assert any(f.startswith("replaying") for _d, _t, f in formats[:-1]) or len(formats) == 1
    # its replay cached now: opening it again makes no preview (the calls come in well under a
    # second, and painting a preview first would only delay them)
    from jbgui.ui.main_window import _preview_unless_cached
    assert _preview_unless_cached(None, None, copy, False) is None
    other = tmp_path / "u"
    shutil.copytree(threads_trace, other, ignore=shutil.ignore_patterns("analysis"))
    assert _preview_unless_cached(None, None, other, False) is not None
    qtbot.waitUntil(lambda: not __import__("jbgui.ui.tasks", fromlist=["_RUNNING"])._RUNNING, timeout=60_000)


def test_a_failed_opening_leaves_no_preview(qtbot, window, threads_trace, tmp_path):
    copy = tmp_path / "no-static"
    shutil.copytree(threads_trace, copy, ignore=shutil.ignore_patterns("analysis"))
    (copy / "static.xml").unlink()
    with qtbot.waitSignal(window.loadFailed, timeout=60_000):
        window.open_trace(copy)
    qtbot.waitUntil(lambda: window.task is None, timeout=60_000)
    qtbot.wait(100)
    assert window.timeline.preview_item is None
    assert window.timeline.info.text() == "No trace open"
