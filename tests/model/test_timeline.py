"""The timeline model on real traces: queries return exactly the calls of a range, and the merged
levels draw the same pixels as the calls themselves."""

from __future__ import annotations

import numpy as np
import pytest

from jbgui.model.analysis import Analysis
from jbgui.model.timeline import TimelineModel


@pytest.fixture(scope="module", params=["windows", "levels"])
def model(request, record, default_jdk) -> TimelineModel:
    """The default model (a thread this small is one window), and one that keeps levels of detail
    for anything above 64 calls, so that the same checks walk the levels' tables and the windows
    between them."""
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    if request.param == "windows":
        return TimelineModel(Analysis.open(run.trace_dir))
    m = TimelineModel(Analysis.open(run.trace_dir), window_rows=64)
    assert max(len(tl.limits) for tl in m.threads) >= 2
    return m


def raster(start, end, depth, t0, t1, width, depths, clamp=False):
    """Pixel columns covered per depth, a call at least one pixel wide (as the view draws);
    ``clamp``: calls just outside the range count in the edge columns."""
    image = np.zeros((depths, width), bool)
    scale = width / (t1 - t0)
    left = np.floor((np.asarray(start) - t0) * scale).astype(np.int64)
    right = np.maximum(np.ceil((np.asarray(end) - t0) * scale).astype(np.int64), left + 1)
    if clamp:
        left = np.clip(left, 0, width - 1)
        right = np.clip(right, 1, width)
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
            start, end = tl.spans()
            assert np.all(end > start)
            parents = np.asarray(tl.thread.calls.parent)
            inner = parents >= 0
            # a call lies within its caller
            assert np.all(start[inner] >= start[parents[inner]])
            assert np.all(end[inner] <= end[parents[inner]])
            assert tl.max_depth == int(np.asarray(tl.depth).max())
            assert tl.t_min == start.min() and tl.t_max == end.max()


def test_raw_queries_return_exactly_the_overlapping_calls(model):
    tl = max(model.threads, key=lambda t: t.rows)
    rng = np.random.default_rng(7)
    for _ in range(20):
        a, b = np.sort(rng.uniform(tl.t_min, tl.t_max, 2))
        got = tl.query(a, b, 1e-6)  # far finer than any call: the calls themselves
        start, end = tl.spans()
        overlapping = (start < b) & (end > a)
        # Calls of no duration (the clock stood still between two samples) share their x with a
        # sibling drawn in their place. A call without events of its own (into native code)
        # spans the event it was made at, where its next sibling starts too: that sibling, or
        # another such call, covers it at its depth, and the walk returns the sibling (the last
        # call started there, as hovering does). Every other call is returned itself.
        expected = set(np.flatnonzero(overlapping & (end - start > 1e-6)).tolist())
        rows = got.row.tolist()
        assert len(rows) == len(set(rows))
        got_depth = np.asarray(tl.depth)[got.row]
        got_start, got_end = start[got.row], end[got.row]

        def covered(r):
            return bool(np.any((got_depth == tl.depth[r]) & (got_start <= start[r]) & (got_end >= end[r])))

        missing = [r for r in sorted(expected - set(rows)) if not covered(r)]
        assert not missing, missing[:10]
        hidden = np.array(sorted(expected - set(rows)), np.int64)
        assert np.array_equal(tl.calls.values_at("first", hidden), tl.calls.values_at("last", hidden)), hidden[:10]
        assert overlapping[got.row].all()


def test_merged_subtrees_cover_the_same_pixels(model):
    """Drawing the query's rectangles gives the picture of drawing every call: the same pixels,
    but where a subtree narrower than a pixel straddles two columns (its spine covers both)."""
    tl = max(model.threads, key=lambda t: t.rows)
    width = 1200
    rng = np.random.default_rng(11)
    spans = [(tl.t_min, tl.t_max)] + [tuple(np.sort(rng.uniform(tl.t_min, tl.t_max, 2))) for _ in range(8)]
    depths = tl.max_depth + 1
    start, end = tl.spans()
    for a, b in spans:
        got = tl.query(a, b, (b - a) / width)
        inside = (start < b) & (end > a)
        want = raster(start[inside], end[inside], tl.depth[inside], a, b, width, depths)
        spread = np.repeat(np.arange(len(got)), got.depth_end - got.depth + 1)
        rows_depth = np.concatenate([np.arange(d0, d1 + 1) for d0, d1 in zip(got.depth.tolist(),
                                                                                got.depth_end.tolist())]) \
            if len(got) else np.zeros(0, np.int64)
        have = raster(got.start[spread], got.end[spread], rows_depth, a, b, width, depths)
        assert not (want & ~have).any(), f"range {a}..{b}: calls not drawn at {np.argwhere(want & ~have)[:5]}"
        # a spine may reach one column beyond its calls (a subtree straddling two columns),
        # also just beyond the range
        near = (start < b + (b - a) / width) & (end > a - (b - a) / width)
        want_near = raster(start[near], end[near], tl.depth[near], a, b, width, depths, clamp=True)
        shifted = np.zeros_like(want_near)
        shifted[:, 1:] |= want_near[:, :-1]
        shifted[:, :-1] |= want_near[:, 1:]
        extra = have & ~(want_near | shifted)
        assert not extra.any(), f"range {a}..{b}: drawn where no call is, at {np.argwhere(extra)[:5]}"


def test_whole_run_is_bounded_by_pixels_not_calls(model):
    tl = max(model.threads, key=lambda t: t.rows)
    width = 800
    got = tl.query(tl.t_min, tl.t_max, (tl.t_max - tl.t_min) / width)
    if len(tl.limits):      # the whole run is drawn from the coarsest level, not the calls
        from jbgui.model.timeline_lod import level_for
        assert level_for(tl.limits, (tl.t_max - tl.t_min) / width) == 0
        assert len(tl._level(0)) < tl.rows / 4
    assert len(got) <= 2 * (tl.max_depth + 1) * width
    assert len(got) < tl.rows / 4


def test_call_at_finds_the_call_running_at_a_time(model):
    tl = max(model.threads, key=lambda t: t.rows)
    rng = np.random.default_rng(3)
    for row in rng.choice(tl.rows, 200, replace=False).tolist():
        s, e = tl.span(row)
        found = tl.call_at((s + e) / 2, int(tl.depth[row]))
        # the call itself, or a neighbour at its depth sharing the event where one ends and the
        # other begins (a native call is opened and closed at one event)
        assert found == row or (found >= 0 and tl.depth[found] == tl.depth[row]
                                and tl.span(found)[0] <= (s + e) / 2 <= tl.span(found)[1]), (row, found)
    assert tl.call_at(tl.t_max + 1e9, 0) == -1
    assert tl.call_at(tl.t_min, tl.max_depth + 5) == -1


def test_depth_window(model):
    tl = max(model.threads, key=lambda t: t.rows)
    got = tl.query(tl.t_min, tl.t_max, 1e-6, depth_lo=2, depth_hi=3)
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


def _scoped_depths(method: np.ndarray, parent: np.ndarray, mine: np.ndarray):
    """Only my code the slow way: which rows show, and each row's depth under the scope (a hidden
    row's: that of the call that stands for it)."""
    n = len(method)
    shown = np.zeros(n, np.bool_)
    near = np.zeros(n, np.int64)
    for r in range(n):
        p = int(parent[r])
        shown[r] = p < 0 or bool(mine[method[r]]) or bool(mine[method[p]])
        base = -1 if p < 0 else near[p]
        near[r] = base + 1 if shown[r] else base
    return shown, near


@pytest.fixture(scope="module")
def aggregate_trace(record, default_jdk):
    run = record("aggregate", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.mark.parametrize("kind", ["windows", "levels"])
@pytest.mark.parametrize("masking", ["scope", "random"])
def test_only_my_code_draws_the_shown_calls_at_their_depth_under_the_scope(aggregate_trace, kind, masking):
    """Under only my code the timeline draws exactly the shown calls (mine, top-level, or called by
    my code), each one level below its nearest shown ancestor: every call wide enough to be drawn
    on its own, at the depth the definition gives, zoomed in (windows of rows) and zoomed out
    (levels of detail, forced on this small program); single rows (the selection, exception marks)
    at the depth of the call that stands for them; and off again, the old drawing."""
    from jbgui.model.scope import Scope

    a = Analysis.open(aggregate_trace)
    m = TimelineModel(a, use_clock=False, window_rows=64 if kind == "levels" else 1 << 20)
    mine = Scope.of_trace(a).method_mask
    if masking == "random":
        mine = np.random.default_rng(3).random(len(mine)) < 0.3
    tl = m.thread_timeline(a.thread("main").index)
    calls = tl.calls
    method, parent = np.asarray(calls.method, np.int64), np.asarray(calls.parent, np.int64)
    first, last = np.asarray(calls.first, np.float64), np.asarray(calls.last, np.float64) + 1.0
    shown, near = _scoped_depths(method, parent, mine)
    assert shown.any() and not shown.all()
    before = tl.query(tl.t_min, tl.t_max, (tl.t_max - tl.t_min) / 2000)
    m.set_scope(mine)
    span = tl.t_max - tl.t_min
    ranges = [(tl.t_min, tl.t_max)] + [(tl.t_min + span * f, tl.t_min + span * (f + w))
                                      for f, w in ((0.1, 0.05), (0.5, 0.01), (0.8, 0.2), (0.33, 0.002))]
    checked = 0
    for t0, t1 in ranges:
        for px in ((t1 - t0) / 2000, (t1 - t0) / 200, 0.01):
            rects = tl.query(t0, t1, px)
            alone = ~rects.merged
            rows = rects.row[alone]
            assert shown[rows].all(), (t0, t1, px)
            assert np.array_equal(rects.depth[alone], near[rows]), (t0, t1, px)
            wide = np.flatnonzero(shown & (last - first >= 2 * px) & (first < t1) & (last > t0))
            assert set(wide.tolist()) <= set(rows.tolist()), (t0, t1, px)
            checked += len(rows)
    assert checked > 100
    stand_in = [int(r) for r in np.flatnonzero(~shown)[::7]] + [int(r) for r in np.flatnonzero(shown)[::11]]
    assert [tl.depth_of(r) for r in stand_in] == [int(near[r]) for r in stand_in]
    m.set_scope(None)
    again = tl.query(tl.t_min, tl.t_max, (tl.t_max - tl.t_min) / 2000)
    assert np.array_equal(again.row, before.row) and np.array_equal(again.depth, before.depth)


def test_block_times_equal_numpy_interp_to_the_last_bit(model):
    """The levels' pass (and the calling-context tree's) times a block of calls by walking the clock samples (starts never
    decrease, ends are found by galloping from the start): the same values as ``np.interp``,
    bit for bit, on the real threads' calls and clocks and on synthetic clocks with calls before,
    between, on and after the samples."""
    from jbgui.model import clock_times as L

    checked = 0
    for tl in model.threads:
        first, last = np.asarray(tl.calls.first), np.asarray(tl.calls.last)
        if len(tl.pos) < 2 or not len(first):
            continue
        a, b = L.block_times(first, last, tl.pos, tl.nanos)
        assert np.array_equal(a, np.interp(first.astype(np.float64), tl.pos, tl.nanos))
        assert np.array_equal(b, np.interp(last.astype(np.float64) + 1.0, tl.pos, tl.nanos))
        checked += 1
    assert checked >= 1
    rng = np.random.default_rng(7)
    for _ in range(300):
        m = int(rng.integers(2, 40))
        pos = (np.cumsum(rng.integers(1, 500, m)) - int(rng.integers(0, 300))).astype(np.float64)
        nanos = np.cumsum(rng.random(m) * 1e6)
        n = int(rng.integers(1, 300))
        first = np.sort(rng.integers(-100, int(pos[-1]) + 200, n)).astype(np.int32)
        last = (first + rng.geometric(0.02, n) - 1).astype(np.int32)
        last[:: max(n // 5, 1)] = int(pos[-1]) + 50     # some calls end after the last sample
        last = np.maximum(last, first)
        if rng.random() < 0.3:          # a step: two points at one position (a blocking call's stamps)
            k = int(rng.integers(1, m))
            pos[k] = pos[k - 1]
        for plus in (1.0, 0.0):     # the timeline's ends (one past the last event); the trees' spans
            a, b = L.block_times(first, last, pos, nanos, plus=plus)
            assert np.array_equal(a, np.interp(first.astype(np.float64), pos, nanos))
            assert np.array_equal(b, np.interp(last.astype(np.float64) + plus, pos, nanos))
        # the calling-context trees' spans: rounded differences of the same values, in one pass
        spans = np.rint(np.interp(last.astype(np.float64), pos, nanos) - np.interp(first.astype(np.float64), pos, nanos))
        assert np.array_equal(L.block_spans(first, last, pos, nanos), np.maximum(spans, 0).astype(np.int64))


def test_the_levels_pass_makes_the_call_summary_its_own_pass_makes(record, default_jdk, tmp_path):
    """The first open's levels of detail read the columns a thread's call summary is made of, so
    that pass makes the summary too (load_trace then reads it kept): the same arrays as the
    summary's own pass, for every thread; and a summary already kept is left as it is."""
    import shutil

    from jbgui.model import call_summary as CS
    from jbgui.model import derived

    run = record("multithread", default_jdk)
    trace = tmp_path / "trace"
    shutil.copytree(run.trace_dir, trace, ignore=shutil.ignore_patterns("analysis"))
    analysis = Analysis.open(trace)
    threads = [t for t in analysis.threads if len(t.calls)]
    assert threads and not any(t.call_summary_ready for t in threads)
    TimelineModel(analysis, window_rows=64)
    for t in threads:
        assert t.call_summary_ready, t.name
        kept = derived.load_or_compute(t.calls.directory, "call_summary.npz", tuple(CS.compute(t.calls)),
                                       lambda: pytest.fail("the summary was not kept"))
        own = CS.compute(t.calls)
        assert 0 < own["method_calls"].sum() <= len(t.calls)     # (rows of no known method: not counted)
        for key, value in own.items():
            assert np.array_equal(kept[key], value), (t.name, key)
    # fed in pieces (as block after block) the accumulator gives the same
    t = max(threads, key=lambda t: len(t.calls))
    acc = CS.Accumulator()
    cols = {name: np.asarray(getattr(t.calls, name)) for name in ("method", "flags", "depth")}
    for lo in range(0, len(t.calls), 7):
        acc.feed(*(cols[name][lo:lo + 7] for name in ("method", "flags", "depth")))
    for key, value in CS.compute(t.calls).items():
        assert np.array_equal(acc.result()[key], value), key
    # kept already: the levels' pass, run again, does not write it
    path = t.calls.directory / "call_summary.npz.zst"
    before = path.stat().st_mtime_ns
    for k in range(9):
        derived.forget(t.calls.directory, f"timeline-lod-v2-{k}")
    derived.forget(t.calls.directory, "timeline-lod-v2")
    TimelineModel(Analysis.open(trace), window_rows=64)
    assert path.stat().st_mtime_ns == before
