"""``recursions.redundancy``, where it was: the module is :mod:`recursions.model.redundancy`.

Its names, for ``import recursions.redundancy`` and ``from recursions.redundancy import ...``.
"""

from recursions.model.redundancy import *  # noqa: F403
from recursions.model.redundancy import __all__, __doc__  # noqa: F401
