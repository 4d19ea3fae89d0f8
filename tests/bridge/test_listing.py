"""The bridge lists blocks exactly as the recorder describes them: for every method of a program's
classes and of JDK classes read from the runtime image, the bridge's listing from the class files
equals what a run recorded with ``instructions=on`` wrote in static.xml (index, offsets, lines,
metrics, call sites, handlers and instruction text), with either block analysis."""

from __future__ import annotations

from pathlib import Path

import pytest
from block_tuples import class_blocks, float_constants_by_value, listing_blocks

from jbgui.bridge import BridgeError, ClassSource, class_source_for_trace, listing_for_trace
from jbgui.bridge.jvm import java_release

# (program, bba): branches and switches, handlers and finally copies, lambdas and invokedynamic,
# loops whose static leaf calls the probes replace with the leaf's body (loop records).
RECORDINGS = [("exception_paths", "default"), ("switches", "default"), ("finally_blocks", "default"),
              ("lambdas", "default"), ("exception_paths", "precise"), ("loop_records", "default")]
JDK_SAMPLE = ("java/lang/String", "java/util/HashMap", "java/util/ArrayList", "java/lang/Integer",
              "java/lang/invoke/MethodHandles$Lookup", "java/util/concurrent/ConcurrentHashMap")


def program_classes(run) -> Path:
    return Path(run.command[run.command.index("-cp") + 1])


@pytest.fixture(params=RECORDINGS, ids=[f"{p}-{b}" for p, b in RECORDINGS])
def recording(request, recorded):
    return recorded(*request.param)


def test_program_classes_are_listed_as_recorded(bridge, recording):
    run, precise, blocks = recording
    source = class_source_for_trace(run.trace_dir)
    own = sorted(p.relative_to(program_classes(run)).with_suffix("").as_posix()
                 for p in program_classes(run).rglob("*.class"))
    listed = [name for name in own if name in blocks]
    assert "Main" in listed, sorted(blocks)[:10]
    for name in listed:
        assert class_blocks(bridge.class_listing(source, name, precise).methods) == blocks[name], name


def image_classes(blocks) -> list[str]:
    """The JDK classes a run loaded from the runtime image: defined by the boot or platform
    loader and compiled from a .java file (not spun at run time, as reflection accessors and
    method handle species are)."""
    return sorted(name for name in blocks if blocks.loaders[name] in ("bootstrap", "platform")
                  and blocks.source_files[name].endswith(".java"))


def test_jdk_classes_are_listed_as_recorded(bridge, recording):
    """A sample of the JDK classes the run loaded, read from the image of the JDK that ran it."""
    run, precise, blocks = recording
    source = class_source_for_trace(run.trace_dir)
    chosen = [name for name in JDK_SAMPLE if name in blocks]
    assert len(chosen) >= 4, image_classes(blocks)[:20]
    # Every 16th of the others as well, so the sample reaches packages nobody chose.
    for name in chosen + image_classes(blocks)[::16]:
        assert class_blocks(bridge.class_listing(source, name, precise).methods) == blocks[name], name


@pytest.mark.slow
def test_every_loaded_jdk_class_is_listed_as_recorded(bridge, recorded):
    """Every JDK class a run loaded (some 900)."""
    run, precise, blocks = recorded("switches")
    source = class_source_for_trace(run.trace_dir)
    mismatched = [name for name in image_classes(blocks)
                  if class_blocks(bridge.class_listing(source, name, precise).methods) != blocks[name]]
    assert not mismatched


def test_one_method_from_class_bytes(bridge, recorded):
    run, precise, blocks = recorded("exception_paths")
    data = (program_classes(run) / "Main.class").read_bytes()
    alone = bridge.describe(data, precise, method=("main", "([Ljava/lang/String;)V"))
    assert list(alone.methods) == [("main", "([Ljava/lang/String;)V")]
    assert listing_blocks(alone.methods[("main", "([Ljava/lang/String;)V")]) == \
        blocks["Main"][("main", "([Ljava/lang/String;)V")]
    assert bridge.describe(data, precise, method=("absent", "()V")).methods == {}


def test_the_listing_carries_the_class_and_method_facts(bridge, recorded):
    run, precise, _blocks = recorded("exception_paths")
    listing = bridge.class_listing(class_source_for_trace(run.trace_dir), "Main", precise)
    assert listing.name == "Main" and listing.super_name == "java/lang/Object"
    assert listing.source_file == "Main.java" and listing.version >= 61 and not listing.warnings
    main = listing.method("main", "([Ljava/lang/String;)V")
    assert main.class_name == "Main" and main.code_length == main.blocks[-1].end
    first = main.blocks[0]
    assert first.instructions[0][0] == first.start == 0
    assert main.block_at(first.start) is first and main.block_at(main.code_length) is None
    assert first.metric("bytecodes") == len(first.instructions)
    with pytest.raises(BridgeError, match=r"Main has no method nothing\(\)V"):
        listing.method("nothing", "()V")


def test_listing_for_trace_gives_the_recorded_text(recorded):
    """What the explorer's method view asks for: block index → the instruction lines."""
    run, precise, blocks = recorded("exception_paths", "precise")
    listing = listing_for_trace(run.trace_dir, "Main", "main", "([Ljava/lang/String;)V", precise)
    assert listing == {b[0]: b[7] for b in blocks["Main"][("main", "([Ljava/lang/String;)V")]}


def test_trace_method_listing_uses_the_traces_block_analysis(bridge, recorded):
    for bba in ("default", "precise"):
        run, _precise, blocks = recorded("exception_paths", bba)
        method = next(iter(blocks["Main"]))
        found = bridge.trace_method_listing(run.trace_dir, "Main", *method)
        assert listing_blocks(found) == blocks["Main"][method]


def test_a_missing_class_is_a_clear_error(bridge, recorded):
    run, precise, _blocks = recorded("exception_paths")
    source = class_source_for_trace(run.trace_dir)
    with pytest.raises(BridgeError) as raised:
        bridge.class_listing(source, "com/example/Missing", precise)
    message = str(raised.value)
    assert "class com.example.Missing not found in" in message
    assert str(program_classes(run)) in message and str(source.java_home) in message


def test_a_missing_method_is_a_clear_error(bridge, recorded):
    run, precise, _blocks = recorded("exception_paths")
    with pytest.raises(BridgeError, match=r"Main has no method nothing\(\)V in the class file found in"):
        listing_for_trace(run.trace_dir, "Main", "nothing", "()V", precise)


def test_a_damaged_class_file_is_a_clear_error(bridge, recorded):
    run, precise, _blocks = recorded("exception_paths")
    data = (program_classes(run) / "Main.class").read_bytes()
    with pytest.raises(BridgeError, match=r"cannot analyse Main.class cut short: java\.lang\.\w+Exception"):
        bridge.describe(data[: len(data) // 2], precise, what="Main.class cut short")
    with pytest.raises(BridgeError, match="cannot analyse a text: it is not a class file"):
        bridge.describe(b"public class Main {}", precise, what="a text")


def test_another_jdks_image_from_the_bridges_jvm(bridge, recorded, jdk):
    """Another JDK's run lists as recorded, its JDK classes read from its own image by the
    bridge's JVM; for a JDK newer than ASM 9.4 knows (21 and later) through AsmSupport.

    One difference is known and allowed: float and double constants are printed by the JVM that
    lists, and JDK 19 changed Float.toString and Double.toString (the shortest decimal that
    round-trips): ``ldc 1.17549435E-38`` on 17 is ``ldc 1.1754944E-38`` on 25. Across that change
    the text of such constants is compared by value; everything else exactly."""
    if jdk.home.resolve() == bridge.java_home.resolve():
        pytest.skip("the bridge's own JDK: the other tests cover it")
    run, _precise, blocks = recorded("switches", jdk=jdk)
    source = class_source_for_trace(run.trace_dir)
    assert source.java_home == jdk.home
    data, where = source.find("java/lang/Object")
    assert where.startswith("jrt:/java.base/") and int.from_bytes(data[6:8], "big") == 44 + jdk.release
    across = (jdk.release >= 19) != (java_release(bridge.java_home) >= 19)
    same = float_constants_by_value if across else (lambda blocks: blocks)
    for name in ["Main", *JDK_SAMPLE[:3], *image_classes(blocks)[::16]]:
        listing = bridge.class_listing(source, name)
        assert listing.version == 44 + jdk.release
        assert same(class_blocks(listing.methods)) == same(blocks[name]), name


def test_classes_in_a_jar(bridge, recorded, tmp_path):
    import zipfile

    run, precise, blocks = recorded("lambdas")
    jar = tmp_path / "app.jar"
    with zipfile.ZipFile(jar, "w") as z:
        for f in program_classes(run).rglob("*.class"):
            z.write(f, f.relative_to(program_classes(run)).as_posix())
    source = ClassSource([jar])
    assert source.find("Main")[1] == f"{jar}!/Main.class"
    assert class_blocks(bridge.class_listing(source, "Main", precise).methods) == blocks["Main"]


def test_a_string_constant_holding_newlines_stays_one_instruction(bridge, compile_program, default_jdk, tmp_path):
    """static.xml joins instruction lines with newlines, so there a constant holding one reads
    like two instructions; the bridge's listing keeps it one."""
    (tmp_path / "Main.java").write_text(
        'public class Main {\n'
        '    public static void main(String[] args) {\n'
        '        System.out.println("first\\n12 nop\\nlast");\n'
        '    }\n'
        '}\n')
    classes = compile_program(tmp_path, default_jdk)
    main = bridge.class_listing(ClassSource([classes]), "Main").method("main", "([Ljava/lang/String;)V")
    instructions = [i for b in main.blocks for i in b.instructions]
    assert (3, 'ldc "first\n12 nop\nlast"') in instructions
    assert len(instructions) == sum(b.metric("bytecodes") for b in main.blocks) == 4
    assert 'ldc "first\n12 nop\nlast"' in main.blocks[0].text
