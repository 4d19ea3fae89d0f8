"""GUI tests run offscreen (no display needed) with pytest-qt, on traces the project's agent
records from the test programs. Settings go to a temporary folder of each test's own, never the
user's: a layout one test's window saved (a dock moved, the range panel open) must not shape the
next test's window."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _private_settings(tmp_path_factory, monkeypatch):
    path = tmp_path_factory.mktemp("jbgui-config")
    monkeypatch.setenv("JBGUI_CONFIG_DIR", str(path))
    yield path


@pytest.fixture(autouse=True)
def _no_leftover_tasks():
    """A test's background work (a call tree's first thread, the aggregated trees) is cancelled
    and waited for when the test ends: left running, it took the cores from the next tests (one
    took 49 s in the suite for its 6 s alone)."""
    yield
    from jbgui.ui import tasks

    for task in list(tasks._RUNNING):
        task.cancel()
    for task in list(tasks._RUNNING):
        if task.thread is not None:
            task.thread.join(timeout=60)
