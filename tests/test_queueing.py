"""Simulations against queueing formulas (fixed seeds; tolerances from the run's own SE).

JSW with S servers is the FCFS G/G/S queue (docs/theory/kiefer_wolfowitz.md),
so Erlang C, Pollaczek-Khinchine,
D/M/1 and M/D/S are exact references; the loss system with Poisson input has Erlang B loss
whatever the service law.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

import loynes as ly
import recursions as rc

D = rc.dists
Z = 4.5  # tolerance in standard errors


def _close(est, exact, z=Z, rel_bias=0.0):
    assert math.isfinite(est.se) and est.se > 0
    assert abs(est.value - exact) <= z * est.se + rel_bias * abs(exact), (est, exact)


@pytest.mark.parametrize(("servers", "rho"), [(1, 0.7), (3, 0.8), (10, 0.9), (40, 0.85)])
def test_jsw_is_mms_erlang_c(servers, rho):
    lam = rho * servers
    res = rc.simulate(rc.JSW(servers), rc.Poisson(lam, D.Exponential(1.0)), steps=400_000,
                      warmup=20_000, replications=2, rng=100 + servers)
    _close(res.p_wait, ly.erlang_c(servers, lam))
    _close(res.mean_wait, ly.mm_c_mean_wait(servers, lam, 1.0))
    # busy fraction at arrivals (PASTA) is the load
    _close(res.busy_fraction, rho)


@pytest.mark.parametrize(
    "service",
    [D.Deterministic(1.0), D.Erlang(2, 2.0), D.HyperExponential.balanced(1.0, 4.0)],
    ids=["M/D/1", "M/E2/1", "M/H2/1"],
)
def test_jsw_single_server_pollaczek_khinchine(service):
    lam = 0.6
    res = rc.simulate(rc.JSW(1), rc.Poisson(lam, service), steps=500_000, warmup=10_000,
                      replications=2, rng=7)
    second = service.var + service.mean**2
    _close(res.mean_wait, ly.pollaczek_khinchine_mean_wait(lam, service.mean, second))
    _close(res.p_wait, lam * service.mean)  # M/G/1: P(wait) = rho


def test_jsw_d_m_1():
    # D/M/1: P(wait) = s, the root in (0, 1) of s = exp(-mu d (1 - s)); E[W] = s / (mu (1 - s))
    mu, d = 1.0, 1.25
    s = optimize.brentq(lambda x: x - math.exp(-mu * d * (1 - x)), 1e-9, 1 - 1e-9)
    res = rc.simulate(rc.JSW(1), rc.Renewal(D.Deterministic(d), D.Exponential(mu)),
                      steps=400_000, warmup=10_000, rng=3)
    _close(res.p_wait, s)
    _close(res.mean_wait, s / (mu * (1 - s)))


@pytest.mark.parametrize(("servers", "lam"), [(2, 1.6), (5, 4.2)])
def test_jsw_m_d_s(servers, lam):
    p_wait, mean_wait = ly.md_c_waiting(servers, lam, 1.0)
    res = rc.simulate(rc.JSW(servers), rc.Poisson(lam, D.Deterministic(1.0)), steps=400_000,
                      warmup=20_000, replications=2, rng=11)
    _close(res.p_wait, p_wait)
    _close(res.mean_wait, mean_wait)


@pytest.mark.parametrize(
    ("servers", "a", "service"),
    [
        (1, 0.8, D.Exponential(1.0)),
        (4, 3.0, D.Exponential(1.0)),
        (4, 3.0, D.Deterministic(1.0)),
        (3, 2.5, D.LogNormal(1.0, 4.0)),
        (6, 5.0, D.Uniform(0.0, 2.0)),
    ],
    ids=["M/M/1/1", "M/M/4/4", "M/D/4/4", "M/LN/3/3", "M/U/6/6"],
)
def test_loss_is_erlang_b_insensitive(servers, a, service):
    lam = a / service.mean
    res = rc.simulate(rc.Loss(servers), rc.Poisson(lam, service), steps=400_000, warmup=5_000,
                      replications=2, rng=5)
    _close(res.p_loss, ly.erlang_b(servers, a))
    assert res.p_wait is None and res.mean_wait is None
    # service is independent of the state, so the overflow work is E[sigma] B(p, a)
    _close(res.overflow_work, service.mean * ly.erlang_b(servers, a))


def test_mean_workload_mm1():
    # M/M/1: the workload seen by an arrival is its wait, mean rho / (mu - lambda)
    res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, D.Exponential(1.0)), steps=300_000,
                      warmup=5_000, rng=2)
    _close(res.mean_workload, 1.0)


def test_profile_mm1_exponential_tail():
    # M/M/1 with mu = 1: P(V > w) = rho exp(-(1 - rho) w) seen by Poisson arrivals
    rho = 0.6
    grid = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    res = rc.simulate(rc.JSW(1), rc.Poisson(rho, D.Exponential(1.0)), steps=400_000,
                      warmup=5_000, rng=9, grid=grid)
    est = res.profile(grid)
    exact = rho * np.exp(-(1 - rho) * grid)
    assert np.all(np.abs(est.value - exact) <= Z * est.se)
    # interpolation between grid points stays between the neighbouring estimates
    mid = res.profile(1.5).value
    assert est.value[3] <= mid <= est.value[2]


def test_ciw_cross_check_gg2():
    """G/G/2 FCFS mean wait: our JSW against Ciw's event simulation (an independent code)."""
    ciw = pytest.importorskip("ciw")
    ia_shape, ia_scale = 2.0, 0.5 / 0.85  # gamma interarrivals, mean 1/0.85
    service = D.LogNormal(1.6, 1.5)
    import scipy.stats

    inp = rc.Renewal(scipy.stats.gamma(ia_shape, scale=ia_scale), service)
    ours = rc.simulate(rc.JSW(2), inp, steps=400_000, warmup=10_000, rng=4).mean_wait
    waits = []
    sigma2 = math.log(1 + 1.5)
    mu = math.log(1.6) - sigma2 / 2
    for seed in range(4):
        ciw.seed(seed)  # Ciw keeps a global RNG; seeded per run here
        net = ciw.create_network(
            arrival_distributions=[ciw.dists.Gamma(ia_shape, ia_scale)],
            service_distributions=[ciw.dists.Lognormal(mu, math.sqrt(sigma2))],
            number_of_servers=[2],
        )
        sim = ciw.Simulation(net)
        sim.simulate_until_max_customers(15_000, progress_bar=False)
        recs = sim.get_all_records()
        w = np.array([r.waiting_time for r in recs if r.arrival_date > 500])
        waits.append(w.mean())
    ciw_mean = float(np.mean(waits))
    ciw_se = float(np.std(waits, ddof=1) / math.sqrt(len(waits)))
    assert abs(ours.value - ciw_mean) <= Z * math.hypot(ours.se, ciw_se)


def test_same_seed_same_numbers_any_thread_count_and_chunk():
    import numba

    sys_, inp = rc.JIQ(4), rc.Poisson(3.0, D.LogNormal(1.0, 3.0))
    kw = dict(steps=30_000, warmup=100, replications=3, rng=42)
    a = rc.simulate(sys_, inp, **kw)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = rc.simulate(sys_, inp, **kw, chunk=777)
    finally:
        numba.set_num_threads(old)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    assert a.mean_wait == b.mean_wait and a.p_wait == b.p_wait
    c = rc.simulate(sys_, inp, **dict(kw, rng=43))
    assert not np.array_equal(a.final_state, c.final_state)


def test_record_path_and_warm_start():
    inp = rc.Poisson(1.0, D.Exponential(1.0))
    # 50 arrivals in 32 batches are far too few for estimates (simulate warns); only the
    # recorded path is checked
    with pytest.warns(rc.SimulationWarning, match="strongly correlated"):
        res = rc.simulate(rc.JSW(2), inp, steps=50, rng=1, record=True, w0=[0.0, 3.0])
    assert res.path.shape == (1, 50, 2)
    np.testing.assert_array_equal(res.path[0, 0], [0.0, 3.0])
    assert np.all(np.diff(res.path, axis=2) >= 0)


def test_progress_bar_runs():
    pytest.importorskip("tqdm")
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, D.Exponential(1.0)), steps=5_000, rng=1,
                      progress=True, chunk=1000)
    assert res.steps == 5_000


@pytest.mark.parametrize(("servers", "engine"), [(3, "dense"), (40, "heap")])
def test_waiting_time_tail_is_erlang_c(servers, engine):
    # M/M/S FCFS: P(W > t) = C(S, a) exp(-(S mu - lambda) t)
    lam = 0.85 * servers
    grid = np.array([0.0, 0.25, 0.5, 1.0])
    res = rc.simulate(rc.JSW(servers), rc.Poisson(lam, D.Exponential(1.0)), steps=400_000,
                      warmup=20_000, replications=2, rng=21, grid=grid, engine=engine)
    est = res.wait_sf(grid)
    exact = ly.erlang_c(servers, lam) * np.exp(-(servers - lam) * grid)
    assert np.all(np.abs(est.value - exact) <= Z * est.se + 1e-4)  # se is 0 where none waited
