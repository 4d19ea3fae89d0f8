"""Run configurations: the java command line and recorder options they stand for, their store
(most recently used first, a damaged file set aside), the JDKs offered, and the Run traced dialog
filled in with qtbot (Run enabled only when the configuration can run)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import Qt

from jbgui.launch.session import RecordingSession
from jbgui.ui.run_config import FALLBACK_TRACES_DIR, RunConfig, RunConfigStore, find_jdks
from jbgui.ui.run_dialog import RunDialog


def test_a_configuration_builds_the_java_command_line_and_recorder_options(tmp_path):
    (tmp_path / "filters").mkdir()
    (tmp_path / "filters" / "only.txt").write_text("example\n")
    config = RunConfig(name="example", main="example.Main", classpath=["build/classes", "lib/dep.jar"],
                       args="in.txt 'two words' --flag=\"x y\"", jvm_options="-Xmx256m -Dk='a b'",
                       cwd=str(tmp_path), include="filters/only.txt", jdk=False, level="method", bba="precise",
                       mode=1, instructions=True, virtual_threads=20)
    assert config.problems() == []
    assert config.argv() == ["java", "-Xmx256m", "-Dk=a b", "-cp", f"build/classes{os.pathsep}lib/dep.jar",
                             "example.Main", "in.txt", "two words", "--flag=x y"]
    out = tmp_path / "traces" / "t"
    options = config.recorder_options(out)
    assert options.out == out and options.include == tmp_path / "filters" / "only.txt" and options.exclude is None
    assert (options.jdk, options.level, options.bba, options.mode, options.instructions, options.virtual_threads) == \
        (False, "method", "precise", 1, True, 20)
    # The recorder's own checks accept them: the session would start with exactly these.
    assert options.checked() == options
    # Stored and read back, it is the same configuration.
    assert RunConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    assert config.label() == "example"
    assert RunConfig(main="com.example.Tool").label() == "Tool"


def test_traces_go_beside_the_program_unless_told_otherwise(tmp_path):
    config = RunConfig(main="app.Main", cwd=str(tmp_path))
    out = config.output_dir()
    assert out.parent == tmp_path / "traces" and out.name.startswith("Main-")
    assert RunConfig(main="app.Main", cwd=str(tmp_path), traces_dir="runs").traces_parent() == tmp_path / "runs"
    if os.geteuid() != 0:   # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        assert RunConfig(main="app.Main", cwd=str(locked)).traces_parent() == FALLBACK_TRACES_DIR


def test_jars_and_what_keeps_a_configuration_from_running(tmp_path):
    (tmp_path / "app.jar").write_bytes(b"PK\x03\x04")
    jar = RunConfig(main="app.jar", classpath=["ignored"], cwd=str(tmp_path), args="x", jvm_options="-ea")
    assert jar.argv() == ["java", "-ea", "-jar", "app.jar", "x"]
    assert jar.problems() == [] and "ignores the class path" in " ".join(jar.warnings())
    problems = {
        "main": RunConfig(cwd=str(tmp_path)),
        "jar": RunConfig(main="other.jar", cwd=str(tmp_path)),
        "class": RunConfig(main="not a class!"),
        "cwd": RunConfig(main="Main", cwd=str(tmp_path / "gone")),
        "jdk": RunConfig(main="Main", java_home=str(tmp_path)),
        "filter": RunConfig(main="Main", cwd=str(tmp_path), exclude="nope.txt"),
        "quotes": RunConfig(main="Main", args="'unbalanced"),
    }
    words = {key: " ".join(config.problems()) for key, config in problems.items()}
    assert "which program to run" in words["main"]
    assert "other.jar does not exist in the working directory" in words["jar"]
    assert "not a class name" in words["class"]
    assert "working directory" in words["cwd"]
    assert "is not a JDK: it has no bin/java" in words["jdk"]
    assert "exclude filter file nope.txt does not exist" in words["filter"]
    assert "cannot be split into words" in words["quotes"]


def test_the_store_keeps_configurations_most_recent_first(tmp_path):
    path = tmp_path / "config" / "run-configs.json"
    store = RunConfigStore(path)
    assert store.configs == [] and store.problem is None
    first, second = RunConfig(name="first", main="a.Main"), RunConfig(name="second", main="b.Main")
    assert store.save(first) and store.save(second)
    assert RunConfigStore(path).labels() == ["second", "first"]
    store.save(RunConfig(name="first", main="a.Main", args="again"))       # used again: to the front
    again = RunConfigStore(path)
    assert again.labels() == ["first", "second"] and again.get("first").args == "again"
    assert again.unique_label("first") == "first (2)" and again.unique_label("third") == "third"
    again.delete("first")
    assert RunConfigStore(path).labels() == ["second"]


def test_the_store_lives_in_the_configuration_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("JBGUI_CONFIG_DIR", str(tmp_path / "cfg"))
    store = RunConfigStore()
    store.save(RunConfig(main="a.Main"))
    assert store.path == tmp_path / "cfg" / "run-configs.json" and store.path.is_file()


def test_a_damaged_store_is_set_aside_and_the_store_starts_empty(tmp_path):
    path = tmp_path / "run-configs.json"
    path.write_text("{oops")
    store = RunConfigStore(path)
    assert store.configs == [] and "cannot be read" in store.problem and "run-configs.json.bad" in store.problem
    assert (tmp_path / "run-configs.json.bad").read_text() == "{oops" and not path.exists()
    store.save(RunConfig(main="a.Main"))
    assert RunConfigStore(path).labels() == ["Main"]
    # Entries of the wrong shape lose only their wrong fields.
    path.write_text(json.dumps([{"main": "x.Main", "classpath": "not-a-list", "mode": "2", "bogus": 1}, 7]))
    loaded = RunConfigStore(path)
    assert loaded.problem is None and [c.main for c in loaded.configs] == ["x.Main"]
    assert loaded.configs[0].classpath == [] and loaded.configs[0].mode == 2


def test_the_jdks_of_this_machine_are_offered(default_jdk):
    homes = [Path(home) for _label, home in find_jdks()]
    assert default_jdk.home.resolve() in homes and len(homes) == len(set(homes))


def test_the_dialog_gives_the_configuration_its_form_shows(qtbot, tmp_path, compile_program, default_jdk):
    classes = compile_program("hello", default_jdk)
    (tmp_path / "only.txt").write_text("Main\n")
    store = RunConfigStore(tmp_path / "runs.json")
    dialog = RunDialog(store)
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.ok_button.isEnabled() and "which program to run" in dialog.message.text()
    qtbot.keyClicks(dialog.main, "not a class!")
    assert not dialog.ok_button.isEnabled() and "not a class name" in dialog.message.text()
    dialog.main.clear()
    qtbot.keyClicks(dialog.main, "Main")
    qtbot.keyClicks(dialog.name, "hello")
    dialog.add_classpath_entry(str(classes))
    dialog.add_classpath_entry("missing-dir")
    assert "missing-dir" in dialog.notes.text() and dialog.notes.isVisible()
    dialog.classpath.setCurrentRow(1)
    dialog.remove_selected_classpath()
    qtbot.keyClicks(dialog.args, "one 'two words'")
    qtbot.keyClicks(dialog.jvm_options, "-Xmx128m")
    qtbot.keyClicks(dialog.cwd, str(tmp_path))
    dialog.jdk_home.setCurrentIndex(dialog.jdk_home.findData(str(default_jdk.home.resolve())))
    qtbot.keyClicks(dialog.include, "missing-filter.txt")
    assert not dialog.ok_button.isEnabled() and "include filter file missing-filter.txt" in dialog.message.text()
    dialog.include.clear()
    qtbot.keyClicks(dialog.include, "only.txt")
    dialog.trace_jdk.setChecked(False)
    dialog.level.setCurrentIndex(dialog.level.findData("method"))
    dialog.mode.setCurrentIndex(dialog.mode.findData(1))
    assert dialog.virtual_threads.value() == 1000      # the agent's default
    dialog.virtual_threads.selectAll()
    qtbot.keyClicks(dialog.virtual_threads, "50")
    assert dialog.ok_button.isEnabled(), dialog.message.text()
    assert not dialog.message.isVisible() and "-Xmx128m" in dialog.command.text()

    qtbot.mouseClick(dialog.ok_button, Qt.MouseButton.LeftButton)
    assert dialog.result() == RunDialog.DialogCode.Accepted
    config = dialog.config()
    assert config == RunConfig(name="hello", main="Main", classpath=[str(classes)], args="one 'two words'",
                               jvm_options="-Xmx128m", cwd=str(tmp_path), java_home=str(default_jdk.home.resolve()),
                               include="only.txt", jdk=False, level="method", mode=1, virtual_threads=50)
    assert config.argv() == ["java", "-Xmx128m", "-cp", str(classes), "Main", "one", "two words"]
    # What the dialog gives is what a session accepts.
    session = RecordingSession(config.argv(), config.recorder_options(config.output_dir()), cwd=config.workdir,
                               java_home=config.java_home)
    assert session.cwd == tmp_path and session.running() is False


def test_saved_configurations_are_picked_duplicated_and_deleted(qtbot, tmp_path):
    store = RunConfigStore(tmp_path / "runs.json")
    store.save(RunConfig(name="b", main="b.Main", args="bee"))
    store.save(RunConfig(name="a", main="a.Main", args="ay"))
    dialog = RunDialog(store)
    qtbot.addWidget(dialog)
    assert [dialog.saved.item(i).text() for i in range(dialog.saved.count())] == ["a", "b"]
    assert dialog.config().name == "a"                       # the most recent one is shown first
    dialog.saved.setCurrentRow(1)
    assert dialog.config().args == "bee"
    copy = dialog.duplicate()
    assert copy.name == "b copy" and dialog.config().name == "b copy" and dialog.config().args == "bee"
    assert store.labels() == ["b copy", "a", "b"]
    dialog.saved.setCurrentRow(0)
    dialog.delete_selected()
    assert store.labels() == ["a", "b"] and RunConfigStore(tmp_path / "runs.json").labels() == ["a", "b"]
    dialog.new_button.click()
    assert dialog.config() == RunConfig() and not dialog.ok_button.isEnabled()
    # ask() with a configuration to start from shows it, selected.
    again = RunDialog(store, store.get("b"))
    qtbot.addWidget(again)
    assert again.saved.currentItem().text() == "b" and again.config().args == "bee"


def test_save_keeps_the_configuration_and_neither_closes_nor_runs(qtbot, tmp_path):
    store = RunConfigStore(tmp_path / "runs.json")
    dialog = RunDialog(store)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.main, "Main")
    qtbot.keyClicks(dialog.name, "kept")
    assert dialog.save_button.isEnabled()
    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.result() != RunDialog.DialogCode.Accepted
    assert RunConfigStore(tmp_path / "runs.json").labels() == ["kept"]
    assert dialog.saved.currentItem().text() == "kept"
