"""benchmarks/jvm_counters.py, HotSpot's counters behind bench_recorder --counters, read back from
real JVM runs of tests/programs/hello, untraced and traced."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import agent_argument, clean_env

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import jvm_counters  # noqa: E402


def counted_run(java: str, args: list[str], path: Path, cwd: Path) -> dict[str, float]:
    result = subprocess.run([java, *jvm_counters.jvm_flags(path), *args], cwd=cwd, env=clean_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hello"), result.stdout
    return jvm_counters.read(Path(java), path)


def test_the_counters_of_an_untraced_and_a_traced_hello_world(compile_program, default_jdk, agent_jar, tmp_path):
    classes = compile_program("hello", default_jdk)
    plain = counted_run(default_jdk.java, ["-cp", str(classes), "Main"], tmp_path / "plain.bin", tmp_path)
    trace = tmp_path / "trace"
    traced = counted_run(default_jdk.java, [agent_argument(agent_jar, trace, {}), "-cp", str(classes), "Main"],
                         tmp_path / "traced.bin", tmp_path)
    assert set(plain) == set(traced) == {c[0] for c in jvm_counters.COUNTERS}
    # The program's own class comes from the application loader, which verifies what it loads.
    assert plain["parsed"] >= 1 and plain["verified"] >= 1
    assert plain["parsed"] + plain["from CDS"] > 300   # java.base's start-up, whatever CDS holds
    # Traced, the agent's own classes are parsed and verified too, and the JDK classes loaded after
    # the agent are parsed from their instrumented bytes instead of being mapped from the CDS
    # archive (those loaded before it were mapped, then redefined: still counted as shared).
    assert traced["verified"] >= plain["verified"] + 20
    assert traced["parsed"] >= plain["parsed"] + 300
    for column, _, is_time in jvm_counters.COUNTERS:
        assert traced[column] >= 0
        if is_time:
            assert traced[column] < 120   # seconds, not ticks
    assert (trace / "trace.json").is_file()


def test_a_run_that_left_no_counters_says_so(default_jdk, tmp_path):
    with pytest.raises(jvm_counters.CountersMissing, match="wrote no performance data"):
        jvm_counters.read(Path(default_jdk.java), tmp_path / "never-written.bin")
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(b"\xca\xfe\xc0\xc0" + b"\x00" * 60)   # the magic, then nothing sound
    with pytest.raises(jvm_counters.CountersMissing, match="jstat could not read"):
        jvm_counters.read(Path(default_jdk.java), damaged)
    with pytest.raises(jvm_counters.CountersMissing, match="not a HotSpot performance-data snapshot"):
        jvm_counters.parse("java.cls.loadedClasses=12\nsun.rt.javaCommand=\"Main\"\n")


def test_times_are_converted_with_the_clocks_frequency():
    got = jvm_counters.parse("sun.os.hrt.frequency=1000000000\nsun.cls.classVerifyTime.self=250000000\n"
                             "sun.cls.verifiedClasses=7\njava.ci.totalTime=3000000000\nsun.rt.javaCommand=\"x=1\"\n")
    assert got == {"verified": 7.0, "verify s": 0.25, "JIT s": 3.0}
