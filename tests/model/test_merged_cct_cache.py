"""The run's calling-context trees (every thread's and the merged forest) are kept beside the
replay in one column file; the cache is untrusted input: a tampered or truncated file costs a
rebuild with the same answer, never a crash."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from jbgui.model import cct as CCT
from jbgui.model import merged_tree as MT
from jbgui.model import store as S
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def trace(record, default_jdk, tmp_path_factory):
    run = record("multithread", default_jdk)
    assert run.exit_code == 0, run.describe()
    copy = tmp_path_factory.mktemp("merged-cct") / "trace"
    shutil.copytree(run.trace_dir, copy, ignore=shutil.ignore_patterns("analysis"))
    return copy


def summary(tree: MT.Tree) -> tuple:
    return (len(tree.parent), int(np.sum(tree.calls)), int(np.sum(tree.own("bytecodes"))),
            int(np.max(tree.inclusive("bytecodes"))), int(np.sum(tree.inclusive("time"))))


def thread_summaries(analysis) -> dict:
    return {t.index: summary(MT.thread_tree(t)) for t in analysis.threads}


def rewrite(path, change) -> None:
    """Store the file again with ``change(arrays)`` applied: checksums right, contents wrong."""
    arrays = S.load_columns(path)
    change(arrays)
    S.save_columns(path, arrays)


def other_thread(arrays) -> str:
    return next(k for k in arrays if k.endswith(".forest"))


@pytest.mark.parametrize("damage", ["parent not an earlier node", "key of no method", "same-key ancestor of another key",
                                    "thread node out of the forest",
                                    "a thread's column cut short", "truncated", "bytes flipped", "not a column file"])
def test_a_damaged_tree_file_is_rebuilt(trace, damage):
    analysis = Analysis.open(trace)
    MT.forget_cached(analysis)
    expected, per_thread = summary(MT.run_tree(analysis)), thread_summaries(analysis)
    path = analysis.cache_dir / f"{CCT.RUN_FILE}.zst"
    CCT.saved(analysis.cache_dir)       # saved on a thread of its own
    assert path.is_file()
    if damage == "parent not an earlier node":
        rewrite(path, lambda a: a["parent_gap"].__setitem__(len(a["parent_gap"]) // 2, -3))
    elif damage == "key of no method":
        # a method id no trace defines: views index tables with keys
        rewrite(path, lambda a: a["key"].__setitem__(1, (1 << 19) - 1))
    elif damage == "same-key ancestor of another key":
        def change(a):
            key, same = a["key"], a["same_key"]
            node = int(np.flatnonzero(key[1:] != key[0])[0]) + 1     # a node whose key is not node 0's
            same[node] = 0
        rewrite(path, change)
    elif damage == "thread node out of the forest":
        rewrite(path, lambda a: a[other_thread(a)].__setitem__(0, len(a["key"]) + 5))
    elif damage == "a thread's column cut short":
        rewrite(path, lambda a: a.__setitem__("t1.calls" if "t1.calls" in a else other_thread(a),
                                              a["t1.calls" if "t1.calls" in a else other_thread(a)][:-1]))
    elif damage == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif damage == "bytes flipped":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    else:
        path.write_bytes(b"\x00" * 1000)
    again = Analysis.open(trace)
    assert summary(MT.run_tree(again)) == expected
    assert thread_summaries(again) == per_thread
    # rebuilt and kept again (once its save is done)
    CCT.saved(again.cache_dir)
    assert CCT._from_file(S.ColumnFile(path), {t.index for t in again.threads}, again.statics) is not None


def test_trees_of_earlier_versions_are_removed(trace):
    """A replay kept by an earlier version had a tree file per thread and an 835 MB forest
    folder on javac's trace: both go when the run's trees are built."""
    analysis = Analysis.open(trace)
    MT.forget_cached(analysis)
    old_forest = analysis.cache_dir / "merged_cct"
    old_forest.mkdir()
    (old_forest / "parent.npy").write_bytes(b"x" * 100)
    old_tree = analysis.threads[0].calls.directory / "cct-v3.npz.zst"
    old_tree.write_bytes(b"x" * 100)
    old_run = analysis.cache_dir / "cct-run-v1.zst"
    old_run.write_bytes(b"x" * 100)
    MT.run_tree(analysis)
    assert not old_forest.exists() and not old_tree.exists() and not old_run.exists()


def test_the_kept_same_key_ancestors_are_the_trees_own(trace):
    """The forest's nearest ancestor of the same key per node is kept with the trees (a toggle
    or transform of the run's tree needs it first): as built and as read back, it equals what the
    tree computes from its own structure."""
    analysis = Analysis.open(trace)
    MT.forget_cached(analysis)
    built = MT.run_tree(analysis)
    read = MT.run_tree(Analysis.open(trace))
    plain = MT.Tree(read.parent, read.key, read.depth, read.calls, read.incl, read.own_counts, read.flags)
    assert "same_key_ancestor" not in plain.__dict__
    expected = plain.same_key_ancestor
    assert np.count_nonzero(expected >= 0) > 10       # the JDK's recursion: something to check
    assert np.array_equal(built.same_key_ancestor, expected)
    assert np.array_equal(read.same_key_ancestor, expected)
    # and the transformed trees agree with a tree that computed it
    omc = read.remerge(visible=read.key != read.key[0])
    ref = plain.remerge(visible=plain.key != plain.key[0])
    assert np.array_equal(omc.parent, ref.parent) and np.array_equal(omc.calls, ref.calls)


def test_the_trees_are_saved_on_a_thread_of_their_own(trace, monkeypatch):
    """The run's trees are saved on a thread of their own once built: whoever opens the trace
    next reads them (after the save), not builds them again; forgetting them waits for the save,
    so no file is left behind."""
    analysis = Analysis.open(trace)
    MT.forget_cached(analysis)
    expected = summary(MT.run_tree(analysis))
    assert CCT.is_stored(analysis.cache_dir)
    with monkeypatch.context() as m:
        m.setattr(CCT, "build_run", lambda *a, **k: pytest.fail("built again"))
        assert summary(MT.run_tree(Analysis.open(trace))) == expected
    again = Analysis.open(trace)
    MT.forget_cached(again)
    MT.run_tree(again)
    MT.forget_cached(again)             # the save just begun
    CCT.saved(again.cache_dir)
    assert not (again.cache_dir / f"{CCT.RUN_FILE}.zst").exists()
    assert not CCT.is_stored(again.cache_dir)


def test_a_process_that_exits_at_once_finishes_saving_the_trees(trace):
    """The save on its own thread is finished when the process exits right after the build (the
    thread pools it compresses on stop taking work at exit: it must be done before)."""
    import subprocess
    import sys
    analysis = Analysis.open(trace)
    MT.forget_cached(analysis)
    path = analysis.cache_dir / f"{CCT.RUN_FILE}.zst"
    assert not path.exists()
    # the save held back a little: the process is exiting when it starts
    code = ("import sys, time; from jbgui.model.analysis import Analysis; from jbgui.model import merged_tree as MT; "
            "from jbgui.model import store as S; save = S.save_columns; "
            "S.save_columns = lambda *a: (time.sleep(0.5), save(*a)); "
            "MT.run_tree(Analysis.open(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", code, str(trace)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert CCT._from_file(S.ColumnFile(path), {t.index for t in analysis.threads}, analysis.statics) is not None


def test_the_forest_made_with_the_trees_equals_the_one_summed_from_the_threads(trace):
    """The forest's weights gathered with the first thread's columns when the trees are built are
    the threads' weights summed, as computed from the kept trees (same values, same types)."""
    analysis = Analysis.open(trace)
    run, _arrays = CCT.build_run(analysis.threads)
    made = run.forest_tree()
    summed = run.forest_tree()          # the first is given once: this one is summed
    assert made[0] is not summed[0]
    for a, b in zip(made, summed):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    assert made[1].flags.f_contiguous and summed[1].flags.f_contiguous
    assert len(run.forest_ids) > 1     # threads besides the first were added
