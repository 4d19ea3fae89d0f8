"""Replay against an independent oracle: for each test program, the trace the agent records,
replayed by :mod:`jbgui.model.analysis`, must show the same application calls and the same
exceptions as the program's run under the JDK's debugger interface (tests/oracle).

Per thread (matched by name), two lists are compared:

- the application calls in start order, each as ``dotted.Class.name(descriptor)`` with its depth
  counted in application frames only. Application rows are the rows whose method's class starts
  with one of the program's prefixes and is not hidden; synthetic rows (calls into native or
  untraced code) are never application rows;
- the exception records that concern the application (the oracle's rule: thrown or caught in an
  application frame, or popping one): ``(throw call, catch call, catch method)``, where the calls
  are ordinals in the thread's application call list, and the exception class. On the replay side
  the throw call is the nearest application row at or above ``throw_row``, the catch call is
  ``catch_row`` when that is an application row, and the catch method is ``catch_row``'s method,
  None when no Java handler caught the exception (``catch_row`` -1, or a synthetic row: the
  exception was consumed by native code).

  The classes must be equal where replay knows the class. A trace names an exception's class
  only in the THROWABLE word after an EXCEPTION_EXIT (docs/trace-format.md), so an exception
  caught in the frame that threw it has none: replay's class may be unknown there, and only
  there.

A mismatch is reported with the program, the JDK, the thread and the first differing entry, in
context.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "oracle"))
from oracle import OracleRun, cached_run_oracle, is_app_class  # noqa: E402

from jbgui.model.analysis import Analysis, Flag  # noqa: E402

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"

# Program -> the class name prefixes of its application classes. Programs whose threads do not
# run a deterministic sequence of application calls are left out: lambdas (a parallel stream),
# stack_overflow (the depth reached varies), long_running; of multithread only the threads whose
# sequence is deterministic are compared (a thread pool shares tasks out as it likes).
PROGRAMS: dict[str, tuple[str, ...]] = {
    "hello": ("Main",),
    "exceptions": ("Main",),
    "exception_paths": ("Main",),
    "finally_blocks": ("Main",),
    "native_calls": ("Main",),
    "streams": ("Main",),
    "threads": ("Main",),
    "thread_uncaught": ("Main",),
    "main_throws": ("Main",),
    "static_init": ("Main",),
    "reflection": ("Main",),
    "records": ("Main",),
    "switches": ("Main",),
    "system_exit": ("Main",),
    "classloaders": ("Main", "Greeter", "HiddenGreeter", "Plugin"),
    "strict_loaders": ("Main", "Task"),
    "own_asm": ("Main", "org.objectweb.asm."),
    "multithread": ("Main",),
}
ONLY_THREADS = {
    "multithread": ("main", "worker-0", "worker-1", "worker-2", "worker-3", "producer", "consumer"),
}

# Known differences, each checked to fail (strict): remove the entry when it is resolved.
KNOWN_DIFFERENCES = {
}

SYNTHETIC = int(Flag.NATIVE) | int(Flag.UNTRACED)


@dataclass
class Side:
    """One side's view of a thread: calls as (method, depth); exceptions as (throw call, catch
    call, catch method), their classes (None: unknown) and whether the record is a catch in the
    throwing frame."""

    calls: list[tuple[str, int]]
    exceptions: list[tuple[int, int | None, str | None]]
    classes: list[str | None]
    same_frame: list[bool]


def dotted(name: str | None) -> str | None:
    return name.replace("/", ".") if name else None


def replay_side(analysis, thread, prefixes) -> Side:
    """The application calls and exception records of one replayed thread."""
    statics = analysis.statics
    c = thread.calls
    n = len(c.method)
    methods = np.asarray(c.method)
    parents = np.asarray(c.parent)
    flags = np.asarray(c.flags)
    names: dict[int, str] = {}
    app_of_method: dict[int, bool] = {}
    for mid in np.unique(methods).tolist():
        name = statics.method_qualified(int(mid)) if mid else ""
        names[mid] = name
        app_of_method[mid] = bool(name) and is_app_class(name[: name.index("(")].rsplit(".", 1)[0], prefixes)
    is_app = np.array([app_of_method[m] for m in methods.tolist()], dtype=bool) if n else np.zeros(0, bool)
    is_app &= (flags & SYNTHETIC) == 0
    # Preorder: a parent comes before its children, so one pass gives each row the number of
    # application rows above it and its nearest application row at or above it.
    app_above = np.zeros(n, np.int64)
    nearest = np.full(n, -1, np.int64)
    ordinal = np.full(n, -1, np.int64)
    calls = []
    for row in range(n):
        p = int(parents[row])
        if p >= 0:
            app_above[row] = app_above[p] + (1 if is_app[p] else 0)
            nearest[row] = nearest[p]
        if is_app[row]:
            ordinal[row] = len(calls)
            nearest[row] = row
            calls.append((names[int(methods[row])], int(app_above[row])))
    exceptions, classes, same_frame = [], [], []
    for record in thread.exceptions:
        throw_row, catch_row = int(record["throw_row"]), int(record["catch_row"])
        throw_app = nearest[throw_row] if throw_row >= 0 else -1
        if throw_app < 0:
            continue  # no application frame on the stack: the oracle does not see it
        caught_by_java = catch_row >= 0 and not (int(flags[catch_row]) & SYNTHETIC)
        catch_app = catch_row >= 0 and bool(is_app[catch_row])
        # Application frames popped: from throw_row up to catch_row (excluded).
        popped = False
        row = throw_row
        while row >= 0 and row != catch_row:
            popped |= bool(is_app[row])
            row = int(parents[row])
        if not (is_app[throw_row] or catch_app or popped):
            continue
        exceptions.append((
            int(ordinal[throw_app]),
            int(ordinal[catch_row]) if catch_app else None,
            names[int(methods[catch_row])] if caught_by_java else None,
        ))
        cls = int(record["exc_class"])
        classes.append(dotted(statics.class_name_of_id(cls)) if cls else None)
        same_frame.append(throw_row == catch_row)
    return Side(calls, exceptions, classes, same_frame)


def oracle_side(run: OracleRun, name: str) -> tuple[Side, int | None]:
    t = run.threads[name]
    return Side([(c.method, c.depth) for c in t.calls], [e.key[1:] for e in t.exceptions],
                [e.exc_class for e in t.exceptions], [False] * len(t.exceptions)), t.blind_from_call


def first_difference(ours: list, theirs: list) -> str | None:
    """Where two lists part, with a little context; None when they are equal."""
    if ours == theirs:
        return None
    i = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    lo = max(0, i - 3)
    lines = [f"first difference at index {i} (replay {len(ours)} entries, oracle {len(theirs)}):"]
    for k in range(lo, i + 4):
        a = ours[k] if k < len(ours) else "<none>"
        b = theirs[k] if k < len(theirs) else "<none>"
        lines.append(f"  {'>' if k == i else ' '} [{k}] replay {a}\n  {' ' * len(str(k))}     oracle {b}")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def compared(record, compile_program, tmp_path_factory):
    """``compared(program, jdk) -> (analysis, oracle run, traced run)``, once per session."""
    cache = {}

    def run(program: str, jdk):
        key = (program, jdk.id)
        if key not in cache:
            traced = record(program, jdk)
            assert traced.trace_dir is not None and (traced.trace_dir / "trace.json").is_file(), traced.describe()
            oracle = cached_run_oracle(jdk, compile_program(program, jdk), "Main", (), PROGRAMS[program],
                                       work_dir=tmp_path_factory.mktemp(f"oracle-{program}-{jdk.id}"))
            cache[key] = (Analysis.open(traced.trace_dir), oracle, traced)
        return cache[key]

    return run


# On JDKs other than the default the default suite compares the programs whose recording leans
# on what changes between JDK releases (reflection's and lambdas' machinery, class loading,
# threads, switch bootstraps); the slow suite compares every program on every JDK. Each
# comparison is a traced and a debugged JVM (about 8 s).
EVERY_JDK = ("hello", "exceptions", "reflection", "classloaders", "strict_loaders", "switches", "records",
             "streams", "multithread")


def _program_params(programs):
    return [pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENCES[p]))
            if p in KNOWN_DIFFERENCES else p for p in sorted(programs)]


@pytest.mark.parametrize("program", _program_params(PROGRAMS))
def test_replay_matches_oracle(program, jdk, default_jdk, compared):
    if jdk != default_jdk and program not in EVERY_JDK:
        pytest.skip("compared on this JDK by the slow suite (test_replay_matches_oracle_on_every_jdk)")
    _compare(program, jdk, compared)


@pytest.mark.slow
@pytest.mark.parametrize("program", _program_params(set(PROGRAMS) - set(EVERY_JDK)))
def test_replay_matches_oracle_on_every_jdk(program, jdk, default_jdk, compared):
    if jdk == default_jdk:
        pytest.skip("compared by the default suite")
    _compare(program, jdk, compared)


def _compare(program, jdk, compared):
    analysis, oracle, traced = compared(program, jdk)
    expected = (PROGRAMS_DIR / program / "expected_stdout.txt").read_text()
    assert oracle.stdout == expected, f"the program behaved differently under JDI:\n{oracle.stderr[-2000:]}"
    assert traced.stdout == expected and traced.exit_code == oracle.exit_code, traced.describe()
    problems = differences(analysis, oracle, PROGRAMS[program], ONLY_THREADS.get(program))
    assert not problems, f"{program} on {jdk.id}: replay differs from the JDI oracle\n" + "\n".join(problems)


def differences(analysis, oracle: OracleRun, prefixes, only_threads=None) -> list[str]:
    """What differs between replay and the oracle, thread by thread (empty: nothing); only the
    threads named in ``only_threads`` when it is given."""
    replayed = {}
    for t in analysis.threads:
        if only_threads is not None and t.name not in only_threads:
            continue
        side = replay_side(analysis, t, prefixes)
        if side.calls or side.exceptions:
            if t.name in replayed:
                return [f"two replayed threads are named {t.name!r}"]
            replayed[t.name] = side
    expected = sorted(n for n in oracle.threads if only_threads is None or n in only_threads)
    if sorted(replayed) != expected:
        return [f"threads with application calls: replay {sorted(replayed)}, oracle {expected}"]
    problems = []
    for name, ours in sorted(replayed.items()):
        theirs, blind_from = oracle_side(oracle, name)
        diff = first_difference(ours.calls, theirs.calls)
        if diff:
            problems.append(f"thread {name!r}, calls: {diff}")
            continue
        if blind_from is not None:
            # JVMTI reports no exceptions on this thread from that call on (see oracle.py).
            keep = [e[0] < blind_from for e in ours.exceptions]
            ours = Side(ours.calls, *([x for x, k in zip(column, keep) if k]
                                      for column in (ours.exceptions, ours.classes, ours.same_frame)))
        diff = first_difference(ours.exceptions, theirs.exceptions)
        if diff:
            problems.append(f"thread {name!r}, exceptions (throw call, catch call, catch method): {diff}")
            continue
        for i, (cls, expected_cls, same) in enumerate(zip(ours.classes, theirs.classes, ours.same_frame)):
            if cls != expected_cls and (cls is not None or not same):
                problems.append(f"thread {name!r}, exception {i} {theirs.exceptions[i]}: replay's class {cls}, "
                                f"the oracle's {expected_cls}")
                break
    return problems
