"""``jbtrace check`` and ``jbtrace dump`` on real traces recorded by the agent, sound and damaged.

Damage is made by hand on copies of real traces (flipped payload bytes, cut files, an edited
thread table): the malformed-input cases; the sound cases are the recordings themselves.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model.check import ERROR, FATAL, NOTE, WARNING, run_check
from jbgui.model.tracedir import TraceDir


def jbtrace(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jbgui.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def sound(record, default_jdk) -> Path:
    run = record("exception_paths", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def shared_mode(record, default_jdk) -> Path:
    run = record("threads", default_jdk, mode=1)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def copy_trace(trace: Path, tmp_path: Path) -> Path:
    out = tmp_path / "trace"
    shutil.copytree(trace, out, ignore=shutil.ignore_patterns("analysis"))
    return out


def codes(report, severity=None) -> set[str]:
    return {f.code for f in report.findings if severity is None or f.severity == severity}


# ---------------------------------------------------------------------- check

def test_a_sound_trace_has_no_errors_or_warnings(sound):
    report = run_check(sound)
    assert report.exit_status == 0, [f.format() for f in report.findings]
    meta = json.loads((sound / "trace.json").read_text())
    assert report.stats["events"] == meta["counts"]["events"]
    assert report.stats["threads"] == meta["counts"]["threads"]
    result = jbtrace("check", str(sound))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sound: 0 errors, 0 warnings" in result.stdout


def test_check_json_lists_the_counts(sound):
    result = jbtrace("check", "--json", str(sound))
    data = json.loads(result.stdout)
    assert data["status"] == 0 and data["counts"]["error"] == 0
    assert data["checked"]["events"] == json.loads((sound / "trace.json").read_text())["counts"]["events"]


def test_a_corrupt_chunk_is_named_by_file_and_offset(sound, tmp_path):
    trace = copy_trace(sound, tmp_path)
    stream = trace / "events" / "T000001.jbt"
    data = bytearray(stream.read_bytes())
    # The second chunk's payload: flip one byte so that its CRC no longer matches.
    first_length = int.from_bytes(data[32 + 12:32 + 16], "little")
    second = 32 + 32 + first_length
    assert data[second:second + 4] == layout.CHUNK_MAGIC
    data[second + 32 + 3] ^= 0xFF
    stream.write_bytes(bytes(data))
    report = run_check(trace)
    bad = [f for f in report.findings if f.file == "events/T000001.jbt" and f.severity == ERROR]
    assert bad and bad[0].offset == second, [f.format() for f in report.findings]
    assert report.exit_status == 1
    result = jbtrace("check", str(trace))
    assert result.returncode == 1
    assert f"events/T000001.jbt: offset {second}:" in result.stdout
    assert "Traceback" not in result.stderr


def test_a_killed_jvm_is_a_warning_not_a_failure_to_read(start_program, default_jdk):
    process, trace = start_program("long_running", default_jdk)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not any((trace / "events").glob("*.jbt")):
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
    report = run_check(trace)
    assert "running" in codes(report, WARNING)
    assert not codes(report, FATAL)
    errors = [f.format() for f in report.findings if f.severity == ERROR]
    assert not errors, errors


def test_undefined_ids_are_errors(sound, tmp_path):
    """A static.xml that lost a class (edited by hand) leaves ids in the streams undefined."""
    trace = copy_trace(sound, tmp_path)
    xml = (trace / "static.xml").read_text()
    start = xml.rfind("<class ", 0, xml.index('name="Main"'))
    end = xml.index("</class>", start) + len("</class>")
    (trace / "static.xml").write_text(xml[:start] + xml[end:])
    report = run_check(trace, replay=False)
    assert {"undefined-method-start", "undefined-block-page"} <= codes(report, ERROR), \
        [f.format() for f in report.findings]


def test_a_static_xml_cut_in_a_complete_trace_is_an_error(sound, tmp_path):
    trace = copy_trace(sound, tmp_path)
    xml = (trace / "static.xml").read_bytes()
    (trace / "static.xml").write_bytes(xml[: len(xml) // 2])
    report = run_check(trace, replay=False)
    assert "truncated" in codes(report, ERROR)


def test_a_malformed_class_in_static_xml_is_left_out_and_the_rest_loads(sound, tmp_path):
    """A number that is not one in a class's description: that class is left out with a message
    naming the file, line and class; every other class loads, and no command prints a traceback."""
    from jbgui.model.analysis import Analysis

    trace = copy_trace(sound, tmp_path)
    xml = (trace / "static.xml").read_text()
    at = xml.rfind("<class ", 0, xml.index('name="Main"'))
    block = xml.index('<basic_block ', at)
    broken = xml[:block] + xml[block:].replace('index="', 'index="x', 1)
    (trace / "static.xml").write_text(broken)
    line = broken.count("\n", 0, at) + 1

    report = run_check(trace, replay=False)
    bad = [f for f in report.findings if f.code == "malformed"]
    assert len(bad) == 1 and bad[0].severity == ERROR
    # libxml2 (lxml's sourceline) counts one line more past line 65,535 of a file.
    assert bad[0].line in (line, line + 1)
    assert "'Main' left out" in bad[0].message

    analysis = Analysis.open(trace)
    assert any("'Main' left out" in p for p in analysis.problems)
    assert not analysis.statics.find_methods("Main", "main")
    assert analysis.statics.find_methods("java/lang/String", "length")

    out = jbtrace("stats", str(trace))
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert "'Main' left out" in out.stderr


def test_block_metrics_that_are_not_integers_count_as_zero(sound, tmp_path):
    from jbgui.model.analysis import Analysis

    trace = copy_trace(sound, tmp_path)
    xml = (trace / "static.xml").read_text()
    (trace / "static.xml").write_text(xml.replace('metrics="', 'metrics="seven ', 1))
    analysis = Analysis.open(trace)
    assert any("1 blocks have metrics that are not integers" in p for p in analysis.problems)
    assert not analysis.statics.b_metrics[0].any()
    assert analysis.statics.b_metrics[1:].any()
    report = run_check(trace, replay=False)
    assert "malformed" in codes(report, ERROR)


def test_thread_table_damage_names_the_line(sound, tmp_path):
    trace = copy_trace(sound, tmp_path)
    lines = (trace / "threads.jsonl").read_text().splitlines()
    lines.insert(1, "{not json")
    (trace / "threads.jsonl").write_text("\n".join(lines) + "\n")
    report = run_check(trace, replay=False)
    bad = [f for f in report.findings if f.file == "threads.jsonl"]
    assert bad and bad[0].line == 2 and bad[0].severity == ERROR


@pytest.mark.parametrize("what", ["missing", "empty-dir", "file"])
def test_unreadable_traces_exit_2(tmp_path, what):
    path = tmp_path / "x"
    if what == "empty-dir":
        path.mkdir()
    elif what == "file":
        path.write_text("hello")
    result = jbtrace("check", str(path))
    assert result.returncode == 2
    assert "fatal:" in result.stdout and "Traceback" not in result.stderr


# ---------------------------------------------------------------------- dump

def test_dump_prints_every_event_once_with_its_word(sound):
    result = jbtrace("dump", str(sound))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    meta = json.loads((sound / "trace.json").read_text())
    assert len(lines) == meta["counts"]["events"]
    td = TraceDir(sound)
    main_index = next(t["index"] for t in td.threads if t.get("name") == "main")
    words = td.stream_events(main_index)
    mine = [line.split("\t") for line in lines if line.startswith(f"{main_index}\t")]
    assert [int(f[1]) for f in mine] == list(range(len(words)))
    assert [int(f[2], 16) for f in mine] == words.tolist()
    types = {layout.TYPE_METHOD_START: "START", layout.TYPE_METHOD_END: "END", layout.TYPE_BLOCK: "BLOCK"}
    for f, w in zip(mine[:2000], words[:2000].tolist()):
        if w >> 30:
            assert f[3] == types[w >> 30] and f[4].startswith(f"m={(w >> 11) & layout.MAX_METHOD_ID}")


def test_dump_verbose_names_methods_blocks_and_classes(sound):
    result = jbtrace("dump", "-v", "--thread", "main", str(sound))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "START\tm=" in text and " Main.main([Ljava/lang/String;)V" in text
    block = next(line for line in text.splitlines() if "\tBLOCK\t" in line and " Main.main(" in line)
    assert " #0 [0," in block or "#" in block
    assert "\tEXCEPTION_EXIT\t" in text and "\tTHROWABLE\tclass=" in text
    throwable = next(line for line in text.splitlines() if "\tTHROWABLE\t" in line)
    assert throwable.split("\t")[4].split(" ", 1)[1][0].isalpha()


def test_dump_window(sound):
    result = jbtrace("dump", "--thread", "main", "--from", "10", "--count", "5", str(sound))
    lines = result.stdout.splitlines()
    assert [int(line.split("\t")[1]) for line in lines] == [10, 11, 12, 13, 14]


def test_dump_shared_stream_attributes_events_to_threads(shared_mode):
    result = jbtrace("dump", str(shared_mode))
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    switches = [r for r in rows if r[3] == "THREAD_SWITCH"]
    assert len({r[4] for r in switches}) >= 2
    # Every event after a switch carries the thread the switch named.
    current = None
    for r in rows:
        if r[3] == "THREAD_SWITCH":
            current = r[4].split("=")[1].split()[0]
            assert r[0] == current
        elif current is not None:
            assert r[0] == current


def test_dump_of_a_damaged_stream_prints_the_valid_part_then_exits_2(sound, tmp_path):
    trace = copy_trace(sound, tmp_path)
    stream = trace / "events" / "T000001.jbt"
    data = bytearray(stream.read_bytes())
    first_length = int.from_bytes(data[32 + 12:32 + 16], "little")
    first_count = int.from_bytes(data[32 + 8:32 + 12], "little")
    second = 32 + 32 + first_length
    data[second:second + 4] = b"XXXX"
    stream.write_bytes(bytes(data))
    result = jbtrace("dump", "--thread", "1", str(trace))
    assert result.returncode == 2
    assert len(result.stdout.splitlines()) == first_count
    assert f"T000001.jbt: offset {second}: bad chunk magic" in result.stderr
    assert "Traceback" not in result.stderr


def test_dump_of_no_trace_exits_2(tmp_path):
    result = jbtrace("dump", str(tmp_path / "nothing"))
    assert result.returncode == 2 and result.stderr.startswith("jbtrace: error:")
