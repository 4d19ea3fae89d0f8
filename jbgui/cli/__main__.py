"""``python -m jbgui.cli``: the same as the ``jbtrace`` console script."""

import sys

from jbgui.cli.main import main

sys.exit(main())
