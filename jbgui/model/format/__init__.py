"""The trace format's readers: one module per file of a trace directory (docs/trace-format.md).

Each reader validates types, ranges and cross-references once and names file and offset (or line)
in what it reports; everything else in jbgui consumes these readers and never parses a file of
the format itself. Files are opened through :mod:`jbgui.model.format.files`, which refuses what is
not a regular file inside the trace directory.
"""
