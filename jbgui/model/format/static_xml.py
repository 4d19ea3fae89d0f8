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
from itertools import repeat
from dataclasses import dataclass, field, fields
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
    blocking: bool = False     # the recorder stamps the clock around it (jbgui.instr.BlockingCalls)


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
    monitor: int = -1          # call sites before its monitorenter (-1: none); see monitorenter=


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
                                             s.get("bootstrap"), s.get("blocking") == "true")
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
            b.get("lines", ""), b.get("metrics", ""), sites, handlers, instr,
            _int(b, "monitorenter", -1, len(sites), -1)))
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
        joined = " ".join(texts).encode("utf-8")
        # Only ASCII digits and single spaces: numpy's text parser then reads what int() would,
        # in a tenth of the time of a list of tokens (a number beyond int64 reads as int64's
        # largest, which the range check refuses).
        if not joined.translate(None, b"0123456789 "):
            values = np.fromstring(joined, np.int64, sep=" ")
            if values.size == len(texts) * _METRICS and (not values.size or values.max() <= MAX_METRIC):
                return values.reshape(len(texts), _METRICS).astype(np.int32)
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


# ---------------------------------------------------------------------- columns

@dataclass
class StaticColumns:
    """static.xml as flat columns, what the replay's tables are built from: each element kind in
    file order, each child pointing at its parent's position in its parent's columns. Methods
    without an id are left out, with their blocks. Integer columns are lists or int64 arrays
    (the fast reader's); the builder takes either."""

    problems: list[str]
    # classes
    c_id: list[int]
    c_name: list[str]
    c_loader: list[str]
    c_super: list[str]
    c_source: list[str]
    c_jdk: list[bool]
    c_hidden: list[bool]
    c_instrumented: list[bool]
    # methods
    m_id: list[int]
    m_class: list[int]             # the declaring class's id
    m_name: list[str]
    m_desc: list[str]
    m_native: list[bool]
    m_abstract: list[bool]
    m_intrinsic: list[bool]
    m_instrumented: list[bool]     # instrumented="true" or "method-only"
    m_static: list[bool]
    m_blocks: list[int]            # its <basic_block> elements
    m_pages: list[int]
    # blocks: index 0 … m_blocks-1 of each method, in order
    b_method: list[int]            # position in the method columns
    b_start: list[int]
    b_end: list[int]
    b_lines: list[str]
    b_metrics: list[str]           # parsed by metrics_table
    b_monitor: list[int]           # monitorenter=: its call sites before its monitorenter, -1 without
    # call sites and handlers, in order within their block
    s_block: list[int]             # position in the block columns
    s_call: list[str]
    s_type: list[str]
    s_offset: list[int]
    s_blocking: list[bool]         # blocking="true": the recorder stamps the clock around the call
    h_block: list[int]
    h_word: list[int]
    h_type: list[str | None]
    instructions: dict[int, str]   # block position -> listing (only non-empty ones)


def columns_from_records(records, problems: list[str]) -> StaticColumns:
    """The columns of validated class records (what :class:`StaticReader` yields)."""
    cols = StaticColumns(**{f.name: [] for f in fields(StaticColumns)} | {"problems": problems, "instructions": {}})
    for record in records:
        a = record.attrs
        cols.c_id.append(record.id)
        cols.c_name.append(record.name)
        cols.c_loader.append(a.get("loader", ""))
        cols.c_super.append(a.get("super", ""))
        cols.c_source.append(a.get("source_file", ""))
        cols.c_jdk.append(record.flag("jdk"))
        cols.c_hidden.append(record.flag("hidden"))
        cols.c_instrumented.append(record.flag("instrumented"))
        for m in record.methods:
            if m.id is None:
                continue
            position = len(cols.m_id)
            cols.m_id.append(m.id)
            cols.m_class.append(record.id)
            cols.m_name.append(m.name)
            cols.m_desc.append(m.desc)
            cols.m_native.append(m.flag("native"))
            cols.m_abstract.append(m.flag("abstract"))
            cols.m_intrinsic.append(m.flag("intrinsic"))
            cols.m_instrumented.append(m.attrs.get("instrumented") in ("true", "method-only"))
            cols.m_static.append(m.flag("static"))
            cols.m_blocks.append(len(m.block_list))
            cols.m_pages.append(m.pages)
            for b in m.block_list:
                g = len(cols.b_method)
                cols.b_method.append(position)
                cols.b_start.append(b.start)
                cols.b_end.append(b.end)
                cols.b_lines.append(b.lines)
                cols.b_metrics.append(b.metrics)
                cols.b_monitor.append(b.monitor)
                for s in b.sites:
                    cols.s_block.append(g)
                    cols.s_call.append(s.call)
                    cols.s_type.append(s.type)
                    cols.s_offset.append(s.offset)
                    cols.s_blocking.append(s.blocking)
                for h in b.handlers:
                    cols.h_block.append(g)
                    cols.h_word.append(h.block_word)
                    cols.h_type.append(h.type)
                if b.instructions:
                    cols.instructions[g] = b.instructions
    return cols


def read_static_columns(path: Path) -> StaticColumns:
    """``static.xml``'s columns: by :func:`fast_columns` when the file is exactly what the
    recorder writes, else class by class with :class:`StaticReader`, which leaves out what is
    malformed and says why. Both give the same columns for any file the fast reader accepts
    (``tests/model/test_static_columns.py``)."""
    cols = fast_columns(path)
    if cols is not None:
        return cols
    reader = StaticReader(path)
    records = list(reader.classes())
    return columns_from_records(records, reader.problems)


# Where each collected element must sit, as the record reader looks for it.
_PARENT = {"class": "static_information", "method": "class", "warning": "class", "basic_block": "method",
           "call_site_list": "basic_block", "exception_handler_list": "basic_block", "instructions": "basic_block",
           "call_site": "call_site_list", "exception_handler": "exception_handler_list"}


class _Unusual(Exception):
    """The file is not exactly what the recorder writes: the record reader takes over."""


class _Listings(Exception):
    """The file lists instructions: it is read again by a collector that keeps text."""


# The attributes each element kind keeps, with the value a missing one reads as (None: required,
# or a flag that is false).
_KEPT = {
    "class": (("id", None), ("name", None), ("loader", ""), ("super", ""), ("source_file", ""), ("jdk", None),
              ("hidden", None), ("instrumented", None)),
    "method": (("id", None), ("name", None), ("desc", None), ("blocks", "0"), ("block_pages", "1"),
               ("code_length", "-1"), ("access", "0"), ("instrumented", None), ("native", None), ("abstract", None),
               ("intrinsic", None), ("static", None)),
    "basic_block": (("index", None), ("start", "-1"), ("end", "-1"), ("lines", ""), ("metrics", ""),
                    ("monitorenter", "-1")),
    "call_site": (("call", ""), ("type", ""), ("offset", "-1"), ("blocking", None)),
    "exception_handler": (("basic_block_id", "-1"), ("type", None)),
}
# Files this big are read in two halves at once (the second by a child process, whose start-up,
# about 0.2 s, a smaller file does not repay: the bundled example's 21 MB took as long either
# way, 0.74 s against 0.71 s, for 27 % more CPU); javac's 40 MB (0.85x) and jEdit's 72 MB (0.76x) are.
SPLIT_BYTES = 32 << 20
_FLUSH_EVERY = 1 << 16     # about how many elements' attribute dicts are held before they become columns


class _Collector:
    """lxml parser target: keeps each element's attributes (no tree, no element objects, which
    cost most of the record reader's time) and checks that elements sit where the format puts
    them. Attribute dicts are turned into columns of strings between classes, once about
    ``_FLUSH_EVERY`` are held (a dict costs several times its strings: held for a whole file,
    they doubled the peak)."""

    keeps_text = False
    met_listing = False

    def __init__(self):
        self.stack: list[str] = []
        self.pending: dict[str, list[dict]] = {kind: [] for kind in _KEPT}
        self._classes, self._methods, self._blocks = self.pending["class"], self.pending["method"], self.pending["basic_block"]
        self._sites, self._handlers = self.pending["call_site"], self.pending["exception_handler"]
        self.columns: dict[str, dict[str, list]] = {kind: {name: [] for name, _ in kept} for kind, kept in _KEPT.items()}
        self.method_class: list[int] = []
        self.block_method: list[int] = []
        self.site_block: list[int] = []
        self.handler_block: list[int] = []
        self.n_classes = self.n_methods = self.n_blocks = 0
        self.instructions: dict[int, str] = {}
        self._text: list[str] | None = None

    def start(self, tag, attrib):
        stack = self.stack
        want = _PARENT.get(tag)
        parent = stack[-1] if stack else None
        if want != parent and (want is not None or (parent is not None and parent != "static_information")):
            raise _Unusual(f"<{tag}> inside <{parent}>")
        stack.append(tag)
        if tag == "call_site":
            self._sites.append(attrib)
            self.site_block.append(self.n_blocks - 1)
        elif tag == "basic_block":
            self._blocks.append(attrib)
            self.block_method.append(self.n_methods - 1)
            self.n_blocks += 1
        elif tag == "method":
            self._methods.append(attrib)
            self.method_class.append(self.n_classes - 1)
            self.n_methods += 1
        elif tag == "exception_handler":
            self._handlers.append(attrib)
            self.handler_block.append(self.n_blocks - 1)
        elif tag == "class":
            # Between classes: the dicts held so far become columns once there are many.
            if len(self._sites) + len(self._blocks) + len(self._methods) >= _FLUSH_EVERY:
                self.flush()
            self._classes.append(attrib)
            self.n_classes += 1
        elif tag == "instructions":
            if not self.keeps_text:
                self.met_listing = True     # said again by close(), which lxml calls after this
                raise _Listings()
            if self.n_blocks - 1 in self.instructions:
                raise _Unusual("two <instructions> in a block")
            self._text = []
            self.instructions[self.n_blocks - 1] = ""

    def flush(self):
        for kind, dicts in self.pending.items():
            if dicts:
                columns = self.columns[kind]
                for name, default in _KEPT[kind]:
                    columns[name] += _values(dicts, name, default)
                dicts.clear()

    def end(self, tag):
        self.stack.pop()

    # The record reader's <instructions> text stops at a comment, a processing instruction or an
    # entity, and a DTD could define entities: in any of these the record reader reads the file.
    def comment(self, text):
        if self._text is not None:
            raise _Unusual("a comment inside <instructions>")

    def pi(self, target, data):
        if self._text is not None:
            raise _Unusual("a processing instruction inside <instructions>")

    def doctype(self, *args):
        raise _Unusual("a document type declaration")

    def close(self):
        if self.met_listing:
            raise _Listings()
        if self.stack:
            raise _Unusual("the file ends inside an element")
        self.flush()
        return self


class _ListingCollector(_Collector):
    """A collector that also keeps the text of ``<instructions>`` (listings are optional; lxml
    calls ``data`` for every run of whitespace when the target has it, which costs ~10 %, so a
    file is read with it only once the plain collector has met a listing)."""

    keeps_text = True

    def start(self, tag, attrib):
        if self._text is not None:
            raise _Unusual("an element inside <instructions>")
        super().start(tag, attrib)

    def end(self, tag):
        self.stack.pop()
        if tag == "instructions":
            self.instructions[self.n_blocks - 1] = "".join(self._text)
            self._text = None

    def data(self, text):
        if self._text is not None:
            self._text.append(text)


def _values(dicts: list[dict], name: str, default=None) -> list:
    """One attribute of every element (a C loop: no Python frame per element)."""
    return list(map(dict.get, dicts, repeat(name, len(dicts)), repeat(default, len(dicts))))


def _ints(texts: list[str | None], name: str, lo: int, hi: int) -> np.ndarray:
    """An integer attribute's texts as numbers, range-checked; _Unusual for anything else."""
    try:
        values = np.array(list(map(int, texts)), np.int64)
    except (TypeError, ValueError, OverflowError):
        raise _Unusual(f"{name}: a value missing or not an integer") from None
    if len(values) and (values.min() < lo or values.max() > hi):
        raise _Unusual(f"{name}: a value outside {lo}..{hi}")
    return values


def _flags(texts: list[str | None]) -> list[bool]:
    return [v == "true" for v in texts]


def fast_columns(path: Path, chunk: int = 1 << 20, split: int | None = SPLIT_BYTES) -> StaticColumns | None:
    """The columns of a static.xml that is exactly what the recorder writes — well formed, every
    element where the format puts it, every value in range, ids unique — read in one pass with
    no element objects; None for any other file, which the record reader then reads class by
    class (it can leave out one malformed class and keep the rest, which this one cannot).

    A file of ``split`` bytes or more is read in two halves at once, the second by a child process
    (:mod:`jbgui.model.format.static_split`); when that cannot be done exactly, in one pass."""
    try:
        if split is not None:
            from jbgui.model.format import static_split
            halves = static_split.collect_halves(path, chunk, split)
            if halves is not None:
                return _checked_columns(halves)
        try:
            return _checked_columns(_collect(path, _Collector(), chunk))
        except _Listings:
            return _checked_columns(_collect(path, _ListingCollector(), chunk))
    except (etree.XMLSyntaxError, _Unusual, OSError):
        return None


def _collect(path: Path, target: _Collector, chunk: int) -> _Collector:
    parser = etree.XMLParser(target=target, **PARSER_OPTIONS)
    with open_file(path) as handle:
        while data := handle.read(chunk):
            parser.feed(data)
        parser.close()
    return target


def _checked_columns(t: _Collector) -> StaticColumns:
    """The collected attributes as columns, every check of :func:`read_class_element` and
    :meth:`StaticReader._claim_ids` made on whole columns (_Unusual when one fails)."""
    classes, methods, blocks = t.columns["class"], t.columns["method"], t.columns["basic_block"]
    sites, handlers = t.columns["call_site"], t.columns["exception_handler"]
    bpp = layout.BLOCKS_PER_PAGE
    c_id = _ints(classes["id"], "class id", 0, layout.MAX_CLASS_ID)
    c_name = classes["name"]
    if None in c_name or len(np.unique(c_id)) != len(c_id):
        raise _Unusual("a class without name, or a class id used twice")
    if None in methods["id"]:
        raise _Unusual("a method without id")
    m_id = _ints(methods["id"], "method id", 1, layout.MAX_METHOD_ID)
    m_name, m_desc = methods["name"], methods["desc"]
    if None in m_name or None in m_desc:
        raise _Unusual("a method without name or desc")
    m_nblocks = _ints(methods["blocks"], "blocks", 0, bpp * (layout.MAX_METHOD_ID + 1))
    m_pages = _ints(methods["block_pages"], "block_pages", 1, layout.MAX_METHOD_ID)
    _ints(methods["code_length"], "code_length", -1, MAX_CODE_OFFSET + 1)
    _ints(methods["access"], "access", 0, MAX_METRIC)
    b_method = np.array(t.block_method, np.int64)
    have = np.bincount(b_method, minlength=len(m_id)) if len(m_id) else np.zeros(0, np.int64)
    # A method's blocks are 0 … blocks-1 in order, block_pages the pages they need.
    first = np.cumsum(have) - have
    b_index = _ints(blocks["index"], "index", 0, bpp * (layout.MAX_METHOD_ID + 1))
    if len(b_index) and not np.array_equal(b_index, np.arange(len(b_index)) - first[b_method]):
        raise _Unusual("blocks out of order")
    if np.any((have == 0) & (m_pages != 1)) or np.any((have > 0) & (have != m_nblocks)) \
            or np.any((have > 0) & (m_pages != -(-have // bpp))) or np.any(m_id + m_pages - 1 > layout.MAX_METHOD_ID):
        raise _Unusual("block counts or pages that do not match the blocks")
    claimed = np.repeat(m_id, m_pages) + (np.arange(int(m_pages.sum())) - np.repeat(np.cumsum(m_pages) - m_pages, m_pages))
    if len(np.unique(claimed)) != len(claimed):
        raise _Unusual("a method id used twice")
    m_class = c_id[np.array(t.method_class, np.int64)] if len(m_id) else c_id[:0]
    return StaticColumns(
        problems=[],
        c_id=c_id, c_name=c_name, c_loader=classes["loader"], c_super=classes["super"],
        c_source=classes["source_file"], c_jdk=_flags(classes["jdk"]), c_hidden=_flags(classes["hidden"]),
        c_instrumented=_flags(classes["instrumented"]),
        m_id=m_id, m_class=m_class, m_name=m_name, m_desc=m_desc,
        m_native=_flags(methods["native"]), m_abstract=_flags(methods["abstract"]),
        m_intrinsic=_flags(methods["intrinsic"]),
        m_instrumented=[v in ("true", "method-only") for v in methods["instrumented"]],
        m_static=_flags(methods["static"]), m_blocks=have, m_pages=m_pages,
        b_method=b_method, b_start=_ints(blocks["start"], "start", -1, MAX_CODE_OFFSET + 1),
        b_end=_ints(blocks["end"], "end", -1, MAX_CODE_OFFSET + 1), b_lines=blocks["lines"], b_metrics=blocks["metrics"],
        b_monitor=_ints(blocks["monitorenter"], "monitorenter", -1, MAX_CODE_OFFSET),
        s_block=np.array(t.site_block, np.int64), s_call=sites["call"], s_type=sites["type"],
        s_offset=_ints(sites["offset"], "offset", -1, MAX_CODE_OFFSET), s_blocking=_flags(sites["blocking"]),
        h_block=np.array(t.handler_block, np.int64),
        h_word=_ints(handlers["basic_block_id"], "basic_block_id", -1, MAX_BLOCK_WORD), h_type=handlers["type"],
        instructions={g: text for g, text in t.instructions.items() if text},
    )
