"""Tests of recursions.dists against independent oracles.

Oracles: scipy.stats for the named laws, hand-written closed forms (hyperexponential sums,
hypoexponential sums for Coxian laws, moment recursions), scipy.integrate.quad of an oracle sf for
integrated_sf, and sample moments with tolerances from the standard error.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import integrate

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

N = 200_000
XS = np.array([-1.0, 0.0, 0.1, 0.5, 1.0, 1.3, 2.0, 3.7, 8.0, 20.0])
WS = np.array([0.0, 0.05, 0.3, 1.0, 1.3, 2.2, 5.0, 12.0])


# --------------------------------------------------------------------------------------------
# oracles
# --------------------------------------------------------------------------------------------


def hypoexp_sf(rates: list[float], x: np.ndarray) -> np.ndarray:
    """sf of a sum of independent exponentials with *distinct* rates (partial fractions)."""
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for i, li in enumerate(rates):
        coef = 1.0
        for j, lj in enumerate(rates):
            if j != i:
                coef *= lj / (lj - li)
        out += coef * np.exp(-li * x)
    return out


def coxian_sf_oracle(rates: list[float], probs: list[float]) -> Callable[[np.ndarray], np.ndarray]:
    """Mixture over the number of phases visited, each a hypoexponential (distinct rates)."""

    def sf(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = np.zeros_like(x)
        reach = 1.0
        for m in range(len(rates)):
            stop = 1.0 - probs[m] if m < len(probs) else 1.0
            out += reach * stop * hypoexp_sf(rates[: m + 1], x)
            reach *= probs[m] if m < len(probs) else 0.0
        return np.where(x < 0, 1.0, out)

    return sf


def coxian_moments(rates: list[float], probs: list[float]) -> tuple[float, float]:
    """Mean and variance from Y_m = E_m + B_m Y_{m+1} (backwards), not from matrices."""
    m1 = m2 = 0.0
    for m in reversed(range(len(rates))):
        p = probs[m] if m < len(probs) else 0.0
        e1, e2 = 1.0 / rates[m], 2.0 / rates[m] ** 2
        m1, m2 = e1 + p * m1, e2 + 2.0 * e1 * p * m1 + p * m2
    return m1, m2 - m1**2


HYPER_P, HYPER_R = [0.2, 0.5, 0.3], [0.5, 2.0, 5.0]
COX_R, COX_P = [3.0, 1.0, 2.0], [0.6, 0.4]
EMP_V, EMP_W = np.array([0.0, 0.4, 1.0, 2.5, 1.0]), np.array([1.0, 2.0, 3.0, 4.0, 0.5])
EMP_P = EMP_W / EMP_W.sum()
LN_MEAN, LN_SCV = 1.5, 2.0
LN_ORACLE = st.lognorm(s=math.sqrt(math.log1p(LN_SCV)), scale=LN_MEAN / math.sqrt(1.0 + LN_SCV))


def _hyper_sf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    out = sum(p * np.exp(-r * np.maximum(x, 0.0)) for p, r in zip(HYPER_P, HYPER_R, strict=True))
    return np.where(x < 0, 1.0, out)


def _emp_sf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.array([EMP_P[xi < EMP_V].sum() for xi in x.ravel()]).reshape(x.shape)


hyper_mean = sum(p / r for p, r in zip(HYPER_P, HYPER_R, strict=True))
hyper_var = sum(2 * p / r**2 for p, r in zip(HYPER_P, HYPER_R, strict=True)) - hyper_mean**2
emp_mean = float(np.sum(EMP_P * EMP_V))
emp_var = float(np.sum(EMP_P * (EMP_V - emp_mean) ** 2))


@dataclasses.dataclass
class Case:
    law: Law
    sf: Callable[[np.ndarray], np.ndarray]  # oracle survival function (vectorised)
    mean: float
    var: float
    breaks: tuple[float, ...] = ()  # kinks / jumps of sf, for quad
    upper: float = math.inf  # right end of the support
    continuous: bool = True


def _scipy_case(law: Law, dist: Any) -> Case:
    return Case(law, dist.sf, float(dist.mean()), float(dist.var()))


CASES: dict[str, Case] = {
    "exponential": _scipy_case(Exponential(1.7), st.expon(scale=1 / 1.7)),
    "deterministic": Case(
        Deterministic(1.3),
        lambda x: (np.asarray(x) < 1.3).astype(float),
        1.3,
        0.0,
        breaks=(1.3,),
        upper=1.3,
        continuous=False,
    ),
    "erlang": _scipy_case(Erlang(3, 2.5), st.erlang(3, scale=1 / 2.5)),
    "erlang_k1": _scipy_case(Erlang(1, 0.5), st.expon(scale=2.0)),
    "hyperexponential": Case(HyperExponential(HYPER_P, HYPER_R), _hyper_sf, hyper_mean, hyper_var),
    "coxian": Case(
        Coxian(COX_R, COX_P), coxian_sf_oracle(COX_R, COX_P), *coxian_moments(COX_R, COX_P)
    ),
    "lognormal": _scipy_case(LogNormal(LN_MEAN, LN_SCV), LN_ORACLE),
    "lomax": _scipy_case(Lomax(5.0, 2.0), st.lomax(5.0, scale=2.0)),
    "lomax_heavy": _scipy_case(Lomax(1.5, 1.0), st.lomax(1.5, scale=1.0)),
    "uniform": Case(
        Uniform(0.5, 2.5),
        st.uniform(0.5, 2.0).sf,
        1.5,
        4.0 / 12.0,
        breaks=(0.5, 2.5),
        upper=2.5,
    ),
    "empirical": Case(
        Empirical(EMP_V, weights=EMP_W),
        _emp_sf,
        emp_mean,
        emp_var,
        breaks=tuple(EMP_V.tolist()),
        upper=2.5,
        continuous=False,
    ),
    # gamma(2, scale 0.5) = Erlang(2, rate 2): mean 1, var 0.5
    "scipy_gamma": Case(as_law(st.gamma(2, scale=0.5)), Erlang(2, 2.0).sf, 1.0, 0.5),
    "scipy_lognorm": Case(
        as_law(st.lognorm(0.5, scale=1.0)),
        LogNormal(math.exp(0.125), math.expm1(0.25)).sf,
        math.exp(0.125),
        math.expm1(0.25) * math.exp(0.25),
    ),
}
IDS = list(CASES)
FINITE_VAR = [k for k in IDS if math.isfinite(CASES[k].var)]
CONTINUOUS = [k for k in IDS if CASES[k].continuous]


def quad_tail(sf: Callable[[np.ndarray], np.ndarray], w: float, breaks=(), upper=math.inf) -> float:
    """int_w^upper sf, split at the breaks."""
    if w >= upper:
        return 0.0
    pts = sorted({w, upper, *(b for b in breaks if w < b < upper)})
    total = 0.0
    for a, b in itertools.pairwise(pts):
        total += integrate.quad(lambda t: float(sf(np.array([t]))[0]), a, b, limit=200)[0]
    return total


# --------------------------------------------------------------------------------------------
# moments, sf, integrated_sf: every law against its oracle
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", IDS)
def test_mean_var_scv(key: str) -> None:
    case = CASES[key]
    law = case.law
    assert isinstance(law.mean, float)
    assert law.mean == pytest.approx(case.mean, rel=1e-12)
    if math.isfinite(case.var):
        assert law.var == pytest.approx(case.var, rel=1e-10, abs=1e-14)
        assert law.scv == pytest.approx(case.var / case.mean**2, rel=1e-10, abs=1e-14)
    else:
        assert law.var == math.inf
        assert law.scv == math.inf


@pytest.mark.parametrize("key", IDS)
def test_sf_matches_oracle(key: str) -> None:
    case = CASES[key]
    got = case.law.sf(XS)
    assert got.shape == XS.shape
    np.testing.assert_allclose(got, case.sf(XS), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(case.law.cdf(XS), 1.0 - case.sf(XS), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("key", IDS)
def test_integrated_sf_matches_quad(key: str) -> None:
    case = CASES[key]
    got = case.law.integrated_sf(WS)
    expected = np.array([quad_tail(case.sf, w, case.breaks, case.upper) for w in WS])
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(
        case.law.equilibrium_sf(WS), expected / case.mean, rtol=1e-7, atol=1e-10
    )


@pytest.mark.parametrize("key", IDS)
def test_equilibrium_sf_at_zero_and_shape(key: str) -> None:
    law = CASES[key].law
    assert law.equilibrium_sf(0.0) == 1.0
    assert float(law.integrated_sf(0.0)) == pytest.approx(law.mean, rel=1e-12)
    # a proper tail: starts at 1, non-increasing, in [0, 1], 0 at infinity
    grid = np.linspace(0.0, 10.0, 41)
    eq = law.equilibrium_sf(grid)
    assert np.all(np.diff(eq) <= 1e-12)
    assert np.all((eq >= 0) & (eq <= 1))
    assert law.equilibrium_sf(np.inf) == 0.0
    assert law.equilibrium_sf(1e-9) == pytest.approx(1.0, abs=1e-8 / law.mean + 1e-12)


@pytest.mark.parametrize("key", FINITE_VAR)
def test_sample_moments(key: str) -> None:
    case = CASES[key]
    x = case.law.sample(np.random.default_rng(20240611), N)
    assert x.shape == (N,)
    assert x.dtype == np.float64
    assert np.all(x >= 0)
    sd = math.sqrt(case.var)
    assert abs(x.mean() - case.mean) <= 5 * sd / math.sqrt(N) + 1e-12
    sq = (x - case.mean) ** 2
    se_var = sq.std() / math.sqrt(N)
    assert abs(sq.mean() - case.var) <= 5 * se_var + 1e-12


@pytest.mark.parametrize("key", CONTINUOUS)
def test_sample_distribution_ks(key: str) -> None:
    case = CASES[key]
    x = case.law.sample(np.random.default_rng(7), 20_000)
    assert st.kstest(x, lambda t: 1.0 - case.sf(t)).pvalue > 1e-4


def test_heavy_lomax_sample_median() -> None:
    # infinite variance: check the sample median against the oracle quantile instead
    law = Lomax(1.5, 1.0)
    x = law.sample(np.random.default_rng(3), N)
    med = st.lomax(1.5).median()
    # sd of the sample median is 1 / (2 f(med) sqrt(n))
    se = 1.0 / (2.0 * st.lomax(1.5).pdf(med) * math.sqrt(N))
    assert abs(np.median(x) - med) < 5 * se


def test_discrete_sample_frequencies() -> None:
    law = CASES["empirical"].law
    x = law.sample(np.random.default_rng(11), N)
    for v in np.unique(EMP_V):
        p = EMP_P[EMP_V == v].sum()
        freq = np.mean(x == v)
        assert abs(freq - p) < 5 * math.sqrt(p * (1 - p) / N)
    assert set(np.unique(x)) <= set(EMP_V)
    assert np.all(Deterministic(1.3).sample(np.random.default_rng(0), 10) == 1.3)


# --------------------------------------------------------------------------------------------
# law-specific identities
# --------------------------------------------------------------------------------------------


def test_exponential_is_memoryless_and_equilibrium_is_itself() -> None:
    law = Exponential(0.8)
    np.testing.assert_allclose(law.equilibrium_sf(WS), np.exp(-0.8 * WS), rtol=1e-14)
    assert law.sf(3.0) == pytest.approx(float(law.sf(1.0) * law.sf(2.0)), rel=1e-14)


def test_deterministic_equilibrium_is_uniform() -> None:
    w = np.array([0.0, 0.5, 1.0, 1.99, 2.0, 3.0])
    np.testing.assert_allclose(Deterministic(2.0).equilibrium_sf(w), st.uniform(0, 2).sf(w))


def test_erlang_integrated_sf_formula() -> None:
    # int_w^inf sf = (k/rate) P(Gamma(k+1) > w) - w P(Gamma(k) > w)
    k, rate = 7, 1.3
    w = np.array([0.0, 1.0, 4.0, 9.0])
    expected = (k / rate) * st.gamma(k + 1, scale=1 / rate).sf(w) - w * st.gamma(
        k, scale=1 / rate
    ).sf(w)
    np.testing.assert_allclose(Erlang(k, rate).integrated_sf(w), expected, rtol=1e-10)


def test_lognormal_and_lomax_integrated_sf_closed_forms() -> None:
    law = LogNormal(2.0, 0.7)
    s2 = math.log1p(0.7)
    mu, s = math.log(2.0) - s2 / 2, math.sqrt(s2)
    w = np.array([0.5, 2.0, 6.0])
    z = (mu - np.log(w)) / s
    expected = 2.0 * st.norm.cdf(z + s) - w * st.norm.cdf(z)
    np.testing.assert_allclose(law.integrated_sf(w), expected, rtol=1e-12)
    lomax = Lomax(2.5, 3.0)
    np.testing.assert_allclose(
        lomax.integrated_sf(w), 3.0 / 1.5 * (1 + w / 3.0) ** (-1.5), rtol=1e-12
    )


def test_coxian_phase_means_and_mean() -> None:
    law = Coxian([1.0, 2.0, 4.0], [0.5, 0.25])
    np.testing.assert_allclose(law.phase_means, [1.0, 0.5 / 2.0, 0.125 / 4.0])
    assert law.mean == pytest.approx(1.0 + 0.25 + 0.03125, rel=1e-14)
    m, v = coxian_moments([1.0, 2.0, 4.0], [0.5, 0.25])
    assert law.mean == pytest.approx(m, rel=1e-14)
    assert law.var == pytest.approx(v, rel=1e-12)


def test_coxian_one_phase_is_exponential() -> None:
    cox, exp = Coxian([2.5], []), Exponential(2.5)
    assert cox.mean == pytest.approx(exp.mean, rel=1e-15)
    assert cox.var == pytest.approx(exp.var, rel=1e-12)
    np.testing.assert_allclose(cox.sf(XS), exp.sf(XS), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cox.integrated_sf(WS), exp.integrated_sf(WS), rtol=1e-12, atol=1e-15)


def test_coxian_with_full_continuation_is_erlang() -> None:
    cox, erl = Coxian([1.5] * 4, [1.0] * 3), Erlang(4, 1.5)
    assert cox.var == pytest.approx(erl.var, rel=1e-12)
    np.testing.assert_allclose(cox.sf(XS), erl.sf(XS), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(cox.integrated_sf(WS), erl.integrated_sf(WS), rtol=1e-10, atol=1e-14)


def test_coxian_two_phase_closed_form() -> None:
    mu1, mu2, p = 1.0, 3.0, 0.35
    law = Coxian([mu1, mu2], [p])
    hypo = (mu2 * np.exp(-mu1 * WS) - mu1 * np.exp(-mu2 * WS)) / (mu2 - mu1)
    expected = (1 - p) * np.exp(-mu1 * WS) + p * hypo
    np.testing.assert_allclose(law.sf(WS), expected, rtol=1e-12)


def test_coxian_zero_continuation_cuts_later_phases() -> None:
    law = Coxian([2.0, 0.1, 0.1], [0.0, 1.0])
    np.testing.assert_allclose(law.phase_means, [0.5, 0.0, 0.0])
    np.testing.assert_allclose(law.sf(XS), Exponential(2.0).sf(XS), rtol=1e-12, atol=1e-15)
    assert law.var == pytest.approx(0.25, rel=1e-12)
    assert law.sample(np.random.default_rng(0), 1000).max() < 10.0


def test_coxian_normalised() -> None:
    base = Coxian([3.0, 1.0, 2.0], [0.6, 0.4])
    law = Coxian.normalised([3.0, 1.0, 2.0], [0.6, 0.4])
    assert law.mean == pytest.approx(1.0, rel=1e-14)
    assert law.scv == pytest.approx(base.scv, rel=1e-12)
    assert law.probs == base.probs
    np.testing.assert_allclose(law.sf(WS), base.sf(WS * base.mean), rtol=1e-10)


@pytest.mark.parametrize("scv", [1.0, 1.5, 4.0, 25.0, 400.0])
@pytest.mark.parametrize("mean", [0.3, 1.0, 7.0])
def test_hyperexponential_balanced(mean: float, scv: float) -> None:
    law = HyperExponential.balanced(mean, scv)
    assert law.mean == pytest.approx(mean, rel=1e-12)
    assert law.scv == pytest.approx(scv, rel=1e-10)
    (p1, p2), (r1, r2) = law.probs, law.rates
    assert p1 / r1 == pytest.approx(p2 / r2, rel=1e-12)  # balanced means
    assert p1 == pytest.approx((1 + math.sqrt((scv - 1) / (scv + 1))) / 2, rel=1e-14)


def test_hyperexponential_probs_tolerance_and_normalisation() -> None:
    law = HyperExponential([0.5, 0.5 + 5e-10], [1.0, 2.0])
    assert sum(law.probs) == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(ValueError, match="probs must sum to 1"):
        HyperExponential([0.5, 0.5 + 1e-6], [1.0, 2.0])
    # zero-probability phases are never sampled
    x = HyperExponential([1.0, 0.0], [1.0, 1e-9]).sample(np.random.default_rng(0), N)
    assert x.max() < 30.0


def test_empirical_default_weights_and_closed_forms() -> None:
    values = np.array([3.0, 0.5, 2.0, 2.0])
    law = Empirical(values)
    np.testing.assert_allclose(law.weights, 0.25)
    assert law.mean == pytest.approx(values.mean())
    assert law.var == pytest.approx(values.var())
    w = np.array([0.0, 0.5, 1.0, 2.0, 2.5, 3.0, 4.0])
    expected = np.array([np.mean(np.maximum(values - wi, 0.0)) for wi in w])
    np.testing.assert_allclose(law.integrated_sf(w), expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(law.sf(w), [1.0, 0.75, 0.75, 0.25, 0.25, 0.0, 0.0])
    # stored arrays are copies and read-only
    values[0] = 100.0
    assert law.values[0] == 3.0
    with pytest.raises(ValueError):
        law.values[0] = 1.0


def test_empirical_with_zero_values_allowed() -> None:
    law = Empirical([0.0, 0.0, 3.0])
    assert law.mean == pytest.approx(1.0)
    assert float(law.sf(0.0)) == pytest.approx(1 / 3)


def test_uniform_closed_forms() -> None:
    law = Uniform(1.0, 3.0)
    w = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(law.integrated_sf(w), [2.0, 1.0, 0.25, 0.0, 0.0])


# --------------------------------------------------------------------------------------------
# scipy laws
# --------------------------------------------------------------------------------------------


def test_as_law_gamma_matches_erlang() -> None:
    law = as_law(st.gamma(2, scale=0.5))
    assert isinstance(law, ScipyLaw)
    erl = Erlang(2, 2.0)
    assert law.mean == pytest.approx(1.0)
    assert law.var == pytest.approx(0.5)
    assert law.scv == pytest.approx(0.5)
    np.testing.assert_allclose(law.integrated_sf(WS), erl.integrated_sf(WS), rtol=1e-8, atol=1e-12)
    x = law.sample(np.random.default_rng(5), N)
    assert x.dtype == np.float64 and x.shape == (N,)
    assert abs(x.mean() - 1.0) < 5 * math.sqrt(0.5 / N)
    assert repr(law) == "ScipyLaw(gamma(2, scale=0.5); mean=1, scv=0.5)"


def test_as_law_lognorm_matches_lognormal() -> None:
    law = as_law(st.lognorm(0.8, scale=2.0), name="arrival")
    ref = LogNormal(2.0 * math.exp(0.32), math.expm1(0.64))
    assert law.mean == pytest.approx(ref.mean, rel=1e-12)
    assert law.var == pytest.approx(ref.var, rel=1e-10)
    np.testing.assert_allclose(law.sf(XS), ref.sf(XS), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(law.integrated_sf(WS), ref.integrated_sf(WS), rtol=1e-7, atol=1e-11)


def test_as_law_discrete_poisson() -> None:
    law = as_law(st.poisson(3.0))
    k = np.arange(0, 80)
    pmf = st.poisson(3.0).pmf(k)
    w = np.array([0.0, 0.5, 1.0, 2.7, 6.0])
    expected = [float(np.sum(pmf * np.maximum(k - wi, 0.0))) for wi in w]
    np.testing.assert_allclose(law.integrated_sf(w), expected, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(law.sf([0.5, 2.0, 2.5]), st.poisson(3.0).sf([0, 2, 2]))
    x = law.sample(np.random.default_rng(2), 1000)
    assert x.dtype == np.float64 and np.all(x == np.round(x))


def test_as_law_passes_laws_through() -> None:
    law = Erlang(2, 1.0)
    assert as_law(law) is law
    wrapped = as_law(st.expon())
    assert as_law(wrapped) is wrapped


# --------------------------------------------------------------------------------------------
# interface: shapes, immutability, equality, repr, pickling
# --------------------------------------------------------------------------------------------


def test_sf_shapes_and_special_points() -> None:
    law = Erlang(2, 1.0)
    scalar = law.sf(1.0)
    assert isinstance(scalar, np.ndarray) and scalar.shape == ()
    assert law.sf(np.ones((2, 3))).shape == (2, 3)
    assert law.integrated_sf(np.ones((3, 1))).shape == (3, 1)
    assert law.equilibrium_sf(2.0).shape == ()
    np.testing.assert_array_equal(law.sf([-np.inf, -1.0, np.inf]), [1.0, 1.0, 0.0])
    assert np.isnan(law.sf(np.nan))
    assert law.integrated_sf(np.inf) == 0.0


@pytest.mark.parametrize("w", [-1.0, -1e-300, np.nan, [0.0, -2.0]])
def test_integrated_sf_rejects_negative(w: Any) -> None:
    with pytest.raises(ValueError, match="w must be >= 0"):
        Exponential().integrated_sf(w)
    with pytest.raises(ValueError, match="w must be >= 0"):
        Exponential().equilibrium_sf(w)


@pytest.mark.parametrize(
    "rng", [np.random.RandomState(0), None, 0, np.random.default_rng(0).bit_generator]
)
def test_sample_requires_generator(rng: Any) -> None:
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        Exponential().sample(rng, 10)


def test_sample_size_validation() -> None:
    rng = np.random.default_rng(0)
    assert Coxian([1.0, 2.0], [0.5]).sample(rng, 0).shape == (0,)
    assert Exponential().sample(rng, np.int64(3)).shape == (3,)
    with pytest.raises(ValueError, match="size"):
        Exponential().sample(rng, -1)
    with pytest.raises(TypeError, match="size"):
        Exponential().sample(rng, 2.5)


def test_sampling_uses_only_the_given_generator() -> None:
    # the legacy global state must be left untouched, and a seed must reproduce the draws
    before = np.random.get_state()  # noqa: NPY002
    for case in CASES.values():
        a = case.law.sample(np.random.default_rng(99), 50)
        b = case.law.sample(np.random.default_rng(99), 50)
        np.testing.assert_array_equal(a, b)
    after = np.random.get_state()  # noqa: NPY002
    np.testing.assert_array_equal(before[1], after[1])
    assert before[2:] == after[2:]


def test_frozen_equality_hash_repr_pickle() -> None:
    law = HyperExponential([0.25, 0.75], [1.0, 3.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        law.rates = (1.0, 1.0)  # type: ignore[misc]
    assert law == HyperExponential((0.25, 0.75), np.array([1, 3]))
    assert hash(law) == hash(HyperExponential([0.25, 0.75], [1.0, 3.0]))
    assert Exponential(2) == Exponential(2.0) != Exponential(3.0)
    assert repr(Exponential(2)) == "Exponential(rate=2.0; mean=0.5, scv=1)"
    assert repr(Coxian([1, 2], [0.5])) == (
        "Coxian(rates=(1.0, 2.0), probs=(0.5,); mean=1.25, scv=0.76)")
    assert repr(LogNormal(1.0, 2.0)) == "LogNormal(mean=1.0, scv=2.0)"
    assert Empirical([1.0, 2.0]) == Empirical([1.0, 2.0], weights=[5, 5])
    assert hash(Empirical([1.0, 2.0])) == hash(Empirical([1.0, 2.0], weights=[5, 5]))
    assert "1000 values" in repr(Empirical(np.arange(1, 1001.0)))
    for case in CASES.values():
        if isinstance(case.law, ScipyLaw):
            continue
        clone = pickle.loads(pickle.dumps(case.law))
        assert clone == case.law
        np.testing.assert_array_equal(clone.integrated_sf(WS), case.law.integrated_sf(WS))


# --------------------------------------------------------------------------------------------
# validation errors
# --------------------------------------------------------------------------------------------

BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: Exponential(-1.0), ValueError, r"rate must be a finite number > 0, got -1\.0"),
    (lambda: Exponential(0.0), ValueError, "rate must be a finite number > 0"),
    (lambda: Exponential(math.nan), ValueError, "rate must be a finite number > 0, got nan"),
    (lambda: Exponential(math.inf), ValueError, "rate must be a finite number > 0, got inf"),
    (lambda: Exponential("1"), TypeError, "rate must be a real number"),
    (lambda: Exponential(True), TypeError, "rate must be a real number"),
    (lambda: Deterministic(0.0), ValueError, "value must be a finite number > 0"),
    (lambda: Erlang(0, 1.0), ValueError, "k must be an integer >= 1"),
    (lambda: Erlang(2.5, 1.0), TypeError, "k must be an integer"),
    (lambda: Erlang(2, -3.0), ValueError, "rate must be"),
    (lambda: Lomax(1.0, 1.0), ValueError, "infinite mean"),
    (lambda: Lomax(0.5, 1.0), ValueError, "infinite mean"),
    (lambda: Lomax(math.nan, 1.0), ValueError, "shape must be"),
    (lambda: Lomax(3.0, 0.0), ValueError, "scale must be"),
    (lambda: LogNormal(-1.0, 1.0), ValueError, "mean must be a finite number > 0"),
    (lambda: LogNormal(1.0, 0.0), ValueError, "scv must be a finite number > 0"),
    (lambda: LogNormal(1.0, math.inf), ValueError, "scv must be a finite number > 0"),
    (lambda: Uniform(-1.0, 1.0), ValueError, "low must be a finite number >= 0"),
    (lambda: Uniform(1.0, 1.0), ValueError, "high must be a finite number > low"),
    (lambda: Uniform(0.0, math.inf), ValueError, "high must be"),
    (lambda: HyperExponential([0.5, 0.6], [1.0, 2.0]), ValueError, "probs must sum to 1"),
    (
        lambda: HyperExponential([1.5, -0.5], [1.0, 2.0]),
        ValueError,
        "probs must be finite numbers >= 0",
    ),
    (lambda: HyperExponential([0.5, 0.5], [1.0]), ValueError, "same length"),
    (
        lambda: HyperExponential([0.5, 0.5], [1.0, 0.0]),
        ValueError,
        "rates must be finite numbers > 0",
    ),
    (lambda: HyperExponential([], []), ValueError, "probs must not be empty"),
    (lambda: HyperExponential(0.5, [1.0]), TypeError, "probs must be a 1-D sequence"),
    (lambda: HyperExponential.balanced(1.0, 0.5), ValueError, "scv must be a finite number >= 1"),
    (lambda: HyperExponential.balanced(-1.0, 2.0), ValueError, "mean must be"),
    (lambda: Coxian([1.0, 2.0], [1.5]), ValueError, r"probs must be numbers in \[0, 1\]"),
    (lambda: Coxian([1.0, 2.0], [math.nan]), ValueError, r"probs must be numbers in \[0, 1\]"),
    (lambda: Coxian([1.0, 2.0], []), ValueError, "probs must have length"),
    (lambda: Coxian([1.0, -2.0], [0.5]), ValueError, "rates must be finite numbers > 0"),
    (lambda: Coxian([], []), ValueError, "rates must not be empty"),
    (lambda: Empirical([]), ValueError, "values must not be empty"),
    (lambda: Empirical([1.0, -1.0]), ValueError, "values must be finite numbers >= 0"),
    (lambda: Empirical([1.0, math.inf]), ValueError, "values must be finite numbers >= 0"),
    (lambda: Empirical([0.0, 0.0]), ValueError, "infinite mean or zero mean"),
    (lambda: Empirical([1.0, 2.0], weights=[1.0]), ValueError, "weights must have the same length"),
    (lambda: Empirical([1.0, 2.0], weights=[1.0, -1.0]), ValueError, "weights must be finite"),
    (
        lambda: Empirical([1.0, 2.0], weights=[0.0, 0.0]),
        ValueError,
        "weights must have a finite sum",
    ),
    (lambda: Empirical([0.0, 2.0], weights=[1.0, 0.0]), ValueError, "zero mean"),
    (
        lambda: as_law(3.0),
        TypeError,
        "service must be a recursions.dists law or a scipy.stats distribution .*got float",
    ),
    (lambda: as_law(st.expon, name="arrival"), TypeError, "arrival must be a recursions.dists law"),
    (
        lambda: as_law(st.norm(1.0, 1.0), name="arrival"),
        ValueError,
        r"arrival must be supported on \[0, inf\)",
    ),
    (
        lambda: as_law(st.lomax(0.8)),
        ValueError,
        "service must have a finite mean > 0 .*infinite mean",
    ),
    (lambda: as_law(st.expon(scale=[1.0, 2.0])), ValueError, "scalar distribution"),
    (lambda: ScipyLaw(Exponential()), TypeError, "frozen scipy.stats distribution"),
    (lambda: as_law(st.Normal(mu=1.0, sigma=1.0)), ValueError, r"supported on \[0, inf\)"),
]


@pytest.mark.parametrize(("make", "exc", "match"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_validation_errors(make: Callable[[], Any], exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        make()


# --------------------------------------------------------------------------------------------
# property-based checks of the phase-type machinery
# --------------------------------------------------------------------------------------------

rates_st = hst.lists(hst.floats(0.05, 20.0), min_size=1, max_size=5)


@settings(max_examples=25, deadline=None)
@given(rates=rates_st, data=hst.data())
def test_coxian_properties(rates: list[float], data: hst.DataObject) -> None:
    probs = data.draw(
        hst.lists(hst.floats(0.0, 1.0), min_size=len(rates) - 1, max_size=len(rates) - 1)
    )
    law = Coxian(rates, probs)
    m, v = coxian_moments(rates, probs)
    assert law.mean == pytest.approx(m, rel=1e-10)
    assert law.mean == pytest.approx(float(np.sum(law.phase_means)), rel=1e-14)
    assert law.var == pytest.approx(v, rel=1e-7, abs=1e-12 * m * m)
    assert float(law.integrated_sf(0.0)) == pytest.approx(law.mean, rel=1e-9)
    # d/dw integrated_sf(w) = -sf(w): central differences
    w = np.array([0.1, 1.0, 3.0]) * m
    h = 1e-4 * m
    slope = (law.integrated_sf(w - h) - law.integrated_sf(w + h)) / (2 * h)
    np.testing.assert_allclose(slope, law.sf(w), rtol=1e-5, atol=1e-9)
    assert np.all(np.diff(law.sf(np.linspace(0.0, 5.0 * m, 20))) <= 1e-15)
    norm = Coxian.normalised(rates, probs)
    assert norm.mean == pytest.approx(1.0, rel=1e-12)
