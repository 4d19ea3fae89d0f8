"""Every class of each JDK's runtime image instruments to bytecode the JVM's verifier accepts.

ImageCheck.java loads and links every class of the image (all modules) under the agent. HotSpot
verifies the bootstrap loader's classes only with -XX:+BytecodeVerificationLocal, so the check
turns it on; linking (getDeclaredMethods) is what runs the verifier. The agent instruments
exactly as in a traced run but records nothing (record=off), so the check is about the code, not
the trace volume. Two JVMs at a time split the classes between the two cores.

Default suite: a third of each JDK's classes (every sixth class from two offsets, other offsets
on each JDK; the whole image took 134 s a JDK, the longest tests of the suite), the default JDK
with the default block analysis, the others with the precise one, whose extra blocks stress the
64 KiB limit. The slow suite checks every class of each JDK with both analyses.
"""

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SHARDS = 2       # JVMs at a time
PARTS = 6        # the image is checked in this many parts (every PARTS-th class from an offset)


def check_image(jdk, agent_jar: Path, tmp: Path, bba: str, parts: tuple[int, ...] = tuple(range(PARTS))) -> None:
    """Check the classes of ``parts`` (offsets modulo :data:`PARTS`) of the image."""
    classes = tmp / "classes"
    subprocess.run([jdk.javac, "-d", str(classes), str(HERE / "ImageCheck.java")], check=True)

    def shard(i: int):
        out = tmp / f"trace{i}"
        cmd = [jdk.java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+BytecodeVerificationLocal",
               "--add-modules", "ALL-SYSTEM", f"-javaagent:{agent_jar}=out={out},record=off,cache=off,bba={bba}",
               "-cp", str(classes), "ImageCheck", str(i), str(PARTS)]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        return out, result

    with ThreadPoolExecutor(SHARDS) as pool:
        results = list(pool.map(shard, parts))
    total_linked = 0
    for out, result in results:
        assert result.returncode == 0, result.stderr[-3000:]
        failures = [line for line in result.stdout.splitlines() if line.startswith(("VERIFY", "OTHER"))]
        assert failures == [], "\n".join(failures[:20])
        summary = dict(re.findall(r"(\w+)=(\d+)", result.stdout.splitlines()[-1]))
        assert int(summary["verify_failures"]) == 0 and int(summary["other_failures"]) == 0
        total_linked += int(summary["linked"])
        total = int(summary["total"])
        log = (out / "agent.log").read_text()
        errors = [line for line in log.splitlines() if line.startswith("error")]
        assert errors == [], "\n".join(errors[:20])
        trace = (out / "trace.json").read_text()
        assert '"status": "complete"' in trace
    # Every class of those parts was loaded, instrumented and linked.
    assert total > 20000
    assert total_linked == sum(len(range(i, total, PARTS)) for i in parts)


def first_bba(jdk, default_jdk) -> str:
    return "default" if jdk == default_jdk else "precise"


def test_image_classes_verify_after_instrumentation(jdk, default_jdk, agent_jar, tmp_path):
    """A third of the image: offsets 0 and 1 on the default JDK, 2 and 3 on the others."""
    first = 0 if jdk == default_jdk else 2
    check_image(jdk, agent_jar, tmp_path, first_bba(jdk, default_jdk), (first, first + 1))


@pytest.mark.slow
def test_every_image_class_verifies_after_instrumentation(jdk, default_jdk, agent_jar, tmp_path):
    check_image(jdk, agent_jar, tmp_path, first_bba(jdk, default_jdk))


@pytest.mark.slow
def test_every_image_class_verifies_with_the_other_block_analysis(jdk, default_jdk, agent_jar, tmp_path):
    check_image(jdk, agent_jar, tmp_path, "precise" if first_bba(jdk, default_jdk) == "default" else "default")
