"""Large-scale JIQ theory (docs/theory/large_systems.md): equilibrium, transient, Lemma 4.

Oracles are independent of :mod:`loynes._jiq`: ``scipy.integrate.quad`` of the survival
function, the M/M/1 closed form, Erlang's exact M/D/1 workload law (in mpmath), a numpy Lindley
simulation (fixed seed, tolerance from batch-means standard errors) and the Pollaczek-Khinchine
mean.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import mpmath
import numpy as np
import pytest
import scipy.stats
from scipy import integrate

from loynes._jiq import (
    JIQEquilibrium,
    jiq_equilibrium,
    mg1_workload_sf,
    mg1_workload_sf_bounds,
)
from recursions import dists as D

Z = 4.5  # simulation tolerance in standard errors

LAWS = {
    "exp": D.Exponential(2.0),
    "det": D.Deterministic(1.5),
    "erlang": D.Erlang(3, 2.0),
    "hyper": D.HyperExponential.balanced(1.0, 4.0),
    "lognormal": D.LogNormal(1.0, 0.5),
    "lomax": D.Lomax(3.0, 2.0),
    "uniform": D.Uniform(0.5, 1.5),
    "empirical": D.Empirical([0.5, 2.0], [0.6, 0.4]),
    "scipy-gamma": scipy.stats.gamma(2, scale=0.5),
}
# where sf jumps or has a kink (helps quad, which must not be told the answer)
BREAKS = {"det": [1.5], "uniform": [0.5, 1.5], "empirical": [0.5, 2.0]}


def _law(key):
    return D.as_law(LAWS[key])


def _quad_tail(law, w, upto=None, breaks=()):
    """Oracle ``int_w^upto sf`` (``upto = inf`` by default) by adaptive quadrature."""
    m = law.mean
    f = lambda x: float(law.sf(x))  # noqa: E731
    hi = w + 20 * m if upto is None else upto
    pts = [b for b in breaks if w < b < hi] or None
    total = integrate.quad(f, w, hi, points=pts, limit=400, epsabs=1e-13, epsrel=1e-12)[0]
    if upto is None:
        total += integrate.quad(f, hi, np.inf, limit=400, epsabs=1e-13)[0]
    return total


def _md1_sf(lam, x, d=1.0):
    """Erlang's M/D/1 workload law: P(V <= x) = (1 - rho) sum_{k <= x/d} u^k e^-u / k!, u = lam (kd - x)."""  # noqa: E501
    with mpmath.workdps(60):
        xm = mpmath.mpf(x)
        s = mpmath.mpf(0)
        for k in range(int(mpmath.floor(xm / d)) + 1):
            u = lam * (k * d - xm)
            s += u**k * mpmath.exp(-u) / mpmath.factorial(k)
        return float(1 - (1 - lam * d) * s)


def _lindley(lam, service, n, seed):
    """Waiting times W_k of the M/G/1 FCFS queue from empty; by PASTA, W ~ V in steady state."""
    rng = np.random.default_rng(seed)
    sigma = service.sample(rng, n)
    gaps = rng.exponential(1.0 / lam, n)
    s = np.concatenate(([0.0], np.cumsum(sigma[:-1] - gaps[1:])))  # S_k, k = 0..n-1
    return s - np.minimum.accumulate(np.minimum(s, 0.0)), sigma, gaps


# --------------------------------------------------------------------------------------------
# equilibrium profile
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(LAWS))
def test_profile_at_zero_is_load(key):
    law = _law(key)
    lam = 0.6 / law.mean
    eq = jiq_equilibrium(lam, LAWS[key])
    assert eq.load == pytest.approx(0.6, rel=1e-14)
    assert float(eq.profile(0.0)) == pytest.approx(eq.load, rel=1e-12)
    # non-increasing, to 0 at infinity
    w = np.linspace(0.0, 10.0, 201)
    x = eq.profile(w)
    assert np.all(np.diff(x) <= 1e-15) and float(eq.profile(np.inf)) == 0.0


@pytest.mark.parametrize("key", list(LAWS))
def test_profile_is_lambda_times_quad_of_sf(key):
    law = _law(key)
    lam = 0.45 / law.mean
    eq = jiq_equilibrium(lam, LAWS[key])
    for w in (0.0, 0.3, 1.0, 2.5):
        oracle = lam * _quad_tail(law, w, breaks=BREAKS.get(key, ()))
        assert float(eq.profile(w)) == pytest.approx(oracle, rel=1e-8, abs=1e-11), w


@pytest.mark.parametrize(("lam", "mu"), [(0.3, 1.0), (0.8, 1.0), (1.5, 2.5)])
def test_exponential_closed_forms(lam, mu):
    eq = jiq_equilibrium(lam, D.Exponential(mu))
    w = np.linspace(0.0, 12.0, 49)
    np.testing.assert_allclose(eq.profile(w), lam * np.exp(-mu * w) / mu, rtol=1e-13)
    # Lemma 4: x** = exp(-(mu - lam) w) / (mu - lam), and the bound is x** / E[sigma] = mu x**;
    # at mu = 1 the theory's e^{-(1-lam)w} / (1 - lam)
    np.testing.assert_allclose(eq.lemma4_bound(w), mu * np.exp(-(mu - lam) * w) / (mu - lam),
                               rtol=1e-13)
    if mu == 1.0:
        np.testing.assert_allclose(eq.lemma4_bound(w), np.exp(-(1 - lam) * w) / (1 - lam))
    # the renewal solver reproduces it too
    z = mg1_workload_sf(lam, D.Exponential(mu), w, method="renewal")
    np.testing.assert_allclose(z, (lam / mu) * np.exp(-(mu - lam) * w), rtol=0, atol=1e-8)


# --------------------------------------------------------------------------------------------
# transient from empty
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["exp", "det", "erlang", "uniform", "empirical", "lomax"])
def test_transient_limits_and_monotonicity(key):
    law = _law(key)
    eq = jiq_equilibrium(0.7 / law.mean, law)
    w = np.array([0.0, 0.4, 1.2, 3.0])
    np.testing.assert_array_equal(eq.transient(w, 0.0), np.zeros(4))
    np.testing.assert_allclose(eq.transient(w, np.inf), eq.profile(w), rtol=1e-14)
    t = np.linspace(0.0, 40.0, 161)
    path = eq.transient(w[:, None], t[None, :])
    assert path.shape == (4, 161)
    assert np.all(np.diff(path, axis=1) >= -1e-15)  # non-decreasing in t
    assert np.all(path <= eq.profile(w)[:, None] + 1e-15)
    # x↑_w(t) -> x*_w: the gap is lam E[(sigma - w - t)^+]
    gap = eq.profile(w) - eq.transient(w, 1e4)
    np.testing.assert_allclose(gap, eq.rate_per_server * law.integrated_sf(w + 1e4), atol=1e-15)
    assert np.all(gap < 1e-6)


@pytest.mark.parametrize("key", ["exp", "det", "hyper", "uniform", "lognormal"])
def test_transient_is_lambda_times_quad(key):
    law = _law(key)
    lam = 0.5 / law.mean
    eq = jiq_equilibrium(lam, law)
    for w, t in [(0.0, 0.7), (0.5, 2.0), (1.0, 0.25)]:
        oracle = lam * _quad_tail(law, w, upto=w + t, breaks=BREAKS.get(key, ()))
        assert float(eq.transient(w, t)) == pytest.approx(oracle, rel=1e-8, abs=1e-12)


def test_transient_exponential_closed_form():
    lam, mu = 0.6, 1.0
    eq = jiq_equilibrium(lam, D.Exponential(mu))
    w, t = np.meshgrid(np.linspace(0, 5, 11), np.linspace(0, 8, 17))
    np.testing.assert_allclose(
        eq.transient(w, t), lam * np.exp(-mu * w) * (1 - np.exp(-mu * t)) / mu, atol=1e-15
    )


# --------------------------------------------------------------------------------------------
# the M/G/1 workload tail and the Lemma 4 bound
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.5, 0.9])
@pytest.mark.parametrize(
    "service",
    [D.Exponential(2.0), D.Erlang(1, 2.0), scipy.stats.expon(scale=0.5)],
    ids=["Exponential-renewal", "Erlang1", "scipy-expon"],
)
def test_mg1_against_mm1_closed_form(rho, service):
    mu = 2.0
    lam = rho * mu
    w = np.linspace(0.0, 15.0, 301)
    exact = rho * np.exp(-(mu - lam) * w)
    z = mg1_workload_sf(lam, service, w, method="renewal")
    assert float(np.abs(z - exact).max()) < 1e-8  # measured ~2e-9
    lo, hi = mg1_workload_sf_bounds(lam, service, w)
    assert np.all(lo <= exact + 1e-12) and np.all(exact <= hi + 1e-12)
    assert float((hi - lo).max()) < 2e-4
    # the default (auto) method is the closed form itself
    np.testing.assert_allclose(mg1_workload_sf(lam, D.Exponential(mu), w), exact, rtol=1e-14)


def test_mg1_renewal_is_second_order_and_bracket_first_order():
    lam = 0.7
    w = np.linspace(0.0, 20.0, 401)
    exact = lam * np.exp(-(1 - lam) * w)
    errs, gaps = [], []
    for step in (1 / 256, 1 / 512, 1 / 1024):
        z = mg1_workload_sf(lam, D.Erlang(1, 1.0), w, step=step)
        lo, hi = mg1_workload_sf_bounds(lam, D.Erlang(1, 1.0), w, step=step)
        errs.append(float(np.abs(z - exact).max()))
        gaps.append(float((hi - lo).max()))
    for a, b in itertools.pairwise(errs):
        assert 3.5 < a / b < 4.5
    for a, b in itertools.pairwise(gaps):
        assert a / b > 1.8 and a / b < 2.2


@pytest.mark.parametrize("rho", [0.5, 0.7, 0.9])
def test_mg1_against_exact_md1(rho):
    w = np.concatenate((np.linspace(0.0, 8.0, 81), [0.37, 2.5, 6.01]))
    exact = np.array([_md1_sf(rho, x) for x in w])
    z = mg1_workload_sf(rho, D.Deterministic(1.0), w)
    err = np.abs(z - exact)
    assert float(err.max()) < 1e-7  # measured <= 2e-8, also at the kink w = d
    lo, hi = mg1_workload_sf_bounds(rho, D.Deterministic(1.0), w)
    assert np.all(lo <= exact + 1e-12) and np.all(exact <= hi + 1e-12)
    # a coarser grid not aligned with the kinks still brackets
    lo, hi = mg1_workload_sf_bounds(rho, D.Deterministic(1.0), w, step=1 / 300)
    assert np.all(lo <= exact + 1e-12) and np.all(exact <= hi + 1e-12)


def test_mg1_md1_against_lindley_simulation():
    lam, service = 0.7, D.Deterministic(1.0)
    n, burn, batches = 2**21, 2**12, 64
    wait, _, _ = _lindley(lam, service, n + burn, seed=20240611)
    wait = wait[burn:]
    points = np.array([0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 4.0, 6.0])
    z = mg1_workload_sf(lam, service, points)
    ind = (wait[:, None] > points[None, :]).astype(np.float64)
    means = ind.reshape(batches, -1, points.size).mean(axis=1)
    est = means.mean(axis=0)
    se = means.std(axis=0, ddof=1) / math.sqrt(batches)
    assert np.all(se > 0) and np.all(se < 5e-3)
    assert np.all(np.abs(est - z) <= Z * se), (est, z, se)


@pytest.mark.parametrize(
    "service",
    [
        D.Deterministic(1.0),
        D.Uniform(0.0, 2.0),
        D.Erlang(3, 6.0),
        D.Empirical([0.5, 2.0], [0.6, 0.4]),
        D.HyperExponential.balanced(1.0, 2.0),
    ],
    ids=["det", "uniform", "erlang", "empirical", "hyper"],
)
def test_mg1_integral_is_pollaczek_khinchine_mean(service):
    rho = 0.7
    m = service.mean
    lam = rho / m
    pk = lam * (service.var + m * m) / (2 * (1 - rho))
    h = m / 1024
    reach = (200 if isinstance(service, D.HyperExponential) else 80) * m
    w = np.arange(0.0, reach + h / 4, h / 2)  # holds every node
    z = mg1_workload_sf(lam, service, w, step=h)
    assert float(z[-1]) < 1e-9
    integral = float(np.trapezoid(z, w))
    assert integral == pytest.approx(pk, rel=1e-6)


@pytest.mark.parametrize("key", ["det", "erlang", "hyper", "lognormal", "uniform", "empirical"])
def test_mg1_shape_and_lemma4_at_zero(key):
    law = _law(key)
    lam = 0.8 / law.mean
    w = np.linspace(0.0, 15.0, 301)
    z = mg1_workload_sf(lam, law, w)
    assert float(z[0]) == pytest.approx(0.8, rel=1e-14)
    assert np.all(np.diff(z) <= 1e-12) and np.all(z >= 0)
    # P(V > w) >= rho F_e^c(w): one residual above w suffices
    assert np.all(z >= 0.8 * law.equilibrium_sf(w) - 1e-9)
    eq = jiq_equilibrium(lam, law)
    x2 = eq.lemma4_bound(w)
    # x**_0 is the mean busy period E[sigma] / (1 - rho); the bound divides it by E[sigma]
    assert float(x2[0]) == pytest.approx(1 / (1 - 0.8), rel=1e-13)
    np.testing.assert_allclose(x2, z / (lam * 0.2 * law.mean), rtol=1e-14)


def test_lemma4_bound_dominates_equilibrium_profile():
    # x*_w is the large-n limit of E x^n_w(inf) (Theorem 2, lam < 1/2) and Lemma 4 bounds the latter
    for law in (D.Deterministic(1.0), D.Erlang(2, 2.0), D.HyperExponential.balanced(1.0, 4.0)):
        eq = jiq_equilibrium(0.45, law)
        w = np.linspace(0.0, 10.0, 101)
        assert np.all(eq.lemma4_bound(w) >= eq.profile(w))
    # a mean other than 1: the bound is x** / E[sigma] (x** alone, 0.091 at w = 0.1, lies
    # below the profile 4 * 0.1 * e^-1 = 0.147 here)
    eq = jiq_equilibrium(4.0, D.Exponential(10.0))
    w = np.linspace(0.0, 1.0, 101)
    assert np.all(eq.lemma4_bound(w) >= eq.profile(w))


def test_lemma4_bound_is_time_above_w_per_cycle_by_simulation():
    # regenerative M/D/1: time above w per cycle (cycles start at arrivals to an empty queue)
    lam, service = 0.6, D.Deterministic(1.0)
    n, batches = 2**20, 32
    wait, sigma, gaps = _lindley(lam, service, n + 1, seed=7)
    after = wait[:-1] + sigma[:-1]  # workload just after arrival k, then drains for gaps[k+1]
    points = np.array([0.0, 0.5, 1.0, 2.0, 3.5])
    above = np.minimum(gaps[1:, None], np.maximum(after[:, None] - points[None, :], 0.0))
    cycles = (wait[:-1] == 0.0).astype(np.float64)
    num = above.reshape(batches, -1, points.size).sum(axis=1)
    den = cycles.reshape(batches, -1).sum(axis=1)
    est = num.sum(axis=0) / den.sum()
    ratios = num / den[:, None]
    se = ratios.std(axis=0, ddof=1) / math.sqrt(batches)
    x2 = jiq_equilibrium(lam, service).lemma4_bound(points)
    assert np.all(np.abs(est - x2) <= Z * se), (est, x2, se)


def test_scipy_law_matches_closed_form_law():
    w = np.linspace(0.0, 12.0, 121)
    a = mg1_workload_sf(0.8, scipy.stats.gamma(2, scale=0.5), w)
    b = mg1_workload_sf(0.8, D.Erlang(2, 2.0), w)
    np.testing.assert_allclose(a, b, atol=1e-8)  # F_e^c interpolated for scipy laws: ~1e-9
    eq = jiq_equilibrium(0.8, scipy.stats.gamma(2, scale=0.5))
    assert isinstance(eq.service, D.ScipyLaw)


def test_shapes_infinity_and_scalars():
    eq = jiq_equilibrium(0.5, D.Deterministic(1.0))
    for f in (eq.profile, eq.lemma4_bound, lambda w: mg1_workload_sf(0.5, D.Deterministic(1.0), w)):
        assert f(0.5).shape == ()
        assert f(np.ones((2, 3))).shape == (2, 3)
        assert float(f(np.inf)) == 0.0
    lo, hi = mg1_workload_sf_bounds(0.5, D.Deterministic(1.0), [[0.0, np.inf]])
    assert lo.shape == hi.shape == (1, 2) and lo[0, 1] == hi[0, 1] == 0.0
    assert eq.transient(np.inf, 3.0) == 0.0
    assert mg1_workload_sf(0.5, D.Deterministic(1.0), []).shape == (0,)


def test_repr_and_frozen():
    eq = jiq_equilibrium(0.5, D.Exponential(1.0))
    assert repr(eq) == ("JIQEquilibrium(rate_per_server=0.5, service=Exponential(rate=1.0; mean=1, "
                        "scv=1), load=0.5)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        eq.rate_per_server = 0.2  # type: ignore[misc]
    assert eq == JIQEquilibrium(0.5, D.Exponential(1.0))
    assert isinstance(jiq_equilibrium(np.float64(0.5), D.Exponential(1.0)).rate_per_server, float)
    assert jiq_equilibrium(rate_per_server=0.5, service=D.Exponential(1.0)) == eq


# --------------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lam", "service", "exc", "match"),
    [
        ("0.5", D.Exponential(1.0), TypeError, "arrival_rate"),
        (True, D.Exponential(1.0), TypeError, "arrival_rate"),
        (None, D.Exponential(1.0), TypeError, "arrival_rate"),
        (0.0, D.Exponential(1.0), ValueError, "arrival_rate"),
        (-1.0, D.Exponential(1.0), ValueError, "arrival_rate"),
        (math.nan, D.Exponential(1.0), ValueError, "arrival_rate"),
        (math.inf, D.Exponential(1.0), ValueError, "arrival_rate"),
        (1.0, D.Exponential(1.0), ValueError, "arrival_rate .* < 1"),
        (0.6, D.Deterministic(2.0), ValueError, "arrival_rate .* < 1"),
        (0.5, 1.0, TypeError, "service"),
        (0.5, scipy.stats.norm(), ValueError, "service"),
    ],
)
def test_bad_constructor_inputs(lam, service, exc, match):
    # the mean-field rate is per server; the M/G/1 queue's is its (total) arrival rate
    with pytest.raises(exc, match=match.replace("arrival_rate", "rate_per_server")):
        jiq_equilibrium(lam, service)
    with pytest.raises(exc, match=match):
        mg1_workload_sf(lam, service, 1.0)


def test_bad_points_step_and_method():
    eq = jiq_equilibrium(0.5, D.Exponential(1.0))
    law = D.Deterministic(1.0)
    cases = [
        (lambda: eq.profile(-1.0), ValueError, "w must be >= 0"),
        (lambda: eq.profile([0.0, math.nan]), ValueError, "w must be >= 0"),
        (lambda: eq.profile("a"), TypeError, "w must be a real"),
        (lambda: eq.profile([1j]), TypeError, "w must be a real"),
        (lambda: eq.lemma4_bound(-0.5), ValueError, "w must be >= 0"),
        (lambda: eq.transient(1.0, -1.0), ValueError, "t must be >= 0"),
        (lambda: eq.transient(-1.0, 1.0), ValueError, "w must be >= 0"),
        (lambda: eq.transient(1.0, None), TypeError, "t must be a real"),
        (lambda: eq.transient([1.0, 2.0], [1.0, 2.0, 3.0]), ValueError, "broadcast"),
        (lambda: mg1_workload_sf(0.5, law, 1.0, step=0.0), ValueError, "step"),
        (lambda: mg1_workload_sf(0.5, law, 1.0, step=math.nan), ValueError, "step"),
        (lambda: mg1_workload_sf(0.5, law, 1.0, step="x"), TypeError, "step"),
        (lambda: mg1_workload_sf(0.5, law, 100.0, step=1e-6), ValueError, "step"),
        (lambda: mg1_workload_sf(0.5, law, 1.0, method="exact"), ValueError, "method"),
        (lambda: mg1_workload_sf_bounds(0.5, law, -1.0), ValueError, "w must be >= 0"),
        (lambda: mg1_workload_sf_bounds(2.0, law, 1.0), ValueError, "arrival_rate"),
    ]
    for call, exc, match in cases:
        with pytest.raises(exc, match=match):
            call()
