"""Where batch means have a central limit: the moment conditions on a run's laws.

A batch-means standard error rests on a central limit theorem for the batch means, and that
needs moments of the interarrival and service laws: a finite variance for every statistic,
and a finite fourth moment of the service time for the means of waits, workloads, response
times and jobs (:func:`clt_failures`). The laws are asked what they have
(:attr:`recursions.Input.finite_variance`, :meth:`recursions.dists.Law.finite_moment`); the
engines and the analysis ask here whether a statistic may carry a standard error at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["MEANS", "OWN_LAWS_NOTE", "clt_failures", "finite_variances"]


MEANS = ("mean_wait", "mean_workload", "mean_response", "mean_jobs", "overflow_work")
"""Statistics whose batch means need ``E[sigma^4] < inf`` (:func:`clt_failures`)."""


def finite_variances(input: Any, laws: Sequence[Any] = ()) -> bool:
    """Whether every interarrival and service law of a run has a finite variance.

    ``laws`` are the service laws the system draws itself (:attr:`recursions.System.own_laws`)
    beside the input's. Batch means have no normal limit without it.

    Examples
    --------
    >>> import recursions as rc
    >>> finite_variances(rc.Poisson(0.5, rc.dists.Exponential(1.0)),
    ...                  [rc.dists.Lomax(1.8, mean=1.0)])
    False
    """
    return bool(input.finite_variance and all(math.isfinite(law.var) for law in laws))


OWN_LAWS_NOTE = ("the moment conditions are checked on one component's size, which suffices "
                 "but is not necessary (with cancel-on-completion a server's work per job can "
                 "have a lighter tail, as the k-th of d sizes has when k < d), and no theorem "
                 "here gives the batch means a normal limit, so no standard error is "
                 "guaranteed")
"""Why a failure of the system's own laws (redundancy's job classes) is said with care."""


def clt_failures(input: Any, statistics: Sequence[str], laws: Sequence[Any] = ()
                 ) -> dict[str, str]:
    """The statistics whose batch-means standard error has no central limit theorem behind it.

    * Every statistic, when an interarrival or service law has an infinite variance: the
      regeneration cycles of the queue (and the sums of service times in each batch) then
      have an infinite variance, and batch means have no normal limit.
    * Means of waits, workloads, response times and jobs, when ``E[sigma^4] = inf``: for the
      single-server queue the waits' autocovariances are summable, so their time average
      has a finite asymptotic variance, only when the service law has a finite fourth moment
      (Daley 1968, "The serial correlation coefficients of waiting times in a stationary
      single server queue"; the stationary wait has a finite variance only when
      ``E[sigma^3] < inf``). Every server of these systems is such a queue, so the condition
      is applied to all of them. Their quantiles (``wait_quantile``) need no moment.

    The system's own laws (redundancy's job classes) are held to the same conditions, which
    are then sufficient but not necessary (:data:`OWN_LAWS_NOTE`, said in the reason).

    Parameters
    ----------
    input : recursions.Input
        The run's input.
    statistics : sequence of str
        The statistics to check.
    laws : sequence of recursions.dists.Law, optional
        Service laws the system draws itself (:attr:`recursions.System.own_laws`: the job
        classes' component sizes of redundancy).

    Returns
    -------
    dict of str to str
        The statistics that fail, with the reason.

    Examples
    --------
    >>> import recursions as rc
    >>> inp = rc.Poisson(0.5, rc.dists.Lomax(3.5, mean=1.0))   # E[sigma^4] = inf
    >>> sorted(clt_failures(inp, ["p_wait", "mean_wait"]))
    ['mean_wait']
    """
    if not finite_variances(input, laws):
        why = ("an interarrival or service law has an infinite variance, so the regeneration "
               "cycles have an infinite second moment and batch means (of indicators and "
               "quantiles too) have no normal limit: no standard error holds"
               if not finite_variances(input) else
               f"a job class's component size law has an infinite variance: {OWN_LAWS_NOTE}")
        return {k: why for k in statistics}
    if input.finite_service_moment(4) and all(law.finite_moment(4) for law in laws):
        return {}
    why = ("the service law has E[sigma^4] = inf, so the time average has no finite "
           "asymptotic variance (Daley 1968) and no standard error holds at any run length"
           if not input.finite_service_moment(4) else
           f"a job class's component size law has E[sigma^4] = inf: {OWN_LAWS_NOTE}")
    why += "; use quantiles (wait_quantile, workload_quantile)"
    return {k: why for k in statistics if k in MEANS}
