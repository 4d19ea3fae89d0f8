"""First blocks implied by their method's start (agent option ``elide``, on by default;
jbgui.instr.BlockElision).

A method's first block, when nothing jumps back to it, gets no probe: the entry probe marks the
start word, the chunk stores that word for both events (filter bit FILTER_ENTRY_BLOCKS) and the
reader writes the block's word in after it (and after the receiver word). The writer maps the
positions the threads report (clock samples, event counts) to events. The trace read back must be
the one a probe in that block records: tests/programs/sleeps (100,000 calls of a one-block method,
a 200 ms sleep between two loops of them, two worker threads) recorded with ``elide=on`` and
``elide=off`` gives the same words for the program's own methods, the clock stamps around the sleep
at the same event, the same event counts per thread, and the same replayed block counts.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from jbgui.model import layout
from jbgui.model.analysis import Analysis
from jbgui.model.tracedir import TraceDir
from trace_words import symbols


def facts(run) -> dict:
    trace = TraceDir(run.trace_dir)
    main = next(r["index"] for r in trace.threads if r.get("name") == "main")
    text = symbols(run.trace_dir, trace.stream_events(main))
    own = np.array([s.split(" ", 2)[1].startswith("Main.") if not s.startswith("ext") else False for s in text])
    clock = trace.clock()
    stamps = clock[(clock["stream"] == main) & ((clock["flags"] & layout.CLOCK_FLAG_BLOCKING) != 0)]
    log = (run.trace_dir / "agent.log").read_text()
    inserted = int(re.search(r"(\d+) of them first blocks implied by their method's start", log).group(1))
    ends = {r["name"]: r["events"] for r in trace.threads if r.get("name") in ("main", "twin")}
    return {
        "own": text[own].tolist(),
        # Per stamp: the word just before it, and how many of the program's own words came before;
        # up to the end of the second loop (the workers' joins wait only if they still run).
        "stamps": [s for s in ((text[p - 1], int(own[:p].sum())) for p in stamps["position"].tolist())
                   if s[1] < 400_000],
        "events": len(text),
        "ends": ends,
        "inserted": inserted,
    }


@pytest.fixture(scope="module")
def both(record, default_jdk):
    runs = {}
    for elide in (True, False):
        run = record("sleeps", default_jdk, elide=elide)
        assert run.exit_code == 0, run.describe()
        runs[elide] = run
    return runs


def test_the_first_blocks_the_probes_left_out_are_read_back(both):
    on, off = facts(both[True]), facts(both[False])
    assert both[True].trace_json()["agent"]["options"]["elide"] is True
    assert both[False].trace_json()["agent"]["options"]["elide"] is False
    assert off["inserted"] == 0
    # At least one per call of Main.step (a single block that nothing jumps to).
    assert on["inserted"] > 103_000
    assert len(on["own"]) > 400_000
    assert on["own"] == off["own"]
    assert on["ends"]["main"] == on["events"]
    assert off["ends"]["main"] == off["events"]


def test_clock_stamps_stay_at_their_event(both):
    on, off = facts(both[True]), facts(both[False])
    assert len(on["stamps"]) >= 2
    assert on["stamps"] == off["stamps"]
    # The first stamps after the program's own code began are the sleep's, called from Main.pause,
    # whose only block (no probe: written by the writer) ran before them.
    own_before = next(n for _, n in on["stamps"] if n > 0)
    assert on["own"][own_before - 2:own_before] == ["start Main.pause()V", "block Main.pause()V 0"]


def test_replayed_counts_are_the_same(both):
    counts = []
    for elide in (True, False):
        a = Analysis.open(both[elide].trace_dir)
        per_method = {}
        for name in ("work", "step", "pause", "main"):
            (method,) = a.statics.find_methods("Main", name)
            blocks = a.statics.method_blocks(method)
            per_method[name] = np.asarray(a.block_counts[blocks.start:blocks.stop], np.int64).tolist()
        counts.append(per_method)
    assert counts[0] == counts[1]
    assert counts[0]["step"] == [100_000 + 1_000 + 2_000]
