"""Trace words as text, for comparing the traces of two runs of one program (method ids differ
between runs that load classes in another order). Imported by the recorder tests of things that must
not change what is recorded, only how: entry elision, loop records."""

from __future__ import annotations

import numpy as np

from jbgui.model import layout
from jbgui.model.statics import load_statics


def symbols(trace_dir, words: np.ndarray) -> np.ndarray:
    """Each word as text naming its method (ids differ between runs that load classes differently)."""
    names, inverse = symbol_table(trace_dir, words)
    return names[inverse]


def symbol_table(trace_dir, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct words' texts and each word's index among them: ``names[inverse]`` is
    :func:`symbols`, and questions about the texts can be asked once per distinct word."""
    st = load_statics(trace_dir)
    uniq, inverse = np.unique(words.astype(np.int64), return_inverse=True)
    names = []
    for w in uniq.tolist():
        kind = w >> layout.TYPE_SHIFT
        if kind == layout.TYPE_EXTENDED:
            names.append(f"ext {(w >> layout.SUBTYPE_SHIFT) & 7}")
        elif kind == layout.TYPE_BLOCK:
            gb = st.block_of_word(w & ((1 << layout.TYPE_SHIFT) - 1))
            method = int(st.b_method[gb])
            names.append(f"block {st.method_qualified(method)} {gb - int(st.m_block_base[method])}")
        else:
            method = (w >> layout.METHOD_SHIFT) & layout.MAX_METHOD_ID
            names.append(("start " if kind == layout.TYPE_METHOD_START else "end ") + st.method_qualified(method))
    return np.array(names, dtype=object), inverse
