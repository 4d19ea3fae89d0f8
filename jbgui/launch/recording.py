"""Record one run: check the inputs, run the program under the agent, write ``launch.json``.

This is what ``jbtrace record`` does; the explorer's Run → Run traced… does the same in the
background (:mod:`jbgui.launch.session`), sharing :func:`prepare_run` and
:meth:`PreparedRun.finish`. Nothing here prints, so that each front end reports in its own way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Mapping

from jbgui.launch.agent import locate_agent
from jbgui.launch.class_cache import prune_in_background as prune_class_cache
from jbgui.launch.command import check_command, program_name, traced_command
from jbgui.launch.errors import LaunchError
from jbgui.launch.options import RecorderOptions, agent_argument_options, agent_option_pairs
from jbgui.launch.report import (
    LAUNCH_FILE, TRACE_FILE, TraceSummary, read_trace_summary, write_launch_file,
)
from jbgui.launch.runner import run_program

# Names that mark a directory as holding a previous trace, which `replace=True` may delete.
_TRACE_MARKERS = (TRACE_FILE, LAUNCH_FILE, "static.xml", "events")


@dataclass(frozen=True)
class Recording:
    """The outcome of :func:`record`: where the trace is and how the program ended."""

    trace_dir: Path
    command: list[str]
    traced_command: list[str]
    exit_status: int
    wall_seconds: float
    summary: TraceSummary
    launch_file_problem: str | None = None


def default_trace_dir(argv: list[str], parent: Path = Path("."), now: datetime | None = None) -> Path:
    """A fresh directory ``<program>-<YYYYmmdd-HHMMSS>`` in ``parent``; ``-2``, ``-3``… if taken."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = f"{program_name(argv)}-{stamp}"
    candidate, number = Path(parent) / base, 2
    while candidate.exists():
        candidate, number = Path(parent) / f"{base}-{number}", number + 1
    return candidate


def prepare_trace_dir(trace_dir: Path, replace: bool = False) -> bool:
    """Make ``trace_dir`` an empty directory; return True when it had to be created.

    A non-empty directory is refused: a new run's per-thread files would sit beside an old run's
    and make one wrong trace. With ``replace`` a directory that holds a previous trace (and only
    that) is emptied first.
    """
    trace_dir = Path(trace_dir)
    if trace_dir.exists() and not trace_dir.is_dir():
        raise LaunchError(f"output path {str(trace_dir)!r} exists and is not a directory")
    if trace_dir.is_dir():
        entries = list(trace_dir.iterdir())
        if not entries:
            return False
        if not replace:
            raise LaunchError(
                f"output directory {str(trace_dir)!r} is not empty: record into a new directory, "
                "or replace the trace in it (jbtrace record --force)"
            )
        if not any((trace_dir / marker).exists() for marker in _TRACE_MARKERS):
            raise LaunchError(
                f"output directory {str(trace_dir)!r} holds files but no trace; it is left alone"
            )
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        return False
    try:
        trace_dir.mkdir(parents=True)
    except OSError as error:
        raise LaunchError(f"cannot create output directory {str(trace_dir)!r}: {error.strerror}") from None
    return True


PRUNE_WAIT_S = 5.0


@dataclass
class PreparedRun:
    """A run whose inputs were checked and whose trace directory is ready, not started yet.

    :func:`prepare_run` makes one; :func:`record` (blocking) and
    :class:`jbgui.launch.session.RecordingSession` (in the background) start ``command`` their own
    way, then call :meth:`finish` once the program ended, or :meth:`discard` when it never
    started. Both front ends thus check, build the traced command and write ``launch.json`` along
    one code path.
    """

    argv: list[str]
    options: RecorderOptions           # checked: absolute paths
    pairs: list[tuple[str, str]]       # the agent's options
    agent_jar: Path
    command: list[str]                 # the traced command line
    created_dir: bool                  # the trace directory did not exist before
    _config_dir: tempfile.TemporaryDirectory | None = None
    pruning: threading.Thread | None = None     # the class cache's pruning (jbgui.launch.class_cache)

    @property
    def trace_dir(self) -> Path:
        return Path(self.options.out)

    def release(self) -> None:
        """Delete the agent's config file (only written when a value holds a comma); the JVM
        reads it during start-up only."""
        if self._config_dir is not None:
            self._config_dir.cleanup()
            self._config_dir = None

    def discard(self) -> None:
        """The program never started: leave no empty trace directory behind."""
        self.release()
        out = self.trace_dir
        if self.created_dir and out.is_dir() and not any(out.iterdir()):
            out.rmdir()

    def finish(self, cwd: str | Path, status: int, wall: float, started_epoch_ms: int) -> Recording:
        """Write ``launch.json`` for the run that ended and read its summary."""
        self.release()
        launch_record = {
            "command": list(self.argv),
            "traced_command": list(self.command),
            "cwd": str(cwd),
            "exit_code": status,
            "wall_seconds": round(wall, 3),
            "started_epoch_ms": started_epoch_ms,
            "agent_jar": str(self.agent_jar),
            "agent_options": dict(self.pairs),
        }
        out = self.trace_dir
        problem = None
        try:
            write_launch_file(out, launch_record)
        except OSError as error:
            # The program ran and its trace may be fine (or the program removed its directory):
            # report it, but never lose the program's exit status over it.
            problem = f"cannot write {LAUNCH_FILE} in {out}: {error.strerror}"
        return Recording(out, list(self.argv), list(self.command), status, wall, read_trace_summary(out), problem)


def prepare_run(
    argv: list[str],
    options: RecorderOptions,
    *,
    replace: bool = False,
    agent_jar: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> PreparedRun:
    """Check everything that can be checked before a program starts, make the trace directory
    and build the traced command line for a program that runs in ``env`` (default: ours);
    :class:`LaunchError` when something is wrong (and then no directory of ours is left behind)."""
    options = options.checked()
    pairs = agent_option_pairs(options)
    check_command(argv)
    created = prepare_trace_dir(options.out, replace)
    config_dir: tempfile.TemporaryDirectory | None = None
    try:
        jar = agent_jar if agent_jar is not None else locate_agent()
        config_dir = tempfile.TemporaryDirectory(prefix="jbtrace-")
        command = traced_command(argv, jar, agent_argument_options(pairs, Path(config_dir.name)), env)
    except LaunchError:
        if config_dir is not None:
            config_dir.cleanup()
        if created and not any(Path(options.out).iterdir()):
            Path(options.out).rmdir()  # nothing ran: leave no empty directory behind
        raise
    # the agent's class cache gains a directory per agent build and JDK: old ones go meanwhile
    return PreparedRun(list(argv), options, pairs, jar, command, created, config_dir, prune_class_cache())


def record(
    argv: list[str],
    options: RecorderOptions,
    *,
    replace: bool = False,
    agent_jar: Path | None = None,
) -> Recording:
    """Run ``argv`` (a ``java`` or JDK-tool command line) under the agent and wait for it.

    Everything that can be checked is checked before anything starts, raising
    :class:`LaunchError`; a program that ran but failed is not an error here: its exit status is
    in the result (128 + N when killed by signal N).
    """
    run = prepare_run(argv, options, replace=replace, agent_jar=agent_jar)
    try:
        started_epoch_ms = int(time.time() * 1000)
        start = time.monotonic()
        status = run_program(run.command)
        wall = time.monotonic() - start
    except LaunchError:
        run.discard()
        raise
    finally:
        run.release()
    recording = run.finish(os.getcwd(), status, wall, started_epoch_ms)
    # a short program may end first: the pruning gets a little longer (cut short, it goes on at
    # the next recording)
    run.pruning.join(PRUNE_WAIT_S)
    return recording
