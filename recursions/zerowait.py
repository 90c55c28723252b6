"""``recursions.zerowait``, where it was: the module is :mod:`recursions.engines.zerowait`.

Its names, for ``import recursions.zerowait`` and ``from recursions.zerowait import ...``.
"""

from recursions.engines.zerowait import *  # noqa: F403
from recursions.engines.zerowait import __all__, __doc__  # noqa: F401
