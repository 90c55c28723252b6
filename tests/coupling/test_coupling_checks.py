"""Monotonicity / dominance checks, the user-facing strategies, and forward coupling times."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

import recursions as rc
from coupling import _monotone as mono
from coupling._monotone import (
    assert_dominates,
    assert_monotone,
    check_dominates,
    check_monotone,
)
from coupling._times import coupling_time
from coupling.strategies import (
    innovations,
    innovations_for,
    ordered_pairs,
    pairs_for,
    sorted_workloads,
    states_for,
    times,
    uniforms,
    workloads,
)
from recursions.common import as_seed_sequence, child, forward_generator
from recursions.engines import drivers_of
from tests.marks import UNTRUSTED

NOT_MONOTONE = [rc.JpSW(2, 1), rc.JpSW(4, 2), rc.Loss(1), rc.Loss(3), rc.JIQ(2), rc.JIQ(5)]
MONOTONE = [
    rc.JSW(1),
    rc.JSW(4),
    rc.JpSW(3, 0),
    rc.Envelope(rc.JpSW(2, 1)),
    rc.Envelope(rc.JpSW(4, 1)),
    rc.Envelope(rc.JpSW(3, 2)),
    rc.Envelope(rc.JIQ(3)),
    rc.Envelope(rc.Loss(1)),
    rc.Envelope(rc.Loss(3)),
    rc.SplitBound(4, 2),
    rc.SplitBound(2, 1),
    rc.RandomRouting(3),
    rc.LeastOfD(5, 2),
    rc.LeastOfD(4, 4),
]
MMS = rc.Poisson(1.0, rc.dists.Exponential(1.0))  # M/M/2 at load 1/2 per server


def _u(system, uniforms):
    return np.asarray(uniforms)[: system.uniforms] if system.uniforms else None


def _recheck(upper, lower, cx):
    """The counterexample is genuine: valid ordered states, and the images really cross."""
    u = lower.check_state(cx.u)
    v = upper.check_state(cx.v)
    assert np.all(u <= v)
    p = upper.split
    np.testing.assert_array_equal(u[:p], v[:p])
    su = lower.step(u, cx.sigma, cx.tau, _u(lower, cx.uniforms))
    sv = upper.step(v, cx.sigma, cx.tau, _u(upper, cx.uniforms))
    np.testing.assert_array_equal(su, cx.step_u)
    np.testing.assert_array_equal(sv, cx.step_v)
    i = cx.coordinate
    assert su[i] > sv[i] + mono.TOL
    assert np.all(su[:i] <= sv[:i] + mono.TOL)


# -- check_monotone --------------------------------------------------------------------------


@pytest.mark.parametrize("system", NOT_MONOTONE, ids=repr)
def test_counterexample_found_and_genuine(system):
    rep = check_monotone(system, trials=3000)
    assert not rep.monotone
    assert rep.counterexample is not None
    assert rep.trials >= 1 and rep.trials <= 3000
    _recheck(system, system, rep.counterexample)
    text = str(rep)
    assert "NOT monotone" in text and repr(system) in text and "sigma" in text


@pytest.mark.parametrize("system", MONOTONE, ids=repr)
def test_no_counterexample_for_monotone_maps(system):
    rep = check_monotone(system, trials=3000)
    assert rep.monotone, str(rep)
    assert rep.trials == 3000 and rep.counterexample is None
    assert "no counterexample" in str(rep)


def test_math_md_examples_are_reported():
    cx = check_monotone(rc.JpSW(2, 1), trials=10).counterexample
    assert cx.u.tolist() == [0.0, 1.0] and cx.v.tolist() == [0.001, 1.0]
    assert (cx.sigma, cx.tau) == (5.0, 0.0)
    assert cx.step_u.tolist() == [1.0, 5.0] and cx.step_v.tolist() == [0.001, 6.0]
    assert cx.coordinate == 0
    # the JIQ example of docs/theory/kiefer_wolfowitz.md is among the fixed cases too
    u, v, sig, tau, uni = mono._fixed_cases(2, 0, 1)
    row = [i for i in range(len(u)) if u[i].tolist() == [0.0, 10.0] and uni[i, 0] >= 0.5]
    assert row and v[row[0]].tolist() == [1.0, 10.0]
    assert (sig[row[0]], tau[row[0]]) == (5.0, 0.0)
    assert rc.JIQ(2).step(v[row[0]], 5.0, 0.0, u=uni[row[0]]).tolist() == [1.0, 15.0]


@pytest.mark.parametrize("system", NOT_MONOTONE, ids=repr)
def test_random_cases_alone_find_counterexamples(system):
    """Without the fixed worked examples, the generated boundary cases still refute."""
    gen = np.random.default_rng(5)
    u, v, sig, tau, uni = mono._cases(gen, 3000, system.servers, system.split, system.uniforms)
    assert np.all(u <= v) and np.all(np.diff(u, axis=1) >= 0) and np.all(np.diff(v, axis=1) >= 0)
    a, b, found = u.copy(), v.copy(), np.empty(len(u))
    uu = np.ascontiguousarray(uni)
    drivers_of(system).apply_rows(system.params, a, sig, tau, uu, found)
    drivers_of(system).apply_rows(system.params, b, sig, tau, uu, found)
    assert np.any(a > b + mono.TOL)


def test_apply_rows_equals_step():
    system = rc.JIQ(4)
    gen = np.random.default_rng(2)
    u, _, sig, tau, uni = mono._cases(gen, 200, 4, 0, 1)
    a, found = u.copy(), np.empty(200)
    drivers_of(system).apply_rows(system.params, a, sig, tau, np.ascontiguousarray(uni),
                                  found)
    for i in range(200):
        np.testing.assert_array_equal(a[i], system.step(u[i], sig[i], tau[i], u=uni[i]))
        w = u[i]
        assert found[i] == (0.0 if w[0] == 0 else w[min(int(uni[i, 0] * 4), 3)])


def test_check_monotone_is_deterministic():
    r1 = check_dominates(rc.JSW(3), rc.JpSW(3, 1), trials=500, rng=7)
    r2 = check_dominates(rc.JSW(3), rc.JpSW(3, 1), trials=500, rng=7)
    assert r1.trials == r2.trials
    for f in ("u", "v", "step_u", "step_v", "uniforms"):
        np.testing.assert_array_equal(getattr(r1.counterexample, f), getattr(r2.counterexample, f))


def test_check_monotone_bad_arguments():
    with pytest.raises(TypeError, match="system"):
        check_monotone("JSW")
    with pytest.raises(ValueError, match="trials"):
        check_monotone(rc.JSW(2), trials=0)
    with pytest.raises(TypeError, match="trials"):
        check_monotone(rc.JSW(2), trials=2.5)
    with pytest.raises(TypeError, match="rng"):
        check_monotone(rc.JSW(2), rng="seed")


# -- check_dominates -------------------------------------------------------------------------

DOMINATES = [
    (rc.Envelope(rc.JpSW(3, 1)), rc.JpSW(3, 1)),
    (rc.Envelope(rc.JpSW(4, 2)), rc.JpSW(4, 2)),
    (rc.Envelope(rc.JIQ(3)), rc.JIQ(3)),
    (rc.Envelope(rc.Loss(3)), rc.Loss(3)),
    (rc.Envelope(rc.JpSW(3, 1)), rc.Loss(3)),
    (rc.JSW(3), rc.Loss(3)),
    (rc.JSW(3), rc.JSW(3)),
]
# coordinatewise false claims: adding sigma to a higher rank keeps the small coordinate small
NOT_DOMINATES = [
    (rc.JSW(3), rc.JpSW(3, 1)),
    (rc.JpSW(3, 1), rc.JSW(3)),
    (rc.RandomRouting(3), rc.JSW(3)),
    (rc.JpSW(2, 1), rc.Envelope(rc.JpSW(2, 1))),
]


@pytest.mark.parametrize(("upper", "lower"), DOMINATES, ids=repr)
def test_dominance_holds(upper, lower):
    rep = check_dominates(upper, lower, trials=3000)
    assert rep.dominates, str(rep)
    assert rep.trials == 3000 and rep.counterexample is None


@pytest.mark.parametrize(("upper", "lower"), NOT_DOMINATES, ids=repr)
def test_dominance_fails_with_genuine_counterexample(upper, lower):
    rep = check_dominates(upper, lower, trials=3000)
    assert not rep.dominates
    _recheck(upper, lower, rep.counterexample)
    assert "FALSE" in str(rep)


def test_random_routing_does_not_dominate_jsw_coordinatewise():
    # from the same state: JSW fills the small coordinate, random routing may keep it small
    u = v = [0.001, 1.0, 1.0]
    assert rc.JSW(3).step(u, 5.0, 0.0).tolist() == [1.0, 1.0, 5.001]
    assert rc.RandomRouting(3).step(v, 5.0, 0.0, u=0.5).tolist() == [0.001, 1.0, 6.0]
    with pytest.raises(AssertionError, match="dominating"):
        assert_dominates(rc.RandomRouting(3), rc.JSW(3), (u, v), (5.0, 0.0, [0.5]))


def test_check_dominates_bad_arguments():
    with pytest.raises(ValueError, match="servers"):
        check_dominates(rc.JSW(3), rc.JSW(2))
    with pytest.raises(ValueError, match="split"):
        check_dominates(rc.SplitBound(3, 1), rc.JSW(3))
    with pytest.raises(TypeError, match="upper"):
        check_dominates(None, rc.JSW(3))
    with pytest.raises(TypeError, match="lower"):
        check_dominates(rc.JSW(3), 3)


# -- assert_monotone / assert_dominates -------------------------------------------------------


def test_assert_monotone_raises_on_math_md_examples():
    with pytest.raises(AssertionError, match=r"JpSW\(servers=2, p=1\)") as info:
        assert_monotone(rc.JpSW(2, 1), ([0.0, 1.0], [0.001, 1.0]), (5.0, 0.0))
    assert "[1.0, 5.0]" in str(info.value) and "[0.001, 6.0]" in str(info.value)
    with pytest.raises(AssertionError, match="JIQ"):
        assert_monotone(rc.JIQ(2), ([0.0, 10.0], [1.0, 10.0]), (5.0, 0.0, [0.5]))
    with pytest.raises(AssertionError, match="Loss"):
        assert_monotone(rc.Loss(1), ([0.0], [1e-9]), (5.0, 0.0))


def test_assert_monotone_passes():
    assert_monotone(rc.JSW(2), ([0.0, 1.0], [0.001, 1.0]), (5.0, 0.0))
    assert_monotone(rc.JIQ(2), ([0.0, 10.0], [1.0, 10.0]), (5.0, 0.0, [0.2]))  # rank 0
    assert_monotone(rc.SplitBound(3, 1), ([0.0, 1.0, 2.0], [0.0, 1.5, 2.0]), (5.0, 1.0))
    assert_dominates(rc.Envelope(rc.JIQ(2)), rc.JIQ(2), ([0.0, 10.0], [1.0, 10.0]),
                     (5.0, 0.0, [0.5]))


def test_assert_monotone_bad_pairs():
    with pytest.raises(ValueError, match="u ≺ v"):
        assert_monotone(rc.JSW(2), ([0.0, 2.0], [0.0, 1.0]), (1.0, 1.0))
    with pytest.raises(ValueError, match="sorted"):
        assert_monotone(rc.JSW(2), ([1.0, 0.0], [1.0, 2.0]), (1.0, 1.0))
    with pytest.raises(ValueError, match="loss block"):
        assert_monotone(rc.SplitBound(3, 1), ([0.0, 1.0, 2.0], [0.5, 1.0, 2.0]), (1.0, 0.0))
    with pytest.raises(ValueError, match="uniform"):
        assert_monotone(rc.JIQ(2), ([0.0, 1.0], [0.0, 1.0]), (1.0, 0.0))
    with pytest.raises(ValueError, match="innovation"):
        assert_monotone(rc.JSW(2), ([0.0, 1.0], [0.0, 1.0]), (1.0,))
    with pytest.raises(TypeError, match="pair"):
        assert_monotone(rc.JSW(2), [0.0, 1.0, 2.0], (1.0, 0.0))
    with pytest.raises(ValueError, match="servers"):
        assert_dominates(rc.JSW(3), rc.JSW(2), ([0.0, 1.0], [0.0, 1.0]), (1.0, 0.0))


# -- strategies: the way a user writes property tests -----------------------------------------

JSW3 = rc.JSW(3)


@given(pairs_for(JSW3), innovations_for(JSW3))
def test_user_style_property_jsw(pair, innovation):
    assert_monotone(JSW3, pair, innovation)


@pytest.mark.parametrize("system", [rc.Envelope(rc.JIQ(3)), rc.SplitBound(4, 2)], ids=repr)
@settings(max_examples=60)
@given(data=st.data())
def test_user_style_property_other_monotone(system, data):
    assert_monotone(system, data.draw(pairs_for(system)), data.draw(innovations_for(system)))


@pytest.mark.parametrize("system", [rc.JpSW(3, 1), rc.Loss(2), rc.JIQ(3)], ids=repr)
def test_strategies_find_counterexamples(system):
    def violates(case):
        try:
            assert_monotone(system, *case)
        except AssertionError:
            return True
        return False

    find(st.tuples(pairs_for(system), innovations_for(system)), violates,
         settings=settings(database=None, max_examples=2000))


@given(st.data())
def test_strategies_give_valid_values(data):
    system = data.draw(st.sampled_from([rc.JSW(3), rc.SplitBound(4, 1), rc.JIQ(2)]))
    system.check_state(data.draw(states_for(system)))
    u, v = data.draw(pairs_for(system))
    system.check_state(u)
    system.check_state(v)
    assert np.all(u <= v)
    inn = data.draw(innovations_for(system))
    assert len(inn) == (3 if system.uniforms else 2)
    assert inn[0] >= 0 and inn[1] >= 0
    if system.uniforms:
        assert np.all((inn[2] >= 0) & (inn[2] < 1)) and inn[2].size == system.uniforms
    assert data.draw(workloads()) >= 0
    w = data.draw(sorted_workloads(2))
    assert w[0] <= w[1]
    u, v = data.draw(ordered_pairs(3, split=1))
    assert u[0] == v[0] and np.all(u <= v)
    assert len(data.draw(innovations(2))) == 3
    assert 0 <= data.draw(times(5.0)) <= 5.0
    assert 0 <= data.draw(uniforms(3)) < 1


def test_single_value_strategies_hit_the_boundaries():
    cfg = settings(database=None, max_examples=2000)
    assert find(times(), lambda t: t == 0.0, settings=cfg) == 0.0
    assert find(times(), lambda t: t == 1e-9, settings=cfg) == 1e-9
    below = float(np.nextafter(1 / 3, 0.0))
    assert find(uniforms(3), lambda u: u == below, settings=cfg) == below
    assert find(uniforms(3), lambda u: u == 2 / 3, settings=cfg) == 2 / 3


def test_strategies_bad_arguments():
    with pytest.raises(ValueError, match="servers"):
        sorted_workloads(0)
    with pytest.raises(ValueError, match="split"):
        ordered_pairs(3, split=3)
    with pytest.raises(TypeError, match="uniforms"):
        innovations(1.5)
    with pytest.raises(TypeError, match="system"):
        states_for("JSW")
    with pytest.raises(ValueError, match="max_value must be a finite number > 0"):
        times(0.0)
    with pytest.raises(ValueError, match="servers must be an integer >= 1"):
        uniforms(0)


# -- coupling_time -----------------------------------------------------------------------------


def _draws(system, rng, replications, r, n):
    """Replication r's draws, derived independently from the documented seeding."""
    sd = as_seed_sequence(rng).spawn(replications)[r]
    sig, tau = MMS.forward(child(sd, 0)).next(n)
    return sig, tau, system.innovations(forward_generator(sd, 1), n)


@pytest.mark.parametrize("system", [rc.JSW(1), rc.JSW(2), rc.JIQ(2)], ids=repr)
def test_coupling_time_matches_step_by_step(system):
    S = system.servers
    w0, w1 = np.zeros(S), np.array([5.0, 10.0][-S:])
    R, seed = 25, 3
    inp = rc.Poisson(0.5, rc.dists.Exponential(1.0)) if S == 1 else MMS
    res = coupling_time(system, inp, w0, w1, rng=seed, replications=R)
    assert res.censored == 0 and res.coupled_fraction == 1.0
    for r in range(R):
        T = int(res.times[r])
        sd = as_seed_sequence(seed).spawn(R)[r]
        sig, tau = inp.forward(child(sd, 0)).next(T + 1)
        uni = system.innovations(forward_generator(sd, 1), T + 1)
        lo, up = w0.copy(), w1.copy()
        first_equal = first_empty = None
        for n in range(T + 1):
            if first_equal is None and np.array_equal(lo, up):
                first_equal = n
            if first_empty is None and not up.any():
                first_empty = n
            u = uni[n] if system.uniforms else None
            lo, up = system.step(lo, sig[n], tau[n], u), system.step(up, sig[n], tau[n], u)
        assert first_equal == T
        if isinstance(system, rc.JSW):
            # docs/theory/exact_sampling.md: from w0 ≺ w1 the JSW copies
            # coincide once an arrival finds the larger
            # copy empty; with one server exactly then, with S >= 2 possibly earlier
            assert first_empty is None or first_empty >= T
            if S == 1:
                assert first_empty == T


def test_jsw_coupling_can_precede_an_empty_upper_copy():
    """The theory gives an upper bound only: with two servers the copies may meet earlier.

    Upper (5, 10), lower (0, 0); sigma 0, tau 5 gives (0, 5) and (0, 0); sigma 20, tau 5 gives
    R(20, 5) - 5 = (0, 15) and R(20, 0) - 5 = (0, 15): coupled at n = 2, the upper copy never
    empty at an arrival.
    """
    inp = rc.Periodic(sigma=[0.0, 20.0], tau=[5.0, 5.0], phase=0)
    res = coupling_time(rc.JSW(2), inp, [0.0, 0.0], [5.0, 10.0], cap=100)
    assert res.times.tolist() == [2]
    sig, tau = inp.sample(2)
    states = [np.array([5.0, 10.0])]
    for n in range(2):
        states.append(rc.JSW(2).step(states[-1], sig[n], tau[n]))
    assert [w.tolist() for w in states] == [[5.0, 10.0], [0.0, 5.0], [0.0, 15.0]]
    assert rc.iterate(rc.JSW(2), [0.0, 0.0], sig, tau).tolist() == [0.0, 15.0]


def test_jsw_coupling_time_is_first_empty_arrival_of_upper_copy_mm2():
    """M/M/2 from (0, 0) and (5, 10): T <= first n with the upper copy all zeros, via iterate."""
    system = rc.JSW(2)
    res = coupling_time(system, MMS, [0.0, 0.0], [5.0, 10.0], rng=11, replications=10)
    for r in range(10):
        T = int(res.times[r])
        sig, tau, _ = _draws(system, 11, 10, r, T + 200)
        states = [np.array([5.0, 10.0])]
        for n in range(T + 200):
            states.append(rc.iterate(system, states[-1], sig[n : n + 1], tau[n : n + 1]))
        empty = [n for n, w in enumerate(states) if not w.any()]
        assert empty and T <= empty[0]
        low = rc.iterate(system, [0.0, 0.0], sig[:T], tau[:T])
        np.testing.assert_array_equal(low, states[T])
        if T > 0:
            assert not np.array_equal(rc.iterate(system, [0.0, 0.0], sig[: T - 1],
                                                 tau[: T - 1]), states[T - 1])


@UNTRUSTED
def test_coupling_time_follows_simulate_paths():
    res = coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [5.0, 10.0], rng=4, replications=3)
    steps = int(res.times.max()) + 1
    pa = rc.simulate(rc.JSW(2), MMS, steps=steps, w0=[0.0, 0.0], rng=4, replications=3,
                     record=True).path
    # the transient from a loaded state, on purpose: only the path is used, not the estimates
    with pytest.warns(rc.SimulationWarning, match="trend downward"):
        pb = rc.simulate(rc.JSW(2), MMS, steps=steps, w0=[5.0, 10.0], rng=4, replications=3,
                         record=True).path
    for r in range(3):
        eq = np.flatnonzero((pa[r] == pb[r]).all(axis=1))
        assert eq[0] == res.times[r]


def test_coupling_time_far_apart_stable():
    res = coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [60.0, 120.0], rng=2, replications=20)
    assert res.coupled_fraction == 1.0 and res.censored == 0
    assert np.all(res.times > 0)
    assert res.mean.value > 0 and res.mean.se > 0
    assert res.quantile(0.0) == res.times.min() and res.quantile(1.0) == res.times.max()
    assert res.replications == 20
    assert "coupled" in str(res)


def test_coupling_time_censoring():
    res = coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [60.0, 120.0], rng=2, cap=3,
                        replications=4)
    assert res.censored == 4 and res.coupled_fraction == 0.0
    assert np.all(res.times == -1) and res.cap == 3
    assert math.isnan(res.mean.value) and math.isinf(res.quantile(0.5))
    np.testing.assert_array_equal(res.quantile([0.0, 1.0]), [np.inf, np.inf])


def test_coupling_time_reproducible_and_trivial():
    a = coupling_time(rc.JIQ(3), MMS, [0.0] * 3, [1.0, 2.0, 9.0], rng=5, replications=6)
    b = coupling_time(rc.JIQ(3), MMS, [0.0] * 3, [1.0, 2.0, 9.0], rng=5, replications=6)
    np.testing.assert_array_equal(a.times, b.times)
    same = coupling_time(rc.JSW(2), MMS, [1.0, 2.0], [1.0, 2.0], replications=3)
    assert same.times.tolist() == [0, 0, 0]


def test_coupling_time_bad_input():
    with pytest.raises(ValueError, match="w0"):
        coupling_time(rc.JSW(2), MMS, [2.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="w1"):
        coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [-1.0, 0.0])
    with pytest.raises(ValueError, match="w0"):
        coupling_time(rc.JSW(2), MMS, [0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="cap"):
        coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [1.0, 1.0], cap=0)
    with pytest.raises(ValueError, match="replications"):
        coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [1.0, 1.0], replications=0)
    with pytest.raises(TypeError, match="input"):
        coupling_time(rc.JSW(2), "poisson", [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="system"):
        coupling_time(None, MMS, [0.0, 0.0], [1.0, 1.0])
    res = coupling_time(rc.JSW(2), MMS, [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="q"):
        res.quantile(1.5)
