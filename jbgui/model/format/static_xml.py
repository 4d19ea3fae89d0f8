"""``static.xml``: the static information — classes, methods, basic blocks (docs/trace-format.md).

The one reader of that schema. :func:`iter_classes` walks the file one ``<class>`` at a time with
lxml's iterparse; :func:`read_class_element` turns one element (also one that the bridge's
StaticListing produced) into plain records. Each class is validated once, here:

- numbers are numbers, inside the ranges the format allows (class ids of 27 bits, method ids of
  19, block offsets of a method's 64 KiB of code…); a class with one that is not is left out,
  with a problem naming file, line and class, as if static.xml had never described it;
- a method's blocks are ``0 … blocks-1`` in order and its ``block_pages`` is the number of
  2048-block pages they need; a method whose ids (pages included) overlap another's is left out;
- block metrics are kept as text and parsed in one vectorized pass by :func:`metrics_table`.

XML stays inert: no entity expansion, no DTD loading, no network; a static.xml that asks for any
of them gets its entities left unexpanded (``tests/model/test_format_readers.py``, ``tests/fuzz``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
from lxml import etree

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.format.files import open_file, show

MAX_CODE_OFFSET = 65535          # a method's code is at most 64 KiB
MAX_METRIC = (1 << 31) - 1
MAX_BLOCK_WORD = (1 << (layout.METHOD_BITS + layout.BLOCK_BITS)) - 1
MAX_LINE_NUMBER = (1 << 31) - 1
_METRICS = len(layout.METRIC_NAMES)

# Parser options: static.xml is data, never a reason to fetch, load or expand anything.
PARSER_OPTIONS = dict(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                      huge_tree=True)


class Malformed(ValueError):
    """A value of a class that is not what the format allows (the class is left out)."""


# Records of the many small elements are named tuples: a static.xml of 100,000 blocks makes them
# by the hundred thousand, and the replay's tables unpack them positionally.
class CallSiteRecord(NamedTuple):
    call: str                  # "owner:name(desc)"; owner empty for invokedynamic
    type: str                  # INVOKEVIRTUAL, ...
    offset: int                # -1 when not given
    interface: bool = False
    bootstrap: str | None = None


class HandlerRecord(NamedTuple):
    block_word: int            # the handler block's id (page << 11 | index); -1 when not given
    type: str | None           # the caught class; None catches everything


class BlockRecord(NamedTuple):
    index: int
    start: int                 # -1 when not given
    end: int
    lines: str                 # space-separated line numbers ('' without)
    metrics: str               # space-separated metrics (parsed by metrics_table)
    sites: tuple
    handlers: tuple
    instructions: str | None


@dataclass(slots=True)
class MethodRecord:
    id: int | None             # None when the id space was exhausted
    name: str
    desc: str
    access: int
    blocks: int
    pages: int
    code_length: int | None
    attrs: dict
    block_list: list[BlockRecord] = field(default_factory=list)

    def flag(self, name: str) -> bool:
        return self.attrs.get(name) == "true"


@dataclass(slots=True)
class ClassRecord:
    id: int | None
    name: str
    attrs: dict
    line: int | None
    methods: list[MethodRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def flag(self, name: str) -> bool:
        return self.attrs.get(name) == "true"


def _int(element, name: str, lo: int, hi: int, default: int | None = None) -> int:
    text = element.get(name)
    if text is None:
        if default is None:
            raise Malformed(f"<{element.tag}> has no {name}")
        return default
    try:
        value = int(text)
    except ValueError:
        raise Malformed(f"<{element.tag}> {name}={text[:40]!r} is not an integer") from None
    if not lo <= value <= hi:
        raise Malformed(f"<{element.tag}> {name}={text[:40]} is outside {lo}..{hi}")
    return value


def read_class_element(element, strict_ids: bool = True) -> ClassRecord:
    """One ``<class>`` element as records; :class:`Malformed` when a value is out of the format.

    ``strict_ids``: class and method ids are required where static.xml requires them (the
    bridge's descriptions of class files have none)."""
    cid = _int(element, "id", 0, layout.MAX_CLASS_ID) if strict_ids or element.get("id") is not None else None
    name = element.get("name")
    if name is None:
        raise Malformed("<class> has no name")
    record = ClassRecord(cid, name, dict(element.attrib), element.sourceline)
    for child in element.iterchildren("method", "warning"):
        if child.tag == "warning":
            record.warnings.append(child.text or "")
            continue
        record.methods.append(_read_method(child))
    return record


def _read_method(m) -> MethodRecord:
    mid = None if m.get("id") is None else _int(m, "id", 1, layout.MAX_METHOD_ID)
    name, desc = m.get("name"), m.get("desc")
    if name is None or desc is None:
        raise Malformed("<method> without name or desc")
    n_blocks = _int(m, "blocks", 0, layout.BLOCKS_PER_PAGE * (layout.MAX_METHOD_ID + 1), 0)
    pages = _int(m, "block_pages", 1, layout.MAX_METHOD_ID, 1)
    code_length = _int(m, "code_length", -1, MAX_CODE_OFFSET + 1, -1)
    method = MethodRecord(mid, name, desc, _int(m, "access", 0, MAX_METRIC, 0), n_blocks, pages,
                          None if code_length < 0 else code_length, dict(m.attrib))
    # Children walked directly: an ElementPath query per block (iterfind("a/b")) cost more than
    # everything else here on a 100,000-block static.xml.
    for b in m.iterchildren("basic_block"):
        sites, handlers, instr = (), (), None
        for child in b.iterchildren("call_site_list", "exception_handler_list", "instructions"):
            tag = child.tag
            if tag == "call_site_list":
                sites = tuple(CallSiteRecord(s.get("call", ""), s.get("type", ""),
                                             _int(s, "offset", -1, MAX_CODE_OFFSET, -1), s.get("itf") == "true",
                                             s.get("bootstrap"))
                              for s in child.iterchildren("call_site"))
            elif tag == "exception_handler_list":
                handlers = tuple(HandlerRecord(_int(h, "basic_block_id", -1, MAX_BLOCK_WORD, -1), h.get("type"))
                                 for h in child.iterchildren("exception_handler"))
            elif instr is None:
                instr = child.text or ""
        index = _int(b, "index", 0, layout.BLOCKS_PER_PAGE * (layout.MAX_METHOD_ID + 1))
        if index != len(method.block_list):
            raise Malformed(f"method {name}{desc}: block index {index} where {len(method.block_list)} belongs")
        method.block_list.append(BlockRecord(
            index, _int(b, "start", -1, MAX_CODE_OFFSET + 1, -1), _int(b, "end", -1, MAX_CODE_OFFSET + 1, -1),
            b.get("lines", ""), b.get("metrics", ""), sites, handlers, instr))
    have = len(method.block_list)
    if not have and pages != 1:
        raise Malformed(f"method {name}{desc}: block_pages={pages} without blocks")
    if have and have != n_blocks:
        raise Malformed(f"method {name}{desc}: blocks={n_blocks} but {have} <basic_block> elements")
    if have and pages != -(-have // layout.BLOCKS_PER_PAGE):
        raise Malformed(f"method {name}{desc}: block_pages={pages} for {have} blocks "
                        f"(expected {-(-have // layout.BLOCKS_PER_PAGE)})")
    if mid is not None and mid + pages - 1 > layout.MAX_METHOD_ID:
        raise Malformed(f"method {name}{desc}: ids {mid}..{mid + pages - 1} beyond the 19-bit id space")
    return method


@dataclass
class StaticReader:
    """Walks ``static.xml`` class by class; ``problems`` collects what was left out and why,
    ``complete`` says whether the file ended with its root element, ``cut_off`` whether it ended
    inside an element instead (a killed JVM's static.xml does)."""

    path: Path
    problems: list[str] = field(default_factory=list)
    complete: bool = False
    cut_off: bool = False
    classes_read: int = 0
    _method_ids: dict[int, str] = field(default_factory=dict)   # id (every page) -> class name
    _class_ids: set[int] = field(default_factory=set)

    def classes(self) -> Iterator[ClassRecord]:
        """Every well-formed class, in file order (duplicated ids left out)."""
        name = show(self.path)
        try:
            handle = open_file(self.path)
        except FileNotFoundError as error:
            raise TraceError(f"{name}: missing; this trace has no static information") from error
        with handle:
            try:
                for _event, element in etree.iterparse(handle, events=("end",), tag="class", recover=False,
                                                       **PARSER_OPTIONS):
                    try:
                        record = read_class_element(element)
                        self._claim_ids(record)
                    except Malformed as error:
                        # That class is left out, as if static.xml had never described it.
                        self.problems.append(f"{name}: line {element.sourceline}: class "
                                             f"{(element.get('name') or '')[:200]!r} left out, malformed: {error}")
                        record = None
                    element.clear(keep_tail=False)
                    while element.getprevious() is not None:
                        del element.getparent()[0]
                    if record is not None:
                        self.classes_read += 1
                        yield record
                self.complete = True
            except etree.XMLSyntaxError as error:
                line = getattr(error, "lineno", "?")
                # The file ends inside an element: what a killed JVM leaves (docs/trace-format.md).
                self.cut_off = "Premature end of data" in str(error) or "EndTag" in str(error)
                self.problems.append(f"{name}: line {line}: {getattr(error, 'msg', None) or error} "
                                     f"(the {self.classes_read} classes before it are loaded)")
            except OSError as error:
                raise TraceError(f"{name}: cannot read: {error}") from error

    def _claim_ids(self, record: ClassRecord) -> None:
        """Class and method ids are unique (a method owns ``block_pages`` consecutive ids)."""
        if record.id in self._class_ids:
            raise Malformed(f"class id {record.id} is used by an earlier class")
        claimed = []
        for m in record.methods:
            if m.id is None:
                continue
            for page in range(m.id, m.id + m.pages):
                if page in self._method_ids or page in claimed:
                    raise Malformed(f"method id {page} ({m.name}) is used by an earlier method "
                                    f"(of {self._method_ids.get(page, record.name)})")
                claimed.append(page)
        self._class_ids.add(record.id)
        for page in claimed:
            self._method_ids[page] = record.name


def read_fragment(xml: bytes) -> etree._Element:
    """Parse one XML document held in memory (a class description from the bridge) inertly."""
    return etree.fromstring(xml, etree.XMLParser(**PARSER_OPTIONS))


def metrics_table(texts: list[str], problems: list[str], file: str = "static.xml") -> np.ndarray:
    """The blocks' ``metrics`` attributes (space-separated integers) as an (n, 19) int32 array:
    parsed in one pass when every block has all 19 plain integers (what the recorder writes), else
    block by block, missing values 0, extra ones ignored, and a block with a value that is not an
    integer in 0 … 2^31-1 all 0 (said once in ``problems``)."""
    if all(t.count(" ") == _METRICS - 1 for t in texts):
        try:
            values = np.array(" ".join(texts).split(), np.int64).reshape(len(texts), _METRICS)
            if not len(values) or (values.min() >= 0 and values.max() <= MAX_METRIC):
                return values.astype(np.int32)
        except (ValueError, OverflowError):
            pass  # a value that is not an integer: block by block below
    rows, bad = [], []
    for t in texts:
        vals = t.split()[:_METRICS]
        try:
            row = [int(v) for v in vals] + [0] * (_METRICS - len(vals))
            if any(not 0 <= v <= MAX_METRIC for v in row):
                raise ValueError
            rows.append(row)
        except ValueError:
            rows.append([0] * _METRICS)
            bad.append(len(rows) - 1)
    if bad:
        problems.append(f"{file}: {len(bad)} blocks have metrics that are not integers in 0..{MAX_METRIC} (the "
                        f"first: {texts[bad[0]][:60]!r}); their metrics count as 0")
    return np.array(rows, np.int32).reshape(len(texts), _METRICS)
