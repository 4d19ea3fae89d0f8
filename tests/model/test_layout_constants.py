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


def test_a_method_s_words_follow_from_its_start_word():
    # the probes pass the start word and a block index; the runtime adds the offsets
    for method, blocks in ((1, 3), (700, layout.BLOCKS_PER_PAGE * 3 + 5), (layout.MAX_METHOD_ID - 2, 2)):
        start = layout.method_start(method)
        for b in range(blocks):
            page, index = divmod(b, layout.BLOCKS_PER_PAGE)
            assert (start + layout.BLOCK_FROM_START + b) % 2**32 == layout.block(method + page, index)
        assert (start + layout.END_FROM_START) % 2**32 == layout.method_end(method)


# Literal field positions of the event word (``w >> 30``, ``(w >> 11) & 0x7FFFF``, ``w & 0x7FF``):
# the kernels and every other reader must take them from layout, where this file checks them.
_LITERAL_FIELDS = re.compile(r">>\s*(30|27|11)\b|&\s*(0x7[fF]{2}|0x7[fF]{4}|0x7[fF]{6}|0x3[fF]{7}|2047|524287)\b")


def test_no_reader_spells_the_word_layout_in_literals():
    package = Path(layout.__file__).resolve().parents[1]
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "layout.py" or "agent" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _LITERAL_FIELDS.search(line.split("#", 1)[0]):
                offenders.append(f"{path.relative_to(package.parent)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_the_replay_kernel_takes_its_fields_from_layout():
    from jbgui.model import replay_kernel as K

    assert (K._TYPE_SHIFT, K._METHOD_SHIFT, K._METHOD_MASK, K._BLOCK_MASK) == \
        (layout.TYPE_SHIFT, layout.METHOD_SHIFT, layout.MAX_METHOD_ID, layout.BLOCKS_PER_PAGE - 1)
    assert (K._SUBTYPE_SHIFT, K._SUBTYPE_MASK, K._VALUE_MASK) == (layout.SUBTYPE_SHIFT, 7, layout.VALUE_MASK)
    assert (K._T_EXT, K._T_START, K._T_END, K._T_BLOCK) == (0, 1, 2, 3)
    # The word builders and the kernel's decoding agree on every field.
    w = layout.block(layout.MAX_METHOD_ID, layout.BLOCKS_PER_PAGE - 1)
    assert (w >> K._TYPE_SHIFT, (w >> K._METHOD_SHIFT) & K._METHOD_MASK, w & K._BLOCK_MASK) == \
        (layout.TYPE_BLOCK, layout.MAX_METHOD_ID, layout.BLOCKS_PER_PAGE - 1)
