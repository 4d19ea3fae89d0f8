"""Run a Java program under the recording agent. No widgets here: the CLI and the GUI both use it.

- :mod:`~jbgui.launch.options`: the recorder's options and how they reach the agent;
- :mod:`~jbgui.launch.command`: where ``-javaagent`` goes in a ``java``/JDK-tool command line;
- :mod:`~jbgui.launch.runner`: run the program with inherited streams, forward signals;
- :mod:`~jbgui.launch.agent`: the agent jar (built on first use by :mod:`jbgui.agent.build`);
- :mod:`~jbgui.launch.report`: ``launch.json`` and a summary read from ``trace.json``;
- :mod:`~jbgui.launch.recording`: all of the above in one call, :func:`record`.

Every failure a user can cause raises :class:`LaunchError`.
"""

from jbgui.launch.errors import LaunchError
from jbgui.launch.options import RecorderOptions
from jbgui.launch.recording import Recording, default_trace_dir, record

__all__ = ["LaunchError", "RecorderOptions", "Recording", "default_trace_dir", "record"]
