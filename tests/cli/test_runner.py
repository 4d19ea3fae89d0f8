"""Running a program as a shell would: real child processes (sh, not a JVM), nothing mocked."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from jbgui.launch import LaunchError
from jbgui.launch.runner import exit_status, run_program


def test_exit_status_passes_through():
    assert run_program(["sh", "-c", "exit 3"]) == 3
    assert run_program(["true"]) == 0


def test_killed_by_a_signal_is_128_plus_its_number():
    assert run_program(["sh", "-c", "kill -KILL $$"]) == 128 + signal.SIGKILL
    assert exit_status(-signal.SIGTERM) == 143


def test_a_program_that_does_not_exist_is_127():
    with pytest.raises(LaunchError) as error:
        run_program(["/nonexistent/bin/java", "-version"])
    assert error.value.exit_status == 127
    assert "/nonexistent/bin/java" in str(error.value)


def test_a_program_that_is_not_executable_is_126(tmp_path):
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(LaunchError) as error:
        run_program([str(script)])
    assert error.value.exit_status == 126


# A Python process runs run_program in its main thread (signal handlers need it) on a shell child
# that reports the signals it gets; the test signals the Python process, as a user's `kill` would.
_HARNESS = textwrap.dedent("""
    import sys
    from jbgui.launch.runner import run_program
    child = '''
    trap 'echo child got TERM; exit 7' TERM
    trap 'echo child got INT; exit 8' INT
    echo ready
    while :; do sleep 0.05; done
    '''
    sys.exit(run_program(["sh", "-c", child]))
""")


def _start_harness() -> subprocess.Popen[str]:
    # A session of its own, so that the test's signal reaches only the harness, never pytest.
    process = subprocess.Popen([sys.executable, "-c", _HARNESS], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


@pytest.mark.parametrize("signum, status, message", [
    (signal.SIGTERM, 7, "child got TERM\n"),
    (signal.SIGINT, 8, "child got INT\n"),
])
def test_sigterm_and_sigint_are_forwarded_and_the_childs_status_returned(signum, status, message):
    process = _start_harness()
    process.send_signal(signum)
    out, _ = process.communicate(timeout=30)
    assert out == message
    assert process.returncode == status


def test_sigquit_does_not_kill_the_parent_while_the_child_runs():
    process = _start_harness()
    process.send_signal(signal.SIGQUIT)
    time.sleep(0.3)
    assert process.poll() is None, "SIGQUIT killed the parent"
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=30)
    assert out == "child got TERM\n"
    assert process.returncode == 7


def test_the_child_keeps_the_default_sigquit_action():
    # Were SIGQUIT ignored in the parent with SIG_IGN, the child would inherit that, and a JVM
    # would print no thread dump on Ctrl-\. Here the child's SIGQUIT kills it: 128 + 3.
    assert run_program(["sh", "-c", "kill -QUIT $$; sleep 5; exit 0"]) == 128 + signal.SIGQUIT


def test_stdin_and_stdout_are_the_childs_own(tmp_path):
    # Through a Python parent, as jbtrace runs it: the child reads our stdin and writes our stdout.
    harness = "import sys\nfrom jbgui.launch.runner import run_program\nsys.exit(run_program(['tr', 'a-z', 'A-Z']))"
    result = subprocess.run([sys.executable, "-c", harness], input="hello\nworld\n",
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    assert result.stdout == "HELLO\nWORLD\n"
    assert result.stderr == ""
