"""Inputs: laws, forward/backward streams, replay, periodic and Markov-modulated inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import recursions as rc
from recursions.common import BLOCK

E = rc.dists.Exponential


def _ss(k=7):
    return np.random.SeedSequence(k)


def test_poisson_means_and_sample_moments():
    inp = rc.Poisson(rate=2.0, service=rc.dists.Deterministic(0.3))
    assert inp.mean_interarrival == pytest.approx(0.5)
    assert inp.offered_load == pytest.approx(0.6)
    s, t = inp.sample(100_000, rng=3)
    assert np.all(s == 0.3)
    assert abs(t.mean() - 0.5) < 5 * t.std() / np.sqrt(t.size)


def test_renewal_accepts_scipy_laws():
    inp = rc.Renewal(scipy.stats.gamma(2, scale=0.5), scipy.stats.lognorm(1.0))
    assert inp.mean_interarrival == pytest.approx(1.0)
    assert inp.mean_service == pytest.approx(np.exp(0.5))
    _, t = inp.sample(50_000, rng=1)
    assert abs(t.mean() - 1.0) < 5 * t.std() / np.sqrt(t.size)


def test_forward_stream_does_not_depend_on_chunking():
    inp = rc.Poisson(1.0, rc.dists.LogNormal(1.0, 2.0))
    a = inp.forward(_ss())
    s1, t1 = a.next(1000)
    b = inp.forward(_ss())
    parts = [b.next(k) for k in (1, 10, 300, 689)]
    np.testing.assert_array_equal(s1, np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(t1, np.concatenate([p[1] for p in parts]))


@pytest.mark.parametrize(
    "inp",
    [
        rc.Poisson(1.0, E(2.0)),
        rc.Periodic(sigma=[3.0, 0.5, 1.0], tau=[1.0, 2.0, 0.5]),
        rc.MarkovModulated([[0.9, 0.1], [0.3, 0.7]], [E(2.0), E(0.5)], [E(1.0), E(3.0)]),
    ],
    ids=["poisson", "periodic", "markov"],
)
def test_backward_draws_do_not_depend_on_horizon(inp):
    short = inp.backward(_ss()).window(100)
    long_ = inp.backward(_ss()).window(3 * BLOCK + 17)
    np.testing.assert_array_equal(short[0], long_[0][-100:])
    np.testing.assert_array_equal(short[1], long_[1][-100:])
    # asking blocks out of order gives the same numbers
    st = inp.backward(_ss())
    b2 = st.block(2)
    np.testing.assert_array_equal(b2[0], long_[0][-3 * BLOCK : -2 * BLOCK])


def test_periodic_cycles_forward_and_backward():
    inp = rc.Periodic(sigma=[1.0, 2.0, 3.0], tau=[0.5, 0.5, 0.5], phase=1)
    s, _ = inp.sample(5)
    assert s.tolist() == [2.0, 3.0, 1.0, 2.0, 3.0]
    sb, _ = inp.backward(_ss()).window(4)  # phase 1 at time 0: times -4..-1 have 0, 1, 2, 0
    assert sb.tolist() == [1.0, 2.0, 3.0, 1.0]


def test_periodic_random_phase_is_uniform():
    inp = rc.Periodic(sigma=[1.0, 2.0, 3.0], tau=[1.0, 1.0, 1.0])
    first = [inp.sample(1, rng=k)[0][0] for k in range(600)]
    counts = np.array([first.count(x) for x in (1.0, 2.0, 3.0)])
    # binomial(600, 1/3): sd = 11.5
    assert np.all(np.abs(counts - 200) < 5 * np.sqrt(600 * (1 / 3) * (2 / 3)))


def test_markov_modulated_stationary_means_forward_and_backward():
    P = [[0.95, 0.05], [0.1, 0.9]]
    inp = rc.MarkovModulated(P, [E(4.0), E(1.0)], [E(1.0), E(0.5)])
    pi = inp.stationary
    np.testing.assert_allclose(pi, [2 / 3, 1 / 3])
    assert inp.mean_interarrival == pytest.approx(2 / 3 * 0.25 + 1 / 3 * 1.0)
    n = 200_000
    s, t = inp.sample(n, rng=2)
    sb, tb = inp.backward(_ss(2)).window(n)
    for x, m in ((s, inp.mean_service), (t, inp.mean_interarrival),
                 (sb, inp.mean_service), (tb, inp.mean_interarrival)):
        # correlated sequence: batch means for the standard error
        bm = x.reshape(100, -1).mean(axis=1)
        assert abs(x.mean() - m) < 5 * bm.std(ddof=1) / 10


def test_markov_reversed_chain_transitions():
    # backward draws must show the forward chain's transition frequencies (read forwards)
    P = np.array([[0.8, 0.2, 0.0], [0.0, 0.5, 0.5], [0.6, 0.0, 0.4]])
    D = rc.dists.Deterministic
    inp = rc.MarkovModulated(P, [D(1.0)] * 3, [D(1.0), D(2.0), D(3.0)])
    sb, _ = inp.backward(_ss(4)).window(60_000)
    states = (sb - 1).astype(int)
    counts = np.zeros((3, 3))
    np.add.at(counts, (states[:-1], states[1:]), 1)
    est = counts / counts.sum(axis=1, keepdims=True)
    se = np.sqrt(P * (1 - P) / counts.sum(axis=1, keepdims=True))
    assert np.all(np.abs(est - P) <= 5 * se + 1e-9)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: rc.Poisson(-1.0, E(1.0)), "rate"),
        (lambda: rc.Poisson(float("nan"), E(1.0)), "rate"),
        (lambda: rc.Poisson(float("inf"), E(1.0)), "rate"),
        (lambda: rc.Poisson(1.0, 3.0), "service"),
        (lambda: rc.Renewal(scipy.stats.norm(), E(1.0)), "interarrival"),
        (lambda: rc.Poisson(1.0, scipy.stats.pareto(0.8)), "infinite mean"),
        (lambda: rc.Periodic(sigma=[1.0], tau=[1.0, 2.0]), "equal length"),
        (lambda: rc.Periodic(sigma=[-1.0], tau=[1.0]), "sigma"),
        (lambda: rc.Periodic(sigma=[1.0], tau=[0.0]), "tau"),
        (lambda: rc.Periodic(sigma=[1.0, 1.0], tau=[1.0, 1.0], phase=2), "phase"),
        (lambda: rc.MarkovModulated([[0.5, 0.4], [0.5, 0.5]], [E(1)] * 2, [E(1)] * 2), "rows"),
        (lambda: rc.MarkovModulated([[1.0, 0.0], [0.0, 1.0]], [E(1)] * 2, [E(1)] * 2),
         "irreducible"),
        (lambda: rc.MarkovModulated([[1.0]], [E(1)] * 2, [E(1)]), "one per state"),
    ],
)
def test_bad_inputs_are_rejected(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


def test_a_slow_two_state_chain_is_irreducible():
    # numpy's default rank tolerance (relative, of order eps) called this chain reducible when
    # the null singular value of P^T - I came out at 9e-18 against a threshold of 8.9e-18
    E = rc.dists.Exponential
    for stay in (0.99, 0.999, 0.9999):
        P = [[stay, 1 - stay], [1 - stay, stay]]
        inp = rc.MarkovModulated(P, [E(1.0)] * 2, [E(1.0)] * 2)
        assert inp.correlation_length > 1.0
    with pytest.raises(ValueError, match="irreducible"):
        rc.MarkovModulated([[1.0, 0.0], [0.0, 1.0]], [E(1.0)] * 2, [E(1.0)] * 2)
