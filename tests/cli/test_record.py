"""`jbtrace record` end to end: real JVMs, the real agent, the bundled example and tiny programs."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from pathlib import Path

import pytest

EXITS_WITH_3 = """
public class Main {
    public static void main(String[] args) {
        System.out.println("leaving with 3");
        leave(3);
    }

    static void leave(int status) {
        System.exit(status);
    }
}
"""

REVERSES_STDIN = """
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;

public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int count = 0;
        for (String line; (line = in.readLine()) != null; ) {
            count++;
            System.out.println(count + ": " + new StringBuilder(line).reverse());
        }
        System.err.println("read " + count + " lines");
    }
}
"""

WAITS = """
public class Main {
    public static void main(String[] args) throws InterruptedException {
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(120_000);
        System.out.println("not reached");
    }
}
"""


def trace_json(trace_dir: Path) -> dict:
    return json.loads((trace_dir / "trace.json").read_text())


def launch_json(trace_dir: Path) -> dict:
    return json.loads((trace_dir / "launch.json").read_text())


# --- the bundled example, recorded once with every default (JDK classes traced) -----------------

@pytest.fixture(scope="module")
def example_run(jbtrace, run_bare, default_jdk, example_classes, tmp_path_factory):
    """(untraced run, jbtrace run, trace dir) of resources/examples."""
    cwd = tmp_path_factory.mktemp("example")
    argv = [default_jdk.java, "-cp", str(example_classes), "example.Main"]
    untraced = run_bare(argv, cwd=cwd)
    assert untraced.returncode == 0, untraced.stderr
    traced = jbtrace(["record", "-o", "trace", "--", *argv], cwd=cwd)
    return untraced, traced, cwd / "trace"


def test_example_output_and_exit_status_are_the_programs_own(example_run):
    untraced, traced, _ = example_run
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout == untraced.stdout
    assert "primes below 40000: 4203\n" in traced.stdout


def test_example_summary_goes_to_stderr_with_the_trace_counts(example_run):
    _, traced, trace_dir = example_run
    meta = trace_json(trace_dir)
    assert meta["status"] == "complete"
    counts = meta["counts"]
    assert counts["threads"] >= 3, "main and the two workers each recorded events"
    assert counts["events"] > 0 and counts["event_bytes"] > 0
    assert f"jbtrace: recorded {trace_dir} (complete), program exit status 0\n" in traced.stderr
    assert f"threads {counts['threads']:,}" in traced.stderr
    assert f"methods {counts['methods']:,}" in traced.stderr
    assert f"events {counts['events']:,} in {counts['event_bytes']:,} bytes" in traced.stderr
    assert "on disk " in traced.stderr and "wall " in traced.stderr
    assert "jbtrace" not in traced.stdout


def test_example_launch_json_records_the_command_and_how_it_ended(example_run, default_jdk, example_classes, agent_jar):
    _, traced, trace_dir = example_run
    launch = launch_json(trace_dir)
    argv = [default_jdk.java, "-cp", str(example_classes), "example.Main"]
    assert launch["command"] == argv
    assert launch["exit_code"] == 0
    assert 0 < launch["wall_seconds"] < 300
    assert launch["traced_command"] == [argv[0], f"-agentlib:instrument={agent_jar}=out={trace_dir}", *argv[1:]]
    assert launch["agent_options"] == {"out": str(trace_dir)}
    assert launch["cwd"] == str(trace_dir.parent)


# --- tiny programs, JDK classes left untraced to keep them quick --------------------------------

def test_the_programs_exit_status_is_jbtraces(jbtrace, default_jdk, compile_java, tmp_path):
    classes = compile_java({"Main.java": EXITS_WITH_3})
    result = jbtrace(["record", "--no-jdk", "-o", "t", "--", default_jdk.java, "-cp", str(classes), "Main"],
                     cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stdout == "leaving with 3\n"
    assert launch_json(tmp_path / "t")["exit_code"] == 3
    assert trace_json(tmp_path / "t")["status"] == "complete"
    assert "program exit status 3\n" in result.stderr


def test_stdin_reaches_the_program_and_its_stderr_stays_its_own(jbtrace, default_jdk, compile_java, tmp_path):
    classes = compile_java({"Main.java": REVERSES_STDIN})
    result = jbtrace(["record", "--no-jdk", "-o", "t", "--", default_jdk.java, "-cp", str(classes), "Main"],
                     cwd=tmp_path, input="abc\nhello world\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1: cba\n2: dlrow olleh\n"
    # The program's stderr is passed through as it is written, before jbtrace's summary.
    assert "read 2 lines\n" in result.stderr
    assert result.stderr.index("read 2 lines\n") < result.stderr.index("jbtrace: recorded")


def test_without_o_a_fresh_directory_is_named_after_the_program(jbtrace, default_jdk, compile_java, tmp_path):
    classes = compile_java({"Main.java": EXITS_WITH_3})
    result = jbtrace(["record", "--no-jdk", "--", default_jdk.java, "-cp", str(classes), "Main"], cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    created = [p.name for p in tmp_path.iterdir()]
    assert len(created) == 1 and re.fullmatch(r"Main-\d{8}-\d{6}", created[0]), created
    assert trace_json(tmp_path / created[0])["status"] == "complete"


def test_a_comma_in_a_path_goes_through_a_config_file(jbtrace, default_jdk, compile_java, tmp_path):
    classes = compile_java({"Main.java": EXITS_WITH_3})
    trace_dir = tmp_path / "a,b"
    result = jbtrace(["record", "--no-jdk", "--level", "method", "-o", str(trace_dir), "--",
                      default_jdk.java, "-cp", str(classes), "Main"], cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "=config=" in launch_json(trace_dir)["traced_command"][1]
    meta = trace_json(trace_dir)
    assert meta["status"] == "complete"
    assert meta["agent"]["options"]["level"] == "method"
    assert meta["agent"]["options"]["jdk"] is False


def test_sigterm_is_forwarded_and_the_trace_is_complete(start_jbtrace, default_jdk, compile_java, tmp_path):
    classes = compile_java({"Main.java": WAITS})
    process = start_jbtrace(["record", "--no-jdk", "-o", "t", "--", default_jdk.java, "-cp", str(classes), "Main"],
                            cwd=tmp_path)
    try:
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "not reached" not in out
    assert trace_json(tmp_path / "t")["status"] == "complete"
    assert launch_json(tmp_path / "t")["exit_code"] == 143


def test_a_class_path_program_keeps_the_cds_module_graph(jbtrace, default_jdk, compile_java, tmp_path):
    # -javaagent would set jdk.module.addmods=java.instrument, and CDS then drops its archived
    # module graph (the module system built at start-up, ~50 ms); the JPLIS library named directly
    # (-agentlib:instrument=) loads the same agent without it.
    classes = compile_java({"Main.java": EXITS_WITH_3})
    result = jbtrace(["record", "--level", "method", "-o", "t", "--", default_jdk.java, "-Xlog:cds=info",
                      "-cp", str(classes), "Main"], cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "leaving with 3" in result.stdout
    assert "full module graph: enabled" in result.stdout, result.stdout[-2000:]
    assert launch_json(tmp_path / "t")["traced_command"][1].startswith("-agentlib:instrument=")
    meta = trace_json(tmp_path / "t")
    assert meta["status"] == "complete" and meta["counts"]["events"] > 0


def test_a_modular_program_takes_javaagent_which_resolves_java_instrument(jbtrace, default_jdk, compile_java,
                                                                          tmp_path):
    # Its boot layer is its main module's graph: without -javaagent's --add-modules the JVM would
    # find no java.instrument and abort at start-up.
    classes = compile_java({
        "module-info.java": "module app { }\n",
        "Main.java": "package app;\npublic class Main { public static void main(String[] a) {"
                     " System.out.println(\"in \" + Main.class.getModule().getName()); } }\n",
    })
    result = jbtrace(["record", "--level", "method", "-o", "t", "--", default_jdk.java, "-p", str(classes),
                      "-m", "app/app.Main"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "in app\n"
    assert launch_json(tmp_path / "t")["traced_command"][1].startswith("-javaagent:")
    meta = trace_json(tmp_path / "t")
    assert meta["status"] == "complete" and meta["counts"]["events"] > 0


def test_javac_takes_the_agent_through_minus_j(jbtrace, tmp_path):
    (tmp_path / "Hello.java").write_text('class Hello { public static void main(String[] a) { } }\n')
    result = jbtrace(["record", "--level", "method", "-o", "t", "--", "javac", "-d", "out", "Hello.java"],
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "Hello.class").is_file()
    assert launch_json(tmp_path / "t")["traced_command"][1].startswith("-J-javaagent:")
    meta = trace_json(tmp_path / "t")
    assert meta["status"] == "complete"
    assert meta["counts"]["methods"] > 0 and meta["counts"]["events"] > 0


def test_when_the_agent_refuses_its_options_the_summary_says_so(jbtrace, default_jdk, compile_java, tmp_path):
    classes = compile_java({"Main.java": EXITS_WITH_3})
    (tmp_path / "events.txt").write_text("event method_start\nevent no_such_event\n")
    result = jbtrace(["record", "--events", "events.txt", "-o", "t", "--",
                      default_jdk.java, "-cp", str(classes), "Main"], cwd=tmp_path)
    assert result.returncode not in (0, 3), "the JVM must stop before main"
    assert result.stdout == ""
    assert "no_such_event" in result.stderr, "the agent's own message reaches the user"
    assert "jbtrace: no trace was recorded (no trace.json)" in result.stderr
    assert launch_json(tmp_path / "t")["exit_code"] == result.returncode


# --- inputs checked before anything starts --------------------------------------------------------

def test_a_missing_filter_file_is_named_and_nothing_runs(jbtrace, tmp_path):
    result = jbtrace(["record", "--include", "no-such-list.txt", "-o", "t", "--", "java", "-version"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "jbtrace: error: include filter file 'no-such-list.txt' does not exist\n"
    assert not (tmp_path / "t").exists()


def test_no_command_after_the_separator_is_a_usage_error(jbtrace, tmp_path):
    for args in (["record", "-o", "t", "--"], ["record", "-o", "t"]):
        result = jbtrace(args, cwd=tmp_path)
        assert result.returncode == 2
        assert "jbtrace: error: no java command line" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_bad_level_is_a_usage_error(jbtrace, tmp_path):
    result = jbtrace(["record", "--level", "blocks", "--", "java", "-version"], cwd=tmp_path)
    assert result.returncode == 2
    assert "argument --level: invalid choice: 'blocks'" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_non_empty_output_directory_is_refused(jbtrace, tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "notes.txt").write_text("mine\n")
    result = jbtrace(["record", "-o", "t", "--", "java", "-version"], cwd=tmp_path)
    assert result.returncode == 2
    assert "is not empty" in result.stderr
    forced = jbtrace(["record", "--force", "-o", "t", "--", "java", "-version"], cwd=tmp_path)
    assert forced.returncode == 2, "--force replaces only a trace, never other files"
    assert (tmp_path / "t" / "notes.txt").read_text() == "mine\n"


def test_a_java_that_does_not_exist_is_127_and_leaves_nothing(jbtrace, tmp_path):
    result = jbtrace(["record", "-o", "t", "--", str(tmp_path / "jdk" / "bin" / "java"), "-version"], cwd=tmp_path)
    assert result.returncode == 127
    assert result.stderr == f"jbtrace: error: {tmp_path / 'jdk' / 'bin' / 'java'}: command not found\n"
    assert not (tmp_path / "t").exists()


def test_a_command_that_is_not_a_jdk_launcher_is_refused(jbtrace, tmp_path):
    result = jbtrace(["record", "-o", "t", "--", "ls", "-l"], cwd=tmp_path)
    assert result.returncode == 2
    assert "'ls' is not a JDK launcher" in result.stderr
