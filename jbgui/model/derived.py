"""Arrays derived from a thread's call columns (calling-context tree, per-thread totals, the
timeline's search index), computed once and kept as ``.npz`` files beside the columns: the columns
never change once replay wrote them, and the analyzer's cache key covers them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np


def load_or_compute(directory: Path | None, name: str, keys: tuple[str, ...],
                    compute: Callable[[], dict[str, np.ndarray]],
                    valid: Callable[[dict[str, np.ndarray]], bool] = lambda _arrays: True) -> dict[str, np.ndarray]:
    """``directory/name`` when it holds ``keys`` (and ``valid`` accepts them), else ``compute()``,
    stored there for next time. A read-only or damaged cache only costs the computation."""
    path = Path(directory) / name if directory is not None else None
    if path is not None and path.exists():
        try:
            with np.load(path) as data:
                arrays = {k: data[k] for k in keys}
            if valid(arrays):
                return arrays
        except (OSError, ValueError, KeyError):
            pass
    arrays = compute()
    if path is not None:
        try:
            tmp = path.with_name(path.stem + ".tmp.npz")
            np.savez(tmp, **arrays)
            tmp.replace(path)
        except OSError:
            pass
    return arrays
