"""The probes' slow paths are never inlined into the traced code (jbgui.agent.build explains why).

The runtime marks them ``@jdk.internal.vm.annotation.DontInline``, an annotation HotSpot honours
only in classes of the bootstrap loader: it takes the runtime being defined there, and the class
files carrying the annotation, for the JIT compilers to say "don't inline by annotation" at every
call site of the hand-off of a full buffer (``ThreadTrace.overflow``) and of a thread's lookup
miss (``ThreadRegistry.currentSlow``). Before, C2 rated the hand-off's call site hot (it runs
once per buffer, thousands of times) and inlined the whole hand-off to the writer into every
probe: methods of a few bytes compiled to a hundred kilobytes of machine code. The program here
fills the buffer hundreds of times; -XX:+PrintInlining lists what the compilers decided.
"""

from __future__ import annotations

import re

from classfile import code_lengths

PRINT_INLINING = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+PrintInlining"]


def decisions(stdout: str, callee: str) -> list[str]:
    """What the compilers said at each call site of ``callee`` (``jbgui.runtime.Class::method``):
    ``inline (hot)``, ``don't inline by annotation``, … (JDK 25 writes a refusal as ``failed to
    inline: …``; the compiler threads' lines may run into each other, so only the first words
    count)."""
    pattern = re.compile(r"@ \d+\s+" + re.escape(callee) + r" \(\d+ bytes\)\s+(?:failed to inline: )?([a-z' ]+)")
    return [m.group(1).strip() for m in pattern.finditer(stdout)]


def inlined(decision: str) -> bool:
    return decision.startswith(("inline", "force inline"))


def test_decisions_are_read_from_print_inlining():
    """The reader finds a decision and tells an inlined call from a refused one."""
    out = ("      @ 29   jbgui.runtime.ThreadTrace::overflow (28 bytes)   don't inline by annotation\n"
           "    @ 17   jbgui.runtime.ThreadTrace::put (33 bytes)   inline (hot)\n"
           "      @ 29   jbgui.runtime.ThreadTrace::overflow (28 bytes)   failed to inline: don't inline by annotation\n"
           "    @ 17   jbgui.runtime.ThreadTrace::overflow (28 bytes)   inline (hot)   @ 3 x.Y::z (1 bytes)\n")
    said = decisions(out, "jbgui.runtime.ThreadTrace::overflow")
    assert said == ["don't inline by annotation"] * 2 + ["inline"]
    assert [inlined(d) for d in said] == [False, False, True]
    assert decisions(out, "jbgui.runtime.ThreadTrace::put") == ["inline"]


def test_slow_paths_are_not_inlined(record, jdk):
    run = record("hot_loop", jdk, jvm_args=PRINT_INLINING)
    assert run.exit_code == 0, run.describe()
    assert "sum 33863034100160" in run.stdout
    for slow in ("jbgui.runtime.ThreadTrace::overflow", "jbgui.runtime.ThreadRegistry::currentSlow"):
        said = decisions(run.stdout, slow)
        assert "don't inline by annotation" in said, (slow, sorted(set(said)))
        assert not any(inlined(d) for d in said), (slow, sorted(set(said)))
    # the fast path the probes call stays small enough to be inlined
    assert any(inlined(d) for d in decisions(run.stdout, "jbgui.runtime.ThreadTrace::put"))
    # a probe: C2 inlines it in the hot loop, C1 calls it
    said = decisions(run.stdout, "jbgui.runtime.Tracer::block")
    assert any(inlined(d) for d in said) and not all(inlined(d) for d in said), sorted(set(said))


def compilations(stdout: str, method: str) -> list[tuple[int, str]]:
    """-XX:+PrintCompilation's lines for ``method`` (``Main::add``): (tier, what followed the
    method's size: "" for a compilation begun, "COMPILE SKIPPED: …", "made not entrant")."""
    pattern = re.compile(r"^[ \t]*\d+[ \t]+\d+[ \t]+[%sbn! \t]*(\d)[ \t]+" + re.escape(method) + r" \(\d+ bytes\)[ \t]*(.*)$",
                         re.M)
    return [(int(m.group(1)), m.group(2).strip()) for m in pattern.finditer(stdout)]


def test_compilations_are_read_from_print_compilation():
    out = ("    286  523   !   3       Main::addLoop (133 bytes)\n"
           "    286  523   !   3       Main::addLoop (133 bytes)   COMPILE SKIPPED: invalid parsing (retry at different tier)\n"
           "    325  547 % !   4       Main::main @ 34 (132 bytes)\n"
           "    330  539   !   4       Main::addLoop (133 bytes)\n"
           "    331  540       3       Main::add (33 bytes)\n")
    assert compilations(out, "Main::addLoop") == [(3, ""), (3, "COMPILE SKIPPED: invalid parsing (retry at different tier)"),
                                                  (4, "")]
    assert compilations(out, "Main::add") == [(3, "")]


def test_synchronized_blocks_are_compiled(record, jdk):
    """Methods with synchronized blocks compile traced as untraced: C1 and C2 refused all of them
    while the stamp after each monitorenter lay outside the block's own handler (ProbeInserter,
    heldStamp), and they ran interpreted for the whole run. Which tiers get there before the
    program ends depends on the machine's load (on a busy one JDK 25 had not begun C2's), so the
    test asks for a compilation and no refusal."""
    run = record("locks", jdk, jvm_args=["-XX:+PrintCompilation"])
    assert run.exit_code == 0, run.describe()
    assert "sum 6499993000000 count 6500000" in run.stdout
    for method in ("Main::add", "Main::addLoop"):
        said = compilations(run.stdout, method)
        assert not [s for s in said if "SKIPPED" in s[1]], (method, said)
        assert [tier for tier, after in said if after == "" and tier >= 1], (method, said)


# --------------------------------------------------------------------------------------------
# Which compiler inlines what (jbgui/runtime/Tracer.java says why). The probes the instrumented
# code calls are larger than HotSpot's MaxInlineSize (35 bytes of bytecode), which is all C1
# inlines, and within FreqInlineSize (325 bytes), which C2 inlines at hot call sites: C1's code
# calls them, C2's inlines them where they run often. With every probe inlined by C1 too, traced
# javac took 1.23 times as long (1.031 and 0.836 of the previous agent's time, Tracer.java). The
# helpers they call fit MaxInlineSize, so C2 inlines a probe whole; a mask or a check added to
# ThreadTrace.put took it to 36 bytes once.

MAX_INLINE_SIZE = 35
FREQ_INLINE_SIZE = 325
# "leaf": the longer of its two overloads (static, instance), the one probe of a leaf method.
PROBES = {"jbgui/runtime/Tracer": ("enter", "enterInstance", "block", "blockChecked", "exit", "leaf")}
# The entry probes' other cases (a thread to look up, a receiver's class, a full buffer) go to
# Tracer.enterSlow (Tracer.leafSlow for a leaf's probe), one call not inlined; ThreadTrace.start, startInstance, receiverWord, classId
# and ThreadRegistry.current run there, off the fast paths.
FAST_PATHS = {
    "jbgui/runtime/ThreadTrace": ("put", "put2", "putUnchecked", "check"),
    "jbgui/runtime/ThreadObjects": ("id", "store"),
}


def test_code_lengths_are_read_from_class_files(tmp_path, default_jdk):
    """The reader gives javac's own count: a method of three instructions is 3 bytes long."""
    import subprocess

    (tmp_path / "A.java").write_text("class A { int x; int get() { return x; } void big(int i) { x = i * 31 + 7; } }\n")
    subprocess.run([default_jdk.javac, "-d", str(tmp_path), str(tmp_path / "A.java")], check=True)
    lengths = code_lengths((tmp_path / "A.class").read_bytes())
    assert lengths["get"] == 5                                    # aload_0 getfield #2 ireturn
    assert lengths["big"] == 12 and lengths["<init>"] == 5   # aload_0 iload_1 bipush imul bipush iadd putfield return


def lengths_in_runtime(agent_jar, classes: dict[str, tuple[str, ...]]) -> dict[str, int]:
    import zipfile

    from jbgui.agent import build

    out = {}
    with zipfile.ZipFile(agent_jar.parent / build.RUNTIME_JAR) as jar:
        for cls, methods in classes.items():
            lengths = code_lengths(jar.read(cls + ".class"))
            for m in methods:
                assert m in lengths, f"{cls}.{m} is gone: update this test"
                out[f"{cls}.{m}"] = lengths[m]
    return out


def test_probe_fast_paths_fit_max_inline_size(agent_jar):
    too_big = {m: n for m, n in lengths_in_runtime(agent_jar, FAST_PATHS).items() if n > MAX_INLINE_SIZE}
    assert not too_big, f"probe fast paths over {MAX_INLINE_SIZE} bytes: {too_big}"


def test_probes_are_for_c2_to_inline_and_c1_to_call(agent_jar):
    sizes = lengths_in_runtime(agent_jar, PROBES)
    wrong = {m: n for m, n in sizes.items() if not MAX_INLINE_SIZE < n <= FREQ_INLINE_SIZE}
    assert not wrong, f"probes outside ({MAX_INLINE_SIZE}, {FREQ_INLINE_SIZE}] bytes: {wrong}"


# The probes a loop record's cycle runs every step (jbgui.instr.LoopCycles) fit MaxInlineSize, so
# that both compilers inline them wherever they are: such a loop often runs long in a method called
# a few times, where C2 does not rate the call hot, and loopHead at 44 bytes was a call on every
# step of the compute kernel's sieve ("too big", -XX:+PrintInlining). loopExit too: an inner
# loop's exit runs on every step of the loop around it, mostly with no steps pending, and at 52
# bytes it was a call on each of the sieve's 120 M outer steps. Their slow paths (Tracer.loopFull,
# Tracer.loopStore, ThreadTrace.putLoop) are off the step's path.
LOOP_STEP_PROBES = {"jbgui/runtime/Tracer": ("loopHead", "loopMark", "loopJoin", "loopExit")}


def test_a_cycles_probes_fit_max_inline_size(agent_jar):
    too_big = {m: n for m, n in lengths_in_runtime(agent_jar, LOOP_STEP_PROBES).items() if n > MAX_INLINE_SIZE}
    assert not too_big, f"loop probes over {MAX_INLINE_SIZE} bytes: {too_big}"


def test_a_loops_first_step_path_is_inlined_however_rare(record, jdk):
    """ThreadTrace.mark, the loop probes' first-step path (Tracer.loopMark), is inlined wherever it
    is called: in a matrix product's innermost loop, entered on every step of the loop around it,
    JDK 25's C2 rated that call rare ("low call site frequency") and left a call in the loop's
    body, which made the loop 3.5 times slower than on JDK 17 (docs/recorder-cost.md,
    "2026-12-04"). Forced inline by annotation now."""
    run = record("nested_loops", jdk, jvm_args=PRINT_INLINING)
    assert run.exit_code == 0, run.describe()
    assert "c 2003300" in run.stdout
    said = decisions(run.stdout, "jbgui.runtime.ThreadTrace::mark")
    assert said, "no decision about ThreadTrace::mark: was the loop compiled?"
    assert all(inlined(d) for d in said), sorted(set(said))
