"""jEdit starting up (Debian's ``jedit``), until its first view shows: the real interactive program
the issues measure the recorder and the explorer on (a Swing application of ~3,600 classes and
20-odd threads, the workload JBInsTrace reported on).

jEdit runs under a private Xvfb display with fresh settings (no plugins, no recent files, no
server socket), and a BeanShell script passed with ``-run`` starts a thread of its own that waits
until the first view is showing, then asks jEdit to exit. The waiting is a compiled class
(``WaitForView``, compiled into the work directory and put on the class path after jEdit's jar),
not a BeanShell loop: BeanShell interprets each statement through reflection, and traced, its
loop polling every 100 ms recorded 75 million of the run's 534 million events (14%, on a second
thread competing for the machine's two cores) and lasted longer the slower the traced run was.
The compiled wait records a few dozen events per poll, so nothing beside jEdit's start-up counts.

Used by ``benchmarks/bench_recorder.py`` (``--workload jedit``) and to record a trace for the
explorer and store benchmarks::

    python benchmarks/jedit_startup.py OUT_DIR        # records jEdit's start-up into OUT_DIR
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JEDIT_JAR = Path("/usr/share/jedit/jedit.jar")
MAIN_CLASS = "org.gjt.sp.jedit.jEdit"
SHOWN = "jbgui-first-view-shown"
# Polls every 100 ms until the first view is on screen, then exits jEdit the way its File > Exit
# does (on the event thread), so shutdown hooks and the tracer's flush run. An anonymous class,
# not a lambda, so that the wait bootstraps nothing jEdit would not.
WAIT_FOR_VIEW = f"""import javax.swing.SwingUtilities;
import org.gjt.sp.jedit.jEdit;

public final class WaitForView implements Runnable {{
    public void run() {{
        try {{
            while (jEdit.getFirstView() == null || !jEdit.getFirstView().isShowing()) {{
                Thread.sleep(100);
            }}
        }} catch (InterruptedException e) {{
            return;
        }}
        System.out.println("{SHOWN}");
        SwingUtilities.invokeLater(new Runnable() {{
            public void run() {{
                jEdit.exit(null, false);
            }}
        }});
    }}
}}
"""
# Runs inside jEdit (BeanShell), which finds WaitForView on the class path.
START_WAITING = 'new Thread(new WaitForView(), "jbgui-wait-for-view").start();\n'


class JeditMissing(RuntimeError):
    """Debian's jedit (or Xvfb) is not installed."""


def require() -> None:
    """Raise :class:`JeditMissing` naming the package to install."""
    if not JEDIT_JAR.exists():
        raise JeditMissing(f"{JEDIT_JAR} is missing: apt-get install jedit")
    if shutil.which("Xvfb") is None:
        raise JeditMissing("Xvfb is missing: apt-get install xvfb")


def java_args(work: Path, javac: str | None = None) -> list[str]:
    """The JVM arguments (after ``java``) of one start-up; writes the script and compiles the
    waiting class into ``work`` (with ``javac``, by default the one on PATH). Settings go to
    ``work/settings``: :func:`fresh_settings` empties it before each run."""
    javac = javac or shutil.which("javac")
    if javac is None:
        raise JeditMissing("javac is missing (it compiles the class that waits for the first view)")
    helper = work / "wait-for-view"
    helper.mkdir(parents=True, exist_ok=True)
    source = helper / "WaitForView.java"
    source.write_text(WAIT_FOR_VIEW)
    subprocess.run([javac, "--release", "11", "-nowarn", "-cp", str(JEDIT_JAR), "-d", str(helper), str(source)],
                   check=True, capture_output=True, text=True)
    script = work / "exit-when-shown.bsh"
    script.write_text(START_WAITING)
    return ["-cp", os.pathsep.join([str(JEDIT_JAR), str(helper)]), MAIN_CLASS, "-nosplash", "-noserver",
            "-nobackground", f"-settings={work / 'settings'}", f"-run={script}"]


def fresh_settings(work: Path) -> None:
    """A first start every time: jEdit writes its settings on exit, and a second start with them
    would do less (no first-run setup) than the first."""
    shutil.rmtree(work / "settings", ignore_errors=True)


@contextlib.contextmanager
def xvfb_display():
    """A private X display (``:N``) for the duration; yields the DISPLAY value."""
    require()
    for number in range(91, 140):
        if Path(f"/tmp/.X{number}-lock").exists():
            continue
        proc = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            if Path(f"/tmp/.X11-unix/X{number}").exists():
                break
            time.sleep(0.05)
        if proc.poll() is not None:
            continue
        try:
            yield f":{number}"
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        return
    raise JeditMissing("no free X display number for Xvfb")


def view_was_shown(work: Path) -> bool:
    """Whether the run in ``work`` reached its first view (jEdit logs the script's output)."""
    log = work / "settings" / "activity.log"
    return log.exists() and SHOWN in log.read_text(errors="replace")


def record(out: Path, jbtrace: Path | None = None, options: list[str] | None = None) -> tuple[subprocess.CompletedProcess, bool]:
    """Record jEdit's start-up into ``out`` with ``jbtrace record`` (this checkout's by default);
    also says whether the first view was shown."""
    jbtrace = jbtrace or Path(sys.executable).with_name("jbtrace")
    work = Path(tempfile.mkdtemp(prefix="jedit-"))
    try:
        args = java_args(work)
        with xvfb_display() as display:
            env = dict(os.environ, DISPLAY=display)
            for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH"):
                env.pop(name, None)
            result = subprocess.run([str(jbtrace), "record", "--force", *(options or []), "-o", str(out), "--",
                                     "java", *args], cwd=work, env=env, capture_output=True, text=True)
        return result, view_was_shown(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("::")[-1].strip(), file=sys.stderr)
        return 2
    try:
        result, shown = record(Path(argv[0]))
    except JeditMissing as error:
        print(f"jedit_startup: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(result.stdout[-2000:])
    sys.stderr.write(result.stderr[-2000:])
    if result.returncode != 0 or not shown:
        print(f"jedit_startup: jEdit did not show its view (exit status {result.returncode})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
