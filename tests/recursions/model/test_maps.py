"""Every compiled map equals its naive twin; sortedness, monotonicity and its failures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, find, given
from hypothesis import strategies as st

import recursions as rc
from coupling.strategies import (
    ordered_pairs,
    pairs_for,
    sorted_workloads,
    states_for,
    times,
    uniforms,
)
from recursions.engines import _accumulator as eng
from recursions.engines import drivers_of
from tests import naive

SYSTEMS = [
    rc.JSW(1),
    rc.JSW(5),
    rc.JpSW(4, 0),
    rc.JpSW(4, 2),
    rc.JpSW(3, 2),
    rc.Loss(1),
    rc.Loss(3),
    rc.RandomRouting(4),
    rc.JIQ(5),
    rc.LeastOfD(6, 1),
    rc.LeastOfD(6, 3),
    rc.LeastOfD(4, 4),
    rc.Envelope(rc.JpSW(4, 1)),
    rc.Envelope(rc.JpSW(3, 2)),
    rc.Envelope(rc.JIQ(3)),
    rc.Envelope(rc.Loss(3)),
    rc.Envelope(rc.JSW(3)),
    rc.Envelope(rc.LeastOfD(5, 2)),
    rc.SplitBound(5, 2),
    rc.SplitBound(3, 0),
    rc.SplitBound(2, 1),
]
MONOTONE = [s for s in SYSTEMS if s.monotone and not isinstance(s, rc.SplitBound)]


def _state(system, draw_vec):
    if isinstance(system, rc.SplitBound):
        p = system.p
        return sorted(draw_vec[:p]) + sorted(draw_vec[p:])
    return sorted(draw_vec)


def _u(system, x):
    return [x] if system.uniforms else []


@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
@given(data=st.data(), sigma=times(), tau=times(), u=uniforms())
def test_kernel_equals_naive(system, data, sigma, tau, u):
    w = data.draw(states_for(system))
    got = system.step(w, sigma, tau, u=u if system.uniforms else None)
    name, params = naive.describe(system)
    want, _ = naive.apply(name, params, w, sigma, tau, _u(system, u))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
@given(data=st.data(), sigma=times(), tau=times(), u=uniforms())
def test_maps_keep_vectors_sorted_and_nonnegative(system, data, sigma, tau, u):
    w = data.draw(states_for(system))
    out = system.step(w, sigma, tau, u=u if system.uniforms else None)
    assert np.all(out >= 0)
    for lo, hi in system._blocks():
        assert np.all(np.diff(out[lo:hi]) >= 0)
    system.check_state(out)  # the output is a valid state


@pytest.mark.parametrize("system", [*MONOTONE, rc.JSW(2), rc.Envelope(rc.JpSW(2, 1))], ids=repr)
@given(data=st.data(), sigma=times(), tau=times(), u=uniforms())
def test_monotone_maps(system, data, sigma, tau, u):
    a, b = data.draw(ordered_pairs(system.servers))
    uu = u if system.uniforms else None
    fa, fb = system.step(a, sigma, tau, uu), system.step(b, sigma, tau, uu)
    assert np.all(fa <= fb + 1e-12)


@given(data=st.data(), sigma=times(), tau=times())
def test_split_bound_monotone_in_jsw_block(data, sigma, tau):
    system = rc.SplitBound(5, 2)
    a, b = data.draw(pairs_for(system))  # the same loss block, ordered JSW blocks
    fa = system.step(a, sigma, tau)
    fb = system.step(b, sigma, tau)
    assert np.array_equal(fa[:2], fb[:2])  # the loss block is exogenous
    assert np.all(fa <= fb + 1e-12)


def _violates(system, case):
    (a, b), sigma, tau, u = case
    uu = u if system.uniforms else None
    return bool(np.any(system.step(a, sigma, tau, uu) > system.step(b, sigma, tau, uu) + 1e-9))


@pytest.mark.parametrize("system", [rc.JpSW(2, 1), rc.JpSW(4, 2), rc.Loss(2), rc.Loss(1),
                                    rc.JIQ(2), rc.JIQ(4)], ids=repr)
def test_non_monotone_maps_have_counterexamples(system):
    cases = st.tuples(ordered_pairs(system.servers), times(), times(), uniforms())
    (a, b), *_ = find(cases, lambda c: _violates(system, c))
    assert np.all(np.asarray(a) <= np.asarray(b))  # a genuine ordered pair


def test_math_md_counterexamples():
    # docs/theory/kiefer_wolfowitz.md: G^1(0, 1) = (1, 5) but G^1(0.001, 1) = (0.001, 6)
    g = rc.JpSW(2, 1)
    np.testing.assert_array_equal(g.step([0, 1], 5, 0), [1, 5])
    np.testing.assert_array_equal(g.step([0.001, 1], 5, 0), [0.001, 6])
    # docs/theory/kiefer_wolfowitz.md: JIQ (0, 10) -> (5, 10) but (1, 10) -> (1, 15) w.p. 1/2
    j = rc.JIQ(2)
    np.testing.assert_array_equal(j.step([0, 10], 5, 0, u=0.9), [5, 10])
    np.testing.assert_array_equal(j.step([1, 10], 5, 0, u=0.9), [1, 15])


@pytest.mark.parametrize("p", [1, 2])
@given(data=st.data(), sigma=times(), tau=times())
def test_envelope_dominates_jpsw(p, data, sigma, tau):
    a, b = data.draw(ordered_pairs(4))
    low = rc.JpSW(4, p).step(a, sigma, tau)
    high = rc.Envelope(rc.JpSW(4, p)).step(b, sigma, tau)
    assert np.all(low <= high + 1e-12)


@given(data=st.data(), sigma=times(), tau=times(), u=uniforms())
def test_envelope_dominates_jiq_and_loss(data, sigma, tau, u):
    a, b = data.draw(ordered_pairs(3))
    for sys_ in (rc.JIQ(3), rc.Loss(3)):
        uu = u if sys_.uniforms else None
        low = sys_.step(a, sigma, tau, uu)
        high = rc.Envelope(sys_).step(b, sigma, tau, uu)
        assert np.all(low <= high + 1e-12)


@given(data=st.data(), sigma=times(), tau=times())
def test_envelope_equals_sup_over_smaller_vectors(data, sigma, tau):
    # For w(1) > 0, Phi^p(w) = sup_{v < w} G^p(v); the sup is attained at v = w or at v = w
    # with its first coordinate set to 0 (docs/theory/kiefer_wolfowitz.md).
    # Check against those two candidates.
    w = data.draw(sorted_workloads(3))
    assume(w[0] > 0)
    g, phi = rc.JpSW(3, 1), rc.Envelope(rc.JpSW(3, 1))
    cand = np.maximum(g.step(w, sigma, tau), g.step([0.0, *w[1:]], sigma, tau))
    np.testing.assert_allclose(phi.step(w, sigma, tau), cand, atol=1e-12)


def test_least_of_d_rank_law():
    # the inversion draws the minimum of d distinct uniform ranks: compare with sampling
    s, d, n = 7, 3, 200_000
    gen = np.random.default_rng(5)
    sys_ = rc.LeastOfD(s, d)
    w = np.arange(s, dtype=float)  # distinct workloads: the rank is identified by the result
    ranks = []
    for u in gen.random(2000):
        out = sys_.step(w, 0.5, 0.0, u)
        ranks.append(int(np.flatnonzero(out != w)[0]))
    direct = np.array([np.min(gen.choice(s, d, replace=False)) for _ in range(n // 100)])
    # exact law P(min = r) = C(s-r-1, d-1) / C(s, d)
    from math import comb

    exact = np.array([comb(s - r - 1, d - 1) / comb(s, d) for r in range(s)])
    for sample in (np.array(ranks), direct):
        freq = np.bincount(sample, minlength=s) / sample.size
        se = np.sqrt(exact * (1 - exact) / sample.size)
        assert np.all(np.abs(freq - exact) <= 5 * se + 1e-12)


@pytest.mark.parametrize("grid", [np.array([0.0, 0.5, 1.5]), np.linspace(0.0, 3.0, 7)],
                         ids=["irregular", "uniform"])
@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
def test_engine_statistics_equal_naive_run(system, grid):
    gen = np.random.default_rng(11)
    n, s = 300, system.servers
    sig = gen.exponential(1.0, n) * gen.integers(0, 2, n)  # zeros included
    tau = gen.exponential(0.6, n)
    U = gen.random((n, system.uniforms))
    w0 = _state(system, list(gen.exponential(1.0, s)))
    states, founds, final = naive.run(system, w0, sig, tau, U)
    nb = 4
    W = np.array([w0], dtype=float)
    acc = np.zeros((1, nb, eng.N_STATS))
    hist = np.zeros((1, nb, grid.size + 1))
    path = np.zeros((1, n, s))
    drivers_of(system).run_chunk(system.params, W, sig[None], tau[None], U[None],
                                 True, 0, n, nb, grid, eng.uniform_step(grid), 1, acc, hist,
                                 path)
    prof = eng.profile_counts(hist)
    np.testing.assert_allclose(W[0], final, atol=1e-12)
    np.testing.assert_allclose(path[0], np.array(states), atol=1e-12)
    st_ = np.array(states)
    f = np.array(founds)
    batch = (np.arange(n) * nb) // n
    for b in range(nb):
        sel = batch == b
        np.testing.assert_allclose(acc[0, b, eng.ARRIVALS], sel.sum())
        np.testing.assert_allclose(acc[0, b, eng.LOST], np.sum(f[sel] < 0))
        np.testing.assert_allclose(acc[0, b, eng.WAITED], np.sum(f[sel] > 0))
        np.testing.assert_allclose(acc[0, b, eng.WAIT_SUM], np.sum(f[sel][f[sel] > 0]))
        np.testing.assert_allclose(acc[0, b, eng.WORK], st_[sel].sum(), rtol=1e-12)
        np.testing.assert_allclose(acc[0, b, eng.BUSY], np.sum(st_[sel] > 0))
        for g, x in enumerate(grid):
            np.testing.assert_allclose(prof[0, b, g], np.sum(st_[sel] > x))


@given(x=st.one_of(st.floats(0.0, 10.0), st.sampled_from([0.0, 0.1, 0.3, 0.7, 2.1, 10.0])))
def test_level_bin_is_searchsorted(x):
    for grid in (np.linspace(0.0, 2.1, 22), np.array([0.0, 0.3, 0.7, 5.0]), np.zeros(0),
                 np.array([0.7]), np.linspace(0.3, 0.9, 2)):
        h = eng.uniform_step(grid)
        assert eng.level_bin(grid, h, x) == np.searchsorted(grid, x, side="left")
