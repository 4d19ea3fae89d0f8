"""The timeline: one lane per thread on a shared time axis, each lane a flame chart of the call
stack (depth grows downward), with markers for exceptions and class loads.

Drawing follows pyqtgraph's fast items: one :class:`FlameItem` paints every lane, asking
:class:`jbgui.model.timeline.ThreadTimeline` for the rectangles of the visible range only (the
model merges what is narrower than a pixel), and draws them with one ``drawRects`` call per colour
from a numpy-backed array. Nothing is kept per call on the Qt side.

Mouse: wheel zooms the time axis around the pointer, Shift+wheel scrolls the lanes, drag pans,
hover shows the call, click selects it, double-click zooms to it. Keys: ``+``/``-`` zoom,
arrows pan, Home shows the whole run, ``F`` zooms to the selected call, Up selects its caller.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals as pg_internals
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QToolButton, QToolTip, QVBoxLayout, QWidget

from jbgui.model.analysis import Analysis, Flag
from jbgui.model.timeline import ThreadTimeline, TimelineModel
from jbgui.ui import colors
from jbgui.ui.format import describe_call, format_duration
from jbgui.ui.selection import CallRef, Selection

ROW = 1.0            # one depth per unit of y
LANE_HEADER = 1.2    # rows above a lane's depth 0: the thread's name and its class loads
LANE_GAP = 0.6
MIN_LABEL_PX = 36    # a call gets its name written inside once this wide


class Lane:
    """Where a thread's lane lies on the y axis."""

    def __init__(self, timeline: ThreadTimeline, top: float):
        self.timeline = timeline
        self.top = top
        self.depth0 = top + LANE_HEADER           # y of depth 0's top edge
        self.bottom = self.depth0 + (timeline.max_depth + 1) * ROW

    def depth_at(self, y: float) -> int:
        return int(np.floor((y - self.depth0) / ROW))


class FlameItem(pg.GraphicsObject):
    """Paints every lane of a :class:`TimelineModel` (rectangles, labels, markers, selection)."""

    def __init__(self, model: TimelineModel, analysis: Analysis):
        super().__init__()
        self.model = model
        self.analysis = analysis
        self.lanes: list[Lane] = []
        top = 0.0
        for tl in model.threads:
            lane = Lane(tl, top)
            self.lanes.append(lane)
            top = lane.bottom + LANE_GAP
        self.height = max(top, 1.0)
        self.hues = colors.method_hues(analysis.statics)
        self.colors = colors.slot_colors()
        self.brushes = [QBrush(c) for c in self.colors]
        self.text_pens = [QPen(colors.text_color_for(c)) for c in self.colors]
        self.selected: CallRef | None = None
        self._rects = pg_internals.PrimitiveArray(QRectF, 4)
        self._names: dict[int, str] = {}
        self._marks = [self._thread_marks(lane) for lane in self.lanes]
        self.font = QFont()
        self.font.setPointSizeF(max(7.0, self.font.pointSizeF() * 0.9))
        self.metrics = QFontMetrics(self.font)
        self.last_paint_rects = 0

    # ------------------------------------------------------------------ geometry

    def boundingRect(self) -> QRectF:
        return QRectF(self.model.t_min, 0.0, self.model.t_max - self.model.t_min, self.height)

    def viewRangeChanged(self):
        self.update()

    def lane_at(self, y: float) -> Lane | None:
        for lane in self.lanes:
            if lane.top <= y < lane.bottom:
                return lane
        return None

    def lane_of(self, thread: int) -> Lane | None:
        for lane in self.lanes:
            if lane.timeline.thread.index == thread:
                return lane
        return None

    def call_at(self, x: float, y: float, tolerance: float) -> CallRef | None:
        lane = self.lane_at(y)
        if lane is None:
            return None
        row = lane.timeline.call_near(x, lane.depth_at(y), tolerance)
        return CallRef(lane.timeline.thread.index, row) if row >= 0 else None

    def call_rect(self, ref: CallRef) -> QRectF | None:
        lane = self.lane_of(ref.thread)
        if lane is None or not 0 <= ref.row < lane.timeline.rows:
            return None
        tl = lane.timeline
        y = lane.depth0 + float(tl.depth[ref.row]) * ROW
        start, end = tl.span(ref.row)
        return QRectF(start, y, end - start, ROW)

    # ------------------------------------------------------------------ painting

    def _thread_marks(self, lane: Lane) -> dict:
        marks = self.model.exception_marks(lane.timeline)
        order = np.argsort(marks["throw_t"], kind="stable")
        marks = {k: v[order] for k, v in marks.items()}
        marks["loads"] = np.sort(self.model.class_load_times(lane.timeline))
        return marks

    def name_of(self, method: int) -> str:
        name = self._names.get(method)
        if name is None:
            st = self.analysis.statics
            full = st.method_qualified(method) if method else ""
            if full:
                cls, _, rest = full.partition("(")[0].rpartition(".")
                name = f"{cls.rsplit('.', 1)[-1]}.{rest}"
            else:
                name = "native" if method == 0 else f"method {method}"
            self._names[method] = name
        return name

    def paint(self, painter: QPainter, *_args) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        # The painter maps item (= view) coordinates to device pixels: a scale and a translation.
        tr = painter.transform()
        sx, dx, sy, dy = tr.m11(), tr.dx(), tr.m22(), tr.dy()
        if sx <= 0 or sy == 0:
            return
        units_per_px = 1.0 / sx
        painter.save()
        try:
            painter.resetTransform()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
            painter.setFont(self.font)
            total = 0
            for lane_index, lane in enumerate(self.lanes):
                if lane.bottom < y0 or lane.top > y1:
                    continue
                total += self._paint_lane(painter, lane, self._marks[lane_index], x0, x1, y0, y1, units_per_px,
                                          sx, dx, sy, dy)
            self._paint_selection(painter, sx, dx, sy, dy)
            self.last_paint_rects = total
        finally:
            painter.restore()

    def _paint_lane(self, p: QPainter, lane: Lane, marks: dict, x0, x1, y0, y1, upp, sx, dx, sy, dy) -> int:
        tl = lane.timeline
        # Lane header: a thin band with the thread's name on the left edge of the view.
        header_top = lane.top * sy + dy
        header_h = LANE_HEADER * ROW * sy
        p.setPen(Qt.PenStyle.NoPen)
        band = QColor(self.colors[colors.UNTRACED])
        band.setAlpha(90)
        p.fillRect(QRectF(0, header_top, 1e5, header_h), band)
        d_lo = max(0, int(np.floor((y0 - lane.depth0) / ROW)))
        d_hi = int(np.ceil((y1 - lane.depth0) / ROW))
        rects = tl.query(x0, x1, upp, d_lo, d_hi)
        n = len(rects)
        if n:
            left = rects.start * sx + dx
            right = np.maximum(rects.end * sx + dx, left + 1.0)  # at least one pixel wide
            left = np.maximum(left, -10.0)
            right = np.minimum(right, 1e5)
            top = (lane.depth0 + rects.depth * ROW) * sy + dy
            row_h = max(ROW * sy - 1.0, 1.0)
            # a merged subtree reaches down to its deepest call
            heights = (rects.depth_end - rects.depth + 1) * ROW * sy - 1.0
            heights = np.maximum(heights, 1.0)
            # A merged subtree takes its first call's package colour: that call is often a tiny
            # native or untraced one, whose grey would stand for everything folded in with it.
            flags = np.where(rects.merged, rects.flags & ~int(Flag.NATIVE | Flag.UNTRACED | Flag.TRUNCATED),
                             rects.flags)
            slots = colors.call_slots(rects.method, flags, self.hues)
            order = np.argsort(slots, kind="stable")
            bounds = np.flatnonzero(np.diff(slots[order])) + 1
            starts = np.concatenate(([0], bounds))
            ends = np.concatenate((bounds, [n]))
            for s, e in zip(starts.tolist(), ends.tolist()):
                idx = order[s:e]
                self._rects.resize(len(idx))
                mem = self._rects.ndarray()
                mem[:, 0] = left[idx]
                mem[:, 1] = top[idx]
                mem[:, 2] = right[idx] - left[idx]
                mem[:, 3] = heights[idx]
                p.setBrush(self.brushes[int(slots[idx[0]])])
                p.drawRects(*self._rects.drawargs())
            # Names inside the calls wide enough to hold some text.
            wide = np.flatnonzero((right - left >= MIN_LABEL_PX) & ~rects.merged)
            height = row_h
            if len(wide) and height >= self.metrics.height() - 2:
                for i in wide[:400].tolist():
                    name = self.name_of(int(rects.method[i]))
                    x = max(left[i], 0.0) + 2  # pinned to the view's left edge while the call runs on
                    w = right[i] - x - 2
                    if w < MIN_LABEL_PX / 2:
                        continue
                    text = self.metrics.elidedText(name, Qt.TextElideMode.ElideRight, int(w))
                    if text and text != "…":
                        p.setPen(self.text_pens[int(slots[i])])
                        p.drawText(QRectF(x, top[i], w, height),
                                   int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text)
        self._paint_marks(p, lane, marks, x0, x1, sx, dx, sy, dy)
        # The thread's name, pinned to the left edge.
        p.setPen(QPen(colors.text_color_for(band) if band.alpha() > 200 else self._text_color()))
        label = f"{tl.thread.name}  ·  {tl.rows:,} calls"
        p.drawText(QRectF(4, header_top, 1e4, header_h),
                   int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), label)
        return n

    def _text_color(self) -> QColor:
        return colors.qcolor(colors.LANE_TEXT)

    def _paint_marks(self, p: QPainter, lane: Lane, marks: dict, x0, x1, sx, dx, sy, dy) -> None:
        header_top = lane.top * sy + dy
        header_h = LANE_HEADER * ROW * sy
        # Class loads: short ticks along the bottom of the lane header.
        loads = marks["loads"]
        i0, i1 = np.searchsorted(loads, [x0, x1])
        if i1 > i0:
            xs = np.unique(np.round(loads[i0:i1] * sx + dx))
            p.setPen(QPen(colors.qcolor(colors.CLASS_LOAD_TICK), 1))
            y_a, y_b = header_top + header_h * 0.55, header_top + header_h
            for x in xs[:4000].tolist():
                p.drawLine(QPointF(x, y_a), QPointF(x, y_b))
        # Exceptions: a red triangle where thrown, a green one where caught, a line between.
        throw_t = marks["throw_t"]
        j0 = int(np.searchsorted(throw_t, x0 - (x1 - x0)))
        j1 = int(np.searchsorted(throw_t, x1))
        if j1 <= j0:
            return
        row_h = ROW * sy
        size = max(3.0, min(6.0, row_h * 0.45))
        red = QColor(self.colors[colors.UNCAUGHT])
        green = colors.qcolor(colors.CAUGHT_MARK)
        last_x = None
        for k in range(j0, min(j1, j0 + 2000)):
            tx = throw_t[k] * sx + dx
            ty = (lane.depth0 + marks["throw_depth"][k] * ROW) * sy + dy + row_h / 2
            cd = marks["catch_depth"][k]
            if last_x is not None and abs(tx - last_x) < 2:
                continue  # one marker per pixel column
            last_x = tx
            if cd >= 0:
                cx = marks["catch_t"][k] * sx + dx
                cy = (lane.depth0 + cd * ROW) * sy + dy + row_h / 2
                p.setPen(QPen(red, 1, Qt.PenStyle.DotLine))
                p.drawLine(QPointF(tx, ty), QPointF(cx, cy))
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(green)
                p.drawPolygon(_triangle(cx, cy, size, up=True))
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(red)
            p.drawPolygon(_triangle(tx, ty, size, up=False))

    def _paint_selection(self, p: QPainter, sx, dx, sy, dy) -> None:
        if self.selected is None:
            return
        rect = self.call_rect(self.selected)
        if rect is None:
            return
        left = rect.left() * sx + dx
        right = max(rect.right() * sx + dx, left + 2)
        top = rect.top() * sy + dy
        pen = QPen(colors.qcolor(colors.SELECTION_OUTLINE), 2)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(left - 1, top - 1, right - left + 2, rect.height() * sy + 1))


def _triangle(x: float, y: float, size: float, up: bool) -> QPolygonF:
    s = size
    if up:
        return QPolygonF([QPointF(x - s, y + s), QPointF(x + s, y + s), QPointF(x, y - s)])
    return QPolygonF([QPointF(x - s, y - s), QPointF(x + s, y - s), QPointF(x, y + s)])


class TimelineViewBox(pg.ViewBox):
    """Wheel zooms time only; Shift+wheel scrolls the lanes; drag pans both."""

    def wheelEvent(self, ev, axis=None):
        if ev.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            (_, _), (y0, y1) = self.viewRange()
            step = (y1 - y0) * 0.1 * (-1 if ev.delta() > 0 else 1)
            self.translateBy(y=step)
            ev.accept()
            return
        super().wheelEvent(ev, axis=0)


class TimelineView(QWidget):
    """The timeline widget: the plot, a line of controls, hover and selection."""

    rangeChanged = Signal(float, float)

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.model: TimelineModel | None = None
        self.analysis: Analysis | None = None
        self.item: FlameItem | None = None
        self.hovered: CallRef | None = None   # the call under the pointer, and its description
        self.hover_text = ""
        self.viewbox = TimelineViewBox(invertY=True, enableMenu=False)
        self.viewbox.setMouseEnabled(x=True, y=True)
        self.axis = pg.AxisItem("bottom")
        self.plot = pg.PlotWidget(viewBox=self.viewbox, axisItems={"bottom": self.axis})
        self.plot.hideAxis("left")
        self.plot.setBackground(self.palette().color(self.backgroundRole()))
        self.plot.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.plot.scene().sigMouseMoved.connect(self._hover)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.viewbox.sigXRangeChanged.connect(self._x_range_changed)
        self.info = QLabel("No trace open")
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A long method name must not widen the window: the label takes the room there is.
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        controls = QHBoxLayout()
        controls.setContentsMargins(4, 2, 4, 2)
        for text, tip, slot in (("−", "Zoom out (-)", lambda: self.zoom(2.0)), ("+", "Zoom in (+)", lambda: self.zoom(0.5)),
                                ("Whole run", "Show the whole run (Home)", self.show_all),
                                ("Fit call", "Zoom to the selected call (F)", self.focus_selected)):
            button = QToolButton()
            button.setText(text)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            controls.addWidget(button)
        controls.addWidget(self.info, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 1)
        selection.callSelected.connect(self._on_selected)
        self.setFocusProxy(self.plot)

    # ------------------------------------------------------------------ content

    def set_model(self, model: TimelineModel | None, analysis: Analysis | None) -> None:
        if self.item is not None:
            self.viewbox.removeItem(self.item)
            self.item = None
        self.model, self.analysis = model, analysis
        if model is None:
            self.info.setText("No trace open")
            return
        self.item = FlameItem(model, analysis)
        self.viewbox.addItem(self.item)
        if model.has_clock:
            self.axis.setLabel("time", units="s")
            self.axis.setScale(1e-9)
        else:
            self.axis.setLabel("event index (this trace has no clock)")
            self.axis.setScale(1.0)
        span = model.t_max - model.t_min
        self.viewbox.setLimits(xMin=model.t_min - span * 0.05, xMax=model.t_max + span * 0.05,
                               minXRange=1.0 if model.has_clock else 1.0, yMin=-1.0,
                               yMax=self.item.height + 1.0)
        self.show_all()
        self._update_info()

    def show_all(self) -> None:
        if self.model is None or self.item is None:
            return
        self.viewbox.setXRange(self.model.t_min, self.model.t_max, padding=0.01)
        # Every lane when they fit at a legible row height, else the first ones.
        legible = max(20.0, self.plot.height() / 15.0)
        self.viewbox.setYRange(-0.2, min(self.item.height, legible) + 0.2, padding=0)

    def zoom(self, factor: float) -> None:
        (x0, x1), _ = self.viewbox.viewRange()
        c = (x0 + x1) / 2
        half = (x1 - x0) * factor / 2
        self.viewbox.setXRange(c - half, c + half, padding=0)

    def pan(self, fraction: float) -> None:
        (x0, x1), _ = self.viewbox.viewRange()
        self.viewbox.translateBy(x=(x1 - x0) * fraction)

    def focus_selected(self) -> None:
        if self.item is None or self.selection.call is None:
            return
        self.reveal(self.selection.call, zoom=True)

    def reveal(self, ref: CallRef, zoom: bool = False) -> None:
        """Scroll (and, with ``zoom`` or when the call is too small to see, zoom) to a call."""
        rect = self.item.call_rect(ref) if self.item is not None else None
        if rect is None:
            return
        (x0, x1), (y0, y1) = self.viewbox.viewRange()
        width = x1 - x0
        px = width / max(self.viewbox.width(), 1.0)
        inside = rect.left() >= x0 and rect.right() <= x1
        if zoom or not inside or rect.width() < 3 * px:
            w = max(rect.width(), 1.0)
            self.viewbox.setXRange(rect.left() - w * 0.5, rect.right() + w * 0.5, padding=0)
        if not (y0 <= rect.top() and rect.bottom() <= y1):
            h = y1 - y0
            self.viewbox.setYRange(rect.center().y() - h / 2, rect.center().y() + h / 2, padding=0)

    # ------------------------------------------------------------------ interaction

    def _on_selected(self, ref, source) -> None:
        if self.item is None:
            return
        self.item.selected = ref
        self.item.update()
        if ref is not None and source is not self:
            self.reveal(ref)
        self._update_info()

    def _pick(self, scene_pos) -> CallRef | None:
        if self.item is None or not self.viewbox.sceneBoundingRect().contains(scene_pos):
            return None
        point = self.viewbox.mapSceneToView(scene_pos)
        (x0, x1), _ = self.viewbox.viewRange()
        tolerance = 2.0 * (x1 - x0) / max(self.viewbox.width(), 1.0)
        return self.item.call_at(point.x(), point.y(), tolerance)

    def _hover(self, scene_pos) -> None:
        ref = self._pick(scene_pos)
        self.hovered = ref
        if ref is None or self.analysis is None:
            self.hover_text = ""
            QToolTip.hideText()
            return
        self.hover_text = describe_call(self.analysis, ref, self.model)
        # QGraphicsView.mapFromScene already returns a QPoint (PySide6 has no QPoint.toPoint).
        at = self.plot.mapFromScene(scene_pos)
        QToolTip.showText(self.plot.mapToGlobal(at) + QPoint(12, 12), self.hover_text, self.plot)

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        ref = self._pick(event.scenePos())
        if ref is None:
            return
        self.selection.select_call(ref, self)
        if event.double():
            self.reveal(ref, zoom=True)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(0.5)
        elif key == Qt.Key.Key_Minus:
            self.zoom(2.0)
        elif key == Qt.Key.Key_Left:
            self.pan(-0.2)
        elif key == Qt.Key.Key_Right:
            self.pan(0.2)
        elif key == Qt.Key.Key_Home:
            self.show_all()
        elif key == Qt.Key.Key_F:
            self.focus_selected()
        elif key == Qt.Key.Key_Up and self.selection.call is not None and self.analysis is not None:
            ref = self.selection.call
            parent = int(self.analysis.thread(ref.thread).calls.parent[ref.row])
            if parent >= 0:
                self.selection.select_call(CallRef(ref.thread, parent), None)
        else:
            super().keyPressEvent(event)

    def _x_range_changed(self, *_args) -> None:
        (x0, x1), _ = self.viewbox.viewRange()
        self.rangeChanged.emit(x0, x1)
        self._update_info()

    def _update_info(self) -> None:
        if self.model is None:
            return
        (x0, x1), _ = self.viewbox.viewRange()
        span = x1 - x0
        visible = format_duration(span) if self.model.has_clock else f"{span:,.0f} events"
        text = f"{len(self.model.threads)} threads · showing {visible}"
        if self.selection.call is not None and self.analysis is not None:
            text += "  ·  selected: " + self.analysis.call_name(self.analysis.thread(self.selection.call.thread),
                                                                self.selection.call.row)
        self.info.setText(text)
