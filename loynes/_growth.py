"""Linear growth rate of the workload of a (possibly unstable) system, with a standard error."""

from __future__ import annotations

import math
import warnings

import numpy as np

import recursions as rc
from recursions.common import RngLike, as_seed_sequence, check_count, check_int, check_nonnegative
from recursions.model import check_input, check_system

__all__ = ["growth_rate"]


def growth_rate(
    system: rc.System,
    input: rc.Input,
    steps: int = 2**16,
    *,
    replications: int = 8,
    rng: RngLike = 1,
    start: float = 0.0,
) -> rc.Estimate:
    """Increase of the total workload per arriving customer, ``lim V_n / n``, estimated.

    Each replication starts from ``start`` on every server, runs ``steps // 2`` arrivals (a
    burn-in), then ``steps // 2`` more; the estimate is the mean over replications of
    ``(V_end - V_mid) / (steps / 2)``, with the standard error across replications. It is
    about 0 for a stable system and positive when the workload grows linearly (above the
    J_{p+1}SW threshold the workload grows linearly).

    From empty (``start = 0``) a stable system is still filling up, so near saturation the
    estimate is biased *upwards* by the transient. From a start well above the stationary
    state it drains instead, and the bias points down: a test of positive growth is then
    conservative. :func:`~loynes.check_stability` starts at least ``6 sqrt(steps v) / S``
    above 0 (``v`` the variance per customer of ``sigma - S tau``), so that a stable run
    stays off its reflecting boundary, and at least ``steps E[tau] / 16``.

    Parameters
    ----------
    system : recursions.System
        The map.
    input : recursions.Input
        The input.
    steps : int, default 2**16
        Arrivals per replication (``>= 4``).
    replications : int, default 8
        Independent replications (``>= 2``).
    rng : int, Generator, SeedSequence or None, default 1
        Seed.
    start : float, default 0
        Initial workload of every server (``>= 0``).

    Returns
    -------
    recursions.Estimate
        Growth of ``sum_i W(i)`` per customer; divide by ``E[tau]`` for per unit time.

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> g = ly.growth_rate(rc.JSW(1), rc.Poisson(2.0, rc.dists.Exponential(1.0)), rng=1)
    >>> abs(g.value - 0.5) < 4 * g.se   # E[sigma] - E[tau] = 1 - 0.5
    True
    """
    check_system(system, needs_map="a growth test")
    check_input(input)
    steps = check_count(steps, "steps", 4)
    replications = check_int(replications, "replications", 2)
    start = check_nonnegative(start, "start")
    ss = as_seed_sequence(rng)
    s1, s2 = ss.spawn(2)
    half = int(steps) // 2
    w0 = np.full(system.servers, start)
    with warnings.catch_warnings():
        # the point is to run systems that may have no stationary regime, or to watch a
        # transient: rc.simulate's warnings about drift are expected here
        warnings.simplefilter("ignore", rc.SimulationWarning)
        first = rc.simulate(system, input, steps=half, replications=int(replications),
                            rng=s1, batches=1, grid=[0.0], w0=w0)
        second = rc.simulate(system, input, steps=half, replications=int(replications),
                             rng=s2, batches=1, grid=[0.0], w0=first.final_state)
    inc = (second.final_state.sum(axis=1) - first.final_state.sum(axis=1)) / half
    return rc.Estimate(float(inc.mean()), float(inc.std(ddof=1) / math.sqrt(inc.size)))
