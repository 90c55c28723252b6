"""``recursions.codes``, where it was: the module is :mod:`recursions.common.codes`.

Its names, for ``import recursions.codes`` and ``from recursions.codes import ...``.
"""

from recursions.common.codes import *  # noqa: F403
from recursions.common.codes import __all__, __doc__  # noqa: F401
