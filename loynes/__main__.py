"""``python -m loynes``: see :mod:`loynes.cli`."""

import sys

from .cli import main

sys.exit(main())
