"""Arrivals at a periodic rate: exact draws, statistics by phase, the infinite-server oracle.

Oracle: with many servers nobody waits, and the number of busy servers at time ``t`` is that
of M_t/G/infinity, Poisson with mean ``m(t) = int_0^inf lambda(t - s) P(sigma > s) ds``. For
``lambda(t) = a + b sin(w t)`` and exponential services of mean 1 the integral is
``a + b (sin(w t) - w cos(w t)) / (1 + w^2)``, written out here. Poisson arrivals see the time
average at each phase, so an arrival in a window of phases sees ``m`` averaged with weight
``lambda``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import loynes as ly
import recursions as rc

E = rc.dists.Exponential
DAY = 24.0
W = 2 * math.pi / DAY


def sine(a, b):
    def rate(t):
        return a + b * np.sin(W * t)
    return rate


def m_infinite_servers(t, a, b):
    return a + b * (np.sin(W * t) - W * np.cos(W * t)) / (1 + W**2)


def test_busy_servers_by_phase_are_the_infinite_server_formula():
    a, b, S = 6.0, 4.0, 30  # m(t) <= 10: P(30 busy) is about 1e-7, nobody waits
    tv = rc.TimeVarying(sine(a, b), period=DAY, service=E(1.0))
    res = rc.simulate(rc.JSW(S), tv, steps=2**19, warmup=2_000, rng=11)
    assert res.engine == "phases"
    t = res.by_phase(12)
    for j in range(12):
        lo, hi = t["phase_start"][j], t["phase_end"][j]
        s = np.linspace(lo, hi, 2001)
        lam = sine(a, b)(s)
        want = np.trapezoid(lam * m_infinite_servers(s, a, b), s) / np.trapezoid(lam, s) / S
        se = t["busy_fraction_se"][j]
        assert np.isfinite(se) and se > 0, t["busy_fraction_untrusted"][j]
        assert abs(t["busy_fraction"][j] - want) < 4.5 * se, (j, t["busy_fraction"][j], want)
    assert res.p_wait.value < 1e-3


def test_arrivals_fall_in_each_phase_as_the_rate_says():
    tv = rc.TimeVarying([1.0, 3.0, 0.0, 4.0], period=8.0, service=E(2.0))
    res = rc.simulate(rc.JSW(2), tv, steps=2**17, rng=4)  # load 1/2 a server
    t = res.by_phase(4)
    counts = t["arrivals"]
    share = np.array([1.0, 3.0, 0.0, 4.0]) / 8.0
    n = counts.sum()
    assert counts[2] == 0  # a rate of 0: no arrival, ever
    for j in (0, 1, 3):
        sd = math.sqrt(n * share[j] * (1 - share[j]))
        assert abs(counts[j] - n * share[j]) < 4.5 * sd
    assert np.isnan(t["p_wait"][2])  # no arrival to say it


def test_statistics_by_phase_merge_to_the_whole_run():
    tv = rc.TimeVarying(sine(2.0, 1.5), period=DAY, service=E(1.0))
    res = rc.simulate(rc.JSW(3), tv, steps=2**16, rng=2)
    t = res.by_phase(24)
    w = t["arrivals"] / t["arrivals"].sum()
    assert np.sum(w * t["p_wait"]) == pytest.approx(res.p_wait.value, rel=1e-9)
    assert set(t) >= {"phase_start", "phase_end", "arrivals", "p_wait", "p_wait_se",
                      "mean_wait", "mean_wait_se", "busy_fraction", "busy_fraction_se",
                      "mean_response", "mean_response_se"}
    assert t.to_pandas().shape[0] == 24 if _has_pandas() else True
    with pytest.raises(ValueError, match="bins must divide 288"):
        res.by_phase(7)
    plain = rc.simulate(rc.JSW(3), rc.Poisson(2.0, E(1.0)), steps=2**16, rng=2)
    with pytest.raises(ValueError, match="needs a run whose arrivals follow a clock"):
        plain.by_phase(4)


def _has_pandas():
    import importlib.util

    return importlib.util.find_spec("pandas") is not None


def test_stability_is_decided_on_the_average_load():
    # the rate passes 1.5 a server at its peak, but the average load is 0.75
    tv = rc.TimeVarying(sine(3.0, 2.0), period=DAY, service=E(2.0))
    rep = ly.check_stability(rc.JSW(2), tv)
    assert tv.offered_load == pytest.approx(1.5) and rep.verdict == "stable"
    over = rc.TimeVarying(sine(5.0, 2.0), period=DAY, service=E(2.0))  # load 1.25 a server
    assert ly.check_stability(rc.JSW(2), over).verdict == "unstable"
    lr = ly.loynes(rc.JSW(2), tv, 2**16, rng=1)
    assert lr.stabilised


def test_rates_are_checked_and_a_rate_above_its_bound_is_refused():
    with pytest.raises(ValueError, match="finite rates >= 0"):
        rc.TimeVarying([1.0, -1.0], 2.0, E(1.0))
    with pytest.raises(ValueError, match="positive somewhere"):
        rc.TimeVarying([0.0, 0.0], 2.0, E(1.0))
    with pytest.raises(ValueError, match="period"):
        rc.TimeVarying([1.0], 0.0, E(1.0))
    with pytest.raises(ValueError, match="a table knows its bound"):
        rc.TimeVarying([1.0], 1.0, E(1.0), rate_max=2.0)
    with pytest.raises(ValueError, match=r"rate_max=0\.5 is below"):
        rc.TimeVarying(sine(1.0, 0.5), DAY, E(1.0), rate_max=0.5)

    h = DAY / 4096  # the grid a callable rate is bounded on: its points are (k + 1/2) h

    def spike(t):  # a peak between two points of the grid, met by about 10 candidates
        return 1.0 + 10.0 * (np.abs(t - 854 * h) < 1e-3)

    tv = rc.TimeVarying(spike, DAY, E(1.0))
    assert tv._bound == pytest.approx(1.05)  # the grid saw no spike
    with pytest.raises(ValueError, match=r"exceeds the bound 1\.05"):
        tv.sample(100_000, rng=1)
    assert "TimeVarying(rate=spike" in repr(tv) and len(repr(tv)) < 150


@pytest.mark.filterwarnings("ignore::recursions.SimulationWarning")  # a short run: no matter
def test_draws_do_not_depend_on_how_a_run_cuts_its_chunks():
    tv = rc.TimeVarying([1.0, 3.0, 0.0, 4.0], period=8.0, service=E(1.0))
    whole = tv.forward(np.random.SeedSequence(7)).next(10_000)
    stream = tv.forward(np.random.SeedSequence(7))
    parts = [stream.next(n) for n in (1, 999, 3, 4997, 4000)]
    for k in (0, 1):
        np.testing.assert_array_equal(np.concatenate([p[k] for p in parts]), whole[k])
    res = [rc.simulate(rc.JSW(3), tv, steps=20_000, rng=3, chunk=c).mean_wait.value
           for c in (1000, 777)]
    assert res[0] == res[1]


def _phases_of_arrivals(tv, seed, n, backward):
    if backward:
        stream = tv.backward(np.random.SeedSequence(seed))
        phase0 = tv.phase_of(stream._carries[0])
        _, tau = stream.window(n)  # ascending: tau[-1] is the gap to the customer at 0
        return np.mod(phase0 - np.cumsum(tau[::-1]), tv.cycle)
    stream = tv.forward(np.random.SeedSequence(seed))
    phase0 = tv.phase_of(stream.environment)
    _, tau = stream.next(n)
    return np.mod(phase0 + np.concatenate(([0.0], np.cumsum(tau[:-1]))), tv.cycle)


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_arrivals_forward_and_backward_follow_the_rate(backward):
    # a rate of 0 on the third quarter: no arrival may land there, either way in time
    tv = rc.TimeVarying([1.0, 3.0, 0.0, 4.0], period=8.0, service=E(1.0))
    n = 40_000
    counts = np.histogram(_phases_of_arrivals(tv, 5, n, backward), bins=4, range=(0, 8))[0]
    share = np.array([1.0, 3.0, 0.0, 4.0]) / 8.0
    assert counts[2] == 0
    for j in (0, 1, 3):
        assert abs(counts[j] - n * share[j]) < 4.5 * math.sqrt(n * share[j] * (1 - share[j]))


def test_the_first_customer_arrives_at_the_palm_phase():
    # customer 0's phase has density lambda(phi) / int lambda (an arrival is likelier where
    # the rate is high): its law, over many streams, is the rate's shape
    tv = rc.TimeVarying([1.0, 3.0, 0.0, 4.0], period=8.0, service=E(1.0))
    n = 4_000
    phases = [tv.phase_of(tv.forward(np.random.SeedSequence(s)).environment) for s in range(n)]
    counts = np.histogram(phases, bins=4, range=(0, 8))[0]
    share = np.array([1.0, 3.0, 0.0, 4.0]) / 8.0
    assert counts[2] == 0
    for j in (0, 1, 3):
        assert abs(counts[j] - n * share[j]) < 4.5 * math.sqrt(n * share[j] * (1 - share[j]))


def test_the_phases_engine_warns_as_the_others_do():
    over = rc.TimeVarying(sine(5.0, 2.0), period=DAY, service=E(2.0))  # load 1.25 a server
    with pytest.warns(rc.SimulationWarning, match=r"rho = .* >= 1"):
        res = rc.simulate(rc.JSW(2), over, steps=2**12, rng=1)
    assert res.engine == "phases"
