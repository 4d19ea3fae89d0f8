"""Opening the files of a trace: regular files inside the trace directory, nothing else.

A trace directory is untrusted input. A FIFO or device in place of a file would block ``open()``
or never end; a symlink could make jbgui read (and show, or dump) a file elsewhere. So every file
of a trace is ``lstat``-ed and opened here: symlinks are followed only when their target stays
inside the trace directory, the file must be a regular file (checked again on the open descriptor,
so a swap between the check and the open changes nothing), and ``O_NONBLOCK`` keeps a FIFO from
blocking the open itself.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from jbgui.model.errors import TraceError

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def trace_root(path: Path) -> Path:
    """The trace directory a file of it belongs to (``events/`` files belong to its parent)."""
    parent = Path(path).parent
    return parent.parent if parent.name == "events" else parent


def show(path) -> str:
    """A path as a one-line message can hold it: undecodable bytes and control characters escaped."""
    text = os.fsdecode(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def _resolved_inside(path: Path, root: Path) -> Path:
    real = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    if real != real_root and real_root not in real.parents:
        raise TraceError(f"{show(path)}: a symbolic link to {show(real)}, outside the trace directory; "
                         "a trace's files must lie inside it")
    return real


def check_regular(path: Path, root: Path | None = None) -> os.stat_result:
    """``lstat`` of a file of the trace, refusing what :func:`open_file` would refuse.

    Raises :class:`FileNotFoundError` for a missing file (callers decide whether that is an
    error) and :class:`TraceError` for the rest."""
    path = Path(path)
    root = trace_root(path) if root is None else Path(root)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise TraceError(f"{show(path)}: cannot read: {error.strerror}") from error
    real = _resolved_inside(path, root)   # a symlink, or a folder on the way, leading out is refused
    if stat.S_ISLNK(info.st_mode):
        try:
            info = os.stat(real)
        except OSError as error:
            raise TraceError(f"{show(path)}: a symbolic link that leads nowhere ({error.strerror})") from error
    if not stat.S_ISREG(info.st_mode):
        raise TraceError(f"{show(path)}: not a regular file ({_kind(info.st_mode)}); a trace holds regular files only")
    return info


def open_file(path: Path, root: Path | None = None) -> BinaryIO:
    """Open a file of the trace for reading in binary mode.

    Raises :class:`FileNotFoundError` when it is missing, :class:`TraceError` when it is not a
    regular file inside the trace directory or cannot be read."""
    path = Path(path)
    root = trace_root(path) if root is None else Path(root)
    check_regular(path, root)
    real = Path(os.path.realpath(path))
    try:
        fd = os.open(real, _FLAGS)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise TraceError(f"{show(path)}: cannot read: {error.strerror}") from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TraceError(f"{show(path)}: not a regular file ({_kind(info.st_mode)})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, limit: int, root: Path | None = None) -> bytes:
    """A whole (small) file of the trace; refused when larger than ``limit`` bytes."""
    with open_file(path, root) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise TraceError(f"{show(path)}: {size} bytes, more than the {limit} a file of this kind can plausibly hold")
        try:
            return handle.read(limit + 1)[:limit]
        except OSError as error:
            raise TraceError(f"{show(path)}: cannot read: {error.strerror}") from error


def is_directory(path: Path, root: Path) -> bool:
    """Is ``path`` a directory inside ``root`` (a symlinked ``events/`` leading out is not)?"""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode):
        try:
            _resolved_inside(path, root)
            return os.path.isdir(path)
        except TraceError:
            return False
    return stat.S_ISDIR(info.st_mode)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"
