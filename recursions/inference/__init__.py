"""The inference: estimates with standard errors, and how far a run's numbers can be trusted.

Every statistic of a run is a ratio of batch sums. Batch means give its standard error, a
test of their independence and normality decides whether the interval is trusted
(:mod:`diagnostics` warns when not), MSER cuts the transient, ``precision=`` runs stage after
stage until the interval is as narrow as asked (and stops early when the workload grows like an
unstable system's), and ``start="stationary"`` starts the replications from exact draws that
``coupling`` registers here.

Examples
--------
>>> import recursions as rc
>>> from recursions.inference import finite_variances
>>> finite_variances(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
True
"""

from __future__ import annotations

from recursions.inference._moment_conditions import finite_variances
from recursions.inference._stationary_starts import register_stationary_sampler

__all__ = ["finite_variances", "register_stationary_sampler"]
