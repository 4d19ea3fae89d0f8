"""The Qt binding does not leak or steal references on the calls the timeline makes thousands
of times a second. PySide6 6.12.0 took a reference to None away on every void method call, which
on Python 3.11 ends the process with "deallocating None" after enough paints; pyproject.toml
excludes it, and this test keeps it excluded."""

from __future__ import annotations

import sys

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QImage, QPainter, QPen
from pyqtgraph.Qt import internals


def test_painting_keeps_none_alive(qapp):
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    rects = internals.PrimitiveArray(QRectF, 4)
    rects.resize(8)
    rects.ndarray()[:] = 1.0
    calls = 100
    before = sys.getrefcount(None)
    for _ in range(calls):
        painter.save()
        painter.setBrush(QBrush(QColor("red")))
        painter.setPen(QPen(QColor("blue")))
        painter.drawRects(*rects.drawargs())
        painter.drawLine(QPointF(0, 0), QPointF(5, 5))
        painter.drawText(QRectF(0, 0, 40, 10), int(Qt.AlignmentFlag.AlignLeft), "x")
        painter.restore()
    after = sys.getrefcount(None)
    painter.end()
    assert after - before > -calls, f"None lost {before - after} references in {calls} paints"
