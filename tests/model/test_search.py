"""The explorer's one search on a trace the agent records: which methods match and how many calls
they made, against the statics and the call table counted the slow way."""

from __future__ import annotations

import re

import numpy as np
import pytest

from jbgui.model import search as SE
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def grid(program_runs, default_jdk) -> Analysis:
    _untraced, run = program_runs("call_grid", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.mark.parametrize("text", [r"Main\.chain", "^java\\.lang\\.String\\.", "PRINTLN", r"\(I\)V$"])
def test_matches_and_their_calls_are_those_of_the_names(grid, text):
    pattern, error = SE.compile_search(text)
    assert error == "" and pattern is not None
    matches = SE.method_matches(grid.statics, pattern)
    expected = {m for m in range(grid.statics.max_method_id + 1)
                if grid.statics.method_qualified(m) and re.search(text, grid.statics.method_qualified(m), re.I)}
    assert set(np.flatnonzero(matches).tolist()) == expected and expected
    calls = sum(int(np.isin(np.asarray(t.calls.method), list(expected)).sum()) for t in grid.threads)
    assert SE.matching_calls(grid, matches) == calls
    if text == r"Main\.chain":
        assert calls == 750      # 30 chains of 25 calls


def test_an_invalid_expression_is_an_error_and_matches_nothing(grid):
    pattern, error = SE.compile_search("chain(")
    assert pattern is None and error.startswith("not a regular expression")
    assert not SE.method_matches(grid.statics, pattern).any()
    assert SE.compile_search("") == (None, "")
