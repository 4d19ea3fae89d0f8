"""The timeline before the replay is done (:mod:`jbgui.model.preview`): a lane per thread with its
name and its events per bucket of time, darker where the replay has come. The explorer paints it
as soon as a trace is opened, and replaces it with the calls (:class:`jbgui.ui.timeline_view.
FlameItem`) once the replay and the timeline's levels are ready."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals as pg_internals
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QPainter, QPen

from jbgui.model.preview import Preview
from jbgui.ui import colors

LANE = 2.0          # a lane's height (y units): its name's row and its activity's
GAP = 0.4


class PreviewItem(pg.GraphicsObject):
    """Paints a :class:`Preview`; :meth:`set_progress` moves where the replay has come."""

    def __init__(self, preview: Preview):
        super().__init__()
        self.preview = preview
        self.replayed: dict[int, float | None] = {t.index: t.t_first for t in preview.threads}
        self.height = max(len(preview.threads) * (LANE + GAP), 1.0)
        self.font = QFont()
        self.font.setPointSizeF(max(7.0, self.font.pointSizeF() * 0.9))
        self.done_brush = QBrush(colors.qcolor(colors.PREVIEW_REPLAYED))
        self.pending_brush = QBrush(colors.qcolor(colors.PREVIEW_PENDING))
        self.text_pen = QPen(colors.qcolor(colors.LANE_TEXT))
        self.last_painted_lanes: list[str] = []     # names of the lanes the last paint drew
        self._rects = pg_internals.PrimitiveArray(QRectF, 4)

    def set_progress(self, done_bytes: int) -> None:
        self.replayed = self.preview.replayed_until(done_bytes)
        self.update()

    def boundingRect(self) -> QRectF:
        p = self.preview
        return QRectF(p.t_min, 0.0, p.t_max - p.t_min, self.height)

    def paint(self, painter: QPainter, *_args) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        tr = painter.transform()
        sx, dx, sy, dy = tr.m11(), tr.dx(), tr.m22(), tr.dy()
        if sx <= 0 or sy == 0:
            return
        p = self.preview
        edges = np.linspace(p.t_min, p.t_max, len(p.threads[0].activity) + 1) if p.threads else np.zeros(1)
        painter.save()
        try:
            painter.resetTransform()
            painter.setFont(self.font)
            self.last_painted_lanes = []
            for k, t in enumerate(p.threads):
                top = k * (LANE + GAP)
                if top + LANE < y0 or top > y1:
                    continue
                self.last_painted_lanes.append(t.name)
                painter.setPen(self.text_pen)
                until = self.replayed.get(t.index)
                state = "replayed" if until is None else ("replaying" if until > t.t_first else "waiting")
                painter.drawText(QRectF(4, top * sy + dy, 2000, LANE / 2 * sy), Qt.AlignmentFlag.AlignVCenter,
                                 f"{t.name} — {t.events:,} events, {state}")
                peak = float(t.activity.max()) if len(t.activity) else 0.0
                if peak <= 0:
                    continue
                painter.setPen(Qt.PenStyle.NoPen)
                base = (top + LANE) * sy + dy
                full = LANE / 2 * sy - 1.0
                cut = np.inf if until is None else until
                shown = np.flatnonzero((t.activity > 0) & (edges[1:] >= x0) & (edges[:-1] <= x1))
                if not len(shown):
                    continue
                left = edges[shown] * sx + dx
                right = np.maximum(edges[shown + 1] * sx + dx, left + 1.0)
                height = np.maximum(full * t.activity[shown] / peak, 1.0)
                done = edges[shown + 1] <= cut
                for brush, which in ((self.done_brush, done), (self.pending_brush, ~done)):
                    if not which.any():
                        continue
                    self._rects.resize(int(which.sum()))
                    mem = self._rects.ndarray()
                    mem[:, 0] = left[which]
                    mem[:, 1] = base - height[which]
                    mem[:, 2] = right[which] - left[which]
                    mem[:, 3] = height[which]
                    painter.setBrush(brush)
                    painter.drawRects(*self._rects.drawargs())
        finally:
            painter.restore()
