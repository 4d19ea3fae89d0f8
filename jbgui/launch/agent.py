"""Find the agent jar for a recording (building it on first use)."""

from __future__ import annotations

from pathlib import Path

from jbgui.agent.build import AgentBuildError, ensure_agent
from jbgui.launch.errors import SETUP_ERROR, LaunchError


def locate_agent() -> Path:
    """The agent jar, built into its cache by :mod:`jbgui.agent.build` if needed.

    Turns the build layer's ``AgentBuildError`` into :class:`LaunchError` so that front ends
    handle one exception type.
    """
    try:
        return ensure_agent()
    except AgentBuildError as error:
        raise LaunchError(f"cannot build the recording agent: {error}", SETUP_ERROR) from None
