#!/usr/bin/env python3
"""The recorder's cost, measured side by side: each workload untraced and traced, N times.

Workloads:

``hello``  hello world: what a user feels first is the tracer's start-up.
``javac``  javac compiling the top-level files of ``java/util`` (121 files on JDK 17) from the
           JDK's own ``lib/src.zip`` (Debian: ``apt-get install openjdk-17-source``), as a patch
           of ``java.base``.

For each workload the untraced and the traced run alternate, ``--runs`` times; the script prints
medians of wall time, the slowdown, the events recorded (trace.json ``counts.events``), the bytes
of the event streams on disk (``counts.event_bytes``) and bytes per event, beside the targets
of the recorder issue. It asserts nothing: numbers are for reading.

    python benchmarks/bench_recorder.py                 # both workloads, 3 runs each
    python benchmarks/bench_recorder.py --runs 5 --workload hello
    python benchmarks/bench_recorder.py --agent-options level=method
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from jbgui.agent.build import AgentBuildError, ensure_agent, find_java_home  # noqa: E402

JAVAC_FLAGS = ["-implicit:none", "-proc:none", "-XDignore.symbol.file", "-nowarn"]
HELLO = 'public class Hello { public static void main(String[] a) { System.out.println("Hello, world!"); } }\n'

# The first targets of the recorder issue.
TARGET_HELLO_TRACED_S = 1.0
TARGET_JAVAC_SLOWDOWN = 4.0
TARGET_BYTES_PER_EVENT = 1.0


@dataclass
class Workload:
    name: str
    java_args: list[str]
    setup_note: str = ""


@dataclass
class Samples:
    untraced_s: list[float] = field(default_factory=list)
    traced_s: list[float] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    event_bytes: list[int] = field(default_factory=list)
    disk_bytes: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"):
        env.pop(name, None)
    return env


def timed_run(java: Path, args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    result = subprocess.run([str(java), *args], cwd=cwd, capture_output=True, text=True, env=clean_env())
    return time.perf_counter() - started, result


def hello_workload(java_home: Path, work: Path) -> Workload:
    src = work / "hello"
    src.mkdir()
    (src / "Hello.java").write_text(HELLO)
    subprocess.run([str(java_home / "bin" / "javac"), "-d", str(src), str(src / "Hello.java")], check=True)
    return Workload("hello", ["-cp", str(src), "Hello"])


def javac_workload(java_home: Path, work: Path, package: str) -> Workload:
    src_zip = java_home / "lib" / "src.zip"
    if not src_zip.exists():
        raise SystemExit(f"{src_zip} is missing: install the JDK's sources (Debian: apt-get install openjdk-17-source)")
    prefix = f"java.base/{package}/"
    root = work / "src"
    with zipfile.ZipFile(src_zip) as archive:
        names = [n for n in archive.namelist() if n.startswith(prefix) and n.endswith(".java") and "/" not in n[len(prefix):]]
        for name in names:
            archive.extract(name, root)
    files = sorted(str(root / n) for n in names)
    args = ["-m", "jdk.compiler/com.sun.tools.javac.Main", "--patch-module", f"java.base={root / 'java.base'}",
            "-d", "out", *JAVAC_FLAGS, *files]
    return Workload("javac", args, f"{len(files)} files of {package}")


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(workload: Workload, java: Path, agent: Path, agent_options: str, runs: int, work: Path, keep: bool) -> Samples:
    samples = Samples()
    for i in range(runs):
        plain_cwd = work / f"{workload.name}-untraced-{i}"
        traced_cwd = work / f"{workload.name}-traced-{i}"
        plain_cwd.mkdir()
        traced_cwd.mkdir()
        seconds, plain = timed_run(java, workload.java_args, plain_cwd)
        samples.untraced_s.append(seconds)

        trace = traced_cwd / "trace"
        options = f"out={trace}" + (f",{agent_options}" if agent_options else "")
        seconds, traced = timed_run(java, [f"-javaagent:{agent}={options}", *workload.java_args], traced_cwd)
        samples.traced_s.append(seconds)

        if traced.returncode != plain.returncode or traced.stdout != plain.stdout:
            samples.problems.append(
                f"run {i}: traced exit {traced.returncode} vs untraced {plain.returncode}; "
                f"stdout {'same' if traced.stdout == plain.stdout else 'differs'}; "
                f"traced stderr tail: {traced.stderr[-500:]!r}"
            )
        trace_json = trace / "trace.json"
        if trace_json.exists():
            meta = json.loads(trace_json.read_text())
            if meta.get("status") != "complete":
                samples.problems.append(f"run {i}: trace status {meta.get('status')!r}")
            counts = meta.get("counts", {})
            samples.events.append(int(counts.get("events", 0)))
            samples.event_bytes.append(int(counts.get("event_bytes", 0)))
            events_dir = trace / "events"
            samples.disk_bytes.append(dir_bytes(events_dir) if events_dir.is_dir() else 0)
        else:
            samples.problems.append(f"run {i}: no trace.json in {trace}")
        if not keep:
            shutil.rmtree(plain_cwd, ignore_errors=True)
            shutil.rmtree(traced_cwd, ignore_errors=True)
        print(f"  {workload.name} run {i + 1}/{runs}: untraced {samples.untraced_s[-1]:.2f} s, "
              f"traced {samples.traced_s[-1]:.2f} s", file=sys.stderr, flush=True)
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def slowdown(s: Samples) -> float:
    """The median of the per-pair ratios: each traced run is compared with the untraced run next
    to it, which cancels most of the load other processes put on a shared machine."""
    return median([t / u for t, u in zip(s.traced_s, s.untraced_s)])


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def report(results: dict[str, Samples], runs: int) -> None:
    header = (f"{'workload':<8} {'untraced s':>10} {'traced s':>9} {'slowdown':>9} {'events':>14} "
              f"{'event bytes':>13} {'on disk':>13} {'bytes/event':>11}")
    print(f"medians of {runs} run(s), untraced and traced alternating (slowdown: median of the pairs' ratios)")
    print(header)
    print("-" * len(header))
    for name, s in results.items():
        untraced, traced = median(s.untraced_s), median(s.traced_s)
        events, event_bytes, disk = median(s.events), median(s.event_bytes), median(s.disk_bytes)
        per_event = event_bytes / events if events else float("nan")
        print(f"{name:<8} {untraced:>10.3f} {traced:>9.3f} {slowdown(s):>8.2f}x {events:>14,.0f} "
              f"{event_bytes:>13,.0f} {disk:>13,.0f} {per_event:>11.3f}")
    print()
    print("targets:")
    if "hello" in results:
        traced = median(results["hello"].traced_s)
        print(f"  traced hello world < {TARGET_HELLO_TRACED_S:.0f} s: {traced:.3f} s -> {verdict(traced < TARGET_HELLO_TRACED_S)}")
    if "javac" in results:
        ratio = slowdown(results["javac"])
        print(f"  javac slowdown < {TARGET_JAVAC_SLOWDOWN:.0f}x: {ratio:.2f}x -> {verdict(ratio < TARGET_JAVAC_SLOWDOWN)}")
    for name, s in results.items():
        events = median(s.events)
        if events:
            per_event = median(s.event_bytes) / events
            print(f"  {name}: < {TARGET_BYTES_PER_EVENT:.0f} byte/event: {per_event:.3f} -> {verdict(per_event < TARGET_BYTES_PER_EVENT)}")
    problems = [(name, p) for name, s in results.items() for p in s.problems]
    if problems:
        print()
        print("problems (the traced run did not behave like the untraced one):")
        for name, p in problems:
            print(f"  {name}: {p}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="untraced/traced pairs per workload (default 3)")
    parser.add_argument("--workload", choices=["hello", "javac"], action="append",
                        help="run only this workload (repeatable; default: both)")
    parser.add_argument("--java-home", type=Path, help="the JDK to run (default: JAVA_HOME, else javac on PATH)")
    parser.add_argument("--package", default="java/util", help="the java.base package javac compiles (default java/util)")
    parser.add_argument("--agent-options", default="", help="extra agent options, e.g. level=method,jdk=off")
    parser.add_argument("--keep", action="store_true", help="keep the work directory and the traces")
    args = parser.parse_args(argv)

    try:
        agent = ensure_agent()
        java_home = args.java_home or find_java_home()
    except AgentBuildError as error:
        print(f"bench_recorder: {error}", file=sys.stderr)
        return 2
    java = java_home / "bin" / "java"
    workloads = args.workload or ["hello", "javac"]
    work = Path(tempfile.mkdtemp(prefix="bench-recorder-"))
    print(f"JDK {java_home}; agent {agent}; options '{args.agent_options or 'defaults'}'; work dir {work}", file=sys.stderr)
    try:
        results: dict[str, Samples] = {}
        for name in workloads:
            workload = hello_workload(java_home, work) if name == "hello" else javac_workload(java_home, work, args.package)
            if workload.setup_note:
                print(f"{name}: {workload.setup_note}", file=sys.stderr)
            results[name] = measure(workload, java, agent, args.agent_options, args.runs, work, args.keep)
        report(results, args.runs)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
