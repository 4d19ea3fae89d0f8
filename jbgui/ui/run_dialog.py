"""Run → Run traced…: a form for a :class:`RunConfig`, with the saved configurations beside it.
OK stays disabled, with the reason shown, until the configuration can run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QGroupBox, QHBoxLayout, QLabel,
    QLineEdit, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget,
)

from jbgui.ui.run_config import RunConfig, RunConfigStore, find_jdks


class RunDialog(QDialog):
    """Edit a configuration; :meth:`ask` returns it (saved) or None."""

    def __init__(self, store: RunConfigStore, initial: RunConfig | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.store = store
        self.setWindowTitle("Run traced")
        self.resize(900, 560)

        self.saved = QListWidget()
        self.saved.setMaximumWidth(220)
        for config in store.configs:
            item = QListWidgetItem(config.label())
            item.setData(Qt.ItemDataRole.UserRole, config)
            self.saved.addItem(item)
        self.saved.currentItemChanged.connect(self._pick)
        delete = QPushButton("Delete")
        delete.clicked.connect(self._delete)
        left = QVBoxLayout()
        left.addWidget(QLabel("Saved configurations"))
        left.addWidget(self.saved, 1)
        left.addWidget(delete)

        self.name = QLineEdit()
        self.name.setPlaceholderText("(the main class's name)")
        self.main = QLineEdit()
        self.main.setPlaceholderText("com.example.Main, or path/to/app.jar")
        jar = QPushButton("Jar…")
        jar.clicked.connect(self._choose_jar)
        main_row = QHBoxLayout()
        main_row.addWidget(self.main, 1)
        main_row.addWidget(jar)
        self.classpath = QLineEdit()
        self.classpath.setPlaceholderText("build/classes:lib/dep.jar (':'-separated, relative to the working directory)")
        add_cp = QPushButton("Add…")
        add_cp.clicked.connect(self._add_classpath)
        cp_row = QHBoxLayout()
        cp_row.addWidget(self.classpath, 1)
        cp_row.addWidget(add_cp)
        self.args = QLineEdit()
        self.args.setPlaceholderText("program arguments, as in a shell")
        self.jvm_options = QLineEdit()
        self.jvm_options.setPlaceholderText("-Xmx1g -Dkey=value")
        self.cwd = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._choose_cwd)
        cwd_row = QHBoxLayout()
        cwd_row.addWidget(self.cwd, 1)
        cwd_row.addWidget(browse)
        self.jdk_home = QComboBox()
        self.jdk_home.addItem("java on PATH", "")
        for label, home in find_jdks():
            self.jdk_home.addItem(label, home)
        self.traces_dir = QLineEdit()
        self.traces_dir.setPlaceholderText("traces  (in the working directory)")

        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Program", main_row)
        form.addRow("Class path", cp_row)
        form.addRow("Arguments", self.args)
        form.addRow("JVM options", self.jvm_options)
        form.addRow("Working directory", cwd_row)
        form.addRow("JDK", self.jdk_home)
        form.addRow("Traces go to", self.traces_dir)

        recorder = QGroupBox("Recorder")
        rform = QFormLayout(recorder)
        self.include = QLineEdit()
        self.include.setPlaceholderText("file of class prefixes to trace, one per line (java/lang)")
        self.exclude = QLineEdit()
        self.exclude.setPlaceholderText("file of class prefixes to leave untraced")
        self.trace_jdk = QCheckBox("trace JDK classes too")
        self.level = QComboBox()
        self.level.addItems(["block", "method"])
        self.bba = QComboBox()
        self.bba.addItems(["default", "precise"])
        self.mode = QComboBox()
        self.mode.addItem("one stream per thread (2)", 2)
        self.mode.addItem("one shared stream (1)", 1)
        self.instructions = QCheckBox("list each block's instructions in the trace")
        rform.addRow("Include", self.include)
        rform.addRow("Exclude", self.exclude)
        rform.addRow("", self.trace_jdk)
        rform.addRow("Level", self.level)
        rform.addRow("Basic blocks", self.bba)
        rform.addRow("Trace mode", self.mode)
        rform.addRow("", self.instructions)

        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c62828")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Run")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        right = QVBoxLayout()
        right.addLayout(form)
        right.addWidget(recorder)
        right.addWidget(self.message)
        right.addStretch(1)
        right.addWidget(self.buttons)
        layout = QHBoxLayout(self)
        layout.addLayout(left)
        layout.addLayout(right, 1)

        for widget in (self.name, self.main, self.classpath, self.args, self.jvm_options, self.cwd, self.traces_dir,
                       self.include, self.exclude):
            widget.textChanged.connect(self._validate)
        self.jdk_home.currentIndexChanged.connect(self._validate)
        self.set_config(initial or (store.configs[0] if store.configs else RunConfig()))

    # ------------------------------------------------------------------ the form

    def set_config(self, c: RunConfig) -> None:
        self.name.setText(c.name)
        self.main.setText(c.main)
        self.classpath.setText(":".join(c.classpath))
        self.args.setText(c.args)
        self.jvm_options.setText(c.jvm_options)
        self.cwd.setText(c.cwd)
        index = self.jdk_home.findData(c.java_home)
        if index < 0 and c.java_home:
            self.jdk_home.addItem(c.java_home, c.java_home)
            index = self.jdk_home.count() - 1
        self.jdk_home.setCurrentIndex(max(index, 0))
        self.traces_dir.setText(c.traces_dir)
        self.include.setText(c.include)
        self.exclude.setText(c.exclude)
        self.trace_jdk.setChecked(c.jdk)
        self.level.setCurrentText(c.level)
        self.bba.setCurrentText(c.bba)
        self.mode.setCurrentIndex(max(self.mode.findData(c.mode), 0))
        self.instructions.setChecked(c.instructions)
        self._validate()

    def config(self) -> RunConfig:
        return RunConfig(
            name=self.name.text().strip(), main=self.main.text().strip(),
            classpath=[p for p in self.classpath.text().split(":") if p.strip()], args=self.args.text(),
            jvm_options=self.jvm_options.text(), cwd=self.cwd.text().strip(),
            java_home=self.jdk_home.currentData() or "", traces_dir=self.traces_dir.text().strip(),
            include=self.include.text().strip(), exclude=self.exclude.text().strip(), jdk=self.trace_jdk.isChecked(),
            level=self.level.currentText(), bba=self.bba.currentText(), mode=int(self.mode.currentData()),
            instructions=self.instructions.isChecked())

    def _validate(self, *_args) -> None:
        problems = self.config().problems()
        self.message.setText("\n".join(problems))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problems)

    def _pick(self, item, _previous) -> None:
        if item is not None:
            self.set_config(item.data(Qt.ItemDataRole.UserRole))

    def _delete(self) -> None:
        item = self.saved.currentItem()
        if item is not None:
            self.store.delete(item.text())
            self.saved.takeItem(self.saved.row(item))

    def _choose_jar(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A jar to run", self.cwd.text() or "", "Jar files (*.jar)")
        if path:
            self.main.setText(path)

    def _add_classpath(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A class folder", self.cwd.text() or "")
        if path:
            parts = [p for p in self.classpath.text().split(":") if p] + [path]
            self.classpath.setText(":".join(parts))

    def _choose_cwd(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working directory", self.cwd.text() or "")
        if path:
            self.cwd.setText(path)

    @staticmethod
    def ask(parent: QWidget | None, store: RunConfigStore, initial: RunConfig | None = None) -> RunConfig | None:
        dialog = RunDialog(store, initial, parent)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        config = dialog.config()
        store.save(config)
        return config
