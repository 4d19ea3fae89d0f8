"""javac, traced, compiles the JDK's own sources to the same class files as untraced.

The sources come from each JDK's ``lib/src.zip`` (Debian's ``openjdk-17-source`` for JDK 17;
Temurin ships its own). javac compiles them as a patch of ``java.base``, so the sources must be
those of the JDK that runs javac. The fast test compiles ``java/util/concurrent/atomic`` (18
files); the slow one the 121 top-level files of ``java/util``, the workload of the issue and of
benchmarks/bench_recorder.py.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from jbgui.model import layout
from jbgui.model.check import ERROR, FATAL, WARNING, run_check

# The flags under which java/util compiles cleanly (no output at all) on JDK 17 and 25.
JAVAC_FLAGS = ("-implicit:none", "-proc:none", "-XDignore.symbol.file", "-nowarn")


def src_zip(jdk) -> Path:
    path = jdk.home / "lib" / "src.zip"
    if path.exists():
        return path
    if jdk.release == 17:
        pytest.fail(f"{path} is missing: install Debian's JDK sources with 'apt-get install -y openjdk-17-source'")
    pytest.skip(f"{jdk.id} ships no sources ({path})")


@pytest.fixture(scope="session")
def jdk_package_sources(tmp_path_factory):
    """``jdk_package_sources(jdk, package) -> (root, files)``: the top-level ``.java`` files of
    one java.base package (``java/util``), extracted once per session under ``root``."""
    cache: dict[tuple[str, str], tuple[Path, list[Path]]] = {}

    def extract(jdk, package: str) -> tuple[Path, list[Path]]:
        key = (jdk.id, package)
        if key not in cache:
            prefix = f"java.base/{package}/"
            root = tmp_path_factory.mktemp(f"src-{jdk.id}")
            with zipfile.ZipFile(src_zip(jdk)) as archive:
                names = [
                    n for n in archive.namelist()
                    if n.startswith(prefix) and n.endswith(".java") and "/" not in n[len(prefix):]
                ]
                for name in names:
                    archive.extract(name, root)
            files = sorted(root / name for name in names)
            assert files, f"no sources of {package} in {src_zip(jdk)}"
            cache[key] = (root / "java.base", files)
        return cache[key]

    return extract


def javac_args(source_root: Path, files: list[Path]) -> list[str]:
    return [
        "-m", "jdk.compiler/com.sun.tools.javac.Main",
        "--patch-module", f"java.base={source_root}",
        "-d", "out", *JAVAC_FLAGS, *map(str, files),
    ]


def class_files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.class"))}


def compile_both_ways(jdk, package, jdk_package_sources, run_command, record_command, tmp_path):
    root, files = jdk_package_sources(jdk, package)
    args = javac_args(root, files)
    plain_dir = tmp_path / "untraced"
    traced_dir = tmp_path / "traced"
    plain_dir.mkdir()
    traced_dir.mkdir()
    untraced = run_command(jdk, args, plain_dir)
    traced = record_command(jdk, args, traced_dir)
    return files, untraced, traced, class_files(plain_dir / "out"), class_files(traced_dir / "out")


def check_same_compilation(files, untraced, traced, plain_classes, traced_classes, facts):
    assert untraced.exit_code == 0, untraced.describe()
    assert untraced.stdout == untraced.stderr == "", "the workload compiles cleanly untraced"
    assert traced.exit_code == untraced.exit_code, traced.describe()
    assert traced.stdout == untraced.stdout
    assert traced.stderr == untraced.stderr, traced.describe()
    assert len(plain_classes) >= len(files)
    assert sorted(traced_classes) == sorted(plain_classes)
    different = [name for name in plain_classes if traced_classes[name] != plain_classes[name]]
    assert different == []

    meta = traced.trace_json()
    assert meta["status"] == "complete"
    assert meta["counts"]["lost_events"] == 0
    trace = facts(traced.trace_dir)
    # The thread table accounts for every event, and the streams hold them in event_bytes bytes.
    assert sum(row.get("events") or 0 for row in trace.thread_rows) == meta["counts"]["events"]
    stream_bytes = sum(p.stat().st_size for p in (traced.trace_dir / "events").glob("*.jbt"))
    assert meta["counts"]["event_bytes"] <= stream_bytes
    # javac's Main.main ends in System.exit(compile(args)): compile returns, main never does.
    # Counted chunk by chunk: the main thread's stream may hold billions of events.
    main = trace.thread("main")
    compile_ = trace.method_id("com/sun/tools/javac/Main", "compile", "([Ljava/lang/String;)I")
    javac_main = trace.method_id("com/sun/tools/javac/Main", "main", "([Ljava/lang/String;)V")
    words = [layout.method_start(compile_), layout.method_end(compile_), layout.method_start(javac_main),
             layout.method_end(javac_main)]
    assert trace.count_words_chunkwise(main, words) == dict(zip(words, [1, 1, 1, 0]))
    return meta


def test_javac_compiles_atomic_identically(jdk, jdk_package_sources, run_command, record_command, tmp_path, facts):
    results = compile_both_ways(jdk, "java/util/concurrent/atomic", jdk_package_sources, run_command, record_command, tmp_path)
    meta = check_same_compilation(*results, facts)
    assert meta["counts"]["events"] > 1_000_000


@pytest.mark.slow
def test_javac_compiles_java_util_identically(jdk, jdk_package_sources, run_command, record_command, tmp_path, facts):
    results = compile_both_ways(jdk, "java/util", jdk_package_sources, run_command, record_command, tmp_path)
    files = results[0]
    if jdk.release == 17:
        assert len(files) == 121
    meta = check_same_compilation(*results, facts)
    assert meta["counts"]["events"] > 100_000_000
    # The analyzer replays the whole trace, and jbtrace check finds nothing wrong with it.
    report = run_check(results[2].trace_dir)
    problems = [f.format() for f in report.findings if f.severity in (ERROR, WARNING, FATAL)]
    assert not problems, "\n".join(problems)
    assert report.stats["events"] == meta["counts"]["events"]
