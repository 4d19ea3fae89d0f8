"""The analysis store (jbgui/model/store.py) on real recorded programs: the compressed columns
return exactly what the replay kernel produced, however the rows were split into blocks and
patches; a cache that is damaged, stale, foreign or misplaced is detected and rebuilt with a note,
never read into a crash; the cache is written only where jbgui made it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import replay as R
from jbgui.model import store as S
from jbgui.model import store_rows as SR
from jbgui.model.analysis import CACHE_FORMAT, Analysis, cache_root, user_cache_dir

COLUMNS = tuple(R.COLUMNS)


@pytest.fixture(scope="module")
def recorded(record, default_jdk) -> Path:
    run = record("exceptions", default_jdk)
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


@pytest.fixture(scope="module")
def cached(recorded, tmp_path_factory) -> Path:
    """A copy of the recorded trace with its cache built once (copies keep the files' times, so
    the cache stays current in copies of this copy)."""
    trace = copy_trace(recorded, tmp_path_factory.mktemp("cached") / "t")
    analysis = Analysis.open(trace)
    for t in analysis.threads:
        t.cct, t.call_summary
    return trace


def copy_trace(src: Path, dst: Path, with_cache: bool = False) -> Path:
    shutil.copytree(src, dst, ignore=None if with_cache else shutil.ignore_patterns("analysis"))
    return dst


def kernel_columns(trace: Path, monkeypatch) -> dict[int, dict[str, np.ndarray]]:
    """The rows as the replay kernel left them, with a row buffer large enough that nothing is
    flushed before the end (so no patches): what the old uncompressed columns held."""
    captured: dict[Path, list] = {}
    swap = R._ColumnWriter.swap

    def capture(self, rows, n):
        captured.setdefault(self.store.directory.name, []).append(
            {name: rows[col, :n].copy() for name, (col, _d) in R.COLUMNS.items()})
        return swap(self, rows, n)
    monkeypatch.setattr(R, "ROWS_BUFFER", 1 << 21)
    monkeypatch.setattr(R._ColumnWriter, "swap", capture)
    Analysis.open(trace, use_cache=False)
    monkeypatch.undo()
    out = {}
    for name, blocks in captured.items():
        assert len(blocks) == 1, "the reference must be one unflushed block"
        out[int(name.split(".")[0][1:])] = {k: blocks[0][k].astype(np.int64) for k in COLUMNS}
    return out


def test_store_returns_exactly_what_the_kernel_produced(recorded, tmp_path, monkeypatch):
    reference = kernel_columns(copy_trace(recorded, tmp_path / "ref"), monkeypatch)
    # The default block size, and tiny blocks: hundreds of blocks, and many rows patched after
    # their block was written (frames open across a flush).
    for label, rows_buffer in (("default", R.ROWS_BUFFER), ("tiny", 256)):
        trace = copy_trace(recorded, tmp_path / label)
        monkeypatch.setattr(R, "ROWS_BUFFER", rows_buffer)
        Analysis.open(trace)
        monkeypatch.undo()
        analysis = Analysis.open(trace)          # decoded from the store, not from the replay
        assert analysis.from_cache
        if label == "tiny":
            meta = json.loads((analysis.cache_dir / "meta.json").read_text())
            main = meta["threads"][str(analysis.thread("main").index)]
            assert len(main["blocks"]) > 20
            extra = S.load_arrays(analysis.cache_dir / f"T{analysis.thread('main').index:06d}" / "extra.npz.zst")
            assert len(extra["patches"]) > 0
        assert {t.index for t in analysis.threads} == set(reference)
        for t in analysis.threads:
            for name in COLUMNS:
                got = np.asarray(getattr(t.calls, name), np.int64)
                assert np.array_equal(got, reference[t.index][name]), (label, t.name, name)


def test_a_calls_subtree_is_read_from_its_own_blocks_exactly(recorded, tmp_path, monkeypatch):
    """CallTable.subtree decodes only the blocks holding a call's rows (its path and its blocks
    are asked for one call): every row's subtree equals the kernel's columns, with blocks of 256
    rows, so that subtrees cross blocks and rows were patched after their block was written."""
    reference = kernel_columns(copy_trace(recorded, tmp_path / "ref"), monkeypatch)
    trace = copy_trace(recorded, tmp_path / "tiny")
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)
    Analysis.open(trace)
    monkeypatch.undo()
    analysis = Analysis.open(trace)
    main = analysis.thread("main")
    ref = reference[main.index]
    n = len(main.calls)
    assert n > 1000
    crossing = 0
    sample = sorted({*range(0, n, max(1, n // 200)), *range(250, n, 256), *range(5)})
    for row in sample:
        lo, stop, sub = main.calls.subtree(row)
        assert (lo, stop) == (row, ref["end"][row]), row
        for name in ("first", "last", "flags", "method", "exc_class"):
            assert np.array_equal(np.asarray(sub[name], np.int64), ref[name][row:stop]), (row, name)
        assert np.array_equal(sub["end"], ref["end"][row:stop] - row), row
        crossing += row // 256 != (stop - 1) // 256
    assert crossing > 10
    # and nothing was decoded whole
    assert not {"first", "last", "end", "depth"} & set(main.calls.__dict__)


def test_tree_columns_block_by_block_equal_the_whole_columns(recorded, tmp_path, monkeypatch):
    """parent, end and inclusive bytecodes read block by block (each block's from that block, its
    patches and the calls open at its start) equal the kernel's columns, with blocks of 256 rows so
    that most subtrees cross blocks; and the call tree's queries over them (children in batches,
    counts, positions, exclusive counts, ancestors) equal the same queries over whole columns,
    without decoding any column whole."""
    from jbgui.model import call_queries as Q

    reference = kernel_columns(copy_trace(recorded, tmp_path / "ref"), monkeypatch)
    trace = copy_trace(recorded, tmp_path / "tiny")
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)
    Analysis.open(trace)
    monkeypatch.undo()
    windowed = Analysis.open(trace)
    whole = Analysis.open(trace)
    checked = 0
    for t, w in zip(windowed.threads, whole.threads):
        calls, ref = t.calls, reference[t.index]
        n = len(calls)
        if calls._stored is None:
            continue
        for name in ("parent", "end", "incl_bytecodes"):
            assert np.array_equal(calls.window(name, 0, n), ref[name]), (t.name, name)
        for name in ("end", "incl_bytecodes", "incl_blocks", "parent", "first", "last"):
            getattr(w.calls, name)             # the other analysis decodes them whole
        rows = sorted({-1, *range(0, n, max(1, n // 150)), *range(250, n, 256)})
        for row in rows:
            for limit in (1, 7, 500):
                got, nxt = Q.children_batch(calls, row, -1, limit)
                want, want_next = Q.children_batch(w.calls, row, -1, limit)
                assert np.array_equal(got, want) and nxt == want_next, (t.name, row, limit)
            assert Q.child_count(calls, row) == Q.child_count(w.calls, row), (t.name, row)
            assert Q.child_at(calls, row, 3) == Q.child_at(w.calls, row, 3), (t.name, row)
            if row >= 0:
                assert Q.ancestors(t, row) == Q.ancestors(w, row), (t.name, row)
        real = [r for r in rows if r >= 0]
        for column in ("incl_bytecodes", "incl_blocks"):
            assert np.array_equal(Q.exclusive(t, real, column), Q.exclusive(w, real, column)), (t.name, column)
        assert Q.thread_totals(t) == Q.thread_totals(w)
        checked += n
        # nothing of this thread was decoded whole
        assert not {"first", "last", "end", "parent", "depth", "incl_bytecodes", "incl_blocks"} & set(calls.__dict__)
    assert checked > 1000


def test_cache_is_smaller_than_the_trace(cached):
    trace = cached      # the derived arrays are in it too (cct, summary)
    size = lambda p: sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    trace_size = size(trace / "events") + (trace / "static.xml").stat().st_size
    assert size(trace / "analysis") < trace_size


def damage_column(replay: Path, how: str) -> None:
    tdir = sorted(p for p in replay.iterdir() if p.name.startswith("T"))[0]
    path = tdir / "depth.zst"
    data = bytearray(path.read_bytes())
    if how == "random":
        rng = np.random.default_rng(7)
        at = rng.integers(0, len(data), 16)
        for i in at:
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "truncated":
        path.write_bytes(bytes(data[:len(data) // 2]))
    elif how == "depth_row_max":
        # (end and parent are derived from depth, not stored.) The depth of row 0 set to
        # 2**31-1, re-encoded as a valid zstd frame and with the meta's records updated: only the
        # consistency check of the tree can tell.
        meta_path = replay / "meta.json"
        meta = json.loads(meta_path.read_text())
        entry = meta["threads"][str(int(tdir.name[1:]))]
        dtype = entry["dtypes"]["depth"]
        frames = entry["frames"]["depth"]
        first = S.zstandard.ZstdDecompressor().decompress(bytes(data[:frames[0]]))
        values = np.asarray(S.unpack(first, entry["blocks"][0], np.dtype(dtype).itemsize), np.int64).copy()
        values[0] = (1 << 31) - 1       # stored as differences: the first is row 0's depth
        frame = S.zstandard.ZstdCompressor(write_checksum=True).compress(S.pack("depth", values))
        path.write_bytes(frame + bytes(data[frames[0]:]))
        frames[0] = len(frame)
        entry["files"]["depth.zst"] = S.file_record(path)
        meta_path.write_text(json.dumps(meta))


@pytest.mark.parametrize("how", ["random", "truncated", "depth_row_max"])
def test_a_damaged_column_is_rebuilt_with_a_note(cached, tmp_path, how):
    trace = copy_trace(cached, tmp_path / "t", with_cache=True)
    good = Analysis.open(trace)
    assert good.from_cache
    expected = np.asarray(good.thread("main").calls.end).copy()
    damage_column(trace / "analysis" / "replay", how)
    again = Analysis.open(trace)
    if how == "depth_row_max":
        # Sizes and checksums agree (the damage was re-encoded): the tree check on decoding
        # refuses it with a clear error, never an out-of-bounds read.
        with pytest.raises(S.CacheDamaged, match="inconsistent|out of range"):
            for t in again.threads:
                t.calls.end
        return
    assert not again.from_cache
    assert any("damaged" in p for p in again.problems)
    assert np.array_equal(np.asarray(again.thread("main").calls.end), expected)
    assert Analysis.open(trace).from_cache and not any("damaged" in p for p in Analysis.open(trace).problems)


@pytest.mark.parametrize("meta", ["[]", "null", f'{{"format": {CACHE_FORMAT}, "stamp": 1}}', "{", '"x"' * 1000,
                                  "WRONG_ROWS", "WRONG_FRAMES"])
def test_a_meta_json_of_the_wrong_shape_is_rebuilt(cached, tmp_path, meta):
    trace = copy_trace(cached, tmp_path / "t", with_cache=True)
    path = trace / "analysis" / "replay" / "meta.json"
    if meta.startswith("WRONG"):
        data = json.loads(path.read_text())
        entry = next(iter(data["threads"].values()))
        if meta == "WRONG_ROWS":
            entry["rows"] = 2 ** 40
        else:
            entry["frames"]["depth"] = [1] * len(entry["blocks"])
        meta = json.dumps(data)
    path.write_text(meta)
    again = Analysis.open(trace)
    assert not again.from_cache
    assert any("damaged" in p for p in again.problems)
    assert Analysis.open(trace).from_cache


def test_a_cache_of_another_version_or_another_trace_is_not_read(recorded, tmp_path):
    a = copy_trace(recorded, tmp_path / "a")
    Analysis.open(a)
    meta_path = a / "analysis" / "replay" / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["format"] = 5
    meta_path.write_text(json.dumps(meta))
    assert not Analysis.open(a).from_cache            # another version: replayed again
    # A cache copied from another trace (same files, another run): the stamp differs.
    b = copy_trace(recorded, tmp_path / "b")
    info = json.loads((b / "trace.json").read_text())
    info["start"] = {**info.get("start", {}), "nanos": 12345}
    (b / "trace.json").write_text(json.dumps(info))
    shutil.copytree(a / "analysis", b / "analysis")
    assert not Analysis.open(b).from_cache


@pytest.mark.parametrize("kind", ["file", "symlink"])
def test_analysis_that_is_not_our_directory_is_left_alone(recorded, tmp_path, monkeypatch, kind):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    trace = copy_trace(recorded, tmp_path / "t")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious").write_text("keep me")
    if kind == "file":
        (trace / "analysis").write_text("not a cache")
    else:
        (elsewhere / "replay").mkdir()
        (elsewhere / "replay" / "meta.json").write_text("{}")
        (trace / "analysis").symlink_to(elsewhere)
    analysis = Analysis.open(trace)
    assert any("left alone" in p for p in analysis.problems)
    assert analysis.cache_dir.parent == user_cache_dir(trace)
    assert (elsewhere / "precious").read_text() == "keep me"
    if kind == "file":
        assert (trace / "analysis").read_text() == "not a cache"
    else:
        assert (trace / "analysis").is_symlink()
        assert sorted(p.name for p in elsewhere.rglob("*")) == ["meta.json", "precious", "replay"]
    assert Analysis.open(trace).from_cache


def test_a_symlink_planted_inside_the_cache_is_never_followed(cached, tmp_path):
    trace = copy_trace(cached, tmp_path / "t", with_cache=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "file").write_text("keep me")
    replay = trace / "analysis" / "replay"
    shutil.rmtree(replay)
    replay.symlink_to(victim)
    again = Analysis.open(trace)
    assert not again.from_cache
    assert (victim / "file").read_text() == "keep me" and sorted(os.listdir(victim)) == ["file"]
    assert not replay.is_symlink() and (replay / "meta.json").is_file()


def test_cache_dir_environment_and_read_only_traces(recorded, tmp_path, monkeypatch):
    trace = copy_trace(recorded, tmp_path / "t")
    monkeypatch.setenv("JBGUI_CACHE_DIR", str(tmp_path / "cache"))
    analysis = Analysis.open(trace)
    assert not (trace / "analysis").exists()
    assert analysis.cache_dir.parent.parent == tmp_path / "cache"
    monkeypatch.delenv("JBGUI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root(trace) == trace / "analysis"
    assert cache_root(trace, user_cache=True) == user_cache_dir(trace)
    if os.geteuid() != 0:       # root writes anywhere: the read-only case cannot be shown
        trace.chmod(0o555)
        try:
            assert cache_root(trace) == user_cache_dir(trace)
        finally:
            trace.chmod(0o755)


def test_a_failed_replay_removes_only_its_own_work(cached, tmp_path, monkeypatch):
    trace = copy_trace(cached, tmp_path / "t", with_cache=True)
    (trace / "analysis" / "mine").write_text("a file jbgui did not make")
    before = sorted(p.name for p in (trace / "analysis").iterdir())

    def fail(*_args, **_kwargs):
        raise R.Cancelled()
    monkeypatch.setattr(R, "replay_stream", fail)
    os.utime(trace / "static.xml")       # stale: the next open replays
    with pytest.raises(R.Cancelled):
        Analysis.open(trace)
    assert sorted(p.name for p in (trace / "analysis").iterdir()) == before


SLOW_REPLAY = """
import sys, time
from jbgui.model import replay as R
from jbgui.model.analysis import Analysis
def stuck(*args, **kwargs):
    time.sleep(120)
R.replay_stream = stuck
Analysis.open(sys.argv[1])
"""


def test_the_work_of_a_killed_replay_is_removed_by_the_next_one(cached, tmp_path):
    """A replay killed outright (SIGKILL runs no clean-up) leaves its work directory; the next
    replay removes it once its process is gone, never while it runs, and an earlier version's
    (no process id in the name) once it is an hour old."""
    import signal
    import subprocess
    import sys
    import time as _time
    trace = copy_trace(cached, tmp_path / "t")
    root = trace / "analysis"
    child = subprocess.Popen([sys.executable, "-c", SLOW_REPLAY, str(trace)])
    try:
        deadline = _time.monotonic() + 60
        while not list(root.glob(f"replay.tmp-{child.pid}-*")):
            assert child.poll() is None and _time.monotonic() < deadline, "the child never started its replay"
            _time.sleep(0.05)
        (work,) = root.glob(f"replay.tmp-{child.pid}-*")
        (work / "partial").write_bytes(b"x" * 1000)
        old_young = root / "replay.tmp-abcdef"      # an earlier version's, just made
        old_stale = root / "replay.tmp-ghijkl"      # an earlier version's, untouched for two hours
        for d in (old_young, old_stale):
            d.mkdir()
            (d / "T000001").write_bytes(b"x" * 100)
        two_hours_ago = _time.time() - 7200
        os.utime(old_stale, (two_hours_ago, two_hours_ago))
        Analysis.open(trace)                         # replays beside the running child
        assert work.is_dir() and old_young.is_dir() and not old_stale.exists()
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        assert work.is_dir()                         # nothing cleaned up after the kill
        os.utime(trace / "static.xml")               # stale: the next open replays
        analysis = Analysis.open(trace)
        assert not work.exists() and old_young.is_dir()
        assert sorted(p.name for p in root.iterdir() if p.name.startswith("replay")) == ["replay", old_young.name]
        assert analysis.threads and not analysis.from_cache
    finally:
        child.kill()
        child.wait(30)


def test_large_columns_decode_into_unlinked_scratch_mappings(cached, tmp_path, monkeypatch):
    trace = copy_trace(cached, tmp_path / "t", with_cache=True)
    in_memory = Analysis.open(trace).thread("main").calls
    expected = {name: np.asarray(getattr(in_memory, name)).copy() for name in COLUMNS}
    monkeypatch.setattr(S, "MAP_DECODED_ABOVE", 0)
    mapped = Analysis.open(trace).thread("main").calls
    for name in COLUMNS:
        column = getattr(mapped, name)
        assert isinstance(column, np.memmap)
        assert np.array_equal(column, expected[name]), name
    leftovers = [p for p in (trace / "analysis").rglob(".decoded-*")]
    assert leftovers == []


def _scoped_reference(method: np.ndarray, parent: np.ndarray, mine: np.ndarray):
    """The "only my code" tree the slow way: which rows show, and each shown row's shown parent."""
    n = len(method)
    shown = np.zeros(n, np.bool_)
    up = np.full(n, -1, np.int64)        # the nearest shown ancestor
    for r in range(n):
        p = int(parent[r])
        shown[r] = bool(mine[method[r]]) or p < 0 or bool(mine[method[p]])
        if p >= 0:
            up[r] = p if shown[p] else up[p]
    return shown, up


def test_only_my_code_tree_block_by_block_equals_the_slow_way(recorded, tmp_path, monkeypatch):
    """Under the "only my code" scope the call tree's queries (children, counts, positions,
    exclusive counts charged with the hidden calls, ancestors, the shown parent) give what the
    definition gives row by row: a call shows when it is mine, top-level, or called by my code,
    and sits under its nearest shown ancestor. With the scope of the trace and with a random mask
    (callbacks into my code below hidden calls), read from 256-row blocks and from whole columns."""
    from jbgui.model import call_queries as Q
    from jbgui.model.scope import Scope

    trace = copy_trace(recorded, tmp_path / "tiny")
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)
    Analysis.open(trace)
    monkeypatch.undo()
    windowed, whole = Analysis.open(trace), Analysis.open(trace)
    scope = Scope.of_trace(whole).method_mask
    assert scope.any() and not scope.all()
    rng = np.random.default_rng(7)
    random = rng.random(len(scope)) < 0.3
    checked = 0
    for mine in (scope, random):
        for t, w in zip(windowed.threads, whole.threads):
            n = len(w.calls)
            if not n:
                continue
            method, parent = np.asarray(w.calls.method, np.int64), np.asarray(w.calls.parent, np.int64)
            incl = np.asarray(w.calls.incl_bytecodes, np.int64)
            shown, up = _scoped_reference(method, parent, mine)
            kids: dict[int, list[int]] = {}
            for r in np.flatnonzero(shown).tolist():
                kids.setdefault(int(up[r]), []).append(r)
            rows = [-1] + [r for r in np.flatnonzero(shown).tolist() if r % 7 == 0 or r in kids]
            for calls in (t.calls, w.calls):
                for row in rows[:400]:
                    want = kids.get(row, [])
                    got, _next = Q.children_batch(calls, row, -1, 1 << 40, mine=mine)
                    assert got.tolist() == want, (t.name, row)
                    assert Q.child_count(calls, row, mine) == len(want)
                    assert Q.has_children(calls, row, mine) == bool(want)
                    if len(want) > 3:
                        k = len(want) // 2
                        assert Q.child_index(calls, row, want[k], mine) == k
                        start = Q.child_at(calls, row, k, mine)
                        assert Q.children_batch(calls, row, start, 1, mine=mine)[0].tolist() == [want[k]]
                        assert Q.count_siblings(calls, want[1], want[k], mine) == k - 1
                    if row >= 0:
                        assert Q.exclusive(t if calls is t.calls else w, [row], mine=mine)[0] == \
                            incl[row] - incl[want].sum()
                        assert Q.shown_parent(calls, row, mine) == up[row]
                        chain = [row]
                        while up[chain[-1]] >= 0:
                            chain.append(int(up[chain[-1]]))
                        assert Q.ancestors(t if calls is t.calls else w, row, mine) == chain[::-1]
                checked += len(rows[:400])
            hidden = np.flatnonzero(~shown)
            if len(hidden):       # a hidden call's ancestors end at the call that stands for it
                h = int(hidden[len(hidden) // 2])
                chain = [int(up[h])]
                while up[chain[-1]] >= 0:
                    chain.append(int(up[chain[-1]]))
                assert Q.ancestors(t, h, mine) == chain[::-1]
    assert checked > 500


def test_range_statistics_block_by_block_equal_the_whole_columns(recorded, tmp_path, monkeypatch):
    """Range statistics read a block of rows at a time (and find the range's rows by a binary
    search over blocks), the range's merged tree only the blocks of its rows: with 256-row blocks
    they equal what whole columns give, for ranges
    that start and end inside blocks, across many blocks, and cover everything."""
    from jbgui.model import range_stats as RS

    trace = copy_trace(recorded, tmp_path / "tiny")
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)
    Analysis.open(trace)
    monkeypatch.undo()
    windowed, whole = Analysis.open(trace), Analysis.open(trace)
    for t in whole.threads:
        for name in ("first", "last", "method", "parent", "incl_bytecodes", "incl_blocks"):
            getattr(t.calls, name)
    main = windowed.thread("main")
    assert main.calls._stored is not None and len(main.calls._stored.starts) > 10
    events = main.events
    for a, b in ((0, events), (events // 10, events // 5), (events // 3, events // 3 + 997), (5, 6),
                 (events - 300, events + 10)):
        got = RS.range_stats(windowed, a, b, use_clock=False)
        want = RS.range_stats(whole, a, b, use_clock=False)
        for g, w in zip(got.threads, want.threads):
            assert (g.calls_started, g.calls_contained, g.bytecodes, g.blocks, g.edge_rows) == \
                (w.calls_started, w.calls_contained, w.bytecodes, w.blocks, w.edge_rows), (a, b, g.name)
        assert got.methods.tolist() == want.methods.tolist()
        from jbgui.model import range_tree as RT
        got_tree = RT.range_tree(windowed, a, b, use_clock=False, threads=[main.index])
        want_tree = RT.range_tree(whole, a, b, use_clock=False, threads=[main.index])
        assert got_tree.key.tolist() == want_tree.key.tolist() and got_tree.calls.tolist() == want_tree.calls.tolist()
        firsts = np.asarray(whole.thread("main").calls.first)
        keys = [a, b, 0, events, int(firsts[len(firsts) // 2])]
        assert main.calls.rows_starting_before(keys).tolist() == np.searchsorted(firsts, keys).tolist()
    # any events, unsorted and repeated, on and around calls' starts (a block at a time inside)
    rng = np.random.default_rng(5)
    keys = np.concatenate([rng.integers(-5, events + 5, 400), firsts[::97], firsts[::89] + 1, firsts[:3]])
    rng.shuffle(keys)
    assert main.calls.rows_starting_before(keys).tolist() == np.searchsorted(firsts, keys).tolist()
    assert len(main.calls.block_first()) == len(main.calls._stored.starts) - 1
    assert not {"first", "last", "method", "parent"} & set(main.calls.__dict__)


def test_the_rows_of_a_method_block_by_block_equal_the_kernel_s_columns(recorded, tmp_path, monkeypatch):
    """rows_with (a method's calls with their first, last, flags, parent and the parent's method,
    gathered in one walk of each block without decoding a column whole) gives exactly the
    kernel's columns, with blocks of 256 rows: parents open before their block, flags and last
    events patched after it, every call site's chain of flags, for the most-called methods,
    methods called from many sites and recursive ones; on two threads of a pool too."""
    from concurrent.futures import ThreadPoolExecutor

    reference = kernel_columns(copy_trace(recorded, tmp_path / "ref"), monkeypatch)
    trace = copy_trace(recorded, tmp_path / "tiny")
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)
    Analysis.open(trace)
    monkeypatch.undo()
    analysis = Analysis.open(trace)
    main = analysis.thread("main")
    ref = reference[main.index]
    stored = main.calls._stored
    assert len(stored.blocks) > 20
    method, parent, site = ref["method"], ref["parent"], ref["call_site"]
    counts = np.bincount(method)
    by_calls = [int(m) for m in np.argsort(-counts) if m > 0][:8]
    sites = {int(m): len(np.unique(site[method == m])) for m in by_calls}
    recursive = np.unique(method[(parent >= 0) & (method == method[np.maximum(parent, 0)])]).tolist()
    chosen = list(dict.fromkeys(by_calls + recursive[:4]))
    assert max(sites.values()) > 2 and recursive
    outside = 0
    with ThreadPoolExecutor(2) as pool:
        for m in chosen:
            rows = np.flatnonzero(method == m)
            for got in (SR.rows_with(stored, "method", m), SR.rows_with(stored, "method", m, pool=pool)):
                assert got["row"].tolist() == rows.tolist(), m
                for name in ("first", "last", "flags", "parent"):
                    assert got[name].tolist() == ref[name][rows].tolist(), (m, name)
                p = ref["parent"][rows]
                assert got["parent_value"].tolist() == np.where(p >= 0, method[np.maximum(p, 0)], -1).tolist(), m
            starts = stored.starts[np.searchsorted(stored.starts, rows, side="right") - 1]
            outside += int(((p >= 0) & (p < starts)).sum())
    assert outside > 10          # parents open before their block were met
    assert not {"first", "last", "method", "depth", "flags"} & set(main.calls.__dict__)


def test_a_method_s_call_scan_equals_the_call_by_call_scan(recorded, tmp_path, monkeypatch):
    """The variants' and loops' scan (a method's words given to the innermost of its calls
    running, from the chunks holding its calls) gives every call's signature, own blocks and
    bytecodes, exceptional end and loop records exactly as scanning each call's own events
    (its range less its callees', over the whole columns) does: for the most-called methods,
    methods with loops and recursive ones, on every thread, with blocks of 256 rows; and the
    own blocks in order of chosen calls are each call's path."""
    from jbgui.model import block_paths as B
    from jbgui.model.cfg import method_cfg

    trace = copy_trace(recorded, tmp_path / "tiny")
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)
    Analysis.open(trace)
    monkeypatch.undo()
    blocks, whole = Analysis.open(trace), Analysis.open(trace)
    counts: dict[int, int] = {}
    for t in whole.threads:
        for m in np.asarray(t.calls.method).tolist():
            counts[m] = counts.get(m, 0) + 1
    by_calls = sorted(counts, key=counts.get, reverse=True)
    with_loops = [m for m in by_calls if m > 0 and len(method_cfg(whole, m).loops)][:6]
    recursive = []
    for t in whole.threads:
        method, parent = np.asarray(t.calls.method), np.asarray(t.calls.parent)
        inner = (parent >= 0) & (method == method[np.maximum(parent, 0)])
        recursive += np.unique(method[inner]).tolist()
    chosen = list(dict.fromkeys([m for m in by_calls[:8] if m > 0] + with_loops + recursive[:4]))
    assert with_loops and recursive and len(chosen) >= 10
    for i, m in enumerate(chosen):
        loops = method_cfg(whole, m).loop_tables()
        # every other method with its sets of transitions hashed instead of indexed
        monkeypatch.setattr(B, "DIRECT_SETS", 0 if i % 2 else 1 << 22)
        got = B.scan_calls(blocks, m, loops)
        # the reference: each call alone, its own events being its range less its callees'
        threads, rows, ref = [], [], []
        stamp0 = 0
        for t in whole.threads:
            r = np.flatnonzero(np.asarray(t.calls.method) == m)
            if not len(r):
                continue
            result = B._scan_thread(whole, t, r, B._Method(whole, m, loops), None, stamp0=stamp0)
            threads += [t.index] * len(r)
            rows += r.tolist()
            ref.append(result)
            stamp0 += len(r)
        assert got.thread.tolist() == threads and got.row.tolist() == rows, m
        sig, nb, bc, exc, recs = (np.concatenate([x[i] for x in ref]) for i in range(5))
        assert np.array_equal(got.sig, sig), m
        assert np.array_equal(got.own_blocks, nb) and np.array_equal(got.own_bytecodes, bc), m
        assert np.array_equal(got.exceptional, exc), m
        offsets = np.cumsum([0] + [len(x[0]) for x in ref])
        want = list(zip((np.concatenate([x[4][:, 0] + o for x, o in zip(ref, offsets)])).tolist(),
                        recs[:, 1].tolist(), recs[:, 2].tolist()))
        assert list(zip(got.loop_call.tolist(), got.loop_id.tolist(), got.loop_iters.tolist())) == want, m
        assert got.orphans == 0 and got.skipped == 0
        # own blocks in order, of the longest and the first calls, read again for those calls alone
        which = np.unique(np.r_[0, np.argmax(got.own_blocks), len(got.row) - 1])
        for i, seq in zip(which.tolist(), B.call_sequences(blocks, m, got, which)):
            path = B.call_path(whole, whole.thread(int(got.thread[i])), int(got.row[i]))
            assert seq.tolist() == path.blocks.tolist(), (m, i)
    for t in blocks.threads:                # and the method's rows were never decoded whole
        assert not {"first", "last", "method", "parent", "flags"} & set(t.calls.__dict__)
    # A call's set of edges is its own whatever thread the call before it ran on (the sets were
    # told apart by the call's number within its thread, so a second thread's calls saw the first
    # thread's edges as seen and lost them from their signatures).
    shared = [m for m in by_calls if m > 0 and len(B.method_calls(whole, m)) > 1][:3]
    assert shared
    for m in shared:
        combined = B.scan_calls(whole, m)
        for calls in B.method_calls(whole, m):
            alone = B.scan_calls(whole, m, threads=[calls.thread])
            assert np.array_equal(alone.sig, combined.sig[combined.thread == calls.thread.index]), m


@pytest.mark.parametrize("name", ["depth", "method"])
@pytest.mark.parametrize("values", [[], [0], [5, -3, 127, -128], [128, -129, 300], [1 << 20, -(1 << 20)],
                                    [1 << 40, -(1 << 40), 0], [(1 << 63) - 1, -(1 << 63)]])
def test_a_packed_block_unpacks_to_its_values(name, values):
    values = np.asarray(values, np.int64)
    raw = S.pack(name, values)
    assert np.array_equal(np.asarray(S.unpack(raw, len(values), 8), np.int64), values)
    fits = [w for w in (1, 2, 4, 8) if all(-(1 << (8 * w - 1)) <= v < (1 << (8 * w - 1)) for v in values.tolist())]
    assert len(raw) == 1 + len(values) * fits[0]      # the narrowest width that holds them all


@pytest.mark.parametrize("width", [2, 4, 8])
def test_byte_planes_unpack_the_same_by_numpy_and_by_the_kernel(width, monkeypatch):
    # small blocks are unpacked by numpy (no numba start-up when a trace opens), big ones by the
    # kernel: both must give every value, sign included
    rng = np.random.default_rng(width)
    top = 1 << (8 * width - 1)
    values = np.r_[rng.integers(-top, top, 5000, dtype=np.int64), -top, top - 1, 0, -1]
    raw = S.pack("first", values)
    assert raw[0] & 0x0F == {2: 1, 4: 2, 8: 3}[width] and raw[0] != raw[0] & 0x0F   # planes, this width
    monkeypatch.setattr(S, "NUMPY_PLANES_ROWS", len(values))
    by_numpy = S.unpack(raw, len(values), 8, small_by_numpy=True)
    by_kernel = S.unpack(raw, len(values), 8)
    monkeypatch.setattr(S, "NUMPY_PLANES_ROWS", len(values) - 1)
    assert np.array_equal(S.unpack(raw, len(values), 8, small_by_numpy=True), by_kernel)
    assert by_numpy.dtype == by_kernel.dtype == np.int64
    assert np.array_equal(by_numpy, values) and np.array_equal(by_kernel, values)


@pytest.mark.parametrize("raw, rows, itemsize", [(b"", 0, 4), (b"\x03" + bytes(8), 1, 4), (b"\x04" + bytes(4), 1, 4),
                                                  (b"\x21" + bytes(2), 1, 4), (b"\x12" + bytes(7), 2, 4),
                                                  (b"\x00" + bytes(3), 2, 4)])
def test_a_block_that_cannot_be_packed_is_refused(raw, rows, itemsize):
    with pytest.raises(ValueError):
        S.unpack(raw, rows, itemsize)


def test_array_files_keep_every_array_exactly(tmp_path):
    rng = np.random.default_rng(3)
    arrays = {"parent": np.arange(-1, 5000, dtype=np.int64), "counts": rng.integers(0, 300, (3000, 4)).astype(np.int32),
              "wide": rng.integers(-(1 << 62), 1 << 62, 2000), "unsigned": rng.integers(0, 1 << 40, 2000).astype(np.uint64),
              "huge_unsigned": np.full(2000, (1 << 64) - 1, np.uint64), "time": rng.random(2000),
              "small": np.array([7, 8], np.int64), "flags": rng.integers(0, 2, 4000).astype(np.bool_),
              "empty": np.zeros((0, 3), np.int32), "text": np.array("[1, 2]"),
              "sorted": np.sort(rng.integers(-(1 << 40), 1 << 40, 3000)),
              "sorted_extremes": np.sort(np.concatenate([[-(1 << 63), (1 << 63) - 1], rng.integers(0, 9, 2000)]))}
    path = tmp_path / "a.npz.zst"
    S.save_arrays(path, arrays)
    got = S.load_arrays(path)
    assert set(got) == set(arrays)
    for name, values in arrays.items():
        assert got[name].dtype == values.dtype and got[name].shape == values.shape, name
        assert np.array_equal(got[name], values), name
    assert set(S.load_arrays(path, ("counts",))) == {"counts"}
    # the counts take about one byte each, not four
    plain = tmp_path / "plain.npz.zst"
    S.save_arrays(plain, {"counts": arrays["counts"].astype(np.int64)})
    assert plain.stat().st_size < arrays["counts"].size * 1.5


def test_column_files_keep_every_array_exactly_and_read_into_given_arrays(tmp_path, monkeypatch):
    """Column files (the run's calling-context trees): every integer array back with its type, in
    frames of a few values here so that arrays span many frames decoded on two threads; a sorted
    array as steps; an array read into a column of a larger table."""
    monkeypatch.setattr(S, "COLUMN_CHUNK", 1000)
    rng = np.random.default_rng(11)
    arrays = {"gap": rng.integers(1, 50, 4500).astype(np.int32), "wide": rng.integers(-(1 << 62), 1 << 62, 3001),
              "sorted": np.sort(rng.integers(-(1 << 40), 1 << 40, 2500)), "one": np.array([-7], np.int64),
              "empty": np.zeros(0, np.int32), "unsigned": rng.integers(0, 1 << 31, 1200).astype(np.uint32),
              "steps_of_one": np.arange(5000, dtype=np.int64)}
    path = tmp_path / "run.zst"
    S.save_columns(path, arrays)
    f = S.ColumnFile(path)
    got = f.read(list(arrays))
    for name, values in arrays.items():
        assert got[name].dtype == values.dtype and np.array_equal(got[name], values), name
        assert f.rows(name) == len(values)
    table = np.zeros((3001, 3), np.int64, order="F")
    f.read(["wide"], {"wide": table[:, 1]}, workers=1)
    assert np.array_equal(table[:, 1], arrays["wide"]) and not table[:, [0, 2]].any()
    steps = tmp_path / "steps.zst"
    S.save_columns(steps, {"steps_of_one": arrays["steps_of_one"]})
    assert steps.stat().st_size < 1000        # steps of one compress to almost nothing
    with pytest.raises(ValueError):
        S.save_columns(tmp_path / "x.zst", {"two_d": np.zeros((3, 3), np.int64)})


@pytest.mark.parametrize("how", ["truncated", "a frame's byte flipped", "index altered", "header only", "empty",
                                 "bytes appended"])
def test_a_damaged_column_file_is_refused_when_opened(tmp_path, how):
    path = tmp_path / "run.zst"
    S.save_columns(path, {"a": np.arange(3000, dtype=np.int64) % 7, "b": np.arange(10, dtype=np.int32)})
    data = bytearray(path.read_bytes())
    if how == "truncated":
        data = data[:-20]
    elif how == "a frame's byte flipped":
        data[-5] ^= 0x40
    elif how == "index altered":
        data[S._COLUMNS_HEADER.size + 3] ^= 0x01
    elif how == "header only":
        data = data[:S._COLUMNS_HEADER.size]
    elif how == "empty":
        data = bytearray()
    else:
        data += b"\x00" * 8
    path.write_bytes(bytes(data))
    with pytest.raises(S.CacheDamaged):
        S.ColumnFile(path).read(["a", "b"])


def test_a_column_stored_by_call_site_decodes_to_its_values():
    rng = np.random.default_rng(5)
    site = rng.integers(-1, 40, 5000)
    values = np.where(site >= 0, site * 7 + 100, rng.integers(-1, 1000, 5000))   # one value per site, any without
    values[::97] = rng.integers(0, 1 << 30, len(values[::97]))                  # and some that are not
    stored = np.empty_like(values)
    S._by_site(values, site, stored, True)
    assert np.count_nonzero(stored[site >= 0]) <= 40 + len(values[::97]) * 2      # repeats are zeros
    back = np.empty_like(values)
    S._by_site(stored, site, back, False)
    assert np.array_equal(back, values)


def test_call_summary_read_in_pieces_equals_the_whole_columns(recorded, tmp_path, monkeypatch):
    """The per-thread summary reads the store a few rows at a time (here 1,000, so every thread
    takes several pieces and the method ids grow between them) and never keeps a whole column;
    its counts equal those of the whole columns."""
    from jbgui.model import call_summary as CS
    monkeypatch.setattr(CS, "CHUNK_ROWS", 1000)
    analysis = Analysis.open(copy_trace(recorded, tmp_path / "t"))
    checked = 0
    for t in analysis.threads:
        calls = t.calls
        got = CS.compute(calls)
        for name in ("method", "flags", "depth"):
            assert not calls.is_decoded(name), name
        method, flags, depth = (np.asarray(getattr(calls, n)) for n in ("method", "flags", "depth"))
        ids, counts = np.unique(method[method > 0], return_counts=True)
        assert got["method_ids"].tolist() == ids.tolist()
        assert got["method_calls"].tolist() == counts.tolist()
        assert got["flag_counts"].tolist() == [int(np.count_nonzero(flags & (1 << b))) for b in range(CS.FLAG_BITS)]
        assert int(got["max_depth"][0]) == int(depth.max())
        checked += len(calls) > 1000
    assert checked >= 1


def test_a_column_decoded_against_a_given_reference_equals_the_column(recorded, tmp_path, monkeypatch):
    """Passes over a thread give ``last`` the ``first`` they read already (and ``flags`` the
    ``call_site``), so the reference is not decoded twice: the same values, block by block; a
    reference for rows that are not whole blocks is not trusted (decoded again)."""
    monkeypatch.setattr(R, "ROWS_BUFFER", 256)     # many blocks per thread
    analysis = Analysis.open(copy_trace(recorded, tmp_path / "t"))
    blocks = 0
    for t in analysis.threads:
        stored = t.calls._stored
        if stored is None:
            continue
        starts = stored.starts.tolist()
        for lo, hi in zip(starts[:-1], starts[1:]):
            for name, against in (("last", "first"), ("flags", "call_site")):
                ref = stored.decode_rows(against, lo, hi)
                assert np.array_equal(stored.decode_rows(name, lo, hi, ref=ref), stored.decode_rows(name, lo, hi))
                assert np.array_equal(t.calls.window(name, lo, hi, keep=False, ref=ref),
                                      np.asarray(getattr(t.calls, name))[lo:hi])
            blocks += 1
        if hi - starts[-2] > 2:
            lo, hi = starts[-2] + 1, starts[-1]
            wrong = np.zeros(hi - lo, stored.dtypes["first"])
            assert np.array_equal(stored.decode_rows("last", lo, hi, ref=wrong), np.asarray(t.calls.last)[lo:hi])
    assert blocks >= 1


@pytest.mark.parametrize("width_of", [2**7, 2**15, 2**31, 2**62], ids=["1 byte", "2 bytes", "4 bytes", "8 bytes"])
@pytest.mark.parametrize("name", ["incl_blocks", "first", "last"])
def test_planes_decoded_with_their_transform_equal_the_two_pass_decoding(name, width_of):
    """Byte planes gathered and transformed in one pass (the store's fused decoding) equal
    unpacking them, then the column's transform, for every width a block may be stored in."""
    rng = np.random.default_rng(7)
    values = rng.integers(-width_of + 1, width_of - 1, 5000, dtype=np.int64)
    values[:3] = (-width_of, width_of - 1, 0)
    raw = S.pack(name, values)
    ref = rng.integers(-1000, 1000, len(values), dtype=np.int64)
    expected = S.unpack(raw, len(values), 8)
    if name == "first":
        expected = np.cumsum(expected)
    elif name == "last":
        expected = ref + expected
    got = np.full(len(values), 12345, np.int64)
    fused = S._planes_into(raw, len(values), 8, S._FUSED[name], ref if name == "last" else None, got)
    assert fused == (width_of > 2**7)           # one byte: no planes, the caller unpacks
    if fused:
        assert np.array_equal(got, expected)
