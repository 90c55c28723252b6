"""Event engine for large systems: absolute empty times in an indexed min-heap (MATH.md §3).

Server ``i``'s workload at time ``t`` is ``(E_i - t)^+`` with ``E_i`` its absolute empty time.
An arrival at ``t`` needs no departure events: JIQ joins the heap minimum if it is ``<= t``
(an idle server), else a uniform server; JSW (least workload, LL) takes the heap minimum;
random routing a uniform server; LL(d) the least ``E`` among ``d`` servers drawn without
replacement (Floyd's algorithm, ``d`` uniforms). The chosen ``E_j`` becomes ``max(E_j, t) +
sigma`` and sifts down: ``O(log n)`` per arrival, memory ``O(n)``. Cancel-on-completion
redundancy (:class:`~recursions.redundancy.Redundancy`) draws ``d`` servers by Floyd's algorithm,
moves each ``E_i`` to ``min(t + x_i + xi_i, max(t + x_i, t + T))`` (keys only grow) and sifts
each changed server down: ``O(d log n)`` per arrival. The clock is re-based
(``E -= t``, ``t = 0``) whenever it passes :data:`REBASE`, so long horizons keep precision.

Snapshots of the whole vector (busy fraction, total workload, profile histogram) are taken at
every ``every``-th arrival (default ``n``: ``O(1)`` amortised per arrival).
"""

from __future__ import annotations

import numba
import numpy as np

from . import _stats as eng
from . import maps
from ._jit import jit
from .codes import HeapPolicy

JSW, JIQ, RANDOM, LEAST_OF_D, REDUNDANCY = (int(c) for c in HeapPolicy)
REBASE = 2.0**20


@jit
def sift_down(E, heap, pos, i):
    """Restore the heap below position ``i`` after the key of ``heap[i]`` grew."""
    n = heap.size
    j = heap[i]
    key = E[j]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and E[heap[c + 1]] < E[heap[c]]:
            c += 1
        if E[heap[c]] < key:
            heap[i] = heap[c]
            pos[heap[i]] = i
            i = c
        else:
            break
    heap[i] = j
    pos[j] = i


@jit
def floyd_min(E, u, d, n):
    """Server with the least ``E`` among ``d`` drawn without replacement (Floyd), ``d`` uniforms."""
    chosen = np.empty(d, dtype=np.int64)
    maps.floyd_ranks(u, d, n, chosen)
    best = chosen[0]
    for q in range(1, d):
        if E[chosen[q]] < E[best]:
            best = chosen[q]
    return best


@jit
def redundancy_event(params, E, heap, pos, t, u):
    """One redundant job at time ``t`` on absolute empty times ``E``; returns its response time.

    Same rule as :func:`recursions.maps.redundancy`, on server labels drawn by Floyd's
    algorithm (the same law as ranks); each changed server is sifted down.
    """
    n = E.size
    frame = params[0]
    dmax = int(params[2])
    j = maps.redundancy_class(params, u[0])
    d = int(params[3 + 3 * j])
    k = int(params[3 + 3 * j + 1])
    ids = np.empty(d, dtype=np.int64)
    maps.floyd_ranks(u[1:1 + d], d, n, ids)
    done = np.empty(d)
    for q in range(d):
        x = E[ids[q]] - t
        done[q] = (x if x > 0.0 else 0.0) + u[1 + dmax + q]
    resp = np.sort(done)[k - 1]
    for q in range(d):
        i = ids[q]
        x = E[i] - t
        if x < 0.0:
            x = 0.0
        v = x if x > resp else resp
        if done[q] < v:
            v = done[q]
        if v > frame:
            v = frame
        if t + v > E[i]:
            E[i] = t + v
            sift_down(E, heap, pos, pos[i])
    return resp


@jit(parallel=True)
def run_heap_chunk(policy, d, params, E, heap, pos, tnow, elapsed, idx, sig, tau, U, collect,
                   horizon, total, nbatch, by_time, grid, h, every, acc, hist, rebase):
    """Advance every replication through the chunk's arrivals (see the module docstring).

    ``idx[r]`` counts measured arrivals; in time mode (``by_time``) replication ``r`` stops once
    ``elapsed[r] >= horizon`` and batches follow elapsed time, else arrival counts.
    """
    nrep, n = E.shape
    nk = sig.shape[1]
    for r in numba.prange(nrep):
        e = E[r]
        hp = heap[r]
        ps = pos[r]
        t = tnow[r]
        for k in range(nk):
            if by_time and elapsed[r] >= horizon:
                break
            b = 0
            if collect:
                if by_time:
                    b = min(int(elapsed[r] * nbatch / horizon), nbatch - 1)
                else:
                    b = min((idx[r] * nbatch) // total, nbatch - 1)
                if e[hp[0]] > t:
                    acc[r, b, eng.ALL_BUSY] += 1.0
                if idx[r] % every == 0:
                    acc[r, b, eng.SAMPLED] += 1.0
                    tot = 0.0
                    busy = 0
                    for i in range(n):
                        x = e[i] - t
                        if x > 0.0:
                            tot += x
                            busy += 1
                            hist[r, b, eng.level_bin(grid, h, x)] += 1.0
                    acc[r, b, eng.WORK] += tot
                    acc[r, b, eng.BUSY] += busy
            if policy == JSW:
                j = hp[0]
            elif policy == JIQ:
                j = hp[0]
                if e[j] > t:
                    j = min(int(U[r, k, 0] * n), n - 1)
            elif policy == RANDOM:
                j = min(int(U[r, k, 0] * n), n - 1)
            elif policy == LEAST_OF_D:
                j = floyd_min(e, U[r, k], d, n)
            else:
                j = -1
            if j >= 0:
                found = e[j] - t
                if found < 0.0:
                    found = 0.0
                e[j] = t + found + sig[r, k]
                sift_down(e, hp, ps, ps[j])
            else:
                found = redundancy_event(params, e, hp, ps, t, U[r, k])
            if collect:
                acc[r, b, eng.ARRIVALS] += 1.0
                acc[r, b, eng.JOINED] += 1.0
                if found > 0.0:
                    acc[r, b, eng.WAITED] += 1.0
                    acc[r, b, eng.WAIT_SUM] += found
                if hist.shape[2] >= 2 * (grid.size + 1):
                    hist[r, b, grid.size + 1 + eng.level_bin(grid, h, found)] += 1.0
                idx[r] += 1
            t += tau[r, k]
            elapsed[r] += tau[r, k]
            if t > rebase:  # re-base the clock
                for i in range(n):
                    e[i] -= t
                t = 0.0
        tnow[r] = t


def policy_of(system) -> tuple[int, int]:
    """(policy code, d) of ``system.heap_policy`` (what the system declares), or (-1, 0)."""
    declared = getattr(system, "heap_policy", None)
    return (-1, 0) if declared is None else (int(declared[0]), int(declared[1]))


def uniforms_for(policy: int, d: int) -> int:
    """Routing uniforms per arrival the heap engine draws (redundancy: the system's row)."""
    return {JSW: 0, JIQ: 1, RANDOM: 1, LEAST_OF_D: d, REDUNDANCY: 1 + 2 * d}[policy]


def init_heap(W: np.ndarray):
    """Heap arrays for absolute empty times ``W`` (one row per replication)."""
    heap = np.argsort(W, axis=1, kind="stable").astype(np.int64)  # a sorted array is a heap
    pos = np.empty_like(heap)
    rows = np.arange(W.shape[0])[:, None]
    pos[rows, heap] = np.arange(W.shape[1])[None, :]
    return np.ascontiguousarray(heap), np.ascontiguousarray(pos)
