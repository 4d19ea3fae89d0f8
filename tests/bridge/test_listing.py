"""The JVM bridge lists blocks exactly as the recorder numbers them: for every method of the
program's classes and of a sample of JDK classes, the bridge's listing from the class files equals
what a run recorded with ``instructions=on`` wrote in static.xml (index, offsets, lines and the
instruction text), with either block analysis."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from lxml import etree

from jbgui.bridge import BridgeError, ClassSource, class_source_for_trace, listing_for_trace
from jbgui.bridge.listing import class_listings

JDK_SAMPLE = ("java/lang/String", "java/util/HashMap", "java/util/ArrayList", "java/lang/Integer",
              "java/util/regex/Pattern")


def recorded_blocks(trace_dir: Path) -> dict[str, dict[tuple[str, str], list[tuple]]]:
    """static.xml's blocks: class → (method, desc) → [(index, start, end, lines, instructions)]."""
    out: dict[str, dict] = {}
    for _e, cls in etree.iterparse(str(trace_dir / "static.xml"), tag="class", resolve_entities=False,
                                   no_network=True, huge_tree=True):
        methods = {}
        for m in cls.iterfind("method"):
            blocks = [(int(b.get("index")), int(b.get("start")), int(b.get("end")),
                       [int(x) for x in (b.get("lines") or "").split()], b.findtext("instructions") or "")
                      for b in m.iterfind("basic_block")]
            if blocks:
                methods[(m.get("name"), m.get("desc"))] = blocks
        if methods:
            out[cls.get("name")] = methods
        cls.clear()
    return out


def bridge_blocks(source: ClassSource, name: str, precise: bool) -> dict[tuple[str, str], list[tuple]]:
    return {key: [(b.index, b.start, b.end, b.lines, b.instructions) for b in listing.blocks]
            for key, listing in class_listings(source, name, precise).items() if listing.blocks}


@pytest.fixture(scope="module", params=["default", "precise"])
def recorded(request, record, default_jdk):
    run = record("exception_paths", default_jdk, instructions=True, bba=request.param)
    assert run.exit_code == 0, run.describe()
    return run, request.param == "precise", recorded_blocks(run.trace_dir)


def test_program_classes_are_listed_as_recorded(recorded):
    run, precise, blocks = recorded
    source = class_source_for_trace(run.trace_dir)
    program = [name for name in blocks if name.split("$")[0] == "Main"]
    assert program
    for name in program:
        assert bridge_blocks(source, name, precise) == blocks[name], name


def test_jdk_classes_are_listed_as_recorded(recorded):
    run, precise, blocks = recorded
    source = class_source_for_trace(run.trace_dir)
    sample = [name for name in JDK_SAMPLE if name in blocks]
    assert len(sample) >= 3, sorted(blocks)[:20]
    for name in sample:
        mine = bridge_blocks(source, name, precise)
        theirs = blocks[name]
        assert mine.keys() >= theirs.keys()
        for key, value in theirs.items():
            assert mine[key] == value, (name, key)


def test_listing_for_one_method(recorded):
    run, precise, blocks = recorded
    listing = listing_for_trace(run.trace_dir, "Main", "main", "([Ljava/lang/String;)V", precise)
    expected = {b[0]: b[4] for b in blocks["Main"][("main", "([Ljava/lang/String;)V")]}
    assert listing == expected


def test_a_missing_class_is_a_clear_error(recorded):
    run, _precise, _blocks = recorded
    with pytest.raises(BridgeError, match=r"class com\.example\.Missing not found in .*JDK image"):
        listing_for_trace(run.trace_dir, "com/example/Missing", "x", "()V")


def test_a_missing_method_is_a_clear_error(recorded):
    run, _precise, _blocks = recorded
    with pytest.raises(BridgeError, match="has no method nothing"):
        listing_for_trace(run.trace_dir, "Main", "nothing", "()V")


def test_classes_in_a_jar(recorded, tmp_path):
    run, precise, blocks = recorded
    classes = Path(run.command[run.command.index("-cp") + 1])
    jar = tmp_path / "app.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for f in classes.rglob("*.class"):
            z.write(f, f.relative_to(classes).as_posix())
    source = ClassSource([jar])
    assert bridge_blocks(source, "Main", precise) == blocks["Main"]


def test_another_jdks_image(jdk):
    """The bridge's JVM (the default JDK) reads the runtime image of each installed JDK."""
    source = ClassSource([], jdk.home)
    data = source.read("java/lang/Object")
    assert data[:4] == b"\xca\xfe\xba\xbe"
    major = int.from_bytes(data[6:8], "big")
    assert major == 44 + jdk.release
    listings = class_listings(source, "java/lang/Object", False)
    assert ("toString", "()Ljava/lang/String;") in listings
