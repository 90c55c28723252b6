"""Every public function that takes a law, called with scipy laws and with the built-in twin.

Each case pairs a scipy distribution (frozen ``scipy.stats``, and scipy's newer distribution
objects where installed) with the built-in law of the same distribution, all of mean 1. A
deterministic result (closed forms, transforms, critical rates) must agree to numerical
precision; a Monte Carlo result is run with *different* seeds for the two laws (independent
estimates) and must agree within ``Z`` standard errors of the difference, the standard errors
the runs report themselves. Where a method needs what the law cannot give (a finite mgf for
``theta > 0``, a bounded support), the error must say so and name the law.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import scipy.stats as st

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.dists import Erlang, Exponential, LogNormal, ScipyLaw, Uniform, as_law
from tests.marks import UNTRUSTED

Z = 4.5

# sigma^2 = log(1 + scv), scale = mean / exp(sigma^2 / 2): the lognormal of mean 1, scv 2
_S = math.sqrt(math.log(3.0))
PAIRS: dict[str, tuple[object, object]] = {
    "frozen-gamma": (st.gamma(2, scale=0.5), Erlang(2, 2.0)),
    "frozen-uniform": (st.uniform(0.5, 1.0), Uniform(0.5, 1.5)),
    "frozen-lognorm": (st.lognorm(_S, scale=1.0 / math.sqrt(3.0)), LogNormal(1.0, 2.0)),
}
if hasattr(st, "make_distribution"):  # scipy >= 1.15
    PAIRS["new-gamma"] = (0.5 * st.make_distribution(st.gamma)(a=2.0), Erlang(2, 2.0))
if hasattr(st, "Uniform"):
    PAIRS["new-uniform"] = (st.Uniform(a=0.5, b=1.5), Uniform(0.5, 1.5))
KEYS = list(PAIRS)
# the laws whose mgf is known for theta > 0: the frozen gamma family (closed form), and the
# bounded ones (quadrature); the others refuse theta > 0 by name
LIGHT = {"frozen-gamma", "frozen-uniform", "new-uniform"}
BOUNDED = {"frozen-uniform", "new-uniform"}


def _close(a: rc.Estimate, b: rc.Estimate, what: str = "") -> None:
    """Two independent estimates of one quantity agree within Z standard errors."""
    se = math.hypot(float(a.se), float(b.se))
    assert abs(float(a.value) - float(b.value)) <= Z * se + 1e-12, (what, a, b)


def _mean_close(x: np.ndarray, y: np.ndarray, what: str = "") -> None:
    se = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    assert abs(x.mean() - y.mean()) <= Z * se + 1e-12, (what, x.mean(), y.mean(), se)


def _refused(key: str) -> re.Pattern[str]:
    """The start of the message that refuses a positive tilt of the wrapped law."""
    return re.compile(re.escape(repr(as_law(PAIRS[key][0]))) + r".*not available")


# --------------------------------------------------------------------------------------------
# the law itself, and the functions with deterministic results
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_the_wrapped_law_is_the_built_in_law(key):
    dist, ref = PAIRS[key]
    law = as_law(dist)
    assert isinstance(law, ScipyLaw) and key.split("-")[1] in repr(law).lower()
    assert law.mean == pytest.approx(ref.mean, rel=1e-9)
    assert law.var == pytest.approx(ref.var, rel=1e-9)
    assert law.scv == pytest.approx(ref.scv, rel=1e-9)
    assert law.support_max == ref.support_max == cp.support_max(dist)
    w = np.array([0.0, 0.3, 0.9, 1.4, 2.5, 6.0])
    np.testing.assert_allclose(law.sf(w), ref.sf(w), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(law.integrated_sf(w), ref.integrated_sf(w), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(law.equilibrium_sf(w), ref.equilibrium_sf(w), rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("key", KEYS)
def test_closed_forms_and_factories(key):
    dist, ref = PAIRS[key]
    assert ly.critical_rate_3(3, dist) == pytest.approx(ly.critical_rate_3(3, ref), rel=1e-12)
    assert ly.critical_rate_11(3, 1, dist) == pytest.approx(
        ly.critical_rate_11(3, 1, ref), rel=1e-9
    )
    assert ly.PoissonAtLoad(2, dist)(0.7).arrival_rate == pytest.approx(
        ly.PoissonAtLoad(2, ref)(0.7).arrival_rate, rel=1e-12
    )
    for inp in (
        rc.Poisson(1.3, dist),
        rc.Renewal(dist, Exponential(0.5)),
        rc.Renewal(Exponential(2.0), dist),
    ):
        assert isinstance(inp, rc.Input)
    assert rc.Poisson(1.3, dist).offered_load == pytest.approx(rc.Poisson(1.3, ref).offered_load)
    mm = rc.MarkovModulated(
        [[0.5, 0.5], [0.2, 0.8]], [dist, Exponential(1.0)], [Exponential(2.0), dist]
    )
    assert isinstance(mm.services[1], ScipyLaw) and isinstance(mm.interarrivals[0], ScipyLaw)
    job, job_ref = rc.JobClass(2, 1, dist), rc.JobClass(2, 1, ref)
    assert job.mean_size == pytest.approx(job_ref.mean_size, rel=1e-9)
    assert job.exponential == job_ref.exponential is False


@pytest.mark.parametrize("key", KEYS)
def test_mg1_and_jiq_theory(key):
    dist, ref = PAIRS[key]
    w = np.array([0.0, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(
        ly.mg1_workload_sf(0.6, dist, w), ly.mg1_workload_sf(0.6, ref, w), rtol=1e-3, atol=1e-5
    )
    lo, hi = ly.mg1_workload_sf_bounds(0.6, dist, w)
    lo_r, hi_r = ly.mg1_workload_sf_bounds(0.6, ref, w)
    np.testing.assert_allclose(lo, lo_r, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(hi, hi_r, rtol=1e-3, atol=1e-5)
    eq, eq_ref = ly.jiq_equilibrium(0.6, dist), ly.jiq_equilibrium(0.6, ref)
    assert eq.load == pytest.approx(eq_ref.load, rel=1e-9)
    np.testing.assert_allclose(eq.profile(w), eq_ref.profile(w), rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("key", KEYS)
def test_transforms_tilts_and_bounds(key):
    dist, ref = PAIRS[key]
    for th in (-2.0, -0.5):
        assert cp.log_mgf(dist, th) == pytest.approx(cp.log_mgf(ref, th), rel=1e-7)
        assert cp.mgf(dist, th) == pytest.approx(cp.mgf(ref, th), rel=1e-7)
    walk_ref = lambda th: cp.log_mgf(ref, th) + cp.log_mgf(Exponential(0.8), -th)  # noqa: E731
    inp, inp_ref = rc.Poisson(0.8 * 2, dist), rc.Poisson(0.8 * 2, ref)
    if key in LIGHT:
        assert cp.log_mgf(dist, 0.7) == pytest.approx(cp.log_mgf(ref, 0.7), rel=1e-7)

        def walk(th):
            return cp.log_mgf(dist, th) + cp.log_mgf(Exponential(0.8), -th)

        root = cp.cramer_root(walk, 1.0 - 1.25, 2.25)
        assert root == pytest.approx(cp.cramer_root(walk_ref, 1.0 - 1.25, 2.25), rel=1e-6)
        assert cp.fcfs_workload_bound(2, inp, 1e-3) == pytest.approx(
            cp.fcfs_workload_bound(2, inp_ref, 1e-3), rel=1e-5
        )
    else:  # the mgf for theta > 0 is not available: refused by name, or no bound
        for f in (cp.log_mgf, cp.mgf, cp.tilted_sampler):
            with pytest.raises(ValueError, match=_refused(key)):
                f(dist, 0.1)
        assert cp.fcfs_workload_bound(2, inp, 1e-3) is None
    # tilted and size-biased draws: the same law as the built-in's (independent seeds)
    x = cp.tilted_sampler(dist, -1.0)(np.random.default_rng(11), 20_000)
    y = cp.tilted_sampler(ref, -1.0)(np.random.default_rng(12), 20_000)
    _mean_close(x, y, "tilted")
    x = cp.size_biased_sample(dist, np.random.default_rng(13), 20_000)
    y = cp.size_biased_sample(ref, np.random.default_rng(14), 20_000)
    _mean_close(x, y, "size-biased")


# --------------------------------------------------------------------------------------------
# simulation: every system, the queue-length engines, redundancy
# --------------------------------------------------------------------------------------------

SYSTEMS = [
    rc.JSW(2),
    rc.JpSW(3, 1),
    rc.Loss(2),
    rc.JIQ(3),
    rc.RandomRouting(2),
    rc.LeastOfD(3, 2),
    rc.Envelope(rc.JpSW(3, 1)),
    rc.SplitBound(3, 1),
]


@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
@pytest.mark.parametrize("key", KEYS)
@UNTRUSTED
def test_simulate_every_system(key, system):
    dist, ref = PAIRS[key]
    rate = 0.6 * system.servers
    inputs = [(rc.Poisson(rate, dist), rc.Poisson(rate, ref))]
    if isinstance(system, rc.JSW):  # the law as interarrival too (mean 1: service rate 1/0.6 S)
        scale = Exponential(mean=0.6 * system.servers)
        inputs.append((rc.Renewal(dist, scale), rc.Renewal(ref, scale)))
    for a_in, b_in in inputs:
        a = rc.simulate(system, a_in, steps=2**14, rng=3)
        b = rc.simulate(system, b_in, steps=2**14, rng=4)
        for name in ("p_wait", "p_loss", "mean_wait", "busy_fraction"):
            ea, eb = getattr(a, name), getattr(b, name)
            assert (ea is None) == (eb is None), name
            if ea is not None and np.ndim(ea.value) == 0:
                _close(ea, eb, f"{system!r} {name}")


@pytest.mark.parametrize("key", KEYS)
@UNTRUSTED
def test_queue_length_engines_redundancy_and_modulated_input(key):
    dist, ref = PAIRS[key]
    a = rc.zerowait.simulate_queues(
        rc.JSQ(3, 4), rc.Poisson(2.4, dist), steps=2**14, rng=5, engine="queues"
    )
    b = rc.zerowait.simulate_queues(
        rc.JSQ(3, 4), rc.Poisson(2.4, ref), steps=2**14, rng=6, engine="queues"
    )
    _close(a.p_block, b.p_block, "JSQ p_block")
    _close(a.p_wait, b.p_wait, "JSQ p_wait")
    # the counts engine tracks phases: a scipy law is refused by name
    with pytest.raises(ValueError, match=re.escape(repr(as_law(dist)))):
        rc.zerowait.simulate_queues(
            rc.JSQ(3, 4), rc.Poisson(2.4, dist), steps=2**10, engine="counts"
        )
    red, red_ref = (rc.Redundancy(4, (rc.JobClass(2, 1, law),)) for law in (dist, ref))
    a = rc.simulate(red, red.poisson(1.0), steps=2**13, rng=7)
    b = rc.simulate(red_ref, red_ref.poisson(1.0), steps=2**13, rng=8)
    _close(a.mean_response, b.mean_response, "redundancy mean_response")
    mm = [
        rc.MarkovModulated(
            [[0.5, 0.5], [0.2, 0.8]], [Exponential(0.5), Exponential(1.0)], [law, Exponential(1.0)]
        )
        for law in (dist, ref)
    ]
    a = rc.simulate(rc.JSW(2), mm[0], steps=2**14, rng=9)
    b = rc.simulate(rc.JSW(2), mm[1], steps=2**14, rng=10)
    _close(a.p_wait, b.p_wait, "modulated p_wait")


@pytest.mark.parametrize("key", KEYS)
def test_redundancy_theory(key):
    dist, ref = PAIRS[key]
    fp = ly.redundancy_fixed_point(rc.JobClass(2, 1, dist), 0.3, rng=1, balance_samples=4000)
    fp_ref = ly.redundancy_fixed_point(rc.JobClass(2, 1, ref), 0.3, rng=2, balance_samples=4000)
    assert fp.load == pytest.approx(fp_ref.load, rel=1e-3)
    assert fp.mean_response == pytest.approx(fp_ref.mean_response, rel=1e-3)
    _close(fp.work_balance, fp_ref.work_balance, "work balance")
    a = ly.redundancy_critical_rate(rc.JobClass(2, 1, dist), 4, jobs=4000, rng=1)
    b = ly.redundancy_critical_rate(rc.JobClass(2, 1, ref), 4, jobs=4000, rng=2)
    assert a.method == b.method
    _close(a, b, "critical rate")
    assert ly.d_monotonicity(rc.JobClass(2, 1, dist), rng=1) == ly.d_monotonicity(
        rc.JobClass(2, 1, ref), rng=2
    )


# --------------------------------------------------------------------------------------------
# stability, Loynes sequences, sweeps
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_stability_and_loynes(key):
    dist, ref = PAIRS[key]
    opts = {"steps": 4096, "horizon": 4096}
    for load, verdict in ((0.5, "stable"), (1.5, "unstable")):
        a = ly.check_stability(rc.JSW(2), rc.Poisson(2 * load, dist), rng=1, **opts)
        b = ly.check_stability(rc.JSW(2), rc.Poisson(2 * load, ref), rng=2, **opts)
        assert a.verdict == b.verdict == verdict
    _close(
        ly.growth_rate(rc.JSW(2), rc.Poisson(3.0, dist), 4096, rng=1),
        ly.growth_rate(rc.JSW(2), rc.Poisson(3.0, ref), 4096, rng=2),
        "growth rate",
    )
    ren = [rc.Renewal(Exponential(mean=1.2), law) for law in (dist, ref)]
    _close(
        ly.renovation_probability(ren[0], 8192, rng=1),
        ly.renovation_probability(ren[1], 8192, rng=2),
        "renovation probability",
    )
    a = ly.loynes(rc.JSW(2), rc.Poisson(1.0, dist), 2**12, rng=1)
    b = ly.loynes(rc.JSW(2), rc.Poisson(1.0, ref), 2**12, rng=2)
    assert a.stabilised and b.stabilised
    smap = ly.stability_map(
        ly.SystemFamily("jpsw", 2),
        ly.PoissonAtLoad(2, dist),
        [0.5, 1.5],
        [0],
        max_workers=0,
        progress=False,
        steps=4096,
        horizon=4096,
    )
    assert smap.verdicts.tolist() == [["stable", "unstable"]]


# --------------------------------------------------------------------------------------------
# exact sampling and coupling
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", KEYS)
def test_perfect_sample_and_coupling_time(key):
    dist, ref = PAIRS[key]
    a = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.2, dist), 300, rng=1)
    b = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.2, ref), 300, rng=2)
    xa, xb = np.asarray(a.samples), np.asarray(b.samples)
    assert xa.shape == xb.shape == (300, 2)
    _mean_close(xa.sum(axis=1), xb.sum(axis=1), "stationary total workload")
    _mean_close((xa[:, 0] > 0).astype(float), (xb[:, 0] > 0).astype(float), "P(wait)")
    # renewal input: a Cramer root of the service law is needed (or a refusal by name)
    ren = rc.Renewal(st.expon(scale=1.5), dist)
    if key in LIGHT:
        out = cp.perfect_sample(rc.JSW(2), ren, 20, rng=3)
        assert np.asarray(out.samples).shape == (20, 2)
    else:
        with pytest.raises(ValueError, match=_refused(key)):
            cp.perfect_sample(rc.JSW(2), ren, 20, rng=3)
    # a loss system with renewal input: renovation needs bounded service (or a refusal by name)
    loss_in = rc.Renewal(st.expon(scale=1.5), dist)
    if key in BOUNDED:
        out = cp.perfect_sample(rc.Loss(2), loss_in, 200, rng=4)
        ref_out = cp.perfect_sample(rc.Loss(2), rc.Renewal(Exponential(mean=1.5), ref), 200, rng=5)
        assert out.method == ref_out.method == "renovation"
        _mean_close(
            np.asarray(out.samples).sum(axis=1),
            np.asarray(ref_out.samples).sum(axis=1),
            "loss workload",
        )
    else:
        with pytest.raises(ValueError, match=re.escape(repr(as_law(dist))) + ".*unbounded"):
            cp.perfect_sample(rc.Loss(2), loss_in, 20, rng=4)
    ta = cp.coupling_time(
        rc.JSW(2), rc.Poisson(1.0, dist), [0.0, 0.0], [4.0, 4.0], rng=1, replications=200
    )
    tb = cp.coupling_time(
        rc.JSW(2), rc.Poisson(1.0, ref), [0.0, 0.0], [4.0, 4.0], rng=2, replications=200
    )
    _close(ta.mean, tb.mean, "coupling time")
    # the random-assignment walk of renewal input needs the service mgf at its root
    if key in LIGHT:
        walk = cp.RAWalk(2, dist, st.expon(scale=1.5), np.random.default_rng(1))
        ref_walk = cp.RAWalk(2, ref, Exponential(mean=1.5), np.random.default_rng(1))
        assert walk.theta == pytest.approx(ref_walk.theta, rel=1e-6)
    else:
        with pytest.raises(ValueError, match=_refused(key)):
            cp.RAWalk(2, dist, st.expon(scale=1.5), np.random.default_rng(1))
