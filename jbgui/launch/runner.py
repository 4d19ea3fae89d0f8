"""Run a program in its own process, as a shell would run it in the foreground.

The child inherits stdin, stdout and stderr, so its output stays its own and it can be
interactive. SIGINT and SIGTERM sent to us are forwarded to it, so that the JVM's shutdown hooks
run (the agent's final flush is one of them) and the trace comes out complete; we then report the
exit status the JVM chose. (At a terminal, Ctrl-C also reaches the JVM directly, since it stays in
our process group so that it may read the terminal; the second SIGINT is harmless: the JVM's
shutdown is already under way and the second request waits for it.) SIGQUIT is ignored here while the child runs: at a terminal Ctrl-\\
reaches the JVM too, which prints a thread dump and goes on, and it must not kill us meanwhile.
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from jbgui.launch.errors import CANNOT_EXECUTE, COMMAND_NOT_FOUND, LaunchError

FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_status(returncode: int) -> int:
    """A shell's exit status for a child's return code: killed by signal N gives 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def run_program(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``argv`` to completion with inherited standard streams; return its exit status.

    Raises :class:`LaunchError` with status 127 when the program does not exist and 126 when it
    cannot be executed. Signal forwarding needs the main thread (Python only lets it install
    handlers); from another thread the child still runs, without forwarding.
    """
    in_main_thread = threading.current_thread() is threading.main_thread()
    child: subprocess.Popen[bytes] | None = None
    pending: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        # A signal that arrives before the child exists is kept and delivered once it does.
        if child is None:
            pending.append(signum)
        else:
            child.send_signal(signum)  # a no-op once the child has been reaped

    def ignore(_signum: int, _frame: object) -> None:
        pass

    previous: dict[int, object] = {}
    try:
        if in_main_thread:
            for signum in FORWARDED_SIGNALS:
                previous[signum] = signal.signal(signum, forward)
            # A handler that does nothing, not SIG_IGN: an ignored signal stays ignored across
            # exec, and the JVM would then not install its own (thread dump) handler for it.
            # A caught signal is reset to the default in the child.
            previous[signal.SIGQUIT] = signal.signal(signal.SIGQUIT, ignore)
        try:
            child = subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env))
        except FileNotFoundError as error:
            missing = error.filename or argv[0]
            if cwd is not None and not Path(cwd).is_dir():
                raise LaunchError(f"working directory {str(cwd)!r} does not exist", COMMAND_NOT_FOUND) from None
            raise LaunchError(f"{missing}: command not found", COMMAND_NOT_FOUND) from None
        except PermissionError:
            raise LaunchError(f"{argv[0]}: permission denied (not executable)", CANNOT_EXECUTE) from None
        except OSError as error:
            raise LaunchError(f"{argv[0]}: cannot execute: {error.strerror}", CANNOT_EXECUTE) from None
        for signum in pending:
            child.send_signal(signum)
        return exit_status(child.wait())
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
