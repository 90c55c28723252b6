"""The coverage benchmark's exact values (benchmarks/_oracles.py) against theory and the library.

Each model's solver is checked where another route gives the same number: the QBD of M/H2/S
with scv 1 is M/M/S, M/D/1 is Pollaczek-Khinchine, E2/M/1 has Takacs' closed form, M/M/S and
M/D/S match ``loynes``' closed forms, the Poisson models' work matches ``H = lambda G``, and
short library simulations of E2/M/1 and E2/M/3 land within a few of their standard errors.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import loynes as ly
import recursions as rc

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load():
    spec = importlib.util.spec_from_file_location("_bench_oracles", BENCH / "_oracles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


o = _load()
KEYS = ("p_wait", "mean_wait", "mean_workload")
CELLS = [(S, load) for S in (1, 10, 40, 100) for load in (0.8, 0.95, 0.99)]


@pytest.mark.parametrize(("S", "load"), CELLS)
def test_mm_matches_loynes_and_h2_with_scv_one(S, load):
    lam = load * S
    mm = o.mm_s(S, lam)
    assert mm["p_wait"] == pytest.approx(ly.erlang_c(S, lam), rel=1e-12)
    assert mm["mean_wait"] == pytest.approx(ly.mm_c_mean_wait(S, lam, 1.0), rel=1e-12)
    # E[N] / mu = E[in service] + E[queue] = a + lambda E[W]
    assert mm["mean_workload"] == pytest.approx(lam + lam * mm["mean_wait"], rel=1e-12)
    h1 = o.mh2_s(S, lam, scv=1.0)   # mu1 = mu2 = 1: the QBD is M/M/S with a passive phase
    for k in KEYS:
        assert h1[k] == pytest.approx(mm[k], rel=1e-9), k


@pytest.mark.parametrize("load", [0.5, 0.8, 0.99])
def test_mm1_mean_workload(load):
    # M/M/1: the total work is the FCFS wait, rho / (mu (1 - rho)); P(wait) = rho
    mm = o.mm_s(1, load, 1.0)
    assert mm["p_wait"] == pytest.approx(load, rel=1e-13)
    assert mm["mean_workload"] == pytest.approx(load / (1 - load), rel=1e-12)
    assert mm["mean_wait"] == pytest.approx(load / (1 - load), rel=1e-12)
    # with mu = 2 the same queue runs twice as fast
    fast = o.mm_s(1, 2 * load, 2.0)
    assert fast["mean_workload"] == pytest.approx(load / (2 * (1 - load)), rel=1e-12)


@pytest.mark.parametrize("load", [0.3, 0.8, 0.95, 0.99])
def test_md1_is_pollaczek_khinchine(load):
    md = o.md_s(1, load)
    assert md["p_wait"] == pytest.approx(load, rel=1e-12)
    assert md["mean_wait"] == pytest.approx(load / (2 * (1 - load)), rel=1e-10)
    # single server: the total work an arrival finds is its wait
    assert md["mean_workload"] == pytest.approx(md["mean_wait"], rel=1e-10)


@pytest.mark.parametrize(("S", "load"), [(2, 0.7), (10, 0.8), (10, 0.95), (40, 0.9)])
def test_md_matches_loynes_embedded_chain(S, load):
    # loynes iterates the embedded chain (to ~1e-9 near load 1); here the roots of
    # z^S = exp(a (z - 1)) give it in closed form
    p, w = ly.md_c_waiting(S, load * S, 1.0)
    md = o.md_s(S, load * S)
    assert md["p_wait"] == pytest.approx(p, rel=1e-8)
    assert md["mean_wait"] == pytest.approx(w, rel=1e-6)
    assert md["mean_workload"] == pytest.approx(load * S * (md["mean_wait"] + 0.5), rel=1e-13)


def test_md_with_a_longer_service_time_scales():
    # M/D/S with d = 2 at arrival rate lam is M/D/S with d = 1 at 2 lam, time doubled
    a, b = o.md_s(5, 2.0, d=2.0), o.md_s(5, 4.0, d=1.0)
    assert a["p_wait"] == pytest.approx(b["p_wait"], rel=1e-12)
    assert a["mean_wait"] == pytest.approx(2 * b["mean_wait"], rel=1e-12)
    assert a["mean_workload"] == pytest.approx(2 * b["mean_workload"], rel=1e-12)


@pytest.mark.parametrize("load", [0.5, 0.8, 0.99])
def test_e2m1_closed_form(load):
    # E2/M/1: the number an arrival finds is geometric, (1 - s) s^n, s the Takacs root;
    # for Erlang(2, 2 lam) and mu = 1: s = (2 lam / (2 lam + 1 - s))^2, solved by hand
    # (the cubic factors as (s - 1)(s^2 - (1 + 4 lam) s + 4 lam^2)), s the root below 1
    lam = load
    s = ((1 + 4 * lam) - math.sqrt((1 + 4 * lam) ** 2 - 16 * lam ** 2)) / 2
    e = o.e2m_s(1, lam, details=True)
    assert e["sigma"] == pytest.approx(s, rel=1e-12)
    assert e["p_wait"] == pytest.approx(s, rel=1e-10)
    assert e["mean_wait"] == pytest.approx(s / (1 - s), rel=1e-10)
    assert e["mean_workload"] == pytest.approx(s / (1 - s), rel=1e-10)
    n = np.arange(6)
    np.testing.assert_allclose(e["arrival_law"][:6], (1 - s) * s ** n, rtol=1e-10)


@pytest.mark.parametrize(("S", "load"), [(3, 0.9), (10, 0.8), (100, 0.99)])
def test_e2m_is_geometric_above_s_minus_one(S, load):
    # Takacs: P_arrival(n + 1) = sigma P_arrival(n) for n >= S - 1; the QBD's R has spectral
    # radius sigma; and E[W] summed over the chain equals P(wait) / (S mu (1 - sigma))
    e = o.e2m_s(S, load * S, details=True)
    law = e["arrival_law"]
    np.testing.assert_allclose(law[S:] / law[S - 1:-1], e["sigma"], rtol=1e-9)
    assert not np.allclose(law[1:S] / law[: S - 1], e["sigma"], rtol=1e-3)   # not below
    assert e["spectral_r"] == pytest.approx(e["sigma"], rel=1e-12)
    assert e["mean_wait_qbd"] == pytest.approx(e["mean_wait"], rel=1e-10)
    assert law.sum() <= 1 + 1e-12


@pytest.mark.parametrize(("S", "load"), [(1, 0.9), (10, 0.9), (100, 0.99)])
def test_mh2_against_h_lambda_g_and_pk(S, load):
    lam = load * S
    h = o.mh2_s(S, lam, scv=4.0, details=True)
    assert h["residual"] < 1e-12 * S
    # Little per phase: E[sum of 1 / mu_phase over jobs in service] = lambda E[sigma^2] / 2
    assert h["in_service_work"] == pytest.approx(lam * 5.0 / 2, rel=1e-11)
    assert h["mean_workload"] == pytest.approx(
        o.mg_s_mean_workload(lam, h["mean_wait"], 1.0, 5.0), rel=1e-11)
    if S == 1:   # Pollaczek-Khinchine with E[sigma^2] = 1 + scv
        assert h["p_wait"] == pytest.approx(load, rel=1e-12)
        assert h["mean_wait"] == pytest.approx(lam * 5.0 / (2 * (1 - load)), rel=1e-10)
    # more variable service: more waiting than M/M/S (a strict ordering at these loads)
    mm = o.mm_s(S, lam)
    assert h["p_wait"] > mm["p_wait"] and h["mean_wait"] > mm["mean_wait"]


def test_h2_balanced_parameters():
    p1, m1, m2 = o.h2_balanced(4.0)
    mean = p1 / m1 + (1 - p1) / m2
    second = 2 * (p1 / m1 ** 2 + (1 - p1) / m2 ** 2)
    assert mean == pytest.approx(1.0, rel=1e-14)
    assert second - 1 == pytest.approx(4.0, rel=1e-13)
    assert p1 / m1 == pytest.approx((1 - p1) / m2, rel=1e-14)   # balanced means
    law = rc.dists.HyperExponential.balanced(mean=1.0, scv=4.0)
    assert law.probs[0] == pytest.approx(p1, rel=1e-14)
    assert law.rates == pytest.approx((m1, m2), rel=1e-14)


def test_unstable_input_refused():
    with pytest.raises(ValueError):
        o.mm_s(2, 2.0)
    with pytest.raises(ValueError):
        o.md_s(3, 3.5)


def _e2m(S, load):
    return rc.Renewal(interarrival=rc.dists.Erlang(2, mean=1 / (load * S)),
                      service=rc.dists.Exponential(1.0))


@pytest.mark.parametrize(("S", "load"), [(1, 0.8), (3, 0.8)])
def test_e2m_against_a_library_simulation(S, load):
    # at S = 3 this also checks the work an arrival finds as the library defines it (the sum
    # of the Kiefer-Wolfowitz vector), which is not the wait there; one kernel for both
    res = rc.simulate(rc.JSW(S), _e2m(S, load), steps=200_000, warmup=20_000, rng=1)
    exact = o.e2m_s(S, load * S)
    for k in KEYS:
        est = getattr(res, k)
        assert abs(est.value - exact[k]) < 4 * est.se, (k, est, exact[k])
    if S > 1:
        assert exact["mean_workload"] > 2 * exact["mean_wait"]


def _lindley_sigma2(rho: float, h: float) -> float:
    """``lim n Var(mean of n waits)`` of M/M/1 (service rate 1) from the Poisson equation of
    the Lindley chain ``W' = max(W + S - A, 0)`` discretised on the grid ``0, h, 2h, ...``:
    ``sigma^2 = 2 pi(f g) - pi(f^2)`` with ``(I - P) g = f``, ``f`` the centred wait."""
    m = int(40 / (1 - rho) / h)
    x = np.arange(m) * h
    lam = rho

    def cdf(d):  # S - A: exponential right tail of weight lam / (1 + lam), left of rate lam
        return np.where(d >= 0, 1 - lam / (1 + lam) * np.exp(-np.maximum(d, 0)),
                        np.exp(lam * np.minimum(d, 0)) / (1 + lam))

    edges = np.concatenate([[-np.inf], (np.arange(m - 1) + 0.5) * h, [np.inf]])
    p = np.diff(cdf(edges[None, :] - x[:, None]), axis=1)
    p /= p.sum(axis=1, keepdims=True)
    a = np.eye(m) - p.T
    a[-1, :] = 1.0  # the stationary law: pi (I - P) = 0 and sum(pi) = 1
    rhs = np.zeros(m)
    rhs[-1] = 1.0
    pi = np.linalg.solve(a, rhs)
    f = x - pi @ x
    g = np.linalg.solve(np.eye(m) - p + np.outer(np.ones(m), pi), f)
    return float(2 * pi @ (f * g) - pi @ (f * f))


@pytest.mark.parametrize("rho", [0.5, 0.7])
def test_mm1_wait_sigma_against_the_lindley_chain(rho):
    # the closed form of the mean wait's asymptotic variance (cost_oracle.py's check of the
    # replications) against a route that shares nothing with it: the grid chain converges
    # to it as h -> 0 (0.02% off at h = 0.05 for rho = 0.5)
    exact = o.mm1_wait_sigma(rho) ** 2
    assert _lindley_sigma2(rho, 0.05) == pytest.approx(exact, rel=2e-3)
