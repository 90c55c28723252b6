"""Tail bounds on stationary states, for certified backward (Loynes) limits.

A Loynes sequence ``W_n`` (start empty at time ``-n``, run the same inputs to time 0) of a
monotone map increases to the stationary state ``X_0``. Started instead from a state ``u``
at ``-n`` the same inputs give ``G_n(u) >= G_n(0)``; if ``G_n(c 1) = G_n(0)`` then every
start below ``c 1`` gives ``G_n(0)`` too, so ``X_0 = W_n`` unless the stationary state at
``-n`` has a coordinate above ``c``. That state depends only on the inputs before ``-n``,
which the window ``[-n, -1]`` does not see, so

    ``P(X_0 != W_n | window) <= P(X(S) > c)``,

``X(S)`` the largest coordinate of the stationary state seen by an arrival. This module
gives levels ``c`` with ``P(X(S) > c) <= delta``.

FCFS G/G/S (the Kiefer-Wolfowitz map, ``rc.JSW``) with renewal input and light-tailed
service. Write ``D`` for the stationary FCFS wait, ``sigma`` a service time, ``q(theta) =
E exp(-theta tau)`` and ``M(theta) = E exp(theta sigma)``.

1. *The largest workload is a past customer's completion.* A customer joins the least
   workload, so the server it joins is busy until ``T_m + D_m + sigma_m``; hence
   ``X_0(S) = max(0, max_{m < 0} (D_m + sigma_m - (T_0 - T_m)))``. ``D_m`` does not depend on
   ``sigma_m`` nor on the interarrival times after ``T_m``, so a union bound gives
   ``P(X(S) > c) <= E[exp(theta D)] M(theta) q/(1 - q) exp(-theta c)``.
2. *FCFS waits are below round-robin waits (Wolff's pairing).* Pair service times with
   service *initiations* in order. The ``k``-th initiation under FCFS happens no later than
   the ``k``-th initiation under any other rule that serves each customer on one server
   (induction: it needs the ``k``-th arrival and a server free after ``k - 1`` initiations,
   and FCFS frees servers no later). Under cyclic assignment (customer ``j`` to server
   ``j mod S``) the ``k``-th initiation is at most ``max_{j <= k} (T_j + D^c_j)``, so
   ``D_k <= max_{j <= k} (D^c_j - (T_k - T_j))``. Each cyclic queue is a GI/GI/1 queue with
   interarrival ``tau_1 + ... + tau_S``; Kingman's bound gives ``P(D^c > y) <=
   exp(-theta_c y)``, ``theta_c > 0`` the root of ``M(theta) q(theta)^S = 1``, so
   ``E exp(theta D^c) <= theta_c / (theta_c - theta)`` and
   ``E exp(theta D) <= theta_c / ((theta_c - theta)(1 - q(theta)))`` for ``theta < theta_c``.
3. For one server ``X(1) = D`` and Kingman's bound applies directly:
   ``P(X(1) > c) <= exp(-theta_c c)``.

The level is the least over ``theta`` in ``(0, theta_c)`` of the bound of 1-2, solved for
``c``. With heavy-tailed service ``M(theta) = inf`` for every ``theta > 0`` and there is no
such bound (``None`` is returned).
"""

from __future__ import annotations

import math

import recursions as rc
from coupling._tilting import cramer_root, log_mgf
from recursions.common import check_int, check_real
from recursions.model import is_renewal

__all__ = ["fcfs_workload_bound"]


def _log_mgf_or_none(law: rc.dists.Law, theta: float) -> float | None:
    try:
        return log_mgf(law, theta)
    except ValueError:  # an unbounded law without a closed-form mgf (heavy tail)
        return None


def fcfs_workload_bound(servers: int, input: rc.Input, delta: float) -> float | None:
    """A level ``c`` with ``P(X(S) > c) <= delta`` for the stationary FCFS G/G/S state.

    ``X(S)`` is the largest workload seen by an arrival in the stationary Kiefer-Wolfowitz
    vector of ``rc.JSW(servers)`` under renewal ``input`` (derivation in the module
    docstring: Wolff's initiation-order pairing with cyclic assignment, and Kingman's bound).

    Parameters
    ----------
    servers : int
        Number of servers ``S >= 1``.
    input : recursions.Input
        The input; only :class:`recursions.Renewal` (Poisson included) has a bound.
    delta : float
        Tail probability in ``(0, 1)``.

    Returns
    -------
    float or None
        The level, or ``None`` when no bound applies: input not renewal, load ``>= 1``, or
        service without a finite moment generating function near 0 (heavy tail).

    Examples
    --------
    >>> import math, recursions as rc
    >>> c = fcfs_workload_bound(1, rc.Poisson(0.5, rc.dists.Exponential(1.0)), 1e-3)
    >>> round(c, 4) == round(math.log(1e3) / 0.5, 4)   # M/M/1: theta_c = mu - lambda
    True
    """
    delta = check_real(delta, "delta", 0.0, 1.0, open_lo=True, open_hi=True)
    if not is_renewal(input):
        return None
    S = check_int(servers, "servers", 1)
    es, et = input.mean_service, input.mean_interarrival
    if not es < S * et:
        return None
    ser, arr = input.service, input.interarrival
    probe = _log_mgf_or_none(ser, 1e-9 / max(es, 1e-300))
    if probe is None or not math.isfinite(probe):
        return None

    def cycle(th: float) -> float:  # log E exp(th (sigma - tau_1 - ... - tau_S))
        ls = _log_mgf_or_none(ser, th)
        if ls is None or not math.isfinite(ls):
            return math.inf
        return ls + S * log_mgf(arr, -th)

    theta_c = cramer_root(cycle, es - S * et, es + S * et)
    if not math.isfinite(theta_c):  # the cyclic walk never rises: nobody ever waits
        theta_c = 1e6 / (es + S * et)
    log_inv = math.log(1.0 / delta)
    best = math.inf
    if S == 1:
        best = log_inv / theta_c
    for k in range(1, 200):
        th = theta_c * k / 200.0
        lq = log_mgf(arr, -th)
        ls = _log_mgf_or_none(ser, th)
        if ls is None or not math.isfinite(ls) or not lq < 0:
            continue
        log_1mq = math.log(-math.expm1(lq))
        log_ed = math.log(theta_c / (theta_c - th)) - log_1mq
        c = (log_ed + ls + lq - log_1mq + log_inv) / th
        best = min(best, c)
    return max(best, 0.0) if math.isfinite(best) else None
