"""The readers of jbgui/model/format on hand-written malformed input (issue 12): every status of
the chunk walk, bounded inflating, trace.json and threads.jsonl shapes, clock extremes, XML kept
inert, and the file-system rules. Sound input is covered by every test that reads a recorded trace."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
import zstandard

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.format.chunks import MAX_CHUNK_EVENTS, Status, StreamReader, decode_payload
from jbgui.model.format.clock import read_clock
from jbgui.model.format.files import open_file
from jbgui.model.format.static_xml import Malformed, StaticReader, read_class_element, read_fragment
from jbgui.model.format.thread_table import MAX_LINE, read_thread_table
from jbgui.model.format.trace_json import TraceJsonError, read_trace_json

HEAD = struct.pack("<4sHHIIqQ", layout.STREAM_MAGIC, 1, 32, 0, 1, 0, 0)


def chunk(words, first=0, *, count=None, payload=None, codec=layout.CODEC_ZLIB, magic=layout.CHUNK_MAGIC, crc=None):
    raw = np.asarray(words, "<u4").tobytes()
    payload = (zlib.compress(raw) if codec == layout.CODEC_ZLIB else raw) if payload is None else payload
    n = len(words) if count is None else count
    return struct.pack("<4sBBHIIQII", magic, codec, 0, 0, n, len(payload), first,
                       zlib.crc32(payload) if crc is None else crc, 0) + payload


def walk(tmp_path: Path, data: bytes) -> list:
    (tmp_path / "events").mkdir(exist_ok=True)
    path = tmp_path / "events" / "T000001.jbt"
    path.write_bytes(data)
    with StreamReader(path) as reader:
        return list(reader.chunks())


WORDS = [layout.method_start(1), layout.block(1, 0), layout.method_end(1)]


def test_sound_chunks_then_each_kind_of_damage(tmp_path):
    good = chunk(WORDS) + chunk(WORDS, 3)
    assert [r.status for r in walk(tmp_path, HEAD + good)] == [Status.OK, Status.OK]
    cases = {
        Status.CUT_OFF: good + chunk(WORDS, 6)[:40],
        Status.BAD_MAGIC: good + chunk(WORDS, 6, magic=b"XXXX"),
        Status.CRC_ERROR: good + chunk(WORDS, 6, crc=1),
        Status.IMPLAUSIBLE: good + chunk(WORDS, 6, count=MAX_CHUNK_EVENTS + 1),
        Status.UNDECODABLE: good + chunk(WORDS, 6, codec=7),
    }
    for status, data in cases.items():
        records = walk(tmp_path, HEAD + data)
        assert [r.status for r in records] == [Status.OK, Status.OK, status], status
        assert f"offset {len(HEAD) + len(good)}" in records[-1].message


def test_a_chunk_out_of_order_is_implausible(tmp_path):
    records = walk(tmp_path, HEAD + chunk(WORDS) + chunk(WORDS, 0))
    assert records[-1].status is Status.IMPLAUSIBLE and records[-1].code == "chunk-first"


def test_inflating_stops_at_what_the_header_claims():
    bomb = zlib.compress(bytes(64 << 20))
    with pytest.raises(ValueError, match="inflates to more than the 16 bytes"):
        decode_payload(bomb, layout.CODEC_ZLIB, 0, 4)
    assert list(decode_payload(zlib.compress(np.asarray(WORDS, "<u4").tobytes()), layout.CODEC_ZLIB, 0, 3)) == WORDS


def test_zstd_chunks_decode_and_a_bigger_claim_is_refused():
    """Codec 2 (zstd, what the recorder writes when zstd-jni is installed): plain words decode; a
    frame that states more than the header's 4 n bytes is refused before anything is allocated."""
    raw = np.asarray(WORDS, "<u4").tobytes()
    assert list(decode_payload(zstandard.ZstdCompressor(level=1).compress(raw), layout.CODEC_ZSTD, 0, 3)) == WORDS
    bomb = zstandard.ZstdCompressor().compress(bytes(64 << 20))
    with pytest.raises(ValueError, match="more than the 16 bytes"):
        decode_payload(bomb, layout.CODEC_ZSTD, 0, 4)
    with pytest.raises(ValueError, match="zstd"):
        decode_payload(b"not a zstd frame", layout.CODEC_ZSTD, 0, 4)


def test_trace_json_shapes(tmp_path):
    path = tmp_path / "trace.json"
    for text, said in (("null", "not a JSON object"), ("[" * 200_000, "nested too deeply"), ("{", "not JSON")):
        path.write_text(text)
        with pytest.raises(TraceJsonError, match=said):
            read_trace_json(path)
    path.write_text(json.dumps({"status": "complete", "agent": {"options": {"include": -1e308, "mode": 2}},
                                "jvm": {"java_home": ["x"], "pid": None}, "start": "x", "future": {"a": 1}}))
    read = read_trace_json(path)
    assert read.metadata == {"status": "complete", "agent": {"options": {"mode": 2}}, "jvm": {"pid": None},
                             "future": {"a": 1}}
    assert sorted(p.text.split(" is ")[0] for p in read.problems) == ["agent.options.include", "jvm.java_home",
                                                                      "start"]


def test_thread_table_shapes(tmp_path):
    path = tmp_path / "threads.jsonl"
    path.write_text("\n".join([
        '{"kind": "start", "index": 1, "name": "main", "nanos": 5}',
        'null', '{"kind": "start", "index": "a"}', '{"kind": "start", "index": 99999999999}',
        '{"kind": "start", "index": 2, "name": [1], "daemon": "yes"}',
        '{"kind": "start", "index": 3, "name": "' + "n" * (2 * MAX_LINE) + '"}',
        '{"kind": "end", "index": 1, "events": 7}',
        '{"kind": "start", "ind']))
    table = read_thread_table(path)
    assert sorted(table.threads) == [1, 2]
    assert table.threads[1].merged()["events"] == 7 and "name" not in table.threads[2].start
    codes = [p.code for p in table.problems]
    assert codes.count("bad-record") == 4 and codes.count("bad-field") == 2 and codes[-1] == "partial-line"


def test_clock_extremes_are_left_out(tmp_path):
    path = tmp_path / "clock.bin"
    good = [(1, 0, 1000, 1), (1, 10, 2000, 1)]
    bad = [(-1, 0, 1500, 1), (1, -5, 1500, 1), (1, 20, -(1 << 63), 1), (1, 30, (1 << 63) - 1, 1), (1, 40, 500, 1)]
    path.write_bytes(b"JBCL" + struct.pack("<HH8x", 1, 32) + np.array(good + bad, "<i8").tobytes() + b"xx")
    samples, problems = read_clock(path, start_nanos=900)
    assert samples["nanos"].tolist() == [1000, 2000]
    assert len(problems) == 3     # a partial record, implausible values, time going backwards


def test_files_outside_or_not_regular_are_refused(tmp_path):
    trace = tmp_path / "trace"
    trace.mkdir()
    (tmp_path / "secret").write_text("secret")
    os.symlink(tmp_path / "secret", trace / "static.xml")
    with pytest.raises(TraceError, match="outside the trace directory"):
        open_file(trace / "static.xml")
    os.mkfifo(trace / "clock.bin")
    with pytest.raises(TraceError, match="FIFO"):
        open_file(trace / "clock.bin")
    (trace / "real.json").write_text("{}")
    os.symlink("real.json", trace / "trace.json")            # a link inside the trace is followed
    with open_file(trace / "trace.json") as f:
        assert f.read() == b"{}"


def test_xml_stays_inert(tmp_path):
    """An external entity (in an attribute: libxml2 refuses the document; in text: left
    unexpanded) and an external DTD never bring a local file's content in."""
    from lxml import etree

    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    dtd = f'<!DOCTYPE static_information [<!ENTITY x SYSTEM "file://{secret}">]>'
    block = ('<basic_block id="2048" index="0" start="0" end="1" metrics="1">'
             '<instructions>0 &x;</instructions></basic_block>')
    in_text = (f'<class id="1" name="A"><method id="1" name="m" desc="()V" blocks="1" block_pages="1">{block}'
               '</method></class>')
    record = read_class_element(read_fragment((dtd.replace("static_information", "class") + in_text).encode()))
    assert "SECRET" not in (record.methods[0].block_list[0].instructions or "")
    with pytest.raises(etree.XMLSyntaxError):
        read_fragment((dtd.replace("static_information", "class") + '<class id="1" name="A&x;"/>').encode())
    for doc in (dtd + f"<static_information>{in_text}</static_information>",
                f'<!DOCTYPE static_information SYSTEM "file://{secret}"><static_information>{in_text}'
                '</static_information>'):
        static = tmp_path / "static.xml"
        static.write_text('<?xml version="1.0"?>' + doc)
        classes = list(StaticReader(static).classes())
        assert [c.name for c in classes] == ["A"]
        assert "SECRET" not in (classes[0].methods[0].block_list[0].instructions or "")


@pytest.mark.parametrize("method", ['id="4294967296"', 'id="-1"', 'id="x"', 'id="3" block_pages="100000"',
                                    'id="3" blocks="1" block_pages="2"'])
def test_out_of_range_values_are_malformed(method):
    doc = f'<class id="1" name="A"><method {method} name="m" desc="()V"/></class>'
    with pytest.raises(Malformed):
        read_class_element(read_fragment(doc.encode()))


def test_a_method_id_used_twice_leaves_the_later_class_out(tmp_path):
    static = tmp_path / "static.xml"
    static.write_text('<static_information>'
                      '<class id="1" name="A"><method id="5" name="m" desc="()V"/></class>'
                      '<class id="2" name="B"><method id="5" name="n" desc="()V"/></class>'
                      '</static_information>')
    reader = StaticReader(static)
    assert [c.name for c in reader.classes()] == ["A"]
    assert "line 1: class 'B' left out, malformed: method id 5" in reader.problems[0]
