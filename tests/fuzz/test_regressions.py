"""One regression test per class of failure the fuzz campaign of issue 12 found: each damages a
copy of a real trace the way the campaign did and checks the promise — one clear line (or a
finding, or a warning), exit status 0, 1 or 2, no traceback, no signal, no hang, bounded memory."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jbgui.cli.main import main
from jbgui.model import layout
from fuzz_harness import limit_memory
from fuzz_mutations import (OUTSIDE_SECRET, chunk_bytes, compression_bomb, deep_stack, read_chunks,
                                  static_entities, streams, write_stream)


def jbtrace(*args: str, timeout: float = 120, isolated: bool = False) -> subprocess.CompletedProcess:
    """Run ``jbtrace`` in this process (fast), or ``isolated`` in a child with the fuzz tests'
    memory limit and a timeout: for the cases that once blew up memory or hung."""
    argv = [str(a) for a in args]
    if isolated:
        return subprocess.run([sys.executable, "-m", "jbgui.cli", *argv], capture_output=True, timeout=timeout,
                              preexec_fn=limit_memory, text=True, errors="backslashreplace")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 2
    return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())


def clean(proc: subprocess.CompletedProcess, statuses=(0, 1, 2)) -> None:
    assert proc.returncode in statuses, (proc.returncode, proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


@pytest.fixture
def trace(small_traces, tmp_path) -> Path:
    out = tmp_path / "case" / "trace"
    shutil.copytree(small_traces["exceptions"], out, symlinks=True)
    return out


def _edit_all_words(trace: Path, edit) -> None:
    path = streams(trace)[0]
    head, chunks = read_chunks(path)
    chunks = [(f, first, edit(w.copy())) for f, first, w in chunks]
    write_stream(path, head, chunks)


# ---------------------------------------------------------------------- event words

def test_block_index_beyond_its_method_is_an_unknown_id_not_a_crash(trace):
    def edit(words):
        blocks = words >> 30 == layout.TYPE_BLOCK
        words[blocks] |= np.uint32(layout.BLOCK_MASK)        # index 2047: beyond every method's blocks
        return words
    _edit_all_words(trace, edit)
    for args in (["stats", trace], ["export", trace, "--format", "chrome", "-o", trace.parent / "c.json"],
                 ["export", trace, "--format", "csv", "-o", trace.parent / "c.csv"]):
        proc = jbtrace(*args)
        clean(proc, (0,))
    assert "static.xml does not define" in jbtrace("stats", trace).stderr
    check = jbtrace("check", trace)
    clean(check, (1,))
    assert "beyond the blocks static.xml lists" in check.stdout or "no method or block" in check.stdout, check.stdout


def test_random_method_ids_and_inserted_words_replay(trace):
    rng = random.Random(7)

    def edit(words):
        for _ in range(200):
            words[rng.randrange(len(words))] = rng.getrandbits(32)
        return words
    _edit_all_words(trace, edit)
    for args in (["stats", trace], ["calls", trace], ["check", trace], ["dump", "-v", trace]):
        clean(jbtrace(*args))


@pytest.mark.parametrize("claimed,said", [pytest.param(16, "a payload of", marks=pytest.mark.slow),
                                         (1 << 20, "inflates to more than")])
def test_compression_bomb_is_refused_at_its_offset(trace, claimed, said):
    compression_bomb(trace, random.Random(1), size=256 << 20, claimed=claimed)
    proc = jbtrace("check", trace, isolated=True)
    clean(proc, (1,))
    assert said in proc.stdout and "offset" in proc.stdout, proc.stdout
    clean(jbtrace("stats", trace, isolated=True), (0,))


def test_chunk_claiming_billions_of_events(trace):
    path = streams(trace)[0]
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data + chunk_bytes(np.zeros(4, np.uint32), 0, count=(1 << 32) - 1))
    proc = jbtrace("check", trace, isolated=True)
    clean(proc, (1,))
    assert "chunk of 4294967295 events" in proc.stdout


# ---------------------------------------------------------------------- static.xml

@pytest.mark.parametrize("value", ["4294967296", "-1", "2147483648", "9223372036854775808", "abc"])
def test_static_ids_out_of_range_leave_the_class_out(trace, value):
    path = trace / "static.xml"
    text = path.read_text().replace('<method id="', f'<method id="{value}" old_id="', 1)
    path.unlink()
    path.write_text(text)
    check = jbtrace("check", "--no-replay", trace)
    clean(check, (1,))
    assert "malformed" in check.stdout and "line " in check.stdout, check.stdout
    clean(jbtrace("stats", trace), (0,))


@pytest.mark.parametrize("attr,value", [("block_pages", "100000"), ("metrics", "x -1 2147483648"),
                                        ("start", "9223372036854775808")])
def test_static_attributes_out_of_range(trace, attr, value):
    path = trace / "static.xml"
    text = path.read_text()
    at = text.index(f' {attr}="') + len(attr) + 3
    text = text[:at] + value + text[text.index('"', at):]
    path.unlink()
    path.write_text(text)
    check = jbtrace("check", "--no-replay", trace)
    clean(check, (1,))
    assert "malformed" in check.stdout or "not integers" in check.stdout, check.stdout
    for args in (["stats", trace], ["dump", "-v", "--count", "100", trace]):
        clean(jbtrace(*args), (0,))


@pytest.mark.parametrize("seed", range(3))
def test_xml_entities_stay_inert(trace, seed):
    static_entities(trace, random.Random(seed))
    for args in (["dump", "-v", trace], ["check", "--no-replay", trace], ["stats", "--json", trace]):
        proc = jbtrace(*args)
        clean(proc)
        assert OUTSIDE_SECRET not in proc.stdout + proc.stderr


# ---------------------------------------------------------------------- trace.json, threads.jsonl, clock.bin

@pytest.mark.parametrize("content,said", [("null", "not a JSON object"), ('"x"', "not a JSON object"),
                                          ("[" * 1_000_000 + "]" * 1_000_000, "nested too deeply"),
                                          ("{", "not JSON")])
def test_trace_json_of_the_wrong_shape(trace, content, said):
    (trace / "trace.json").unlink()
    (trace / "trace.json").write_text(content)
    proc = jbtrace("stats", trace, isolated=True)
    clean(proc, (2,))
    assert said in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("field,value", [(("agent", "options", "include"), -1e308), (("jvm", "java_home"), [1]),
                                         (("start",), None), (("counts",), "many"), (("start", "nanos"), "x")])
def test_trace_json_fields_of_the_wrong_type_are_ignored(trace, field, value):
    meta = json.loads((trace / "trace.json").read_text())
    obj = meta
    for key in field[:-1]:
        obj = obj[key]
    obj[field[-1]] = value
    (trace / "trace.json").unlink()
    (trace / "trace.json").write_text(json.dumps(meta))
    proc = jbtrace("stats", trace)
    clean(proc, (0,))
    if value is not None:
        assert f"{'.'.join(field)} is" in proc.stderr, proc.stderr


@pytest.mark.parametrize("line", ['null', '{"kind": "start", "index": "a"}', '{"kind": "start", "index": 1e30}',
                                  '{"kind": "end", "index": 1, "events": "x"}', "[" * 200_000 + "]" * 200_000])
def test_thread_table_of_the_wrong_shape(trace, line):
    path = trace / "threads.jsonl"
    text = line + "\n" + path.read_text()
    path.unlink()
    path.write_text(text)
    check = jbtrace("check", "--no-replay", trace)
    clean(check, (1,))
    assert "threads.jsonl" in check.stdout
    clean(jbtrace("stats", trace), (0,))


def test_clock_with_extreme_values(trace):
    path = trace / "clock.bin"
    data = path.read_bytes()
    records = b"".join(np.array([[1, pos, nanos, 1]], "<i8").tobytes()
                       for pos in (0, 5, 1 << 62) for nanos in (-(1 << 63), (1 << 63) - 1, 0))
    path.unlink()
    path.write_bytes(data + records)
    for fmt in ("chrome", "csv"):
        clean(jbtrace("export", trace, "--format", fmt, "-o", trace.parent / f"out.{fmt}"), (0,))


# ---------------------------------------------------------------------- the file system

def test_stream_symlinked_outside_is_refused(trace, tmp_path):
    stream = streams(trace)[0]
    outside = tmp_path / "elsewhere.jbt"
    shutil.copy(stream, outside)
    stream.unlink()
    os.symlink(outside, stream)
    proc = jbtrace("dump", trace)
    clean(proc, (2,))
    assert "outside the trace directory" in proc.stderr
    assert proc.stdout.count("\n") == 0 or str(stream.stem[1:].lstrip("0")) + "\t" not in proc.stdout


@pytest.mark.parametrize("victim", ["static.xml", "stream", *(pytest.param(v, marks=pytest.mark.slow)
                                                       for v in ("trace.json", "threads.jsonl", "clock.bin"))])
def test_fifo_in_place_of_a_file_does_not_block(trace, victim):
    path = streams(trace)[0] if victim == "stream" else trace / victim
    path.unlink()
    os.mkfifo(path)
    check = jbtrace("check", trace, timeout=60, isolated=True)
    clean(check)
    assert "FIFO" in check.stdout
    clean(jbtrace("stats", trace, timeout=60, isolated=True))


def test_a_fifo_in_place_of_one_threads_stream_leaves_that_thread_out(small_traces, tmp_path):
    """What is valid stays usable: the other threads are replayed, the lost one is named."""
    from jbgui.model.analysis import Analysis
    trace = tmp_path / "t"
    shutil.copytree(small_traces["threads"], trace, symlinks=True)
    whole = Analysis.open(trace, use_cache=False)
    calls = {t.index: len(t.calls) for t in whole.threads}
    victim = streams(trace)[-1]
    index = int(victim.stem[1:])
    assert len(calls) > 2 and index in calls
    victim.unlink()
    os.mkfifo(victim)
    stats = jbtrace("stats", trace, timeout=60, isolated=True)
    clean(stats, (0,))
    assert f"thread {index} left out" in stats.stderr and "FIFO" in stats.stderr
    part = Analysis.open(trace)
    assert {t.index: len(t.calls) for t in part.threads} == {i: n for i, n in calls.items() if i != index}
    assert any(f"thread {index} left out" in p for p in part.problems)


@pytest.mark.parametrize("how", ["loop", "dangling"])
def test_symlink_loops_and_dangling_links(trace, how):
    stream = streams(trace)[0]
    stream.unlink()
    os.symlink(stream.name if how == "loop" else trace / "nothing", stream)
    for args in (["check", trace], ["stats", trace], ["dump", trace]):
        clean(jbtrace(*args))


def test_odd_stream_names_are_ignored(trace):
    shutil.copy(streams(trace)[0], trace / "events" / "T99999999999999999999.jbt")
    (trace / "events" / "Tx.jbt").write_bytes(b"")
    proc = jbtrace("stats", trace)
    clean(proc, (0,))
    assert "not a stream name" in proc.stderr
    clean(jbtrace("check", trace), (1,))


@pytest.mark.parametrize("name", [b"with\nnewline", b"undecodable-\xff\xfe"])
def test_directory_names_with_newlines_or_undecodable_bytes(trace, name):
    odd = Path(os.fsdecode(bytes(trace.parent) + b"/" + name))
    shutil.copytree(trace, odd, symlinks=True)
    (odd / "static.xml").unlink()
    (odd / "static.xml").write_text("<static_information")
    for args in (["stats", odd], ["check", odd], ["dump", "-v", odd]):
        proc = jbtrace(*args)
        clean(proc)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("jbtrace: error:")]
        assert all("\n" not in e for e in errors)


# ---------------------------------------------------------------------- depth

def test_collapsed_export_of_a_very_deep_stack(trace):
    """100,000 nested calls: the collapsed export folds contexts deeper than its limit (and says
    so) instead of writing a stack per level, each as long as the level is deep."""
    deep_stack(trace, 100_000)
    out = trace.parent / "deep.txt"
    proc = jbtrace("export", trace, "--format", "collapsed", "-o", out, timeout=300, isolated=True)
    clean(proc, (0,))
    assert "deeper than 1,024" in proc.stderr, proc.stderr
    lines = out.read_text().splitlines()
    assert 0 < len(lines) <= 1025
    assert max(line.count(";") for line in lines) <= 1024
