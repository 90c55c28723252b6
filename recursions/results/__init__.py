"""The results: what a run reports, with every statistic declared once.

:data:`REGISTRY` declares each statistic a run can report: its meaning, whether it is about
what arriving customers find, and the numerator and denominator of batch sums it is on every
engine family. :class:`~recursions.SimulationResult` (estimates with standard errors, the
profile, the warnings) is built from it, and so are the names ``statistics=`` and ``precision=``
accept.

Examples
--------
>>> from recursions.results import REGISTRY
>>> REGISTRY["p_wait"].customers
True
"""

from __future__ import annotations

from recursions.results._statistics import REGISTRY, Statistic

__all__ = ["REGISTRY", "Statistic"]
