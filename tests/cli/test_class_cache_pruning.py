"""The agent's class cache stays bounded (jbgui.launch.class_cache): the policy on directories
made by hand, and a real recording that removes an old directory and marks the one it used."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from jbgui.launch import class_cache as CC

DAY = 86400.0

HELLO = """
public class Main {
    public static void main(String[] args) {
        System.out.println("hello");
    }
}
"""


def key_dir(root: Path, name: str, used_days_ago: float | None, size: int, now: float) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "java.lang.Object@1-2.jbc").write_bytes(b"\0" * size)
    if used_days_ago is not None:
        (d / CC.MARKER).touch()
        t = now - used_days_ago * DAY
        os.utime(d / CC.MARKER, (t, t))
    return d


def test_unused_directories_go_then_the_least_recently_used_beyond_the_budget(tmp_path):
    now = time.time()
    root = tmp_path / "classes"
    stale = key_dir(root, "jdk17-1a2b3c4d-5e6f7a8b", 31, 10, now)
    old = key_dir(root, "jdk17-11111111-22222222", 5, 400, now)
    older = key_dir(root, "jdk25-33333333-44444444", 9, 400, now)
    recent = key_dir(root, "jdk17-55555555-66666666", 0.02, 400, now)     # used within the hour: stays
    unmarked = key_dir(root, "jdk17-77777777-88888888", None, 400, now)   # its own time: now
    not_ours = key_dir(root, "my-notes", 400, 10, now)
    link = root / "jdk17-99999999-aaaaaaaa"
    link.symlink_to(older)
    removed = CC.prune(root, now=now, budget_bytes=1000)
    # the stale one by age; then, 1600 bytes over a budget of 1000, the least recently used
    # (9 days, then 5) until under it; the one used within the hour and the unmarked (new) one stay
    assert set(removed) == {stale, older, old}
    assert not stale.exists() and not older.exists() and not old.exists()
    assert recent.exists() and unmarked.exists() and not_ours.exists() and link.is_symlink()
    # within the budget, nothing more goes
    assert CC.prune(root, now=now, budget_bytes=1000) == []
    # a cache directory that is not there: nothing, no error
    assert CC.prune(tmp_path / "missing") == []


def test_the_programs_classes_are_held_to_their_budget_least_recently_used_first(tmp_path):
    now = time.time()
    d = key_dir(tmp_path / "classes", "jdk17-1a2b3c4d-5e6f7a8b", 0.5, 10, now)
    app = d / CC.APP
    app.mkdir()
    entries = {}
    for name, days_ago in [("A", 40), ("B", 3), ("C", 2), ("D", 1), ("E", 0.01)]:
        f = app / f"p.{name}@1-2-300.jbc"
        f.write_bytes(b"\0" * 300)
        t = now - days_ago * DAY
        os.utime(f, (t, t))
        entries[name] = f
    # 1,500 bytes against a budget of 700: the oldest go until under it (A, B, C: 600 left)
    removed = CC.prune_app(d, now=now, budget_bytes=700)
    assert removed == [entries["A"], entries["B"], entries["C"]]
    assert sorted(p.name for p in app.iterdir()) == ["p.D@1-2-300.jbc", "p.E@1-2-300.jbc"]
    # one used within the hour stays even over the budget
    assert CC.prune_app(d, now=now, budget_bytes=100) == [entries["D"]]
    assert entries["E"].exists()
    # the directory's size, which the budget over all directories weighs, counts app/ too
    assert CC._size(d) == 10 + 300
    # no app/ at all: nothing, no error
    assert CC.prune_app(tmp_path / "elsewhere", now=now) == []


def test_the_default_directory_is_the_agents(tmp_path):
    assert CC.default_dir({"JBGUI_CACHE": "/c"}) == Path("/c/classes")
    assert CC.default_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/jbgui/classes")
    assert CC.default_dir({}) == Path.home() / ".cache" / "jbgui" / "classes"


def test_a_recording_removes_an_old_directory_and_marks_the_one_it_used(jbtrace, default_jdk, compile_java,
                                                                         agent_jar, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    shutil.copytree(agent_jar.parent, cache / agent_jar.parent.name)      # the same agent, not built again
    now = time.time()
    stale = key_dir(cache / "classes", "jdk17-0badc0de-0badc0de", 45, 10, now)
    not_ours = key_dir(cache / "classes", "keep-me", 45, 10, now)
    monkeypatch.setenv("JBGUI_CACHE", str(cache))
    classes = compile_java({"Main.java": HELLO})
    result = jbtrace(["record", "-o", "t", "--", default_jdk.java, "-cp", str(classes), "Main"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    assert not stale.exists() and not_ours.exists()
    used = [d for d in (cache / "classes").iterdir() if d.name.startswith("jdk")]
    assert len(used) == 1, used
    assert time.time() - (used[0] / CC.MARKER).stat().st_mtime < 600
    assert any(used[0].glob("*.jbc")), "the agent kept the classes it instrumented there"
