"""Exact sampling of FCFS GI/GI/S (renewal arrivals) through the random-assignment walk."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

import coupling as cp
import loynes as ly
import recursions as rc

D = rc.dists
Z = 4.0


def _close(x, fwd_value, fwd_se):
    se = math.hypot(x.std() / math.sqrt(x.size), fwd_se)
    assert abs(x.mean() - fwd_value) <= Z * se, (x.mean(), fwd_value, se)


def test_walk_bound_on_poisson_input_matches_erlang_c():
    # the renewal method on Poisson input, against the closed form (not the other method)
    servers, lam = 2, 1.6
    ps = cp.perfect_sample(rc.JSW(servers), rc.Poisson(lam, D.Exponential(1.0)), 1500,
                           rng=31, method="dominated-walk")
    assert ps.method == "dominated-walk"
    w1 = ps.samples[:, 0]
    p = ly.erlang_c(servers, lam)
    assert abs((w1 > 0).mean() - p) <= Z * math.sqrt(p * (1 - p) / w1.size)
    assert stats.kstest(w1[w1 > 0], "expon", args=(0, 1 / (servers - lam))).pvalue > 1e-3


@pytest.mark.parametrize(("servers", "rho"), [(2, 0.8), (10, 0.7)])
def test_cyclic_bound_mms_matches_erlang_c(servers, rho):
    lam = servers * rho
    ps = cp.perfect_sample(rc.JSW(servers), rc.Poisson(lam, D.Exponential(1.0)), 1500,
                           rng=51 + servers)
    assert ps.method == "dominated-cyclic"  # the default for light-tailed service
    w1 = ps.samples[:, 0]
    p = ly.erlang_c(servers, lam)
    assert abs((w1 > 0).mean() - p) <= Z * math.sqrt(p * (1 - p) / w1.size)
    pos = w1[w1 > 0]
    assert stats.kstest(pos, "expon", args=(0, 1 / (servers - lam))).pvalue > 1e-3


@pytest.mark.parametrize(("servers", "rho", "size"), [(10, 0.9, 1500), (40, 0.9, 300)])
def test_cyclic_bound_mds_matches_embedded_chain(servers, rho, size):
    # out of reach of the random-assignment bound (nobody waiting in 10 or 40 queues at once)
    lam = servers * rho
    p_wait, mean_wait = ly.md_c_waiting(servers, lam, 1.0)
    ps = cp.perfect_sample(rc.JSW(servers), rc.Poisson(lam, D.Deterministic(1.0)), size,
                           rng=61)
    w1 = ps.samples[:, 0]
    assert abs((w1 > 0).mean() - p_wait) <= Z * math.sqrt(p_wait * (1 - p_wait) / w1.size)
    assert abs(w1.mean() - mean_wait) <= Z * w1.std() / math.sqrt(w1.size)


@pytest.mark.parametrize("method", ["dominated-cyclic", "dominated-walk"])
@pytest.mark.parametrize(("servers", "k", "rho"), [(2, 2, 0.8), (3, 4, 0.7)])
def test_gi_m_s_conditional_wait_is_exponential(servers, k, rho, method):
    # GI/M/S: given a wait, W(1) is exponential with rate S mu (1 - omega), where omega is
    # the root in (0, 1) of omega = A*(S mu (1 - omega)), A* the interarrival transform
    mu, lam = 1.0, rho * servers
    ia = D.Erlang(k, k * lam)
    inp = rc.Renewal(ia, D.Exponential(mu))
    ps = cp.perfect_sample(rc.JSW(servers), inp, 1500, rng=32 + servers, method=method)
    assert ps.method == method

    def lst(s):
        return (k * lam / (k * lam + s)) ** k

    omega = optimize.brentq(lambda w: lst(servers * mu * (1 - w)) - w, 1e-12, 1 - 1e-9)
    w1 = ps.samples[:, 0]
    pos = w1[w1 > 0]
    rate = servers * mu * (1 - omega)
    assert stats.kstest(pos, "expon", args=(0, 1 / rate)).pvalue > 1e-3
    fwd = rc.simulate(rc.JSW(servers), inp, steps=1_000_000, warmup=10_000, rng=32)
    p = (w1 > 0).astype(float)
    _close(p, fwd.p_wait.value, fwd.p_wait.se)


@pytest.mark.parametrize(
    ("servers", "inp"),
    [(2, rc.Renewal(D.Erlang(2, 2 * 1.6), D.Deterministic(1.0))),
     (3, rc.Renewal(D.Uniform(0.1, 0.7), D.HyperExponential.balanced(1.0, 3.0))),
     (2, rc.Renewal(D.LogNormal(0.7, 0.5), D.Uniform(0.5, 1.5))),
     (2, rc.Renewal(D.Erlang(2, 2 * 1.5), D.Coxian.normalised([3.0, 1.0], [0.4])))],
    ids=["E2/D/2", "U/H2/3", "LN/U/2", "E2/Cox/2"],
)
def test_gi_gi_s_matches_forward_simulation(servers, inp):
    ps = cp.perfect_sample(rc.JSW(servers), inp, 1000, rng=41)
    fwd = rc.simulate(rc.JSW(servers), inp, steps=1_000_000, warmup=10_000, rng=41)
    w1 = ps.samples[:, 0]
    _close(w1, fwd.mean_wait.value, fwd.mean_wait.se)
    _close((w1 > 0).astype(float), fwd.p_wait.value, fwd.p_wait.se)
    assert np.all(np.diff(ps.samples, axis=1) >= 0)
    # the whole vector: mean total workload seen by an arrival
    _close(ps.samples.sum(axis=1), fwd.mean_workload.value, fwd.mean_workload.se)


@pytest.mark.parametrize("method", ["dominated-cyclic", "dominated-walk"])
def test_gi_samples_do_not_depend_on_the_search_start(method):
    inp = rc.Renewal(D.Erlang(2, 2 * 2.4), D.Exponential(1.0))
    a = cp.perfect_sample(rc.JSW(3), inp, 30, rng=5, start_time=0.5, method=method)
    b = cp.perfect_sample(rc.JSW(3), inp, 30, rng=5, start_time=60.0, method=method)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-12, atol=1e-12)
    assert (a.steps != b.steps).any()  # the searches did differ


def test_gi_errors_are_clear():
    e2 = D.Erlang(2, 2.0)
    with pytest.raises(ValueError, match="light tail"):
        cp.perfect_sample(rc.JSW(2), rc.Renewal(e2, D.LogNormal(1.0, 1.0)), 2)
    with pytest.raises(ValueError, match="not stable"):
        cp.perfect_sample(rc.JSW(2), rc.Renewal(D.Erlang(2, 4.0), D.Exponential(0.9)), 2)
    with pytest.raises(ValueError, match="Poisson arrivals"):
        cp.perfect_sample(rc.JSW(2), rc.Renewal(e2, D.Exponential(1.0)), 2, method="dominated")
    with pytest.raises(ValueError, match="renewal arrivals"):
        cp.perfect_sample(rc.JSW(2), rc.Periodic([1.0, 0.5], [1.0, 1.0]), 2)
    with pytest.raises(ValueError, match="method"):
        cp.perfect_sample(rc.JSW(2), rc.Renewal(e2, D.Exponential(1.0)), 2, method="nope")
    with pytest.raises(ValueError, match="method"):
        cp.perfect_sample(rc.Loss(2), rc.Poisson(1.0, D.Exponential(1.0)), 2,
                          method="dominated-walk")


def test_gi_cap_stops_the_search():
    inp = rc.Renewal(D.Erlang(2, 2 * 9.5), D.Exponential(1.0))
    for method in ("dominated-cyclic", "dominated-walk"):
        with pytest.raises(cp.CouplingNotReached, match="within time 5 back; raise cap_time"):
            cp.perfect_sample(rc.JSW(10), inp, 1, rng=1, start_time=0.1, cap_time=5.0,
                              method=method)
