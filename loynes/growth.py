"""Linear growth rate of the workload of a (possibly unstable) system, with a standard error."""

from __future__ import annotations

import math
from typing import Any

import recursions as rc
from recursions._rng import as_seed_sequence

__all__ = ["growth_rate"]


def growth_rate(
    system: rc.System,
    input: rc.Input,
    steps: int = 2**16,
    *,
    replications: int = 8,
    rng: Any = 1,
) -> rc.Estimate:
    """Increase of the total workload per arriving customer, ``lim V_n / n``, estimated.

    Each replication runs ``steps // 2`` arrivals from empty (a burn-in that lets a stable
    system reach its regime), then ``steps // 2`` more; the estimate is the mean over
    replications of ``(V_end - V_mid) / (steps / 2)``, with the standard error across
    replications. It is about 0 for a stable system and positive when the workload grows
    linearly (MATH.md §2: "above the threshold the J_{p+1}SW workload grows linearly").

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
    if not isinstance(steps, int) or steps < 4:
        raise ValueError(f"steps must be an integer >= 4, got {steps!r}")
    if not isinstance(replications, int) or replications < 2:
        raise ValueError(f"replications must be an integer >= 2, got {replications!r}")
    ss = as_seed_sequence(rng)
    s1, s2 = ss.spawn(2)
    half = steps // 2
    first = rc.simulate(system, input, steps=half, replications=replications, rng=s1,
                        batches=1, grid=[0.0])
    second = rc.simulate(system, input, steps=half, replications=replications, rng=s2,
                         batches=1, grid=[0.0], w0=first.final_state)
    inc = (second.final_state.sum(axis=1) - first.final_state.sum(axis=1)) / half
    return rc.Estimate(float(inc.mean()), float(inc.std(ddof=1) / math.sqrt(inc.size)))
