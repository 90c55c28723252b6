"""``check_stability``: is this system stable, what decided it, and how sure is that.

The report lists every condition that applies, with its statement, its value and whether it
holds, the evidence behind the verdict, and ``decided_by``: the theorem, certificate or test
that decided, with a bound on the chance that the verdict is wrong. The conditions:

* (3) ``E[sigma] < S E[tau]``: necessary for every system in which a customer adds its
  service time to one server; necessary and sufficient for JSW (FCFS G/G/S) and random
  routing, for JIQ, JSQ and power-of-d with Poisson input, and for LL(d) with renewal input
  and a finite second moment of the service time.
* (9) renovation: ``P[sigma_{-j} <= T_0 - T_{-j} for all j >= 1] > 0``, the probability that an
  infinite-server system is empty at an arrival; it gives the loss system's unique stationary
  regime.
* (11) ``E[sigma] P_loss < (S - p) E[tau]`` with ``P_loss`` the p-server loss probability
  (Erlang B for Poisson input, simulated otherwise) and (8) ``E[sigma 1{U^p(1) > 0}] <
  (S - p) E[tau]``, the work the p-server loss system overflows: with (9), sufficient for
  J_{p+1}SW (Moyal's Theorem 1). For Poisson input (8) equals (11).

Each family of systems has its own short check (:mod:`loynes._checks`,
:mod:`loynes._policy_checks`, :mod:`loynes._map_checks`); which family a system belongs to is
:func:`loynes._families.family_of`. A Loynes plateau never
decides a verdict; the growth test decides UNSTABLE only at the check's level ``alpha``.
"""

from __future__ import annotations

from typing import Any

import recursions as rc
from loynes import _map_checks, _policy_checks  # noqa: F401  (register their families)
from loynes._checks import FAMILIES, Check
from loynes._families import family_of
from loynes._renovation import renovation_probability
from loynes._report import Condition, StabilityReport
from recursions.common import (
    RngLike,
    as_seed_sequence,
    check_count,
    check_int,
    check_real,
    require_memory,
)
from recursions.model import check_input

__all__ = ["Condition", "StabilityReport", "check_stability", "renovation_probability"]

ALPHA = 1e-3
"""Default level of a check: the chance that any of its tests errs."""

_BYTES_PER_SERVER = 8 * 12
"""Float64 arrays of length S a check keeps per replication (states, heap, statistics)."""


_BYTES_PER_STEP = 64
"""Float64 arrays of length ``steps`` an estimate keeps (renovation's draws and sums)."""


def _check_memory(system: Any, replications: int, steps: int) -> None:
    need = (float(system.servers) * _BYTES_PER_SERVER * (replications + 2)
            + float(steps) * _BYTES_PER_STEP)
    require_memory(need, f"a check of {type(system).__name__} with {system.servers} servers, "
                   f"{replications} replications and steps={steps}",
                   "use fewer servers, replications or steps")


def check_stability(
    system: rc.System,
    input: rc.Input,
    *,
    rng: RngLike = 1,
    horizon: int = 2**16,
    steps: int = 2**16,
    replications: int = 8,
    alpha: float = ALPHA,
) -> StabilityReport:
    """Decide whether ``system`` under ``input`` is stable, and say what decided it.

    STABLE comes only from a theorem whose conditions hold (exactly, or by a test at level
    ``alpha``); UNSTABLE only from a failed necessary condition or from a linear growth rate
    significant at level ``alpha``; otherwise UNDECIDED, with the budget that would likely
    decide in :attr:`StabilityReport.suggested`. The probability that any statistical test of
    one check errs is at most ``alpha`` (Bonferroni over the tests the check may run).

    Parameters
    ----------
    system : recursions.System
        JSW, JpSW, Loss, RandomRouting, JIQ (with or without buffer), LeastOfD, Envelope,
        SplitBound, Redundancy, or a queue-length policy (JSQ, I1F, PowerOfD: with a buffer
        it is bounded; without, JSQ and PowerOfD are stable exactly when (3) holds, by
        Bramson's theorem, and I1F below load 1 is UNDECIDED).
    input : recursions.Input
        Any input (Poisson, renewal, periodic, Markov-modulated).
    rng : int, Generator, SeedSequence or None, default 1
        Seed of every simulation used as evidence.
    horizon : int, default 2**16
        Cap on the backward Loynes horizons computed as evidence.
    steps : int, default 2**16
        Arrivals per replication for estimates (loss probabilities, growth rates), ``>= 4``.
    replications : int, default 8
        Independent replications of the growth test, ``>= 2``.
    alpha : float, default 1e-3
        Level of the whole check, in ``(0, 0.5)``.

    Returns
    -------
    StabilityReport

    Raises
    ------
    TypeError
        When ``system`` or ``input`` is not a ``recursions`` object this check knows.
    ValueError
        For a bad budget or level, or an input the system refuses
        (:meth:`recursions.System.check_input`: e.g. redundancy takes arrivals only).
    MemoryError
        When the system is too large for the memory available (before allocating).

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> rep = ly.check_stability(rc.JpSW(2, 1), rc.Poisson(1.5, rc.dists.Exponential(1.0)))
    >>> rep.verdict, rep.decided_by.name, rep.decided_by.error
    ('stable', 'theorem-1', 0.0)
    """
    check_input(input)
    family = family_of(system) if isinstance(system, rc.System) else None
    if family is None or family not in FAMILIES:
        raise TypeError(
            "check_stability judges JSW, JpSW, Loss, RandomRouting, JIQ, LeastOfD, Envelope, "
            "SplitBound, Redundancy and queue-length (JSQ, I1F, PowerOfD) systems, got "
            f"{type(system).__name__}")
    system.check_input(input)
    horizon = check_count(horizon, "horizon")
    steps = check_count(steps, "steps", 4)
    replications = check_int(replications, "replications", 2)
    alpha = check_real(alpha, "alpha", 0.0, 0.5, open_lo=True, open_hi=True)
    _check_memory(system, replications, steps)
    tests, run = FAMILIES[family]
    seeds = iter(as_seed_sequence(rng).spawn(16))
    chk = Check(system, input, horizon, steps, replications, float(alpha), seeds)
    chk.tests = tests(chk)
    return run(chk)
