"""File → Export: the exports of :mod:`jbgui.model.export` (Chrome trace-event JSON for Perfetto,
collapsed stacks for flame graphs, CSV and Parquet tables), with the file name and the options
each format takes, run off the GUI thread.

The dialog estimates the output's size as the options change (:mod:`jbgui.model.export_estimate`)
and warns when it is large; a Chrome export offers the event cap and the timeline's selected
range."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
    QPushButton, QSpinBox, QWidget,
)

from jbgui.model import export as X
from jbgui.model import export_estimate as EE
from jbgui.ui import colors
from jbgui.ui.tasks import Task

# Menu entries: (label, format, table or weight, file suffix).
ENTRIES = (
    ("Chrome trace (Perfetto, chrome://tracing)…", "chrome", None, ".json"),
    ("Collapsed stacks (flame graphs, speedscope)…", "collapsed", None, ".folded"),
    ("Calls as CSV…", "csv", "calls", ".csv"),
    ("Blocks as CSV…", "csv", "blocks", ".csv"),
    ("Calls as Parquet…", "parquet", "calls", ".parquet"),
    ("Blocks as Parquet…", "parquet", "blocks", ".parquet"),
)


class ExportDialog(QDialog):
    """The target file and the options of one export format."""

    def __init__(self, parent: QWidget | None, fmt: str, table: str | None, suffix: str, trace: Path,
                 threads: list[str] | list[tuple[int, str]], selected_thread: str | int | None,
                 visible_ms: tuple[float, float] | None,
                 analysis=None, range_ms: tuple[float, float] | None = None):
        super().__init__(parent)
        self.analysis = analysis
        self.range_ms = range_ms
        self.warn_bytes = EE.WARN_BYTES
        self.estimate: EE.Estimate | None = None
        self._estimate_task: Task | None = None
        self.fmt, self.table, self.suffix = fmt, table, suffix
        self.setWindowTitle(f"Export {fmt}" + (f" ({table})" if table else ""))
        form = QFormLayout(self)
        default = trace.parent / f"{trace.name}-{table or fmt}{suffix}"
        self.path = QLineEdit(str(default))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("File", row)
        self.thread = QComboBox()
        self.thread.addItem("all threads", None)
        for entry in threads:
            # (index, name): two threads may share a name, the index tells them apart
            if isinstance(entry, tuple):
                index, name = entry
                self.thread.addItem(f"{name} #{index}", int(index))
            else:
                self.thread.addItem(entry, entry)
        if selected_thread is not None and fmt == "chrome":
            self.thread.setCurrentIndex(max(0, self.thread.findData(selected_thread)))
        form.addRow("Threads", self.thread)
        self.visible = self.include = self.depth = self.weight = self.per_thread = None
        self.visible_ms = visible_ms
        self.range = self.cap = None
        if fmt == "chrome":
            self.visible = QCheckBox("only the time range the timeline shows")
            self.visible.setEnabled(visible_ms is not None)
            if visible_ms is not None:
                self.visible.setText(f"only the time range the timeline shows ({visible_ms[0]:.3f} … "
                                     f"{visible_ms[1]:.3f} ms)")
            form.addRow("Time", self.visible)
            self.range = QCheckBox("only the range selected in the timeline")
            self.range.setEnabled(range_ms is not None)
            if range_ms is not None:
                self.range.setText(f"only the range selected in the timeline ({range_ms[0]:.3f} … "
                                   f"{range_ms[1]:.3f} ms)")
                self.range.setChecked(True)
            self.range.toggled.connect(lambda on: on and self.visible.setChecked(False))
            self.visible.toggled.connect(lambda on: on and self.range.setChecked(False))
            form.addRow("", self.range)
            self.cap = QSpinBox()
            self.cap.setRange(0, 2_000_000_000)
            self.cap.setSingleStep(100_000)
            self.cap.setGroupSeparatorShown(True)
            self.cap.setValue(X.DEFAULT_MAX_EVENTS)
            self.cap.setSpecialValueText("no cap")
            self.cap.setToolTip("Keep the first this many events (0: every event)")
            form.addRow("Event cap", self.cap)
            self.include = QLineEdit()
            self.include.setPlaceholderText("e.g. com.example.  (comma-separated; empty: every class)")
            form.addRow("Classes", self.include)
        if fmt in ("chrome", "collapsed"):
            self.depth = QSpinBox()
            self.depth.setRange(-1, 100_000)
            self.depth.setValue(-1)
            self.depth.setSpecialValueText("no limit")
            form.addRow("Maximum depth", self.depth)
        if fmt == "collapsed":
            self.weight = QComboBox()
            self.weight.addItems(["bytecodes", "calls", "blocks"])
            form.addRow("Weight", self.weight)
            self.per_thread = QCheckBox("thread name as the root frame")
            form.addRow("", self.per_thread)
        note = {"chrome": "Open it in ui.perfetto.dev (Open trace file) or chrome://tracing.",
                "collapsed": "Input of flamegraph.pl and speedscope.app.",
                "csv": "Columns are described in docs/exports.md.",
                "parquet": "Needs pyarrow; columns are described in docs/exports.md."}[fmt]
        form.addRow(QLabel(note))
        self.size_label = QLabel("")
        self.size_label.setWordWrap(True)
        form.addRow("Size", self.size_label)
        for box in (self.visible, self.range, self.per_thread):
            if box is not None:
                box.toggled.connect(self.update_estimate)
        self.thread.currentIndexChanged.connect(self.update_estimate)
        if self.cap is not None:
            self.cap.valueChanged.connect(self.update_estimate)
        self.update_estimate()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def update_estimate(self, *_args) -> None:
        """Estimate the output's size for the options shown, off the GUI thread."""
        if self.analysis is None:
            self.size_label.setText("")
            return
        if self._estimate_task is not None:
            self._estimate_task.cancel()
        threads = [self.thread.currentData()] if self.thread.currentData() is not None else []
        start = end = None
        if self.fmt == "chrome":
            window = self.range_ms if self.range is not None and self.range.isChecked() else \
                self.visible_ms if self.visible is not None and self.visible.isChecked() else None
            if window is not None:
                start, end = window
        cap = (self.cap.value() or None) if self.cap is not None else None
        self.size_label.setText("estimating …")
        task = Task(lambda _p, _c: EE.estimate(self.analysis, self.fmt, threads, self.table or "calls", start, end,
                                               cap), name="estimate")
        task.succeeded.connect(lambda e, t=task: self._estimated(t, e))
        task.failed.connect(lambda message: self.size_label.setText(f"no estimate: {message}"))
        self._estimate_task = task
        task.start()

    def _estimated(self, task: Task, estimate: EE.Estimate) -> None:
        if task is not self._estimate_task:
            return
        self._estimate_task = None
        self.estimate = estimate
        text = estimate.describe()
        if estimate.written >= self.warn_bytes:
            advice = "narrow the threads or the time range" + (", or set an event cap" if self.cap is not None
                                                               and not self.cap.value() else "")
            text = (f"<b style='color:{colors.pick(colors.ERROR_TEXT)}'>{text}: a large file.</b> "
                    f"To write less, {advice}.")
        self.size_label.setText(text)

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(), f"*{self.suffix}")
        if path:
            self.path.setText(path)

    def options(self) -> dict:
        """Keyword options of :func:`jbgui.model.export.export` for this format."""
        threads = [self.thread.currentData()] if self.thread.currentData() is not None else []
        depth = self.depth.value() if self.depth is not None and self.depth.value() >= 0 else None
        if self.fmt == "chrome":
            start = end = None
            if self.visible is not None and self.visible.isChecked() and self.visible_ms is not None:
                start, end = self.visible_ms
            if self.range is not None and self.range.isChecked() and self.range_ms is not None:
                start, end = self.range_ms
            include = [p.strip() for p in self.include.text().split(",") if p.strip()]
            return {"filter": X.CallFilter(threads=threads, start_ms=start, end_ms=end, include=include,
                                           max_depth=depth), "truncate": True,
                    "max_events": (self.cap.value() or None) if self.cap is not None else X.DEFAULT_MAX_EVENTS}
        if self.fmt == "collapsed":
            return {"weight": self.weight.currentText(), "per_thread": self.per_thread.isChecked(),
                    "threads": threads, "max_depth": depth}
        return {"table": self.table, "threads": threads}


def run_export(progress, cancelled, analysis, path: str, fmt: str, options: dict) -> X.ExportResult:
    """A :class:`jbgui.ui.tasks.Task` function."""
    if fmt in ("chrome", "csv", "parquet"):
        options = {**options, "progress": progress}
    return X.export(analysis, path, fmt, cancelled=cancelled, **options)
