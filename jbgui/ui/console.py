"""A traced run in the explorer: :class:`RunController` drives a
:class:`jbgui.launch.session.RecordingSession` from the GUI thread (a timer polls it), and
:class:`ConsolePane` shows the program's output as it comes, a progress line and a Stop button."""

from __future__ import annotations

from queue import Empty, SimpleQueue

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from jbgui.launch import LaunchError
from jbgui.launch.session import RecordingSession
from jbgui.ui import colors
from jbgui.ui.format import format_bytes, format_count
from jbgui.ui.run_config import RunConfig

POLL_MS = 250
MAX_BLOCKS = 20_000


class RunController(QObject):
    """Runs one configuration at a time."""

    started = Signal(object)           # the RunConfig
    output = Signal(str, bool)         # text, is_stderr
    progress = Signal(object)          # dict: threads, classes, events, bytes, seconds
    finished = Signal(object)          # the Recording
    failed = Signal(str)               # it could not start: why

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.session: RecordingSession | None = None
        self.config: RunConfig | None = None
        self._queue: SimpleQueue = SimpleQueue()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def running(self) -> bool:
        return self.session is not None and self.session.recording is None

    def start(self, config: RunConfig) -> bool:
        """Start ``config``; False (and ``failed``) when it cannot start."""
        if self.running():
            self.failed.emit("a program is already running: stop it first")
            return False
        argv = config.argv()
        try:
            out = config.output_dir()
            session = RecordingSession(argv, config.recorder_options(out), cwd=config.workdir,
                                       java_home=config.java_home or None,
                                       on_output=lambda text, err: self._queue.put((text, err)))
            session.start()
        except LaunchError as error:
            self.failed.emit(str(error))
            return False
        except OSError as error:
            self.failed.emit(f"cannot start {argv[0]}: {error.strerror or error}")
            return False
        self.session, self.config = session, config
        self.started.emit(config)
        self._timer.start()
        return True

    def stop(self) -> None:
        if self.running():
            self.session.stop()

    def _drain(self) -> None:
        parts: list[tuple[str, bool]] = []
        while True:
            try:
                parts.append(self._queue.get_nowait())
            except Empty:
                break
        # Consecutive pieces of one stream go out together: one append per stream switch.
        merged: list[tuple[str, bool]] = []
        for text, err in parts:
            if merged and merged[-1][1] == err:
                merged[-1] = (merged[-1][0] + text, err)
            else:
                merged.append((text, err))
        for text, err in merged:
            self.output.emit(text, err)

    def _poll(self) -> None:
        session = self.session
        if session is None:
            return
        self._drain()
        recording = session.poll()
        self.progress.emit(session.progress())
        if recording is not None:
            self._timer.stop()
            self._drain()
            self.finished.emit(recording)


class ConsolePane(QWidget):
    """The running program's output, a progress line, Stop and Clear."""

    def __init__(self, controller: RunController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(MAX_BLOCKS)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.TypeWriter)
        self.text.setFont(font)
        self.line = QLabel("No program running")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the program; its trace is kept (press again to kill it)")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(controller.stop)
        clear = QPushButton("Clear")
        clear.clicked.connect(self.text.clear)
        row = QHBoxLayout()
        row.addWidget(self.line, 1)
        row.addWidget(self.stop_button)
        row.addWidget(clear)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)
        self._out = QTextCharFormat()
        self._err = QTextCharFormat()
        self._err.setForeground(QColor("#ff8a80") if colors.is_dark() else QColor("#c62828"))
        controller.started.connect(self._started)
        controller.output.connect(self.append)
        controller.progress.connect(self._progress)
        controller.finished.connect(self._finished)
        controller.failed.connect(self._failed)

    def append(self, text: str, is_stderr: bool) -> None:
        cursor = self.text.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text, self._err if is_stderr else self._out)
        self.text.setTextCursor(cursor)
        self.text.ensureCursorVisible()

    def _started(self, config) -> None:
        self.append(f"$ {' '.join(config.argv())}\n", False)
        self.line.setText(f"starting {config.label()} …")
        self.stop_button.setEnabled(True)

    def _progress(self, p: dict) -> None:
        if not self.controller.running():
            return
        self.line.setText(f"running {p.get('seconds', 0):.1f} s · threads {p.get('threads', 0)} · classes "
                          f"{format_count(p.get('classes', 0))} · events {format_count(p.get('events', 0))} · "
                          f"{format_bytes(p.get('bytes', 0))}")

    def _finished(self, recording) -> None:
        self.stop_button.setEnabled(False)
        summary = recording.summary
        status = "complete trace" if summary.status == "complete" else (summary.problem or "incomplete trace")
        self.line.setText(f"exit status {recording.exit_status} · {recording.wall_seconds:.1f} s · {status}")
        self.append(f"[exit status {recording.exit_status}; trace in {recording.trace_dir}]\n", False)

    def _failed(self, message: str) -> None:
        self.stop_button.setEnabled(False)
        self.line.setText("could not start")
        self.append(f"[could not start: {message}]\n", True)
