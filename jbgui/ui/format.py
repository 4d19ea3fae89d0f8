"""Numbers, durations and calls as people read them (shared by the views and tooltips)."""

from __future__ import annotations

import html

import numpy as np

from jbgui.model import call_queries as Q
from jbgui.model import time_quality as TQ
from jbgui.model.analysis import Analysis, Flag
from jbgui.model.timeline import TimelineModel
from jbgui.ui.selection import CallRef

FLAG_WORDS = (
    (Flag.UNCAUGHT, "uncaught exception"), (Flag.EXCEPTIONAL, "left by an exception"),
    (Flag.CAUGHT, "caught an exception"), (Flag.NATIVE, "native call"), (Flag.UNTRACED, "untraced call"),
    (Flag.IMPLICIT, "implicit (no call site)"), (Flag.CALLBACK, "called back from native code"),
    (Flag.TRUNCATED, "truncated"), (Flag.INFERRED, "exit inferred"),
)


def format_duration(ns: float) -> str:
    """``1.25 s``, ``830 µs``, ``12 ns``."""
    ns = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            value = ns / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{ns:.0f} ns"


def format_count(n: int | float) -> str:
    """``12,345``; ``1.2 M`` above ten million."""
    n = float(n)
    if abs(n) >= 1e10:
        return f"{n / 1e9:.1f} G"
    if abs(n) >= 1e7:
        return f"{n / 1e6:.1f} M"
    return f"{int(n):,}"


def format_bytes(n: int | float) -> str:
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def flag_words(flags: int) -> list[str]:
    return [word for bit, word in FLAG_WORDS if flags & bit]


def split_name(qualified: str) -> tuple[str, str, str]:
    """``pkg.Cls.name(desc)`` → (``pkg.Cls``, ``name``, ``(desc)``)."""
    head, paren, desc = qualified.partition("(")
    cls, _, name = head.rpartition(".")
    return cls, name, paren + desc


def describe_call(analysis: Analysis, ref: CallRef, timeline: TimelineModel | None = None) -> str:
    """A tooltip for one call (rich text)."""
    thread = analysis.thread(ref.thread)
    calls = thread.calls
    row = ref.row
    name = analysis.call_name(thread, row)
    flags = int(calls.flags[row])
    incl = int(calls.incl_bytecodes[row])
    excl = int(Q.exclusive_bytecodes(thread, [row])[0])
    lines = [f"<b>{html.escape(name)}</b>",
             f"thread {html.escape(thread.name)}, depth {int(calls.depth[row])}",
             f"bytecodes {format_count(incl)} (own {format_count(excl)}), blocks {format_count(int(calls.incl_blocks[row]))}",
             f"events {int(calls.first[row]):,} … {int(calls.last[row]):,}"]
    if timeline is not None and timeline.has_clock:
        start, end = timeline.thread_timeline(ref.thread).span(row)
        if TQ.interpolated(thread, np.array([row]))[0]:
            lines.append(f"duration ≈ {format_duration(end - start)} <i>(interpolated: the thread paused near this "
                         "call between two clock samples; events are exact)</i>")
        else:
            lines.append(f"duration {format_duration(end - start)}")
    below = int(calls.end[row]) - row - 1
    if below:
        lines.append(f"{format_count(below)} calls below")
    words = flag_words(flags)
    if words:
        lines.append("<i>" + ", ".join(words) + "</i>")
    exc = int(calls.exc_class[row])
    if flags & Flag.EXCEPTIONAL and exc:
        lines.append("exception " + html.escape(analysis.statics.class_name_of_id(exc)))
    return "<br>".join(lines)


