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


@pytest.mark.parametrize("damage", ["parent not an earlier node", "key of no method", "thread node out of the forest",
                                    "a thread's column cut short", "truncated", "bytes flipped", "not a column file"])
def test_a_damaged_tree_file_is_rebuilt(trace, damage):
    analysis = Analysis.open(trace)
    MT.forget_cached(analysis)
    expected, per_thread = summary(MT.run_tree(analysis)), thread_summaries(analysis)
    path = analysis.cache_dir / f"{CCT.RUN_FILE}.zst"
    assert path.is_file()
    if damage == "parent not an earlier node":
        rewrite(path, lambda a: a["parent_gap"].__setitem__(len(a["parent_gap"]) // 2, -3))
    elif damage == "key of no method":
        # a method id no trace defines: views index tables with keys
        rewrite(path, lambda a: a["key"].__setitem__(1, (1 << 19) - 1))
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
    # rebuilt and kept again
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
    MT.run_tree(analysis)
    assert not old_forest.exists() and not old_tree.exists()
