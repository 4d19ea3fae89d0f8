"""Fuzzing jbtrace and the explorer with damaged copies of real traces (issue 12).

Deterministic: mutation ``i`` of a run uses ``random.Random(SEED + i)``. Every mutated trace is
given to every ``jbtrace`` subcommand that reads a trace; each must end with exit status 0, 1 or
2, no traceback, no signal, within its time, under a 3 GB address-space limit. A few mutated traces
also go through the explorer's ``--screenshot`` path. The fast suite runs a few hundred runs; the
slow suite many more.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz_harness import failures, limit_memory, run_jobs
from fuzz_mutations import MUTATIONS, OUTSIDE_SECRET, commands

SEED = 12_000


def make_mutants(small_traces: dict[str, Path], root: Path, count: int, seed: int) -> list[tuple[str, Path]]:
    """``count`` damaged copies: (label, trace directory)."""
    names = sorted(MUTATIONS)
    out = []
    for i in range(count):
        rng = random.Random(seed + i)
        name = names[i % len(names)] if i < 2 * len(names) else rng.choice(names)
        base = small_traces[rng.choice(sorted(small_traces))]
        trace = root / f"m{i:04d}" / "trace"
        shutil.copytree(base, trace, symlinks=True)
        MUTATIONS[name](trace, rng)
        out.append((f"#{i} {name}", trace))
    return out


def fuzz(small_traces, tmp_path: Path, count: int, seed: int, per_batch: int, cheap: bool) -> None:
    mutants = make_mutants(small_traces, tmp_path / "mutants", count, seed)
    jobs, labels = [], []
    for k, (label, trace) in enumerate(mutants):
        out = trace.parent / "out"
        out.mkdir()
        every = commands(trace, out)
        # The fast run gives each mutant three commands, in turn over the list, so that all of
        # them meet every kind of damage; the slow run gives each mutant every command.
        chosen = [every[(3 * k + j) % len(every)] for j in range(3)] if cheap else every
        for argv in chosen:
            jobs.append(argv)
            labels.append(label)
    bad = []
    statuses: dict[int, int] = {}
    for start in range(0, len(jobs), per_batch):
        part = jobs[start:start + per_batch]
        results = run_jobs(part, tmp_path / f"batch{start}", timeout=60 + 30 * len(part))
        bad += failures(part, results, labels[start:start + per_batch])
        for argv, result in zip(part, results):
            assert OUTSIDE_SECRET not in result["stderr"], argv
            statuses[result["status"]] = statuses.get(result["status"], 0) + 1
    print(f"fuzz: {len(jobs)} runs over {count} damaged traces, exit statuses {statuses}")
    # The damage is real: some runs end in a clean error, and some still succeed on what is valid.
    assert statuses.get(1, 0) + statuses.get(2, 0) > len(jobs) // 10 and statuses.get(0, 0) > len(jobs) // 10, \
        statuses
    assert not bad, f"{len(bad)} of {len(jobs)} runs broke the promise:\n\n" + "\n\n".join(bad[:10])


def test_fuzz_every_subcommand(small_traces, tmp_path):
    fuzz(small_traces, tmp_path, count=72, seed=SEED, per_batch=400, cheap=True)


@pytest.mark.slow
def test_fuzz_every_subcommand_slow(small_traces, tmp_path):
    fuzz(small_traces, tmp_path, count=400, seed=SEED + 100_000, per_batch=500, cheap=False)


def _screenshot(trace: Path, out: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-m", "jbgui.ui.app", str(trace), "--screenshot", str(out)],
                          capture_output=True, text=True, timeout=120, env=env, preexec_fn=limit_memory)


@pytest.mark.parametrize("count", [pytest.param(4, id="fast"), pytest.param(60, id="slow", marks=pytest.mark.slow)])
def test_fuzz_explorer_screenshot(small_traces, tmp_path, count):
    """The explorer opens damaged traces: a banner, never a crash, a hang or a traceback."""
    names = ["random-ids", "static-attribute", "trace-json-shape", "threads-shape", "fs-trick", "clock-extremes"]
    mutants = []
    for i in range(count):
        rng = random.Random(SEED + 50_000 + i)
        base = small_traces[rng.choice(sorted(small_traces))]
        trace = tmp_path / f"g{i}" / "trace"
        shutil.copytree(base, trace, symlinks=True)
        name = names[i % len(names)]
        MUTATIONS[name](trace, rng)
        mutants.append((name, trace))
    for name, trace in mutants:
        png = trace.parent / "shot.png"
        proc = _screenshot(trace, png)
        assert proc.returncode in (0, 1, 2), (name, proc.returncode, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr, (name, proc.stderr[-3000:])
        if proc.returncode == 0:
            assert png.exists() and png.stat().st_size > 1000, (name, proc.stderr[-2000:])
        else:   # a trace that cannot be shown at all: the banner's text, on one line
            assert "jbgui: error:" in proc.stderr, (name, proc.stderr[-2000:])
