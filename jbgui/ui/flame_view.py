"""Flame graph (icicle by default, flippable) of the current aggregated tree, or of the selected
call's subtree: "where does the weight go", at a glance. Click a frame to zoom into it, the
breadcrumb goes back; hover shows a frame's totals. Frames narrower than a pixel are merged by
the model (:meth:`FlameLayout.rects`), and rectangles are drawn one ``drawRects`` call per colour,
so a paint costs a few thousand rectangles whatever the tree's size."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QHBoxLayout, QLabel, QPushButton, QToolTip, QVBoxLayout, QWidget,
)

from jbgui.model import cct as CCT
from jbgui.model import flame
from jbgui.ui import colors
from jbgui.ui.aggregate_state import AggregateState, LazyReload
from jbgui.ui.format import format_count
from jbgui.ui.merged_tree_view import format_weight
from jbgui.ui.selection import CallRef, Selection

ROW_HEIGHT = 18


class FlameCanvas(QWidget):
    """Paints one :class:`FlameLayout` zoomed on a frame."""

    frameClicked = Signal(int)     # node
    frameHovered = Signal(int)     # node, -1 when none

    def __init__(self, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.state = state
        self.layout_: flame.FlameLayout | None = None
        self.zoom = -1
        self.flipped = False
        self.hues: np.ndarray | None = None
        self.palette_ = colors.slot_colors()
        self.drawn: dict[str, np.ndarray] | None = None
        self._rects_key: tuple | None = None
        self._rects: dict[str, np.ndarray] = {}
        self.computing = False     # no layout yet because a worker is computing it
        self.setMouseTracking(True)
        self.setMinimumHeight(200)

    def set_layout(self, lay: flame.FlameLayout | None, hues: np.ndarray | None,
                   rects: dict[str, np.ndarray] | None = None, width: int = 0) -> None:
        """Show ``lay``; ``rects`` are what the worker prepared for the whole graph at ``width``
        pixels (used when the canvas still has that width)."""
        self.layout_ = lay
        self.hues = hues
        self.zoom = -1
        if rects is not None:
            self._rects_key, self._rects = (id(lay), -1, width), rects
        self.update()

    def span(self) -> float:
        if self.layout_ is None:
            return 0.0
        return float(self.layout_.width[self.zoom]) if self.zoom >= 0 else float(self.layout_.total)

    def rects(self) -> dict[str, np.ndarray]:
        """What the next paint draws (model coordinates)."""
        span = self.span()
        if self.layout_ is None or span <= 0:
            return {k: np.zeros(0, np.int64) for k in ("node", "key", "x", "width", "depth")}
        # repaints (hover, tooltips, exposure) reuse the rectangles until the zoom or width changes
        key = (id(self.layout_), self.zoom, self.width())
        if self._rects_key != key:
            self._rects = self.layout_.rects(zoom=self.zoom, min_width=span / max(self.width(), 1))
            self._rects_key = key
        return self._rects

    def _y(self, depth: np.ndarray | int):
        return (self.height() - (np.asarray(depth) + 1) * ROW_HEIGHT) if self.flipped else np.asarray(depth) * ROW_HEIGHT

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        r = self.drawn = self.rects()
        span = self.span()
        if not len(r["x"]) or span <= 0:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter,
                       "Computing…" if self.computing else "Nothing to draw (no calls in this tree)")
            return
        scale = self.width() / span
        xs = r["x"] * scale
        ws = np.maximum(r["width"] * scale - 1, 1)
        ys = self._y(r["depth"])
        keys = r["key"]
        slots = np.full(len(keys), -1, np.int64)
        method = (keys > 0) & (keys < CCT.SYNTHETIC_KEY)
        if self.hues is not None:
            slots[method] = self.hues[np.clip(keys[method], 0, len(self.hues) - 1)]
        slots[(keys >= CCT.SYNTHETIC_KEY)] = colors.NATIVE
        match = np.array([self.state.matches(self.state.name(int(k))) if k != flame.MERGED_KEY else False
                          for k in keys]) if self.state.search else np.zeros(len(keys), np.bool_)
        p.setPen(Qt.PenStyle.NoPen)
        for slot in np.unique(slots):
            sel = (slots == slot) & ~match
            if not sel.any():
                continue
            p.setBrush(colors.qcolor(colors.MERGED_FRAMES) if slot < 0 else self.palette_[int(slot)])
            p.drawRects([QRectF(x, y, w, ROW_HEIGHT - 1) for x, y, w in zip(xs[sel], ys[sel], ws[sel])])
        if match.any():
            p.setBrush(colors.qcolor(colors.SEARCH_MATCH))
            p.drawRects([QRectF(x, y, w, ROW_HEIGHT - 1) for x, y, w in zip(xs[match], ys[match], ws[match])])
        # labels where they fit, black or white by the brightness of their frame's fill
        fm = QFontMetrics(p.font())
        wide = np.flatnonzero((ws > 30) & (keys != flame.MERGED_KEY))
        for i in wide:
            fill = (colors.qcolor(colors.SEARCH_MATCH) if match[i] else self.palette_[int(slots[i])] if slots[i] >= 0
                    else colors.qcolor(colors.MERGED_FRAMES))
            p.setPen(QPen(colors.text_color_for(fill)))
            name = self.state.name(int(keys[i]))
            short = name.split("(", 1)[0]
            short = ".".join(short.split(".")[-2:])
            text = fm.elidedText(short, Qt.TextElideMode.ElideRight, int(ws[i]) - 6)
            p.drawText(QRectF(xs[i] + 3, ys[i], ws[i] - 6, ROW_HEIGHT - 1), Qt.AlignmentFlag.AlignVCenter, text)

    def node_at(self, pos: QPointF) -> int:
        if self.layout_ is None or self.span() <= 0:
            return -1
        row = (self.height() - pos.y()) // ROW_HEIGHT if self.flipped else pos.y() // ROW_HEIGHT
        x = pos.x() / self.width() * self.span()
        # among the drawn rectangles (a few thousand), not the whole tree: hovering stays cheap
        r = self.rects()
        hit = np.flatnonzero((r["depth"] == int(row)) & (r["x"] <= x) & (r["x"] + r["width"] > x) & (r["node"] >= 0))
        return int(r["node"][hit[0]]) if len(hit) else -1

    def mouseMoveEvent(self, event) -> None:
        node = self.node_at(event.position())
        self.frameHovered.emit(node)
        if node >= 0:
            QToolTip.showText(event.globalPosition().toPoint(), self.describe(node), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            node = self.node_at(event.position())
            if node >= 0:
                self.frameClicked.emit(node)

    def describe(self, node: int) -> str:
        lay = self.layout_
        tree = lay.tree
        w = lay.weight
        incl = int(lay.width[node])
        share = 100.0 * incl / lay.total if lay.total else 0.0
        return (f"{self.state.name(int(tree.key[node]))}\ntotal {format_weight(w, incl)} {w} ({share:.1f}% of the graph)"
                f"\nself {format_weight(w, int(tree.own(w)[node]))} · {format_count(int(tree.calls[node]))} calls")


def _lay_out(_progress, _cancelled, tree, weight: str, width: int, subtree=None):
    """Worker: the layout of ``tree`` (or of a call's subtree: ``subtree`` = (thread, row)) and
    the rectangles of its first screen, ``width`` pixels wide."""
    if subtree is not None:
        tree = flame.call_subtree_tree(*subtree)
    if tree is None:
        return None, None
    lay = flame.layout(tree, weight)
    rects = lay.rects(min_width=lay.total / max(width, 1)) if lay.total > 0 else None
    return lay, rects


class FlameView(LazyReload, QWidget):
    """The flame graph with its breadcrumb, source (current tree or selected call) and flip."""

    def __init__(self, selection: Selection, state: AggregateState, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.state = state
        self.canvas = FlameCanvas(state)
        self.source = QComboBox()
        self.source.addItems(["Aggregated tree", "Selected call's subtree"])
        self.source.setToolTip("The scope's merged tree (whole run or thread), or the subtree of the call selected "
                               "in the call tree or timeline")
        self.source.currentIndexChanged.connect(self.reload)
        self.flip = QCheckBox("Flame (roots at the bottom)")
        self.flip.toggled.connect(self._flip)
        self.crumbs = QHBoxLayout()
        self.crumbs.setSpacing(2)
        self.status = QLabel()
        top = QHBoxLayout()
        top.addWidget(self.source)
        top.addWidget(self.flip)
        top.addLayout(self.crumbs, 1)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(top)
        self.init_async(state)
        column.addWidget(self.busy)
        column.addWidget(self.canvas, 1)
        column.addWidget(self.status)
        self.trail: list[int] = []
        self._hues, self._hues_of = None, None
        self.canvas.frameClicked.connect(self.zoom_to)
        self.canvas.frameHovered.connect(self._hovered)
        state.searchChanged.connect(self.canvas.update)
        selection.callSelected.connect(self._call_selected)

    def _call_selected(self, _ref, _source) -> None:
        if self.source.currentIndex() == 1:
            self.reload()

    def reload(self) -> None:
        a = self.state.analysis
        tree, subtree = None, None
        if a is not None:
            if self.source.currentIndex() == 1:
                ref: CallRef | None = self.selection.call
                if ref is not None:
                    subtree = (a.thread(ref.thread), ref.row)
            else:
                tree = self.state.tree()
        if tree is None and subtree is None:
            if a is None or self.source.currentIndex() == 1 or not self.state.busy:
                self.worker.cancel()
                self.apply((None, None))
            return
        self.compute(_lay_out, tree, self.state.weight, self.canvas.width(), subtree, what="the flame graph")

    def _state_computing(self) -> None:
        super()._state_computing()
        self.canvas.computing = True
        self.canvas.update()

    def apply(self, result) -> None:
        self.canvas.computing = False
        lay, rects = result
        a = self.state.analysis
        if a is not None and self._hues_of is not a:
            self._hues, self._hues_of = colors.method_hues(a.statics), a
        self.canvas.set_layout(lay, self._hues if a is not None else None, rects, self.canvas.width())
        self.trail = []
        self._crumbs()

    def zoom_to(self, node: int) -> None:
        """Zoom into ``node`` (it and its subtree fill the width)."""
        if node == self.canvas.zoom:
            return
        self.trail.append(node)
        self.canvas.zoom = node
        self.canvas.update()
        self._crumbs()
        key = int(self.canvas.layout_.tree.key[node])
        if 0 < key < CCT.SYNTHETIC_KEY:
            self.selection.select_method(key, self)

    def back_to(self, depth: int) -> None:
        """Go back to the ``depth``-th crumb (0: everything)."""
        del self.trail[depth:]
        self.canvas.zoom = self.trail[-1] if self.trail else -1
        self.canvas.update()
        self._crumbs()

    def _crumbs(self) -> None:
        while self.crumbs.count():
            item = self.crumbs.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        labels = ["All"] + [".".join(self.state.name(int(self.canvas.layout_.tree.key[n])).split("(")[0].split(".")[-2:])
                            for n in self.trail]
        for i, text in enumerate(labels):
            b = QPushButton(text)
            b.setFlat(True)
            b.setEnabled(i < len(labels) - 1)
            b.clicked.connect(lambda _c=False, d=i: self.back_to(d))
            self.crumbs.addWidget(b)
        self.crumbs.addStretch(1)
        lay = self.canvas.layout_
        self.status.setText(f"{format_weight(self.state.weight, lay.total)} {self.state.weight} in "
                            f"{len(lay.tree):,} contexts" if lay is not None else "")

    def _hovered(self, node: int) -> None:
        if node >= 0:
            self.status.setText(self.canvas.describe(node).replace("\n", " · "))

    def _flip(self, on: bool) -> None:
        self.canvas.flipped = on
        self.canvas.update()
