"""The inference: estimates with standard errors, and how far a run's numbers can be trusted.

Every statistic of a run is a ratio of batch sums. Batch means give its standard error, a
test of their independence and normality decides whether the interval is trusted
(:mod:`diagnostics` warns when not), MSER cuts the transient, ``precision=`` runs stage after
stage until the interval is as narrow as asked (and stops early when the workload grows like an
unstable system's), and ``start="stationary"`` starts the replications from exact draws that
``coupling`` registers here.

Examples
--------
>>> from recursions.inference import Estimate
>>> e = Estimate(0.25, 0.01)
>>> float(e), e.se
(0.25, 0.01)
"""

from __future__ import annotations

from recursions.inference._batch_means import finite_variances
from recursions.inference._estimate import Estimate
from recursions.inference._stationary_starts import register_stationary_sampler

__all__ = ["Estimate", "finite_variances", "register_stationary_sampler"]
