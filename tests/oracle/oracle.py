"""An oracle for trace replay built on the JDK's debugger interface (JDI), independent of jbgui.

:func:`run_oracle` runs a program untraced under ``JdiOracle.java`` (this directory), which logs
the application methods it enters and leaves and the exceptions that touch application frames
(see the class comment there for the log format), and turns the log into what a replay of the
same program's trace must find, thread by thread:

- ``calls``: the application method entries in entry order, each with its depth counted in
  application frames only (:class:`Call`);
- ``exceptions``: one :class:`Thrown` per exception event (a throw, or a rethrow after a catch)
  whose throw location or catch location is in an application class, or which pops application
  frames: the exception class, the ordinal (index into ``calls``) of the innermost application
  frame on the stack at the throw, and the ordinal and method of the frame that catches it.

What JDI reports, as measured on JDK 17 and 25 (``test_oracle.py`` checks it):

- Method exit events are not delivered for frames popped by an exception (the JDWP agent drops
  JVMTI's exits with ``was_popped_by_exception``). The catching frame is found with a one-shot
  breakpoint at the catch location on the throwing thread instead: its hit is the thread's next
  event, and the stack depth there is the catching frame's.
- An exception thrown by a native method (``System.arraycopy``, ``Thread.sleep``, the VM's
  reflection stub) is reported at the native frame, bci -1, while that frame is still on the
  stack.
- The catch location is searched through native frames as if they were not there, while native
  code may consume the exception: ``Method.invoke`` wraps it in an ``InvocationTargetException``
  on JDK 17 (``NativeMethodAccessorImpl.invoke0``), a static initializer's exception becomes an
  ``ExceptionInInitializerError``. Such an exception is reported as uncaught (no catch location),
  or with the catch location of a Java handler further out that it never reaches (the oracle's
  breakpoint is not hit before the thread's next event: ``Thrown.consumed``). The wrapping
  exception is a new event. For these the popped frames come from the thread's next event and
  ``catch_method`` is None.
- After an exception that no Java handler catches, JVMTI keeps the thread's "exception
  detected" state until the VM clears it (it does when it wraps the exception, as above): until
  then it reports no exception and no method exit on that thread. That is the case of an
  uncaught exception handler, which runs on the dying thread: its calls are reported, exceptions
  thrown inside it would not be (``OracleThread.blind_from_call``), its returns are not.
- Frames of hidden classes (lambda proxies) are not application frames. The launcher calls
  ``main`` from native code (it is the only frame, depth 1); threads start in ``Thread.run``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, Sequence

ORACLE_DIR = Path(__file__).resolve().parent
ORACLE_SOURCE = ORACLE_DIR / "JdiOracle.java"
BUILD_DIR = ORACLE_DIR.parent.parent / "build" / "oracle"
RUN_TIMEOUT_S = 300


class OracleError(Exception):
    """The oracle could not run, or its log contradicts itself."""


class JdkLike(Protocol):
    """What run_oracle needs of a JDK (tests/conftest.py's ``Jdk`` has it)."""

    home: Path

    @property
    def java(self) -> str: ...

    @property
    def javac(self) -> str: ...


@dataclass(frozen=True)
class Call:
    """One application method entry: ``method`` is ``dotted.Class.name(descriptor)``, ``depth`` the
    number of application frames below it, ``frame_depth`` the thread's frame count with it."""

    method: str
    depth: int
    frame_depth: int


@dataclass(frozen=True)
class Thrown:
    """One exception event that concerns the application.

    ``throw_call``: ordinal in the thread's ``calls`` of the innermost application frame on the
    stack at the throw (the frame that throws, when it is an application frame). ``catch_call``:
    ordinal of the catching frame when it is an application frame, else None. ``catch_method``:
    the catching method (any class), None when no Java handler catches it. ``popped``: ordinals of
    the application frames the exception pops, innermost first. ``throw_location`` and
    ``catch_location`` are ``METHOD@bci`` as JDI reports them.
    """

    exc_class: str
    throw_call: int
    catch_call: int | None
    catch_method: str | None
    throw_location: str
    catch_location: str | None
    popped: tuple[int, ...]
    throw_depth: int
    catch_depth: int | None
    consumed: bool = False  # JDI named a catch location that the thread never reached


    @property
    def key(self) -> tuple[str, int, int | None, str | None]:
        """What a replay must reproduce: (exc_class, throw_call, catch_call, catch_method)."""
        return (self.exc_class, self.throw_call, self.catch_call, self.catch_method)


@dataclass
class OracleThread:
    name: str
    calls: list[Call] = field(default_factory=list)
    exceptions: list[Thrown] = field(default_factory=list)
    exits: int = 0  # normal returns of application methods (when exits were requested)
    # Ordinal of the first call made while JVMTI reported nothing more on this thread (after an
    # uncaught exception, see the module comment); None when that never happened.
    blind_from_call: int | None = None

    @property
    def call_names(self) -> list[str]:
        return [c.method for c in self.calls]


@dataclass
class OracleRun:
    command: list[str]
    exit_code: int
    stdout: str
    stderr: str
    seconds: float
    log_path: Path
    threads: dict[str, OracleThread]

    def thread(self, name: str) -> OracleThread:
        return self.threads[name]


# --------------------------------------------------------------------------------------------
# Compiling and running


_compiled: dict[tuple[str, str], Path] = {}


def compile_oracle(jdk: JdkLike) -> Path:
    """The classes directory of JdiOracle compiled by ``jdk``'s javac, built once per source
    version and JDK under build/oracle (kept between sessions)."""
    digest = hashlib.sha256(ORACLE_SOURCE.read_bytes()).hexdigest()[:16]
    key = (str(Path(jdk.home).resolve()), digest)
    if key in _compiled:
        return _compiled[key]
    jdk_tag = hashlib.sha256(key[0].encode()).hexdigest()[:8]
    out = BUILD_DIR / f"{Path(jdk.home).name}-{jdk_tag}-{digest}"
    if not (out / "JdiOracle.class").is_file():
        BUILD_DIR.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=BUILD_DIR))
        result = subprocess.run(
            [jdk.javac, "-d", str(staging), str(ORACLE_SOURCE)],
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
        )
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise OracleError(f"javac failed on {ORACLE_SOURCE}:\n{result.stderr}")
        try:
            staging.rename(out)
        except OSError:  # compiled meanwhile by someone else
            shutil.rmtree(staging, ignore_errors=True)
    _compiled[key] = out
    return out


def _clean_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"):
        env.pop(name, None)
    return env


def run_oracle(
    jdk: JdkLike,
    classpath: str | Path | Sequence[str | Path],
    main_class: str,
    args: Sequence[str] = (),
    app_prefixes: Sequence[str] = ("Main",),
    *,
    work_dir: Path | None = None,
    exits: bool = True,
    timeout: float = RUN_TIMEOUT_S,
) -> OracleRun:
    """Run ``main_class`` untraced under JDI with ``jdk`` and return what it did.

    ``app_prefixes``: a class is an application class when its dotted name starts with one of
    them (and it is not hidden). ``exits``: also request method exit events (they cross-check the
    log; the result does not depend on them). The log is written to ``work_dir`` (default: a new
    temporary directory).
    """
    if not isinstance(classpath, (str, Path)):
        classpath = os.pathsep.join(map(str, classpath))
    classes = compile_oracle(jdk)
    work_dir = Path(work_dir) if work_dir is not None else Path(tempfile.mkdtemp(prefix="jdi-oracle-"))
    work_dir.mkdir(parents=True, exist_ok=True)
    log_path = work_dir / "oracle.log"
    command = [jdk.java, "-cp", str(classes), "JdiOracle", "--log", str(log_path), "--cp", str(classpath)]
    for prefix in app_prefixes:
        command += ["--app", prefix]
    if not exits:
        command.append("--no-exits")
    command += ["--", main_class, *args]
    started = time.perf_counter()
    result = subprocess.run(
        command, cwd=work_dir, capture_output=True, text=True, timeout=timeout, env=_clean_env(),
        stdin=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    text = log_path.read_text(encoding="utf-8") if log_path.is_file() else ""
    if not text.rstrip("\n").split("\n")[-1].startswith("END\t"):
        raise OracleError(
            f"the oracle did not finish its log (exit code {result.returncode}):\n"
            f"command: {' '.join(command)}\nstderr:\n{result.stderr[-3000:]}"
        )
    threads = parse_log(text.splitlines(), app_prefixes, exits=exits)
    return OracleRun(command, result.returncode, result.stdout, result.stderr, seconds, log_path, threads)


# --------------------------------------------------------------------------------------------
# Reading the log


def location_method(location: str) -> str:
    """``METHOD@bci`` -> ``METHOD``."""
    return location.rsplit("@", 1)[0]


def method_class(method: str) -> str:
    """``dotted.Class.name(desc)`` -> ``dotted.Class``."""
    return method[: method.index("(")].rsplit(".", 1)[0]


def is_app_class(class_name: str, app_prefixes: Sequence[str]) -> bool:
    """The oracle's rule, also for the replay side: a prefix matches and the class is not hidden."""
    return "/" not in class_name and any(class_name.startswith(p) for p in app_prefixes)


@dataclass
class _Frame:
    depth: int
    ordinal: int
    method: str


@dataclass
class _Pending:
    """An exception event waiting for its catch (or, uncaught, for the thread's next event)."""

    exc_class: str
    throw_location: str
    catch_location: str | None
    throw_depth: int
    throw_call: int
    app_frames: list[tuple[int, str]]  # (depth, method), innermost first


class _ThreadState:
    def __init__(self, name: str, app_prefixes: Sequence[str], exits: bool):
        self.out = OracleThread(name)
        self.exits = exits
        self.app_prefixes = app_prefixes
        self.live: list[_Frame] = []  # application frames on the stack, outermost first
        self.pending: _Pending | None = None
        self.blind = False

    def error(self, message: str) -> OracleError:
        return OracleError(f"thread {self.out.name!r}: {message}")

    def prune(self, keep_below: int) -> list[_Frame]:
        """Drop the live frames at depth >= keep_below (they were popped); return them, innermost
        first."""
        gone = []
        while self.live and self.live[-1].depth >= keep_below:
            gone.append(self.live.pop())
        return gone

    def finish_pending(self, catch_depth: int | None, catch_location: str | None, keep_below: int,
                       consumed: bool = False) -> None:
        """The pending exception was caught at ``catch_depth`` (None: by no Java handler; then
        ``keep_below`` tells which frames the thread's next event shows to be gone)."""
        p = self.pending
        assert p is not None
        self.pending = None
        popped = self.prune(catch_depth + 1 if catch_depth is not None else keep_below)
        catch_call = None
        catch_method = None
        if catch_location is not None:
            catch_method = location_method(catch_location)
            if is_app_class(method_class(catch_method), self.app_prefixes):
                top = self.live[-1] if self.live else None
                if top is None or top.depth != catch_depth or top.method != catch_method:
                    raise self.error(f"catching frame {catch_method} at depth {catch_depth} is not live: {top}")
                catch_call = top.ordinal
        throw_app = is_app_class(method_class(location_method(p.throw_location)), self.app_prefixes)
        record = Thrown(
            exc_class=p.exc_class,
            throw_call=p.throw_call,
            catch_call=catch_call,
            catch_method=catch_method,
            throw_location=p.throw_location,
            catch_location=catch_location,
            popped=tuple(f.ordinal for f in popped),
            throw_depth=p.throw_depth,
            catch_depth=catch_depth,
            consumed=consumed,
        )
        if catch_location is None:
            # JVMTI reports no further exception on this thread until something clears its
            # "exception detected" state (the VM does when it wraps the exception, the next
            # report shows it): until then the thread is blind.
            self.blind = True
        if throw_app or catch_call is not None or popped:
            self.out.exceptions.append(record)

    def before_event(self, keep_below: int, at_end: bool = False) -> None:
        """Any event at a depth shows the frames from ``keep_below`` on to be gone; a pending
        exception that no Java handler caught ends here. With exit events, frames vanish only
        that way, while the thread is blind, or at the end (System.exit, daemon threads)."""
        if self.pending is not None:
            # Consumed by native code (the VM's reflection or class initialization, JNI) when JDI
            # had named a catch location: the handler was never reached.
            self.finish_pending(None, None, keep_below, consumed=self.pending.catch_location is not None)
        gone = self.prune(keep_below)
        if gone and self.exits and not self.blind and not at_end:
            raise self.error(f"frames {[f.method for f in gone]} ended without an exit or an exception")


def parse_log(lines: Sequence[str], app_prefixes: Sequence[str], exits: bool = True) -> dict[str, OracleThread]:
    """Per thread name, the calls and exceptions of a JdiOracle log (see the module comment).
    ``exits``: the log has exit events (JdiOracle without --no-exits)."""
    by_id: dict[str, _ThreadState] = {}
    names: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split("\t")
        kind = fields[0]
        try:
            if kind == "THREAD":
                tid, name = fields[1], fields[2]
                if name in names.values():
                    raise OracleError(f"two threads are named {name!r}: threads are matched by name")
                names[tid] = name
                by_id[tid] = _ThreadState(name, app_prefixes, exits)
            elif kind == "ENTER":
                state = by_id[fields[1]]
                depth, app_depth, method = int(fields[2]), int(fields[3]), fields[4]
                state.before_event(depth)
                if state.blind and state.out.blind_from_call is None:
                    state.out.blind_from_call = len(state.out.calls)
                if app_depth != len(state.live):
                    raise state.error(f"{method} entered with {app_depth} application frames below, "
                                      f"the log has {len(state.live)} live")
                ordinal = len(state.out.calls)
                state.out.calls.append(Call(method, app_depth, depth))
                state.live.append(_Frame(depth, ordinal, method))
            elif kind == "EXIT":
                state = by_id[fields[1]]
                depth, method = int(fields[2]), fields[3]
                state.before_event(depth + 1)
                top = state.live[-1] if state.live else None
                if top is None or top.depth != depth or top.method != method:
                    raise state.error(f"exit of {method} at depth {depth}, but the live frame is {top}")
                state.live.pop()
                state.out.exits += 1
            elif kind == "THROW":
                state = by_id[fields[1]]
                depth, exc_class, throw_location, catch_location = int(fields[2]), fields[3], fields[4], fields[5]
                state.before_event(depth + 1)
                state.blind = False
                frames = []
                for item in fields[6].split("|"):
                    d, loc = item.split(":", 1)
                    frames.append((int(d), location_method(loc)))
                live = {f.depth: f for f in state.live}
                for d, m in frames:
                    if d not in live or live[d].method != m:
                        raise state.error(f"application frame {m} at depth {d} of a throw is not live")
                if len(frames) != len(state.live):
                    raise state.error(f"the throw shows {len(frames)} application frames, {len(state.live)} are live")
                state.pending = _Pending(
                    exc_class=exc_class,
                    throw_location=throw_location,
                    catch_location=None if catch_location == "none" else catch_location,
                    throw_depth=depth,
                    throw_call=live[frames[0][0]].ordinal,
                    app_frames=frames,
                )
            elif kind == "CATCH":
                state = by_id[fields[1]]
                depth, location = int(fields[2]), fields[3]
                p = state.pending
                if p is None or p.catch_location != location:
                    raise state.error(f"catch at {location} without a pending exception for it")
                state.finish_pending(depth, location, depth + 1)
            elif kind == "END":
                for state in by_id.values():
                    state.before_event(0, at_end=True)
            elif kind == "LOST":
                pass  # JdiOracle dropped its breakpoint; the THROW that follows settles the exception
            else:
                raise OracleError(f"unknown record {kind!r}")
        except (IndexError, ValueError, KeyError) as error:
            raise OracleError(f"log line {number} {line!r}: {error!r}") from error
        except OracleError as error:
            raise OracleError(f"log line {number} {line!r}: {error}") from None
    return {state.out.name: state.out for state in by_id.values()}


_runs: dict[tuple, OracleRun] = {}


def cached_run_oracle(
    jdk: JdkLike,
    classpath: str | Path,
    main_class: str,
    args: Sequence[str] = (),
    app_prefixes: Sequence[str] = ("Main",),
    *,
    work_dir: Path | None = None,
) -> OracleRun:
    """:func:`run_oracle`, run once per process for the same arguments (tests share the runs);
    ``work_dir`` is used by the first run only."""
    key = (str(Path(jdk.home).resolve()), str(classpath), main_class, tuple(args), tuple(app_prefixes))
    if key not in _runs:
        _runs[key] = run_oracle(jdk, classpath, main_class, args, app_prefixes, work_dir=work_dir)
    return _runs[key]
