"""A class's methods by basic block, as plain Python data: what ``jbgui.instr.StaticListing`` (the
recorder's own analysis and describing code, run in the bridge's JVM) says about a class file.

Block indices, ``start``/``end`` offsets, lines, metrics, call sites, handlers and instruction text
are exactly what static.xml holds for the class when it is recorded with ``instructions=on`` and
the same ``bba`` (tests/bridge checks it against recorded traces).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from jbgui.bridge.errors import BridgeError
from jbgui.model.format.static_xml import MethodRecord, Malformed, read_class_element, read_fragment
from jbgui.model.layout import BLOCKS_PER_PAGE, METHOD_SHIFT, METRIC_NAMES

# What joins a block's instruction lines in StaticListing's description (a parsed "&#13;").
_LINE_SEPARATOR = "\r"


@dataclass(frozen=True)
class CallSite:
    """An invoke instruction of a block."""

    offset: int | None        # bytecode offset (None when the class's offsets could not be read)
    kind: str                 # INVOKEVIRTUAL, INVOKESPECIAL, INVOKESTATIC, INVOKEINTERFACE, INVOKEDYNAMIC
    owner: str                # internal name of the class named by the call; "" for invokedynamic
    name: str
    desc: str
    interface: bool = False   # the owner is an interface (a MethodInsnNode's itf)
    bootstrap: str | None = None  # invokedynamic: "owner:name(desc)" of the bootstrap method


@dataclass(frozen=True)
class ExceptionHandler:
    """A handler covering a block, in the method's handler-table order."""

    block: int                # index of the block the handler starts
    type: str | None          # internal name of the caught class; None catches any (finally)


@dataclass
class BlockListing:
    """One basic block as the recorder describes it."""

    index: int
    start: int | None         # offset of the first instruction (None: offsets unknown)
    end: int | None           # offset after the last instruction
    lines: list[int]          # source lines, in order of first appearance
    instructions: list[tuple[int, str]]  # (offset, "mnemonic operands")
    metrics: tuple[int, ...] = ()        # the 19 static metrics, in METRIC_NAMES order
    call_sites: list[CallSite] = field(default_factory=list)
    handlers: list[ExceptionHandler] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The instructions as static.xml's ``<instructions>`` holds them: one ``offset mnemonic
        operands`` line each."""
        return "\n".join(f"{offset} {text}" for offset, text in self.instructions)

    def metric(self, name: str) -> int:
        """One metric by its name in :data:`jbgui.model.layout.METRIC_NAMES`."""
        return self.metrics[METRIC_NAMES.index(name)]


@dataclass
class MethodListing:
    """A method's bytecode by basic block (no blocks for abstract and native methods)."""

    class_name: str           # internal form, java/lang/String
    name: str
    desc: str
    access: int = 0
    code_length: int | None = None
    intrinsic: bool = False   # @IntrinsicCandidate: described, but the recorder leaves it untraced
    blocks: list[BlockListing] = field(default_factory=list)

    def block_at(self, offset: int) -> BlockListing | None:
        """The block holding the instruction at ``offset``."""
        for block in self.blocks:
            if block.start is not None and block.start <= offset < block.end:
                return block
        return None


@dataclass
class ClassListing:
    """Every method of a class file, by (name, descriptor), in class-file order."""

    name: str
    super_name: str | None
    interfaces: list[str]
    access: int
    version: int              # class-file major version
    source_file: str | None
    precise: bool             # blocks as with bba=precise
    methods: dict[tuple[str, str], MethodListing] = field(default_factory=dict)
    # Problems the analysis met (for example offsets it could not match): blocks stay exact,
    # offsets may be missing.
    warnings: list[str] = field(default_factory=list)

    def method(self, name: str, desc: str) -> MethodListing:
        """One method; BridgeError when the class file has no such method."""
        found = self.methods.get((name, desc))
        if found is None:
            raise BridgeError(f"{self.name.replace('/', '.')} has no method {name}{desc} in its class file")
        return found


def parse_class(xml: str, precise: bool) -> ClassListing:
    """StaticListing's description of a class (one ``<class>`` element) as a ClassListing, read
    by the trace format's one static.xml reader."""
    try:
        record = read_class_element(read_fragment(xml.encode("utf-8")), strict_ids=False)
    except etree.XMLSyntaxError as error:
        raise BridgeError(f"the description of a class file does not parse: {error}") from error
    except Malformed as error:
        raise BridgeError(f"the description of a class file is malformed: {error}") from error
    a = record.attrs
    listing = ClassListing(
        name=record.name, super_name=a.get("super"), interfaces=(a.get("interfaces") or "").split(),
        access=_number(a.get("access")), version=_number(a.get("version")),
        source_file=a.get("source_file"), precise=precise, warnings=record.warnings,
    )
    for m in record.methods:
        method = _method(m, listing.name)
        listing.methods[(method.name, method.desc)] = method
    return listing


def _number(text: str | None) -> int:
    try:
        return int(text or "0")
    except ValueError:
        return 0


def _method(m: MethodRecord, class_name: str) -> MethodListing:
    """One method record of StaticListing's description."""
    method_id = m.id or 0
    method = MethodListing(class_name, m.name, m.desc, access=m.access, code_length=m.code_length,
                           intrinsic=m.flag("intrinsic"))
    for b in m.block_list:
        sites = []
        for c in b.sites:
            owner, _, signature = c.call.partition(":")
            paren = signature.find("(")
            sites.append(CallSite(c.offset if c.offset >= 0 else None, c.type, owner,
                                  signature[:paren] if paren >= 0 else signature,
                                  signature[paren:] if paren >= 0 else "", c.interface, c.bootstrap))
        handlers = [ExceptionHandler(handler_block(h.block_word, method_id), h.type) for h in b.handlers]
        text = b.instructions
        method.blocks.append(BlockListing(
            index=b.index,
            start=b.start if b.start >= 0 else None,
            end=b.end if b.end >= 0 else None,
            lines=[int(x) for x in b.lines.split() if x.isdigit()],
            instructions=[_instruction(line) for line in text.split(_LINE_SEPARATOR)] if text else [],
            metrics=tuple(int(x) for x in b.metrics.split() if x.isdigit()),
            call_sites=sites, handlers=handlers,
        ))
    return method


def handler_block(block_id: int, method_id: int) -> int:
    """A block's index in its method from its static.xml id (``page << METHOD_SHIFT | block``,
    pages counted from the method's id; docs/trace-format.md)."""
    page = block_id >> METHOD_SHIFT
    return (page - method_id) * BLOCKS_PER_PAGE + (block_id & (BLOCKS_PER_PAGE - 1))


def _instruction(line: str) -> tuple[int, str]:
    offset, _, text = line.partition(" ")
    return int(offset), text
