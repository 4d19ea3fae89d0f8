"""Bytecode listings for the method view when the trace has none (recorded without
``instructions=on``): read from the program's class files and the JDK's runtime image through the
JVM bridge (:mod:`jbgui.bridge`), numbered the way the recorder numbers blocks.

Called on a worker thread (the bridge starts a JVM on first use)."""

from __future__ import annotations

from jbgui.model.analysis import Analysis


def fetch_listing(analysis: Analysis, method: int) -> dict[int, str] | None:
    """Block index → instruction lines of ``method``, or None when its class file is not found."""
    from jbgui.bridge import BridgeError, listing_for_trace

    st = analysis.statics
    cls = st.class_of_method(method)
    options = analysis.trace.metadata.get("agent", {}).get("options", {})
    precise = options.get("bba") == "precise"
    try:
        return listing_for_trace(analysis.trace.path, cls, st.m_name[method], st.m_desc[method], precise)
    except BridgeError:
        raise
