"""Stability theorems of the load-balancing policies (loynes/_policy_checks.py).

docs/theory/stability.md, section "Load-balancing policies": LL(d) on workloads is stable under
(3) for renewal input with E[sigma^2] < inf (the drift proof), d = 1 and d = S are random
routing and JSW ("load"); JSQ and power-of-d on queue lengths with Poisson input are stable
under (3) by Bramson (2011); I1F has no theorem; JIQ without a buffer keeps its own family.
Every one is UNSTABLE when (3) fails, and UNDECIDED with the reason where no theorem covers
the input.
"""

from __future__ import annotations

import math

import pytest

import loynes as ly
import loynes._basis
import recursions as rc
from loynes._checks import FAMILIES, Check
from loynes._families import family_of

D = rc.dists
E = D.Exponential


def _verdict(system, inp, **kw):
    rep = ly.check_stability(system, inp, rng=kw.pop("rng", 3), **kw)
    return rep, (rep.verdict, rep.decided_by.kind, rep.decided_by.name)


def _tests(system, inp):
    tests, _ = FAMILIES[family_of(system)]
    return tests(Check(system, inp, 16, 16, 2, 1e-3, iter(())))


# -- the families the systems declare -------------------------------------------------------
@pytest.mark.parametrize(("system", "family"), [
    (rc.LeastOfD(1, 1), "load"),
    (rc.LeastOfD(4, 1), "load"),
    (rc.LeastOfD(4, 4), "load"),
    (rc.LeastOfD(4, 2), "least-of-d"),
    (rc.LeastOfD(5, 4), "least-of-d"),
    (rc.Envelope(rc.LeastOfD(4, 2)), "least-of-d"),  # a monotone map is its own envelope
    (rc.JSQ(4), "jsq"),
    (rc.PowerOfD(6, 1), "jsq"),
    (rc.PowerOfD(6, 2), "jsq"),
    (rc.PowerOfD(6, 6), "jsq"),
    (rc.I1F(4), "queue-length"),
    (rc.JIQ(4), "jiq"),
    (rc.JSQ(4, buffer=3), "bounded"),
    (rc.PowerOfD(6, 2, buffer=3), "bounded"),
    (rc.I1F(4, buffer=2), "bounded"),
], ids=repr)
def test_family(system, family):
    assert family_of(system) == family
    assert family in FAMILIES


@pytest.mark.parametrize("name", ["bramson-jsq", "least-of-d-drift"])
def test_new_basis_names_are_in_the_table(name):
    assert f"``{name}``" in loynes._basis.__doc__


# -- LL(d) ------------------------------------------------------------------------------------
RENEWAL = rc.Renewal(D.Erlang(2, mean=1.0), D.LogNormal(3.6, 4.0))  # load 0.9 on 4 servers


@pytest.mark.parametrize(("system", "inp", "expected"), [
    # 1 < d < S: the drift proof (renewal input, E[sigma^2] < inf)
    (rc.LeastOfD(4, 2), rc.Poisson(3.6, E(1.0)), ("stable", "theorem", "least-of-d-drift")),
    (rc.LeastOfD(4, 3), RENEWAL, ("stable", "theorem", "least-of-d-drift")),
    (rc.LeastOfD(4, 2), rc.Renewal(D.Deterministic(1.0), D.Uniform(0.0, 7.8)),
     ("stable", "theorem", "least-of-d-drift")),
    (rc.Envelope(rc.LeastOfD(4, 2)), rc.Poisson(3.6, E(1.0)),
     ("stable", "theorem", "least-of-d-drift")),
    # d = 1 (random routing) and d = S (JSW): (3) is necessary and sufficient
    (rc.LeastOfD(4, 1), rc.Poisson(3.6, E(1.0)), ("stable", "theorem", "condition-3")),
    (rc.LeastOfD(4, 4), rc.Poisson(3.6, E(1.0)), ("stable", "theorem", "condition-3")),
    (rc.LeastOfD(1, 1), rc.Poisson(0.999, E(1.0)), ("stable", "theorem", "condition-3")),
    (rc.LeastOfD(4, 4), RENEWAL, ("stable", "theorem", "condition-3")),
    # at and above load 1: (3) fails
    (rc.LeastOfD(4, 2), rc.Poisson(4.0, E(1.0)), ("unstable", "theorem", "condition-3-fails")),
    (rc.LeastOfD(4, 2), rc.Poisson(4.4, E(1.0)), ("unstable", "theorem", "condition-3-fails")),
    (rc.LeastOfD(4, 1), rc.Poisson(4.4, E(1.0)), ("unstable", "theorem", "condition-3-fails")),
    (rc.LeastOfD(4, 4), rc.Poisson(4.0, E(1.0)), ("unstable", "theorem", "condition-3-fails")),
], ids=repr)
def test_least_of_d_verdicts(system, inp, expected):
    rep, got = _verdict(system, inp)
    assert got == expected, rep
    assert rep.decided_by.error == 0.0
    assert _tests(system, inp) == 0
    (c3,) = [c for c in rep.conditions if c.name == "(3)"]
    assert c3.holds is (expected[0] == "stable")


def test_least_of_d_stable_report_says_what_it_rests_on():
    rep, _ = _verdict(rc.LeastOfD(6, 2), rc.Poisson(5.7, E(1.0)))
    assert "Loynes" in rep.reason and "E[sigma^2] < inf" in rep.reason
    assert "renewal input" in rep.evidence["drift proof"]
    assert "growth per customer" not in rep.evidence  # no test ran
    (c3,) = rep.conditions
    assert c3.role.startswith("necessary and sufficient")


@pytest.mark.parametrize(("inp", "needle"), [
    (rc.Renewal(D.Exponential(1.0), D.Lomax(1.5, mean=2.0)), "infinite second moment"),
    (rc.Periodic([1.0, 3.0], [1.0, 1.0]), "not renewal input"),
    (rc.MarkovModulated([[0.9, 0.1], [0.1, 0.9]], [E(1.0)] * 2, [E(0.5), E(3.5)]),
     "not renewal input"),
], ids=["heavy-tailed service", "periodic", "markov-modulated"])
def test_least_of_d_without_a_theorem_is_undecided_and_says_why(inp, needle):
    system = rc.LeastOfD(4, 2)
    assert _tests(system, inp) == 1  # the growth test
    rep, (verdict, kind, name) = _verdict(system, inp, steps=2**12, replications=4)
    assert system.load(inp) < 1
    assert (verdict, kind, name) == ("undecided", "none", "none"), rep
    assert math.isnan(rep.decided_by.error)
    assert needle in rep.reason and needle in rep.evidence["drift proof"]
    assert "no theorem covers the workload-based LL(d)" in rep.reason
    assert "Bramson" in rep.reason
    assert rep.conditions[0].role == "necessary"
    assert rep.evidence["growth test level"] == pytest.approx(1e-3)  # alpha / 1


def test_least_of_d_without_a_theorem_above_load_one_is_unstable():
    inp = rc.Periodic([5.0, 4.0], [1.0, 1.0])  # 4.5 per unit time on 4 servers
    _, got = _verdict(rc.LeastOfD(4, 2), inp)
    assert got == ("unstable", "theorem", "condition-3-fails")


# -- JSQ and power-of-d on queue lengths ------------------------------------------------------
@pytest.mark.parametrize("system", [rc.JSQ(4), rc.PowerOfD(4, 1), rc.PowerOfD(4, 2),
                                    rc.PowerOfD(4, 4)], ids=repr)
@pytest.mark.parametrize("service", [E(1.0), D.LogNormal(1.0, 4.0), D.Lomax(1.5, mean=1.0),
                                     D.Deterministic(1.0)], ids=repr)
def test_jsq_and_power_of_d_stable_below_load_one_by_bramson(system, service):
    rep, got = _verdict(system, rc.Poisson(3.8, service))
    assert got == ("stable", "theorem", "bramson-jsq"), rep
    assert rep.decided_by.error == 0.0
    assert "Bramson" in rep.reason and "subcritical" in rep.reason
    assert _tests(system, rc.Poisson(3.8, service)) == 0
    (c3,) = rep.conditions
    assert c3.holds is True and "Bramson" in c3.role


@pytest.mark.parametrize("system", [rc.JSQ(4), rc.PowerOfD(5, 2)], ids=repr)
@pytest.mark.parametrize("per_server", [1.0, 1.1])
def test_jsq_and_power_of_d_unstable_at_and_above_load_one(system, per_server):
    inp = rc.Poisson(per_server * system.servers, E(1.0))
    rep, got = _verdict(system, inp)
    assert got == ("unstable", "theorem", "condition-3-fails"), rep


def test_jsq_load_within_rounding_of_one_is_undecided():
    rate = 3 * 0.3 / (0.1 + 0.2)  # 2.9999999999999996
    rep, got = _verdict(rc.JSQ(3), rc.Poisson(rate, E(1.0)))
    assert got == ("undecided", "none", "none")
    assert "within floating-point resolution" in rep.reason


def test_queue_length_policies_refuse_non_poisson_input():
    # the engines (and so the check) take Poisson input only: no verdict to give
    with pytest.raises(ValueError, match="input must be Poisson"):
        ly.check_stability(rc.JSQ(4), rc.Renewal(D.Deterministic(1.0), E(3.0)))


def test_buffered_policies_stay_bounded():
    _, got = _verdict(rc.PowerOfD(4, 2, buffer=2), rc.Poisson(6.0, E(1.0)))
    assert got == ("stable", "theorem", "bounded")


# -- I1F -------------------------------------------------------------------------------------
def test_i1f_below_load_one_is_undecided_and_says_why():
    rep, got = _verdict(rc.I1F(4), rc.Poisson(3.6, E(1.0)))
    assert got == ("undecided", "none", "none")
    assert math.isnan(rep.decided_by.error)
    assert "no stability theorem covers I1F" in rep.reason
    assert "Bramson" in rep.reason and "uniformly random server" in rep.reason
    assert "buffer" in rep.reason  # what would decide
    assert _tests(rc.I1F(4), rc.Poisson(3.6, E(1.0))) == 0


@pytest.mark.parametrize("per_server", [1.0, 1.2])
def test_i1f_unstable_at_and_above_load_one(per_server):
    _, got = _verdict(rc.I1F(4), rc.Poisson(4 * per_server, E(1.0)))
    assert got == ("unstable", "theorem", "condition-3-fails")


# -- JIQ without a buffer -------------------------------------------------------------------
def test_jiq_poisson_stable_below_unstable_at_and_above():
    assert _verdict(rc.JIQ(4), rc.Poisson(3.8, D.LogNormal(1.0, 4.0)))[1] == (
        "stable", "theorem", "jiq-poisson")
    for rate in (4.0, 4.4):
        assert _verdict(rc.JIQ(4), rc.Poisson(rate, E(1.0)))[1] == (
            "unstable", "theorem", "condition-3-fails")


def test_jiq_non_poisson_renewal_rests_on_no_theorem():
    # no theorem covers JIQ with non-Poisson input: whatever the statistical tests say, the
    # verdict never names one
    inp = rc.Renewal(D.Erlang(2, mean=1.0), E(2.0))  # load 0.5 on 4 servers
    rep, (verdict, kind, name) = _verdict(rc.JIQ(4), inp)
    assert (verdict, kind, name) == ("stable", "test", "drain"), rep  # the drain test
    # with a bounded interarrival law the drain test does not apply, and says why
    rep, (verdict, kind, name) = _verdict(rc.JIQ(4), rc.Renewal(D.Deterministic(1.0), E(2.0)))
    assert (verdict, name) == ("undecided", "none"), rep
    assert "interarrival law is bounded" in rep.suggested["drain"]
