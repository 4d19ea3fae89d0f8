"""Instrumented JDK classes are cached between runs (jbgui.instr.ClassCache): a run served from the
cache records the same trace as the run that filled it, and its classes still verify."""

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from jbgui.model.check import ERROR, FATAL, WARNING, run_check

from jbgui.model import TraceDir
from jbgui.model import tracedir as td

HELLO = """
public class Hello {
    public static void main(String[] args) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 3; i++) b.append(i);
        System.out.println("hello " + b);
    }
}
"""


def method_sequence(trace: TraceDir) -> list[str]:
    """The main thread's method starts as qualified names (ids differ between runs, names do not)."""
    main = next(t["index"] for t in trace.threads if t.get("name") == "main")
    words = trace.stream_events(main)
    starts = words[td.event_types(words) == 1]
    return [trace.methods[int(m)].qualified for m in td.method_ids(starts)]


def block_counts(trace: TraceDir) -> dict[str, int]:
    """The main thread's block events per method (qualified name; blocks past a method's first
    page of ids, whose ids name no method, count together)."""
    main = next(t["index"] for t in trace.threads if t.get("name") == "main")
    words = trace.stream_events(main)
    ids, counts = np.unique(td.method_ids(words[td.event_types(words) == 3]), return_counts=True)
    out: dict[str, int] = {}
    for m, c in zip(ids.tolist(), counts.tolist()):
        info = trace.methods.get(int(m))
        name = info.qualified if info is not None else "<later pages>"
        out[name] = out.get(name, 0) + c
    return out


def described(trace: TraceDir) -> dict[str, tuple]:
    """Each class's methods as static.xml describes them, without ids (they differ between runs):
    name, descriptor, blocks, and the instrumentation attributes."""
    out: dict[str, list] = {}
    for m in trace.methods.values():
        attrs = tuple(sorted((k, v) for k, v in m.attrs.items() if "id" not in k))
        out.setdefault(m.class_name, []).append((m.name, m.desc, m.blocks, attrs))
    return {c: tuple(sorted(v)) for c, v in out.items()}


def class_loads(trace: TraceDir) -> list[str]:
    main = next(t["index"] for t in trace.threads if t.get("name") == "main")
    words = trace.stream_events(main)
    loads = words[(td.event_types(words) == 0) & (td.subtypes(words) == 0)]
    return [trace.classes[int(c)].name for c in td.values(loads)]


def record_hello(jdk, agent_jar, classes: Path, out: Path, cache: Path, verify: bool = True,
                 jvm_args: tuple[str, ...] = ()) -> tuple[TraceDir, str]:
    """Hello recorded with this class cache, its classes verified (unless not ``verify``); the
    trace and agent.log's line about the bundle of the classes loaded before the agent."""
    checks = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+BytecodeVerificationLocal"] if verify else []
    result = subprocess.run(
        [jdk.java, *checks, *jvm_args, f"-javaagent:{agent_jar}=out={out},cache={cache}", "-cp", str(classes), "Hello"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello 012\n"
    assert result.stderr == ""
    log = (out / "agent.log").read_text()
    assert "error" not in log, log
    bundle = re.search(r"class cache bundle served (\d+) of (\d+)(, written anew)?", log)
    assert bundle, log
    return TraceDir(out), bundle.group(0)


# No collection in either run: the run that fills the cache allocates some 400 MB instrumenting
# (10 collections with the default heap, against 2 in a run the cache serves), and a collection
# clears weak references whose purge the program's own code then does: Hello's string
# concatenation interns MethodTypes in a weak set, which polls its reference queue and removes
# the cleared entries (ReferenceQueue.reallyPoll, ConcurrentHashMap.replaceNode), 1,100 of the
# main thread's 30,000 block events from Hello.main's start on in one run and none in the other.
# The serial collector collects only when its young generation is full, which these sizes never
# are (0.8 GB resident at most).
NO_GC = ("-XX:+UseSerialGC", "-Xms3g", "-Xmn2500m")


def compile_hello(jdk, where: Path) -> None:
    (where / "Hello.java").write_text(HELLO)
    subprocess.run([jdk.javac, "-d", str(where), str(where / "Hello.java")], check=True)


def test_second_run_from_the_cache_records_the_same_trace(default_jdk, agent_jar, tmp_path):
    compile_hello(default_jdk, tmp_path)
    cache = tmp_path / "cache"
    first, filled = record_hello(default_jdk, agent_jar, tmp_path, tmp_path / "filling", cache, jvm_args=NO_GC)
    entries = list(cache.rglob("*.jbc"))
    assert len(entries) > 300  # the JDK classes hello world needs
    # The classes loaded before the agent, in one bundle: the run that filled the cache wrote it,
    # the next run read every one of them from it.
    assert filled.startswith("class cache bundle served 0 of ") and filled.endswith(", written anew")
    assert len(list(cache.rglob("preloaded.jbb"))) == 1
    assert len(list(cache.rglob("startup.jbb"))) == 1
    forget_the_programs_classes(cache)
    second, served = record_hello(default_jdk, agent_jar, tmp_path, tmp_path / "served", cache, jvm_args=NO_GC)
    assert_served_by_bundle(served)
    assert first.complete and second.complete
    assert_same_trace(first, second)


def assert_served_by_bundle(line: str) -> None:
    """The bundle served (almost) every class loaded before the agent, and was not written anew.
    Almost: under -Xverify HotSpot gives a few classes (6 of 1,179 seen) other bytes in another
    run (an abstract method's overpass elsewhere in the pool); they come from their own files."""
    served, total = map(int, line.split()[4:7:2])
    assert total > 300 and served >= 0.97 * total and not line.endswith("anew"), line


def assert_same_trace(first: TraceDir, second: TraceDir) -> None:
    # What a cache that served wrong instrumentation would change: the classes' descriptions.
    # Every class both runs describe has the same methods with the same blocks and status.
    da, db = described(first), described(second)
    common = da.keys() & db.keys()
    assert len(common) > 300
    assert {c: da[c] for c in common if da[c] != db[c]} == {}
    # The same calls, save some that JDK start-up code on the main thread makes or not by timing
    # (a String's hash computed first by another thread spares the main thread a call; seen under
    # load: 80 and 186 calls of 6,000-9,000 differing, in 7 ConcurrentHashMap lookups and the
    # String hashing around them, with the agent of before and after the cache's lazy templates;
    # in a CI run of 2026-11-29, 485 of 9,310, all of them the served run's: 47 more of each of
    # those lookups, on JDK 17, whose start-up that stop's agent changes did not touch).
    calls_a, calls_b = Counter(method_sequence(first)), Counter(method_sequence(second))
    assert calls_a["Hello.main([Ljava/lang/String;)V"] == calls_b["Hello.main([Ljava/lang/String;)V"] == 1
    assert sum(((calls_a - calls_b) + (calls_b - calls_a)).values()) <= max(10, 0.08 * sum(calls_a.values())), \
        (calls_a - calls_b, calls_b - calls_a)
    # The program loaded the same classes, in the same order. (static.xml itself may differ: it
    # also describes JDK classes the agent's own work loaded, which differs between a run that
    # instruments and one that reads the cache; those loads are not the program's and have no
    # class-load events.)
    assert class_loads(first) == class_loads(second)
    assert "Hello" in class_loads(second)  # the launcher loads it after the agent started
    assert len(second.blocks) > 10000
    # Block events per method: the same methods ran blocks, and the same number of them, save
    # blocks where JDK code on the main thread takes a path that depends on timing (a String
    # whose hash another thread computed first, a concurrent map's contention) or on what other
    # threads left behind: Hello's string concatenation interns MethodTypes in a weak set, which
    # sometimes finds cleared entries to purge (ReferenceQueue.reallyPoll,
    # ConcurrentHashMap.replaceNode), even with no collection in either run: 1,132 of 28,899
    # block events from Hello.main's start on, in one run of four; 7% of all, once, before the
    # runs were kept free of collections. The instrumentation itself is compared exactly above.
    a, b = block_counts(first), block_counts(second)
    assert a["Hello.main([Ljava/lang/String;)V"] == b["Hello.main([Ljava/lang/String;)V"] > 0
    differing = {m: (a.get(m, 0), b.get(m, 0)) for m in a.keys() | b.keys() if a.get(m, 0) != b.get(m, 0)}
    assert sum(abs(x - y) for x, y in differing.values()) <= 0.10 * sum(a.values()), differing


def damage(bundle: Path, how: str) -> None:
    """Damages a bundle (preloaded.jbb: a 32-byte header, the class region, the template region)."""
    data = bytearray(bundle.read_bytes())
    classes = int.from_bytes(data[12:16], "big")
    if how == "truncated":
        del data[len(data) // 2:]
    elif how == "class-region":
        data[32 + classes // 2] ^= 0x40
    elif how == "template-region":
        data[32 + classes + (len(data) - 32 - classes) // 2] ^= 0x40
    elif how == "garbage":
        data = bytearray(b"not a bundle" * 1000)
    bundle.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def filled_cache(default_jdk, agent_jar, tmp_path_factory):
    """A class cache hello world filled, with the trace of the run that filled it."""
    where = tmp_path_factory.mktemp("filled")
    compile_hello(default_jdk, where)
    trace, _ = record_hello(default_jdk, agent_jar, where, where / "filling", where / "cache")
    return where, trace


def forget_the_programs_classes(cache: Path) -> None:
    """Removes the cached program classes (app/), so that Hello is instrumented on the main thread
    as in the run that filled the cache. These tests are about the JDK's classes; compared with the
    filling run, a run served Hello from app/ differed in timing-dependent JDK start-up code by more
    than assert_same_trace allows (once in 14 runs: 2,005 block events against 1,637)."""
    for app in cache.glob("*/app"):
        shutil.rmtree(app)


@pytest.mark.parametrize("how", ["truncated", "class-region", "template-region", "garbage"])
def test_a_damaged_bundle_only_means_instrumenting_again(default_jdk, agent_jar, filled_cache, tmp_path, how):
    where, filling = filled_cache
    cache = tmp_path / "cache"
    shutil.copytree(where / "cache", cache)
    forget_the_programs_classes(cache)
    (bundle,) = cache.rglob("preloaded.jbb")
    damage(bundle, how)
    trace, line = record_hello(default_jdk, agent_jar, where, tmp_path / "damaged", cache)
    report = run_check(trace.path)
    problems = [f.format() for f in report.findings if f.severity in (ERROR, WARNING, FATAL)]
    assert not problems, "\n".join(problems)
    assert trace.complete
    assert_same_trace(filling, trace)
    if how == "template-region":
        # The class region was sound: the classes came from it, their descriptions were made
        # afresh, and the bundle was removed so that the next run writes it anew.
        assert_served_by_bundle(line)
        assert not bundle.exists()
        forget_the_programs_classes(cache)
        _, line = record_hello(default_jdk, agent_jar, where, tmp_path / "after", cache)
        assert line.endswith(", written anew"), line
    else:
        # Not used at all; the classes came from their own files, and the bundle was written anew.
        assert line.startswith("class cache bundle served 0 of ") and line.endswith(", written anew"), line
    # Either way, the next run is served by a sound bundle again.
    _, line = record_hello(default_jdk, agent_jar, where, tmp_path / "next", cache)
    assert_served_by_bundle(line)


STARTUP_LINE = re.compile(r"start-up bundle served (\d+) of (\d+)(, written anew)?")


def startup_line(trace: TraceDir) -> tuple[int, int, bool]:
    """What agent.log says of the start-up bundle: (served, classes, written anew)."""
    found = STARTUP_LINE.search((trace.path / "agent.log").read_text())
    assert found, (trace.path / "agent.log").read_text()
    return int(found.group(1)), int(found.group(2)), found.group(3) is not None


@pytest.mark.parametrize("how", [None, "class-region", "template-region"])
def test_jdk_classes_loaded_during_start_up_come_from_a_bundle_of_their_own(default_jdk, agent_jar, filled_cache,
                                                                           tmp_path, how):
    """The JDK classes loaded while start-up instruments the loaded ones (startup.jbb: the same
    format as preloaded.jbb) are read from one file, and a damaged one only means their own files."""
    where, filling = filled_cache
    served_filling, loaded, anew = startup_line(filling)
    assert (served_filling, anew) == (0, True) and loaded > 0  # the agent's own loads, at least
    cache = tmp_path / "cache"
    shutil.copytree(where / "cache", cache)
    forget_the_programs_classes(cache)
    (bundle,) = cache.rglob("startup.jbb")
    if how is not None:
        damage(bundle, how)
    trace, _ = record_hello(default_jdk, agent_jar, where, tmp_path / "run", cache)
    assert trace.complete
    assert_sound(trace)
    assert_same_trace(filling, trace)
    served, total, anew = startup_line(trace)
    if how is None:
        assert (served, total, anew) == (loaded, loaded, False)
    elif how == "template-region":
        # The class region was sound: it served the classes, whose descriptions were made afresh,
        # and the bundle was removed, so that the next run writes it anew.
        assert (served, total, anew) == (loaded, loaded, False)
        assert not bundle.exists()
        forget_the_programs_classes(cache)
        after, _ = record_hello(default_jdk, agent_jar, where, tmp_path / "after", cache)
        assert startup_line(after) == (0, loaded, True)
    else:
        assert (served, total, anew) == (0, loaded, True)
    forget_the_programs_classes(cache)
    again, _ = record_hello(default_jdk, agent_jar, where, tmp_path / "again", cache)
    assert startup_line(again) == (loaded, loaded, False)
    assert_same_trace(filling, again)


# The classes loaded before the agent get the same class and method ids in every run (reserved in
# name order), so their part of static.xml is copied from the cache (jbgui.instr.PreloadedLayout).
LAYOUT_LINE = re.compile(r"static\.xml of (\d+) classes loaded before the agent "
                         r"(copied from the class cache|written class by class \(([^,)]*))")


def layout_line(trace: TraceDir) -> tuple[int, str]:
    """How agent.log says the classes loaded before the agent were described: (count, how)."""
    found = LAYOUT_LINE.search((trace.path / "agent.log").read_text())
    assert found, (trace.path / "agent.log").read_text()
    return int(found.group(1)), found.group(3) or found.group(2)


def preloaded_elements(trace: TraceDir) -> dict[str, bytes]:
    """The <class> elements, as written, of the classes static.xml says were loaded before the agent."""
    out = {}
    for _, el in etree.iterparse(str(trace.path / "static.xml"), tag="class", resolve_entities=False):
        if el.get("preloaded") == "true":
            out[el.get("name")] = etree.tostring(el, with_tail=False)
        el.clear()
    return out


def assert_same_preloaded_elements(a: TraceDir, b: TraceDir, count: int) -> None:
    """Byte for byte the same descriptions, ids included, for at least the ``count`` classes whose
    ids were reserved. The others (the agent's own JDK classes, described but never instrumented;
    a class the bundle lacks because the run that wrote it loaded it later) take ids as they come."""
    ea, eb = preloaded_elements(a), preloaded_elements(b)
    same = [n for n in ea.keys() & eb.keys() if ea[n] == eb[n]]
    assert len(same) >= count > 300, sorted(n for n in ea.keys() | eb.keys() if ea.get(n) != eb.get(n))


def assert_sound(trace: TraceDir) -> None:
    report = run_check(trace.path)
    problems = [f.format() for f in report.findings if f.severity in (ERROR, WARNING, FATAL)]
    assert not problems, "\n".join(problems)


# Without -XX:+BytecodeVerificationLocal here: under it the JVM loads other classes before the
# agent, and HotSpot reconstitutes a few classes with other bytes from run to run (see
# assert_served_by_bundle); a class whose original bytes differ is described anew, so the copy
# would serve only some runs.
@pytest.fixture(scope="module")
def kept_layout(default_jdk, agent_jar, tmp_path_factory):
    """A class cache filled by one unverified run of hello world, and the run after it, which
    described the classes loaded before the agent class by class and kept them as the copy."""
    where = tmp_path_factory.mktemp("layout")
    compile_hello(default_jdk, where)
    cache = where / "cache"
    filling, _ = record_hello(default_jdk, agent_jar, where, where / "filling", cache, verify=False)
    assert LAYOUT_LINE.search((filling.path / "agent.log").read_text()) is None  # no bundle yet: nothing reserved
    forget_the_programs_classes(cache)
    kept, _ = record_hello(default_jdk, agent_jar, where, where / "keeping", cache, verify=False)
    count, how_kept = layout_line(kept)
    assert count > 300 and how_kept == "kept in the class cache for the next run"
    return where, kept, count


@pytest.mark.parametrize("how", [None, "flipped", "other-ids"])
def test_the_descriptions_of_classes_loaded_before_the_agent_come_from_the_cache(default_jdk, agent_jar, kept_layout,
                                                                                 tmp_path, how):
    where, kept, count = kept_layout
    cache = tmp_path / "cache"
    shutil.copytree(where / "cache", cache)
    forget_the_programs_classes(cache)
    (copy,) = cache.rglob("preloaded-xml.jbx")
    data = bytearray(copy.read_bytes())
    assert len(data) > 1_000_000
    if how == "flipped":      # a damaged copy: its checksum no longer matches
        data[len(data) // 2] ^= 0x20
    elif how == "other-ids":  # a copy made with other ids (its signature, bytes 8-15, is not this run's)
        data[15] ^= 0x01
    copy.write_bytes(bytes(data))
    trace, _ = record_hello(default_jdk, agent_jar, where, tmp_path / "again", cache, verify=False)
    assert trace.complete
    assert_sound(trace)
    assert_same_trace(kept, trace)
    assert_same_preloaded_elements(kept, trace, count)
    if how is None:
        assert layout_line(trace) == (count, "copied from the class cache")
    else:
        # Not used: described class by class again, and kept again for the next run.
        assert layout_line(trace) == (count, "kept in the class cache for the next run")
        forget_the_programs_classes(cache)
        after, _ = record_hello(default_jdk, agent_jar, where, tmp_path / "after", cache, verify=False)
        assert layout_line(after) == (count, "copied from the class cache")
        assert_same_preloaded_elements(kept, after, count)


REDEFINED = re.compile(r"instrumented (\d+) classes loaded before the agent \((\d+) redefined from the class cache")


def preloaded_plumbing(trace: TraceDir) -> dict[str, tuple[str, str, int]]:
    """The JVM's sun/instrument classes static.xml lists as loaded before the agent:
    (instrumented, reason, number of methods) by name."""
    out = {}
    for _, el in etree.iterparse(str(trace.path / "static.xml"), tag="class", resolve_entities=False):
        if el.get("preloaded") == "true" and el.get("name").startswith("sun/instrument/"):
            out[el.get("name")] = (el.get("instrumented"), el.get("reason"), len(el.findall("method")))
        el.clear()
    return out


def redefined(trace: TraceDir) -> int:
    """How many classes loaded before the agent agent.log says were redefined from the bundle."""
    found = REDEFINED.search((trace.path / "agent.log").read_text())
    assert found, (trace.path / "agent.log").read_text()
    return int(found.group(2))


STARTUP = re.compile(r"agent start-up (\d+) ms \(([^)]*)\)")
STARTUP_STEPS = ["options, modules and writer", "transformer", "warm-up", "bundle", "layout",
                 "relocation and copy check", "redefinition and retransformation", "layout's end"]


def startup_steps(trace: TraceDir) -> tuple[dict[str, int], int]:
    """The premain's steps agent.log times, in milliseconds, and its whole time."""
    found = STARTUP.search((trace.path / "agent.log").read_text())
    assert found, (trace.path / "agent.log").read_text()
    steps = {}
    for step in found.group(2).split(" ms, "):
        name, _, ms = step.removesuffix(" ms").rpartition(" ")
        steps[name] = int(ms)
    return steps, int(found.group(1))


def test_classes_redefined_from_the_bundle_are_those_retransformation_makes(default_jdk, agent_jar, kept_layout,
                                                                              tmp_path):
    """The classes the bundle holds are redefined with its bytes, not retransformed (their original
    bytes are never asked for): the same classes, ids, descriptions and trace as when every class is
    retransformed (-Djbgui.redefine=false) and the cache checks each one's original bytes."""
    where, kept, count = kept_layout
    runs = {}
    for label, args in (("retransformed", ("-Djbgui.redefine=false",)), ("redefined", ())):
        cache = tmp_path / label / "cache"
        shutil.copytree(where / "cache", cache)
        forget_the_programs_classes(cache)
        runs[label], line = record_hello(default_jdk, agent_jar, where, tmp_path / label / "trace", cache,
                                         verify=False, jvm_args=args)
        assert_served_by_bundle(line)
        assert layout_line(runs[label]) == (count, "copied from the class cache")
        assert_sound(runs[label])
        steps, total = startup_steps(runs[label])
        assert list(steps) == STARTUP_STEPS and sum(steps.values()) <= total, (steps, total)
    assert redefined(runs["retransformed"]) == 0
    assert redefined(runs["redefined"]) == count
    # The JVM's agent plumbing loaded before the agent is listed, not retransformed: when the
    # bundle serves every class, every class instrumented was redefined.
    assert REDEFINED.search((runs["redefined"].path / "agent.log").read_text()).groups() == (str(count),) * 2
    for run in runs.values():
        plumbing = preloaded_plumbing(run)
        assert "sun/instrument/InstrumentationImpl" in plumbing and \
            set(plumbing.values()) == {("false", "agent", 0)}, plumbing
    assert_same_trace(runs["retransformed"], runs["redefined"])
    assert_same_preloaded_elements(runs["retransformed"], runs["redefined"], count)
    # Under verification, every class redefined from the bundle verifies (record_hello asserts a
    # clean run; the JVM would reject a class that does not).
    cache = tmp_path / "verified" / "cache"
    shutil.copytree(where / "cache", cache)
    verified, _ = record_hello(default_jdk, agent_jar, where, tmp_path / "verified" / "trace", cache)
    assert redefined(verified) > 300


# A program's own classes, read from a class directory, are cached too (under app/); a class it
# defines from bytes as it runs is not; a class rebuilt with other code is instrumented afresh.
APP = """
import java.nio.file.*;

public class App {
    public static void main(String[] args) throws Exception {
        System.out.println("sum " + Helper.sum(Integer.parseInt(args[0])));
        byte[] bytes = Files.readAllBytes(Paths.get(args[1], "Gen.class"));
        Class<?> gen = new ClassLoader(App.class.getClassLoader()) {
            Class<?> define() { return defineClass("Gen", bytes, 0, bytes.length); }
        }.define();
        System.out.println(gen.getMethod("twice", int.class).invoke(null, 21));
    }
}
"""
HELPER = "public class Helper { static int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += %s; return s; } }\n"
GEN = "public class Gen { public static int twice(int x) { return x + x; } }\n"


def compile_app(jdk, where: Path, term: str) -> None:
    (where / "gen").mkdir(parents=True, exist_ok=True)
    (where / "App.java").write_text(APP)
    (where / "Helper.java").write_text(HELPER % term)
    (where / "gen" / "Gen.java").write_text(GEN)
    subprocess.run([jdk.javac, "-d", str(where / "classes"), str(where / "App.java"), str(where / "Helper.java")],
                   check=True)
    subprocess.run([jdk.javac, "-d", str(where / "gen"), str(where / "gen" / "Gen.java")], check=True)


def record_app(jdk, agent_jar, where: Path, out: Path, cache: Path) -> tuple[TraceDir, tuple[int, int]]:
    """App recorded with this class cache, its classes verified; the trace and agent.log's count of
    the program's classes the cache served, of those it instrumented."""
    result = subprocess.run(
        [jdk.java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+BytecodeVerificationLocal",
         f"-javaagent:{agent_jar}=out={out},cache={cache}", "-cp", str(where / "classes"), "App", "7",
         str(where / "gen")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "42"
    log = (out / "agent.log").read_text()
    assert "error" not in log, log
    own = re.search(r"class cache served \d+ of \d+ classes loaded after start-up and instrumented "
                    r"\(the program's own: (\d+) of (\d+)\)", log)
    assert own, log
    trace = TraceDir(out)
    assert trace.complete
    return trace, (int(own.group(1)), int(own.group(2)))


def own_calls(trace: TraceDir) -> list[str]:
    return [m for m in method_sequence(trace) if m.split(".")[0] in ("App", "App$1", "Helper", "Gen")]


def test_the_programs_own_classes_come_from_the_cache_until_they_change(default_jdk, agent_jar, tmp_path):
    compile_app(default_jdk, tmp_path, "i")
    cache = tmp_path / "cache"
    first, own = record_app(default_jdk, agent_jar, tmp_path, tmp_path / "t1", cache)
    # App, App$1 and Helper come from the class directory; Gen from bytes the program read.
    assert own == (0, 3)
    (app_dir,) = cache.glob("*/app")
    names = sorted(p.name.split("@")[0] for p in app_dir.iterdir())
    assert names == ["App", "App$1", "Helper"]
    assert "Gen" in {c.name for c in first.classes.values()}
    second, own = record_app(default_jdk, agent_jar, tmp_path, tmp_path / "t2", cache)
    assert own == (3, 3)
    # Their templates (read by the writer) were sound: the entries are all still there.
    assert sorted(p.name.split("@")[0] for p in app_dir.iterdir()) == names
    # Served from the cache, the program's classes record exactly what instrumenting them did.
    calls = own_calls(first)
    assert calls == own_calls(second)
    assert calls.count("Helper.sum(I)I") == 1 and calls.count("Gen.twice(I)I") == 1
    assert block_counts(first)["Helper.sum(I)I"] == block_counts(second)["Helper.sum(I)I"] > 0
    da, db = described(first), described(second)
    assert all(da[c] == db[c] for c in ("App", "App$1", "Helper", "Gen"))
    # Helper rebuilt with another body: a new entry, instrumented afresh; the others still served.
    compile_app(default_jdk, tmp_path, "i * 2")
    third, own = record_app(default_jdk, agent_jar, tmp_path, tmp_path / "t3", cache)
    assert own == (2, 3)
    assert sorted(p.name.split("@")[0] for p in app_dir.iterdir()) == ["App", "App$1", "Helper", "Helper"]
    assert described(third)["Helper"] != da["Helper"]


def damage_entry(entry: Path, how: str) -> None:
    """Damages a class's own cache entry (a 32-byte header of big-endian ints: magic, class file
    length, constant count, id count, attributes' and warnings' lengths, template parts and text;
    then the head those lengths give, then the template, which ends the file)."""
    data = bytearray(entry.read_bytes())
    _, length, constants, _, attrs, warn, parts, _ = (int.from_bytes(data[i:i + 4], "big") for i in range(0, 32, 4))
    template = 32 + length + 5 * constants + attrs + warn
    assert parts >= 1 and template < len(data)
    if how == "truncated":        # found short when the class loads: instrumented afresh
        del data[-1]
    elif how == "template":       # the template's first part lengths negative: found by the writer
        data[template:template + 8] = b"\xff" * 8
    entry.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncated", "template"])
def test_a_damaged_class_entry_only_means_describing_again(default_jdk, agent_jar, tmp_path, how):
    # The program's thread reads an entry's head when the class loads; the writer reads its
    # template, most of the entry, when it describes the class. Damage found at either point
    # costs the class its description from the cache, never a wrong one or a lost class.
    compile_app(default_jdk, tmp_path, "i")
    cache = tmp_path / "cache"
    first, _ = record_app(default_jdk, agent_jar, tmp_path, tmp_path / "t1", cache)
    (app_dir,) = cache.glob("*/app")
    (entry,) = app_dir.glob("Helper@*.jbc")
    sound = entry.read_bytes()
    damage_entry(entry, how)
    second, own = record_app(default_jdk, agent_jar, tmp_path, tmp_path / "t2", cache)
    assert own == ((2, 3) if how == "truncated" else (3, 3))
    assert own_calls(first) == own_calls(second)
    assert block_counts(first)["Helper.sum(I)I"] == block_counts(second)["Helper.sum(I)I"] > 0
    da, db = described(first), described(second)
    assert all(da[c] == db[c] for c in ("App", "App$1", "Helper", "Gen"))
    report = run_check(second.path)
    problems = [f.format() for f in report.findings if f.severity in (ERROR, WARNING, FATAL)]
    assert not problems, "\n".join(problems)
    # A short entry was replaced at once, by the class instrumented afresh; one whose template
    # was damaged is removed, and the next run stores the class anew.
    if how == "truncated":
        assert entry.read_bytes() == sound
    else:
        assert not entry.exists()
    third, own = record_app(default_jdk, agent_jar, tmp_path, tmp_path / "t3", cache)
    assert own == ((3, 3) if how == "truncated" else (2, 3))
    assert entry.read_bytes() == sound
    assert described(third)["Helper"] == da["Helper"]
