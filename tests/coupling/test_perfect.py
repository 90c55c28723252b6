"""Exact stationary sampling against closed forms and long forward simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import coupling as cp
import loynes as ly
import recursions as rc

D = rc.dists
Z = 4.0


def _prop_close(x, p):
    assert abs(x.mean() - p) <= Z * math.sqrt(p * (1 - p) / x.size) + 1e-12, (x.mean(), p)


@pytest.mark.parametrize(("servers", "rho"), [(1, 0.6), (2, 0.8), (4, 0.75)])
def test_exact_mms_matches_erlang_c(servers, rho):
    lam = rho * servers
    ps = cp.perfect_sample(rc.JSW(servers), rc.Poisson(lam, D.Exponential(1.0)), 1500,
                           rng=10 + servers, method="dominated")
    assert ps.method == "dominated"
    w1 = ps.samples[:, 0]
    _prop_close(w1 > 0, ly.erlang_c(servers, lam))
    # given a wait, W(1) is exponential with rate S mu - lambda
    pos = w1[w1 > 0]
    assert stats.kstest(pos, "expon", args=(0, 1 / (servers - lam))).pvalue > 1e-3
    assert np.all(np.diff(ps.samples, axis=1) >= 0)


def test_exact_mds_matches_embedded_chain():
    servers, lam = 2, 1.6
    p_wait, mean_wait = ly.md_c_waiting(servers, lam, 1.0)
    ps = cp.perfect_sample(rc.JSW(servers), rc.Poisson(lam, D.Deterministic(1.0)), 2000, rng=4,
                           method="dominated")
    w1 = ps.samples[:, 0]
    _prop_close(w1 > 0, p_wait)
    assert abs(w1.mean() - mean_wait) <= Z * w1.std() / math.sqrt(w1.size)


def test_exact_lognormal_matches_forward_simulation():
    servers, lam, law = 3, 2.4, D.LogNormal(1.0, 2.0)
    inp = rc.Poisson(lam, law)
    ps = cp.perfect_sample(rc.JSW(servers), inp, 2000, rng=6)
    assert ps.method == "dominated"  # heavy tail: the reversed M/G/1 bound is the default
    fwd = rc.simulate(rc.JSW(servers), inp, steps=1_000_000, warmup=20_000, replications=2,
                      rng=6)
    w1 = ps.samples[:, 0]
    se = math.hypot(w1.std() / math.sqrt(w1.size), fwd.mean_wait.se)
    assert abs(w1.mean() - fwd.mean_wait.value) <= Z * se
    pw = (w1 > 0).mean()
    se = math.hypot(math.sqrt(pw * (1 - pw) / w1.size), fwd.p_wait.se)
    assert abs(pw - fwd.p_wait.value) <= Z * se


@pytest.mark.parametrize(
    ("servers", "lam", "law"),
    [(2, 1.5, D.Exponential(1.0)), (3, 2.5, D.LogNormal(1.0, 4.0)), (4, 3.0, D.Deterministic(1.0))],
    ids=["M/M/2/2", "M/LN/3/3", "M/D/4/4"],
)
def test_exact_loss_matches_erlang_b(servers, lam, law):
    ps = cp.perfect_sample(rc.Loss(servers), rc.Poisson(lam, law), 2000, rng=2)
    assert ps.method == "renovation"
    # an arrival is lost iff every server is busy: W(1) > 0
    _prop_close(ps.samples[:, 0] > 0, ly.erlang_b(servers, lam * law.mean))


def test_exact_loss_renewal_bounded_service_matches_forward():
    inp = rc.Renewal(D.Erlang(2, 2.0), D.Uniform(0.0, 2.0))
    ps = cp.perfect_sample(rc.Loss(2), inp, 3000, rng=8)
    fwd = rc.simulate(rc.Loss(2), inp, steps=500_000, warmup=1_000, rng=8)
    x = (ps.samples[:, 0] > 0).astype(float)
    se = math.hypot(x.std() / math.sqrt(x.size), fwd.p_loss.se)
    assert abs(x.mean() - fwd.p_loss.value) <= Z * se


def test_exact_monotone_envelope_of_loss_matches_forward():
    system, inp = rc.Envelope(rc.Loss(2)), rc.Poisson(1.5, D.Uniform(0.0, 2.0))
    ps = cp.perfect_sample(system, inp, 3000, rng=9)
    assert ps.method == "monotone"
    fwd = rc.simulate(system, inp, steps=500_000, warmup=1_000, rng=9)
    tot = ps.samples.sum(axis=1)
    se = math.hypot(tot.std() / math.sqrt(tot.size), fwd.mean_workload.se)
    assert abs(tot.mean() - fwd.mean_workload.value) <= Z * se


@pytest.mark.parametrize(
    ("system", "inp", "key", "starts"),
    [
        (rc.JSW(3), rc.Poisson(2.4, D.Exponential(1.0)), "start_time", (0.5, 40.0)),
        (rc.Loss(2), rc.Renewal(D.Erlang(2, 2.0), D.Uniform(0.0, 2.0)), "start_customers",
         (4, 512)),
        (rc.Envelope(rc.Loss(2)), rc.Poisson(1.5, D.Uniform(0.0, 2.0)), "start_customers",
         (2, 1024)),
    ],
    ids=["dominated", "renovation", "monotone"],
)
def test_samples_do_not_depend_on_the_search_start(system, inp, key, starts):
    kw = {"method": "dominated"} if isinstance(system, rc.JSW) else {}
    a = cp.perfect_sample(system, inp, 30, rng=5, **{key: starts[0]}, **kw)
    b = cp.perfect_sample(system, inp, 30, rng=5, **{key: starts[1]}, **kw)
    # the same point; only floating-point rounding along the two runs may differ
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-12, atol=1e-12)


def test_unstable_and_unsupported_raise():
    with pytest.raises(ValueError, match="not stable"):
        cp.perfect_sample(rc.JSW(2), rc.Poisson(2.5, D.Exponential(1.0)), 3)
    with pytest.raises(ValueError, match="light tail"):
        cp.perfect_sample(rc.JSW(2), rc.Renewal(D.Erlang(2, 2.0), D.LogNormal(1.0, 1.0)), 3)
    # J2SW at lam E[sigma] = 1: Theorem 1 holds, but the bounding processes need it below 1
    with pytest.raises(ValueError, match="bounding processes need lam E"):
        cp.perfect_sample(rc.JpSW(2, 1), rc.Poisson(1.0, D.Exponential(1.0)), 3)
    with pytest.raises(ValueError, match="no exact method"):
        cp.perfect_sample(rc.LeastOfD(3, 2), rc.Poisson(1.0, D.Exponential(1.0)), 3)
    with pytest.raises(ValueError, match="bounded service"):
        cp.perfect_sample(rc.Loss(2), rc.Renewal(D.Erlang(2, 2.0), D.Exponential(1.0)), 3)
    with pytest.raises(ValueError, match="size"):
        cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, D.Exponential(1.0)), 0)


def test_cap_stops_the_search():
    with pytest.raises(cp.CouplingNotReached, match=r"within time 0\.2 back; raise cap_time"):
        cp.perfect_sample(rc.JSW(10), rc.Poisson(9.8, D.Exponential(1.0)), 1, rng=1,
                          start_time=0.1, cap_time=0.2, method="dominated")
    with pytest.raises(cp.CouplingNotReached, match="within 1 customers back; raise cap_cust"):
        cp.perfect_sample(rc.Envelope(rc.Loss(2)), rc.Poisson(4.0, D.Uniform(1.0, 2.0)), 1,
                          rng=1, start_customers=1, cap_customers=1)


@pytest.mark.parametrize(
    ("system", "inp", "method", "wrong", "unit"),
    [
        (rc.JSW(3), rc.Poisson(2.4, D.Exponential(1.0)), "dominated", "cap_customers", "time"),
        (rc.JSW(3), rc.Poisson(2.4, D.Exponential(1.0)), None, "start_customers", "time"),
        (rc.Loss(2), rc.Poisson(1.0, D.Exponential(1.0)), None, "cap_customers", "time"),
        (rc.Loss(2), rc.Renewal(D.Erlang(2, 2.0), D.Uniform(0.0, 2.0)), None, "cap_time",
         "customers"),
        (rc.Envelope(rc.Loss(2)), rc.Poisson(1.5, D.Uniform(0.0, 2.0)), None, "start_time",
         "customers"),
        (rc.JIQ(3), rc.Poisson(0.8, D.Exponential(1.0)), None, "cap_customers", "time"),
        (rc.JIQ(3), rc.Renewal(D.Erlang(2, 1.6), D.Exponential(1.0)), None, "cap_time",
         "customers"),
    ],
    ids=["dominated", "vacation-or-cyclic", "renovation-poisson", "renovation-bounded",
         "monotone", "bounding", "bounding-walk"],
)
def test_a_horizon_in_the_wrong_unit_is_refused(system, inp, method, wrong, unit):
    kw = {} if method is None else {"method": method}
    with pytest.raises(ValueError, match=f"counts its backward horizons in {unit}: give "
                                         f"start_{unit}= and cap_{unit}=, not {wrong}="):
        cp.perfect_sample(system, inp, 1, **{wrong: 5}, **kw)


def test_horizons_are_validated():
    inp = rc.Poisson(2.4, D.Exponential(1.0))
    with pytest.raises(ValueError, match="need start_time <= cap_time"):
        cp.perfect_sample(rc.JSW(3), inp, 1, start_time=2.0, cap_time=1.0)
    with pytest.raises(ValueError, match="cap_time must be a finite number > 0"):
        cp.perfect_sample(rc.JSW(3), inp, 1, cap_time=0.0)
    with pytest.raises(TypeError, match="start_customers must be an integer"):
        cp.perfect_sample(rc.Envelope(rc.Loss(2)), rc.Poisson(1.5, D.Uniform(0.0, 2.0)), 1,
                          start_customers=2.5)
    with pytest.raises(TypeError, match="start"):  # the old unit-less keyword is gone
        cp.perfect_sample(rc.JSW(3), inp, 1, start=1.0)


@pytest.mark.parametrize(
    "law",
    [D.Exponential(2.0), D.Erlang(3, 1.0), D.HyperExponential.balanced(1.0, 4.0),
     D.LogNormal(1.0, 1.0), D.Uniform(0.5, 2.0), D.Empirical([1.0, 3.0], [0.5, 0.5]),
     D.Coxian([2.0, 1.0, 3.0], [0.5, 0.7]), D.Lomax(4.0, 3.0)],
    ids=lambda law: type(law).__name__,
)
def test_size_biased_mean(law):
    x = cp.size_biased_sample(law, np.random.default_rng(3), 40_000)
    assert np.all(x >= 0)
    second = law.var + law.mean**2
    target = second / law.mean
    # the size-biased law's variance is E[s^3]/E[s] - target^2; use the sample's
    assert abs(x.mean() - target) <= Z * x.std() / math.sqrt(x.size)


def test_reversed_queue_legs_and_equilibrium():
    law = D.Exponential(1.0)
    one = cp.ReversedQueue(0.6, law, np.random.default_rng(2))
    two = cp.ReversedQueue(0.6, law, np.random.default_rng(2))
    t1, s1 = one.advance(200.0)
    ta, sa = two.advance(70.0)
    tb, sb = two.advance(200.0)
    np.testing.assert_array_equal(t1, np.concatenate((ta, tb)))
    np.testing.assert_array_equal(s1, np.concatenate((sa, sb)))
    assert one.workload == pytest.approx(two.workload)
    # M/G/infinity: customers present at time 0 ~ Poisson(a); forward arrivals at rate lambda
    n0 = [cp.ReversedQueue(2.0, D.Deterministic(1.5), np.random.default_rng(k), "infinite").number
          for k in range(2000)]
    assert abs(np.mean(n0) - 3.0) <= Z * math.sqrt(3.0 / 2000)
    q = cp.ReversedQueue(2.0, D.Deterministic(1.5), np.random.default_rng(7), "infinite")
    t, s = q.advance(5000.0)
    assert abs(t.size / 5000.0 - 2.0) <= Z * math.sqrt(2.0 / 5000.0)
    assert np.all(s == 1.5)


def test_size_biased_numerical_inversion_matches_closed_form():
    # the generic inversion (used for scipy laws) against the gamma closed form
    import scipy.stats

    law = rc.dists.as_law(scipy.stats.gamma(3.0, scale=0.5))
    x = cp.size_biased_sample(law, np.random.default_rng(1), 3000)
    # size-biased Gamma(3, 0.5) is Gamma(4, 0.5)
    assert stats.kstest(x, "gamma", args=(4.0, 0, 0.5)).pvalue > 1e-3


def test_renovation_index_against_brute_force():
    gen = np.random.default_rng(12)
    sig = gen.uniform(0, 2.0, 400)
    tau = gen.exponential(0.8, 400)
    T = np.concatenate(([0.0], np.cumsum(tau)[:-1]))
    got = set(cp.renovation_index(sig, tau, bound=2.0).tolist())
    want = {i for i in range(1, 400) if T[i] >= 2.0
            and all(sig[j] <= T[i] - T[j] for j in range(i))}
    assert got == want and len(want) > 0
