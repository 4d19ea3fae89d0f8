"""Put the main window in a given state for ``jbgui --screenshot``: which view is in front,
which call is selected, how far the timeline is zoomed. A block view (``cfg``, ``path``,
``variants``, ``loops``, ``exceptions``, ``discovery``) is shown in its dock, floated to the
window's size: :func:`target` is then what the screenshot shows."""

from __future__ import annotations

import numpy as np

from jbgui.ui.selection import CallRef


def find_call(window, spec: str) -> CallRef | None:
    """``THREAD:ROW`` or ``THREAD:Class.method`` (the first call of a method whose qualified
    name contains the text) → a call; THREAD is a name or an index."""
    analysis = window.loaded.analysis
    thread_key, _, what = spec.partition(":")
    try:
        thread = analysis.thread(int(thread_key)) if thread_key.isdigit() else analysis.thread(thread_key)
    except KeyError:
        return None
    if what.isdigit():
        row = int(what)
        return CallRef(thread.index, row) if 0 <= row < len(thread.calls) else None
    st = analysis.statics
    wanted = [mid for mid in range(1, st.max_method_id + 1) if st.m_name[mid] and what in st.method_qualified(mid)]
    if not wanted or not len(thread.calls):
        return None
    rows = np.flatnonzero(np.isin(np.asarray(thread.calls.method), wanted))
    return CallRef(thread.index, int(rows[0])) if len(rows) else None


BLOCK_VIEWS = ("cfg", "path", "variants", "loops", "exceptions", "discovery")


def target(window, view: str):
    """The widget a screenshot of ``view`` shows: the block views' dock, or the whole window."""
    return window.block_views.dock if view in BLOCK_VIEWS else window


def prepare_view(window, view: str, select: str | None, zoom: float | None) -> str | None:
    """Arrange ``window``; returns a problem to report, or None."""
    if view in BLOCK_VIEWS:
        return _block_view(window, view, select)
    if select:
        ref = find_call(window, select)
        if ref is None:
            return f"--select {select!r}: no such call in this trace"
        window.selection.select_call(ref, None)
        if zoom is not None and window.loaded is not None:
            tl = window.loaded.timeline
            lane = tl.thread_timeline(ref.thread)
            start, end = lane.span(ref.row)
            center = (start + end) / 2
            half = (tl.t_max - tl.t_min) * zoom / 2
            window.timeline.viewbox.setXRange(center - half, center + half, padding=0)
    # The view in front gets the room: the docks share the width with the centre.
    from PySide6.QtCore import Qt

    width = window.width()
    shares = {"summary": (0.22, 0.25), "timeline": (0.22, 0.25), "calltree": (0.45, 0.22), "method": (0.25, 0.38)}
    tree_share, method_share = shares.get(view, (0.22, 0.25))
    window.tree_dock.show()
    window.method_dock.show()
    window.resizeDocks([window.tree_dock, window.method_dock], [int(width * tree_share), int(width * method_share)],
                       Qt.Orientation.Horizontal)
    window.tabs.setCurrentWidget(window.summary if view == "summary" else window.timeline)
    if select and view != "summary" and window.selection.call is not None:
        window.timeline.reveal(window.selection.call)
    return None


def _block_view(window, view: str, select: str | None) -> str | None:
    """One block view in front, its dock floated to the window's size; with ``--select``, the call
    (the CFG with that call's own counts, the variants and loops of its method)."""
    panel = window.block_views
    dock = panel.dock
    dock.setFloating(True)
    dock.resize(window.size())
    dock.show()
    panel.setCurrentWidget(getattr(panel, view))
    if select:
        ref = find_call(window, select)
        if ref is None:
            return f"--select {select!r}: no such call in this trace"
        window.selection.select_call(ref, None)
        if view == "cfg":
            method = int(window.loaded.analysis.thread(ref.thread).calls.method[ref.row])
            panel.cfg.show_method(method, ref)
    elif view in ("cfg", "path", "variants", "loops"):
        return f"--view {view} needs --select (a call, or THREAD:Class.method)"
    return None
