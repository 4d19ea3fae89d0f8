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
