"""File → Export: the exports of :mod:`jbgui.model.export` (Chrome trace-event JSON for Perfetto,
collapsed stacks for flame graphs, CSV and Parquet tables), with the file name and the options
each format takes, run off the GUI thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
    QPushButton, QSpinBox, QWidget,
)

from jbgui.model import export as X

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
                 threads: list[str], selected_thread: str | None, visible_ms: tuple[float, float] | None):
        super().__init__(parent)
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
        for name in threads:
            self.thread.addItem(name, name)
        if selected_thread is not None and fmt == "chrome":
            self.thread.setCurrentIndex(max(0, self.thread.findData(selected_thread)))
        form.addRow("Threads", self.thread)
        self.visible = self.include = self.depth = self.weight = self.per_thread = None
        self.visible_ms = visible_ms
        if fmt == "chrome":
            self.visible = QCheckBox("only the time range the timeline shows")
            self.visible.setEnabled(visible_ms is not None)
            if visible_ms is not None:
                self.visible.setText(f"only the time range the timeline shows ({visible_ms[0]:.3f} … "
                                     f"{visible_ms[1]:.3f} ms)")
            form.addRow("Time", self.visible)
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
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

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
            include = [p.strip() for p in self.include.text().split(",") if p.strip()]
            return {"filter": X.CallFilter(threads=threads, start_ms=start, end_ms=end, include=include,
                                           max_depth=depth), "truncate": True}
        if self.fmt == "collapsed":
            return {"weight": self.weight.currentText(), "per_thread": self.per_thread.isChecked(),
                    "threads": threads, "max_depth": depth}
        return {"table": self.table, "threads": threads}


def run_export(progress, cancelled, analysis, path: str, fmt: str, options: dict) -> X.ExportResult:
    """A :class:`jbgui.ui.tasks.Task` function."""
    if fmt in ("chrome", "csv", "parquet"):
        options = {**options, "progress": progress}
    return X.export(analysis, path, fmt, cancelled=cancelled, **options)
