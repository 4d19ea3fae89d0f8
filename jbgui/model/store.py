"""The analysis store's on-disk pieces: call columns as zstd-compressed chunks, small array files,
and the checks that keep a damaged cache from ever being read into a crash.

**Call columns.** Each column of a thread's call table is one file ``NAME.zst``: a sequence of
independent zstd frames (content checksums on), one per block of rows the replay flushed (about
256 K rows), so any block decodes alone. Before compression a few columns are transformed into
small, repetitive numbers that compress far better: ``first`` and ``depth`` as the difference
from the previous row's (within the block), ``last`` as ``last - first``, ``incl_bytecodes`` as the call's own
bytecodes (its inclusive count less its callees', computed within the block: a call that ended
before its block was written has all its callees there). ``parent`` and ``end`` are not stored:
rows are in preorder, so one pass over ``depth`` gives both (:func:`_tree_from_depth`), and one
reverse pass rebuilds the inclusive counts. ``caller_block`` and ``flags`` are stored as the
difference from the previous row's of the same call site (:data:`BY_SITE`). Replay learns some fields of a row only after the row's block was flushed (a
frame still open at the flush); those values are kept as *patches* (row, column, value), applied
after decoding. Each block is then packed (:func:`pack`): narrowed to the fewest bytes its values
need, and for some columns laid out as byte planes. On javac's trace of a billion events these
made the store 2.7 times smaller (the own bytecodes 12 times, flags 20 times) and its blocks
faster to read overall (``benchmarks/bench_store.py``).

**Small arrays** (exceptions, block counts, totals, the derived arrays, the static tables) are one
``.npz`` payload compressed with zstd behind a header that names the format and carries the
payload's size and CRC-32.

**Checks.** Every file's size and CRC-32 are recorded when written (``file_record``) and compared
when the cache is opened (``verify_files``), about 50 ms per 100 MB; decoded blocks are checked for
length, and the tree columns for range, before anyone indexes with them. Anything wrong raises
:class:`CacheDamaged`, which the analyzer answers by replaying again, with a note.
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np
import zstandard

from jbgui.model.errors import TraceError

LEVEL = 1                       # zstd level: 3 saves ~10% more and costs twice the time
ARRAYS_MAGIC = b"JBGUIARR"
ARRAYS_VERSION = 2              # 2: integer arrays packed
PACK_ARRAYS_FROM = 1024         # elements: smaller arrays are not worth the step
_PACKED = "__packed__"          # the array file's record of which arrays are packed, as JSON
_PLANES_ANY = "*"               # pack()'s name for an array of a file, always as planes
_HEADER = struct.Struct("<8sIQI")   # magic, version, payload size, payload CRC-32
MAX_ARRAYS_BYTES = 1 << 33          # a header claiming more than this is damage, not data

# Column transforms (see the module docstring).
DELTA_FIRST = ("first", "depth")
SPAN_LAST = ("last",)
ROW_MINUS = ("parent",)
MINUS_ROW = ("end",)
# Not stored at all: derived from depth.
DERIVED = ("parent", "end")
# Stored as the call's own count (small numbers), the inclusive count rebuilt by one pass.
OWN_COUNT = ("incl_bytecodes",)
# Stored as the difference from the value of the row before with the same call site (within the
# block; the first row of each site has its value): a call site lies in one block of its method,
# so the caller's block repeats with the site, and so mostly do the kind of call and how it
# ended (flags): the differences are zeros (measured on javac's trace: flags 12x smaller,
# caller_block 3x).
BY_SITE = ("caller_block", "flags")
# The column each transformed column is decoded against.
REFERENCE = {"last": "first", "caller_block": "call_site", "flags": "call_site"}
MAX_SITE = 1 << 28      # a call-site id above this is damage (the static listing is far smaller)
# Stored as byte planes (see :func:`pack`): the columns whose transformed values are small
# numbers that vary from row to row; for the others (method, call site, flags) a value's bytes
# together repeat better than its planes (measured on javac's trace: planes made call_site 2x
# bigger, and incl_bytecodes 13x smaller).
PLANES = ("first", "last", "depth", "incl_bytecodes", "incl_blocks")
_WIDTHS = (1, 2, 4, 8)
_PLANES_BIT = 0x10


class CacheDamaged(TraceError):
    """A cache file is missing, truncated, of the wrong size or checksum, or holds values that
    cannot be: the cache must be rebuilt."""


# ---------------------------------------------------------------- file records

def crc_of(path: Path) -> int:
    """CRC-32 of a file, read in pieces."""
    crc = 0
    with open(path, "rb") as f:
        while True:
            piece = f.read(1 << 22)
            if not piece:
                return crc
            crc = zlib.crc32(piece, crc)


def file_record(path: Path) -> dict:
    """What :func:`verify_files` checks a file against later."""
    return {"size": path.stat().st_size, "crc": crc_of(path)}


def verify_files(directory: Path, records: dict) -> None:
    """Raise :class:`CacheDamaged` unless every recorded file is a regular file of its recorded
    size and CRC-32."""
    if not isinstance(records, dict):
        raise CacheDamaged("no file records")
    for name, rec in records.items():
        if not (isinstance(name, str) and "/" not in name and name not in ("", ".", "..")
                and isinstance(rec, dict) and isinstance(rec.get("size"), int) and isinstance(rec.get("crc"), int)):
            raise CacheDamaged(f"a file record of the wrong shape ({name!r})")
        path = directory / name
        try:
            st = os.lstat(path)
        except OSError as error:
            raise CacheDamaged(f"{path}: {error.strerror or error}") from error
        if not _is_regular(st.st_mode):
            raise CacheDamaged(f"{path}: not a regular file")
        if st.st_size != rec["size"]:
            raise CacheDamaged(f"{path}: {st.st_size} bytes, {rec['size']} written")
        if crc_of(path) != rec["crc"]:
            raise CacheDamaged(f"{path}: checksum differs from the one written")


def _is_regular(mode: int) -> bool:
    import stat
    return stat.S_ISREG(mode)


# ---------------------------------------------------------------- small arrays

def save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``arrays`` as one zstd-compressed ``.npz`` payload with a checked header, written to a
    temporary name and renamed into place. Integer arrays of some size are stored packed
    (:func:`pack`, as byte planes): a calling-context tree's counts and parents are small numbers
    in wide types, which zstd alone leaves three times bigger."""
    buf = io.BytesIO()
    packed, plain = {}, {}
    for name, values in arrays.items():
        values = np.asarray(values)
        if (values.size >= PACK_ARRAYS_FROM and values.dtype.kind in "iu" and values.dtype.itemsize > 1
                and (values.dtype.kind == "i" or int(values.max()) < (1 << 63))):
            flat = values.reshape(-1).astype(np.int64, copy=False)
            # a sorted array (rows, first events of a level of detail) as its steps
            steps = np.diff(flat)
            delta = bool(len(steps) and steps.min() >= 0 and flat[-1] - flat[0] >= 0)
            if delta:
                flat = np.concatenate([flat[:1], steps])
            packed[name] = [values.dtype.str, list(values.shape), delta]
            plain[name] = np.frombuffer(pack(_PLANES_ANY, flat), np.uint8)
        else:
            plain[name] = values
    if packed:
        plain[_PACKED] = np.array(json.dumps(packed))
    np.savez(buf, **plain)
    payload = zstandard.ZstdCompressor(level=3, write_checksum=True).compress(buf.getvalue())
    _write_replacing(path, [_HEADER.pack(ARRAYS_MAGIC, ARRAYS_VERSION, len(payload), zlib.crc32(payload)), payload])


def _write_replacing(path: Path, parts) -> None:
    """``parts`` (bytes) written to a temporary name beside ``path`` and renamed over it: a reader
    sees the old file or the whole new one, never half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "xb") as f:
            for part in parts:
                f.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_arrays(path: Path, keys: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The arrays :func:`save_arrays` wrote; :class:`CacheDamaged` for anything else."""
    try:
        with open(path, "rb", opener=_nofollow) as f:
            header = f.read(_HEADER.size)
            if len(header) != _HEADER.size:
                raise CacheDamaged(f"{path}: truncated")
            magic, version, size, crc = _HEADER.unpack(header)
            if magic != ARRAYS_MAGIC or version != ARRAYS_VERSION or size > MAX_ARRAYS_BYTES:
                raise CacheDamaged(f"{path}: not an array file of this version")
            payload = f.read(size + 1)
    except OSError as error:
        raise CacheDamaged(f"{path}: {error.strerror or error}") from error
    if len(payload) != size or zlib.crc32(payload) != crc:
        raise CacheDamaged(f"{path}: truncated or altered")
    try:
        raw = zstandard.ZstdDecompressor().decompress(payload)
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            packed = json.loads(str(data[_PACKED])) if _PACKED in data.files else {}
            names = [k for k in data.files if k != _PACKED] if keys is None else keys
            return {k: _unpack_array(data[k], *packed[k]) if k in packed else data[k] for k in names}
    except (zstandard.ZstdError, ValueError, KeyError, OSError, EOFError, TypeError) as error:
        raise CacheDamaged(f"{path}: {error}") from error


# ---------------------------------------------------------------- column files

COLUMNS_MAGIC = b"JBGUICOL"
COLUMNS_VERSION = 1
COLUMN_CHUNK = 1 << 20          # values per frame: frames decode on both cores at once
_COLUMNS_HEADER = struct.Struct("<8sIQII")  # magic, version, index size, CRC-32 of the index, of the frames
MAX_INDEX_BYTES = 1 << 26


def save_columns(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """One-dimensional integer ``arrays`` in one file of independent zstd frames of
    :data:`COLUMN_CHUNK` packed values each (:func:`pack`, byte planes; a sorted array's frames
    as steps), behind a checked index: what :func:`save_arrays` keeps, for arrays of millions of
    values that :func:`load_columns` must read fast (frames decode on several threads, and no
    archive is unpacked first). Written to a temporary name and renamed into place."""
    index, jobs = {}, []
    for name, values in arrays.items():
        values = np.asarray(values)
        if values.ndim != 1 or values.dtype.kind not in "iu" or (values.dtype.kind == "u" and values.dtype.itemsize == 8):
            raise ValueError(f"{name}: a column file holds one-dimensional integer arrays (not {values.dtype} {values.shape})")
        flat = values.astype(np.int64, copy=False)
        delta = bool(len(flat) > 1 and np.all(flat[1:] >= flat[:-1]))
        index[name] = {"dtype": values.dtype.str, "rows": len(flat), "delta": delta, "frames": []}
        jobs += [(name, flat, lo, delta) for lo in range(0, len(flat), COLUMN_CHUNK)]

    def frame(job) -> bytes:
        _name, flat, lo, delta = job
        chunk = flat[lo:lo + COLUMN_CHUNK]
        if delta:
            chunk = np.concatenate([chunk[:1], np.diff(chunk)])
        # a compressor per frame: one is not to be shared between threads
        return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(pack(_PLANES_ANY, chunk))

    # frames are compressed on two threads (zstd and the packing kernel release the GIL)
    with ThreadPoolExecutor(2) as pool:
        frames = list(pool.map(frame, jobs))
    for (name, flat, lo, _delta), data in zip(jobs, frames):
        index[name]["frames"].append([min(COLUMN_CHUNK, len(flat) - lo), len(data)])
    body = json.dumps(index).encode()
    crc = 0
    for frame in frames:
        crc = zlib.crc32(frame, crc)
    _write_replacing(path, [_COLUMNS_HEADER.pack(COLUMNS_MAGIC, COLUMNS_VERSION, len(body), zlib.crc32(body), crc),
                            body, *frames])


class ColumnFile:
    """A file :func:`save_columns` wrote, its index and checksums checked when opened; arrays are
    decoded when asked for (:meth:`read`), each frame on its own (several on ``workers`` threads), into arrays
    the caller may give. :class:`CacheDamaged` for anything that is not such a file."""

    def __init__(self, path: Path):
        self.path = path
        try:
            with open(path, "rb", opener=_nofollow) as f:
                self.data = f.read()
        except OSError as error:
            raise CacheDamaged(f"{path}: {error.strerror or error}") from error
        data = self.data
        if len(data) < _COLUMNS_HEADER.size:
            raise CacheDamaged(f"{path}: truncated")
        magic, version, size, crc, frames_crc = _COLUMNS_HEADER.unpack_from(data)
        if magic != COLUMNS_MAGIC or version != COLUMNS_VERSION or size > MAX_INDEX_BYTES:
            raise CacheDamaged(f"{path}: not a column file of this version")
        body = data[_COLUMNS_HEADER.size:_COLUMNS_HEADER.size + size]
        if len(body) != size or zlib.crc32(body) != crc:
            raise CacheDamaged(f"{path}: index truncated or altered")
        # the frames are decoded when asked for, perhaps much later: damage is found now (about
        # 30 ms for 30 MB), so that a reader never meets it half-way
        if zlib.crc32(memoryview(data)[_COLUMNS_HEADER.size + size:]) != frames_crc:
            raise CacheDamaged(f"{path}: truncated or altered")
        self.arrays: dict[str, tuple[np.dtype, int, bool, list[tuple[int, int, int, int]]]] = {}
        try:
            index = json.loads(body)
            at = _COLUMNS_HEADER.size + size
            for name, entry in index.items():
                dtype, rows = np.dtype(entry["dtype"]), int(entry["rows"])
                if dtype.kind not in "iu" or not 0 <= rows <= MAX_ARRAYS_BYTES // 8:
                    raise ValueError(f"an array of type {dtype} and {rows} rows")
                frames, lo = [], 0
                for n_rows, n_bytes in entry["frames"]:
                    n_rows, n_bytes = int(n_rows), int(n_bytes)
                    if n_rows <= 0 or lo + n_rows > rows or n_bytes <= 0:
                        raise ValueError(f"{name}: a frame of {n_rows} rows at row {lo}")
                    frames.append((lo, n_rows, at, n_bytes))
                    lo += n_rows
                    at += n_bytes
                if lo != rows:
                    raise ValueError(f"{name}: frames of {lo} rows for {rows}")
                self.arrays[name] = (dtype, rows, bool(entry["delta"]), frames)
            if at != len(data):
                raise ValueError(f"{len(data) - at} bytes after the frames")
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            raise CacheDamaged(f"{path}: {error}") from error

    def rows(self, name: str) -> int:
        return self.arrays[name][1]

    def read(self, names, out: dict[str, np.ndarray] | None = None, workers: int = 2) -> dict[str, np.ndarray]:
        """The arrays ``names``, each into ``out[name]`` when given (an array, or a view such as
        a column of a larger table, of the array's length), else a new array of its stored type."""
        got, jobs = {}, []
        for name in names:
            if name not in self.arrays:
                raise CacheDamaged(f"{self.path}: no array {name!r}")
            dtype, rows, delta, frames = self.arrays[name]
            values = got[name] = (out or {}).get(name)
            if values is None:
                values = got[name] = np.empty(rows, dtype)
            elif len(values) != rows:
                raise ValueError(f"{name}: {rows} rows into {len(values)}")
            jobs.extend((values, delta, frame) for frame in frames)

        def decode(job) -> None:
            values, delta, (lo, n_rows, at, n_bytes) = job
            raw = zstandard.ZstdDecompressor().decompress(self.data[at:at + n_bytes], max_output_size=1 + 8 * n_rows)
            unpacked = unpack(raw, n_rows, 8)
            if delta:
                _cumsum_into(unpacked, values[lo:lo + n_rows])
            else:
                values[lo:lo + n_rows] = unpacked
        try:
            if workers > 1 and len(jobs) > 1:
                with ThreadPoolExecutor(workers) as pool:
                    list(pool.map(decode, jobs))
            else:
                for job in jobs:
                    decode(job)
        except (zstandard.ZstdError, ValueError) as error:
            raise CacheDamaged(f"{self.path}: {error}") from error
        return got


def load_columns(path: Path, workers: int = 2) -> dict[str, np.ndarray]:
    """Every array :func:`save_columns` wrote (see :class:`ColumnFile`)."""
    f = ColumnFile(path)
    return f.read(list(f.arrays), workers=workers)


def _unpack_array(raw: np.ndarray, dtype: str, shape: list[int], delta: bool) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu" or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"a packed array of type {dtype} and shape {shape}")
    rows = int(np.prod(shape, dtype=np.int64))
    values = np.asarray(unpack(raw.tobytes(), rows, 8, small_by_numpy=True))
    if delta:
        values = np.cumsum(values, dtype=np.int64)
    return values.astype(dtype).reshape(shape)


def _nofollow(path, flags):
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))


# ---------------------------------------------------------------- call columns

@numba.njit(cache=True, nogil=True)
def _own_in_block(incl, parent, lo, out):  # pragma: no cover - numba
    for i in range(len(incl)):
        out[i] = incl[i]
    for c in range(len(incl)):
        p = parent[c] - lo
        if 0 <= p < len(incl):
            out[p] -= incl[c]


@numba.njit(cache=True, nogil=True)
def _inclusive(own, parent, patch_rows, patch_values, out):  # pragma: no cover - numba
    """Inclusive counts from own counts, callees first (rows after their caller); a patched row
    takes its patched value (the final one) whatever its callees add up to."""
    n = len(own)
    if own is not out:
        for i in range(n):
            out[i] = own[i]
    k = len(patch_rows) - 1
    for r in range(n - 1, -1, -1):
        while k >= 0 and patch_rows[k] > r:
            k -= 1
        if k >= 0 and patch_rows[k] == r:
            out[r] = patch_values[k]
        p = parent[r]
        if 0 <= p < r:
            out[p] += out[r]


@numba.njit(cache=True, nogil=True)
def _by_site(values, site, out, encode):  # pragma: no cover - numba
    """Each row's value less (``encode``) or plus the value of the row before with the same call
    site; -1 (no site) is a site of its own. ``site`` must lie in [-1, MAX_SITE)."""
    top = 0
    for i in range(len(site)):
        if site[i] + 2 > top:
            top = site[i] + 2
    seen = np.zeros(top, np.bool_)
    last = np.empty(top, np.int64)     # read only where seen: not zeroed (sites run to millions)
    for i in range(len(values)):
        k = site[i] + 1
        if seen[k]:
            v = values[i] - last[k] if encode else values[i] + last[k]
        else:
            v = values[i]
            seen[k] = True
        out[i] = v
        last[k] = values[i] if encode else v


def _encode(name: str, values: np.ndarray, base_row: int, block: dict | None = None) -> np.ndarray:
    """The stored form of one block of a column (same dtype)."""
    if name in OWN_COUNT:
        out = np.empty_like(values)
        _own_in_block(values, block["parent"], base_row, out)
        return out
    if name in BY_SITE:
        out = np.empty_like(values)
        _by_site(values, block["call_site"], out, True)
        return out
    if name in DELTA_FIRST:
        out = np.empty_like(values)
        if len(values):
            out[0] = values[0]
            np.subtract(values[1:], values[:-1], out=out[1:])
        return out
    if name in ROW_MINUS or name in MINUS_ROW:
        rows = np.arange(base_row, base_row + len(values), dtype=np.int64)
        diff = rows - values if name in ROW_MINUS else values - rows
        return diff.astype(values.dtype)
    return values


def pack(name: str, values: np.ndarray) -> bytes:
    """One block of a column's (transformed) values as stored before compression: a byte naming
    the layout, then the values in the fewest bytes that hold every one of them (most blocks
    need one or two of the column's four or eight), as byte planes (every value's lowest byte,
    then every value's next one, ...) for the columns in :data:`PLANES`. zstd finds the runs of
    equal high bytes a plain array hides between the low ones."""
    values = np.asarray(values)
    lo, hi = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    code = next(k for k, w in enumerate(_WIDTHS) if -(1 << (8 * w - 1)) <= lo and hi < (1 << (8 * w - 1)))
    width = _WIDTHS[code]
    narrow = np.ascontiguousarray(values, f"<i{width}")
    if (name in PLANES or name == _PLANES_ANY) and width > 1:
        body = np.ascontiguousarray(narrow.view(np.uint8).reshape(-1, width).T).tobytes()
        return bytes([code | _PLANES_BIT]) + body
    return bytes([code]) + narrow.tobytes()


# Arrays of array files (save_arrays) up to this many rows are unpacked by numpy: five times
# slower per value than the kernel (19 against 4 ns), but the first numba kernel a process runs
# costs it about 0.4 s of numba's own start-up, which opening a trace need not pay (static.xml's
# arrays, 2.1 M rows at most on javac's 1 B-event trace). Column blocks always take the kernel.
NUMPY_PLANES_ROWS = 1 << 22


def unpack(raw: bytes, rows: int, itemsize: int, small_by_numpy: bool = False) -> np.ndarray:
    """The ``rows`` values :func:`pack` stored in ``raw`` (as int64, or narrower), for a column
    of ``itemsize`` bytes; :class:`ValueError` when the bytes cannot be such a block.
    ``small_by_numpy``: up to :data:`NUMPY_PLANES_ROWS` rows, without numba."""
    if not raw:
        raise ValueError("an empty block")
    header = raw[0]
    code, planes = header & 0x0F, bool(header & _PLANES_BIT)
    if header & ~(0x0F | _PLANES_BIT) or code >= len(_WIDTHS) or _WIDTHS[code] > itemsize:
        raise ValueError(f"a block of unknown layout {header:#x}")
    width = _WIDTHS[code]
    if len(raw) != 1 + rows * width:
        raise ValueError(f"{len(raw) - 1} bytes for {rows} values of {width}")
    if planes and width > 1:
        if small_by_numpy and rows <= NUMPY_PLANES_ROWS:
            lanes = np.frombuffer(raw, np.uint8, count=rows * width, offset=1).reshape(width, rows)
            return np.frombuffer(np.ascontiguousarray(lanes.T).tobytes(), f"<i{width}").astype(np.int64)
        out = np.empty(rows, np.int64)
        _from_planes(np.frombuffer(raw, np.uint8), width, rows, out)
        return out
    return np.frombuffer(raw, f"<i{width}", count=rows, offset=1)


# Columns stored as byte planes whose transform is fused with gathering the planes (one pass, no
# array of int64 between): as they are, a running sum, plus the reference column.
_FUSED = {"incl_blocks": 0, "first": 1, "depth": 1, "last": 2}


def _planes_into(raw: bytes, rows: int, itemsize: int, mode: int, ref, target: np.ndarray) -> bool:
    """Decode a block :func:`pack` stored as byte planes straight into ``target`` (``mode`` of
    :data:`_FUSED`); False, with nothing written, for a block stored otherwise (the caller then
    goes through :func:`unpack`); :class:`ValueError` as :func:`unpack` for bytes that cannot be."""
    if not raw:
        raise ValueError("an empty block")
    header = raw[0]
    code = header & 0x0F
    if not header & _PLANES_BIT or header & ~(0x0F | _PLANES_BIT) or code >= len(_WIDTHS):
        return False
    width = _WIDTHS[code]
    if width == 1 or width > itemsize or (mode == 2 and ref is None):
        return False
    if len(raw) != 1 + rows * width:
        raise ValueError(f"{len(raw) - 1} bytes for {rows} values of {width}")
    _planes_apply(np.frombuffer(raw, np.uint8), width, rows, mode, target if ref is None else ref, target)
    return True


@numba.njit(cache=True, nogil=True)
def _planes_apply(raw, width, rows, mode, ref, out):  # pragma: no cover - numba
    """:func:`_from_planes` into ``out`` as is (mode 0), as a running sum (1), or plus ``ref`` (2)."""
    if mode == 0:
        _from_planes(raw, width, rows, out)
        return
    acc = np.int64(0)
    if width == 2:
        for i in range(rows):
            v = np.int64(raw[1 + i]) | (np.int64(raw[1 + rows + i]) << 8)
            v -= (v >> 15) << 16
            if mode == 1:
                acc += v
                out[i] = acc
            else:
                out[i] = ref[i] + v
    elif width == 4:
        for i in range(rows):
            v = (np.int64(raw[1 + i]) | (np.int64(raw[1 + rows + i]) << 8) | (np.int64(raw[1 + 2 * rows + i]) << 16)
                 | (np.int64(raw[1 + 3 * rows + i]) << 24))
            v -= (v >> 31) << 32
            if mode == 1:
                acc += v
                out[i] = acc
            else:
                out[i] = ref[i] + v
    else:
        for i in range(rows):
            v = np.int64(0)
            for k in range(8):
                v |= np.int64(raw[1 + k * rows + i]) << (8 * k)
            if mode == 1:
                acc += v
                out[i] = acc
            else:
                out[i] = ref[i] + v


@numba.njit(cache=True, nogil=True)
def _from_planes(raw, width, rows, out):  # pragma: no cover - numba
    """Values of ``width`` bytes from their byte planes (after the header byte), sign-extended.
    One loop per width, every plane's byte of a value gathered at once: LLVM vectorises these
    (a generic loop over the planes ran two to seven times slower)."""
    if width == 2:
        for i in range(rows):
            v = np.int64(raw[1 + i]) | (np.int64(raw[1 + rows + i]) << 8)
            out[i] = v - ((v >> 15) << 16)
    elif width == 4:
        for i in range(rows):
            v = (np.int64(raw[1 + i]) | (np.int64(raw[1 + rows + i]) << 8) | (np.int64(raw[1 + 2 * rows + i]) << 16)
                 | (np.int64(raw[1 + 3 * rows + i]) << 24))
            out[i] = v - ((v >> 31) << 32)
    else:
        for i in range(rows):
            v = np.int64(0)
            for k in range(8):
                v |= np.int64(raw[1 + k * rows + i]) << (8 * k)
            out[i] = v


class ColumnWriter:
    """Appends blocks of rows to ``DIR/NAME.zst``, one zstd frame per column per block."""

    def __init__(self, directory: Path, dtypes: dict[str, str]):
        self.directory = directory
        self.dtypes = dtypes
        self.stored = [name for name in dtypes if name not in DERIVED]
        self.files = {name: open(directory / f"{name}.zst", "xb") for name in self.stored}
        self.frames: dict[str, list[int]] = {name: [] for name in self.stored}
        self.blocks: list[int] = []
        self.rows = 0
        self.compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True, write_content_size=True)

    def write(self, block: dict[str, np.ndarray]) -> None:
        """One block: every column, the same number of rows, already in their stored dtypes."""
        n = len(next(iter(block.values())))
        last = None
        for name in self.stored:
            values = block[name]
            if name in SPAN_LAST:
                last = values
                continue
            data = self.compressor.compress(pack(name, _encode(name, values, self.rows, block)))
            self.files[name].write(data)
            self.frames[name].append(len(data))
        if last is not None:
            span = (last.astype(np.int64) - block["first"].astype(np.int64)).astype(last.dtype)
            data = self.compressor.compress(pack("last", span))
            self.files["last"].write(data)
            self.frames["last"].append(len(data))
        self.blocks.append(n)
        self.rows += n

    def close(self) -> None:
        for f in self.files.values():
            f.close()

    def abort(self) -> None:
        for f in self.files.values():
            try:
                f.close()
            except OSError:
                pass


# Decoded columns larger than this live in a file-backed mapping rather than anonymous memory.
MAP_DECODED_ABOVE = 64 << 20


def _allocate(directory: Path, name: str, rows: int, dtype: np.dtype) -> np.ndarray:
    """Room for a decoded column. A large one is a shared mapping of a scratch file in the cache
    directory, unlinked at once: the kernel can write its pages back and drop them under memory
    pressure (a trace of a billion events decodes to gigabytes), and nothing is left on disk
    when the process ends. Anonymous memory when that cannot be made."""
    size = rows * np.dtype(dtype).itemsize
    if size <= MAP_DECODED_ABOVE:
        return np.empty(rows, dtype)
    path = directory / f".decoded-{name}-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return np.empty(rows, dtype)
    try:
        os.ftruncate(fd, size)
        with os.fdopen(fd, "r+b", closefd=False) as f:
            out = np.memmap(f, dtype=dtype, mode="r+", shape=(rows,))
    except OSError:
        return np.empty(rows, dtype)
    finally:
        os.close(fd)
        try:
            os.unlink(path)
        except OSError:
            pass
    return out


def dedupe_patches(patches: np.ndarray) -> np.ndarray:
    """(row, column, value) patches with only the last one of each (row, column) kept, sorted by
    column then row."""
    if not len(patches):
        return np.zeros((0, 3), np.int64)
    order = np.arange(len(patches))[::-1]
    rev = patches[order]
    _, first = np.unique(rev[:, 1] * (1 << 40) + rev[:, 0], return_index=True)
    kept = rev[first]
    return kept[np.lexsort((kept[:, 0], kept[:, 1]))]


_BLOCKS_LOCK = threading.Lock()


class StoredColumns:
    """Reads the columns of one thread's call table (written by :class:`ColumnWriter`)."""

    def __init__(self, directory: Path, rows: int, blocks: list[int], frames: dict[str, list[int]],
                 dtypes: dict[str, str], patches: dict[str, tuple[np.ndarray, np.ndarray]]):
        self.directory = directory
        self.rows = rows
        self.blocks = np.asarray(blocks, np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.blocks)]).astype(np.int64)
        self.frames = {name: np.concatenate([[0], np.cumsum(np.asarray(f, np.int64))]) for name, f in frames.items()}
        self.dtypes = {name: np.dtype(d) for name, d in dtypes.items()}
        self.patches = patches

    def column(self, name: str, ref: np.ndarray | None = None, parent: np.ndarray | None = None) -> np.ndarray:
        """The whole column, decoded block by block. A column stored relative to another
        (:data:`REFERENCE`: ``last`` to ``first``, ``caller_block`` to ``call_site``) takes that
        one as ``ref`` when it is decoded already."""
        out = _allocate(self.directory, name, self.rows, self.dtypes[name])
        if not self.rows:
            return out
        with open(self.directory / f"{name}.zst", "rb", opener=_nofollow) as f:
            data = f.read()
        offsets = self.frames[name]
        if len(data) != offsets[-1]:
            raise CacheDamaged(f"{self.directory / name}.zst: {len(data)} bytes, {offsets[-1]} written")

        def one(i: int) -> None:
            lo, hi = int(self.starts[i]), int(self.starts[i + 1])
            # the reference's block alone when it is not decoded whole: never a second whole column
            against = None if name not in REFERENCE else ref[lo:hi] if ref is not None else \
                self.decode_rows(REFERENCE[name], lo, hi)
            self._decode_into(name, data[offsets[i]:offsets[i + 1]], out, lo, hi, against)

        # One thread: on a busy two-core machine a second decoding thread measured slower, not
        # faster (the replay's and the GUI's threads want the other core).
        for i in range(len(self.blocks)):
            one(i)
        if name in OWN_COUNT:
            rows, values = self.patches.get(name, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            _inclusive(out, parent, rows, values, out)     # in place: callees come after callers
            return out
        self._patch(name, out, 0, self.rows)
        _check_range(name, out, self.rows, self.directory)
        return out

    def decode_rows(self, name: str, lo: int, hi: int, ref: np.ndarray | None = None) -> np.ndarray:
        """Rows ``[lo, hi)`` of a stored column, decoding only the blocks that hold them (a
        call's subtree without decoding the thread's whole column). Not for the columns that
        need a pass over the whole column (``parent``, ``end``, ``incl_bytecodes``). ``ref``:
        the same rows of the column this one is stored against (:data:`REFERENCE`), when the
        caller has decoded them already and the rows are whole blocks (else it is decoded here)."""
        if name in DERIVED or name in OWN_COUNT:
            raise ValueError(f"{name} is not decoded by row range")
        lo, hi = max(int(lo), 0), min(int(hi), self.rows)
        if hi <= lo:
            return np.zeros(0, self.dtypes[name])
        b0 = int(np.searchsorted(self.starts, lo, side="right")) - 1
        b1 = int(np.searchsorted(self.starts, hi, side="left"))
        base, top = int(self.starts[b0]), int(self.starts[b1])
        out = np.empty(top - base, self.dtypes[name])
        if name not in REFERENCE:
            ref = None
        elif ref is None or (lo, hi) != (base, top) or len(ref) != top - base:
            ref = self.decode_rows(REFERENCE[name], base, top)
        offsets = self.frames[name]
        with open(self.directory / f"{name}.zst", "rb", opener=_nofollow) as f:
            f.seek(int(offsets[b0]))
            data = f.read(int(offsets[b1] - offsets[b0]))
        if len(data) != offsets[b1] - offsets[b0]:
            raise CacheDamaged(f"{self.directory / name}.zst: cut off before rows {lo}..{hi}")
        for i in range(b0, b1):
            a, b = int(offsets[i] - offsets[b0]), int(offsets[i + 1] - offsets[b0])
            a_row, b_row = int(self.starts[i]) - base, int(self.starts[i + 1]) - base
            self._decode_into(name, data[a:b], out, a_row, b_row, None if ref is None else ref[a_row:b_row])
        self._patch(name, out, base, top)
        _check_range(name, out, len(out), self.directory)
        return out[lo - base:hi - base]

    # Decoded blocks kept per column by :meth:`window` (a block is about 256 K rows: 1 MB of int32).
    CACHED_BLOCKS = 32

    def window(self, name: str, lo: int, hi: int) -> np.ndarray:
        """Rows ``[lo, hi)`` of a stored column like :meth:`decode_rows`, but from decoded blocks
        kept in a small cache (least recently used dropped): what a view panning over one region
        asks for again and again. The result may share memory with the cache: do not write it."""
        lo, hi = max(int(lo), 0), min(int(hi), self.rows)
        if hi <= lo:
            return np.zeros(0, self.dtypes[name])
        b0 = int(np.searchsorted(self.starts, lo, side="right")) - 1
        b1 = int(np.searchsorted(self.starts, hi, side="left"))
        parts = [self._cached_block(name, i) for i in range(b0, b1)]
        whole = parts[0] if len(parts) == 1 else np.concatenate(parts)
        base = int(self.starts[b0])
        return whole[lo - base:hi - base]

    def _cached_block(self, name: str, i: int) -> np.ndarray:
        with _BLOCKS_LOCK:      # views ask from the GUI thread and from tasks
            cache = self.__dict__.setdefault("_blocks", {})
            key = (name, i)
            got = cache.pop(key, None)
            if got is None:
                got = self.decode_rows(name, int(self.starts[i]), int(self.starts[i + 1]))
                got.flags.writeable = False
                per_column = [k for k in cache if k[0] == name]
                if len(per_column) >= self.CACHED_BLOCKS:
                    del cache[per_column[0]]
            cache[key] = got       # re-inserted: the dict's order is the order of use
            return got

    # ------------------------------------------------------------ the tree, block by block

    def block_tree(self, i: int) -> dict[str, np.ndarray]:
        """``parent``, ``end`` and ``incl_bytecodes`` of block ``i``'s rows, from that block alone
        (kept in the block cache): a row whose subtree ended inside its block has every
        descendant there, so its end and inclusive count come from the block; a row still open
        when the block was written has both as patches; and the rows open at the block's start
        (its first row's ancestors, outermost first, at depths 0, 1, …) are exactly the patched
        rows before it whose end lies after it. What views that show a few calls of a thread of
        any size read, instead of the passes over whole columns."""
        with _BLOCKS_LOCK:
            cache = self.__dict__.setdefault("_blocks", {})
            got = cache.pop(("tree", i), None)
        if got is None:
            got = self._block_tree(i)
        with _BLOCKS_LOCK:
            cache[("tree", i)] = got
            trees = [k for k in cache if k[0] == "tree"]
            if len(trees) > self.CACHED_BLOCKS:
                del cache[trees[0]]
        return got

    def block_links(self, i: int) -> dict[str, np.ndarray]:
        """``parent`` and ``end`` of block ``i``'s rows (:meth:`block_tree` without the inclusive
        counts, which cost decoding another column), not kept: for passes over a thread."""
        return self._block_tree(i, keep=False, incl=False)

    def _block_tree(self, i: int, keep: bool = True, incl: bool = True) -> dict[str, np.ndarray]:
        base, top = int(self.starts[i]), int(self.starts[i + 1])
        depth = np.ascontiguousarray(self.window("depth", base, top) if keep else
                                     self.decode_rows("depth", base, top), np.int64)
        rows, values = self.patches.get("end", (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        open_rows = np.asarray(rows[(rows < base) & (values > base)], np.int64)
        if len(depth) and len(open_rows) != depth[0]:
            raise CacheDamaged(f"{self.directory}: block {i} starts at depth {int(depth[0])} "
                               f"below {len(open_rows)} open calls")
        parent = np.empty(top - base, np.int64)
        end = np.empty(top - base, np.int64)
        _block_tree_kernel(depth, base, open_rows, parent, end)
        self._patch("end", end, base, top)
        # open by the depths at the block's end but not patched: it had returned when the block
        # was written (its subtree is the rest of the block)
        end[end < 0] = top
        if len(end) and (end.min() <= 0 or (end <= np.arange(base, top)).any() or end.max() > self.rows):
            raise CacheDamaged(f"{self.directory}: block {i}: a call's end is unknown or out of range")
        if not incl:
            return {"parent": parent, "end": end}
        own = self._own_block("incl_bytecodes", base, top)
        incl = np.empty_like(own)
        prow, pval = self.patches.get("incl_bytecodes", (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        a, b = np.searchsorted(prow, [base, top])
        _inclusive(own, parent - base, np.asarray(prow[a:b] - base, np.int64), np.asarray(pval[a:b]), incl)
        for array in (parent, end, incl):
            array.flags.writeable = False
        return {"parent": parent, "end": end, "incl_bytecodes": incl}

    def _own_block(self, name: str, base: int, top: int) -> np.ndarray:
        """The stored (own) values of a column kept as own counts, rows ``[base, top)`` of one block."""
        b = int(np.searchsorted(self.starts, base, side="right")) - 1
        offsets = self.frames[name]
        with open(self.directory / f"{name}.zst", "rb", opener=_nofollow) as f:
            f.seek(int(offsets[b]))
            data = f.read(int(offsets[b + 1] - offsets[b]))
        out = np.empty(top - base, self.dtypes[name])
        self._decode_into(name, data, out, 0, top - base, None)
        return out

    def tree_window(self, name: str, lo: int, hi: int, keep: bool = True) -> np.ndarray:
        """Rows ``[lo, hi)`` of ``parent``, ``end`` or ``incl_bytecodes`` from :meth:`block_tree`
        (``keep=False``: computed without touching the block cache, for passes over a thread)."""
        lo, hi = max(int(lo), 0), min(int(hi), self.rows)
        if hi <= lo:
            return np.zeros(0, np.int64)
        b0 = int(np.searchsorted(self.starts, lo, side="right")) - 1
        b1 = int(np.searchsorted(self.starts, hi, side="left"))
        incl = name == "incl_bytecodes"
        parts = [(self.block_tree(i) if keep else self._block_tree(i, keep=False, incl=incl))[name]
                 for i in range(b0, b1)]
        whole = parts[0] if len(parts) == 1 else np.concatenate(parts)
        base = int(self.starts[b0])
        return whole[lo - base:hi - base]

    def tree(self, depth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``parent`` and ``end`` derived from the decoded ``depth`` column."""
        parent = _allocate(self.directory, "parent", self.rows, self.dtypes["parent"])
        end = _allocate(self.directory, "end", self.rows, self.dtypes["end"])
        if self.rows:
            bad = _tree_from_depth(depth, parent, end)
            if bad >= 0:
                raise CacheDamaged(f"{self.directory}: depth column inconsistent at row {bad}")
            self._patch("parent", parent, 0, self.rows)
            self._patch("end", end, 0, self.rows)
            _check_range("parent", parent, self.rows, self.directory)
            _check_range("end", end, self.rows, self.directory)
        return parent, end

    def _decode_into(self, name, frame, out, lo, hi, ref) -> None:
        """Rows ``[lo, hi)`` of ``out`` from one stored block; ``ref``: the same rows of the
        column this one is stored against (:data:`REFERENCE`)."""
        itemsize = out.dtype.itemsize
        target = out[lo:hi]
        try:
            raw = zstandard.ZstdDecompressor().decompress(frame, max_output_size=1 + (hi - lo) * itemsize)
            mode = _FUSED.get(name)
            if mode is not None and _planes_into(raw, hi - lo, itemsize, mode, ref, target):
                return
            values = unpack(raw, hi - lo, itemsize)
        except (zstandard.ZstdError, ValueError) as error:
            raise CacheDamaged(f"{self.directory / name}.zst: rows {lo}..{hi}: {error}") from error
        # typed loops rather than numpy's casting ufuncs: a block's values come in 1 to 8 bytes
        # and numpy's cumsum and add with a cast cost five times a plain loop
        if name in DELTA_FIRST:
            _cumsum_into(values, target)
        elif name in SPAN_LAST:
            _add_into(ref, values, target)
        elif name in BY_SITE:
            if _by_site_into(values, ref, target, MAX_SITE) >= 0:
                raise CacheDamaged(f"{self.directory / name}.zst: rows {lo}..{hi}: a call site out of range")
        elif name in ROW_MINUS:
            _row_minus(values, lo, target)
        elif name in MINUS_ROW:
            _minus_row(values, lo, target)
        else:
            target[:] = values

    def _patch(self, name: str, out: np.ndarray, lo: int, hi: int) -> None:
        got = self.patches.get(name)
        if got is None:
            return
        rows, values = got
        a, b = np.searchsorted(rows, [lo, hi])
        if a < b:
            out[rows[a:b] - lo] = values[a:b]


@numba.njit(cache=True, nogil=True)
def _cumsum_into(values, out):  # pragma: no cover - numba
    """``np.cumsum(values, dtype=out.dtype, out=out)``."""
    acc = np.int64(0)
    for i in range(len(values)):
        acc += np.int64(values[i])
        out[i] = acc


@numba.njit(cache=True, nogil=True)
def _add_into(ref, values, out):  # pragma: no cover - numba
    """``out = ref + values``, in ``out``'s type."""
    for i in range(len(values)):
        out[i] = ref[i] + values[i]


@numba.njit(cache=True, nogil=True)
def _by_site_into(values, site, out, max_site):  # pragma: no cover - numba
    """Decode :data:`BY_SITE` differences into ``out`` (see :func:`_by_site`); returns the first
    row whose call site lies outside [-1, max_site), else -1 (nothing is indexed by it)."""
    top = 0
    for i in range(len(site)):
        k = np.int64(site[i])
        if k < -1 or k >= max_site:
            return i
        if k + 2 > top:
            top = k + 2
    seen = np.zeros(top, np.bool_)
    last = np.empty(top, np.int64)     # read only where seen: not zeroed (sites run to millions)
    for i in range(len(values)):
        k = np.int64(site[i]) + 1
        v = np.int64(values[i])
        if seen[k]:
            v += last[k]
        seen[k] = True
        last[k] = v
        out[i] = v
    return -1


@numba.njit(cache=True, nogil=True)
def _block_tree_kernel(depth, base, open_rows, parent, end):  # pragma: no cover - numba
    """Parent and end of a block's rows (global row numbers) from their depths, starting below the
    calls open at the block's start; a row still open at the block's end gets end -1 (its end is a
    patch)."""
    n = len(depth)
    # every row pushes once: the stack never holds more than the open calls and the block's rows
    # (whatever depths a damaged column claims)
    cap = len(open_rows) + n + 1
    stack = np.empty(cap, np.int64)
    sdepth = np.empty(cap, np.int64)
    sp = 0
    for k in range(len(open_rows)):
        stack[sp] = open_rows[k]
        sdepth[sp] = k
        sp += 1
    for i in range(n):
        d = depth[i]
        while sp > 0 and sdepth[sp - 1] >= d:
            sp -= 1
            r = stack[sp]
            if r >= base:
                end[r - base] = base + i
        parent[i] = stack[sp - 1] if sp > 0 else -1
        stack[sp] = base + i
        sdepth[sp] = d
        sp += 1
    while sp > 0:
        sp -= 1
        r = stack[sp]
        if r >= base:
            end[r - base] = -1


@numba.njit(cache=True, nogil=True)
def _row_minus(values, lo, out):  # pragma: no cover - numba
    for i in range(len(values)):
        out[i] = lo + i - values[i]


@numba.njit(cache=True, nogil=True)
def _minus_row(values, lo, out):  # pragma: no cover - numba
    for i in range(len(values)):
        out[i] = values[i] + lo + i


@numba.njit(cache=True, nogil=True)
def _out_of_range(kind, values, n):  # pragma: no cover - numba
    """First row whose tree value cannot be (kind 0: end in (row, n]; 1: parent in [-1, row);
    2: depth >= 0), or -1."""
    for i in range(len(values)):
        v = values[i]
        if kind == 0:
            if v <= i or v > n:
                return i
        elif kind == 1:
            if v < -1 or v >= i:
                return i
        elif v < 0:
            return i
    return -1


@numba.njit(cache=True, nogil=True)
def _tree_from_depth(depth, parent, end):  # pragma: no cover - numba
    """parent and end of every row from depth (rows in preorder); the first row whose depth
    cannot follow the previous rows' (a jump of more than one level, a negative depth), or -1."""
    n = len(depth)
    top = 0
    for i in range(n):
        if depth[i] > top:
            top = depth[i]
    stack = np.empty(top + 2, np.int64)
    sp = 0
    for i in range(n):
        d = depth[i]
        if d < 0 or d > sp:
            return i
        while sp > d:
            sp -= 1
            end[stack[sp]] = i
        parent[i] = stack[d - 1] if d > 0 else -1
        stack[sp] = i
        sp += 1
    while sp > 0:
        sp -= 1
        end[stack[sp]] = n
    return -1


def _check_range(name: str, values: np.ndarray, n: int, directory: Path) -> None:
    """The tree columns are indices others index with: out of range is damage, never a crash."""
    kind = {"end": 0, "parent": 1, "depth": 2}.get(name)
    if kind is None or not n:
        return
    row = _out_of_range(kind, values, n)
    if row >= 0:
        raise CacheDamaged(f"{directory}: column {name} holds a value out of range at row {row}")


def patches_by_column(patches: np.ndarray, names: dict[int, str], rows: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Deduplicated patches split per column name: (sorted rows, values)."""
    out = {}
    if not len(patches):
        return out
    if patches[:, 0].min() < 0 or patches[:, 0].max() >= max(rows, 1):
        raise CacheDamaged("a patch names a row out of range")
    for col in np.unique(patches[:, 1]):
        name = names.get(int(col))
        if name is None:
            raise CacheDamaged(f"a patch names an unknown column {int(col)}")
        sel = patches[patches[:, 1] == col]
        out[name] = (sel[:, 0].copy(), sel[:, 2].copy())
    return out
