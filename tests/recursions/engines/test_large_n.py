"""The large-n event engine: agreement with the dense kernel, JIQ equilibrium, Erlang C, bounds."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import loynes as ly
import recursions as rc
from recursions.engines import _heap as hp
from tests.marks import UNTRUSTED

D = rc.dists
Z = 4.0


def _agree(a, b, z=Z):
    se = np.hypot(a.se, b.se)
    assert abs(a.value - b.value) <= z * se + 1e-12, (a, b)


@pytest.mark.parametrize("system", [rc.JIQ(20), rc.RandomRouting(20), rc.LeastOfD(20, 3)],
                         ids=repr)
@UNTRUSTED
def test_heap_engine_agrees_with_dense_kernel(system):
    inp = rc.Poisson(0.85 * 20, D.LogNormal(1.0, 2.0))
    kw = dict(steps=300_000, warmup=20_000, replications=2, grid=[0.0, 0.5, 2.0])
    dense = rc.simulate(system, inp, rng=5, engine="dense", **kw)
    heap = rc.simulate(system, inp, rng=6, engine="heap", **kw)
    assert (dense.engine, heap.engine) == ("dense", "heap")
    for name in ("p_wait", "mean_wait", "busy_fraction", "mean_workload", "p_all_busy"):
        _agree(getattr(dense, name), getattr(heap, name))
    pd, ph = dense.profile([0.5, 2.0]), heap.profile([0.5, 2.0])
    assert np.all(np.abs(pd.value - ph.value) <= Z * np.hypot(pd.se, ph.se))


def test_heap_jsw_is_the_same_path_as_dense():
    # JSW uses no routing uniforms: both engines see the same draws and the same waits
    inp = rc.Poisson(8.5, D.Exponential(1.0))
    a = rc.simulate(rc.JSW(10), inp, steps=50_000, rng=3, engine="dense")
    b = rc.simulate(rc.JSW(10), inp, steps=50_000, rng=3, engine="heap")
    assert a.p_wait.value == b.p_wait.value
    assert a.mean_wait.value == pytest.approx(b.mean_wait.value, rel=1e-9)
    np.testing.assert_allclose(np.sort(a.final_state[0]), np.sort(b.final_state[0]), atol=1e-9)


@pytest.mark.parametrize("law", [D.Exponential(1.0), D.HyperExponential.balanced(1.0, 6.0)],
                         ids=["drawn in the loop", "drawn in blocks"])
def test_heap_keys_kept_between_chunks_give_the_dense_path(law, monkeypatch):
    # the 4-ary layout keeps its keys with the heap from one call of the event loop to the
    # next (chunks of 997 arrivals here, and calls of as many when drawn in the loop), re-based
    # with the clock every few time units: a key left stale between calls would send a
    # customer to the wrong server
    import recursions.engines._registry as engines
    import recursions.engines._workload_engines as we

    inp = rc.Poisson(8.5, law)
    monkeypatch.setattr(we, "BLOCK_ARRIVALS", 0)  # the dense run draws in the loop too
    monkeypatch.setattr(hp, "REBASE", 5.0)
    monkeypatch.setattr(engines, "MAX_CALL", 997)
    with warnings.catch_warnings():  # 50 000 arrivals of H2 are too few for its intervals
        warnings.simplefilter("ignore", rc.SimulationWarning)
        a = rc.simulate(rc.JSW(10), inp, steps=50_000, rng=3, engine="dense", chunk=997)
        b = rc.simulate(rc.JSW(10), inp, steps=50_000, rng=3, engine="heap", chunk=997)
    assert a.p_wait.value == b.p_wait.value
    assert a.mean_wait.value == pytest.approx(b.mean_wait.value, rel=1e-9)
    np.testing.assert_allclose(np.sort(a.final_state[0]), np.sort(b.final_state[0]), atol=1e-9)


@pytest.mark.parametrize(
    "law", [D.Deterministic(1.0), D.HyperExponential.balanced(1.0, 6.0), D.Lomax(3.0, 2.0)],
    ids=["deterministic", "H2 scv 6", "Lomax"],
)
@pytest.mark.parametrize("lam", [0.45, 0.8])
def test_jiq_profile_matches_equilibrium(law, lam):
    # docs/theory/large_systems.md:
    # x*_w = lambda Phi^c(w) = lambda int_w^inf (1 - F); n = 1000 servers
    n = 1000
    grid = np.linspace(0.0, 3.0, 13)
    inp = rc.Poisson(lam * n, law)
    # Lomax(3): E[sigma^4] = inf, so the mean wait has no standard error, and says so
    heavy = not inp.finite_service_moment(4)
    with (pytest.warns(rc.SimulationWarning, match=r"mean_wait \+- se") if heavy
          else contextlib.nullcontext()):
        res = rc.simulate(rc.JIQ(n), inp, steps=1_000_000, warmup=100_000, rng=11, grid=grid)
    assert res.engine == "heap"
    x = res.profile(grid)
    exact = lam * law.integrated_sf(grid)
    # standard error plus a small allowance for the finite n
    assert np.all(np.abs(x.value - exact) <= Z * np.nan_to_num(x.se) + 2e-3)
    assert res.p_wait.value < 0.01


def test_jsw_large_n_is_erlang_c():
    n, rho = 100, 0.95
    res = rc.simulate(rc.JSW(n), rc.Poisson(rho * n, D.Exponential(1.0)), steps=1_000_000,
                      warmup=100_000, replications=2, rng=2)
    assert res.engine == "heap"
    _close = abs(res.p_wait.value - ly.erlang_c(n, rho * n)) <= Z * res.p_wait.se
    assert _close, (res.p_wait, ly.erlang_c(n, rho * n))
    assert abs(res.mean_wait.value - ly.mm_c_mean_wait(n, rho * n, 1.0)) <= Z * res.mean_wait.se


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_lemma4_bound_holds(lam):
    # Lemma 4 (every n): E x^n_w <= x**_w = e^{-(1 - lam) w} / (1 - lam) for Exp(1) service
    n = 50
    grid = np.linspace(0.0, 8.0, 17)
    res = rc.simulate(rc.JIQ(n), rc.Poisson(lam * n, D.Exponential(1.0)), steps=500_000,
                      warmup=50_000, rng=4, grid=grid)
    bound = np.exp(-(1 - lam) * grid) / (1 - lam)
    x = res.profile(grid)
    assert np.all(x.value - Z * np.nan_to_num(x.se) <= bound)


def test_time_horizon_runs_and_reference():
    n, lam = 200, 0.7
    law = D.Exponential(1.0)
    res = rc.simulate(rc.JIQ(n), rc.Poisson(lam * n, law), time=500.0, warmup=10_000, rng=1,
                      reference=lambda w: lam * law.integrated_sf(w), replications=2)
    # about lam n arrivals per unit time
    assert abs(res.steps - lam * n * 500) < 5 * np.sqrt(lam * n * 500)
    assert res.sup_error is not None and res.sup_error.value < 0.02
    again = rc.simulate(rc.JIQ(n), rc.Poisson(lam * n, law), time=500.0, warmup=10_000, rng=1,
                        replications=2)
    np.testing.assert_array_equal(res.final_state, again.final_state)


def test_adversarial_start_forgets():
    n, lam = 100, 0.6
    inp = rc.Poisson(lam * n, D.Exponential(1.0))
    heavy = rc.simulate(rc.JIQ(n), inp, steps=400_000, warmup=200_000, rng=8,
                        w0=np.full(n, 20.0), grid=[0.0])
    empty = rc.simulate(rc.JIQ(n), inp, steps=400_000, warmup=200_000, rng=9, grid=[0.0])
    _agree(heavy.busy_fraction, empty.busy_fraction)


def test_rebasing_the_clock_keeps_results(monkeypatch):
    inp = rc.Poisson(40.0, D.LogNormal(1.0, 2.0))
    ref = rc.simulate(rc.JIQ(50), inp, steps=200_000, rng=3, engine="heap")
    monkeypatch.setattr(hp, "REBASE", 5.0)  # re-base every few time units
    reb = rc.simulate(rc.JIQ(50), inp, steps=200_000, rng=3, engine="heap")
    assert reb.p_wait.value == pytest.approx(ref.p_wait.value, rel=1e-9, abs=1e-12)
    assert reb.mean_workload.value == pytest.approx(ref.mean_workload.value, rel=1e-9)


def _redundancy():
    system = rc.Redundancy(37, [rc.JobClass(3, 2, D.Exponential(1.0))])
    return system, system.poisson(20.0)


@pytest.mark.parametrize("case", [
    lambda: (rc.JIQ(37), rc.Poisson(30.0, D.Exponential(1.0))),  # drawn in the loop
    lambda: (rc.LeastOfD(37, 2), rc.Poisson(30.0, D.Erlang(2, rate=2.0))),  # in blocks
    _redundancy,
], ids=["JIQ", "LL(2)", "redundancy"])
def test_heap_keys_stay_the_empty_times_in_heap_order_across_calls(case, monkeypatch):
    # after a warm-up, chunks and calls of a few hundred arrivals, clock re-bases and a run
    # that goes on (RunHandle.extend), the kept keys are still E in heap order and a 4-ary heap
    import recursions.engines._registry as engines
    from recursions.engines._registry import planned

    system, inp = case()
    monkeypatch.setattr(hp, "REBASE", 3.0)
    monkeypatch.setattr(engines, "MAX_CALL", 501)
    plan, engine = planned(system, inp, 5000, warmup=777, replications=2, rng=5, chunk=613,
                           engine="heap")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        handle = engine.start(system, plan)
        handle.extend(10_000, plan.batches)
    run = handle.state
    for r in range(2):
        K, heap, pos, W = run.keys[r], run.heap[r], run.pos[r], run.W[r]
        np.testing.assert_array_equal(K, W[heap])
        np.testing.assert_array_equal(pos[heap], np.arange(W.size))
        assert np.all(K[(np.arange(1, W.size) - 1) // 4] <= K[1:])


def test_floyd_draws_distinct_uniform_subsets():
    # the least of d servers drawn by Floyd's algorithm has the law of the least of d ranks
    from math import comb

    n, d, reps = 9, 3, 30_000
    gen = np.random.default_rng(2)
    E = np.arange(n, dtype=float)  # server i has key i: the minimum is the least index drawn
    buf = np.empty(d, dtype=np.int64)
    mins = np.array([hp.floyd_min(E, gen.random(d), d, n, buf) for _ in range(reps)])
    exact = np.array([comb(n - r - 1, d - 1) / comb(n, d) for r in range(n)])
    freq = np.bincount(mins, minlength=n) / reps
    assert np.all(np.abs(freq - exact) <= Z * np.sqrt(exact * (1 - exact) / reps) + 1e-12)


@pytest.mark.parametrize("n", [1, 2, 5, 6, 21, 200])
def test_four_ary_heap_keeps_the_least_empty_time_on_top(n):
    # sift_down4 against the naive reading: after any key grows, the top is the least E, every
    # node's key is no larger than its children's, the keys are E in heap order, pos inverts heap
    gen = np.random.default_rng(n)
    E = np.where(gen.random(n) < 0.3, 0.0, gen.exponential(size=n))  # ties at 0, as from empty
    heap, pos, K = hp.init_heap(E[None, :])
    heap, pos, K = heap[0], pos[0], K[0]
    np.testing.assert_array_equal(K, E[heap])
    for _ in range(400):
        j = int(gen.integers(n)) if gen.random() < 0.5 else int(heap[0])
        E[j] += gen.exponential() * (gen.random() < 0.9)  # sometimes the key does not change
        K[pos[j]] = E[j]
        hp.sift_down4(K, heap, pos, pos[j])
        assert K[0] == E.min()
        np.testing.assert_array_equal(K, E[heap])
        np.testing.assert_array_equal(pos[heap], np.arange(n))
        parents = (np.arange(1, n) - 1) // 4
        assert np.all(K[parents] <= K[1:])


def test_heap_layouts_give_the_same_jsw_and_least_of_d_numbers(monkeypatch):
    # the binary layout is the 4-ary one's twin: JSW's waits and LL(2)'s paths do not depend on
    # how ties among equal empty times are broken, so both copies give the same numbers
    from recursions.engines import _driver_compiler as drv

    original, used = drv.heap_drivers, []

    def layout(laws, policy=None, *, wide, lean=False):
        used.append(original(laws, policy, wide=wide, lean=lean).WIDE)
        return original(laws, policy, wide=wide, lean=lean)

    for system, lam in ((rc.JSW(30), 27.0), (rc.LeastOfD(30, 2), 25.0)):
        inp = rc.Poisson(lam, D.Exponential(1.0))
        out = []
        for wide in (False, True):
            monkeypatch.setattr(drv, "heap_drivers",
                                lambda laws, policy=None, w=wide, lean=False:
                                layout(laws, policy, wide=w, lean=lean))
            res = rc.simulate(system, inp, steps=60_000, rng=4, engine="heap", replications=2)
            out.append([getattr(res, k).value for k in ("p_wait", "mean_wait", "p_all_busy")])
        assert out[0] == out[1]
    assert used == [False, True, False, True]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(time=0.0), ValueError, "time"),
        (dict(time=-1.0), ValueError, "time"),
        (dict(steps=10, time=1.0), ValueError, "exactly one"),
        (dict(), ValueError, "exactly one"),
        (dict(steps=10, engine="gpu"), ValueError, "engine"),
        (dict(steps=10, engine="heap", record=True), ValueError, "record"),
    ],
)
def test_bad_large_n_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rc.simulate(rc.JIQ(40), rc.Poisson(20.0, D.Exponential(1.0)), **kwargs)


def test_heap_engine_refuses_other_systems():
    with pytest.raises(ValueError, match="heap engine"):
        rc.simulate(rc.JpSW(40, 2), rc.Poisson(20.0, D.Exponential(1.0)), steps=10,
                    engine="heap")
    with pytest.raises(ValueError, match="time="):
        rc.simulate(rc.Loss(4), rc.Poisson(2.0, D.Exponential(1.0)), time=10.0)


def test_jiq_buffer_validation_and_dispatch():
    with pytest.raises(ValueError, match="buffer must be an integer >= 1"):
        rc.JIQ(5, buffer=0)
    res = rc.simulate(rc.JIQ(30, buffer=1), rc.Poisson(24.0, D.LogNormal(1.0, 3.0)),
                      steps=200_000, rng=1)
    assert res.engine == "queues"
    assert abs(res.p_block.value - ly.erlang_b(30, 24.0)) <= Z * res.p_block.se
