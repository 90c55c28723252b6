"""Compiled drivers that iterate a map over blocks of pre-drawn innovations.

Statistics are accumulated in the kernel per (replication, batch) so memory stays O(S) per
replication (plus the batch table), unless a path is recorded.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import jit
from .maps import apply_map

# columns of the per-batch accumulator
ARRIVALS, JOINED, WAITED, WAIT_SUM, LOST, WORK, BUSY = range(7)
N_STATS = 7


@jit
def _count_above(w, lo, hi, x):
    """Number of ``w[lo:hi]`` (sorted) strictly above ``x``."""
    i = lo
    while i < hi and w[i] <= x:
        i += 1
    return hi - i


@jit(parallel=True)
def run_chunk(kind, params, split, W, sig, tau, U, collect, t0, total, nbatch, grid, acc, prof,
              path):
    """Advance every replication ``r`` (row ``W[r]``) through ``sig.shape[1]`` arrivals.

    When ``collect`` is true, statistics of the state seen by arrival ``t0 + k`` (measured
    index, out of ``total``) are added to batch ``(t0 + k) * nbatch // total``; the state is
    written to ``path[r, t0 + k]`` when ``path`` is non-empty.
    """
    nrep, s = W.shape
    n = sig.shape[1]
    ng = grid.size
    record = path.shape[0] > 0
    for r in numba.prange(nrep):
        w = W[r]
        for k in range(n):
            b = 0
            if collect:
                t = t0 + k
                b = (t * nbatch) // total
                tot = 0.0
                for i in range(s):
                    tot += w[i]
                acc[r, b, WORK] += tot
                acc[r, b, BUSY] += _count_above(w, 0, split, 0.0) + _count_above(w, split, s, 0.0)
                # profile: merge the sorted grid with each sorted block
                i0 = 0
                i1 = split
                for g in range(ng):
                    x = grid[g]
                    while i0 < split and w[i0] <= x:
                        i0 += 1
                    while i1 < s and w[i1] <= x:
                        i1 += 1
                    prof[r, b, g] += (split - i0) + (s - i1)
                if record:
                    for i in range(s):
                        path[r, t, i] = w[i]
            found = apply_map(kind, params, w, sig[r, k], tau[r, k], U[r, k])
            if collect:
                acc[r, b, ARRIVALS] += 1.0
                if found < 0.0:
                    acc[r, b, LOST] += 1.0
                else:
                    acc[r, b, JOINED] += 1.0
                    if found > 0.0:
                        acc[r, b, WAITED] += 1.0
                        acc[r, b, WAIT_SUM] += found


@jit
def run_path(kind, params, w, sig, tau, U):
    """Apply the map to ``w`` in place for each arrival; no statistics."""
    for k in range(sig.size):
        apply_map(kind, params, w, sig[k], tau[k], U[k])


def empty_path() -> np.ndarray:
    """A zero-size path array (no recording)."""
    return np.zeros((0, 0, 0))
