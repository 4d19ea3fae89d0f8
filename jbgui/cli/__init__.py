"""``jbtrace``: the command line. ``main.py`` dispatches; each subcommand is one module here."""
