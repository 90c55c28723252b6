"""Draws inside the kernels continue numpy's streams: the numbers of the block draws, bit for bit.

With ``recursions.engines._in_kernel_draws.KERNEL_DRAWS`` on, ``rc.simulate`` draws a renewal input
with built-in laws (those of ``KERNEL_LAWS``; here every law that can) inside the dense and heap
loops (``recursions.dists.kernel.draw_one`` on the stream's own generators, on drivers
compiled for the two law codes); with it off, and for every other input, the draws are made
in blocks outside. Both paths must give the very same results.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import recursions as rc
from tests.marks import UNTRUSTED

kd = importlib.import_module("recursions.engines._in_kernel_draws")
eng = importlib.import_module("recursions.engines._registry")
we = importlib.import_module("recursions.engines._workload_engines")
D = rc.dists
ELEMENTWISE = {int(c) for c in rc.codes.LawCode} - set(kd._BLOCKWISE)


@pytest.fixture(autouse=True)
def _draw_in_the_loop(monkeypatch, request):
    # short plain runs of built-in maps read blocks by default (BLOCK_ARRIVALS); these tests
    # compare the drawing loops with the blocks, so they draw in the loop as long runs do
    if "blocks_first" not in request.node.name:
        monkeypatch.setattr(we, "BLOCK_ARRIVALS", 0)


CASES = [
    (rc.JSW(3), rc.Poisson(2.0, D.Exponential(1.0)), {}),
    (rc.JIQ(4), rc.Poisson(3.0, D.LogNormal(1.0, 3.0)), {"replications": 3}),
    (rc.Loss(3), rc.Poisson(2.0, D.Uniform(0.5, 1.5)), {"record": True}),
    (rc.Envelope(rc.JpSW(3, 1)), rc.Renewal(D.Erlang(2, rate=1.0), D.Exponential(1.0)), {}),
    (rc.Map(rc.maps.least_of_d, servers=4, uniforms=1, params=[2.0], monotone=True),
     rc.Poisson(3.0, D.Lomax(3.0, mean=1.0)), {}),
    # the drivers of a ranked kernel at 2 to 32 servers join in one branch-free pass: at the
    # edges of that range and just outside, for ranks 0, p and random
    (rc.JSW(1), rc.Poisson(0.8, D.Exponential(1.0)), {}),
    (rc.JSW(2), rc.Poisson(1.6, D.Deterministic(1.0)), {}),
    (rc.JSW(32), rc.Poisson(28.0, D.Exponential(1.0)), {"engine": "dense"}),
    (rc.JSW(33), rc.Poisson(29.0, D.Exponential(1.0)), {"engine": "dense"}),
    (rc.JpSW(5, 2), rc.Poisson(2.5, D.Exponential(1.0)), {"replications": 2}),
    (rc.RandomRouting(6), rc.Poisson(3.0, D.Exponential(1.0)), {}),
    (rc.JSW(40), rc.Poisson(30.0, D.Erlang(2, rate=2.0)), {"engine": "heap"}),
    (rc.JIQ(50), rc.Poisson(40.0, D.Exponential(1.0)), {"engine": "heap", "replications": 2}),
    (rc.LeastOfD(50, 2), rc.Poisson(40.0, D.Deterministic(1.0)), {"time": 200.0}),
    # a warm-up (5000 arrivals, about 125 time units) longer than the measured horizon
    (rc.LeastOfD(50, 2), rc.Poisson(40.0, D.Deterministic(1.0)), {"time": 20.0, "warmup": 5000}),
]


@pytest.mark.parametrize(("system", "inp", "kw"), CASES, ids=lambda x: repr(x)[:40])
def test_in_kernel_draws_equal_block_draws(system, inp, kw, monkeypatch):
    # every law with an element-by-element sampler, not only the default KERNEL_LAWS
    monkeypatch.setattr(kd, "KERNEL_LAWS", frozenset(ELEMENTWISE))
    assert kd.kernel_laws(inp) is not None
    kw = {"steps": 6000, "warmup": 300, "rng": 3, **kw}
    if "time" in kw:
        kw.pop("steps")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        monkeypatch.setattr(kd, "KERNEL_DRAWS", True)
        a = rc.simulate(system, inp, **kw)
        monkeypatch.setattr(kd, "KERNEL_DRAWS", False)  # blocks drawn by numpy
        b = rc.simulate(system, inp, **kw)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    for name in ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "p_all_busy",
                 "p_loss", "overflow_work"):
        assert getattr(a, name) == getattr(b, name), name
    np.testing.assert_array_equal(a.profile(a.grid).value, b.profile(b.grid).value)
    if a._fprof is not None or b._fprof is not None:  # what customers found, histogrammed
        np.testing.assert_array_equal(a.wait_sf(a.grid).value, b.wait_sf(b.grid).value)
    if a.path is not None:
        np.testing.assert_array_equal(a.path, b.path)


def test_by_default_exponential_and_deterministic_laws_are_drawn_inside():
    assert kd.kernel_laws(rc.Poisson(2.0, D.Exponential(1.0))) is not None
    assert kd.kernel_laws(rc.Renewal(D.Deterministic(1.0), D.Exponential(2.0))) is not None
    assert kd.kernel_laws(rc.Poisson(2.0, D.Erlang(2, rate=1.0))) is None  # blocks


def test_laws_without_an_element_by_element_sampler_keep_block_draws():
    inp = rc.Poisson(1.0, D.HyperExponential([0.5, 0.5], [1.0, 3.0]))
    assert kd.kernel_laws(inp) is None
    assert kd.kernel_laws(rc.Periodic([1.0], [2.0], phase=0)) is None


def test_a_time_horizon_run_warms_up_for_all_its_warmup_arrivals():
    # the warm-up is a count of arrivals, not cut at the measured run's time horizon
    inp = rc.Poisson(900.0, D.Exponential(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        runs = [rc.simulate(rc.JIQ(1000), inp, time=5.0, warmup=w, rng=2)
                for w in (20_000, 30_000)]
    assert runs[0].mean_workload != runs[1].mean_workload


@pytest.mark.parametrize("replications", [1, 3])
@UNTRUSTED
def test_in_kernel_runs_split_into_calls_give_the_same_numbers(replications, monkeypatch):
    # a long run is cut into calls of at most MAX_CALL arrivals (so that Ctrl-C is honoured
    # between them); the split must not change a number
    # (profile_every=7 does not divide the call length: the snapshots' offset carries over)
    inp = rc.Poisson(2.5, D.Exponential(1.0))
    kw = {"steps": 20_000, "warmup": 7_000, "rng": 5, "replications": replications,
          "profile_every": 7, "grid": np.linspace(0.0, 4.0, 9)}
    a = rc.simulate(rc.JSW(3), inp, **kw)
    monkeypatch.setattr(eng, "MAX_CALL", 999)
    b = rc.simulate(rc.JSW(3), inp, **kw)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    for name in ("p_wait", "mean_wait", "mean_workload", "busy_fraction"):
        assert getattr(a, name) == getattr(b, name), name
    np.testing.assert_array_equal(a._den, b._den)
    np.testing.assert_array_equal(a._prof, b._prof)
    np.testing.assert_array_equal(a.wait_sf(a.grid).value, b.wait_sf(b.grid).value)


@pytest.mark.parametrize("system", [rc.JSW(3), rc.JSW(20), rc.JIQ(5)], ids=repr)
def test_a_recorded_run_draws_in_blocks_and_gives_the_numbers_of_an_unrecorded_one(system):
    # the drawing loops hold no path-recording code: record=True runs the block drivers, on
    # the blocks the same generators draw, so every statistic is the one drawn in the loop
    inp = rc.Poisson(0.8 * system.servers, D.Exponential(1.0))
    kw = {"steps": 3000, "warmup": 200, "rng": 4, "engine": "dense"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        a = rc.simulate(system, inp, record=True, **kw)
        b = rc.simulate(system, inp, **kw)
    np.testing.assert_array_equal(a.final_state, b.final_state)
    for name in ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "p_all_busy"):
        assert getattr(a, name) == getattr(b, name), name
    np.testing.assert_array_equal(a.profile(a.grid).value, b.profile(b.grid).value)
    assert a.path.shape == (1, 3000, system.servers) and b.path is None


def test_the_drawing_loop_refuses_to_record():
    from recursions.engines._driver_compiler import compiled_drivers

    code = int(rc.codes.LawCode.EXPONENTIAL)
    mod, _ = compiled_drivers(rc.maps.jsw, (code, code), 3)
    gen = np.random.default_rng(0)
    one = np.ones(1)
    with pytest.raises(ValueError, match="records no path"):
        mod.run_draws(np.zeros(0), np.zeros(3), gen, code, one, gen, code, one, gen, 0, 10,
                      True, 0, 10, 1, np.zeros(0), 0.0, 3, np.zeros((1, 10)), np.zeros((1, 1)),
                      np.zeros((10, 3)))


def _drawn_in_the_loop(system, inp, steps, **kw):
    """Whether ``simulate`` would run this plan drawing in the loop (else on blocks)."""
    plan, engine = eng.planned(system, inp, steps, **kw)
    return engine.name == "dense" and engine._state(
        system, plan, np.zeros((plan.replications, system.servers)), 1, [None],
        [None]).law_drivers is not None


def test_blocks_first_for_a_short_plain_run_of_a_built_in_map(monkeypatch):
    # a short plain run reads blocks (its loop serves every law and compiles without the
    # generators' samplers); longer runs and runs that go on draw in the loop
    inp = rc.Poisson(2.0, D.Exponential(1.0))
    monkeypatch.setattr(we, "BLOCK_ARRIVALS", 10_000)
    # as in a fresh process: no drawing loop compiled yet
    monkeypatch.setattr(importlib.import_module("recursions.engines._driver_compiler"),
                        "_DRIVERS", {})
    system = rc.JpSW(3, 1)
    assert not _drawn_in_the_loop(system, inp, 10_000)
    assert _drawn_in_the_loop(system, inp, 10_000, warmup=1)
    assert _drawn_in_the_loop(system, inp, 4_000, replications=3)
    user = rc.Map(rc.maps.jsw, servers=3, name="user's jsw")
    assert not _drawn_in_the_loop(user, inp, 1000)  # a user's map too
    # the same numbers either way, bit for bit
    kw = {"steps": 9000, "rng": 6, "replications": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        blocks = rc.simulate(system, inp, **kw)
        monkeypatch.setattr(we, "BLOCK_ARRIVALS", 0)
        drawn = rc.simulate(system, inp, **kw)
        monkeypatch.setattr(we, "BLOCK_ARRIVALS", 10_000)
        # once the drawing loop is compiled in this process, short runs use it too
        assert _drawn_in_the_loop(system, inp, 10_000)
        again = rc.simulate(system, inp, **kw)
    for a in (drawn, again):
        np.testing.assert_array_equal(a.final_state, blocks.final_state)
        for name in ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "mean_response"):
            assert getattr(a, name) == getattr(blocks, name), name
        np.testing.assert_array_equal(a.profile(a.grid).value, blocks.profile(blocks.grid).value)


def test_blocks_first_not_in_precision_mode(monkeypatch):
    # a run that goes on (precision=) keeps the drawing loop from the start
    calls = []
    real = we._drawing_drivers
    monkeypatch.setattr(we, "_drawing_drivers", lambda s, p: calls.append(p) or real(s, p))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        rc.simulate(rc.JSW(2), rc.Poisson(1.0, D.Exponential(1.0)), precision=0.5, rng=1)
    assert calls
