"""The timeline: one lane per thread on a shared time axis, each lane a flame chart of the call
stack (depth grows downward), with markers for exceptions and class loads.

Drawing follows pyqtgraph's fast items: one :class:`FlameItem` paints every lane, asking
:class:`jbgui.model.timeline.ThreadTimeline` for the rectangles of the visible range only (the
model merges what is narrower than a pixel), and draws them with one ``drawRects`` call per colour
from a numpy-backed array. Nothing is kept per call on the Qt side.

Lanes: a lane shows its thread's name and index (two threads may share a name); clicking the
header collapses or expands it (a collapsed lane shows its top :data:`COLLAPSED_LEVELS` levels).
When several threads ran, lanes start collapsed so that all of them fit on one screen; the
"Lanes" button lists every thread (the overview) to jump to one, or collapses/expands them all.

Times between two clock samples are interpolated (:mod:`jbgui.model.time_quality`): calls whose
duration is interpolated across a pause are hatched, and the x-axis can be events instead.

Mouse: wheel zooms the time axis around the pointer, Shift+wheel scrolls the lanes, drag pans,
Shift+drag selects a range (its statistics: :mod:`jbgui.ui.range_view`), hover shows the call,
click selects it, double-click zooms to it. Keys: ``+``/``-`` zoom, arrows pan, Home shows the
whole run, ``F`` zooms to the selected call, ``R`` makes its span the range, Esc clears the
range, Up selects its caller.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals as pg_internals
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QLineEdit, QMenu, QSizePolicy, QToolButton, QToolTip, QVBoxLayout, QWidget,
)

from jbgui.model import range_stats as RS
from jbgui.model import search as SE
from jbgui.model import time_quality as TQ
from jbgui.model.analysis import Analysis, Flag
from jbgui.model.preview import Preview
from jbgui.model.timeline import ThreadTimeline, TimelineModel
from jbgui.ui import colors
from jbgui.ui.format import describe_call, format_duration
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.timeline_preview import PreviewItem

ROW = 1.0            # one depth per unit of y
LANE_HEADER = 1.2    # rows above a lane's depth 0: the thread's name and its class loads
LANE_GAP = 0.6
MIN_LABEL_PX = 16    # a call gets its name (or the start of it) written inside once this wide
MAX_LABELS = 5000    # labels per paint (a safety bound; a screen holds far fewer legible ones)
SEARCH_FADE = 70     # alpha of the calls that do not match while a search is on
COLLAPSED_LEVELS = 3
LANE_PIXELS = 9.0    # "Whole run" shows every lane when rows get at least this many pixels


class Lane:
    """Where a thread's lane lies on the y axis; collapsed, it shows its top levels only."""

    def __init__(self, timeline: ThreadTimeline, top: float, collapsed: bool = False):
        self.timeline = timeline
        self.collapsed = collapsed
        self.place(top)

    @property
    def levels(self) -> int:
        """Depths shown: every depth, or the top :data:`COLLAPSED_LEVELS` when collapsed."""
        full = self.timeline.max_depth + 1
        return min(full, COLLAPSED_LEVELS) if self.collapsed else full

    def place(self, top: float) -> None:
        self.top = top
        self.depth0 = top + LANE_HEADER           # y of depth 0's top edge
        self.bottom = self.depth0 + max(self.levels, 0) * ROW

    def depth_at(self, y: float) -> int:
        return int(np.floor((y - self.depth0) / ROW))

    def in_header(self, y: float) -> bool:
        return self.top <= y < self.depth0

    def title(self) -> str:
        tl = self.timeline
        mark = "▸" if self.collapsed else "▾"
        hidden = f" (top {self.levels} of {tl.max_depth + 1} levels)" if self.collapsed and \
            self.levels < tl.max_depth + 1 else ""
        # Virtual threads said as such: their lanes sit among their carriers'.
        kind = "  ·  virtual" if tl.thread.info.get("virtual") is True else ""
        return f"{mark} {tl.thread.name} #{tl.thread.index}{kind}  ·  {tl.rows:,} calls{hidden}"


class FlameItem(pg.GraphicsObject):
    """Paints every lane of a :class:`TimelineModel` (rectangles, labels, markers, selection)."""

    def __init__(self, model: TimelineModel, analysis: Analysis):
        super().__init__()
        self.model = model
        self.analysis = analysis
        # Several threads with calls: lanes start collapsed, so that all of them fit.
        busy = sum(1 for tl in model.threads if tl.rows)
        self.lanes = [Lane(tl, 0.0, collapsed=busy > 1) for tl in model.threads]
        self.height = 1.0
        self.relayout()
        self.hues = colors.method_hues(analysis.statics)
        self.colors = colors.slot_colors()
        self.brushes = [QBrush(c) for c in self.colors]
        self.text_pens = [QPen(colors.text_color_for(c)) for c in self.colors]
        self.selected: CallRef | None = None
        # Per method id: does it match the search (None: no search). Matching calls are drawn in
        # the search colour over the others, which fade, so that a match one pixel wide stands out.
        self.matches: np.ndarray | None = None
        faded = [QColor(c) for c in self.colors]
        for c in faded:
            c.setAlpha(SEARCH_FADE)
        self.faded_brushes = [QBrush(c) for c in faded]
        self.match_brush = QBrush(colors.qcolor(colors.SEARCH_MATCH))
        self.match_pen = QPen(colors.text_color_for(colors.qcolor(colors.SEARCH_MATCH)))
        self.last_matched: list[tuple[int, int]] = []      # (thread, row) drawn as matches by the last paint
        self.range: tuple[float, float] | None = None      # the selected range, on the x axis
        self.last_labels: list[tuple[int, int, str]] = []  # (thread, row, text) written by the last paint
        self.last_interpolated: list[tuple[int, int]] = []  # (thread, row) hatched by the last paint
        self.last_exception_labels: list[str] = []
        self._rects = pg_internals.PrimitiveArray(QRectF, 4)
        self._names: dict[int, str] = {}
        self._marks = [self._thread_marks(lane) for lane in self.lanes]
        self.font = QFont()
        self.font.setPointSizeF(max(7.0, self.font.pointSizeF() * 0.9))
        self.metrics = QFontMetrics(self.font)
        self.last_paint_rects = 0

    # ------------------------------------------------------------------ geometry

    def relayout(self) -> None:
        """Stack the lanes again (after collapsing or expanding one)."""
        self.prepareGeometryChange()
        top = 0.0
        for lane in self.lanes:
            lane.place(top)
            top = lane.bottom + LANE_GAP
        self.height = max(top, 1.0)
        self.update()

    def scope_changed(self) -> None:
        """The model's scope changed: exception marks move to the depths drawn now."""
        self._marks = [self._thread_marks(lane) for lane in self.lanes]
        self.update()

    def set_collapsed(self, lane: Lane, collapsed: bool) -> None:
        if lane.collapsed != collapsed:
            lane.collapsed = collapsed
            self.relayout()

    def set_all_collapsed(self, collapsed: bool) -> None:
        for lane in self.lanes:
            lane.collapsed = collapsed
        self.relayout()

    def boundingRect(self) -> QRectF:
        """The run's time span, cut to a few view widths around what the view shows. Qt culls items
        by their bounding rectangle in device pixels, which are ints: zoomed in to a microsecond
        call of a run of seconds, the whole span was billions of pixels wide and the item went
        unpainted (every lane empty). The view's range is in time, the same units."""
        t0, t1 = self.model.t_min, self.model.t_max
        vb = self.getViewBox()
        if vb is not None:
            (x0, x1), _ = vb.viewRange()
            width = x1 - x0
            if width > 0:
                t0, t1 = max(t0, x0 - width), min(t1, x1 + width)
                if t1 <= t0:
                    t0 = t1 = min(max(x0, self.model.t_min), self.model.t_max)
        return QRectF(t0, 0.0, t1 - t0, self.height)

    def viewRangeChanged(self):
        # The bounding rectangle follows the view (boundingRect): Qt must be told before it changes.
        self.prepareGeometryChange()
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
        depth = lane.depth_at(y)
        if depth < 0 or depth >= lane.levels:
            return None
        row = lane.timeline.call_near(x, depth, tolerance)
        return CallRef(lane.timeline.thread.index, row) if row >= 0 else None

    def call_rect(self, ref: CallRef) -> QRectF | None:
        lane = self.lane_of(ref.thread)
        if lane is None or not 0 <= ref.row < lane.timeline.rows:
            return None
        tl = lane.timeline
        y = lane.depth0 + float(tl.depth_of(ref.row)) * ROW
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
            self.last_labels = []
            self.last_interpolated = []
            self.last_exception_labels = []
            self.last_matched = []
            for lane_index, lane in enumerate(self.lanes):
                if lane.bottom < y0 or lane.top > y1:
                    continue
                total += self._paint_lane(painter, lane, self._marks[lane_index], x0, x1, y0, y1, units_per_px,
                                          sx, dx, sy, dy)
            self._paint_selection(painter, sx, dx, sy, dy)
            self._paint_range(painter, sx, dx)
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
        d_hi = min(int(np.ceil((y1 - lane.depth0) / ROW)), lane.levels - 1)
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
            depth_end = np.minimum(rects.depth_end, lane.levels - 1)   # a collapsed lane ends there
            heights = (depth_end - rects.depth + 1) * ROW * sy - 1.0
            heights = np.maximum(heights, 1.0)
            # A merged subtree takes its first call's package colour: that call is often a tiny
            # native or untraced one, whose grey would stand for everything folded in with it.
            flags = np.where(rects.merged, rects.flags & ~int(Flag.NATIVE | Flag.UNTRACED | Flag.TRUNCATED),
                             rects.flags)
            slots = colors.call_slots(rects.method, flags, self.hues)
            hit = self._hits(rects)
            brushes = self.brushes if hit is None else self.faded_brushes
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
                p.setBrush(brushes[int(slots[idx[0]])])
                p.drawRects(*self._rects.drawargs())
            if hit is not None and hit.any():
                idx = np.flatnonzero(hit)
                self._rects.resize(len(idx))
                mem = self._rects.ndarray()
                mem[:, 0] = left[idx]
                mem[:, 1] = top[idx]
                mem[:, 2] = right[idx] - left[idx]
                mem[:, 3] = heights[idx]
                p.setBrush(self.match_brush)
                p.drawRects(*self._rects.drawargs())
                thread = tl.thread.index
                self.last_matched.extend((thread, int(r)) for r in rects.row[idx[:MAX_LABELS]].tolist())
            self._paint_interpolated(p, lane, rects, left, right, top, row_h)
            self._paint_labels(p, lane, rects, slots, left, right, top, row_h, hit)
        self._paint_marks(p, lane, marks, x0, x1, sx, dx, sy, dy)
        # The thread's name and index, pinned to the left edge.
        p.setPen(QPen(colors.text_color_for(band) if band.alpha() > 200 else self._text_color()))
        label = lane.title()
        p.drawText(QRectF(4, header_top, 1e4, header_h),
                   int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), label)
        return n

    def _hits(self, rects) -> np.ndarray | None:
        """Which of ``rects`` match the search (None without a search). A merged rectangle stands
        for many calls too short to draw apart, of which only the first is known here: it is never
        shown as a match (exact, not a guess); zooming in draws its calls one by one."""
        if self.matches is None:
            return None
        method = np.clip(np.asarray(rects.method, np.int64), 0, len(self.matches) - 1)
        return self.matches[method] & ~np.asarray(rects.merged, np.bool_)

    def _paint_labels(self, p: QPainter, lane: Lane, rects, slots, left, right, top, row_h, hit=None) -> None:
        """Names inside every call that has room for a few characters: ``Class.method``, else
        ``method``, elided; pinned to the view's left edge while the call runs on."""
        if row_h < self.metrics.height() - 2:
            return
        x = np.maximum(left, 0.0) + 2
        room = right - x - 2
        wide = np.flatnonzero((room >= MIN_LABEL_PX) & ~rects.merged)
        align = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)
        thread = lane.timeline.thread.index
        for i in wide[:MAX_LABELS].tolist():
            name = self.name_of(int(rects.method[i]))
            w = int(room[i])
            text = self.metrics.elidedText(name, Qt.TextElideMode.ElideRight, w)
            if len(text.rstrip("…")) < 4 and "." in name:
                text = self.metrics.elidedText(name.rsplit(".", 1)[1], Qt.TextElideMode.ElideRight, w)
            if len(text.rstrip("…")) < 2:      # a lone letter says nothing
                continue
            p.setPen(self.match_pen if hit is not None and hit[i] else self.text_pens[int(slots[i])])
            p.drawText(QRectF(x[i], top[i], room[i], row_h), align, text)
            self.last_labels.append((thread, int(rects.row[i]), text))

    def _paint_interpolated(self, p: QPainter, lane: Lane, rects, left, right, top, row_h) -> None:
        """Hatch the calls whose duration is interpolated across a pause (on a time axis)."""
        if not self.model.has_clock:
            return
        single = np.flatnonzero(~rects.merged)
        if not len(single):
            return
        thread = lane.timeline.thread
        marked = single[TQ.interpolated_spans(thread.axis, rects.first[single], rects.last[single],
                                               rects.flags[single], thread.shared_steps)]
        if not len(marked):
            return
        self._rects.resize(len(marked))
        mem = self._rects.ndarray()
        mem[:, 0] = left[marked]
        mem[:, 1] = top[marked]
        mem[:, 2] = right[marked] - left[marked]
        mem[:, 3] = row_h
        p.setPen(Qt.PenStyle.NoPen)
        hatch = colors.qcolor(colors.INTERPOLATED_HATCH)
        hatch.setAlpha(120)          # a mark over the package colour, not a new colour
        p.setBrush(QBrush(hatch, Qt.BrushStyle.BDiagPattern))
        p.drawRects(*self._rects.drawargs())
        thread = lane.timeline.thread.index
        self.last_interpolated.extend((thread, int(r)) for r in rects.row[marked].tolist())

    def _paint_range(self, p: QPainter, sx, dx) -> None:
        if self.range is None:
            return
        a, b = sorted(self.range)
        left, right = a * sx + dx, max(b * sx + dx, a * sx + dx + 1)
        fill = colors.qcolor(colors.RANGE_FILL)
        edge = QColor(fill)
        fill.setAlpha(45)
        p.setPen(Qt.PenStyle.NoPen)
        p.fillRect(QRectF(left, -1e5, right - left, 2e5), fill)
        p.setPen(QPen(edge, 1))
        p.drawLine(QPointF(left, -1e5), QPointF(left, 1e5))
        p.drawLine(QPointF(right, -1e5), QPointF(right, 1e5))

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
        # The exception's class is written beside its marker when the next one leaves room.
        named = row_h >= self.metrics.height() - 2
        text_pen = QPen(self._text_color())
        for k in range(j0, min(j1, j0 + 2000)):
            tx = throw_t[k] * sx + dx
            # a collapsed lane shows deeper marks on its last level shown
            bottom = max(lane.levels - 1, 0)
            ty = (lane.depth0 + min(marks["throw_depth"][k], bottom) * ROW) * sy + dy + row_h / 2
            cd = marks["catch_depth"][k]
            cd = min(cd, bottom) if cd >= 0 else cd
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
            if named:
                room = (throw_t[k + 1] * sx + dx - tx) if k + 1 < len(throw_t) else 1e4
                name = self.exception_name(int(marks["exc_class"][k]))
                width = self.metrics.horizontalAdvance(name) + 4
                if name and room > width + 2 * size:
                    p.setPen(text_pen)
                    p.drawText(QPointF(tx + size + 2, ty - size - 1), name)
                    self.last_exception_labels.append(name)

    def exception_name(self, class_id: int) -> str:
        """An exception class without its package (``IllegalStateException``)."""
        if class_id <= 0:
            return ""
        name = self.analysis.statics.class_name_of_id(class_id) or ""
        return name.replace("/", ".").rsplit(".", 1)[-1]

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
    """Wheel zooms time only; Shift+wheel scrolls the lanes; drag pans both; Shift+drag selects
    a range of the x axis (reported through :attr:`rangeDragged`)."""

    rangeDragged = Signal(float, float, bool)   # start, stop (x units), finished

    def mouseDragEvent(self, ev, axis=None):
        if ev.button() == Qt.MouseButton.LeftButton and ev.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            ev.accept()
            a = self.mapSceneToView(ev.buttonDownScenePos()).x()
            b = self.mapSceneToView(ev.scenePos()).x()
            self.rangeDragged.emit(min(a, b), max(a, b), bool(ev.isFinish()))
            return
        super().mouseDragEvent(ev, axis)

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

    rangeChanged = Signal(float, float)       # the visible x range changed
    # A range was selected (Shift+drag, or a call's span): start and stop on the x axis, in
    # :attr:`unit` (nanoseconds since the trace started, or events). Cleared: (nan, nan).
    rangeSelected = Signal(float, float)
    # The user typed in the highlight field: the explorer's one search (the aggregated views follow).
    searchEdited = Signal(str)

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.model: TimelineModel | None = None
        self.analysis: Analysis | None = None
        self.item: FlameItem | None = None
        self.preview_item: PreviewItem | None = None    # the trace being opened, before its replay
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
        self.viewbox.rangeDragged.connect(self._range_dragged)
        self.selected_range: tuple[float, float] | None = None
        self.use_clock = True
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
        self.lanes_button = QToolButton()
        self.lanes_button.setText("Lanes")
        self.lanes_button.setToolTip("Every thread's lane: go to one, collapse or expand them")
        self.lanes_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.lanes_menu = QMenu(self.lanes_button)
        self.lanes_menu.aboutToShow.connect(self._fill_lanes_menu)
        self.lanes_button.setMenu(self.lanes_menu)
        controls.addWidget(self.lanes_button)
        self.range_button = QToolButton()
        self.range_button.setText("Range of call")
        self.range_button.setToolTip("Select the time range of the selected call (R); Shift+drag selects any range, "
                                     "Esc clears it")
        self.range_button.clicked.connect(self.range_from_selected)
        controls.addWidget(self.range_button)
        self.axis_choice = QComboBox()
        self.axis_choice.addItem("x: time", True)
        self.axis_choice.addItem("x: events", False)
        self.axis_choice.setToolTip("Time is interpolated between clock samples (hatched where a thread paused); "
                                    "events are exact, each lane on its own thread's events")
        self.axis_choice.currentIndexChanged.connect(self._axis_chosen)
        controls.addWidget(self.axis_choice)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Highlight (regular expression)")
        self.search.setToolTip("Highlight the calls of every method whose name matches (pkg.Class.name(desc)); "
                               "the aggregated views and the flame graph highlight the same search")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(160)
        self.search.setMaximumWidth(320)
        self.search.textChanged.connect(self._search_typed)
        self.search_info = QLabel()
        self._search_text = ""
        # a second row: the search and what the view shows, with room for a long method name
        second = QHBoxLayout()
        second.setContentsMargins(4, 0, 4, 2)
        second.addWidget(self.search, 1)
        second.addWidget(self.search_info)
        second.addWidget(self.info, 3)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(controls)
        layout.addLayout(second)
        layout.addWidget(self.plot, 1)
        selection.callSelected.connect(self._on_selected)
        self.setFocusProxy(self.plot)

    # ------------------------------------------------------------------ content

    @property
    def unit(self) -> str:
        """The x axis' unit: "ns" or "events"."""
        return self.model.unit if self.model is not None else "ns"

    def set_preview(self, preview: Preview | None) -> None:
        """While a trace is replayed and nothing else is shown: its threads, when they ran and how
        busy they were (:mod:`jbgui.ui.timeline_preview`), until :meth:`set_model` (or None)."""
        if self.preview_item is not None:
            self.viewbox.removeItem(self.preview_item)
            self.preview_item = None
        if preview is None or not preview.threads or self.model is not None:
            if self.model is None:
                self.info.setText("No trace open")
            return
        self.preview_item = PreviewItem(preview)
        self.viewbox.addItem(self.preview_item)
        self._set_axis(preview.has_clock, preview.t_min, preview.t_max, self.preview_item.height)
        self.viewbox.setXRange(preview.t_min, preview.t_max, padding=0.01)
        self.viewbox.setYRange(-0.2, self.preview_item.height + 0.2, padding=0)
        self.info.setText(f"{len(preview.threads)} threads · replaying: their calls are drawn once it is done; "
                          "meanwhile each lane shows the thread's events over time")

    def _set_axis(self, has_clock: bool, t_min: float, t_max: float, height: float) -> None:
        """The x axis in time (nanoseconds, shown in seconds) or events, and how far one may pan."""
        if has_clock:
            self.axis.setLabel("time", units="s")
            self.axis.setScale(1e-9)
        else:
            self.axis.setLabel("event index (this trace has no clock)")
            self.axis.setScale(1.0)
        span = t_max - t_min
        self.viewbox.setLimits(xMin=t_min - span * 0.05, xMax=t_max + span * 0.05, minXRange=1.0, yMin=-1.0,
                               yMax=height + 1.0)

    def set_preview_progress(self, done_bytes: int) -> None:
        """The replay has read ``done_bytes`` of the trace's streams."""
        if self.preview_item is not None:
            self.preview_item.set_progress(done_bytes)

    def set_model(self, model: TimelineModel | None, analysis: Analysis | None) -> None:
        if self.preview_item is not None:
            self.viewbox.removeItem(self.preview_item)
            self.preview_item = None
        if self.item is not None:
            self.viewbox.removeItem(self.item)
            self.item = None
        if model is not None and not model.has_clock:
            self.use_clock = False
        elif model is not None and model.has_clock:
            self.use_clock = True
        self.axis_choice.blockSignals(True)
        self.axis_choice.setCurrentIndex(0 if self.use_clock else 1)
        self.axis_choice.setEnabled(model is not None and model.clock_available)
        self.axis_choice.blockSignals(False)
        self.model, self.analysis = model, analysis
        self.hovered, self.hover_text = None, ""
        self.set_range(None)
        if model is None:
            self.info.setText("No trace open")
            self.search_info.setText("")
            return
        self.item = FlameItem(model, analysis)
        self.viewbox.addItem(self.item)
        self._apply_search()
        self._set_axis(model.has_clock, model.t_min, model.t_max, self.item.height)
        self.show_all()
        self._update_info()

    # ------------------------------------------------------------------ scope

    def set_scope(self, mine) -> None:
        """Only my code (``mine`` per method id, from the explorer's scope) or every call (None):
        runs of JDK and library frames drawn as the call that entered them, callbacks into my code
        right below it (:mod:`jbgui.model.timeline_scope`)."""
        if self.model is None or self.item is None:
            return
        if all(tl.mine is mine for tl in self.model.threads):
            return
        self.model.set_scope(mine)
        self.item.scope_changed()

    # ------------------------------------------------------------------ search

    def _search_typed(self, text: str) -> None:
        self.set_search(text)
        self.searchEdited.emit(text)

    def set_search(self, text: str) -> None:
        """Highlight the calls of methods matching ``text`` (:mod:`jbgui.model.search`); '' clears."""
        if self.search.text() != text:
            self.search.blockSignals(True)
            self.search.setText(text)
            self.search.blockSignals(False)
        if text != self._search_text:
            self._search_text = text
            self._apply_search()

    def _apply_search(self) -> None:
        """The matches of the current search for the trace shown, and their count."""
        if self.item is None or self.analysis is None:
            self.search_info.setText("")
            return
        pattern, error = SE.compile_search(self._search_text)
        if pattern is None:
            self.item.matches = None
            self.search_info.setText(error)
        else:
            matches = SE.method_matches(self.analysis.statics, pattern)
            self.item.matches = matches
            self.search_info.setText(f"{int(matches.sum()):,} methods, "
                                     f"{SE.matching_calls(self.analysis, matches):,} calls")
        self.item.update()

    def show_all(self) -> None:
        if self.model is None or self.item is None:
            return
        self.viewbox.setXRange(self.model.t_min, self.model.t_max, padding=0.01)
        # Every lane when they fit at a legible row height, else the first ones.
        legible = max(20.0, self.plot.height() / LANE_PIXELS)
        self.viewbox.setYRange(-0.2, min(self.item.height, legible) + 0.2, padding=0)

    def _axis_chosen(self, index: int) -> None:
        use_clock = bool(self.axis_choice.itemData(index))
        if self.analysis is None or use_clock == self.use_clock:
            return
        self.use_clock = use_clock
        collapsed = {lane.timeline.thread.index: lane.collapsed for lane in self.item.lanes} if self.item else {}
        mine = self.model.threads[0].mine if self.model is not None and self.model.threads else None
        self.set_model(TimelineModel(self.analysis, use_clock=use_clock), self.analysis)
        self.set_scope(mine)        # the same scope on the other axis
        for lane in self.item.lanes:
            lane.collapsed = collapsed.get(lane.timeline.thread.index, lane.collapsed)
        self.item.relayout()
        self.show_all()
        if self.selection.call is not None:
            self._on_selected(self.selection.call, None)

    # ------------------------------------------------------------------ lanes

    def _fill_lanes_menu(self) -> None:
        menu = self.lanes_menu
        menu.clear()
        if self.item is None:
            menu.addAction("(no trace)").setEnabled(False)
            return
        menu.addAction("Collapse all", lambda: self.set_all_collapsed(True))
        menu.addAction("Expand all", lambda: self.set_all_collapsed(False))
        menu.addSeparator()
        for lane in self.item.lanes:
            tl = lane.timeline
            action = menu.addAction(f"{tl.thread.name} #{tl.thread.index} — {tl.rows:,} calls, "
                                    f"depth {tl.max_depth + 1}")
            action.triggered.connect(lambda _c=False, t=tl.thread.index: self.go_to_lane(t))

    def set_all_collapsed(self, collapsed: bool) -> None:
        if self.item is not None:
            self.item.set_all_collapsed(collapsed)
            self._limit_y()

    def toggle_lane(self, thread: int) -> None:
        lane = self.item.lane_of(thread) if self.item is not None else None
        if lane is not None:
            self.item.set_collapsed(lane, not lane.collapsed)
            self._limit_y()

    def go_to_lane(self, thread: int) -> None:
        """Expand a thread's lane and scroll it to the top."""
        lane = self.item.lane_of(thread) if self.item is not None else None
        if lane is None:
            return
        self.item.set_collapsed(lane, False)
        self._limit_y()
        _, (y0, y1) = self.viewbox.viewRange()
        self.viewbox.setYRange(lane.top - 0.2, lane.top - 0.2 + (y1 - y0), padding=0)

    def _limit_y(self) -> None:
        if self.item is not None:
            self.viewbox.setLimits(yMin=-1.0, yMax=self.item.height + 1.0)

    # ------------------------------------------------------------------ range

    def set_range(self, start: float | None, stop: float | None = None) -> None:
        """Select the range [start, stop) of the x axis (None: clear it); emits :attr:`rangeSelected`."""
        if start is None or stop is None or not stop > start:
            changed = self.selected_range is not None
            self.selected_range = None
            if self.item is not None:
                self.item.range = None
                self.item.update()
            if changed:
                self.rangeSelected.emit(float("nan"), float("nan"))
                self._update_info()
            return
        self.selected_range = (float(start), float(stop))
        if self.item is not None:
            self.item.range = self.selected_range
            self.item.update()
        self.rangeSelected.emit(float(start), float(stop))
        self._update_info()

    def range_from_selected(self) -> None:
        """The selected call's span becomes the range."""
        ref = self.selection.call
        if ref is None or self.analysis is None:
            return
        self.set_range(*RS.call_range(self.analysis, ref.thread, ref.row, use_clock=self.model.has_clock))

    def _range_dragged(self, start: float, stop: float, finished: bool) -> None:
        if self.item is None:
            return
        if not finished:
            self.item.range = (start, stop)     # drawn while dragging, announced when released
            self.item.update()
            return
        self.set_range(start, stop)

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
        """Scroll (and, with ``zoom`` or when the call is too small to see, zoom) to a call;
        expands its lane when the call is below the levels a collapsed lane shows."""
        lane = self.item.lane_of(ref.thread) if self.item is not None else None
        if lane is not None and lane.collapsed and 0 <= ref.row < lane.timeline.rows and \
                lane.timeline.depth_of(ref.row) >= lane.levels:
            self.item.set_collapsed(lane, False)
            self._limit_y()
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
        if self.item is not None and self.viewbox.sceneBoundingRect().contains(event.scenePos()):
            y = self.viewbox.mapSceneToView(event.scenePos()).y()
            lane = self.item.lane_at(y)
            if lane is not None and lane.in_header(y):
                self.toggle_lane(lane.timeline.thread.index)
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
        elif key == Qt.Key.Key_R:
            self.range_from_selected()
        elif key == Qt.Key.Key_Escape:
            self.set_range(None)
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
        if self.selected_range is not None:
            a, b = self.selected_range
            width = format_duration(b - a) if self.model.has_clock else f"{b - a:,.0f} events"
            text += f"  ·  range {width}"
        if self.selection.call is not None and self.analysis is not None:
            text += "  ·  selected: " + self.analysis.call_name(self.analysis.thread(self.selection.call.thread),
                                                                self.selection.call.row)
        self.info.setText(text)
