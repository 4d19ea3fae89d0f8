"""Arrays derived from a thread's call columns (calling-context tree, per-thread totals, the
timeline's search index), computed once and kept beside the columns as zstd-compressed array files
(:func:`jbgui.model.store.save_arrays`, ``NAME.zst``): the columns never change once replay wrote
them, and the analyzer's cache key covers them. A damaged or foreign file is computed again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from jbgui.model import store


def is_stored(directory: Path | None, name: str) -> bool:
    """Whether ``directory/name`` has been computed and kept (it may still prove damaged when read)."""
    return directory is not None and (Path(directory) / f"{name}.zst").is_file()


def forget(directory: Path | None, name: str) -> None:
    """Drop ``directory/name``: the next :func:`load_or_compute` computes it again."""
    if directory is not None:
        (Path(directory) / f"{name}.zst").unlink(missing_ok=True)


def load_or_compute(directory: Path | None, name: str, keys: tuple[str, ...],
                    compute: Callable[[], dict[str, np.ndarray]],
                    valid: Callable[[dict[str, np.ndarray]], bool] = lambda _arrays: True) -> dict[str, np.ndarray]:
    """``directory/name`` when it holds ``keys`` (and ``valid`` accepts them), else ``compute()``,
    stored there for next time. A read-only or damaged cache only costs the computation."""
    path = Path(directory) / f"{name}.zst" if directory is not None else None
    if path is not None:
        try:
            arrays = store.load_arrays(path, keys)
            if valid(arrays):
                return arrays
        except store.CacheDamaged:
            pass    # missing, damaged or of another version: computed again
    arrays = compute()
    save(directory, name, arrays)
    return arrays


def save(directory: Path | None, name: str, arrays: dict[str, np.ndarray]) -> None:
    """Keep ``arrays`` as ``directory/name`` (nothing without a directory; a read-only or full
    disk only costs computing them again next time)."""
    if directory is None:
        return
    try:
        store.save_arrays(Path(directory) / f"{name}.zst", arrays)
    except OSError:
        pass
