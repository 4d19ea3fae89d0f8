"""The source finder on a recorded run laid out as the bundled example is (sources in
``resources/examples``, classes in ``build/examples``, run from the project folder): the
method view shows the program's own lines."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from jbgui.model.analysis import Analysis
from jbgui.model.method_info import method_info
from jbgui.model.sources import SourceLocator, search_source

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def test_the_bundled_examples_sources_are_found_from_its_trace(tmp_path, default_jdk, record_command):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES, project / "resources" / "examples")
    (project / "build" / "examples").mkdir(parents=True)
    sources = sorted(str(p) for p in (project / "resources" / "examples" / "example").glob("*.java"))
    subprocess.run([default_jdk.javac, "-g", "-d", "build/examples", *sources], cwd=project, check=True)
    run = record_command(default_jdk, ["-cp", "build/examples", "example.Main"], project, level="method")
    assert run.exit_code == 0, run.describe()
    a = Analysis.open(run.trace_dir)
    locator = SourceLocator(a.trace)
    expected = (project / "resources" / "examples" / "example" / "Main.java").read_text().splitlines()
    assert locator.lines("example/Main", "Main.java") == expected
    # the method view asks with what the class file says: its source file and line numbers
    st = a.statics
    mid = next(m for m in range(1, st.max_method_id + 1) if st.method_qualified(m).startswith("example.Main.main("))
    info = method_info(a, mid)
    lines = locator.lines(info.class_name.replace(".", "/"), info.source_file)
    assert lines == expected
    block_lines = sorted({line for b in info.blocks for line in b.lines})
    assert block_lines and "main" in "".join(lines[block_lines[0] - 3:block_lines[0]])
    # the next class of the same program comes from the folder found for the first
    shapes = (project / "resources" / "examples" / "example" / "Shapes.java").read_text().splitlines()
    assert locator.lines("example/Shapes", "Shapes.java") == shapes
    # and a source that is nowhere is None, quickly
    assert locator.lines("example/Nowhere", "Nowhere.java") is None


def test_the_search_is_bounded_and_skips_build_output(tmp_path):
    (tmp_path / "build" / "a" / "pkg").mkdir(parents=True)
    (tmp_path / "build" / "a" / "pkg" / "X.java").write_text("class X {}")
    assert search_source([tmp_path], "pkg/X.java") is None          # build output is not a source tree
    deep = tmp_path / "s" / "t" / "u"
    (deep / "pkg").mkdir(parents=True)
    (deep / "pkg" / "X.java").write_text("class X {}")
    assert search_source([tmp_path], "pkg/X.java") == deep
    assert search_source([tmp_path], "pkg/X.java", max_depth=2) is None
    assert search_source([tmp_path], "pkg/X.java", max_dirs=3) is None
