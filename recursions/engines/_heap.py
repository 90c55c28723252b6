"""Event engine for large systems: absolute empty times in an indexed min-heap.

The theory: :ref:`Theory › Large systems, the heap engine <theory-large-heap>`.

Server ``i``'s workload at time ``t`` is ``(E_i - t)^+`` with ``E_i`` its absolute empty time.
An arrival at ``t`` needs no departure events: JIQ joins the heap minimum if it is ``<= t``
(an idle server), else a uniform server; JSW (least workload, LL) takes the heap minimum;
random routing a uniform server; LL(d) the least ``E`` among ``d`` servers drawn without
replacement (Floyd's algorithm, ``d`` uniforms). The chosen ``E_j`` becomes ``max(E_j, t) +
sigma`` and sifts down: ``O(log n)`` per arrival, memory ``O(n)``. Cancel-on-completion
redundancy (:class:`~recursions.model.redundancy.Redundancy`) draws ``d`` servers by Floyd's
algorithm,
moves each ``E_i`` to ``min(t + x_i + xi_i, max(t + x_i, t + T))`` (keys only grow) and sifts
each changed server down: ``O(d log n)`` per arrival. The clock is re-based
(``E -= t``, ``t = 0``) whenever it passes :data:`REBASE`, so long horizons keep precision.

Snapshots of the whole vector (busy fraction, total workload, profile histogram) are taken at
every ``every``-th arrival (default ``n``: ``O(1)`` amortised per arrival). A copy with
``LEAN`` bound (:func:`recursions.engines._driver_compiler.heap_drivers` with ``lean=True``, for
runs that keep
only what customers find) takes none, and keeps no all-busy count or histogram of the waits.

The heap is 4-ary with its keys stored in heap order (:func:`sift_down4`): a step down reads
four contiguous keys instead of four scattered ones, over half the levels of a binary heap
(:func:`sift_down`, kept as its twin). Measured against the binary heap in
``docs/benchmarks.md``, section "The heap's layout".
"""

from __future__ import annotations

import numpy as np

from recursions.common._jit import jit  # placeholder: bound to the project's jit
from recursions.common.codes import HeapPolicy
from recursions.dists.kernel import sampler
from recursions.engines import _accumulator as eng
from recursions.engines._replications import each_replication
from recursions.model import maps as maps
from recursions.vectors import kth_smallest

JSW, JIQ, RANDOM, LEAST_OF_D, REDUNDANCY = (int(c) for c in HeapPolicy)
REBASE = 2.0**20
DRAW = False  # placeholder: whether heap_steps draws inside the loop
SCODE = 0  # placeholder: the service law code run_heap_draws draws
TCODE = 0  # placeholder: the interarrival law code
DRAW_S = sampler(SCODE)  # placeholder: the sampler of SCODE
DRAW_T = sampler(TCODE)  # placeholder: the sampler of TCODE
POLICY = -1  # placeholder: the routing policy of a drawing copy, or -1 (read at run time)
WIDE = True  # placeholder: the 4-ary heap with keys in heap order (else binary)
LEAN = False  # placeholder: whether the loop keeps only what customers find (waits)


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
def sift_down4(K, heap, pos, i):
    """As :func:`sift_down` on a 4-ary heap whose keys ``K`` are stored in heap order.

    ``K[p]`` is the key of ``heap[p]``: the four children of position ``p`` (``4p + 1`` to
    ``4p + 4``) and their keys are contiguous, so a level costs one cache line instead of four
    scattered reads, and there are half as many levels as in a binary heap.
    """
    n = heap.size
    j = heap[i]
    key = K[i]
    while True:
        c = 4 * i + 1
        if c >= n:
            break
        last = c + 4 if c + 4 <= n else n
        b = c
        kb = K[c]
        for q in range(c + 1, last):
            if K[q] < kb:
                kb = K[q]
                b = q
        if kb < key:
            heap[i] = heap[b]
            K[i] = kb
            pos[heap[i]] = i
            i = b
        else:
            break
    heap[i] = j
    K[i] = key
    pos[j] = i


@jit(inline="always")
def grew(E, K, heap, pos, j):
    """Restore the heap after server ``j``'s empty time ``E[j]`` grew (the module's layout)."""
    if WIDE:
        K[pos[j]] = E[j]
        sift_down4(K, heap, pos, pos[j])
    else:
        sift_down(E, heap, pos, pos[j])


@jit(inline="always")
def floyd_min(E, u, d, n, chosen):
    """Server with the least ``E`` among ``d`` drawn without replacement (Floyd), ``d`` uniforms.

    ``chosen`` is an int64 buffer of length ``>= d`` (the caller's, so that nothing is
    allocated per arrival). :func:`recursions.vectors.floyd_ranks` written out, and inlined
    into the event loop (a call that takes arrays costs reference counting per arrival).
    """
    for q in range(d):
        top = n - d + q
        c = int(u[q] * (top + 1))
        if c > top:
            c = top
        for p in range(q):
            if chosen[p] == c:
                c = top
                break
        chosen[q] = c
    best = chosen[0]
    for q in range(1, d):
        if E[chosen[q]] < E[best]:
            best = chosen[q]
    return best


@jit
def redundancy_event(params, E, K, heap, pos, t, u):
    """One redundant job at time ``t`` on absolute empty times ``E``; returns its response time.

    Same rule as :func:`recursions.model.maps.redundancy`, on server labels drawn by Floyd's
    algorithm (the same law as ranks); each changed server is sifted down (``K``: the keys in
    heap order, see :func:`grew`).
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
    resp = kth_smallest(done, d, k, np.empty(d))
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
            grew(E, K, heap, pos, i)
    return resp


@jit(inline="always")
def rebased(e, K, t):
    """Re-base the clock: every empty time (and key) less ``t``; returns the new clock, 0."""
    for i in range(e.size):
        e[i] -= t
    if WIDE:
        for p in range(e.size):
            K[p] -= t
    return 0.0


@jit
def heap_join(policy, d, params, e, hp, ps, K, t, sigma, uk, chosen):
    """The arrival at ``t`` joins as ``policy`` says; returns what it found.

    The workload found at the server joined, or under redundancy the job's response (its
    first copy's completion), to which no service time adds. The routing of
    :func:`heap_replay`; :func:`heap_steps` keeps the same lines in its own loop, where this
    function inlined slowed the engine (``docs/benchmarks.md``, section
    :ref:`bench-heap-routing`): the two are kept alike by hand and by the tests that replay a
    trace on both engines.
    """
    n = e.size
    if policy == JSW:
        j = hp[0]
    elif policy == JIQ:
        j = hp[0]
        if e[j] > t:
            j = min(int(uk[0] * n), n - 1)
    elif policy == RANDOM:
        j = min(int(uk[0] * n), n - 1)
    elif policy == LEAST_OF_D:
        j = floyd_min(e, uk, d, n, chosen)
    else:
        j = -1
    found = 0.0
    if j >= 0:
        found = e[j] - t
        if found < 0.0:
            found = 0.0
        e[j] = t + found + sigma
        grew(e, K, hp, ps, j)
    elif not DRAW:  # the drawing copies never run redundancy (its sizes are its own)
        found = redundancy_event(params, e, K, hp, ps, t, uk)
    return found


@jit
def heap_steps(policy, d, params, e, hp, ps, K, t, elapsed, idx, sig, tau, U, gs, scode, spar,
               gt, tcode, tpar, gu, m, draw, nk, collect, horizon, total, nbatch, by_time, grid,
               h, every, acc, hist, rebase):
    """One replication through ``nk`` arrivals; returns its ``(clock, elapsed, measured)``.

    With ``draw`` (which must be the module's constant ``DRAW``) the service and
    interarrival times are drawn here (``DRAW_S`` and ``DRAW_T``, the samplers of the
    module's law codes ``SCODE`` and ``TCODE``, on ``gs`` and ``gt``) and the ``m`` routing
    uniforms from ``gu``, customer after customer (the numbers of the blocks
    ``law.sample(gs, nk)``, ``law.sample(gt, nk)``, ``gu.random((nk, m))``); otherwise they
    are read from ``sig``, ``tau``, ``U``. ``acc`` and ``hist`` are this replication's rows.
    ``K`` holds the 4-ary layout's keys in heap order (``K[p] == e[hp[p]]``, kept with the
    heap between calls; unused by the binary layout). The per-batch sums are kept in
    registers and written back when a batch ends (the same additions in the same order as
    one per arrival). With the module's constant ``LEAN`` only the sums of what customers
    find are kept.
    """
    if draw != DRAW:
        raise ValueError("this engine was compiled for the other way of drawing")
    if POLICY >= 0:  # a copy compiled for one policy: the branches below fold away
        policy = POLICY
    if DRAW and policy == REDUNDANCY:  # so the drawing copies leave redundancy uncompiled
        raise ValueError("the heap engine's drawing copies do not run redundancy")
    n = e.size
    found_hist = hist.shape[1] >= 2 * (grid.size + 1)
    c = np.empty(acc.shape[1])  # the batch's sums, loaded from acc before any use (collect)
    u = np.empty(max(m, 1))
    chosen = np.empty(max(d, 1), dtype=np.int64)
    b = 0
    next_start = 0
    next_sample = idx + (-idx) % every  # the next idx with idx % every == 0 (no division)
    if collect:
        if by_time:
            b = min(int(elapsed * nbatch / horizon), nbatch - 1)
        else:
            b = min((idx * nbatch) // total, nbatch - 1)
            next_start = eng.batch_start(b + 1, total, nbatch)
        eng.load_batch(acc, b, c)
    # with a count of arrivals, the next customer's times are drawn a step ahead, so the
    # generators' work overlaps the heap's (the same draws in the same order, nk of each); a
    # run to a time horizon draws as it goes (it stops where the horizon falls)
    ahead = DRAW and not by_time
    next_sigma = 0.0
    next_ta = 0.0
    if ahead and nk > 0:
        next_sigma = DRAW_S(spar[0], spar, gs)  # the laws' own samplers: no other law's code
        next_ta = DRAW_T(tpar[0], tpar, gt)
    for k in range(nk):
        if by_time and elapsed >= horizon:
            break
        if ahead:
            sigma = next_sigma
            ta = next_ta
            if k + 1 < nk:
                next_sigma = DRAW_S(spar[0], spar, gs)
                next_ta = DRAW_T(tpar[0], tpar, gt)
            for j in range(m):
                u[j] = gu.random()
            uk = u
        elif DRAW:
            sigma = DRAW_S(spar[0], spar, gs)
            ta = DRAW_T(tpar[0], tpar, gt)
            for j in range(m):
                u[j] = gu.random()
            uk = u
        else:
            sigma = sig[k]
            ta = tau[k]
            uk = U[k]
        if collect:
            nb = b
            if by_time:
                nb = min(int(elapsed * nbatch / horizon), nbatch - 1)
            elif idx >= next_start and b < nbatch - 1:
                nb = b + 1
                next_start = eng.batch_start(nb + 1, total, nbatch)
            if nb != b:
                eng.store_batch(acc, b, c)
                b = nb
                eng.load_batch(acc, b, c)
            if not LEAN and e[hp[0]] > t:  # a lean copy keeps no statistic of the state
                c[eng.ALL_BUSY] += 1.0
            if not LEAN and idx == next_sample:
                next_sample += every
                c[eng.SAMPLED] += 1.0
                tot = 0.0
                busy = 0
                for i in range(n):
                    x = e[i] - t
                    if x > 0.0:
                        tot += x
                        busy += 1
                        hist[b, eng.level_bin(grid, h, x)] += 1.0
                c[eng.WORK] += tot
                c[eng.BUSY] += busy
        # the routing of heap_join, written out (inlined, it slowed this loop: see
        # docs/benchmarks.md, bench-heap-routing)
        if policy == JSW:
            j = hp[0]
        elif policy == JIQ:
            j = hp[0]
            if e[j] > t:
                j = min(int(uk[0] * n), n - 1)
        elif policy == RANDOM:
            j = min(int(uk[0] * n), n - 1)
        elif policy == LEAST_OF_D:
            j = floyd_min(e, uk, d, n, chosen)
        else:
            j = -1
        if j >= 0:
            found = e[j] - t
            if found < 0.0:
                found = 0.0
            e[j] = t + found + sigma
            grew(e, K, hp, ps, j)
        elif DRAW:  # never reached: redundancy draws its job classes' sizes, never in here
            found = 0.0
        else:
            found = redundancy_event(params, e, K, hp, ps, t, uk)
        if collect:
            c[eng.ARRIVALS] += 1.0
            c[eng.JOINED] += 1.0
            if policy != REDUNDANCY:  # redundancy's found is a response: nothing adds to it
                c[eng.SERVED_WORK] += sigma
            if found > 0.0:
                c[eng.WAITED] += 1.0
                c[eng.WAIT_SUM] += found
            if not LEAN and found_hist:
                hist[b, grid.size + 1 + eng.level_bin(grid, h, found)] += 1.0
            idx += 1
        t += ta
        elapsed += ta
        if t > rebase:
            t = rebased(e, K, t)
    if collect:
        eng.store_batch(acc, b, c)
    return t, elapsed, idx


_STAND_IN = None  # passed for the generators where no draw is made
_NO_PARAMS = np.zeros(1)
_EMPTY = np.zeros(0)
_NO_U = np.zeros((0, 0))


def run_heap_chunk(policy, d, params, E, heap, pos, keys, tnow, elapsed, idx, sig, tau, U,
                   collect, horizon, total, nbatch, by_time, grid, h, every, acc, hist, rebase):
    """Advance every replication through the chunk's pre-drawn arrivals (module docstring).

    ``idx[r]`` counts measured arrivals; in time mode (``by_time``) replication ``r`` stops once
    ``elapsed[r] >= horizon`` and batches follow elapsed time, else arrival counts. Each
    replication is one call of the compiled loop (:func:`heap_steps`), in threads where
    several may run (:func:`recursions.engines._replications.each_replication`).
    """
    nk = sig.shape[1]

    def one(r):
        tnow[r], elapsed[r], idx[r] = heap_steps(
            policy, d, params, E[r], heap[r], pos[r], keys[r], tnow[r], elapsed[r], idx[r],
            sig[r], tau[r], U[r], _STAND_IN, 0, _NO_PARAMS, _STAND_IN, 0, _NO_PARAMS, _STAND_IN,
            0, False, nk, collect, horizon, total, nbatch, by_time, grid, h, every, acc[r],
            hist[r], rebase)

    each_replication(one, E.shape[0])


def run_heap_draws(policy, d, params, e, hp, ps, keys, state, gs, scode, spar, gt, tcode, tpar,
                   gu, m, nk, collect, horizon, total, nbatch, by_time, grid, h, every, acc,
                   hist, rebase):
    """One replication through ``nk`` arrivals drawn inside the loop (see :func:`heap_steps`).

    ``state`` is ``[clock, elapsed, measured arrivals]``, updated. The loop runs without the
    GIL, so replications can run in threads. ``scode`` and ``tcode`` must be the module's
    ``SCODE`` and ``TCODE``: the law codes are compile-time constants, so this runs on the
    copy of this module compiled for the input's laws
    (:func:`recursions.engines._driver_compiler.heap_drivers`). A plain function that calls
    the compiled loop: a compiled wrapper compiled the loop a second time
    (:ref:`bench-first-result`).
    """
    if scode != SCODE or tcode != TCODE:
        raise ValueError("these drivers were compiled for other law codes")
    if POLICY >= 0 and policy != POLICY:
        raise ValueError("these drivers were compiled for another policy")
    if LEAN and grid.size > 0:
        raise ValueError("these drivers keep only what customers find: no profile grid")
    t, el, i = heap_steps(policy, d, params, e, hp, ps, keys, float(state[0]), float(state[1]),
                          int(state[2]), _EMPTY, _EMPTY, _NO_U, gs, scode, spar, gt, tcode,
                          tpar, gu, m, True, nk, collect, horizon, total, nbatch, by_time,
                          grid, h, every, acc, hist, rebase)
    state[0] = t
    state[1] = el
    state[2] = i


@jit
def heap_replay(policy, d, params, e, hp, ps, K, t, sig, tau, U, found, rebase):
    """Arrivals ``sig``, ``tau``, ``U`` one by one in order; ``found[k]`` what each found.

    The replay of a trace (:mod:`recursions.engines._trace_replay`): no statistics, the
    clock ``t`` returned (re-based past ``rebase`` as in :func:`heap_steps`).
    """
    if DRAW:
        raise ValueError("a replay reads its arrivals: run the module's own functions")
    chosen = np.empty(max(d, 1), dtype=np.int64)
    for k in range(sig.size):
        found[k] = heap_join(policy, d, params, e, hp, ps, K, t, sig[k], U[k], chosen)
        t += tau[k]
        if t > rebase:
            t = rebased(e, K, t)
    return t


def policy_of(system) -> tuple[int, int]:
    """(policy code, d) of ``system.heap_policy`` (what the system declares), or (-1, 0)."""
    declared = getattr(system, "heap_policy", None)
    return (-1, 0) if declared is None else (int(declared[0]), int(declared[1]))


def uniforms_for(policy: int, d: int) -> int:
    """Routing uniforms per arrival the heap engine draws (redundancy: the system's row)."""
    return {JSW: 0, JIQ: 1, RANDOM: 1, LEAST_OF_D: d, REDUNDANCY: 1 + 2 * d}[policy]


def init_heap(W: np.ndarray):
    """Heap arrays for absolute empty times ``W`` (one row per replication).

    Returns ``(heap, pos, keys)``: the servers in heap order, each server's position, and the
    empty times in heap order (``keys[r, p] == W[r, heap[r, p]]``), which the 4-ary layout
    keeps beside the heap.
    """
    heap = np.argsort(W, axis=1, kind="stable").astype(np.int64)  # a sorted array is a heap
    pos = np.empty_like(heap)
    rows = np.arange(W.shape[0])[:, None]
    pos[rows, heap] = np.arange(W.shape[1])[None, :]
    keys = np.take_along_axis(W, heap, axis=1)
    return np.ascontiguousarray(heap), np.ascontiguousarray(pos), np.ascontiguousarray(keys)
