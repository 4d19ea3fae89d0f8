"""``clock.bin``: clock samples (stream, event position, nanoTime, flags) (docs/trace-format.md).

Samples that no recorder writes — a negative stream or position, a position beyond any plausible
stream, a time far from the trace's start, a time that goes backwards within a stream — are left
out and said in ``problems``; the rest interpolate event times as before.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from jbgui.model import layout
from jbgui.model.errors import TraceError
from jbgui.model.format.chunks import MAX_LOST_EVENTS
from jbgui.model.format.files import open_file, show

DTYPE = np.dtype([("stream", "<i8"), ("position", "<i8"), ("nanos", "<i8"), ("flags", "<i8")])
_HEADER = struct.Struct("<4sHH8x")
# How far from the trace's start a sample may lie: a run of a year is already beyond any trace.
MAX_SPAN_NANOS = 366 * 24 * 3600 * 10**9
MAX_STREAM = (1 << 31) - 1


def read_clock(path: Path, start_nanos: int | None = None) -> tuple[np.ndarray, list[str]]:
    """The plausible clock samples of ``clock.bin`` (an empty array when it is missing) and what
    was wrong. ``start_nanos``: ``trace.json``'s ``start.nanos``, to bound the times."""
    path = Path(path)
    name = show(path)
    problems: list[str] = []
    try:
        handle = open_file(path)
    except FileNotFoundError:
        return np.zeros(0, DTYPE), problems
    with handle:
        try:
            data = handle.read()
        except OSError as error:
            raise TraceError(f"{name}: cannot read: {error.strerror}") from error
    if len(data) < layout.CLOCK_HEADER_SIZE:
        raise TraceError(f"{name}: {len(data)} bytes, shorter than the {layout.CLOCK_HEADER_SIZE}-byte header")
    magic, version, record = _HEADER.unpack_from(data, 0)
    if magic != layout.CLOCK_MAGIC:
        raise TraceError(f"{name}: offset 0: not a clock file (magic {magic!r})")
    if version not in layout.READABLE_FORMAT_VERSIONS or record != layout.CLOCK_RECORD_SIZE:
        raise TraceError(f"{name}: offset 4: clock format version {version} with {record}-byte records; this "
                         f"jbgui reads versions {', '.join(map(str, layout.READABLE_FORMAT_VERSIONS))} with "
                         f"{layout.CLOCK_RECORD_SIZE}-byte records")
    body = data[layout.CLOCK_HEADER_SIZE:]
    whole = len(body) // layout.CLOCK_RECORD_SIZE
    if len(body) % layout.CLOCK_RECORD_SIZE:
        problems.append(f"{name}: offset {layout.CLOCK_HEADER_SIZE + whole * layout.CLOCK_RECORD_SIZE}: a partial "
                        "last record (ignored)")
    samples = np.frombuffer(body[:whole * layout.CLOCK_RECORD_SIZE], dtype=DTYPE)
    ok = (samples["stream"] >= 0) & (samples["stream"] <= MAX_STREAM) & (samples["position"] >= 0) \
        & (samples["position"] <= MAX_LOST_EVENTS)
    if start_nanos is not None and -(1 << 62) < start_nanos < (1 << 62):
        delta = samples["nanos"] - np.int64(start_nanos)   # both within ±2^62: no overflow
        ok &= (np.abs(samples["nanos"]) < (1 << 62)) & (delta > -MAX_SPAN_NANOS) & (delta < MAX_SPAN_NANOS)
    else:
        ok &= np.abs(samples["nanos"]) < (1 << 62)
    bad = np.flatnonzero(~ok)
    if len(bad):
        first = int(bad[0])
        problems.append(f"{name}: offset {layout.CLOCK_HEADER_SIZE + first * layout.CLOCK_RECORD_SIZE}: {len(bad)} "
                        "clock samples with a stream, position or time no recorder writes (left out)")
    samples = samples[ok]
    # Within a stream, later positions never have earlier times: a sample that would make time go
    # backwards is left out (it would make interpolated call times negative).
    order = np.lexsort((samples["nanos"], samples["position"], samples["stream"]))
    samples = samples[order]
    keep = np.ones(len(samples), bool)
    if len(samples) > 1:
        same = samples["stream"][1:] == samples["stream"][:-1]
        running = _running_max_by_stream(samples["stream"], samples["nanos"])
        keep[1:] = ~same | (samples["nanos"][1:] >= running[:-1])
    if not keep.all():
        problems.append(f"{name}: {int((~keep).sum())} clock samples whose time goes backwards within their stream "
                        "(left out)")
    return np.ascontiguousarray(samples[keep]), problems


def _running_max_by_stream(streams: np.ndarray, nanos: np.ndarray) -> np.ndarray:
    """The running maximum of ``nanos`` restarted at each new stream (rows sorted by stream)."""
    out = nanos.copy()
    starts = np.flatnonzero(np.r_[True, streams[1:] != streams[:-1]])
    ends = np.r_[starts[1:], len(streams)]
    for a, b in zip(starts, ends):
        out[a:b] = np.maximum.accumulate(nanos[a:b])
    return out
