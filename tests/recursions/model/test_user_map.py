"""rc.Map: a user's step function as a first-class system.

The built-in kernels, passed through the user's door (``rc.Map(rc.maps.jsw, ...)``), and a
JSW written here from the public helpers of :mod:`recursions.vectors` must give the numbers
of the built-in systems bit for bit, everywhere a system is taken. Bad steps are refused by
the contract check with the map's name; the compiled drivers are cached on disk by a hash.

Every distinct step costs about 2 s of compilation the first time (then numba's cache):
the maps below are built once and shared by the tests.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coupling as cp
import loynes as ly
import recursions as rc
from coupling.strategies import sorted_workloads, times, uniforms
from loynes._families import family_of
from recursions.engines._driver_compiler import _cache_key, compiled_drivers, drivers_of
from recursions.vectors import add_at_rank, drain, random_rank

E = rc.dists.Exponential


# -- steps written here, at module level (so their drivers are cached on disk) ------------
@numba.njit
def scratch_jsw(w, sigma, tau, u, params):
    """JSW from the public helpers: join rank 0, restore the order, drain."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


@numba.njit
def two_speed(w, sigma, tau, u, params):
    """Servers 0-1 work at speed 1, servers 2-3 at speed 2 (blocks [2, 2], each sorted).

    A customer joins the block whose least loaded server starts it first (``w[0]`` time
    units against ``w[2] / 2``); block 2 drains at twice the rate.
    """
    if w[0] <= 0.5 * w[2]:
        found = add_at_rank(w, 0, 2, 0, sigma)
    else:
        found = add_at_rank(w, 2, 4, 2, sigma)
    for i in range(4):
        v = w[i] - (tau if i < 2 else 2.0 * tau)
        w[i] = v if v > 0.0 else 0.0
    return found


# steps that break the contract (only the step itself is compiled: the check runs first)
@numba.njit
def undeclared_loss(w, sigma, tau, u, params):  # a loss system declared loss=False
    found = rc.LOST
    if w[0] == 0.0:
        found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


@numba.njit
def unsorted_step(w, sigma, tau, u, params):
    w[0] += sigma  # no re-sort
    drain(w, tau)
    return 0.0


@numba.njit
def negative_step(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, 0, sigma)
    for i in range(w.size):
        w[i] -= tau  # no positive part
    return found


@numba.njit
def infinite_step(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    if sigma > 1.0:
        w[w.size - 1] = np.inf
    return found


@numba.njit
def nan_step(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found if sigma < 1.0 else np.nan


@numba.njit
def reads_u0(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, random_rank(u[0], w.size), sigma)
    drain(w, tau)
    return found


@numba.njit
def reads_u1(w, sigma, tau, u, params):
    r = 0 if u[0] < 0.5 else random_rank(u[1], w.size)
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found


@numba.njit
def raising_step(w, sigma, tau, u, params):
    if sigma > 3.0:
        raise ValueError("sigma too large for this step")
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


def py_unsorted(w, sigma, tau, u, params):
    """A plain Python step that breaks the contract (used by the check=False test only)."""
    w[0] += sigma
    return 0.0


PY_JSW = rc.maps.jsw.py_func  # the built-in JSW as a plain Python step (helpers compiled)


# -- user maps equal to built-ins, shared by the tests ------------------------------------
PAIRS = {
    "jsw": (rc.Map(rc.maps.jsw, servers=3), rc.JSW(3)),
    "jpsw": (rc.Map(rc.maps.jpsw, servers=3, params=[1.0]), rc.JpSW(3, 1)),
    "loss": (rc.Map(rc.maps.loss, servers=2, loss=True), rc.Loss(2)),
    "jiq": (rc.Map(rc.maps.jiq, servers=3, uniforms=1), rc.JIQ(3)),
    "random": (rc.Map(rc.maps.random_routing, servers=3, uniforms=1, monotone=True),
               rc.RandomRouting(3)),
    "lld": (rc.Map(rc.maps.least_of_d, servers=4, uniforms=1, params=[2.0], monotone=True),
            rc.LeastOfD(4, 2)),
    "scratch": (rc.Map(scratch_jsw, servers=3, monotone=True, name="scratch JSW"), rc.JSW(3)),
}
IDS = list(PAIRS)


def _input(system, load=0.7):
    return rc.Poisson(load * system.servers, E(1.0))


def _u(system, x):
    return [x] if system.uniforms else None


def _same(a, b):
    """Two estimates (or None) equal bit for bit, NaN standard errors included."""
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(np.asarray([a.value, a.se], dtype=float),
                          np.asarray([b.value, b.se], dtype=float), equal_nan=True)


STATS = ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "p_loss", "overflow_work",
         "p_all_busy")


def _assert_same_result(a, b):
    for name in STATS:
        assert _same(getattr(a, name), getattr(b, name)), name
    np.testing.assert_array_equal(a.grid, b.grid)
    pa, pb = a.profile(a.grid), b.profile(b.grid)
    np.testing.assert_array_equal(pa.value, pb.value)
    np.testing.assert_array_equal(pa.se, pb.se)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    if a.path is None or b.path is None:
        assert a.path is None and b.path is None
    else:
        np.testing.assert_array_equal(a.path, b.path)
    assert a.engine == b.engine == "dense"


def _simulate(system, inp, **kw):
    with warnings.catch_warnings():  # a short run may trip the batch check: same for both
        warnings.simplefilter("ignore", rc.SimulationWarning)
        return rc.simulate(system, inp, **kw)


# -- bit-identical to the built-ins ------------------------------------------------------
@pytest.mark.parametrize("options", ["plain", "full"])
@pytest.mark.parametrize("key", IDS)
def test_simulate_bit_identical(key, options):
    user, builtin = PAIRS[key]
    inp = _input(builtin)
    kw = dict(steps=3000, rng=11)
    if options == "full":
        w0 = np.sort(np.random.default_rng(2).exponential(1.0, builtin.servers))
        kw.update(w0=w0, record=True, replications=3, warmup=500, batches=8)
    a, b = _simulate(user, inp, **kw), _simulate(builtin, inp, **kw)
    _assert_same_result(a, b)
    assert (a.p_loss is not None) == builtin.has_loss
    assert a.system == repr(user) and repr(user).startswith("Map(")


def test_simulate_many_servers_runs_dense_and_matches_the_dense_builtin():
    # from 32 servers the built-in JSW goes to the heap engine; a Map has only the dense one
    user = rc.Map(rc.maps.jsw, servers=40)
    inp = rc.Poisson(36.0, E(1.0))
    a = _simulate(user, inp, steps=4000, rng=3)
    assert a.engine == "dense"
    assert _simulate(rc.JSW(40), inp, steps=4000, rng=3).engine == "heap"
    _assert_same_result(a, _simulate(rc.JSW(40), inp, steps=4000, rng=3, engine="dense"))


def test_simulate_with_progress_bar():
    pytest.importorskip("tqdm")
    user, builtin = PAIRS["jiq"]
    inp = _input(builtin)
    a = _simulate(user, inp, steps=2000, rng=4, progress=True, chunk=500)
    _assert_same_result(a, _simulate(builtin, inp, steps=2000, rng=4))


@pytest.mark.parametrize("key", IDS)
def test_iterate_and_backward_draws_bit_identical(key):
    user, builtin = PAIRS[key]
    inp = _input(builtin)
    du, db = rc.BackwardDraws(user, inp, rng=5), rc.BackwardDraws(builtin, inp, rng=5)
    w0 = np.sort(np.random.default_rng(0).exponential(2.0, builtin.servers))
    for n in (200, 9000):  # the serial kernel, then the parallel driver (>= 8192)
        wu, wb = du.window(n), db.window(n)
        for x, y in zip(wu, wb, strict=True):
            np.testing.assert_array_equal(x, y)
        sig, tau, u = wu
        got = rc.iterate(user, w0, sig, tau, u if user.uniforms else None)
        want = rc.iterate(builtin, w0, sig, tau, u if builtin.uniforms else None)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key", IDS)
def test_loynes_and_growth_rate_bit_identical(key):
    user, builtin = PAIRS[key]
    inp = _input(builtin)
    # the built-in JSW certifies its limit (a monotone FCFS map); a Map never claims FCFS,
    # so compare both on the plateau heuristic, and every horizon with stop=False
    for kw in (dict(certify=False), dict(certify=False, stop=False)):
        a = ly.loynes(user, inp, horizon=2**11, **kw)
        b = ly.loynes(builtin, inp, horizon=2**11, **kw)
        np.testing.assert_array_equal(a.horizons, b.horizons)
        np.testing.assert_array_equal(a.states, b.states)
        assert a.stabilised == b.stabilised and a.growth == b.growth
    ga = ly.growth_rate(user, inp, steps=2**10, replications=3, rng=6, start=1.0)
    gb = ly.growth_rate(builtin, inp, steps=2**10, replications=3, rng=6, start=1.0)
    assert _same(ga, gb)


@pytest.mark.parametrize("key", IDS)
@given(data=st.data(), sigma=times(), tau=times(), u=uniforms())
def test_step_equals_builtin(key, data, sigma, tau, u):
    user, builtin = PAIRS[key]
    w = data.draw(sorted_workloads(builtin.servers))
    got = user.step(w, sigma, tau, _u(user, u))
    want = builtin.step(w, sigma, tau, _u(builtin, u))
    np.testing.assert_array_equal(got, want)
    fu = drivers_of(user).step_once(user.params, np.array(w, dtype=float),
                                    sigma, tau, np.array([u]))[1]
    fb = drivers_of(builtin).step_once(builtin.params,
                                       np.array(w, dtype=float), sigma, tau, np.array([u]))[1]
    assert fu == fb


def test_step_examples():
    user = PAIRS["jpsw"][0]
    assert user.step([0.001, 1.0, 2.0], sigma=5.0, tau=0.0).tolist() == [0.001, 2.0, 6.0]
    assert user.step([0.0, 1.0, 2.0], sigma=5.0, tau=1.0).tolist() == [0.0, 1.0, 4.0]
    with pytest.raises(ValueError, match="needs u"):
        PAIRS["jiq"][0].step([0.0, 1.0, 2.0], 1.0, 1.0)
    with pytest.raises(ValueError, match="sorted"):
        user.step([1.0, 0.0, 2.0], 1.0, 1.0)


def test_check_monotone_takes_a_map():
    assert cp.check_monotone(PAIRS["scratch"][0], trials=2000).monotone
    a = cp.check_monotone(PAIRS["jiq"][0], trials=2000)
    b = cp.check_monotone(PAIRS["jiq"][1], trials=2000)
    assert not a.monotone and a.trials == b.trials
    np.testing.assert_array_equal(a.counterexample.step_u, b.counterexample.step_u)


@pytest.mark.parametrize("key", ["jsw", "jiq", "lld"])
def test_coupling_time_bit_identical(key):
    user, builtin = PAIRS[key]
    inp = _input(builtin)
    w1 = np.full(builtin.servers, 4.0)
    a = cp.coupling_time(user, inp, np.zeros(builtin.servers), w1, rng=9, replications=5)
    b = cp.coupling_time(builtin, inp, np.zeros(builtin.servers), w1, rng=9, replications=5)
    np.testing.assert_array_equal(a.times, b.times)
    assert a.coupled_fraction > 0


def test_a_map_declares_the_generic_dense_system():
    user = PAIRS["jsw"][0]
    assert (user.engines, user.heap_policy, user.fcfs, family_of(user),
            user.monotone, user.has_loss, user.uniforms) == (
        ("dense",), None, False, "generic", False, False, 0)
    assert drivers_of(user) is drivers_of(rc.JSW(3))  # one door
    assert user.kernel is user.step_function
    assert PAIRS["loss"][0].has_loss and PAIRS["lld"][0].uniforms == 1
    inp = _input(user)
    with pytest.raises(ValueError, match=r"heap engine runs .* not Map"):
        rc.simulate(user, inp, steps=100, engine="heap")
    with pytest.raises(ValueError, match="time= runs need the heap engine"):
        rc.simulate(user, inp, time=10.0)


# -- stability checks: the generic check only ------------------------------------------
GENERIC = {"condition-3-fails", "growth", "drain", "none"}


def test_check_stability_user_jsw_overloaded_fails_condition_3():
    rep = ly.check_stability(rc.Map(rc.maps.jsw, servers=3), rc.Poisson(3.6, E(1.0)))
    assert (rep.verdict, rep.decided_by.name) == ("unstable", "condition-3-fails")


def test_check_stability_user_j2sw_above_its_threshold_is_unstable_by_growth():
    user = rc.Map(rc.maps.jpsw, servers=2, params=[1.0], name="J2SW")
    inp = rc.Poisson(1.9, E(1.0))  # (3) holds (load 0.95); above condition (11)'s rate 1.618
    rep = ly.check_stability(user, inp)
    assert (rep.verdict, rep.decided_by.name) == ("unstable", "growth")
    assert rep.evidence["growth per customer"] > 0


def test_check_stability_never_uses_a_papers_theorem_for_a_map():
    inp = rc.Poisson(1.5, E(1.0))
    builtin = ly.check_stability(rc.JpSW(2, 1), inp)
    assert builtin.verdict == "stable" and builtin.decided_by.name not in GENERIC
    user = rc.Map(rc.maps.jpsw, servers=2, params=[1.0])
    rep = ly.check_stability(user, inp)
    assert rep.decided_by.name in GENERIC
    # no paper's theorem: the drain test decides (J2SW at load 0.75 is below (11)'s 0.809;
    # from the face with an idle server it drains by only 1 - 1.5 B(1, 1.5) = 0.1 per unit
    # time, so it needs the default budget)
    assert (rep.verdict, rep.decided_by.name) == ("stable", "drain")
    # a Map declared monotone also gets Loynes evidence, which never decides
    mono = ly.check_stability(PAIRS["scratch"][0], _input(rc.JSW(3), 0.7), steps=2**12,
                              horizon=2**12, replications=4)
    assert (mono.verdict, mono.decided_by.name) == ("stable", "drain")
    assert "Loynes basis (not used for the verdict)" in mono.evidence


def test_stability_map_and_sweep_take_factories_of_maps():
    def factory(p):
        return rc.Map(rc.maps.jpsw, servers=2, params=[float(p)])

    m = ly.stability_map(factory, ly.PoissonAtLoad(2, E(1.0)), [0.5, 1.2], [0, 1],
                         max_workers=0, progress=False, steps=2**12, horizon=2**12,
                         replications=4)
    assert set(np.ravel(m.table["decided_by"])) <= GENERIC
    assert m.verdicts.tolist() == [["stable", "unstable"], ["stable", "unstable"]]

    def point(load, rng):
        user = rc.Map(rc.maps.jsw, servers=2)
        res = _simulate(user, rc.Poisson(2 * load, E(1.0)), steps=2000, rng=rng)
        return {"p_wait": res.p_wait.value}

    t = ly.sweep(point, {"load": [0.3, 0.8]}, max_workers=0, progress=False, table="dict")
    assert t["error"].tolist() == [None, None]
    assert t["p_wait"][0] < t["p_wait"][1]


# -- the contract ---------------------------------------------------------------------------
@pytest.mark.parametrize(("step", "uniforms", "message"), [
    (unsorted_step, 0, "left w unsorted"),
    (negative_step, 0, "left w negative"),
    (infinite_step, 0, "left w non-finite"),
    (nan_step, 0, "returned NaN"),
    (reads_u0, 0, r"reads more than uniforms=0"),
    (reads_u1, 1, r"reads more than uniforms=1"),
    (raising_step, 0, "raised ValueError: sigma too large"),
    (undeclared_loss, 0, r"returned rc.LOST \(a lost customer\) but is declared loss=False"),
], ids=lambda x: getattr(x, "__name__", str(x)))
def test_contract_violations_are_refused_naming_the_map(step, uniforms, message):
    bad = rc.Map(step, servers=3, uniforms=uniforms, name="my-map")
    with pytest.raises(rc.MapContractError, match=rf"rc\.Map 'my-map' {message}"):
        bad.check_contract()
    # and before anything runs: the first use checks the contract
    with pytest.raises(rc.MapContractError, match=r"rc\.Map 'my-map'"):
        rc.simulate(bad, rc.Poisson(1.0, E(1.0)), steps=100, rng=1)
    with pytest.raises(rc.MapContractError, match=r"rc\.Map 'my-map'"):
        bad.step([0.0, 1.0, 2.0], 1.0, 1.0, u=[0.5] * uniforms or None)


def test_contract_error_is_a_value_error_and_passes_a_good_step():
    assert issubclass(rc.MapContractError, ValueError)
    assert PAIRS["lld"][0].check_contract(samples=300) == 300
    assert rc.Map(reads_u1, servers=3, uniforms=2).check_contract(samples=300) == 300


def test_check_false_skips_the_contract_check():
    with pytest.raises(rc.MapContractError, match="unsorted"):
        rc.Map(py_unsorted, servers=3).step([0.0, 1.0, 2.0], 5.0, 0.0)
    trusting = rc.Map(py_unsorted, servers=3, check=False)
    with pytest.warns(rc.SlowMapWarning):
        out = trusting.step([0.0, 1.0, 2.0], 5.0, 0.0)
    assert out.tolist() == [5.0, 1.0, 2.0]  # what the step did, unchecked


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    (dict(servers=4, blocks=[2, 1]), ValueError, r"blocks must sum to servers=4"),
    (dict(servers=4, blocks=[0, 4]), ValueError, "blocks"),
    (dict(servers=3, params=[1.0, np.nan]), ValueError, "params must be numbers"),
    (dict(servers=3, capacity=0.0), ValueError, "capacity must be a finite number > 0"),
    (dict(servers=3, capacity=-2.0), ValueError, "capacity"),
    (dict(servers=3, capacity=np.inf), ValueError, "capacity"),
    (dict(servers=0), ValueError, "servers"),
    (dict(servers=2.5), TypeError, "servers"),
    (dict(servers=3, uniforms=-1), ValueError, "uniforms"),
])
def test_bad_constructor_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        rc.Map(rc.maps.jsw, **kwargs)


def test_step_must_be_callable():
    with pytest.raises(TypeError, match="step must be a function"):
        rc.Map("jsw", servers=3)
    with pytest.raises(TypeError, match="step must be a function"):
        rc.Map(None, servers=3)


# -- a plain Python step ----------------------------------------------------------------------
def test_plain_python_step_warns_once_and_gives_the_same_numbers():
    inp = rc.Poisson(1.4, E(1.0))
    kw = dict(steps=300, replications=2, rng=3, w0=[0.0, 1.5], record=True, batches=4)
    with pytest.warns(rc.SlowMapWarning, match=r"rc\.Map 'py-jsw'.*plain Python"):
        slow = _simulate(rc.Map(PY_JSW, servers=2, name="py-jsw"), inp, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rc.SlowMapWarning)  # once per step function
        again = rc.Map(PY_JSW, servers=2, name="py-jsw")
        again.step([0.0, 1.0], 1.0, 0.5)
    fast = _simulate(rc.Map(rc.maps.jsw, servers=2), inp, **kw)
    _assert_same_result(slow, fast)
    assert compiled_drivers(PY_JSW)[1] == "python"


# -- identity, pickling, envelopes ---------------------------------------------------------------
def test_maps_compare_by_what_they_are():
    a = rc.Map(rc.maps.jsw, servers=3)
    assert a == rc.Map(rc.maps.jsw, servers=3) and hash(a) == hash(rc.Map(rc.maps.jsw, 3))
    others = [rc.Map(rc.maps.loss, servers=3, loss=True), rc.Map(rc.maps.jsw, servers=4),
              rc.Map(rc.maps.jsw, servers=3, monotone=True),
              rc.Map(rc.maps.jsw, servers=3, capacity=4.0),
              rc.Map(rc.maps.jpsw, servers=3, params=[1.0]),
              rc.Map(rc.maps.jpsw, servers=3, params=[2.0])]
    assert all(a != o for o in others)
    assert len({a, *others}) == 1 + len(others)
    assert a != rc.JSW(3)


def test_a_used_map_pickles():
    user = PAIRS["jiq"][0]
    user.step([0.0, 1.0, 2.0], 1.0, 0.5, u=0.9)  # compiled drivers now held
    copies = [pickle.loads(pickle.dumps(user))]
    cloudpickle = pytest.importorskip("cloudpickle")  # what ly.sweep sends to its workers
    copies.append(cloudpickle.loads(cloudpickle.dumps(user)))
    for copy in copies:
        assert copy == user
        np.testing.assert_array_equal(copy.step([1.0, 1.0, 2.0], 1.0, 0.5, u=0.9),
                                      user.step([1.0, 1.0, 2.0], 1.0, 0.5, u=0.9))


def test_envelope_of_a_map():
    mono = PAIRS["scratch"][0]
    env = rc.Envelope(mono)
    assert env.monotone and drivers_of(env) is drivers_of(mono)
    np.testing.assert_array_equal(env.step([0.0, 1.0, 3.0], 2.0, 0.5),
                                  mono.step([0.0, 1.0, 3.0], 2.0, 0.5))
    with pytest.raises(ValueError, match="no monotone envelope is known"):
        rc.Envelope(PAIRS["jiq"][0])  # not monotone: passing it through would lie


# -- two server speeds: blocks and capacity ---------------------------------------------------
TWO_SPEED = rc.Map(two_speed, servers=4, blocks=[2, 2], capacity=6.0, monotone=False,
                   name="two speeds")


def test_blocks_and_capacity_declarations():
    assert TWO_SPEED.blocks == ((0, 2), (2, 4))
    assert TWO_SPEED.capacity == 6.0
    assert TWO_SPEED.load(rc.Poisson(4.8, E(1.0))) == pytest.approx(0.8)
    # block-sorted states are valid, unsorted blocks are not
    w = TWO_SPEED.step([0.5, 3.0, 0.0, 1.0], sigma=1.0, tau=0.25)
    assert w.tolist() == [0.25, 2.75, 0.5, 0.5]  # joined block 2 (idle), drained at 2
    with pytest.raises(ValueError, match="within each block"):
        TWO_SPEED.step([3.0, 0.5, 0.0, 1.0], 1.0, 0.25)


def test_two_speed_map_runs_and_its_load_uses_the_capacity():
    inp = rc.Poisson(4.8, E(1.0))  # 1.2 per server, 0.8 of the capacity 2 + 2 * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", rc.SimulationWarning)  # no load warning
        res = rc.simulate(TWO_SPEED, inp, steps=40_000, warmup=4000, rng=8,
                          w0=[0.5, 3.0, 0.0, 1.0], record=True)
    assert 0.0 < res.p_wait.value < 1.0 and res.p_loss is None
    # work balance: the busy servers do work at rate sum(speed_i 1{busy_i}), which must
    # equal the arriving work lambda E[sigma] = 4.8 (time averages = arrival averages, PASTA)
    rate = (res.path[0] > 0) @ np.array([1.0, 1.0, 2.0, 2.0])
    batches = rate.reshape(40, -1).mean(axis=1)
    se = batches.std(ddof=1) / np.sqrt(batches.size)
    assert abs(batches.mean() - 4.8) < 4 * se, (batches.mean(), se)
    with pytest.warns(rc.SimulationWarning, match="load"):
        rc.simulate(TWO_SPEED, rc.Poisson(6.6, E(1.0)), steps=2000, rng=8)  # load 1.1
    rep = ly.check_stability(TWO_SPEED, rc.Poisson(6.6, E(1.0)))
    assert (rep.verdict, rep.decided_by.name) == ("unstable", "condition-3-fails")
    assert rep.condition("(3)").value == pytest.approx(1.1)
    ok = ly.check_stability(TWO_SPEED, inp, steps=2**12, horizon=2**12, replications=4)
    assert ok.condition("(3)").value == pytest.approx(0.8)
    assert ok.decided_by.name in GENERIC and ok.verdict != "unstable"


# -- the on-disk cache ----------------------------------------------------------------------
STEP_MODULE = '''
import numba
from recursions.vectors import add_at_rank, drain

OFFSET = 0


@numba.njit
def step(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, OFFSET, sigma)
    drain(w, tau)
    return found
'''

SCRIPT = '''
import json, sys
import recursions as rc
from recursions.engines._driver_compiler import compiled_drivers
import userstep

m = rc.Map(userstep.step, servers=2, name="cached step")
from recursions.engines._workload_engines import POINTER_ARRIVALS

inp = rc.Poisson(1.2, rc.dists.Exponential(1.0))
res = rc.simulate(m, inp, steps=2000, rng=1)  # short: the loop of every step, on blocks
long = rc.simulate(m, inp, steps=POINTER_ARRIVALS + 1, rng=1)  # on the step's own copy
import recursions.engines._workload_engines as we
we.BLOCK_ARRIVALS = 0
drawn = rc.simulate(m, inp, steps=2000, rng=1)  # short, on the drawing loop of every step
mod, how = compiled_drivers(userstep.step)
unused = len(mod.advance.signatures)  # the runs drew in the loop: not the blocks' loop
m.step([0.0, 0.0], 1.0, 0.5)  # one block driver, step_once
drawing, _ = compiled_drivers(userstep.step, (1, 1))  # the drivers for two exponential laws
pointer = compiled_drivers(userstep.step, (1, 1), pointer=True)[0].mod
blocks = compiled_drivers(userstep.step, pointer=True)[0].mod  # the short run's loop
fns = [mod.run_path, mod.step_once, mod.apply_rows, mod.couple_chunk, drawing.advance,
       pointer.advance, blocks.advance]  # the compiled drivers (run_chunk and run_draws are
       # plain functions)
print(json.dumps({"how": how, "p_wait": [res.p_wait.value, long.p_wait.value,
                             drawn.p_wait.value],
                  "unused": unused,
                  "hits": sum(sum(f.stats.cache_hits.values()) for f in fns),
                  "misses": sum(sum(f.stats.cache_misses.values()) for f in fns)}))
'''


def _load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_drivers_are_cached_on_disk_and_reused_by_a_later_process(tmp_path, monkeypatch):
    cache, src = tmp_path / "cache", tmp_path / "src"
    src.mkdir()
    (src / "userstep.py").write_text(STEP_MODULE)
    (src / "script.py").write_text(SCRIPT)
    env = dict(os.environ, QUEUE_RECURSIONS_CACHE=str(cache),
               PYTHONPATH=os.pathsep.join([str(src), os.getcwd(),
                                           os.environ.get("PYTHONPATH", "")]))
    env.pop("NUMBA_CACHE_DIR", None)  # numba's default: its files beside the generated ones

    def run():
        out = subprocess.run([sys.executable, str(src / "script.py")], env=env, cwd=src,
                             capture_output=True, text=True, timeout=300, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr

    first, _ = run()
    generated = sorted(cache.glob("drivers_*.py"))
    assert first["how"] == "cached" and first["misses"] > 0
    # the block drivers (step_once ran), those drawing in the loop, and the two loops of
    # every step (drawing, and reading blocks: the short run's)
    assert len(generated) == 4
    for path in generated:
        assert list((cache / "__pycache__").glob(f"{path.stem}.*.nbi"))
    assert first["unused"] == 0  # a driver compiles on its first call, not before
    assert first["p_wait"][0] == first["p_wait"][2]  # blocks or drawn: the same numbers
    files = sorted(p.name for p in cache.rglob("*"))

    second, _ = run()
    assert second["misses"] == 0 and second["hits"] > 0  # loaded, not compiled
    assert second["p_wait"] == first["p_wait"]
    assert sorted(p.name for p in cache.rglob("*")) == files  # nothing new written

    # an edited step, or an edited constant beside it, gets drivers of its own
    monkeypatch.setenv("QUEUE_RECURSIONS_CACHE", str(cache))
    keys = set()
    for k, text in enumerate([STEP_MODULE,
                              STEP_MODULE.replace("drain(w, tau)", "drain(w, tau + 0.0)"),
                              STEP_MODULE.replace("OFFSET = 0", "OFFSET = 1")]):
        folder = src / f"edit{k}"  # same module and file name, so only the text differs
        folder.mkdir()
        (folder / "edited.py").write_text(text)
        step = _load_module(folder / "edited.py", "_test_user_map_edited").step
        keys.add(_cache_key(step))
        compiled_drivers(step)  # writes the drivers' source (compiles lazily: nothing here)
    assert len(keys) == 3 and None not in keys
    assert len(list(cache.glob("drivers_*.py"))) == 4 + 3


def test_closures_are_not_cached_on_disk():
    def inner(w, sigma, tau, u, params):
        return 0.0

    assert _cache_key(numba.njit(inner)) is None
    assert _cache_key(scratch_jsw) is not None


# -- the drivers' on-disk cache: key, unreadable sources, temporary files -----------------
def test_engine_sources_are_closed_under_their_imports():
    # every recursions file the drivers compile in is hashed into the cache key
    import re
    from pathlib import Path

    from recursions.engines._driver_compiler import ENGINE_SOURCES

    root = Path(rc.__file__).parent
    read = 0
    for name in ENGINE_SOURCES:
        text = (root / name).read_text()
        pkg = Path(name).parent
        imports = re.findall(r"^from (\.+|recursions\.)([\w.]*) import", text, re.M)
        read += len(imports)
        for dots, mod in imports:
            base = Path() if dots == "recursions." else pkg
            for _ in range(len(dots) - 1 if dots != "recursions." else 0):
                base = base.parent
            target = (base / mod.replace(".", "/")).as_posix() + ".py" if mod else None
            if target is not None and (root / target).exists():
                assert target.removeprefix("./") in ENGINE_SOURCES, (name, target)
    assert read >= len(ENGINE_SOURCES)  # the imports were read (the check is not empty)


def test_cache_key_changes_with_the_engine_sources_and_the_version(monkeypatch):
    import recursions.engines._driver_compiler as dr

    key = _cache_key(rc.maps.jsw)
    monkeypatch.setattr(dr, "_engine_text", lambda: "an edited engine")
    edited = _cache_key(rc.maps.jsw)
    monkeypatch.undo()
    monkeypatch.setattr(rc, "__version__", "0.0.0-other")
    other_version = _cache_key(rc.maps.jsw)
    assert len({key, edited, other_version}) == 3


def test_step_with_an_unreadable_source_file_gets_uncached_drivers():
    # as in a Jupyter cell: the source is in linecache, the file named by the code is not there
    import linecache
    import textwrap

    fname = "/nonexistent-dir/ipykernel_0/cell_1.py"
    src = textwrap.dedent('''
        from recursions.vectors import add_at_rank, drain

        def cell_jsw(w, sigma, tau, u, params):
            found = add_at_rank(w, 0, w.size, 0, sigma)
            drain(w, tau)
            return found
    ''')
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"__name__": "__main__"}
    exec(compile(src, fname, "exec"), ns)
    step = numba.njit(ns["cell_jsw"])
    assert _cache_key(step) is None
    _, how = compiled_drivers(step)
    assert how == "uncached"
    inp = rc.Poisson(2.0, E(1.0))
    a = rc.simulate(rc.Map(step, servers=3, monotone=True), inp, steps=3000, rng=2)
    b = rc.simulate(rc.JSW(3), inp, steps=3000, rng=2)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    assert a.mean_wait == b.mean_wait


def test_temporary_driver_files_have_unique_names(tmp_path):
    from recursions.engines._driver_compiler import _temporary_name

    target = tmp_path / "drivers_abc.py"
    names = {_temporary_name(target) for _ in range(100)}
    assert len(names) == 100
    assert all(n.parent == tmp_path and str(os.getpid()) in n.name for n in names)
