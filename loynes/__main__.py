"""``python -m loynes``: see :mod:`loynes._cli`."""

import sys

from loynes._cli import main

sys.exit(main())
