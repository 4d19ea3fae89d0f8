"""``jbtrace record``: run a Java program under the recording agent.

The program's stdin, stdout and stderr are its own; jbtrace writes only to stderr (a summary at
the end), and exits with the program's exit status.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jbgui.launch import LaunchError, RecorderOptions, default_trace_dir, record
from jbgui.launch.options import BLOCK_ANALYSES, LEVELS, MODES
from jbgui.launch.report import format_summary

NAME = "record"
HELP = "run a Java program under the recording agent and write a trace directory"
USAGE = "jbtrace record [-o TRACE_DIR] [options] -- <java command line>"
TAKES_COMMAND = True

EPILOG = """\
examples:
  jbtrace record -o hello-trace -- java -cp build Hello
  jbtrace record --no-jdk --level method -- java -jar app.jar input.txt
  jbtrace record -- javac -d out src/*.java

The summary goes to stderr; the program's own output is untouched. jbtrace exits with the
program's exit status. Agent options are described in README.md ("The recorder").
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``record``'s options (the java command line itself comes after ``--``)."""
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("-o", "--output", metavar="TRACE_DIR", type=Path,
                        help="trace directory to create (default: ./<program>-<YYYYmmdd-HHMMSS>)")
    parser.add_argument("--force", action="store_true",
                        help="replace the trace already in TRACE_DIR")
    parser.add_argument("--include", metavar="FILE", type=Path,
                        help="trace only classes under these prefixes (one per line, e.g. java/lang)")
    parser.add_argument("--exclude", metavar="FILE", type=Path,
                        help="do not trace classes under these prefixes")
    parser.add_argument("--no-jdk", action="store_true", help="leave JDK classes untraced")
    parser.add_argument("--level", choices=LEVELS,
                        help="block: every basic block (default); method: entries and exits only")
    parser.add_argument("--bba", choices=BLOCK_ANALYSES,
                        help="basic-block analysis: default, or precise (a block ends at every "
                             "instruction that may throw)")
    parser.add_argument("--mode", type=int, choices=MODES,
                        help="2: one event stream per thread (default); 1: one shared stream")
    parser.add_argument("--events", metavar="FILE", type=Path,
                        help="event selection file (lines 'event NAME', 'outputfile NAME')")
    parser.add_argument("--instructions", action="store_true",
                        help="list each block's instructions in static.xml")
    parser.add_argument("--virtual-threads", metavar="N", type=int,
                        help="trace the first N virtual threads a program starts (default 1000; 0: none); "
                             "each is a stream and a row of its own")


def options_from(args: argparse.Namespace, out: Path) -> RecorderOptions:
    """Map parsed arguments onto recorder options; flags not given stay ``None`` (agent default)."""
    return RecorderOptions(
        out=out,
        include=args.include,
        exclude=args.exclude,
        jdk=False if args.no_jdk else None,
        level=args.level,
        bba=args.bba,
        mode=args.mode,
        events=args.events,
        instructions=True if args.instructions else None,
        virtual_threads=args.virtual_threads,
    )


def run(args: argparse.Namespace) -> int:
    """Record, print the summary on stderr, and return the program's exit status."""
    if not args.command:
        raise LaunchError(
            "no java command line: put it after '--', e.g. "
            "jbtrace record -o trace -- java -cp build Main"
        )
    out = args.output if args.output is not None else default_trace_dir(args.command)
    recording = record(args.command, options_from(args, out), replace=args.force)
    print(format_summary(recording.summary, recording.exit_status, recording.wall_seconds),
          file=sys.stderr)
    if recording.launch_file_problem is not None:
        print(f"jbtrace: warning: {recording.launch_file_problem}", file=sys.stderr)
    return recording.exit_status
