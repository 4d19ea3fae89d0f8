"""The JDI oracle itself, checked against what the test programs are known to do, on every JDK.

The oracle (JdiOracle.java, oracle.py) is the reference that trace replay is compared with
(tests/model/test_replay_oracle.py), so it is checked here on its own: exact call sequences and
exception records of programs whose behaviour is spelled out in their sources, and the facts
about JDI it relies on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle import OracleRun, cached_run_oracle, parse_log

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"
MAIN = "Main.main([Ljava/lang/String;)V"


@pytest.fixture(scope="session")
def oracle_of(compile_program, tmp_path_factory):
    """``oracle_of(program, jdk) -> OracleRun``: the program under JDI, once per session; its
    stdout must be the program's expected output."""

    def run(program: str, jdk) -> OracleRun:
        result = cached_run_oracle(jdk, compile_program(program, jdk), "Main", (), ("Main",),
                                   work_dir=tmp_path_factory.mktemp(f"oracle-{program}-{jdk.id}"))
        expected = (PROGRAMS_DIR / program / "expected_stdout.txt").read_text()
        assert result.stdout == expected, f"{program} printed something else under JDI:\n{result.stderr[-2000:]}"
        return result

    return run


def raw_lines(run: OracleRun, kinds: tuple[str, ...]) -> list[list[str]]:
    return [line.split("\t") for line in run.log_path.read_text().splitlines() if line.startswith(kinds)]


def test_exceptions_program_calls(jdk, oracle_of):
    """tests/programs/exceptions: every application call in order, with its application depth."""
    main = oracle_of("exceptions", jdk).thread("main")
    expected = [("Main.<clinit>()V", 0), (MAIN, 0)]
    for _ in range(10):
        expected += [("Main.level1(I)V", 1), ("Main.level2(I)V", 2), ("Main.level3(I)V", 3)]
    expected += [("Main.recurse(II)I", d) for d in range(1, 8)]
    for _ in range(3):
        expected += [("Main.wrapper(I)V", 1), ("Main.thrower(I)V", 2)]
    expected += [("Main.divide(II)I", 1)] * 4
    expected += [("Main$Fragile.<init>(I)V", 1)] * 3
    assert [(c.method, c.depth) for c in main.calls] == expected


def test_exceptions_program_exceptions(jdk, oracle_of):
    """Throw and catch ordinals, including the recursion caught by its frame n = 4 (ordinal 34)
    rather than by the innermost or outermost frame of the same method."""
    main = oracle_of("exceptions", jdk).thread("main")
    ise, ae, exc, rte = ("java.lang." + n for n in ("IllegalStateException", "ArithmeticException",
                                                    "Exception", "RuntimeException"))
    expected = [(ise, 4 + 3 * i, 1, MAIN) for i in (0, 2, 4, 6, 8)]
    expected.append((ae, 38, 34, "Main.recurse(II)I"))
    for k in range(3):
        expected += [(exc, 40 + 2 * k, 39 + 2 * k, "Main.wrapper(I)V"), (rte, 39 + 2 * k, 1, MAIN)]
    expected += [(ae, 46, 1, MAIN), (ae, 48, 1, MAIN)]
    expected.append(("java.lang.UnsupportedOperationException", 50, 1, MAIN))
    assert [e.key for e in main.exceptions] == expected
    recursion = main.exceptions[5]
    assert recursion.popped == (38, 37, 36, 35)
    assert [main.calls[i].depth for i in (34, 38)] == [3, 7]


def test_no_exit_events_for_frames_popped_by_exceptions(jdk, oracle_of):
    """Measured: JDI delivers no method exit for a frame an exception pops. Between a throw and
    the hit of the breakpoint at its catch location the thread reports nothing else, and every
    call ends either by one exit event or among the frames an exception popped."""
    run = oracle_of("exceptions", jdk)
    pending = None
    for fields in raw_lines(run, ("THROW", "CATCH", "EXIT", "ENTER")):
        if pending is not None:
            assert fields[0] == "CATCH" and fields[3] == pending, fields
            pending = None
        elif fields[0] == "THROW" and fields[5] != "none":
            pending = fields[5]
    main = run.thread("main")
    popped = sum(len(e.popped) for e in main.exceptions)
    assert (main.exits, popped) == (24, 28)
    assert main.exits + popped == len(main.calls)


def test_recursion_caught_by_the_frame_whose_try_is_active(jdk, oracle_of):
    """exception_paths: dive(4, 3) throws at n = 0 and is caught at n = 3, the second frame of
    five; dive(3, 1) is caught by the frame just above the throwing one."""
    main = oracle_of("exception_paths", jdk).thread("main")
    dives = [i for i, c in enumerate(main.calls) if c.method == "Main.dive(II)I"]
    assert len(dives) == 5 + 4
    first, second = dives[:5], dives[5:]
    assert [main.calls[i].depth for i in dives] == [1, 2, 3, 4, 5, 1, 2, 3, 4]
    records = [e for e in main.exceptions if e.exc_class == "java.lang.ArithmeticException"]
    assert [(e.throw_call, e.catch_call, e.popped) for e in records] == [
        (first[4], first[1], (first[4], first[3], first[2])),
        (second[3], second[2], (second[3],)),
    ]


def test_same_frame_rethrow_and_finally(jdk, oracle_of):
    """exception_paths: caught in the throwing frame (explicit and implicit), rethrown from a
    catch block, replaced in a finally block, and javac's handlers of synchronized blocks (catch
    all, release the monitor, rethrow from the same frame)."""
    main = oracle_of("exception_paths", jdk).thread("main")
    calls = main.call_names

    def ordinal(method, nth=0):
        return [i for i, m in enumerate(calls) if m == method][nth]

    def records_of(method, nth=0):
        o = ordinal(method, nth)
        return [(e.exc_class.rsplit(".", 1)[1], e.throw_call, e.catch_call, e.popped)
                for e in main.exceptions if e.throw_call == o or e.catch_call == o]

    same = ordinal("Main.sameFrame(I)I", 1)
    assert records_of("Main.sameFrame(I)I", 1) == [("IllegalArgumentException", same, same, ())]
    implicit = ordinal("Main.sameFrameImplicit([II)I", 1)
    assert records_of("Main.sameFrameImplicit([II)I", 1) == [("ArrayIndexOutOfBoundsException", implicit, implicit, ())]
    # rethrowWrapped(3): deep3 throws, deep1's finally catches and rethrows, rethrowWrapped wraps.
    wrapped = ordinal("Main.rethrowWrapped(I)V", 2)
    d1, d2, d3 = wrapped + 1, wrapped + 2, wrapped + 3
    assert calls[d1:d3 + 1] == ["Main.deep1(I)V", "Main.deep2(I)V", "Main.deep3(I)V"]
    assert records_of("Main.rethrowWrapped(I)V", 2) == [
        ("IllegalStateException", d1, wrapped, (d1,)),
        ("RuntimeException", wrapped, 1, (wrapped,)),
    ]
    fin = ordinal("Main.throwFromFinally(Z)V", 1)
    assert records_of("Main.throwFromFinally(Z)V", 1) == [
        ("IllegalStateException", fin, fin, ()),
        ("UnsupportedOperationException", fin, 1, (fin,)),
    ]
    nested = ordinal("Main.nestedSync(I)V")
    assert records_of("Main.nestedSync(I)V") == [
        ("IllegalStateException", nested + 1, nested, (nested + 1,)),  # deep3's, the inner block's handler
        ("IllegalStateException", nested, nested, ()),  # rethrown to the outer block's handler
        ("IllegalStateException", nested, 1, (nested,)),  # rethrown out of nestedSync
    ]


def test_native_frames(jdk, oracle_of):
    """Measured: an exception a native method throws is reported at the native frame (bci -1);
    the innermost application frame is its caller."""
    main = oracle_of("native_calls", jdk).thread("main")
    calls = main.call_names
    by_class = {}
    for e in main.exceptions:
        by_class.setdefault(e.exc_class.rsplit(".", 1)[1], []).append(e)
    aioobe, = by_class["ArrayIndexOutOfBoundsException"]
    assert aioobe.throw_location.startswith("java.lang.System.arraycopy(") and aioobe.throw_location.endswith("@-1")
    assert (calls[aioobe.throw_call], calls[aioobe.popped[1]], aioobe.catch_call) == (
        "Main.copy([II)[I", "Main.copyOuter([II)I", 1)
    store, = by_class["ArrayStoreException"]
    assert store.throw_call == store.catch_call == calls.index("Main.storeMismatch()Ljava/lang/String;")
    clone, = by_class["CloneNotSupportedException"]
    assert clone.throw_location == "java.lang.Object.clone()Ljava/lang/Object;@-1"
    assert calls[clone.throw_call] == "Main$NotCloneable.copyOf()Ljava/lang/Object;"
    sleep, = by_class["InterruptedException"]
    assert sleep.throw_call == sleep.catch_call == calls.index("Main.sleep(Z)Ljava/lang/String;") + 1
    cnfe, = by_class["ClassNotFoundException"]
    assert cnfe.throw_call == cnfe.catch_call == calls.index("Main.load(Ljava/lang/String;)Ljava/lang/String;")
    assert not cnfe.throw_location.startswith("Main")
    # A static initializer run by Class.forName (through the native Class.forName0) calls
    # application code, which throws and catches inside it.
    loaded = calls.index("Main$Loaded.<clinit>()V")
    assert main.calls[loaded].depth == 2 and calls[loaded + 1:loaded + 3] == ["Main.helper(I)I"] * 2


def test_reflection_boundary(jdk, oracle_of):
    """Measured: the target's exception is consumed by the reflection machinery. JDK 17 does it
    in native code (the VM's invoke0), which JVMTI does not see as a catch; JDK 18 and later
    catch it in DirectMethodHandleAccessor. Either way an InvocationTargetException follows."""
    main = oracle_of("native_calls", jdk).thread("main")
    calls = main.call_names
    unsafe = [i for i, m in enumerate(calls) if m == "Main$Target.unsafe(I)I"]
    assert len(unsafe) == 3
    for target in unsafe[1:]:
        helper = target + 1
        first, second = [e for e in main.exceptions if e.throw_call in (helper, target - 1)]
        assert (first.exc_class, first.throw_call, first.catch_call, first.popped) == (
            "java.lang.IllegalStateException", helper, None, (helper, target))
        if jdk.release < 18:
            assert first.catch_method is None
        else:
            assert first.catch_method.startswith("jdk.internal.reflect.DirectMethodHandleAccessor.invoke(")
        assert (second.exc_class, second.throw_call, second.catch_call) == (
            "java.lang.reflect.InvocationTargetException", target - 1, target - 1)
    # invokeCatchingAll's handler would catch the target's IllegalStateException itself: JDK 17's
    # JVMTI names it as the catch location, but the VM wraps the exception first.
    catching_all = [e for e in main.exceptions if e.throw_call == unsafe[2] + 1][0]
    assert catching_all.consumed == (jdk.release < 18)


def test_uncaught_in_a_thread(jdk, oracle_of):
    worker = oracle_of("thread_uncaught", jdk).thread("worker-fail")
    assert [(c.method, c.depth) for c in worker.calls] == [
        ("Main$Failing.run()V", 0), ("Main.step(I)V", 1), ("Main.failDeep(I)V", 2)]
    assert [e.key for e in worker.exceptions] == [("java.lang.IllegalStateException", 2, None, None)]
    assert worker.exceptions[0].popped == (2, 1, 0)


def test_threads(jdk, oracle_of):
    """Each thread's own sequence; the uncaught exception handler runs on the dying thread,
    after JVMTI stopped reporting exceptions there."""
    run = oracle_of("threads", jdk)
    assert sorted(run.threads) == ["alpha", "beta", "doomed", "handled", "main"]

    def compute(rounds, depth):
        seq = [("Main.compute(I)J", depth)]
        for _ in range(rounds):
            seq += [("Main.guarded(I)J", depth + 1), ("Main.step(I)J", depth + 2), ("Main.addShared(J)V", depth + 1)]
        return seq

    for name, rounds in (("alpha", 12), ("beta", 7)):
        t = run.thread(name)
        assert [(c.method, c.depth) for c in t.calls][1:] == compute(rounds, 1)
        steps = [i for i, c in enumerate(t.calls) if c.method == "Main.step(I)J"]
        assert [e.key for e in t.exceptions] == [
            ("java.lang.IllegalStateException", steps[i], steps[i] - 1, "Main.guarded(I)J") for i in range(4, rounds, 5)]
        assert t.blind_from_call is None
    doomed = run.thread("doomed")
    assert doomed.call_names[1:] == ["Main.failOuter(I)V", "Main.failMiddle(I)V", "Main.failInner(I)V", "Main.addShared(J)V"]
    assert [e.key for e in doomed.exceptions] == [
        ("java.lang.IllegalStateException", 3, 1, "Main.failOuter(I)V"),
        ("java.lang.IllegalStateException", 1, None, None),
    ]
    handled = run.thread("handled")
    assert [(c.method, c.depth) for c in handled.calls][1:] == [
        ("Main.failMiddle(I)V", 1), ("Main.failInner(I)V", 2),
        ("Main$Recorder.uncaughtException(Ljava/lang/Thread;Ljava/lang/Throwable;)V", 0),
        ("Main$Recorder.describe(Ljava/lang/Thread;Ljava/lang/Throwable;)Ljava/lang/String;", 1),
    ]
    assert handled.blind_from_call == 3
    assert handled.exits == 0  # measured: no exit events on a thread in that state
    assert [(c.method, c.depth) for c in run.thread("main").calls] == [
        ("Main.<clinit>()V", 0), (MAIN, 0), ("Main$Recorder.<init>()V", 1), *compute(3, 1)]


def test_inconsistent_log_is_refused():
    """The parser checks the log against itself: a frame that ends without an exit event or an
    exception, an exit of a frame that is not live, a catch without a throw."""
    from oracle import OracleError

    start = ["THREAD\t1\tmain", "ENTER\t1\t1\t0\tMain.main()V", "ENTER\t1\t2\t1\tMain.f()V"]
    with pytest.raises(OracleError, match="ended without an exit"):
        parse_log(start + ["EXIT\t1\t1\tMain.main()V", "END\t0"], ("Main",))
    with pytest.raises(OracleError, match="exit of Main.g"):
        parse_log(start + ["EXIT\t1\t2\tMain.g()V", "END\t0"], ("Main",))
    with pytest.raises(OracleError, match="without a pending exception"):
        parse_log(start + ["CATCH\t1\t1\tMain.main()V@3", "END\t0"], ("Main",))
    threads = parse_log(start + ["EXIT\t1\t2\tMain.f()V", "EXIT\t1\t1\tMain.main()V", "END\t0"], ("Main",))
    assert [(c.method, c.depth) for c in threads["main"].calls] == [("Main.main()V", 0), ("Main.f()V", 1)]
