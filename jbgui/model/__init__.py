"""The Qt-free core: reading trace directories and everything computed from them."""

from jbgui.model.errors import TraceError

__all__ = ["TraceDir", "TraceError"]


def __getattr__(name: str):
    # TraceDir on first use: importing the package (for its errors, say) must not load numpy,
    # which `jbtrace record` would otherwise pay before starting the program.
    if name == "TraceDir":
        from jbgui.model.tracedir import TraceDir
        return TraceDir
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
