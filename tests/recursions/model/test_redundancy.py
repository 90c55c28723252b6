"""Cancel-on-completion redundancy (docs/theory/redundancy.md): kernel, heap, mean field."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coupling as cp
import recursions as rc
from coupling.strategies import sorted_workloads
from recursions.engines import _heap as hp
from recursions.engines import drivers_of
from recursions.model.redundancy import JobClass, Redundancy, free_system_sample, free_system_work
from tests import naive
from tests.marks import UNTRUSTED

D = rc.dists
EXP = D.Exponential(1.0)


def _row(system, gen):
    return system.random_innovations(gen, 1)[0]


def test_paper_worked_example():
    sys3 = Redundancy(3, [JobClass(3, 2, EXP)])
    # sorted (3, 5, 6); Floyd with these uniforms picks ranks (0, 1, 2): workloads 3, 5, 6
    # get sizes 4, 7, 3 -- the paper's (workload, size) pairs (5, 7), (3, 4), (6, 3)
    u = np.array([0.0, 0.0, 0.99, 0.99, 4.0, 7.0, 3.0])
    w = np.array([3.0, 5.0, 6.0])
    out, t = drivers_of(sys3).step_once(sys3.params, w, 0.0, 0.0, u)
    assert t == 9.0
    assert out.tolist() == [7.0, 9.0, 9.0]
    assert naive.redundancy(w, 0.0, u, [(3, 2, 1.0)], np.inf) == ([7.0, 9.0, 9.0], 9.0)


SYSTEMS = [
    Redundancy(5, [JobClass(3, 2, EXP)]),
    Redundancy(6, [JobClass(2, 1, D.Uniform(0.0, 2.0), weight=2.0),
                   JobClass(4, 3, D.Deterministic(1.0), identical=True)]),
    Redundancy(4, [JobClass(4, 1, D.HyperExponential([0.5, 0.5], [2.0, 0.5]))], frame=6.0),
    Redundancy(3, [JobClass(1, 1, EXP), JobClass(3, 3, EXP)]),
]


@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
@settings(max_examples=150, deadline=None)
@given(data=st.data(), tau=st.floats(0.0, 5.0), seed=st.integers(0, 2**32 - 1))
def test_kernel_equals_naive(system, data, tau, seed):
    w = data.draw(sorted_workloads(system.servers))
    u = _row(system, np.random.default_rng(seed))
    got = system.step(w, 0.0, tau, u)
    name, params = naive.describe(system)
    want, t = naive.apply(name, params, w, 0.0, tau, u)
    np.testing.assert_array_equal(got, want)
    _, t2 = drivers_of(system).step_once(system.params, np.array(w, dtype=float), 0.0,
                                         tau, u)
    assert t2 == t


@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
def test_monotone_in_w(system):
    rep = cp.check_monotone(system, trials=20_000, rng=2)
    assert rep.counterexample is None


@settings(max_examples=200, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), bump=st.floats(0.0, 5.0))
def test_monotone_in_sizes(data, seed, bump):
    system = SYSTEMS[0]
    w = data.draw(sorted_workloads(system.servers))
    u = _row(system, np.random.default_rng(seed))
    v = u.copy()
    v[1 + system.dmax + int(seed % system.dmax)] += bump
    assert np.all(system.step(w, 0.0, 0.5, u) <= system.step(w, 0.0, 0.5, v) + 1e-12)


@pytest.mark.parametrize("d,k", [(3, 1), (3, 2), (4, 2)])
def test_no_cancellation_dominates(d, k):
    law = D.HyperExponential([0.5, 0.5], [2.0, 0.5])
    up = Redundancy(6, [JobClass(d, d, law)])
    lo = Redundancy(6, [JobClass(d, k, law)])
    assert cp.check_dominates(up, lo, trials=20_000, rng=3).dominates
    assert not cp.check_dominates(lo, up, trials=20_000, rng=3).dominates


@pytest.mark.parametrize("d,k", [(2, 1), (3, 2)])
def test_exponential_load_is_work_conserving(d, k):
    n, lam = 10, 0.7 / k
    s = Redundancy(n, [JobClass(d, k, EXP)])
    rho = lam * k * 1.0
    for engine in ("dense", "heap"):
        res = rc.simulate(s, s.poisson(lam * n), steps=200_000, warmup=10_000, rng=1,
                          engine=engine, profile_every=1)
        assert res.engine == engine and res.p_wait is None
        assert abs(res.busy_fraction.value - rho) < 5 * res.busy_fraction.se + 0.005


def test_heap_agrees_with_dense():
    s = Redundancy(40, [JobClass(3, 2, D.Uniform(0.0, 2.0))])
    kw = dict(steps=200_000, warmup=20_000, replications=2, profile_every=1)
    a = rc.simulate(s, s.poisson(0.3 * 40), rng=1, engine="dense", **kw)
    b = rc.simulate(s, s.poisson(0.3 * 40), rng=2, engine="heap", **kw)
    for name in ("busy_fraction", "mean_response", "mean_workload"):
        x, y = getattr(a, name), getattr(b, name)
        assert abs(x.value - y.value) < 5 * np.hypot(x.se, y.se), (name, x, y)
    assert hp.policy_of(s) == (hp.REDUNDANCY, 3)


def test_free_system_bounds():
    law = D.Uniform(0.0, 2.0)
    s = Redundancy(50, [JobClass(3, 2, law)])
    a, se = free_system_work(s, 400_000, rng=4)
    # 1 / (d E xi) <= critical rate <= 1 / (k E xi) ... here a in [k E xi min, d E xi]
    assert se < 0.01
    assert a <= 3 * law.mean  # i.e. the critical rate 1/a is at least 1/(d E xi)


def test_free_system_sample_is_the_series_behind_free_system_work():
    s = Redundancy(20, [JobClass(2, 1, D.Uniform(0.0, 2.0))])
    x = free_system_sample(s, 10_000, warmup=500, rng=3)
    assert x.shape == (10_000,) and np.all(np.isfinite(x))
    a, se = free_system_work(s, 10_000, warmup=500, batches=20, rng=3)
    assert float(x.mean()) == a
    means = np.array([b.mean() for b in np.array_split(x, 20)])
    assert se == pytest.approx(means.std(ddof=1) / np.sqrt(20), rel=1e-12)
    # the system is checked first, then the counts, in both
    for f in (free_system_sample, free_system_work):
        with pytest.raises(TypeError, match="Redundancy system"):
            f(rc.JSW(2), 0)
    for kw, msg in (({"jobs": 0}, "jobs"), ({"warmup": -1}, "warmup"), ({"chunk": 0}, "chunk")):
        with pytest.raises(ValueError, match=msg):
            free_system_sample(s, **{"jobs": 100, **kw})


@pytest.mark.parametrize("bad,err", [
    (lambda: JobClass(2, 0, EXP), "k must be"),
    (lambda: JobClass(2, 3, EXP), "k must be"),
    (lambda: JobClass(2, 1, EXP, weight=-1.0), "weight"),
    (lambda: Redundancy(2, [JobClass(3, 1, EXP)]), "exceeds servers"),
    (lambda: Redundancy(3, [JobClass(2, 1, EXP, weight=0.0)]), "weights"),
    (lambda: JobClass(2, 1, D.Lomax(0.9, 1.0)), "mean"),
    (lambda: JobClass(2, 1, joint=lambda g, n: np.ones((n, 3))), "shape"),
    (lambda: JobClass(2, 1, joint=lambda g, n: -np.ones((n, 2))), "non-negative"),
    (lambda: Redundancy(3, [JobClass(2, 1, EXP)], frame=0.0), "frame"),
    (lambda: JobClass(2, 1, EXP, mean_size=2.0), "mean_size is given with joint only"),
    (lambda: JobClass(2, 1, joint=lambda g, n: np.ones((n, 2)), mean_size=0.0), "mean_size"),
])
def test_bad_inputs(bad, err):
    with pytest.raises(ValueError, match=err):
        bad()


def test_joint_sampler_runs():
    c = JobClass(2, 1, joint=lambda g, n: np.column_stack([g.exponential(1.0, n)] * 2))
    s = Redundancy(4, [c])
    res = rc.simulate(s, s.poisson(2.0), steps=20_000, rng=1)
    assert 0 < res.busy_fraction.value < 1


def _twin_exponentials(g, n):
    return np.column_stack([g.exponential(1.0, n)] * 2)


def test_joint_mean_size_is_an_estimate_seeded_by_rng():
    a, b = JobClass(2, 1, joint=_twin_exponentials), JobClass(2, 1, joint=_twin_exponentials)
    assert a.mean_size == b.mean_size and a.mean_size_se == b.mean_size_se > 0  # default rng=1
    c = JobClass(2, 1, joint=_twin_exponentials, rng=7)
    assert c.mean_size != a.mean_size
    for cls in (a, c):  # the components of a job are equal: the error is over jobs
        assert abs(cls.mean_size - 1.0) < 4 * cls.mean_size_se
        assert cls.mean_size_se == pytest.approx(1.0 / np.sqrt(20_000), rel=0.1)
    given = JobClass(2, 1, joint=_twin_exponentials, mean_size=1.0)
    assert (given.mean_size, given.mean_size_se) == (1.0, 0.0)
    assert (JobClass(2, 1, EXP).mean_size, JobClass(2, 1, EXP).mean_size_se) == (1.0, 0.0)
    assert a == c  # the seed is not part of the class


def test_an_estimated_mean_size_makes_the_d_bound_a_test():
    import loynes as ly

    s = Redundancy(4, [JobClass(2, 1, joint=_twin_exponentials)])
    rep = ly.check_stability(s, s.poisson(0.5 * 4))  # d-bound: 0.5 * 2 * ~1 > 1: undecided
    assert rep.condition("(d-bound)").se > 0
    low = ly.check_stability(s, s.poisson(0.2 * 4))
    assert low.verdict == "stable" and low.decided_by.name == "d-bound"
    assert (low.decided_by.kind, low.decided_by.error) == ("test", low.alpha)
    exact = Redundancy(4, [JobClass(2, 1, joint=_twin_exponentials, mean_size=1.0)])
    rep = ly.check_stability(exact, exact.poisson(0.2 * 4))
    assert rep.decided_by.kind == "theorem" and rep.condition("(d-bound)").se == 0


from loynes._redundancy_theory import (  # noqa: E402
    d_monotonicity,
    redundancy_critical_rate,
    redundancy_fixed_point,
)


@pytest.mark.parametrize("d,lam", [(2, 0.7), (3, 0.5)])
def test_mean_field_exponential_d1_closed_form(d, lam):
    fp = redundancy_fixed_point(JobClass(d, 1, EXP), lam)
    w = np.linspace(0.0, 4.0, 17)
    exact = lam * (lam + (1 - lam) * np.exp((d - 1) * w)) ** (-d / (d - 1))
    assert np.max(np.abs(fp.profile(w) - exact)) < 1e-4
    assert abs(fp.load - lam) < 1e-4


@pytest.mark.parametrize("law,d,k,lam", [
    (D.Deterministic(1.0), 2, 1, 0.6),
    (D.Uniform(0.0, 2.0), 3, 2, 0.35),
    (D.HyperExponential([0.5, 0.5], [2.0, 2.0 / 3.0]), 2, 1, 0.5),
], ids=["det", "unif", "h2"])
def test_finite_n_matches_mean_field(law, d, k, lam):
    n = 1000
    c = JobClass(d, k, law)
    fp = redundancy_fixed_point(c, lam, wmax=40.0)
    s = Redundancy(n, [c])
    res = rc.simulate(s, s.poisson(lam * n), steps=400_000, warmup=100_000, rng=7)
    assert res.engine == "heap"
    # O(1/n) bias allowance
    assert abs(res.busy_fraction.value - fp.load) < 4 * res.busy_fraction.se + 0.01
    assert abs(res.mean_response.value - fp.mean_response) < (
        4 * res.mean_response.se + 0.02 * fp.mean_response)


def test_critical_rate_free_system_vs_mean_field():
    c = JobClass(2, 1, D.Uniform(0.0, 2.0))
    mf = redundancy_critical_rate(c)
    fin = redundancy_critical_rate(c, servers=200, jobs=400_000)
    assert mf.method == "mean field" and fin.method == "free system"
    assert mf.lower <= fin.value + 3 * fin.se and mf.lower <= mf.value
    assert abs(fin.value - mf.value) < 4 * fin.se + 0.02 * mf.value
    ex = redundancy_critical_rate(JobClass(3, 2, EXP), servers=50, jobs=300_000)
    assert abs(ex.value - 0.5) < 4 * ex.se + 0.005


def test_d_monotonicity_exponential_constant():
    assert d_monotonicity(JobClass(3, 1, EXP), cases=30, samples=4000) == "constant"


@UNTRUSTED
def test_response_tail_matches_mean_field():
    import loynes as ly

    cls = [rc.JobClass(2, 1, rc.dists.Exponential(1.0))]
    lam, n = 0.6, 1000
    system = rc.Redundancy(n, cls)
    grid = np.linspace(0.0, 3.0, 7)
    res = rc.simulate(system, system.poisson(lam * n), steps=300_000, warmup=100_000, rng=2,
                      grid=grid)
    fp = ly.redundancy_fixed_point(cls, lam)
    est = res.response_sf(grid)
    # standard error plus a small allowance for the finite n
    assert np.all(np.abs(est.value - fp.response_sf(grid)) <= 4 * est.se + 0.01)


def test_check_stability_for_redundancy():
    import loynes as ly

    n = 20
    # i.i.d. exponential (3, 2): exact critical rate 1 / (k E xi) = 0.5 per server
    exp_sys = rc.Redundancy(n, [rc.JobClass(3, 2, rc.dists.Exponential(1.0))])
    assert ly.check_stability(exp_sys, exp_sys.poisson(0.45 * n)).verdict == "stable"
    assert ly.check_stability(exp_sys, exp_sys.poisson(0.55 * n)).verdict == "unstable"
    # uniform (2, 1): lambda-bar ~ 0.88 (mean field), above the d-bound 0.5
    uni = rc.Redundancy(n, [rc.JobClass(2, 1, rc.dists.Uniform(0.0, 2.0))])
    low = ly.check_stability(uni, uni.poisson(0.4 * n))
    assert low.verdict == "stable" and low.condition("(d-bound)").holds
    mid = ly.check_stability(uni, uni.poisson(0.7 * n))
    assert mid.verdict == "stable" and mid.condition("(free)").holds
    high = ly.check_stability(uni, uni.poisson(1.0 * n))
    assert high.verdict == "unstable"


@pytest.mark.parametrize(
    "law", [rc.dists.Deterministic(1.0), rc.dists.Uniform(0.0, 2.0),
            rc.dists.HyperExponential.balanced(1.0, 4.0)], ids=["det", "unif", "h2"])
def test_fixed_point_satisfies_work_balance(law):
    import loynes as ly

    fp = ly.redundancy_fixed_point([rc.JobClass(3, 2, law)], 0.3)
    b = fp.work_balance
    assert isinstance(b, rc.Estimate) and b.se > 0
    assert abs(b.value - fp.load) <= 4 * b.se + 2e-3


def test_work_balance_takes_rng_and_the_fixed_point_does_not_depend_on_it():
    import loynes as ly

    cls = [rc.JobClass(3, 2, rc.dists.Deterministic(1.0))]
    a = ly.redundancy_fixed_point(cls, rate_per_server=0.3)
    b = ly.redundancy_fixed_point(cls, rate_per_server=0.3, rng=1)
    c = ly.redundancy_fixed_point(cls, rate_per_server=0.3, rng=2, balance_samples=1000)
    assert a.work_balance == b.work_balance != c.work_balance
    assert c.work_balance.se > a.work_balance.se
    np.testing.assert_array_equal(a.x, c.x)
    assert a.rate_per_server == 0.3


def test_d_monotonicity_directions():
    import loynes as ly

    # deterministic (2,1): eta(D) = s + (s - D)^+, non-increasing in the gap
    assert ly.d_monotonicity(rc.JobClass(2, 1, rc.dists.Deterministic(1.0)), cases=40,
                             samples=2000) == "decreasing"
    assert ly.d_monotonicity(rc.JobClass(3, 2, rc.dists.Exponential(1.0)), cases=40,
                             samples=2000) == "constant"
    assert ly.d_monotonicity(rc.JobClass(2, 1, rc.dists.HyperExponential.balanced(1.0, 4.0)),
                             cases=40, samples=4000) == "increasing"
