"""The error every exact sampler of :mod:`coupling` raises when its backward search gives up.

It lives apart from :mod:`coupling.perfect` so that the samplers it dispatches to
(:mod:`coupling.vacation`, :mod:`coupling.bounding`) raise it without importing
:mod:`coupling.perfect` back.
"""

from __future__ import annotations

__all__ = ["CouplingNotReached"]


class CouplingNotReached(RuntimeError):
    """The backward search hit its cap without coupling (no sample is returned)."""
