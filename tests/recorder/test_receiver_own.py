"""Receivers of the method's own class (format version 2, EventLayout.START_RECEIVER_OWN).

The entry probe of an instance method writes no RECEIVER word when the receiver's class is the
method's own: it marks the start word, and readers take the method's class from static.xml
(docs/trace-format.md, "Receivers of the method's own class"). tests/programs/receivers calls
Base.w on a Base, a Sub (which inherits it), an Other, a Sub and a Base. The probe learns a
class's methods the first time a receiver of that class takes its slow path (Tracer.ownerSeen), so
the very first call on a Base has a RECEIVER word; from then on the Base calls' starts are marked
and have no RECEIVER word, and the others have one. Read back, every call has its receiver, and the
metrics of the two polymorphic sites are those of the calls.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from jbgui.model import layout, metrics
from jbgui.model.analysis import Analysis
from jbgui.model.check import ERROR, FATAL, WARNING, run_check
from jbgui.model.statics import load_statics
from jbgui.model.tracedir import TraceDir


@pytest.fixture(scope="module")
def run(record, default_jdk):
    r = record("receivers", default_jdk)
    assert r.exit_code == 0, r.describe()
    assert r.stdout.strip() == "56"   # 11 + 11 + 12 + 11 + 11
    return r


def starts_of(run, cls: str, name: str) -> list[tuple[bool, str | None]]:
    """Per start of ``cls.name`` on the main thread, in order: whether it is marked
    START_RECEIVER_OWN, and the class its RECEIVER word names (None without one)."""
    trace = TraceDir(run.trace_dir)
    st = load_statics(run.trace_dir)
    (method,) = st.find_methods(cls, name)
    main = next(r["index"] for r in trace.threads if r.get("name") == "main")
    w = trace.stream_events(main).astype(np.int64)
    out = []
    for i in np.nonzero((w >> layout.TYPE_SHIFT == layout.TYPE_METHOD_START)
                        & ((w >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID == method))[0].tolist():
        nxt = int(w[i + 1])
        receiver = None
        if nxt >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED and (nxt >> layout.SUBTYPE_SHIFT) & 7 == layout.EXT_RECEIVER:
            receiver = st.class_name_of_id(nxt & layout.VALUE_MASK)
        out.append((bool(w[i] & layout.START_RECEIVER_OWN), receiver))
    return out


def test_own_class_receivers_are_marks_and_the_others_words(run):
    assert run.trace_json()["format_version"] == layout.FORMAT_VERSION == 4
    assert starts_of(run, "Main$Base", "w") == [
        (False, "Main$Base"), (False, "Main$Sub"), (False, "Main$Other"), (False, "Main$Sub"), (True, None)]
    assert starts_of(run, "Main$Base", "v") == [(True, None), (False, "Main$Sub"), (False, "Main$Sub"), (True, None)]
    assert starts_of(run, "Main$Other", "v") == [(True, None)]
    # Static methods and constructors have no receiver, and no mark.
    assert starts_of(run, "Main", "call") == [(False, None)] * 5


def test_every_call_has_its_receiver_read_back(run):
    a = Analysis.open(run.trace_dir)
    for caller in ("Main.call", "Main$Base.w"):
        (site,) = [s for s in metrics.polymorphism(a) if s["caller"].startswith(caller)]
        assert site["calls"] == 5
        assert {r["class"]: r["calls"] for r in site["receivers"]} == {"Main$Base": 2, "Main$Sub": 2, "Main$Other": 1}
        assert site["type_changes"] == 4


def test_the_trace_is_sound(run):
    report = run_check(run.trace_dir)
    bad = [f.format() for f in report.findings if f.severity in (ERROR, WARNING, FATAL)]
    assert not bad, "\n".join(bad)


def test_dump_shows_the_receiver_a_start_stands_for(run):
    (method,) = load_statics(run.trace_dir).find_methods("Main$Base", "w")

    def starts_of_w(*flags):
        out = subprocess.run([sys.executable, "-m", "jbgui.cli", "dump", *flags, "--thread", "main", str(run.trace_dir)],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return [f[4] for f in (line.split("\t") for line in out.stdout.splitlines())
                if f[3] == "START" and f[4].split(" ")[0] == f"m={method}"]

    assert [f.endswith(" receiver=Main$Base") for f in starts_of_w("-v")] == [False, False, False, False, True]
    assert [f.endswith(" receiver=own") for f in starts_of_w()] == [False, False, False, False, True]
