"""Queue-length load balancing with finite buffers: zero-waiting policies.

The theory (Liu, Gong and Ying 2022): :ref:`Theory › Zero waiting <theory-zero-wait>`.

``N`` FIFO servers, each holding at most ``b`` jobs (one in service, ``b - 1`` waiting; an arrival
routed to a full server is blocked and lost), Poisson arrivals of rate ``lambda N``. The policies
see only queue lengths:

=========================  ==================================================================
policy                      an arrival joins
=========================  ==================================================================
:class:`JSQ`                a server with the fewest jobs (ties uniformly)
:class:`recursions.JIQ`     an idle server if any, else a uniformly random server
:class:`I1F`                an idle server if any, else one with exactly one job if any, else
                            a uniformly random server (Gupta & Walton 2019)
:class:`PowerOfD`           the shortest of ``d`` servers sampled without replacement (ties
                            uniformly)
=========================  ==================================================================

:func:`simulate_queues` runs them with one of two exact engines:

* ``"queues"`` -- a per-server event simulation valid for *any* service law: a binary min-heap
  of the busy servers' next event times, and servers kept in a permutation sorted by queue length
  (one contiguous bucket per length, O(1) moves), so a uniform server of a given length is found
  in O(1) and the policies cost O(1) (JSQ, JIQ, I1F) or O(levels) (PowerOfD) per arrival;
* ``"counts"`` -- for Coxian service, Gillespie's method on the aggregated chain of counts
  ``Q[j, m]`` (servers with ``j`` jobs whose job in service is in phase ``m``; ``Q[0]`` idle),
  which is exact for these exchangeable policies and costs O(M + b) per event whatever ``N``
  (the paper's simulation method, :ref:`theory-zero-wait-counts`).

With :func:`sub_halfin_whitt_rate` (``lambda = 1 - N^{-alpha}``) this reproduces the paper's
zero-waiting experiments. All randomness is drawn outside the kernels in blocks.
"""

from __future__ import annotations

import math
import numbers
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np

from ._jit import jit
from ._memory import require_memory
from ._rng import as_seed_sequence, forward_generator
from ._validate import MAX_COUNT, check_count
from .codes import QueueCode
from .diagnostics import batch_check
from .dists import Coxian, Law
from .engines import register, unhonoured
from .estimate import Estimate, ratio_estimate
from .inputs import Input, check_input, is_poisson
from .output_analysis import clt_failures, merge_batches
from .plan import default_batches
from .result import SimulationResult, warn_fixed_budget
from .systems import JIQ

__all__ = [
    "I1F",
    "JSQ",
    "PowerOfD",
    "QueueLengthEngine",
    "QueuePolicy",
    "simulate_queues",
    "sub_halfin_whitt_rate",
]

# policy codes understood by the kernels
_JSQ, _JIQ, _I1F, _POD = (int(c) for c in QueueCode)
# measurement modes
_STEPS, _TIME = 0, 1
# kernel return codes
_NEED_DRAWS, _DONE, _GROW = 0, 1, 2
_NEED_ARRIVALS, _NEED_SERVICES = 0, 3
# columns of the per-batch accumulator; phase time integrals follow from column _PH0 on
_ARR, _WAITED, _BLOCKED, _ALLBUSY, _TIME_C, _BUSY_T, _JOBS_T, _PH0 = range(8)
# integer / float state slots shared by both kernels
_I_OFF, _I_SOFF, _I_NARR, _I_JOBS, _I_MEAS, _I_BATCH, _I_HSIZE = range(7)
_F_T, _F_T0, _F_TNEXT = range(3)

_CHUNK_EVENTS = 1 << 16
_CHUNK_ARRIVALS = 1 << 14


def _check_int(value: Any, name: str, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        allowed = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be an integer {allowed}, got {v}")
    return v


def _check_buffer(value: Any) -> int | None:
    return None if value is None else _check_int(value, "buffer", 1)


# ------------------------------------------------------------------------------------------
# systems
# ------------------------------------------------------------------------------------------
class QueuePolicy:
    """Base class of the queue-length policies simulated by :func:`simulate_queues`.

    Subclasses are frozen dataclasses with fields ``servers`` and ``buffer`` (``None``: infinite
    buffers; else each server holds at most ``buffer`` jobs).
    """

    servers: int
    buffer: int | None
    _code: int = -1
    engines: ClassVar[tuple[str, ...]] = ("queues", "counts")
    """The engines that run it (:mod:`recursions.engines`), as every system declares them."""
    heap_policy: ClassVar[None] = None
    """No large-n event engine on workloads: queue lengths are what it keeps."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", _check_int(self.servers, "servers", 1))
        object.__setattr__(self, "buffer", _check_buffer(self.buffer))

    def check_input(self, input: Any) -> None:
        """Refuse an input the queue-length engines cannot run: they need Poisson arrivals.

        Parameters
        ----------
        input : recursions.Input
            The input.

        Raises
        ------
        TypeError
            If ``input`` is not a :class:`~recursions.Input`.
        ValueError
            If it carries arrivals only, or its arrivals are not Poisson.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JSQ(2).check_input(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
        """
        check_input(input)
        why = _input_refusal(self, input)
        if why is not None:
            raise ValueError(why)

    def relaxation(self, input: Any) -> float | None:
        """``None``: no heavy-traffic relaxation time is claimed for a queue-length policy.

        :meth:`recursions.System.relaxation` gives it for FCFS G/G/S, whose total workload
        is near a reflected Brownian motion in heavy traffic; these policies are left to the
        test of their batch means.
        """
        return None

    @property
    def _d(self) -> int:
        return 1


@dataclass(frozen=True)
class JSQ(QueuePolicy):
    """Join the Shortest Queue: a server with the fewest jobs, ties broken uniformly.

    An arrival is blocked only when every server holds ``buffer`` jobs.

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 1``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server (jobs in service and waiting). ``None``
        (default): infinite.

    Examples
    --------
    >>> import recursions.zerowait as zw
    >>> zw.JSQ(100, buffer=10)
    JSQ(servers=100, buffer=10)
    """

    servers: int
    buffer: int | None = None
    _code = _JSQ


@dataclass(frozen=True)
class I1F(QueuePolicy):
    """Idle-One-First (Gupta & Walton 2019).

    An idle server if any, else a server with exactly one job if any, else a uniformly random
    server (blocked if that one is full).

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 1``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server; ``None`` (default): infinite.

    Examples
    --------
    >>> import recursions.zerowait as zw
    >>> zw.I1F(10, buffer=1).buffer
    1
    """

    servers: int
    buffer: int | None = None
    _code = _I1F


@dataclass(frozen=True)
class PowerOfD(QueuePolicy):
    """Power-of-d: sample ``d`` distinct servers uniformly, join the shortest (ties uniformly).

    Blocked when all ``d`` sampled servers are full. ``PowerOfD(N, N)`` is :class:`JSQ`; the
    paper's LB-zero member takes ``d`` of order ``N^alpha log N``.

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 1``.
    d : int
        Sampled servers, ``1 <= d <= N``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server; ``None`` (default): infinite.

    Examples
    --------
    >>> import recursions.zerowait as zw
    >>> zw.PowerOfD(50, 2, buffer=5)
    PowerOfD(servers=50, d=2, buffer=5)
    """

    servers: int
    d: int
    buffer: int | None = None
    _code = _POD

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "d", _check_int(self.d, "d", 1, self.servers))

    @property
    def _d(self) -> int:
        return self.d


def sub_halfin_whitt_rate(servers: int, alpha: float) -> float:
    """Per-server load ``lambda = 1 - N^{-alpha}`` of the sub-Halfin-Whitt regime.

    See :ref:`Theory › Zero waiting, the regime <theory-zero-wait-regime>`.

    The paper's theorems need ``0 < alpha < 0.5``; its simulations also use ``alpha = 0.5``.
    Any ``alpha`` in ``(0, 1)`` is accepted. The total arrival rate is ``N * lambda``:
    ``rc.Poisson(N * lam, service)``.

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 2`` (``N = 1`` would give ``lambda = 0``).
    alpha : float
        Exponent in ``(0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(sub_halfin_whitt_rate(100, 0.5), 6)
    0.9
    """
    n = _check_int(servers, "servers", 2)
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}") from None
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return 1.0 - n ** (-a)


# ------------------------------------------------------------------------------------------
# kernels
# ------------------------------------------------------------------------------------------
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
def _counts_kernel(code, n, b, d, lgc, lam, mu, p, Q, C, B, ist, fst, E, U, acc, mode, warm,
                   steps, horizon, nb):
    """Gillespie simulation of the counts chain until the draws run out, or done, or growth.

    ``Q[j, m]``: servers with ``j >= 1`` jobs whose job in service is in phase ``m``; ``C[j]``:
    servers with ``j`` jobs (``C[0]`` idle); ``B[m] = sum_j Q[j, m]``. ``b = 0`` means infinite
    buffers (the caller grows ``Q`` and ``C`` when the top level is reached). Per event: one
    exponential ``E`` and four uniforms ``U`` (event and, rescaled, phase and level of a
    completion; continuation; routing level; routing phase). Transitions as in
    Liu, Gong and Ying (2022), §4.
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
            j = _choose_level(code, C, n, d, lgc, U[off, 2])
            blocked = b > 0 and j == b
            if meas:
                k = ist[2] - warm
                if mode == 0 and k == steps:
                    fst[0] = t
                    ist[0] = off
                    return 1
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
def _queues_kernel(code, n, b, d, lgc, qlen, perm, pos, start, C, heap, key, phase, dur, nphs,
                   bph, ist, fst, tau, UR, D, NP, acc, mode, warm, steps, horizon, nb):
    """Per-server FIFO event simulation until a block runs out, or done, or growth.

    Servers sit in ``perm`` sorted by queue length, level ``l`` in ``perm[start[l]:start[l+1]]``
    (``pos`` inverts ``perm``; ``C[l]`` counts level ``l``). Busy servers sit in a binary
    min-heap on ``key`` (end of the current phase of their job in service; a non-phase-type law
    is one phase). Arrival ``k`` uses ``tau[k]`` and two routing uniforms ``UR[k]``; the ``s``-th
    service start uses the phase durations ``D[s, :NP[s]]`` (service times are i.i.d. and
    independent of the routing, so they may be drawn when service starts).
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
            if meas and mode == 0 and ist[2] - warm == steps:
                status = 1
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


# ------------------------------------------------------------------------------------------
# drivers
# ------------------------------------------------------------------------------------------
def _as_coxian(law: Law) -> Coxian | None:
    """The Coxian form of a phase-type service law (:meth:`Law.coxian`), or ``None``."""
    return law.coxian()


@dataclass(frozen=True)
class _Plan:
    code: int
    n: int
    b: int  # 0: infinite
    d: int
    lgc: float
    lam: float
    law: Law
    cox: Coxian | None
    mode: int
    warm: int
    steps: int
    horizon: float
    nb: int
    merge: int = 1  # batches merged into each batch of the estimates (default batches)
    default: bool = False  # whether nb is the default (untrusted intervals then warn)


def _phase_draws(plan: _Plan, gen: np.random.Generator, size: int):
    """Service draws for ``size`` service starts: phase durations and phase counts."""
    cox = plan.cox
    if cox is None:
        dur = plan.law.sample(gen, size).reshape(size, 1)
        return np.ascontiguousarray(dur), np.ones(size, dtype=np.int64)
    rates = np.asarray(cox.rates)
    m = rates.size
    dur = gen.standard_exponential((size, m)) / rates
    if m == 1:
        return dur, np.ones(size, dtype=np.int64)
    go = gen.random((size, m - 1)) < np.asarray(cox.probs)
    nph = 1 + np.cumprod(go, axis=1).sum(axis=1)
    return dur, nph.astype(np.int64)


def _run_counts(plan: _Plan, seed: np.random.SeedSequence):
    cox = plan.cox
    assert cox is not None
    mu = np.asarray(cox.rates, dtype=np.float64)
    m = mu.size
    p = np.zeros(m)
    p[: m - 1] = cox.probs
    top = plan.b if plan.b > 0 else 8
    Q = np.zeros((top + 1, m), dtype=np.int64)
    C = np.zeros(top + 1, dtype=np.int64)
    C[0] = plan.n
    B = np.zeros(m, dtype=np.int64)
    ist = np.zeros(7, dtype=np.int64)
    fst = np.zeros(3)
    acc = np.zeros((plan.nb, _PH0 + m))
    gen = forward_generator(seed, 0)
    while True:
        E = gen.standard_exponential(_CHUNK_EVENTS)
        U = gen.random((_CHUNK_EVENTS, 4))
        ist[_I_OFF] = 0
        while True:
            status = _counts_kernel(plan.code, plan.n, plan.b, plan.d, plan.lgc, plan.lam, mu,
                                    p, Q, C, B, ist, fst, E, U, acc, plan.mode, plan.warm,
                                    plan.steps, plan.horizon, plan.nb)
            if status != _GROW:
                break
            top = 2 * top
            Q2 = np.zeros((top + 1, m), dtype=np.int64)
            Q2[: Q.shape[0]] = Q
            C2 = np.zeros(top + 1, dtype=np.int64)
            C2[: C.size] = C
            Q, C = Q2, C2
        if status == _DONE:
            break
    measured = int(ist[_I_NARR]) - plan.warm
    return acc, np.repeat(np.arange(C.size), C), measured


def _run_queues(plan: _Plan, seed: np.random.SeedSequence):
    n = plan.n
    m = len(plan.cox.rates) if plan.cox is not None else 1
    top = plan.b if plan.b > 0 else 8
    qlen = np.zeros(n, dtype=np.int64)
    perm = np.arange(n, dtype=np.int64)
    pos = np.arange(n, dtype=np.int64)
    start = np.full(top + 2, n, dtype=np.int64)
    start[0] = 0
    C = np.zeros(top + 1, dtype=np.int64)
    C[0] = n
    heap = np.zeros(n, dtype=np.int64)
    key = np.full(n, np.inf)
    phase = np.zeros(n, dtype=np.int64)
    dur = np.zeros((n, m))
    nphs = np.ones(n, dtype=np.int64)
    bph = np.zeros(m, dtype=np.int64)
    ist = np.zeros(7, dtype=np.int64)
    fst = np.zeros(3)  # the first arrival is at time 0
    acc = np.zeros((plan.nb, _PH0 + m))
    ga = forward_generator(seed, 0)
    gs = forward_generator(seed, 1)

    def arrivals():
        return ga.standard_exponential(_CHUNK_ARRIVALS) / plan.lam, ga.random((_CHUNK_ARRIVALS, 2))

    tau, UR = arrivals()
    D, NP = _phase_draws(plan, gs, _CHUNK_ARRIVALS)
    while True:
        status = _queues_kernel(plan.code, n, plan.b, plan.d, plan.lgc, qlen, perm, pos, start,
                                C, heap, key, phase, dur, nphs, bph, ist, fst, tau, UR, D, NP,
                                acc, plan.mode, plan.warm, plan.steps, plan.horizon, plan.nb)
        if status == _DONE:
            break
        if status == _NEED_ARRIVALS:
            tau, UR = arrivals()
            ist[_I_OFF] = 0
        elif status == _NEED_SERVICES:
            D, NP = _phase_draws(plan, gs, _CHUNK_ARRIVALS)
            ist[_I_SOFF] = 0
        else:  # _GROW: more queue-length levels
            top = 2 * top
            start2 = np.full(top + 2, n, dtype=np.int64)
            start2[: C.size] = start[: C.size]
            C2 = np.zeros(top + 1, dtype=np.int64)
            C2[: C.size] = C
            start, C = start2, C2
    measured = int(ist[_I_NARR]) - plan.warm
    return acc, np.sort(qlen), measured


def _input_refusal(system: Any, input: Input) -> str | None:
    """Why the queue-length engines cannot run ``input`` (arrivals only, not Poisson), or None."""
    if input.arrivals_only:
        return (f"{system!r} serves each job for its service time, but {input!r} carries "
                "arrivals only (its service times are placeholders): give an input with a "
                "service law, e.g. rc.Poisson(rate, service)")
    if not is_poisson(input):
        return ("input must be Poisson (rc.Poisson, or a Renewal with exponential interarrival "
                f"times), got {input!r}")
    return None


def _policy(system: Any) -> tuple[int, int, int, int]:
    """``(code, servers, buffer or 0, d)`` of a supported system, else ``TypeError``."""
    if isinstance(system, QueuePolicy):
        return system._code, system.servers, system.buffer or 0, system._d
    if isinstance(system, JIQ):
        return _JIQ, system.servers, system.buffer or 0, 1
    raise TypeError(
        "system must be JSQ, I1F, PowerOfD (recursions.zerowait) or recursions.JIQ, "
        f"got {type(system).__name__}"
    )


def simulate_queues(
    system: QueuePolicy | JIQ,
    input: Input,
    steps: int | None = None,
    *,
    time: float | None = None,
    warmup: int = 0,
    replications: int = 1,
    rng: Any = None,
    engine: str = "auto",
    batches: int | None = None,
) -> SimulationResult:
    """Simulate a queue-length policy with FIFO servers and (optionally) finite buffers.

    Every replication starts empty, discards ``warmup`` arrivals, then measures either ``steps``
    arrivals or ``time`` units of time, split into ``batches`` batches (by arrivals or by time);
    standard errors are batch means over all batches of all replications. Replications have
    their own streams (``SeedSequence(rng).spawn``) and run in parallel threads; the numbers do
    not depend on the thread count.

    Parameters
    ----------
    system : JSQ, I1F, PowerOfD or recursions.JIQ
        The policy (``JIQ.buffer`` may be ``None``: infinite buffers).
    input : recursions.Poisson
        Poisson arrivals (any :class:`recursions.Renewal` with exponential interarrival times)
        of total rate ``N lambda``, with the service law.
    steps : int, optional
        Measured arrivals per replication (``> 0``). Exactly one of ``steps`` and ``time``.
    time : float, optional
        Measured time per replication (``> 0``).
    warmup : int, default 0
        Arrivals discarded before measuring.
    replications : int, default 1
        Independent replications.
    rng : int, numpy.random.Generator, SeedSequence or None
        Seed.
    engine : {"auto", "queues", "counts"}
        ``"queues"``: per-server events, any service law. ``"counts"``: the aggregated chain
        on counts ``Q[j, m]`` (Coxian, exponential or Erlang service only; cost per event
        independent of ``N``). ``"auto"``: counts for those laws, else queues.
    batches : int, optional
        Batches per replication. Default: 256 for one replication, 128 for two, 64 for three
        or four, 32 from five on (at most ``steps``; :func:`recursions.plan.default_batches`),
        merged into 32 for the estimates and standard errors, which are then exactly those
        of ``batches=32`` (up to the rounding of sums of times); the intervals
        (:meth:`~recursions.SimulationResult.interval`) use them all.

    Returns
    -------
    SimulationResult
        ``p_wait`` (arrivals that join a busy server or are blocked), ``p_block`` (``None``
        with infinite buffers), ``p_all_busy`` (arrivals that find no idle server),
        ``busy_fraction`` (time average of ``S_1``), ``mean_jobs`` (time average of
        ``sum_i S_i``, jobs per server), ``phase_busy`` (time average of ``S_{1,m}`` for
        phase-type service, arrays over phases), ``mean_wait`` (by Little's law: mean number
        waiting over the accepted arrival rate), ``engine``; ``final_state`` holds the sorted
        queue lengths of each replication at the end; with ``time``, ``steps`` is the mean
        number of measured arrivals. Workload fields are ``None`` and ``grid`` is empty.

    Raises
    ------
    TypeError
        For a system, input or argument of the wrong type.
    ValueError
        For a non-Poisson input, both or neither of ``steps``/``time``, a bad ``engine``, the
        counts engine with a non-phase-type law, or infinite buffers at load ``>= 1``.

    Warns
    -----
    recursions.SimulationWarning
        When the batch means of the number of jobs trend across the run or are strongly
        correlated (:func:`recursions.diagnostics.batch_check`, kept as
        ``result.batch_check``): the run is too short or needs more warm-up. With the default
        batches, also when the interval of ``p_wait`` or ``mean_wait`` cannot be trusted (0
        effective batches: :attr:`~recursions.SimulationResult.effective_batches`).

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.zerowait import JSQ, simulate_queues
    >>> law = rc.dists.Coxian.normalised([1.0, 1.0], [0.5])
    >>> res = simulate_queues(JSQ(10, buffer=2), rc.Poisson(8.0, law), steps=20_000, rng=1)
    >>> res.engine, 0.0 < res.p_wait.value < 0.5, round(float(res.phase_busy.value.sum()), 1)
    ('counts', True, 0.8)
    """
    _policy(system)  # refuses what is not a queue-length policy
    check_input(input)
    why = _input_refusal(system, input)
    if why is not None:
        raise ValueError(why)
    if (steps is None) == (time is None):
        raise ValueError("give exactly one of steps (measured arrivals) and time (measured time)")
    if steps is not None:
        mode, steps_i, horizon = _STEPS, check_count(steps, "steps"), 0.0
    else:
        try:
            horizon = float(time)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise TypeError(f"time must be a real number, got {type(time).__name__}") from None
        if not math.isfinite(horizon) or horizon <= 0:
            raise ValueError(f"time must be a finite number > 0, got {time!r}")
        mode, steps_i = _TIME, 0
    warm = check_count(warmup, "warmup", 0)
    nrep = _check_int(replications, "replications", 1)
    if batches is None:
        nb, merge = default_batches(steps_i if mode == _STEPS else None, nrep)
    else:
        nb, merge = _check_int(batches, "batches", 1), 1
    if mode == _STEPS and nb > steps_i:
        raise ValueError(f"batches must be <= steps, got batches={nb}, steps={steps_i}")
    if not isinstance(engine, str) or engine not in ("auto", "queues", "counts"):
        raise ValueError(f"engine must be 'auto', 'queues' or 'counts', got {engine!r}")
    return _run(system, input, engine, mode, steps_i, horizon, warm, nrep, nb, merge,
                batches is None, rng)


def _run(system: Any, input: Input, engine: str, mode: int, steps_i: int, horizon: float,
         warm: int, nrep: int, nb: int, merge: int, default: bool,
         rng: Any) -> SimulationResult:
    """Run validated arguments (:func:`simulate_queues`'s, or a :class:`RunPlan`'s).

    What only the queue-length engines check is checked here: the service law of
    ``engine="counts"``, the horizon's count of arrivals, memory, and a load below the
    servers with infinite buffers.
    """
    code, n, b, d = _policy(system)
    law = cast(Any, input).service  # a Poisson input (checked above) has a service law
    cox = _as_coxian(law)
    if engine == "auto":
        engine = "counts" if cox is not None else "queues"
    if engine == "counts" and cox is None:
        raise ValueError(
            "engine='counts' needs Coxian, Exponential or Erlang service (the chain tracks "
            f"phases); got {law!r}: use engine='queues'"
        )
    lam = float(cast(Any, input).arrival_rate)
    if mode == _TIME and horizon * lam > MAX_COUNT:
        raise ValueError(f"time must be at most 2**53 mean interarrival times "
                         f"({MAX_COUNT / lam:g}), got {horizon!r}: no run can count that many "
                         "arrivals")
    require_memory(8.0 * nrep * (64.0 * nb + 4.0 * n * (b + 2)),
                   f"simulating {type(system).__name__} with {n} servers, buffer {b}, "
                   f"replications={nrep} and batches={nb}", "use fewer of them")
    if b == 0 and lam * float(law.mean) >= n:
        raise ValueError(
            f"with infinite buffers the offered load must be < servers = {n}, got "
            f"{lam * float(law.mean):.6g}: give a buffer"
        )
    lgc = math.lgamma(n + 1.0) - math.lgamma(n - d + 1.0)
    plan = _Plan(code, n, b, d, lgc, lam, law, cox, mode, warm, steps_i, horizon, nb, merge,
                 default)
    seeds = as_seed_sequence(rng).spawn(nrep)
    run = _run_counts if engine == "counts" else _run_queues
    workers = max(1, min(nrep, os.cpu_count() or 1))
    if workers == 1:
        outs = [run(plan, sd) for sd in seeds]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outs = list(pool.map(lambda sd: run(plan, sd), seeds))
    return _queue_result(system, input, plan, engine, outs)


def _queue_result(system: Any, input: Input, plan: _Plan, engine: str,
                  outs: list[Any]) -> SimulationResult:
    """The result of the replications' ``(acc, sorted queue lengths, measured arrivals)``."""
    fine = np.stack([o[0] for o in outs])  # (replications, batches, columns)
    acc = merge_batches(fine, plan.merge)  # the estimates' batches (the intervals use fine)
    final = np.stack([o[1] for o in outs]).astype(np.int64)
    measured = [o[2] for o in outs]
    check = batch_check(acc[..., _JOBS_T], acc[..., _TIME_C], quantity="number of jobs")

    arr = acc[..., _ARR]
    span = acc[..., _TIME_C] * plan.n
    b, cox = plan.b, plan.cox

    def per_server(col: np.ndarray) -> Estimate:
        return ratio_estimate(col, span)

    phase_busy = None
    if cox is not None:
        ests = [per_server(acc[..., _PH0 + k]) for k in range(len(cox.rates))]
        phase_busy = Estimate(np.array([e.value for e in ests]), np.array([e.se for e in ests]))
    waiting = acc[..., _JOBS_T] - acc[..., _BUSY_T]
    fwait, farr = fine[..., _JOBS_T] - fine[..., _BUSY_T], fine[..., _ARR]
    fspan = fine[..., _TIME_C] * plan.n
    result = SimulationResult(
        system=repr(system),
        input=repr(input),
        steps=plan.steps if plan.mode == _STEPS else round(float(np.mean(measured))),
        warmup=plan.warm,
        replications=len(outs),
        p_wait=ratio_estimate(acc[..., _WAITED], arr),
        mean_wait=ratio_estimate(waiting, arr - acc[..., _BLOCKED]),
        mean_workload=None,
        busy_fraction=per_server(acc[..., _BUSY_T]),
        p_loss=None,
        p_block=ratio_estimate(acc[..., _BLOCKED], arr) if b > 0 else None,
        overflow_work=None,
        grid=np.zeros(0),
        final_state=final,
        path=None,
        p_all_busy=ratio_estimate(acc[..., _ALLBUSY], arr),
        mean_jobs=per_server(acc[..., _JOBS_T]),
        phase_busy=phase_busy,
        sup_error=None,
        engine=engine,
        batch_check=check,
        _sums={"p_wait": (fine[..., _WAITED], farr),
               "mean_wait": (fwait, farr - fine[..., _BLOCKED]),
               "busy_fraction": (fine[..., _BUSY_T], fspan),
               "p_all_busy": (fine[..., _ALLBUSY], farr),
               "mean_jobs": (fine[..., _JOBS_T], fspan),
               **({"p_block": (fine[..., _BLOCKED], farr)} if b > 0 else {})},
        _no_clt=clt_failures(input, ["p_wait", "mean_wait", "busy_fraction", "p_all_busy",
                                     "mean_jobs", "p_block"]),
        _prof=np.zeros(0),
        _den=np.zeros(0),
    )
    warn_fixed_budget(repr(system), check, result if plan.default else None)
    return result


# ------------------------------------------------------------------------------------------
# the engines of rc.simulate
# ------------------------------------------------------------------------------------------
class QueueLengthEngine:
    """An engine of :func:`recursions.simulate` for queue-length systems.

    It registers in :mod:`recursions.engines` under its name.

    ``"queues"`` keeps the queue length of every server (any service law); ``"counts"`` the
    aggregated counts of servers by length and phase (Coxian, exponential or Erlang service),
    preferred by ``engine="auto"`` where it runs. Both take ``steps`` or ``time``, ``warmup``,
    ``replications``, ``rng`` and ``batches``; they keep counts of jobs, not workload vectors,
    so they refuse every other option of :func:`recursions.simulate`.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.simulate(rc.JSQ(3, buffer=2), rc.Poisson(2.0, rc.dists.LogNormal(1.0, 0.5)),
    ...             1000, rng=1).engine
    'queues'
    """

    family = "queue-length"
    keywords: frozenset[str] = frozenset()
    continues = False  # a run cannot go on from where it stopped (recursions.engines)

    def __init__(self, name: str) -> None:
        self.name = name

    def refuses(self, system: Any, plan: Any) -> str | None:
        """Why not: options about workload vectors, arrivals not Poisson, or phases missing.

        ``"counts"`` also refuses a service law without phases (no Coxian form).
        """
        bad = unhonoured(self, plan)
        if bad:
            return (f"{type(system).__name__} runs on the queue-length engines, which do not "
                    f"take {', '.join(f'{k}=' for k in bad)} (they keep counts of jobs per "
                    "server, not workload vectors): leave them out")
        why = _input_refusal(system, plan.input)
        if why is not None or self.name != "counts":
            return why
        law = plan.input.service
        if _as_coxian(law) is None:
            return ("engine='counts' needs Coxian, Exponential or Erlang service (the chain "
                    f"tracks phases); got {law!r}: use engine='queues'")
        return None

    def preferred(self, system: Any, plan: Any) -> bool:
        """``"counts"`` (where it runs: its cost per event does not grow with ``N``)."""
        return self.name == "counts"

    def run(self, system: Any, plan: Any) -> SimulationResult:
        """:func:`simulate_queues` on this engine, from the plan ``simulate`` validated."""
        by_steps = plan.steps is not None
        return _run(system, plan.input, self.name, _STEPS if by_steps else _TIME,
                    int(plan.steps or 0), 0.0 if by_steps else float(plan.time),
                    plan.warmup, plan.replications, plan.batches, plan.merge, plan.default,
                    plan.rng)


QUEUES = register(QueueLengthEngine("queues"))
COUNTS = register(QueueLengthEngine("counts"))
