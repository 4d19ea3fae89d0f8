"""``jbtrace``: dispatch to one subcommand module each.

A subcommand module provides ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``,
and sets ``TAKES_COMMAND = True`` if it runs a command line given after ``--``. To add one, write
the module and list it in :data:`SUBCOMMANDS`.

Errors a user can cause end as one line, ``jbtrace: error: …``, and a non-zero exit status
(2 for bad input); never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from jbgui import __version__
from jbgui.cli import calls, check, dump, export, record, stats
from jbgui.cli import blockviews, cache, methods, sql, tree
from jbgui.cli.trace_input import TraceInputError
from jbgui.launch import LaunchError
from jbgui.model.errors import TraceError
from jbgui.model.format.files import show

SUBCOMMANDS: tuple[ModuleType, ...] = (record, dump, check, calls, stats, export, methods, tree, sql, cache)
SUBCOMMANDS += blockviews.SUBCOMMANDS  # cfg, path, variants, loops, exceptions, discovery

USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    """The ``jbtrace`` parser with every subcommand's parser attached."""
    parser = argparse.ArgumentParser(
        prog="jbtrace",
        description="Record basic-block traces of Java programs and inspect them.",
    )
    parser.add_argument("--version", action="version", version=f"jbtrace {__version__}")
    subparsers = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    for module in SUBCOMMANDS:
        sub = subparsers.add_parser(module.NAME, help=module.HELP, description=module.HELP,
                                    usage=getattr(module, "USAGE", None))
        module.add_arguments(sub)
        sub.set_defaults(subcommand_module=module)
    return parser


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """Split at the first ``--``: jbtrace's own arguments, and the command line to run (or None).

    Done before argparse, because argparse would read the program's own options (``-cp``,
    ``--help``) as ours.
    """
    argv = list(argv)
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1:]
    return argv, None


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``jbtrace`` with ``argv`` (default: the process's arguments); return the exit status."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")   # a path with undecodable bytes prints
    own, command = split_command(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(own)  # exits with status 2 and a usage line on bad options
    module = getattr(args, "subcommand_module", None)
    if module is None:
        parser.print_help(sys.stderr)
        return USAGE_ERROR
    if getattr(module, "TAKES_COMMAND", False):
        args.command = command
    elif command is not None:
        parser.error(f"{module.NAME} takes no command line after '--'")
    try:
        return module.run(args)
    except (LaunchError, TraceInputError) as error:
        print(f"jbtrace: error: {show(str(error))}", file=sys.stderr)
        return error.exit_status
    except TraceError as error:
        # A damaged trace met past the point where a subcommand opened it: still one line.
        print(f"jbtrace: error: {show(str(error))}", file=sys.stderr)
        return TraceInputError.exit_status
    except BrokenPipeError:
        # The reader went away (``jbtrace calls … | head``): not an error.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
