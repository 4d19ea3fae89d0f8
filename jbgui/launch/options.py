"""The recorder's options, and how they travel to the agent.

The agent takes its options after ``-javaagent:<jar>=`` as ``key=value`` pairs joined by commas.
A value that itself holds a comma (a path such as ``out/a,b``) cannot travel that way, so then all
pairs go into a small config file, one ``key=value`` per line, and the agent gets ``config=FILE``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from jbgui.launch.errors import LaunchError

LEVELS = ("block", "method")
BLOCK_ANALYSES = ("default", "precise")
MODES = (1, 2)
CONFIG_FILE_NAME = "agent-options.conf"


@dataclass(frozen=True)
class RecorderOptions:
    """What the user asked the recorder for.

    ``None`` means "not given": the option is left out of the agent's option string, so the agent
    stays the one place that defines defaults (block level, default block analysis, mode 2, JDK
    classes traced, no instruction listings).
    """

    out: Path
    include: Path | None = None
    exclude: Path | None = None
    jdk: bool | None = None
    level: str | None = None
    bba: str | None = None
    mode: int | None = None
    events: Path | None = None
    instructions: bool | None = None
    virtual_threads: int | None = None

    def checked(self) -> "RecorderOptions":
        """Return these options with absolute paths, or raise :class:`LaunchError`.

        Paths become absolute because the agent resolves them against the program's working
        directory, which a later front end (the GUI) may choose differently from ours.
        """
        if self.level is not None and self.level not in LEVELS:
            raise LaunchError(f"unknown level {self.level!r}: use one of {', '.join(LEVELS)}")
        if self.bba is not None and self.bba not in BLOCK_ANALYSES:
            raise LaunchError(
                f"unknown block analysis {self.bba!r}: use one of {', '.join(BLOCK_ANALYSES)}"
            )
        if self.virtual_threads is not None and (isinstance(self.virtual_threads, bool)
                                                 or not isinstance(self.virtual_threads, int)
                                                 or not 0 <= self.virtual_threads <= 2**31 - 1):
            raise LaunchError(f"virtual threads to trace must be a count from 0 to {2**31 - 1}, "
                              f"not {self.virtual_threads!r}")
        if self.mode is not None and self.mode not in MODES:
            raise LaunchError(f"unknown trace mode {self.mode!r}: use 1 (shared stream) or 2 (per thread)")
        for label, path in (("include filter", self.include), ("exclude filter", self.exclude),
                            ("event selection", self.events)):
            if path is not None and not Path(path).is_file():
                what = "is not a file" if Path(path).exists() else "does not exist"
                raise LaunchError(f"{label} file {str(path)!r} {what}")
        return dataclasses.replace(
            self,
            out=Path(self.out).absolute(),
            include=_absolute(self.include),
            exclude=_absolute(self.exclude),
            events=_absolute(self.events),
        )


def _absolute(path: Path | None) -> Path | None:
    return None if path is None else Path(path).absolute()


def _on_off(flag: bool) -> str:
    return "on" if flag else "off"


def agent_option_pairs(options: RecorderOptions) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs for the agent, in a fixed order; unset options are left out."""
    pairs: list[tuple[str, str]] = [("out", str(options.out))]
    if options.include is not None:
        pairs.append(("include", str(options.include)))
    if options.exclude is not None:
        pairs.append(("exclude", str(options.exclude)))
    if options.jdk is not None:
        pairs.append(("jdk", _on_off(options.jdk)))
    if options.level is not None:
        pairs.append(("level", options.level))
    if options.bba is not None:
        pairs.append(("bba", options.bba))
    if options.mode is not None:
        pairs.append(("mode", str(options.mode)))
    if options.events is not None:
        pairs.append(("events", str(options.events)))
    if options.instructions is not None:
        pairs.append(("instructions", _on_off(options.instructions)))
    if options.virtual_threads is not None:
        pairs.append(("virtual", str(options.virtual_threads)))
    for key, value in pairs:
        # Neither the option string nor the config file can carry a line break, and the agent
        # trims every value.
        if "\n" in value or "\r" in value:
            raise LaunchError(f"the {key} option {value!r} contains a line break, which the agent cannot read")
        if value != value.strip():
            raise LaunchError(f"the {key} option {value!r} begins or ends with a space, which the agent drops")
    return pairs


def needs_config_file(pairs: list[tuple[str, str]]) -> bool:
    """True when a value holds a comma, which would split the inline option string."""
    return any("," in value for _, value in pairs)


def format_option_string(pairs: list[tuple[str, str]]) -> str:
    """``key=value,key=value``: the inline form that follows ``-javaagent:<jar>=``."""
    if needs_config_file(pairs):
        raise ValueError("a value contains a comma: use a config file (format_config_file)")
    return ",".join(f"{key}={value}" for key, value in pairs)


def format_config_file(pairs: list[tuple[str, str]]) -> str:
    """The config-file form: one ``key=value`` per line."""
    return "".join(f"{key}={value}\n" for key, value in pairs)


def agent_argument_options(pairs: list[tuple[str, str]], config_dir: Path) -> str:
    """The text after ``-javaagent:<jar>=``: inline pairs, or ``config=FILE`` written in ``config_dir``."""
    if not needs_config_file(pairs):
        return format_option_string(pairs)
    for key, value in pairs:
        # The agent's config-file reader takes '#' as the start of a comment.
        if "#" in value:
            raise LaunchError(
                f"the {key} option {value!r} holds both a comma and a '#': the agent cannot be "
                "given such a value; choose another path"
            )
    config = Path(config_dir).absolute() / CONFIG_FILE_NAME
    if "," in str(config) or "\n" in str(config):
        raise LaunchError(f"cannot pass the agent a config file at {str(config)!r}: its path holds a comma")
    config.write_text(format_config_file(pairs), encoding="utf-8")
    return f"config={config}"
