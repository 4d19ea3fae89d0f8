"""A recording that runs in the background: what the explorer's Run → Run traced… uses.

Like :func:`jbgui.launch.recording.record` — the same checks, the same traced command line, the
same ``launch.json``, through the same :func:`~jbgui.launch.recording.prepare_run` and
:meth:`~jbgui.launch.recording.PreparedRun.finish` — but :meth:`RecordingSession.start` returns
as soon as the JVM runs:

- the program's output comes back through ``on_output(text, is_stderr)``, called on one of two
  reader threads as the text arrives (decoded as UTF-8; a character split between two reads
  waits for the next one);
- :meth:`~RecordingSession.progress` reads the trace as it grows (:class:`LiveProgress`);
- :meth:`~RecordingSession.stop` ends the program with its trace complete: SIGTERM makes the JVM
  run its shutdown hooks, the agent's final flush among them; a second stop kills the JVM's whole
  process group with SIGKILL (what was flushed still loads);
- :meth:`~RecordingSession.poll` and :meth:`~RecordingSession.wait` give the :class:`Recording`
  once the program ended, with ``launch.json`` written.

The program runs in a session (and process group) of its own with its standard input closed, so
that a Ctrl-C meant for the explorer never reaches it and it never waits for a terminal.
"""

from __future__ import annotations

import codecs
import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from jbgui.launch.command import JDK_TOOLS
from jbgui.launch.errors import CANNOT_EXECUTE, COMMAND_NOT_FOUND, LaunchError
from jbgui.launch.options import RecorderOptions
from jbgui.launch.recording import PreparedRun, Recording, prepare_run
from jbgui.launch.runner import exit_status
from jbgui.model.live import LiveProgress

OutputCallback = Callable[[str, bool], None]   # (text, is_stderr)

# Once the JVM has exited, how long its output may still take to drain. A process the program
# started and left running can hold the pipes open forever; the recording must not wait for it.
OUTPUT_GRACE_S = 2.0
_READ_SIZE = 65536


def with_java_home(argv: Sequence[str], java_home: str | Path | None) -> list[str]:
    """``argv`` with its launcher (``java``, ``javac``, …) taken from the JDK at ``java_home``.

    ``None`` leaves ``argv`` as it is (``java`` is then looked up on PATH). A command that is not
    a JDK launcher is left alone too: :func:`~jbgui.launch.command.check_command` refuses it.
    """
    argv = list(argv)
    if java_home is None or str(java_home) == "":
        return argv
    home = Path(java_home).expanduser()
    if not home.is_dir():
        raise LaunchError(f"{str(home)!r} is not a JDK: the folder does not exist", COMMAND_NOT_FOUND)
    if not argv:
        return argv
    name = os.path.basename(argv[0])
    if name != "java" and name not in JDK_TOOLS:
        return argv
    launcher = home / "bin" / name
    if not launcher.is_file():
        raise LaunchError(f"{str(home)!r} is not a JDK: it has no bin/{name}", COMMAND_NOT_FOUND)
    if not os.access(launcher, os.X_OK):
        raise LaunchError(f"{launcher}: permission denied (not executable)", CANNOT_EXECUTE)
    argv[0] = str(launcher)
    return argv


def options_relative_to(options: RecorderOptions, cwd: Path) -> RecorderOptions:
    """``options`` with relative paths taken against ``cwd`` (the program's working directory),
    not against ours: the same paths mean the same files to the agent and to the checks."""

    def anchor(path: Path | None) -> Path | None:
        if path is None:
            return None
        path = Path(path).expanduser()
        return path if path.is_absolute() else cwd / path

    return dataclasses.replace(options, out=anchor(options.out), include=anchor(options.include),
                               exclude=anchor(options.exclude), events=anchor(options.events))


class RecordingSession:
    """One traced run in the background: :meth:`start`, then :meth:`poll` (or :meth:`wait`)."""

    def __init__(self, argv: Sequence[str], options: RecorderOptions, *, replace: bool = False,
                 cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
                 java_home: str | Path | None = None, agent_jar: Path | None = None,
                 on_output: OutputCallback | None = None):
        """``argv`` is the untraced command line (``java -cp … Main args``); ``cwd`` the program's
        working directory (default: ours); ``env`` its whole environment (default: ours);
        ``java_home`` the JDK to run it with (default: ``java`` on PATH)."""
        self.argv = list(argv)
        self.options = options
        self.replace = replace
        self.cwd = Path(cwd).expanduser().absolute() if cwd is not None and str(cwd) != "" else Path.cwd()
        self.env = dict(env) if env is not None else None
        self.java_home = java_home
        self.agent_jar = agent_jar
        self.on_output = on_output
        self.process: subprocess.Popen | None = None
        self.recording: Recording | None = None
        self._run: PreparedRun | None = None
        self._started = 0.0
        self._started_epoch_ms = 0
        self._ended = 0.0
        self._exited = threading.Event()
        self._readers: list[threading.Thread] = []
        self._stops = 0
        self._live: LiveProgress | None = None
        self._finish_lock = threading.Lock()

    # ------------------------------------------------------------------ what it runs

    @property
    def trace_dir(self) -> Path:
        """Where the trace goes (absolute once started)."""
        return self._run.trace_dir if self._run is not None else Path(self.options.out)

    @property
    def command(self) -> list[str]:
        """The traced command line (empty before :meth:`start`)."""
        return list(self._run.command) if self._run is not None else []

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    # ------------------------------------------------------------------ starting

    def start(self) -> "RecordingSession":
        """Check everything, then start the program; :class:`LaunchError` when it cannot start
        (and then nothing runs and no empty trace directory is left behind)."""
        if self.process is not None:
            raise LaunchError("this session has already started")
        if not self.cwd.is_dir():
            what = "is not a directory" if self.cwd.exists() else "does not exist"
            raise LaunchError(f"working directory {str(self.cwd)!r} {what}", COMMAND_NOT_FOUND)
        argv = with_java_home(self.argv, self.java_home)
        run = prepare_run(argv, options_relative_to(self.options, self.cwd), replace=self.replace,
                          agent_jar=self.agent_jar, env=self.env)
        try:
            self._started_epoch_ms = int(time.time() * 1000)
            self._started = time.monotonic()
            self.process = self._spawn(run.command)
        except LaunchError:
            run.discard()
            raise
        self._run = run
        self.argv, self.options = run.argv, run.options
        self._live = LiveProgress(run.trace_dir)
        for stream, is_stderr in ((self.process.stdout, False), (self.process.stderr, True)):
            reader = threading.Thread(target=self._pump, args=(stream, is_stderr), daemon=True,
                                      name=f"jbgui-run-{'stderr' if is_stderr else 'stdout'}")
            reader.start()
            self._readers.append(reader)
        threading.Thread(target=self._await_exit, name="jbgui-run-wait", daemon=True).start()
        return self

    def _spawn(self, command: list[str]) -> subprocess.Popen:
        try:
            return subprocess.Popen(command, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise LaunchError(f"{command[0]}: command not found", COMMAND_NOT_FOUND) from None
        except PermissionError:
            raise LaunchError(f"{command[0]}: permission denied (not executable)", CANNOT_EXECUTE) from None
        except OSError as error:
            raise LaunchError(f"{command[0]}: cannot execute: {error.strerror}", CANNOT_EXECUTE) from None

    def _pump(self, stream: IO[bytes], is_stderr: bool) -> None:
        """Hand the program's output to the callback as it comes, until the pipe closes."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            while True:
                chunk = stream.read1(_READ_SIZE)
                text = decoder.decode(chunk, final=not chunk)
                if text:
                    self._deliver(text, is_stderr)
                if not chunk:
                    break
        except (OSError, ValueError):
            pass  # the pipe went away under us: there is nothing more to read
        finally:
            stream.close()

    def _deliver(self, text: str, is_stderr: bool) -> None:
        if self.on_output is None:
            return
        try:
            self.on_output(text, is_stderr)
        except Exception:  # noqa: BLE001 - a failing consumer must not stop the reading: the
            pass           # program would block on a full pipe

    def _await_exit(self) -> None:
        self.process.wait()
        self._ended = time.monotonic()
        self._exited.set()

    # ------------------------------------------------------------------ running

    def running(self) -> bool:
        """True from :meth:`start` until the JVM has exited."""
        return self.process is not None and not self._exited.is_set()

    @property
    def stopping(self) -> bool:
        """True once :meth:`stop` was asked for."""
        return self._stops > 0

    def elapsed(self) -> float:
        """Seconds since the start (until the end once the program ended)."""
        if not self._started:
            return 0.0
        return (self._ended if self._exited.is_set() else time.monotonic()) - self._started

    def progress(self) -> dict:
        """``threads``, ``classes``, ``events``, ``bytes`` and ``status`` read from the trace so
        far (see :class:`LiveProgress`), ``seconds`` since the start and ``running``."""
        out = self._live.poll() if self._live is not None else {}
        out["seconds"] = self.elapsed()
        out["running"] = self.running()
        return out

    def stop(self) -> None:
        """End the program: SIGTERM to the JVM first (its trace completes); when asked again,
        SIGKILL to its whole process group. Nothing happens once it has exited."""
        if not self.running():
            return
        self._stops += 1
        try:
            if self._stops == 1:
                self.process.send_signal(signal.SIGTERM)
            else:
                os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # it ended meanwhile

    # ------------------------------------------------------------------ ending

    def poll(self) -> Recording | None:
        """The :class:`Recording` once the program ended and its output was read (``launch.json``
        written), else None. Never blocks."""
        if self.recording is not None:
            return self.recording
        if self.process is None or not self._exited.is_set():
            return None
        if any(r.is_alive() for r in self._readers) and time.monotonic() - self._ended < OUTPUT_GRACE_S:
            return None
        return self._finish()

    def wait(self, timeout: float | None = None) -> Recording:
        """Wait for the program to end; :class:`subprocess.TimeoutExpired` after ``timeout`` s."""
        if self.process is None:
            raise LaunchError("the session has not started")
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired(self.command, timeout)
        for reader in self._readers:
            reader.join(max(0.0, OUTPUT_GRACE_S - (time.monotonic() - self._ended)))
        return self._finish()

    def _finish(self) -> Recording:
        with self._finish_lock:
            if self.recording is None:
                status = exit_status(self.process.returncode)
                self.recording = self._run.finish(self.cwd, status, self._ended - self._started,
                                                  self._started_epoch_ms)
            return self.recording
