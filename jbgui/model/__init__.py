"""The Qt-free core: reading trace directories and everything computed from them."""

from jbgui.model.errors import TraceError
from jbgui.model.tracedir import TraceDir

__all__ = ["TraceDir", "TraceError"]
