"""benchmarks/thread_cpu.py, the CPU split of bench_recorder --threads, on a real JVM whose program
thread burns a known amount of its own CPU time (tests/programs/spinner)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import agent_argument, clean_env

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import thread_cpu  # noqa: E402

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")


def test_thread_names_fall_into_their_groups():
    assert thread_cpu.group_of("C2 CompilerThre") == "jit-c2"
    assert thread_cpu.group_of("C1 CompilerThre") == "jit-c1"
    assert thread_cpu.group_of("GC Thread#1") == "gc"
    assert thread_cpu.group_of("G1 Refine#0") == "gc"
    assert thread_cpu.group_of("jbgui-trace-wri") == "agent"
    assert thread_cpu.group_of("VM Thread") == "jvm"
    assert thread_cpu.group_of("java") == "program"  # the main thread keeps the launcher's name
    assert thread_cpu.group_of("spinner") == "program"


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
def test_the_program_thread_and_the_writer_get_their_cpu(traced, compile_program, default_jdk, agent_jar, tmp_path):
    classes = compile_program("spinner", default_jdk)
    agent = [agent_argument(agent_jar, tmp_path / "trace", {})] if traced else []
    seconds, result, groups = thread_cpu.run([default_jdk.java, *agent, "-cp", str(classes), "Main", "400"],
                                             tmp_path, clean_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout == "spun true\n"
    assert set(groups) == set(thread_cpu.GROUPS)
    # The spinner stops at 400 ms of its own CPU time; the clock ticks every 10 ms, and the time a
    # thread spent after the last sample before it ended (up to 50 ms) is the unsampled rest.
    assert groups["program"] >= 0.3
    assert groups["program"] + groups["unsampled"] >= 0.39
    total = sum(groups.values())
    assert groups["program"] < total
    # No more CPU than the cores this process may run on give in the wall time (two here).
    assert total <= len(os.sched_getaffinity(0)) * seconds + 0.05
    if traced:
        # Millions of calls recorded: the writer encodes them on its own thread.
        assert groups["agent"] > 0
        assert (tmp_path / "trace" / "trace.json").is_file()
    else:
        assert groups["agent"] == 0
