"""Closed forms used as exact references: Erlang B/C, Pollaczek-Khinchine, M/D/c.

Where each is used: :ref:`theory-kw-jsw` (Erlang C, M/D/c, Pollaczek-Khinchine) and
:ref:`theory-stability-erlang-b`.

All are independent of the simulation code: they are the oracles the simulations are tested
against. Erlang B and C are written once, in :mod:`coupling._mms_exact` (the exact M/M/S
sampler needs them, and :mod:`coupling` does not import :mod:`loynes`), and are named here.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from recursions.common import (
    check_int,
    check_nonnegative,
    check_positive,
    check_real,
    erlang_b,
    erlang_c,
)
from recursions.dists import as_law

__all__ = [
    "critical_rate_3",
    "critical_rate_11",
    "erlang_b",
    "erlang_c",
    "md_c_waiting",
    "mm_c_mean_wait",
    "pollaczek_khinchine_mean_wait",
]


def mm_c_mean_wait(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Mean FCFS waiting time of M/M/c: ``C(c, a) / (c mu - lambda)``.

    Parameters
    ----------
    servers : int
        Number of servers ``c``.
    arrival_rate : float
        Total arrival rate ``lambda``.
    service_rate : float
        Service rate ``mu`` of one server.

    Returns
    -------
    float

    Examples
    --------
    >>> mm_c_mean_wait(1, 0.5, 1.0)
    1.0
    """
    lam = check_nonnegative(arrival_rate, "arrival_rate")
    mu = check_positive(service_rate, "service_rate")
    c = check_int(servers, "servers", 1)
    return erlang_c(c, lam / mu) / (c * mu - lam)


def pollaczek_khinchine_mean_wait(arrival_rate: float, mean: float, second_moment: float) -> float:
    """Mean FCFS wait of M/G/1: ``lambda E[sigma^2] / (2 (1 - rho))``.

    Parameters
    ----------
    arrival_rate : float
        ``lambda``.
    mean, second_moment : float
        ``E[sigma]`` and ``E[sigma^2]``.

    Returns
    -------
    float
        ``inf`` for an infinite second moment (a heavy tail of index at most 2).

    Raises
    ------
    ValueError
        For a load ``lambda E[sigma] >= 1``, a second moment below ``E[sigma]^2`` (no law has
        one) or a negative rate.

    Examples
    --------
    >>> pollaczek_khinchine_mean_wait(0.5, 1.0, 2.0)  # M/M/1 at rho = 1/2
    1.0
    >>> pollaczek_khinchine_mean_wait(0.5, 1.0, 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: second_moment must be >= mean**2 (no law has ...), got 0.5 with mean 1.0
    """
    arrival_rate = check_nonnegative(arrival_rate, "arrival_rate")
    mean = check_positive(mean, "mean")
    second_moment = check_real(second_moment, "second_moment", 0.0, open_lo=True, finite=False)
    if second_moment < mean * mean * (1.0 - 1e-12):
        raise ValueError(f"second_moment must be >= mean**2 (no law has E[sigma^2] < "
                         f"E[sigma]^2), got {second_moment} with mean {mean}")
    rho = arrival_rate * mean
    if rho >= 1:
        raise ValueError(f"the load lambda E[sigma] must be < 1, got {rho}")
    if arrival_rate == 0.0:
        return 0.0  # nobody arrives, whatever the tail
    return arrival_rate * second_moment / (2.0 * (1.0 - rho))


def md_c_waiting(servers: int, arrival_rate: float, service_time: float,
                 tol: float = 1e-13) -> tuple[float, float]:
    """Probability of waiting and mean wait of the FCFS M/D/c queue.

    With deterministic service ``d`` (``service_time``), the number in system satisfies
    ``Q(t + d) = (Q(t) - c)^+ + A(t, t + d]`` exactly for every ``t`` (the ``c`` customers in
    service at ``t`` leave by ``t + d``; nobody else does), with ``A ~ Poisson(lambda d)``.
    The stationary law of this chain is the time-stationary law of ``Q``, so by PASTA
    ``P(wait) = P(Q >= c)`` and, by Little's law, ``E[W] = E[(Q - c)^+] / lambda``.

    Parameters
    ----------
    servers : int
        Number of servers ``c``.
    arrival_rate : float
        Total arrival rate ``lambda`` with ``lambda d < c``.
    service_time : float
        The deterministic service time ``d``.
    tol : float
        Truncation mass of the Poisson law and convergence tolerance.

    Returns
    -------
    (float, float)
        ``P(wait)``, ``E[W]``.

    Examples
    --------
    >>> p, w = md_c_waiting(1, 0.5, 1.0)   # M/D/1: P(wait) = rho, E[W] = rho d / (2 (1 - rho))
    >>> round(p, 9), round(w, 9)
    (0.5, 0.5)
    """
    c = check_int(servers, "servers", 1)
    lam = check_positive(arrival_rate, "arrival_rate")
    a = lam * check_positive(service_time, "service_time")
    if not a < c:
        raise ValueError(f"arrival_rate * service_time must be < servers, got {a} >= {c}")
    from scipy import stats  # here, not at import: scipy.stats takes most of a second to load

    kmax = int(stats.poisson.isf(tol, a)) + 1
    pa = stats.poisson.pmf(np.arange(kmax + 1), a)
    n = c + 50 * (kmax + c) + int(20 * a / max(c - a, 1e-3))
    p = np.zeros(n)
    p[0] = 1.0
    for _ in range(200_000):
        base = np.zeros(n)
        base[0] = p[: c + 1].sum()
        base[1 : n - c] = p[c + 1 :]
        new = np.convolve(base, pa)[:n]
        new /= new.sum()
        if np.abs(new - p).sum() < tol:
            p = new
            break
        p = new
    q = np.arange(n)
    return float(p[c:].sum()), float((np.maximum(q - c, 0) * p).sum() / lam)


def _mean_of(service: object) -> float:
    """The mean of a law (through :func:`recursions.dists.as_law`), or a number given as one."""
    if isinstance(service, numbers.Real) and not isinstance(service, bool):
        x = float(service)
        if not math.isfinite(x) or x <= 0:
            raise ValueError(f"service mean must be a finite number > 0, got {service!r}")
        return x
    return float(as_law(service, "service").mean)


def critical_rate_3(servers: int, service: object) -> float:
    """Critical arrival rate of condition (3), ``E[sigma] < S E[tau]``: ``S / E[sigma]``.

    Parameters
    ----------
    servers : int
        ``S``.
    service : law, frozen scipy distribution or float
        The service law, or its mean.

    Returns
    -------
    float

    Examples
    --------
    >>> critical_rate_3(4, 2.0)
    2.0
    """
    return check_int(servers, "servers", 1) / _mean_of(service)


def critical_rate_11(servers: int, p: int, service: object) -> float:
    """Critical Poisson arrival rate of condition (11) for J_{p+1}SW.

    Condition (11) with Poisson input reads ``lambda E[sigma] B(p, lambda E[sigma]) < S - p``.
    ``a B(p, a)`` (the offered load lost by p servers) increases from 0 to infinity, so the
    critical rate is the unique root, found by Brent's method. For ``p = 0`` it is ``S /
    E[sigma]``, the rate of (3).

    Parameters
    ----------
    servers : int
        ``S``.
    p : int
        ``0 <= p <= S - 1``.
    service : law, frozen scipy distribution or float
        The service law (any: Erlang B is insensitive), or its mean.

    Returns
    -------
    float

    Examples
    --------
    >>> round(critical_rate_11(2, 1, 1.0), 6)   # a B(1, a) = a^2 / (1 + a) = 1: golden ratio
    1.618034
    """
    s = check_int(servers, "servers", 1)
    p = check_int(p, "p", 0, s - 1)
    m = _mean_of(service)
    if p == 0:
        return s / m
    target = s - p

    def f(a: float) -> float:
        return a * erlang_b(p, a) - target

    hi = 2.0 * (s + 1.0)
    while f(hi) < 0:
        hi *= 2.0
    from scipy.optimize import brentq

    return float(brentq(f, 1e-12, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps)) / m
