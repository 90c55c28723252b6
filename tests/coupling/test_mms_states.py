"""Exact stationary workload vectors of FCFS M/M/S from the birth-death chain.

``cp.mms_states`` draws them without coupling from the past. The oracles are
independent of it: Erlang C and the M/M/c mean wait (``loynes``' closed forms), the mean
number in system ``a + C rho / (1 - rho)`` (each customer's remaining work has mean 1 by the
memoryless law), and the draws of ``cp.perfect_sample`` (dominated coupling from the past),
compared coordinate by coordinate with a two-sample Kolmogorov-Smirnov test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

import coupling as cp
import loynes as ly
import recursions as rc

E = rc.dists.Exponential


def test_against_erlang_c_the_mean_wait_and_the_mean_work():
    S, rho, n = 3, 0.9, 40_000
    a = rho * S
    w = cp.mms_states(rc.JSW(S), rc.Poisson(a, E(1.0)), n, rng=11)
    assert w.shape == (n, S) and np.all(np.diff(w, axis=1) >= 0) and np.all(w >= 0)
    c = ly.erlang_c(S, a)
    assert abs((w[:, 0] > 0).mean() - c) < 4 * np.sqrt(c * (1 - c) / n)
    wait = w[:, 0]
    assert abs(wait.mean() - ly.mm_c_mean_wait(S, a, 1.0)) < 4 * wait.std() / np.sqrt(n)
    total = w.sum(axis=1)
    assert abs(total.mean() - (a + c * rho / (1 - rho))) < 4 * total.std() / np.sqrt(n)


def test_each_coordinate_is_busy_as_often_as_the_birth_death_chain_says():
    # server k (in sorted order) has work left exactly when N >= S - k; P(N = j) of M/M/S
    # written out here from its balance equations (pi_j ~ a^j / j! up to S, then times rho)
    S, a, n = 4, 3.4, 40_000
    rho = a / S
    head = [a**j / math.factorial(j) for j in range(S)]
    tail = a**S / math.factorial(S) / (1 - rho)
    p_below = np.array(head) / (sum(head) + tail)
    w = cp.mms_states(rc.JSW(S), rc.Poisson(a, E(1.0)), n, rng=15)
    for k in range(S):
        p = 1.0 - p_below[:S - k].sum()
        assert abs((w[:, k] > 0).mean() - p) < 4 * np.sqrt(p * (1 - p) / n), k


def test_the_seed_of_simulate_reaches_the_draws():
    # start="stationary" draws from its own child of the run's seed: other seeds, other states
    from recursions.inference._stationary_starts import stationary_states

    inp = rc.Poisson(2.4, E(1.0))
    one = stationary_states(rc.JSW(3), inp, 4, np.random.SeedSequence(1))
    again = stationary_states(rc.JSW(3), inp, 4, np.random.SeedSequence(1))
    other = stationary_states(rc.JSW(3), inp, 4, np.random.SeedSequence(2))
    np.testing.assert_array_equal(one, again)
    assert not np.array_equal(one, other)
    assert len({tuple(row) for row in one}) == 4  # one draw per replication


def test_a_long_queue_is_drawn_in_blocks_with_the_same_numbers(monkeypatch):
    # near saturation the queue is long (mean about rho / (1 - rho)): its works are drawn in
    # blocks, which bounds the memory and changes no number
    from coupling import _mms_exact as mms_exact

    inp = rc.Poisson(2.97, E(1.0))  # M/M/3 at 0.99
    whole = cp.mms_states(rc.JSW(3), inp, 20, rng=16)
    monkeypatch.setattr(mms_exact, "_BLOCK", 7)
    np.testing.assert_array_equal(cp.mms_states(rc.JSW(3), inp, 20, rng=16), whole)


def test_a_service_rate_other_than_one_scales_the_work():
    S, lam, mean, n = 2, 1.5, 0.5, 40_000  # load per server 0.375
    w = cp.mms_states(rc.JSW(S), rc.Poisson(lam, E(1.0 / mean)), n, rng=12)
    exact = ly.mm_c_mean_wait(S, lam, 1.0 / mean)
    assert abs(w[:, 0].mean() - exact) < 4 * w[:, 0].std() / np.sqrt(n)


def test_the_same_law_as_coupling_from_the_past():
    system, inp, n = rc.JSW(2), rc.Poisson(1.2, E(1.0)), 1500
    ours = cp.mms_states(system, inp, n, rng=13)
    cftp = cp.perfect_sample(system, inp, n, rng=14).samples
    for k in range(2):
        assert ks_2samp(ours[:, k], cftp[:, k]).pvalue > 1e-3, k
    # and a law that is not the stationary one is told apart by the same test
    assert ks_2samp(ours[:, 1], 0.7 * cftp[:, 1]).pvalue < 1e-3


def test_same_seed_same_draws_and_what_it_does_not_cover():
    inp = rc.Poisson(2.0, E(1.0))
    np.testing.assert_array_equal(cp.mms_states(rc.JSW(3), inp, 5, rng=1),
                                  cp.mms_states(rc.JSW(3), inp, 5, rng=1))
    assert cp.mms_states(rc.JIQ(3), inp, 5, rng=1) is None
    assert cp.mms_states(rc.JSW(3), rc.Poisson(2.0, rc.dists.Erlang(2, 2.0)), 5, rng=1) is None
    renewal = rc.Renewal(rc.dists.Deterministic(0.5), E(1.0))
    assert cp.mms_states(rc.JSW(3), renewal, 5, rng=1) is None
    with pytest.raises(ValueError, match="not stable"):
        cp.mms_states(rc.JSW(3), rc.Poisson(3.0, E(1.0)), 5, rng=1)


def test_simulate_starts_m_m_40_at_0_98_from_it():
    # coupling from the past takes seconds a draw here; the birth-death chain, microseconds
    S, rho = 40, 0.98
    inp = rc.Poisson(rho * S, E(1.0))
    with pytest.warns(rc.SimulationWarning, match="short for its load.*replication_interval"):
        res = rc.simulate(rc.JSW(S), inp, steps=20_000, replications=8, start="stationary",
                          rng=3, statistics=("p_wait", "mean_wait"))
    assert res.start == "stationary" and res.warmup == 0
    iv = res.replication_interval["p_wait"]
    assert iv.batches == 8
    assert abs(iv.value - ly.erlang_c(S, rho * S)) < 4 * iv.se
