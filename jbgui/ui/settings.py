"""Where the explorer keeps what it remembers between runs (window layout, recent traces).

``$JBGUI_CONFIG_DIR`` overrides the location (tests, portable installs); otherwise Qt's user
configuration directory is used (``~/.config/jbgui`` on Linux).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

MAX_RECENT = 10


def config_dir() -> Path:
    env = os.environ.get("JBGUI_CONFIG_DIR")
    if env:
        return Path(env)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericConfigLocation)
    return Path(base or Path.home() / ".config") / "jbgui"


def settings() -> QSettings:
    path = config_dir()
    path.mkdir(parents=True, exist_ok=True)
    return QSettings(str(path / "jbgui.ini"), QSettings.Format.IniFormat)


def recent_traces() -> list[str]:
    value = settings().value("recent/traces", [])
    if isinstance(value, str):
        value = [value]
    return [v for v in (value or []) if isinstance(v, str)]


def remember_trace(path: str | Path) -> list[str]:
    path = str(Path(path).resolve())
    items = [p for p in recent_traces() if p != path]
    items.insert(0, path)
    items = items[:MAX_RECENT]
    s = settings()
    s.setValue("recent/traces", items)
    s.sync()
    return items


def forget_trace(path: str) -> None:
    s = settings()
    s.setValue("recent/traces", [p for p in recent_traces() if p != path])
    s.sync()


def cache_in_user_dir() -> bool:
    """Does the user prefer analysis caches in the user cache directory rather than beside each
    trace (File → Analysis cache)? ``$JBGUI_CACHE_DIR`` asks for that too, whatever this says."""
    return bool(settings().value("cache/user_dir", False, type=bool))


def set_cache_in_user_dir(on: bool) -> None:
    s = settings()
    s.setValue("cache/user_dir", bool(on))
    s.sync()
