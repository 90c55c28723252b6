r"""Exact stationary draws of non-monotone idle-first maps by bounding processes.

:func:`bounded_sample` draws the stationary sorted workload vector seen by an arrival for
J_{p+1}SW (:class:`recursions.JpSW`, ``p >= 1``: an idle server if any, else the
(p+1)-th smallest workload) and JIQ (:class:`recursions.JIQ`: an idle server if any, else a
uniformly random one). These maps are not monotone, so Propp-Wilson sandwiching between two
runs of the map is not valid; instead a pair of *bounding processes* ``l ≺ u`` is run, which
bracket every path of the map started between them (Huber's bounding chains, here for a
continuous state space), from a vector known to lie above the stationary state.

Notation: ``x ≺ y`` is the coordinatewise order of sorted vectors, ``R`` the sorting,
``e_i`` the i-th unit vector, ``[.]^+`` the positive part and ``1`` the vector of ones. A
customer brings ``sigma``, the next one comes ``tau`` later, and the map is

    ``G(x) = [R(x + sigma e_{rho(x)}) - tau 1]^+``,
    ``rho(x) = 1`` if ``x(1) = 0`` (an idle server), else ``rho(x) = r``,

where ``r`` is the busy rank: ``p + 1`` for J_{p+1}SW, ``floor(U S) + 1`` for JIQ with the
customer's routing uniform ``U`` (the same ``r`` for every ``x``: that is the coupling).

The construction
----------------
**Lemma 1 (fixed rank).** For a fixed rank ``i`` the map ``x -> R(x + sigma e_i)`` is
nondecreasing on sorted vectors: the k-th smallest member of a finite family is a
nondecreasing function of each member, and ``x ≺ y`` raises every member of
``(x(1), .., x(i) + sigma, .., x(S))``. The drain ``x -> [x - tau 1]^+`` is nondecreasing
too, and so is ``x -> R(sigma, x(2), .., x(S))``, which equals ``R(x + sigma e_1)`` when
``x(1) = 0``.

**Lemma 2 (interval update).** Let ``l ≺ u`` be sorted. An ``x`` with ``l ≺ x ≺ u`` makes
one of two moves: *idle* (``x(1) = 0``: ``R(x + sigma e_1)``) or *busy* (``x(1) > 0``:
``R(x + sigma e_r)``; ``r = 1`` is possible for JIQ). Let ``A`` be the set of moves some such
``x`` makes: {idle} if ``u(1) = 0``, {busy} if ``l(1) > 0``, {idle, busy} otherwise (mixed).
With the lower and upper images of the moves

    ``L_idle = R(l + sigma e_1)``,  ``U_idle = R(sigma, u(2), .., u(S))``,
    ``L_busy = R(l + sigma e_r)``,  ``U_busy = R(u + sigma e_r)``,

put ``Psi(l, u) = [min_{a in A} L_a - tau 1]^+`` and ``Phi(l, u) = [max_{a in A} U_a -
tau 1]^+``, the minimum and maximum taken coordinatewise (of sorted vectors: sorted again).
Then ``Psi ≺ G(x) ≺ Phi`` for every ``l ≺ x ≺ u``. Indeed if ``x`` is idle,
``L_idle ≺ R(x + sigma e_1) = R(sigma, x(2), .., x(S)) ≺ U_idle`` by Lemma 1, and if ``x`` is
busy, ``L_busy ≺ R(x + sigma e_r) ≺ U_busy``. In the three cases this reads

* ``l(1) > 0`` (every ``x`` busy): ``Psi = G(l)``, ``Phi = G(u)``;
* ``u(1) = 0`` (every ``x`` idle): ``Psi = G(l)``, ``Phi = G(u)`` (rank 1 for all);
* ``l(1) = 0 < u(1)`` (mixed): ``Phi = [R(u + sigma e_r) v R(u - u(1) e_1 + sigma e_1) -
  tau 1]^+``, the monotone envelope of :func:`recursions.model.maps.envelope`, and
  ``Psi = [min(R(l + sigma e_1), R(l + sigma e_r)) - tau 1]^+``. Nothing tighter is
  available below: busy ``x`` with ``x(1)`` arbitrarily close to 0 approach
  ``R(l + sigma e_r)`` (continuity), idle ones reach ``R(l + sigma e_1)``.

``Psi`` and ``Phi`` are sorted and non-negative, and ``Psi ≺ Phi`` (``A`` is not empty and
``L_a ≺ U_a`` for each move). The update is also monotone for inclusion: if
``l ≺ l' ≺ u' ≺ u`` then ``A' ⊂ A`` (``u'(1) = 0`` forces ``l(1) = 0``, ``l'(1) > 0`` forces
``u(1) > 0``) and each ``L_a``, ``U_a`` is monotone, so ``Psi(l, u) ≺ Psi(l', u')`` and
``Phi(l', u') ≺ Phi(l, u)``. If ``l = u`` the update is ``G`` itself, so bounds that have
met stay together.

**Lemma 3 (a dominating queue).** Adding ``sigma`` to one coordinate and re-sorting raises
no order statistic by more than ``sigma``, so every coordinate of ``G(x)``, and of
``Phi(l, u)``, is at most ``[max_j x(j) + sigma - tau]^+`` (with ``x = u`` for ``Phi``; for
``U_idle``, ``max(sigma, u(S)) <= u(S) + sigma``). This is the Lindley update
``V' = [V + sigma - tau]^+`` of one server fed by *all* customers, which is nondecreasing in
``V``. Let ``V`` be its stationary workload, driven by the same input; it exists iff
``lam E[sigma] < 1`` (load per server below ``1/S``). Then every stationary version ``X`` of
the map driven by that input has ``max X ≤ V`` at every arrival: writing ``D`` for
``max X`` and ``P_k`` for the sum of ``sigma - tau`` over the ``k`` customers before 0,
induction on Lemma 3 gives ``D(0) <= max(V(0), D(-k) + P_k)`` for every ``k``, and
``P(D(-k) + P_k > 0) <= P(D(0) > ck) + P(P_k > -ck) -> 0`` (``D`` is stationary, hence
tight, and ``P_k / k -> E[sigma - tau] < -2c`` a.s.), so ``P(D(0) > V(0)) = 0``. The same
holds in continuous time, where the maximum coordinate and ``V`` both drain at unit rate
and jump at arrivals by at most, and exactly, ``sigma``.

**The sampler.** Take a past time ``-T`` and a bound ``B >= V(-T)`` (the stationary
dominating workload itself, or a certified bound of it) jointly with the input after ``-T``.
Start ``l = 0``, ``u = B 1`` and apply the update of Lemma 2 (with the drain between
arrivals) up to time 0. By Lemma 3 the stationary state at ``-T`` lies in ``[0, B 1]``, and
by Lemma 2 it stays in ``[l, u]``; if ``l = u`` at 0, their common value *is* the stationary
state at 0. Otherwise try again from ``-2T``, on the same input path (the draws of time
``-t`` do not depend on ``T``), up to a cap (:class:`coupling.CouplingNotReached`). Every
bracket, whatever its ``T``, contains the one stationary path, so every bracket that closes
gives the same value: the draw does not depend on where the search starts, nor on how it
stops. With ``B = V(-T)`` the brackets are moreover nested (Lemma 3 applied to ``Phi``: the
upper process started at ``-2T`` is below ``V(-T) 1`` at ``-T``; then inclusion
monotonicity), so once closed at some ``T`` they stay closed further back. The search ends:
the dominating queue started at ``B`` empties at some time ``-t`` with probability tending
to 1 as ``T`` grows (the walk ``sigma - tau`` drifts down), and then ``u(-t) ≺ 0`` forces
``l = u = 0``. So the bracket closes no later than the last instant the single-server queue
is empty; in practice it closes well before (for ``JpSW(3, 1)`` at ``lam = 0.95`` with
exponential service: 46 customers back on average against 342 to the last empty instant of
the M/M/1 queue). The argument also shows that when ``lam E[sigma] < 1`` the map has exactly
one stationary version driven by the input.

Two ways to draw ``V(-T)`` with the input after ``-T``, both from :mod:`coupling`:

``"reversed"`` -- Poisson arrivals, any service law with a finite mean (the default for
    Poisson input): the stationary M/G/1 queue simulated backwards
    (:class:`coupling._dominating.ReversedQueue`, processor sharing: the workload does not
    depend on the discipline); ``T`` is a time and time 0 an arbitrary instant, whose state
    has the law an arrival sees (PASTA).
``"walk"`` -- renewal arrivals, a service law with a finite moment generating function
    near 0 (the default for non-Poisson renewal input): the Lindley supremum of the reversed
    random walk ``sigma - tau`` with certificates (:class:`coupling.RAWalk` with one server),
    which bounds ``V`` at certified customers ``-n`` (a bound above ``V`` is as good as
    ``V`` itself here); ``T`` counts customers and the draw is the state customer 0 finds.

Beyond ``lam E[sigma] = 1``: the S - p largest workloads of J_{p+1}SW
--------------------------------------------------------------------
**Lemma 4 (the top of J_{p+1}SW is below FCFS on S - p servers).** Write
``top(x) = (x(p+1), .., x(S))`` for the ``S - p`` largest coordinates and
``K(y) = [R(y + sigma e_1) - tau 1]^+`` for JSW (FCFS) on ``S - p`` servers. Then
``top(G(x)) ≺ K(top(x))`` and ``top(Phi(l, u)) ≺ K(top(u))``. Indeed, before the drain (which
acts coordinatewise and commutes with taking the top ``S - p``):

* a busy arrival joins rank ``p + 1``, and ``x(p+1) + sigma`` stays among the ``S - p``
  largest, so the top becomes ``R(top(x) + sigma e_1)``: exactly JSW;
* an idle arrival replaces ``x(1) = 0`` by ``sigma``; the top of ``(sigma, x(2), .., x(S))``
  is ``top(x)`` if ``sigma <= x(p+1)`` and ``R(sigma, x(p+2), .., x(S))`` otherwise, in both
  cases below ``R(top(x) + sigma e_1)`` (replacing ``x(p+1)`` by ``max(sigma, x(p+1))``
  raises it by at most ``sigma``);
* ``Phi`` is ``G(u)`` in the pure cases and, in the mixed one, the coordinatewise maximum of
  ``R(u + sigma e_{p+1})`` and ``R(sigma, u(2), .., u(S))``, each of whose tops is below
  ``K(top(u))`` by the two cases above (the top of a coordinatewise maximum of sorted vectors
  is the maximum of their tops).

``K`` is nondecreasing, so by induction the top of J_{p+1}SW, and of the upper bounding
process, stays below FCFS G/G/(S - p) fed by *every* customer and started above them. That
queue is stable iff ``lam E[sigma] < S - p``; let ``Y`` be its stationary version. If
``P(sigma < tau) > 0`` (always so with Poisson input) a stable FCFS queue empties from any
initial state in finite time almost surely (Whitt, "Embedded renewal processes in the GI/G/s
queue", 1972); once FCFS started from a level ``c`` at ``-k`` is empty it stays below ``Y``.
For a stationary version ``X`` of J_{p+1}SW driven by the input, ``P(top(X(0)) ⊀ Y(0))`` is
at most ``P(max X(-k) > c)`` plus the probability that FCFS from ``c`` at ``-k`` has not
emptied by 0, which both vanish (``X`` is tight; ``c`` large, then ``k`` large): so
``top(X) ≺ Y``, and since ``x(i) <= x(p+1)`` for ``i <= p``,

    ``X ≺ (Y(1), .., Y(1), Y(1), Y(2), .., Y(S - p))``  (``p + 1`` copies of ``Y(1)``).

**The sampler beyond 1** (``method="fcfs"``, the default for J_{p+1}SW where
``1 <= lam E[sigma] < S - p``). The FCFS samplers of :func:`coupling.perfect_sample`
(the vacation bound, the round-robin or random-assignment walk, or reversed M/G/1 queues
for heavy-tailed service with Poisson input) find, at past instants ``-T`` on one backward
path of the input, a vector ``B`` above the FCFS state ``Y(-T)``, with the arrivals after
``-T`` and their services (Wolff's coupling in order of service initiation gives them the
law of the input). Starting the bounding processes at ``0`` and at the embedding of ``B``
above therefore brackets ``X(-T)``; Lemma 2 keeps the bracket to time 0, and a bracket that
has closed gives ``X(0)``. Tries that do not close go further back on the same path, as the
FCFS sampler does for its own sandwich. By Lemma 4 the upper process's top stays below the
FCFS upper run, so the bracket closes once that run is empty (when the FCFS sandwich would
close at 0 with both ends at 0), which happens with probability tending to 1 as ``T``
grows. This also shows that J_{p+1}SW has exactly one stationary version driven by the
input when ``lam E[sigma] < S - p`` and ``P(sigma < tau) > 0``, renewal input included
(where Theorem 1, for Poisson input, does not apply): the closed brackets define it, and
every stationary version lies in each of them. Draws per second and the check against
forward runs: docs/benchmarks.md, section :ref:`Bounding chains for J_{p+1}SW
<bench-bounding>`.

Limits
------
* **lam E[sigma] < S - p for J_{p+1}SW, lam E[sigma] < 1 for JIQ.** Both are strict subsets
  of where the maps have a stationary law: Moyal's Theorem 1
  (:ref:`theory-stability-theorem-1`) gives, for J_{p+1}SW with Poisson input,
  ``lam E[sigma] B(p, lam E[sigma]) < S - p`` (``B`` Erlang's loss formula), e.g. up to
  ``lam E[sigma] = 2.73`` for ``S = 3, p = 1`` (against 2 here), and JIQ with Poisson
  input is stable up to load 1 per server (``lam E[sigma] < S``). Lemma 4 has no analogue for
  JIQ: a customer who finds every server busy joins a uniformly random rank, so the ``S - 1``
  largest workloads receive work at any of their ranks, not at the smallest, and no FCFS
  queue on two or more servers bounds them; every coordinate is bounded only by the
  single-server queue fed by every customer (Lemma 3). Outside these loads this module refuses
  (``ValueError``, which says whether Theorem 1 holds). With renewal input, ``method="fcfs"``
  also needs ``P(sigma < tau) > 0`` (checked) and a light-tailed service law (the walk-based
  FCFS bounds are tilted).
* **The split bound is not a dominating process.** :class:`recursions.SplitBound` (a p-server
  loss system overflowing to JSW on ``S - p`` servers) is stable where Theorem 1 is, but it
  does *not* dominate J_{p+1}SW pathwise: with the same inputs from empty, the sorted
  J_{p+1}SW vector exceeds the sorted split-bound vector in some coordinate at about half the
  arrivals for ``S = 3, p = 1, lam = 2`` (the measurement is in the theory pages,
  :ref:`theory-stability-split-bound`), so it cannot serve as the upper process.
* **The monotone envelope** (:class:`recursions.Envelope`) is the upper process of the mixed
  case, but as a chain of its own it is unstable in part of Theorem 1's region (for
  ``S = 3, p = 1`` it grows from empty at ``lam = 2``, where Theorem 1 allows up to 2.73;
  the measurement is in the theory pages, :ref:`theory-stability-envelope`), and where it
  is stable it is a monotone chain with no known top or backward stationary sampler, so it
  cannot give the start either. A wider exact region needs a dominating
  process with a backward stationary sampler that is not known here.
* Systems that are monotone (``JpSW(S, 0)``, which is JSW, and every map declared monotone)
  are refused: :func:`coupling.perfect_sample` has better methods for them (dominated
  coupling from the past, Propp-Wilson). Loss systems go to its renovation method. JIQ with
  a finite buffer is a queue-length system and is refused.

Examples
--------
>>> import recursions as rc
>>> from coupling._bounding import bounded_sample
>>> inp = rc.Poisson(0.8, rc.dists.Exponential(1.0))
>>> ps = bounded_sample(rc.JpSW(3, 1), inp, 4, rng=1)
>>> ps.samples.shape, ps.method
((4, 3), 'bounding')
>>> bool((ps.samples >= 0).all() and (ps.steps >= 0).all())
True
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import recursions as rc
from coupling._assignment_walks import Walks
from coupling._bounding_draws import draw_bounded, draw_in_fcfs, interval_update
from coupling._fcfs_bounds import fcfs_sampler
from coupling._horizons import horizons
from coupling._perfect_result import PerfectSample, found_at_zero
from coupling._tilting import mgf
from recursions.common import RngLike, as_seed_sequence, check_int, erlang_b
from recursions.common.codes import EnvelopeBase
from recursions.model import check_input, check_system, is_poisson, is_renewal
from recursions.model import maps as maps
from recursions.vectors import random_rank

__all__ = ["bounded_method", "bounded_sample", "interval_step"]

_JPSW, _JIQ = int(EnvelopeBase.JPSW), int(EnvelopeBase.JIQ)
METHODS = ("reversed", "walk", "fcfs")


def _kind(system: rc.System) -> tuple[bool, int]:
    """``(jiq, p)`` of a system this module samples; refuse the others with the reason."""
    check_system(system)
    env = system.envelope_params
    if system.monotone:
        raise ValueError(
            f"{system!r} is monotone: sandwich two runs of the map itself with "
            "coupling.perfect_sample (dominated coupling from the past for JSW, Propp-Wilson "
            "given upper=, or dominated_by=rc.JSW(S)), which needs no bounding processes; "
            "these are for the non-monotone idle-first maps JpSW (p >= 1) and JIQ")
    if env is None or int(env[0]) not in (_JPSW, _JIQ):
        extra = (" (a loss system: coupling.perfect_sample samples it by renovation)"
                 if system.has_loss else "")
        raise ValueError(f"bounding processes are known for JpSW (p >= 1) and JIQ only, got "
                         f"{system!r}{extra}")
    jiq = int(env[0]) == _JIQ
    if system.kernel is not (maps.jiq if jiq else maps.jpsw) or "dense" not in system.engines:
        raise ValueError(f"{system!r} is not the workload map of JpSW or JIQ (a JIQ with a "
                         "buffer is a queue-length system): no bounding processes for it")
    return jiq, 0 if jiq else int(env[1])


def interval_step(system: rc.System, lower: Any, upper: Any, sigma: float, tau: float,
                  u: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One interval update: ``(Psi, Phi)`` with ``Psi ≺ G(x) ≺ Phi`` for all ``lower ≺ x ≺ upper``.

    Parameters
    ----------
    system : recursions.JpSW or recursions.JIQ
        The map ``G`` (J_{p+1}SW with ``p >= 1``, or JIQ without buffer).
    lower, upper : array_like
        Sorted non-negative vectors with ``lower ≺ upper`` (coordinatewise).
    sigma, tau : float
        Service time of the arriving customer and time to the next arrival.
    u : float, optional
        JIQ's routing uniform in ``[0, 1)`` (the busy rank ``floor(u S)``).

    Returns
    -------
    psi, phi : numpy.ndarray
        The bounds after the arrival (fresh arrays).

    Raises
    ------
    ValueError
        For another system, or bounds that are not sorted, non-negative and ordered.

    Examples
    --------
    >>> import recursions as rc
    >>> from coupling._bounding import interval_step
    >>> psi, phi = interval_step(rc.JpSW(2, 1), [0.0, 1.0], [0.5, 1.0], sigma=2.0, tau=0.0)
    >>> psi.tolist(), phi.tolist()   # idle (0, 1) goes to (1, 2), busy (e, 1) to (e, 3)
    ([0.0, 2.0], [1.0, 3.0])
    """
    jiq, p = _kind(system)
    lo = system.check_state(lower, "lower")
    hi = system.check_state(upper, "upper")
    if np.any(lo > hi):
        raise ValueError("lower must lie below upper coordinatewise")
    s, t = float(sigma), float(tau)
    if not (math.isfinite(s) and s >= 0 and math.isfinite(t) and t >= 0):
        raise ValueError(f"sigma and tau must be finite and >= 0, got {sigma!r}, {tau!r}")
    r = p
    if jiq:
        uu = system._check_u(u)
        r = int(random_rank(float(uu[0]), system.servers))
    interval_update(lo, hi, s, t, r)
    return lo, hi


def _heavy(law: Any) -> str:
    """Why ``law`` has no tilt, in the law's own words when it gives them."""
    try:
        mgf(law, 1e-9 / law.mean)
    except ValueError as exc:
        return str(exc)
    return f"{law!r} has no finite moment generating function near 0"


def _can_idle(inp: rc.Renewal) -> bool:
    """Whether ``P(sigma < tau) > 0``, so that a stable FCFS queue empties from any state.

    ``P(sigma < tau) >= P(sigma <= x) P(tau > x)`` for every ``x`` (independence): a positive
    product at one of a few multiples of ``E[tau]`` proves it (always so for Poisson input).
    """
    if inp.interarrival.exponential_rate is not None:
        return True
    # points x with P(tau > x) > 0 reaching up to the top of tau's support, where the cdf of
    # sigma is largest: if P(sigma < tau) > 0, some x of these has P(sigma <= x) > 0 too
    top = float(inp.interarrival.support_max)
    if math.isfinite(top):
        xs = top * (1.0 - 0.5 ** np.arange(1, 50))
    else:
        xs = inp.mean_interarrival * 2.0 ** np.arange(-20, 60)
    both = (np.asarray(inp.service.cdf(xs)) > 0) & (np.asarray(inp.interarrival.sf(xs)) > 0)
    return bool(both.any())


def _check_load(system: rc.System, inp: rc.Renewal, jiq: bool, p: int, a: float,
                method: str) -> None:
    """Refuse a load ``a = lam E[sigma]`` beyond what the method's dominating queue allows."""
    S = system.servers
    limit = S - p if method == "fcfs" else 1
    if a < limit:
        return
    note = ""
    if not jiq and inp.poisson:
        inside = a * erlang_b(p, a) < S - p
        note = (f"; Theorem 1 ({'holds' if inside else 'fails'} here: lam E[sigma] "
                f"B(p, lam E[sigma]) = {a * erlang_b(p, a):.4g} vs S - p = {S - p}) "
                "is the condition for the system itself")
    if jiq:
        raise ValueError(
            f"bounding processes for JIQ need lam E[sigma] < 1 (the single-server queue fed by "
            f"every customer, which bounds every coordinate, must be stable), got {a:.4g}; "
            f"JIQ itself is stable up to lam E[sigma] < S = {S} with Poisson input, but no "
            "wider dominating process is known here")
    if method == "fcfs":
        raise ValueError(
            f"bounding processes need lam E[sigma] < S - p = {S - p} (the FCFS queue on S - p "
            f"servers fed by every customer, which bounds the S - p largest workloads, must be "
            f"stable), got {a:.4g}{note}")
    wider = ("" if jiq or S - p <= 1 else
             f"; method 'fcfs' (the default here) reaches lam E[sigma] < S - p = {S - p}")
    raise ValueError(
        f"method {method!r} needs lam E[sigma] < 1 (the single-server queue fed by every "
        f"customer, which bounds every coordinate, must be stable), got {a:.4g}{note}{wider}")


def bounded_sample(
    system: rc.System,
    input: rc.Input,
    size: int,
    *,
    rng: RngLike = 1,
    start_time: float | None = None,
    cap_time: float | None = None,
    start_customers: int | None = None,
    cap_customers: int | None = None,
    method: str | None = None,
) -> PerfectSample:
    """Exact stationary draws of J_{p+1}SW (``p >= 1``) or JIQ by bounding processes.

    The pair ``l ≺ u`` of the interval update (:func:`interval_step`) is started at ``0`` and
    above the stationary state at ``-T`` and run to time 0 on the same input; when it has
    met, that is the stationary state (the proof is in the module docstring). The start above
    is ``V(-T) 1``, ``V`` the stationary workload of one server fed by every customer, where
    ``lam E[sigma] < 1``; for J_{p+1}SW up to ``lam E[sigma] < S - p`` it is built from the
    FCFS G/G/(S - p) sampler's bound (Lemma 4: the ``S - p`` largest workloads of J_{p+1}SW
    stay below FCFS on ``S - p`` servers fed by every customer).

    Parameters
    ----------
    system : recursions.JpSW or recursions.JIQ
        ``JpSW(S, p)`` with ``p >= 1``, or ``JIQ(S)`` without a buffer.
    input : recursions.Renewal
        Poisson arrivals (any service law with a finite mean), or renewal arrivals with a
        light-tailed service law.
    size : int
        Number of independent draws.
    rng : int, Generator, SeedSequence or None, default 1
        Seed; draw ``k`` uses the ``k``-th child of ``SeedSequence(rng).spawn(size)``.
    start_time, cap_time : float, optional
        First and largest backward horizon of ``"reversed"`` and ``"fcfs"``, a time
        (defaults ``8 E[tau]`` and ``1e6 E[tau]``).
    start_customers, cap_customers : int, optional
        The same for ``"walk"``, in customers back (defaults 16 and ``2**24``). A horizon in
        the other method's unit is refused; the draws do not depend on the start
        (except in the last bits, about 1e-14, with ``"fcfs"`` over reversed M/G/1 queues,
        i.e. Poisson input and a heavy-tailed service law).
    method : {None, "reversed", "walk", "fcfs"}, optional
        How the start above is drawn: the reversed M/G/1 queue (Poisson input; the default
        there when ``lam E[sigma] < 1``), the certified Lindley supremum of the random walk
        (renewal input, light tail; the default otherwise when ``lam E[sigma] < 1``), or, for
        J_{p+1}SW only, the FCFS G/G/(S - p) sampler of :func:`coupling.perfect_sample` (the
        default where ``1 <= lam E[sigma] < S - p``; renewal input with a light-tailed
        service law and ``P(sigma < tau) > 0``, or Poisson input with any service law with
        a mean).

    Returns
    -------
    PerfectSample
        ``samples`` of shape ``(size, S)`` (sorted workload vectors seen by an arrival);
        ``customers_back`` (alias ``steps``): the arrivals after the start ``-T`` of the
        bracket that closed, whose services the draw used (0 when none arrived after ``-T``,
        possible with the reversed queue only); ``time_back``: ``T``, or for the walk the
        interarrival times from customer ``-N`` to 0; ``seconds`` per draw; method
        ``"bounding"`` (reversed queue), ``"bounding-walk"`` or ``"bounding-fcfs"``; ``found``:
        what the customer arriving at 0 finds at the server it joins (``w[p]`` for
        J_{p+1}SW when every server is busy, a uniform rank for JIQ), behind ``p_wait`` and
        ``mean_wait``. Its statistics (``mean_workload``, ``p_all_busy``, ``mean_wait``,
        ``profile``...) carry i.i.d. standard errors.

    Raises
    ------
    ValueError
        When ``lam E[sigma] >= S - p`` for J_{p+1}SW or ``>= 1`` for JIQ and for the methods
        ``"reversed"`` and ``"walk"`` (the dominating queue has no stationary law, though the
        system may have one: the message says whether Theorem 1 holds), for a monotone or
        another system, or an input this method cannot draw backwards.
    CouplingNotReached
        When the bounds have not met at ``cap_time`` (resp. ``cap_customers``).

    Examples
    --------
    >>> import recursions as rc
    >>> from coupling._bounding import bounded_sample
    >>> inp = rc.Poisson(0.8, rc.dists.Exponential(1.0))
    >>> ps = bounded_sample(rc.JIQ(3), inp, 3, rng=2)
    >>> ps.samples.shape, ps.method
    ((3, 3), 'bounding')
    >>> gi = rc.Renewal(rc.dists.Erlang(2, 1.6), rc.dists.Exponential(1.0))   # E2/M/3
    >>> bounded_sample(rc.JpSW(3, 1), gi, 3, rng=2).method
    'bounding-walk'
    >>> busy = rc.Poisson(1.5, rc.dists.Exponential(1.0))   # lam E[sigma] = 1.5 < S - p = 2
    >>> bounded_sample(rc.JpSW(3, 1), busy, 3, rng=2).method
    'bounding-fcfs'
    """
    size = check_int(size, "size", 1)
    name, run_one = bounded_method(system, input, start_time=start_time, cap_time=cap_time,
                                   start_customers=start_customers,
                                   cap_customers=cap_customers, method=method)
    seeds = as_seed_sequence(rng).spawn(int(size))
    out = np.empty((int(size), system.servers))
    steps = np.empty(int(size), dtype=np.int64)
    back = np.empty(int(size))
    seconds = np.empty(int(size))
    for k, sd in enumerate(seeds):
        t_start = time.perf_counter()
        out[k], steps[k], back[k] = run_one(sd)
        seconds[k] = time.perf_counter() - t_start
    return PerfectSample(out, steps, name, repr(system), repr(input), time_back=back,
                         seconds=seconds,
                         found=found_at_zero(system, input, out, seeds))


def bounded_method(system: rc.System, input: rc.Input, *, start_time: float | None = None,
                   cap_time: float | None = None, start_customers: int | None = None,
                   cap_customers: int | None = None, method: str | None = None
                   ) -> tuple[str, Callable[[np.random.SeedSequence], tuple]]:
    """Check the arguments of :func:`bounded_sample` and bind its one-draw function.

    This is the door for :func:`coupling.perfect_sample`, whose machinery (worker processes,
    progress bar) runs ``run_one`` once per seed.

    Parameters
    ----------
    system, input, start_time, cap_time, start_customers, cap_customers, method
        As in :func:`bounded_sample`.

    Returns
    -------
    name : str
        ``"bounding"`` or ``"bounding-walk"``.
    run_one : callable
        Picklable ``run_one(seed) -> (state, customers back, time back)`` for one draw from a
        ``numpy.random.SeedSequence``.

    Raises
    ------
    ValueError, TypeError
        As :func:`bounded_sample`.

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> from coupling._bounding import bounded_method
    >>> name, run_one = bounded_method(rc.JIQ(2), rc.Poisson(0.5, rc.dists.Exponential(1.0)))
    >>> w, customers, back = run_one(np.random.SeedSequence(1))
    >>> name, w.shape
    ('bounding', (2,))
    """
    jiq, p = _kind(system)
    check_input(input)
    system.check_input(input)
    if not is_renewal(input):
        raise ValueError("bounding processes need renewal arrivals (Poisson or GI) to draw the "
                         f"dominating queue backwards, got {type(input).__name__}")
    S = system.servers
    a = input.mean_service / input.mean_interarrival
    poisson = is_poisson(input)
    if method is None:
        method = ("reversed" if poisson else "walk") if (a < 1 or jiq) else "fcfs"
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "fcfs" and jiq:
        raise ValueError("method 'fcfs' is for J_{p+1}SW: a customer of JIQ who finds every "
                         "server busy joins a random rank, so no FCFS queue on two or more "
                         "servers bounds its largest workloads; JIQ needs lam E[sigma] < 1")
    _check_load(system, input, jiq, p, a, method)
    if method == "reversed" and not poisson:
        raise ValueError("method 'reversed' (the reversed M/G/1 queue) needs Poisson arrivals; "
                         "use 'walk' for GI arrivals")
    given = {"start_time": start_time, "cap_time": cap_time, "start_customers": start_customers,
             "cap_customers": cap_customers}
    if method == "fcfs":
        if not _can_idle(input):
            raise ValueError(
                "method 'fcfs' needs P(sigma < tau) > 0 (so that the FCFS queue on S - p "
                f"servers empties from any state), which {input!r} does not show")
        try:
            _, fcfs_walks = fcfs_sampler(input, None, S - p)
        except ValueError:
            raise ValueError(
                f"method 'fcfs' samples FCFS on S - p = {S - p} servers fed by every customer, "
                "which has no exact sampler here with non-Poisson arrivals and this service "
                f"law: {_heavy(input.service)}; the walk-based bounds are tilted and need a "
                "finite moment generating function (with Poisson arrivals any service law with "
                "a mean works)") from None
        t0, tcap = horizons("bounding-fcfs", "time", given, 8.0 * input.mean_interarrival,
                            1e6 * input.mean_interarrival)
        return "bounding-fcfs", functools.partial(draw_in_fcfs, system=system, p=p,
                                                  inp=input, bound=fcfs_walks, start=t0,
                                                  cap=tcap)
    walks = None
    if method == "walk":
        walks = Walks(1, input.service, input.interarrival, "random")
        try:
            walks.template()
        except ValueError as err:
            raise ValueError("the walk method needs a service law with a finite moment "
                             f"generating function (light tail): {err}") from None
    name = "bounding-walk" if walks is not None else "bounding"
    if walks is not None:
        t0, tcap = horizons(name, "customers", given, 16, 2**24)
    else:
        t0, tcap = horizons(name, "time", given, 8.0 * input.mean_interarrival,
                            1e6 * input.mean_interarrival)
    return name, functools.partial(draw_bounded, system=system, jiq=jiq, p=p, inp=input,
                                   walks=walks, start=t0, cap=tcap)


