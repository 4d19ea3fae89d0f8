"""What HotSpot itself counted in one run: classes parsed, shared from the CDS archive and verified, the time verification and
class loading took on the program's threads, the JIT's compile time (its jvmstat counters).

A traced run's extra time is not all the probes': the JVM also parses, verifies and links every
class the agent instrumented, and JDK 25 verifies the JDK's own classes once an agent has changed
them (the redefined ones since JDK-8330606, and those transformed as they load), which JDK 17
never does (``-Xlog:verification`` lists them). On jEdit's start-up JDK 25 verified ten times the
classes JDK 17 did, for most of a second of the program's threads (docs/recorder-cost.md,
"2026-12-04, fourth stop"). ``bench_recorder.py --counters`` runs
every JVM, untraced and traced alike, with :func:`jvm_flags` and reads the counters back with
:func:`read`, so that such a cost shows beside the wall times instead of being guessed from them.

HotSpot keeps the counters in its performance-data file and, with ``-XX:+PerfDataSaveToFile``,
writes them to a file of our choosing at exit; the JDK's own ``jstat -snap`` reads that file. Times
are the JVM's elapsed-time ticks (``sun.os.hrt.frequency`` a second), summed over the threads that
did the work: on two busy cores they include time a thread waited for one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

#: (column, counter, whether it is a time): what bench_recorder.py --counters prints, in order.
COUNTERS = (
    ("parsed", "java.cls.loadedClasses", False),        # loaded from class bytes
    ("from CDS", "java.cls.sharedLoadedClasses", False),  # loaded from the CDS archive, not parsed
    ("verified", "sun.cls.verifiedClasses", False),
    ("verify s", "sun.cls.classVerifyTime.self", True),
    ("classes s", "sun.cls.time", True),
    ("JIT s", "java.ci.totalTime", True),
)

_FREQUENCY = "sun.os.hrt.frequency"


class CountersMissing(RuntimeError):
    """The run left no counters to read (it died before exit, or jstat is missing)."""


def jvm_flags(path: Path) -> list[str]:
    """The JVM options that make one run write its counters to ``path`` when it exits."""
    return ["-XX:+UsePerfData", "-XX:+PerfDataSaveToFile", f"-XX:PerfDataSaveFile={path}"]


def parse(snapshot: str) -> dict[str, float]:
    """``jstat -snap``'s ``name=value`` lines, numeric values only, times in seconds."""
    raw: dict[str, int] = {}
    for line in snapshot.splitlines():
        name, sep, value = line.partition("=")
        if sep and value.lstrip("-").isdigit():
            raw[name.strip()] = int(value)
    frequency = raw.get(_FREQUENCY)
    if not frequency:
        raise CountersMissing(f"no {_FREQUENCY} among the counters: not a HotSpot performance-data snapshot")
    out: dict[str, float] = {}
    for column, counter, is_time in COUNTERS:
        if counter in raw:
            out[column] = raw[counter] / frequency if is_time else float(raw[counter])
    return out


def read(java: Path, path: Path) -> dict[str, float]:
    """The counters a run of ``java`` (the JDK's ``bin/java``) saved in ``path``, by column."""
    if not path.is_file() or path.stat().st_size == 0:
        raise CountersMissing(f"{path}: the JVM wrote no performance data (did it exit normally?)")
    jstat = java.with_name("jstat")
    if not jstat.is_file():
        raise CountersMissing(f"{jstat} is missing: the JDK's jstat reads the counters")
    try:
        result = subprocess.run([str(jstat), "-J-Djstat.showUnsupported=true", "-snap", path.resolve().as_uri()],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CountersMissing(f"jstat could not read {path}: {error}") from error
    if result.returncode != 0:
        raise CountersMissing(f"jstat could not read {path}: {result.stderr.strip()[-300:]}")
    return parse(result.stdout)
