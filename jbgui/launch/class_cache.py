"""Keeping the agent's cache of instrumented classes bounded.

The agent keeps the classes it instrumented between runs (README, "cache" option), in one
directory per agent build, JDK and set of instrumentation options under ``$JBGUI_CACHE/classes``
(else ``$XDG_CACHE_HOME/jbgui/classes``, else ``~/.cache/jbgui/classes``; the agent's
``Options.defaultCacheDir``): about 100 MB each. A new jbgui, a JDK update or other options make a
new directory, and nothing used to remove the old ones (7.6 GB of them on a development machine).

Each recording now prunes them in the background: a directory unused for :data:`MAX_UNUSED_DAYS`
goes, and while all of them take more than :data:`BUDGET_BYTES` the least recently used go, never
one used in the last :data:`RECENT_HOURS` (another JVM may be reading it).

A directory also keeps the program's own classes, read from jars and class directories, under
``app/`` (``ClassCache.APP``). Those change with every build of the program, so within each
directory they are held to :data:`APP_BUDGET_BYTES`, the least recently used going first: an
entry's time is when it was written, or when a run last used it (the agent stamps an entry it
serves when its time is a day old). An entry used in the last :data:`RECENT_HOURS` stays. When a directory was
last used is the time of its ``last-used`` marker, which the agent stamps at every start
(``ClassCache.markUsed``), else the directory's own time. Only directories named as the agent
names them are touched; anything else there is left alone. Nothing here raises: a cache that
cannot be pruned stays as it is.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from pathlib import Path

MARKER = "last-used"                # ClassCache.LAST_USED
MAX_UNUSED_DAYS = 30
BUDGET_BYTES = 2 << 30
RECENT_HOURS = 1
APP = "app"                         # ClassCache.APP
APP_BUDGET_BYTES = 512 << 20
# Transformer.cacheKey: "jdk" + feature version + "-" + CRC-32 + "-" + String.hashCode, in hex
_KEY = re.compile(r"jdk\d+-[0-9a-f]{1,8}-[0-9a-f]{1,8}")


def default_dir(env: dict[str, str] | None = None) -> Path:
    """Where the agent keeps its class cache when not told otherwise (its ``Options.defaultCacheDir``)."""
    env = os.environ if env is None else env
    if env.get("JBGUI_CACHE"):
        return Path(env["JBGUI_CACHE"]) / "classes"
    base = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "jbgui" / "classes"


def _last_used(directory: Path) -> float:
    try:
        return (directory / MARKER).stat().st_mtime
    except OSError:
        return directory.stat().st_mtime


def _files(directory: Path) -> list[tuple[float, int, Path]]:
    """(modified, size, path) of the files directly in ``directory``; none when it cannot be read."""
    out = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        out.append((st.st_mtime, st.st_size, Path(entry.path)))
                except OSError:
                    pass
    except OSError:
        pass
    return out


def _size(directory: Path) -> int:
    return sum(size for _t, size, _p in _files(directory)) + sum(size for _t, size, _p in _files(directory / APP))


def prune_app(directory: Path, now: float | None = None, budget_bytes: int = APP_BUDGET_BYTES,
              recent_hours: float = RECENT_HOURS) -> list[Path]:
    """Within one cache directory, remove the program's class entries (``app/``) beyond the budget,
    least recently used first, never one used in the last ``recent_hours``; returns them."""
    now = time.time() if now is None else now
    files = sorted(_files(directory / APP))
    total = sum(size for _t, size, _p in files)
    removed = []
    for modified, size, path in files:
        if total <= budget_bytes:
            break
        if now - modified <= recent_hours * 3600:
            break               # sorted by time: every later one is as recent
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
        total -= size
    return removed


def prune(classes_dir: Path, now: float | None = None, max_unused_days: float = MAX_UNUSED_DAYS,
          budget_bytes: int = BUDGET_BYTES, recent_hours: float = RECENT_HOURS) -> list[Path]:
    """Remove the cache directories the policy above lets go; returns them."""
    now = time.time() if now is None else now
    try:
        candidates = [Path(e.path) for e in os.scandir(classes_dir)
                      if _KEY.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    dirs = []
    for d in candidates:
        try:
            dirs.append((_last_used(d), d))
        except OSError:
            pass        # gone meanwhile
    dirs.sort()                     # least recently used first
    removed = []
    kept = []
    for used, d in dirs:
        if now - used > max_unused_days * 86400:
            removed.append(d)
        else:
            prune_app(d, now, recent_hours=recent_hours)
            kept.append((used, d))
    sizes = {d: _size(d) for _used, d in kept}
    total = sum(sizes.values())
    for used, d in kept:
        if total <= budget_bytes:
            break
        if now - used > recent_hours * 3600:
            removed.append(d)
            total -= sizes[d]
    for d in removed:
        shutil.rmtree(d, ignore_errors=True)
    return removed


def prune_in_background(classes_dir: Path | None = None) -> threading.Thread:
    """:func:`prune` on a daemon thread (a recording does not wait for it; a prune cut short by
    the process's exit goes on at the next recording)."""
    thread = threading.Thread(target=prune, args=(classes_dir or default_dir(),), name="jbgui-class-cache-prune",
                              daemon=True)
    thread.start()
    return thread
