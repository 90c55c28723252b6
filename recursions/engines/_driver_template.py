"""The drivers that iterate a map, drawing inside the loop or from pre-drawn blocks: a template.

Statistics are accumulated in the kernel per (replication, batch) so memory stays O(S) per
replication (plus the batch table), unless a path is recorded. For a kernel that is a join
followed by ``drain(w, tau)`` (:data:`recursions.model.maps.DRAIN_LAST`, every built-in map of
that form) the driver runs the join and drains the vector itself. The total workload and
busy servers of the state each customer sees are added up in a pass of their own,
:func:`total_busy` (a plain drain loop is vectorised by the compiler and a fused
drain-and-sum loop is not: :ref:`bench-drivers` in ``docs/benchmarks.md`` has the
measurement): after each step in a drawing loop, as each customer arrives in a block loop,
which then holds one copy of the pass to compile (:ref:`bench-first-result`).
The drawing drivers of a kernel whose join adds at one rank
(:data:`recursions.model.maps.RANKED`) at 2 to
:data:`recursions.engines._driver_compiler.ONE_PASS_SERVERS` servers
are a further copy with ``PASS`` set: they write the joined and drained vector in one
branch-free pass (:func:`insert_drain`) instead of the insertion loop and the drain. The
per-batch sums are written to the batch table when a batch ends, in the same order of
additions as one addition per arrival, so the numbers do not depend on the chunking.

Two ways to get the innovations: :func:`run_draws` draws every customer's service and
interarrival times from the input's own :class:`numpy.random.Generator` objects inside the
loop (the built-in laws, through :func:`recursions.dists.kernel.draw_one`, which gives the very
numbers of ``law.sample`` on the same generator), and the routing uniforms from the routing
generator, as ``gen.random((n, m))`` would row by row; :func:`run_chunk` takes blocks drawn
outside (any law, scipy's included). The two ways run on separate copies of this template:
``DRAW`` (whether the loop draws), the two law codes ``SCODE`` and ``TCODE`` and their
samplers ``DRAW_S`` and ``DRAW_T`` are compile-time constants of each copy, so a drawing loop
holds, and its first compile builds, only its laws' own samplers.

Every driver reaches the map through ``STEP(w, sigma, tau, u, params)``, the signature of
every kernel in :mod:`recursions.model.maps` and of a user's :class:`recursions.Map`; a drain-last
kernel also through its join ``JOIN(w, sigma, u, params)`` (``FUSED``), and a ranked one
through its joined rank ``RANK(w, u, params)`` (``PASS`` in the drawing loop, ``RANKED`` in
:func:`run_checked`, the backward runs). This module is a template:
:func:`recursions.engines._driver_compiler.compiled_drivers` compiles its source once per kernel
with these
bound, and once more per pair of law codes drawn in the loop and whether the one-pass join
is on (and caches each on disk). A user's own step runs the same drivers as a whole step
(``FUSED``, ``PASS`` and ``RANKED`` off); the built-in kernels given to :class:`recursions.Map` get
their own joins. Importing this module directly gives the block drivers of JSW.
"""

from __future__ import annotations

import numba
import numpy as np

from recursions.common._jit import jit  # placeholder: bound to the cached, uncached or no jit
from recursions.dists.kernel import sampler
from recursions.engines._accumulator import (
    ALL_BUSY,
    ARRIVALS,
    BUSY,
    JOINED,
    LOST,
    LOST_WORK,
    SAMPLED,
    SERVED_WORK,
    WAIT_SUM,
    WAITED,
    WORK,
    batch_start,
    level_bin,
    load_batch,
    store_batch,
)
from recursions.engines._replications import each_replication
from recursions.model.maps import jsw as STEP  # placeholder: the kernel
from recursions.model.maps import jsw_join as JOIN  # placeholder: its join
from recursions.model.maps import jsw_joined_rank as RANK  # placeholder: its joined rank

FUSED = True  # placeholder: whether JOIN + the driver's own drain is STEP
PASS = False  # placeholder: whether advance joins by RANK in one branch-free pass
RANKED = True  # placeholder: whether RANK is the kernel's joined rank (run_checked)
ONE_PASS_MAX = 32  # placeholder: ONE_PASS_SERVERS of the driver compiler
DRAW = False  # placeholder: whether these drivers draw inside the loop (run_draws)
SCODE = 0  # placeholder: the service law code run_draws draws
TCODE = 0  # placeholder: the interarrival law code
DRAW_S = sampler(SCODE)  # placeholder: the sampler of SCODE
DRAW_T = sampler(TCODE)  # placeholder: the sampler of TCODE
LEAN = False  # placeholder: whether the loop keeps only what customers find


@jit(inline="always")
def copy_into(dst, src):
    """``dst[:] = src`` for two vectors of one length, as a loop.

    Numba's slice assignment compiles its message for a shape mismatch, string formatting
    and all, into the first compile; a loop has none (:ref:`bench-first-result`).
    """
    for i in range(src.size):
        dst[i] = src[i]


@jit(inline="always")
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


@jit(inline="always")
def drain_into(w, tau):
    """``w <- (w - tau)^+`` in place: a plain loop, which the compiler vectorises."""
    for i in range(w.size):
        v = w[i] - tau
        w[i] = v if v > 0.0 else 0.0


@jit(inline="always")
def insert_drain(a, b, r, x, tau):
    """``b <- (a' - tau)^+``, ``a'`` the sorted ``a`` after ``a[r]`` is replaced by ``x``.

    ``a`` is sorted and ``x >= a[r]``, so ``a'`` is ``a`` with ``a[r+1..c]`` moved down one
    place and ``x`` at ``c`` (``c`` is ``r`` plus the number of ``j > r`` with
    ``a[j] < x``): coordinate ``i >= r`` of ``a'`` is ``a[i+1]`` when that is below ``x``,
    else ``x`` when ``i == r`` or ``a[i] < x``, else ``a[i]``. Written as selects over
    ``a[i]`` and ``a[i+1]`` into another buffer, the pass has no branch whose outcome depends
    on the data (the insertion loop's exit is mispredicted about once per arrival:
    :ref:`bench-drivers`). The values are those of
    :func:`recursions.vectors.add_at_rank` followed by :func:`recursions.vectors.drain`.
    """
    s = a.size
    for i in range(r):  # below the rank: the drain alone (a separate loop: a select on i < r
        v = a[i] - tau  # in the one loop was slower; docs/benchmarks.md, kw_throughput table)
        b[i] = v if v > 0.0 else 0.0
    for i in range(r, s - 1):
        o = a[i]
        nx = a[i + 1]
        v = (nx if nx < x else (x if (i == r) | (o < x) else o)) - tau
        b[i] = v if v > 0.0 else 0.0
    i = s - 1
    o = a[i]
    v = (x if (i == r) | (o < x) else o) - tau
    b[i] = v if v > 0.0 else 0.0


@jit
def advance(params, w, sig, tau, U, gs, scode, spar, gt, tcode, tpar, gu, m, draw, n, collect,
            t0, total, nbatch, grid, h, every, acc, hist, path):
    """One replication ``w`` through ``n`` arrivals; the loop of every forward driver.

    With ``draw`` (which must be the module's constant ``DRAW``: a run-time flag slowed the
    loop, :ref:`bench-drivers`) the service times are ``DRAW_S(spar[0], spar, gs)``, the
    interarrival times ``DRAW_T(tpar[0], tpar, gt)`` (the samplers of the codes ``SCODE``
    and ``TCODE``: :func:`recursions.dists.kernel.sampler`) and the ``m`` routing uniforms
    ``gu.random()`` each, customer after customer (the numbers of ``law.sample(gs, n)``,
    ``law.sample(gt, n)`` and ``gu.random((n, m))``); otherwise they are read from ``sig``,
    ``tau``, ``U``. ``acc``, ``hist`` and ``path`` are this replication's rows (see
    :func:`run_chunk`). The per-arrival statistics are written out here rather than in
    helpers: a call that takes arrays costs reference counting per arrival.
    """
    if draw != DRAW:
        raise ValueError("these drivers were compiled for the other way of drawing")
    if DRAW:
        # a drawing loop always collects, so that every `if collect` below folds away
        # (bench-drivers); its warm-up adds up into scratch tables
        collect = True
    s = w.size
    # the state lives in `cur`, the loop's own (replications side by side in threads step
    # rows of one array, which would share cache lines); the branch-free pass writes the next
    # state into `spare` and the two swap; copied back into w at the end
    cur = np.empty(s)
    copy_into(cur, w)
    spare = np.empty(s) if PASS else cur
    record = path.shape[0] > 0
    found_hist = hist.shape[1] >= 2 * (grid.size + 1)
    off = grid.size + 1
    c = np.empty(acc.shape[1])  # the batch's sums, loaded from acc before any use (collect)
    if DRAW:
        u = np.empty(m)  # the routing uniforms of one customer
    b = (t0 * nbatch) // total if collect else 0
    next_start = batch_start(b + 1, total, nbatch)
    next_sample = t0 + (-t0) % every  # the next t with t % every == 0 (no division per arrival)
    bin0 = -1
    x0 = 0.0
    if collect:
        load_batch(acc, b, c)
    # the next customer's service and interarrival times are drawn a step ahead, so the
    # generators' work overlaps the map's (the same draws, in the same order, n of each)
    next_sigma = 0.0
    next_ta = 0.0
    # the one-pass copies read the laws' first parameters once, before the loop; the others
    # read them at each draw: holding them through the loop slowed the drivers for many servers
    # (docs/benchmarks.md, bench-drivers)
    sp0 = spar[0] if spar.size > 0 else 0.0
    tp0 = tpar[0] if tpar.size > 0 else 0.0
    if DRAW and n > 0:  # the samplers are the laws' own: no other law's code exists here
        next_sigma = DRAW_S(sp0 if PASS else spar[0], spar, gs)
        next_ta = DRAW_T(tp0 if PASS else tpar[0], tpar, gt)
    # the total workload and busy servers of the state each customer sees: a drawing loop adds
    # them up after each step (and here, for the first customer: at the top of the loop it was
    # slower with some samplers), a block loop as each customer arrives (one copy of the pass
    # to compile; bench-first-result)
    tot = 0.0
    busy = 0
    if DRAW and not LEAN:
        tot, busy = total_busy(cur)
    for k in range(n):
        if DRAW:
            sigma = next_sigma
            ta = next_ta
            if k + 1 < n:
                if PASS:
                    next_sigma = DRAW_S(sp0, spar, gs)
                    next_ta = DRAW_T(tp0, tpar, gt)
                else:
                    next_sigma = DRAW_S(spar[0], spar, gs)
                    next_ta = DRAW_T(tpar[0], tpar, gt)
            for j in range(m):
                u[j] = gu.random()
            uk = u
        else:
            sigma = sig[k]
            ta = tau[k]
            uk = U[k]
            if collect:  # (LEAN is only ever set in drawing copies)
                tot, busy = total_busy(cur)
        if collect:
            t = t0 + k
            if t >= next_start:
                store_batch(acc, b, c)
                b += 1
                next_start = batch_start(b + 1, total, nbatch)
                load_batch(acc, b, c)
            if not LEAN:  # the state seen: workload, busy servers, profile snapshots
                c[WORK] += tot
                c[BUSY] += busy
                if busy == s:
                    c[ALL_BUSY] += 1.0
                bin0 = -1  # the level of cur[0] if a snapshot binned it: what JSW finds
                if t == next_sample:
                    next_sample += every
                    c[SAMPLED] += 1.0
                    x0 = cur[0]
                    for i in range(s):  # one inlined level_bin for the whole snapshot
                        xi = cur[i]
                        if xi > 0.0:
                            jb = level_bin(grid, h, xi)
                            hist[b, jb] += 1.0
                            if i == 0:
                                bin0 = jb
            if not DRAW and record:  # simulate records only on blocks (run_draws refuses)
                for i in range(s):
                    path[t, i] = cur[i]
        # the step (the next customer's statistics add up the state it leaves)
        if PASS:  # the rank says whether the customer was lost: `found` is not tested
            r = RANK(cur, uk, params)
            if r < 0:
                found = -1.0  # lost (LOST of recursions.common.codes)
                drain_into(cur, ta)
                if collect:
                    c[ARRIVALS] += 1.0
                    c[LOST] += 1.0
                    c[LOST_WORK] += sigma
            else:
                found = cur[r]
                insert_drain(cur, spare, r, found + sigma, ta)
                cur, spare = spare, cur
                if collect:
                    c[ARRIVALS] += 1.0
                    c[JOINED] += 1.0
                    c[SERVED_WORK] += sigma
                    if found > 0.0:
                        c[WAITED] += 1.0
                        c[WAIT_SUM] += found
                    if not LEAN and found_hist:
                        hist[b, off + level_bin(grid, h, found)] += 1.0
        elif FUSED:
            found = JOIN(cur, sigma, uk, params)
            drain_into(cur, ta)
        else:
            found = STEP(cur, sigma, ta, uk, params)
        if collect and not PASS:
            c[ARRIVALS] += 1.0
            if found < 0.0:
                c[LOST] += 1.0
                c[LOST_WORK] += sigma
            else:
                c[JOINED] += 1.0
                c[SERVED_WORK] += sigma
                if found > 0.0:
                    c[WAITED] += 1.0
                    c[WAIT_SUM] += found
                if not LEAN and found_hist:  # histogram of what was found
                    jf = bin0 if bin0 >= 0 and found == x0 else level_bin(grid, h, found)
                    hist[b, off + jf] += 1.0
        if DRAW and not LEAN:  # the state the next customer sees
            tot, busy = total_busy(cur)
    copy_into(w, cur)
    if collect:
        store_batch(acc, b, c)


_EMPTY = np.zeros(0)


def run_draws(params, w, gs, scode, spar, gt, tcode, tpar, gu, m, n, collect, t0, total,
              nbatch, grid, h, every, acc, hist, path):
    """One replication ``w`` through ``n`` arrivals drawn inside the loop (:func:`advance`).

    ``acc`` and ``hist`` are this replication's rows (shapes ``(nbatch, N_STATS)`` and
    ``(nbatch, G)``), ``path`` must be empty (the drawing loop records nothing: a recorded
    run takes the blocks, :func:`run_chunk`); the rest as in :func:`run_chunk`, except
    that statistics are always collected (``collect`` is taken as true): a warm-up passes
    scratch tables. The run gives the numbers of :func:`run_chunk` on the blocks those
    generators would draw. The loop runs without the GIL, so replications can run in threads.
    A plain function that calls the compiled loop, not a compiled wrapper (which slowed the
    loop when loaded from numba's on-disk cache: :ref:`bench-drivers`).
    """
    if scode != SCODE or tcode != TCODE:
        raise ValueError("these drivers were compiled for other law codes")
    if path.shape[0] > 0:
        raise ValueError("the drawing loop records no path: run the blocks (run_chunk)")
    advance(params, w, _EMPTY, _EMPTY, np.zeros((0, m)), gs, scode, spar, gt, tcode, tpar, gu,
            m, True, n, collect, t0, total, nbatch, grid, h, every, acc, hist, path)


_STAND_IN = None  # passed for the generators where no draw is made
_ONE = np.ones(1)
_NO_PATH = np.zeros((0, 0))


def run_chunk(params, W, sig, tau, U, collect, t0, total, nbatch, grid, h, every, acc, hist,
              path, serial=False):
    """Advance every replication ``r`` (row ``W[r]``) through ``sig.shape[1]`` pre-drawn arrivals.

    When ``collect`` is true, statistics of the state seen by arrival ``t0 + k`` (measured
    index, out of ``total``) are added to batch ``b = (t0 + k) * nbatch // total``: the
    scalar sums in ``acc[r, b]`` and, at every ``every``-th arrival, one count per busy server
    in ``hist[r, b, level_bin(w_i)]`` (the profile is a reversed cumulative sum of ``hist``).
    When ``hist`` has twice ``grid.size + 1`` columns, the second half histograms what each
    customer found (the FCFS wait under JSW, the response time under redundancy).
    The state is written to ``path[r, t0 + k]`` when ``path`` is non-empty. Replications run
    in threads (the loop runs without the GIL) when there are several and more than one
    thread is allowed, unless ``serial``; one replication runs in the calling thread.

    A plain function that calls the compiled loop, :func:`advance`, once per replication: a
    compiled wrapper around it (a ``prange`` over the replications) compiled the loop a second
    time (:ref:`bench-first-result`).
    """
    record = path.shape[0] > 0
    m, n = U.shape[2], sig.shape[1]

    def one(r):
        advance(params, W[r], sig[r], tau[r], U[r], _STAND_IN, 0, _ONE, _STAND_IN, 0, _ONE,
                _STAND_IN, m, False, n, collect, t0, total, nbatch, grid, h, every, acc[r],
                hist[r], path[r] if record else _NO_PATH)

    each_replication(one, W.shape[0], serial)


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


@jit(inline="always")
def meets_checkpoint(w, ck, row, compare, write):
    """At a checkpoint of :func:`run_checked`: whether ``w`` equals the stored ``ck[row]``.

    Compared only when ``compare``; when it does not meet the stored state and ``write``
    is set, ``w`` is stored there. Runs once every ``every`` arrivals, not per arrival.
    """
    s = w.size
    if compare:
        equal = True
        for i in range(s):
            if w[i] != ck[row, i]:
                equal = False
                break
        if equal:
            return True
    if write:
        for i in range(s):
            ck[row, i] = w[i]
    return False


@jit
def run_checked(params, w, sig, tau, U, every, ck, jref, write):
    """Apply the map to ``w`` for a window of arrivals ending at time 0, against a stored path.

    Entry ``k`` of ``sig``, ``tau``, ``U`` is the customer at time ``-(n - k)``, ``n =
    sig.size``. Before the customer at each time ``-j`` with ``j`` a multiple of ``every``:
    when ``j <= jref`` and ``w`` equals the stored state ``ck[j // every]`` exactly, stop and
    return ``j`` (the map is deterministic, so from there the run is the stored run); else,
    with ``write``, store ``w`` there. Returns ``-1`` when the window ran to its end (``w`` is
    then the state at time 0). Backward sequences use it to stop a run where it meets the
    previous horizon's run (:func:`loynes.loynes`). A kernel that joins at one rank
    (``RANKED``) at 2 to ``ONE_PASS_MAX`` servers runs :func:`run_checked_pass` instead.
    """
    if RANKED and 1 < w.size <= ONE_PASS_MAX:
        return run_checked_pass(params, w, sig, tau, U, every, ck, jref, write)
    n = sig.size
    s = w.size
    nxt = n % every  # the next k whose time -(n - k) is a checkpoint
    for k in range(n):
        if k == nxt:
            nxt += every
            if meets_checkpoint(w, ck, (n - k) // every, n - k <= jref, write):
                return n - k
        if FUSED:  # the join, and the drain here (as in advance: no call per arrival)
            JOIN(w, sig[k], U[k], params)
            ta = tau[k]
            for i in range(s):
                v = w[i] - ta
                w[i] = v if v > 0.0 else 0.0
        else:
            STEP(w, sig[k], tau[k], U[k], params)
    return -1


@jit
def run_checked_pass(params, w, sig, tau, U, every, ck, jref, write):
    """:func:`run_checked` for a ranked kernel, joining and draining in one pass.

    The customer joins at ``RANK(w, u, params)`` (``-1``: lost, the vector is only drained)
    through :func:`insert_drain`, the same numbers as the kernel's insertion loop and drain,
    so the backward runs are as fast as the forward ones (the cost of a Loynes sequence is
    in ``docs/benchmarks.md``, ``benchmarks/loynes_cost.py``).
    """
    n = sig.size
    s = w.size
    cur = np.empty(s)
    copy_into(cur, w)
    spare = np.empty(s)
    nxt = n % every  # the next k whose time -(n - k) is a checkpoint
    for k in range(n):
        if k == nxt:
            nxt += every
            if meets_checkpoint(cur, ck, (n - k) // every, n - k <= jref, write):
                copy_into(w, cur)
                return n - k
        r = RANK(cur, U[k], params)
        ta = tau[k]
        if r < 0:
            for i in range(s):
                v = cur[i] - ta
                cur[i] = v if v > 0.0 else 0.0
        else:
            insert_drain(cur, spare, r, cur[r] + sig[k], ta)
            cur, spare = spare, cur
    copy_into(w, cur)
    return -1


@jit
def run_path(params, w, sig, tau, U):
    """Apply the map to ``w`` in place for each arrival; no statistics."""
    for k in range(sig.size):
        STEP(w, sig[k], tau[k], U[k], params)


@jit
def run_found(params, w, sig, tau, U, found, busy, work):
    """Apply the map to ``w`` in place for each arrival; ``found[k]`` what arrival ``k`` found.

    ``-1`` for a lost customer. With ``busy`` and ``work`` as long as ``sig`` (else empty),
    also the state arrival ``k`` saw: its busy servers and its total workload. The replay of a
    trace (:mod:`recursions.engines._trace_replay`) and the phases engine
    (:mod:`recursions.engines._phase_runs`).
    """
    state = busy.size > 0
    for k in range(sig.size):
        if state:
            nb = 0
            tot = 0.0
            for i in range(w.size):
                if w[i] > 0.0:
                    nb += 1
                    tot += w[i]
            busy[k] = nb
            work[k] = tot
        found[k] = STEP(w, sig[k], tau[k], U[k], params)


@jit(parallel=True)
def apply_rows(params, W, sig, tau, U, found):
    """Apply the map once to each row ``W[i]`` in place, with ``sig[i], tau[i], U[i]``.

    ``found[i]`` receives what customer ``i`` found (``-1`` if lost). The rows are independent
    cases (batch checks of monotonicity and dominance), processed in parallel.
    """
    for i in numba.prange(W.shape[0]):
        found[i] = STEP(W[i], sig[i], tau[i], U[i], params)
