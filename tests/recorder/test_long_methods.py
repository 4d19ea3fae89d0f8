"""Block probes that do not test for a full buffer (jbgui.instr.ProbeInserter.checkedBlocks).

Most block probes only store their event; the buffer keeps a slack past its hand-off limit for
the events written between two tests. The program runs a method with more blocks than
EventLayout.UNCHECKED_RUN_MAX (each of its blocks tests) 5,000 times and a method just under it
(none of its blocks tests) 300 calls deep, 200 times: 14 M events that fill the buffer hundreds
of times. With big's blocks left untested, its runs of up to 2,001 events overflow the slack and
the recorder reports 5 M events lost (seen when the limit was raised for a try). Every event must reach the trace: no loss reported, and the replayed block counts are
the program's own, computed here from its source.
"""

from __future__ import annotations

import json

import numpy as np

from jbgui.model.analysis import Analysis

BIG_CALLS = 5_000
MID_ROUNDS = 200
MID_DEPTH = 300


def expected_counts() -> tuple[int, int]:
    """Blocks executed by all calls of big and of mid. big(x): 1,000 ``if (x > K)`` tests, the
    bodies for K < x, and the return. mid(x, depth): 120 tests, their bodies, the depth test, the
    recursive call's block unless depth is 0, and the return."""
    big = sum(1000 + min(i % 1001, 1000) + 1 for i in range(BIG_CALLS))
    mid = 0
    for i in range(MID_ROUNDS):
        x = i * 7 % 121
        for depth in range(MID_DEPTH, -1, -1):
            mid += 120 + min(x, 120) + 1 + (1 if depth > 0 else 0) + 1
    return big, mid


def test_every_event_of_long_block_runs_reaches_the_trace(record, default_jdk):
    run = record("long_methods", default_jdk)
    assert run.exit_code == 0, run.describe()
    assert run.stdout.strip() == "sum 840042795"
    counts = json.loads((run.trace_dir / "trace.json").read_text())["counts"]
    assert counts["lost_events"] == 0
    assert counts["events"] > 13_000_000
    a = Analysis.open(run.trace_dir)
    executed = []
    for name in ("big", "mid"):
        (method,) = a.statics.find_methods("Main", name)
        blocks = a.statics.method_blocks(method)
        executed.append(int(np.asarray(a.block_counts[blocks.start:blocks.stop], np.int64).sum()))
        assert int(a.block_counts[blocks.start]) == (BIG_CALLS if name == "big" else MID_ROUNDS * (MID_DEPTH + 1))
    assert tuple(executed) == expected_counts()
