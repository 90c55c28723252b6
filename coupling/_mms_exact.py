"""Exact stationary workload vectors of M/M/S FCFS, from its birth-death chain.

With Poisson arrivals and exponential service (an ``rc.dists.Exponential`` law, the one that
declares ``exponential_rate``), the stationary law of the FCFS workload vector
needs no coupling from the past. The number of customers in the system, ``N``, is the
birth-death chain of M/M/S: with ``a = lambda / mu`` and ``rho = a / S``, it is at least ``S``
with the Erlang C probability ``C(S, a)``, and then ``N - S`` is geometric,
``P(N - S = j) = (1 - rho) rho^j``; below ``S`` it follows the Poisson weights ``a^k / k!``
truncated to ``0, ..., S - 1``. Given ``N``, the ``min(N, S)`` customers in service have
i.i.d. exponential remaining work (the law has no memory), and so do the ``(N - S)^+``
waiting ones, which FCFS hands, in their order, to the server that frees first. The vector
of the times at which each server would free, sorted, is the Kiefer-Wolfowitz workload
vector at a time-stationary instant, which is also what a Poisson arrival finds (arrivals see
time averages). One draw costs ``O(S log S + (N - S)^+ log S)`` (``(N - S)^+`` has mean
about ``C rho / (1 - rho)``: a hundred at load 0.99), against the dominated coupling
from the past of :func:`coupling.perfect_sample`, whose cost grows like ``1 / (1 - rho)^2``.

The module also holds the law of the M/M/S wait (:func:`mmc_wait`), from Erlang C (which lives
in :mod:`recursions.common`, beside :mod:`loynes`' closed forms that export it).

``simulate(..., start="stationary")`` uses it for a system that declares FCFS with M/M input
(``import coupling`` registers it ahead of ``perfect_sample``).
"""

from __future__ import annotations

import heapq
import math
from typing import Any

import numpy as np

from recursions.common import (
    RngLike,
    as_seed_sequence,
    check_int,
    erlang_c,
)
from recursions.model import is_poisson

__all__ = ["mmc_wait", "mms_states"]

_BLOCK = 1 << 16  # waiting customers' works drawn at a time (the same numbers as one draw)


def mmc_wait(servers: int, arrival_rate: float, service_rate: float
             ) -> tuple[float, float]:
    """The M/M/S FCFS wait law: ``P(W > 0)`` and the rate of ``W`` given ``W > 0``.

    ``P(W > t) = C exp(-(S mu - lambda) t)``, ``C`` Erlang C at ``a = lambda / mu``.

    Parameters
    ----------
    servers : int
        ``S``.
    arrival_rate, service_rate : float
        ``lambda`` and ``mu``, with ``lambda < S mu``.

    Returns
    -------
    tuple of float
        ``(C, S mu - lambda)``.

    Examples
    --------
    >>> c, rate = mmc_wait(2, 1.0, 1.0)
    >>> round(c, 12), rate
    (0.333333333333, 1.0)
    """
    return (erlang_c(servers, arrival_rate / service_rate),
            servers * service_rate - arrival_rate)


def _below(servers: int, offered: float) -> np.ndarray:
    """The law of ``N`` given ``N < S``: Poisson weights truncated to ``0, ..., S - 1``."""
    k = np.arange(servers)
    logw = k * math.log(offered) - np.array([math.lgamma(i + 1.0) for i in k])
    w = np.exp(logw - logw.max())
    return np.cumsum(w / w.sum())


def mms_states(system: Any, input: Any, n: int, *, rng: RngLike = 1) -> np.ndarray | None:
    """``n`` exact stationary workload vectors of FCFS M/M/S, or ``None`` if not M/M/S FCFS.

    Parameters
    ----------
    system : recursions.System
        A system that declares ``fcfs`` (``rc.JSW(S)``); any other gives ``None``.
    input : recursions.Input
        Poisson arrivals with ``rc.dists.Exponential`` service; any other gives ``None``
        (a ``scipy.stats`` exponential law too: :func:`coupling.perfect_sample` covers it).
    n : int
        Number of draws, ``>= 0``.
    rng : int, Generator, SeedSequence or None, default 1
        Seed of the draws.

    Returns
    -------
    numpy.ndarray or None
        Shape ``(n, S)``, each row sorted ascending.

    Raises
    ------
    ValueError
        When ``n`` is negative, or the load per server ``lambda E[sigma] / S`` is not
        below 1.
    TypeError
        When ``n`` is not an integer.

    Examples
    --------
    >>> import recursions as rc
    >>> w = mms_states(rc.JSW(3), rc.Poisson(2.4, rc.dists.Exponential(1.0)), 4, rng=1)
    >>> w.shape, bool((w[:, 1:] >= w[:, :-1]).all())
    ((4, 3), True)
    """
    n = check_int(n, "n", 0)
    if not getattr(system, "fcfs", False) or not is_poisson(input):
        return None
    if input.service.exponential_rate is None:
        return None
    S = int(system.servers)
    lam, mean = 1.0 / input.mean_interarrival, input.mean_service
    a = lam * mean
    rho = a / S
    if not rho < 1.0:
        raise ValueError(f"the system is not stable (load per server {rho:.4g} >= 1): there "
                         "is no stationary law to sample")
    gen = np.random.default_rng(as_seed_sequence(rng))
    c = erlang_c(S, a)
    below = _below(S, a)
    out = np.zeros((n, S))
    for r in range(n):
        if gen.random() < c:
            busy, waiting = S, int(gen.geometric(1.0 - rho)) - 1
        else:
            busy = min(int(np.searchsorted(below, gen.random(), side="right")), S - 1)
            waiting = 0
        free = [0.0] * (S - busy) + list(gen.exponential(mean, busy))
        heapq.heapify(free)
        while waiting:  # in blocks: near saturation the queue can be long
            block = min(waiting, _BLOCK)
            for x in gen.exponential(mean, block):
                heapq.heapreplace(free, free[0] + float(x))
            waiting -= block
        out[r] = np.sort(free)
    return out
