"""The JVM inside the explorer, for static work only: reading class files (the program's, and the
JDK's from its runtime image, which only Java reads well) and listing a method's bytecode by basic
block with the recorder's own code, so the numbering is the recorder's by construction.

This is the only package of jbgui that imports JPype (checked by import-linter). The JVM starts on
first use, once per process (a JPype limit), on a worker thread; the traced program never runs in
it.
"""

from jbgui.bridge.errors import BridgeError
from jbgui.bridge.listing import BlockListing, MethodListing, listing_for_trace, method_listings
from jbgui.bridge.sources import ClassSource, class_source_for_trace

__all__ = ["BridgeError", "BlockListing", "ClassSource", "MethodListing", "class_source_for_trace",
           "listing_for_trace", "method_listings"]
