"""Where the bridge finds class files: class path entries as ``java`` reads them (folders, jars,
``dir/*``, manifest ``Class-Path``, multi-release jars), the JDK's runtime image first for its own
packages, and the class path and JDK of a recorded run."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from jbgui.bridge import BridgeError, ClassSource, class_source_for_trace, classpath_from_command


def make_jar(path: Path, entries: dict[str, bytes], manifest: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        if manifest is not None:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n" + manifest)
        for name, data in entries.items():
            z.writestr(name, data)
    return path


@pytest.fixture(scope="module")
def class_files(compile_program, default_jdk) -> dict[str, bytes]:
    """Two different Main classes: hello's and switches'."""
    return {program: (compile_program(program, default_jdk) / "Main.class").read_bytes()
            for program in ("hello", "switches")}


@pytest.mark.parametrize(("command", "expected"), [
    (["java", "-cp", "a:b.jar", "Main", "-cp", "x"], ["a", "b.jar"]),
    (["/usr/bin/java", "-Xmx1g", "-classpath", "lib/*:c", "pkg.Main"], ["lib/*", "c"]),
    (["java", "--class-path=one", "-cp", "two", "Main"], ["two"]),  # the last one wins
    (["java", "-jar", "app.jar", "-cp", "ignored"], ["app.jar"]),
    (["java", "-Dx=y", "Main"], ["."]),
    (["java", "--module-path", "mods", "-cp", "c", "Main"], ["c"]),
    (["javac", "-cp", "x", "A.java"], None),
    ([], None),
])
def test_the_class_path_of_a_command_line(command, expected):
    assert classpath_from_command(command) == expected


def test_jars_wildcards_and_manifest_class_paths(tmp_path, class_files):
    lib = tmp_path / "lib"
    lib.mkdir()
    make_jar(lib / "b.jar", {"pkg/Two.class": class_files["switches"]}, "Class-Path: ../extra/c.jar\r\n")
    (tmp_path / "extra").mkdir()
    make_jar(tmp_path / "extra" / "c.jar", {"pkg/Three.class": class_files["hello"]})
    make_jar(lib / "a.jar", {"pkg/One.class": class_files["hello"]})
    source = ClassSource("lib/*", cwd=tmp_path)
    assert source.classpath == [lib / "a.jar", lib / "b.jar", lib / "../extra/c.jar"]
    assert source.find("pkg/One") == (class_files["hello"], f"{lib / 'a.jar'}!/pkg/One.class")
    assert source.read("pkg.Two") == class_files["switches"]
    assert source.read("pkg/Three") == class_files["hello"]


def test_the_first_entry_holding_a_class_wins(tmp_path, class_files):
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "Main.class").write_bytes(class_files["switches"])
    jar = make_jar(tmp_path / "a.jar", {"Main.class": class_files["hello"]})
    assert ClassSource([jar, tmp_path / "dir"]).read("Main") == class_files["hello"]
    assert ClassSource([tmp_path / "dir", jar]).read("Main") == class_files["switches"]
    # An entry that is missing or no jar is skipped, as java skips it.
    (tmp_path / "not-a.jar").write_text("text")
    assert ClassSource([tmp_path / "missing", tmp_path / "not-a.jar", jar]).read("Main") == class_files["hello"]


def test_a_multi_release_jar_gives_the_runs_release(tmp_path, class_files, jdk):
    jar = make_jar(tmp_path / "mr.jar", {"Main.class": b"base", "META-INF/versions/11/Main.class": class_files["hello"],
                                         "META-INF/versions/21/Main.class": class_files["switches"]},
                   "Multi-Release: true\r\n")
    expected = class_files["switches"] if jdk.release >= 21 else class_files["hello"]
    assert ClassSource([jar], jdk.home).read("Main") == expected


def test_the_jdks_packages_come_from_its_image(bridge, tmp_path, class_files):
    """A class path copy of a JDK class is not what the JVM loads: the image's is."""
    jar = make_jar(tmp_path / "shadow.jar", {"java/lang/String.class": class_files["hello"]})
    data, where = ClassSource([jar]).find("java/lang/String")
    assert where == "jrt:/java.base/java/lang/String.class" and data != class_files["hello"]


def test_sources_with_the_same_entries_are_equal(tmp_path):
    a = ClassSource(["x", "y.jar"], "/jdk", cwd=tmp_path)
    b = ClassSource([tmp_path / "x", tmp_path / "y.jar"], Path("/jdk"))
    assert a == b and hash(a) == hash(b) and a != ClassSource(["x"], "/jdk", cwd=tmp_path)


def test_a_home_without_runtime_image_is_a_clear_error(bridge, tmp_path):
    with pytest.raises(BridgeError, match=f"{tmp_path} is not a JDK with a runtime image"):
        ClassSource([], tmp_path).read("java/lang/Object")


def test_the_source_of_a_recorded_run(recorded, default_jdk):
    run, _precise, _blocks = recorded("exception_paths")
    source = class_source_for_trace(run.trace_dir)
    classes = Path(run.command[run.command.index("-cp") + 1])
    assert source.classpath == [classes] and source.java_home == default_jdk.home


def test_the_source_of_a_trace_from_its_command_line(recorded, default_jdk, tmp_path):
    """A trace whose trace.json names no class path (older traces): launch.json's command."""
    run, _precise, _blocks = recorded("exception_paths")
    classes = Path(run.command[run.command.index("-cp") + 1])
    trace = tmp_path / "trace"
    trace.mkdir()
    meta = json.loads((run.trace_dir / "trace.json").read_text())
    del meta["jvm"]["class_path"], meta["jvm"]["cwd"]
    (trace / "trace.json").write_text(json.dumps(meta))
    shutil.copytree(classes, tmp_path / "build")
    launch = {"command": ["java", "-cp", "build", "Main"], "cwd": str(tmp_path)}
    (trace / "launch.json").write_text(json.dumps(launch))
    source = class_source_for_trace(trace)
    assert source.classpath == [tmp_path / "build"] and source.java_home == default_jdk.home
    assert source.read("Main") == (classes / "Main.class").read_bytes()


def test_a_directory_that_is_no_trace_is_a_clear_error(tmp_path):
    with pytest.raises(BridgeError, match="trace.json: missing"):
        class_source_for_trace(tmp_path)
