"""The error every exact sampler of :mod:`coupling` raises when its backward search gives up.

It lives below every sampler (:mod:`coupling._vacation`, :mod:`coupling._bounding`, the
methods behind :mod:`coupling._perfect`), so that each raises it without importing the front.
"""

from __future__ import annotations

__all__ = ["CouplingNotReached"]


class CouplingNotReached(RuntimeError):
    """The backward search hit its cap without coupling (no sample is returned)."""
