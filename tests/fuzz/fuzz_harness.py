"""Running ``jbtrace`` command lines for the fuzz tests: many per child process
(tests/fuzz/driver.py), each child under a memory limit and a timeout, and what broke the promise."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

DRIVER = Path(__file__).with_name("driver.py")
MEMORY_LIMIT = 3 << 30          # RLIMIT_AS of every child: a blow-up dies instead of swapping


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_jobs(jobs: list[list[str]], work: Path, timeout: float, job_seconds: int = 30) -> list[dict]:
    """Run ``jbtrace`` argument lists in one child (tests/fuzz/driver.py) under the memory limit;
    returns one result per job. A crash or hang of the child fails with what it had done."""
    work.mkdir(parents=True, exist_ok=True)
    spec = work / "jobs.json"
    spec.write_text(json.dumps([{"argv": argv} for argv in jobs]))
    env = dict(os.environ, JBGUI_FUZZ_JOB_SECONDS=str(job_seconds))
    try:
        proc = subprocess.run([sys.executable, str(DRIVER), str(spec)], capture_output=True, text=True,
                              timeout=timeout, preexec_fn=limit_memory, env=env,
                              cwd=str(Path(__file__).resolve().parents[2]))
    except subprocess.TimeoutExpired as error:
        done = (error.stdout or b"").decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
        n = len(done.splitlines())
        pytest.fail(f"the driver hung after {n} jobs; next: {jobs[n] if n < len(jobs) else '?'}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or len(results) != len(jobs):
        n = len(results)
        pytest.fail(f"the driver died (status {proc.returncode}) after {n} jobs; next: "
                    f"{jobs[n] if n < len(jobs) else '?'}\n{proc.stderr[-3000:]}")
    return results


def failures(jobs: list[list[str]], results: list[dict], labels: list[str]) -> list[str]:
    """What broke the promise: a traceback, a hang, an exit status other than 0, 1 or 2."""
    bad = []
    for argv, result, label in zip(jobs, results, labels):
        if result["traceback"] or result["status"] not in (0, 1, 2):
            bad.append(f"{label}: jbtrace {' '.join(argv)} -> status {result['status']}\n"
                       f"{(result['traceback'] or result['stderr'])[-1500:]}")
    return bad
