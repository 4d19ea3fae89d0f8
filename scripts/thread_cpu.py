"""CPU time per thread of a command's JVM, read from /proc while it runs (Linux).

Where a traced run's time goes, by thread: the program's threads, C2 and C1 (the JIT
compilers), the trace writer, GC. The numbers of issue 14's notes ("C2 20.7 s against 8.1 s
untraced") come from this::

    python scripts/thread_cpu.py -- java -javaagent:AGENT=out=/tmp/t,level=method -cp … Main

Threads are sampled every 50 ms; a thread's CPU is its last sample, so a thread that lives less
than that may be missed. Compiler and GC threads are summed by kind.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import time

KINDS = ("C2 CompilerThre", "C1 CompilerThre", "GC Thread", "G1 Conc", "G1 Refine")


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    tick = os.sysconf("SC_CLK_TCK")
    proc = subprocess.Popen(argv)
    last: dict[tuple[int, str], tuple[str, float]] = {}
    began = time.monotonic()
    while proc.poll() is None:
        for pid in _descendants(proc.pid):
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat") as f:
                        stat = f.read()
                except OSError:
                    continue
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2:].split()
                last[(pid, tid)] = (name, (int(fields[11]) + int(fields[12])) / tick)
        time.sleep(0.05)
    wall = time.monotonic() - began
    by_kind: collections.Counter[str] = collections.Counter()
    for name, cpu in last.values():
        by_kind[next((k for k in KINDS if name.startswith(k)), name)] += cpu
    print(f"wall {wall:.2f} s, cpu {sum(by_kind.values()):.2f} s, exit {proc.returncode}", file=sys.stderr)
    for name, cpu in by_kind.most_common(12):
        print(f"  {cpu:7.2f} s  {name}", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
