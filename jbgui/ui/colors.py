"""The palette: every colour the views use, in one place. One hue per package (so a class keeps
its colour everywhere), fixed colours for the kinds of call (exception, native, untraced...), text
colours per kind, markers, heat shading; each for a light and a dark palette.

Package hues keep a minimum perceptual distance (CIE76 ΔE in Lab, :data:`MIN_DISTANCE`) from
every reserved kind colour: a normal frame must never look exception-exited or native. The hues
are picked once, by that rule, from a fine wheel.
"""

from __future__ import annotations

import colorsys
import zlib

import numpy as np
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import QApplication

from jbgui.model.analysis import Flag
from jbgui.model.statics import Statics

# Hues for packages; chosen so that neighbours differ.
N_HUES = 24
# Colour slots after the hues.
NATIVE, UNTRACED, EXCEPTIONAL, UNCAUGHT, TRUNCATED = range(N_HUES, N_HUES + 5)
N_COLORS = N_HUES + 5

# The reserved fill colours of the kinds of call: (light palette, dark palette).
KIND_FILLS = {
    NATIVE: ("#9a9a9a", "#6e6e6e"),
    UNTRACED: ("#d4d4d4", "#4a4a4a"),
    EXCEPTIONAL: ("#f28b82", "#b3443c"),
    UNCAUGHT: ("#c62828", "#e35d52"),
    TRUNCATED: ("#b0bec5", "#546e7a"),
}
# Saturation and value of the package hues: (light, dark).
_HUE_SV = ((0.45, 0.95), (0.55, 0.62))
# A package colour is at least this far (ΔE, CIE76) from every reserved kind colour.
MIN_DISTANCE = 25.0

# Text colours of the kinds of call in the call tree: (light, dark). Their icons take the fill
# colour of KIND_FILLS where there is one, else ICON_FILLS.
KIND_TEXT = {
    "uncaught": ("#b71c1c", "#ff6b6b"),
    "exceptional": ("#c43e00", "#ff9e80"),
    "caught": ("#2e7d32", "#81c784"),
    "native": ("#5f6368", "#b4b8be"),
    "untraced": ("#80868b", "#8f949a"),
    "callback": ("#7b1fa2", "#ce93d8"),
    "implicit": ("#1565c0", "#90caf9"),
    "truncated": ("#546e7a", "#b0bec5"),
}
ICON_FILLS = {"caught": ("#43a047", "#66bb6a"), "callback": ("#8e24aa", "#ba68c8"),
              "implicit": ("#1e88e5", "#64b5f6")}
ICON_EDGE_WHITE = "#ffffff"

# Marks over the timeline and text colours: (light, dark).
CLASS_LOAD_TICK = ("#1e88e5", "#1e88e5")
CAUGHT_MARK = ("#2e7d32", "#66bb6a")
SELECTION_OUTLINE = ("#0d47a1", "#ffb300")
LANE_TEXT = ("#202020", "#e8e8e8")
INTERPOLATED_HATCH = ("#5f4b00", "#ffe082")      # hatching over calls whose times are interpolated
RANGE_FILL = ("#1e88e5", "#90caf9")              # the selected time range (drawn translucent)
SEARCH_MATCH = ("#ffd600", "#ffd600")            # calls and frames that match the search
MERGED_FRAMES = ("#c8c8c8", "#5a5a5a")           # a flame graph's frames too narrow to draw alone, as one
# The control-flow graph: exception edges, back edges (loops), what never ran, ordinary ink, the
# selected block's outline.
CFG_EXCEPTION = ("#c03030", "#ef6c6c")
CFG_BACK = ("#3050c0", "#7f9cff")
CFG_NEVER = ("#9a9a9a", "#7a7a7a")
CFG_INK = ("#202020", "#e0e0e0")
CFG_SELECTED = ("#ff8c00", "#ff8c00")
# The message banner over the views: (fill, border) of an error and of a warning, and its text.
# Light in both palettes, so it stands out of a dark window too.
BANNER = {"error": ("#fdecea", "#c62828"), "warning": ("#fff8e1", "#f9a825")}
BANNER_TEXT = "#202020"
ERROR_TEXT = ("#c62828", "#ff8a80")
MUTED_TEXT = ("#555555", "#a0a0a0")
EMPTY_BAR = ("#e0e0e0", "#3a3a3a")
# The timeline before the replay (jbgui.ui.timeline_preview): a thread's events per bucket of time,
# where the replay has come and where it has not yet.
PREVIEW_REPLAYED = ("#5c8fd6", "#7fa9e8")
PREVIEW_PENDING = ("#b9c9de", "#4a5a70")
SOURCE_TEXT = ("#2e6b30", "#81c784")
SITE_KIND_TEXT = {"native": "#757575", "untraced": "#9e9e9e", "invokedynamic": "#6a1b9a"}


def search_row_brush() -> QBrush:
    """The background of a table row that matches the search: the search colour, translucent so
    the row's text and selection stay readable."""
    color = qcolor(SEARCH_MATCH)
    color.setAlpha(110)
    return QBrush(color)


def pick(pair: tuple[str, str], dark: bool | None = None) -> str:
    """The light or the dark member of a (light, dark) pair, as a colour name."""
    dark = is_dark() if dark is None else dark
    return pair[1 if dark else 0]


def qcolor(pair: tuple[str, str], dark: bool | None = None) -> QColor:
    """:func:`pick` as a QColor."""
    return QColor(pick(pair, dark))


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """sRGB (0..255) to CIE Lab (D65)."""
    def linear(c: float) -> float:
        c /= 255.0
        return ((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92
    r, g, b = (linear(c) for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def distance(a: QColor | str, b: QColor | str) -> float:
    """Perceptual distance of two colours (CIE76 ΔE: about 2 is just noticeable, 25 is clearly
    another colour)."""
    ca, cb = QColor(a), QColor(b)
    la, lb = _lab((ca.red(), ca.green(), ca.blue())), _lab((cb.red(), cb.green(), cb.blue()))
    return sum((p - q) ** 2 for p, q in zip(la, lb)) ** 0.5


def _hue_rgb(hue: float, dark: bool) -> tuple[int, int, int]:
    s, v = _HUE_SV[1 if dark else 0]
    return tuple(round(c * 255) for c in colorsys.hsv_to_rgb(hue, s, v))


def _package_hues() -> list[float]:
    """N_HUES hues from a fine wheel, keeping only those far enough from every reserved colour in
    both palettes, then a stride through them so that adjacent slots differ."""
    allowed = []
    for i in range(96):
        hue = i / 96
        ok = True
        for dark in (False, True):
            rgb = _hue_rgb(hue, dark)
            colour = QColor(*rgb)
            if any(distance(colour, fills[1 if dark else 0]) < MIN_DISTANCE for fills in KIND_FILLS.values()):
                ok = False
                break
        if ok:
            allowed.append(hue)
    step = len(allowed) / N_HUES
    chosen = [allowed[int(k * step)] for k in range(N_HUES)]
    return [chosen[i * 7 % N_HUES] for i in range(N_HUES)]   # 7 is prime to 24: a permutation


PACKAGE_HUES = _package_hues()


def is_dark() -> bool:
    """Does the application use a dark palette (window darker than its text)?"""
    app = QApplication.instance()
    if app is None:
        return False
    pal = app.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < pal.color(QPalette.ColorRole.WindowText).lightness()


def slot_colors(dark: bool | None = None) -> list[QColor]:
    """The fill colour of every slot."""
    dark = is_dark() if dark is None else dark
    out = [QColor(*_hue_rgb(hue, dark)) for hue in PACKAGE_HUES]
    for slot in (NATIVE, UNTRACED, EXCEPTIONAL, UNCAUGHT, TRUNCATED):
        out.append(QColor(KIND_FILLS[slot][1 if dark else 0]))
    return out


def package_slot(package: str) -> int:
    """The hue slot of a package (a stable hash, so colours do not change between runs)."""
    return zlib.crc32(package.encode()) % N_HUES


def text_color_for(fill: QColor) -> QColor:
    """Black or white text, whichever reads better on ``fill``: by perceived brightness (Rec. 601
    weights), not HSL lightness, which calls a saturated yellow as dark as a mid grey."""
    brightness = 0.299 * fill.redF() + 0.587 * fill.greenF() + 0.114 * fill.blueF()
    return QColor("#000000") if brightness > 0.55 else QColor("#ffffff")


def package_of(class_name: str) -> str:
    return class_name.rsplit("/", 1)[0] if "/" in class_name else ""


def method_hues(statics: Statics) -> np.ndarray:
    """Hue slot per method id, by package (a stable hash, so colours do not change between runs)."""
    n = statics.max_method_id + 1
    hues = np.zeros(max(n, 1), np.int64)
    cache: dict[int, int] = {}
    for mid in range(1, n):
        cls = int(statics.m_class[mid])
        slot = cache.get(cls)
        if slot is None:
            name = statics.c_name[cls] if 0 <= cls < len(statics.c_name) else ""
            slot = package_slot(package_of(name or ""))
            cache[cls] = slot
        hues[mid] = slot
    return hues


def call_slots(method: np.ndarray, flags: np.ndarray, hues: np.ndarray) -> np.ndarray:
    """Colour slot of each call: its kind when it is unusual, else its package's hue."""
    method = np.asarray(method, np.int64)
    flags = np.asarray(flags, np.int64)
    slots = hues[np.clip(method, 0, len(hues) - 1)]
    slots = np.where(flags & Flag.TRUNCATED, TRUNCATED, slots)
    slots = np.where(flags & Flag.UNTRACED, UNTRACED, slots)
    slots = np.where(flags & Flag.NATIVE, NATIVE, slots)
    slots = np.where(flags & Flag.EXCEPTIONAL, EXCEPTIONAL, slots)
    slots = np.where(flags & Flag.UNCAUGHT, UNCAUGHT, slots)
    return slots


def heat_color(fraction: float, dark: bool | None = None) -> QColor:
    """Background for a block executed ``fraction`` (0..1, log-scaled by the caller) as often as
    the hottest block: transparent when never run, then yellow to deep orange."""
    dark = is_dark() if dark is None else dark
    if fraction <= 0:
        return QColor(0, 0, 0, 0)
    fraction = min(1.0, fraction)
    if dark:
        return QColor.fromHsvF(0.08 - 0.06 * fraction, 0.85, 0.25 + 0.45 * fraction)
    return QColor.fromHsvF(0.14 - 0.10 * fraction, 0.15 + 0.7 * fraction, 1.0)


def heat_tint(fraction: float, dark: bool | None = None) -> QColor:
    """A faint version of :func:`heat_color` to put behind text."""
    dark = is_dark() if dark is None else dark
    strong = heat_color(max(fraction, 0.05), dark)
    base = QColor("#2b2d30") if dark else QColor("#ffffff")
    mix = 0.18 + 0.22 * min(1.0, fraction)
    return QColor(int(base.red() + (strong.red() - base.red()) * mix),
                  int(base.green() + (strong.green() - base.green()) * mix),
                  int(base.blue() + (strong.blue() - base.blue()) * mix))
