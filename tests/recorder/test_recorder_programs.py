"""The recorder on real programs, on every JDK of the machine.

Each program in tests/programs runs untraced and traced. Traced, it must print the same stdout
and end with the same exit code, and leave a complete trace whose events say what the program
did: the counts below are the ones each program's doc comment promises.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zstandard

from jbgui.model import layout

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"

# Program -> the exit code it ends with.
PROGRAMS = {
    "hello": 0,
    "exceptions": 0,
    "finally_blocks": 0,
    "switches": 0,
    "records": 0,
    "lambdas": 0,
    "reflection": 0,
    "classloaders": 0,
    "strict_loaders": 0,
    "blocking": 0,
    "static_init": 0,
    "system_exit": 7,
    "thread_uncaught": 0,
    "stack_overflow": 0,
    "multithread": 0,
    "main_throws": 1,
    "own_asm": 0,
    "unloading": 0,
    "locks": 0,
}


def expected_stdout(program: str) -> str:
    return (PROGRAMS_DIR / program / "expected_stdout.txt").read_text()


def assert_complete(run) -> dict:
    """The trace directory exists, is complete and holds events; returns trace.json."""
    assert run.trace_dir is not None and run.trace_dir.is_dir(), f"no trace directory\n{run.describe()}"
    meta = run.trace_json()
    assert meta["status"] == "complete", f"trace.json status {meta['status']!r}\n{run.describe()}"
    assert meta["counts"]["events"] > 0, f"no events recorded: {meta['counts']}\n{run.describe()}"
    assert meta["counts"]["lost_events"] == 0, run.describe()
    assert (run.trace_dir / "static.xml").is_file()
    assert (run.trace_dir / "threads.jsonl").is_file()
    return meta


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_program_output_untraced(program, jdk, untraced_run):
    """The programs themselves are deterministic: the untraced run prints what is checked in."""
    untraced = untraced_run(program, jdk)
    assert untraced.exit_code == PROGRAMS[program], untraced.describe()
    assert untraced.stdout == expected_stdout(program)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_traced_run_behaves_like_untraced(program, jdk, program_runs):
    untraced, traced = program_runs(program, jdk)
    assert traced.exit_code == untraced.exit_code == PROGRAMS[program], traced.describe()
    assert traced.stdout == untraced.stdout, traced.describe()
    assert_complete(traced)


def stack_trace(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(("Exception in thread", "\tat ", "Caused by"))]


@pytest.mark.parametrize("program", ["main_throws", "thread_uncaught"])
def test_uncaught_stack_traces_are_unchanged(program, jdk, program_runs):
    """Instrumented code keeps its line numbers: the JVM prints the same stack trace."""
    untraced, traced = program_runs(program, jdk)
    assert stack_trace(untraced.stderr), untraced.stderr
    assert stack_trace(traced.stderr) == stack_trace(untraced.stderr)


# ---------------------------------------------------------------------------------------------
# What the traces say, program by program.


def test_hello_main_thread(jdk, program_runs, facts):
    _, traced = program_runs("hello", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    main_method = trace.method_id("Main", "main", "([Ljava/lang/String;)V")
    assert trace.frames(main_method, main) == (1, 1, 0)
    # JDK classes are traced by default, the ones loaded before premain included.
    println = trace.method_id("java/io/PrintStream", "println", "(Ljava/lang/String;)V")
    assert trace.starts(println, main) == 1
    assert trace.block_events() > 0


def test_chunks_are_zstd_on_every_jdk_without_a_warning(jdk, program_runs, facts):
    """zstd-jni's JNI library needs native access on JDK 24+ (JEP 472), which the agent grants to
    its codec's own module (jbgui.agent.CodecModule) rather than to every unnamed module: the
    trace is zstd on every JDK (it fell back to zlib on JDK 25, at 4.9x level=method javac's
    untraced time), and the program's stderr carries no warning."""
    untraced, traced = program_runs("hello", jdk)
    assert facts(traced.trace_dir).chunk_codecs() == {layout.CODEC_ZSTD}
    assert "WARNING" not in traced.stderr, traced.describe()
    assert traced.stderr == untraced.stderr
    assert "zlib" not in (traced.trace_dir / "agent.log").read_text()


def test_a_small_trace_is_compressed_harder_than_a_full_buffer(jdk, program_runs, facts):
    """A chunk of at most 64 KiB of words (a thread's last, or a flush; never a full buffer) is
    written at zstd level 3, not the full buffers' -1 (jbgui.zstd.ZstdCodec.SMALL_LEVEL): hello
    world's trace is nearly all such chunks, and level -1 made it 1.37 bytes an event against
    1.06. Each payload must be as small as level 3 makes it here (within zstd-jni's and Python's
    builds of the same library) and smaller, in all, than level -1's."""
    _, traced = program_runs("hello", jdk)
    trace = facts(traced.trace_dir)
    written = fast = hard = 0
    for thread in trace.thread_indices:
        for codec, _filt, count, payload in trace.raw_chunks(thread):
            assert codec == layout.CODEC_ZSTD
            words = zstandard.ZstdDecompressor().decompress(payload, max_output_size=20 * count + 64)
            assert len(words) <= 64 << 10
            written += len(payload)
            fast += len(zstandard.ZstdCompressor(level=-1).compress(words))
            hard += len(zstandard.ZstdCompressor(level=3).compress(words))
    assert written <= 1.03 * hard, (written, hard, fast)
    assert written < 0.9 * fast, (written, hard, fast)


def test_a_thread_the_jvm_attaches_records_only_once_its_object_is_whole(jdk, program_runs, facts):
    """At exit the JVM attaches DestroyJavaVM, which runs its own Thread constructor (JDK 19+).
    Until that constructor has made the thread's status holder, a contended lock or a park in the
    tracer's registration crashed the JVM (SIGSEGV in set_thread_status, seen in CI once in a few
    hundred runs); so the thread must record nothing before the holder exists: no FieldHolder
    constructor, no start of the Thread constructor, and the trace goes on after it."""
    if jdk.release < 19:
        pytest.skip("before JDK 19 a thread's status is a field of Thread itself")
    _, traced = program_runs("hello", jdk)
    trace = facts(traced.trace_dir)
    # Its start record has no name yet (the constructor names it after making the holder).
    ends = [json.loads(line) for line in (traced.trace_dir / "threads.jsonl").read_text().splitlines()]
    destroy, = [row["index"] for row in ends if row["kind"] == "end" and row.get("name") == "DestroyJavaVM"]
    holder = trace.method_id("java/lang/Thread$FieldHolder", "<init>")
    assert trace.starts(holder, destroy) == 0
    for ctor in trace.method_ids("java/lang/Thread", "<init>"):
        assert trace.starts(ctor, destroy) == 0
    shutdown = trace.method_id("java/lang/Shutdown", "shutdown", "()V")
    assert trace.starts(shutdown, destroy) == 1


def test_exceptions_record_every_frame_they_leave(jdk, program_runs, facts):
    _, traced = program_runs("exceptions", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    level1, level2, level3 = (trace.method_id("Main", f"level{i}", "(I)V") for i in (1, 2, 3))
    for mid in (level1, level2, level3):
        assert trace.frames(mid, main) == (10, 5, 5)
    # In order: for even i the exception leaves level3, level2, level1; for odd i they return.
    sequence = trace.call_sequence(main, [level1, level2, level3])
    expected = []
    for i in range(10):
        expected += [f"S{level1}", f"S{level2}", f"S{level3}"]
        kind = "X" if i % 2 == 0 else "E"
        expected += [f"{kind}{level3}", f"{kind}{level2}", f"{kind}{level1}"]
    assert sequence == expected

    # A THROWABLE word with the exception's class follows every EXCEPTION_EXIT.
    for mid in (level1, level2, level3):
        assert trace.throwable_names(main, mid) == ["java/lang/IllegalStateException"] * 5

    # Recursion: frames n = 0..3 leave by the exception, the frame n = 4 of the same method catches.
    recurse = trace.method_id("Main", "recurse", "(II)I")
    assert trace.frames(recurse, main) == (7, 3, 4)
    assert trace.call_sequence(main, [recurse]) == [f"S{recurse}"] * 7 + [f"X{recurse}"] * 4 + [f"E{recurse}"] * 3
    assert trace.throwable_names(main, recurse) == ["java/lang/ArithmeticException"] * 4

    # Catch and rethrow: both frames leave by an exception.
    for name, thrown in (("wrapper", "java/lang/RuntimeException"), ("thrower", "java/lang/Exception")):
        mid = trace.method_id("Main", name, "(I)V")
        assert trace.frames(mid, main) == (3, 0, 3)
        assert trace.throwable_names(main, mid) == [thrown] * 3
    # An exception the JVM throws (no athrow): integer division by zero.
    divide = trace.method_id("Main", "divide", "(II)I")
    assert trace.frames(divide, main) == (4, 2, 2)
    assert trace.throwable_names(main, divide) == ["java/lang/ArithmeticException"] * 2
    # A constructor throwing after super() records its exceptional exit too.
    fragile = trace.method_id("Main$Fragile", "<init>", "(I)V")
    assert trace.frames(fragile, main) == (3, 2, 1)
    assert trace.throwable_names(main, fragile) == ["java/lang/UnsupportedOperationException"]
    assert trace.frames(trace.method_id("Main", "main", "([Ljava/lang/String;)V"), main) == (1, 1, 0)


def test_finally_blocks(jdk, program_runs, facts):
    _, traced = program_runs("finally_blocks", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    assert trace.frames(trace.method_id("Main", "guarded", "(I)I"), main) == (3, 2, 1)
    # The exception overrides() throws is dropped by its own finally: it returns normally.
    assert trace.frames(trace.method_id("Main", "overrides", "()I"), main) == (1, 1, 0)
    assert trace.frames(trace.method_id("Main", "nested", "(I)Ljava/lang/String;"), main) == (2, 2, 0)
    # close() of "b" throws both times, close() of "a" returns both times.
    assert trace.frames(trace.method_id("Main$Resource", "close", "()V"), main) == (4, 2, 2)
    assert trace.frames(trace.method_id("Main", "resources", "(Z)V"), main) == (2, 0, 2)


def test_switches_run_every_block(jdk, program_runs, facts, compile_program):
    _, traced = program_runs("switches", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    dense = trace.method_id("Main", "dense", "(I)Ljava/lang/String;")
    sparse = trace.method_id("Main", "sparse", "(I)I")
    assert trace.frames(dense, main) == (8, 8, 0)
    assert trace.frames(sparse, main) == (6, 6, 0)
    # The inputs reach every case, so every block of the two methods runs: tableswitch entry +
    # 6 distinct targets; lookupswitch entry + 6 targets + the join block.
    for mid, blocks in ((dense, 7), (sparse, 8)):
        assert int(trace.attributes(mid)["blocks"]) == blocks
        assert sorted(set(trace.block_indices(main, mid))) == list(range(blocks))
    for name, desc in (
        ("onString", "(Ljava/lang/String;)I"),
        ("stringExpression", "(Ljava/lang/String;)I"),
    ):
        assert trace.frames(trace.method_id("Main", name, desc), main) == (5, 5, 0)
    for name in ("onEnum", "expression"):
        assert trace.frames(trace.method_id("Main", name, "(LMain$Color;)Ljava/lang/String;"), main) == (4, 4, 0)
    # JDK 17's javac sends the enum switch through a synthetic switch-map class, initialized once
    # (JDK 21+ switches on ordinal() directly when the enum is in the same compilation unit).
    if (compile_program("switches", jdk) / "Main$1.class").exists():
        assert trace.frames(trace.method_id("Main$1", "<clinit>", "()V"), main) == (1, 1, 0)


def test_records(jdk, program_runs, facts):
    _, traced = program_runs("records", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    assert trace.frames(trace.method_id("Main$Range", "<init>", "(II)V"), main) == (4, 3, 1)
    assert trace.frames(trace.method_id("Main$Range", "length", "()I"), main) == (3, 3, 0)
    assert trace.frames(trace.method_id("Main$Point", "translate", "(II)LMain$Point;"), main) == (1, 1, 0)
    # Rect.area() is called by the sort's comparator; all calls return.
    area = trace.method_id("Main$Rect", "area", "()D")
    starts, ends, exits = trace.frames(area, main)
    assert starts >= 3 and starts == ends and exits == 0


def test_lambdas_and_streams(jdk, program_runs, facts):
    _, traced = program_runs("lambdas", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    assert trace.frames(trace.method_id("Main", "square", "(I)I"), main) == (11, 11, 0)
    assert trace.frames(trace.method_id("Main", "decorate", "(Ljava/lang/String;)Ljava/lang/String;"), main) == (2, 2, 0)
    # Lambda bodies are ordinary (synthetic) methods of Main and are traced.
    lambdas = [m.id for m in trace.methods.values() if m.class_name == "Main" and m.name.startswith("lambda$")]
    assert len(lambdas) >= 6
    assert all(trace.starts(mid) > 0 for mid in lambdas)


def test_reflection(jdk, program_runs, facts):
    _, traced = program_runs("reflection", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    target = "Main$Target"
    assert trace.frames(trace.method_id(target, "compute", "(I)I"), main) == (20, 20, 0)
    assert trace.frames(trace.method_id(target, "<init>", "(Ljava/lang/String;)V"), main) == (3, 3, 0)
    assert trace.frames(trace.method_id(target, "greet", "(Ljava/lang/String;)Ljava/lang/String;"), main) == (3, 3, 0)
    assert trace.frames(trace.method_id(target, "secret", "()Ljava/lang/String;"), main) == (1, 1, 0)
    assert trace.frames(trace.method_id(target, "fail", "()V"), main) == (1, 0, 1)


def test_two_loaders_define_two_classes(jdk, program_runs, facts):
    _, traced = program_runs("classloaders", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    greet = trace.method_ids("Plugin", "greet", "(Ljava/lang/String;)Ljava/lang/String;")
    assert len(greet) == 2, "each loader's Plugin has its own methods"
    assert sorted(trace.frames(mid, main) for mid in greet) == [(2, 2, 0), (3, 3, 0)]
    clinit = trace.method_ids("Plugin", "<clinit>", "()V")
    assert [trace.frames(mid, main) for mid in clinit] == [(1, 1, 0), (1, 1, 0)]
    # static.xml tells the two classes apart by their loader.
    loaders = sorted(trace.class_attributes(mid)["loader_id"] for mid in greet)
    assert loaders[0] != loaders[1]
    names = sorted(trace.class_attributes(mid)["loader"] for mid in greet)
    assert "loader-A" in names[0] and "loader-B" in names[1], names


def test_static_initializers(jdk, program_runs, facts):
    _, traced = program_runs("static_init", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    broken_clinit = trace.method_id("Main$Broken", "<clinit>", "()V")
    explode = trace.method_id("Main$Broken", "explode", "()I")
    assert trace.frames(broken_clinit, main) == (1, 0, 1)
    assert trace.frames(explode, main) == (1, 0, 1)
    outer = trace.method_id("Main$Outer", "<clinit>", "()V")
    inner = trace.method_id("Main$Inner", "<clinit>", "()V")
    # Outer's initializer triggers Inner's, which finishes first.
    assert trace.call_sequence(main, [outer, inner]) == [f"S{outer}", f"S{inner}", f"E{inner}", f"E{outer}"]
    assert trace.frames(trace.method_id("Main$Holder", "<clinit>", "()V"), main) == (1, 1, 0)


def test_system_exit_from_nested_call(jdk, program_runs, facts):
    _, traced = program_runs("system_exit", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    for i in range(1, 6):
        # The frames were never left: System.exit does not return or unwind.
        assert trace.frames(trace.method_id("Main", f"level{i}", "(I)V"), main) == (1, 0, 0)
    assert traced.trace_json()["end"]["reason"]


def test_uncaught_exception_in_a_thread(jdk, program_runs, facts):
    _, traced = program_runs("thread_uncaught", jdk)
    trace = facts(traced.trace_dir)
    worker = trace.thread("worker-fail")
    assert trace.frames(trace.method_id("Main$Failing", "run", "()V"), worker) == (1, 0, 1)
    assert trace.frames(trace.method_id("Main", "step", "(I)V"), worker) == (1, 0, 1)
    assert trace.frames(trace.method_id("Main", "failDeep", "(I)V"), worker) == (1, 0, 1)
    assert trace.thread_row(worker)["alive_at_exit"] is False


def test_caught_stack_overflow(jdk, program_runs, facts):
    _, traced = program_runs("stack_overflow", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    dive = trace.method_id("Main", "dive", "(J)J")
    starts, ends, exits = trace.frames(dive, main)
    assert starts > 2000  # two dives deeper than 1000 frames each
    assert ends == 0
    # Every frame the StackOverflowError left records an exceptional exit, except at the overflow
    # point itself, where no stack is left to call the recorder (docs/trace-format.md): at most a
    # few frames per overflow, and the program's exception is rethrown unchanged all the same.
    # How many depends on the frames' size: once C2 has compiled dive its frames are small, and
    # more of them unwind before the handler has the stack for its call (CI on JDK 25 saw 18
    # for the two overflows, once in about 30 runs, with 20,446 frames). A broken exit probe
    # would leave thousands.
    assert 0 <= starts - exits <= 2 * 32, (starts, exits)
    # The class id may be 0 ("unknown") for the same reason; every known one is the SOE.
    assert set(trace.throwable_names(main, dive)) - {None} == {"java/lang/StackOverflowError"}
    assert trace.frames(trace.method_id("Main", "afterwards", "(I)I"), main) == (3, 3, 0)


def test_threads_have_their_own_streams(jdk, program_runs, facts):
    _, traced = program_runs("multithread", jdk)
    trace = facts(traced.trace_dir)
    names = trace.thread_names()
    expected = ["main", "producer", "consumer"] + [f"worker-{i}" for i in range(4)] + [f"pool-{i}" for i in (1, 2, 3)]
    for name in expected:
        assert name in names
    work = trace.method_id("Main", "work", "(I)J")
    task = trace.method_id("Main", "task", "(I)I")
    for i in range(4):
        assert trace.frames(work, trace.thread(f"worker-{i}")) == (1, 1, 0)
    assert trace.starts(work) == 4
    pool = [trace.thread(f"pool-{i}") for i in (1, 2, 3)]
    assert sum(trace.starts(task, t) for t in pool) == 10
    assert trace.starts(task) == 10
    assert trace.frames(trace.method_id("Main", "produce", "(LMain$Buffer;I)V"), trace.thread("producer")) == (200, 200, 0)
    assert trace.frames(trace.method_id("Main", "consume", "(LMain$Buffer;)J"), trace.thread("consumer")) == (200, 200, 0)
    assert traced.trace_json()["counts"]["threads"] >= len(expected)
    # Each thread ends once in the thread table, however it was finished (reaped or at exit).
    ends = [json.loads(line)["index"] for line in (traced.trace_dir / "threads.jsonl").read_text().splitlines()
            if json.loads(line)["kind"] == "end"]
    assert len(ends) == len(set(ends)) == traced.trace_json()["counts"]["threads"]


def test_uncaught_exception_in_main(jdk, program_runs, facts):
    _, traced = program_runs("main_throws", jdk)
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    assert trace.frames(trace.method_id("Main", "validate", "(Ljava/lang/String;)I"), main) == (2, 1, 1)
    assert trace.frames(trace.method_id("Main", "parse", "(Ljava/lang/String;)I"), main) == (2, 1, 1)
    assert trace.frames(trace.method_id("Main", "main", "([Ljava/lang/String;)V"), main) == (1, 0, 1)


def test_program_bundling_its_own_asm(jdk, program_runs, facts):
    _, traced = program_runs("own_asm", jdk)
    assert "ClassReader.whoAmI() = program's own" in traced.stdout
    trace = facts(traced.trace_dir)
    main = trace.thread("main")
    # The program's ClassReader is traced like any class; the agent's ASM is not in the trace.
    assert trace.frames(trace.method_id("org/objectweb/asm/ClassReader", "whoAmI", "()Ljava/lang/String;"), main) == (2, 2, 0)
    classes = {m.class_name for m in trace.methods.values()}
    assert not [c for c in classes if c.startswith("org/objectweb/asm/") and c != "org/objectweb/asm/ClassReader"]
    assert not [c for c in classes if c.startswith("jbgui/")]


# ---------------------------------------------------------------------------------------------
# Options


def test_method_level_records_no_blocks(jdk, program_runs, facts):
    untraced, traced = program_runs("exceptions", jdk, level="method")
    assert traced.exit_code == untraced.exit_code and traced.stdout == untraced.stdout
    assert_complete(traced)
    trace = facts(traced.trace_dir)
    assert trace.block_events() == 0
    main = trace.thread("main")
    assert trace.frames(trace.method_id("Main", "recurse", "(II)I"), main) == (7, 3, 4)


def test_shared_stream_mode(jdk, program_runs, facts):
    untraced, traced = program_runs("multithread", jdk, mode=1)
    assert traced.exit_code == untraced.exit_code and traced.stdout == untraced.stdout
    assert_complete(traced)
    assert (traced.trace_dir / "events" / "shared.jbt").is_file()
    assert not list((traced.trace_dir / "events").glob("T*.jbt"))
    # One globally ordered stream; THREAD_SWITCH words say whose events follow.
    trace = facts(traced.trace_dir)
    words, owners = trace.shared_by_thread()
    work = trace.method_id("Main", "work", "(I)J")
    work_threads = owners[words == layout.method_start(work)]
    assert sorted(work_threads.tolist()) == sorted(trace.thread(f"worker-{i}") for i in range(4))
    produce = trace.method_id("Main", "produce", "(LMain$Buffer;I)V")
    assert set(owners[words == layout.method_start(produce)].tolist()) == {trace.thread("producer")}
    assert int(np.count_nonzero(words == layout.method_start(produce))) == 200
