"""Bounding processes for J_{p+1}SW and JIQ: the interval update and the exact draws."""

from __future__ import annotations

import math

import numpy as np
import pytest

import coupling as cp
import recursions as rc
from coupling._bounding import bounded_method, bounded_sample, interval_step
from coupling._perfect_result import ARRIVAL as _ARRIVAL
from recursions.common import as_seed_sequence, child
from tests import naive
from tests.marks import UNTRUSTED

D = rc.dists
Z = 4.5
SYSTEMS = [rc.JpSW(2, 1), rc.JpSW(3, 1), rc.JpSW(3, 2), rc.JpSW(5, 2), rc.JIQ(1), rc.JIQ(3),
           rc.JIQ(5)]
GRID = np.array([0.0, 0.5, 1.0, 2.0])  # values drawn from a grid give ties


def _value(gen):
    """A non-negative number, often 0 or a grid value (ties), else continuous."""
    c = gen.random()
    if c < 0.25:
        return 0.0
    if c < 0.55:
        return float(gen.choice(GRID))
    return float(gen.exponential(1.0))


def _triple(gen, S):
    """Sorted ``l ≺ x ≺ u`` with zeros, ties and sometimes ``l = x`` or ``x = u``."""
    x = np.array([_value(gen) for _ in range(S)])
    down = np.where(gen.random(S) < 0.3, 0.0, x * gen.choice([0.0, 0.5, 1.0, gen.random()], S))
    up = x + np.where(gen.random(S) < 0.4, 0.0, [_value(gen) for _ in range(S)])
    c = gen.random()
    if c < 0.1:
        down = x.copy()
    elif c < 0.2:
        up = x.copy()
    # pairing l_i <= x_i <= u_i unsorted gives the order of the sorted vectors
    return np.sort(down), np.sort(x), np.sort(up)


def _naive(system, lo, hi, sigma, tau, r):
    """Lemma 2 written from its definition with numpy (ranks 0-based)."""
    def put(w, i):
        w = w.copy()
        w[i] += sigma
        return np.sort(w)

    def t1(w):
        w = w.copy()
        w[0] = sigma
        return np.sort(w)

    moves = ["idle"] if hi[0] == 0 else ["busy"] if lo[0] > 0 else ["idle", "busy"]
    psi = np.min([put(lo, 0 if a == "idle" else r) for a in moves], axis=0)
    phi = np.max([t1(hi) if a == "idle" else put(hi, r) for a in moves], axis=0)
    return np.maximum(psi - tau, 0.0), np.maximum(phi - tau, 0.0)


@pytest.mark.parametrize("system", SYSTEMS, ids=repr)
def test_interval_update_brackets_the_map(system):
    gen = np.random.default_rng(system.servers * 10 + getattr(system, "p", 9))
    S = system.servers
    for _ in range(3000):
        lo, x, hi = _triple(gen, S)
        sigma, tau = _value(gen), _value(gen)
        u = float(gen.random()) if system.uniforms else None
        psi, phi = interval_step(system, lo, hi, sigma, tau, u)
        gx = system.step(x, sigma, tau, u)
        where = (lo.tolist(), x.tolist(), hi.tolist(), sigma, tau, u)
        assert np.all(psi <= gx) and np.all(gx <= phi), where
        assert np.all(np.diff(psi) >= 0) and np.all(np.diff(phi) >= 0), where
        assert np.all(psi >= 0) and np.all(psi <= phi), where
        # the one-pass kernels are Lemma 2 as written; busy and idle cases are G itself
        r = rc.vectors.random_rank(u, S) if system.uniforms else system.p
        n_psi, n_phi = _naive(system, lo, hi, sigma, tau, r)
        np.testing.assert_array_equal(psi, n_psi)
        np.testing.assert_array_equal(phi, n_phi)
        if lo[0] > 0 or hi[0] == 0:
            np.testing.assert_array_equal(psi, system.step(lo, sigma, tau, u))
            np.testing.assert_array_equal(phi, system.step(hi, sigma, tau, u))


def test_interval_update_is_the_map_when_the_bounds_meet():
    gen = np.random.default_rng(3)
    for _ in range(500):
        _, x, _ = _triple(gen, 4)
        sigma, tau, u = _value(gen), _value(gen), float(gen.random())
        for system in (rc.JpSW(4, 2), rc.JIQ(4)):
            uu = u if system.uniforms else None
            psi, phi = interval_step(system, x, x, sigma, tau, uu)
            gx = system.step(x, sigma, tau, uu)
            np.testing.assert_array_equal(psi, gx)
            np.testing.assert_array_equal(phi, gx)


def _compare(ps, fwd):
    """z-scores of the mean total workload, of P(an arrival finds an idle server), and of
    the mean and positivity of the workload found at the joined server.

    ``P(w[0] == 0) = 1 - p_all_busy``: the z-score of one is minus that of the other. The
    draws' standard errors are i.i.d. ones, the forward run's batch-means ones.
    """
    z = []
    for name in ("mean_workload", "p_all_busy", "mean_wait", "p_wait"):
        a, b = getattr(ps, name), getattr(fwd, name)
        z.append((a.value - b.value) / math.hypot(a.se, b.se))
    idle = (ps.samples[:, 0] == 0).mean()
    assert idle == pytest.approx(1 - ps.p_all_busy.value)
    return z[0], -z[1], z[2], z[3]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("system", "inp", "method"),
    [
        (rc.JpSW(3, 1), rc.Poisson(0.9, D.Exponential(1.0)), "bounding"),
        (rc.JpSW(3, 1), rc.Poisson(0.8, D.LogNormal(1.0, 2.0)), "bounding"),
        (rc.JpSW(5, 2), rc.Poisson(0.9, D.Exponential(1.0)), "bounding"),
        (rc.JpSW(5, 2), rc.Poisson(0.9, D.Deterministic(1.0)), "bounding"),
        (rc.JIQ(3), rc.Poisson(0.9, D.Exponential(1.0)), "bounding"),
        (rc.JpSW(3, 1), rc.Renewal(D.Erlang(2, 1.8), D.Uniform(0.0, 2.0)), "bounding-walk"),
    ],
    ids=["J2SW(3)-M/M", "J2SW(3)-M/LN", "J3SW(5)-M/M", "J3SW(5)-M/D", "JIQ(3)-M/M",
         "J2SW(3)-E2/U"],
)
def test_exact_draws_match_forward_simulation(system, inp, method):
    size = 12_000 if method == "bounding" else 6000  # the walk is slower
    ps = bounded_sample(system, inp, size, rng=5)
    assert ps.method == method and ps.samples.shape == (size, system.servers)
    assert np.all(np.diff(ps.samples, axis=1) >= 0) and np.all(ps.samples >= 0)
    assert np.all(ps.customers_back >= (1 if method == "bounding-walk" else 0))
    assert np.all(ps.time_back >= 0) and np.all(ps.seconds > 0)
    fwd = rc.simulate(system, inp, steps=2_000_000, warmup=20_000, rng=6)
    z = _compare(ps, fwd)
    assert max(map(abs, z)) <= Z, z


@pytest.mark.slow
@pytest.mark.parametrize(
    ("system", "inp"),
    [
        (rc.JpSW(3, 1), rc.Poisson(1.5, D.Exponential(1.0))),
        (rc.JpSW(3, 1), rc.Poisson(1.9, D.Exponential(1.0))),
        (rc.JpSW(3, 1), rc.Renewal(D.Erlang(2, 3.0), D.Exponential(1.0))),
        (rc.JpSW(5, 2), rc.Poisson(2.5, D.Exponential(1.0))),
        (rc.JpSW(5, 2), rc.Poisson(2.5, D.LogNormal(mean=1.0, scv=4.0))),
    ],
    ids=["J2SW(3)-M/M-1.5", "J2SW(3)-M/M-1.9", "J2SW(3)-E2/M-1.5", "J3SW(5)-M/M-2.5",
         "J3SW(5)-M/LN-2.5"],
)
def test_fcfs_bound_draws_beyond_one_match_forward_simulation(system, inp):
    # 1 <= lam E[sigma] < S - p: out of reach of the single-server bound (Lemma 4)
    ps = bounded_sample(system, inp, 3000, rng=12)
    assert ps.method == "bounding-fcfs" and ps.samples.shape == (3000, system.servers)
    assert np.all(np.diff(ps.samples, axis=1) >= 0) and np.all(ps.samples >= 0)
    fwd = rc.simulate(system, inp, steps=2_000_000, warmup=20_000, rng=13)
    z = _compare(ps, fwd)
    assert max(map(abs, z)) <= Z, z


def test_fcfs_bound_draws_tell_j2sw_from_jsw():
    # at lam = 1.5 on 3 servers the idle-first rule is far from JSW: P(all busy) 0.19 vs 0.24
    inp = rc.Poisson(1.5, D.Exponential(1.0))
    ps = bounded_sample(rc.JpSW(3, 1), inp, 2000, rng=14)
    jsw = rc.simulate(rc.JSW(3), inp, steps=500_000, warmup=20_000, rng=15)
    assert abs(_compare(ps, jsw)[1]) > Z


def test_walk_method_with_poisson_input_matches_forward():
    system, inp = rc.JIQ(3), rc.Poisson(0.9, D.Exponential(1.0))
    ps = bounded_sample(system, inp, 6000, rng=7, method="walk")
    assert ps.method == "bounding-walk"
    z = _compare(ps, rc.simulate(system, inp, steps=2_000_000, warmup=20_000, rng=8))
    assert max(map(abs, z)) <= Z, z


@UNTRUSTED
def test_draws_tell_j2sw_from_jsw():
    # two servers near lam E[sigma] = 1: the idle-first rule changes P(idle) by 0.05
    inp = rc.Poisson(0.95, D.Exponential(1.0))
    ps = bounded_sample(rc.JpSW(2, 1), inp, 5000, rng=9)
    own = rc.simulate(rc.JpSW(2, 1), inp, steps=2_000_000, warmup=20_000, rng=10)
    jsw = rc.simulate(rc.JSW(2), inp, steps=2_000_000, warmup=20_000, rng=10)
    assert max(map(abs, _compare(ps, own))) <= Z
    assert min(_compare(ps, jsw)[:2]) > Z  # about 11 and 8 standard errors off JSW's


@pytest.mark.parametrize(
    ("system", "inp", "key", "starts"),
    [
        (rc.JpSW(3, 1), rc.Poisson(0.9, D.Exponential(1.0)), "start_time", (0.25, 40.0)),
        (rc.JIQ(3), rc.Poisson(0.9, D.LogNormal(1.0, 2.0)), "start_time", (0.25, 40.0)),
        (rc.JpSW(3, 1), rc.Renewal(D.Erlang(2, 1.8), D.Exponential(1.0)), "start_customers",
         (2, 200)),
        (rc.JpSW(3, 1), rc.Poisson(1.5, D.Exponential(1.0)), "start_time", (0.25, 40.0)),
    ],
    ids=["J2SW-reversed", "JIQ-reversed", "J2SW-walk", "J2SW-fcfs"],
)
def test_draws_do_not_depend_on_the_search_start(system, inp, key, starts):
    a = bounded_sample(system, inp, 300, rng=4, **{key: starts[0]})
    b = bounded_sample(system, inp, 300, rng=4, **{key: starts[1]})
    np.testing.assert_array_equal(a.samples, b.samples)
    assert not np.array_equal(a.steps, b.steps)  # the searches did differ


def test_refuses_loads_beyond_the_dominating_queues():
    # Theorem 1 holds (2 * B(1, 2) = 1.33 < 2): the system is stable, the FCFS bound on
    # S - p = 2 servers is not
    with pytest.raises(ValueError, match=r"lam E\[sigma\] < S - p = 2 .*Theorem 1 \(holds"):
        bounded_sample(rc.JpSW(3, 1), rc.Poisson(2.0, D.Exponential(1.0)), 2)
    # the single-server bound refuses 1.5 and names the method that reaches it
    with pytest.raises(ValueError, match=r"'reversed' needs lam E\[sigma\] < 1.*'fcfs'"):
        bounded_sample(rc.JpSW(3, 1), rc.Poisson(1.5, D.Exponential(1.0)), 2, method="reversed")
    with pytest.raises(ValueError, match=r"for JIQ need lam E\[sigma\] < 1.*up to .* < S = 3"):
        bounded_sample(rc.JIQ(3), rc.Poisson(1.0, D.Exponential(1.0)), 2)
    with pytest.raises(ValueError, match=r"'fcfs' is for J_\{p\+1\}SW.*random rank"):
        bounded_sample(rc.JIQ(3), rc.Poisson(0.5, D.Exponential(1.0)), 2, method="fcfs")
    with pytest.raises(ValueError, match=r"lam E\[sigma\] < 1"):
        bounded_sample(rc.JpSW(3, 1), rc.Renewal(D.Erlang(2, 2.0), D.Exponential(0.9)), 2,
                       method="walk")
    # D/D input: P(sigma < tau) = 0, the FCFS queue need not empty
    with pytest.raises(ValueError, match=r"P\(sigma < tau\) > 0"):
        bounded_sample(rc.JpSW(3, 1), rc.Renewal(D.Deterministic(1 / 1.5),
                                                 D.Deterministic(1.0)), 2)
    # ... but P(sigma < tau) = 0.0125 > 0, near the top of tau's support, is seen
    near = rc.Renewal(D.Uniform(0.5, 1.5), D.Uniform(1.45, 1.55))
    assert bounded_sample(rc.JpSW(3, 1), near, 2, rng=1).method == "bounding-fcfs"
    # a heavy tail with non-Poisson arrivals: the FCFS bound has no sampler; the law says why
    heavy = rc.Renewal(D.Erlang(2, 3.0), D.LogNormal(mean=1.0, scv=4.0))
    with pytest.raises(ValueError, match=r"FCFS on S - p = 2 servers.*LogNormal.*heavy-tailed"):
        bounded_sample(rc.JpSW(3, 1), heavy, 2)


def _top_fcfs(y, sigma, tau):
    """JSW (FCFS) on ``len(y)`` servers, from its definition: ``[R(y + sigma e_1) - tau]^+``."""
    z = np.sort(y).copy()
    z[0] += sigma
    return np.maximum(np.sort(z) - tau, 0.0)


@pytest.mark.parametrize("system", [rc.JpSW(2, 1), rc.JpSW(3, 1), rc.JpSW(4, 2),
                                    rc.JpSW(5, 2), rc.JpSW(6, 5)], ids=repr)
def test_lemma_4_the_top_stays_below_fcfs_on_s_minus_p_servers(system):
    # top(G(x)) and top(Phi(l, u)) lie below JSW on S - p servers applied to top(x), top(u)
    gen = np.random.default_rng(11)
    S, p = system.servers, system.p
    for _ in range(3000):
        lo, x, hi = _triple(gen, S)
        sigma, tau = _value(gen), _value(gen) * gen.choice([0.0, 0.3, 1.0])
        gx = rc.iterate(system, x, np.array([sigma]), np.array([tau]))
        _, phi = interval_step(system, lo, hi, sigma, tau)
        assert np.all(gx[p:] <= _top_fcfs(x[p:], sigma, tau) + 1e-12), (x, sigma, tau)
        assert np.all(phi[p:] <= _top_fcfs(hi[p:], sigma, tau) + 1e-12), (lo, hi, sigma, tau)


@pytest.mark.parametrize(
    "system",
    [rc.JpSW(3, 0), rc.JSW(3), rc.RandomRouting(3), rc.LeastOfD(3, 2), rc.Envelope(rc.JpSW(3, 1)),
     rc.SplitBound(3, 1)],
    ids=repr,
)
def test_refuses_monotone_systems(system):
    with pytest.raises(ValueError, match=r"is monotone: sandwich two runs"):
        bounded_sample(system, rc.Poisson(0.5, D.Exponential(1.0)), 2)


def test_refuses_other_systems_and_inputs():
    poisson = rc.Poisson(0.5, D.Exponential(1.0))
    with pytest.raises(ValueError, match="renovation"):
        bounded_sample(rc.Loss(3), poisson, 2)
    with pytest.raises(ValueError, match="queue-length system"):
        bounded_sample(rc.JIQ(3, buffer=2), poisson, 2)
    with pytest.raises(TypeError, match="recursions system"):
        bounded_sample("JIQ", poisson, 2)
    with pytest.raises(ValueError, match="renewal arrivals"):
        bounded_sample(rc.JIQ(3), rc.Periodic([1.0], [2.0]), 2)
    gi = rc.Renewal(D.Erlang(2, 1.0), D.Exponential(1.0))  # E2/M at lam E[sigma] = 0.5
    with pytest.raises(ValueError, match="needs Poisson"):
        bounded_sample(rc.JIQ(3), gi, 2, method="reversed")
    with pytest.raises(ValueError, match="light tail"):
        bounded_sample(rc.JIQ(3), rc.Renewal(D.Erlang(2, 1.0), D.LogNormal(1.0, 1.0)), 2)
    with pytest.raises(ValueError, match="method must be"):
        bounded_sample(rc.JIQ(3), poisson, 2, method="dominated")
    with pytest.raises(ValueError, match="size"):
        bounded_sample(rc.JIQ(3), poisson, 0)
    with pytest.raises(ValueError, match="start_time <= cap_time"):
        bounded_sample(rc.JIQ(3), poisson, 2, start_time=10.0, cap_time=1.0)
    with pytest.raises(ValueError, match="'bounding' counts its backward horizons in time"):
        bounded_sample(rc.JIQ(3), poisson, 2, cap_customers=10)
    with pytest.raises(ValueError, match="'bounding-walk' counts its backward horizons in cus"):
        bounded_sample(rc.JIQ(3), gi, 2, start_time=1.0)
    with pytest.raises(ValueError, match="below upper"):
        interval_step(rc.JIQ(2), [0.0, 2.0], [0.0, 1.0], 1.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="sorted"):
        interval_step(rc.JpSW(2, 1), [1.0, 0.0], [1.0, 2.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="needs u"):
        interval_step(rc.JIQ(2), [0.0, 0.0], [1.0, 2.0], 1.0, 1.0)


def test_cap_raises_coupling_not_reached():
    inp = rc.Poisson(0.9, D.Exponential(1.0))
    with pytest.raises(cp.CouplingNotReached, match=r"within time 0\.001 back; raise cap_time"):
        bounded_sample(rc.JpSW(3, 1), inp, 20, rng=1, start_time=1e-3, cap_time=1e-3)
    busy = rc.Poisson(1.5, D.Exponential(1.0))
    with pytest.raises(cp.CouplingNotReached,
                       match=r"bounding processes .* FCFS bound on 2 servers.*raise cap_time"):
        bounded_sample(rc.JpSW(3, 1), busy, 20, rng=1, start_time=1e-3, cap_time=1e-3)
    gi = rc.Renewal(D.Erlang(2, 1.8), D.Exponential(1.0))
    with pytest.raises(cp.CouplingNotReached, match="1 customers back; raise cap_customers"):
        bounded_sample(rc.JpSW(3, 1), gi, 20, rng=1, start_customers=1, cap_customers=1)


@pytest.mark.parametrize("method", ["reversed", "walk", "fcfs"])
def test_one_draw_function_pickles_and_gives_the_sample_draws(method):
    # perfect_sample's worker processes receive run_one pickled: it must give the same draws
    import pickle

    system = rc.JpSW(3, 1) if method == "fcfs" else rc.JIQ(3)
    inp = rc.Poisson(1.4 if method == "fcfs" else 0.8, D.Exponential(1.0))
    name, run_one = bounded_method(system, inp, method=method)
    ps = bounded_sample(system, inp, 5, rng=3, method=method)
    assert name == ps.method
    again = pickle.loads(pickle.dumps(run_one))
    for k, sd in enumerate(np.random.SeedSequence(3).spawn(5)):
        w, n, back = again(sd)
        np.testing.assert_array_equal(w, ps.samples[k])
        assert n == ps.customers_back[k] and back == ps.time_back[k]


@pytest.mark.parametrize(("system", "rate"), [(rc.JpSW(3, 1), 0.9), (rc.JpSW(5, 2), 2.5),
                                             (rc.JIQ(3), 0.9)])
def test_found_is_what_the_naive_map_finds_for_the_arrival_at_zero(system, rate):
    # the customer at 0 joins by the naive twin's rule, with the uniforms of its own stream
    ps = bounded_sample(system, rc.Poisson(rate, D.Exponential(1.0)), 150, rng=3)
    seeds = as_seed_sequence(3).spawn(150)  # draw k's own seed, as the draws use
    u = [np.random.default_rng(child(sd, _ARRIVAL)).random(1) for sd in seeds]
    name, params = naive.describe(system)
    want = [naive.apply(name, params, list(w), 0.0, 0.0, list(uk))[1]
            for w, uk in zip(ps.samples, u, strict=True)]
    np.testing.assert_array_equal(ps.found, want)
    assert np.any(ps.samples[:, 0] > 0)  # some arrivals find every server busy
    assert ps.mean_wait.value == pytest.approx(np.mean(want))
    assert ps.p_wait.value == pytest.approx(np.mean(np.asarray(want) > 0))
