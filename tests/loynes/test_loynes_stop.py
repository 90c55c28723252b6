"""The Loynes stopping rule: certified limits, the load-scaled plateau, and their regressions."""

from __future__ import annotations

import math

import numpy as np
import pytest

import loynes as ly
import recursions as rc
from coupling._tail_bounds import fcfs_workload_bound

E = rc.dists.Exponential


# -- the tail bound behind the certificate ------------------------------------------------
@pytest.mark.parametrize(("lam", "delta"), [(0.5, 1e-3), (0.9, 0.05), (0.95, 1e-6)])
def test_tail_bound_mm1_is_kingman(lam, delta):
    # M/M/1: theta_c = mu - lambda, and P(W > c) = rho exp(-(mu - lambda) c) <= exp(-...)
    c = fcfs_workload_bound(1, rc.Poisson(lam, E(1.0)), delta)
    assert c == pytest.approx(math.log(1 / delta) / (1.0 - lam), rel=1e-9)


@pytest.mark.parametrize(("S", "inp"), [
    (1, rc.Poisson(0.9, rc.dists.Erlang(2, 2.0))),
    (3, rc.Poisson(2.7, E(1.0))),
    (4, rc.Renewal(rc.dists.Erlang(2, 2 * 3.4), rc.dists.Deterministic(1.0))),
], ids=["M/E2/1", "M/M/3", "E2/D/4"])
def test_tail_bound_holds_for_the_largest_stationary_workload(S, inp):
    # P(X(S) > c_delta) <= delta, X(S) the largest workload an arrival sees, from a long
    # forward run (an independent estimate of the stationary law)
    res = rc.simulate(rc.JSW(S), inp, steps=400_000, warmup=40_000, rng=7, record=True)
    top = res.path[0, :, -1]
    for delta in (0.3, 0.1):
        c = fcfs_workload_bound(S, inp, delta)
        hit = (top > c).reshape(40, -1).mean(axis=1)  # batch means: correlated indicators
        assert hit.mean() <= delta + 4 * hit.std(ddof=1) / math.sqrt(hit.size)


def test_tail_bound_absent_where_it_cannot_hold():
    assert fcfs_workload_bound(2, rc.Poisson(2.5, E(1.0)), 1e-3) is None  # load > 1
    assert fcfs_workload_bound(2, rc.Poisson(1.0, rc.dists.LogNormal(1.0, 2.0)), 1e-3) is None
    assert fcfs_workload_bound(1, rc.Periodic([1.0], [2.0]), 1e-3) is None
    with pytest.raises(ValueError, match="delta"):
        fcfs_workload_bound(1, rc.Poisson(0.5, E(1.0)), 1.5)


# -- regressions: the old rule stopped on chance plateaus --------------------------------
def test_mm1_limit_is_unbiased_at_load_095():
    # mean stationary workload rho / (mu - lambda) = 19, P(W = 0) = 0.05 (the old rule gave
    # 11.4 and 0.22 over the same 300 seeds)
    inp = rc.Poisson(0.95, E(1.0))
    runs = [ly.loynes(rc.JSW(1), inp, rng=s) for s in range(300)]
    assert all(r.stabilised and r.basis.kind == "certificate" for r in runs)
    lim = np.array([r.limit[0] for r in runs])
    assert abs(lim.mean() - 19.0) <= 3 * lim.std(ddof=1) / math.sqrt(lim.size)
    p0 = float(np.mean(lim == 0))
    assert abs(p0 - 0.05) <= 3 * math.sqrt(0.05 * 0.95 / lim.size)


@pytest.mark.parametrize("rho", [1.0, 1.02])
@pytest.mark.parametrize("certify", [True, False])
def test_no_limit_at_or_beyond_saturation(rho, certify):
    # the old rule said "stabilised" for 10 of 10 seeds at 1.0 and 9 of 10 at 1.02
    for s in range(10):
        res = ly.loynes(rc.JSW(1), rc.Poisson(rho, E(1.0)), horizon=2**14, rng=s,
                        certify=certify)
        assert not res.stabilised and res.limit is None
        assert res.basis.kind == "none" and res.suggested_horizon is None


def test_certified_limit_matches_erlang_c():
    # M/M/3 at 0.9: P(wait) and E[wait] of the certified limit over seeds against Erlang C
    lam, S = 2.7, 3
    lim = np.array([ly.loynes(rc.JSW(S), rc.Poisson(lam, E(1.0)), rng=s).limit[0]
                    for s in range(400)])
    pw = ly.erlang_c(S, lam)
    assert abs(np.mean(lim > 0) - pw) <= 4 * math.sqrt(pw * (1 - pw) / lim.size)
    mean = ly.mm_c_mean_wait(S, lam, 1.0)
    assert abs(lim.mean() - mean) <= 4 * lim.std(ddof=1) / math.sqrt(lim.size)


def test_certificate_fields_and_error_level():
    res = ly.loynes(rc.JSW(2), rc.Poisson(1.5, E(1.0)), delta=1e-5)
    assert res.basis.kind == "certificate" and res.basis.name == "dominated-start"
    assert res.basis.error == 1e-5 and res.upper_start == pytest.approx(
        fcfs_workload_bound(2, rc.Poisson(1.5, E(1.0)), 1e-5))
    # the run from the upper start agrees with the run from empty at the stopping horizon
    d = rc.BackwardDraws(rc.JSW(2), rc.Poisson(1.5, E(1.0)), rng=1)
    sig, tau, _ = d.window(int(res.horizons[-1]))
    top = rc.iterate(rc.JSW(2), [res.upper_start] * 2, sig, tau)
    np.testing.assert_array_equal(top, res.limit)


def test_capped_certificate_suggests_a_horizon():
    res = ly.loynes(rc.JSW(5), rc.Poisson(4.9, E(1.0)), horizon=2**8)
    assert not res.stabilised and res.basis.kind == "none"
    assert res.suggested_horizon is not None and res.suggested_horizon > 2**8
    again = ly.loynes(rc.JSW(5), rc.Poisson(4.9, E(1.0)), horizon=res.suggested_horizon)
    assert again.stabilised


# -- the plateau heuristic where no certificate exists -----------------------------------
def test_plateau_minimum_horizon_scales_with_the_load():
    law = rc.dists.LogNormal(1.0, 2.0)
    n = [ly.loynes(rc.JSW(1), rc.Poisson(rho, law), horizon=2**10).min_horizon
         for rho in (0.8, 0.9)]
    # n_min = 8 (Var sigma + Var tau) / (E tau - E sigma)^2
    for rho, got in zip((0.8, 0.9), n, strict=True):
        et = 1 / rho
        assert got == pytest.approx(8 * (2.0 + et**2) / (et - 1.0) ** 2)
    assert n[1] > 4 * n[0]


def test_plateau_agrees_with_the_certificate_on_the_same_draws():
    # forcing the heuristic where a certificate exists measures it: M/M/1 at 0.95
    inp = rc.Poisson(0.95, E(1.0))
    false = 0
    for s in range(40):
        h = ly.loynes(rc.JSW(1), inp, rng=s, certify=False, horizon=2**22)
        assert h.stabilised and h.basis.name == "plateau" and math.isnan(h.basis.error)
        c = ly.loynes(rc.JSW(1), inp, rng=s, delta=1e-6, horizon=2**24)
        false += not np.array_equal(h.limit, c.limit)
    assert false <= 1  # 0 of 200 in benchmarks/calibration.py


def test_heavy_tail_uses_the_heuristic_and_says_so():
    res = ly.loynes(rc.JSW(5), rc.Poisson(4.0, rc.dists.LogNormal(1.0, 2.0)), horizon=2**16)
    assert res.basis.kind in ("heuristic", "none")
    assert "n_min" in res.basis.detail
    inf = ly.loynes(rc.JSW(1), rc.Poisson(0.5, rc.dists.Lomax(1.5, 0.5)), horizon=2**12)
    assert not inf.stabilised and "infinite variance" in inf.basis.detail


def test_periodic_input_plateau_counts_periods():
    inp = rc.Periodic(sigma=[3.0, 0.0, 0.0], tau=[1.2, 1.2, 1.2], phase=1)
    res = ly.loynes(rc.JSW(1), inp, horizon=2**12)
    assert res.stabilised and res.min_horizon >= 64 * 3
    assert res.limit[0] == pytest.approx(1.8)


def test_bad_delta():
    with pytest.raises(ValueError, match="delta"):
        ly.loynes(rc.JSW(1), rc.Poisson(0.5, E(1.0)), delta=0.0)
