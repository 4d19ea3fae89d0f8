"""Virtual threads (JDK 21+): each traced one is a thread of the trace, up to the agent's limit.

A virtual thread's frames move between carrier threads: they are unmounted when it blocks and
mounted again, perhaps on another carrier. Every probe writes to the trace its frame's entry probe
chose (a local of the frame), so a frame's events stay in its virtual thread's stream wherever it
runs; these tests hold that with a program whose virtual threads sleep between two calls.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest


def needs_virtual_threads(jdk) -> None:
    if jdk.release < 21:
        pytest.skip("virtual threads are JDK 21+")


def run_jbtrace(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jbgui.cli.main", *map(str, args)], capture_output=True, text=True,
                          timeout=180)


def run_calls(trace_dir) -> list[tuple[str, int, str, str]]:
    """``jbtrace calls``: (thread, depth, method, flags) per replayed call."""
    done = run_jbtrace("calls", trace_dir)
    assert done.returncode == 0, done.stderr
    rows = []
    for line in done.stdout.splitlines():
        thread, depth, method, flags = line.split("\t")
        rows.append((thread, int(depth), method, flags))
    return rows


def thread_records(trace_dir) -> list[dict]:
    return [json.loads(line) for line in (trace_dir / "threads.jsonl").read_text().splitlines()]


def test_a_virtual_thread_is_traced_and_listed_as_virtual(jdk, record):
    needs_virtual_threads(jdk)
    run = record("virtual_threads", jdk)
    assert run.exit_code == 0, run.describe()
    assert run.stdout == "virtual thread computed 2997\n"
    starts = {s["name"]: s for s in thread_records(run.trace_dir) if s.get("kind") == "start"}
    assert starts["vt-worker"]["virtual"] is True and starts["vt-worker"]["group"] == "VirtualThreads"
    assert starts["main"]["virtual"] is False
    limits = run.trace_json()["limits"]
    assert (limits["virtual_threads_untraced"], limits["virtual_threads_traced"]) == (False, 1)
    calls = run_calls(run.trace_dir)
    lambdas = [c for c in calls if c[0] == "vt-worker" and c[2] == "Main.lambda$main$0([I)V"]
    assert len(lambdas) == 1
    # Its parent is the task's run() through the lambda's (untraced, hidden) proxy class, not the
    # native call before it in Thread.runWith (ensureMaterializedForStackWalk, JDK 21+).
    at = calls.index(lambdas[0])
    parent = next(c for c in reversed(calls[:at]) if c[0] == "vt-worker" and c[1] == lambdas[0][1] - 1)
    assert (parent[2], parent[3]) == ("java.lang.Runnable.run()V", "untraced")
    works = [c for c in calls if c[2] == "Main.work(I)I"]
    # work runs on the virtual thread only, called by the lambda.
    assert [(c[0], c[1]) for c in works] == [("vt-worker", lambdas[0][1] + 1)]
    check = run_jbtrace("check", run.trace_dir)
    assert check.returncode == 0 and "sound: 0 errors, 0 warnings" in check.stdout, check.stdout + check.stderr


def test_virtual_threads_that_sleep_keep_their_frames_across_carriers(jdk, record):
    needs_virtual_threads(jdk)
    run = record("virtual_threads", jdk, args=["6"])
    assert run.exit_code == 0, run.describe()
    assert run.stdout == "6 virtual threads computed 3660\n"
    records = thread_records(run.trace_dir)
    virtual = {r["name"] for r in records if r.get("kind") == "start" and r.get("virtual")}
    assert virtual == {f"vt-{i}" for i in range(6)}
    ended = {r["name"]: r for r in records if r.get("kind") == "end"}
    assert all(ended[name]["alive_at_exit"] is False and ended[name]["events"] > 0 for name in virtual)
    calls = run_calls(run.trace_dir)
    for i in range(6):
        mine = [c for c in calls if c[0] == f"vt-{i}"]
        sleepy = [j for j, c in enumerate(mine) if c[2] == "Main.sleepy(I)I"]
        assert len(sleepy) == 1, mine
        depth = mine[sleepy[0]][1]
        # sleepy's own calls, in order, each one level below it: work, the sleep that unmounts the
        # thread, and work again after it was mounted again (on whichever carrier).
        children = []
        for c in mine[sleepy[0] + 1:]:
            if c[1] <= depth:
                break
            if c[1] == depth + 1:
                children.append(c[2])
        assert children == ["Main.work(I)I", "java.lang.Thread.sleep(J)V", "Main.work(I)I"], mine
        # And none of the virtual thread's own frames went to a carrier's stream.
    assert not [c for c in calls if c[2].startswith("Main.") and not c[0].startswith("vt-") and c[0] != "main"]
    carriers = {r["name"] for r in records if r.get("kind") == "start" and r.get("group") == "CarrierThreads"}
    assert carriers and not carriers & virtual
    check = run_jbtrace("check", run.trace_dir)
    assert check.returncode == 0 and "sound: 0 errors, 0 warnings" in check.stdout, check.stdout + check.stderr


def test_virtual_threads_beyond_the_limit_run_untraced_and_the_trace_says_so(jdk, record):
    needs_virtual_threads(jdk)
    run = record("virtual_threads", jdk, args=["5"], virtual="2")
    assert run.exit_code == 0, run.describe()
    assert run.stdout == "5 virtual threads computed 3030\n"
    meta = run.trace_json()
    assert meta["agent"]["options"]["virtual"] == 2
    assert meta["limits"]["virtual_threads_untraced"] is True
    assert (meta["limits"]["virtual_threads_traced"], meta["limits"]["virtual_threads_max"]) == (2, 2)
    virtual = [r for r in thread_records(run.trace_dir) if r.get("kind") == "start" and r.get("virtual")]
    assert len(virtual) == 2
    log = (run.trace_dir / "agent.log").read_text()
    assert "warning: virtual threads ran and were not traced" in log and "the first 2 are traced" in log
    check = run_jbtrace("check", run.trace_dir)
    said = "more virtual threads than the recorder traces (the first 2; agent option virtual=N)"
    assert said in check.stdout + check.stderr
    # The untraced ones' calls are nowhere, not misplaced on another thread.
    calls = run_calls(run.trace_dir)
    assert len([c for c in calls if c[2] == "Main.sleepy(I)I"]) == 2
    # virtual=0 traces none, as recorders before 2026-11-29 did, and says so in its own words.
    none = record("virtual_threads", jdk, virtual="0")
    assert none.stdout == "virtual thread computed 2997\n"
    assert none.trace_json()["limits"]["virtual_threads_traced"] == 0
    check = run_jbtrace("check", none.trace_dir)
    assert "virtual threads, which were not traced (agent option virtual=0)" in check.stdout + check.stderr
    # And a program without virtual threads says nothing of the kind.
    hello = record("hello", jdk)
    assert hello.trace_json()["limits"]["virtual_threads_untraced"] is False
    assert re.search(r"virtual", run_jbtrace("check", hello.trace_dir).stdout) is None


def test_a_bad_virtual_option_stops_the_jvm_with_the_agents_message(jdk, record):
    run = record("hello", jdk, virtual="-3")
    assert run.exit_code != 0
    assert "virtual must be how many virtual threads to trace at most (0 = none), not '-3'" in run.stderr


def test_virtual_threads_that_never_block_do_not_hold_up_the_exit(jdk, record):
    # Four spinning virtual threads on this machine's two carriers: a virtual thread that left its
    # carrier while it handed a buffer over (holding its trace's lock) never got one back, and the
    # final flush waited for that lock for good (10 exits of 10 before CarrierPin).
    needs_virtual_threads(jdk)
    # Three exits: without the pin about four in five hung, so one could pass by chance.
    for _ in range(3):
        run = record("virtual_threads", jdk, args=["spin"], timeout=90)
        assert run.exit_code == 0, run.describe()
        assert run.stdout == "main done\n"
        spinners = [r for r in thread_records(run.trace_dir) if r.get("kind") == "end" and r["name"].startswith("spin-")]
        assert spinners and all(r["alive_at_exit"] is True and r["events"] > 0 for r in spinners)
        # Complete, nothing lost; not checked whole here (hundreds of millions of events, 25 s), as
        # test_loop_records checks such daemons' traces.
        meta = run.trace_json()
        assert meta["status"] == "complete" and meta["counts"]["lost_events"] == 0
