"""A traced run in the explorer.

:class:`RunController` drives a :class:`jbgui.launch.session.RecordingSession` from the GUI
thread: the session's reader threads put the program's output into a queue, and a timer (4× a
second) hands it on as ``output`` signals, polls the growing trace for ``progress`` and notices the
end (``finished``, with the :class:`~jbgui.launch.recording.Recording`). A run that cannot start
emits ``failed`` with the reason.

:class:`ConsolePane` shows one controller's run: the program's output (standard error in the
palette's error colour), a progress line and Stop / Clear. Output is appended in batches and the
console keeps the last :data:`MAX_BLOCKS` lines, so a program that prints a lot cannot slow the
explorer down.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from queue import Empty, SimpleQueue

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtGui import QColor, QFontDatabase, QFontMetricsF, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from jbgui.launch import LaunchError, Recording
from jbgui.launch.session import RecordingSession
from jbgui.ui import colors
from jbgui.ui.format import format_bytes, format_count
from jbgui.ui.run_config import RunConfig

POLL_MS = 250            # progress and output 4× a second
FLUSH_MS = 50            # the console appends what arrived at most this often
MAX_BLOCKS = 20_000      # lines the console keeps
MAX_FLUSH_CHARS = 4 << 20   # characters one append may insert (a huge line is cut at its start)


def _last_lines(text: str, count: int) -> str:
    """The last ``count`` lines of ``text`` (a final line break ends the last line)."""
    cut = len(text) - 1 if text.endswith("\n") else len(text)
    for _ in range(count):
        cut = text.rfind("\n", 0, cut)
        if cut < 0:
            return text
    return text[cut + 1:]


def error_color() -> QColor:
    """The colour of error text in the current palette (light or dark)."""
    return colors.qcolor(colors.ERROR_TEXT)


def progress_text(p: Mapping) -> str:
    """``running 3.2 s · threads 4 · classes 1,024 · events 5,352,630 · 1.2 MiB``."""
    return (f"running {p.get('seconds', 0.0):.1f} s · threads {format_count(p.get('threads', 0))} · "
            f"classes {format_count(p.get('classes', 0))} · events {format_count(p.get('events', 0))} · "
            f"{format_bytes(p.get('bytes', 0))}")


def outcome_text(recording: Recording) -> str:
    """How a run ended, in one line: exit status, time, and whether its trace is complete."""
    summary = recording.summary
    status = recording.exit_status
    how = f"exit status {status}" + (f" (killed by signal {status - 128})" if status > 128 else "")
    trace = "complete trace" if summary.status == "complete" else (summary.problem or "incomplete trace")
    events = summary.counts.get("events")
    counted = f" · events {format_count(events)}" if isinstance(events, int) else ""
    return f"{how} · {recording.wall_seconds:.1f} s · {trace}{counted}"


class RunController(QObject):
    """Runs one configuration at a time, in its own JVM, and reports on it with signals."""

    started = Signal(object)           # the RunConfig, once its JVM runs
    output = Signal(str, bool)         # text, is_stderr (batched: one piece per stream switch per poll)
    progress = Signal(object)          # dict: threads, classes, events, chunks, bytes, status, seconds, running
    stopping = Signal(int)             # 1: asked to end (SIGTERM), 2: killed (SIGKILL)
    finished = Signal(object)          # the Recording (launch.json written)
    failed = Signal(str)               # it could not start: why

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.session: RecordingSession | None = None
        self.config: RunConfig | None = None
        self.recording: Recording | None = None
        self._stops = 0
        self._queue: SimpleQueue[tuple[str, bool]] = SimpleQueue()
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    def running(self) -> bool:
        """True from a successful :meth:`start` until ``finished``."""
        return self.session is not None and self.recording is None

    def start(self, config: RunConfig, env: Mapping[str, str] | None = None) -> bool:
        """Start ``config`` (``env``: the program's whole environment, default the explorer's);
        False, with ``failed`` emitted, when it cannot start."""
        if self.running():
            self.failed.emit("A program is already running: stop it first.")
            return False
        problems = config.problems()
        if problems:
            self.failed.emit(" ".join(problems))
            return False
        # A queue per run: a process the previous program left behind may still write to its own.
        queue: SimpleQueue[tuple[str, bool]] = SimpleQueue()
        try:
            argv = config.argv()
            session = RecordingSession(argv, config.recorder_options(config.output_dir()), cwd=config.workdir,
                                       env=env, java_home=config.java_home.strip() or None,
                                       on_output=lambda text, is_stderr: queue.put((text, is_stderr)))
            session.start()
        except LaunchError as error:
            self.failed.emit(str(error))
            return False
        except (OSError, ValueError) as error:
            self.failed.emit(f"The program cannot start: {error}")
            return False
        self._queue = queue
        self.session, self.config, self.recording, self._stops = session, config, None, 0
        self.started.emit(config)
        self._timer.start()
        return True

    def stop(self) -> None:
        """End the program (its trace is completed); a second call kills it."""
        if self.running() and self.session.running():
            self._stops += 1
            self.session.stop()
            self.stopping.emit(min(self._stops, 2))

    def _drain(self) -> None:
        merged: list[list] = []
        while True:
            try:
                text, is_stderr = self._queue.get_nowait()
            except Empty:
                break
            if merged and merged[-1][1] == is_stderr:
                merged[-1][0].append(text)
            else:
                merged.append([[text], is_stderr])
        for parts, is_stderr in merged:
            self.output.emit("".join(parts), is_stderr)

    def _poll(self) -> None:
        session = self.session
        if session is None or self.recording is not None:
            self._timer.stop()
            return
        try:
            recording = session.poll()
            self._drain()
            self.progress.emit(session.progress())
        except Exception as error:  # noqa: BLE001 - a slot must not raise; the user hears of it
            self._timer.stop()
            self.recording = None
            self.session = None
            self.failed.emit(f"internal error while following the run: {type(error).__name__}: {error}")
            return
        if recording is not None:
            self._timer.stop()
            self.recording = recording
            self.finished.emit(recording)


class ConsolePane(QWidget):
    """The running program's output, a progress line, Stop and Clear."""

    def __init__(self, controller: RunController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(MAX_BLOCKS)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)   # long lines lay out cheaply
        self.text.setUndoRedoEnabled(False)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        # Stack traces indent with a tab: four columns, not the default 80 pixels.
        self.text.setTabStopDistance(4 * QFontMetricsF(self.text.font()).horizontalAdvance(" "))
        self.line = QLabel("No program running")
        self.line.setMinimumWidth(40)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("End the program; its trace is kept (press again to kill it)")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(controller.stop)
        self.clear_button = QPushButton("Clear")
        self.clear_button.clicked.connect(self.clear)
        row = QHBoxLayout()
        row.addWidget(self.line, 1)
        row.addWidget(self.stop_button)
        row.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(row)
        layout.addWidget(self.text, 1)

        self._pending: list[tuple[str, bool]] = []
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_MS)
        self._flush_timer.timeout.connect(self.flush)
        self._formats()

        controller.started.connect(self._started)
        controller.output.connect(self.append)
        controller.progress.connect(self._progress)
        controller.stopping.connect(self._stopping)
        controller.finished.connect(self._finished)
        controller.failed.connect(self._failed)

    # ------------------------------------------------------------------ text

    def _formats(self) -> None:
        self._out = QTextCharFormat()
        self._err = QTextCharFormat()
        self._err.setForeground(error_color())
        self._note = QTextCharFormat()
        self._note.setFontItalic(True)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._formats()   # text from now on; what is shown keeps its colour
        super().changeEvent(event)

    def append(self, text: str, is_stderr: bool = False) -> None:
        """Queue ``text`` for the console; it appears with the next batch (within FLUSH_MS)."""
        if text:
            self._pending.append((text, is_stderr))
            if not self._flush_timer.isActive():
                self._flush_timer.start()

    def note(self, text: str, is_error: bool = False) -> None:
        """A line of the explorer's own (not the program's), on a line of its own."""
        self.flush()
        self._insert([(("" if self._at_line_start() else "\n") + text + "\n",
                       self._err if is_error else self._note)])

    def clear(self) -> None:
        self._pending.clear()
        self.text.clear()

    def flush(self) -> None:
        """Append what is pending now: consecutive pieces of one stream in one insertion, and of a
        burst only its last :data:`MAX_BLOCKS` lines (and :data:`MAX_FLUSH_CHARS` characters),
        which is all the console would keep of it anyway."""
        self._flush_timer.stop()
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        lines_left, chars_left = MAX_BLOCKS - 2, MAX_FLUSH_CHARS   # room for the note and the last line
        kept: list[tuple[str, QTextCharFormat]] = []
        skipped = 0
        full = False
        for text, is_stderr in reversed(pending):
            newlines = text.count("\n")
            if full:
                skipped += newlines
                continue
            if newlines >= lines_left or len(text) >= chars_left:
                cut = _last_lines(text, lines_left)[-chars_left:]
                skipped += newlines - cut.count("\n")
                text, newlines, full = cut, cut.count("\n"), True
            lines_left -= newlines
            chars_left -= len(text)
            fmt = self._err if is_stderr else self._out
            if kept and kept[-1][1] is fmt:
                kept[-1] = (text + kept[-1][0], fmt)
            else:
                kept.append((text, fmt))
        kept.reverse()
        if skipped:
            kept.insert(0, (f"[… {format_count(skipped)} lines of output not shown …]\n", self._note))
        self._insert(kept)

    def _at_line_start(self) -> bool:
        doc = self.text.document()
        return doc.isEmpty() or doc.lastBlock().length() <= 1

    def _insert(self, pieces: list[tuple[str, QTextCharFormat]]) -> None:
        bar = self.text.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2   # the user reads further up: leave the view there
        cursor = QTextCursor(self.text.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for text, fmt in pieces:
            cursor.insertText(text, fmt)
        cursor.endEditBlock()
        if follow:
            bar.setValue(bar.maximum())

    # ------------------------------------------------------------------ the run

    def _started(self, config: RunConfig) -> None:
        try:
            command = config.command_line()
        except ValueError:
            command = shlex.join(self.controller.session.argv)
        self.note(f"$ {command}")
        self.line.setText(f"running {config.label()} …")
        self.stop_button.setText("Stop")
        self.stop_button.setEnabled(True)

    def _progress(self, p: dict) -> None:
        if self.controller.running():
            self.line.setText(progress_text(p))

    def _stopping(self, level: int) -> None:
        if level == 1:
            self.stop_button.setText("Kill")
            self.stop_button.setToolTip("Kill the program now (what its recorder flushed is kept)")
        else:
            self.stop_button.setEnabled(False)

    def _finished(self, recording: Recording) -> None:
        self.flush()
        self.stop_button.setEnabled(False)
        self.stop_button.setText("Stop")
        self.line.setText(outcome_text(recording))
        self.note(f"[{outcome_text(recording)}; trace in {recording.trace_dir}]")
        if recording.launch_file_problem:
            self.note(f"[{recording.launch_file_problem}]", is_error=True)

    def _failed(self, message: str) -> None:
        self.flush()
        self.stop_button.setEnabled(False)
        self.stop_button.setText("Stop")
        self.line.setText("The program could not start")
        self.note(f"[could not start: {message}]", is_error=True)
