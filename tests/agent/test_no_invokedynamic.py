"""The agent's own classes make no ``invokedynamic`` call.

The first call through an ``invokedynamic`` site (a lambda, a method reference, or ``+`` on strings
as javac compiles it by default since JDK 9) bootstraps ``java.lang.invoke``: hundreds of JDK
classes that the agent has just instrumented, interpreted, on the traced program's main thread
during start-up. perf showed it as a tenth of a traced hello world's CPU. The build compiles string
concatenation to StringBuilder calls (``jbgui.agent.build.NO_INVOKEDYNAMIC``) and the sources use
classes where a lambda would do; this test reads every class of the built jars and fails on any
``CONSTANT_InvokeDynamic`` entry, naming the class.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import classfile

from jbgui.agent import build

_INVOKE_DYNAMIC = classfile.INVOKE_DYNAMIC


def pool_tags(class_file: bytes) -> list[int]:
    """The tag of every constant-pool entry of a class file."""
    return classfile.constant_pool(class_file)[0]


def test_pool_reader_finds_an_invokedynamic_entry(tmp_path, default_jdk):
    """The check can fail: a class with a lambda, compiled here, has such an entry."""
    import subprocess

    source = tmp_path / "WithLambda.java"
    source.write_text("public class WithLambda { Runnable r = () -> {}; String s(int i) { return \"a\" + i; } }\n")
    subprocess.run([default_jdk.javac, "-d", str(tmp_path), str(source)], check=True)
    tags = pool_tags((tmp_path / "WithLambda.class").read_bytes())
    assert _INVOKE_DYNAMIC in tags
    subprocess.run([default_jdk.javac, *build.NO_INVOKEDYNAMIC, "-d", str(tmp_path / "inline"), str(source)],
                   check=True)
    assert pool_tags((tmp_path / "inline" / "WithLambda.class").read_bytes()).count(_INVOKE_DYNAMIC) == 1  # the lambda


def test_agent_classes_make_no_invokedynamic_call(agent_jar: Path):
    offenders, seen = [], 0
    for jar_name in (build.AGENT_JAR, build.RUNTIME_JAR, build.ENGINE_JAR):
        with zipfile.ZipFile(agent_jar.parent / jar_name) as jar:
            for name in jar.namelist():
                if name.startswith("jbgui/") and name.endswith(".class"):
                    seen += 1
                    if _INVOKE_DYNAMIC in pool_tags(jar.read(name)):
                        offenders.append(f"{jar_name}:{name}")
    assert seen > 50
    assert not offenders, f"classes with invokedynamic (a lambda or string +): {offenders}"
