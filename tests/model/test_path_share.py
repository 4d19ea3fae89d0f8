"""benchmarks/path_share.py, the estimate of what path ends would spare, on a recorded program
whose methods have known shapes and paths (tests/programs/path_shapes)."""

from __future__ import annotations

import sys
from pathlib import Path

from jbgui.model.analysis import Analysis

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import path_share  # noqa: E402


def test_path_rows_count_the_qualifying_methods_exactly(record, default_jdk):
    run = record("path_shapes", default_jdk, instructions=True)
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() == "total 229270 made 5500"
    total, rows = path_share.path_rows(Analysis.open(run.trace_dir))
    mine = {r.method.split("(")[0]: r for r in rows if r.method.startswith("Main.")}
    # clamp(x), x = i % 20 - 5: a negative x runs one block after the first (5 of 20 values), the
    # others two; 10 rounds of 1000 calls.
    assert mine["Main.clamp"].calls == 10_000
    assert mine["Main.clamp"].events == 10 * 50 * (5 * 1 + 15 * 2)
    assert mine["Main.clamp"].spared == mine["Main.clamp"].events
    assert mine["Main.clamp"].made_calls == 0
    # pick(x): one block after the first per call; x > 3 (11 of 20 values) calls twice.
    assert mine["Main.pick"].events == 10_000
    assert mine["Main.pick"].made_calls == 10 * 50 * 11
    assert mine["Main.pick"].spared == 10_000 - 5_500
    # A loop, an allocation, a single block: none qualifies.
    assert not {"Main.count", "Main.make", "Main.twice", "Main.main"} & set(mine)
    assert total > sum(r.spared for r in rows) > 0


def test_a_trace_without_listings_or_no_trace_is_a_clear_error(record, default_jdk, tmp_path, capsys):
    run = record("path_shapes", default_jdk)
    assert path_share.main([str(run.trace_dir)]) == 2
    assert "recorded without instruction listings" in capsys.readouterr().err
    assert path_share.main([str(tmp_path / "missing")]) == 2
    assert "no such trace directory" in capsys.readouterr().err
