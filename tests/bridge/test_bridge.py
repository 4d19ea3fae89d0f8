"""The bridge's lifecycle: one JVM per process on the chosen JDK, one bridge object, usable from
worker threads at once, listings cached per class source and class."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from jbgui.bridge import Bridge, BridgeError, ClassSource, get_bridge
from jbgui.bridge.jvm import bridge_java_home, libjvm

JDK_CLASSES = ("java/lang/String", "java/util/HashMap", "java/util/ArrayList", "java/lang/Integer",
               "java/util/regex/Pattern", "java/lang/Thread", "java/util/TreeMap", "java/io/File")


def test_the_jvm_runs_on_the_chosen_jdk(bridge):
    home = bridge_java_home()
    if os.environ.get("JAVA_HOME"):
        assert home == Path(os.environ["JAVA_HOME"])
    assert bridge.java_home.resolve() == home.resolve()
    assert libjvm(home).name == "libjvm.so"


def test_a_directory_without_a_jvm_is_a_clear_error(tmp_path):
    with pytest.raises(BridgeError, match=f"no libjvm.so under {tmp_path}"):
        libjvm(tmp_path)


def test_one_bridge_from_any_thread_with_the_same_listings(bridge):
    """Worker threads ask at once (each attaches to the JVM); they share the bridge and the
    cached listings, and get what one thread alone gets."""
    source = ClassSource([])
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(number: int) -> None:
        try:
            mine = get_bridge()
            # Each thread walks the classes in its own order so that they race on each class.
            names = JDK_CLASSES[number % len(JDK_CLASSES):] + JDK_CLASSES[:number % len(JDK_CLASSES)]
            results[number] = [mine, {n: mine.class_listing(source, n) for n in names}]
        except BaseException as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert all(bridges is bridge for bridges, _listings in results.values())
    first = results[0][1]
    for _bridge, listings in results.values():
        assert all(listings[n] is first[n] for n in JDK_CLASSES)
    alone = Bridge().class_listing(source, "java/util/HashMap")
    assert alone == first["java/util/HashMap"] and alone is not first["java/util/HashMap"]


def test_listings_are_cached_per_source_class_and_analysis(bridge, tmp_path):
    fresh = Bridge(cache_size=2)
    source = ClassSource([])
    string = fresh.class_listing(source, "java/lang/String")
    assert fresh.class_listing(ClassSource([]), "java.lang.String") is string
    assert fresh.class_listing(source, "java/lang/String", precise=True) is not string
    other = ClassSource([tmp_path])  # another source: listed again
    assert fresh.class_listing(other, "java/lang/String") is not string
    assert fresh.class_listing(source, "java/lang/String") is not string  # evicted: 2 at most
    fresh.clear_cache()
    assert fresh.class_listing(source, "java/lang/Object") is not None


def test_precise_blocks_end_at_every_instruction_that_may_throw(bridge):
    source = ClassSource([])
    default = bridge.method_listing(source, "java/util/HashMap", "get", "(Ljava/lang/Object;)Ljava/lang/Object;")
    precise = bridge.method_listing(source, "java/util/HashMap", "get", "(Ljava/lang/Object;)Ljava/lang/Object;",
                                    precise=True)
    assert len(precise.blocks) > len(default.blocks)
    assert [i for b in precise.blocks for i in b.instructions] == [i for b in default.blocks for i in b.instructions]
