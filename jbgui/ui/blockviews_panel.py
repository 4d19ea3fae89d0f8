"""The block views in one dock of the explorer: control-flow graph, path of the selected call,
variants, loops, exception flow and code discovery, all following the shared selection.

:func:`install` is the whole of the main window's part: it adds the dock, gives the views each
opened trace, and links blocks with the method view (a block clicked in the graph or reached by a
path step scrolls the method view to it; a ``block:N`` link clicked in the method view outlines
the block in the graph)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QTabWidget

from jbgui.ui.cfg_view import CfgView
from jbgui.ui.discovery_view import DiscoveryView
from jbgui.ui.exceptions_view import ExceptionsView
from jbgui.ui.loops_view import LoopsView
from jbgui.ui.path_view import PathView
from jbgui.ui.variants_view import VariantsView


class BlockViewsPanel(QTabWidget):
    """The six block views as tabs."""

    def __init__(self, selection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.setDocumentMode(True)
        self.cfg = CfgView(selection)
        self.path = PathView(selection)
        self.variants = VariantsView(selection)
        self.loops = LoopsView(selection)
        self.exceptions = ExceptionsView(selection)
        self.discovery = DiscoveryView(selection)
        for view, title in ((self.cfg, "Control flow"), (self.path, "Path"), (self.variants, "Variants"),
                            (self.loops, "Loops"), (self.exceptions, "Exceptions"), (self.discovery, "Discovery")):
            self.addTab(view, title)

    def set_analysis(self, analysis) -> None:
        for view in (self.cfg, self.path, self.variants, self.loops, self.exceptions, self.discovery):
            view.set_analysis(analysis)
        if self.currentWidget() is self.exceptions:
            self.exceptions.ensure()


def install(window) -> BlockViewsPanel:
    """Add the block views to ``window`` (a :class:`jbgui.ui.main_window.MainWindow`)."""
    panel = BlockViewsPanel(window.selection)
    dock = QDockWidget("Block views", window)
    dock.setObjectName("dock-blockviews")
    dock.setWidget(panel)
    # Below the method view, whose blocks the graph and the path follow: side by side with it, and
    # never taking height from the timeline's lanes (a bottom dock left 18 threads no room).
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    method_dock = getattr(window, "method_dock", None)
    if method_dock is not None:
        window.splitDockWidget(method_dock, dock, Qt.Orientation.Vertical)
    panel.dock = dock

    # Every way a trace is opened or closed goes through set_trace (loading, runs, closing, tests);
    # wrapping it here keeps the main window's part to one line.
    original_set_trace = window.set_trace

    def set_trace(loaded) -> None:
        original_set_trace(loaded)
        panel.set_analysis(loaded.analysis if loaded is not None else None)
    window.set_trace = set_trace

    method_view = getattr(window, "method_view", None)
    if method_view is not None:
        def follow_block(method: int, block: int, source) -> None:
            info = getattr(method_view, "info", None)
            if source is not method_view and info is not None and info.method == method:
                method_view.browser.scrollToAnchor(f"b{block}")
        window.selection.blockSelected.connect(follow_block)

        def method_link(url) -> None:
            kind, _, value = url.toString().partition(":")
            if kind == "block" and value.isdigit() and panel.cfg.method:
                panel.cfg.highlight(int(value), center=True)
        method_view.browser.anchorClicked.connect(method_link)
    return panel
