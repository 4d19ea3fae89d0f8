"""METHOD names as users type them, resolved against a recorded program's static information."""

from __future__ import annotations

import pytest

from jbgui.model.method_names import MethodNameError, display_name, resolve_methods, split_spec
from jbgui.model.statics import load_statics


@pytest.fixture(scope="module")
def statics(record, default_jdk, tmp_path_factory):
    run = record("polymorphism", default_jdk)
    assert run.exit_code == 0, run.describe()
    return load_statics(run.trace_dir, tmp_path_factory.mktemp("statics-cache"))


def names(st, mids):
    return [display_name(st, m) for m in mids]


def test_split_accepts_dots_slashes_and_descriptors():
    assert split_spec("java.lang.String.length") == ("java/lang/String", "length", None)
    assert split_spec("java/lang/String.charAt(I)C") == ("java/lang/String", "charAt", "(I)C")
    with pytest.raises(MethodNameError, match="not a method name"):
        split_spec("main")


def test_a_qualified_name_names_every_overload_and_a_descriptor_one(statics):
    overloads = resolve_methods(statics, "java.lang.String.valueOf")
    assert len(overloads) > 3
    assert all(display_name(statics, m, descriptor=False) == "java.lang.String.valueOf" for m in overloads)
    (one,) = resolve_methods(statics, "java.lang.String.valueOf(I)", single=True)
    assert display_name(statics, one) == "java.lang.String.valueOf(I)Ljava/lang/String;"


def test_a_simple_class_name_works_when_unique(statics):
    assert names(statics, resolve_methods(statics, "Main.total")) == ["Main.total([LMain$Shape;)I"]
    assert names(statics, resolve_methods(statics, "Main$Square.sides", single=True)) == ["Main$Square.sides()I"]


def test_unknown_and_ambiguous_names_list_candidates(statics):
    with pytest.raises(MethodNameError) as unknown:
        resolve_methods(statics, "Main.totl")
    assert "no method 'Main.totl'" in str(unknown.value)
    assert "Main.total([LMain$Shape;)I" in str(unknown.value)
    with pytest.raises(MethodNameError) as many:
        resolve_methods(statics, "java.lang.String.valueOf", single=True)
    message = str(many.value)
    assert "ambiguous" in message and "java.lang.String.valueOf(I)" in message and "\n" not in message
