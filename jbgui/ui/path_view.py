"""The path of the selected call: its own blocks in order (loop repetitions folded in the summary
line), the calls made from each block and how it ended. Back/Forward (or the arrow keys) step
through it; each step selects its block, so the CFG and the method view follow. Double-clicking a
step that made calls selects the first of them."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QPushButton, QVBoxLayout, QWidget

from jbgui.model.block_paths import call_path, compress, render
from jbgui.ui.block_tables import Latest
from jbgui.ui.selection import CallRef, Selection

MAX_STEPS_SHOWN = 20000


class PathView(QWidget):
    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis = None
        self.call: CallRef | None = None
        self.method = 0
        self.path = None
        self.summary = QLabel("Select a call")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.back = QPushButton("◀ Back")
        self.forward = QPushButton("Forward ▶")
        self.position = QLabel("")
        self.back.clicked.connect(lambda: self.step(-1))
        self.forward.clicked.connect(lambda: self.step(1))
        self.steps = QListWidget()
        self.steps.currentRowChanged.connect(self._step_changed)
        self.steps.itemDoubleClicked.connect(lambda item: self.open_call(self.steps.row(item)))
        row = QHBoxLayout()
        row.addWidget(self.back)
        row.addWidget(self.forward)
        row.addWidget(self.position)
        row.addStretch(1)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.summary)
        box.addLayout(row)
        box.addWidget(self.steps, 1)
        self.worker = Latest(self, self._ready, self.summary.setText)
        selection.callSelected.connect(self._on_call)

    def set_analysis(self, analysis) -> None:
        self.analysis = analysis
        self.path = None
        self.call = None
        self.steps.clear()
        self.summary.setText("Select a call" if analysis else "No trace open")

    def _on_call(self, ref, source) -> None:
        if self.analysis is None or ref is None or ref == self.call:
            return
        self.call = ref
        self.summary.setText("reading the call's blocks …")
        self.worker.run(_compute, self.analysis, ref)

    def _ready(self, result) -> None:
        path, text, names = result
        self.path = path
        self.method = path.method
        analysis = self.analysis
        exit_text = f"exception {path.exception}" if path.exceptional else "return"
        self.summary.setText(f"<b>{analysis.call_name(analysis.thread(path.thread), path.row)}</b> "
                             f"call {path.thread}:{path.row} — {len(path.blocks):,} own blocks, exit: {exit_text}"
                             f"<br><code>{text}</code>")
        by_step: dict[int, list[str]] = {}
        for step, child in path.calls:
            by_step.setdefault(step, []).append(names[child])
        self.steps.blockSignals(True)
        self.steps.clear()
        st = analysis.statics
        base = int(st.m_block_base[path.method]) if path.method else 0
        for i, b in enumerate(path.blocks[:MAX_STEPS_SHOWN].tolist()):
            line = st.b_lines[base + b] or "?"
            calls = by_step.get(i, [])
            text = f"{i:>6}  #{b}  line {line}"
            if calls:
                text += "   → " + ", ".join(calls[:4]) + (f" (+{len(calls) - 4})" if len(calls) > 4 else "")
            if i == len(path.blocks) - 1:
                text += f"   ⇒ {exit_text}"
            self.steps.addItem(text)
        self.steps.blockSignals(False)
        self.position.setText(f"0 / {len(path.blocks):,}" if len(path.blocks) else "no blocks")
        if len(path.blocks):
            self.steps.setCurrentRow(0)

    def open_call(self, row: int) -> None:
        """Select the first call made from step ``row`` (double-click on a step)."""
        if self.path is None:
            return
        for step, child in self.path.calls:
            if step == row:
                self.selection.select_call(CallRef(self.path.thread, child), self)
                return

    def step(self, delta: int) -> None:
        """Move ``delta`` steps along the path."""
        if self.path is None or not self.steps.count():
            return
        row = max(0, min(self.steps.count() - 1, self.steps.currentRow() + delta))
        self.steps.setCurrentRow(row)

    def current_block(self) -> int:
        row = self.steps.currentRow()
        return int(self.path.blocks[row]) if self.path is not None and 0 <= row < len(self.path.blocks) else -1

    def _step_changed(self, row: int) -> None:
        if self.path is None or row < 0:
            return
        self.position.setText(f"{row} / {len(self.path.blocks):,}")
        self.selection.select_block(self.method, int(self.path.blocks[row]), self)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Right, Qt.Key.Key_Down):
            self.step(1)
        elif event.key() in (Qt.Key.Key_Left, Qt.Key.Key_Up):
            self.step(-1)
        else:
            super().keyPressEvent(event)


def _compute(_progress, _cancelled, analysis, ref: CallRef):
    thread = analysis.thread(ref.thread)
    path = call_path(analysis, thread, ref.row)
    text = render(compress(path.blocks[:200000]))
    names = {child: analysis.call_name(thread, child) for _s, child in path.calls[:50000]}
    return path, text, names
