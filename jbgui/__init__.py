"""jbgui: record basic-block traces of Java programs and explore them.

Layers (see README.md, "Layout"): ``jbgui.agent`` builds the Java recorder,
``jbgui.launch`` runs a program under it, ``jbgui.model`` reads trace directories,
``jbgui.bridge`` reads class files through a JVM, ``jbgui.ui`` draws, and
``jbgui.cli`` is the ``jbtrace`` command. ``pyproject.toml`` holds import-linter
contracts that keep those layers apart.
"""

__version__ = "0.1.0"
