"""Condition (9), renovation: the chance that an infinite-server system is empty at an arrival."""

from __future__ import annotations

import math

import numpy as np

import recursions as rc
from recursions.common import RngLike, as_seed_sequence, check_count, check_int, require_memory
from recursions.model import check_input

__all__ = ["renovation_probability"]


def renovation_probability(
    input: rc.Input, steps: int = 2**16, *, rng: RngLike = 1, batches: int = 32
) -> rc.Estimate:
    """Estimate condition (9): ``P[sigma_{-j} <= T_0 - T_{-j} for all j >= 1]``.

    The event says every earlier customer would have finished by the arrival at time 0 had it
    been served at once: an infinite-server system is empty. With ``M_{n+1} = max(M_n,
    sigma_n) - tau_n`` (the largest residual service time in that system) the event is
    ``M_0 <= 0``; its frequency over a stationary forward run estimates the probability.
    For Poisson input it equals ``exp(-lambda E[sigma])``.

    Parameters
    ----------
    input : recursions.Input
        The input.
    steps : int, default 2**16
        Arrivals observed (after ``steps // 8`` arrivals of warm-up).
    rng : int, Generator, SeedSequence or None, default 1
        Seed.
    batches : int, default 32
        Batches for the standard error.

    Returns
    -------
    recursions.Estimate

    Examples
    --------
    >>> import math, recursions as rc
    >>> est = renovation_probability(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
    >>> abs(est.value - math.exp(-1.0)) < 4 * est.se
    True
    """
    check_input(input)
    steps = check_count(steps, "steps")
    batches = check_int(batches, "batches", 2, steps)
    require_memory(64.0 * (steps + steps // 8 + 1), f"a renovation estimate over steps={steps}",
                   "use fewer steps")
    stream = input.forward(as_seed_sequence(rng))
    warm = max(steps // 8, 1)
    sig, tau = stream.next(warm + steps)
    ind = _renovation_indicators(sig, tau)[warm:]
    b = ind[: (ind.size // batches) * batches].reshape(batches, -1).mean(axis=1)
    return rc.Estimate(float(ind.mean()), float(b.std(ddof=1) / math.sqrt(batches)))


def _renovation_indicators(sig: np.ndarray, tau: np.ndarray) -> np.ndarray:
    # M_n = max residual of customers before n at the arrival of n; vectorised via the
    # running maximum of sigma_j + T_j: M_n = max_{j<n}(sigma_j + T_j) - T_n
    T = np.concatenate(([0.0], np.cumsum(tau)[:-1]))
    reach = np.maximum.accumulate(sig + T)
    M = np.concatenate(([-np.inf], reach[:-1])) - T
    return (M <= 0).astype(np.float64)
