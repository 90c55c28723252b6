"""mean_response on every engine, against closed forms; statistics refused before any stage."""

from __future__ import annotations

import time

import numba
import pytest

import recursions as rc

E = rc.dists.Exponential

# M/M/1 at load 1/2: E[T] = 1 / (mu - lambda) = 2, whatever the policy with one server
ONE_SERVER = [rc.JSW(1), rc.JIQ(1), rc.LeastOfD(1, 1), rc.PowerOfD(1, 1), rc.JSQ(1)]


def _closes_on(res, name, exact, confidence=0.999):
    """The interval of ``name`` (run until precise, so trusted) holds ``exact``."""
    iv = res.interval(name, confidence)
    assert iv.trusted, iv.reason
    return iv.lower <= exact <= iv.upper


@pytest.mark.parametrize("system", ONE_SERVER, ids=repr)
def test_mean_response_of_mm1_on_every_policy(system):
    res = rc.simulate(system, rc.Poisson(0.5, E(1.0)), precision=0.02,
                      statistics=("mean_wait", "mean_response"), rng=3)
    assert res.precision.reached
    assert _closes_on(res, "mean_response", 2.0) and _closes_on(res, "mean_wait", 1.0)


def test_mean_response_of_mm2_erlang_c():
    # M/M/2 at a = 1: P(wait) = 1/3, E[W] = C / (2 mu - lambda) = 1/3, E[T] = 4/3
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), precision=0.02,
                      statistics=("mean_response",), rng=5)
    assert _closes_on(res, "mean_response", 4 / 3)


def test_loss_system_reports_the_response_of_the_customers_served():
    # Erlang loss: a served customer never waits, and its service is independent of whether
    # it was admitted, so its mean response is E[sigma]
    res = rc.simulate(rc.Loss(2), rc.Poisson(2.0, rc.dists.Uniform(0.5, 1.5)), precision=0.01,
                      statistics=("p_loss", "mean_response"), rng=2)
    assert res.p_loss.value > 0.1 and res.mean_wait is None
    assert _closes_on(res, "mean_response", 1.0)


@numba.njit
def _half_speed(w, sigma, tau, u, params):
    found = w[0]
    w[0] += 2.0 * sigma  # servers at half speed: a job takes twice its size
    for i in range(w.size):
        w[i] = max(w[i] - tau, 0.0)
    w.sort()
    return found


def test_a_response_is_refused_where_it_is_not_the_wait_plus_the_service():
    m = rc.Map(_half_speed, 2, capacity=1.0, name="half")
    assert "mean_response" not in m.estimates
    assert "mean_response" in rc.Map(_half_speed, 2, name="unit").estimates
    t0 = time.process_time()
    with pytest.raises(ValueError, match="unit speed, capacity 1 for 2 servers"):
        rc.simulate(m, rc.Poisson(0.2, E(1.0)), steps=1_000, statistics=("mean_response",))
    assert time.process_time() - t0 < 2.0  # before any stage compiles or runs


def test_a_target_per_statistic_each_relative_or_absolute():
    targets = {"p_wait": rc.absolute(0.01), "mean_response": rc.relative(0.03)}
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), precision=targets, rng=7)
    rep = res.precision
    assert rep.reached and rep.relative == {"p_wait": False, "mean_response": True}
    assert rep.target == {"p_wait": 0.01, "mean_response": 0.03}
    assert rep.intervals["p_wait"].half_width <= 0.01
    assert rep.intervals["mean_response"].half_width <= 0.03 * res.mean_response.value
    # an absolute 0.01 on P(wait) ~ 1/3 is a 3% relative target: the two are different asks
    assert rep.intervals["p_wait"].half_width > 0.01 * res.p_wait.value
    assert _closes_on(res, "p_wait", 1 / 3) and _closes_on(res, "mean_response", 4 / 3)
    assert "(target 0.03 relative)" in str(rep) and "(target 0.01)" in str(rep)
    # a plain number follows relative=
    res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), precision={"p_wait": 0.01},
                      relative=False, rng=7)
    assert res.precision.relative == {"p_wait": False}


@pytest.mark.parametrize("system, precision, missing", [
    (rc.JSW(3), {"p_loss": 0.1}, "p_loss"),
    (rc.JSQ(3), {"p_block": rc.absolute(0.01)}, "p_block"),
    (rc.Loss(2), {"mean_wait": 0.1}, "mean_wait"),
], ids=["jsw-p_loss", "jsq-p_block", "loss-mean_wait"])
def test_a_target_the_system_does_not_estimate_is_refused_before_any_stage(system, precision,
                                                                            missing):
    t0 = time.process_time()
    with pytest.raises(ValueError, match=f"has no estimate of {missing}; it estimates"):
        rc.simulate(system, rc.Poisson(1.0, E(1.0)), precision=precision, rng=1)
    assert time.process_time() - t0 < 1.0


def test_bad_half_widths_are_refused():
    for bad in (0, -1.0, float("nan"), float("inf"), "a", True):
        with pytest.raises(ValueError, match="finite half-width > 0"):
            rc.relative(bad)
    with pytest.raises(ValueError, match="got -2 for p_wait"):
        rc.simulate(rc.JSW(1), rc.Poisson(0.5, E(1.0)), precision={"p_wait": -2})
    with pytest.raises(TypeError, match="name must be a str"):
        rc.simulate(rc.JSW(1), rc.Poisson(0.5, E(1.0)), precision={1: 0.1})
    with pytest.raises(ValueError, match="at least one statistic"):
        rc.simulate(rc.JSW(1), rc.Poisson(0.5, E(1.0)), precision={})
