"""Leaf methods: one probe at entry records the start and the end (jbgui.instr.LeafMethods).

The trace holds the words the full probes would have written, in the same order, so every reader
reads it as before; these tests hold that on tests/programs/leaves at both levels: every call of a
leaf has its start and its end, leaves' receivers are read back site by site (own class and
inherited, alternating, so both the mark and the one-entry cache serve them), the method that may
throw is no leaf and its exception exit is recorded, and the trace is sound.
"""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model import metrics
from jbgui.model.analysis import Analysis
from jbgui.model.check import ERROR, FATAL, WARNING, run_check

ROUNDS = 200_000


@pytest.fixture(scope="module", params=["block", "method"])
def level(request):
    return request.param


@pytest.fixture(scope="module")
def run(level, record, default_jdk):
    r = record("leaves", default_jdk, level=level)
    assert r.exit_code == 0, r.describe()
    assert r.stdout.strip() == "3700000 1 50001"
    return r


def test_every_leaf_call_has_its_start_and_end(run, facts):
    f = facts(run.trace_dir)
    main = f.thread("main")
    expected = {("Main$Cell", "get"): ROUNDS + 1, ("Main$Cell", "set"): ROUNDS, ("Main", "square"): ROUNDS,
                ("Main$Cell", "positive"): ROUNDS, ("Main", "ratio"): 1}
    for (cls, name), calls in expected.items():
        m = f.method_id(cls, name)
        assert f.starts(m, main) == calls, (cls, name)
        assert f.ends(m, main) + f.exception_exits(m, main) == calls, (cls, name)
    ratio = f.method_id("Main", "ratio")
    assert f.exception_exits(ratio, main) == 1
    assert f.throwable_names(main, ratio) == ["java/lang/ArithmeticException"]


def test_replayed_calls_and_receivers(run, level):
    a = Analysis.open(run.trace_dir)
    calls = metrics.per_method(a)["calls"]
    st = a.statics
    for cls, name, n in (("Main$Cell", "get", ROUNDS + 1), ("Main", "square", ROUNDS), ("Main", "ratio", 1)):
        (m,) = st.find_methods(cls, name)
        assert calls[m] == n, (cls, name)
    if level == "method":
        return  # call sites are known from blocks: the receivers per site need them
    sites = [s for s in metrics.polymorphism(a) if s["caller"].startswith("Main.main")]
    assert len(sites) == 3  # get, set, positive
    for s in sites:
        assert s["calls"] == ROUNDS
        assert {r["class"]: r["calls"] for r in s["receivers"]} == {"Main$Cell": ROUNDS // 2, "Main$Tagged": ROUNDS // 2}
        assert s["type_changes"] == ROUNDS - 1


def test_receivers_on_disk(run, facts):
    """Half of get's receivers are of its own class (a mark in the start word), half Tagged (a word)."""
    f = facts(run.trace_dir)
    main = f.thread("main")
    get = f.method_id("Main$Cell", "get")
    w = f.events(main).astype(np.int64)
    starts = np.nonzero(f.unmarked(main) == layout.method_start(get))[0]
    own = (w[starts] & layout.START_RECEIVER_OWN) != 0
    after = w[starts + 1]
    receiver = (after >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED) & ((after >> layout.SUBTYPE_SHIFT) & 7 == layout.EXT_RECEIVER)
    assert not np.any(own & receiver) and np.all(own | receiver)
    named = [f.class_name(int(c)) for c in after[receiver] & layout.VALUE_MASK]
    # A receiver of the own class gets a word instead of the mark where the buffer was full (the slow path).
    assert int(own.sum()) + named.count("Main$Cell") == ROUNDS // 2 + 1
    assert named.count("Main$Tagged") == ROUNDS // 2
    assert int(own.sum()) > ROUNDS // 2 - 100


def test_the_trace_is_sound(run):
    report = run_check(run.trace_dir)
    bad = [f.format() for f in report.findings if f.severity in (ERROR, WARNING, FATAL)]
    assert not bad, "\n".join(bad)
