"""Compiled drivers that iterate a map over blocks of pre-drawn innovations.

Statistics are accumulated in the kernel per (replication, batch) so memory stays O(S) per
replication (plus the batch table), unless a path is recorded.

Every driver reaches the map only through ``apply_map(kind, params, w, sigma, tau, u)``. For
the built-in maps that is :func:`recursions.maps.apply_map`; for a user's map
(:class:`recursions.Map`) this module's source is compiled again with ``apply_map`` bound to
the user's step function (:mod:`recursions.user_map`), so both run the same drivers.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit
from .maps import apply_map

# columns of the per-batch accumulator
ARRIVALS, JOINED, WAITED, WAIT_SUM, LOST, WORK, BUSY, SAMPLED, LOST_WORK, ALL_BUSY = range(10)
N_STATS = 10


@jit
def level_bin(grid, h, x):
    """Number of grid levels strictly below ``x`` (``searchsorted(grid, x, 'left')``).

    ``h > 0`` flags a uniform grid: the guess ``ceil((x - grid[0]) / h)`` is then corrected
    by at most a step or two, so the answer is exact at the levels themselves.
    """
    ng = grid.size
    if ng == 0 or x <= grid[0]:
        return 0
    if h > 0.0:
        j = int(np.ceil((x - grid[0]) / h))
        j = min(max(j, 0), ng)
    else:
        lo, hi = 0, ng
        while lo < hi:
            mid = (lo + hi) // 2
            if grid[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        j = lo
    while j > 0 and grid[j - 1] >= x:
        j -= 1
    while j < ng and grid[j] < x:
        j += 1
    return j


@jit(parallel=True)
def run_chunk(kind, params, W, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc,
              hist, path):
    """Advance every replication ``r`` (row ``W[r]``) through ``sig.shape[1]`` arrivals.

    When ``collect`` is true, statistics of the state seen by arrival ``t0 + k`` (measured
    index, out of ``total``) are added to batch ``b = (t0 + k) * nbatch // total``: the
    scalar sums in ``acc[r, b]`` and, at every ``every``-th arrival, one count per busy server
    in ``hist[r, b, level_bin(w_i)]`` (the profile is a reversed cumulative sum of ``hist``).
    When ``hist`` has twice ``grid.size + 1`` columns, the second half histograms what each
    customer found (the FCFS wait under JSW, the response time under redundancy).
    The state is written to ``path[r, t0 + k]`` when ``path`` is non-empty.
    """
    nrep, s = W.shape
    n = sig.shape[1]
    record = path.shape[0] > 0
    for r in numba.prange(nrep):
        w = W[r]
        b = (t0 * nbatch) // total if collect else 0
        next_start = -((-(b + 1) * total) // nbatch)  # first index of batch b + 1
        for k in range(n):
            if collect:
                t = t0 + k
                if t >= next_start:
                    b += 1
                    next_start = -((-(b + 1) * total) // nbatch)
                tot = 0.0
                busy = 0
                for i in range(s):
                    x = w[i]
                    tot += x
                    busy += x > 0.0
                acc[r, b, WORK] += tot
                acc[r, b, BUSY] += busy
                if busy == s:
                    acc[r, b, ALL_BUSY] += 1.0
                if t % every == 0:
                    acc[r, b, SAMPLED] += 1.0
                    for i in range(s):
                        if w[i] > 0.0:
                            hist[r, b, level_bin(grid, h, w[i])] += 1.0
                if record:
                    for i in range(s):
                        path[r, t, i] = w[i]
            found = apply_map(kind, params, w, sig[r, k], tau[r, k], U[r, k])
            if collect:
                acc[r, b, ARRIVALS] += 1.0
                if found < 0.0:
                    acc[r, b, LOST] += 1.0
                    acc[r, b, LOST_WORK] += sig[r, k]
                else:
                    acc[r, b, JOINED] += 1.0
                    if found > 0.0:
                        acc[r, b, WAITED] += 1.0
                        acc[r, b, WAIT_SUM] += found
                    if hist.shape[2] >= 2 * (grid.size + 1):  # histogram of what was found
                        hist[r, b, grid.size + 1 + level_bin(grid, h, found)] += 1.0


def profile_counts(hist: np.ndarray) -> np.ndarray:
    """Turn level histograms ``(..., G + 1)`` into counts of servers above each level ``(..., G)``.

    A server in bin ``j`` (``j`` levels strictly below its workload) is above levels
    ``0 .. j-1``, so the count above level ``g`` is ``sum_{j > g} hist[j]``.
    """
    tail = np.cumsum(hist[..., ::-1], axis=-1)[..., ::-1]
    return tail[..., 1:]


def uniform_step(grid: np.ndarray) -> float:
    """The spacing of ``grid`` if it is uniform (to 1e-12 relative), else 0."""
    if grid.size < 2:
        return 0.0
    d = np.diff(grid)
    return float(d[0]) if np.allclose(d, d[0], rtol=1e-12, atol=0.0) else 0.0


@jit
def step_once(kind, params, w, sigma, tau, u):
    """Apply the map once to a copy of ``w``; returns ``(new w, found)`` (``System.step``)."""
    out = w.copy()
    found = apply_map(kind, params, out, sigma, tau, u)
    return out, found


@jit
def couple_chunk(kind, params, a, b, sig, tau, U):
    """Advance both copies ``a`` and ``b`` in place through the chunk's arrivals.

    Returns the number of steps ``k + 1`` after which ``a == b`` exactly (and stops there), or
    ``-1`` when they differ after every step of the chunk.
    """
    s = a.size
    for k in range(sig.size):
        apply_map(kind, params, a, sig[k], tau[k], U[k])
        apply_map(kind, params, b, sig[k], tau[k], U[k])
        equal = True
        for i in range(s):
            if a[i] != b[i]:
                equal = False
                break
        if equal:
            return k + 1
    return -1


@jit
def run_path(kind, params, w, sig, tau, U):
    """Apply the map to ``w`` in place for each arrival; no statistics."""
    for k in range(sig.size):
        apply_map(kind, params, w, sig[k], tau[k], U[k])


def empty_path() -> np.ndarray:
    """A zero-size path array (no recording)."""
    return np.zeros((0, 0, 0))


@jit(parallel=True)
def apply_rows(kind, params, W, sig, tau, U, found):
    """Apply the map once to each row ``W[i]`` in place, with ``sig[i], tau[i], U[i]``.

    ``found[i]`` receives what customer ``i`` found (``-1`` if lost). The rows are independent
    cases (batch checks of monotonicity and dominance), processed in parallel.
    """
    for i in numba.prange(W.shape[0]):
        found[i] = apply_map(kind, params, W[i], sig[i], tau[i], U[i])
