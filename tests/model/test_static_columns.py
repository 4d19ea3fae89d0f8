"""static.xml's two readers give the replay the same tables.

The fast reader (``static_xml.fast_columns``: an lxml parser target, no element objects, checks
on whole columns) reads what the recorder writes; anything else makes it give way to the record
reader, which reads class by class and leaves out only what is malformed. Compared here on traces
the agent recorded, with and without instruction listings, and on mutated copies of them: the
fast reader either gives way or gives exactly the record reader's tables.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from jbgui.model import statics as ST
from jbgui.model.format import static_xml as X


def _by_records(xml: Path) -> ST.Statics:
    reader = X.StaticReader(xml)
    return ST._build(X.columns_from_records(list(reader.classes()), reader.problems))


def _differences(a: ST.Statics, b: ST.Statics) -> list[str]:
    out = []
    for name in a.__dataclass_fields__:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            same = x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
        else:
            same = x == y
        if not same:
            out.append(name)
    return out


@pytest.fixture(scope="module")
def listed(record, default_jdk) -> Path:
    """A program's own classes with instruction listings (the static.xml the method view reads)."""
    run = record("block_views", default_jdk, jdk=False, instructions=True)
    assert run.trace_dir is not None, run.describe()
    return run.trace_dir / "static.xml"


def test_fast_reader_equals_the_record_reader_on_recorded_traces(program_runs, default_jdk, listed):
    _, traced = program_runs("exceptions", default_jdk)     # the JDK's classes too: thousands of them
    for xml in (traced.trace_dir / "static.xml", listed):
        fast = X.fast_columns(xml)
        assert fast is not None, f"{xml}: the fast reader gave way on what the recorder wrote"
        built = ST._build(fast)
        assert built.n_blocks > 0 and built.n_sites > 0
        assert _differences(built, _by_records(xml)) == []
    assert ST._build(X.fast_columns(listed)).instructions, "the listings were read"


def _mutate(text: str, which: str) -> str:
    if which == "blocks count":
        return re.sub(r'blocks="([1-9]\d*)"', lambda m: f'blocks="{int(m.group(1)) + 1}"', text, count=1)
    if which == "block order":
        return text.replace('index="0"', 'index="1"', 1)
    if which == "offset":
        return re.sub(r'offset="\d+"', 'offset="x"', text, count=1)
    if which == "class id twice":
        ids = re.findall(r'<class id="(\d+)"', text)
        return text.replace(f'<class id="{ids[1]}"', f'<class id="{ids[0]}"', 1)
    if which == "method id twice":
        ids = re.findall(r'<method id="(\d+)"', text)
        return text.replace(f'<method id="{ids[-1]}"', f'<method id="{ids[0]}"', 1)
    if which == "comment in a listing":
        return text.replace("<instructions>", "<instructions><!-- x -->", 1)
    if which == "entity":
        return text.replace("<static_information", '<!DOCTYPE s [<!ENTITY e "boom">]>\n<static_information', 1) \
            .replace('name="', 'name="&e;', 1)
    if which == "cut off":
        return text[:len(text) // 2]
    if which == "element out of place":
        return text.replace("<basic_block ", "<surprise/><basic_block ", 1)
    if which == "unknown element at the top":
        return text.replace("<class ", "<extra note='ignored'/>\n<class ", 1)
    if which == "method without id":
        return re.sub(r'<method id="\d+" ', "<method ", text, count=1)
    raise AssertionError(which)


@pytest.mark.parametrize("which,fast_reads", [
    ("blocks count", False), ("block order", False), ("offset", False), ("class id twice", False),
    ("method id twice", False), ("comment in a listing", False), ("entity", False), ("cut off", False),
    ("element out of place", False), ("method without id", False), ("unknown element at the top", True),
])
def test_unusual_files_go_to_the_record_reader(listed, tmp_path, which, fast_reads):
    xml = tmp_path / "static.xml"
    xml.write_text(_mutate(listed.read_text(), which))
    fast = X.fast_columns(xml)
    assert (fast is not None) == fast_reads
    # Whatever reads it, the tables are the record reader's (which says what it left out).
    assert _differences(ST._parse(xml), _by_records(xml)) == []
    # The record reader reads past the rest (it ignores elements it does not look for).
    if which in ("blocks count", "block order", "offset", "class id twice", "method id twice", "cut off"):
        assert ST._parse(xml).problems, "the record reader says what it left out"


def test_odd_values_never_make_the_readers_differ(listed, tmp_path):
    """Every attribute the readers check, set to each odd value in turn (at a random element):
    the fast reader gives way, or agrees with the record reader."""
    # The program's own classes only (those with listings): a small file, read hundreds of times.
    whole = listed.read_text()
    own = [c for c in re.findall(r"<class .*?</class>\n", whole, re.S) if not re.match(r'<class [^>]*jdk="true"', c)]
    assert own
    text = whole[:whole.index("<class ")] + "".join(own) + "</static_information>\n"
    names = ("id", "index", "start", "end", "offset", "blocks", "block_pages", "code_length", "access",
             "basic_block_id", "name", "desc", "call", "type", "metrics", "lines", "instrumented", "native")
    odd = ["", "-1", "-2", "0", "+3", " 4", "1_0", "99999999999", "x", "2048", "65535", "65536", "true", "false"]
    rng = random.Random(20261126)
    agreed = gave_way = 0
    for name in names:
        spans = [m.span(1) for m in re.finditer(rf' {name}="([^"]*)"', text)]
        assert spans, name
        for value in odd:
            start, end = rng.choice(spans)
            xml = tmp_path / "static.xml"
            xml.write_text(text[:start] + value + text[end:])
            fast = X.fast_columns(xml)
            if fast is None:
                gave_way += 1
                continue
            agreed += 1
            assert _differences(ST._build(fast), _by_records(xml)) == [], f"{name}={value!r}"
    assert agreed and gave_way, (agreed, gave_way)


@pytest.mark.parametrize("value,expected", [
    ("7", 7), ("0000000007", 7), ("2147483647", 2147483647), ("2147483648", 0), ("99999999999999999999999", 0),
    ("+7", 7), ("-1", 0), ("7.0", 0), ("x", 0), ("\u0663", 3),
])
def test_block_metrics_read_as_int_would(value, expected):
    """The blocks' metrics: numpy's text parser where the text is plain digits, int() for the
    rest; a block with a value that is not an integer in 0 … 2^31-1 counts 0 (and is reported)."""
    plain = " ".join(["1"] * 19)
    odd = " ".join([value] + ["1"] * 18)
    problems = []
    table = X.metrics_table([plain, odd, plain], problems)
    assert table.dtype == np.int32 and table.shape == (3, 19)
    assert table[0].tolist() == table[2].tolist() == [1] * 19
    assert table[1, 0] == expected and table[1, 1:].tolist() == ([1] * 18 if expected or value == "0" else [0] * 18)
    assert bool(problems) == (expected == 0)


def test_the_tables_are_kept_and_read_back(listed, tmp_path, monkeypatch):
    """The first open keeps the tables; the next open reads them instead of static.xml, equal."""
    first = ST.load_statics(listed.parent, tmp_path)
    kept = tmp_path / "statics.npz.zst"
    assert kept.is_file()
    parse = ST._parse
    monkeypatch.setattr(ST, "_parse", None)           # the second open must not read static.xml
    again = ST.load_statics(listed.parent, tmp_path)
    assert _differences(first, again) == []
    monkeypatch.setattr(ST, "_parse", parse)
    kept.write_bytes(kept.read_bytes()[:100])        # damaged: static.xml is read again
    assert _differences(first, ST.load_statics(listed.parent, tmp_path)) == []


# --- static.xml read in two halves at once (static_split) -------------------------------------

from jbgui.model.format import static_split as SPLIT   # noqa: E402


def test_halves_read_exactly_what_one_pass_reads(program_runs, default_jdk, listed):
    """Split at every share from a tenth to nine tenths: the halves, joined, are the collector of
    one pass, and the tables built from them are equal."""
    _, traced = program_runs("exceptions", default_jdk)
    xml = traced.trace_dir / "static.xml"
    one = ST._build(X.fast_columns(xml, split=None))
    for share in (0.1, 0.3, 0.5, 0.56, 0.7, 0.9):
        halves = SPLIT.collect_halves(xml, 1 << 16, 0, share)
        assert halves is not None, f"{share}: not split"
        assert _differences(ST._build(X._checked_columns(halves)), one) == [], share
    assert _differences(ST._build(X.fast_columns(xml, split=0)), one) == []
    # a file with listings is read in one pass (the plain collectors give way), the same tables
    assert SPLIT.collect_halves(listed, 1 << 16, 0) is None
    assert _differences(ST._build(X.fast_columns(listed, split=0)), ST._build(X.fast_columns(listed, split=None))) == []


def _split_file(listed: Path, tmp_path: Path, change) -> Path:
    """The program's static.xml without listings (so it is split), changed by ``change``."""
    text = re.sub(r"\s*<instructions>.*?</instructions>", "", listed.read_text(), flags=re.S)
    xml = tmp_path / "static.xml"
    xml.write_text(change(text))
    return xml


@pytest.mark.parametrize("which", ["blocks count", "block order", "offset", "class id twice", "method id twice",
                                   "entity", "cut off", "element out of place", "method without id",
                                   "unknown element at the top"])
def test_unusual_files_split_or_not_read_as_in_one_pass(listed, tmp_path, which):
    xml = _split_file(listed, tmp_path, lambda text: _mutate(text, which))
    for share in (0.2, 0.5, 0.8):
        split, one = X.fast_columns(xml, split=0), X.fast_columns(xml, split=None)
        assert (split is None) == (one is None), share
        if one is not None:
            assert _differences(ST._build(split), ST._build(one)) == []


def _middle_class(text: str) -> int:
    starts = [m.start() + 1 for m in re.finditer(r"\n<class ", text)]
    assert len(starts) >= 3
    return starts[len(starts) // 2]


@pytest.mark.parametrize("where", ["comment", "cdata", "pi", "namespace", "doctype comment", "nested"])
def test_a_split_that_would_read_differently_is_not_made(listed, tmp_path, where):
    """Splitting before a line's ``<class`` is wrong inside a comment, CDATA section or processing
    instruction, under a namespace declaration, or inside an element: the reader then reads the
    file in one pass, with one pass's verdict. The split is aimed at that ``<class``."""
    aim = []

    def change(text: str) -> str:
        at = _middle_class(text)
        opening = {"comment": "<!-- a class that is not one:", "cdata": "<![CDATA[", "pi": "<?note"}.get(where)
        closing = {"comment": " -->", "cdata": "]]>", "pi": "?>"}.get(where)
        if opening is not None:
            text = text[:at] + opening + text[at - 1:].replace("</class>", "</class>" + closing, 1)
            aim.append(at + len(opening))     # the line's "<class" inside it
            return text
        if where == "nested":    # a class inside the class before it: out of the format
            end = text.rindex("</class>", 0, at)
            text = text[:end] + text[end + len("</class>"):at] + text[at:].replace("</class>", "</class></class>", 1)
            aim.append(at - len("</class>") - 1)
            return text
        if where == "namespace":
            text = text.replace("<static_information ", '<static_information xmlns="urn:x" ', 1)
        elif where == "doctype comment":
            text = text.replace("<static_information ", "<!-- recorded -->\n<static_information ", 1)
        else:
            raise AssertionError(where)
        aim.append(_middle_class(text) - 1)
        return text
    xml = _split_file(listed, tmp_path, change)
    text = xml.read_text()
    assert text[aim[0]:aim[0] + len("\n<class ")] == "\n<class ", text[aim[0] - 40:aim[0] + 40]
    share = len(text[:aim[0]].encode()) / xml.stat().st_size
    assert SPLIT.collect_halves(xml, 1 << 16, 0, share) is None
    # aimed just before the construct (the file is split before it): the same tables as one pass
    split, one = X.fast_columns(xml, split=0), X.fast_columns(xml, split=None)
    assert (split is None) == (one is None)
    if one is not None:
        assert _differences(ST._build(split), ST._build(one)) == []


def test_a_child_that_cannot_help_leaves_one_pass(listed, tmp_path, monkeypatch):
    """No Python to start, or a child that fails or hangs: the file is read in one pass."""
    xml = _split_file(listed, tmp_path, lambda text: text)
    one = ST._build(X.fast_columns(xml, split=None))
    assert SPLIT.collect_halves(xml, 1 << 16, 0) is not None
    monkeypatch.setattr(SPLIT, "PYTHON", str(tmp_path / "no-python"))
    assert SPLIT.collect_halves(xml, 1 << 16, 0) is None
    assert _differences(ST._build(X.fast_columns(xml, split=0)), one) == []
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setattr(SPLIT, "PYTHON", str(failing))
    assert SPLIT.collect_halves(xml, 1 << 16, 0) is None
    hanging = tmp_path / "hanging"
    hanging.write_text("#!/bin/sh\nexec sleep 30\n")
    hanging.chmod(0o755)
    monkeypatch.setattr(SPLIT, "PYTHON", str(hanging))
    monkeypatch.setattr(SPLIT, "TIMEOUT", 0.5)
    assert SPLIT.collect_halves(xml, 1 << 16, 0) is None
    assert _differences(ST._build(X.fast_columns(xml, split=0)), one) == []
