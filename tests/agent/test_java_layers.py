"""The agent's packages depend on each other in one direction: ``runtime`` (on the boot path,
called by every probe) on nothing of the agent's; ``output`` (the writer) on ``runtime``;
``instr`` (instrumentation) on ``runtime`` and ``output``; ``zstd`` (the chunk codec, in a module of
its own) on ``runtime`` and ``output``; ``agent`` (the entry) on all but ``zstd``, which it names
only in a string, so that the engine's own loader never loads the codec (CodecModule). A class
that names another package's class in code (an import or a qualified name) outside its allowed
set fails here — the runtime↔output cycle this replaced went through ``TraceSink``."""

from __future__ import annotations

import re
from pathlib import Path

JAVA = Path(__file__).resolve().parents[2] / "jbgui" / "agent" / "java" / "jbgui"
ALLOWED = {
    "runtime": set(),
    "output": {"runtime"},
    "instr": {"runtime", "output"},
    "zstd": {"runtime", "output"},
    "agent": {"runtime", "output", "instr"},
}


def _code(text: str) -> str:
    """The source without comments and string literals (they may name anything)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def test_packages_depend_in_one_direction():
    assert set(ALLOWED) == {p.name for p in JAVA.iterdir() if p.is_dir()}
    wrong = []
    for package, allowed in ALLOWED.items():
        for source in sorted((JAVA / package).glob("*.java")):
            used = set(re.findall(r"\bjbgui\.(runtime|output|instr|agent|zstd)\b", _code(source.read_text())))
            for other in used - allowed - {package}:
                wrong.append(f"{package}/{source.name} uses jbgui.{other}")
    assert not wrong, wrong
