"""The palette: no package colour may look like a kind of call (left by an exception, uncaught,
native, untraced, truncated), in a light or a dark palette, whatever the package is called."""

from __future__ import annotations

import random

import numpy as np
import pytest
from PySide6.QtGui import QColor

from jbgui.model.analysis import Flag
from jbgui.ui import colors


def test_distance_is_perceptual():
    assert colors.distance("#ffffff", "#ffffff") == 0
    assert colors.distance("#000000", "#ffffff") == pytest.approx(100, abs=0.5)
    # the collision the issue reported: a package pink against the exception colour
    assert colors.distance("#f28585", "#f28b82") < 5


@pytest.mark.parametrize("dark", [False, True])
def test_no_package_colour_is_near_a_reserved_kind_colour(qapp, dark):
    fills = colors.slot_colors(dark)
    reserved = [fills[slot] for slot in colors.KIND_FILLS]
    rng = random.Random(11)
    packages = ["", "java/lang", "java/util", "org/gjt/sp/jedit", "com/sun/tools/javac/comp", "example"]
    packages += ["/".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
                          for _ in range(rng.randint(1, 5))) for _ in range(5000)]
    slots = {colors.package_slot(p) for p in packages}
    assert slots == set(range(colors.N_HUES))          # every hue is in use over so many packages
    closest = min(colors.distance(fills[s], r) for s in slots for r in reserved)
    assert closest >= colors.MIN_DISTANCE, closest


def test_kinds_win_over_the_package_hue(qapp):
    hues = np.array([0, 3, 5])
    slots = colors.call_slots(np.array([1, 2, 2, 1]), np.array([0, int(Flag.EXCEPTIONAL), int(Flag.NATIVE), 0]), hues)
    assert slots.tolist() == [3, colors.EXCEPTIONAL, colors.NATIVE, 3]


def test_every_colour_is_named_in_the_palette():
    """One owner per concept: a colour literal outside the palette module (and the style's dark
    Qt palette) is a colour the palette cannot keep apart from the others."""
    import re
    from pathlib import Path

    import jbgui.ui as ui
    literal = re.compile(r"""["']#[0-9a-fA-F]{6}["']|QColor\(\s*\d""")
    found = [f"{path.name}:{n}: {line.strip()}"
             for path in sorted(Path(ui.__file__).parent.glob("*.py")) if path.name not in ("colors.py", "style.py")
             for n, line in enumerate(path.read_text().splitlines(), 1) if literal.search(line)]
    assert not found, "\n".join(found)
