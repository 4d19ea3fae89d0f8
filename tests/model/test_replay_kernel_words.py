"""The replay state machine on hand-built event words (kernel unit tests, issue 12).

A small static model is built directly (one class: ``main`` calls ``a`` then the native ``nat`` in
its block 0, continues in block 1 and catches in block 2; ``a`` calls ``b``; ``<clinit>``), words come from the builders
in :mod:`jbgui.model.layout`, and each test checks the rows replay makes: exceptions with and
without exit records, native calls, implicit starts, truncation, and words no static information
defines (counted, never read out of bounds).
"""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model import replay as R
from jbgui.model.analysis import CallTable, Flag
from jbgui.model.format.static_xml import StaticColumns
from jbgui.model.statics import M_IMPLICIT_ONLY, M_INSTRUMENTED, M_NATIVE, M_STATIC, _build

MAIN, A, B, NAT, CLINIT = 1, 2, 3, 4, 5
start, end, block = layout.method_start, layout.method_end, layout.block


def exit_(m):
    return layout.extended(layout.EXT_EXCEPTION_EXIT, m)


def throwable(c):
    return layout.extended(layout.EXT_THROWABLE, c)


def _statics():
    metrics = " ".join(["3"] + ["0"] * 18)

    def blk(index, sites=(), handlers=()):
        return (index, 0, 3, "", metrics, [(f"T:{s}", "INVOKESTATIC", 0) for s in sites], list(handlers), None)

    instrumented = M_INSTRUMENTED | M_STATIC
    handler_word = (MAIN << layout.BLOCK_BITS) | 2          # main's block 2 catches what block 0 throws
    methods = [
        (MAIN, 1, "main", "()V", instrumented, 3, 1,
         [blk(0, ("a()V", "nat()V"), [(handler_word, "java/lang/Exception")]), blk(1), blk(2)]),
        (A, 1, "a", "()V", instrumented, 2, 1, [blk(0, ("b()V",)), blk(1)]),
        (B, 1, "b", "()V", instrumented, 1, 1, [blk(0)]),
        (NAT, 1, "nat", "()V", M_NATIVE | M_STATIC, 0, 1, []),
        (CLINIT, 1, "<clinit>", "()V", instrumented | M_IMPLICIT_ONLY, 1, 1, [blk(0)]),
    ]
    classes = {1: ("T", "app", "java/lang/Object", False, False, True, "T.java"),
               2: ("java/lang/IllegalStateException", "bootstrap", "", True, False, True, "")}
    return _build(_columns(classes, methods))


def _columns(classes, methods) -> StaticColumns:
    """The columns static.xml's reader would give for these classes and methods."""
    cols = StaticColumns(problems=[], c_id=[], c_name=[], c_loader=[], c_super=[], c_source=[], c_jdk=[],
                         c_hidden=[], c_instrumented=[], m_id=[], m_class=[], m_name=[], m_desc=[], m_native=[],
                         m_abstract=[], m_intrinsic=[], m_instrumented=[], m_static=[], m_blocks=[], m_pages=[],
                         b_method=[], b_start=[], b_end=[], b_lines=[], b_metrics=[], b_monitor=[], s_block=[], s_call=[],
                         s_type=[], s_offset=[], s_blocking=[], h_block=[], h_word=[], h_type=[], instructions={})
    for cid, (name, loader, sup, jdk, hidden, instr, source) in classes.items():
        for column, value in zip(("c_id", "c_name", "c_loader", "c_super", "c_jdk", "c_hidden", "c_instrumented",
                                  "c_source"), (cid, name, loader, sup, jdk, hidden, instr, source)):
            getattr(cols, column).append(value)
    for mid, cid, name, desc, flags, _n, pages, blocks in methods:
        position = len(cols.m_id)
        for column, value in zip(("m_id", "m_class", "m_name", "m_desc", "m_native", "m_abstract", "m_intrinsic",
                                  "m_instrumented", "m_static", "m_blocks", "m_pages"),
                                 (mid, cid, name, desc, bool(flags & M_NATIVE), False, False,
                                  bool(flags & M_INSTRUMENTED), bool(flags & M_STATIC), len(blocks), pages)):
            getattr(cols, column).append(value)
        for _index, start, end, lines, metrics, sites, handlers, _instr in blocks:
            g = len(cols.b_method)
            cols.b_method.append(position)
            cols.b_start.append(start)
            cols.b_end.append(end)
            cols.b_lines.append(lines)
            cols.b_metrics.append(metrics)
            cols.b_monitor.append(-1)
            for call, typ, offset in sites:
                cols.s_block.append(g)
                cols.s_call.append(call)
                cols.s_type.append(typ)
                cols.s_offset.append(offset)
                cols.s_blocking.append(False)
            for word, typ in handlers:
                cols.h_block.append(g)
                cols.h_word.append(word)
                cols.h_type.append(typ)
    return cols


@pytest.fixture(scope="module")
def statics():
    return _statics()


def replay(statics, words, tmp_path: Path, ended: bool = True):
    """Replay ``words`` as thread 1's whole stream; the rows as dicts, and the result."""
    words = np.asarray(words, np.uint32)
    raw = words.astype("<u4").tobytes()
    payload = zlib.compress(raw)
    head = struct.pack("<4sHHIIqQ", layout.STREAM_MAGIC, 1, 32, 0, 1, 0, 0)
    chunk = struct.pack("<4sBBHIIQII", layout.CHUNK_MAGIC, layout.CODEC_ZLIB, layout.FILTER_NONE,
                        layout.CHUNK_FLAG_LAST if ended else 0, len(words), len(payload), 0, zlib.crc32(payload), 0)
    stream = tmp_path / "T000001.jbt"
    tmp_path.mkdir(parents=True, exist_ok=True)
    stream.write_bytes(head + chunk + payload)
    result, _ = R.replay_stream(statics, R.kernel_statics(statics), R.new_state(statics), stream, tmp_path / "out")
    calls = CallTable.of_replay(tmp_path / "out", result)
    rows = [{"method": int(calls.method[i]), "parent": int(calls.parent[i]), "depth": int(calls.depth[i]),
             "first": int(calls.first[i]), "last": int(calls.last[i]), "flags": int(calls.flags[i])}
            for i in range(len(calls))]
    return rows, result


def test_a_normal_call_tree(statics, tmp_path):
    rows, result = replay(statics, [start(MAIN), block(MAIN, 0), start(A), block(A, 0), start(B), block(B, 0),
                                    end(B), block(A, 1), end(A), block(MAIN, 1), end(MAIN)], tmp_path)
    assert [(r["method"], r["parent"], r["depth"]) for r in rows if not r["flags"] & Flag.NATIVE] == \
        [(MAIN, -1, 0), (A, 0, 1), (B, 1, 2)]
    assert (rows[1]["first"], rows[1]["last"]) == (2, 8)
    assert result.unknown_ids == 0


def test_exception_with_exit_records(statics, tmp_path):
    rows, result = replay(statics, [start(MAIN), block(MAIN, 0), start(A), block(A, 0), start(B), block(B, 0),
                                    exit_(B), throwable(2), exit_(A), block(MAIN, 2), end(MAIN)], tmp_path)
    by = {r["method"]: r for r in rows}
    assert by[B]["flags"] & Flag.EXCEPTIONAL and by[A]["flags"] & Flag.EXCEPTIONAL
    assert not by[A]["flags"] & Flag.INFERRED
    assert by[MAIN]["flags"] & Flag.CAUGHT and not by[MAIN]["flags"] & Flag.EXCEPTIONAL
    assert len(result.exceptions) == 1


def test_exception_without_exit_records_is_inferred_from_the_handler_lists(statics, tmp_path):
    rows, result = replay(statics, [start(MAIN), block(MAIN, 0), start(A), block(A, 0), start(B), block(B, 0),
                                    block(MAIN, 2), end(MAIN)], tmp_path)
    by = {r["method"]: r for r in rows}
    for m in (A, B):
        assert by[m]["flags"] & Flag.EXCEPTIONAL and by[m]["flags"] & Flag.INFERRED, by[m]
    assert by[MAIN]["flags"] & Flag.CAUGHT
    assert result.inferred_exits == 2


def test_a_native_call_that_never_starts_is_a_synthetic_row(statics, tmp_path):
    rows, _ = replay(statics, [start(MAIN), block(MAIN, 0), start(A), block(A, 0), start(B), block(B, 0), end(B),
                               block(A, 1), end(A), block(MAIN, 1), end(MAIN)], tmp_path)
    native = [r for r in rows if r["flags"] & Flag.NATIVE]
    assert len(native) == 1 and native[0]["method"] == NAT and native[0]["parent"] == 0


def test_an_untraced_call_site_and_a_callback_under_it(statics, tmp_path):
    # b is called from main's block 0 where nat is the pending call: a callback from the native call.
    rows, _ = replay(statics, [start(MAIN), block(MAIN, 0), start(A), block(A, 0), start(B), block(B, 0), end(B),
                               block(A, 1), end(A), start(B), block(B, 0), end(B), block(MAIN, 1), end(MAIN)],
                     tmp_path)
    callback = [r for r in rows if r["method"] == B and r["depth"] == 2 and rows[r["parent"]]["flags"] & Flag.NATIVE]
    assert len(callback) == 1


def test_a_static_initializer_starts_implicitly(statics, tmp_path):
    rows, _ = replay(statics, [start(MAIN), block(MAIN, 0), start(CLINIT), block(CLINIT, 0), end(CLINIT),
                               start(A), block(A, 0), start(B), block(B, 0), end(B), block(A, 1), end(A),
                               block(MAIN, 1), end(MAIN)], tmp_path)
    clinit = next(r for r in rows if r["method"] == CLINIT)
    assert clinit["flags"] & Flag.IMPLICIT and clinit["parent"] == 0


def test_truncation_at_both_ends(statics, tmp_path):
    # The stream starts inside a call of a (no START) and ends inside b (the JVM was killed).
    rows, result = replay(statics, [block(A, 0), start(B), block(B, 0)], tmp_path, ended=False)
    by = {r["method"]: r for r in rows}
    assert by[A]["flags"] & Flag.TRUNCATED and by[A]["flags"] & Flag.NO_START
    assert by[B]["flags"] & Flag.TRUNCATED and not by[B]["flags"] & Flag.NO_START
    assert result.no_start == 1


def test_words_that_static_information_does_not_define(statics, tmp_path):
    words = [start(MAIN), block(MAIN, 0),
             block(MAIN, 3),                          # an index beyond main's 3 blocks
             block(A, layout.BLOCK_MASK),             # far beyond: would read past the block table
             block(layout.MAX_METHOD_ID, 0), start(layout.MAX_METHOD_ID), end(0), exit_(layout.MAX_METHOD_ID),
             block(NAT, 0),                           # a native method has no blocks
             block(MAIN, 1), end(MAIN)]
    rows, result = replay(statics, words, tmp_path)
    assert result.unknown_ids == 7
    # main's pending calls of block 0 never started: synthetic rows; no other frame came of them.
    assert [r["method"] for r in rows if not r["flags"] & (Flag.NATIVE | Flag.UNTRACED)] == [MAIN]


def test_random_words_never_crash(statics, tmp_path):
    rng = random.Random(12)
    for k in range(20):
        words = [rng.getrandbits(32) if rng.random() < 0.5 else
                 rng.choice([start, end, exit_])(rng.randrange(7)) if rng.random() < 0.5 else
                 block(rng.randrange(7), rng.randrange(4)) for _ in range(2000)]
        rows, result = replay(statics, words, tmp_path / str(k))
        assert all(0 <= r["method"] <= CLINIT for r in rows)
        assert all(r["parent"] < i for i, r in enumerate(rows))
