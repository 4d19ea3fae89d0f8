"""Method names as users type them: the one place that turns ``pkg.Class.name`` or
``pkg.Class.name(descriptor)`` into method ids, for every command and view that takes a METHOD.

Accepted forms (``.`` or ``/`` between package parts, ``$`` for nested classes):

- ``pkg.Class.name``: every overload of ``name`` in ``pkg.Class``;
- ``pkg.Class.name(I)V`` or ``pkg.Class.name(I)``: the overload whose descriptor is, or starts
  with, the given text;
- ``Class.name`` without a package: accepted when exactly one loaded class has that simple name.

A name that matches nothing, or matches methods of several classes (the same simple name in two
packages, or one class defined by two class loaders), raises :class:`MethodNameError` whose
message is one line listing the candidates, which the command line prints as it is.
"""

from __future__ import annotations

from collections import defaultdict

from jbgui.model.errors import TraceError

# How many candidates an error message lists before it says "and N more".
SHOWN_CANDIDATES = 8


class MethodNameError(TraceError):
    """A METHOD that names no method, or is ambiguous; the message lists the candidates."""


def split_spec(spec: str) -> tuple[str, str, str | None]:
    """``(class, name, descriptor or None)`` of a METHOD; the class in internal form (``a/b/C``)."""
    text = spec.strip()
    desc = None
    paren = text.find("(")
    if paren >= 0:
        text, desc = text[:paren], text[paren:]
    text = text.replace("/", ".")
    cls, dot, name = text.rpartition(".")
    if not dot or not cls or not name:
        raise MethodNameError(f"{spec!r} is not a method name: write pkg.Class.method or pkg.Class.method(descriptor)")
    return cls.replace(".", "/"), name, desc


class MethodIndex:
    """Method ids by (class, name) for one trace's static information, built once."""

    def __init__(self, statics):
        self.statics = statics
        self._by_class_name: dict[tuple[str, str], list[int]] = defaultdict(list)
        self._classes_by_simple: dict[str, set[str]] = defaultdict(set)
        for mid in range(1, len(statics.m_name)):
            name = statics.m_name[mid]
            if not name:
                continue   # unused id or a block page of a large method
            cls = statics.class_of_method(mid)
            self._by_class_name[(cls, name)].append(mid)
            self._classes_by_simple[cls.rsplit("/", 1)[-1]].add(cls)

    def find(self, spec: str) -> list[int]:
        """Every method id that ``spec`` names (possibly none), in id order."""
        cls, name, desc = split_spec(spec)
        classes = [cls] if (cls, name) in self._by_class_name or "/" in cls else sorted(self._classes_by_simple.get(cls, ()))
        found = []
        for c in classes:
            for mid in self._by_class_name.get((c, name), ()):
                if desc is None or self.statics.m_desc[mid].startswith(desc):
                    found.append(mid)
        return sorted(found)

    def resolve(self, spec: str, *, single: bool = False) -> list[int]:
        """The methods ``spec`` names: all overloads of one class, or exactly one with ``single``.

        Raises :class:`MethodNameError` for no match, for matches in more than one class (or one
        class name defined by two loaders), and, with ``single``, for several overloads.
        """
        found = self.find(spec)
        if not found:
            raise MethodNameError(f"no method {spec!r} in this trace{self._near(spec)}")
        st = self.statics
        owners = {int(st.m_class[mid]) for mid in found}
        if len(owners) > 1 or (single and len(found) > 1):
            raise MethodNameError(f"{spec!r} is ambiguous: {self._list(found)}")
        return found

    def _list(self, mids: list[int]) -> str:
        st = self.statics
        names = []
        for mid in mids[:SHOWN_CANDIDATES]:
            loader = st.c_loader[int(st.m_class[mid])] if st.c_loader else ""
            names.append(st.method_qualified(mid) + (f" [loader {loader}]" if loader and _loader_matters(st, mids) else ""))
        more = len(mids) - SHOWN_CANDIDATES
        return ", ".join(names) + (f" and {more} more" if more > 0 else "")

    def _near(self, spec: str) -> str:
        """``; candidates: …`` for methods of that name elsewhere or names in that class."""
        try:
            cls, name, _desc = split_spec(spec)
        except MethodNameError:
            return ""
        simple = cls.rsplit("/", 1)[-1]
        same_name = [m for (c, n), mids in self._by_class_name.items() if n == name for m in mids]
        in_class = [m for (c, n), mids in self._by_class_name.items()
                    if c == cls or c.rsplit("/", 1)[-1] == simple for m in mids]
        near = sorted(set(same_name if same_name and len(same_name) <= 50 else in_class))
        return f"; candidates: {self._list(near)}" if near else ""


def _loader_matters(st, mids: list[int]) -> bool:
    """Whether the listed methods share qualified names, so that only their loaders tell them apart."""
    names = [st.method_qualified(m) for m in mids]
    return len(set(names)) < len(names)


def method_index(statics) -> MethodIndex:
    """The statics' :class:`MethodIndex`, built on first use and kept on the statics object."""
    index = getattr(statics, "_method_index", None)
    if index is None:
        index = MethodIndex(statics)
        try:
            object.__setattr__(statics, "_method_index", index)
        except AttributeError:  # pragma: no cover - a frozen or slotted statics: build each time
            pass
    return index


def resolve_methods(statics, spec: str, *, single: bool = False) -> list[int]:
    """Method ids named by ``spec`` (see the module's docstring); raises :class:`MethodNameError`."""
    return method_index(statics).resolve(spec, single=single)


def display_name(statics, method_id: int, *, descriptor: bool = True) -> str:
    """``pkg.Class.name(desc)`` as the commands print it (``pkg.Class.name`` without descriptor)."""
    if descriptor:
        return statics.method_qualified(method_id)
    cls = statics.class_of_method(method_id).replace("/", ".")
    return f"{cls}.{statics.m_name[method_id]}" if cls else ""
