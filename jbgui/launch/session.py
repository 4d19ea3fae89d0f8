"""A recording that runs in the background: what the explorer's Run → Run traced… uses.

Like :func:`jbgui.launch.recording.record` (the same checks, the same traced command line, the
same ``launch.json``), but it returns at once: the program's output comes back through a callback
line by line, :meth:`RecordingSession.progress` reads the trace as it grows, :meth:`stop` ends the
program so that its trace is complete (SIGTERM: the JVM's shutdown runs the agent's final flush;
a second stop kills it), and :meth:`poll`/:meth:`wait` give the :class:`Recording` once it ended.

The program runs in a process group of its own, with its standard input closed, so that signals
meant for the explorer never reach it and it never waits for a terminal.
"""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from jbgui.launch.agent import locate_agent
from jbgui.launch.command import check_command, traced_command
from jbgui.launch.errors import CANNOT_EXECUTE, COMMAND_NOT_FOUND, LaunchError
from jbgui.launch.options import RecorderOptions, agent_argument_options, agent_option_pairs
from jbgui.launch.recording import Recording, finish_recording, prepare_trace_dir
from jbgui.launch.runner import exit_status
from jbgui.model.live import LiveProgress

OutputCallback = Callable[[str, bool], None]   # (text, is_stderr)


class RecordingSession:
    """One traced run in the background. Use :meth:`start`, then :meth:`poll` or :meth:`wait`."""

    def __init__(self, argv: Sequence[str], options: RecorderOptions, *, replace: bool = False,
                 cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
                 java_home: str | Path | None = None, agent_jar: Path | None = None,
                 on_output: OutputCallback | None = None):
        self.argv = list(argv)
        self.options = options
        self.replace = replace
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.env = dict(env) if env is not None else None
        self.java_home = Path(java_home) if java_home else None
        self.agent_jar = agent_jar
        self.on_output = on_output
        self.process: subprocess.Popen | None = None
        self.command: list[str] = []
        self.recording: Recording | None = None
        self._pairs = None
        self._jar: Path | None = None
        self._config_dir: tempfile.TemporaryDirectory | None = None
        self._started = 0.0
        self._started_epoch_ms = 0
        self._readers: list[threading.Thread] = []
        self._stops = 0
        self._live: LiveProgress | None = None

    @property
    def trace_dir(self) -> Path:
        return Path(self.options.out)

    # ------------------------------------------------------------------ starting

    def start(self) -> "RecordingSession":
        """Check everything, then start the program; :class:`LaunchError` when it cannot start."""
        argv = list(self.argv)
        if self.java_home is not None and argv and os.path.basename(argv[0]) in ("java", "javac", "jar", "jshell"):
            launcher = self.java_home / "bin" / os.path.basename(argv[0])
            if not launcher.exists():
                raise LaunchError(f"{self.java_home} is not a JDK: {launcher} does not exist", COMMAND_NOT_FOUND)
            argv[0] = str(launcher)
        if not self.cwd.is_dir():
            raise LaunchError(f"working directory {str(self.cwd)!r} does not exist", COMMAND_NOT_FOUND)
        options = self.options.checked()
        self.options = options
        self._pairs = agent_option_pairs(options)
        check_command(argv)
        created = prepare_trace_dir(options.out, self.replace)
        try:
            self._jar = self.agent_jar if self.agent_jar is not None else locate_agent()
            self._config_dir = tempfile.TemporaryDirectory(prefix="jbgui-run-")
            self.command = traced_command(argv, self._jar, agent_argument_options(self._pairs,
                                                                                  Path(self._config_dir.name)))
            self._started_epoch_ms = int(time.time() * 1000)
            self._started = time.monotonic()
            self.process = self._spawn()
        except LaunchError:
            if created and Path(options.out).is_dir() and not any(Path(options.out).iterdir()):
                Path(options.out).rmdir()
            if self._config_dir is not None:
                self._config_dir.cleanup()
            raise
        self.argv = argv
        self._live = LiveProgress(Path(options.out))
        for stream, is_err in ((self.process.stdout, False), (self.process.stderr, True)):
            reader = threading.Thread(target=self._pump, args=(stream, is_err), name="jbgui-run-output", daemon=True)
            reader.start()
            self._readers.append(reader)
        return self

    def _spawn(self) -> subprocess.Popen:
        try:
            return subprocess.Popen(self.command, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except FileNotFoundError:
            raise LaunchError(f"{self.command[0]}: command not found", COMMAND_NOT_FOUND) from None
        except PermissionError:
            raise LaunchError(f"{self.command[0]}: permission denied (not executable)", CANNOT_EXECUTE) from None
        except OSError as error:
            raise LaunchError(f"{self.command[0]}: cannot execute: {error.strerror}", CANNOT_EXECUTE) from None

    def _pump(self, stream, is_err: bool) -> None:
        """Hand the program's output to the callback as it comes (UTF-8, a character split
        between two reads waits for the next one)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        for chunk in iter(lambda: stream.read1(65536), b""):
            text = decoder.decode(chunk)
            if text and self.on_output is not None:
                self.on_output(text, is_err)
        rest = decoder.decode(b"", final=True)
        if rest and self.on_output is not None:
            self.on_output(rest, is_err)
        stream.close()

    # ------------------------------------------------------------------ running

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def elapsed(self) -> float:
        return time.monotonic() - self._started if self._started else 0.0

    def progress(self) -> dict:
        """Threads, classes, events and bytes recorded so far, and the seconds since the start."""
        out = self._live.poll() if self._live is not None else {}
        out["seconds"] = self.elapsed()
        return out

    def stop(self) -> None:
        """End the program: SIGTERM first (its trace completes), SIGKILL when asked again."""
        if not self.running():
            return
        self._stops += 1
        sig = signal.SIGTERM if self._stops == 1 else signal.SIGKILL
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass

    def poll(self) -> Recording | None:
        """The recording once the program ended (launch.json written), else None."""
        if self.recording is not None:
            return self.recording
        if self.process is None or self.process.poll() is None:
            return None
        return self._finish()

    def wait(self, timeout: float | None = None) -> Recording:
        self.process.wait(timeout)
        return self._finish()

    def _finish(self) -> Recording:
        if self.recording is None:
            for reader in self._readers:
                reader.join(5)
            status = exit_status(self.process.returncode)
            wall = time.monotonic() - self._started
            self.recording = finish_recording(self.trace_dir, self.argv, self.command, str(self.cwd), status, wall,
                                              self._started_epoch_ms, self._jar, self._pairs)
            if self._config_dir is not None:
                self._config_dir.cleanup()
        return self.recording
