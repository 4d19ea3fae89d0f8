"""Colours shared by the views: one hue per package (so a class keeps its colour everywhere),
fixed colours for the call kinds, heat shading; each adapted to a light or a dark palette."""

from __future__ import annotations

import zlib

import numpy as np
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from jbgui.model.analysis import Flag
from jbgui.model.statics import Statics

# Hues for packages, spaced around the wheel; chosen so that neighbours differ.
N_HUES = 24
# Colour slots after the hues.
NATIVE, UNTRACED, EXCEPTIONAL, UNCAUGHT, TRUNCATED = range(N_HUES, N_HUES + 5)
N_COLORS = N_HUES + 5


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
    out = []
    for i in range(N_HUES):
        hue = (i * 7 % N_HUES) / N_HUES  # a stride through the wheel: adjacent slots differ
        out.append(QColor.fromHsvF(hue, 0.45 if not dark else 0.55, 0.95 if not dark else 0.62))
    specials = {
        NATIVE: "#9a9a9a" if not dark else "#6e6e6e",
        UNTRACED: "#d4d4d4" if not dark else "#4a4a4a",
        EXCEPTIONAL: "#f28b82" if not dark else "#b3443c",
        UNCAUGHT: "#c62828" if not dark else "#e35d52",
        TRUNCATED: "#b0bec5" if not dark else "#546e7a",
    }
    for slot in (NATIVE, UNTRACED, EXCEPTIONAL, UNCAUGHT, TRUNCATED):
        out.append(QColor(specials[slot]))
    return out


def text_color_for(fill: QColor) -> QColor:
    return QColor("#000000") if fill.lightnessF() > 0.55 else QColor("#ffffff")


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
            slot = zlib.crc32(package_of(name or "").encode()) % N_HUES
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
