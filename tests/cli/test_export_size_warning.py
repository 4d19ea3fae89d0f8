"""``jbtrace export`` says before writing when the output will be large, naming the options
that make it smaller (the size comes from jbgui.model.export_estimate)."""

from __future__ import annotations

import pytest

from jbgui.cli.main import main
from jbgui.model import export_estimate as EE


@pytest.fixture(scope="module")
def trace(program_runs, default_jdk):
    _untraced, run = program_runs("exception_paths", default_jdk)   # recorded once per session
    assert run.exit_code == 0, run.describe()
    return run.trace_dir


def test_a_large_export_is_announced_before_it_is_written(trace, tmp_path, capsys, monkeypatch):
    assert main(["export", str(trace), "-o", str(tmp_path / "a.csv")]) == 0
    assert "warning" not in capsys.readouterr().err          # small: nothing said
    monkeypatch.setattr(EE, "WARN_BYTES", 1000)                # a low threshold, the real estimate
    assert main(["export", str(trace), "-o", str(tmp_path / "b.json"), "--max-events", "0"]) == 0
    err = capsys.readouterr().err
    assert "jbtrace: warning: the export will be about" in err and "--max-events" in err
    assert main(["export", str(trace), "-o", str(tmp_path / "c.folded")]) == 0
    assert "the export will be" in capsys.readouterr().err
