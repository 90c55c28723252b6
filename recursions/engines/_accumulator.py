"""Columns of the drivers' per-batch accumulator, and the helpers that read it.

Shared by the sorted-vector drivers (:mod:`recursions.engines._driver_template`, compiled once per
map by :mod:`recursions.engines._driver_compiler`) and the large-n event engine
(:mod:`recursions.engines._heap`).
"""

from __future__ import annotations

import math

import numpy as np

from recursions.common._jit import jit

__all__ = ["ALL_BUSY", "ARRIVALS", "BUSY", "JOINED", "LOST", "LOST_WORK", "N_STATS", "SAMPLED",
           "SERVED_WORK", "WAITED", "WAIT_SUM", "WORK", "batch_start", "empty_path", "level_bin",
           "load_batch", "profile_counts", "store_batch", "uniform_step"]

# columns of the per-batch accumulator; SERVED_WORK sums the service times of the customers who
# joined a server (their response is what they found plus it). Where what a map returns is a
# response already (System.finds_response: redundancy) the result reads it as 0; the heap
# engine, whose redundancy rule is its own, adds 0 there itself
(ARRIVALS, JOINED, WAITED, WAIT_SUM, LOST, WORK, BUSY, SAMPLED, LOST_WORK, ALL_BUSY,
 SERVED_WORK) = range(11)
N_STATS = 11


@jit(inline="always")
def level_bin(grid, h, x):
    """Number of grid levels strictly below ``x`` (``searchsorted(grid, x, 'left')``).

    ``h > 0`` flags a uniform grid: the guess ``ceil((x - grid[0]) / h)`` is then corrected
    by at most a step or two, so the answer is exact at the levels themselves.
    """
    ng = grid.size
    if ng == 0 or x <= grid[0]:
        return 0
    if h > 0.0:
        # 1 / h is hoisted out of a caller's loop; math.ceil, not int(np.ceil): the same
        # integer, without typing a ufunc in every first compile
        j = math.ceil((x - grid[0]) * (1.0 / h))
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


@jit(inline="always")
def load_batch(acc, b, c):
    """Copy the batch row ``acc[b]`` into the running sums ``c``."""
    for j in range(c.size):
        c[j] = acc[b, j]


@jit(inline="always")
def store_batch(acc, b, c):
    """Write the running sums ``c`` back to ``acc[b]``."""
    for j in range(c.size):
        acc[b, j] = c[j]


@jit(inline="always")
def batch_start(b, total, nbatch):
    """First measured index of batch ``b``."""
    return -((-b * total) // nbatch)


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


def empty_path() -> np.ndarray:
    """A zero-size path array (no recording)."""
    return np.zeros((0, 0, 0))

