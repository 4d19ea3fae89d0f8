#!/usr/bin/env python3
"""The recorder's cost, measured side by side: each workload untraced and traced, N times.

Workloads (``--workload``, repeatable; default: all that can run here):

``hello``         hello world: what a user feels first is the tracer's start-up. The first traced
                  run uses a fresh instrumentation cache and is reported apart ("hello-cold").
``javac``         javac compiling the top-level files of ``java/util`` (121 files on JDK 17) from
                  the JDK's own ``lib/src.zip`` (Debian: ``openjdk-17-source``), as a patch of
                  ``java.base``; traced three ways beside the untraced run: the default trace,
                  ``level=method``, ``blocking=off`` (the cost of the clock stamps around
                  blocking calls is the difference) and ``zlib`` (``-Djbgui.codec=zlib``: the
                  codec before zstd, for its cost and bytes/event); and under JaCoCo's agent (Debian
                  ``libjacoco-java``), the reference cost of instrumentation without a trace.
``kernel``        a compute-heavy kernel (integer loops, arrays, small methods).
``ant``           Apache Ant (Debian ``ant``) building a small generated project with its javac task.
``jedit``         jEdit (Debian ``jedit``) starting up until its first view shows, under a private Xvfb
                  display, with fresh settings each run (benchmarks/jedit_startup.py).

Every workload but ``hello`` also runs under JaCoCo's agent (``jacoco``; its start-up alone would be
timed on a hello world), the reference cost of instrumentation without a trace, and the report
gives traced / JaCoCo. jEdit's output is not compared (it logs timings); each run must reach the
first view instead.

Each recording variant first runs once uncounted, to fill its instrumentation cache (the targets
exclude a cold cache; hello world reports its cold run apart). Then, for each workload, the
untraced and traced runs alternate, ``--runs`` times; the script prints
medians of wall time, the slowdown (median of the per-pair ratios), the events recorded
(trace.json ``counts.events``), bytes per event, whether the traced run printed the same output
and exit status and passed ``jbtrace check``, and then each target of the recorder issue as met
or MISSED, and the README's performance table. It asserts nothing: numbers are for reading.

    python benchmarks/bench_recorder.py                   # everything, 3 runs each
    python benchmarks/bench_recorder.py --runs 1 --workload hello --workload kernel
    python benchmarks/bench_recorder.py --no-check         # skip jbtrace check (minutes on javac)
    python benchmarks/bench_recorder.py --workload javac --variant traced --variant blocking-off
    python benchmarks/bench_recorder.py --workload javac --variant method --variant method-discard
                                   # the writer's share: events made and handed over, not written
    python benchmarks/bench_recorder.py --baseline-agent OLD/jbgui-agent.jar --variant traced --workload hello
                                   # another build of the agent beside this one ("baseline"), only
                                   # the untraced, traced and baseline variants
    python benchmarks/bench_recorder.py --workload javac --variant method --threads --no-check
                                   # also the CPU seconds of the program's threads, the JIT
                                   # compilers, the collector and the agent's writer (thread_cpu.py)
    python benchmarks/bench_recorder.py --workload jedit --variant traced --counters --no-check
                                   # also HotSpot's counters: classes parsed and verified, and the
                                   # seconds verification, class loading and the JIT took (jvm_counters.py)
    python benchmarks/bench_recorder.py --cold --workload javac --variant traced --baseline-agent OLD --no-check
                                   # every recording run from an empty instrumentation cache, as a
                                   # user's first run: what instrumenting and describing cost
    python benchmarks/bench_recorder.py --workload hello --workload kernel --variant traced --variant javaagent
                                   # the agent loaded with -javaagent beside -agentlib:instrument=
                                   # (how jbtrace record loads it from the class path)

Agents are loaded as ``jbtrace record`` loads ours (jbgui.launch.command.agent_flag): a class-path
launch through ``-agentlib:instrument=``, a modular one (javac's ``-m``) through ``-javaagent``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
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
sys.path.insert(0, str(REPO / "benchmarks"))  # jedit_startup, thread_cpu, jvm_counters

from jbgui.agent.build import AgentBuildError, ensure_agent, find_java_home  # noqa: E402
from jbgui.launch.command import agent_flag  # noqa: E402

import jvm_counters  # noqa: E402

JAVAC_FLAGS = ["-implicit:none", "-proc:none", "-XDignore.symbol.file", "-nowarn"]
HELLO = 'public class Hello { public static void main(String[] a) { System.out.println("Hello, world!"); } }\n'
# A compute-heavy kernel: a sieve, a small matrix product and a hash loop through small methods,
# about a second untraced (0.7-0.8 s on this machine kind). It ran 3 rounds until 2026-11-26: with
# C2 that is 0.06 s of work in a 0.10 s run, so its slowdown measured the agent's start-up, not the
# probes in tight loops it is meant for.
KERNEL = r"""
public class Kernel {
    static int mix(int h, int v) { return (h ^ v) * 0x9E3779B1; }
    static boolean isPrime(boolean[] composite, int i) { return !composite[i]; }
    static long sieve(int n) {
        boolean[] composite = new boolean[n + 1];
        long sum = 0;
        for (int i = 2; i <= n; i++) {
            if (isPrime(composite, i)) {
                sum += i;
                for (long j = (long) i * i; j <= n; j += i) composite[(int) j] = true;
            }
        }
        return sum;
    }
    static double matmul(int n) {
        double[][] a = new double[n][n], b = new double[n][n], c = new double[n][n];
        for (int i = 0; i < n; i++) for (int j = 0; j < n; j++) { a[i][j] = i + j; b[i][j] = i - j; }
        for (int i = 0; i < n; i++) for (int k = 0; k < n; k++) { double x = a[i][k]; for (int j = 0; j < n; j++) c[i][j] += x * b[k][j]; }
        return c[n / 2][n / 3];
    }
    static int hash(int rounds) {
        int h = 1;
        for (int i = 0; i < rounds; i++) h = mix(h, i);
        return h;
    }
    public static void main(String[] args) {
        long s = 0;
        for (int r = 0; r < 60; r++) s += sieve(2_000_000) + (long) matmul(160) + hash(5_000_000);
        System.out.println("kernel " + s);
    }
}
"""
ANT_CLASSES = 40

# The targets of the recorder issue (issue 14).
TARGET_HELLO_TRACED_S = 0.5
TARGET_JAVAC_SLOWDOWN = 4.0
TARGET_METHOD_LEVEL_SLOWDOWN = 2.0
TARGET_KERNEL_SLOWDOWN = 3.0
TARGET_ANT_SLOWDOWN = 3.0
TARGET_JEDIT_SLOWDOWN = 3.0
TARGET_BYTES_PER_EVENT = 0.3


@dataclass
class Workload:
    name: str
    java_args: list[str]
    setup_note: str = ""
    prepare: object = None  # prepare(cwd): fills a fresh working directory before each run
    normalize: object = None  # normalize(stdout): drops what differs from run to run (timings)
    env: dict | None = None  # environment beside the cleaned one (jEdit's DISPLAY)
    verify: object = None  # verify(cwd) -> None, or what went wrong in the run (checked after each)


@dataclass
class Variant:
    """One way of running a workload: a label, and the agent (None: untraced, "jacoco": JaCoCo)."""

    label: str
    agent_options: str | None
    jacoco: bool = False
    #: JVM options before the agent's (e.g. -Djbgui.codec=zlib: the previous codec, for comparison).
    jvm: tuple[str, ...] = ()
    #: Another agent jar than the one built from this checkout (--baseline-agent).
    agent: Path | None = None
    #: Loaded with -javaagent whatever the launch (as before 2026-12-03), with a class cache of its
    #: own: its JVM loads other classes before the agent, so its preloaded layout is another.
    javaagent: bool = False


@dataclass
class Samples:
    seconds: dict[str, list[float]] = field(default_factory=dict)
    events: dict[str, list[int]] = field(default_factory=dict)
    event_bytes: dict[str, list[int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    #: per variant, per run: CPU seconds per thread group (thread_cpu.GROUPS), with --threads only
    cpu: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    #: per variant, per run: HotSpot's own counters (jvm_counters.COUNTERS), with --counters only
    counters: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    #: runs whose counters could not be read, and why (--counters)
    counter_errors: list[str] = field(default_factory=list)


def clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"):
        env.pop(name, None)
    return env


def timed_run(java: Path, args: list[str], cwd: Path, env: dict | None = None, threads: bool = False
              ) -> tuple[float, subprocess.CompletedProcess, dict[str, float] | None]:
    """Runs the JVM; with ``threads``, also its CPU seconds per thread group (thread_cpu.py)."""
    full_env = {**clean_env(), **(env or {})}
    if threads:
        import thread_cpu

        return thread_cpu.run([str(java), *args], cwd, full_env)
    started = time.perf_counter()
    result = subprocess.run([str(java), *args], cwd=cwd, capture_output=True, text=True, env=full_env)
    return time.perf_counter() - started, result, None


def compile_into(java_home: Path, src: Path, name: str, text: str) -> None:
    src.mkdir(parents=True, exist_ok=True)
    (src / f"{name}.java").write_text(text)
    subprocess.run([str(java_home / "bin" / "javac"), "-d", str(src), str(src / f"{name}.java")], check=True)


def hello_workload(java_home: Path, work: Path) -> Workload:
    src = work / "hello"
    compile_into(java_home, src, "Hello", HELLO)
    return Workload("hello", ["-cp", str(src), "Hello"])


def kernel_workload(java_home: Path, work: Path) -> Workload:
    src = work / "kernel"
    compile_into(java_home, src, "Kernel", KERNEL)
    return Workload("kernel", ["-cp", str(src), "Kernel"])


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


ANT_BUILD = """<project name="small" default="jar">
  <target name="jar">
    <mkdir dir="build/classes"/>
    <javac srcdir="src" destdir="build/classes" includeantruntime="false" release="17"/>
    <jar destfile="build/small.jar" basedir="build/classes"/>
  </target>
</project>
"""


def ant_workload(java_home: Path, work: Path) -> Workload:
    """Debian's Ant run in-process (its launcher class) on a generated project of small classes."""
    jars = [Path("/usr/share/java/ant-launcher.jar"), Path("/usr/share/java/ant.jar")]
    missing = [str(j) for j in jars if not j.exists()]
    if missing:
        raise SystemExit(f"{', '.join(missing)} missing: apt-get install ant")
    project = work / "ant-project"
    (project / "src" / "small").mkdir(parents=True)
    (project / "build.xml").write_text(ANT_BUILD)
    for i in range(ANT_CLASSES):
        (project / "src" / "small" / f"C{i}.java").write_text(
            f"package small;\nimport java.util.*;\npublic class C{i} {{\n"
            f"  private final List<String> items = new ArrayList<>();\n"
            f"  public int add(String s) {{ items.add(s); return items.size(); }}\n"
            f"  public Map<String, Integer> count() {{ Map<String, Integer> m = new TreeMap<>();"
            f" for (String s : items) m.merge(s, 1, Integer::sum); return m; }}\n"
            f"  public String next() {{ return new C{(i + 1) % ANT_CLASSES}().toString(); }}\n}}\n")

    def prepare(cwd: Path) -> None:
        shutil.copytree(project, cwd, dirs_exist_ok=True)

    args = ["-cp", os.pathsep.join(map(str, jars)), "-Dant.home=/usr/share/ant",
            "org.apache.tools.ant.launch.Launcher", "-noclasspath", "-q", "-f", "build.xml"]
    def normalize(stdout: str) -> str:
        return "\n".join(line for line in stdout.splitlines() if not line.startswith("Total time:"))

    return Workload("ant", args, f"{ANT_CLASSES} classes", prepare, normalize)


def jedit_workload(java_home: Path, work: Path, display: str) -> Workload:
    """jEdit's start-up until its first view shows (benchmarks/jedit_startup.py), on ``display``."""
    import jedit_startup

    home = work / "jedit"
    home.mkdir()
    args = jedit_startup.java_args(home, str(java_home / "bin" / "javac"))

    def prepare(_cwd: Path) -> None:
        jedit_startup.fresh_settings(home)

    def verify(_cwd: Path) -> str | None:
        return None if jedit_startup.view_was_shown(home) else "jEdit did not show its first view"

    return Workload("jedit", args, "until the first view shows", prepare, normalize=lambda out: "",
                    env={"DISPLAY": display}, verify=verify)


def jacoco_agent(work: Path) -> Path | None:
    """A runnable JaCoCo agent jar assembled from Debian's jars (its own agent jar has no
    Premain-Class): a manifest naming the agent's PreMain and its jars on the Class-Path."""
    share = Path("/usr/share/java")
    jars = [share / n for n in ("org.jacoco.agent.rt.jar", "org.jacoco.core.jar", "asm.jar", "asm-commons.jar",
                                "asm-tree.jar", "asm-analysis.jar")]
    if not all(j.exists() for j in jars):
        return None
    jar = work / "jacocoagent.jar"
    manifest = ("Manifest-Version: 1.0\r\nPremain-Class: org.jacoco.agent.rt.internal.PreMain\r\n"
                "Can-Retransform-Classes: true\r\nClass-Path: " + " ".join(j.as_uri() for j in jars) + "\r\n\r\n")
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest)
    return jar


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def jbtrace_check(trace: Path) -> str | None:
    """None when ``jbtrace check`` finds the trace sound, else its last lines."""
    result = subprocess.run([sys.executable, "-m", "jbgui.cli.main", "check", str(trace)], capture_output=True,
                            text=True, cwd=REPO)
    if result.returncode == 0:
        return None
    return (result.stdout + result.stderr).strip()[-300:]


def run_variant(workload: Workload, java: Path, agent: Path, jacoco: Path | None, variant: Variant, i: int,
                work: Path, samples: Samples, check: bool, keep: bool, reference: subprocess.CompletedProcess | None,
                cache_dir: Path | None = None, threads: bool = False, counters: bool = False
                ) -> subprocess.CompletedProcess:
    cwd = work / f"{workload.name}-{variant.label}-{i}"
    cwd.mkdir()
    if workload.prepare:
        workload.prepare(cwd)
    args = list(workload.java_args)
    trace = cwd / "trace"
    # Agents are loaded as jbtrace record loads ours (jbgui.launch.command.agent_flag): from the
    # class path through -agentlib:instrument=, which keeps CDS's module graph, else -javaagent.
    # JaCoCo too, so that traced/JaCoCo compares the instrumentation, not how it was attached.
    env = {**clean_env(), **(workload.env or {})}
    if variant.jacoco:
        jacoco_options = f"destfile={cwd / 'jacoco.exec'},excludes=org.jacoco.*:org.objectweb.*"
        args = [agent_flag("java", jacoco, jacoco_options, [str(java), *args], env), *args]
    elif variant.agent_options is not None:
        options = f"out={trace}" + (f",{variant.agent_options}" if variant.agent_options else "")
        if variant.javaagent and cache_dir is None:
            cache_dir = work / "javaagent-cache"
        if cache_dir is not None:
            options += f",cache={cache_dir}"
        jar = variant.agent or agent
        flag = f"-javaagent:{jar}={options}" if variant.javaagent \
            else agent_flag("java", jar, options, [str(java), *variant.jvm, *args], env)
        args = [*variant.jvm, flag, *args]
    perf_data = cwd / "hsperfdata.bin"
    if counters:
        # Every variant alike, the untraced run too: the same flags on both sides of each ratio.
        args = [*jvm_counters.jvm_flags(perf_data), *args]
    seconds, result, cpu = timed_run(java, args, cwd, workload.env, threads)
    samples.seconds.setdefault(variant.label, []).append(seconds)
    if cpu is not None:
        samples.cpu.setdefault(variant.label, []).append(cpu)
    if counters:
        try:
            samples.counters.setdefault(variant.label, []).append(jvm_counters.read(java, perf_data))
        except jvm_counters.CountersMissing as missing:
            samples.counter_errors.append(f"{variant.label} run {i}: {missing}")
    problem = workload.verify(cwd) if workload.verify else None
    if problem:
        samples.problems.append(f"{variant.label} run {i}: {problem}")
    same = (lambda out: workload.normalize(out)) if workload.normalize else (lambda out: out)
    if reference is not None and (result.returncode != reference.returncode
                                  or same(result.stdout) != same(reference.stdout)):
        samples.problems.append(f"{variant.label} run {i}: exit {result.returncode} vs untraced {reference.returncode}; "
                                f"stdout {'same' if same(result.stdout) == same(reference.stdout) else 'differs'}; "
                                f"stderr tail: {result.stderr[-300:]!r}")
    if variant.agent_options is not None and not variant.jacoco:
        meta_path = trace / "trace.json"
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            counts = meta.get("counts", {})
            if meta.get("status") != "complete":
                samples.problems.append(f"{variant.label} run {i}: trace status {meta.get('status')!r}")
            if counts.get("lost_events"):
                samples.problems.append(f"{variant.label} run {i}: {counts['lost_events']} events lost")
            samples.events.setdefault(variant.label, []).append(int(counts.get("events", 0)))
            samples.event_bytes.setdefault(variant.label, []).append(int(counts.get("event_bytes", 0)))
            if check and i == 0 and variant.label == "traced":
                found = jbtrace_check(trace)
                samples.checks.append(f"{variant.label}: " + ("sound" if found is None else f"NOT sound: {found}"))
        else:
            samples.problems.append(f"{variant.label} run {i}: no trace.json")
    if not keep:
        shutil.rmtree(cwd, ignore_errors=True)
    return result


def measure(workload: Workload, variants: list[Variant], java: Path, agent: Path, jacoco: Path | None, runs: int,
            work: Path, check: bool, keep: bool, threads: bool = False, cold: bool = False,
            counters: bool = False) -> Samples:
    samples = Samples()
    if cold:
        # Every recording run starts from an empty instrumentation cache, as a user's first run
        # does (and every run after the agent or the JDK changed): nothing to fill beforehand.
        for i in range(runs):
            reference = None
            for v in variants:
                recording = v.agent_options is not None and not v.jacoco
                cache = work / f"cold-cache-{v.label}-{i}" if recording else None
                result = run_variant(workload, java, agent, jacoco, v, i, work, samples, check, keep, reference,
                                     cache_dir=cache, threads=threads, counters=counters)
                if cache is not None:
                    shutil.rmtree(cache, ignore_errors=True)
                if not recording and not v.jacoco:
                    reference = result
            print(f"  {workload.name} run {i + 1}/{runs} (cold caches): "
                  + ", ".join(f"{v.label} {samples.seconds[v.label][-1]:.2f} s" for v in variants), file=sys.stderr,
                  flush=True)
        return samples
    if workload.name == "hello":
        # The first traced run with an empty instrumentation cache: start-up instruments the
        # classes loaded before the agent; every later run reads them from the cache.
        cold = work / "cold-cache"
        run_variant(workload, java, agent, jacoco, Variant("traced-cold", ""), 0, work, samples, False, keep, None,
                    cache_dir=cold)
        shutil.rmtree(cold, ignore_errors=True)
    # Every recording variant keeps a class cache of its own (per agent build and per set of
    # instrumentation options: level=method instruments other code), and the targets exclude a
    # cold cache: one uncounted run of each fills it. Without it the first level=method run of
    # javac, filling its cache, took 17.0 s against 8.4 and 8.8 s for the next two.
    for v in variants:
        if v.agent_options is not None and not v.jacoco:
            run_variant(workload, java, agent, jacoco, v, -1, work, Samples(), False, False, None)
    for i in range(runs):
        reference = None
        for v in variants:
            result = run_variant(workload, java, agent, jacoco, v, i, work, samples, check, keep, reference,
                                 threads=threads, counters=counters)
            if v.agent_options is None and not v.jacoco:
                reference = result
        print(f"  {workload.name} run {i + 1}/{runs}: "
              + ", ".join(f"{v.label} {samples.seconds[v.label][-1]:.2f} s" for v in variants), file=sys.stderr, flush=True)
    return samples


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run_ratios(s: Samples, label: str, base: str = "untraced") -> list[float]:
    """Each run's time over that of the ``base`` run next to it."""
    return [t / u for t, u in zip(s.seconds.get(label, []), s.seconds.get(base, [])) if u > 0]


def ratio(s: Samples, label: str, base: str = "untraced") -> float:
    """The median of the per-pair ratios: each run is compared with the untraced run next to it,
    which cancels most of the load other processes put on a shared machine."""
    return median(run_ratios(s, label, base))


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def spread(s: Samples, label: str, target: float, base: str = "untraced") -> str:
    """The per-run ratios' range and a bootstrap 90% interval of their median (resampled with a fixed
    seed), and whether the target lies inside it: on a shared machine one benchmark run's median
    moves by several percent, so a verdict near the target says little alone."""
    ratios = run_ratios(s, label, base)
    if len(ratios) < 2:
        return ""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    lo, hi = medians[100], medians[1899]
    near = "; the target is inside it: within this machine's noise" if lo <= target <= hi else ""
    return (f" (per run {min(ratios):.2f}x-{max(ratios):.2f}x; 90% interval of the median "
            f"{lo:.2f}x-{hi:.2f}x{near})")


def cpu_report(results: dict[str, Samples]) -> None:
    """With --threads: median CPU seconds per thread group and variant, and the total against the
    wall time (near 2 on two cores: the run is bound by CPU, and any group's growth costs wall time)."""
    if not any(s.cpu for s in results.values()):
        return
    import thread_cpu

    groups = thread_cpu.GROUPS
    header = f"{'workload':<8} {'variant':<14} " + " ".join(f"{g:>9}" for g in groups) + f" {'total':>7} {'cpu/wall':>8}"
    print("CPU seconds per thread group (medians; thread_cpu.py)")
    print(header)
    print("-" * len(header))
    for name, s in results.items():
        for label, runs in s.cpu.items():
            per_group = [median([run[g] for run in runs]) for g in groups]
            total = median([sum(run.values()) for run in runs])
            wall = median(s.seconds[label])
            print(f"{name:<8} {label:<14} " + " ".join(f"{v:>9.2f}" for v in per_group)
                  + f" {total:>7.2f} {total / wall:>8.2f}")
    print()


def counters_report(results: dict[str, Samples]) -> None:
    """With --counters: the medians of HotSpot's own counters per variant (jvm_counters.py): the
    classes parsed from class bytes, loaded from the CDS archive and verified, and the seconds
    verification, class loading as a whole and the JIT's compilations took."""
    if not any(s.counters or s.counter_errors for s in results.values()):
        return
    columns = [c[0] for c in jvm_counters.COUNTERS]
    header = f"{'workload':<8} {'variant':<14} " + " ".join(f"{c:>9}" for c in columns)
    print("HotSpot's counters (medians; jvm_counters.py: times on the threads that did the work)")
    print(header)
    print("-" * len(header))
    for name, s in results.items():
        for label, runs in s.counters.items():
            cells = []
            for column, _, is_time in jvm_counters.COUNTERS:
                value = median([run[column] for run in runs if column in run])
                cells.append(f"{value:>9.2f}" if is_time else f"{value:>9,.0f}")
            print(f"{name:<8} {label:<14} " + " ".join(cells))
        for error in s.counter_errors:
            print(f"  {name}: no counters for {error}")
    print()


def report(results: dict[str, Samples], runs: int, cold: bool = False) -> None:
    header = f"{'workload':<8} {'variant':<14} {'median s':>9} {'vs untraced':>12} {'events':>15} {'bytes/event':>11}"
    print(f"medians of {runs} run(s), variants alternating (ratios: median of the per-run ratios)")
    if cold:
        print("every recording run started from an empty instrumentation cache (--cold): the issue's targets, "
              "which exclude a cold cache, do not apply to these numbers")
    print(header)
    print("-" * len(header))
    for name, s in results.items():
        for label, secs in s.seconds.items():
            events = median(s.events.get(label, []))
            per_event = median(s.event_bytes.get(label, [])) / events if events else float("nan")
            r = ratio(s, label) if label not in ("untraced", "traced-cold") else float("nan")
            print(f"{name:<8} {label:<14} {median(secs):>9.3f} {r:>11.2f}x {events:>15,.0f} {per_event:>11.3f}")
    print()
    cpu_report(results)
    counters_report(results)
    print("targets (issue 14):")

    def line(text: str, value: float, ok: bool, note: str = "") -> None:
        print(f"  {text}: {value:.3f} -> {'not judged (--cold)' if cold else verdict(ok)}{note}")

    def slowdown(text: str, s: Samples, label: str, target: float) -> None:
        line(f"{text} <= {target}x", ratio(s, label), ratio(s, label) <= target, spread(s, label, target))

    if "hello" in results:
        h = results["hello"]
        if "traced" in h.seconds:   # not run when only other variants were asked for
            line(f"traced hello world <= {TARGET_HELLO_TRACED_S} s (warm cache)", median(h.seconds["traced"]),
                 median(h.seconds["traced"]) <= TARGET_HELLO_TRACED_S)
        if "traced-cold" in h.seconds:
            print(f"  (cold instrumentation cache, reported apart: {median(h.seconds['traced-cold']):.3f} s)")
    if "javac" in results:
        j = results["javac"]
        if "traced" in j.seconds:
            slowdown("javac on java/util", j, "traced", TARGET_JAVAC_SLOWDOWN)
        if "method" in j.seconds:
            slowdown("javac level=method", j, "method", TARGET_METHOD_LEVEL_SLOWDOWN)
        events = median(j.events.get("traced", []))
        if events and j.event_bytes.get("traced"):
            per = median(j.event_bytes["traced"]) / events
            line(f"javac <= {TARGET_BYTES_PER_EVENT} bytes/event", per, per <= TARGET_BYTES_PER_EVENT)
        if "blocking-off" in j.seconds:
            print(f"  cost of the clock stamps around blocking calls: traced / blocking=off = "
                  f"{ratio(j, 'traced', 'blocking-off'):.3f}")
    for name, s in results.items():
        for recorded, discarded in (("traced", "discard"), ("method", "method-discard")):
            if recorded in s.seconds and discarded in s.seconds:
                print(f"  {name}: the writer's share, {recorded} / {discarded} (events not written) = "
                      f"{ratio(s, recorded, discarded):.3f}")
        if "baseline" in s.seconds:
            print(f"  {name}: traced (this build) / baseline agent = {ratio(s, 'traced', 'baseline'):.3f} "
                  f"(median of the per-run ratios)")
        if "javaagent" in s.seconds and "traced" in s.seconds:
            per_run = run_ratios(s, "traced", "javaagent")
            print(f"  {name}: traced (as jbtrace record loads the agent) / loaded with -javaagent = "
                  f"{ratio(s, 'traced', 'javaagent'):.3f} (per run {min(per_run):.3f}-{max(per_run):.3f})")
    if "kernel" in results:
        slowdown("compute kernel", results["kernel"], "traced", TARGET_KERNEL_SLOWDOWN)
    if "ant" in results:
        slowdown("ant, small project", results["ant"], "traced", TARGET_ANT_SLOWDOWN)
    if "jedit" in results:
        slowdown("jEdit start-up", results["jedit"], "traced", TARGET_JEDIT_SLOWDOWN)
    for name, s in results.items():
        if "jacoco" in s.seconds:
            print(f"  {name}: traced / JaCoCo = {ratio(s, 'traced', 'jacoco'):.2f} (JaCoCo {ratio(s, 'jacoco'):.2f}x untraced)")
    checks = [(name, c) for name, s in results.items() for c in s.checks]
    if checks:
        print()
        print("jbtrace check (first traced run of each workload):")
        for name, c in checks:
            print(f"  {name} {c}")
    problems = [(name, p) for name, s in results.items() for p in s.problems]
    print()
    if problems:
        print("problems (a run did not behave like the untraced one, or lost events):")
        for name, p in problems:
            print(f"  {name}: {p}")
    else:
        print("nothing lost: every run printed the untraced output and exit status, no event was lost")
    print()
    print("README table:")
    print("| workload | untraced | traced | slowdown | level=method | JaCoCo | traced/JaCoCo | bytes/event |")
    print("|---|---|---|---|---|---|---|---|")
    for name, s in results.items():
        if "traced" not in s.seconds:
            continue
        events = median(s.events.get("traced", []))
        per = f"{median(s.event_bytes['traced']) / events:.3f}" if events else "—"
        method = f"{ratio(s, 'method'):.1f}x" if "method" in s.seconds else "—"
        jacoco = f"{ratio(s, 'jacoco'):.2f}x" if "jacoco" in s.seconds else "—"
        per_jacoco = f"{ratio(s, 'traced', 'jacoco'):.1f}" if "jacoco" in s.seconds else "—"
        print(f"| {name} | {median(s.seconds['untraced']):.2f} s | {median(s.seconds['traced']):.2f} s | "
              f"{ratio(s, 'traced'):.1f}x | {method} | {jacoco} | {per_jacoco} | {per} |")


WORKLOADS = ["hello", "kernel", "ant", "javac", "jedit"]
VARIANT_LABELS = ["traced", "method", "blocking-off", "zlib", "jacoco", "elide-off", "loops-off", "discard",
                  "method-discard", "javaagent"]


def variants_of(name: str, jacoco: Path | None, baseline: Path | None = None,
                only: list[str] | None = None) -> list[Variant]:
    v = [Variant("untraced", None), Variant("traced", "")]
    if baseline is not None:
        v.append(Variant("baseline", "", agent=baseline))
    if name == "javac":
        v += [Variant("method", "level=method"), Variant("blocking-off", "blocking=off"),
              Variant("zlib", "", jvm=("-Djbgui.codec=zlib",))]
    if only and "elide-off" in only:
        # every block probed, the first blocks too (jbgui.instr.BlockElision), against "traced"
        v.append(Variant("elide-off", "elide=off"))
    if only and "loops-off" in only:
        # every block of a tight loop probed (no loop records, jbgui.instr.LoopCycles), against "traced"
        v.append(Variant("loops-off", "loops=off"))
    if only and "discard" in only:
        # events recorded and handed over but neither encoded nor written (-Djbgui.discard=true):
        # traced / discard is the writer thread's share of the cost
        v.append(Variant("discard", "", jvm=("-Djbgui.discard=true",)))
    if only and "method-discard" in only:
        v.append(Variant("method-discard", "level=method", jvm=("-Djbgui.discard=true",)))
    if only and "javaagent" in only:
        # the agent loaded with -javaagent, as before: traced / javaagent is what loading the JPLIS
        # library directly (-agentlib:instrument=, jbgui.launch.command) saves a class-path launch
        v.append(Variant("javaagent", "", javaagent=True))
    if jacoco and name != "hello":
        # the reference cost of instrumentation without a trace (a hello world would time its start-up)
        v.append(Variant("jacoco", None, jacoco=True))
    if only:
        v = [x for x in v if x.label in ("untraced", "baseline") or x.label in only]
    return v


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each variant per workload (default 3)")
    parser.add_argument("--workload", choices=WORKLOADS, action="append", help="run only this workload (repeatable)")
    parser.add_argument("--java-home", type=Path, help="the JDK to run (default: JAVA_HOME, else javac on PATH)")
    parser.add_argument("--package", default="java/util", help="the java.base package javac compiles (default java/util)")
    parser.add_argument("--no-check", action="store_true", help="do not run jbtrace check on the traces")
    parser.add_argument("--keep", action="store_true", help="keep the work directory and the traces")
    parser.add_argument("--threads", action="store_true",
                        help="also report CPU seconds per thread group: the program, the JIT compilers, "
                             "the collector, the agent (Linux; samples /proc 20 times a second)")
    parser.add_argument("--counters", action="store_true",
                        help="also report HotSpot's own counters of each run: classes parsed, shared and verified, "
                             "the seconds verification, class loading and the JIT took (jvm_counters.py)")
    parser.add_argument("--cold", action="store_true",
                        help="start every recording run from an empty instrumentation cache (a user's first run), "
                             "instead of filling each variant's cache once uncounted")
    parser.add_argument("--baseline-agent", type=Path, metavar="JAR",
                        help="another build's jbgui-agent.jar, run beside this one as the variant 'baseline'")
    # A misspelt label would otherwise select nothing and time the untraced run alone.
    parser.add_argument("--variant", action="append", metavar="LABEL", choices=VARIANT_LABELS,
                        help="run only these variants (traced, method, blocking-off, zlib, jacoco; repeatable; "
                             "opt-in: elide-off, loops-off, discard, method-discard)"
                             " besides untraced and baseline")
    args = parser.parse_args(argv)

    try:
        agent = ensure_agent()
        java_home = args.java_home or find_java_home()
    except AgentBuildError as error:
        print(f"bench_recorder: {error}", file=sys.stderr)
        return 2
    java = java_home / "bin" / "java"
    work = Path(tempfile.mkdtemp(prefix="bench-recorder-"))
    jacoco = jacoco_agent(work)
    print(f"JDK {java_home}; agent {agent}; JaCoCo {jacoco or 'missing (apt-get install libjacoco-java)'}; "
          f"work dir {work}", file=sys.stderr)
    stack = contextlib.ExitStack()
    try:
        results: dict[str, Samples] = {}
        for name in args.workload or WORKLOADS:
            if name == "jedit":
                import jedit_startup

                try:
                    display = stack.enter_context(jedit_startup.xvfb_display())
                except jedit_startup.JeditMissing as missing:
                    print(f"bench_recorder: jedit skipped: {missing}", file=sys.stderr)
                    continue
                workload = jedit_workload(java_home, work, display)
            elif name == "hello":
                workload = hello_workload(java_home, work)
            elif name == "kernel":
                workload = kernel_workload(java_home, work)
            elif name == "ant":
                workload = ant_workload(java_home, work)
            else:
                workload = javac_workload(java_home, work, args.package)
            if workload.setup_note:
                print(f"{name}: {workload.setup_note}", file=sys.stderr)
            results[name] = measure(workload, variants_of(name, jacoco, args.baseline_agent, args.variant), java,
                                    agent, jacoco, args.runs, work,
                                    not args.no_check, args.keep, args.threads, args.cold, args.counters)
        stack.close()
        report(results, args.runs, args.cold)
    finally:
        stack.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
