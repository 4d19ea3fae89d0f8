"""What a thread is called in every view (jbgui.model.analysis.thread_label), and what a trace
says of the virtual threads it left out (trace_json.untraced_virtual_threads)."""

from jbgui.model.analysis import thread_label


def test_a_thread_is_called_by_its_java_name_first():
    assert thread_label({"name": "worker-1", "virtual": True, "java_id": 30}, 4) == "worker-1"
    assert thread_label({"name": "", "end_name": "renamed", "java_id": 30}, 4) == "renamed"


def test_an_unnamed_virtual_thread_is_called_by_its_java_id():
    # Thread.ofVirtual().start(task) names nothing: jstack and JFR write "#30" for it.
    assert thread_label({"name": "", "virtual": True, "java_id": 30}, 4) == "virtual #30"


def test_a_thread_without_name_or_id_falls_back_to_its_index():
    assert thread_label({"name": "", "virtual": False, "java_id": 30}, 4) == "thread 4"
    assert thread_label({"virtual": True, "java_id": -1}, 4) == "thread 4"
    assert thread_label({"virtual": True, "java_id": True}, 4) == "thread 4"
    assert thread_label({}, 7) == "thread 7"


def test_the_sentence_for_untraced_virtual_threads_fits_the_recorder_that_wrote_it():
    from jbgui.model.format.trace_json import VIRTUAL_THREADS_UNTRACED, untraced_virtual_threads

    assert untraced_virtual_threads({"virtual_threads_untraced": False, "virtual_threads_max": 1000}) is None
    assert untraced_virtual_threads(None) is None
    # Recorders before 2026-11-29 traced none and wrote no limit.
    assert untraced_virtual_threads({"virtual_threads_untraced": True}) == VIRTUAL_THREADS_UNTRACED
    assert "the first 1,000; agent option virtual=N" in untraced_virtual_threads(
        {"virtual_threads_untraced": True, "virtual_threads_traced": 1000, "virtual_threads_max": 1000})
    assert "agent option virtual=0" in untraced_virtual_threads({"virtual_threads_untraced": True,
                                                                 "virtual_threads_max": 0})
