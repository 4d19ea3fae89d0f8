"""The bridge object: the process's one JVM for static work, and the listings it has computed.

Everything here may be called from any thread except that the first call starts the JVM (about
half a second), so the GUI calls it from a worker thread, never from the GUI thread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

import jpype

from jbgui.bridge.errors import BridgeError
from jbgui.bridge.jvm import STATIC_LISTING, ensure_jvm, jvm_java_home
from jbgui.bridge.listing import ClassListing, MethodListing, parse_class
from jbgui.bridge.sources import ClassSource, class_source_for_trace
from jbgui.model.errors import TraceError
from jbgui.model.tracedir import TraceDir


class Bridge:
    """Listings of class files by basic block, numbered as the recorder numbers blocks.

    Listings are cached per (class source, class, block analysis), the ``cache_size`` classes
    used last; class sources of traces are cached per trace directory. Thread-safe; the JVM starts
    on first use. Use the process's one instance, :func:`get_bridge`.
    """

    def __init__(self, cache_size: int = 256):
        self.cache_size = cache_size
        self._listings: OrderedDict[tuple, ClassListing] = OrderedDict()
        self._trace_sources: dict[Path, tuple[float, ClassSource]] = {}
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the JVM now rather than on first use (idempotent)."""
        ensure_jvm()

    @property
    def java_home(self) -> Path:
        """The JDK the bridge's JVM runs on."""
        return jvm_java_home()

    def describe(self, data: bytes, precise: bool = False, method: tuple[str, str] | None = None,
                 what: str = "a class file") -> ClassListing:
        """The listing of class bytes (not cached). ``method`` = (name, descriptor) describes that
        method alone (the result then has it, or no method when the class has none such);
        ``what`` names the class in error messages."""
        if data[:4] != b"\xca\xfe\xba\xbe":
            raise BridgeError(f"cannot analyse {what}: it is not a class file (no 0xCAFEBABE at its start)")
        ensure_jvm()
        try:
            listing = jpype.JClass(STATIC_LISTING)
            array = jpype.JArray(jpype.JByte)(data)
            if method is None:
                xml = listing.describe(array, precise)
            else:
                xml = listing.describe(array, precise, method[0], method[1])
        except jpype.JException as error:
            # ASM's own exceptions say little beyond their type (an index out of bounds in a cut
            # class file): name it, and the message when there is one.
            detail = error.getMessage()
            raise BridgeError(f"cannot analyse {what}: {error.getClass().getName()}"
                              + (f": {detail}" if detail is not None else "")) from error
        return parse_class(str(xml), precise)

    def class_listing(self, source: ClassSource, class_name: str, precise: bool = False) -> ClassListing:
        """Every method of a class found in ``source`` (cached). BridgeError when the class is
        not there or its class file cannot be read."""
        internal = class_name.replace(".", "/")
        key = (source.key, internal, precise)
        with self._lock:
            cached = self._listings.get(key)
            if cached is not None:
                self._listings.move_to_end(key)
                return cached
        data, where = source.find(internal)
        listing = self.describe(data, precise, what=f"class {internal.replace('/', '.')} ({where})")
        with self._lock:
            # Another thread may have listed it meanwhile: keep one, so callers share it.
            listing = self._listings.setdefault(key, listing)
            self._listings.move_to_end(key)
            while len(self._listings) > self.cache_size:
                self._listings.popitem(last=False)
        return listing

    def method_listing(self, source: ClassSource, class_name: str, name: str, desc: str,
                       precise: bool = False) -> MethodListing:
        """One method of a class found in ``source``; BridgeError when the class or the method
        is not there."""
        listing = self.class_listing(source, class_name, precise)
        found = listing.methods.get((name, desc))
        if found is None:
            raise BridgeError(f"{listing.name.replace('/', '.')} has no method {name}{desc} in the class file "
                              f"found in {source.describe()}: was the class changed since?")
        return found

    def source_for_trace(self, trace_dir: str | Path) -> ClassSource:
        """The class path and JDK of a traced run (:func:`class_source_for_trace`), cached per
        trace directory while its trace.json is unchanged."""
        path = Path(trace_dir).resolve()
        try:
            stamp = (path / "trace.json").stat().st_mtime
        except OSError:
            stamp = -1.0
        with self._lock:
            cached = self._trace_sources.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        source = class_source_for_trace(path)
        with self._lock:
            self._trace_sources[path] = (stamp, source)
        return source

    def trace_method_listing(self, trace_dir: str | Path, class_name: str, name: str, desc: str,
                             precise: bool | None = None) -> MethodListing:
        """One method of a traced run's classes, with the trace's own block analysis unless
        ``precise`` says otherwise (trace.json's ``agent.options.bba``)."""
        if precise is None:
            precise = trace_is_precise(trace_dir)
        return self.method_listing(self.source_for_trace(trace_dir), class_name, name, desc, precise)

    def clear_cache(self) -> None:
        """Forget every listing and trace source (class files changed on disk)."""
        with self._lock:
            self._listings.clear()
            self._trace_sources.clear()


def trace_is_precise(trace_dir: str | Path) -> bool:
    """Whether a trace was recorded with ``bba=precise``."""
    try:
        options = TraceDir(trace_dir).metadata.get("agent", {}).get("options", {})
    except TraceError as error:
        raise BridgeError(str(error)) from error
    return isinstance(options, dict) and options.get("bba") == "precise"


_BRIDGE: Bridge | None = None
_BRIDGE_LOCK = threading.Lock()


def get_bridge() -> Bridge:
    """The process's bridge (created on first call; its JVM starts on first use)."""
    global _BRIDGE
    with _BRIDGE_LOCK:
        if _BRIDGE is None:
            _BRIDGE = Bridge()
        return _BRIDGE


def listing_for_trace(trace_dir: str | Path, class_name: str, method: str, desc: str,
                      precise: bool = False) -> dict[int, str]:
    """Block index → the block's instruction lines as static.xml holds them, for one method of a
    traced run's classes (what the method view shows when a trace carries no listing)."""
    found = get_bridge().method_listing(get_bridge().source_for_trace(trace_dir), class_name, method, desc, precise)
    return {block.index: block.text for block in found.blocks}
