"""The control-flow graph of the selected method, laid out by Graphviz's dot and drawn in Qt.

Blocks are boxes (index, first offset, lines, count), tinted by how often they ran; edges are as
thick as their count is large and labelled with it. Never-run blocks and never-taken edges are
dashed and grey, exception edges to handlers dotted red, loop back edges blue. Counts are for the
whole run or for the selected call. Wheel zooms, dragging pans; clicking a block selects it
(:meth:`Selection.select_block`), and a block selected elsewhere is outlined and centred here.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPalette, QPen, QPolygonF
from PySide6.QtWidgets import (QButtonGroup, QGraphicsItem, QGraphicsPathItem, QGraphicsPolygonItem,
                               QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem, QGraphicsView,
                               QHBoxLayout, QLabel, QRadioButton, QVBoxLayout, QWidget)

from shiboken6 import isValid

from jbgui.model.cfg import BACK, EXCEPTION, Cfg, call_cfg, method_cfg
from jbgui.model.cfg_layout import Layout, layout
from jbgui.ui import colors
from jbgui.ui.format import format_count
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.tasks import Task

# An edge's count label: the clear space kept between it and its own line, and the margin of the
# plate it sits on (in scene units, points).
LABEL_GAP = 2.0
LABEL_PAD = 1.0


class BlockItem(QGraphicsRectItem):
    """One block: a box with its text; clicking it selects the block."""

    def __init__(self, view: "CfgView", block: int, rect: QRectF):
        super().__init__(rect)
        self.view = view
        self.block = block
        self.setAcceptedMouseButtons(Qt.MouseButton.LeftButton)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, False)

    def mousePressEvent(self, event) -> None:
        self.view.block_clicked(self.block)
        event.accept()


class GraphView(QGraphicsView):
    """A graphics view with wheel zoom around the cursor and drag to pan."""

    def __init__(self, scene: QGraphicsScene):
        super().__init__(scene)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.fitted = False       # showing the whole graph as fit() left it (no zoom since)

    def fit(self) -> None:
        """The whole graph in view, at most 1.6 times its size."""
        self.resetTransform()
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.6:
            self.resetTransform()
            self.scale(1.6, 1.6)
        self.fitted = True

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.fitted:           # the view changed size (the dock, a title wrapping): fit again
            self.fit()

    def wheelEvent(self, event) -> None:
        factor = 1.2 ** (event.angleDelta().y() / 120)
        scale = self.transform().m11() * factor
        if 0.05 <= scale <= 8:
            self.scale(factor, factor)
            self.fitted = False
        event.accept()


class CfgView(QWidget):
    """The control-flow graph of the current method (whole run or the selected call)."""

    blockClicked = Signal(int, int)    # method, block

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.analysis = None
        self.method = 0
        self.call: CallRef | None = None
        self.cfg: Cfg | None = None
        self.layout_: Layout | None = None
        self.items: dict[int, BlockItem] = {}
        self.selected_block = -1
        self._task: Task | None = None
        self.title = QLabel("Select a call or a method")
        self.title.setWordWrap(True)
        self.whole = QRadioButton("whole run")
        self.this_call = QRadioButton("selected call")
        self.whole.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.whole)
        group.addButton(self.this_call)
        self.this_call.setEnabled(False)
        self.whole.toggled.connect(lambda _on: self.refresh())
        self.status = QLabel("")
        row = QHBoxLayout()
        row.addWidget(QLabel("Counts:"))
        row.addWidget(self.whole)
        row.addWidget(self.this_call)
        row.addStretch(1)
        row.addWidget(self.status)
        self.scene = QGraphicsScene(self)
        self.view = GraphView(self.scene)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.title)
        box.addLayout(row)
        box.addWidget(self.view, 1)
        selection.callSelected.connect(self._on_call)
        selection.methodSelected.connect(self._on_method)
        if hasattr(selection, "blockSelected"):
            selection.blockSelected.connect(self._on_block)

    # ------------------------------------------------------------------ following the selection

    def set_analysis(self, analysis) -> None:
        self.analysis = analysis
        self.method = 0
        self.call = None
        self.cfg = None
        self.scene.clear()
        self.items.clear()
        self.title.setText("Select a call or a method" if analysis else "No trace open")

    def _on_call(self, ref, source) -> None:
        if self.analysis is None or ref is None:
            return
        method = int(self.analysis.thread(ref.thread).calls.method[ref.row])
        if not method or not int(self.analysis.statics.m_blocks[method]):
            return
        self.call = ref
        self.this_call.setEnabled(True)
        if method != self.method or self.this_call.isChecked():
            self.method = method
            self.refresh()

    def _on_method(self, method: int, source) -> None:
        if self.analysis is None or not method or not int(self.analysis.statics.m_blocks[method]):
            return
        self.method = method
        self.call = None
        self.this_call.setEnabled(False)
        self.whole.setChecked(True)
        self.refresh()

    def _on_block(self, method: int, block: int, source) -> None:
        if source is self or self.analysis is None:
            return
        if method != self.method:
            self.method = method
            self.refresh()
        self.highlight(block, center=True)

    def show_method(self, method: int, call: CallRef | None = None) -> None:
        """Show ``method`` (with ``call``'s own counts when given)."""
        self.method = method
        self.call = call
        self.this_call.setEnabled(call is not None)
        if call is not None:
            self.this_call.setChecked(True)
        self.refresh()

    # ------------------------------------------------------------------ computing

    def refresh(self) -> None:
        if self.analysis is None or not self.method:
            return
        per_call = self.this_call.isChecked() and self.call is not None
        if self._task is not None:
            self._task.cancel()
        key = (self.method, self.call if per_call else None)
        task = Task(_compute, self.analysis, self.method, self.call if per_call else None, name="cfg")
        # A result may arrive after the view was closed, or after the user asked for another graph.
        task.succeeded.connect(lambda result, k=key: self._ready(result) if isValid(self) and k == self._key()
                               else None)
        task.failed.connect(lambda message: self.status.setText(message) if isValid(self) else None)
        self._task = task
        self.status.setText("laying out …")
        task.start()

    def _key(self):
        per_call = self.this_call.isChecked() and self.call is not None
        return (self.method, self.call if per_call else None)

    def _ready(self, result) -> None:
        cfg, lay, error = result
        self.status.setText(error or "")
        self.cfg = cfg
        self.layout_ = lay
        scope = f"call {cfg.call}" if cfg.call else "whole run"
        loops = len(cfg.loops)
        self.title.setText(f"<b>{cfg.name}</b> — {cfg.n_blocks} block{'s' if cfg.n_blocks != 1 else ''}, "
                           f"{loops} loop{'s' if loops != 1 else ''} "
                           f"({scope}); dashed grey: never run / never taken, red dotted: exception, "
                           f"blue: loop back edge")
        self.draw()

    # ------------------------------------------------------------------ drawing

    def draw(self) -> None:
        self.scene.clear()
        self.items.clear()
        cfg, lay = self.cfg, self.layout_
        if cfg is None or lay is None:
            return
        dark = colors.is_dark()
        ink = colors.qcolor(colors.CFG_INK, dark)
        exception_color, back_color = colors.qcolor(colors.CFG_EXCEPTION), colors.qcolor(colors.CFG_BACK)
        never_color = colors.qcolor(colors.CFG_NEVER)
        paper = self.view.palette().color(QPalette.ColorRole.Base)     # what the view paints behind the graph
        hottest = max(int(cfg.counts.max()) if cfg.n_blocks else 0, 1)
        top_edge = max([e.count for e in cfg.edges] + [1])
        font = QFont("monospace")
        font.setPointSizeF(8)
        small = QFont()
        small.setPointSizeF(7)
        kinds = {(e.src, e.dst): e for e in cfg.edges}
        # the block's instructions, when the trace lists them (recorded with --instructions)
        instructions = self.analysis.statics.instructions if self.analysis is not None else {}
        self.listings = {b: instructions[cfg.block_base + b] for b in range(cfg.n_blocks)
                         if cfg.block_base + b in instructions}
        labels = []
        for curve in lay.edges:
            e = kinds.get((curve.src, curve.dst))
            if e is None or len(curve.points) < 2:
                continue
            path = QPainterPath(QPointF(*curve.points[0]))
            pts = curve.points[1:]
            for i in range(0, len(pts) - 2, 3):
                path.cubicTo(QPointF(*pts[i]), QPointF(*pts[i + 1]), QPointF(*pts[i + 2]))
            width = 0.8 + 4.2 * math.sqrt(e.count / top_edge) if e.count else 0.8
            color = exception_color if e.kind == EXCEPTION else back_color if e.kind == BACK else ink
            pen = QPen(color, width)
            if e.count == 0:
                pen.setColor(never_color)
                pen.setStyle(Qt.PenStyle.DashLine)
            if e.kind == EXCEPTION:
                pen.setStyle(Qt.PenStyle.DotLine)
            item = QGraphicsPathItem(path)
            item.setPen(pen)
            item.setData(0, (e.src, e.dst))
            self.scene.addItem(item)
            self._arrow(curve, pen.color(), 5.0 + width)
            if e.count and curve.label is not None:
                labels.append((item, format_count(e.count), QPointF(*curve.label), color))
        for b in range(cfg.n_blocks):
            box = lay.nodes.get(b)
            if box is None:
                continue
            rect = QRectF(box.x - box.width / 2, box.y - box.height / 2, box.width, box.height)
            item = BlockItem(self, b, rect)
            count = int(cfg.counts[b])
            if count:
                heat = math.log1p(count) / math.log1p(hottest)
                item.setBrush(QBrush(colors.heat_tint(heat, dark)))
                pen = QPen(colors.heat_color(heat, dark), 1.6)
            else:
                item.setBrush(QBrush(Qt.BrushStyle.NoBrush))
                pen = QPen(never_color, 1.2, Qt.PenStyle.DashLine)
            if cfg.handler[b]:
                pen.setColor(exception_color)
            item.setPen(pen)
            item.setToolTip(f"block #{b}: offsets [{cfg.first_offset[b]}, {cfg.last_offset[b]}), "
                            f"lines {cfg.lines[b] or '?'}, {cfg.bytecodes[b]} bytecodes, ran {count:,} times"
                            + (", handler entry" if cfg.handler[b] else "")
                            + (f"\n\n{self.listings[b]}" if b in self.listings else ""))
            self.scene.addItem(item)
            label = QGraphicsSimpleTextItem(f"#{b}  @{cfg.first_offset[b]}\nline {cfg.lines[b] or '?'}\n×{format_count(count)}",
                                            item)
            label.setFont(font)
            label.setBrush(QBrush(never_color if count == 0 else ink))
            r = label.boundingRect()
            # dot sized the box for its own font metrics: shrink the text to fit when Qt's are wider
            fit = min(1.0, (box.width - 4) / max(r.width(), 1), (box.height - 2) / max(r.height(), 1))
            label.setScale(fit)
            label.setPos(box.x - fit * r.width() / 2, box.y - fit * r.height() / 2)
            self.items[b] = item
        for edge, text, at, color in labels:     # last, to keep clear of everything else
            self._edge_label(edge, text, at, color, paper, small)
        self.scene.setSceneRect(QRectF(-10, -10, lay.width + 20, lay.height + 20))
        self.view.fit()
        if self.selected_block >= 0:
            self.highlight(self.selected_block)

    def _edge_label(self, edge: QGraphicsPathItem, text: str, at: QPointF, color: QColor, paper: QColor,
                    font: QFont) -> None:
        """The count of ``edge`` beside it, on a small plate of the view's background colour.

        dot puts the label's centre (``at``) beside the line as dot draws it: thinner than here, the
        width scaled by the count, and with its own font metrics, so a thick edge ran over its own
        number. The label goes to the spot nearest ``at`` where it touches nothing already drawn (no
        line, arrow head, block or other label, :data:`LABEL_GAP` apart): ``at`` itself, else beside
        the line, perpendicular to it, near the point of the line nearest ``at``, dot's side first.
        Called after the blocks are drawn, so that it avoids them too; the opaque plate keeps it
        legible should an edge still cross it."""
        label = QGraphicsSimpleTextItem(text)
        label.setFont(font)
        label.setBrush(QBrush(color))
        r = label.boundingRect()
        w, h = r.width() + 2 * LABEL_PAD, r.height() + 2 * LABEL_PAD
        path, half = edge.path(), edge.pen().widthF() / 2

        def plate_at(center: QPointF) -> QRectF:
            return QRectF(center.x() - w / 2, center.y() - h / 2, w, h)

        def clear(center: QPointF) -> bool:
            room = plate_at(center).adjusted(-LABEL_GAP, -LABEL_GAP, LABEL_GAP, LABEL_GAP)
            return not self.scene.items(room, Qt.ItemSelectionMode.IntersectsItemShape)

        def normal(t: float) -> tuple[float, float]:
            a, b = path.pointAtPercent(max(t - 0.01, 0.0)), path.pointAtPercent(min(t + 0.01, 1.0))
            dx, dy = b.x() - a.x(), b.y() - a.y()
            n = math.hypot(dx, dy) or 1.0
            return -dy / n, dx / n

        steps = 100
        t0 = min((i / steps for i in range(steps + 1)), key=lambda t: _dist2(path.pointAtPercent(t), at))
        near, (nx, ny) = path.pointAtPercent(t0), normal(t0)
        # dot's side of the line (either, when dot's point is on it)
        side = -1.0 if (at.x() - near.x()) * nx + (at.y() - near.y()) * ny < -0.5 else 1.0
        candidates = []
        for t in (t0, t0 - 0.08, t0 + 0.08, t0 - 0.16, t0 + 0.16, t0 - 0.25, t0 + 0.25):
            if not 0.05 <= t <= 0.95 and t != t0:
                continue
            p, (nx, ny) = path.pointAtPercent(t), normal(t)
            for sign in (side, -side):
                # just clear of a straight line there, then a little further for a bend
                d = half + LABEL_GAP + (abs(nx) * w + abs(ny) * h) / 2
                for extra in (0.0, 3.0, 6.0):
                    candidates.append(QPointF(p.x() + sign * nx * (d + extra), p.y() + sign * ny * (d + extra)))
        fallback = candidates[0]          # beside the line on dot's side, whatever else is there
        candidates.sort(key=lambda c: _dist2(c, at))
        center = next((c for c in [at] + candidates if clear(c)), fallback)
        plate = QGraphicsRectItem(QRectF(0, 0, w, h))
        plate.setPen(QPen(Qt.PenStyle.NoPen))
        plate.setBrush(QBrush(paper))
        plate.setPos(center.x() - w / 2, center.y() - h / 2)
        plate.setZValue(1)                   # over the edges
        label.setParentItem(plate)
        label.setPos(LABEL_PAD, LABEL_PAD)
        self.scene.addItem(plate)

    def _arrow(self, curve, color: QColor, size: float) -> None:
        (x0, y0), (x1, y1) = curve.points[-2], curve.points[-1]
        angle = math.atan2(y1 - y0, x1 - x0)
        # dot's spline ends where its arrow head would begin: the head fills the gap to the box
        tip = QPointF(x1 + math.cos(angle) * min(size, 9.0), y1 + math.sin(angle) * min(size, 9.0))
        left = QPointF(tip.x() - size * math.cos(angle - 0.4), tip.y() - size * math.sin(angle - 0.4))
        right = QPointF(tip.x() - size * math.cos(angle + 0.4), tip.y() - size * math.sin(angle + 0.4))
        head = QGraphicsPolygonItem(QPolygonF([tip, left, right]))
        head.setBrush(QBrush(color))
        head.setPen(QPen(color, 0.5))
        self.scene.addItem(head)

    def highlight(self, block: int, center: bool = False) -> None:
        """Outline ``block`` (and centre it)."""
        previous = self.items.get(self.selected_block)
        if previous is not None:
            previous.setData(1, None)
            pen = previous.data(2)
            if pen is not None:
                previous.setPen(pen)
        self.selected_block = block
        item = self.items.get(block)
        if item is None:
            return
        item.setData(2, QPen(item.pen()))
        item.setPen(QPen(colors.qcolor(colors.CFG_SELECTED), 3.5))
        if center:
            self.view.centerOn(item)

    def block_clicked(self, block: int) -> None:
        self.highlight(block)
        self.blockClicked.emit(self.method, block)
        if hasattr(self.selection, "select_block"):
            self.selection.select_block(self.method, block, self)

    def block_center(self, block: int) -> QPointF:
        """Where block ``block`` is on screen (viewport coordinates), for tests and tours."""
        item = self.items[block]
        return self.view.mapFromScene(item.sceneBoundingRect().center())


def _dist2(a: QPointF, b: QPointF) -> float:
    return (a.x() - b.x()) ** 2 + (a.y() - b.y()) ** 2


def _compute(_progress, cancelled, analysis, method: int, call: CallRef | None):
    if call is not None:
        cfg = call_cfg(analysis, analysis.thread(call.thread), call.row)
    else:
        cfg = method_cfg(analysis, method)
    try:
        return cfg, layout(cfg), None
    except Exception as error:  # noqa: BLE001 - no dot: the view says so instead of drawing
        return cfg, None, str(error)
