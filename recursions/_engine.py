"""The drivers that iterate a map over blocks of pre-drawn innovations: a template.

Statistics are accumulated in the kernel per (replication, batch) so memory stays O(S) per
replication (plus the batch table), unless a path is recorded.

Every driver reaches the map only through ``STEP(w, sigma, tau, u, params)``, the signature
of every kernel in :mod:`recursions.maps` and of a user's :class:`recursions.Map`. This
module is a template: :func:`recursions.drivers.compiled_drivers` compiles its source once
per kernel with ``STEP`` bound to that kernel (and caches the result on disk), so built-in
and user-written maps run the very same drivers. Importing it directly gives the drivers of
JSW.
"""

from __future__ import annotations

import numba

from ._jit import jit
from ._stats import (
    ALL_BUSY,
    ARRIVALS,
    BUSY,
    JOINED,
    LOST,
    LOST_WORK,
    SAMPLED,
    WAIT_SUM,
    WAITED,
    WORK,
    level_bin,
)
from .maps import jsw as STEP  # the template's kernel; compiled_drivers binds each map's own


@jit(parallel=True)
def run_chunk(params, W, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc,
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
            found = STEP(w, sig[r, k], tau[r, k], U[r, k], params)
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


@jit
def step_once(params, w, sigma, tau, u):
    """Apply the map once to a copy of ``w``; returns ``(new w, found)`` (``System.step``)."""
    out = w.copy()
    found = STEP(out, sigma, tau, u, params)
    return out, found


@jit
def couple_chunk(params, a, b, sig, tau, U):
    """Advance both copies ``a`` and ``b`` in place through the chunk's arrivals.

    Returns the number of steps ``k + 1`` after which ``a == b`` exactly (and stops there), or
    ``-1`` when they differ after every step of the chunk.
    """
    s = a.size
    for k in range(sig.size):
        STEP(a, sig[k], tau[k], U[k], params)
        STEP(b, sig[k], tau[k], U[k], params)
        equal = True
        for i in range(s):
            if a[i] != b[i]:
                equal = False
                break
        if equal:
            return k + 1
    return -1


@jit
def run_path(params, w, sig, tau, U):
    """Apply the map to ``w`` in place for each arrival; no statistics."""
    for k in range(sig.size):
        STEP(w, sig[k], tau[k], U[k], params)


@jit(parallel=True)
def apply_rows(params, W, sig, tau, U, found):
    """Apply the map once to each row ``W[i]`` in place, with ``sig[i], tau[i], U[i]``.

    ``found[i]`` receives what customer ``i`` found (``-1`` if lost). The rows are independent
    cases (batch checks of monotonicity and dominance), processed in parallel.
    """
    for i in numba.prange(W.shape[0]):
        found[i] = STEP(W[i], sig[i], tau[i], U[i], params)
