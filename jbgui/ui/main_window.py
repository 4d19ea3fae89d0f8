"""The explorer's main window: the summary and the timeline in the centre, the call tree and the
method view beside them, the run console below; menus, loading with progress, errors as messages.

The window owns the :class:`Selection` and the :class:`LoadedTrace`; views receive both and never
talk to each other. Loading runs as a :class:`Task`; until it ends the old trace stays on screen.
"""

from __future__ import annotations

import html
import os

from pathlib import Path

from PySide6.QtCore import QByteArray, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget, QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMessageBox, QProgressBar, QPushButton,
    QTabWidget, QToolButton, QVBoxLayout, QWidget,
)

from jbgui import __version__
from jbgui.model.analysis import Analysis, user_cache_base
from jbgui.model.preview import preview as make_preview
from jbgui.ui import colors
from jbgui.ui import settings as S
from jbgui.ui.calltree_view import CallTreeView
from jbgui.ui.console import ConsolePane, RunController
from jbgui.ui.run_config import RunConfig, RunConfigStore
from jbgui.ui.run_dialog import RunDialog
from jbgui.ui.export_dialog import ENTRIES, ExportDialog, run_export
from jbgui.ui.loading import LoadedTrace, load_trace
from jbgui.ui.method_view import MethodView
from jbgui.ui.range_view import RangeView
from jbgui.ui.selection import Selection
from jbgui.ui.summary_view import SummaryView
from jbgui.ui.tasks import Task, _message
from jbgui.ui.timeline_view import TimelineView

STATE_VERSION = 1


class MessageBanner(QWidget):
    """An error or warning line above the views, dismissable; the window stays usable."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        row.addWidget(self.label, 1)
        row.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.setAutoFillBackground(True)
        self.hide()

    def show_message(self, text: str, error: bool = True) -> None:
        color, border = colors.BANNER["error" if error else "warning"]
        self.setStyleSheet(f"MessageBanner {{ background: {color}; border-bottom: 2px solid {border}; }}"
                           f"QLabel {{ color: {colors.BANNER_TEXT}; }}")
        self.label.setText(text)
        self.show()


class MainWindow(QMainWindow):
    """The explorer."""

    traceLoaded = Signal(object)     # LoadedTrace
    loadFailed = Signal(str)

    def __init__(self):
        super().__init__()
        self.setWindowTitle("jbgui")
        self.setAcceptDrops(True)
        self.selection = Selection(self)
        self.loaded: LoadedTrace | None = None
        self.task: Task | None = None
        self.preview_task: Task | None = None     # the preview of the trace being opened
        self.loading_path: Path | None = None

        self.summary = SummaryView(self.selection)
        self.timeline = TimelineView(self.selection)
        self.calltree = CallTreeView(self.selection)
        self.method_view = MethodView(self.selection)
        self.range_view = RangeView(self.selection)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.summary, "Summary")
        self.tabs.addTab(self.timeline, "Timeline")
        self.banner = MessageBanner()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.banner)
        column.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self.tree_dock = self._dock("Call tree", "calltree", self.calltree, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.method_dock = self._dock("Method", "method", self.method_view, Qt.DockWidgetArea.RightDockWidgetArea)
        self.runner = RunController(self)
        self.console = ConsolePane(self.runner)
        self.console_dock = self._dock("Console", "console", self.console, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.console_dock.hide()
        self.range_dock = self._dock("Range", "range", self.range_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.range_dock.hide()
        self.timeline.rangeSelected.connect(self._range_selected)
        self.runner.started.connect(self._run_started)
        self.runner.finished.connect(self._run_finished)
        self.runner.failed.connect(lambda message: self.banner.show_message(f"<b>The program could not start</b>"
                                                                           f"<br>{message}"))
        self.run_store: RunConfigStore | None = None

        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loading)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.cancel_button)
        self.progress.hide()
        self.cancel_button.hide()
        self.run_trace_offered: Path | None = None
        self.open_run_button = QPushButton()
        self.open_run_button.clicked.connect(self._open_offered_run_trace)
        self.statusBar().addPermanentWidget(self.open_run_button)
        self.open_run_button.hide()

        # --- block views (issue 15): CFG, path, variants, loops, exceptions, discovery -------------
        from jbgui.ui.blockviews_panel import install as install_block_views
        self.block_views = install_block_views(self)
        # --- end of block views ------------------------------------------------------------------

        self._add_aggregated_views()
        self._make_menus()
        # The SQL panel (docs/sql.md): a query over the open trace; a row naming a call selects it.
        from jbgui.ui.sql_view import SqlView
        self.sql_view = SqlView(self.selection, lambda: self.loaded.analysis if self.loaded else None)
        self.sql_dock = self._dock("SQL", "sql", self.sql_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.sql_dock.hide()
        self._action(self.view_menu, "S&QL", lambda: self._show_dock(self.sql_dock), "Ctrl+6")
        self._make_navigation()
        self.selection.callSelected.connect(self._call_selected)
        self.selection.methodSelected.connect(self._method_selected)
        self.resize(1500, 950)
        self._restore_layout()

    # ------------------------------------------------------------------ construction

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{name}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _scope_changed(self) -> None:
        """Only my code (the aggregated views' toggle and prefixes) in the call tree and timeline too."""
        state = self.aggregated.state
        mine = state.view.scope.method_mask if state.only_mine and state.view is not None else None
        self.calltree.set_scope(mine)
        self.timeline.set_scope(mine)

    def _cache_menu(self, menu) -> None:
        """Where replays are cached: beside each trace (the default) or in the user cache
        directory (for read-only traces, or to keep trace directories clean); a setting, applied
        from the next open."""
        group = QActionGroup(menu)
        self.cache_beside = menu.addAction("Beside the trace (TRACE/analysis)")
        self.cache_user = menu.addAction(f"In the user cache directory ({user_cache_base()})")
        forced = bool(os.environ.get("JBGUI_CACHE_DIR"))
        for action, user in ((self.cache_beside, False), (self.cache_user, True)):
            action.setCheckable(True)
            group.addAction(action)
            action.setChecked(user == (forced or S.cache_in_user_dir()))
            action.setEnabled(not forced)
            action.triggered.connect(lambda _checked=False, on=user: self._set_cache_location(on))
        tip = ("JBGUI_CACHE_DIR is set: caches go there" if forced else
               "Applies from the next open (File → Reload); a read-only trace is always cached in the user directory")
        for action in (self.cache_beside, self.cache_user):
            action.setToolTip(tip)
        menu.setToolTipsVisible(True)

    def _set_cache_location(self, user: bool) -> None:
        S.set_cache_in_user_dir(user)
        where = f"in {user_cache_base()}" if user else "beside each trace"
        self.statusBar().showMessage(f"Analysis caches will be kept {where} from the next open (File → Reload)",
                                     10000)

    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _make_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self._action(file_menu, "&Open trace…", self.choose_trace, QKeySequence.StandardKey.Open,
                     "Open a trace directory")
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self.reload_action = self._action(file_menu, "Re&load", self.reload, "Ctrl+Shift+L")
        self.export_menu = file_menu.addMenu("&Export")
        for label, fmt, table, suffix in ENTRIES:
            action = self.export_menu.addAction(label)
            action.triggered.connect(lambda _c=False, f=fmt, t=table, x=suffix: self.export(f, t, x))
        self.close_action = self._action(file_menu, "&Close trace", self.close_trace, QKeySequence.StandardKey.Close)
        self._cache_menu(file_menu.addMenu("Analysis &cache"))
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.run_menu = bar.addMenu("&Run")
        self._action(self.run_menu, "Run &traced…", self.run_traced, "Ctrl+R", "Run a program under the recorder")
        self.rerun_action = self._action(self.run_menu, "Run &again", self.run_again, "Ctrl+Shift+R",
                                         "Run the last configuration again")
        self.configs_menu = self.run_menu.addMenu("Saved &configurations")
        self.configs_menu.aboutToShow.connect(self._fill_configs)
        self.stop_action = self._action(self.run_menu, "&Stop", self.runner.stop, "Ctrl+.",
                                        "End the program; its trace is kept")
        view_menu = bar.addMenu("&View")
        self._action(view_menu, "&Summary", lambda: self.tabs.setCurrentWidget(self.summary), "Ctrl+1")
        self._action(view_menu, "&Timeline", lambda: self.tabs.setCurrentWidget(self.timeline), "Ctrl+2")
        self._action(view_menu, "Call &tree", lambda: self._show_dock(self.tree_dock), "Ctrl+3")
        self._action(view_menu, "&Method", lambda: self._show_dock(self.method_dock), "Ctrl+4")
        self._action(view_menu, "C&onsole", lambda: self._show_dock(self.console_dock), "Ctrl+5")
        view_menu.addSeparator()
        self._action(view_menu, "&Whole run", self.timeline.show_all, "Ctrl+0")
        self._action(view_menu, "&Reset layout", self.reset_layout)
        self.view_menu = view_menu
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "&Keyboard shortcuts", self.show_shortcuts, "F1")
        self._action(help_menu, "&About jbgui", self.show_about)

    def _make_navigation(self) -> None:
        """Back and Forward over the selection's history (Alt+Left, Alt+Right), in a toolbar and
        the View menu."""
        bar = self.addToolBar("Navigation")
        bar.setObjectName("toolbar-navigation")
        self.back_action = QAction("◀ Back", self)
        self.back_action.setShortcut(QKeySequence("Alt+Left"))
        self.back_action.setToolTip("Back to the previous call or method (Alt+Left)")
        self.back_action.triggered.connect(self.selection.back)
        self.forward_action = QAction("Forward ▶", self)
        self.forward_action.setShortcut(QKeySequence("Alt+Right"))
        self.forward_action.setToolTip("Forward again (Alt+Right)")
        self.forward_action.triggered.connect(self.selection.forward)
        for action in (self.back_action, self.forward_action):
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            bar.addAction(action)
            self.view_menu.addAction(action)

        def update() -> None:
            self.back_action.setEnabled(self.selection.can_go_back())
            self.forward_action.setEnabled(self.selection.can_go_forward())
        self.selection.historyChanged.connect(update)
        update()

    def _show_dock(self, dock: QDockWidget) -> None:
        dock.show()
        dock.raise_()
        dock.widget().setFocus()

    # ------------------------------------------------------------------ aggregated views (issue 11)

    def _add_aggregated_views(self) -> None:
        """The methods table, merged tree, callers, butterfly and flame graph, in one tab."""
        from jbgui.ui.aggregate_panel import AggregatePanel
        self.aggregated = AggregatePanel(self.selection)
        self.tabs.addTab(self.aggregated, "Aggregated")
        # One search for the explorer: typed in the timeline or in the aggregated views' toolbar,
        # highlighted in both.
        state = self.aggregated.state
        self.timeline.searchEdited.connect(state.set_search)
        state.searchChanged.connect(lambda: self.timeline.set_search(state.search))
        state.searchChanged.connect(lambda: self.calltree.highlight(state.search))
        # and one scope: "only my code" applies to the per-invocation call tree too
        state.changed.connect(self._scope_changed)

    # ------------------------------------------------------------------ opening traces

    def choose_trace(self) -> None:
        start = str(self.loaded.path.parent) if self.loaded else str(Path.cwd())
        path = QFileDialog.getExistingDirectory(self, "Open a trace directory", start)
        if path:
            self.open_trace(path)

    def open_trace(self, path: str | Path) -> None:
        """Replay (or load the cached replay of) the trace at ``path`` in the background."""
        path = Path(path)
        if self.task is not None:
            self.task.cancel()
        self.loading_path = path
        self.banner.hide()
        self.statusBar().showMessage(f"Opening {path} …")
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.show()
        task = Task(load_trace, path, S.cache_in_user_dir(), name="load")
        if self.loaded is None:
            # nothing shown: the timeline paints the threads' activity while the replay runs
            preview = Task(_preview_unless_cached, path, S.cache_in_user_dir(), name="preview")
            preview.succeeded.connect(lambda got, t=task: self._preview_ready(t, got))
            self.preview_task = preview     # held: a task no one holds is gone before its signal arrives
            preview.start()
        task.progress.connect(self._load_progress)
        task.succeeded.connect(lambda loaded, t=task: self._loaded(t, loaded))
        task.failed.connect(lambda message, t=task: self._load_failed(t, message))
        task.done.connect(lambda t=task: self._load_done(t))
        self.task = task
        task.start()

    def reload(self) -> None:
        if self.loaded is not None:
            self.open_trace(self.loaded.path)

    def cancel_loading(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.statusBar().showMessage("Opening cancelled", 5000)

    def _preview_ready(self, task: Task, preview) -> None:
        if preview is not None and task is self.task and self.loaded is None:
            self.timeline.set_preview(preview)

    def _load_progress(self, done: int, total: int) -> None:
        self.timeline.set_preview_progress(done)
        if total and done >= total:
            # replayed: the timeline's levels and the call summary come next (seconds on a big trace)
            self.progress.setRange(0, 0)
            self.progress.setFormat("building the timeline")
            return
        self._show_progress(done, total, "replaying")

    def _show_progress(self, done: int, total: int, what: str) -> None:
        if total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * done / total))
            self.progress.setFormat(f"{what} %p%")

    def _loaded(self, task: Task, loaded: LoadedTrace) -> None:
        if task is not self.task:
            return
        try:
            self.set_trace(loaded)
        except Exception as error:  # noqa: BLE001 - a view that cannot show this trace: the banner says so
            self.set_trace(None)
            self._load_failed(task, f"a view cannot show this trace: {_message(error)}")
            return
        S.remember_trace(loaded.path)
        note = " (cached replay)" if loaded.analysis.from_cache else ""
        self.statusBar().showMessage(f"Opened {loaded.path} in {loaded.seconds:.2f} s{note}", 10000)
        if loaded.problems:
            shown = "<br>".join(html.escape(p) for p in loaded.problems[:5])
            more = f"<br>… and {len(loaded.problems) - 5} more" if len(loaded.problems) > 5 else ""
            self.banner.show_message(f"<b>This trace has problems</b> (what is valid is shown):<br>{shown}{more}",
                                     error=False)
        self.traceLoaded.emit(loaded)

    def _load_failed(self, task: Task, message: str) -> None:
        if task is not self.task:
            return
        self.banner.show_message(f"<b>Cannot open {html.escape(str(self.loading_path))}</b><br>"
                                 f"{html.escape(message)}")
        self.statusBar().showMessage("Opening failed", 10000)
        self.loadFailed.emit(message)

    def _load_done(self, task: Task) -> None:
        if task is self.task:
            self.task = None
            self.progress.hide()
            self.cancel_button.hide()
            if self.loaded is None:
                self.timeline.set_preview(None)      # the opening failed or was cancelled

    def set_trace(self, loaded: LoadedTrace | None) -> None:
        """Show ``loaded`` in every view (None: close the trace)."""
        self.loaded = loaded
        self.selection.clear()
        self.summary.set_trace(loaded)
        self.timeline.set_model(loaded.timeline if loaded else None, loaded.analysis if loaded else None)
        self.calltree.set_analysis(loaded.analysis if loaded else None)
        self.method_view.set_trace(loaded)
        self.range_view.set_trace(loaded.analysis if loaded else None)
        self.aggregated.set_analysis(loaded.analysis if loaded else None)
        self.setWindowTitle(f"{loaded.path.name} — jbgui" if loaded else "jbgui")
        if loaded is not None:
            self.tabs.setCurrentWidget(self.summary)

    def close_trace(self) -> None:
        self.set_trace(None)

    def export(self, fmt: str, table: str | None, suffix: str) -> None:
        """File → Export: ask for the file and options, then export off the GUI thread."""
        if self.loaded is None:
            self.banner.show_message("Open a trace first: there is nothing to export.", error=False)
            return
        a = self.loaded.analysis
        visible = None
        if self.loaded.timeline.has_clock and self.timeline.item is not None:
            (x0, x1), _ = self.timeline.viewbox.viewRange()
            visible = (max(x0, 0.0) / 1e6, x1 / 1e6)
        selected = self.selection.call.thread if self.selection.call is not None else None
        chosen = None
        if self.timeline.selected_range is not None and self.timeline.model is not None and \
                self.timeline.model.has_clock:
            chosen = (max(self.timeline.selected_range[0], 0.0) / 1e6, self.timeline.selected_range[1] / 1e6)
        dialog = ExportDialog(self, fmt, table, suffix, self.loaded.path, [(t.index, t.name) for t in a.threads],
                              selected, visible, analysis=a, range_ms=chosen)
        if dialog.exec() != ExportDialog.DialogCode.Accepted:
            return
        path = dialog.path.text().strip()
        task = Task(run_export, a, path, fmt, dialog.options(), name="export")
        self.progress.setRange(0, 0)
        self.progress.setFormat("exporting")
        self.progress.show()
        self.statusBar().showMessage(f"Exporting to {path} …")
        task.progress.connect(lambda done, total: self._show_progress(done, total, "exporting"))
        task.succeeded.connect(self._exported)
        task.failed.connect(lambda message: self.banner.show_message(f"<b>Export failed</b><br>{message}"))
        task.done.connect(self.progress.hide)
        self._export_task = task
        task.start()

    def _exported(self, result) -> None:
        what = {"chrome": "events", "collapsed": "stacks", "csv": "rows", "parquet": "rows"}.get(result.format, "rows")
        self.statusBar().showMessage(f"Exported {result.rows:,} {what} to {result.path}", 15000)
        if result.warnings:
            self.banner.show_message("<b>Export finished with warnings</b><br>" + "<br>".join(result.warnings),
                                     error=False)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        items = S.recent_traces()
        if not items:
            self.recent_menu.addAction("(none)").setEnabled(False)
        for path in items:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _checked=False, p=path: self.open_trace(p))

    # ------------------------------------------------------------------ running programs

    def store(self) -> RunConfigStore:
        if self.run_store is None:
            self.run_store = RunConfigStore()
            if self.run_store.problem:
                self.banner.show_message(self.run_store.problem, error=False)
        return self.run_store

    def run_traced(self) -> None:
        """Run → Run traced…: edit a configuration, then run it."""
        config = RunDialog.ask(self, self.store())
        if config is not None:
            self.run_config(config)

    def run_again(self) -> None:
        configs = self.store().configs
        if configs:
            self.run_config(configs[0])
        else:
            self.run_traced()

    def run_config(self, config: RunConfig) -> bool:
        """Run a configuration (most recently used first in the saved ones); its trace opens by
        itself when the program ends."""
        self.banner.hide()
        if self.run_store is not None or (S.config_dir() / "run-configs.json").exists():
            self.store().save(config)
        return self.runner.start(config)

    def _fill_configs(self) -> None:
        self.configs_menu.clear()
        configs = self.store().configs
        if not configs:
            self.configs_menu.addAction("(none)").setEnabled(False)
        for config in configs:
            action = self.configs_menu.addAction(config.label())
            action.triggered.connect(lambda _c=False, c=config: self.run_config(c))

    def _run_started(self, config) -> None:
        self.console_dock.show()
        self.console_dock.raise_()
        self.statusBar().showMessage(f"Running {config.label()} …")

    def _run_finished(self, recording) -> None:
        summary = recording.summary
        if summary.status is None:
            self.banner.show_message(f"<b>No trace was recorded</b> (exit status {recording.exit_status}): "
                                     f"{summary.problem or 'see the console'}")
            return
        if self.loaded is not None or self.task is not None:
            # A trace is open (or opening): the user may be reading it; ask before replacing it.
            self.offer_run_trace(recording.trace_dir)
            return
        self.open_trace(recording.trace_dir)
        if recording.exit_status != 0:
            # Shown after open_trace, which clears the banner: the program failed, and its trace
            # (of what ran before it failed) is what opens.
            self.banner.show_message(f"<b>The program exited with status {recording.exit_status}</b>; its output is "
                                     "in the console, its trace opens.", error=False)

    def offer_run_trace(self, trace_dir) -> None:
        """A run ended while a trace is open: offer its trace in the status bar instead of opening it."""
        self.run_trace_offered = Path(trace_dir)
        self.open_run_button.setText(f"Open the run's trace ({self.run_trace_offered.name})")
        self.open_run_button.show()
        self.statusBar().showMessage(f"The run ended; its trace is {self.run_trace_offered}", 30000)

    def _open_offered_run_trace(self) -> None:
        self.open_run_button.hide()
        if self.run_trace_offered is not None:
            self.open_trace(self.run_trace_offered)
            self.run_trace_offered = None

    # ------------------------------------------------------------------ selection

    def _call_selected(self, ref, source) -> None:
        if ref is not None and source is not self.timeline and self.tabs.currentWidget() is self.summary:
            self.tabs.setCurrentWidget(self.timeline)

    def _range_selected(self, start: float, stop: float) -> None:
        self.range_view.show_range(start, stop, use_clock=self.timeline.model is not None and
                                   self.timeline.model.has_clock)
        if stop > start:      # nan when cleared
            self.range_dock.show()
            self.range_dock.raise_()

    def _method_selected(self, method_id: int, source) -> None:
        self.method_dock.show()
        self.method_dock.raise_()

    # ------------------------------------------------------------------ drag and drop

    def dragEnterEvent(self, event) -> None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and urls[0].isLocalFile() and Path(urls[0].toLocalFile()).is_dir():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            self.open_trace(urls[0].toLocalFile())
            event.acceptProposedAction()

    # ------------------------------------------------------------------ layout and help

    def _restore_layout(self) -> None:
        s = S.settings()
        geometry = s.value("window/geometry")
        state = s.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            self.restoreState(state, STATE_VERSION)
        self._default_state = None
        # Only a geometry restored from the settings is fitted (not one a caller set, such as
        # --screenshot --size, which may be larger than the screen on purpose).
        self._restored_size = None
        if isinstance(geometry, QByteArray):
            self.fit_screen()
            self._restored_size = self.size()

    def fit_screen(self) -> None:
        """Keep the window on its screen: a geometry saved on a taller screen would put the
        status bar (and the window's lower edge) out of reach."""
        screen = self.screen()
        if screen is None:
            return
        room = screen.availableGeometry()
        extra_w = max(self.frameGeometry().width() - self.width(), 0)
        extra_h = max(self.frameGeometry().height() - self.height(), 0)
        width = min(self.width(), room.width() - extra_w)
        height = min(self.height(), room.height() - extra_h)
        if (width, height) != (self.width(), self.height()):
            self.resize(width, height)
        frame = self.frameGeometry()
        x = min(max(frame.left(), room.left()), room.right() - frame.width() + 1)
        y = min(max(frame.top(), room.top()), room.bottom() - frame.height() + 1)
        if (x, y) != (frame.left(), frame.top()):
            self.move(x, y)

    def save_layout(self) -> None:
        s = S.settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(STATE_VERSION))
        s.sync()

    def reset_layout(self) -> None:
        for dock, area in ((self.tree_dock, Qt.DockWidgetArea.LeftDockWidgetArea),
                           (self.method_dock, Qt.DockWidgetArea.RightDockWidgetArea)):
            dock.setFloating(False)
            self.addDockWidget(area, dock)
            dock.show()
        # the call tree's number columns need some 520 px to stay in view
        self.resizeDocks([self.tree_dock, self.method_dock], [max(self.width() * 36 // 100, 520), self.width() * 28 // 100],
                         Qt.Orientation.Horizontal)

    def closeEvent(self, event) -> None:
        self.save_layout()
        if self.task is not None:
            self.task.cancel()
        if self.runner.running():
            self.runner.stop()
        super().closeEvent(event)

    def show_shortcuts(self) -> None:
        QMessageBox.information(self, "Keyboard shortcuts", SHORTCUTS_HTML)

    def show_about(self) -> None:
        QMessageBox.about(self, "About jbgui",
                          f"<b>jbgui {__version__}</b><p>Records Java programs basic block by basic block "
                          "(the JBInsTrace design) and explores the recordings.</p>")

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not getattr(self, "_sized", False):
            self._sized = True
            QTimer.singleShot(0, self._first_show)

    def _first_show(self) -> None:
        if self._restored_size is not None and self.size() == self._restored_size:
            self.fit_screen()       # again: the frame's size is known now
        if S.settings().value("window/state") is None:
            self.reset_layout()


SHORTCUTS_HTML = """<table cellpadding='3'>
<tr><td><b>Ctrl+O</b></td><td>open a trace</td></tr>
<tr><td><b>Ctrl+R</b> / <b>Ctrl+Shift+R</b></td><td>run a program traced / run it again</td></tr>
<tr><td><b>Ctrl+.</b></td><td>stop the running program (its trace is kept)</td></tr>
<tr><td><b>Alt+← / Alt+→</b></td><td>back / forward through the calls and methods chosen</td></tr>
<tr><td><b>Ctrl+1 … 5</b></td><td>summary, timeline, call tree, method view, console</td></tr>
<tr><td><b>Ctrl+0</b> / <b>Home</b></td><td>timeline: the whole run</td></tr>
<tr><td><b>wheel</b>, <b>+</b> / <b>-</b></td><td>timeline: zoom in time</td></tr>
<tr><td><b>Shift+wheel</b>, drag</td><td>timeline: scroll lanes, pan</td></tr>
<tr><td><b>← →</b></td><td>timeline: pan</td></tr>
<tr><td><b>F</b></td><td>timeline: zoom to the selected call</td></tr>
<tr><td><b>Shift+drag</b>, <b>R</b> / <b>Esc</b></td><td>timeline: select a range (of the selected call) / clear it</td></tr>
<tr><td><b>↑</b></td><td>timeline: select the caller</td></tr>
<tr><td><b>Ctrl+F</b></td><td>call tree: find a method</td></tr>
<tr><td><b>Ctrl+E</b> / <b>Ctrl+N</b></td><td>call tree: next exception / native call</td></tr>
</table>"""


def _preview_unless_cached(_progress, _cancelled, path: Path, user_cache: bool):
    """The timeline's preview of the trace at ``path`` (jbgui.model.preview), None when its replay
    is cached: then the calls are there in well under a second, and painting a preview first
    only delays them."""
    if Analysis.is_cached(path, user_cache):
        return None
    return make_preview(path)
