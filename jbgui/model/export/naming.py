"""How exports name things: Java descriptors as parameter lists, method and call-site names
looked up once per distinct key, row flags as text, frames of collapsed stacks."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from jbgui.model.cct import OVERFLOW_KEY, SYNTHETIC_KEY
from jbgui.model.statics import M_JDK, Statics
from jbgui.model.export.common import FLAG_NAMES
from jbgui.model.export.text import _KeyedPool


_PRIMITIVES = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long", "S": "short",
               "Z": "boolean", "V": "void"}


_DESCRIPTOR_TYPE = re.compile(r"(\[*)(?:L([^;]+);|([BCDFIJSZV]))")


def java_parameters(descriptor: str) -> str:
    """``(Ljava/lang/String;[I)V`` → ``(String,int[])``: parameter types by simple name."""
    inside = descriptor[1:descriptor.find(")")] if descriptor.startswith("(") else ""
    out = []
    for dims, ref, prim in _DESCRIPTOR_TYPE.findall(inside):
        name = ref.rsplit("/", 1)[-1] if ref else _PRIMITIVES[prim]
        out.append(name + "[]" * len(dims))
    return "(" + ",".join(out) + ")"


class _Names:
    """Names of calls, computed once per distinct method or call site.

    A call is named by its *name key*: its method id when the method is known, else
    ``site_base + call site`` (a synthetic row's target), else 0 (unknown)."""

    def __init__(self, statics: Statics):
        self.st = statics
        self.named = np.array([bool(n) for n in statics.m_name], np.bool_)
        self.site_base = len(statics.m_name)
        self.jdk = np.zeros(self.site_base + statics.n_sites + 1, np.bool_)
        self.jdk[:self.site_base] = (np.asarray(statics.m_flags, np.int64) & M_JDK) != 0
        self._parts: dict[int, tuple[str, str, str]] = {}

    def keys(self, method: np.ndarray, site: np.ndarray) -> np.ndarray:
        method = method.astype(np.int64)
        site = site.astype(np.int64)
        ok = (method > 0) & (method < len(self.named))
        ok[ok] = self.named[method[ok]]
        return np.where(ok, method, np.where(site >= 0, self.site_base + site, 0))

    def parts(self, key: int) -> tuple[str, str, str]:
        """(dotted class, method name, descriptor) of a name key."""
        got = self._parts.get(key)
        if got is None:
            st = self.st
            if 0 < key < self.site_base and self.named[key]:
                got = (st.class_of_method(key).replace("/", "."), st.m_name[key], st.m_desc[key])
            elif key >= self.site_base:
                owner, _, rest = st.s_call[key - self.site_base].partition(":")
                paren = rest.find("(")
                name, desc = (rest[:paren], rest[paren:]) if paren >= 0 else (rest, "")
                got = (owner.replace("/", ".") or "<invokedynamic>", name, desc)
            else:
                got = ("<unknown>", "<unknown>", "")
            self._parts[key] = got
        return got

    def pool(self, render: Callable[[tuple[str, str, str]], str], encode: Callable[[str], bytes]) -> _KeyedPool:
        """A pool of ``render(parts)`` per name key."""
        return _KeyedPool(lambda key: render(self.parts(key)), encode)


def _flag_text(flags: int) -> str:
    return "|".join(name for name, bit in FLAG_NAMES if flags & bit)


def _frame(text: str) -> str:
    """A frame name collapsed stacks can hold: no ';' (the separator) and no line breaks."""
    text = text.replace(";", ",").replace("\n", " ").replace("\r", " ").strip()
    return text or "?"


def _context_frame(names: _Names, key: int, native: bool) -> str:
    """The frame name of a calling-context key: ``pkg.Cls.method(Params)``."""
    if key == OVERFLOW_KEY:
        return "(more contexts)"
    if key >= SYNTHETIC_KEY:
        cls, method, desc = names.parts(names.site_base + key - SYNTHETIC_KEY)
        return f"{cls}.{method}{java_parameters(desc)} [{'native' if native else 'untraced'}]"
    if not 0 < key < names.site_base or not names.named[key]:
        return f"<method {key}>"
    cls, method, desc = names.parts(key)
    return f"{cls}.{method}{java_parameters(desc)}"
