"""GUI tests run offscreen (no display needed) with pytest-qt, on traces the project's agent
records from the test programs. Settings go to a temporary folder, never the user's."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _private_settings(tmp_path_factory):
    path = tmp_path_factory.mktemp("jbgui-config")
    os.environ["JBGUI_CONFIG_DIR"] = str(path)
    yield path
