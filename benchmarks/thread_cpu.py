"""Where a JVM's CPU time goes: its threads' CPU seconds, grouped by what they do (Linux only).

A traced run on two cores is bound by CPU, not by one thread: the program's threads, the JIT
compilers and the agent's writer share the cores, so a traced/untraced wall-time ratio alone does
not say which of them grew. bench_recorder.py ``--threads`` runs every JVM through :func:`run`,
which samples ``/proc/PID/task/*/stat`` while the process runs and keeps each thread's last
reading; the process's total comes from the children's rusage, and what the samples missed (threads
that ended between two samples, the last interval) is reported as ``unsampled``.

Thread names are the kernel's (15 characters): HotSpot names its own threads ("C2 CompilerThre",
"GC Thread#0", "VM Thread"), the agent names its threads "jbgui-…", and a program's main thread
keeps the launcher's name, "java".
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from pathlib import Path

#: The groups, in the order reports print them.
GROUPS = ("program", "jit-c2", "jit-c1", "gc", "jvm", "agent", "unsampled")

# HotSpot's own threads other than the compilers and the collector (JDK 17 and 25 names, cut to 15).
_JVM_THREADS = ("VM Thread", "VM Periodic Tas", "Sweeper thread", "Service Thread", "Signal Dispatch",
                "Reference Handl", "Finalizer", "Common-Cleaner", "Monitor Deflati", "Notification Th",
                "Attach Listener")


def group_of(name: str) -> str:
    """The group of a thread called ``name`` (its /proc comm)."""
    if name.startswith("C2 Compiler"):
        return "jit-c2"
    if name.startswith("C1 Compiler"):
        return "jit-c1"
    if name.startswith(("GC Thread", "G1 ", "ZGC", "Shenandoah")):
        return "gc"
    if name.startswith("jbgui-"):
        return "agent"
    if name in _JVM_THREADS:
        return "jvm"
    return "program"


def _read_threads(pid: int, ticks: int) -> dict[int, tuple[str, float]]:
    """Each live thread's name and CPU seconds so far; empty once the process is gone."""
    found: dict[int, tuple[str, float]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue  # ended since the listing
        # The name is in parentheses and may itself hold spaces or parentheses.
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        found[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / ticks)  # utime + stime
    return found


def run(cmd: list[str], cwd: Path, env: dict[str, str], interval: float = 0.05
        ) -> tuple[float, subprocess.CompletedProcess, dict[str, float]]:
    """Runs ``cmd`` like subprocess.run (text output captured); returns its wall seconds, its
    result and its CPU seconds per group of :data:`GROUPS`. Other children of this process must
    not run meanwhile (the total is the children's rusage)."""
    ticks = os.sysconf("SC_CLK_TCK")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last: dict[int, tuple[str, float]] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            last.update(_read_threads(process.pid, ticks))
            done.wait(interval)

    sampler = threading.Thread(target=sample, name="thread-cpu", daemon=True)
    sampler.start()
    try:
        stdout, stderr = process.communicate()
    finally:
        done.set()
        sampler.join()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    groups = dict.fromkeys(GROUPS, 0.0)
    for name, cpu in last.values():
        groups[group_of(name)] += cpu
    groups["unsampled"] = max(0.0, total - sum(groups.values()))
    return seconds, subprocess.CompletedProcess(cmd, process.returncode, stdout, stderr), groups
