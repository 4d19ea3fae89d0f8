"""Loop records (agent option ``loops``, on by default; jbgui.instr.LoopCycles).

A tight loop's blocks count their steps in a local; when the loop is left, one record of three words
stands for all their events, and readers write those events back (format/entry_blocks.py). The
trace read back must be the one a probe per block records: tests/programs/loop_records (loops left
by their condition, by break, by a return from the middle, by implicit exceptions whose constructors
the tracer records before the handler stores the record, after more steps than a record holds, on
two threads) recorded with ``loops=on`` and ``loops=off`` gives the same events, JDK calls inside
the program's code included, the same replayed block counts and sound traces.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import numpy as np
import pytest
import zstandard

from jbgui.model import layout
from jbgui.model.analysis import Analysis
from jbgui.model.check import ERROR, WARNING, run_check
from jbgui.model.format.chunks import StreamReader, _unfilter
from jbgui.model.statics import load_statics
from jbgui.model.tracedir import TraceDir
from trace_words import symbol_table

PROGRAMS_DIR = Path(__file__).resolve().parent.parent / "programs"


@pytest.fixture(scope="module")
def both(record, default_jdk):
    runs = {}
    expected = (PROGRAMS_DIR / "loop_records" / "expected_stdout.txt").read_text()
    for loops in (True, False):
        run = record("loop_records", default_jdk, loops=loops)
        assert run.exit_code == 0, run.describe()
        assert run.stdout == expected
        runs[loops] = run
    return runs


class ThreadText:
    """A thread's events as text, without receiver words: whether a receiver gets a word or a mark
    in its start word depends on what the thread's caches held (Tracer.enterInstance), which
    differs from run to run."""

    def __init__(self, run, thread: str):
        trace = TraceDir(run.trace_dir)
        index = next(r["index"] for r in trace.threads if r.get("name") == thread)
        words = trace.stream_events(index)
        receiver = (words >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED) & (
            (words >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK == layout.EXT_RECEIVER)
        self.names, self.inverse = symbol_table(run.trace_dir, words[~receiver])

    def where(self, test) -> np.ndarray:
        """Per event: whether its text passes ``test`` (asked once per distinct word)."""
        return np.array([bool(test(n)) for n in self.names], bool)[self.inverse]

    def own(self) -> list[str]:
        """The events of the program's own methods."""
        return self.names[self.inverse[self.where(lambda n: " Main." in n)]].tolist()

    def calls(self, method: str) -> list[list[str]]:
        """Every call of ``method``: its events from its start to its end or exception exit, the
        calls it made included (the JDK's too: the constructors of the exceptions thrown in its loops)."""
        step = self.where(lambda n: n.startswith("start ")).astype(np.int64)
        step -= self.where(lambda n: n.startswith("end ") or n == f"ext {layout.EXT_EXCEPTION_EXIT}")
        depth = np.cumsum(step)
        out = []
        for i in np.nonzero(self.where(lambda n: n.startswith(f"start Main.{method}(")))[0].tolist():
            length = int(np.nonzero(depth[i:] == depth[i] - 1)[0][0]) + 1
            out.append(self.names[self.inverse[i:i + length]].tolist())
        return out


def test_the_steps_the_records_stand_for_are_read_back(both):
    on, off = both[True], both[False]
    assert on.trace_json()["agent"]["options"]["loops"] is True
    assert off.trace_json()["agent"]["options"]["loops"] is False
    for thread in ("main", "twin"):
        a, b = ThreadText(on, thread), ThreadText(off, thread)
        own = a.own()
        assert len(own) > (3_000_000 if thread == "main" else 4_000)
        assert own == b.own(), thread
        # Left by implicit exceptions: the records go before the constructors' events, which the
        # tracer recorded before the handler could store them (ThreadTrace.putLoopAt).
        for method, thrown in (("overrun", "ArrayIndexOutOfBoundsException"), ("divide", "ArithmeticException"),
                               ("longLoop", "ArrayIndexOutOfBoundsException"),
                               ("hashInto", "ArrayIndexOutOfBoundsException"), ("hash", None),
                               ("sieveCount", None), ("rareCalls", "NumberFormatException"),
                               ("divideAfterCall", "ArithmeticException"), ("joinThenLeaf", None),
                               ("oddOnes", None), ("buckets", None),
                               ("oddOnesFrom", "ArrayIndexOutOfBoundsException")):
            calls_a, calls_b = a.calls(method), b.calls(method)
            assert calls_a == calls_b, (thread, method)
            if thrown and (thread == "main" or method != "longLoop"):
                assert any(f"start java.lang.{thrown}.<init>(Ljava/lang/String;)V" in c for c in calls_a), (thread, method)


def log_counts(run) -> tuple[int, int]:
    log = (run.trace_dir / "agent.log").read_text()
    steps, words = re.search(r"(\d+) steps of loops in (\d+) words of loop records", log).groups()
    assert "a loop record follows the events" not in log
    return int(steps), int(words)


def test_records_are_stored_and_marked(both):
    steps, words = log_counts(both[True])
    # longLoop alone runs 1.5 M + 2 x 1.2 M steps; every record holds fewer than LOOP_STEPS_MAX.
    assert steps > 5_000_000
    assert words > 3 * (steps // layout.LOOP_STEPS_MAX)
    assert log_counts(both[False]) == (0, 0)
    filters = {True: 0, False: 0}
    for loops in (True, False):
        for path in sorted((both[loops].trace_dir / "events").glob("T*.jbt")):
            with StreamReader(path) as reader:
                for chunk in reader.chunks(decode=False):
                    assert chunk.ok
                    filters[loops] |= chunk.header.filter
    assert filters[True] & layout.FILTER_LOOPS
    assert not filters[False] & layout.FILTER_LOOPS


def raw_words(trace_dir) -> np.ndarray:
    """Every stream's words as stored, before readers expand anything."""
    out = []
    for path in sorted((trace_dir / "events").glob("T*.jbt")):
        with StreamReader(path) as reader:
            for chunk in reader.chunks(decode=False):
                h = chunk.header
                payload = reader._read(h.payload_offset, h.length)
                raw = {layout.CODEC_ZSTD: lambda b: zstandard.ZstdDecompressor().decompress(b, max_output_size=1 << 26),
                       layout.CODEC_ZLIB: zlib.decompress, layout.CODEC_NONE: bytes}[h.codec](payload)
                planes = h.filter & layout.FILTER_BYTE_PLANES
                out.append(_unfilter(raw, planes, len(raw) // 4, copy=True))
    return np.concatenate(out)


def test_a_static_leafs_calls_on_a_cycle_are_in_the_record(both):
    words = raw_words(both[True].trace_dir)
    extended = words >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED
    subtype = (words >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK
    calls = words[extended & (subtype == layout.EXT_LOOP_CALL)]
    assert len(calls) > 0
    st = load_statics(both[True].trace_dir)
    (mix,) = st.find_methods("Main", "mix")
    (is_odd,) = st.find_methods("Main", "isOdd")
    (bucket,) = st.find_methods("Main", "bucket")
    fourth = calls[(calls & layout.LOOP_PATH_FLAG) == 0]
    assert set((fourth & layout.MAX_METHOD_ID).tolist()) == {mix, is_odd, bucket}
    # The calls' start words were not stored but for these: mix's, the calls of a step that
    # rejoined the cycle before the call (joinThenLeaf, Tracer.leafOffCycle: a tenth of its
    # 60 + 63 steps); isOdd's, the real calls made after an exception in its body in place
    # (oddOnesFrom, four a run, Tracer.leafThrew), and the calls on another path than their
    # record's (Tracer.leafOffPath); bucket's, those (an eighth of its 500 + 503 calls).
    starts = words[words >> layout.TYPE_SHIFT == layout.TYPE_METHOD_START]
    started = (starts >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
    assert (started == mix).sum() == 6 + 7
    assert (started == is_odd).sum() >= 2 * 4
    assert 0 < (started == bucket).sum() < 1003 // 4


def test_a_pure_leafs_paths_are_in_the_record(both):
    """A pure leaf of several blocks (PureLeaves) written in place: each record's fifth word is the
    path its calls took (bit j: the leaf's block j), and a call on another path begins a record."""
    words = raw_words(both[True].trace_dir)
    extended = words >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED
    subtype = (words >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK
    path_at = np.nonzero(extended & (subtype == layout.EXT_LOOP_CALL) & ((words & layout.LOOP_PATH_FLAG) != 0))[0]
    st = load_statics(both[True].trace_dir)
    (bucket,) = st.find_methods("Main", "bucket")
    (is_odd,) = st.find_methods("Main", "isOdd")
    paths = {}
    for i in path_at.tolist():
        leaf = int(words[i - 1] & layout.MAX_METHOD_ID)
        paths.setdefault(leaf, set()).add(int(words[i] & (layout.LOOP_PATH_FLAG - 1)))
    # bucket(v): v < 10 returns at block 1; v < 50 tests v & 7 and returns 2 or 3; else 4. The
    # path of 2 (every eighth v from 10 to 49) is one step between steps on the path of 3: a
    # record's first call sets its path, and a call on another path is stored as words
    # (Tracer.leafOffPath), so no record has it.
    assert len(paths[bucket]) == 3 and all(p & 1 for p in paths[bucket])
    # isOdd's two paths: its value 1 or 0.
    assert len(paths[is_odd]) == 2


def test_loops_with_a_rare_path_off_their_cycle_get_records(both):
    """A loop whose body has one path that stores nothing (its cycle) and others that call or run
    an inner loop gets records for the steps on its cycle (LoopCycles); the steps off it are
    recorded as blocks, and those that rejoin the cycle are recorded as blocks up to the header
    (Tracer.loopJoin). The test above holds their events to those of loops=off."""
    words = raw_words(both[True].trace_dir)
    extended = words >> layout.TYPE_SHIFT == layout.TYPE_EXTENDED
    subtype = (words >> layout.SUBTYPE_SHIFT) & layout.SUBTYPE_MASK
    first = np.nonzero(extended & (subtype == layout.EXT_LOOP) & ((words & layout.LOOP_CYCLE_FLAG) == 0))[0]
    headers, inverse = symbol_table(both[True].trace_dir, words[first + 1])
    steps = np.bincount(inverse, weights=(words[first] & layout.LOOP_STEPS_MAX).astype(np.float64))
    per_header = dict(zip(headers.tolist(), steps.tolist()))
    # sieveCount's outer loop (its header is block 1) for the numbers crossed out, three blocks a
    # step: most of 2,000 on each thread; its inner loop (header block 4) has records of its own.
    assert per_header.get("block Main.sieveCount(I)I 1", 0) > 2 * 3 * 1500
    assert per_header.get("block Main.sieveCount(I)I 4", 0) > 0
    # rareCalls' and divideAfterCall's loops, whose rare paths call the JDK.
    assert per_header.get("block Main.rareCalls([ILjava/lang/StringBuilder;)I 1", 0) > 2 * 150
    assert any(h.startswith("block Main.divideAfterCall(") for h in per_header)


def test_both_traces_are_sound_and_replay_the_same_counts(both):
    counts = []
    for loops in (True, False):
        report = run_check(both[loops].trace_dir)
        assert report.count(ERROR) == report.count(WARNING) == 0, report.findings
        a = Analysis.open(both[loops].trace_dir)
        per_method = {}
        for name in ("sum", "lastIndexOf", "firstOver", "accumulate", "overrun", "divide", "longLoop", "table", "<init>",
                     "mix", "hash", "hashInto", "sieveCount", "rareCalls", "divideAfterCall", "joinThenLeaf",
                     "isOdd", "bucket", "oddOnes", "buckets", "oddOnesFrom"):
            (method,) = a.statics.find_methods("Main", name)
            blocks = a.statics.method_blocks(method)
            per_method[name] = np.asarray(a.block_counts[blocks.start:blocks.stop], np.int64).tolist()
        counts.append(per_method)
    assert counts[0] == counts[1]
    # longLoop's first loop: 1.5 M + 1.2 M trips of its header and body, and once more its exit test.
    assert max(counts[0]["longLoop"]) >= 2 * 1_200_000
    # mix's calls, all from loops whose records stand for them (its body written in place).
    assert counts[0]["mix"] == [1000 + 1003 + 2 * 1 + 201 + 204 + 60 + 63 + 700_000]


@pytest.mark.parametrize("args, status", [((), 1), (("exit",), 3)])
def test_a_daemon_storing_records_at_exit_leaves_a_sound_trace(record, default_jdk, args, status):
    """The final flush takes a running daemon's buffer while it stores loop records: the chunk's
    event count comes from the words taken (ThreadTrace.loopCounts), and the thread's end record
    from the flush, not from its position afterwards. Either failed about one run in three."""
    for _ in range(3):
        run = record("loop_daemon", default_jdk, args)
        assert run.exit_code == status, run.describe()
        report = run_check(run.trace_dir)
        assert report.count(ERROR) == report.count(WARNING) == 0, report.findings
        steps, _ = log_counts(run)
        assert steps > 1_000_000


@pytest.mark.slow
@pytest.mark.parametrize("args, status", [(("throw", "8"), 1), (("exit", "8"), 3)])
def test_eight_daemons_storing_at_exit_leave_sound_traces(record, default_jdk, args, status):
    """The same with eight daemons on two cores, so that the final flush often finds one between a
    word's store and its position's (ThreadTrace.settle): without that wait, 10 of 30 such runs
    ended a daemon's stream with a word never stored."""
    for _ in range(5):
        run = record("loop_daemon", default_jdk, args)
        assert run.exit_code == status, run.describe()
        report = run_check(run.trace_dir)
        assert report.count(ERROR) == report.count(WARNING) == 0, report.findings
