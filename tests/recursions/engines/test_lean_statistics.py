"""``simulate(..., statistics=...)``: a run that keeps only the statistics asked for.

Naming only statistics of what customers find (waits, losses, responses) runs the dense
engine's drawing loop on drivers compiled to keep only those sums. Their numbers must be the
full drivers' bit for bit (the full drivers are checked against the naive twins in
tests/naive.py elsewhere), the sums they skip must stay empty, and every other path (block
draws, the heap engine, warmup="auto") must report just the statistics named.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import recursions as rc
from recursions.engines._driver_compiler import compiled_drivers
from recursions.engines._registry import ENGINES, planned

E = rc.dists.Exponential
eng = importlib.import_module("recursions.engines._accumulator")  # the batch table's columns
WAITS = ("p_wait", "mean_wait")


@pytest.fixture(autouse=True)
def _draw_in_the_loop(monkeypatch):
    # the lean copies are drawing loops: these runs draw in the loop, as long runs do (short
    # plain runs of built-in maps read blocks by default: BLOCK_ARRIVALS)
    monkeypatch.setattr(importlib.import_module("recursions.engines._workload_engines"),
                        "BLOCK_ARRIVALS", 0)


def _quiet(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        return rc.simulate(*args, **kw)


@pytest.mark.parametrize(("system", "rate", "names"), [
    (rc.JSW(1), 0.9, WAITS),
    (rc.JSW(10), 9.0, WAITS),            # the one-pass copy
    (rc.JSW(48), 44.0, ("mean_wait",)),  # the insertion copy
    (rc.JpSW(4, 1), 3.0, WAITS),
    (rc.JIQ(6), 5.0, ("p_wait",)),
    (rc.LeastOfD(6, 2), 4.5, WAITS),
    (rc.Loss(3), 2.5, ("p_loss", "overflow_work")),
], ids=repr)
def test_lean_drivers_keep_the_full_drivers_numbers(system, rate, names):
    inp = rc.Poisson(rate, E(1.0))
    kw = {"steps": 30_011, "warmup": 1_000, "replications": 3, "rng": 7, "engine": "dense"}
    full = _quiet(system, inp, **kw)
    lean = _quiet(system, inp, statistics=names, **kw)
    assert lean.statistics == names
    for name in names:
        assert getattr(lean, name) == getattr(full, name), name
        np.testing.assert_array_equal(lean._sums[name][0], full._sums[name][0])
    np.testing.assert_array_equal(lean.final_state, full.final_state)
    for name in ("mean_workload", "busy_fraction", "p_all_busy"):
        assert getattr(lean, name) is None and getattr(full, name) is not None
    assert lean.grid.size == 0
    with pytest.raises(ValueError, match="statistics= naming only waits or losses"):
        lean.profile(0.5)


def test_the_lean_loop_runs_and_skips_the_state_sums():
    # the run of a lean plan is made by the lean copy of the drivers, whose workload, busy
    # and snapshot sums stay zero (the full copy's are positive)
    system, inp = rc.JSW(3), rc.Poisson(2.4, E(1.0))
    assert compiled_drivers(system.kernel, (1, 1), 3, lean=True)[0] \
        is not compiled_drivers(system.kernel, (1, 1), 3)[0]
    for names, empty in ((None, False), (WAITS, True)):
        plan, engine = planned(system, inp, 5000, rng=1, statistics=names)
        assert plan.lean == empty and engine is ENGINES["dense"]
        acc = engine.start(system, plan).state.acc
        for col in (eng.WORK, eng.BUSY, eng.SAMPLED):
            assert (acc[..., col].sum() == 0) == empty, col
        assert acc[..., eng.WAIT_SUM].sum() > 0


def test_statistics_keeping_state_sums_use_the_full_drivers():
    inp = rc.Poisson(1.6, E(1.0))
    plan, _ = planned(rc.JSW(2), inp, 1000, statistics=("p_wait", "mean_workload"))
    assert not plan.lean
    res = rc.simulate(rc.JSW(2), inp, steps=20_000, rng=2, grid=[0.0, 1.0, 2.0],
                      statistics=("p_wait", "mean_workload"))
    ref = rc.simulate(rc.JSW(2), inp, steps=20_000, rng=2, grid=[0.0, 1.0, 2.0])
    assert res.statistics == ("mean_workload", "p_wait")  # in the result's own order
    assert res.mean_workload == ref.mean_workload and res.p_wait == ref.p_wait
    assert res.mean_wait is None and res.busy_fraction is None
    np.testing.assert_array_equal(res.profile([0.5, 1.5]).value, ref.profile([0.5, 1.5]).value)


@pytest.mark.parametrize(("system", "inp", "kw"), [
    (rc.JSW(3), rc.Poisson(2.4, rc.dists.Erlang(2, rate=2.0)), {"steps": 20_000}),  # blocks
    (rc.JSW(60), rc.Poisson(50.0, E(1.0)), {"steps": 20_000}),                   # heap
    (rc.JIQ(60), rc.Poisson(50.0, E(1.0)), {"time": 300.0}),                     # heap, time
], ids=["blocks", "heap", "heap-time"])
def test_other_paths_report_only_the_statistics_named(system, inp, kw):
    full = _quiet(system, inp, rng=3, **kw)
    lean = _quiet(system, inp, rng=3, statistics=WAITS, **kw)
    assert lean.engine == full.engine and lean.statistics == WAITS
    assert lean.p_wait == full.p_wait and lean.mean_wait == full.mean_wait
    assert lean.mean_workload is None and lean.busy_fraction is None


@pytest.mark.parametrize(("names", "w0"), [("mean_wait", None), ("p_wait", None),
                                          ("p_wait", [30.0])])
def test_warmup_auto_cuts_where_a_full_run_cuts(names, w0):
    # MSER reads the mean wait whatever statistics= keeps, so the truncation point and the
    # numbers are a full run's (reading p_wait instead cut 313 arrivals against 3125)
    inp = rc.Poisson(0.9, E(1.0))
    kw = {"steps": 40_000, "warmup": "auto", "rng": 4, "w0": w0}
    a = _quiet(rc.JSW(1), inp, statistics=names, **kw)
    b = _quiet(rc.JSW(1), inp, **kw)
    assert a.statistics == (names,) and getattr(a, names) == getattr(b, names)
    assert a.warmup == b.warmup and a.warmup_rule == b.warmup_rule == "mser"
    other = "mean_wait" if names == "p_wait" else "p_wait"
    assert getattr(a, other) is None


def test_part_of_the_headline_group_still_warns_when_untrusted():
    inp = rc.Poisson(3.7, E(1.0))  # JIQ(4) at 0.925, a short run
    for names in (None, ("mean_wait",)):
        with pytest.warns(rc.SimulationWarning, match="cannot be trusted"):
            rc.simulate(rc.JIQ(4), inp, steps=4000, rng=1, statistics=names)


def test_an_infinite_variance_still_marks_the_quantiles_untrusted():
    inp = rc.Poisson(0.5, rc.dists.Lomax(1.9, mean=1.0))  # E[sigma^2] = inf
    res = _quiet(rc.JSW(1), inp, steps=20_000, rng=1, statistics=("mean_workload",),
                 grid=np.linspace(0.0, 20.0, 41))
    assert not res.wait_quantile(0.8).trusted


def test_a_lean_heap_run_needs_no_snapshots():
    inp = rc.Poisson(900.0, E(1.0))
    res = _quiet(rc.JSW(1000), inp, steps=500, rng=1, statistics="p_wait")
    assert res.engine == "heap" and res.p_wait is not None
    res = _quiet(rc.JSW(1000), inp, time=0.5, rng=1, statistics="p_wait")
    assert res.p_wait is not None


@pytest.mark.parametrize(("system", "rate", "kw"), [
    (rc.JSW(40), 36.0, {"steps": 20_011}),
    (rc.JIQ(40), 30.0, {"steps": 20_011, "replications": 2}),
    (rc.JIQ(40), 30.0, {"time": 300.0}),
    (rc.LeastOfD(40, 2), 34.0, {"steps": 20_011, "warmup": 500}),
    (rc.RandomRouting(40), 20.0, {"steps": 20_011}),
], ids=["JSW", "JIQ-reps", "JIQ-time", "LL2-warmup", "random"])
def test_the_heaps_lean_copies_keep_the_run_time_loops_numbers(monkeypatch, system, rate, kw):
    # a lean heap run runs on a copy of the drawing loop compiled for its policy and for lean
    # statistics (recursions.engines._workload_engines.HEAP_LEAN_COPIES): the same sums, bit for
    # bit, as the loop that reads both at run time
    from recursions.engines import _driver_compiler as drv
    from recursions.engines import _heap as hp
    from recursions.engines import _workload_engines as wl

    original, asked = drv.heap_drivers, []

    def spy(laws, policy=None, *, lean=False, **more):
        asked.append((policy, lean))
        return original(laws, policy, lean=lean, **more)

    monkeypatch.setattr(drv, "heap_drivers", spy)
    inp = rc.Poisson(rate, E(1.0))
    out = []
    for copies in (False, True):
        monkeypatch.setattr(wl, "HEAP_LEAN_COPIES", copies)
        res = _quiet(system, inp, rng=5, engine="heap", statistics=WAITS, **kw)
        out.append(res)
    assert asked == [(None, False), (hp.policy_of(system)[0], True)]
    for name in WAITS:
        assert getattr(out[0], name) == getattr(out[1], name), name
        np.testing.assert_array_equal(out[0]._sums[name][0], out[1]._sums[name][0])
        np.testing.assert_array_equal(out[0]._sums[name][1], out[1]._sums[name][1])
    np.testing.assert_array_equal(out[0].final_state, out[1].final_state)


@pytest.mark.parametrize("kw", [{}, {"time": 200.0}], ids=["steps", "time"])
def test_the_heaps_lean_copy_skips_the_state_sums(monkeypatch, kw):
    # the lean copy counts no all-busy arrival, takes no snapshot and bins nothing (the loop
    # that reads the statistics at run time, on the same lean plan, counts all-busy arrivals)
    from recursions.engines import _workload_engines as wl

    system, inp = rc.JIQ(40), rc.Poisson(36.0, E(1.0))
    for copies in (False, True):
        monkeypatch.setattr(wl, "HEAP_LEAN_COPIES", copies)
        plan, engine = planned(system, inp, None if kw else 20_000, rng=2, statistics=WAITS,
                               **kw)
        assert plan.lean and engine is ENGINES["heap"]
        handle = engine.start(system, plan)
        acc = handle.state.acc
        assert (acc[..., eng.ALL_BUSY].sum() == 0) == copies
        if copies:
            assert acc[..., eng.SAMPLED].sum() == 0 and handle.tables.hist.sum() == 0
        assert acc[..., eng.WAITED].sum() > 0 and acc[..., eng.WAIT_SUM].sum() > 0


def test_a_lean_heap_copy_refuses_a_profile_grid():
    from recursions.engines import _driver_compiler as drv
    from recursions.engines import _heap as hp
    from recursions.engines._in_kernel_draws import kernel_laws

    scode, spar, tcode, tpar = kernel_laws(rc.Poisson(2.0, E(1.0)))
    mod = drv.heap_drivers((scode, tcode), hp.JSW, lean=True)
    W = np.zeros((1, 4))
    heap, pos, keys = hp.init_heap(W)
    gen = np.random.default_rng(1)
    with pytest.raises(ValueError, match="no profile grid"):
        mod.run_heap_draws(hp.JSW, 0, np.zeros(1), W[0], heap[0], pos[0], keys[0],
                           np.zeros(3), gen, scode, spar, gen, tcode, tpar, gen, 0, 10, True,
                           0.0, 10, 1, False, np.linspace(0.0, 1.0, 5), 4.0, 4,
                           np.zeros((1, eng.N_STATS)), np.zeros((1, 12)), hp.REBASE)


def test_a_users_map_keeps_its_run_check(monkeypatch):
    # rc.Map checks its runs on the workload sums, which the lean loop does not keep
    import recursions.engines._driver_compiler as drv

    seen = []
    real = drv.compiled_drivers

    def spy(*args, **kw):
        seen.append(kw.get("lean", False))
        return real(*args, **kw)

    monkeypatch.setattr(drv, "compiled_drivers", spy)
    mine = rc.Map(rc.maps.jsw, servers=2)
    inp = rc.Poisson(1.0, E(1.0))
    a = _quiet(mine, inp, steps=5000, rng=1, statistics=WAITS)
    b = _quiet(rc.JSW(2), inp, steps=5000, rng=1, statistics=WAITS)
    assert a.p_wait == b.p_wait and seen[-1] and not any(seen[:-1])  # lean for JSW only


def test_in_precision_mode_statistics_still_name_the_targets():
    for names in (("mean_wait",), "mean_wait"):  # a single name is one name, not letters
        res = _quiet(rc.JSW(1), rc.Poisson(0.5, E(1.0)), precision=0.2, statistics=names,
                     rng=5)
        assert res.precision.reached and res.mean_workload is not None
        assert list(res.precision.intervals) == ["mean_wait"]


@pytest.mark.parametrize(("kw", "exc", "match"), [
    ({"statistics": ["nope"]}, ValueError, "statistics must name some of"),
    ({"statistics": []}, ValueError, "statistics must name some of"),
    ({"statistics": 3}, TypeError, "statistics must be a name or a sequence"),
    ({"statistics": "p_loss"}, ValueError, "JSW has no estimate of p_loss"),
    ({"statistics": WAITS, "grid": [0.0, 1.0]}, ValueError, r"keeps only what customers find"),
    ({"statistics": WAITS, "profile_every": 3}, ValueError, r"profile_every= would have"),
    ({"statistics": WAITS, "reference": lambda w: w}, ValueError, r"reference= would have"),
])
def test_bad_statistics_are_refused(kw, exc, match):
    with pytest.raises(exc, match=match):
        rc.simulate(rc.JSW(2), rc.Poisson(1.0, E(1.0)), steps=1000, **kw)


def test_the_queue_length_engines_refuse_statistics():
    with pytest.raises(ValueError, match="do not take statistics="):
        rc.simulate(rc.JSQ(3), rc.Poisson(2.0, E(1.0)), steps=1000, statistics=WAITS)
