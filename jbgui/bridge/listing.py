"""A method's bytecode by basic block, described by the recorder's own ClassInstrumenter (with
instruction listings on), so that block indices, offsets, lines and instruction text are exactly
those a trace recorded with ``instructions=on`` carries."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import jpype
from lxml import etree

from jbgui.bridge.errors import BridgeError
from jbgui.bridge.jvm import ensure_jvm
from jbgui.bridge.sources import ClassSource, class_source_for_trace


@dataclass
class BlockListing:
    index: int
    start: int
    end: int
    lines: list[int]
    instructions: str


@dataclass
class MethodListing:
    class_name: str          # internal form
    name: str
    desc: str
    blocks: list[BlockListing] = field(default_factory=list)


_CACHE: dict[tuple[str, str, bool], dict[tuple[str, str], MethodListing]] = {}
_LOCK = threading.Lock()


def describe_class(data: bytes, name: str, precise: bool) -> str:
    """The static.xml ``<class>`` element the recorder would write for these class bytes."""
    ensure_jvm()
    try:
        instrumenter = jpype.JClass("jbgui.instr.ClassInstrumenter")(True, precise, True, True, True, True)
        Plan = jpype.JClass("jbgui.instr.ClassPlan")
        plan = Plan(-1, name, 0, "bridge", None, False, False, Plan.Mode.TRACE, None)
        ids = jpype.JClass("jbgui.instr.MethodIds")(True)
        result = instrumenter.instrument(jpype.JArray(jpype.JByte)(data), plan, ids)
        return str(result.xml.toString())
    except jpype.JException as error:
        raise BridgeError(f"cannot analyse class {name.replace('/', '.')}: {error}") from error


def method_listings(data: bytes, name: str, precise: bool) -> dict[tuple[str, str], MethodListing]:
    """Every method of a class file, by (name, descriptor)."""
    xml = describe_class(data, name, precise)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(f"<static_information>{xml}</static_information>".encode(), parser)
    except etree.XMLSyntaxError as error:
        raise BridgeError(f"the description of {name} does not parse: {error}") from error
    out: dict[tuple[str, str], MethodListing] = {}
    for m in root.iter("method"):
        listing = MethodListing(name, m.get("name"), m.get("desc"))
        for b in m.iterfind("basic_block"):
            lines = [int(x) for x in (b.get("lines") or "").split()]
            listing.blocks.append(BlockListing(int(b.get("index")), int(b.get("start", "-1")), int(b.get("end", "-1")),
                                               lines, b.findtext("instructions") or ""))
        out[(listing.name, listing.desc)] = listing
    return out


def class_listings(source: ClassSource, name: str, precise: bool) -> dict[tuple[str, str], MethodListing]:
    key = (str(id(source)), name, precise)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is None:
        cached = method_listings(source.read(name), name, precise)
        with _LOCK:
            _CACHE[key] = cached
    return cached


def listing_for_trace(trace_dir: str | Path, class_name: str, method: str, desc: str,
                      precise: bool = False) -> dict[int, str]:
    """Block index → instruction lines of one method of a traced run's classes."""
    source = class_source_for_trace(trace_dir)
    listings = class_listings(source, class_name, precise)
    found = listings.get((method, desc))
    if found is None:
        raise BridgeError(f"{class_name.replace('/', '.')} has no method {method}{desc} in the class file found "
                          f"({source.describe()}): was the class changed since the run?")
    return {b.index: b.instructions for b in found.blocks}
