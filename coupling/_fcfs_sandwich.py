"""The sandwich of FCFS between 0 and a dominating assignment system with nobody waiting.

Shared by the FCFS dominating processes that assign customers to ``S`` FIFO servers
(:mod:`coupling._reversed_mg1`, :mod:`coupling._assignment_walks`): Wolff's coupling of the
service times in order of initiation, the instants when nobody waits in the bound, and the
two runs of FCFS (or of a map it dominates) from 0 and from the bound's residuals.
"""

# mypy: allow-untyped-defs, allow-incomplete-defs
from __future__ import annotations

import math

import numpy as np

from coupling._horizons import run_to_zero
from recursions.common import jit

__all__ = ["fifo_starts", "intersect", "no_wait_intervals", "sandwich", "try_latest"]


@jit
def fifo_starts(times, services, free):
    """FIFO server idle from ``free`` on: initiation times and the last completion."""
    init = np.empty(times.size)
    for k in range(times.size):
        init[k] = max(times[k], free)
        free = init[k] + services[k]
    return init, free


def no_wait_intervals(arr: np.ndarray, init: np.ndarray, start: float, stop: float):
    """Intervals within ``[start, stop]`` where a FIFO server has nobody waiting.

    ``start`` is an instant the server was empty and ``arr``/``init`` the arrival and
    initiation times of its customers since then: nobody waits on ``[start, arr_1)`` and on
    ``[init_k, arr_{k+1})``.
    """
    lows = np.concatenate(([start], init))
    highs = np.concatenate((arr, [np.inf]))
    keep = lows < highs
    lows, highs = np.maximum(lows[keep], start), np.minimum(highs[keep], stop)
    keep = lows < highs
    return list(zip(lows[keep].tolist(), highs[keep].tolist(), strict=True))


def intersect(a, b):
    """The intersection of two sorted lists of disjoint intervals ``(lo, hi)``."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def try_latest(system, servers, starts, target, sampled=None):
    """Sandwich from the latest instant at or before ``-target`` with nobody waiting.

    Server ``i`` of the bound is known from its instant ``starts[i]`` on. Returns
    ``(result, T)``: the sample and its number of customers, or ``None`` if the sandwich did
    not close at ``-T``; ``(None, None)`` if there is no such instant yet.
    """
    fifo, common = [], None
    for sv, start in zip(servers, starts, strict=True):
        init, free0 = fifo_starts(sv.past_t, sv.past_s, -math.inf)
        fifo.append((init, free0))
        iv = no_wait_intervals(sv.past_t, init, start, -target)
        common = iv if common is None else intersect(common, iv)
    if not common:
        return None, None
    lo, hi = common[-1]
    T = -0.5 * (lo + hi)
    return sandwich(system, servers, fifo, T, sampled), T


def sandwich(system, servers, fifo, T, sampled=None):
    """Run FCFS from 0 and from the RA residuals at ``-T`` (nobody waiting in RA then).

    With ``sampled`` (a :class:`DominatedMap`), run that map instead, on the same input.
    """
    S = system.servers
    upper = np.zeros(S)
    arr_t, inits, durs = [], [], []
    last_init = -T
    for j, (sv, (init, _)) in enumerate(zip(servers, fifo, strict=True)):
        before = sv.past_t <= -T
        done = init[before] + sv.past_s[before]
        upper[j] = max(float(done.max()) + T, 0.0) if done.size else 0.0
        after = ~before
        arr_t.append(sv.past_t[after])
        inits.append(init[after])
        durs.append(sv.past_s[after])
        if inits[-1].size:
            last_init = max(last_init, float(inits[-1].max()))
    times = np.sort(np.concatenate(arr_t))
    m = times.size
    if last_init > 0:  # customers arriving after 0 may start before some of these
        for sv, (_, free0) in zip(servers, fifo, strict=True):
            sv.future_until(last_init)
            keep = sv.fut_t <= last_init
            fi, _ = fifo_starts(sv.fut_t[keep], sv.fut_s[keep], free0)
            inits.append(fi)
            durs.append(sv.fut_s[keep])
    order = np.argsort(np.concatenate(inits), kind="stable")
    sigma = np.concatenate(durs)[order][:m]
    if sampled is not None:
        lo, hi = sampled.sandwich(np.sort(upper), T, times, sigma)
    else:
        lo = run_to_zero(system, np.zeros(S), -T, times, sigma)
        hi = lo if not upper.any() else run_to_zero(system, np.sort(upper), -T, times, sigma)
    return (lo, m) if np.array_equal(lo, hi) else None

