"""Run → Run traced…: a form for a :class:`RunConfig`, with the saved configurations beside it.

The form checks itself on every change (:meth:`RunConfig.problems`): Run stays disabled, with the
reasons in words under the form, until the configuration can run; doubts that do not stop a run
(:meth:`RunConfig.warnings`) are shown without disabling it. The java command line the
configuration stands for is shown as it is edited.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QGroupBox,
    QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QSizePolicy, QSpinBox, QVBoxLayout,
    QWidget,
)

from jbgui.ui.console import error_color
from jbgui.ui.run_config import RunConfig, RunConfigStore, find_jdks

_ROLE = Qt.ItemDataRole.UserRole


def _row(*widgets: QWidget, stretch_first: bool = True) -> QHBoxLayout:
    row = QHBoxLayout()
    row.setContentsMargins(0, 0, 0, 0)
    for i, widget in enumerate(widgets):
        row.addWidget(widget, 1 if (i == 0 and stretch_first) else 0)
    return row


class RunDialog(QDialog):
    """Edit a configuration; :meth:`ask` returns it (saved, most recent first) or None."""

    def __init__(self, store: RunConfigStore, initial: RunConfig | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.store = store
        self.setWindowTitle("Run traced")
        self.resize(960, 640)

        # -------------------------------------------------------------- saved configurations
        self.saved = QListWidget()
        self.saved.setMaximumWidth(240)
        self.saved.currentItemChanged.connect(self._pick)
        self.new_button = QPushButton("New")
        self.new_button.setToolTip("An empty form")
        self.new_button.clicked.connect(lambda: self._load(RunConfig(), select=False))
        self.duplicate_button = QPushButton("Duplicate")
        self.duplicate_button.setToolTip("Save a copy of the form under a new name")
        self.duplicate_button.clicked.connect(self.duplicate)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete_selected)
        left = QVBoxLayout()
        left.addWidget(QLabel("Saved configurations"))
        left.addWidget(self.saved, 1)
        left.addLayout(_row(self.new_button, self.duplicate_button, self.delete_button, stretch_first=False))

        # -------------------------------------------------------------- the program
        self.name = QLineEdit()
        self.main = QLineEdit()
        self.main.setPlaceholderText("com.example.Main, or path/to/app.jar")
        jar = QPushButton("Jar…")
        jar.setToolTip("Run a jar (java -jar)")
        jar.clicked.connect(self._choose_jar)
        self.classpath = QListWidget()
        self.classpath.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                       | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.classpath.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.classpath.setMaximumHeight(96)
        self.classpath.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.classpath.setToolTip("Folders and jars, in order; relative to the working directory. "
                                  "Double-click an entry to edit it.")
        add_dir = QPushButton("Add folder…")
        add_dir.clicked.connect(self._add_classpath_folder)
        add_jar = QPushButton("Add jar…")
        add_jar.clicked.connect(self._add_classpath_jars)
        remove = QPushButton("Remove")
        remove.clicked.connect(self.remove_selected_classpath)
        cp_buttons = QVBoxLayout()
        for button in (add_dir, add_jar, remove):
            cp_buttons.addWidget(button)
        cp_buttons.addStretch(1)
        cp_row = QHBoxLayout()
        cp_row.addWidget(self.classpath, 1)
        cp_row.addLayout(cp_buttons)
        self.args = QLineEdit()
        self.args.setPlaceholderText("program arguments, as in a shell: quotes group words")
        self.jvm_options = QLineEdit()
        self.jvm_options.setPlaceholderText("-Xmx1g -Dkey=value")
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("(the explorer's own)")
        browse_cwd = QPushButton("Browse…")
        browse_cwd.clicked.connect(lambda: self._choose_folder(self.cwd, "Working directory"))
        self.jdk_home = QComboBox()
        self.jdk_home.addItem("java on PATH", "")
        for label, home in find_jdks():
            self.jdk_home.addItem(label, home)
        self.traces_dir = QLineEdit()
        browse_traces = QPushButton("Browse…")
        browse_traces.clicked.connect(lambda: self._choose_folder(self.traces_dir, "Folder for the traces"))

        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Program", _row(self.main, jar))
        form.addRow("Class path", cp_row)
        form.addRow("Arguments", self.args)
        form.addRow("JVM options", self.jvm_options)
        form.addRow("Working directory", _row(self.cwd, browse_cwd))
        form.addRow("JDK", self.jdk_home)
        form.addRow("Traces go to", _row(self.traces_dir, browse_traces))

        # -------------------------------------------------------------- the recorder
        recorder = QGroupBox("Recorder")
        rform = QFormLayout(recorder)
        self.include = QLineEdit()
        self.include.setPlaceholderText("file of class prefixes to trace, one per line (java/lang)")
        self.exclude = QLineEdit()
        self.exclude.setPlaceholderText("file of class prefixes to leave untraced")
        browse_include = QPushButton("Browse…")
        browse_include.clicked.connect(lambda: self._choose_file(self.include, "Include filter"))
        browse_exclude = QPushButton("Browse…")
        browse_exclude.clicked.connect(lambda: self._choose_file(self.exclude, "Exclude filter"))
        self.trace_jdk = QCheckBox("trace JDK classes too")
        self.level = QComboBox()
        self.level.addItem("every basic block", "block")
        self.level.addItem("method entries and exits only", "method")
        self.bba = QComboBox()
        self.bba.addItem("default: blocks end at control transfers", "default")
        self.bba.addItem("precise: also at every instruction that may throw", "precise")
        self.mode = QComboBox()
        self.mode.addItem("one stream per thread", 2)
        self.mode.addItem("one shared, globally ordered stream", 1)
        self.instructions = QCheckBox("list each block's instructions in the trace")
        self.virtual_threads = QSpinBox()
        self.virtual_threads.setRange(0, 1_000_000)
        self.virtual_threads.setGroupSeparatorShown(True)
        self.virtual_threads.setToolTip("JDK 21+: the first N virtual threads the program starts are traced, each a "
                                        "thread of its own; the others run untraced, and the trace says so")
        rform.addRow("Include", _row(self.include, browse_include))
        rform.addRow("Exclude", _row(self.exclude, browse_exclude))
        rform.addRow("", self.trace_jdk)
        rform.addRow("Level", self.level)
        rform.addRow("Basic blocks", self.bba)
        rform.addRow("Trace mode", self.mode)
        rform.addRow("", self.instructions)
        rform.addRow("Virtual threads traced", self.virtual_threads)

        # -------------------------------------------------------------- what it will do
        self.command = QLabel()
        self.command.setWordWrap(True)
        self.command.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Run")
        # Not the standard Save button: its role is AcceptRole, which closes the dialog and runs.
        self.save_button = QPushButton("Save")
        self.buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button.setToolTip("Keep this configuration without running it")
        self.save_button.clicked.connect(self.save_current)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        right = QVBoxLayout()
        right.addLayout(form)
        right.addWidget(recorder)
        right.addWidget(self.command)
        right.addWidget(self.message)
        right.addWidget(self.notes)
        right.addStretch(1)
        right.addWidget(self.buttons)
        layout = QHBoxLayout(self)
        layout.addLayout(left)
        layout.addLayout(right, 1)

        for edit in (self.name, self.main, self.args, self.jvm_options, self.cwd, self.traces_dir, self.include,
                     self.exclude):
            edit.textChanged.connect(self._validate)
        for combo in (self.jdk_home, self.level, self.bba, self.mode):
            combo.currentIndexChanged.connect(self._validate)
        for box in (self.trace_jdk, self.instructions):
            box.toggled.connect(self._validate)
        self.virtual_threads.valueChanged.connect(self._validate)
        model = self.classpath.model()
        for sig in (model.rowsInserted, model.rowsRemoved, model.dataChanged):
            sig.connect(self._validate)

        self._fill_saved()
        if initial is not None:
            self._load(initial, select=True)
        elif store.configs:
            self.saved.setCurrentRow(0)
        else:
            self._load(RunConfig(), select=False)

    # ------------------------------------------------------------------ the form

    def set_config(self, c: RunConfig) -> None:
        """Show ``c`` in the form."""
        self.name.setText(c.name)
        self.main.setText(c.main)
        self.classpath.clear()
        for entry in c.classpath:
            self.add_classpath_entry(entry)
        self.args.setText(c.args)
        self.jvm_options.setText(c.jvm_options)
        self.cwd.setText(c.cwd)
        index = self.jdk_home.findData(c.java_home)
        if index < 0:   # a JDK this machine's search did not find: keep it selectable
            self.jdk_home.addItem(c.java_home, c.java_home)
            index = self.jdk_home.count() - 1
        self.jdk_home.setCurrentIndex(index)
        self.traces_dir.setText(c.traces_dir)
        self.include.setText(c.include)
        self.exclude.setText(c.exclude)
        self.trace_jdk.setChecked(c.jdk)
        self.level.setCurrentIndex(max(self.level.findData(c.level), 0))
        self.bba.setCurrentIndex(max(self.bba.findData(c.bba), 0))
        self.mode.setCurrentIndex(max(self.mode.findData(c.mode), 0))
        self.instructions.setChecked(c.instructions)
        self.virtual_threads.setValue(c.virtual_threads)
        self._validate()

    def config(self) -> RunConfig:
        """The configuration the form shows."""
        return RunConfig(
            name=self.name.text().strip(), main=self.main.text().strip(), classpath=self.classpath_entries(),
            args=self.args.text(), jvm_options=self.jvm_options.text(), cwd=self.cwd.text().strip(),
            java_home=self.jdk_home.currentData() or "", traces_dir=self.traces_dir.text().strip(),
            include=self.include.text().strip(), exclude=self.exclude.text().strip(),
            jdk=self.trace_jdk.isChecked(), level=self.level.currentData(), bba=self.bba.currentData(),
            mode=int(self.mode.currentData()), instructions=self.instructions.isChecked(),
            virtual_threads=self.virtual_threads.value())

    def classpath_entries(self) -> list[str]:
        entries = (self.classpath.item(i).text().strip() for i in range(self.classpath.count()))
        return [e for e in entries if e]

    def add_classpath_entry(self, path: str) -> None:
        item = QListWidgetItem(path)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self.classpath.addItem(item)

    def remove_selected_classpath(self) -> None:
        for item in self.classpath.selectedItems():
            self.classpath.takeItem(self.classpath.row(item))

    def problems(self) -> list[str]:
        """What the form says is wrong (empty: Run is enabled)."""
        return self.config().problems()

    def _validate(self, *_args) -> None:
        config = self.config()
        problems = config.problems()
        self.message.setText("\n".join(problems))
        self.message.setVisible(bool(problems))
        warnings = config.warnings()
        self.notes.setText("\n".join(warnings))
        self.notes.setVisible(bool(warnings))
        self.ok_button.setEnabled(not problems)
        self.save_button.setEnabled(bool(config.main.strip()))
        try:
            self.command.setText(f"Runs: {config.command_line()}")
        except ValueError:
            self.command.setText("")
        if not config.traces_dir:
            try:
                self.traces_dir.setPlaceholderText(str(config.traces_parent()))
            except OSError:
                pass
        palette = self.message.palette()
        palette.setColor(QPalette.ColorRole.WindowText, error_color())
        self.message.setPalette(palette)

    # ------------------------------------------------------------------ saved configurations

    def _fill_saved(self, current: str | None = None) -> None:
        self.saved.blockSignals(True)
        self.saved.clear()
        for config in self.store.configs:
            item = QListWidgetItem(config.label())
            item.setData(_ROLE, config)
            item.setToolTip(config.command_line() if not config.problems() else "\n".join(config.problems()))
            self.saved.addItem(item)
            if config.label() == current:
                self.saved.setCurrentItem(item)
        self.saved.blockSignals(False)
        self.delete_button.setEnabled(self.saved.count() > 0)
        self.duplicate_button.setEnabled(True)

    def _load(self, config: RunConfig, select: bool) -> None:
        if select:
            match = self.saved.findItems(config.label(), Qt.MatchFlag.MatchExactly)
            self.saved.blockSignals(True)
            self.saved.setCurrentItem(match[0] if match else None)
            self.saved.blockSignals(False)
        else:
            self.saved.blockSignals(True)
            self.saved.setCurrentItem(None)
            self.saved.clearSelection()
            self.saved.blockSignals(False)
        self.set_config(config)

    def _pick(self, item: QListWidgetItem | None, _previous) -> None:
        if item is not None:
            self.set_config(item.data(_ROLE))

    def save_current(self) -> RunConfig:
        """Save the form's configuration (without running it) and select it in the list."""
        config = self.config()
        self.store.save(config)
        self._fill_saved(config.label())
        return config

    def duplicate(self) -> RunConfig:
        """Save a copy of the form under a new name, and go on editing the copy."""
        config = self.config()
        config.name = self.store.unique_label(f"{config.label()} copy")
        self.store.save(config)
        self._fill_saved(config.label())
        self.set_config(config)
        return config

    def delete_selected(self) -> None:
        item = self.saved.currentItem()
        if item is None:
            return
        self.store.delete(item.text())
        self._fill_saved()
        if self.saved.count():
            self.saved.setCurrentRow(0)

    # ------------------------------------------------------------------ choosers

    def _start_folder(self) -> str:
        return self.cwd.text().strip() or ""

    def _choose_jar(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A jar to run", self._start_folder(), "Jar files (*.jar)")
        if path:
            self.main.setText(path)

    def _add_classpath_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A folder of classes", self._start_folder())
        if path:
            self.add_classpath_entry(path)

    def _add_classpath_jars(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Jars for the class path", self._start_folder(),
                                                "Jar files (*.jar);;All files (*)")
        for path in paths:
            self.add_classpath_entry(path)

    def _choose_folder(self, edit: QLineEdit, title: str) -> None:
        path = QFileDialog.getExistingDirectory(self, title, edit.text().strip() or self._start_folder())
        if path:
            edit.setText(path)

    def _choose_file(self, edit: QLineEdit, title: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, title, self._start_folder())
        if path:
            edit.setText(path)

    # ------------------------------------------------------------------ one call

    @staticmethod
    def ask(parent: QWidget | None, store: RunConfigStore, initial: RunConfig | None = None) -> RunConfig | None:
        """Show the dialog; the configuration to run (saved first in ``store``), or None."""
        dialog = RunDialog(store, initial, parent)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            config = dialog.config()
            store.save(config)
            return config
        finally:
            dialog.deleteLater()
