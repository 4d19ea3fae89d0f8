"""Icons and text colours of the kinds of call in the call tree: a distinct shape in a distinct
colour per kind (uncaught, left by an exception, caught, native, untraced, callback, implicit,
truncated), painted once per palette. Colours come from the palette (:mod:`jbgui.ui.colors`)."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPixmap, QPolygonF

from jbgui.model.analysis import Flag
from jbgui.ui import colors

# Kinds of call in the order they win when a call has several flags: (name, flag, text colour on
# a light palette, on a dark one). The fill colours of the icons come from colors.py where it
# has one (the timeline uses it), else from ICON_FILLS.
KINDS = tuple((name, bit, *colors.KIND_TEXT[name]) for name, bit in (
    ("uncaught", Flag.UNCAUGHT), ("exceptional", Flag.EXCEPTIONAL), ("caught", Flag.CAUGHT),
    ("native", Flag.NATIVE), ("untraced", Flag.UNTRACED), ("callback", Flag.CALLBACK),
    ("implicit", Flag.IMPLICIT), ("truncated", Flag.TRUNCATED)))
KIND_NAMES = tuple(k[0] for k in KINDS)
ICON_FILLS = colors.ICON_FILLS
ICON_SLOTS = {"uncaught": colors.UNCAUGHT, "exceptional": colors.EXCEPTIONAL, "native": colors.NATIVE,
              "untraced": colors.UNTRACED, "truncated": colors.TRUNCATED}
ICON_SIZE = 16


def kind_of(flags: int) -> str:
    """The kind of call its icon and colour show ('' for an ordinary call)."""
    for name, bit, _light, _dark in KINDS:
        if flags & bit:
            return name
    return ""


def kind_icon(kind: str, dark: bool, ratio: float = 1.0) -> QPixmap:
    """A distinct shape in a distinct colour per kind of call, outlined so that it reads on light
    and dark backgrounds; a transparent pixmap of the same size for '' (names stay aligned)."""
    size = int(math.ceil(ICON_SIZE * ratio))
    pm = QPixmap(size, size)
    pm.setDevicePixelRatio(ratio)
    pm.fill(Qt.GlobalColor.transparent)
    if not kind:
        return pm
    if kind in ICON_SLOTS:
        fill = QColor(colors.slot_colors(dark)[ICON_SLOTS[kind]])
    else:
        fill = QColor(ICON_FILLS[kind][1 if dark else 0])
    edge = fill.lighter(170) if dark else fill.darker(170)
    white = QColor(colors.ICON_EDGE_WHITE)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(QPen(edge, 1.0))
    p.setBrush(fill)
    if kind == "uncaught":        # a bold cross: the exception left the thread
        path = QPainterPath(QPointF(3, 3))
        path.lineTo(13, 13)
        path.moveTo(13, 3)
        path.lineTo(3, 13)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(edge, 4.6, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawPath(path)
        p.setPen(QPen(fill, 2.8, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawPath(path)
    elif kind == "exceptional":   # a triangle pointing down: left by an exception (as the timeline)
        p.drawPolygon(QPolygonF([QPointF(1.5, 3), QPointF(14.5, 3), QPointF(8, 14)]))
    elif kind == "caught":        # a disc with a check mark: an exception was caught here
        p.drawEllipse(QRectF(1.5, 1.5, 13, 13))
        p.setPen(QPen(white, 2.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap, Qt.PenJoinStyle.RoundJoin))
        p.setBrush(Qt.BrushStyle.NoBrush)
        path = QPainterPath(QPointF(4.5, 8.5))
        path.lineTo(7, 11)
        path.lineTo(11.5, 5)
        p.drawPath(path)
    elif kind == "native":        # a chip: a square with pins
        p.drawRect(QRectF(4, 3, 8, 10))
        p.setPen(QPen(edge, 1.2))
        for y in (5, 8, 11):
            p.drawLine(QPointF(1.5, y), QPointF(4, y))
            p.drawLine(QPointF(12, y), QPointF(14.5, y))
    elif kind == "untraced":      # a hollow dashed square: code that recorded nothing
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(edge if not dark else fill.lighter(220), 1.4, Qt.PenStyle.DashLine))
        p.drawRect(QRectF(2.5, 2.5, 11, 11))
    elif kind == "callback":      # an arrow bending back: called back from native code
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(fill, 2.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        path = QPainterPath(QPointF(13, 13))
        path.lineTo(13, 9)
        path.cubicTo(13, 4, 8, 4, 5, 5.5)
        p.drawPath(path)
        p.setPen(QPen(edge, 0.8))
        p.setBrush(fill)
        p.drawPolygon(QPolygonF([QPointF(1.5, 6.5), QPointF(6.5, 2), QPointF(7, 9)]))
    elif kind == "implicit":      # a diamond: started without a call site (static initializers…)
        p.drawPolygon(QPolygonF([QPointF(8, 1.5), QPointF(14.5, 8), QPointF(8, 14.5), QPointF(1.5, 8)]))
    elif kind == "truncated":     # a half-filled disc: the trace holds only part of the call
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(QPen(edge if not dark else fill, 1.4))
        p.drawEllipse(QRectF(2, 2, 12, 12))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(edge if not dark else fill)
        p.drawPie(QRectF(2, 2, 12, 12), 90 * 16, 180 * 16)
    p.end()
    return pm
