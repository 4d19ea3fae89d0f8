"""Put the main window in a given state for ``jbgui --screenshot``: which view is in front,
which call is selected, how far the timeline is zoomed."""

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


def prepare_view(window, view: str, select: str | None, zoom: float | None) -> str | None:
    """Arrange ``window``; returns a problem to report, or None."""
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
