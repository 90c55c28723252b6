"""Exact draws of loss systems by renovation (the method ``"renovation"``).

With Poisson input the M/G/infinity queue, whose customers are a superset of the loss
system's, is run back to a time it is empty; with service times bounded by ``b`` the
renovating event (9) is checked on the backward draws (:func:`renovation_index`).
"""

# mypy: allow-untyped-defs, allow-incomplete-defs
from __future__ import annotations

import math
from typing import Any

import numpy as np

import recursions as rc
from coupling._dominating import ReversedQueue
from coupling._errors import CouplingNotReached
from coupling._horizons import run_to_zero
from recursions.engines import run_window

__all__ = ["draw_loss_bounded", "draw_loss_poisson", "last_renovation", "renovation_index"]


def _loss_poisson(system, inp, gen, cap):
    q = ReversedQueue(inp.arrival_rate, inp.service, gen, "infinite")
    times, services = q.advance(cap, stop_when_empty=True)
    if q.number > 0:
        raise CouplingNotReached(f"the M/G/infinity bound did not empty within time {cap:g} "
                                 "back; raise cap_time")
    w = run_to_zero(system, np.zeros(system.servers), q.s * -1.0, times, services)
    return w, times.size, float(q.s)


def renovation_index(sigma: Any, tau: Any, bound: float = math.inf) -> np.ndarray:
    """Arrivals at which the renovating event (9) of the loss system holds, from the input.

    Event (9) at arrival ``i``: every earlier customer would have finished by ``T_i`` had it
    been served at once (``sigma_j <= T_i - T_j`` for all ``j < i``), so a loss system of any
    size is empty when customer ``i`` arrives, whatever happened before. Only customers within
    ``bound`` (the largest possible service time) before ``T_i`` can spoil the event, so with
    a finite ``bound`` it is certified from a finite window; arrivals too close to the start
    of the window to be certified are left out.

    Parameters
    ----------
    sigma, tau : array_like
        Service and interarrival times of consecutive customers.
    bound : float, default inf
        Upper bound of the service times (``inf``: only the window's own customers count).

    Returns
    -------
    numpy.ndarray
        Indices ``i`` at which the event holds.

    Examples
    --------
    >>> renovation_index([2.0, 0.5, 1.0, 0.2], [1.0, 1.0, 1.0, 1.0], bound=2.0).tolist()
    [2, 3]
    """
    sig = np.asarray(sigma, dtype=np.float64).ravel()
    ta = np.asarray(tau, dtype=np.float64).ravel()
    if sig.size != ta.size:
        raise ValueError(f"sigma and tau must have equal lengths, got {sig.size}, {ta.size}")
    T = np.concatenate(([0.0], np.cumsum(ta)[:-1]))
    reach = np.concatenate(([-np.inf], np.maximum.accumulate(sig + T)[:-1]))
    ok = (reach <= T) & (T - T[0] >= (bound if math.isfinite(bound) else 0.0))
    return np.flatnonzero(ok)


def last_renovation(sig: np.ndarray, tau: np.ndarray, b: float) -> int:
    """Largest index ``i`` of the window at which event (9) holds, or -1.

    Entry ``i`` is time ``-n + i``. Event (9) at ``i``: every customer ``j < i`` has
    ``sigma_j <= T_i - T_j``; only customers within time ``b`` before ``T_i`` can fail it,
    and the event can only be certified when the window reaches back past ``T_i - b``.
    """
    T = np.concatenate(([0.0], np.cumsum(tau)[:-1]))
    reach = np.maximum.accumulate(sig + T)  # latest finishing time among customers <= j
    for i in range(sig.size - 1, 0, -1):
        if T[i] - T[0] < b:  # the window does not reach back a full b: cannot certify
            return -1
        if reach[i - 1] <= T[i]:
            return i
    return -1


def _loss_bounded(system, inp, seed, b, n0, cap):
    draws = rc.BackwardDraws(system, inp, rng=seed)
    n = n0
    while True:
        sig, tau, u = draws.window(n)
        i = last_renovation(sig, tau, b)
        if i >= 0:
            w = run_window(system, np.zeros(system.servers), sig[i:], tau[i:], u[i:])
            return w, n - i, float(tau[i:].sum())
        if n >= cap:
            raise CouplingNotReached(f"no renovating event (9) within {cap} customers back; "
                                     "raise cap_customers")
        n = min(2 * n, cap)


def draw_loss_poisson(sd, system, inp, cap):
    """One renovation draw from the last empty instant of the M/G/infinity queue."""
    return _loss_poisson(system, inp, np.random.default_rng(sd), cap)


def draw_loss_bounded(sd, system, inp, b, n0, cap):
    """One renovation draw from the last renovating event (9) (services bounded by ``b``)."""
    return _loss_bounded(system, inp, sd, b, n0, cap)

