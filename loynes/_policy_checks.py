"""Stability checks of the load-balancing policies: LL(d), JSQ, power-of-d, I1F and JIQ.

The theory, with each theorem's hypotheses and what stays open:
:ref:`Theory › Stability › Load-balancing policies <theory-stability-policies>`.

Four families, registered with :func:`loynes._checks.register` when this module is imported
(:mod:`loynes._stability` imports it):

========================  =======================================  ============================
family                    systems                                  STABLE from
========================  =======================================  ============================
``"least-of-d"``          ``LeastOfD(S, d)``, ``1 < d < S``        (3), renewal input and
                                                                   ``E[sigma^2] < inf``: the
                                                                   drift proof
                                                                   (``least-of-d-drift``)
``"jsq"``                 ``JSQ``, ``PowerOfD`` without a buffer   (3) and Poisson input:
                                                                   Bramson (2011)
                                                                   (``bramson-jsq``)
``"queue-length"``        ``I1F`` without a buffer                 never: no theorem covers it
``"jiq"``                 ``JIQ`` without a buffer                 (3) and Poisson input: Foss
                                                                   and Stolyar (2017)
                                                                   (``jiq-poisson``); else the
                                                                   drain test
========================  =======================================  ============================

``LeastOfD(S, 1)`` (random routing in law) and ``LeastOfD(S, S)`` (JSW in law) are in the
``"load"`` family, where (3) is necessary and sufficient. Every family says UNSTABLE when (3)
fails (``condition-3-fails``), and UNDECIDED, with the reason, where no theorem covers the
input.
"""

from __future__ import annotations

import math

import recursions as rc
from loynes._basis import Basis
from loynes._checks import Check, condition_3, fails_3, growth_test, register, undecided
from loynes._map_checks import drain_applies, drain_verdict
from loynes._report import StabilityReport
from recursions.model import is_poisson, is_renewal

__all__ = ["check_jiq", "check_jsq", "check_least_of_d", "check_queue_length",
           "drift_proof_refusal"]


def drift_proof_refusal(inp: rc.Input) -> str | None:
    """Why the LL(d) drift proof does not cover ``inp``, or ``None`` when it does.

    The proof (:ref:`theory-stability-lld`) needs i.i.d. input, the service times independent
    of the interarrival times (renewal input, :func:`recursions.model.is_renewal`), and a
    finite second moment of the service time.

    Parameters
    ----------
    inp : recursions.Input
        The input.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import recursions as rc
    >>> drift_proof_refusal(rc.Poisson(1.0, rc.dists.Exponential(1.0))) is None
    True
    >>> drift_proof_refusal(rc.Periodic([1.0, 2.0], [1.0, 1.0]))[:30]
    'the input is not renewal input'
    """
    if not is_renewal(inp):
        return ("the input is not renewal input (i.i.d. interarrival and service times), "
                "which the drift proof needs")
    var = float(inp.service.var)
    if not math.isfinite(var):
        return ("the service time has an infinite second moment, and the drift proof needs "
                "E[sigma^2] < inf")
    return None


def _least_of_d_tests(chk: Check) -> int:
    return 0 if drift_proof_refusal(chk.input) is None else 1


@register("least-of-d", tests=_least_of_d_tests)
def check_least_of_d(chk: Check) -> StabilityReport:
    """LL(d) on workloads, ``1 < d < S``: (3) suffices for renewal input with ``E[sigma^2] < inf``.

    The proof (:ref:`theory-stability-lld`): the total squared workload drifts down by a
    multiple of the total workload once it is large, which with i.i.d. input gives a
    stationary law of the Feller chain at arrivals, and the map's monotonicity turns it into a
    finite Loynes limit. For other inputs no theorem applies: (3) is checked as necessary,
    then the growth test runs, and the verdict is UNDECIDED unless it finds growth.

    Parameters
    ----------
    chk : loynes._checks.Check
        The check (its system a ``LeastOfD``, or an ``Envelope`` of one).

    Returns
    -------
    StabilityReport

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> E = rc.dists.Exponential
    >>> rep = ly.check_stability(rc.LeastOfD(4, 2), rc.Poisson(3.6, E(1.0)))
    >>> rep.verdict, rep.decided_by.name, rep.decided_by.error
    ('stable', 'least-of-d-drift', 0.0)
    >>> ly.check_stability(rc.LeastOfD(4, 2), rc.Poisson(4.4, E(1.0))).verdict
    'unstable'
    """
    why = drift_proof_refusal(chk.input)
    role = ("necessary and sufficient (renewal input, E[sigma^2] < inf: the drift proof)"
            if why is None else "necessary")
    bad = fails_3(chk, condition_3(chk, role))
    if bad is not None:
        return bad
    if why is None:
        chk.evidence["drift proof"] = ("renewal input with E[sigma^2] < inf: E[total squared "
                                       "workload] drifts down by 2 (E[tau] - E[sigma]/S) "
                                       "times the total workload, up to a constant")
        return chk.report("stable", Basis(
            "theorem", "least-of-d-drift", 0.0,
            "(3) holds with renewal input and E[sigma^2] < inf: by the quadratic drift of the "
            "least-of-d map and Loynes' monotone limit (proof in the docs, Theory › Stability "
            "› LL(d)) the Loynes limit is a.s. finite"))
    chk.evidence["drift proof"] = f"not applicable: {why}"
    bad = growth_test(chk)
    return bad if bad is not None else undecided(
        chk, f"(3) holds, which is necessary; no theorem covers the workload-based LL(d) "
        f"with this input ({why}; Bramson 2011 is for a queue-length choice), and the "
        "growth test found no significant growth")


@register("jsq", tests=lambda chk: 0)
def check_jsq(chk: Check) -> StabilityReport:
    """JSQ and power-of-d on queue lengths without buffers: (3) is necessary and sufficient.

    Bramson (2011) proves that JSQ networks, in which each job joins a server with the fewest
    jobs among a randomly chosen subset, are stable when subcritical, for every non-idling
    discipline and general interarrival and service laws. For ``N`` identical FIFO servers and
    uniform subsets of size ``d`` (``d = N``: JSQ) subcriticality is (3). The queue-length
    engines take Poisson input only, which satisfies the theorem's conditions on arrivals.

    Parameters
    ----------
    chk : loynes._checks.Check
        The check (its system a ``JSQ`` or ``PowerOfD`` with ``buffer=None``).

    Returns
    -------
    StabilityReport

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> rep = ly.check_stability(rc.PowerOfD(10, 2), rc.Poisson(9.5, rc.dists.LogNormal(1.0, 4.0)))
    >>> rep.verdict, rep.decided_by.name
    ('stable', 'bramson-jsq')
    """
    bad = fails_3(chk, condition_3(chk, "necessary and sufficient (Bramson 2011)"))
    if bad is not None:
        return bad
    if not is_poisson(chk.input):  # the queue-length engines refuse it before we get here
        return chk.report("undecided", Basis(
            "none", "none", math.nan, "(3) holds, which is necessary; the queue-length engines "
            "and this check take Poisson input only"))
    return chk.report("stable", Basis(
        "theorem", "bramson-jsq", 0.0,
        "(3) holds, so the network is subcritical: a join-the-shortest-queue network (each "
        "job joins a server with the fewest jobs among a random subset, here uniform of size "
        "d) is stable for general service laws and any non-idling discipline (Bramson, "
        "Stability of join the shortest queue networks, Ann. Appl. Probab. 2011)"))


@register("queue-length", tests=lambda chk: 0)
def check_queue_length(chk: Check) -> StabilityReport:
    """Queue-length policies no theorem covers (I1F without a buffer): only (3) decides.

    A load at or above 1 is UNSTABLE by (3). Below 1 no theorem applies: I1F is not a
    join-the-shortest-queue policy over a random subset (with no idle server and none
    holding one job it joins a uniformly random server, which may be the longest queue), so
    Bramson (2011) does not cover it; and a queue-length policy has no workload map for the
    growth test. The verdict is UNDECIDED, saying so.

    Parameters
    ----------
    chk : loynes._checks.Check
        The check (its system a queue-length policy with ``buffer=None``).

    Returns
    -------
    StabilityReport

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> rep = ly.check_stability(rc.I1F(4), rc.Poisson(2.0, rc.dists.Exponential(1.0)))
    >>> rep.verdict, "no stability theorem" in rep.reason
    ('undecided', True)
    """
    bad = fails_3(chk, condition_3(chk))
    if bad is not None:
        return bad
    name = type(chk.system).__name__
    return chk.report("undecided", Basis(
        "none", "none", math.nan, f"(3) holds, which is necessary; no stability theorem "
        f"covers {name} with infinite buffers (it is not a join-the-shortest-queue policy "
        "over a random subset, which Bramson 2011 covers: with no idle server and none "
        "holding one job it joins a uniformly random server; Gupta and Walton 2019 study it "
        "only in a many-server scaling regime), and a queue-length policy has no workload "
        "map for the growth test: simulate it (rc.simulate) and read its batch check, or "
        "give it a buffer (then it is bounded)"))


@register("jiq", tests=lambda chk: 0 if is_poisson(chk.input) else 1 + drain_applies(chk))
def check_jiq(chk: Check) -> StabilityReport:
    """JIQ without a buffer: stable below load 1 for Poisson input (Foss and Stolyar 2017).

    A busy server gets each arrival with probability at most ``1/S``. Other inputs have no
    theorem here: the growth test decides UNSTABLE, the drain test STABLE (with i.i.d.
    input; :func:`loynes._map_checks.drain_verdict`).

    Parameters
    ----------
    chk : loynes._checks.Check
        The check (its system a ``JIQ`` with ``buffer=None``).

    Returns
    -------
    StabilityReport

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> rep = ly.check_stability(rc.JIQ(4), rc.Poisson(3.8, rc.dists.Exponential(1.0)))
    >>> rep.verdict, rep.decided_by.name
    ('stable', 'jiq-poisson')
    """
    c3 = condition_3(chk, "necessary and sufficient for Poisson input")
    bad = fails_3(chk, c3)
    if bad is not None:
        return bad
    if is_poisson(chk.input):
        return chk.report("stable", Basis(
            "theorem", "jiq-poisson", 0.0,
            "(3) holds and the input is Poisson: while a server is busy it receives each "
            "arrival with probability at most 1/S, so it gets work at rate at most the load "
            "(Foss and Stolyar 2017, Section 2: positive Harris recurrence for every S)"))
    bad = growth_test(chk)
    return bad if bad is not None else drain_verdict(
        chk, "JIQ with non-Poisson input: no theorem applies")
