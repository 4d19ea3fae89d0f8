"""Blocks as comparable tuples, from a trace's static.xml (read here independently of the
bridge's own parser) and from the bridge's listings.

A block is ``(index, start, end, lines, metrics, call sites, handlers, instruction text)``, call
sites ``(call, type, itf, bootstrap, offset)`` and handlers ``(handler block index, type)``: ids
differ between a trace and the bridge, the block index they name does not.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from lxml import etree

from jbgui.bridge import MethodListing
from jbgui.model.layout import BLOCKS_PER_PAGE, METHOD_SHIFT

Blocks = list[tuple]
ClassBlocks = dict[tuple[str, str], Blocks]


class RecordedStatic:
    """The blocks of a trace's static.xml by class: class name → (method, desc) → block tuples,
    for the classes whose methods have blocks. A class is parsed when it is first asked for (a
    run with ``instructions=on`` writes some 30 MB, most of which a test never looks at)."""

    _CLASS_TAG = re.compile(rb"^<class [^>]*>", re.MULTILINE)
    _ATTR = re.compile(rb'\s(name|loader|source_file)="([^"]*)"')

    def __init__(self, path: Path):
        self.text = path.read_bytes()
        self.spans: dict[str, tuple[int, int]] = {}
        self.loaders: dict[str, str] = {}
        self.source_files: dict[str, str] = {}
        for match in self._CLASS_TAG.finditer(self.text):
            attrs = {k.decode(): v.decode() for k, v in self._ATTR.findall(match.group(0))}
            end = match.end() if match.group(0).endswith(b"/>") else self.text.index(b"</class>", match.end()) + 8
            if b"<basic_block " in self.text[match.end():end]:
                self.spans[attrs["name"]] = (match.start(), end)
                self.loaders[attrs["name"]] = attrs.get("loader", "")
                self.source_files[attrs["name"]] = attrs.get("source_file", "")
        self._parsed: dict[str, ClassBlocks] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.spans

    def __iter__(self):
        return iter(self.spans)

    def __getitem__(self, name: str) -> ClassBlocks:
        if name not in self._parsed:
            start, end = self.spans[name]
            cls = etree.fromstring(self.text[start:end], etree.XMLParser(resolve_entities=False, huge_tree=True))
            methods: ClassBlocks = {}
            for m in cls.iterfind("method"):
                blocks = [_recorded_block(b, int(m.get("id"))) for b in m.iterfind("basic_block")]
                if blocks:
                    methods[(m.get("name"), m.get("desc"))] = blocks
            self._parsed[name] = methods
        return self._parsed[name]


def recorded_blocks(trace_dir: Path) -> RecordedStatic:
    """static.xml's blocks (:class:`RecordedStatic`)."""
    return RecordedStatic(trace_dir / "static.xml")


def _recorded_block(b: etree._Element, method_id: int) -> tuple:
    sites = tuple((c.get("call"), c.get("type"), c.get("itf") == "true", c.get("bootstrap"), int(c.get("offset")))
                  for c in b.iterfind("call_site_list/call_site"))
    handlers = []
    for h in b.iterfind("exception_handler_list/exception_handler"):
        block_id = int(h.get("basic_block_id"))
        index = ((block_id >> METHOD_SHIFT) - method_id) * BLOCKS_PER_PAGE + (block_id & (BLOCKS_PER_PAGE - 1))
        handlers.append((index, h.get("type")))
    return (int(b.get("index")), int(b.get("start")), int(b.get("end")),
            [int(x) for x in (b.get("lines") or "").split()], [int(x) for x in b.get("metrics").split()],
            sites, tuple(handlers), b.findtext("instructions") or "")


def listing_blocks(listing: MethodListing) -> Blocks:
    """A bridge listing in the form of :func:`recorded_blocks`."""
    return [(b.index, b.start, b.end, b.lines, list(b.metrics),
             tuple((f"{s.owner}:{s.name}{s.desc}", s.kind, s.interface, s.bootstrap, s.offset) for s in b.call_sites),
             tuple((h.block, h.type) for h in b.handlers), b.text)
            for b in listing.blocks]


def class_blocks(methods: dict[tuple[str, str], MethodListing]) -> ClassBlocks:
    """A bridge class listing in the form of :func:`recorded_blocks` (methods with code only)."""
    return {key: listing_blocks(m) for key, m in methods.items() if m.blocks}


_FLOAT_CONSTANT = re.compile(r"^(\d+ (ldc|ldc2_w)) (-?(?:\d+\.\d+(?:E-?\d+)?|NaN|Infinity))$", re.MULTILINE)


def float_constants_by_value(blocks: ClassBlocks) -> ClassBlocks:
    """Blocks whose float and double constants are written as values (``ldc 1.1754944E-38`` and
    ``ldc 1.17549435E-38`` alike), for listings printed by JVMs on either side of JDK 19's change
    of Float.toString and Double.toString."""

    def value(match: re.Match) -> str:
        literal = match.group(3)
        number = np.float32(literal) if match.group(2) == "ldc" else np.float64(literal)
        return f"{match.group(1)} {number.tobytes().hex()}"

    return {key: [block[:7] + (_FLOAT_CONSTANT.sub(value, block[7]),) for block in method]
            for key, method in blocks.items()}
