"""Export sizes estimated before writing, against the real exports of a recorded trace."""

from __future__ import annotations

import os

import pytest

from jbgui.model import export as X
from jbgui.model import export_estimate as EE
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def analysis(program_runs, default_jdk) -> Analysis:
    _untraced, run = program_runs("exception_paths", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return Analysis.open(run.trace_dir)


@pytest.mark.parametrize("fmt, options", [("chrome", {"max_events": None}), ("collapsed", {}),
                                          ("csv", {"table": "calls"}), ("csv", {"table": "blocks"})])
def test_the_estimate_is_within_a_factor_of_two_of_the_export(analysis, tmp_path, fmt, options):
    path = tmp_path / f"out.{fmt}"
    X.export(analysis, path, fmt, **options)
    actual = os.path.getsize(path)
    if fmt == "collapsed":
        # the export computed the calling-context tree: the estimate now uses it
        estimate = EE.estimate(analysis, fmt)
        assert not estimate.upper_bound
    else:
        estimate = EE.estimate(analysis, fmt, table=options.get("table", "calls"))
    assert 0.5 <= estimate.bytes / actual <= 2.0, (estimate, actual)


def test_a_time_range_a_thread_and_the_cap_shrink_the_estimate(analysis):
    whole = EE.estimate(analysis, "chrome")
    main = EE.estimate(analysis, "chrome", threads=["main"])
    assert 0 < main.bytes <= whole.bytes
    calls = analysis.thread("main").calls
    t0, t1 = analysis.thread("main").times([float(calls.first[0]), float(max(calls.last))]) / 1e6
    half = EE.estimate(analysis, "chrome", threads=["main"], start_ms=0.0, end_ms=(t0 + t1) / 2)
    assert 0 < half.rows < main.rows
    capped = EE.estimate(analysis, "chrome", max_events=100)
    assert capped.capped_rows == 100 and capped.written < whole.bytes / 10 and capped.bytes == whole.bytes
    assert "event cap keeps the first 100" in capped.describe()
    assert not capped.large and EE.human_bytes(13.2e9) == "13.2 GB"
