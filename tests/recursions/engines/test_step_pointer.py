"""A user's map on the loop that calls its step through a pointer: the same numbers."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import recursions as rc
from recursions.engines import _driver_compiler as dc
from recursions.engines import _workload_engines as we
from recursions.vectors import add_at_rank, drain, random_rank

# the runs are short: what is compared is their numbers, not whether their intervals hold
pytestmark = pytest.mark.filterwarnings("ignore::recursions.SimulationWarning")

INPUT = rc.Poisson(3.2, rc.dists.Exponential(1.0))
STATS = ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "mean_response")


@numba.njit
def least_of_two(w, sigma, tau, u, params):
    r = min(random_rank(u[0], w.size), random_rank(u[1], w.size))
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found


@numba.njit
def least_of_three(w, sigma, tau, u, params):
    r = min(random_rank(u[0], w.size), random_rank(u[1], w.size), random_rank(u[2], w.size))
    found = add_at_rank(w, 0, w.size, r, sigma * params[0])
    drain(w, tau)
    return found


@numba.njit
def refuses_long_jobs(w, sigma, tau, u, params):
    if sigma > 4.0:
        raise ValueError("a job longer than 4")
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


@pytest.fixture(autouse=True)
def _draw_in_the_loop(monkeypatch, request):
    # short plain runs read blocks by default (BLOCK_ARRIVALS): here the pointer loops draw
    # in the loop, as a run that goes on does, except in the tests and cases named "blocks"
    if "blocks" not in request.node.name:
        monkeypatch.setattr(we, "BLOCK_ARRIVALS", 0)
    else:  # as in a fresh process: a drawing pointer loop compiled already would be used
        monkeypatch.setattr(dc, "_POINTER_LOOPS", {})


def _both(monkeypatch, system, inp, **kw):
    """The run on the pointer loop, and on the map's own compiled copy."""
    pointer = rc.simulate(system, inp, **kw)
    with monkeypatch.context() as m:
        m.setattr(we, "POINTER_ARRIVALS", 0)
        own = rc.simulate(system, inp, **kw)
    return pointer, own


@pytest.mark.parametrize("way", ["drawn", "blocks"])
@pytest.mark.parametrize("kw", [dict(steps=20_000, rng=3),
                                dict(steps=20_000, rng=4, replications=3, warmup=1000),
                                dict(steps=20_000, rng=5, statistics=("p_wait", "mean_wait"))])
def test_the_pointer_loop_gives_the_numbers_of_the_maps_own_copy(monkeypatch, kw, way):
    system = rc.Map(least_of_two, servers=4, uniforms=2)
    monkeypatch.setattr(dc, "_POINTER_LOOPS", {})  # to see which loop ran
    pointer, own = _both(monkeypatch, system, INPUT, **kw)
    for name in STATS:
        assert getattr(pointer, name) == getattr(own, name), name
    assert pointer.engine == own.engine == "dense"
    # the loop of blocks, or of two exponential laws (a map that checks its runs: not lean)
    assert list(dc._POINTER_LOOPS) == [(None if way == "blocks" else (1, 1), False)]


@pytest.mark.parametrize("way", ["drawn", "blocks"])
def test_one_loop_serves_every_step(monkeypatch, way):
    rc.simulate(rc.Map(least_of_two, servers=4, uniforms=2), INPUT, steps=5000, rng=1)
    edited = rc.Map(least_of_three, servers=5, uniforms=3, params=np.array([1.5]))
    pointer, own = _both(monkeypatch, edited, INPUT, steps=5000, rng=2)
    assert pointer.mean_wait == own.mean_wait and pointer.p_wait == own.p_wait
    # two exponential laws drawn in the loop, every statistic; or the loop of blocks
    loop = dc._POINTER_LOOPS[(1, 1) if way == "drawn" else None, False]
    assert len(loop.advance.overloads) == 1  # compiled once, for both steps


@pytest.mark.parametrize("way", ["drawn", "blocks"])
def test_a_steps_exception_is_raised_not_lost(way):
    system = rc.Map(refuses_long_jobs, servers=2, check=False)
    with pytest.raises(ValueError, match="a job longer than 4"):
        rc.simulate(system, rc.Poisson(0.5, rc.dists.Exponential(1.0)), steps=20_000, rng=1,
                    replications=2)
    # the hook that caught it passes other reports on, and the next run is clean
    res = rc.simulate(system, rc.Poisson(0.5, rc.dists.Uniform(0.0, 1.0)), steps=2000, rng=1)
    assert res.p_wait.value >= 0.0


@pytest.mark.parametrize("way", ["drawn", "blocks"])
def test_a_checked_maps_short_run_calls_the_copy_its_check_compiled(monkeypatch, way):
    from recursions.engines._step_pointer import SIGNATURE
    from recursions.model._map_step_checks import checked_copy

    step = numba.njit(least_of_two.py_func)  # a new dispatcher: nothing compiled yet
    system = rc.Map(step, servers=4, uniforms=2)
    pointer = rc.simulate(system, INPUT, steps=5000, rng=7)
    assert step.signatures == []  # the short run compiled nothing of the step itself
    assert checked_copy(step).signatures == [SIGNATURE.args]
    with monkeypatch.context() as m:  # the map's own copy: the step compiled in, unchecked
        m.setattr(we, "POINTER_ARRIVALS", 0)
        own = rc.simulate(system, INPUT, steps=5000, rng=7)
    for name in STATS:
        assert getattr(pointer, name) == getattr(own, name), name
    unchecked = numba.njit(least_of_two.py_func)  # check=False: no copy, the step itself
    rc.simulate(rc.Map(unchecked, servers=4, uniforms=2, check=False), INPUT, steps=5000,
                rng=7)
    assert checked_copy(unchecked) is None and unchecked.signatures == [SIGNATURE.args]


def test_long_runs_compile_the_map_into_its_own_copy():
    from recursions.engines._run_plan import make_plan

    system = rc.Map(least_of_two, servers=4, uniforms=2)
    assert we._pointer(system, make_plan(system, INPUT, we.POINTER_ARRIVALS))
    assert not we._pointer(system, make_plan(system, INPUT, we.POINTER_ARRIVALS // 2,
                                             replications=3))
    assert not we._pointer(system, make_plan(system, INPUT, we.POINTER_ARRIVALS, warmup=1))


@numba.njit
def returns_an_int(w, sigma, tau, u, params):
    add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return 0


@numba.njit("f8(f8[:], f8, f8, f8[:], f8[:])")
def eager(w, sigma, tau, u, params):
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


@pytest.mark.parametrize("way", ["drawn", "blocks"])
@pytest.mark.parametrize("step", [returns_an_int, eager])
def test_a_step_the_pointer_cannot_call_runs_on_its_own_copy(monkeypatch, step, way):
    system = rc.Map(step, servers=2)
    pointer, own = _both(monkeypatch, system, rc.Poisson(1.2, rc.dists.Exponential(1.0)),
                         steps=5000, rng=1)
    assert pointer.mean_workload == own.mean_workload and pointer.p_wait == own.p_wait


@pytest.mark.parametrize("way", ["drawn", "blocks"])
def test_a_map_checked_at_every_step_runs_on_its_own_copy(monkeypatch, way):
    calls = []
    pointer_drivers = dc.pointer_drivers

    def spy(step, laws, lean=False):
        calls.append(step)
        return pointer_drivers(step, laws, lean)

    monkeypatch.setattr(dc, "pointer_drivers", spy)
    inp = rc.Poisson(1.2, rc.dists.Exponential(1.0))
    always = rc.Map(least_of_two, servers=4, uniforms=2, check="always")
    rc.simulate(always, inp, steps=2000, rng=1)
    assert calls == []  # its first broken step must stop the run: its own copy
    rc.simulate(rc.Map(least_of_two, servers=4, uniforms=2), inp, steps=2000, rng=1)
    assert calls == [least_of_two]


def test_a_run_that_grows_past_the_limit_leaves_the_pointer(monkeypatch):
    system = rc.Map(least_of_two, servers=4, uniforms=2)
    shorts = []
    short = we._pointer

    def spy(system, plan):
        shorts.append(short(system, plan))
        return shorts[-1]

    monkeypatch.setattr(we, "_pointer", spy)
    monkeypatch.setattr(we, "POINTER_ARRIVALS", 40_000)
    grown = rc.simulate(system, INPUT, precision=0.01, rng=2)
    assert grown.precision.steps > 40_000 and True in shorts and False in shorts
    monkeypatch.setattr(we, "POINTER_ARRIVALS", 0)
    own = rc.simulate(system, INPUT, precision=0.01, rng=2)
    assert grown.mean_wait == own.mean_wait and grown.precision.steps == own.precision.steps


def test_the_hook_passes_other_reports_on_without_looping(capsys):
    import sys

    from recursions.engines import _step_pointer as sp

    with sp.raising_unraisable():  # puts the hook in front
        pass
    seen = []
    behind = sys.unraisablehook

    def forwarding(report):  # another library's hook, which hands reports to the one before
        seen.append(report)
        behind(report)

    sys.unraisablehook = forwarding
    try:
        with sp.raising_unraisable():  # the hook goes in front of it, and it forwards back
            pass

        class Breaks:
            def __del__(self):
                raise ValueError("elsewhere")

        Breaks()  # its __del__ raises: an unraisable report from elsewhere
    finally:
        sys.unraisablehook = behind
    assert len(seen) == 1  # reached the other hook once, then Python's own: no loop
    assert "elsewhere" in capsys.readouterr().err
