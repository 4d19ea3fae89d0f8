"""The Qt-free core: reading trace directories and everything computed from them."""

import os as _os
import sys as _sys

from jbgui.model.errors import TraceError


def _without_huge_pages() -> None:
    """numpy asks Linux for transparent huge pages for every big array (madvise). With the
    kernel's usual ``defrag=madvise`` each first touch of such an array may compact memory on
    the spot: on javac's billion-event trace that system time made toggling only my code 1.9-2.0 s
    instead of 0.6 s and the first calling-context trees 25.7 s instead of 20.4 s (see
    docs/analysis.md, Performance). The analyzer writes fresh arrays of millions of rows all the
    time, so it does without them. A NUMPY_MADVISE_HUGEPAGE the user set stands."""
    if _os.environ.get("NUMPY_MADVISE_HUGEPAGE", "") != "":
        return
    _os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"     # read when numpy is imported, here and in children
    if "numpy" in _sys.modules:                     # imported already (by Qt's plotting, say)
        numpy = _sys.modules["numpy"]
        core = getattr(numpy, "_core", None) or getattr(numpy, "core", None)      # numpy 2, numpy 1
        set_madvise = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
        if set_madvise is not None:
            set_madvise(False)


_without_huge_pages()

__all__ = ["TraceDir", "TraceError"]


def __getattr__(name: str):
    # TraceDir on first use: importing the package (for its errors, say) must not load numpy,
    # which `jbtrace record` would otherwise pay before starting the program.
    if name == "TraceDir":
        from jbgui.model.tracedir import TraceDir
        return TraceDir
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
