"""``jbtrace cache TRACE --size|--clear`` on a real recorded trace."""

from __future__ import annotations

import shutil
from pathlib import Path

from jbgui.cli.main import main
from jbgui.model.analysis import Analysis, user_cache_dir


def test_size_and_clear(record, default_jdk, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = record("hello", default_jdk)
    trace = tmp_path / "t"
    shutil.copytree(run.trace_dir, trace, ignore=shutil.ignore_patterns("analysis"))
    assert main(["cache", str(trace), "--size"]) == 0
    assert capsys.readouterr().out == "no cache\n"
    Analysis.open(trace)
    assert main(["cache", str(trace), "--size"]) == 0
    place, size, ratio = capsys.readouterr().out.split("\t")[:3]
    assert Path(place) == trace / "analysis"
    assert int(size) == sum(p.stat().st_size for p in (trace / "analysis").rglob("*") if p.is_file()) > 0
    assert float(ratio.split()[0]) < 1.0
    Analysis.open(trace, user_cache=True)
    assert main(["cache", str(trace), "--clear"]) == 0
    out = capsys.readouterr().out
    assert out.count("removed ") == 2 and str(user_cache_dir(trace)) in out
    assert not (trace / "analysis").exists() and not user_cache_dir(trace).exists()
    assert (trace / "static.xml").is_file()
    # Not ours: a symlink named analysis is left alone.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (trace / "analysis").symlink_to(elsewhere)
    assert main(["cache", str(trace), "--clear"]) == 0
    assert "left alone" in capsys.readouterr().err
    assert elsewhere.is_dir() and (trace / "analysis").is_symlink()


def test_not_a_trace(tmp_path, capsys):
    assert main(["cache", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jbtrace: error: ") and err.count("\n") == 1


def test_a_damaged_cache_is_a_warning_line_and_the_right_answer(record, default_jdk, tmp_path, capsys):
    run = record("hello", default_jdk)
    trace = tmp_path / "t"
    shutil.copytree(run.trace_dir, trace, ignore=shutil.ignore_patterns("analysis"))
    assert main(["calls", str(trace)]) == 0
    expected = capsys.readouterr().out
    column = next((trace / "analysis" / "replay").glob("T*/method.zst"))
    data = bytearray(column.read_bytes())
    data[len(data) // 2] ^= 0x5A
    column.write_bytes(bytes(data))
    assert main(["calls", str(trace)]) == 0
    captured = capsys.readouterr()
    assert captured.out == expected
    warnings = [line for line in captured.err.splitlines() if "damaged" in line]
    assert len(warnings) == 1 and warnings[0].startswith("jbtrace: warning: the analysis cache was damaged")
    assert "Traceback" not in captured.err


def test_jbgui_cache_is_the_user_cache_base(tmp_path, monkeypatch):
    from jbgui.model.analysis import user_cache_base
    monkeypatch.delenv("JBGUI_CACHE_DIR", raising=False)
    monkeypatch.setenv("JBGUI_CACHE", str(tmp_path / "c"))
    assert user_cache_base() == tmp_path / "c" / "analysis"
    monkeypatch.setenv("JBGUI_CACHE_DIR", str(tmp_path / "d"))
    assert user_cache_base() == tmp_path / "d"
