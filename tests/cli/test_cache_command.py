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
