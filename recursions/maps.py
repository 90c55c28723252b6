"""``recursions.maps``, where it was: the module is :mod:`recursions.model.maps`.

Its names, for ``import recursions.maps`` and ``from recursions.maps import ...``.
"""

from recursions.model.maps import *  # noqa: F403
from recursions.model.maps import __all__, __doc__  # noqa: F401
