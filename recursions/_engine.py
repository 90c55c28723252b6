"""The drivers that iterate a map, drawing inside the loop or from pre-drawn blocks: a template.

Statistics are accumulated in the kernel per (replication, batch) so memory stays O(S) per
replication (plus the batch table), unless a path is recorded. They are fused into the map's
own pass over the vector: for a kernel that is a join followed by ``drain(w, tau)``
(:data:`recursions.maps.DRAIN_LAST`, every built-in map of that form) the driver runs the
join and drains the vector itself, adding up the drained vector's total workload and busy
servers (the state the next customer sees) in that same loop; other kernels get one extra
pass after their step. The per-batch sums live in registers and are written to the batch
table when a batch ends, in the same order of additions as one addition per arrival, so the
numbers do not depend on the chunking.

Two ways to get the innovations: :func:`run_draws` draws every customer's service and
interarrival times from the input's own :class:`numpy.random.Generator` objects inside the
loop (the built-in laws, through :func:`recursions.dists.kernel.draw_one`, which gives the very
numbers of ``law.sample`` on the same generator), and the routing uniforms from the routing
generator, as ``gen.random((n, m))`` would row by row; :func:`run_chunk` takes blocks drawn
outside (any law, scipy's included).

Every driver reaches the map only through ``STEP(w, sigma, tau, u, params)``, the signature
of every kernel in :mod:`recursions.maps` and of a user's :class:`recursions.Map` (and, when
``FUSED``, through its join ``JOIN(w, sigma, u, params)``). This module is a template:
:func:`recursions.drivers.compiled_drivers` compiles its source once per kernel with ``STEP``,
``JOIN`` and ``FUSED`` bound for that kernel (and caches the result on disk), so built-in and
user-written maps run the very same drivers. Importing it directly gives the drivers of JSW.
"""

from __future__ import annotations

import numba
import numpy as np

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
    batch_start,
    level_bin,
    load_batch,
    store_batch,
)
from .dists.kernel import draw_one
from .maps import jsw as STEP  # the template's kernel; compiled_drivers binds each map's own
from .maps import jsw_join as JOIN  # its join; compiled_drivers binds each map's own

FUSED = True  # whether JOIN + the driver's own drain is STEP; bound by compiled_drivers


@jit
def total_busy(w):
    """``(sum of w, number of w_i > 0)``; the sum in four interleaved partial sums.

    The partial sums (a fixed order, the same on every machine) break the chain of dependent
    additions that would otherwise cost the latency of one addition per server.
    """
    s = w.size
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    busy = 0
    i = 0
    while i + 4 <= s:
        x0 = w[i]
        x1 = w[i + 1]
        x2 = w[i + 2]
        x3 = w[i + 3]
        a0 += x0
        a1 += x1
        a2 += x2
        a3 += x3
        busy += (x0 > 0.0) + (x1 > 0.0) + (x2 > 0.0) + (x3 > 0.0)
        i += 4
    while i < s:
        x = w[i]
        a0 += x
        busy += x > 0.0
        i += 1
    return (a0 + a1) + (a2 + a3), busy


@jit
def drain_total_busy(w, tau):
    """``drain(w, tau)`` and, in the same pass, :func:`total_busy` of the drained vector."""
    s = w.size
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    busy = 0
    i = 0
    while i + 4 <= s:
        x0 = w[i] - tau
        x1 = w[i + 1] - tau
        x2 = w[i + 2] - tau
        x3 = w[i + 3] - tau
        x0 = x0 if x0 > 0.0 else 0.0
        x1 = x1 if x1 > 0.0 else 0.0
        x2 = x2 if x2 > 0.0 else 0.0
        x3 = x3 if x3 > 0.0 else 0.0
        w[i] = x0
        w[i + 1] = x1
        w[i + 2] = x2
        w[i + 3] = x3
        a0 += x0
        a1 += x1
        a2 += x2
        a3 += x3
        busy += (x0 > 0.0) + (x1 > 0.0) + (x2 > 0.0) + (x3 > 0.0)
        i += 4
    while i < s:
        x = w[i] - tau
        x = x if x > 0.0 else 0.0
        w[i] = x
        a0 += x
        busy += x > 0.0
        i += 1
    return (a0 + a1) + (a2 + a3), busy


@jit
def apply_step(params, w, sigma, tau, u, collect):
    """One arrival: ``found`` and, when ``collect``, the total and busy count of the new state.

    A drain-last kernel (``FUSED``) runs its join, then the drain adds up the statistics in
    its own pass; any other kernel runs whole and the statistics take one more pass.
    """
    tot = 0.0
    busy = 0
    if FUSED:
        found = JOIN(w, sigma, u, params)
        if collect:
            tot, busy = drain_total_busy(w, tau)
        else:
            for i in range(w.size):
                v = w[i] - tau
                w[i] = v if v > 0.0 else 0.0
    else:
        found = STEP(w, sigma, tau, u, params)
        if collect:
            tot, busy = total_busy(w)
    return found, tot, busy


@jit
def seen(w, tot, busy, t, every, grid, h, c, hist, b, path, record):
    """Statistics of the state ``w`` seen by arrival ``t`` (total ``tot``, ``busy`` servers)."""
    s = w.size
    c[WORK] += tot
    c[BUSY] += busy
    if busy == s:
        c[ALL_BUSY] += 1.0
    if t % every == 0:
        c[SAMPLED] += 1.0
        for i in range(s):
            if w[i] > 0.0:
                hist[b, level_bin(grid, h, w[i])] += 1.0
    if record:
        for i in range(s):
            path[t, i] = w[i]


@jit
def outcome(found, sigma, grid, h, c, hist, b, found_hist):
    """Statistics of what the customer found (``found``, or lost when negative)."""
    c[ARRIVALS] += 1.0
    if found < 0.0:
        c[LOST] += 1.0
        c[LOST_WORK] += sigma
    else:
        c[JOINED] += 1.0
        if found > 0.0:
            c[WAITED] += 1.0
            c[WAIT_SUM] += found
        if found_hist:  # histogram of what was found
            hist[b, grid.size + 1 + level_bin(grid, h, found)] += 1.0


@jit
def advance_drawn(params, w, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc,
                  hist, path):
    """One replication through pre-drawn ``sig``, ``tau``, ``U`` (see :func:`run_chunk`)."""
    n = sig.size
    record = path.shape[0] > 0
    found_hist = hist.shape[1] >= 2 * (grid.size + 1)
    c = np.zeros(acc.shape[1])
    b = (t0 * nbatch) // total if collect else 0
    next_start = batch_start(b + 1, total, nbatch)
    tot = 0.0
    busy = 0
    if collect:
        load_batch(acc, b, c)
        tot, busy = total_busy(w)
    for k in range(n):
        if collect:
            t = t0 + k
            if t >= next_start:
                store_batch(acc, b, c)
                b += 1
                next_start = batch_start(b + 1, total, nbatch)
                load_batch(acc, b, c)
            seen(w, tot, busy, t, every, grid, h, c, hist, b, path, record)
        found, tot, busy = apply_step(params, w, sig[k], tau[k], U[k], collect)
        if collect:
            outcome(found, sig[k], grid, h, c, hist, b, found_hist)
    if collect:
        store_batch(acc, b, c)


@jit
def run_draws(params, w, gs, scode, spar, gt, tcode, tpar, gu, m, n, collect, t0, total,
              nbatch, grid, h, every, acc, hist, path):
    """One replication ``w`` through ``n`` arrivals drawn inside the loop.

    Service times are ``draw_one(scode, spar, gs)``, interarrival times ``draw_one(tcode,
    tpar, gt)`` and the ``m`` routing uniforms ``gu.random()`` each, customer after customer:
    the numbers of ``law.sample(gs, n)``, ``law.sample(gt, n)`` and ``gu.random((n, m))``, so
    a run gives the numbers of :func:`run_chunk` on those blocks. ``acc``, ``hist`` and
    ``path`` are this replication's rows (shapes ``(nbatch, N_STATS)``, ``(nbatch, G)`` and
    ``(steps, S)`` or empty); the rest as in :func:`run_chunk`. Runs without the GIL, so
    replications can run in threads.
    """
    record = path.shape[0] > 0
    found_hist = hist.shape[1] >= 2 * (grid.size + 1)
    c = np.zeros(acc.shape[1])
    u = np.empty(m)
    b = (t0 * nbatch) // total if collect else 0
    next_start = batch_start(b + 1, total, nbatch)
    tot = 0.0
    busy = 0
    if collect:
        load_batch(acc, b, c)
        tot, busy = total_busy(w)
    for k in range(n):
        sigma = draw_one(scode, spar, gs)
        ta = draw_one(tcode, tpar, gt)
        for j in range(m):
            u[j] = gu.random()
        if collect:
            t = t0 + k
            if t >= next_start:
                store_batch(acc, b, c)
                b += 1
                next_start = batch_start(b + 1, total, nbatch)
                load_batch(acc, b, c)
            seen(w, tot, busy, t, every, grid, h, c, hist, b, path, record)
        found, tot, busy = apply_step(params, w, sigma, ta, u, collect)
        if collect:
            outcome(found, sigma, grid, h, c, hist, b, found_hist)
    if collect:
        store_batch(acc, b, c)


@jit(parallel=True)
def run_chunk(params, W, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc,
              hist, path):
    """Advance every replication ``r`` (row ``W[r]``) through ``sig.shape[1]`` pre-drawn arrivals.

    When ``collect`` is true, statistics of the state seen by arrival ``t0 + k`` (measured
    index, out of ``total``) are added to batch ``b = (t0 + k) * nbatch // total``: the
    scalar sums in ``acc[r, b]`` and, at every ``every``-th arrival, one count per busy server
    in ``hist[r, b, level_bin(w_i)]`` (the profile is a reversed cumulative sum of ``hist``).
    When ``hist`` has twice ``grid.size + 1`` columns, the second half histograms what each
    customer found (the FCFS wait under JSW, the response time under redundancy).
    The state is written to ``path[r, t0 + k]`` when ``path`` is non-empty.
    """
    nrep = W.shape[0]
    record = path.shape[0] > 0
    none = np.zeros((0, 0))
    for r in numba.prange(nrep):
        advance_drawn(params, W[r], sig[r], tau[r], U[r], collect, t0, total, nbatch, grid,
                      h, every, acc[r], hist[r], path[r] if record else none)


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
