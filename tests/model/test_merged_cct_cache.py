"""The whole run's merged tree is cached beside the replay; the cache is untrusted input: a
tampered or truncated file costs a rebuild with the same answer, never a crash."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from jbgui.model import merged_tree as MT
from jbgui.model.analysis import Analysis


@pytest.fixture(scope="module")
def trace(record, default_jdk, tmp_path_factory):
    run = record("aggregate", default_jdk)
    assert run.exit_code == 0, run.describe()
    copy = tmp_path_factory.mktemp("merged-cct") / "trace"
    shutil.copytree(run.trace_dir, copy, ignore=shutil.ignore_patterns("analysis"))
    return copy


def summary(tree: MT.Tree) -> tuple:
    return (len(tree.parent), int(np.sum(tree.calls)), int(np.sum(tree.own("bytecodes"))),
            int(np.max(tree.inclusive("bytecodes"))))


@pytest.mark.parametrize("damage", ["parent out of range", "child list out of range", "key out of range",
                                    "truncated", "not an array"])
def test_a_damaged_merged_tree_cache_is_rebuilt(trace, damage):
    analysis = Analysis.open(trace)
    expected = summary(MT.run_tree(analysis))
    folder = analysis.cache_dir / "merged_cct"
    assert (folder / "parent.npy").is_file()
    if damage == "parent out of range":
        parent = np.load(folder / "parent.npy")
        parent[len(parent) // 2] = 1 << 30
        np.save(folder / "parent.npy", parent)
    elif damage == "child list out of range":
        lst = np.load(folder / "child_list.npy")
        lst[-1] = -5
        np.save(folder / "child_list.npy", lst)
    elif damage == "key out of range":
        key = np.load(folder / "key.npy")
        key[1] = (1 << 31) - 1          # a method id no trace defines: an array that size would blow memory
        np.save(folder / "key.npy", key)
    elif damage == "truncated":
        data = (folder / "calls.npy").read_bytes()
        (folder / "calls.npy").write_bytes(data[: len(data) // 2])
    else:
        (folder / "incl.npy").write_bytes(b"\x00" * 1000)
    again = Analysis.open(trace)
    assert summary(MT.run_tree(again)) == expected
    assert MT.forest_is_sound({k: np.load(folder / f"{k}.npy") for k in MT._FOREST_KEYS}, again.statics)
