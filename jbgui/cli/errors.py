"""Errors a ``jbtrace`` subcommand reports as one line; light to import (no model, no numba), so
that the dispatcher can catch them without loading what only some subcommands need."""

from __future__ import annotations

BAD_INPUT = 2


class TraceInputError(Exception):
    """The trace named on the command line cannot be used; the message says why."""

    exit_status = BAD_INPUT
