#!/usr/bin/env python3
"""Two recordings of javac at the same time: which costs less CPU, with the machine's noise cancelled.

bench_recorder.py times the untraced and traced runs one after the other, as a user would see
them, and on this shared two-core machine one run of the same build differs from the next by up
to 15% (level=method javac, 2026-12-02: 9.8 s to 14.4 s in one series). A change worth 2-5% cannot
be told apart that way in a session's runs. Here two recordings, A and B (two agent builds, or one
build with two sets of options), run at once, each on about one core, so that whatever else loads
the machine slows both alike; each run's CPU seconds (the children's rusage: the program, the
JIT compilers, the collector and the writer together) is compared, run by run. Which finishes
first then has the machine to itself for the rest, so CPU, not wall time, is the measure.
One core per JVM is not the benchmark's setting (the JIT shares the program's two cores there),
so the ratio says which is cheaper and by about how much, not the slowdown a user sees.

Measured on 2026-12-02 (level=method, JDK 17, 8 runs each): the same agent against itself 0.996
(per run 0.952-1.030); without the exception-exit handlers (an events file without
``exception_exit``) 0.944 (0.906-0.988).

    python benchmarks/agent_cpu_ab.py --b-agent OTHER/jbgui-agent.jar          # this build = A
    python benchmarks/agent_cpu_ab.py --options level=method --b-options level=method,events=FILE
    python benchmarks/agent_cpu_ab.py --runs 12 --a-agent X.jar --b-agent Y.jar
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_recorder import clean_env, javac_workload  # noqa: E402

from jbgui.agent.build import AgentBuildError, ensure_agent, find_java_home  # noqa: E402


def start(java: Path, agent: Path, options: str, args: list[str], cwd: Path) -> subprocess.Popen:
    cwd.mkdir(parents=True)
    trace = cwd / "trace"
    agent_arg = f"-javaagent:{agent}=out={trace}" + (f",{options}" if options else "")
    # stderr to a file, not a pipe: a JVM blocked on a full pipe while the other is waited for
    # would change what the pair measures.
    with open(cwd / "stderr", "wb") as err:
        return subprocess.Popen([str(java), agent_arg, *args], cwd=cwd, env=clean_env(),
                                stdout=subprocess.DEVNULL, stderr=err)


def cpu_of(proc: subprocess.Popen, cwd: Path) -> tuple[float, int, str]:
    """Waits for the process; its CPU seconds (user + system, itself and its children), exit status, stderr."""
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, proc.returncode, (cwd / "stderr").read_text(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="counted runs of the pair (default 8; one more first, uncounted)")
    parser.add_argument("--a-agent", type=Path, help="A's jbgui-agent.jar (default: this checkout's build)")
    parser.add_argument("--b-agent", type=Path, help="B's jbgui-agent.jar (default: A's)")
    parser.add_argument("--options", default="level=method", help="A's agent options besides out= (default level=method)")
    parser.add_argument("--b-options", help="B's agent options (default: A's)")
    parser.add_argument("--java-home", type=Path, help="the JDK to run (default: JAVA_HOME, else javac on PATH)")
    parser.add_argument("--package", default="java/util", help="the java.base package javac compiles (default java/util)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    try:
        a_agent = args.a_agent or ensure_agent()
        java_home = args.java_home or find_java_home()
    except AgentBuildError as error:
        print(f"agent_cpu_ab: {error}", file=sys.stderr)
        return 2
    b_agent = args.b_agent or a_agent
    b_options = args.options if args.b_options is None else args.b_options
    for jar in (a_agent, b_agent):
        if not Path(jar).is_file():
            print(f"agent_cpu_ab: no agent jar at {jar}", file=sys.stderr)
            return 2
    java = java_home / "bin" / "java"
    work = Path(tempfile.mkdtemp(prefix="agent-cpu-ab-"))
    try:
        workload = javac_workload(java_home, work, args.package)
        print(f"A: {a_agent} [{args.options}]\nB: {b_agent} [{b_options}]\njavac: {workload.setup_note}", flush=True)
        ratios: list[float] = []
        for i in range(args.runs + 1):
            da, db = work / f"a-{i}", work / f"b-{i}"
            pa = start(java, a_agent, args.options, workload.java_args, da)
            pb = start(java, b_agent, b_options, workload.java_args, db)
            (ca, ra, ea), (cb, rb, eb) = cpu_of(pa, da), cpu_of(pb, db)
            if ra != 0 or rb != 0:
                print(f"agent_cpu_ab: run {i}: exit status A {ra}, B {rb}\n{(ea if ra != 0 else eb)[-600:]}",
                      file=sys.stderr)
                return 1
            for side in ("a", "b"):
                shutil.rmtree(work / f"{side}-{i}", ignore_errors=True)
            if i == 0:
                print(f"run 0 (fills the class caches, not counted): A {ca:.2f} s, B {cb:.2f} s CPU", flush=True)
                continue
            ratios.append(cb / ca)
            print(f"run {i}: CPU A {ca:.2f} s, B {cb:.2f} s, B/A {cb / ca:.3f}", flush=True)
        print(f"B/A CPU: median {statistics.median(ratios):.3f} of {len(ratios)} runs "
              f"(per run {min(ratios):.3f}-{max(ratios):.3f}; below 1: B is cheaper)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
