"""The set-up time warm-up (jbgui/model/warmup.py): every kernel is declared cache=True, and after
one warm-up a fresh process loads every kernel it runs from numba's cache instead of compiling."""

from __future__ import annotations

import subprocess
import sys

import pytest

from jbgui.model.warmup import kernels, uncached


def test_every_kernel_is_cached_on_disk():
    found = kernels()
    assert len(found) > 30          # the analyzer's kernels were found at all
    assert uncached(found) == []


@pytest.mark.slow
def test_a_fresh_process_compiles_nothing_after_the_warmup(record, default_jdk):
    run = record("exceptions", default_jdk)
    warm = subprocess.run([sys.executable, "-m", "jbgui.model.warmup", str(run.trace_dir)],
                          capture_output=True, text=True, timeout=900)
    assert warm.returncode == 0, warm.stderr
    check = subprocess.run([sys.executable, "-m", "jbgui.model.warmup", "--check", str(run.trace_dir)],
                           capture_output=True, text=True, timeout=900)
    assert check.returncode == 0, check.stderr
    assert " 0 compiled" in check.stderr and "step failed" not in check.stderr
