"""The compiled kernels of the queue-length engines (:mod:`recursions.engines.zerowait`).

Two exact simulations of queue-length policies (:mod:`recursions.model._queue_policies`), each a
numba kernel that runs until its block of draws runs out, the run is done, the state needs
more queue-length levels, or it reaches the arrival it was asked to pause at, and returns
which (the replications' states in :mod:`recursions.engines._queue_runs` read the code, draw, grow
and call again):

* :func:`counts_kernel`: Gillespie's method on the counts ``Q[j, m]`` of servers with ``j``
  jobs whose job in service is in phase ``m`` (Coxian service; exact for these exchangeable
  policies, cost per event independent of the number of servers);
* :func:`queues_kernel`: per-server FIFO events, any service law, with the servers kept in a
  permutation sorted by queue length and the busy ones in a binary min-heap of event times.

The policy is an integer (:class:`recursions.common.codes.QueueCode`); both kernels route with
``_choose_level``. ``tests/recursions/engines/test_zerowait.py`` checks them against the exact
stationary law
of the counts chain at small ``N`` (solved there by linear algebra), against each other, and
against Erlang B and M/M/1(/b).
"""

from __future__ import annotations

import math

from recursions.common._jit import jit

__all__ = ["counts_kernel", "queues_kernel"]


@jit
def _choose_level(code, C, n, d, lgc, u):
    """Queue length of the server an arrival is routed to (``C[j]``: servers with ``j`` jobs).

    Returns a level in ``[0, len(C) - 1]``; the caller blocks the arrival when it is the buffer.
    Within the level the server is uniform (exchangeability), chosen by the caller.
    """
    top = C.shape[0] - 1
    if code == 0:  # JSQ: least occupied level
        j = 0
        while j < top and C[j] == 0:
            j += 1
        return j
    if code == 3:  # PowerOfD: P(min of d sampled >= j) = C(n_{>=j}, d) / C(n, d) (hypergeometric)
        nge = n
        for j in range(top):
            nxt = nge - C[j]
            if nxt < d:
                return j
            g = math.exp(math.lgamma(nxt + 1.0) - math.lgamma(nxt - d + 1.0) - lgc)
            if u >= g:
                return j
            nge = nxt
        return top
    if C[0] > 0:  # JIQ and I1F: idle first
        return 0
    if code == 2 and top >= 1 and C[1] > 0:  # I1F: then a server with exactly one job
        return 1
    x = u * n  # uniformly random server: its level has probability C[j] / n
    acc = 0.0
    last = 0
    for j in range(top + 1):
        if C[j] > 0:
            acc += C[j]
            last = j
            if x < acc:
                return j
    return last


@jit
def _add_time(acc, bi, dt, busy, jobs, bph):
    acc[bi, 4] += dt
    acc[bi, 5] += busy * dt
    acc[bi, 6] += jobs * dt
    for m in range(bph.shape[0]):
        acc[bi, 7 + m] += bph[m] * dt


@jit
def _accumulate(acc, mode, nb, horizon, t0, batch, a, b, busy, jobs, bph):
    """Add the time integrals of the (constant) state over ``[a, b]`` to the right batches."""
    if b <= a:
        return
    if mode == 0:  # batches by arrivals: the whole interval belongs to the current batch
        _add_time(acc, batch, b - a, busy, jobs, bph)
        return
    bi = int((a - t0) * nb / horizon)
    bi = min(max(bi, 0), nb - 1)
    while True:
        bend = t0 + (bi + 1) * horizon / nb if bi < nb - 1 else b
        seg = min(b, bend)
        if seg > a:
            _add_time(acc, bi, seg - a, busy, jobs, bph)
        if b <= bend or bi >= nb - 1:
            return
        a = seg
        bi += 1


@jit
def _arrival_batch(mode, nb, steps, horizon, t0, k, t):
    if mode == 0:
        return (k * nb) // steps
    return min(max(int((t - t0) * nb / horizon), 0), nb - 1)


@jit
def counts_kernel(code, n, b, d, lgc, lam, mu, p, Q, C, B, ist, fst, E, U, acc, mode, warm,
                  steps, horizon, nb, until):
    """Gillespie simulation of the counts chain until the draws run out, or done, or growth.

    ``Q[j, m]``: servers with ``j >= 1`` jobs whose job in service is in phase ``m``; ``C[j]``:
    servers with ``j`` jobs (``C[0]`` idle); ``B[m] = sum_j Q[j, m]``. ``b = 0`` means infinite
    buffers (the caller grows ``Q`` and ``C`` when the top level is reached). Per event: one
    exponential ``E`` and four uniforms ``U`` (event and, rescaled, phase and level of a
    completion; continuation; routing level; routing phase). Transitions as in
    Liu, Gong and Ying (2022), §4. Arrival number ``until`` (counting from 0, warm-up
    included) is not taken: the kernel pauses there (``ist[7] = 1``, its time already
    reached) and the next call takes it up without drawing its time again.
    """
    nph = mu.shape[0]
    top = C.shape[0] - 1
    off = ist[0]
    nev = E.shape[0]
    t = fst[0]
    while off < nev:
        rate = lam
        for m in range(nph):
            rate += mu[m] * B[m]
        if ist[7] == 1:  # the arrival a pause left, at time t
            te = t
            ist[7] = 0
        else:
            te = t + E[off] / rate
        meas = ist[4] == 1
        if meas and mode == 1 and te > fst[1] + horizon:
            _accumulate(acc, mode, nb, horizon, fst[1], ist[5], t, fst[1] + horizon,
                        n - C[0], ist[3], B)
            fst[0] = fst[1] + horizon
            ist[0] = off
            return 1
        if meas:
            _accumulate(acc, mode, nb, horizon, fst[1], ist[5], t, te, n - C[0], ist[3], B)
        t = te
        x = U[off, 0] * rate
        if x < lam:  # ---- arrival
            if ist[4] == 0 and ist[2] == warm:
                ist[4] = 1
                fst[1] = t
                meas = True
            if ist[2] == until:
                ist[7] = 1
                fst[0] = t
                ist[0] = off
                return 4
            j = _choose_level(code, C, n, d, lgc, U[off, 2])
            blocked = b > 0 and j == b
            if meas:
                k = ist[2] - warm
                bi = _arrival_batch(mode, nb, steps, horizon, fst[1], k, t)
                ist[5] = bi
                acc[bi, 0] += 1.0
                if j >= 1:
                    acc[bi, 1] += 1.0
                if blocked:
                    acc[bi, 2] += 1.0
                if C[0] == 0:
                    acc[bi, 3] += 1.0
            ist[2] += 1
            off += 1
            if not blocked:
                if j == 0:
                    C[0] -= 1
                    C[1] += 1
                    Q[1, 0] += 1
                    B[0] += 1
                else:  # the job in service keeps its phase
                    y = U[off - 1, 3] * C[j]
                    s = 0.0
                    m_sel = -1
                    for m in range(nph):
                        if Q[j, m] > 0:
                            s += Q[j, m]
                            m_sel = m
                            if y < s:
                                break
                    Q[j, m_sel] -= 1
                    Q[j + 1, m_sel] += 1
                    C[j] -= 1
                    C[j + 1] += 1
                ist[3] += 1
                if b == 0 and C[top] > 0:
                    fst[0] = t
                    ist[0] = off
                    return 2
        else:  # ---- a phase completion: phase m w.p. mu_m B_m / sum, level j w.p. Q[j,m]/B_m
            x -= lam
            s = 0.0
            m_sel = -1
            y = 0.0
            for m in range(nph):
                w = mu[m] * B[m]
                if w > 0.0:
                    m_sel = m
                    y = (x - s) / mu[m]
                    s += w
                    if x < s:
                        break
            y = min(y, B[m_sel] - 0.5)
            s = 0.0
            j_sel = -1
            for jj in range(1, top + 1):
                if Q[jj, m_sel] > 0:
                    s += Q[jj, m_sel]
                    j_sel = jj
                    if y < s:
                        break
            Q[j_sel, m_sel] -= 1
            B[m_sel] -= 1
            if U[off, 1] < p[m_sel]:  # next phase
                Q[j_sel, m_sel + 1] += 1
                B[m_sel + 1] += 1
            else:  # departure; the next job (if any) starts in phase 1
                C[j_sel] -= 1
                C[j_sel - 1] += 1
                ist[3] -= 1
                if j_sel >= 2:
                    Q[j_sel - 1, 0] += 1
                    B[0] += 1
            off += 1
    fst[0] = t
    ist[0] = off
    return 0


@jit
def _sift_up(heap, key, k):
    i = heap[k]
    kk = key[i]
    while k > 0:
        parent = (k - 1) // 2
        pi = heap[parent]
        if key[pi] <= kk:
            break
        heap[k] = pi
        k = parent
    heap[k] = i


@jit
def _sift_down(heap, key, k, size):
    i = heap[k]
    kk = key[i]
    while True:
        c = 2 * k + 1
        if c >= size:
            break
        if c + 1 < size and key[heap[c + 1]] < key[heap[c]]:
            c += 1
        if key[heap[c]] >= kk:
            break
        heap[k] = heap[c]
        k = c
    heap[k] = i


@jit
def _move(perm, pos, i, target):
    o = perm[target]
    pi = pos[i]
    perm[target] = i
    pos[i] = target
    perm[pi] = o
    pos[o] = pi


@jit
def queues_kernel(code, n, b, d, lgc, qlen, perm, pos, start, C, heap, key, phase, dur, nphs,
                  bph, ist, fst, tau, UR, D, NP, acc, mode, warm, steps, horizon, nb, until):
    """Per-server FIFO event simulation until a block runs out, or done, or growth.

    Servers sit in ``perm`` sorted by queue length, level ``l`` in ``perm[start[l]:start[l+1]]``
    (``pos`` inverts ``perm``; ``C[l]`` counts level ``l``). Busy servers sit in a binary
    min-heap on ``key`` (end of the current phase of their job in service; a non-phase-type law
    is one phase). Arrival ``k`` uses ``tau[k]`` and two routing uniforms ``UR[k]``; the ``s``-th
    service start uses the phase durations ``D[s, :NP[s]]`` (service times are i.i.d. and
    independent of the routing, so they may be drawn when service starts). Arrival number
    ``until`` (counting from 0, warm-up included) is not taken: the kernel pauses at its time
    and the next call takes it up.
    """
    top = C.shape[0] - 1
    na = tau.shape[0]
    ns = D.shape[0]
    aoff = ist[0]
    soff = ist[1]
    hs = ist[6]
    t = fst[0]
    status = 0
    while True:
        if aoff == na:
            status = 0
            break
        if soff == ns:
            status = 3
            break
        tnext = fst[2]
        is_arrival = True
        te = tnext
        if hs > 0 and key[heap[0]] < tnext:
            is_arrival = False
            te = key[heap[0]]
        meas = ist[4] == 1
        if meas and mode == 1 and te > fst[1] + horizon:
            _accumulate(acc, mode, nb, horizon, fst[1], ist[5], t, fst[1] + horizon,
                        n - C[0], ist[3], bph)
            t = fst[1] + horizon
            status = 1
            break
        if meas:
            _accumulate(acc, mode, nb, horizon, fst[1], ist[5], t, te, n - C[0], ist[3], bph)
        t = te
        if is_arrival:
            if ist[4] == 0 and ist[2] == warm:
                ist[4] = 1
                fst[1] = t
                meas = True
            if ist[2] == until:
                status = 4
                break
            j = _choose_level(code, C, n, d, lgc, UR[aoff, 0])
            blocked = b > 0 and j == b
            if meas:
                k = ist[2] - warm
                bi = _arrival_batch(mode, nb, steps, horizon, fst[1], k, t)
                ist[5] = bi
                acc[bi, 0] += 1.0
                if j >= 1:
                    acc[bi, 1] += 1.0
                if blocked:
                    acc[bi, 2] += 1.0
                if C[0] == 0:
                    acc[bi, 3] += 1.0
            ist[2] += 1
            if not blocked:
                cnt = C[j]
                i = perm[start[j] + min(int(UR[aoff, 1] * cnt), cnt - 1)]
                # one more job at server i: move it to the end of its level, shift the boundary
                _move(perm, pos, i, start[j + 1] - 1)
                start[j + 1] -= 1
                C[j] -= 1
                C[j + 1] += 1
                qlen[i] = j + 1
                ist[3] += 1
                if j == 0:  # starts service at once
                    for m in range(NP[soff]):
                        dur[i, m] = D[soff, m]
                    nphs[i] = NP[soff]
                    soff += 1
                    phase[i] = 0
                    bph[0] += 1
                    key[i] = t + dur[i, 0]
                    heap[hs] = i
                    hs += 1
                    _sift_up(heap, key, hs - 1)
            fst[2] = t + tau[aoff]
            aoff += 1
            if b == 0 and C[top] > 0:
                status = 2
                break
        else:
            i = heap[0]
            ph = phase[i]
            bph[ph] -= 1
            if ph + 1 < nphs[i]:  # next phase of the same job
                phase[i] = ph + 1
                bph[ph + 1] += 1
                key[i] = t + dur[i, ph + 1]
                _sift_down(heap, key, 0, hs)
            else:  # departure: one job fewer at server i, at the start of its level
                j = qlen[i]
                _move(perm, pos, i, start[j])
                start[j] += 1
                C[j] -= 1
                C[j - 1] += 1
                qlen[i] = j - 1
                ist[3] -= 1
                if j >= 2:  # the next job starts service
                    for m in range(NP[soff]):
                        dur[i, m] = D[soff, m]
                    nphs[i] = NP[soff]
                    soff += 1
                    phase[i] = 0
                    bph[0] += 1
                    key[i] = t + dur[i, 0]
                    _sift_down(heap, key, 0, hs)
                else:  # idle: leaves the heap
                    hs -= 1
                    if hs > 0:
                        heap[0] = heap[hs]
                        _sift_down(heap, key, 0, hs)
    fst[0] = t
    ist[0] = aoff
    ist[1] = soff
    ist[6] = hs
    return status
