"""What the agent itself costs the program: the JDK classes it loads, and what it says of threads.

Every JDK class the agent loads before it instruments the classes already loaded is one more class
to redefine at start-up, and on JDK 25, which verifies every redefined class, one more to verify
(docs/recorder-cost.md). These tests hold the classes the agent learnt to do without.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

# JDK classes that the agent used to load for itself and no longer does (with what loaded them):
# none of them is loaded by an untraced hello world either, on any JDK the tests run. (The three
# buffers an OutputStreamWriter's first write loads, which the agent no longer makes either, are
# not here: hello world's println loads them on JDK 17.)
DONE_WITHOUT = (
    "java.nio.charset.StandardCharsets",       # its initializer makes eight charsets (jbgui.output.Utf8)
    "sun.nio.cs.UTF_32",
    "java.util.concurrent.atomic.AtomicLongArray",  # the transformer's phase times
    "java.util.concurrent.atomic.AtomicIntegerArray",  # the class cache's counts
    "java.time.Duration",                      # reflection over Thread's methods (isVirtual)
    "java.io.InputStreamReader",               # reading include/exclude/events files
    "java.util.zip.Deflater",                  # zlib, made only when zstd is not the codec
    "jdk.internal.reflect.MethodHandleIntegerFieldAccessorImpl",  # reading ASM's version fields
)


def loaded_classes(log) -> set[str]:
    return loaded_classes_in(log.read_text())


def loaded_before_instrumenting(log) -> set[str]:
    """The classes loaded before the first redefinition: those the agent instruments at start-up.

    (Later loads are the program's, or on JDK 25 the verifier's: it loads the classes it checks
    the redefined ones' assignments against, InputStreamReader among them.)"""
    text = log.read_text()
    first = text.index("source: __VM_RedefineClasses__")
    return loaded_classes_in(text[:first])


def loaded_classes_in(text: str) -> set[str]:
    return set(re.findall(r"\[class,load\s*\] (\S+) source:", text))


def test_the_agent_loads_none_of_the_jdk_classes_it_does_without(jdk, record, run_untraced, tmp_path):
    untraced_log = tmp_path / "untraced.log"
    traced_log = tmp_path / "traced.log"
    untraced = run_untraced("hello", jdk, jvm_args=[f"-Xlog:class+load=info:file={untraced_log}"])
    traced = record("hello", jdk, jvm_args=[f"-Xlog:class+load=info:file={traced_log}"])
    assert untraced.exit_code == 0 and traced.exit_code == 0, traced.describe()
    assert traced.stdout == untraced.stdout
    untraced_classes, traced_classes = loaded_classes(untraced_log), loaded_before_instrumenting(traced_log)
    assert "jbgui.agent.Engine" in traced_classes  # the log is the traced run's
    assert not untraced_classes & set(DONE_WITHOUT), "the program itself loads one: the test no longer tests it"
    assert sorted(traced_classes & set(DONE_WITHOUT)) == []


def test_include_and_events_files_are_read_without_a_reader(jdk, record, tmp_path):
    include = tmp_path / "include.txt"
    include.write_text("Main\r\njava/io/PrintStream\n\n")  # CRLF and a blank line, as editors leave them
    events = tmp_path / "events.txt"
    events.write_text("event method_start\nevent method_end\nevent basic_block\n")
    run = record("hello", jdk, include=include, events=events)
    assert run.exit_code == 0, run.describe()
    static = (run.trace_dir / "static.xml").read_text()
    traced = set(re.findall(r'<class id="\d+" name="([^"]+)"[^>]* instrumented="true"', static))
    assert "Main" in traced and "java/io/PrintStream" in traced
    assert "java/lang/String" not in traced


def test_zlib_when_asked_for_writes_a_sound_trace(jdk, record, tmp_path):
    # Deflater is made only when zlib is the codec (-Djbgui.codec=zlib, or no zstd): that path
    # must still write every chunk.
    log = tmp_path / "traced.log"
    run = record("hello", jdk, jvm_args=["-Djbgui.codec=zlib", f"-Xlog:class+load=info:file={log}"])
    assert run.exit_code == 0, run.describe()
    assert "java.util.zip.Deflater" in loaded_before_instrumenting(log)
    check = subprocess.run([sys.executable, "-m", "jbgui.cli.main", "check", str(run.trace_dir)], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0 and "sound" in check.stdout, check.stdout + check.stderr
    assert run.trace_json()["counts"]["chunks"] > 0
