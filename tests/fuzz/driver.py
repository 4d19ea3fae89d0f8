"""Runs many ``jbtrace`` command lines in one process, for the fuzz tests: starting a Python with
numpy, numba and lxml costs more than most runs on a small damaged trace.

``python driver.py JOBS.json`` reads ``[{"argv": [...]}, ...]`` and prints one JSON line per job:
``{"job": i, "status": exit status, "traceback": text or null, "stderr": the last 2000 characters,
"seconds": s}``. A job that raises is recorded with its traceback (the promise is that none does);
a job that takes longer than ``JBGUI_FUZZ_JOB_SECONDS`` is interrupted by SIGALRM and recorded as
a hang. A crash of the process (a signal) ends the batch: the parent sees the missing lines.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time
import traceback


class Hang(BaseException):
    pass


def _alarm(_signum, _frame):
    raise Hang()


def main() -> int:
    from jbgui.cli.main import main as jbtrace

    jobs = json.loads(open(sys.argv[1]).read())
    limit = int(os.environ.get("JBGUI_FUZZ_JOB_SECONDS", "30"))
    signal.signal(signal.SIGALRM, _alarm)
    out = sys.stdout
    for i, job in enumerate(jobs):
        err = io.StringIO()
        tb = None
        status = None
        t0 = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            signal.alarm(limit)
            try:
                with contextlib.redirect_stdout(devnull), contextlib.redirect_stderr(err):
                    try:
                        status = jbtrace(job["argv"])
                    except SystemExit as exit_:
                        status = exit_.code if isinstance(exit_.code, int) else 2
            except Hang:
                tb = f"hang: more than {limit} s"
            except BaseException:  # noqa: BLE001 - every escape is what the fuzz test looks for
                tb = traceback.format_exc()
            finally:
                signal.alarm(0)
        text = err.getvalue()
        if "Traceback (most recent call last)" in text and tb is None:
            tb = text
        out.write(json.dumps({"job": i, "status": status, "traceback": tb, "stderr": text[-2000:],
                              "seconds": round(time.perf_counter() - t0, 3)}) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
