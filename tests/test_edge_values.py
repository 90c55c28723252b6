"""Edge values (issue 25): loads at 1 to the last bit, extreme time scales, huge counts.

Each reproduction of the issue is kept as a regression test; the last test fuzzes the public
API with edge values and asserts that every outcome is a result or an error naming a
parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coupling as cp
import loynes as ly
import recursions as rc
from coupling._perfect import CouplingNotReached
from loynes._checks import RESOLUTION_ULPS, near_one
from loynes._sequence import _checkpoint_spacing
from recursions.common import MAX_COUNT, SCALE_MAX, SCALE_MIN
from recursions.model._renewal_inputs import PoissonArrivals

E = rc.dists.Exponential
SMALL = {"steps": 256, "horizon": 256, "rng": 1}


# -- a load at 1 to the last bit ----------------------------------------------------------
def test_a_load_just_below_one_is_not_unstable():
    # issue 25: load 1 - 1e-12 was taken as exactly 1 and called UNSTABLE, error 0
    rep = ly.check_stability(rc.JSW(1), rc.Poisson(1 - 1e-12, E(1)), **SMALL)
    assert rep.decided_by.name != "condition-3-fails"
    assert rep.verdict == "stable" and rep.decided_by.name == "condition-3"


@pytest.mark.parametrize("rate", [np.nextafter(1.0, 0.0), np.nextafter(1.0, 2.0),
                                  1 - 8 * 2.0**-52, 1 + 8 * 2.0**-52])
def test_a_load_within_rounding_of_one_is_undecided(rate):
    rep = ly.check_stability(rc.JSW(1), rc.Poisson(float(rate), E(1)), **SMALL)
    assert rep.verdict == "undecided"
    assert "within floating-point resolution of 1" in rep.reason
    assert rep.decided_by.error != 0.0  # no exact verdict
    assert rep.conditions[0].holds is None


@pytest.mark.parametrize(("rate", "why"), [(1.0, "load exactly 1"), (1 + 1e-12, "(3) fails"),
                                           (2.0, "(3) fails")])
def test_a_load_computed_as_at_least_one_stays_unstable(rate, why):
    rep = ly.check_stability(rc.JSW(1), rc.Poisson(rate, E(1)), **SMALL)
    assert rep.verdict == "unstable" and rep.decided_by.name == "condition-3-fails"
    assert why in rep.reason


def test_load_one_with_deterministic_input_decides_nothing():
    inp = rc.Periodic(sigma=[1.0, 1.0], tau=[1.0, 1.0], phase=0)
    rep = ly.check_stability(rc.JSW(1), inp, **SMALL)
    assert rep.verdict == "undecided" and "load exactly 1" in rep.reason


def test_near_one_counts_roundings():
    eps = 2.0**-52
    assert near_one(1 - eps) and near_one(1 + RESOLUTION_ULPS * eps)
    assert not near_one(1.0) and not near_one(1 + 2 * RESOLUTION_ULPS * eps)
    assert not near_one(1 - 1e-12) and near_one(1 - 1e-14, ulps=100)


# -- time scales --------------------------------------------------------------------------
def test_laws_refuse_scales_beyond_float64_with_the_parameter_named():
    with pytest.raises(ValueError, match=r"rate \(mean 1 / rate\)"):
        E(2e300)
    with pytest.raises(ValueError, match="rate"):
        E(1e-300)
    with pytest.raises(ValueError, match=r"set by mean"):
        E(mean=1e-300)
    with pytest.raises(ValueError, match="value"):
        rc.dists.Deterministic(1e200)
    with pytest.raises(ValueError, match="rates"):
        rc.dists.HyperExponential((0.5, 0.5), (1e-300, 1.0))
    with pytest.raises(ValueError, match="values"):
        rc.dists.Empirical([0.0, 1e300], [1.0, 1e-250])
    with pytest.raises(ValueError, match="shape"):
        rc.dists.Lomax(1e300, mean=1.0)


def test_poisson_names_its_rate():
    # issue 25: Poisson(rate=5e-324) reported an Exponential's infinite mean
    with pytest.raises(ValueError, match=r"^rate must be a finite number in \[1e-100, 1e\+100\]"):
        rc.Poisson(rate=5e-324, service=E(1))
    with pytest.raises(ValueError, match="work_scale"):
        PoissonArrivals(1.0, work_scale=1e-300)
    with pytest.raises(ValueError, match="tau must hold times"):
        rc.Periodic(sigma=[1.0], tau=[1e-300])


@pytest.mark.parametrize("law", [E(mean=SCALE_MAX), E(mean=SCALE_MIN),
                                 rc.dists.Lomax(1e100, mean=1e100),
                                 rc.dists.LogNormal(mean=1e100, scv=1e300),
                                 rc.dists.Erlang(3, mean=1e-100)])
def test_laws_at_the_scale_limits_have_finite_summaries(law):
    repr(law)
    assert math.isfinite(law.mean) and law.var >= 0 and law.scv >= 0


@pytest.mark.parametrize("scale", [SCALE_MIN, SCALE_MAX])
def test_systems_in_extreme_time_units_run_and_keep_their_results(scale):
    # issue 25: stable systems in very large or small time units lost simulate's result
    inp = rc.Poisson(1 / scale, E(mean=scale))
    res = rc.simulate(rc.JSW(2), inp, steps=2000, rng=1)
    assert 0 < res.mean_workload.value / scale < 10
    res = rc.simulate(rc.JSW(3), rc.Renewal(rc.dists.Lomax(2.5, mean=scale),
                                            rc.dists.LogNormal(mean=scale, scv=2.0)),
                      steps=2000, rng=1)
    assert 0 < res.mean_workload.value / scale < 10
    assert ly.check_stability(rc.JSW(2), inp, **SMALL).verdict == "stable"
    assert ly.check_stability(rc.JpSW(3, 1), inp, **SMALL).verdict == "stable"
    assert ly.loynes(rc.JSW(2), inp, 2**10, rng=1).stabilised


def test_perfect_sample_in_large_time_units():
    inp = rc.Poisson(1 / SCALE_MAX, E(mean=SCALE_MAX))
    ps = cp.perfect_sample(rc.JSW(2), inp, 4, rng=1)
    assert np.all(np.isfinite(ps.samples)) and ps.samples.max() / SCALE_MAX < 100


# -- counts and memory --------------------------------------------------------------------
def test_counts_above_two_to_the_53_are_refused_at_once():
    inp = rc.Poisson(1.0, E(2.0))  # refused before any work (a hang would stop the suite)
    with pytest.raises(ValueError, match=r"warmup must be an integer in \[0, 2\*\*53\]"):
        rc.simulate(rc.JSW(1), inp, steps=10, warmup=2**63)  # issue 25: ran forever
    with pytest.raises(ValueError, match=r"steps must be an integer in \[1, 2\*\*53\]"):
        rc.simulate(rc.JSW(1), inp, steps=MAX_COUNT + 1)
    with pytest.raises(ValueError, match=r"^time must be at most 2\*\*53"):
        rc.simulate(rc.JSW(1), inp, time=1e300)
    with pytest.raises(ValueError, match="horizon"):
        ly.loynes(rc.JSW(1), inp, 2**60)
    with pytest.raises(ValueError, match="steps"):
        ly.check_stability(rc.JSW(1), inp, steps=2**60)
    with pytest.raises(ValueError, match="horizon"):
        ly.check_stability(rc.JSW(1), inp, horizon=2**60)
    with pytest.raises(ValueError, match="cap_customers"):
        cp.perfect_sample(rc.Loss(1), rc.Renewal(E(1.0), rc.dists.Uniform(0.0, 1.0)), 1,
                          cap_customers=2**60)
    with pytest.raises(ValueError, match="n must be"):
        inp.sample(2**60)


def test_user_scaled_allocations_are_checked_before_they_are_made():
    inp = rc.Poisson(1.0, E(2.0))
    with pytest.raises(MemoryError, match="horizon=1099511627776"):
        ly.loynes(rc.JSW(2), inp, 2**40)
    with pytest.raises(MemoryError, match="servers"):
        ly.loynes(rc.JSW(10**10), inp, 4)
    with pytest.raises(MemoryError, match="size"):
        cp.perfect_sample(rc.JSW(2), inp, 10**13)
    with pytest.raises(MemoryError, match=r"record=True over steps=1099511627776"):
        rc.simulate(rc.JSW(2), inp, steps=2**40, record=True)
    with pytest.raises(MemoryError, match="batches=1099511627776"):
        rc.simulate(rc.JSW(2), inp, steps=2**41, batches=2**40)
    with pytest.raises(MemoryError, match="chunk"):
        rc.simulate(rc.JSW(2), inp, steps=8, chunk=2**45)
    with pytest.raises(MemoryError, match="steps=1099511627776"):
        ly.check_stability(rc.JSW(2), inp, steps=2**40)
    with pytest.raises(MemoryError, match="steps"):
        ly.renovation_probability(inp, 2**40)
    with pytest.raises(MemoryError, match="n=1099511627776"):
        inp.sample(2**40)


def test_checkpoint_spacing_ends_for_more_than_two_to_the_20_servers():
    assert _checkpoint_spacing(2**10, 2**21) > 2**10  # looped forever before
    assert _checkpoint_spacing(2**24, 4) == 128  # unchanged for the usual sizes


# -- fuzz ---------------------------------------------------------------------------------
EDGE_INTS = [-1, 0, 1, 2, 3, 4, 8, 16, 2**53 + 1, 2**63, 10**30]
EDGE_FLOATS = [0.0, -1.0, math.nan, math.inf, 5e-324, 1e-300, 1e-100, 0.5, 1.0,
               1 - 1e-16, 1 + 1e-16, 1e100, 1e300, 1.7e308]
JUNK = [None, True, "4", 2.5, [1, 2]]
counts = st.one_of(st.sampled_from(EDGE_INTS), st.integers(-3, 40), st.sampled_from(JUNK))
reals = st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(1e-3, 1e3),
                  st.sampled_from(EDGE_INTS), st.sampled_from(JUNK))

LAWS = {
    "Exponential": lambda d: E(d["rate"]),
    "Erlang": lambda d: rc.dists.Erlang(d["k"], d["rate"]),
    "Deterministic": lambda d: rc.dists.Deterministic(d["value"]),
    "Uniform": lambda d: rc.dists.Uniform(d["low"], d["high"]),
    "LogNormal": lambda d: rc.dists.LogNormal(d["mean"], d["scv"]),
    "Lomax": lambda d: rc.dists.Lomax(d["shape"], d["scale"]),
    "HyperExponential": lambda d: rc.dists.HyperExponential((0.5, 0.5), (d["rate"], d["mean"])),
}
LAW_ARGS = {"Exponential": ["rate"], "Erlang": ["k", "rate"], "Deterministic": ["value"],
            "Uniform": ["low", "high"], "LogNormal": ["mean", "scv"],
            "Lomax": ["shape", "scale"], "HyperExponential": ["rates", "rate", "mean"]}
SYSTEMS = {"JSW": lambda d: rc.JSW(d["servers"]), "JpSW": lambda d: rc.JpSW(d["servers"], d["p"]),
           "Loss": lambda d: rc.Loss(d["servers"]), "LeastOfD":
           lambda d: rc.LeastOfD(d["servers"], d["d"])}
SYSTEM_ARGS = {"JSW": ["servers"], "JpSW": ["servers", "p"], "Loss": ["servers"],
               "LeastOfD": ["servers", "d"]}
OK_ERRORS = (TypeError, ValueError, MemoryError)


def _named(exc: BaseException, names: list[str]) -> bool:
    return any(n in str(exc) for n in names)


def _call(f, names):
    """Run ``f``; an error must be a TypeError/ValueError/MemoryError naming one of ``names``."""
    try:
        return f()
    except OK_ERRORS as exc:
        assert _named(exc, names), (type(exc).__name__, str(exc), names)
        return None


law_kwargs = st.fixed_dictionaries({
    "rate": reals, "k": counts, "value": reals, "low": reals, "high": reals, "mean": reals,
    "scv": reals, "shape": reals, "scale": reals})
small_counts = st.one_of(st.sampled_from([-1, 0, 1, 2, 3, 4, 16, 2**53 + 1, 2**63]),
                         st.sampled_from(JUNK))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::recursions.SimulationWarning")
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(law=st.sampled_from(sorted(LAWS)), args=law_kwargs, sysname=st.sampled_from(sorted(SYSTEMS)),
       sysargs=st.fixed_dictionaries({"servers": st.sampled_from([-1, 0, 1, 2, 3, 10**30, 2.0,
                                                                   None]),
                                      "p": st.sampled_from([-1, 0, 1, 2, 5, None]),
                                      "d": st.sampled_from([0, 1, 2, 9, "2"])}),
       rate=reals, call=st.sampled_from(["simulate", "check", "loynes", "perfect", "renewal"]),
       n=small_counts, m=small_counts, reps=small_counts, alpha=reals)
def test_fuzz_public_api(law, args, sysname, sysargs, rate, call, n, m, reps, alpha):
    service = _call(lambda: LAWS[law](args), LAW_ARGS[law])
    if service is None:
        return
    repr(service)
    for attr in ("mean", "var", "scv"):
        getattr(service, attr)
    system = _call(lambda: SYSTEMS[sysname](sysargs), SYSTEM_ARGS[sysname])
    inp = _call(lambda: rc.Poisson(rate, service), ["rate"])
    if call == "renewal":
        inp = _call(lambda: rc.Renewal(service, E(1.0)), ["interarrival", "service"])
    if system is None or inp is None:
        return
    repr(inp)
    # tiny budgets where valid, so that the examples stay fast
    steps = n if not isinstance(n, int) or isinstance(n, bool) or not 0 < n <= 64 else 16 * n
    horizon = m if not isinstance(m, int) or isinstance(m, bool) or not 0 < m <= 64 else 16 * m
    if call in ("simulate", "renewal"):
        res = _call(lambda: rc.simulate(system, inp, steps=steps, warmup=horizon, rng=1,
                                        replications=reps if reps != 2**63 else 2),
                    ["steps", "warmup", "replications", "batches", "input", "service",
                     "offered load", "servers", "MemoryError"])
        if res is not None:
            assert res.mean_workload is None or not math.isnan(res.mean_workload.value) or \
                steps < 2
    elif call == "check":
        _call(lambda: ly.check_stability(system, inp, steps=steps, horizon=horizon,
                                         replications=reps, alpha=alpha, rng=1),
              ["steps", "horizon", "replications", "alpha", "input", "servers"])
    elif call == "loynes":
        _call(lambda: ly.loynes(system, inp, horizon, rng=1), ["horizon", "servers", "map"])
    else:
        try:
            _call(lambda: cp.perfect_sample(system, inp, n if n != 2**63 else 1, rng=1,
                                            cap_customers=2**12 if system.has_loss else None),
                  ["size", "stable", "exact", "servers", "cap_", "method", "renewal"])
        except CouplingNotReached:  # a documented budget error: the cap was reached
            pass
