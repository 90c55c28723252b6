"""Exponential tilting (coupling._tilting) against quadrature, exact tilted laws and roots.

Every expected value is computed here from the law's parameters (a density or a pmf written
out in the test, integrated with scipy.integrate.quad, or a Lambert-W closed form), never from
the module under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from coupling._tilting import cramer_root, mgf, tilted_sampler
from recursions import dists

Z = 4.5
N = 200_000
INF = math.inf


# --------------------------------------------------------------------------------------------
# the laws, each with an independent description: ("kernel", k, lo, hi) where
# k(theta, x) = exp(theta x) pdf(x) on [lo, hi], or ("atoms", values, probs)
# --------------------------------------------------------------------------------------------


def _from_logpdf(logpdf):
    """The kernel ``exp(theta x) pdf(x)``, formed in logs so that it cannot overflow."""

    def kernel(theta, x):
        return math.exp(theta * x + logpdf(x)) if x > 0 else 0.0

    return kernel


def _lognormal_logpdf(mean, scv):
    s2 = math.log1p(scv)
    m = math.log(mean) - 0.5 * s2

    def logpdf(x):
        return -math.log(x * math.sqrt(2 * math.pi * s2)) - (math.log(x) - m) ** 2 / (2 * s2)

    return logpdf


def _lomax_logpdf(shape, scale):
    return lambda x: math.log(shape / scale) - (shape + 1) * math.log1p(x / scale)


def _hyper_kernel(probs, rates):
    def kernel(theta, x):
        return sum(p * r * math.exp((theta - r) * x) for p, r in zip(probs, rates, strict=True))

    return kernel


CASES = {
    "exp": (
        dists.Exponential(2.0),
        ("kernel", _from_logpdf(lambda x: math.log(2.0) - 2.0 * x), 0.0, INF),
    ),
    "erlang": (  # k = 3, rate 1.5: rate^3 x^2 exp(-rate x) / 2!
        dists.Erlang(3, 1.5),
        (
            "kernel",
            _from_logpdf(lambda x: 3 * math.log(1.5) + 2 * math.log(x) - 1.5 * x - math.log(2.0)),
            0.0,
            INF,
        ),
    ),
    "hyper": (
        dists.HyperExponential([0.3, 0.7], [0.5, 3.0]),
        ("kernel", _hyper_kernel([0.3, 0.7], [0.5, 3.0]), 0.0, INF),
    ),
    "uniform": (
        dists.Uniform(0.5, 2.0),
        ("kernel", lambda th, x: math.exp(th * x) / 1.5, 0.5, 2.0),
    ),
    "det": (dists.Deterministic(1.3), ("atoms", [1.3], [1.0])),
    "empirical": (
        dists.Empirical([0.0, 0.5, 2.0, 4.0], weights=[1, 2, 3, 4]),
        ("atoms", [0.0, 0.5, 2.0, 4.0], [0.1, 0.2, 0.3, 0.4]),
    ),
    "lognormal": (
        dists.LogNormal(1.0, 2.0),
        ("kernel", _from_logpdf(_lognormal_logpdf(1.0, 2.0)), 0.0, INF),
    ),
    "lomax": (
        dists.Lomax(3.0, 2.0),
        ("kernel", _from_logpdf(_lomax_logpdf(3.0, 2.0)), 0.0, INF),
    ),
    "lomax_heavy": (
        dists.Lomax(1.5, 1.0),
        ("kernel", _from_logpdf(_lomax_logpdf(1.5, 1.0)), 0.0, INF),
    ),
    "scipy_gamma": (  # scipy.stats.gamma(2): x exp(-x)
        dists.as_law(stats.gamma(2.0)),
        ("kernel", _from_logpdf(lambda x: math.log(x) - x), 0.0, INF),
    ),
    "scipy_lognorm": (  # no closed form: theta <= 0 only
        dists.as_law(stats.lognorm(0.5)),
        ("kernel", _from_logpdf(lambda x: -math.log(x * math.sqrt(2 * math.pi * 0.25))
                                - math.log(x) ** 2 / 0.5), 0.0, INF),
    ),
    "scipy_beta": (  # scipy.stats.beta(2, 3): 12 x (1 - x)^2 on [0, 1]
        dists.as_law(stats.beta(2, 3)),
        ("kernel", lambda th, x: math.exp(th * x) * 12.0 * x * (1 - x) ** 2, 0.0, 1.0),
    ),
    "scipy_binom": (
        dists.as_law(stats.binom(5, 0.4)),
        ("atoms", list(range(6)), [math.comb(5, j) * 0.4**j * 0.6 ** (5 - j) for j in range(6)]),
    ),
}

# tilts inside the domain: both signs for closed forms and bounded laws, theta < 0 otherwise
THETAS = {
    "exp": [-3.0, -0.5, 0.7, 1.5, 1.9],
    "erlang": [-2.0, -0.3, 0.5, 1.2],
    "hyper": [-4.0, -0.5, 0.2, 0.45],
    "uniform": [-30.0, -1.0, 1e-7, 0.8, 5.0],
    "det": [-2.0, -0.1, 0.4, 3.0],
    "empirical": [-5.0, -0.5, 0.3, 1.5],
    "lognormal": [-3.0, -1.0, -0.1],
    "lomax": [-2.0, -0.5],
    "lomax_heavy": [-2.0, -0.2],
    "scipy_gamma": [-1.5, -0.4, 0.3, 0.8],  # the closed form of scipy's gamma family
    "scipy_lognorm": [-1.0, -0.2],
    "scipy_beta": [-3.0, 0.5, 3.0],
    "scipy_binom": [-1.0, 0.7],
}

MGF_PARAMS = [(name, th) for name, ths in THETAS.items() for th in ths]


def _quad(f, lo, hi):
    """``int_lo^hi f`` (``hi`` may be inf), split so quad sees where the mass is."""
    if math.isfinite(hi):
        return integrate.quad(f, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)[0]
    cuts = [lo, lo + 1.0, lo + 10.0, lo + 100.0]
    total = sum(
        integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=200)[0]
        for a, b in itertools.pairwise(cuts)
    )
    return total + integrate.quad(f, cuts[-1], INF, epsabs=0.0, epsrel=1e-12, limit=200)[0]


def _oracle(name, theta):
    """``(M(theta), mean of the tilted law)`` from the test's own description of the law."""
    desc = CASES[name][1]
    if desc[0] == "atoms":
        v, p = desc[1], desc[2]
        m0 = math.fsum(pi * math.exp(theta * vi) for vi, pi in zip(v, p, strict=True))
        m1 = math.fsum(pi * vi * math.exp(theta * vi) for vi, pi in zip(v, p, strict=True))
        return m0, m1 / m0
    _, kernel, lo, hi = desc
    m0 = _quad(lambda x: kernel(theta, x), lo, hi)
    m1 = _quad(lambda x: x * kernel(theta, x), lo, hi)
    return m0, m1 / m0


# --------------------------------------------------------------------------------------------
# mgf
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "theta"), MGF_PARAMS)
def test_mgf_matches_quadrature(name, theta):
    law = CASES[name][0]
    expected, _ = _oracle(name, theta)
    got = mgf(law, theta)
    assert got == pytest.approx(expected, rel=1e-9, abs=0.0), (name, theta, got, expected)


@pytest.mark.parametrize("name", list(CASES))
def test_mgf_at_zero_is_one(name):
    assert mgf(CASES[name][0], 0.0) == 1.0


@pytest.mark.parametrize(
    ("name", "theta"),
    [
        ("exp", 2.0),
        ("exp", 7.5),
        ("erlang", 1.5),
        ("erlang", 4.0),
        ("hyper", 0.5),
        ("hyper", 1.0),
        ("hyper", 3.5),
    ],
)
def test_mgf_is_infinite_beyond_the_domain(name, theta):
    assert mgf(CASES[name][0], theta) == INF


@pytest.mark.parametrize(
    ("name", "theta"),
    [("lognormal", 0.1), ("lognormal", 2.0), ("lomax", 0.05), ("scipy_lognorm", 0.3)],
)
def test_mgf_of_unbounded_generic_law_at_positive_theta_raises(name, theta):
    with pytest.raises(ValueError, match=r"theta=.* of .*(Lo|lognorm)"):  # names the law
        mgf(CASES[name][0], theta)


def test_mgf_of_lognormal_at_negative_theta_matches_monte_carlo():
    # an oracle of a different kind from quadrature: E[exp(theta X)] by plain sampling
    law, theta = dists.LogNormal(2.0, 0.5), -0.7
    s2 = math.log1p(0.5)
    x = np.random.default_rng(3).lognormal(math.log(2.0) - 0.5 * s2, math.sqrt(s2), N)
    y = np.exp(theta * x)
    se = y.std() / math.sqrt(N)
    assert abs(mgf(law, theta) - y.mean()) <= Z * se


# --------------------------------------------------------------------------------------------
# tilted_sampler
# --------------------------------------------------------------------------------------------


# (the binomial is left to the frequency test below, which is sharper)
MEAN_PARAMS = [(n, th) for n, th in MGF_PARAMS if n != "scipy_binom"]


@pytest.mark.parametrize(("name", "theta"), [*MEAN_PARAMS, ("exp", 0.0), ("scipy_beta", 0.0)])
def test_tilted_sampler_mean(name, theta):
    law = CASES[name][0]
    _, expected = _oracle(name, theta)
    seed = 1000 + sorted(CASES).index(name) * 37 + int(abs(theta) * 100)
    x = tilted_sampler(law, theta)(np.random.default_rng(seed), N)
    assert x.shape == (N,)
    assert x.dtype == np.float64
    se = x.std() / math.sqrt(N)
    assert abs(x.mean() - expected) <= Z * se + 1e-12, (name, theta, x.mean(), expected, se)


def _uniform_tilted_cdf(lo, hi, theta):
    def cdf(x):
        t = np.clip(x, lo, hi) - lo
        return np.expm1(theta * t) / math.expm1(theta * (hi - lo))

    return cdf


def _hyper_tilted_cdf(probs, rates, theta):
    w = np.array([p * r / (r - theta) for p, r in zip(probs, rates, strict=True)])
    w /= w.sum()
    new = np.array(rates) - theta

    def cdf(x):
        return 1.0 - np.exp(-np.multiply.outer(np.asarray(x), new)) @ w

    return cdf


KS_CASES = [
    # Exponential(rate) tilted by theta is Exponential(rate - theta)
    ("exp_up", dists.Exponential(2.0), 1.0, stats.expon(scale=1.0).cdf),
    ("exp_down", dists.Exponential(2.0), -1.0, stats.expon(scale=1 / 3).cdf),
    # Erlang(k, r) tilted is Gamma(k, r - theta)
    ("erlang_up", dists.Erlang(3, 1.5), 0.5, stats.gamma(3, scale=1.0).cdf),
    ("erlang_down", dists.Erlang(3, 1.5), -1.0, stats.gamma(3, scale=1 / 2.5).cdf),
    (
        "hyper",
        dists.HyperExponential([0.3, 0.7], [0.5, 3.0]),
        0.3,
        _hyper_tilted_cdf([0.3, 0.7], [0.5, 3.0], 0.3),
    ),
    ("uniform_up", dists.Uniform(0.5, 2.0), 1.2, _uniform_tilted_cdf(0.5, 2.0, 1.2)),
    ("uniform_down", dists.Uniform(0.5, 2.0), -4.0, _uniform_tilted_cdf(0.5, 2.0, -4.0)),
    # the rejection path: Gamma(2, 1) tilted by -1 is Gamma(2, rate 2) ...
    ("rejection_gamma", dists.as_law(stats.gamma(2.0)), -1.0, stats.gamma(2, scale=0.5).cdf),
    # ... and a bounded scipy uniform tilted up is the tilted uniform
    (
        "rejection_uniform",
        dists.as_law(stats.uniform(0.5, 1.5)),
        1.2,
        _uniform_tilted_cdf(0.5, 2.0, 1.2),
    ),
]


@pytest.mark.parametrize(
    ("law", "theta", "cdf"), [c[1:] for c in KS_CASES], ids=[c[0] for c in KS_CASES]
)
def test_tilted_sampler_exact_law_ks(law, theta, cdf):
    x = tilted_sampler(law, theta)(np.random.default_rng(7), 50_000)
    assert stats.kstest(x, cdf).pvalue > 1e-3


@pytest.mark.parametrize(
    ("name", "theta"), [("empirical", 0.6), ("empirical", -1.0), ("scipy_binom", 0.7)]
)
def test_tilted_sampler_discrete_frequencies(name, theta):
    law, (_, values, probs) = CASES[name]
    w = np.array([p * math.exp(theta * v) for v, p in zip(values, probs, strict=True)])
    w /= w.sum()
    x = tilted_sampler(law, theta)(np.random.default_rng(11), N)
    counts = np.array([np.count_nonzero(x == v) for v in values])
    assert counts.sum() == N  # no value outside the support
    assert stats.chisquare(counts, N * w).pvalue > 1e-3


def test_tilted_sampler_empirical_drops_zero_weight_values():
    law = dists.Empirical([1.0, 2.0, 3.0], weights=[0.5, 0.0, 0.5])
    x = tilted_sampler(law, 2.0)(np.random.default_rng(2), 10_000)
    assert not np.any(x == 2.0)
    assert set(np.unique(x)) <= {1.0, 3.0}


@pytest.mark.parametrize(
    ("name", "theta"),
    [
        ("exp", 2.0),
        ("exp", 3.0),
        ("erlang", 1.5),
        ("hyper", 0.5),
        ("hyper", 2.0),
        ("lognormal", 0.1),
        ("lomax", 0.1),
        ("scipy_gamma", 1.0),
        ("scipy_lognorm", 0.5),
    ],
)
def test_tilted_sampler_without_finite_mgf_raises(name, theta):
    with pytest.raises(ValueError):
        tilted_sampler(CASES[name][0], theta)


# --------------------------------------------------------------------------------------------
# cramer_root
# --------------------------------------------------------------------------------------------


def _ra_log_mgf(servers, lam, mu):
    """``log E exp(theta X)`` for ``X = sigma 1{U = i} - tau``, sigma ~ Exp(mu), tau ~ Exp(lam)."""

    def f(t):
        if not -lam < t < mu:
            return INF
        return math.log(lam / (lam + t)) + math.log((servers - 1 + mu / (mu - t)) / servers)

    return f


@pytest.mark.parametrize("scale_factor", [0.01, 1.0, 100.0])
@pytest.mark.parametrize(
    ("servers", "lam", "mu"),
    [(1, 0.5, 1.0), (2, 1.5, 1.0), (4, 3.0, 1.0), (10, 9.5, 1.0), (3, 1.0, 2.0), (5, 0.3, 0.7)],
)
def test_cramer_root_random_assignment_exponential(servers, lam, mu, scale_factor):
    drift = 1 / (servers * mu) - 1 / lam
    scale = (1 / (servers * mu) + 1 / lam) * scale_factor
    root = cramer_root(_ra_log_mgf(servers, lam, mu), drift, scale)
    expected = mu - lam / servers
    assert root == pytest.approx(expected, rel=1e-10, abs=0.0), (root, expected)


def test_cramer_root_exp_minus_two_matches_lambert_w():
    # -log(1 - t) = 2 t  <=>  1 - t = exp(-2 t)  <=>  t = 1 + W0(-2 exp(-2)) / 2
    def f(t):
        return -math.log(1 - t) - 2 * t if t < 1 else INF

    root = cramer_root(f, -1.0, 1.0)
    expected = 1.0 + special.lambertw(-2 * math.exp(-2), 0).real / 2
    assert root == pytest.approx(expected, rel=1e-10, abs=0.0)
    assert round(root, 6) == 0.796812
    assert abs(f(root)) <= 1e-12


@pytest.mark.parametrize("scale_factor", [0.01, 1.0, 100.0])
@pytest.mark.parametrize(("lam", "d"), [(0.5, 1.0), (0.9, 1.0), (3.0, 0.2)])
def test_cramer_root_d_m_1_matches_lambert_w(lam, d, scale_factor):
    # X = d - tau: theta d + log(lam / (lam + theta)) = 0; with u = lam + theta,
    # -u d exp(-u d) = -lam d exp(-lam d), the non-trivial branch is W_{-1} (lam d < 1)
    def f(t):
        return t * d + math.log(lam / (lam + t)) if t > -lam else INF

    root = cramer_root(f, d - 1 / lam, (d + 1 / lam) * scale_factor)
    expected = -special.lambertw(-lam * d * math.exp(-lam * d), -1).real / d - lam
    assert root == pytest.approx(expected, rel=1e-10, abs=0.0)
    assert abs(f(root)) <= 1e-12


@pytest.mark.parametrize(("servers", "lam", "d"), [(2, 1.5, 1.0), (3, 2.0, 1.0), (8, 7.0, 1.0)])
def test_cramer_root_random_assignment_deterministic(servers, lam, d):
    # X = d 1{U = i} - tau: log E exp(theta X) = log(lam/(lam+theta)) + log((S-1+e^{theta d})/S)
    def f(t):
        if t <= -lam:
            return INF
        return math.log(lam / (lam + t)) + math.log((servers - 1 + math.exp(t * d)) / servers)

    root = cramer_root(f, d / servers - 1 / lam, d / servers + 1 / lam)
    assert math.isfinite(root) and root > 0
    assert abs(f(root)) <= 1e-12
    # the positive root, not the trivial one at 0: f changes sign there
    assert f(root * (1 - 1e-6)) < 0 < f(root * (1 + 1e-6))


@pytest.mark.parametrize("scale", [0.01, 1.0, 100.0])
def test_cramer_root_walk_that_never_rises_is_infinite(scale):
    assert cramer_root(lambda t: -t, -1.0, scale) == INF


@pytest.mark.parametrize("drift", [0.0, 0.5])
def test_cramer_root_needs_negative_drift(drift):
    with pytest.raises(ValueError):
        cramer_root(lambda t: t * drift, drift, 1.0)


@pytest.mark.parametrize("theta", [-1.5, 0.4, 0.9])
def test_coxian_mgf_and_tilted_mean_match_quadrature_of_sf(theta):
    # E[e^{tX}] = 1 + t int e^{tx} sf(x) dx and E[X e^{tX}] = int e^{tx} (1 + t x) sf(x) dx
    from scipy import integrate

    law = dists.Coxian([2.0, 1.0, 3.0], [0.5, 0.7])

    def sf(x):
        return float(law.sf(x))

    m = 1.0 + theta * integrate.quad(lambda x: math.exp(theta * x) * sf(x), 0, 400.0,
                                     epsrel=1e-12, limit=200)[0]
    assert mgf(law, theta) == pytest.approx(m, rel=1e-9)
    first = integrate.quad(lambda x: math.exp(theta * x) * (1 + theta * x) * sf(x), 0, 400.0,
                           epsrel=1e-12, limit=200)[0]
    x = tilted_sampler(law, theta)(np.random.default_rng(7), 200_000)
    # variance of the tilted law from the second moment, for the tolerance
    second = integrate.quad(lambda y: math.exp(theta * y) * (2 * y + theta * y * y) * sf(y), 0,
                            400.0, epsrel=1e-12, limit=200)[0]
    mean, var = first / m, second / m - (first / m) ** 2
    assert abs(x.mean() - mean) <= 4.5 * math.sqrt(var / x.size)
    assert mgf(law, 1.0) == math.inf
