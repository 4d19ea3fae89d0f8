"""The launch layer's one exception type."""

from __future__ import annotations

# Exit statuses a shell would use, so that `jbtrace record` fails like the command it wraps.
USAGE_ERROR = 2
CANNOT_EXECUTE = 126
COMMAND_NOT_FOUND = 127
SETUP_ERROR = 1


class LaunchError(Exception):
    """A traced run cannot start; the message says what to fix.

    ``exit_status`` is what a command-line front end should exit with: 2 for bad input (options,
    missing files, a command that is not a JDK launcher), 127 when the program is not found, 126
    when it cannot be executed, 1 when the agent cannot be built.
    """

    def __init__(self, message: str, exit_status: int = USAGE_ERROR) -> None:
        super().__init__(message)
        self.exit_status = exit_status
