"""Layered layout of a control-flow graph by Graphviz's ``dot`` (Debian package ``graphviz``):
node boxes and edge splines in points, y downwards, for any renderer to draw.

``dot -Tplain`` is read: ``node NAME X Y W H …`` and ``edge TAIL HEAD N X1 Y1 … XN YN [LABEL XL YL]
…`` in inches with y upwards; the spline's points are a chain of cubic Bézier segments."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass

from jbgui.model.cfg import Cfg, to_dot
from jbgui.model.errors import TraceError

POINTS = 72.0


@dataclass
class NodeBox:
    block: int
    x: float        # centre
    y: float
    width: float
    height: float


@dataclass
class EdgeCurve:
    src: int
    dst: int
    points: list[tuple[float, float]]   # start, then (control, control, end) triples
    label: tuple[float, float] | None


@dataclass
class Layout:
    width: float
    height: float
    nodes: dict[int, NodeBox]
    edges: list[EdgeCurve]


def dot_available() -> bool:
    return shutil.which("dot") is not None


def layout(cfg: Cfg, timeout: float = 30.0) -> Layout:
    """Positions for every block and edge of ``cfg`` (raises :class:`TraceError` without dot)."""
    exe = shutil.which("dot")
    if exe is None:
        raise TraceError("Graphviz's dot is not installed (Debian package graphviz): no graph layout")
    result = subprocess.run([exe, "-Tplain"], input=to_dot(cfg), capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise TraceError(f"dot failed: {result.stderr.strip()[:200]}")
    return parse_plain(result.stdout)


def parse_plain(text: str) -> Layout:
    """``dot -Tplain`` output as a :class:`Layout` (points, y downwards)."""
    height = width = 0.0
    nodes: dict[int, NodeBox] = {}
    edges: list[EdgeCurve] = []
    for line in text.splitlines():
        parts = shlex.split(line)
        if not parts:
            continue
        if parts[0] == "graph":
            width, height = float(parts[2]) * POINTS, float(parts[3]) * POINTS
        elif parts[0] == "node":
            block = int(parts[1][1:])
            nodes[block] = NodeBox(block, float(parts[2]) * POINTS, height - float(parts[3]) * POINTS,
                                   float(parts[4]) * POINTS, float(parts[5]) * POINTS)
        elif parts[0] == "edge":
            n = int(parts[3])
            coords = [float(v) * POINTS for v in parts[4:4 + 2 * n]]
            points = [(coords[2 * i], height - coords[2 * i + 1]) for i in range(n)]
            rest = parts[4 + 2 * n:]
            label = None
            if len(rest) >= 5:   # label, x, y, style, color
                label = (float(rest[1]) * POINTS, height - float(rest[2]) * POINTS)
            edges.append(EdgeCurve(int(parts[1][1:]), int(parts[2][1:]), points, label))
    return Layout(width, height, nodes, edges)
