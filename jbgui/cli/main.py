"""``jbtrace``: dispatch to one subcommand module each.

A subcommand module provides ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``,
and sets ``TAKES_COMMAND = True`` if it runs a command line given after ``--``. To add one, write
the module and list it in :data:`SUBCOMMAND_MODULES`.

Only the subcommand that runs is imported: ``jbtrace record`` starts the program without first
loading the analyzer and numba (about a second before the JVM started, measured with
``python -X importtime``). ``jbtrace --help`` and a mistyped name import them all.

Errors a user can cause end as one line, ``jbtrace: error: …``, and a non-zero exit status
(2 for bad input); never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

import importlib

from jbgui import __version__
from jbgui.cli.errors import TraceInputError
from jbgui.launch.errors import LaunchError
from jbgui.model.errors import TraceError
from jbgui.model.format.files import show

# Subcommand name -> the module that defines it, in the order `jbtrace --help` lists them.
# jbgui.cli.blockviews defines several (its SUBCOMMANDS).
SUBCOMMAND_MODULES: dict[str, str] = {
    "record": "jbgui.cli.record", "dump": "jbgui.cli.dump", "check": "jbgui.cli.check",
    "calls": "jbgui.cli.calls", "stats": "jbgui.cli.stats", "export": "jbgui.cli.export",
    "methods": "jbgui.cli.methods", "tree": "jbgui.cli.tree", "sql": "jbgui.cli.sql", "cache": "jbgui.cli.cache",
    **{name: "jbgui.cli.blockviews" for name in ("cfg", "path", "variants", "loops", "exceptions", "discovery")},
}


def subcommand(name: str) -> ModuleType:
    """The subcommand called ``name``, importing only the module that defines it."""
    module = importlib.import_module(SUBCOMMAND_MODULES[name])
    for candidate in getattr(module, "SUBCOMMANDS", (module,)):
        if candidate.NAME == name:
            return candidate
    raise LookupError(f"{SUBCOMMAND_MODULES[name]} defines no subcommand {name!r}")


def all_subcommands() -> tuple[ModuleType, ...]:
    """Every subcommand (imports them all)."""
    return tuple(subcommand(name) for name in SUBCOMMAND_MODULES)

USAGE_ERROR = 2


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``jbtrace`` parser with every subcommand's parser attached (``only``: just that one)."""
    parser = argparse.ArgumentParser(
        prog="jbtrace",
        description="Record basic-block traces of Java programs and inspect them.",
    )
    parser.add_argument("--version", action="version", version=f"jbtrace {__version__}")
    subparsers = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    for module in (subcommand(only),) if only is not None else all_subcommands():
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
    # The first word that is not an option names the subcommand (jbtrace's own options take no
    # value); anything else (--help, a typo, nothing) gets the whole parser.
    at = next((i for i, word in enumerate(own) if not word.startswith("-")), None)
    named = own[at] if at is not None and not own[:at] else None
    parser = build_parser(named if named in SUBCOMMAND_MODULES else None)
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
