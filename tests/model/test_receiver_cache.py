"""benchmarks/receiver_cache.py, the count of the entry probes' slow paths under four receiver
caches, on hand-written event words (a kernel unit test: the counts follow from the sequence)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from jbgui.model import layout

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import receiver_cache  # noqa: E402


def start(method: int, own: bool = False) -> int:
    return (layout.TYPE_METHOD_START << layout.TYPE_SHIFT) | (method << layout.METHOD_SHIFT) \
        | (layout.START_RECEIVER_OWN if own else 0)


def receiver(class_id: int) -> int:
    return (layout.TYPE_EXTENDED << layout.TYPE_SHIFT) | (layout.EXT_RECEIVER << layout.SUBTYPE_SHIFT) | class_id


def end(method: int) -> int:
    return (layout.TYPE_METHOD_END << layout.TYPE_SHIFT) | (method << layout.METHOD_SHIFT)


def words(*calls: tuple) -> np.ndarray:
    out = []
    for method, cls in calls:
        out.append(start(method, own=cls is None))
        if cls is not None:
            out.append(receiver(cls))
        out.append(end(method))
    return np.array(out, dtype=np.uint32)


def test_interleaved_receivers_miss_the_threads_class_and_hit_the_methods():
    # method 1 always on class 7, method 2 always on class 9, alternating: the thread's last
    # class misses every time, each method's usual or last class only the first time
    calls = [(1, 7), (2, 9)] * 50
    assert receiver_cache.count_words(words(*calls)) == (100, 100, 2, 2, 2)


def test_one_method_on_alternating_classes_misses_all_but_usual_then_last():
    # the usual class (7, the first) takes every 7; the thread's last class then holds 9
    calls = [(3, 7), (3, 9)] * 10
    assert receiver_cache.count_words(words(*calls)) == (20, 20, 2, 20, 2)


def test_the_thread_class_catches_what_the_usual_class_misses():
    # method 1's usual class is 7 and method 2's 5, so only method 1's 9s miss them: the first
    # two (the thread's last class is 9 only from the second, a miss being what sets it), then
    # none. Each method's last class misses method 1 every time, method 2 once.
    calls = [(1, 7), (1, 9), (2, 5)] * 5
    assert receiver_cache.count_words(words(*calls)) == (15, 15, 4, 11, 3)


def test_two_usual_classes_and_the_threads_last_take_three_classes_in_turn():
    # one method on 7, 9, 11 in turn: the two usual classes hold 7 and 9 after their first
    # misses, the thread's last class 11 after its first; one usual class leaves 9 and 11 to
    # take turns in the thread's last class, which misses both every round after the first
    calls = [(1, 7), (1, 9), (1, 11)] * 4
    assert receiver_cache.count_words(words(*calls)) == (12, 12, 9, 12, 3)


def test_marked_starts_and_static_starts_are_not_receivers():
    calls = [(4, None), (5, 7), (4, None), (5, 7)]
    static = np.array([start(6), end(6)], dtype=np.uint32)
    assert receiver_cache.count_words(np.concatenate([static, words(*calls), static])) == (2, 1, 1, 1, 1)


def test_a_missing_or_corrupt_trace_is_a_clear_error(tmp_path, capsys):
    assert receiver_cache.main([str(tmp_path / "missing")]) == 2
    assert "no such trace directory" in capsys.readouterr().err
    (tmp_path / "bad" / "events").mkdir(parents=True)
    (tmp_path / "bad" / "events" / "T000001.jbt").write_bytes(b"not a stream" * 8)
    assert receiver_cache.main([str(tmp_path / "bad")]) == 2
    assert "not an event stream" in capsys.readouterr().err
