"""simulate is honest about estimates it cannot vouch for: SimulationWarning and clear errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import coupling as cp
import recursions as rc
from coupling._times import coupling_time
from recursions.engines.zerowait import JSQ, simulate_queues
from recursions.inference.diagnostics import batch_check
from recursions.model._renewal_inputs import PoissonArrivals, RenewalArrivals

EXP = rc.dists.Exponential(1.0)


def mm(servers: int, load: float) -> rc.Poisson:
    return rc.Poisson(load * servers, EXP)


def quiet_run(*args, **kwargs) -> rc.SimulationResult:
    """simulate with every SimulationWarning turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", rc.SimulationWarning)
        return rc.simulate(*args, **kwargs)


# -- the warning class --------------------------------------------------------------------------
def test_simulation_warning_is_a_runtime_warning_at_the_top_level():
    assert issubclass(rc.SimulationWarning, RuntimeWarning)
    assert rc.SimulationWarning is rc.diagnostics.SimulationWarning
    assert "SimulationWarning" in rc.__all__
    assert rc.SimulationWarning.__doc__


def test_warning_points_at_the_caller():
    with pytest.warns(rc.SimulationWarning) as rec:
        rc.simulate(rc.JSW(2), mm(2, 1.5), steps=1000, rng=1)
    assert rec[0].filename == __file__


# -- (3): load at least 1 --------------------------------------------------------------------
def test_unstable_load_warns_with_rho():
    with pytest.warns(rc.SimulationWarning,
                      match=r"rho = E\[sigma\] / \(S E\[tau\]\) = 1\.5 >= 1.*no stationary "
                            r"regime.*transient"):
        res = rc.simulate(rc.JSW(2), mm(2, 1.5), steps=10**5, rng=1)
    assert res.mean_wait.value > 100  # the numbers that used to come back silently


@pytest.mark.parametrize("system", [rc.JpSW(3, 1), rc.RandomRouting(3), rc.JIQ(3),
                                    rc.LeastOfD(3, 2), rc.SplitBound(3, 1),
                                    rc.Envelope(rc.JpSW(3, 1))], ids=repr)
def test_load_warning_for_every_system_that_keeps_its_work(system):
    with pytest.warns(rc.SimulationWarning, match="condition \\(3\\) fails"):
        rc.simulate(system, mm(3, 1.0), steps=2000, rng=1)


def test_load_warning_on_the_heap_engine():
    with pytest.warns(rc.SimulationWarning, match="condition \\(3\\) fails"):
        res = rc.simulate(rc.JSW(40), mm(40, 1.2), steps=20_000, rng=1)
    assert res.engine == "heap"


def test_one_warning_for_one_problem():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rc.SimulationWarning)
        rc.simulate(rc.JSW(2), mm(2, 1.5), steps=10**5, rng=1)
    assert len(caught) == 1  # the load warning; the drift it causes is not repeated


def test_loss_system_at_high_load_does_not_warn():
    res = quiet_run(rc.Loss(2), mm(2, 5.0), steps=10**5, warmup=1000, rng=1)
    assert 0.5 < res.p_loss.value < 1


def test_redundancy_is_exempt_from_the_load_condition():
    # (2, 1) with balanced H2 sizes (scv 4): stable up to about 1.31 jobs per server per unit
    # time, so 1.1 is stable although lambda E[xi] = 1.1 >= 1
    s = rc.Redundancy(20, [rc.JobClass(2, 1, rc.dists.HyperExponential.balanced(1.0, 4.0))])
    res = quiet_run(s, s.poisson(1.1 * 20), steps=200_000, warmup=20_000, rng=1)
    assert 0 < res.busy_fraction.value < 1


def test_buffered_queue_lengths_do_not_warn():
    res = quiet_run(JSQ(20, buffer=2), mm(20, 1.2), steps=10**5, warmup=10**4, rng=1)
    assert res.p_block.value > 0


# -- drift seen in the run ---------------------------------------------------------------------
def test_jpsw_beyond_its_threshold_trends_upward():
    # load 0.9 < 1, but a = 1.8 > 1.618 (a B(1, a) >= 1): the workload grows linearly
    with pytest.warns(rc.SimulationWarning, match="trend upward.*warm-up.*unstable"):
        res = rc.simulate(rc.JpSW(2, 1), rc.Poisson(1.8, EXP), steps=10**5, rng=1)
    assert res.batch_check.trend and res.batch_check.slope > 0


def test_jpsw_below_its_threshold_is_quiet():
    res = quiet_run(rc.JpSW(2, 1), rc.Poisson(1.2, EXP), steps=10**5, warmup=10**4, rng=1)
    assert not res.batch_check.trend and not res.batch_check.correlated


def test_transient_from_a_loaded_state_trends_downward():
    # the servers drain 2 units of work per unit time and get 1: the run is all transient
    with pytest.warns(rc.SimulationWarning, match="trend downward.*warm-up"):
        rc.simulate(rc.JSW(2), mm(2, 0.5), steps=10_000, w0=[5000.0, 10_000.0], rng=1)
    # the same start with a warm-up past the transient is quiet
    quiet_run(rc.JSW(2), mm(2, 0.5), steps=10_000, warmup=30_000, w0=[5000.0, 10_000.0],
              rng=1)


def test_drift_on_the_heap_engine():
    w0 = np.full(40, 200.0)
    with pytest.warns(rc.SimulationWarning, match="trend downward"):
        res = rc.simulate(rc.JSW(40), mm(40, 0.8), steps=40_000, w0=w0, rng=1)
    assert res.engine == "heap"
    # unstable redundancy ((2, 2) exponential: critical rate 0.5 per server) on the heap
    s = rc.Redundancy(40, [rc.JobClass(2, 2, EXP)])
    with pytest.warns(rc.SimulationWarning, match="trend upward"):
        res = rc.simulate(s, s.poisson(0.6 * 40), steps=100_000, rng=1)
    assert res.engine == "heap"


def test_drift_in_time_mode():
    with pytest.warns(rc.SimulationWarning, match="trend downward"):
        rc.simulate(rc.JSW(40), mm(40, 0.8), time=1000.0, w0=np.full(40, 200.0), rng=1)


def test_drift_on_the_queue_length_engines():
    # buffers of 5 at load 1.5, from empty: the first half of the run fills them up
    for engine in ("counts", "queues"):
        with pytest.warns(rc.SimulationWarning, match="number of jobs trend upward"):
            res = simulate_queues(JSQ(100, buffer=5), mm(100, 1.5), steps=3000, rng=1,
                                  engine=engine)
        assert res.batch_check.trend
        # after a warm-up no trend; 30 arrivals a server still warn that the run is short
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            quiet = simulate_queues(JSQ(100, buffer=5), mm(100, 1.5), steps=3000,
                                    warmup=10**4, rng=1, engine=engine)
        assert not quiet.batch_check.trend
        (msg,) = [str(w.message) for w in got]
        assert "short for its number of servers" in msg and "trend" not in msg


def test_correlated_batches_warn():
    # 32 batches of 6 arrivals at load 0.9: far shorter than the correlation time
    with pytest.warns(rc.SimulationWarning, match="strongly correlated.*Run longer"):
        res = rc.simulate(rc.JSW(1), mm(1, 0.9), steps=200, warmup=1000, rng=2)
    assert res.batch_check.correlated and not res.batch_check.trend


def test_long_stable_runs_do_not_warn():
    for system, inp, kw in [
        (rc.JSW(1), mm(1, 0.5), dict(steps=10**5, warmup=1000)),
        (rc.JSW(1), mm(1, 0.9), dict(steps=2 * 10**5, warmup=10**4)),
        (rc.JSW(10), mm(10, 0.9), dict(steps=10**5, warmup=10**4, replications=4)),
        (rc.JSW(40), mm(40, 0.9), dict(steps=10**5, warmup=10**4)),  # heap engine
        (rc.JIQ(100), mm(100, 0.8), dict(time=2000.0)),  # heap engine, time mode
    ]:
        res = quiet_run(system, inp, rng=5, **kw)
        assert res.batch_check is not None and not res.batch_check.trend
    with warnings.catch_warnings():
        warnings.simplefilter("error", rc.SimulationWarning)
        simulate_queues(JSQ(50, buffer=3), mm(50, 0.9), time=2000.0, rng=5)


def test_batch_check_statistics():
    rng = np.random.default_rng(4)
    ones = np.ones((4, 32))
    flat = batch_check(rng.normal(3.0, 1.0, (4, 32)), ones)
    assert not flat.trend and not flat.correlated and flat.replications == 4
    assert flat.lag1_limit == pytest.approx(max(-1 / 32 + 4 / np.sqrt(32 * 4), 0.3))
    ramp = batch_check(np.arange(32.0) * 0.5 + rng.normal(0.0, 1.0, (4, 32)), ones)
    assert ramp.trend and ramp.slope == pytest.approx(0.5, abs=0.05)
    # AR(1) with coefficient 0.9: correlated, no trend
    x = np.zeros((8, 32))
    for b in range(1, 32):
        x[:, b] = 0.9 * x[:, b - 1] + rng.normal(0.0, 1.0, 8)
    ar = batch_check(x + 10.0, np.ones((8, 32)))
    assert ar.correlated and ar.message() is not None
    # batches without weight are left out; constant means, or too few batches: nothing to say
    den = ones[:1].copy()
    den[0, ::2] = 0.0
    assert batch_check(rng.normal(size=(1, 32)), den).batches == 16
    assert batch_check(np.full((1, 32), 2.0), ones[:1]) is None
    assert batch_check(np.ones((1, 2)), np.ones((1, 2))) is None


# -- too few snapshots -------------------------------------------------------------------------
def test_heap_engine_refuses_fewer_than_two_snapshots():
    with pytest.raises(ValueError, match=r"profile_every = servers = 1000 by default\), so "
                                         r"steps=500 gives 1 sample.*pass steps > 1000.*"
                                         r"profile_every="):
        rc.simulate(rc.JSW(1000), mm(1000, 0.5), steps=500, rng=1)
    with pytest.raises(ValueError, match="steps=1000 gives 1 sample"):
        rc.simulate(rc.JSW(1000), mm(1000, 0.5), steps=1000, rng=1)
    with pytest.raises(ValueError, match="profile_every=64"):
        rc.simulate(rc.JSW(100), mm(100, 0.5), steps=64, rng=1, profile_every=64,
                    batches=4)
    # what the message suggests works
    res = rc.simulate(rc.JSW(1000), mm(1000, 0.5), steps=500, warmup=10_000, rng=1,
                      profile_every=15, batches=4)
    assert 0.4 < res.busy_fraction.value < 0.6 and np.isfinite(res.busy_fraction.se)


def test_heap_engine_time_mode_refuses_fewer_than_two_snapshots():
    with pytest.raises(ValueError, match=r"time=0\.5 gives [01] sample.*pass a time= long "
                                         r"enough.*profile_every=7\)"):
        rc.simulate(rc.JSW(1000), mm(1000, 0.5), time=0.5, rng=1)
    # 250 arrivals expected: what the message suggests works
    res = rc.simulate(rc.JSW(1000), mm(1000, 0.5), time=0.5, rng=1, profile_every=7, batches=4,
                      w0=np.where(np.arange(1000) < 500, 1.0, 0.0))
    assert 0 < res.busy_fraction.value < 1


def test_dense_engine_profile_from_fewer_than_two_snapshots():
    res = rc.simulate(rc.JSW(20), mm(20, 0.5), steps=20, batches=4, rng=1, engine="dense")
    assert np.isfinite(res.busy_fraction.value)  # every arrival counts for the scalars
    with pytest.raises(ValueError, match=r"1 snapshot.*profile_every"):
        res.profile(0.5)
    with pytest.raises(ValueError, match=r"steps=20 gives 1 sample.*profile_every"):
        rc.simulate(rc.JSW(20), mm(20, 0.5), steps=20, batches=4, rng=1, engine="dense",
                    reference=lambda w: np.zeros_like(w), warmup=100)


# -- reference profile without warm-up -----------------------------------------------------------
def exp_profile(w):
    return 0.5 * np.exp(-0.5 * np.asarray(w))  # M/M/1 at 0.5: P(W > w) = rho e^{-(1-rho) w}


def test_reference_without_warmup_warns():
    with pytest.warns(rc.SimulationWarning, match="sup_error includes the transient.*warmup="):
        res = rc.simulate(rc.JSW(1), mm(1, 0.5), steps=10**5, rng=1, reference=exp_profile)
    assert res.sup_error is not None
    res = quiet_run(rc.JSW(1), mm(1, 0.5), steps=10**5, warmup=1000, rng=1,
                    reference=exp_profile)
    assert res.sup_error.value < 0.02
    quiet_run(rc.JSW(1), mm(1, 0.5), steps=10**5, w0=[1.0], rng=1, reference=exp_profile)


# -- redundancy takes arrivals only ------------------------------------------------------------
RED = rc.Redundancy(40, [rc.JobClass(2, 1, rc.dists.Uniform(0.0, 2.0))])
FULL = rc.Poisson(0.3 * 40, EXP)


@pytest.mark.parametrize("engine", ["dense", "heap"])
def test_redundancy_refuses_an_input_with_service_times(engine):
    with pytest.raises(ValueError, match=r"service times of Poisson.*would be ignored: use "
                                         r"system\.poisson\(rate\)"):
        rc.simulate(RED, FULL, steps=1000, rng=1, engine=engine)


@pytest.mark.parametrize("make", [
    lambda: rc.BackwardDraws(RED, FULL, rng=1),
    lambda: coupling_time(RED, FULL, np.zeros(40), np.ones(40)),
    lambda: cp.perfect_sample(RED, FULL, 1, upper=np.full(40, 10.0)),
    lambda: rc.simulate(RED, rc.Periodic(sigma=[1.0], tau=[0.1]), steps=100),
], ids=["BackwardDraws", "coupling_time", "perfect_sample", "simulate-periodic"])
def test_everything_that_runs_redundancy_refuses_other_inputs(make):
    with pytest.raises(ValueError, match=r"system\.poisson\(rate\)"):
        make()


def test_redundancy_arrival_inputs():
    p = RED.poisson(12.0)
    assert isinstance(p, PoissonArrivals) and isinstance(p, rc.Poisson) and p.arrivals_only
    assert p.rate == 12.0 and p.mean_service == pytest.approx(RED.mean_component)
    r = RED.renewal(rc.dists.Deterministic(1 / 12))
    assert isinstance(r, RenewalArrivals) and r.arrivals_only
    RED.check_input(p)
    RED.check_input(r)
    res = quiet_run(RED, r, steps=100_000, warmup=10_000, rng=1, profile_every=1)
    ref = quiet_run(RED, p, steps=100_000, warmup=10_000, rng=1, profile_every=1)
    # deterministic arrivals queue less than Poisson ones at the same rate
    assert res.mean_response.value < ref.mean_response.value
    with pytest.raises(TypeError, match="recursions input"):
        RED.check_input("poisson")


def test_other_systems_refuse_arrivals_only_inputs():
    for system in (rc.JSW(40), rc.Loss(3)):
        with pytest.raises(ValueError, match=r"carries arrivals only.*rc\.Poisson"):
            rc.simulate(system, RED.poisson(3.0), steps=1000, rng=1)
    with pytest.raises(ValueError, match="carries arrivals only"):
        rc.BackwardDraws(rc.JSW(2), RED.poisson(1.0))
    with pytest.raises(ValueError, match="carries arrivals only"):
        simulate_queues(JSQ(40, buffer=2), RED.poisson(3.0), steps=1000, rng=1)
    with pytest.raises(ValueError, match="carries arrivals only"):
        cp.perfect_sample(rc.JSW(2), RED.poisson(1.0), 1)
    rc.JSW(2).check_input(FULL)  # any input with service times


def test_heap_engine_checks_what_customers_found():
    # 1000 arrivals on 100 servers: the workload is sampled at about 10 snapshots, too few for
    # its check, while the waits have a value in every batch (0 / 200 runs warned before)
    with pytest.warns(rc.SimulationWarning, match="workload found at the joined server"):
        res = rc.simulate(rc.JSW(100), mm(100, 0.9), steps=1000, warmup=5000, rng=0)
    assert res.batch_check.quantity == "workload found at the joined server"
