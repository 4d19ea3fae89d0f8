"""The wheel and the sdist carry what an installed jbgui needs: the agent's Java sources (built on
first use), the icon, both commands; installed from the wheel, jbgui builds its agent from its own
copy of the sources, and says what is missing when ASM is not there. The desktop entry is valid."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                             "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    (path,) = out.glob("jbgui-*.whl")
    return path


def test_the_wheel_carries_the_agent_sources_the_icon_and_both_commands(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
    java = sorted(n for n in names if n.startswith("jbgui/agent/java/") and n.endswith(".java"))
    in_tree = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "jbgui/agent/java").rglob("*.java"))
    assert java == in_tree
    assert "jbgui/ui/icons/jbgui.svg" in names
    assert not any(n.startswith("tests/") for n in names)
    assert "jbtrace = jbgui.cli.main:main" in entry_points
    assert "[gui_scripts]" in entry_points and "jbgui = jbgui.ui.app:main" in entry_points


def test_the_sdist_carries_the_sources(tmp_path):
    result = subprocess.run([sys.executable, "-c", "from setuptools import build_meta as b; import sys; "
                             f"print(b.build_sdist({str(tmp_path)!r}))"],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    (sdist,) = tmp_path.glob("jbgui-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert "jbgui/agent/java/jbgui/agent/Premain.java" in names
    assert "jbgui/ui/icons/jbgui.svg" in names
    assert "pyproject.toml" in names and "README.md" in names


def test_an_installed_jbgui_builds_its_agent_from_its_own_sources(wheel, tmp_path):
    target = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                             str(wheel)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    env = {**os.environ, "PYTHONPATH": str(target), "JBGUI_CACHE": str(tmp_path / "cache")}
    built = subprocess.run([sys.executable, "-c", "import jbgui.agent.build as b; print(b.JAVA_SOURCES); "
                            "print(b.ensure_agent())"], capture_output=True, text=True, timeout=600, env=env,
                           cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    sources, jar = built.stdout.split()
    assert Path(sources).is_relative_to(target)
    assert Path(jar).is_file() and Path(jar).is_relative_to(tmp_path / "cache")
    # Without ASM: a message that says what to install, no traceback.
    missing = subprocess.run([sys.executable, "-m", "jbgui.agent.build"], capture_output=True, text=True,
                             timeout=600, env={**env, "JBGUI_ASM_DIR": str(tmp_path / "no-asm"),
                                               "JBGUI_CACHE": str(tmp_path / "cache2")}, cwd=tmp_path)
    assert missing.returncode == 2
    assert "apt-get install libasm-java" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_the_desktop_entry_is_valid():
    result = subprocess.run(["desktop-file-validate", str(ROOT / "packaging" / "jbgui.desktop")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (ROOT / "packaging" / "jbgui.desktop").read_text()
    assert "Exec=jbgui %f" in text and "Icon=jbgui" in text
