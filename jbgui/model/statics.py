"""static.xml as columnar arrays, indexed the way replay needs them.

Replay looks everything up by number: a block word's low 30 bits go through ``page_base`` to a
*global block index* (``gb``), blocks point to contiguous ranges of call sites and handlers, and
every call site carries its *kind* (can its callee be expected to start?) resolved once here
against the loaded classes. Strings (names, descriptors, lines) stay in Python lists, used only for
display.

The XML is read by :mod:`jbgui.model.format.static_xml` (validated there, one ``<class>`` at a
time), and the arrays are cached as one ``.npz`` so a second open does not parse again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.format.files import check_regular, show
from jbgui.model.format.static_xml import StaticColumns, metrics_table, read_static_columns

# Call-site kinds: what replay may expect of the callee.
SITE_DIRECT = 0    # invokestatic/invokespecial of an instrumented method: the callee starts
SITE_NATIVE = 1    # a native (or signature-polymorphic) method: it never starts
SITE_UNTRACED = 2  # a method that is not instrumented (filtered, intrinsic, unknown class)
SITE_VIRTUAL = 3   # invokevirtual/invokeinterface: usually starts, may dispatch to untraced code
SITE_DYNAMIC = 4   # invokedynamic: the linked target (a hidden class) or nothing traced

# Method flags.
M_NATIVE = 1
M_ABSTRACT = 2
M_INTRINSIC = 4
M_INSTRUMENTED = 8      # start/end recorded (fully or method-only)
M_STATIC = 16
M_HIDDEN_CLASS = 32     # declared by a hidden class (lambda proxies): matches invokedynamic sites
M_IMPLICIT_ONLY = 64    # never called from a call site (<clinit>)
M_JDK = 128

CACHE_VERSION = 5      # 5: s_blocking, b_monitor


@dataclass
class Statics:
    """Columnar static information. Index conventions:

    - methods by method id (``0`` unused); ``m_*`` arrays have ``max_method_id + 1`` entries;
    - blocks by global block index ``gb``; ``page_base[page_id] + index_in_page`` gives it;
    - call sites and handlers by their global index, contiguous per block.
    """

    # classes (by class id)
    c_name: list[str]
    c_loader: list[str]
    c_super: list[str]
    c_source: list[str]        # SourceFile attribute ('' when the class has none)
    c_jdk: np.ndarray
    c_hidden: np.ndarray
    c_instrumented: np.ndarray
    # methods (by method id)
    m_class: np.ndarray
    m_flags: np.ndarray
    m_key: np.ndarray          # interned name+descriptor, to match callees against call sites
    m_blocks: np.ndarray
    m_block_base: np.ndarray   # gb of block 0 (-1 without blocks)
    m_name: list[str]
    m_desc: list[str]
    page_base: np.ndarray      # page id -> gb of the page's block 0 (-1: not a block page)
    # blocks (by gb)
    b_method: np.ndarray
    b_index: np.ndarray
    b_start: np.ndarray
    b_end: np.ndarray
    b_metrics: np.ndarray      # (blocks, 19) int32, in layout.METRIC_NAMES order
    b_site_begin: np.ndarray   # call sites of block gb: site_begin[gb] .. site_begin[gb+1]
    b_handler_begin: np.ndarray
    b_is_handler: np.ndarray   # the block is a handler entry
    b_monitor: np.ndarray      # its call sites before its monitorenter (-1: it has none; monitorenter=)
    b_lines: list[str]
    # call sites
    s_block: np.ndarray
    s_offset: np.ndarray
    s_kind: np.ndarray
    s_key: np.ndarray
    s_target: np.ndarray       # resolved method id, 0 when unknown
    s_opcode: np.ndarray       # 0 virtual 1 special 2 static 3 interface 4 dynamic
    s_blocking: np.ndarray     # the recorder stamps the clock around the call (blocking="true")
    s_call: list[str]
    # exception handlers
    h_block: np.ndarray        # the covering block
    h_target: np.ndarray       # gb of the handler block (-1 unknown)
    h_catch_all: np.ndarray
    h_type: list[str]
    # instruction listings (optional): gb -> text
    instructions: dict[int, str]
    problems: list[str]

    # -------------------------------------------------------------- derived lookups

    @property
    def n_blocks(self) -> int:
        return len(self.b_method)

    @property
    def n_sites(self) -> int:
        return len(self.s_block)

    @property
    def max_method_id(self) -> int:
        return len(self.m_class) - 1

    def b_bytecodes(self) -> np.ndarray:
        return self.b_metrics[:, 0]

    def class_name_of_id(self, class_id: int) -> str:
        if 0 < class_id < len(self.c_name) and self.c_name[class_id]:
            return self.c_name[class_id].replace("/", ".")
        return "?" if class_id == 0 else f"<class {class_id}>"

    def class_of_method(self, method_id: int) -> str:
        """Internal name (``pkg/Cls``) of the method's class."""
        if 0 < method_id < len(self.m_class):
            return self.c_name[int(self.m_class[method_id])] or ""
        return ""

    def method_qualified(self, method_id: int) -> str:
        """``pkg.Cls.name(desc)ret`` for a method id ('' for 0 or unknown ids)."""
        if not 0 < method_id < len(self.m_name) or not self.m_name[method_id]:
            return ""
        return f"{self.class_of_method(method_id).replace('/', '.')}.{self.m_name[method_id]}{self.m_desc[method_id]}"

    def site_qualified(self, site: int) -> str:
        """A call site's target as ``pkg.Cls.name(desc)``."""
        if not 0 <= site < len(self.s_call):
            return f"<call site {site}>"
        owner, _, rest = self.s_call[site].partition(":")
        paren = rest.find("(")
        name, desc = (rest[:paren], rest[paren:]) if paren >= 0 else (rest, "")
        return f"{owner.replace('/', '.')}.{name}{desc}" if owner else f"<invokedynamic>.{name}{desc}"

    def block_sites(self, gb: int) -> range:
        return range(int(self.b_site_begin[gb]), int(self.b_site_begin[gb + 1]))

    def block_handlers(self, gb: int) -> range:
        return range(int(self.b_handler_begin[gb]), int(self.b_handler_begin[gb + 1]))

    def method_blocks(self, method_id: int) -> range:
        base = int(self.m_block_base[method_id])
        return range(base, base + int(self.m_blocks[method_id])) if base >= 0 else range(0)

    def block_of_word(self, word_low30: int) -> int:
        page, index = word_low30 >> layout.BLOCK_BITS, word_low30 & layout.BLOCK_MASK
        if not 0 < page < len(self.page_base) or self.page_base[page] < 0:
            return -1
        base = int(self.page_base[page])
        gb = base + index
        # An index beyond the blocks of the page's method names no block (not its neighbour's).
        if gb >= self.n_blocks or self.b_method[gb] != self.b_method[base]:
            return -1
        return gb

    def find_methods(self, class_name: str, name: str, desc: str | None = None) -> list[int]:
        """Method ids by class (internal or dotted name), method name and optional descriptor."""
        class_name = class_name.replace(".", "/")
        return [mid for mid in range(1, len(self.m_name))
                if self.m_name[mid] == name and (desc is None or self.m_desc[mid] == desc)
                and self.class_of_method(mid) == class_name]


# ---------------------------------------------------------------------- loading

_OPCODES = {"INVOKEVIRTUAL": 0, "INVOKESPECIAL": 1, "INVOKESTATIC": 2, "INVOKEINTERFACE": 3, "INVOKEDYNAMIC": 4}


def load_statics(trace_path: Path, cache_dir: Path | None = None) -> Statics:
    """static.xml of a trace directory, from the cache in ``cache_dir`` when it is current."""
    xml = Path(trace_path) / "static.xml"
    try:
        st = check_regular(xml)
    except FileNotFoundError as error:
        raise TraceError(f"{show(xml)}: missing; this trace has no static information") from error
    stamp = f"{CACHE_VERSION}:{st.st_size}:{st.st_mtime_ns}"
    cached = cache_dir / "statics.npz.zst" if cache_dir is not None else None
    if cached is not None and cached.exists():
        try:
            return _from_npz(cached, stamp)
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            pass  # stale or damaged (CacheDamaged is a ValueError's sibling: see _from_npz): parse again
    statics = _parse(xml)
    if cached is not None:
        # Written before returning (0.1-0.2 s on javac): on a thread beside the replay it raced
        # `jbtrace cache --size` and a second open of the same trace.
        _save_quietly(statics, cached, stamp)
    return statics


def _save_quietly(statics: Statics, path: Path, stamp: str) -> None:
    try:
        _to_npz(statics, path, stamp)
    except (OSError, ValueError):
        pass  # a read-only place (or one that is not a directory): no cache, same results


def _parse(xml: Path) -> Statics:
    return _build(read_static_columns(xml))


def _build(cols: StaticColumns) -> Statics:
    problems = cols.problems
    c_id = np.asarray(cols.c_id, np.int64)
    m_cls = np.asarray(cols.m_class, np.int64)
    # Class ids are dense (the recorder counts them from 1): an id far beyond the number of
    # classes would only make every per-class table huge, so such classes are left out.
    limit = 4 * len(c_id) + 65536
    far = c_id > limit
    keep_m = m_cls <= limit
    if far.any():
        problems.append(f"static.xml: {int(far.sum())} classes left out, malformed: ids far beyond the {len(c_id)} "
                        f"classes (the first: {int(c_id[far].min())})")
    n_classes = int(c_id[~far].max()) + 1 if (~far).any() else 1
    c_name = [""] * n_classes
    c_loader = [""] * n_classes
    c_super = [""] * n_classes
    c_source = [""] * n_classes
    c_jdk = np.zeros(n_classes, np.bool_)
    c_hidden = np.zeros(n_classes, np.bool_)
    c_instr = np.zeros(n_classes, np.bool_)
    c_ids = c_id.tolist()
    for i in np.flatnonzero(~far).tolist():
        cid = c_ids[i]
        c_name[cid], c_loader[cid], c_super[cid], c_source[cid] = \
            cols.c_name[i], cols.c_loader[i], cols.c_super[i], cols.c_source[i]
    kept = c_id[~far]
    c_jdk[kept] = np.asarray(cols.c_jdk, np.bool_)[~far]
    c_hidden[kept] = np.asarray(cols.c_hidden, np.bool_)[~far]
    c_instr[kept] = np.asarray(cols.c_instrumented, np.bool_)[~far]

    # Methods, in file order (those of classes left out dropped).
    mpos = np.flatnonzero(keep_m)
    mid = np.asarray(cols.m_id, np.int64)[mpos]
    mcls = m_cls[mpos]
    pages = np.asarray(cols.m_pages, np.int64)[mpos]
    nblocks = np.asarray(cols.m_blocks, np.int64)[mpos]
    n_m = int((mid + np.maximum(pages, 1) - 1).max()) + 1 if len(mid) else 1
    flags = np.zeros(len(mid), np.int32)
    for column, bit in ((cols.m_native, M_NATIVE), (cols.m_abstract, M_ABSTRACT), (cols.m_intrinsic, M_INTRINSIC),
                        (cols.m_instrumented, M_INSTRUMENTED), (cols.m_static, M_STATIC)):
        flags |= np.array(column, np.bool_)[mpos].astype(np.int32) * bit
    flags |= c_hidden[mcls].astype(np.int32) * M_HIDDEN_CLASS
    flags |= c_jdk[mcls].astype(np.int32) * M_JDK
    names = _take(cols.m_name, mpos)
    descs = _take(cols.m_desc, mpos)
    flags |= np.array([n == "<clinit>" for n in names], np.bool_).astype(np.int32) * M_IMPLICIT_ONLY
    m_class = np.zeros(n_m, np.int32)
    m_flags = np.zeros(n_m, np.int32)
    m_key = np.full(n_m, -1, np.int32)
    m_blocks = np.zeros(n_m, np.int32)
    m_block_base = np.full(n_m, -1, np.int64)
    page_base = np.full(n_m, -1, np.int64)
    m_name = [""] * n_m
    m_desc = [""] * n_m
    keys: dict[str, int] = {}
    m_class[mid] = mcls
    m_flags[mid] = flags
    m_key[mid] = [keys.setdefault(n + d, len(keys)) for n, d in zip(names, descs)]
    for m, n, d in zip(mid.tolist(), names, descs):
        m_name[m], m_desc[m] = n, d

    # Blocks: methods with blocks, in file order, each method's blocks in index order.
    with_blocks = nblocks > 0
    base = np.cumsum(nblocks) - nblocks                      # gb of each method's block 0
    m_blocks[mid[with_blocks]] = nblocks[with_blocks]
    m_block_base[mid[with_blocks]] = base[with_blocks]
    page_count = np.where(with_blocks, np.maximum(pages, 1), 0)
    page_of = np.repeat(np.arange(len(mid)), page_count)
    page_in = np.arange(len(page_of)) - np.repeat(np.cumsum(page_count) - page_count, page_count)
    page_base[mid[page_of] + page_in] = base[page_of] + page_in * layout.BLOCKS_PER_PAGE

    # Block positions in the columns -> gb (blocks of methods left out have none).
    b_col_method = np.asarray(cols.b_method, np.int64)
    col_to_kept = np.full(len(cols.m_id) + 1, -1, np.int64)
    col_to_kept[mpos] = np.arange(len(mpos))
    b_owner = col_to_kept[b_col_method] if len(b_col_method) else b_col_method
    b_keep = b_owner >= 0
    b_pos = np.flatnonzero(b_keep)
    gb_of_col = np.full(len(b_col_method) + 1, -1, np.int64)
    gb_of_col[b_pos] = np.arange(len(b_pos))
    b_mk = b_owner[b_pos]                                     # kept method of each block
    b_index = np.arange(len(b_pos)) - base[b_mk] if len(b_pos) else np.zeros(0, np.int64)
    b_method = mid[b_mk]
    n_b = len(b_pos)
    words = ((b_method + b_index // layout.BLOCKS_PER_PAGE) << layout.BLOCK_BITS) | (b_index % layout.BLOCKS_PER_PAGE)

    def kept_rows(column_blocks: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Rows of a child column whose block is kept, and that block's gb."""
        g = gb_of_col[np.asarray(column_blocks, np.int64)] if len(column_blocks) else np.zeros(0, np.int64)
        rows = np.flatnonzero(g >= 0)
        return rows, g[rows]

    s_rows, s_block = kept_rows(cols.s_block)
    h_rows, h_block = kept_rows(cols.h_block)
    b_site_begin = np.searchsorted(s_block, np.arange(n_b + 1)).astype(np.int64)
    b_handler_begin = np.searchsorted(h_block, np.arange(n_b + 1)).astype(np.int64)
    h_word = np.asarray(cols.h_word, np.int64)[h_rows]
    order = np.argsort(words, kind="stable")
    at = np.searchsorted(words[order], h_word)
    found = at < n_b
    found[found] = words[order][at[found]] == h_word[found]
    h_target = np.where(found, order[np.minimum(at, max(n_b - 1, 0))], -1).astype(np.int64) if n_b \
        else np.full(len(h_word), -1, np.int64)
    b_is_handler = np.zeros(n_b + 1, np.bool_)
    b_is_handler[h_target[h_target >= 0]] = True
    s_type = _take(cols.s_type, s_rows)
    h_type = _take(cols.h_type, h_rows)

    statics = Statics(
        c_name=c_name, c_loader=c_loader, c_super=c_super, c_source=c_source, c_jdk=c_jdk, c_hidden=c_hidden,
        c_instrumented=c_instr,
        m_class=m_class, m_flags=m_flags, m_key=m_key, m_blocks=m_blocks, m_block_base=m_block_base,
        m_name=m_name, m_desc=m_desc, page_base=page_base,
        b_method=b_method.astype(np.int32), b_index=b_index.astype(np.int32),
        b_start=np.asarray(cols.b_start, np.int32)[b_pos], b_end=np.asarray(cols.b_end, np.int32)[b_pos],
        b_metrics=metrics_table(_take(cols.b_metrics, b_pos), problems),
        b_site_begin=b_site_begin, b_handler_begin=b_handler_begin,
        b_is_handler=b_is_handler[:n_b], b_lines=_take(cols.b_lines, b_pos),
        b_monitor=np.minimum(np.asarray(cols.b_monitor, np.int64).reshape(-1)[b_pos], np.diff(b_site_begin)).astype(np.int32),
        s_block=s_block, s_offset=np.asarray(cols.s_offset, np.int32)[s_rows],
        s_kind=np.zeros(len(s_rows), np.int8), s_key=np.full(len(s_rows), -2, np.int32),
        s_target=np.zeros(len(s_rows), np.int32),
        s_opcode=np.array([_OPCODES.get(t, 0) for t in s_type], np.int8), s_call=_take(cols.s_call, s_rows),
        s_blocking=np.asarray(cols.s_blocking, np.bool_).reshape(-1)[s_rows],
        h_block=h_block, h_target=h_target,
        h_catch_all=np.array([not t for t in h_type], np.bool_), h_type=[t or "" for t in h_type],
        instructions={int(gb_of_col[g]): text for g, text in cols.instructions.items() if gb_of_col[g] >= 0},
        problems=problems,
    )
    _resolve_sites(statics, keys)
    return statics


def _take(values: list, rows: np.ndarray) -> list:
    """``values`` at ``rows`` (ascending): the list itself when no row was left out."""
    if len(rows) == len(values):
        return values
    return [values[i] for i in rows.tolist()]


def _resolve_sites(st: Statics, keys: dict[str, int]) -> None:
    """Give every call site its callee key, target method and kind."""
    by_class_name: dict[str, list[int]] = {}
    for cid, name in enumerate(st.c_name):
        if name:
            by_class_name.setdefault(name, []).append(cid)
    m_class = st.m_class.tolist()
    declared = {(m_class[mid], name + st.m_desc[mid]): mid for mid, name in enumerate(st.m_name) if mid and name}

    def lookup(owner: str, key: str) -> int:
        """The method a call resolves to: declared in owner or inherited from a superclass."""
        seen = 0
        while owner and seen < 64:
            for cid in by_class_name.get(owner, ()):
                mid = declared.get((cid, key))
                if mid is not None:
                    return mid
            cids = by_class_name.get(owner)
            owner = st.c_super[cids[0]] if cids else ""
            seen += 1
        return 0

    # Sites share their calls (a class calls the same few methods many times): each distinct
    # (call, opcode) is resolved once, and the sites take its answer by index.
    numbered: dict[str, int] = {}
    call_no = np.array([numbered.setdefault(call, len(numbered)) for call in st.s_call], np.int64)
    calls = list(numbered)
    distinct, which = np.unique(call_no * 8 + st.s_opcode.astype(np.int64), return_inverse=True)
    kind = np.zeros(len(distinct), np.int8)
    target = np.zeros(len(distinct), np.int32)
    key_of = np.full(len(distinct), -1, np.int32)
    for i, code in enumerate(distinct.tolist()):
        call, op = calls[code >> 3], code & 7
        owner, _, key = call.partition(":")
        key_of[i] = keys.get(key, -1)
        kind[i], target[i] = _site_kind(st, owner, key, op, lookup)
    if len(which):
        st.s_key[:], st.s_kind[:], st.s_target[:] = key_of[which], kind[which], target[which]


def _site_kind(st: Statics, owner: str, key: str, op: int, lookup) -> tuple[int, int]:
    if op == 4:
        return SITE_DYNAMIC, 0
    if owner in ("java/lang/invoke/MethodHandle", "java/lang/invoke/VarHandle") and not lookup(owner, key):
        # A signature-polymorphic call: its descriptor is the call's, not the declaration's. These
        # methods are declared native; the JVM links them to LambdaForm code.
        return SITE_NATIVE, 0
    mid = lookup(owner, key)
    if not mid:
        return (SITE_VIRTUAL if op in (0, 3) else SITE_UNTRACED), 0
    flags = int(st.m_flags[mid])
    if flags & M_NATIVE:
        return SITE_NATIVE, mid
    if flags & M_ABSTRACT:
        return SITE_VIRTUAL, mid
    if not flags & M_INSTRUMENTED:
        return (SITE_VIRTUAL if op in (0, 3) and not flags & M_INTRINSIC else SITE_UNTRACED), mid
    return (SITE_VIRTUAL if op in (0, 3) else SITE_DIRECT), mid


# ---------------------------------------------------------------------- cache

_ARRAYS = ("c_jdk", "c_hidden", "c_instrumented", "m_class", "m_flags", "m_key", "m_blocks", "m_block_base",
           "page_base", "b_method", "b_index", "b_start", "b_end", "b_metrics", "b_site_begin",
           "b_handler_begin", "b_is_handler", "b_monitor", "s_block", "s_offset", "s_kind", "s_key", "s_target",
           "s_opcode", "s_blocking", "h_block", "h_target", "h_catch_all")
_STRINGS = ("c_name", "c_loader", "c_super", "c_source", "m_name", "m_desc", "b_lines", "s_call", "h_type")


def _to_npz(st: Statics, path: Path, stamp: str) -> None:
    arrays = {name: getattr(st, name) for name in _ARRAYS}
    for name in _STRINGS:
        arrays[name] = np.frombuffer("\n".join(getattr(st, name)).encode("utf-8"), np.uint8)
    keys = np.array(sorted(st.instructions), np.int64)
    arrays["instr_keys"] = keys
    arrays["instr_text"] = np.frombuffer("\0".join(st.instructions[k] for k in keys).encode("utf-8"), np.uint8)
    arrays["problems"] = np.frombuffer("\n".join(st.problems).encode("utf-8"), np.uint8)
    arrays["stamp"] = np.frombuffer(stamp.encode(), np.uint8)
    from jbgui.model import store  # zstd-compressed, checksummed (the analysis store's array files)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.parent.is_dir() or path.parent.is_symlink():
        raise OSError(f"{path.parent}: not a directory jbgui made")
    store.save_arrays(path, arrays)


def _from_npz(path: Path, stamp: str) -> Statics:
    from jbgui.model import store
    try:
        data = store.load_arrays(path)
    except store.CacheDamaged as error:
        raise ValueError(str(error)) from error
    if bytes(data["stamp"]).decode() != stamp:
        raise ValueError("stale")
    kwargs = {name: data[name] for name in _ARRAYS}
    lengths = {"c_name": len(kwargs["c_jdk"]), "c_loader": len(kwargs["c_jdk"]), "c_super": len(kwargs["c_jdk"]),
               "c_source": len(kwargs["c_jdk"]),
               "m_name": len(kwargs["m_class"]), "m_desc": len(kwargs["m_class"]),
               "b_lines": len(kwargs["b_method"]), "s_call": len(kwargs["s_block"]),
               "h_type": len(kwargs["h_block"])}
    for name in _STRINGS:
        parts = bytes(data[name]).decode("utf-8").split("\n")
        if len(parts) != max(lengths[name], 1):
            raise ValueError(f"{name}: {len(parts)} strings for {lengths[name]} entries")
        kwargs[name] = parts[:lengths[name]]
    keys = data["instr_keys"]
    texts = bytes(data["instr_text"]).decode("utf-8").split("\0") if len(keys) else []
    kwargs["instructions"] = dict(zip(keys.tolist(), texts))
    problems = bytes(data["problems"]).decode("utf-8")
    kwargs["problems"] = problems.split("\n") if problems else []
    return Statics(**kwargs)
