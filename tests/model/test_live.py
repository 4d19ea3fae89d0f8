"""LiveProgress on real traces: while the agent writes one (long_running, ended by SIGTERM), on a
finished one (its totals are trace.json's), and on a finished one replayed onto disk piece by
piece, cut at arbitrary bytes, as a writer would leave it between two polls."""

from __future__ import annotations

import json
import os
import signal
import struct
import time
from pathlib import Path

from lxml import etree

from jbgui.model.live import LiveProgress

CHUNK = struct.Struct("<4sBBHIIQII")
KEYS = ("threads", "classes", "events", "chunks", "bytes")


def class_elements(trace: Path) -> int:
    parser = etree.XMLParser(recover=True, huge_tree=True)
    root = etree.parse(str(trace / "static.xml"), parser).getroot()
    return len(root.findall("class"))


def whole_chunks(data: bytes) -> tuple[int, int]:
    """(events, chunks) of the whole chunks in a stream file's first bytes ``data``."""
    events = chunks = 0
    if len(data) < 32:
        return 0, 0
    pos = struct.unpack_from("<H", data, 6)[0]
    while pos + 32 <= len(data):
        _magic, _c, _f, _fl, count, length, *_ = CHUNK.unpack_from(data, pos)
        if pos + 32 + length > len(data):
            break
        events, chunks, pos = events + count, chunks + 1, pos + 32 + length
    return events, chunks


def started_threads(data: bytes) -> int:
    whole = data[: data.rfind(b"\n") + 1]
    return sum(1 for line in whole.splitlines() if json.loads(line)["kind"] == "start")


def test_a_finished_trace_is_counted_exactly(program_runs, default_jdk):
    _untraced, run = program_runs("multithread", default_jdk)
    meta = run.trace_json()
    progress = LiveProgress(run.trace_dir).poll()
    assert progress["status"] == "complete"
    assert progress["events"] == meta["counts"]["events"]
    assert progress["chunks"] == meta["counts"]["chunks"]
    assert progress["threads"] == meta["counts"]["threads"]
    assert progress["classes"] == class_elements(run.trace_dir) == meta["counts"]["classes"]
    assert progress["bytes"] == sum(p.stat().st_size for p in (run.trace_dir / "events").glob("*.jbt"))


def test_a_trace_written_piece_by_piece_is_counted_as_far_as_it_is_whole(program_runs, default_jdk, tmp_path):
    """Each file grows by uneven steps (cutting chunk headers, payloads, lines and <class tags
    anywhere); after every step the counts are exactly those of the whole pieces on disk."""
    _untraced, run = program_runs("multithread", default_jdk)
    source = run.trace_dir
    names = ["threads.jsonl", "static.xml", "trace.json"] + [f"events/{p.name}" for p in
                                                            sorted((source / "events").glob("*.jbt"))]
    full = {name: (source / name).read_bytes() for name in names}
    target = tmp_path / "growing"
    (target / "events").mkdir(parents=True)
    live = LiveProgress(target)
    assert live.poll() == {"threads": 0, "classes": 0, "events": 0, "chunks": 0, "bytes": 0, "status": None}
    written = dict.fromkeys(names, 0)
    steps = [0.0005, 0.003, 0.01, 0.02, 0.05, 0.11, 0.2, 0.33, 0.5, 0.61, 0.77, 0.9, 0.97, 0.999, 1.0]
    previous = None
    for step, fraction in enumerate(steps):
        for i, name in enumerate(names):
            if name == "trace.json" and fraction < 1.0:
                continue     # the agent writes trace.json whole (a rename)
            # Stagger the files so that their cuts fall at different places.
            size = len(full[name])
            upto = size if fraction == 1.0 else min(size, int(size * fraction) + 7 * i + 3 * step)
            with open(target / name, "ab") as f:
                f.write(full[name][written[name]:upto])
            written[name] = upto
        progress = live.poll()
        prefix = {name: full[name][: written[name]] for name in names}
        streams = [whole_chunks(prefix[n]) for n in names if n.startswith("events/")]
        assert progress["events"] == sum(e for e, _ in streams), fraction
        assert progress["chunks"] == sum(c for _, c in streams), fraction
        assert progress["classes"] == prefix["static.xml"].count(b"<class "), fraction
        assert progress["threads"] == started_threads(prefix["threads.jsonl"]), fraction
        assert progress["bytes"] == sum(len(prefix[n]) for n in names if n.startswith("events/"))
        if previous is not None:
            assert all(progress[k] >= previous[k] for k in KEYS)
        previous = progress
    meta = json.loads(full["trace.json"])
    assert previous["events"] == meta["counts"]["events"] and previous["status"] == "complete"
    # A fresh reader of the same files agrees with the one that followed them.
    assert LiveProgress(target).poll() == previous


def test_a_running_trace_grows_until_sigterm_completes_it(start_program, default_jdk):
    process, trace = start_program("long_running", default_jdk)
    try:
        live = LiveProgress(trace)
        seen: list[dict] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            progress = live.poll()
            seen.append(progress)
            # threads.jsonl is flushed now and then by the writer, so it may lag the events.
            if progress["events"] > 0 and progress["threads"] > 0 and progress["status"] == "running":
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        running = seen[-1]
        assert running["status"] == "running" and running["events"] > 0
        assert running["threads"] >= 1 and running["classes"] > 100 and running["bytes"] > 0
        for before, after in zip(seen, seen[1:]):
            assert all(after[k] >= before[k] for k in KEYS)
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.communicate(timeout=120)
    final = live.poll()
    meta = json.loads((trace / "trace.json").read_text())
    assert meta["status"] == final["status"] == "complete"
    assert final["events"] == meta["counts"]["events"] >= running["events"]
    assert final["threads"] == meta["counts"]["threads"]
    assert final["classes"] == class_elements(trace)


def test_missing_and_damaged_files_are_no_error(tmp_path):
    assert LiveProgress(tmp_path / "absent").poll()["events"] == 0
    (tmp_path / "events").mkdir()
    (tmp_path / "events" / "T000001.jbt").write_bytes(b"JBTS" + b"\0" * 10)        # a cut header
    (tmp_path / "events" / "T000002.jbt").write_bytes(b"not a stream at all" * 4)
    (tmp_path / "trace.json").write_text('{"status": "runn')                       # half written
    (tmp_path / "threads.jsonl").write_text('{"kind": "start", "index": 1}\n{"kind": "st')
    (tmp_path / "static.xml").write_bytes(b"<static_information><class id=\"1\"><cla")
    progress = LiveProgress(tmp_path).poll()
    assert progress == {"threads": 1, "classes": 1, "events": 0, "chunks": 0,
                        "bytes": 14 + 19 * 4, "status": None}
