"""``recursions.diagnostics``, where it was: the module is :mod:`recursions.inference.diagnostics`.

Its names, for ``import recursions.diagnostics`` and ``from recursions.diagnostics import ...``.
"""

from recursions.inference.diagnostics import *  # noqa: F403
from recursions.inference.diagnostics import __all__, __doc__  # noqa: F401
