"""static.xml read in two halves at once: this process collects the first, a child process the
second, and the halves are joined into the collector one pass would have filled.

Collecting (:class:`~jbgui.model.format.static_xml._Collector`: lxml calling back into Python for
every element) holds the GIL, so threads cannot share it; a child process can. On jEdit's 72 MB
static.xml it takes about 1.4 s of the 2.1 s that reading the static information takes.

The split must never change what is read. It is made only where one pass would read the same:

- the file opens exactly as the recorder writes it: ``<?xml version="1.0" encoding="UTF-8"?>``,
  then the ``<static_information …>`` start tag and nothing else before the first ``<class`` (no
  document type, hence no entities; no comment; no namespace declaration);
- it is split before a ``<class`` at the start of a line, and the first half (closed with
  ``</static_information>``) must parse completely: a split inside a comment, CDATA section,
  processing instruction or element other than the root would leave it unterminated;
- the second half is parsed inside a bare ``<static_information>`` root, with the same inert
  parser options;
- anything else — a half that does not parse or holds something unusual, instruction listings,
  a child that cannot start, fails or takes too long — and the caller reads the file in one pass.

The child reads the parent's already opened file (its descriptor is passed on; both read at
explicit offsets), so both halves come from the same file.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
from lxml import etree

from jbgui.model.format import static_xml as X
from jbgui.model.format.files import open_file

HEAD = b'<?xml version="1.0" encoding="UTF-8"?>\n<static_information'
ROOT_END = b"</static_information>"
BOUNDARY = b"\n<class "
# The first half's share of the file: the child starts a Python (about 0.2 s) before it parses.
SHARE = 0.53
PYTHON = sys.executable
# Longest wait for the child once this process's half is read (it reads as much as this one).
TIMEOUT = 300.0
_CHILD = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
          "from jbgui.model.format.static_split import _child; _child(*map(int, sys.argv[2:]))")


def collect_halves(path: Path, chunk: int, split: int, share: float = SHARE) -> X._Collector | None:
    """The collector of ``path`` read in two halves at once, or None when the file is smaller than
    ``split`` bytes or cannot be split exactly (the caller then reads it in one pass)."""
    with open_file(path) as handle:
        fd = handle.fileno()
        size = os.fstat(fd).st_size
        if size < max(split, 1):
            return None
        boundary = _boundary(fd, size, share)
        if boundary is None:
            return None
        try:
            child = subprocess.Popen([PYTHON, "-c", _CHILD, json.dumps(sys.path), str(fd), str(boundary), str(chunk)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     pass_fds=(fd,))
        except OSError:
            return None
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(child.stdout.read()), name="static.xml half", daemon=True)
        reader.start()
        try:
            first = _first_half(fd, boundary, chunk)
            if first is None:
                return None
            reader.join(TIMEOUT)
            if reader.is_alive() or child.wait(TIMEOUT) != 0 or not got:
                return None
            second = pickle.loads(got[0])
            return _joined(first, second) if second is not None else None
        except (subprocess.TimeoutExpired, pickle.UnpicklingError, EOFError, ValueError):
            return None
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            reader.join(5.0)            # the pipe's end is met once the child is gone
            if not reader.is_alive():
                child.stdout.close()


def _boundary(fd: int, size: int, share: float) -> int | None:
    """Where the second half starts: the ``<class`` of the first line that opens one at or after
    ``share`` of the file, if the file opens as the recorder writes it."""
    head = os.pread(fd, 1 << 16, 0)
    first = head.find(b"<class ")
    if not head.startswith(HEAD) or first < 0:
        return None
    prologue = head[:first]
    # the declaration and the root's start tag, nothing else (no <!DOCTYPE, comment, PI, element)
    if prologue.count(b"<") != 2 or b"xmlns" in prologue or prologue.count(b">") != 2 \
            or prologue.rstrip().endswith(b"/>"):
        return None
    at = max(int(size * share), first + 1)
    window = 1 << 22
    while at < size:
        data = os.pread(fd, window + len(BOUNDARY), at)
        k = data.find(BOUNDARY)
        if k >= 0:
            return at + k + 1
        at += window
    return None


def _feed_range(parser, fd: int, start: int, end: int | None, chunk: int) -> None:
    at = start
    while end is None or at < end:
        data = os.pread(fd, chunk if end is None else min(chunk, end - at), at)
        if not data:
            break
        parser.feed(data)
        at += len(data)


def _first_half(fd: int, boundary: int, chunk: int) -> X._Collector | None:
    target = X._Collector()
    try:
        parser = etree.XMLParser(target=target, **X.PARSER_OPTIONS)
        _feed_range(parser, fd, 0, boundary, chunk)
        parser.feed(ROOT_END)
        parser.close()
    except (X._Listings, X._Unusual, etree.XMLSyntaxError):
        return None
    return target


def _child(fd: int, start: int, chunk: int) -> None:
    """The child's side: the second half's collected columns, pickled to stdout (None when the
    half cannot be read as one pass would)."""
    target = X._Collector()
    out = sys.stdout.buffer
    try:
        parser = etree.XMLParser(target=target, **X.PARSER_OPTIONS)
        parser.feed(HEAD + b">")
        _feed_range(parser, fd, start, None, chunk)
        parser.close()
    except (X._Listings, X._Unusual, etree.XMLSyntaxError):
        pickle.dump(None, out)
        return
    pickle.dump({"columns": {kind: {name: _packed(values) for name, values in columns.items()}
                             for kind, columns in target.columns.items()},
                 "method_class": np.array(target.method_class, np.int64),
                 "block_method": np.array(target.block_method, np.int64),
                 "site_block": np.array(target.site_block, np.int64),
                 "handler_block": np.array(target.handler_block, np.int64),
                 "counts": (target.n_classes, target.n_methods, target.n_blocks)}, out, protocol=5)
    out.flush()


def _packed(values: list) -> tuple:
    """A column of attribute texts as one string when none is missing (XML text holds no NUL):
    pickled and unpickled in a fraction of a list's time."""
    if None in values:
        return ("list", values)
    return ("joined", "\0".join(values), len(values))


def _unpacked(packed: tuple) -> list:
    if packed[0] == "list":
        return packed[1]
    _, text, count = packed
    values = text.split("\0") if count else []
    if len(values) != count:
        raise ValueError("a column of the second half does not have its count")
    return values


def _joined(first: X._Collector, second: dict) -> X._Collector:
    """``first`` with ``second``'s elements after its own (their class, method and block numbers
    moved past the first half's)."""
    for kind, columns in second["columns"].items():
        for name, values in columns.items():
            first.columns[kind][name] += _unpacked(values)
    classes, methods, blocks = first.n_classes, first.n_methods, first.n_blocks
    first.method_class = np.concatenate([np.array(first.method_class, np.int64), second["method_class"] + classes])
    first.block_method = np.concatenate([np.array(first.block_method, np.int64), second["block_method"] + methods])
    first.site_block = np.concatenate([np.array(first.site_block, np.int64), second["site_block"] + blocks])
    first.handler_block = np.concatenate([np.array(first.handler_block, np.int64), second["handler_block"] + blocks])
    n_classes, n_methods, n_blocks = second["counts"]
    first.n_classes += n_classes
    first.n_methods += n_methods
    first.n_blocks += n_blocks
    return first
