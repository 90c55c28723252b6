"""The methods of the laws (recursions.dists.Law) against their generic fallbacks and Monte Carlo.

Every closed form a law overrides (log-mgf, tilted sampler, size-biased sampler, support_max,
Coxian form) is checked against the generic implementation of the base class (quadrature,
rejection, numerical inversion), called on the same law as ``Law._method(law, ...)``, and
against plain Monte Carlo from ``law.sample`` with tolerances from standard errors. Then: scipy
laws (frozen and, where installed, the newer distribution objects) through the public entry
points that take a law, the keyword constructors and their errors, the repr, and the in-kernel
sampler of recursions.dists.kernel, which must reproduce ``law.sample`` bit for bit.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import re

import numba
import numpy as np
import pytest
import scipy.stats as st

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.common.codes import LawCode
from recursions.dists import (
    Coxian,
    Deterministic,
    Empirical,
    Erlang,
    Exponential,
    HyperExponential,
    Law,
    LogNormal,
    Lomax,
    ScipyLaw,
    Uniform,
    as_law,
)
from recursions.dists.kernel import draw, draw_one, sampler
from tests.marks import UNTRUSTED

Z = 4.5
N = 40_000

LAWS = {
    "exponential": Exponential(1.7),
    "deterministic": Deterministic(1.3),
    "erlang": Erlang(3, 2.5),
    "hyper": HyperExponential([0.2, 0.5, 0.3], [0.5, 2.0, 5.0]),
    "coxian": Coxian([3.0, 1.0, 2.0], [0.6, 0.4]),
    "lognormal": LogNormal(1.5, 2.0),
    "lomax": Lomax(5.0, 2.0),
    "uniform": Uniform(0.5, 2.5),
    "empirical": Empirical([0.0, 0.4, 1.0, 2.5, 1.0], weights=[1, 2, 3, 4, 0.5]),
    "scipy_gamma": as_law(st.gamma(2, scale=0.5)),
}
BUILTIN = [k for k in LAWS if not k.startswith("scipy")]
DISCRETE = {"deterministic", "empirical"}
BOUNDED = {"deterministic", "uniform", "empirical"}
CLOSED_MGF = [k for k in LAWS if k not in ("lognormal", "lomax")]
# tilts with E[exp(2 theta X)] finite, so that Monte Carlo of exp(theta X) has a variance
MC_THETAS = {
    "exponential": [-1.0, 0.5],
    "deterministic": [-1.0, 2.0],
    "erlang": [-1.0, 0.8],
    "hyper": [-1.0, 0.2],
    "coxian": [-1.0, 0.3],
    "lognormal": [-1.0, -0.2],
    "lomax": [-1.0, -0.2],
    "uniform": [-1.0, 1.0],
    "empirical": [-1.0, 0.5],
    "scipy_gamma": [-1.0, 0.5],
}


def _seed(*parts) -> int:
    return sum((i + 1) * 1009 * len(str(p)) + sum(map(ord, str(p))) for i, p in enumerate(parts))


def _same_law(a: np.ndarray, b: np.ndarray, discrete: bool) -> None:
    """Two samples of one law: KS for continuous laws, means within Z standard errors."""
    if discrete:
        se = math.sqrt(a.var() / a.size + b.var() / b.size)
        assert abs(a.mean() - b.mean()) <= Z * se + 1e-12, (a.mean(), b.mean(), se)
        assert set(np.unique(a)) == set(np.unique(b))
    else:
        assert st.ks_2samp(a, b).pvalue > 1e-3


# --------------------------------------------------------------------------------------------
# log-mgf: closed form against the generic quadrature, and against Monte Carlo
# --------------------------------------------------------------------------------------------


# the generic fallback needs a bounded support for theta > 0; the closed forms do not
@pytest.mark.parametrize(
    ("key", "theta"),
    [(k, t) for k in CLOSED_MGF for t in (-2.0, -0.3, 0.4, 1.1) if t < 0 or k in BOUNDED],
)
def test_log_mgf_closed_form_matches_generic_quadrature(key, theta):
    law = LAWS[key]
    closed = law.log_mgf(theta)
    generic = Law._log_mgf(law, theta)
    assert closed == pytest.approx(generic, rel=1e-8, abs=1e-10), (key, closed, generic)


@pytest.mark.parametrize(("key", "theta"), [(k, t) for k, ts in MC_THETAS.items() for t in ts])
def test_mgf_matches_monte_carlo(key, theta):
    law = LAWS[key]
    y = np.exp(theta * law.sample(np.random.default_rng(_seed(key, theta)), N))
    se = y.std() / math.sqrt(N)
    assert abs(law.mgf(theta) - y.mean()) <= Z * se + 1e-12, (key, theta)
    assert cp.mgf(law, theta) == law.mgf(theta)  # the public function is the method
    assert cp.log_mgf(law, theta) == law.log_mgf(theta)


def test_generic_log_mgf_refuses_unbounded_positive_tilts_by_name():
    law = as_law(st.lognorm(0.5))
    with pytest.raises(ValueError, match=re.escape(repr(law)) + ".*not available"):
        law.log_mgf(0.1)


def test_log_mgf_edges():
    assert Exponential(2.0).log_mgf(2.0) == math.inf
    assert Exponential(2.0).mgf(0) == 1.0
    assert Deterministic(2.0).mgf(400.0) == math.inf  # overflow of exp, log_mgf stays finite
    assert Deterministic(2.0).log_mgf(400.0) == 800.0
    assert Uniform(0.0, 1.0).log_mgf(-1e6) == pytest.approx(-math.log(1e6), rel=1e-9)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="theta must be a finite number"):
            Exponential(1.0).log_mgf(bad)
    with pytest.raises(TypeError, match="theta must be a real number"):
        Exponential(1.0).log_mgf("1")


def test_generic_log_mgf_of_a_bounded_law_does_not_overflow():
    # scipy's beta on [0, 4]: no closed form. With Y ~ Beta(2, 3) and t = 4 theta,
    # E exp(t Y) ~ 12 Gamma(3) exp(t) / t^3 as t -> inf (Watson's lemma at the end point 1)
    law = as_law(st.beta(2, 3, scale=4.0))
    t = 4 * 300.0
    assert law.log_mgf(300.0) == pytest.approx(t + math.log(24.0) - 3 * math.log(t), abs=0.02)
    # against a direct quadrature of the density at a moderate tilt
    from scipy import integrate

    th = 1.5
    m = integrate.quad(lambda x: math.exp(th * x) * st.beta(2, 3, scale=4.0).pdf(x), 0, 4)[0]
    assert law.log_mgf(th) == pytest.approx(math.log(m), rel=1e-9)


@pytest.mark.parametrize("key", ["lognormal", "lomax"])
def test_heavy_tailed_laws_refuse_positive_tilts_by_name(key):
    law = LAWS[key]
    for f in (law.log_mgf, law.mgf, law.tilted_sampler):
        with pytest.raises(ValueError, match=re.escape(repr(law)) + ".*heavy-tailed"):
            f(0.01)
    assert math.isfinite(law.log_mgf(-0.5))  # theta <= 0: the Laplace transform


def test_scipy_gamma_family_has_closed_form_mgf_and_tilt():
    ref = Erlang(2, 2.0)
    for dist in (st.gamma(2, scale=0.5), st.erlang(2, scale=0.5)):
        law = as_law(dist)
        for th in (-3.0, 0.5, 1.9):
            assert law.log_mgf(th) == pytest.approx(ref.log_mgf(th), rel=1e-12)
        assert law.mgf(2.0) == math.inf
    shifted = as_law(st.expon(loc=0.5, scale=2.0))  # 0.5 + Exp(mean 2)
    assert shifted.log_mgf(0.25) == pytest.approx(0.125 + math.log(2.0), rel=1e-12)
    x = shifted.tilted_sampler(0.25)(np.random.default_rng(4), N)  # 0.5 + Exp(mean 4)
    assert x.min() >= 0.5
    assert abs(x.mean() - 4.5) <= Z * 4.0 / math.sqrt(N)
    with pytest.raises(ValueError, match=r"does not exist \(infinite mgf\)"):
        shifted.tilted_sampler(0.5)


# --------------------------------------------------------------------------------------------
# tilted samplers: closed form against rejection, and the tilted mean = d/dtheta log M
# --------------------------------------------------------------------------------------------

TILT_CASES = [(k, t) for k in CLOSED_MGF for t in (-0.7, 0.6) if t < 0 or k in BOUNDED]


@pytest.mark.parametrize(("key", "theta"), TILT_CASES)
def test_tilted_sampler_closed_form_matches_rejection(key, theta):
    law = LAWS[key]
    a = law.tilted_sampler(theta)(np.random.default_rng(_seed(key, theta, 1)), N)
    b = Law._tilted_sampler(law, theta)(np.random.default_rng(_seed(key, theta, 2)), N)
    assert a.shape == b.shape == (N,)
    _same_law(a, b, key in DISCRETE)


@pytest.mark.parametrize(
    ("key", "theta"), [(k, t) for k, ts in MC_THETAS.items() for t in ts if k in CLOSED_MGF]
)
def test_tilted_mean_is_the_derivative_of_log_mgf(key, theta):
    law = LAWS[key]
    h = 1e-5
    mean = (law.log_mgf(theta + h) - law.log_mgf(theta - h)) / (2 * h)
    x = law.tilted_sampler(theta)(np.random.default_rng(_seed(key, theta, 3)), N)
    assert abs(x.mean() - mean) <= Z * x.std() / math.sqrt(N) + 1e-6, (key, theta)
    assert np.array_equal(
        x, cp.tilted_sampler(law, theta)(np.random.default_rng(_seed(key, theta, 3)), N)
    )


def test_tilt_zero_is_the_law_itself():
    law = LAWS["coxian"]
    a = law.tilted_sampler(0.0)(np.random.default_rng(1), 100)
    assert np.array_equal(a, law.sample(np.random.default_rng(1), 100))


# --------------------------------------------------------------------------------------------
# size-biased samplers: closed form against numerical inversion, and Monte Carlo
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", list(LAWS))
def test_size_biased_closed_form_matches_inversion(key):
    law = LAWS[key]
    a = law.size_biased_sample(np.random.default_rng(_seed(key, 4)), 20_000)
    b = Law._size_biased_sample(law, np.random.default_rng(_seed(key, 5)), 20_000)
    _same_law(a, b, key in DISCRETE)


@pytest.mark.parametrize("key", [k for k in LAWS if math.isfinite(LAWS[k].var)])
def test_size_biased_mean_and_equilibrium_tail(key):
    law = LAWS[key]
    gen = np.random.default_rng(_seed(key, 6))
    x = law.size_biased_sample(gen, N)
    assert x.shape == (N,) and np.all(x >= 0)
    target = (law.var + law.mean**2) / law.mean  # E[X^2] / E[X]
    assert abs(x.mean() - target) <= Z * x.std() / math.sqrt(N)
    # U * (size-biased X) has the equilibrium law: its tail is equilibrium_sf
    r = gen.random(N) * x
    for w in (0.25 * law.mean, law.mean, 2.5 * law.mean):
        p = float(law.equilibrium_sf(w))
        assert abs(np.mean(r > w) - p) <= Z * math.sqrt(p * (1 - p) / N) + 1e-12, (key, w)
    assert np.array_equal(
        cp.size_biased_sample(law, np.random.default_rng(9), 50),
        law.size_biased_sample(np.random.default_rng(9), 50),
    )


def test_size_biased_sample_arguments():
    law = Exponential(1.0)
    assert law.size_biased_sample(np.random.default_rng(0), 0).shape == (0,)
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        law.size_biased_sample(np.random.RandomState(0), 3)
    with pytest.raises(ValueError, match="size must be an integer >= 0"):
        law.size_biased_sample(np.random.default_rng(0), -1)


# --------------------------------------------------------------------------------------------
# support_max, coxian(), exponential_rate, closed_form_tails
# --------------------------------------------------------------------------------------------

BOUNDED_LAWS = [
    (Deterministic(1.3), 1.3),
    (Uniform(0.5, 2.5), 2.5),
    (Empirical([0.0, 0.4, 1.0, 2.5, 1.0], weights=[1, 2, 3, 4, 0.5]), 2.5),
    (Empirical([1.0, 3.0], weights=[1.0, 0.0]), 1.0),  # the weightless top value is no support
    (as_law(st.beta(2, 3, scale=4.0)), 4.0),
    (as_law(st.binom(5, 0.4)), 5.0),
]


@pytest.mark.parametrize(("law", "top"), BOUNDED_LAWS, ids=lambda v: type(v).__name__)
def test_support_max_is_the_least_bound(law, top):
    assert law.support_max == top == cp.support_max(law)
    assert float(law.sf(top)) == 0.0
    assert float(law.sf(top * (1 - 1e-9))) > 0.0
    assert np.all(law.sample(np.random.default_rng(2), 5000) <= top)


@pytest.mark.parametrize("key", [k for k in LAWS if k not in BOUNDED])
def test_support_max_of_unbounded_laws(key):
    law = LAWS[key]
    assert law.support_max == math.inf == Law.support_max.fget(law)
    assert float(law.sf(5 * law.mean)) > 0


@pytest.mark.parametrize(
    "law",
    [Exponential(1.7), Erlang(3, 2.5), Erlang(1, 0.5), Coxian([3.0, 1.0, 2.0], [0.6, 0.4])],
    ids=lambda v: type(v).__name__,
)
def test_coxian_form_is_the_same_law(law):
    cox = law.coxian()
    assert isinstance(cox, Coxian)
    assert cox.mean == pytest.approx(law.mean, rel=1e-14)
    assert cox.var == pytest.approx(law.var, rel=1e-10)
    x = np.array([0.0, 0.1, 0.7, 1.5, 4.0])
    np.testing.assert_allclose(cox.sf(x), law.sf(x), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(cox.integrated_sf(x), law.integrated_sf(x), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "key", ["deterministic", "hyper", "lognormal", "lomax", "uniform", "empirical", "scipy_gamma"]
)
def test_no_coxian_form_for_the_other_laws(key):
    assert LAWS[key].coxian() is None


def test_exponential_rate_and_closed_form_tails():
    assert Exponential(mean=0.5).exponential_rate == 2.0
    for key in LAWS:
        if key != "exponential":
            assert LAWS[key].exponential_rate is None
    assert as_law(st.expon(scale=0.5)).exponential_rate is None  # draws are scipy's
    assert all(LAWS[k].closed_form_tails for k in BUILTIN)
    assert not LAWS["scipy_gamma"].closed_form_tails


def test_the_redundancy_and_zerowait_paths_follow_the_methods():
    assert rc.JobClass(2, 1, Exponential(2.0)).exponential
    assert not rc.JobClass(2, 1, Erlang(1, 2.0)).exponential
    # the counts engine takes the Coxian form; a law without one is refused by name
    res = rc.zerowait.simulate_queues(
        rc.JSQ(3, 4), rc.Poisson(2.0, Erlang(2, 2.0)), steps=2000, rng=1, engine="counts"
    )
    assert 0 <= res.p_block.value <= 1  # zerowait reports blocking as p_block
    with pytest.raises(ValueError, match=re.escape("ScipyLaw(expon(scale=2)")):
        rc.zerowait.simulate_queues(
            rc.JSQ(3, 4), rc.Poisson(2.0, st.expon(scale=2)), steps=2000, engine="counts"
        )


# --------------------------------------------------------------------------------------------
# keyword constructors
# --------------------------------------------------------------------------------------------


def test_keyword_constructors_agree_with_positional():
    assert Exponential(2.0) == Exponential(rate=2.0) == Exponential(mean=0.5)
    assert Exponential() == Exponential(1.0)
    assert Erlang(3, 6.0) == Erlang(3, rate=6.0) == Erlang(k=3, mean=0.5)
    assert Deterministic(1.5) == Deterministic(value=1.5) == Deterministic(mean=1.5)
    assert Lomax(3.0, 2.0) == Lomax(shape=3.0, scale=2.0) == Lomax(3.0, mean=1.0)
    assert Uniform(1.0, 3.0) == Uniform(low=1.0, high=3.0)
    assert LogNormal(1.0, 2.0) == LogNormal(mean=1.0, scv=2.0)
    for law, mean in [
        (Exponential(mean=0.3), 0.3),
        (Erlang(4, mean=2.2), 2.2),
        (Deterministic(mean=0.7), 0.7),
        (Lomax(2.5, mean=1.9), 1.9),
    ]:
        assert law.mean == pytest.approx(mean, rel=1e-15)
    law = Erlang(3, mean=0.5)
    assert dataclasses.replace(law, rate=3.0) == Erlang(3, 3.0)
    assert dataclasses.replace(Exponential(2.0), rate=4.0) == Exponential(4.0)
    for law in (
        Exponential(mean=0.5),
        Erlang(2, mean=1.0),
        Deterministic(mean=2.0),
        Lomax(3.0, mean=1.0),
    ):
        assert pickle.loads(pickle.dumps(law)) == law
        assert hash(pickle.loads(pickle.dumps(law))) == hash(law)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Exponential(1.0).rate = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("make", "exc", "match"),
    [
        (lambda: Exponential(2.0, mean=0.5), TypeError, r"exactly one of rate= or mean="),
        (lambda: Exponential(mean=0.0), ValueError, "mean must be a finite number > 0"),
        (lambda: Exponential(mean="1"), TypeError, "mean must be a real number"),
        (lambda: Erlang(3), TypeError, r"Erlang takes exactly one of rate= or mean= \(got none\)"),
        (lambda: Erlang(3, 1.0, mean=3.0), TypeError, r"\(got rate, mean\)"),
        (lambda: Erlang(3, mean=-1.0), ValueError, "mean must be a finite number > 0"),
        (lambda: Deterministic(), TypeError, "exactly one of value= or mean="),
        (lambda: Deterministic(1.0, mean=1.0), TypeError, "exactly one of value= or mean="),
        (lambda: Deterministic(mean=math.inf), ValueError, "mean must be a finite number > 0"),
        (lambda: Lomax(3.0), TypeError, "exactly one of scale= or mean="),
        (lambda: Lomax(3.0, 2.0, mean=1.0), TypeError, "exactly one of scale= or mean="),
        (lambda: Lomax(1.0, mean=1.0), ValueError, "infinite mean"),
        (lambda: Lomax(3.0, mean=0.0), ValueError, "mean must be a finite number > 0"),
        (lambda: Exponential(rate=1.0, scale=1.0), TypeError, "scale"),
    ],
)
def test_keyword_constructor_errors(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


# --------------------------------------------------------------------------------------------
# repr
# --------------------------------------------------------------------------------------------

REPR_LAWS = [
    Exponential(2.0),
    Erlang(3, 6.0),
    Deterministic(1.5),
    HyperExponential([0.25, 0.75], [1.0, 3.0]),
    Coxian([1.0, 2.0], [0.5]),
    Lomax(3.0, 2.0),
    Lomax(1.5, 1.0),
    Uniform(1.0, 3.0),
    Empirical([1.0, 3.0], weights=[3, 1]),
    Empirical(np.arange(1.0, 101.0)),
    as_law(st.gamma(2, scale=0.5)),
]
SUMMARY = re.compile(r"^(\w+)\((.*); mean=([^,]+), scv=([^)]+)\)$")


@pytest.mark.parametrize("law", REPR_LAWS, ids=lambda v: type(v).__name__)
def test_repr_shows_parameters_mean_and_scv(law):
    m = SUMMARY.match(repr(law))
    assert m is not None, repr(law)
    assert m.group(1) == type(law).__name__
    assert float(m.group(3)) == pytest.approx(law.mean, rel=1e-5)
    assert float(m.group(4)) == pytest.approx(law.scv, rel=1e-5)
    if not isinstance(law, (ScipyLaw, Empirical)):
        # the part before ";" is the constructor call that rebuilds the law
        rebuilt = eval(f"{m.group(1)}({m.group(2)})")
        assert rebuilt == law


def test_repr_examples():
    assert repr(Exponential(2.0)) == "Exponential(rate=2.0; mean=0.5, scv=1)"
    assert repr(Erlang(3, mean=0.5)) == "Erlang(k=3, rate=6.0; mean=0.5, scv=0.333333)"
    assert repr(Deterministic(1.5)) == "Deterministic(value=1.5; mean=1.5, scv=0)"
    assert repr(Lomax(1.5, 1.0)) == "Lomax(shape=1.5, scale=1.0; mean=2, scv=inf)"
    assert repr(LogNormal(1.0, 2.0)) == "LogNormal(mean=1.0, scv=2.0)"  # already its parameters
    assert repr(Empirical(np.arange(1.0, 101.0))) == (
        "Empirical(<100 values>; mean=50.5, scv=0.326733)"
    )
    assert repr(rc.Poisson(2.0, Exponential(1.0))) == (
        "Poisson(rate=2.0, service=Exponential(rate=1.0; mean=1, scv=1))"
    )


# --------------------------------------------------------------------------------------------
# the in-kernel sampler
# --------------------------------------------------------------------------------------------

KERNEL_LAWS = {k: LAWS[k] for k in BUILTIN} | {
    "erlang_k1": Erlang(1, 0.5),
    "lomax_heavy": Lomax(1.5, 1.0),
    "hyper_one": HyperExponential([1.0], [2.0]),
    "coxian_one": Coxian([2.0], []),
    "coxian_cut": Coxian([1.0, 2.0, 3.0], [0.0, 1.0]),
}
ELEMENTWISE = {"hyper", "hyper_one", "coxian", "coxian_cut"}  # ... are the exceptions


@pytest.mark.parametrize("key", list(KERNEL_LAWS))
@pytest.mark.parametrize("n", [0, 1, 7, 2000])
def test_kernel_draws_are_sample_bit_for_bit(key, n):
    law = KERNEL_LAWS[key]
    code, params = law.kernel_sampler()
    assert isinstance(code, LawCode) and params.dtype == np.float64 and params.ndim == 1
    seed = _seed(key, n)
    g_ref, g_ker = np.random.default_rng(seed), np.random.default_rng(seed)
    ref = law.sample(g_ref, n)
    got = draw(code, params, g_ker, n)
    np.testing.assert_array_equal(got, ref)
    assert g_ref.random() == g_ker.random()  # the generator advanced alike
    # one draw at a time: law.sample(gen, 1), and law.sample(gen, n) for elementwise laws
    g_one, g_ref1 = np.random.default_rng(seed), np.random.default_rng(seed)
    one = np.array([draw_one(code, params, g_one) for _ in range(n)])
    np.testing.assert_array_equal(one, np.array([law.sample(g_ref1, 1)[0] for _ in range(n)]))
    if key not in ELEMENTWISE:
        np.testing.assert_array_equal(one, ref)
    if n == 2000:  # the law's own sampler bound in a loop, as in the drivers: the same numbers
        own = sampler(code)

        @numba.njit
        def fixed(params, gen, n):
            out = np.empty(n)
            p0 = params[0]
            for i in range(n):
                out[i] = own(p0, params, gen)
            return out

        np.testing.assert_array_equal(fixed(params, np.random.default_rng(seed), n), one)


def test_sampler_of_every_code_and_none_other():
    codes = {int(law.kernel_sampler()[0]) for law in KERNEL_LAWS.values()}
    assert codes == {int(c) for c in LawCode}
    with pytest.raises(ValueError, match="unknown law code 99"):
        sampler(99)


def test_kernel_sampler_inside_a_users_kernel():
    @numba.njit
    def total(code, params, gen, n):
        s = 0.0
        for _ in range(n):
            s += draw_one(code, params, gen)
        return s

    law = LogNormal(1.5, 2.0)
    code, params = law.kernel_sampler()
    assert total(int(code), params, np.random.default_rng(3), 500) == pytest.approx(
        float(np.sum(law.sample(np.random.default_rng(3), 500))), rel=1e-13
    )


def test_kernel_sampler_is_none_where_there_is_none():
    assert as_law(st.gamma(2)).kernel_sampler() is None
    assert {c.name for c in LawCode} == {
        "DETERMINISTIC",
        "EXPONENTIAL",
        "ERLANG",
        "HYPEREXPONENTIAL",
        "COXIAN",
        "LOGNORMAL",
        "LOMAX",
        "UNIFORM",
        "EMPIRICAL",
    }
    with pytest.raises(ValueError, match="unknown law code"):
        draw_one(99, np.zeros(1), np.random.default_rng(0))


# --------------------------------------------------------------------------------------------
# scipy laws through the public entry points
# --------------------------------------------------------------------------------------------

GAMMA = st.gamma(2, scale=0.5)  # mean 1, the law of Erlang(2, 2.0)
NEW_GAMMA = 0.5 * st.make_distribution(st.gamma)(a=2.0)
NEW_UNIFORM = st.Uniform(a=0.0, b=2.0)


def test_new_style_scipy_laws_are_laws():
    law = as_law(NEW_GAMMA)
    ref = Erlang(2, 2.0)
    assert isinstance(law, ScipyLaw)
    assert law.mean == pytest.approx(1.0) and law.var == pytest.approx(0.5)
    w = np.array([0.0, 0.3, 1.0, 2.5])
    np.testing.assert_allclose(law.sf(w), ref.sf(w), rtol=1e-10)
    np.testing.assert_allclose(law.integrated_sf(w), ref.integrated_sf(w), rtol=1e-7)
    x = law.sample(np.random.default_rng(1), N)
    assert x.shape == (N,) and abs(x.mean() - 1.0) <= Z * math.sqrt(0.5 / N)
    assert as_law(NEW_UNIFORM).support_max == 2.0
    assert law.log_mgf(-1.0) == pytest.approx(ref.log_mgf(-1.0), rel=1e-8)
    with pytest.raises(ValueError, match=re.escape(repr(law)) + ".* not available"):
        law.tilted_sampler(0.5)
    binom = as_law(st.Binomial(n=5, p=0.4))
    k = np.arange(6.0)
    pmf = st.binom(5, 0.4).pmf(k)
    for wi in (0.0, 0.5, 2.0, 4.5):
        assert float(binom.integrated_sf(wi)) == pytest.approx(
            float(np.sum(pmf * np.maximum(k - wi, 0.0))), rel=1e-10
        )


@pytest.mark.parametrize("dist", [GAMMA, NEW_GAMMA], ids=["frozen", "new"])
def test_scipy_laws_in_coupling_functions(dist):
    gen = np.random.default_rng
    assert cp.support_max(dist) == math.inf
    assert cp.mgf(dist, -1.0) == pytest.approx(Erlang(2, 2.0).mgf(-1.0), rel=1e-8)
    assert cp.log_mgf(dist, -0.5) == pytest.approx(Erlang(2, 2.0).log_mgf(-0.5), rel=1e-8)
    x = cp.tilted_sampler(dist, -1.0)(gen(1), N)  # Gamma(2, rate 3)
    assert abs(x.mean() - 2 / 3) <= Z * math.sqrt(2 / 9 / N)
    y = cp.size_biased_sample(dist, gen(2), N)  # Gamma(3, rate 2)
    assert abs(y.mean() - 1.5) <= Z * math.sqrt(0.75 / N)
    q = cp.ReversedQueue(0.5, dist, gen(3))
    t, s = q.advance(50.0)
    assert isinstance(q.law, ScipyLaw) and t.size == s.size > 0


@pytest.mark.parametrize(
    ("inp", "method"),
    [
        (rc.Poisson(1.0, GAMMA), "dominated-cyclic"),  # the gamma family's mgf: a light tail
        (rc.Poisson(0.4, st.lognorm(1.0)), "dominated"),  # heavy: reversed M/G/1 queues
        (rc.Renewal(st.gamma(2, scale=1.0), GAMMA), "dominated-cyclic"),
        (rc.Renewal(st.expon(scale=2.0), NEW_UNIFORM), "dominated-cyclic"),
    ],
    ids=["poisson-gamma", "poisson-lognorm", "gi-gamma", "gi-new-uniform"],
)
def test_perfect_sample_takes_scipy_laws(inp, method):
    out = cp.perfect_sample(rc.JSW(2), inp, 3, rng=1)
    assert out.method == method
    assert np.asarray(out.samples).shape[0] == 3


def test_perfect_sample_with_scipy_laws_refuses_by_name():
    law = st.lognorm(1.0)
    with pytest.raises(ValueError, match=r"ScipyLaw\(lognorm\(1\.0\).*not available"):
        cp.perfect_sample(rc.JSW(2), rc.Renewal(st.expon(scale=2.0), law), 3, rng=1)
    out = cp.perfect_sample(rc.Loss(2), rc.Renewal(st.expon(scale=2.0), NEW_UNIFORM), 3, rng=1)
    assert out.method == "renovation"  # bounded support read from the new-style object


@pytest.mark.parametrize("dist", [GAMMA, NEW_GAMMA], ids=["frozen", "new"])
def test_scipy_laws_in_loynes(dist):
    ref = Erlang(2, 2.0)
    w = np.array([0.0, 0.5, 2.0])
    np.testing.assert_allclose(
        ly.mg1_workload_sf(0.5, dist, w), ly.mg1_workload_sf(0.5, ref, w), rtol=1e-4, atol=1e-6
    )
    eq = ly.jiq_equilibrium(0.5, dist)
    assert isinstance(eq.service, ScipyLaw) and eq.load == pytest.approx(0.5)
    assert ly.critical_rate_11(3, 1, dist) == pytest.approx(ly.critical_rate_11(3, 1, 1.0))
    assert ly.critical_rate_3(3, dist) == pytest.approx(3.0)
    job = rc.JobClass(2, 1, dist)
    assert isinstance(job.size, ScipyLaw) and job.mean_size == pytest.approx(1.0)
    fp = ly.redundancy_fixed_point(job, 0.3, balance_samples=2000)
    fp_ref = ly.redundancy_fixed_point(rc.JobClass(2, 1, ref), 0.3, balance_samples=2000)
    assert fp.load == pytest.approx(fp_ref.load, rel=1e-3)


@UNTRUSTED
def test_scipy_laws_in_simulate_and_zerowait():
    res = rc.simulate(rc.JSW(2), rc.Renewal(NEW_GAMMA, NEW_UNIFORM), steps=5000, rng=1)
    assert 0 < res.p_wait.value < 1
    res = rc.simulate(rc.JSQ(3, 4), rc.Poisson(2.0, GAMMA), steps=5000, rng=1)
    assert 0 <= res.p_block.value < 1


@pytest.mark.parametrize("dist", [GAMMA, NEW_GAMMA], ids=["frozen", "new"])
def test_poisson_at_load_takes_scipy_laws(dist):
    inp = ly.PoissonAtLoad(2, dist)(0.5)  # rate = load * S / E[sigma] = 0.5 * 2 / 1
    assert inp.arrival_rate == pytest.approx(1.0)
    assert isinstance(inp.service, ScipyLaw)
    if dist is GAMMA:  # picklable for process workers (make_distribution's classes are local)
        again = pickle.loads(pickle.dumps(ly.PoissonAtLoad(2, dist)))
        assert again(0.5).arrival_rate == pytest.approx(1.0)


def test_ra_walk_takes_scipy_laws():
    walk = cp.RAWalk(2, GAMMA, st.expon(scale=1.0), np.random.default_rng(1))
    ref = cp.RAWalk(2, Erlang(2, 2.0), Exponential(1.0), np.random.default_rng(1))
    assert walk.theta == pytest.approx(ref.theta, rel=1e-9)  # the gamma family's closed mgf
    with pytest.raises(ValueError, match=r"ScipyLaw\(lognorm\(1\.0\).*not available"):
        cp.RAWalk(2, st.lognorm(1.0), st.expon(scale=3.0), np.random.default_rng(1))


def test_no_isinstance_chain_on_laws_outside_dists():
    # what a method needs from a law is a method of the law: no code outside recursions.dists
    # asks which law class it holds
    from pathlib import Path

    import recursions.dists as dists_pkg

    root = Path(rc.__file__).resolve().parents[1]
    names = "|".join([*dists_pkg.__all__, "Pareto", "Lognormal", r"dists\.\w+"])
    pattern = re.compile(rf"isinstance\([^)]*\b({names})\b")
    hits = []
    for pkg in ("recursions", "coupling", "loynes"):
        for path in sorted((root / pkg).rglob("*.py")):
            if "dists" in path.relative_to(root).parts:
                continue
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    hits.append(f"{path.relative_to(root)}:{i}: {line.strip()}")
    assert hits == []
