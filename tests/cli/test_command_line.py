"""How a user's Java command line becomes the traced one: pure functions, no JVM."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from jbgui.launch import LaunchError, RecorderOptions, default_trace_dir
from jbgui.launch.command import (
    agent_flag, check_command, classify_launcher, program_name, traced_command,
)
from jbgui.launch.options import (
    agent_argument_options, agent_option_pairs, format_config_file, format_option_string,
    needs_config_file,
)

JAR = Path("/opt/jbgui/jbgui-agent.jar")


def test_only_given_options_reach_the_agent_and_out_comes_first():
    pairs = agent_option_pairs(RecorderOptions(out=Path("/t/trace")))
    assert pairs == [("out", "/t/trace")]


def test_every_option_in_a_fixed_order_with_on_off_flags(tmp_path):
    options = RecorderOptions(
        out=Path("/t/trace"), include=Path("/f/inc"), exclude=Path("/f/exc"), jdk=False,
        level="method", bba="precise", mode=1, events=Path("/f/ev"), instructions=True, virtual_threads=0,
    )
    assert format_option_string(agent_option_pairs(options)) == (
        "out=/t/trace,include=/f/inc,exclude=/f/exc,jdk=off,level=method,bba=precise,"
        "mode=1,events=/f/ev,instructions=on,virtual=0"
    )


def test_java_takes_the_agent_right_after_argv0():
    argv = ["java", "-Xmx64m", "-cp", "build", "example.Main", "-javaagent:not-ours"]
    command = traced_command(argv, JAR, "out=/t", {})
    assert command == ["java", "-agentlib:instrument=/opt/jbgui/jbgui-agent.jar=out=/t", "-Xmx64m", "-cp",
                       "build", "example.Main", "-javaagent:not-ours"]


@pytest.mark.parametrize("argv, flag", [
    # From the class path java.instrument is a default root: the JPLIS library named directly,
    # without the property that disables CDS's module graph.
    (["java", "-cp", "b", "Main"], "-agentlib:instrument="),
    (["java", "-jar", "app.jar", "-m"], "-agentlib:instrument="),
    (["java", "-p", "mods", "--add-modules", "ALL-SYSTEM", "-cp", "b", "Main"], "-agentlib:instrument="),
    # A main module (or a limited set) may not resolve java.instrument: -javaagent asks for it.
    (["java", "-m", "jdk.compiler/com.sun.tools.javac.Main"], "-javaagent:"),
    (["java", "--module=app/app.Main"], "-javaagent:"),
    (["java", "--limit-modules", "java.base", "-cp", "b", "Main"], "-javaagent:"),
    # What the command line does not show, and the source launcher (jdk.compiler's main class).
    (["java", "@options", "Main"], "-javaagent:"),
    (["java", "-XX:VMOptionsFile=vm.txt", "-cp", "b", "Main"], "-javaagent:"),
    (["java", "Main.java"], "-javaagent:"),
    (["java", "--source", "17", "Main"], "-javaagent:"),
    (["java", "-version"], "-javaagent:"),
])
def test_how_java_takes_the_agent_follows_its_launch(argv, flag):
    assert traced_command(argv, JAR, "out=/t", {})[1] == f"{flag}/opt/jbgui/jbgui-agent.jar=out=/t"


@pytest.mark.parametrize("name", ["JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS"])
def test_module_options_in_the_environment_keep_javaagent(name):
    argv = ["java", "-cp", "b", "Main"]
    assert traced_command(argv, JAR, "out=/t", {name: "-Xmx1g --limit-modules java.base"})[1].startswith("-javaagent:")
    assert traced_command(argv, JAR, "out=/t", {name: "-Xmx1g"})[1].startswith("-agentlib:instrument=")


def test_java_by_path_is_still_java():
    java = shutil.which("java")
    assert java is not None, "a JDK must be installed (make setup)"
    assert traced_command([java, "-version"], JAR, "out=/t", {})[1] == "-javaagent:/opt/jbgui/jbgui-agent.jar=out=/t"
    assert traced_command([java, "-cp", "b", "M"], JAR, "out=/t", {})[1].startswith("-agentlib:instrument=")


@pytest.mark.parametrize("tool", ["javac", "jar", "jshell", "javadoc"])
def test_jdk_tools_take_the_agent_through_minus_j(tool):
    command = traced_command([tool, "-d", "out", "A.java"], JAR, "out=/t")
    assert command == [tool, "-J-javaagent:/opt/jbgui/jbgui-agent.jar=out=/t", "-d", "out", "A.java"]


def test_a_jdk_tool_unknown_by_name_is_recognised_by_where_it_lives(tmp_path):
    javac = Path(shutil.which("javac") or "").resolve()
    assert javac.name == "javac", "a JDK must be installed (make setup)"
    link = tmp_path / "javac-under-another-name"
    link.symlink_to(javac)
    assert classify_launcher(str(link)) == "tool"
    java_link = tmp_path / "java17"
    java_link.symlink_to(javac.parent / "java")
    assert classify_launcher(str(java_link)) == "java"


def test_programs_that_are_not_jdk_launchers_are_refused():
    # /usr/bin/ls sits beside /usr/bin/java, but /usr is no JDK.
    assert classify_launcher("ls") is None
    with pytest.raises(LaunchError) as refused:
        check_command(["ls", "-l"])
    assert refused.value.exit_status == 2
    assert "'ls' is not a JDK launcher" in str(refused.value)


def test_a_missing_program_is_127_like_a_shell():
    with pytest.raises(LaunchError) as missing:
        check_command(["no-such-launcher-here", "x"])
    assert missing.value.exit_status == 127
    assert "no-such-launcher-here: command not found" in str(missing.value)


def test_an_empty_command_is_a_usage_error():
    with pytest.raises(LaunchError) as empty:
        check_command([])
    assert empty.value.exit_status == 2


def test_minus_j_flag_wraps_the_whole_javaagent_word():
    assert agent_flag("tool", JAR, "config=/c") == "-J-javaagent:/opt/jbgui/jbgui-agent.jar=config=/c"
    assert agent_flag("java", JAR, "config=/c") == "-javaagent:/opt/jbgui/jbgui-agent.jar=config=/c"


def test_an_agent_jar_path_with_an_equals_sign_cannot_be_passed():
    with pytest.raises(LaunchError, match="contains '='"):
        agent_flag("java", Path("/a=b/agent.jar"), "out=/t")


def test_a_comma_in_a_value_moves_all_options_into_a_config_file(tmp_path):
    options = RecorderOptions(out=Path("/t/a,b"), level="method", jdk=True)
    pairs = agent_option_pairs(options)
    assert needs_config_file(pairs)
    with pytest.raises(ValueError):
        format_option_string(pairs)
    text = agent_argument_options(pairs, tmp_path)
    config = tmp_path / "agent-options.conf"
    assert text == f"config={config}"
    assert config.read_text() == "out=/t/a,b\njdk=on\nlevel=method\n"
    assert format_config_file(pairs) == config.read_text()


def test_a_config_file_cannot_carry_a_hash_which_starts_a_comment_there(tmp_path):
    pairs = agent_option_pairs(RecorderOptions(out=Path("/t/a,b#1")))
    with pytest.raises(LaunchError, match="'#'"):
        agent_argument_options(pairs, tmp_path)


def test_without_commas_no_config_file_is_written(tmp_path):
    pairs = agent_option_pairs(RecorderOptions(out=Path("/t/plain"), mode=2))
    assert agent_argument_options(pairs, tmp_path) == "out=/t/plain,mode=2"
    assert list(tmp_path.iterdir()) == []


def test_a_line_break_in_a_value_is_refused():
    with pytest.raises(LaunchError, match="line break"):
        agent_option_pairs(RecorderOptions(out=Path("/t/a\nb")))


def test_a_value_the_agent_would_trim_is_refused():
    with pytest.raises(LaunchError, match="space"):
        agent_option_pairs(RecorderOptions(out=Path("/t/trailing ")))


def test_checked_options_have_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "include.txt").write_text("example\n")
    checked = RecorderOptions(out=Path("trace"), include=Path("include.txt")).checked()
    assert checked.out == tmp_path / "trace"
    assert checked.include == tmp_path / "include.txt"


@pytest.mark.parametrize("field", ["include", "exclude", "events"])
def test_a_missing_file_is_named_in_the_error(tmp_path, field):
    missing = tmp_path / f"{field}-list.txt"
    with pytest.raises(LaunchError) as error:
        RecorderOptions(out=tmp_path / "t", **{field: missing}).checked()
    assert str(missing) in str(error.value)
    assert "does not exist" in str(error.value)
    assert error.value.exit_status == 2


def test_a_directory_is_not_a_filter_file(tmp_path):
    with pytest.raises(LaunchError, match="is not a file"):
        RecorderOptions(out=tmp_path / "t", include=tmp_path).checked()


@pytest.mark.parametrize("options, word", [
    (dict(level="blocks"), "level"), (dict(bba="fast"), "block analysis"), (dict(mode=3), "mode"),
    (dict(virtual_threads=-1), "virtual threads"), (dict(virtual_threads=2**31), "virtual threads"),
    (dict(virtual_threads=True), "virtual threads"),
])
def test_bad_choices_are_refused(tmp_path, options, word):
    with pytest.raises(LaunchError, match=word):
        RecorderOptions(out=tmp_path, **options).checked()


@pytest.mark.parametrize("argv, name", [
    (["java", "-cp", "build", "example.Main", "x"], "Main"),
    (["java", "-Xmx1g", "-classpath", "a.jar:b", "Hello"], "Hello"),
    (["java", "--class-path=build", "-Dk=v", "org.acme.Tool"], "Tool"),
    (["java", "-jar", "dist/app-1.2.jar", "input"], "app-1.2"),
    (["java", "-m", "org.acme/org.acme.cli.Main"], "Main"),
    (["java", "--module", "org.acme"], "org.acme"),
    (["java", "--add-modules", "jdk.incubator.vector", "Vec"], "Vec"),
    (["java", "scripts/Hello.java"], "Hello"),
    (["/usr/lib/jvm/x/bin/javac", "-d", "out", "A.java"], "javac"),
    (["java", "-version"], "java"),
])
def test_program_name(argv, name):
    assert program_name(argv) == name


def test_default_trace_dir_is_named_after_program_and_time_and_is_fresh(tmp_path):
    now = datetime(2025, 3, 4, 5, 6, 7)
    argv = ["java", "-cp", "build", "example.Main"]
    first = default_trace_dir(argv, tmp_path, now)
    assert first == tmp_path / "Main-20250304-050607"
    first.mkdir()
    assert default_trace_dir(argv, tmp_path, now) == tmp_path / "Main-20250304-050607-2"
