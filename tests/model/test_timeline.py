"""The timeline model on real traces: queries return exactly the calls of a range, and the merged
levels draw the same pixels as the calls themselves."""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model.analysis import Analysis
from jbgui.model.timeline import TimelineModel


@pytest.fixture(scope="module")
def model(record, default_jdk) -> TimelineModel:
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    return TimelineModel(Analysis.open(run.trace_dir))


def raster(start, end, depth, t0, t1, width, depths):
    """Pixel columns covered per depth, a call at least one pixel wide (as the view draws)."""
    image = np.zeros((depths, width), bool)
    scale = width / (t1 - t0)
    left = np.floor((np.asarray(start) - t0) * scale).astype(np.int64)
    right = np.maximum(np.ceil((np.asarray(end) - t0) * scale).astype(np.int64), left + 1)
    for d, a, b in zip(np.asarray(depth).tolist(), left.tolist(), right.tolist()):
        a, b = max(a, 0), min(b, width)
        if a < b and d < depths:
            image[d, a:b] = True
    return image


def test_the_model_has_a_clock_and_a_lane_per_thread(model):
    assert model.has_clock
    assert {tl.thread.name for tl in model.threads} >= {"main", "worker-0", "producer", "consumer"}
    for tl in model.threads:
        if tl.rows:
            assert np.all(tl.end >= tl.start)
            parents = np.asarray(tl.thread.calls.parent)
            inner = parents >= 0
            # a call lies within its caller
            assert np.all(tl.start[inner] >= tl.start[parents[inner]])
            assert np.all(tl.end[inner] <= tl.end[parents[inner]])


def test_raw_queries_return_exactly_the_overlapping_calls(model):
    tl = max(model.threads, key=lambda t: t.rows)
    rng = np.random.default_rng(7)
    for _ in range(20):
        a, b = np.sort(rng.uniform(tl.t_min, tl.t_max, 2))
        got = tl.query(a, b, 1e-12)  # finer than any level: the calls themselves
        expected = np.flatnonzero((tl.start < b) & (tl.end > a))
        assert sorted(got.row.tolist()) == expected.tolist()
        assert np.all(got.count == 1)


def test_merged_levels_cover_the_same_pixels(model):
    tl = max(model.threads, key=lambda t: t.rows)
    assert tl.levels, "a thread of this size has merged levels"
    width = 1200
    rng = np.random.default_rng(11)
    spans = [(tl.t_min, tl.t_max)] + [tuple(np.sort(rng.uniform(tl.t_min, tl.t_max, 2))) for _ in range(8)]
    depths = tl.max_depth + 1
    for a, b in spans:
        got = tl.query(a, b, (b - a) / width)
        inside = (tl.start < b) & (tl.end > a)
        want = raster(tl.start[inside], tl.end[inside], tl.depth[inside], a, b, width, depths)
        have = raster(got.start, got.end, got.depth, a, b, width, depths)
        assert np.array_equal(want, have), f"range {a}..{b}: {np.argwhere(want != have)[:5]}"
        # every call of the range is in one rectangle (a merged run at an edge may reach beyond it)
        assert int(got.count.sum()) >= int(inside.sum())
        assert len(got) <= inside.sum()
    whole = tl.query(tl.t_min, tl.t_max, (tl.t_max - tl.t_min) / width)
    assert int(whole.count.sum()) == tl.rows


def test_whole_run_is_bounded_by_pixels_not_calls(model):
    tl = max(model.threads, key=lambda t: t.rows)
    width = 800
    got = tl.query(tl.t_min, tl.t_max, (tl.t_max - tl.t_min) / width)
    assert len(got) < (tl.max_depth + 1) * width
    assert len(got) < tl.rows


def test_call_at_finds_the_call_running_at_a_time(model):
    tl = max(model.threads, key=lambda t: t.rows)
    rng = np.random.default_rng(3)
    for row in rng.choice(tl.rows, 50, replace=False).tolist():
        t = (tl.start[row] + tl.end[row]) / 2
        assert tl.call_at(t, int(tl.depth[row])) == row
    assert tl.call_at(tl.t_max + 1e9, 0) == -1
    assert tl.call_at(tl.t_min, tl.max_depth + 5) == -1


def test_depth_window(model):
    tl = max(model.threads, key=lambda t: t.rows)
    got = tl.query(tl.t_min, tl.t_max, 1e-12, depth_lo=2, depth_hi=3)
    assert set(got.depth.tolist()) <= {2, 3}
    assert len(got) == int(((tl.depth == 2) | (tl.depth == 3)).sum())


def test_exception_marks_and_class_loads(record, default_jdk):
    run = record("exception_paths", default_jdk)
    m = TimelineModel(Analysis.open(run.trace_dir))
    main = next(tl for tl in m.threads if tl.thread.name == "main")
    marks = m.exception_marks(main)
    assert len(marks["throw_t"]) == len(main.thread.exceptions) > 0
    assert np.all(marks["catch_t"][marks["catch_depth"] >= 0] >= marks["throw_t"][marks["catch_depth"] >= 0])
    loads = m.class_load_times(main)
    assert len(loads) == len(main.thread.class_loads) > 0
    assert np.all((loads >= m.t_min - 1) & (loads <= m.t_max + 1))
