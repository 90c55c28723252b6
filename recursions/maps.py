"""Compiled random maps on sorted workload vectors (MATH.md §2-3).

Every map works **in place** on a float64 workload vector ``w`` sorted ascending (for
:class:`~recursions.SplitBound`, two consecutive sorted blocks), given the customer's service
time ``sigma``, the time ``tau`` to the next arrival and a row ``u`` of uniforms in ``[0, 1)``
(routing randomness, drawn outside). Each returns the workload the customer found at the server
it joined (``>= 0``), or ``-1.0`` when the customer was lost.

=====================  ==========================================================  ===========
map                     formula (MATH.md)                                           kernel
=====================  ==========================================================  ===========
JSW (Kiefer-Wolfowitz)  ``G(w) = R[(w + sigma e_1 - tau 1)^+]``                      ``jsw``
J_{p+1}SW               ``G^p(w) = R[(w + sigma e_{1 or p+1} - tau 1)^+]``           ``jpsw``
loss, S servers         ``L(u) = R[(u + sigma 1{u(1)=0} e_1 - tau 1)^+]``            ``loss``
random routing          join rank ``floor(u_0 S)``                                   ``random``
JIQ                     idle server if any, else rank ``floor(u_0 S)``               ``jiq``
LL(d), least of d       least workload among d ranks drawn without replacement       ``least_of_d``
envelope Phi            ``[R(w + sigma e_r) v R(w - w(1)e_1 + sigma e_1) - tau 1]^+`` ``envelope``
split bound             loss block of p servers, overflow to a JSW block of S - p    ``split``
redundancy (c.o.c.)     ``w'_i = min(w_i + xi_i, max(w_i, T))`` on d ranks (§5)       ``redundancy``
=====================  ==========================================================  ===========

``apply_map(kind, params, w, sigma, tau, u)`` dispatches on an integer ``kind``; keeping every
map in this one module keeps numba's on-disk cache consistent.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

JSW = 0
JPSW = 1
LOSS = 2
RANDOM = 3
JIQ = 4
LEAST_OF_D = 5
ENVELOPE = 6
SPLIT = 7
REDUNDANCY = 8

LOST = -1.0


@jit
def add_at_rank(w, lo, hi, r, sigma):
    """Add ``sigma`` to ``w[r]`` and restore the order of ``w[lo:hi]``; return the old ``w[r]``."""
    old = w[r]
    x = old + sigma
    i = r
    while i + 1 < hi and w[i + 1] < x:
        w[i] = w[i + 1]
        i += 1
    w[i] = x
    return old


@jit
def drain(w, tau):
    """Subtract ``tau`` from every coordinate and take the positive part (order is kept)."""
    for i in range(w.size):
        v = w[i] - tau
        w[i] = v if v > 0.0 else 0.0


@jit
def random_rank(u0, s):
    """Uniform rank in ``0 .. s-1`` from one uniform."""
    r = int(u0 * s)
    return r if r < s else s - 1


@jit
def least_of_d_rank(u0, d, s):
    """Smallest of ``d`` ranks drawn without replacement from ``0 .. s-1``, by inversion.

    ``P(min > r) = C(s-r-1, d) / C(s, d)``, built by the product
    ``q_{r+1} = q_r (s - r - d) / (s - r)``; the answer is the least ``r`` with
    ``1 - q_{r+1} > u0``.
    """
    q = 1.0
    for r in range(s):
        q *= (s - r - d) / (s - r)
        if 1.0 - q > u0:
            return r
    return s - d


@jit
def jsw(w, sigma, tau):
    """Kiefer-Wolfowitz map ``G(w) = R[(w + sigma e_1 - tau 1)^+]``, FCFS G/G/S."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


@jit
def jpsw(w, sigma, tau, p):
    """J_{p+1}SW: ``G^p(w) = R[(w + sigma(1{w(1)=0} e_1 + 1{w(1)>0} e_{p+1}) - tau 1)^+]``."""
    r = 0 if w[0] == 0.0 else p
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found


@jit
def loss(w, sigma, tau):
    """Loss system ``L(u) = R[(u + sigma 1{u(1)=0} e_1 - tau 1)^+]``; lost when all busy."""
    found = LOST
    if w[0] == 0.0:
        found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


@jit
def random_routing(w, sigma, tau, u0):
    """Join a uniformly random server (rank ``floor(u0 S)`` of the sorted vector)."""
    found = add_at_rank(w, 0, w.size, random_rank(u0, w.size), sigma)
    drain(w, tau)
    return found


@jit
def jiq(w, sigma, tau, u0):
    """Join-Idle-Queue: an idle server if any, else a uniformly random one."""
    r = 0 if w[0] == 0.0 else random_rank(u0, w.size)
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found


@jit
def least_of_d(w, sigma, tau, u0, d):
    """LL(d): the least workload among ``d`` servers sampled without replacement."""
    found = add_at_rank(w, 0, w.size, least_of_d_rank(u0, d, w.size), sigma)
    drain(w, tau)
    return found


@jit
def envelope(w, sigma, tau, r):
    """Monotone envelope ``Phi(w) = [R(w + sigma e_r) v R(w - w(1) e_1 + sigma e_1) - tau 1]^+``.

    ``r`` is the rank the underlying idle-first system joins when every server is busy
    (``p`` for J_{p+1}SW, a random rank for JIQ), or ``-1`` for a loss system, whose first
    term is then ``w`` itself. Computed in place in one pass: both terms at coordinate ``i``
    read only ``w[i]`` and ``w[i+1]``.
    """
    s = w.size
    found = LOST
    if w[0] == 0.0:
        found = 0.0
    elif r >= 0:
        found = w[r]
    # first term a = R(w + sigma e_r): x lands at index j
    x = 0.0
    j = -1
    if r >= 0:
        x = w[r] + sigma
        j = r
        while j + 1 < s and w[j + 1] < x:
            j += 1
    # second term b = R(sigma, w(2), ..., w(S)): sigma lands at index m
    m = 0
    while m + 1 < s and w[m + 1] < sigma:
        m += 1
    for i in range(s):
        if r < 0 or i < r or i > j:
            a = w[i]
        elif i < j:
            a = w[i + 1]
        else:
            a = x
        if i < m:
            b = w[i + 1]
        elif i == m:
            b = sigma
        else:
            b = w[i]
        v = (a if a > b else b) - tau
        w[i] = v if v > 0.0 else 0.0
    return found


@jit
def split(w, sigma, tau, p):
    """Exogenous-routing bound: ``w[:p]`` a p-server loss system, ``w[p:]`` JSW on S - p.

    An arrival that finds an idle server in the loss block joins it; otherwise it overflows
    to the least loaded server of the JSW block. The loss block evolves independently of the
    JSW block (it is the exogenous routing variable of MATH.md §2), and for a fixed loss
    block the map is monotone in the JSW block.
    """
    s = w.size
    if p > 0 and w[0] == 0.0:
        found = add_at_rank(w, 0, p, 0, sigma)
    else:
        found = add_at_rank(w, p, s, p, sigma)
    drain(w, tau)
    return found


@jit
def floyd_ranks(u, d, s, out):
    """Write ``d`` distinct ranks of ``0 .. s-1`` into ``out[:d]`` by Floyd's algorithm.

    ``u[q]`` is the uniform of step ``q``: candidate ``floor(u[q] (top + 1))`` with
    ``top = s - d + q``, replaced by ``top`` when already chosen. Every ``d``-subset is equally
    likely; the ranks do not depend on the workloads, which keeps the map monotone.
    """
    for q in range(d):
        top = s - d + q
        c = int(u[q] * (top + 1))
        if c > top:
            c = top
        for p in range(q):
            if out[p] == c:
                c = top
                break
        out[q] = c


@jit
def redundancy_class(params, u0):
    """Class index from the class uniform: the first ``j`` with ``u0 < cum_j``."""
    ncls = int(params[1])
    for j in range(ncls - 1):
        if u0 < params[3 + 3 * j + 2]:
            return j
    return ncls - 1


@jit
def redundancy(w, tau, u, params):
    """Cancel-on-completion redundancy (MATH.md §5); returns the response time ``T``.

    ``params = [frame, ncls, dmax, (d_j, k_j, cum_j) for each class]``; the row ``u`` is
    ``[class uniform, dmax routing uniforms, dmax component sizes]``. The ``d`` selected ranks
    get sizes ``u[1 + dmax + q]`` in selection order; ``T`` is the ``k``-th smallest of
    ``w_i + xi_i`` and ``w'_i = min(w_i + xi_i, max(w_i, T))``; workloads above ``frame`` are
    truncated to it, the vector is re-sorted and drained by ``tau``.
    """
    s = w.size
    frame = params[0]
    dmax = int(params[2])
    j = redundancy_class(params, u[0])
    d = int(params[3 + 3 * j])
    k = int(params[3 + 3 * j + 1])
    ranks = np.empty(d, dtype=np.int64)
    floyd_ranks(u[1:1 + d], d, s, ranks)
    done = np.empty(d)
    for q in range(d):
        done[q] = w[ranks[q]] + u[1 + dmax + q]
    t = np.sort(done)[k - 1]
    for q in range(d):
        r = ranks[q]
        x = w[r]
        v = x if x > t else t
        if done[q] < v:
            v = done[q]
        w[r] = v  # v >= x: workloads only grow
    # re-sort: the changed values only grew, so insertion sort moves them right
    for i in range(s - 2, -1, -1):
        x = w[i]
        m = i
        while m + 1 < s and w[m + 1] < x:
            w[m] = w[m + 1]
            m += 1
        w[m] = x
    if frame < np.inf:  # truncation keeps the order
        for i in range(s):
            if w[i] > frame:
                w[i] = frame
    drain(w, tau)
    return t


@jit
def apply_map(kind, params, w, sigma, tau, u):
    """Apply the map ``kind`` with parameters ``params`` in place; see the module table."""
    if kind == JSW:
        return jsw(w, sigma, tau)
    if kind == JPSW:
        return jpsw(w, sigma, tau, int(params[0]))
    if kind == LOSS:
        return loss(w, sigma, tau)
    if kind == RANDOM:
        return random_routing(w, sigma, tau, u[0])
    if kind == JIQ:
        return jiq(w, sigma, tau, u[0])
    if kind == LEAST_OF_D:
        return least_of_d(w, sigma, tau, u[0], int(params[0]))
    if kind == ENVELOPE:
        base = int(params[0])
        if base == JPSW:
            r = int(params[1])
        elif base == JIQ:
            r = random_rank(u[0], w.size)
        else:  # LOSS
            r = -1
        return envelope(w, sigma, tau, r)
    if kind == SPLIT:
        return split(w, sigma, tau, int(params[0]))
    if kind == REDUNDANCY:
        return redundancy(w, tau, u, params)
    return np.nan


@jit
def step_once(kind, params, w, sigma, tau, u):
    """Apply one map to a copy of ``w``; returns ``(new w, found)`` (for ``System.step``)."""
    out = w.copy()
    found = apply_map(kind, params, out, sigma, tau, u)
    return out, found
