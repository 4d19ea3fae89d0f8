"""The explorer: PySide6 and pyqtgraph views over what :mod:`jbgui.model` computes.

One file per view (summary_view, timeline_view, calltree_view with its lazy model calltree_model
and its icons calltree_icons, method_view, range_view), the main window (main_window), the run
dialog and console (run_dialog, console), and small shared pieces: selection (the call every view
shows, and the history Back/Forward walk), tasks (work off the GUI thread), loading, colors (the
one palette), format, settings. ``jbgui`` (app.main) is the entry point. Views never parse files and never talk to
each other: they share a :class:`~jbgui.ui.selection.Selection`.
"""
