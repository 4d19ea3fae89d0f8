"""``jbtrace check`` on START_RECEIVER_OWN marks where they cannot be (format version 2).

A real trace of tests/programs/receivers, its main thread's words edited by hand: a RECEIVER word
after a marked start, a mark on a static method's start, and a mark taken off (the receiver word
then missing). Each is an error with its own code, and the trace unedited has none.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from fuzz_mutations import read_chunks, write_stream
from jbgui.model import layout
from jbgui.model.check import ERROR, run_check
from jbgui.model.statics import load_statics
from jbgui.model.tracedir import TraceDir


@pytest.fixture(scope="module")
def receivers(record, default_jdk) -> Path:
    run = record("receivers", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def edited(trace: Path, tmp_path: Path, method: tuple[str, str], edit) -> set[str]:
    """The error codes of a copy of ``trace`` whose main stream's chunk holding the first start of
    ``method`` went through ``edit(words, i, statics)``, ``i`` the index of that start."""
    out = tmp_path / "trace"
    shutil.copytree(trace, out, ignore=shutil.ignore_patterns("analysis"))
    main = next(r["index"] for r in TraceDir(out).threads if r.get("name") == "main")
    path = out / "events" / f"T{main:06d}.jbt"
    head, chunks = read_chunks(path)
    st = load_statics(out)
    (mid,) = st.find_methods(*method)
    for k, (flags, first, words) in enumerate(chunks):
        w = words.astype(np.int64)
        hits = np.nonzero((w >> layout.TYPE_SHIFT == layout.TYPE_METHOD_START)
                          & ((w >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID == mid))[0]
        if len(hits):
            chunks[k] = (flags, first, edit(words.copy(), int(hits[0]), st))
            break
    else:
        raise AssertionError(f"no start of {method} on the main thread")
    write_stream(path, head, chunks)
    return {f.code for f in run_check(out, replay=False).findings if f.severity == ERROR}


def test_unedited_the_marks_are_sound(receivers, tmp_path):
    assert edited(receivers, tmp_path, ("Main$Base", "w"), lambda w, i, st: w) == set()


def test_a_receiver_word_after_a_marked_start(receivers, tmp_path):
    def edit(w, i, st):
        assert w[i] & layout.START_RECEIVER_OWN
        own = int(st.m_class[(int(w[i]) >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID])
        return np.insert(w, i + 1, np.uint32(layout.extended(layout.EXT_RECEIVER, own)))
    # Base.v: its first start is marked (Base.w's first has its word: the probe learns a class
    # from its first receiver on the slow path; tests/recorder/test_receiver_own.py).
    assert "receiver-misplaced" in edited(receivers, tmp_path, ("Main$Base", "v"), edit)


def test_a_mark_on_a_static_methods_start(receivers, tmp_path):
    def edit(w, i, st):
        w[i] |= np.uint32(layout.START_RECEIVER_OWN)
        return w
    assert "receiver-own-misplaced" in edited(receivers, tmp_path, ("Main", "call"), edit)


def test_a_mark_taken_off_leaves_the_receiver_missing(receivers, tmp_path):
    def edit(w, i, st):
        assert w[i] & layout.START_RECEIVER_OWN
        w[i] &= np.uint32(~layout.START_RECEIVER_OWN & 0xFFFFFFFF)
        return w
    assert "receiver-missing" in edited(receivers, tmp_path, ("Main$Base", "v"), edit)
