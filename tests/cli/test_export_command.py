"""``jbtrace export`` as a user runs it: real traces in, files other tools read out; every bad
input (a missing or corrupt trace, an unwritable output, a bad option value) one line
``jbtrace: error: …``, exit status 2, no traceback and no output file left behind.

The formats themselves are checked against the analyzer in tests/model/test_export.py (and a javac
trace exported to every format there, marked slow).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jbgui.cli.export import SUFFIXES
from jbgui.cli.main import main
from jbgui.model.analysis import Analysis

COLLAPSED_LINE = re.compile(r"^[^;\n]+(;[^;\n]+)* \d+$")


@pytest.fixture(scope="module")
def trace(record, default_jdk) -> Path:
    run = record("exceptions", default_jdk)
    assert run.exit_code == 0, run.describe()
    Analysis.open(run.trace_dir)      # replayed once, here; the commands load the cached replay
    return run.trace_dir


def export(capsys, *args: str) -> tuple[int, str, str]:
    """``jbtrace export …`` in this process: (exit status, stdout, stderr)."""
    status = main(["export", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_error_line(status: int, err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert status == 2, err
    errors = [line for line in lines if line.startswith("jbtrace: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in errors[0], err


def test_every_format_end_to_end(jbtrace, trace, tmp_path, capsys, monkeypatch):
    """Every text format to a file, then collapsed stacks through a pipe from the real command in
    a process of its own."""
    monkeypatch.chdir(tmp_path)
    for name, extra in (("t.json", []), ("t.folded", ["--per-thread"]), ("calls.csv", []),
                        ("blocks.csv", ["--table", "blocks"])):
        status, _out, err = export(capsys, trace, "-o", name, *extra)
        assert status == 0, err
        assert err.splitlines()[-1].startswith("jbtrace: wrote "), err
        assert err.splitlines()[-1].endswith(f"to {name} ({SUFFIXES[Path(name).suffix]})")
    data = json.loads((tmp_path / "t.json").read_text())
    assert any(e["ph"] == "X" for e in data["traceEvents"])
    assert all(COLLAPSED_LINE.match(line) for line in (tmp_path / "t.folded").read_text().splitlines())
    assert (tmp_path / "calls.csv").read_text().startswith("thread,thread_name,row,parent,depth,")
    assert (tmp_path / "blocks.csv").read_text().startswith("class,method,descriptor,method_id,block,")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocks.csv", "calls.csv", "t.folded", "t.json"]

    # Standard output, for a pipe into flamegraph.pl.
    result = jbtrace(["export", str(trace), "--format", "collapsed", "--weight", "calls", "-o", "-"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    analysis = Analysis.open(trace)
    assert all(COLLAPSED_LINE.match(line) for line in lines)
    assert sum(int(line.rsplit(" ", 1)[1]) for line in lines) == sum(len(t.calls) for t in analysis.threads)


def test_parquet_and_its_missing_library(trace, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    status, _out, err = export(capsys, trace, "-o", tmp_path / "calls.parquet", "--thread", "main")
    assert status == 0, err
    import pyarrow.parquet as pq
    analysis = Analysis.open(trace)
    assert pq.read_table(tmp_path / "calls.parquet").num_rows == len(analysis.thread("main").calls)

    # Without pyarrow: one line naming the install command, and nothing written.
    code = ("import sys; sys.modules['pyarrow'] = None; from jbgui.cli.main import main; "
            f"sys.exit(main(['export', {str(trace)!r}, '-o', 'x.parquet']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert_one_error_line(result.returncode, result.stderr, "pip install pyarrow")
    assert not (tmp_path / "x.parquet").exists()


def test_chrome_cap_and_filters_from_the_command_line(trace, tmp_path, capsys):
    out = tmp_path / "t.json"
    status, _out, err = export(capsys, trace, "-o", out, "--max-events", "50")
    assert_one_error_line(status, err, "more than --max-events 50", "--truncate")
    assert list(tmp_path.iterdir()) == []

    status, _out, err = export(capsys, trace, "-o", out, "--max-events", "50", "--truncate")
    assert status == 0, err
    assert "jbtrace: warning: chrome export truncated to the first" in err
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] != "M"]
    assert len(events) <= 50

    status, _out, err = export(capsys, trace, "-o", out, "--thread", "main", "--include", "Main", "--max-depth", "1",
                               "--start", "0", "--end", "100000")
    assert status == 0, err
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert events and all(e["name"].startswith("Main") for e in events)


@pytest.mark.parametrize("args, fragments", [
    (["--format", "svg"], ["unknown --format 'svg'"]),
    (["--format", "collapsed", "--weight", "time"], ["unknown --weight 'time'"]),
    (["--format", "csv", "--table", "rows"], ["unknown --table 'rows'"]),
    (["--max-depth", "-1"], ["--max-depth takes 0 or more"]),
    (["--max-depth", "deep"], ["--max-depth takes a whole number"]),
    (["--max-events", "many"], ["--max-events takes a whole number"]),
    (["--start", "soon"], ["--start takes milliseconds"]),
    (["--end", "nan"], ["--end takes milliseconds"]),
    (["--start", "5", "--end", "1"], ["empty time range"]),
    (["--include", " "], ["include prefix is empty"]),
    (["--format", "csv", "--weight", "calls"], ["--weight applies to --format collapsed only"]),
    (["--table", "blocks"], ["--table applies to --format csv and parquet only"]),
    (["--format", "csv", "--start", "1"], ["--start applies to --format chrome only"]),
    (["--format", "parquet", "-o", "-"], ["standard output"]),
    (["--thread", "nobody"], ["no thread named 'nobody'"]),
])
def test_bad_option_values(trace, tmp_path, capsys, args, fragments):
    argv = [trace, *args] if "-o" in args else [trace, "-o", tmp_path / "out.json", *args]
    status, _out, err = export(capsys, *argv)
    assert_one_error_line(status, err, *fragments)
    assert list(tmp_path.iterdir()) == []


def test_output_that_cannot_be_written(trace, tmp_path, capsys):
    status, _out, err = export(capsys, trace)
    assert_one_error_line(status, err, "-o FILE")
    status, _out, err = export(capsys, trace, "-o", tmp_path / "no" / "such" / "t.json")
    assert_one_error_line(status, err, "does not exist")
    status, _out, err = export(capsys, trace, "--format", "csv", "-o", tmp_path)
    assert_one_error_line(status, err, "is a directory")
    status, _out, err = export(capsys, trace, "-o", tmp_path / "t.txt")
    assert_one_error_line(status, err, "give --format")
    assert list(tmp_path.iterdir()) == []


def test_a_failing_export_keeps_the_previous_file(trace, tmp_path, capsys):
    out = tmp_path / "t.json"
    out.write_text("the previous export")
    status, _out, err = export(capsys, trace, "-o", out, "--max-events", "10")
    assert_one_error_line(status, err, "--max-events")
    assert out.read_text() == "the previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]     # no temporary file left


def test_missing_and_corrupt_traces(trace, tmp_path, capsys):
    out = tmp_path / "out" / "t.json"
    out.parent.mkdir()
    status, _out, err = export(capsys, tmp_path / "nowhere", "-o", out)
    assert_one_error_line(status, err, "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    status, _out, err = export(capsys, empty, "-o", out)
    assert_one_error_line(status, err, "trace.json")

    # Hand-written damage to copies of the real trace: trace.json, an event stream, the clock.
    for damaged, what, garbage in (("trace.json", "trace.json", b"{not json"),
                                   ("events/T000001.jbt", "T000001.jbt", b"\x16\xba$5" + bytes(200)),
                                   ("clock.bin", "clock.bin", b"garbage")):
        copy = tmp_path / f"copy-{what}"
        shutil.copytree(trace, copy)      # with its cached replay: only what was damaged is read again
        (copy / damaged).write_bytes(garbage)
        status, _out, err = export(capsys, copy, "-o", out)
        assert_one_error_line(status, err, what)
    assert list(out.parent.iterdir()) == []
