"""Compiled random maps on sorted workload vectors (:ref:`Theory › The maps <theory-kw-maps>`).

Every map works **in place** on a float64 workload vector ``w`` sorted ascending (for
:class:`~recursions.SplitBound`, two consecutive sorted blocks), given the customer's service
time ``sigma``, the time ``tau`` to the next arrival and a row ``u`` of uniforms in ``[0, 1)``
(routing randomness, drawn outside). Each returns the workload the customer found at the server
it joined (``>= 0``), or ``-1.0`` when the customer was lost.

====================== =============================================================  ==============
map                    formula                                                        kernel
====================== =============================================================  ==============
JSW (Kiefer-Wolfowitz) ``G(w) = R[(w + sigma e_1 - tau 1)^+]``                        ``jsw``
J_{p+1}SW              ``G^p(w) = R[(w + sigma e_{1 or p+1} - tau 1)^+]``             ``jpsw``
loss, S servers        ``L(u) = R[(u + sigma 1{u(1)=0} e_1 - tau 1)^+]``              ``loss``
random routing         join rank ``floor(u_0 S)``                                     ``random``
JIQ                    idle server if any, else rank ``floor(u_0 S)``                 ``jiq``
LL(d), least of d      least workload among d ranks drawn without replacement         ``least_of_d``
envelope Phi           ``[R(w + sigma e_r) v R(w - w(1)e_1 + sigma e_1) - tau 1]^+``  ``envelope``
split bound            loss block of p servers, overflow to a JSW block of S - p      ``split``
redundancy (c.o.c.)    ``w'_i = min(w_i + xi_i, max(w_i, T))`` on d ranks             ``redundancy``
====================== =============================================================  ==============

Every kernel has the signature of a user's map (:class:`recursions.Map`),
``step(w, sigma, tau, u, params) -> found``, so ``rc.Map(rc.maps.jsw, servers=S)`` is the
built-in JSW through the user's door: each system names its kernel (``System.kernel``) and
:mod:`recursions.engines._driver_compiler` compiles the drivers for it.
Two registries tell the drivers more
about the built-ins: :data:`DRAIN_LAST` (the kernels that are a join then ``drain``, with
their join) and :data:`RANKED` (those whose join adds at one rank, with that rank). The
sorted-vector helpers are in :mod:`recursions.vectors`.
"""

from __future__ import annotations

import numpy as np

from recursions.common._jit import inlined, jit
from recursions.common.codes import LOST, EnvelopeBase
from recursions.vectors import (
    add_at_rank,
    drain,
    floyd_ranks,
    kth_smallest,
    least_of_d_rank,
    random_rank,
    resort,
)

_ENV_JPSW, _ENV_JIQ = int(EnvelopeBase.JPSW), int(EnvelopeBase.JIQ)

__all__ = ["LOST", "envelope", "floyd_ranks", "jiq", "jpsw", "jsw", "least_of_d", "loss",
           "random_routing", "redundancy", "redundancy_class", "split"]


@jit(inline="always")
def jsw_join(w, sigma, u, params):
    """The join of :func:`jsw`: ``R(w + sigma e_1)`` (no drain).

    :func:`recursions.vectors.add_at_rank` at rank 0, written out and inlined into its
    callers: the drivers call it once per arrival, and at a few servers a call that takes the
    vector cost a third of the step.
    """
    found = w[0]
    x = found + sigma
    s = w.size
    i = 0
    while i + 1 < s and w[i + 1] < x:
        w[i] = w[i + 1]
        i += 1
    w[i] = x
    return found


@jit
def jsw(w, sigma, tau, u, params):
    """Kiefer-Wolfowitz map ``G(w) = R[(w + sigma e_1 - tau 1)^+]``, FCFS G/G/S."""
    found = jsw_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def jpsw(w, sigma, tau, u, params):
    """J_{p+1}SW: ``G^p(w) = R[(w + sigma(1{w(1)=0} e_1 + 1{w(1)>0} e_{p+1}) - tau 1)^+]``.

    ``params[0] = p``.
    """
    found = jpsw_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def jpsw_join(w, sigma, u, params):
    """The join of :func:`jpsw` (no drain)."""
    r = 0 if w[0] == 0.0 else int(params[0])
    return add_at_rank(w, 0, w.size, r, sigma)


@jit
def loss(w, sigma, tau, u, params):
    """Loss system ``L(u) = R[(u + sigma 1{u(1)=0} e_1 - tau 1)^+]``; lost when all busy."""
    found = loss_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def loss_join(w, sigma, u, params):
    """The join of :func:`loss` (no drain)."""
    if w[0] == 0.0:
        return add_at_rank(w, 0, w.size, 0, sigma)
    return LOST


@jit
def random_routing(w, sigma, tau, u, params):
    """Join a uniformly random server (rank ``floor(u[0] S)`` of the sorted vector)."""
    found = random_routing_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def random_routing_join(w, sigma, u, params):
    """The join of :func:`random_routing` (no drain)."""
    return add_at_rank(w, 0, w.size, random_rank(u[0], w.size), sigma)


@jit
def jiq(w, sigma, tau, u, params):
    """Join-Idle-Queue: an idle server if any, else a uniformly random one (``u[0]``)."""
    found = jiq_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def jiq_join(w, sigma, u, params):
    """The join of :func:`jiq` (no drain)."""
    r = 0 if w[0] == 0.0 else random_rank(u[0], w.size)
    return add_at_rank(w, 0, w.size, r, sigma)


@jit
def least_of_d(w, sigma, tau, u, params):
    """LL(d): the least workload among ``d = params[0]`` servers sampled without replacement."""
    found = least_of_d_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def least_of_d_join(w, sigma, u, params):
    """The join of :func:`least_of_d` (no drain)."""
    return add_at_rank(w, 0, w.size, least_of_d_rank(u[0], int(params[0]), w.size), sigma)


@jit
def envelope_rank(w, sigma, tau, r):
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
def envelope(w, sigma, tau, u, params):
    """The envelope with the user signature: ``params = [base code, p]`` (JpSW, JIQ or loss).

    The rank joined when every server is busy is ``p`` for J_{p+1}SW, the random rank of
    ``u[0]`` for JIQ and none for a loss system.
    """
    base = int(params[0])
    if base == _ENV_JPSW:
        r = int(params[1])
    elif base == _ENV_JIQ:
        r = random_rank(u[0], w.size)
    else:  # LOSS
        r = -1
    return envelope_rank(w, sigma, tau, r)


@jit
def split(w, sigma, tau, u, params):
    """Exogenous-routing bound: ``w[:p]`` a p-server loss system, ``w[p:]`` JSW on S - p.

    ``params[0] = p``.

    An arrival that finds an idle server in the loss block joins it; otherwise it overflows
    to the least loaded server of the JSW block. The loss block evolves independently of the
    JSW block (the exogenous routing variable of :ref:`theory-kw-split`), and for a fixed loss
    block the map is monotone in the JSW block.
    """
    found = split_join(w, sigma, u, params)
    drain(w, tau)
    return found


@jit
def split_join(w, sigma, u, params):
    """The join of :func:`split` (no drain)."""
    p = int(params[0])
    if p > 0 and w[0] == 0.0:
        return add_at_rank(w, 0, p, 0, sigma)
    return add_at_rank(w, p, w.size, p, sigma)


# redundancy's helpers inlined into it: one function to compile (bench-first-result)
_floyd_ranks, _kth_smallest, _resort, _drain = (inlined(f) for f in (floyd_ranks, kth_smallest,
                                                                     resort, drain))


@jit(inline="always")
def redundancy_class(params, u0):
    """Class index from the class uniform: the first ``j`` with ``u0 < cum_j``."""
    ncls = int(params[1])
    for j in range(ncls - 1):
        if u0 < params[3 + 3 * j + 2]:
            return j
    return ncls - 1


@jit
def redundancy(w, sigma, tau, u, params):
    """Cancel-on-completion redundancy (:ref:`theory-redundancy-map`); returns the time ``T``.

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
    _floyd_ranks(u[1:1 + d], d, s, ranks)
    done = np.empty(d)
    for q in range(d):
        done[q] = w[ranks[q]] + u[1 + dmax + q]
    t = _kth_smallest(done, d, k, np.empty(d))
    for q in range(d):
        r = ranks[q]
        x = w[r]
        v = x if x > t else t
        if done[q] < v:
            v = done[q]
        w[r] = v  # v >= x: workloads only grow
    _resort(w, 0, s)  # the changed values only grew, so insertion sort moves them right
    if frame < np.inf:  # truncation keeps the order
        for i in range(s):
            if w[i] > frame:
                w[i] = frame
    _drain(w, tau)
    return t


DRAIN_LAST = {
    jsw: jsw_join,
    jpsw: jpsw_join,
    loss: loss_join,
    random_routing: random_routing_join,
    jiq: jiq_join,
    least_of_d: least_of_d_join,
    split: split_join,
}
"""Kernels that are a join followed by ``drain(w, tau)``, with their join ``(w, sigma, u, params)``.

For these the drivers run the join and do the drain themselves
(:mod:`recursions.engines._driver_template`); ``kernel(w, sigma, tau, u, params)`` is
``join`` then ``drain`` exactly, so the numbers are those of the kernel.
"""


@jit(inline="always")
def jsw_joined_rank(w, u, params):
    """The rank :func:`jsw` adds the customer to: the least workload, 0."""
    return 0


@jit(inline="always")
def jpsw_joined_rank(w, u, params):
    """The rank :func:`jpsw` adds the customer to: 0 if a server is idle, else ``p``."""
    return 0 if w[0] == 0.0 else int(params[0])


@jit(inline="always")
def loss_joined_rank(w, u, params):
    """The rank :func:`loss` adds the customer to: 0 if a server is idle, else -1 (lost)."""
    return 0 if w[0] == 0.0 else -1


@jit(inline="always")
def random_routing_joined_rank(w, u, params):
    """The rank :func:`random_routing` adds the customer to: ``floor(u[0] S)``."""
    return random_rank(u[0], w.size)


@jit(inline="always")
def jiq_joined_rank(w, u, params):
    """The rank :func:`jiq` adds the customer to: 0 if a server is idle, else random."""
    return 0 if w[0] == 0.0 else random_rank(u[0], w.size)


@jit(inline="always")
def least_of_d_joined_rank(w, u, params):
    """The rank :func:`least_of_d` adds the customer to: the least of ``d`` drawn ranks."""
    return least_of_d_rank(u[0], int(params[0]), w.size)


RANKED = {
    jsw: jsw_joined_rank,
    jpsw: jpsw_joined_rank,
    loss: loss_joined_rank,
    random_routing: random_routing_joined_rank,
    jiq: jiq_joined_rank,
    least_of_d: least_of_d_joined_rank,
}
"""Drain-last kernels whose join adds ``sigma`` at one rank of the whole sorted vector.

``rank(w, u, params)`` is that rank (``-1`` for a lost customer), so the join is
``add_at_rank(w, 0, S, rank, sigma)``. For these, the drivers that draw inside the loop and
the backward runs (``run_checked``), at 2 to
:data:`recursions.engines._driver_compiler.ONE_PASS_SERVERS`
servers, write the joined and drained vector in one branch-free pass into a second buffer
(:func:`recursions.engines._driver_template.insert_drain`):
the same numbers as the join's insertion loop
followed by the drain, without the loop's unpredictable exit.
"""
