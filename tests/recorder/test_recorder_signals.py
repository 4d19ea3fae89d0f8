"""A traced program ended by a signal: SIGTERM leaves a complete trace, SIGKILL one that loads.

tests/programs/long_running prints "ready" after a burst of work and then runs until killed.
"""

from __future__ import annotations

import selectors
import signal
import subprocess
import time

import pytest

READY = "ready 199999"


def wait_until_ready(process: subprocess.Popen, timeout: float = 120.0) -> str:
    """The first stdout line, once the program has printed it."""
    # selectors (poll), not select.select: a long session may hold file descriptors above 1024.
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        readable = selector.select(timeout)
    if not readable:
        process.kill()
        pytest.fail(f"the program printed nothing within {timeout} s:\n{process.communicate()[1]}")
    line = process.stdout.readline()
    if not line:
        process.wait(timeout=30)
        pytest.fail(f"the program ended before it was ready (exit {process.returncode}):\n{process.stderr.read()}")
    return line.rstrip("\n")


def signal_and_wait(process: subprocess.Popen, sig: int) -> tuple[int, str]:
    process.send_signal(sig)
    try:
        _, stderr = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
        pytest.fail(f"the JVM did not end within 120 s of signal {sig}:\n{stderr}")
    return process.returncode, stderr


def test_sigterm_leaves_a_complete_trace(jdk, start_program, facts):
    untraced, _ = start_program("long_running", jdk, traced=False)
    assert wait_until_ready(untraced) == READY
    untraced_exit, _ = signal_and_wait(untraced, signal.SIGTERM)

    traced, trace_dir = start_program("long_running", jdk)
    assert wait_until_ready(traced) == READY
    time.sleep(0.5)
    traced_exit, stderr = signal_and_wait(traced, signal.SIGTERM)
    assert traced_exit == untraced_exit == 128 + signal.SIGTERM, stderr

    trace = facts(trace_dir)
    assert trace.metadata["status"] == "complete", stderr
    assert trace.trace.problems == []
    main = trace.thread("main")
    tick = trace.method_id("Main", "tick", "(I)V")
    starts, ends, exits = trace.frames(tick, main)
    assert starts >= 200_000
    # SIGTERM may land in the middle of a tick: at most one frame is still open.
    assert starts - 1 <= ends <= starts and exits == 0
    assert trace.thread_row(main)["alive_at_exit"] is True


def test_sigkill_leaves_a_trace_that_loads(jdk, start_program, facts):
    traced, trace_dir = start_program("long_running", jdk)
    assert wait_until_ready(traced) == READY
    # Give the background writer time to flush the burst of work that preceded "ready".
    time.sleep(2.0)
    exit_code, stderr = signal_and_wait(traced, signal.SIGKILL)
    assert exit_code == -signal.SIGKILL

    trace = facts(trace_dir)
    assert trace.metadata["status"] == "running", "a killed JVM cannot have finished its trace"
    main = trace.thread("main")
    tick = trace.method_id("Main", "tick", "(I)V")  # static.xml was written as classes loaded
    assert trace.starts(tick, main) > 0, "the events flushed before the kill load"
    # What reached the disk is valid: no chunk in the middle of a stream is damaged.
    assert trace.trace.problems == [], stderr
