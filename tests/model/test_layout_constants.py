"""The Java recorder and the Python reader define the format's constants once each; they must agree."""

import re
from pathlib import Path

from jbgui.model import layout

JAVA = Path(__file__).resolve().parents[2] / "jbgui" / "agent" / "java" / "jbgui"


def java_int_constants(path: Path) -> dict[str, int]:
    """`public static final int NAME = expr;` evaluated in file order (expressions use earlier names)."""
    values: dict[str, int] = {}
    for name, expr in re.findall(r"public static final int (\w+) = ([^;]+);", path.read_text()):
        values[name] = eval(expr, {"__builtins__": {}}, dict(values))  # noqa: S307 - our own source
    return values


def test_event_layout_constants_agree():
    java = java_int_constants(JAVA / "runtime" / "EventLayout.java")
    assert len(java) > 30
    for name, value in java.items():
        assert getattr(layout, name) == value, name


def test_metric_names_agree():
    text = (JAVA / "output" / "MetricNames.java").read_text()
    block = text[text.index("NAMES = {"):text.index("};")]
    assert tuple(re.findall(r'"(\w+)"', block)) == layout.METRIC_NAMES
    assert len(layout.METRIC_NAMES) == 19


def test_event_word_helpers_match_the_figure():
    # JBInsTrace Figure 2: 2-bit type | 19-bit method | 11-bit block.
    assert layout.block(5, 3) == (3 << 30) | (5 << 11) | 3
    assert layout.method_start(1) == 0x40000800
    assert layout.method_end(layout.MAX_METHOD_ID) >> 30 == 2
    assert layout.extended(layout.EXT_RECEIVER, 7) == (1 << 27) | 7
