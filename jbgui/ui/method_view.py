"""The method view: a method's bytecode grouped by basic block, each block with how often it ran
(the whole run, or the selected call), heat shading, its metrics, its call sites (callee resolved,
with counts and receiver types), its exception handlers and successors, and its source lines.

Rendered as rich text in a QTextBrowser. Links: a call site goes to the callee (the matching call
below the selected call when there is one, else the callee method), a handler or successor to its
block. A click on a block (its #N or anywhere in it) selects it (:meth:`Selection.select_block`,
so the CFG outlines it); a block selected elsewhere gets an orange bar here and is scrolled to.
Counts for a selected call and listings fetched through the JVM bridge are computed by
:class:`Task` off the GUI thread.
"""

from __future__ import annotations

import bisect
import html
import math

import numpy as np
from shiboken6 import isValid
from PySide6.QtCore import QEvent, Qt, QUrl
from PySide6.QtWidgets import (
    QButtonGroup, QHBoxLayout, QLabel, QRadioButton, QSizePolicy, QTextBrowser, QVBoxLayout, QWidget,
)

from jbgui.model.analysis import Flag
from jbgui.model.call_blocks import call_block_counts
from jbgui.model.method_info import MethodInfo, method_info
from jbgui.model.sources import SourceLocator
from jbgui.ui import colors
from jbgui.model import call_queries as Q
from jbgui.ui.format import format_count, format_duration
from jbgui.ui.listings import fetch_listing
from jbgui.ui.loading import LoadedTrace
from jbgui.ui.selection import CallRef, Selection
from jbgui.ui.tasks import Task

MAX_SOURCE_LINES_PER_BLOCK = 6


class MethodView(QWidget):
    """Blocks of the current method."""

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.loaded: LoadedTrace | None = None
        self.info: MethodInfo | None = None
        self.call: CallRef | None = None
        self.call_counts: dict[int, int] | None = None
        self.listing: dict[int, str] | None = None
        self.listing_note = ""
        self.sources: SourceLocator | None = None
        self._tasks: list[Task] = []
        self.header = QLabel("Select a call or a method")
        self.header.setWordWrap(True)
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.whole = QRadioButton("whole run")
        self.this_call = QRadioButton("selected call")
        self.whole.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.whole)
        group.addButton(self.this_call)
        self.whole.toggled.connect(lambda _on: self.render())
        counts_row = QHBoxLayout()
        counts_row.addWidget(QLabel("Counts:"))
        counts_row.addWidget(self.whole)
        counts_row.addWidget(self.this_call)
        counts_row.addStretch(1)
        self.status = QLabel("")
        counts_row.addWidget(self.status)
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._link)
        # A click anywhere in a block (not only on a link) selects it, so the CFG outlines it too.
        self.browser.viewport().installEventFilter(self)
        self.selected_block = -1
        self._block_starts: list[tuple[int, int]] = []   # (document position, block index), sorted
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addLayout(counts_row)
        layout.addWidget(self.browser, 1)
        selection.callSelected.connect(self._on_call)
        selection.methodSelected.connect(self._on_method)
        if hasattr(selection, "blockSelected"):
            selection.blockSelected.connect(self._on_block)
        self._set_call_mode_enabled(False)

    # ------------------------------------------------------------------ content

    def set_trace(self, loaded: LoadedTrace | None) -> None:
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        self.loaded = loaded
        self.info = None
        self.call = None
        self._set_call_mode_enabled(False)
        self.sources = SourceLocator(loaded.analysis.trace) if loaded is not None else None
        self.header.setText("Select a call or a method" if loaded else "No trace open")
        self.browser.clear()

    def show_method(self, method: int, call: CallRef | None = None) -> None:
        if self.loaded is None:
            return
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        analysis = self.loaded.analysis
        try:
            self.info = method_info(analysis, method)
        except KeyError:
            self.info = None
            self.header.setText(f"No static information for method id {method}")
            self.browser.clear()
            return
        if self.info.method != getattr(self, "_shown_method", None):
            self.selected_block = -1
            self._shown_method = self.info.method
        self.call = call
        self.call_counts = None
        self.listing = None
        self.listing_note = ""
        self._set_call_mode_enabled(call is not None)
        if call is not None:
            self.this_call.setChecked(True)
            self._start(_count_blocks, analysis, analysis.thread(call.thread), call.row,
                        done=self._call_counts_ready, what="counting this call's blocks")
        else:
            self.whole.setChecked(True)
        if self.info.blocks and not any(b.instructions for b in self.info.blocks):
            self.listing_note = "fetching the bytecode from the class files …"
            self._start(_fetch_listing, analysis, method,
                        done=self._listing_ready, failed=self._listing_failed, what="reading class files")
        self.render()

    def _start(self, fn, *args, done, failed=None, what: str) -> None:
        task = Task(fn, *args, name="method")
        info = self.info
        # A task may end after the view was closed (a window closed while a listing loads): its
        # result is then dropped, never handed to deleted widgets.
        current = lambda i: isValid(self) and self.info is i  # noqa: E731
        task.succeeded.connect(lambda result, i=info: done(result) if current(i) else None)
        if failed is not None:
            task.failed.connect(lambda message, i=info: failed(message) if current(i) else None)
        else:
            task.failed.connect(lambda message: self.status.setText(message) if isValid(self) else None)
        task.done.connect(lambda t=task: self._tasks.remove(t) if isValid(self) and t in self._tasks else None)
        self._tasks.append(task)
        self.status.setText(what + " …")
        task.start()

    def _call_counts_ready(self, counts: dict[int, int]) -> None:
        self.call_counts = counts
        self.status.setText("")
        self.render()

    def _listing_ready(self, listing: dict[int, str] | None) -> None:
        self.listing = listing or {}
        self.listing_note = "" if listing else "no bytecode listing: the class file was not found"
        self.status.setText("")
        self.render()

    def _listing_failed(self, message: str) -> None:
        self.listing = {}
        self.listing_note = f"no bytecode listing: {message}"
        self.status.setText("")
        self.render()

    def _set_call_mode_enabled(self, enabled: bool) -> None:
        self.this_call.setEnabled(enabled)
        if not enabled:
            self.whole.setChecked(True)

    # ------------------------------------------------------------------ rendering

    def current_counts(self) -> dict[int, int]:
        """Block executions shown: gb → count."""
        if self.info is None:
            return {}
        if self.this_call.isChecked() and self.call is not None:
            return self.call_counts or {}
        return {b.gb: b.count for b in self.info.blocks}

    def render(self) -> None:
        info = self.info
        if info is None or self.loaded is None:
            return
        e = html.escape
        analysis = self.loaded.analysis
        per_call = self.this_call.isChecked() and self.call is not None
        counts = self.current_counts()
        total_runs = sum(counts.values())
        hottest = max(counts.values(), default=0)
        head = [f"<b>{e(info.class_name)}.{e(info.name)}</b><code>{e(info.desc)}</code>"]
        details = [f"{len(info.blocks)} block{'s' if len(info.blocks) != 1 else ''}",
                   "1 call in the run" if info.calls == 1 else f"{format_count(info.calls)} calls in the run"]
        if info.source_file:
            details.append(e(info.source_file))
        details.extend(info.flags)
        if self.call is not None:
            thread = analysis.thread(self.call.thread)
            calls = thread.calls
            row = self.call.row
            text = f"selected call: thread {e(thread.name)}, depth {int(calls.depth[row])}, " \
                   f"{format_count(int(Q.exclusive_bytecodes(thread, [row])[0]))} own bytecodes"
            if self.loaded.timeline.has_clock:
                start, end = self.loaded.timeline.thread_timeline(thread.index).span(row)
                text += f", {format_duration(end - start)}"
            flags = int(calls.flags[row])
            exc = int(calls.exc_class[row])
            if exc and flags & (Flag.EXCEPTIONAL | Flag.UNCAUGHT):
                word = "uncaught" if flags & Flag.UNCAUGHT else "left by"
                text += f", <b style='color:{colors.pick(colors.ERROR_TEXT)}'>{word} " \
                        f"{e(analysis.statics.class_name_of_id(exc))}</b>"
            details.append(text)
        self.header.setText(" ".join(head) + "<br>" + " · ".join(details))
        if not info.blocks:
            kind = "a native method" if "native" in info.flags else "abstract" if "abstract" in info.flags else \
                "not instrumented: no blocks were recorded"
            self.browser.setHtml(f"<p>This method is {e(kind)}.</p>")
            return
        source = self.sources.lines(info.class_name.replace(".", "/"), info.source_file) if self.sources else None
        dark = colors.is_dark()
        muted = colors.pick(colors.MUTED_TEXT, dark)
        self._muted = muted
        parts = []
        if self.listing_note:
            parts.append(f"<p><i>{e(self.listing_note)}</i></p>")
        scope = "this call" if per_call else "whole run"
        if per_call and self.call_counts is None:
            scope += " (counting …)"
        parts.append(f"<p>{format_count(total_runs)} block executions ({scope}).</p>")
        for b in info.blocks:
            n = counts.get(b.gb, 0)
            heat = math.log1p(n) / math.log1p(hottest) if hottest and n else 0.0
            bar = colors.heat_color(heat, dark).name() if n else colors.pick(colors.EMPTY_BAR, dark)
            tint = colors.heat_tint(heat, dark).name() if n else ""
            if b.index == self.selected_block:
                bar = colors.pick(colors.CFG_SELECTED)   # the CFG's outline colour: the same block in both views
            title = f"<a name='b{b.index}'></a><a href='block:{b.index}'><b>#{b.index}</b></a> &nbsp;<code>[{b.start}, {b.end})</code>"
            if b.lines:
                title += f" &nbsp;line{'s' if len(b.lines) > 1 else ''} {_line_ranges(b.lines)}"
            title += f" &nbsp;&nbsp;<b>×{format_count(n)}</b>"
            if per_call:
                title += f" <span style='color:{muted}'>(run ×{format_count(b.count)})</span>"
            if b.is_handler:
                title += " &nbsp;<i>handler entry</i>"
            body = [title]
            nonzero = [f"{k.replace('_', ' ')} {v}" for k, v in b.metrics.items() if v]
            if nonzero:
                body.append(f"<span style='color:{muted}'>{e(' · '.join(nonzero))}</span>")
            instructions = b.instructions or (self.listing or {}).get(b.index)
            if instructions:
                body.append(f"<pre style='margin:2px 0 2px 12px'>{e(instructions)}</pre>")
            if source and b.lines:
                shown = []
                for line in sorted(set(b.lines))[:MAX_SOURCE_LINES_PER_BLOCK]:
                    if 0 < line <= len(source):
                        shown.append(f"{line:>5}  {source[line - 1].rstrip()}")
                if shown:
                    body.append(f"<pre style='margin:2px 0 2px 12px;color:{colors.pick(colors.SOURCE_TEXT, dark)}'>{e(chr(10).join(shown))}</pre>")
            for s in b.sites:
                body.append(self._site_html(s))
            for h in b.handlers:
                target = f"<a href='block:{h.block_index}'>#{h.block_index}</a>" if h.block_index >= 0 else "?"
                body.append(f"&nbsp;&nbsp;⤷ catch <b>{e(h.type) or 'any (finally)'}</b> → block {target}")
            if b.successors and not per_call:
                succ = ", ".join(f"<a href='block:{i}'>#{i}</a> ×{format_count(c)}" for i, c in b.successors[:8])
                body.append(f"&nbsp;&nbsp;<span style='color:{muted}'>next:</span> {succ}")
            # The heat is a bar beside the block and a light tint behind it, so text stays legible.
            cell = f" bgcolor='{tint}'" if tint else ""
            parts.append(f"<table width='100%' cellspacing='0' cellpadding='3' style='margin-bottom:6px'><tr>"
                         f"<td width='7' bgcolor='{bar}'></td><td{cell}>{'<br>'.join(body)}</td></tr></table>")
        self.browser.setHtml("".join(parts))
        self._index_blocks()
        if self.selected_block >= 0:
            self.browser.scrollToAnchor(f"b{self.selected_block}")

    def _index_blocks(self) -> None:
        # Where each block's anchor landed in the document, to map a click position to its block.
        starts = []
        doc_block = self.browser.document().begin()
        while doc_block.isValid():
            it = doc_block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                for name in fragment.charFormat().anchorNames():
                    if name.startswith("b") and name[1:].isdigit():
                        starts.append((fragment.position(), int(name[1:])))
                it += 1
            doc_block = doc_block.next()
        self._block_starts = sorted(starts)

    def block_at(self, pos) -> int:
        """The index of the block drawn at viewport position ``pos``, or -1."""
        if not self._block_starts:
            return -1
        where = self.browser.cursorForPosition(pos).position()
        i = bisect.bisect_right(self._block_starts, (where, 1 << 62)) - 1
        return self._block_starts[i][1] if i >= 0 else -1

    def block_position(self, block: int):
        """A viewport point inside block ``block``'s title (scrolled into view), for tests and tours."""
        self.browser.scrollToAnchor(f"b{block}")
        for position, index in self._block_starts:
            if index == block:
                cursor = self.browser.textCursor()
                cursor.setPosition(position + 1)
                return self.browser.cursorRect(cursor).center()
        return None

    def eventFilter(self, obj, event) -> bool:
        if obj is self.browser.viewport() and event.type() == QEvent.Type.MouseButtonRelease \
                and event.button() == Qt.MouseButton.LeftButton and self.info is not None:
            pos = event.position().toPoint()
            # Links act by themselves; a plain click elsewhere in a block selects the block.
            if not self.browser.anchorAt(pos) and not self.browser.textCursor().hasSelection():
                block = self.block_at(pos)
                if block >= 0:
                    self.select_block(block)
        return super().eventFilter(obj, event)

    def select_block(self, block: int) -> None:
        """Mark ``block`` here and tell the other views (the CFG outlines it)."""
        if self.info is None:
            return
        self._mark(block)
        self.selection.select_block(self.info.method, block, self)

    def _mark(self, block: int) -> None:
        if block == self.selected_block:
            self.browser.scrollToAnchor(f"b{block}")
            return
        bar = self.browser.verticalScrollBar().value()
        self.selected_block = block
        self.render()
        self.browser.verticalScrollBar().setValue(bar)
        self.browser.scrollToAnchor(f"b{block}")

    def _on_block(self, method: int, block: int, source) -> None:
        if source is self or self.info is None or self.info.method != method:
            return
        self._mark(block)

    def _site_html(self, s) -> str:
        e = html.escape
        target = e(s.target)
        if s.target_method:
            target = f"<a href='site:{s.site}'>{target}</a>"
        kind_color = colors.SITE_KIND_TEXT.get(s.kind, "")
        kind = f"<span style='color:{kind_color}'>{e(s.kind)}</span>" if kind_color else e(s.kind)
        muted = getattr(self, "_muted", colors.MUTED_TEXT[0])
        calls = "1 call" if s.calls == 1 else f"{format_count(s.calls)} calls"
        text = f"&nbsp;&nbsp;→ {target} <span style='color:{muted}'>{s.opcode} @{s.offset}</span> {kind}, {calls}"
        if s.receivers:
            text += " · receivers " + ", ".join(f"{e(c)} ×{format_count(n)}" for c, n in s.receivers[:4])
            if len(s.receivers) > 4:
                text += f", … ({len(s.receivers)} types)"
        return text

    # ------------------------------------------------------------------ navigation

    def _on_call(self, ref, source) -> None:
        if self.loaded is None:
            return
        if ref is None:
            # Nothing selected: the method stays, counted over the whole run.
            self.call = None
            self._set_call_mode_enabled(False)
            self.render()
            return
        thread = self.loaded.analysis.thread(ref.thread)
        method = int(thread.calls.method[ref.row])
        if method:
            self.show_method(method, ref)
        else:
            site = int(thread.calls.call_site[ref.row])
            st = self.loaded.analysis.statics
            target = int(st.s_target[site]) if site >= 0 else 0
            if target:
                self.show_method(target, None)

    def _on_method(self, method: int, source) -> None:
        self.show_method(method, None)

    def _link(self, url: QUrl) -> None:
        kind, _, value = url.toString().partition(":")
        if kind == "block" and value.isdigit():
            self.select_block(int(value))
        elif kind == "site" and self.loaded is not None and self.info is not None:
            site = int(value)
            st = self.loaded.analysis.statics
            if self.call is not None:
                thread = self.loaded.analysis.thread(self.call.thread)
                child = _first_child_from_site(thread, self.call.row, site)
                if child >= 0:
                    self.selection.select_call(CallRef(self.call.thread, child), self)
                    return
            target = int(st.s_target[site])
            if target:
                self.selection.select_method(target, self)


def _first_child_from_site(thread, row: int, site: int) -> int:
    """The first call ``row`` made from call site ``site`` (-1 if none), children read in batches."""
    start, stop = -1, int(thread.calls.end[row])
    while True:
        rows, start = Q.children_batch(thread.calls, row, start, 4096)
        if not len(rows):
            return -1
        hits = np.flatnonzero(np.asarray(thread.calls.call_site)[rows] == site)
        if len(hits):
            return int(rows[hits[0]])
        if start >= stop:
            return -1


def _count_blocks(progress, cancelled, analysis, thread, row) -> dict[int, int]:
    return call_block_counts(analysis, thread, row, progress, cancelled)


def _fetch_listing(_progress, _cancelled, analysis, method) -> dict[int, str] | None:
    return fetch_listing(analysis, method)


def _line_ranges(lines: list[int]) -> str:
    """``12–14, 20``."""
    values = sorted(set(lines))
    out = []
    start = prev = values[0]
    for v in values[1:] + [None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        out.append(f"{start}–{prev}" if prev != start else str(start))
        if v is not None:
            start = prev = v
    return ", ".join(out)
