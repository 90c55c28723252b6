"""The backward random-assignment walk with certificates (coupling._ra_walk)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

import recursions as rc
from coupling._ra_walk import RAWalk, ra_known_from
from tests import naive

D = rc.dists
Z = 4.0


def _positions(walk):
    u, s, t = walk.path()
    inc = np.repeat(-t[:, None], walk.S, axis=1)
    inc[np.arange(u.size), u] += s
    return np.vstack([np.zeros(walk.S), np.cumsum(inc, axis=0)])


@pytest.mark.parametrize("routing", ["random", "cyclic"])
@pytest.mark.parametrize(
    ("servers", "service", "interarrival"),
    [(1, D.Exponential(1.0), D.Erlang(2, 2.0 * 0.7)),
     (2, D.Exponential(1.0), D.Erlang(2, 2 * 2 * 0.75)),
     (3, D.Deterministic(1.0), D.Uniform(0.2, 0.8)),
     (2, D.HyperExponential.balanced(1.0, 4.0), D.Exponential(1.4))],
    ids=["E2/M/1", "E2/M/2", "U/D/3", "M/H2/2"],
)
def test_rise_probability_and_path_match_brute_force(servers, service, interarrival, routing):
    gen = np.random.default_rng(11)
    walk = RAWalk(servers, service, interarrival, gen, routing=routing)
    margins = walk.margin + np.linspace(0.0, 1.0, servers)
    reps, k0 = 4000, 5
    steps = []
    for _ in range(reps):
        ev = walk._rises(margins, k0)
        if ev is not None:
            u, s, t, end = ev
            inc = np.repeat(-t[:, None], servers, axis=1)
            inc[np.arange(u.size), u] += s
            cum = np.cumsum(inc, axis=0)
            np.testing.assert_allclose(cum[-1], end)
            assert (end > margins).any() and not (cum[:-1] > margins).any()  # the first rise
            if routing == "cyclic":
                assert u.tolist() == [(walk.phase - k0 - k) % servers
                                      for k in range(1, u.size + 1)]
            steps.append(u.size)
    p = len(steps) / reps
    phase = walk.phase if routing == "cyclic" else None
    rose, step = naive.ra_walk_rises(np.random.default_rng(12), servers, service,
                                     interarrival, margins, 20000, 1500, phase, k0)
    q = rose.mean()
    se = math.sqrt(p * (1 - p) / reps + q * (1 - q) / rose.size)
    assert abs(p - q) <= Z * se + 1e-9, (p, q)
    # the path up to the rise has the conditional law given a rise: compare its length
    a, b = np.asarray(steps, float), step[rose].astype(float)
    if min(a.size, b.size) < 30:  # rises too rare here (nearly deterministic cyclic case)
        return
    se = math.hypot(a.std() / math.sqrt(a.size), b.std() / math.sqrt(b.size))
    assert abs(a.mean() - b.mean()) <= Z * se, (a.mean(), b.mean())


@pytest.mark.parametrize("routing", ["random", "cyclic"])
@pytest.mark.parametrize(
    ("servers", "service", "interarrival"),
    [(2, D.Exponential(1.0), D.Exponential(1.6)),
     (3, D.Deterministic(1.0), D.Erlang(2, 2 * 3 / 0.8 * 0.5)),
     (4, D.Uniform(0.0, 2.0), D.Exponential(3.2))],
    ids=["M/M/2", "E2/D/3", "M/U/4"],
)
def test_certificates_hold_and_increments_keep_their_law(servers, service, interarrival,
                                                         routing):
    walk = RAWalk(servers, service, interarrival, np.random.default_rng(3), routing=routing)
    for _ in range(400):
        walk.advance()
    P = _positions(walk)
    ks, bounds = walk.checkpoints()
    assert ks.size >= 300 and np.all(np.diff(ks) >= 0)
    for k, b in zip(ks, bounds, strict=True):
        assert np.all(P[k:].max(axis=0) - P[k] <= b + 1e-9)  # the rest stays under the cap
    # the conditioning is undone by the rejections: the increments are i.i.d. with their law
    u, s, t = walk.path()
    for x, mean, var in ((t, interarrival.mean, interarrival.var),
                         (s, service.mean, service.var)):
        assert abs(x.mean() - mean) <= Z * math.sqrt(var / x.size) + 1e-12
    if routing == "cyclic":
        assert np.array_equal(u, (walk.phase - np.arange(1, u.size + 1)) % servers)
        return
    counts = np.bincount(u, minlength=servers) / u.size
    assert np.all(np.abs(counts - 1 / servers)
                  <= Z * math.sqrt((1 / servers) * (1 - 1 / servers) / u.size))


def _stationary_w1(walk, server=0):
    """RA workload at ``server`` seen by customer 0: exact once the walk's maximum so far
    reaches above the certified bound at a checkpoint."""
    while True:
        walk.advance()
        P = _positions(walk)[:, server]
        k, b = walk.checkpoints()
        run_max = np.maximum.accumulate(P)
        ok = run_max[k] >= P[k] + b[:, server]
        if ok.any():
            return float(run_max[k[np.argmax(ok)]])


def test_stationary_ra_workload_mm_matches_mm1():
    # Poisson arrivals split at random: each server is M/M/1 with rate lam / S
    S, lam, mu = 2, 1.5, 1.0
    gen = np.random.default_rng(21)
    w = np.array([_stationary_w1(RAWalk(S, D.Exponential(mu), D.Exponential(lam), g))
                  for g in gen.spawn(3000)])
    rho = lam / S / mu
    p = (w > 0).mean()
    assert abs(p - rho) <= Z * math.sqrt(rho * (1 - rho) / w.size)
    mean = rho / (mu - lam / S)
    assert abs(w.mean() - mean) <= Z * w.std() / math.sqrt(w.size)


def test_stationary_ra_workload_gi_matches_forward_random_routing():
    S, inp = 2, rc.Renewal(D.Erlang(2, 2 * 1.5), D.Erlang(2, 2.0))
    gen = np.random.default_rng(22)
    w = np.array([_stationary_w1(RAWalk(S, inp.service, inp.interarrival, g))
                  for g in gen.spawn(3000)])
    # random routing: the joined server is independent of the workloads, so its workload
    # has the law of any one server's
    fwd = rc.simulate(rc.RandomRouting(S), inp, steps=1_000_000, warmup=10_000, rng=22)
    se = math.hypot(w.std() / math.sqrt(w.size), fwd.mean_wait.se)
    assert abs(w.mean() - fwd.mean_wait.value) <= Z * se
    p = (w > 0).mean()
    se = math.hypot(math.sqrt(p * (1 - p) / w.size), fwd.p_wait.se)
    assert abs(p - fwd.p_wait.value) <= Z * se


def test_stationary_cyclic_workload_matches_gi_m_1():
    # cyclic routing of Poisson(lam) arrivals: each server is an E_S/M/1 queue. The server
    # of customer 0 (the phase) is seen by one of its arrivals: P(w > 0) = s and, given
    # w > 0, w is exponential with rate mu (1 - s), where s = A*(mu (1 - s))
    S, lam, mu = 3, 2.1, 1.0
    s = optimize.brentq(lambda x: (lam / (lam + mu * (1 - x))) ** S - x, 1e-12, 1 - 1e-9)
    gen = np.random.default_rng(23)
    w = []
    for g in gen.spawn(3000):
        walk = RAWalk(S, D.Exponential(mu), D.Exponential(lam), g, routing="cyclic")
        w.append(_stationary_w1(walk, walk.phase))
    w = np.array(w)
    p = (w > 0).mean()
    assert abs(p - s) <= Z * math.sqrt(s * (1 - s) / w.size)
    assert stats.kstest(w[w > 0], "expon", args=(0, 1 / (mu * (1 - s)))).pvalue > 1e-3


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_known_from_matches_naive(servers, n, seed):
    g = np.random.default_rng(seed)
    u = g.integers(0, servers, n)
    s = g.exponential(1.0, n) * g.integers(0, 2, n)
    t = g.exponential(0.5, n) * g.integers(0, 2, n)
    bound = g.exponential(1.0, servers) * g.integers(0, 2, servers)
    got = ra_known_from(u, s, t, n, bound)
    assert got.tolist() == naive.ra_known_from(u, s, t, n, bound)


def test_walk_rejects_bad_input():
    with pytest.raises(ValueError, match="drift down"):
        RAWalk(2, D.Exponential(1.0), D.Exponential(2.5), np.random.default_rng(0))
    with pytest.raises(ValueError, match="heavy-tailed"):
        RAWalk(2, D.LogNormal(1.0, 1.0), D.Erlang(2, 2.0), np.random.default_rng(0))


def test_walk_that_never_rises_certifies_zero():
    # services below every interarrival time: no RA customer ever waits
    walk = RAWalk(2, D.Uniform(0.0, 0.5), D.Uniform(1.0, 2.0), np.random.default_rng(0))
    assert walk.theta == math.inf
    for _ in range(5):
        walk.advance()
    k, b = walk.checkpoints()
    assert k.tolist() == [1, 2, 3, 4, 5] and np.all(b <= 1e-8)  # 0 up to rounding slack


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_walk_kernels_match_naive(servers, n, seed):
    from coupling import _ra_walk_kernels as rw

    g = np.random.default_rng(seed)
    u = g.integers(0, servers, n)
    s = g.exponential(1.0, n)
    t = g.exponential(0.5, n) * g.integers(0, 2, n)
    i0 = int(g.integers(0, n))
    margins = g.exponential(1.0, servers)
    k, pos = rw.walk_to_rise(u, s, t, i0, margins)
    kn, posn = naive.walk_to_rise(u, s, t, i0, list(margins))
    assert k == kn
    if k >= 0:
        np.testing.assert_allclose(pos, posn, rtol=1e-12, atol=1e-12)
    room, a = margins + 0.5, float(g.uniform(0.0, 0.5))
    st_, k, pos = rw.walk_to_descend(u, s, t, i0, room, a)
    stn, kn, posn = naive.walk_to_descend(u, s, t, i0, list(room), a)
    assert (st_, k) == (stn, kn)
    if st_ >= 0:
        np.testing.assert_allclose(pos, posn, rtol=1e-12, atol=1e-12)
    assert rw.path_exceeds(u, s, t, room) == naive.path_exceeds(u, s, t, list(room))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 4), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_cyclic_kernels_match_naive(servers, n, seed):
    from coupling import _ra_walk_kernels as rw

    g = np.random.default_rng(seed)
    tt, st_, sp = g.exponential(0.5, n), g.exponential(1.0, n), g.exponential(1.0, n)
    it, ist, isp = (int(g.integers(0, n)) for _ in range(3))
    j, phase, k0 = int(g.integers(0, servers)), int(g.integers(0, servers)), int(g.integers(0, 50))
    margins = g.exponential(1.0, servers)
    got = rw.cyclic_to_rise(tt, it, st_, ist, sp, isp, j, phase, k0, margins)
    want = naive.cyclic_to_rise(tt, it, st_, ist, sp, isp, j, phase, k0, list(margins))
    assert got[0] == want[0]
    if got[0] >= 0:
        assert got[1:4] == want[1:4]
        np.testing.assert_allclose(got[4], want[4], rtol=1e-12, atol=1e-12)
    room, a = margins + 0.5, float(g.uniform(0.0, 0.5))
    got = rw.cyclic_to_descend(tt, it, sp, isp, phase, k0, room, a)
    want = naive.cyclic_to_descend(tt, it, sp, isp, phase, k0, list(room), a)
    assert got[0] == want[0]
    if got[0] >= 0:
        assert got[1:4] == want[1:4]
        np.testing.assert_allclose(got[4], want[4], rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_tilt_pick_and_ratio_match_naive(servers, seed):
    from coupling import _ra_walk_kernels as rw

    g = np.random.default_rng(seed)
    margins, theta, uni = g.uniform(0.5, 5.0, servers), float(g.uniform(0.1, 2.0)), g.random()
    logpi, j = rw.pick_tilt(margins, theta, uni)
    nlogpi, nj = naive.pick_tilt(list(margins), theta, uni)
    np.testing.assert_allclose(logpi, nlogpi, rtol=1e-12, atol=1e-12)
    assert j == nj or abs(np.cumsum(np.exp(nlogpi))[min(j, nj)] - uni) < 1e-12  # ties at a cdf step
    end = g.normal(0.0, 2.0, servers)
    assert rw.log_lr(logpi, theta, end) == pytest.approx(naive.log_lr(nlogpi, theta, end),
                                                          rel=1e-12, abs=1e-12)
