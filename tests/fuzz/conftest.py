"""The fuzz tests' fixture: small real traces to damage (helpers: fuzz_harness.py, damage:
fuzz_mutations.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def small_traces(record, default_jdk) -> dict[str, Path]:
    """Real traces of small programs, application classes only (JDK left out) so that they are
    small: a single-threaded one with exceptions and a multi-threaded one."""
    out = {}
    for program in ("exceptions", "threads"):
        run = record(program, default_jdk, jdk=False)
        assert run.exit_code == 0, run.describe()
        shutil.rmtree(run.trace_dir / "analysis", ignore_errors=True)
        out[program] = run.trace_dir
    return out
