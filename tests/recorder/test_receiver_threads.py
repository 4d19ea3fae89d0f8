"""Receivers on three threads at once, of three classes, in the same inherited methods.

An entry probe writes a receiver that is not of its method's own class from a cache, or looks it
up on the slow path: first the method's two usual classes (Tracer.USUAL, one slot per method that
every thread reads, set by whichever threads' slow paths come first), then the class its thread
last looked up. tests/programs/receiver_threads has thread "ta" call the inherited Base.v and
Base.w (a leaf) on an A, thread "tb" on a B and "tc" on a C, 100,000 times each, at the same
time: two of the classes become the methods' usual ones, and the third thread's receivers never
match them. Every start must carry its own thread's class, none another's and none the own-class
mark (a Base is never a receiver)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model.statics import load_statics
from jbgui.model.tracedir import TraceDir

CALLS = 100_000


@pytest.fixture(scope="module")
def run(record, default_jdk):
    r = record("receiver_threads", default_jdk)
    assert r.exit_code == 0, r.describe()
    assert r.stdout.strip() == "15000450000"
    return r


def receivers(run, thread: str, cls: str, name: str) -> Counter:
    """How often each receiver class (None: marked START_RECEIVER_OWN; "-": no receiver word)
    follows a start of ``cls.name`` on ``thread``."""
    trace = TraceDir(run.trace_dir)
    st = load_statics(run.trace_dir)
    (method,) = st.find_methods(cls, name)
    index = next(r["index"] for r in trace.threads if r.get("name") == thread)
    w = trace.stream_events(index).astype(np.int64)
    starts = np.nonzero((w >> layout.TYPE_SHIFT == layout.TYPE_METHOD_START)
                        & ((w >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID == method))[0]
    seen: Counter = Counter()
    marked = (w[starts] & layout.START_RECEIVER_OWN) != 0
    seen[None] += int(marked.sum())
    nxt = w[starts[~marked] + 1]
    is_receiver = (nxt >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED) & ((nxt >> layout.SUBTYPE_SHIFT) & 7 == layout.EXT_RECEIVER)
    seen["-"] += int((~is_receiver).sum())
    for class_id, n in zip(*np.unique(nxt[is_receiver] & layout.VALUE_MASK, return_counts=True)):
        seen[st.class_name_of_id(int(class_id))] += int(n)
    return +seen


@pytest.mark.parametrize("name", ["v", "w"])
@pytest.mark.parametrize("thread, cls", [("ta", "Main$A"), ("tb", "Main$B"), ("tc", "Main$C")])
def test_every_start_names_its_own_threads_receiver(run, thread, cls, name):
    assert receivers(run, thread, "Main$Base", name) == {cls: CALLS}
