"""The start page: what ran, how much it did, its threads, its hottest methods and what went wrong.

Rendered as rich text in a QTextBrowser; links go to a thread (its first call) or a method (the
method view), through the shared :class:`Selection`.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from jbgui.model import layout
from jbgui.ui import colors
from jbgui.ui.format import format_count, format_duration
from jbgui.ui.loading import LoadedTrace
from jbgui.ui.selection import CallRef, Selection

class SummaryView(QWidget):
    """The run's summary page."""

    def __init__(self, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.selection = selection
        self.loaded: LoadedTrace | None = None
        self.data: dict | None = None
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._link)
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.addWidget(self.browser)
        self.show_welcome()

    def show_welcome(self) -> None:
        self.browser.setHtml(
            "<h2>jbgui</h2><p>A trace explorer for Java programs, basic block by basic block.</p>"
            "<ul><li><b>Run → Run traced…</b> (Ctrl+R) runs a program under the recorder and opens its "
            "trace when it ends;</li><li><b>File → Open trace…</b> (Ctrl+O) opens a trace directory "
            "(or drop one on the window, or start <code>jbgui TRACE_DIR</code>).</li></ul>")

    def set_trace(self, loaded: LoadedTrace | None) -> None:
        self.loaded = loaded
        if loaded is None:
            self.data = None
            self.show_welcome()
            return
        self.data = loaded.summary
        self.browser.setHtml(self._html(loaded, self.data))

    # ------------------------------------------------------------------ rendering

    def _html(self, loaded: LoadedTrace, d: dict) -> str:
        a = loaded.analysis
        meta = d["metadata"]
        launch = d["launch"]
        counts = meta.get("counts", {})
        jvm = meta.get("jvm", {})
        e = html.escape
        command = " ".join(launch.get("command", [])) or jvm.get("command", "")
        if len(command) > 400:
            command = command[:400] + f" … ({len(command) - 400:,} more characters)"
        status = meta.get("status", "?")
        status_text = "complete" if status == "complete" else \
            f"<span style='color:{colors.pick(colors.ERROR_TEXT)}'><b>cut off</b> (the JVM was killed or crashed; the trace ends where it stopped)</span>"
        wall = launch.get("wall_seconds")
        exit_code = launch.get("exit_code")
        total_calls = sum(t["calls"] for t in d["threads"])
        total_exc = sum(t["exceptions"] for t in d["threads"])
        total_native = sum(t["native_calls"] for t in d["threads"])
        parts = [f"<h2>{e(loaded.path.name)}</h2>",
                 "<table cellspacing='0' cellpadding='2'>",
                 _kv("program", f"<code>{e(command)}</code>" if command else "?"),
                 _kv("JVM", e(f"{jvm.get('vm_name', '?')} {jvm.get('java_version', '')}")),
                 _kv("trace", status_text + (f", exit status {exit_code}" if exit_code is not None else "")
                     + (f", {wall:.2f} s wall" if isinstance(wall, (int, float)) else "")),
                 _kv("recorded", e(_options_text(meta))),
                 "</table>",
                 "<h3>Counts</h3><table cellspacing='0' cellpadding='2'>",
                 _kv("threads", format_count(len(a.threads))),
                 _kv("classes", f"{format_count(counts.get('classes', 0))} "
                                f"({format_count(counts.get('classes_instrumented', 0))} instrumented)"),
                 _kv("methods", format_count(counts.get("methods", 0))),
                 _kv("events", format_count(sum(t.events for t in a.threads))),
                 _kv("calls", format_count(total_calls)),
                 _kv("basic blocks run", format_count(int(a.block_counts.sum()))),
                 _kv("bytecodes run", format_count(d["run_metrics"]["bytecodes"])),
                 _kv("exceptions", format_count(total_exc)),
                 _kv("native calls", format_count(total_native)),
                 "</table>"]
        parts.append("<h3>Threads</h3><table cellspacing='0' cellpadding='3' border='0'>"
                     "<tr><th align='left'>thread</th><th align='right'>events</th><th align='right'>calls</th>"
                     "<th align='right'>bytecodes</th><th align='right'>depth</th>"
                     "<th align='right'>exceptions</th><th align='right'>uncaught</th>"
                     "<th align='right'>native calls</th><th align='right'>time</th></tr>")
        for t in d["threads"]:
            thread = a.thread(t["index"])
            span = ""
            if len(thread.clock) >= 2:
                span = format_duration(float(thread.clock[-1, 1] - thread.clock[0, 1]))
            # Two threads may share a name: the index tells them apart.
            label = f"{e(t['name'])} <small>#{t['index']}</small>"
            name = f"<a href='thread:{t['index']}'>{label}</a>" if t["calls"] else label
            uncaught = f"<b style='color:{colors.pick(colors.ERROR_TEXT)}'>{t['uncaught']}</b>" if t["uncaught"] else "0"
            # nowrap: a narrow pane must not break a number in two
            num = f"<td align='right' {NOWRAP}>"
            parts.append(
                f"<tr><td>{name}</td>{num}{format_count(t['events'])}</td>"
                f"{num}{format_count(t['calls'])}</td>"
                f"{num}{format_count(t['metrics']['bytecodes'])}</td>"
                f"{num}{t['max_depth']}</td>{num}{t['exceptions']}</td>"
                f"{num}{uncaught}</td>"
                f"{num}{format_count(t['native_calls'])}</td>{num}{span}</td></tr>")
        parts.append("</table>")
        parts.append("<h3>Hottest methods (bytecodes executed in the method itself)</h3>"
                     "<table cellspacing='0' cellpadding='3'><tr><th align='right'>bytecodes</th>"
                     "<th align='right'>share</th><th align='right'>calls</th><th align='left'>method</th></tr>")
        total_bc = max(d["run_metrics"]["bytecodes"], 1)
        for h in d["hottest"]:
            parts.append(f"<tr><td align='right' {NOWRAP}>{format_count(h['bytecodes'])}</td>"
                         f"<td align='right' {NOWRAP}>{100 * h['bytecodes'] / total_bc:.1f}%</td>"
                         f"<td align='right' {NOWRAP}>{format_count(h['calls'])}</td>"
                         f"<td><a href='method:{h['method']}'>{e(h['name'])}</a></td></tr>")
        parts.append("</table>")
        parts.append("<h3>Dynamic metrics (whole run)</h3><table cellspacing='0' cellpadding='2'>")
        names = list(layout.METRIC_NAMES)
        half = (len(names) + 1) // 2
        for left, right in zip(names[:half], names[half:] + [""]):
            cells = f"<td>{left.replace('_', ' ')}</td><td align='right' {NOWRAP}>{format_count(d['run_metrics'][left])}</td>"
            if right:
                cells += f"<td width='30'></td><td>{right.replace('_', ' ')}</td>" \
                         f"<td align='right' {NOWRAP}>{format_count(d['run_metrics'][right])}</td>"
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</table>")
        if d["polymorphic"]:
            parts.append("<h3>Polymorphic call sites</h3><table cellspacing='0' cellpadding='2'>")
            for s in d["polymorphic"]:
                kinds = ", ".join(f"{e(r['class'])} ({format_count(r['calls'])})" for r in s["receivers"][:4])
                parts.append(f"<tr><td align='right' {NOWRAP}>{format_count(s['calls'])} calls</td><td>"
                             f"{e(s['target'])} in {e(s['caller'].split('(')[0])}: {s['receiver_types']} types: "
                             f"{kinds}</td></tr>")
            parts.append("</table>")
        if d["problems"]:
            parts.append("<h3>Problems</h3><ul>" + "".join(f"<li>{e(p)}</li>" for p in d["problems"][:50]) + "</ul>")
        return "".join(parts)

    def _link(self, url: QUrl) -> None:
        text = url.toString()
        kind, _, value = text.partition(":")
        if kind == "method" and value.isdigit():
            self.selection.select_method(int(value), self)
        elif kind == "thread" and value.isdigit():
            self.selection.select_call(CallRef(int(value), 0), self)


# Qt's rich text knows CSS white-space (not the nowrap attribute): a narrow pane must not break a
# number in two.
NOWRAP = "style='white-space:nowrap'"


def _kv(key: str, value: str) -> str:
    return f"<tr><td style='padding-right:12px'><b>{key}</b></td><td {NOWRAP}>{value}</td></tr>"


def _options_text(meta: dict) -> str:
    options = meta.get("agent", {}).get("options", {})
    if not options:
        return "?"
    parts = [f"level {options.get('level', '?')}", f"blocks {options.get('bba', '?')}",
             f"mode {options.get('mode', '?')}", "JDK classes " + ("traced" if options.get("jdk", True) else "not traced")]
    if options.get("include"):
        parts.append("include " + ", ".join(options["include"]))
    if options.get("exclude"):
        parts.append("exclude " + ", ".join(options["exclude"]))
    return ", ".join(parts)
