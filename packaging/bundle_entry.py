"""The entry point PyInstaller freezes: the explorer, with numba's cache in the user's cache
directory (the bundle's own folder may be read-only)."""

import os
import sys
from pathlib import Path

if getattr(sys, "frozen", False):
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jbgui" / "numba"
    os.environ.setdefault("NUMBA_CACHE_DIR", str(cache))

from jbgui.ui.app import main  # noqa: E402

sys.exit(main())
