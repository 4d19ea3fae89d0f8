"""The JVM inside the explorer, for static work only: reading class files (the program's, and the
JDK's from its runtime image, which only Java reads well) and listing a method's bytecode by basic
block with the recorder's own code (``jbgui.instr.StaticListing``), so the numbering, offsets,
lines and instruction text are the recorder's by construction.

This is the only package of jbgui that imports JPype (checked by import-linter). The JVM starts on
first use, once per process (a JPype limit); start it from a worker thread, never the GUI's. The
traced program never runs in it. Typical use::

    bridge = get_bridge()
    listing = bridge.trace_method_listing(trace_dir, "pkg/Cls", "run", "()V")
    for block in listing.blocks:
        print(block.index, block.start, block.end, block.text)

Every failure is a :class:`BridgeError` whose message names the class and where it was looked for.
"""

from jbgui.bridge.bridge import Bridge, get_bridge, listing_for_trace, trace_is_precise
from jbgui.bridge.errors import BridgeError
from jbgui.bridge.listing import BlockListing, CallSite, ClassListing, ExceptionHandler, MethodListing
from jbgui.bridge.sources import ClassSource, class_source_for_trace, classpath_from_command

__all__ = [
    "BlockListing", "Bridge", "BridgeError", "CallSite", "ClassListing", "ClassSource", "ExceptionHandler",
    "MethodListing", "class_source_for_trace", "classpath_from_command", "get_bridge", "listing_for_trace",
    "trace_is_precise",
]
