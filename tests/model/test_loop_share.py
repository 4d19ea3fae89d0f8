"""benchmarks/loop_share.py, the estimate of what loop events would spare, on a recorded program
whose loops have known shapes and trip counts (tests/programs/loop_shapes)."""

from __future__ import annotations

import sys
from pathlib import Path

from jbgui.model.analysis import Analysis

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import loop_share  # noqa: E402


def test_loop_rows_count_the_qualifying_loops_exactly(record, default_jdk):
    run = record("loop_shapes", default_jdk, instructions=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() == "total 3333329980"  # 10 x (499500 + 332833500 - 2)
    total, rows = loop_share.loop_rows(Analysis.open(run.trace_dir))
    mine = {r.method.split("(")[0]: r for r in rows if r.method.startswith("Main.") and r.method != "Main.main([Ljava/lang/String;)V"}
    # sum: 10 calls, each entering its loop once: the header's 1001 events and the body's 1000,
    # less the two words of the loop's exit.
    assert mine["Main.sum"].entries == 10
    assert mine["Main.sum"].events == 10 * 2001
    assert mine["Main.sum"].spared == 10 * 1999
    assert not mine["Main.sum"].with_leaves
    # squares: the body's block calls square (start, implied block, end) 1000 times a call.
    assert mine["Main.squares"].events == 10 * (2001 + 3 * 1000)
    assert mine["Main.squares"].spared == 10 * (5001 - 2)
    assert mine["Main.squares"].with_leaves
    # signs: two paths through the body.
    assert "Main.signs" not in mine
    assert total > sum(r.spared for r in rows) > 0


def test_a_trace_without_listings_or_no_trace_is_a_clear_error(record, default_jdk, tmp_path, capsys):
    run = record("loop_shapes", default_jdk)
    assert loop_share.main([str(run.trace_dir)]) == 2
    assert "recorded without instruction listings" in capsys.readouterr().err
    assert loop_share.main([str(tmp_path / "missing")]) == 2
    assert "no such trace directory" in capsys.readouterr().err
