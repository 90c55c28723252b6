"""Users' maps that cannot crash the process or give silent wrong numbers (issue 25).

The first-use contract check runs the step compiled with bounds checking and says what
broke; ``check="always"`` checks every step of a run; without it, a NaN or an undeclared loss
reached in a run of ``rc.simulate`` is refused at the end of the chunk, naming the batch;
condition (3) decides a user map's stability only with a declared capacity; and
``cp.perfect_sample(..., upper=)`` checks the bound before calling a draw exact.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numba
import numpy as np
import pytest

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.model._map_step_checks import MapStepError
from recursions.vectors import add_at_rank, drain

E = rc.dists.Exponential
INPUT = rc.Poisson(3 * 0.7, E(1.0))


# -- steps ------------------------------------------------------------------------------------
@numba.njit
def reads_param_1(w, sigma, tau, u, params):
    """Meant to read a threshold ``params[0]``; reads ``params[1]``, which was not given."""
    r = 0 if w[0] <= params[1] else 1
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found


@numba.njit
def writes_nan(w, sigma, tau, u, params):
    """A NaN into the state for most customers: the short sample sees it."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    if sigma > 1.0:
        w[w.size - 1] = np.nan
    return found


@numba.njit
def rare_nan(w, sigma, tau, u, params):
    """A NaN into the last server for one customer in 50 000 (a drain clears it later)."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    if 0.3 < u[0] < 0.30002:
        w[w.size - 1] = np.nan
    return found


@numba.njit
def rare_negative(w, sigma, tau, u, params):
    """A negative least workload for one customer in 50 000 (the next one joins it)."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    if 0.3 < u[0] < 0.30002:
        w[0] = -1.0
    return found


@numba.njit
def rare_unsorted(w, sigma, tau, u, params):
    """Puts the largest workload first for one customer in 50 000."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    if 0.3 < u[0] < 0.30002:
        x = w[0]
        w[0] = w[w.size - 1] + 1.0
        w[w.size - 1] = x
    return found


@numba.njit
def sigma_trap(w, sigma, tau, u, params):
    """A NaN into the state for a service time of exactly 7.25 (no random sample has it)."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    if sigma == 7.25:
        w[0] = np.nan
    return found


@numba.njit
def two_speed(w, sigma, tau, u, params):
    """Server 0 works at speed 2, server 1 at speed 1 (blocks [1, 1]): capacity 3."""
    if 0.5 * w[0] <= w[1]:
        found = 0.5 * w[0]
        w[0] += sigma
    else:
        found = w[1]
        w[1] += sigma
    v = w[0] - 2.0 * tau
    w[0] = v if v > 0.0 else 0.0
    v = w[1] - tau
    w[1] = v if v > 0.0 else 0.0
    return found


def _fresh_env() -> dict[str, str]:
    env = dict(os.environ)
    env["QUEUE_RECURSIONS_CACHE"] = tempfile.mkdtemp()
    env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp()
    return env


# -- the first-use contract check -------------------------------------------------------------
def test_an_out_of_bounds_write_is_refused_before_it_can_corrupt_memory():
    # before: the 200-state check passed, simulate printed numbers, then the process died
    # ("corrupted size vs. prev_size"); run in a subprocess so that a crash cannot kill pytest
    script = textwrap.dedent("""
        import numba, numpy as np, recursions as rc
        from recursions.vectors import add_at_rank, drain

        @numba.njit
        def writes_past_the_end(w, sigma, tau, u, params):
            found = add_at_rank(w, 0, w.size, 0, sigma)
            drain(w, tau)
            if sigma > 5.0 and w[w.size - 1] > 2.0:
                w[w.size] = 0.5
            return found

        m = rc.Map(writes_past_the_end, servers=3, name="past-the-end")
        try:
            res = rc.simulate(m, rc.Poisson(2.1, rc.dists.Exponential(1.0)),
                              steps=300_000, rng=1)
        except rc.MapContractError as exc:
            print("REFUSED", exc)
        else:
            print("RAN", res.mean_workload)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=_fresh_env(), timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "REFUSED rc.Map 'past-the-end' indexed out of bounds" in out.stdout, out.stdout
    assert "not u or params: w, of size 3" in out.stdout
    assert "uniforms" not in out.stdout  # not "reads more uniforms than declared"
    assert "sigma=" in out.stdout and "w=[" in out.stdout  # the input that broke it


def test_a_read_of_params_past_the_end_is_refused():
    # before: the step read the memory after params and gave 0.7663 where ~0.44 was meant
    m = rc.Map(reads_param_1, servers=3, params=[2.0], name="threshold")
    with pytest.raises(rc.MapContractError,
                       match=r"rc\.Map 'threshold' reads params past the end: it was given 1 "
                             r"parameter\(s\) \[2\.0\].*at w=\[.*params=\[2\.0\]"):
        m.check_contract(samples=200)
    assert rc.Map(reads_param_1, servers=3, params=[2.0, 1.0]).check_contract(200) == 200


def test_a_nan_write_is_named_as_a_nan_not_as_extra_uniforms():
    m = rc.Map(writes_nan, servers=3, uniforms=1, name="nan-writer")
    with pytest.raises(rc.MapContractError) as err:
        m.check_contract(samples=200)
    msg = str(err.value)
    assert msg.startswith("rc.Map 'nan-writer' left w non-finite: NaN at w[2]")
    assert "uniforms" not in msg
    assert "it gave w=[" in msg and "nan]" in msg


def test_the_short_sample_misses_the_rare_faults():
    # what the run-time checks below are for (and why the tests use these steps)
    for step in (rare_nan, rare_negative, rare_unsorted):
        assert rc.Map(step, servers=3, uniforms=1).check_contract(samples=200) == 200


# -- without check="always": batch ends -------------------------------------------------------
def test_a_rare_nan_in_a_run_is_refused_naming_the_batch():
    # before: mean_workload nan ± nan, no warning
    m = rc.Map(rare_nan, servers=3, uniforms=1, name="rare-nan")
    with pytest.raises(rc.MapContractError,
                       match=r"rc\.Map 'rare-nan': the statistics of batch \d+ of replication "
                             r"0 are NaN or infinite \(workload\).*check='always'"):
        rc.simulate(m, INPUT, steps=300_000, rng=1)
    # on pre-drawn blocks (a scipy law) too, after the chunk where it happened
    from scipy import stats

    blocks = rc.Poisson(2.1, stats.expon())
    with pytest.raises(rc.MapContractError, match=r"after \d+ measured arrivals"):
        rc.simulate(m, blocks, steps=300_000, rng=1)


def test_a_rare_negative_state_in_a_run_is_refused():
    # before: numbers and no warning (the negative entry was joined: "found" -1, a loss)
    m = rc.Map(rare_negative, servers=3, uniforms=1, name="rare-negative")
    with pytest.raises(rc.MapContractError,
                       match=r"rc\.Map 'rare-negative': \d+ customer\(s\) of batch \d+ of "
                             r"replication 0 were counted lost.*declared loss=False"):
        rc.simulate(m, INPUT, steps=300_000, rng=1)


def test_a_good_map_runs_as_before():
    m = rc.Map(rc.maps.jsw, servers=3)
    a = rc.simulate(m, INPUT, steps=20_000, rng=3)
    b = rc.simulate(rc.JSW(3), INPUT, steps=20_000, rng=3)
    assert a.mean_workload.value == b.mean_workload.value


def test_check_run_names_a_bad_final_state():
    m = rc.Map(rc.maps.jsw, servers=3, name="m")
    m.check_run(np.array([[0.0, 1.0, 2.0]]))
    for w, what in (([0.0, np.nan, 1.0], "has NaN or inf"),
                    ([-1.0, 0.0, 1.0], r"has a negative entry, w\[0\]"),
                    ([2.0, 0.0, 1.0], "is unsorted")):
        with pytest.raises(rc.MapContractError,
                           match=rf"rc\.Map 'm': the state of replication 1 at the end {what}"):
            m.check_run(np.array([[0.0, 0.0, 0.0], w]), where="at the end")


# -- check="always" ---------------------------------------------------------------------------
@pytest.mark.parametrize(("step", "what"), [
    (rare_nan, r"left w non-finite: NaN at w\[2\]"),
    (rare_negative, r"left w negative: w\[0\] = -1\.0 < 0"),
    (rare_unsorted, r"left w unsorted: w\[0\] > w\[1\]"),
])
def test_check_always_catches_the_step_that_broke(step, what):
    m = rc.Map(step, servers=3, uniforms=1, check="always", name="dbg")
    assert m.check == "always"
    w, u = np.array([0.5, 1.0, 2.0]), np.array([0.30001])
    with pytest.raises(MapStepError, match=rf"rc\.Map 'dbg' {what}: at w=\[0\.5, 1\.0, 2\.0\], "
                                           r"sigma=1\.0, tau=0\.25, u=\[0\.30001\].*it gave w="
                                           r".*caught by check='always'"):
        m.kernel(w, 1.0, 0.25, u, m.params)
    # a good step passes through the checking kernel with its own numbers
    assert m.kernel(np.array([0.5, 1.0, 2.0]), 1.0, 0.25, np.array([0.7]), m.params) == 0.5


def test_check_always_runs_inside_every_driver():
    m = rc.Map(rare_nan, servers=3, uniforms=1, check="always", name="dbg-nan")
    with pytest.raises(MapStepError, match=r"rc\.Map 'dbg-nan' left w non-finite: NaN"):
        rc.simulate(m, INPUT, steps=300_000, rng=1)
    with pytest.raises(rc.MapContractError, match=r"rc\.Map 'dbg-nan' left w non-finite"):
        m.step([0.5, 1.0, 2.0], 1.0, 0.25, u=[0.30001])
    # the backward runs, coupling and the parallel batch of single steps: a periodic input
    # whose first customer brings the service time that breaks the step
    trap = rc.Map(sigma_trap, servers=3, check="always", monotone=True, name="trap")
    periodic = rc.Periodic(sigma=[7.25, 0.5, 0.5, 0.5], tau=[3.0, 3.0, 3.0, 3.0], phase=0)
    msg = r"rc\.Map 'trap' left w non-finite: NaN at w\[0\].*sigma=7\.25.*check='always'"
    with pytest.raises(MapStepError, match=msg):
        ly.loynes(trap, periodic, 2**10, rng=1)
    with pytest.raises(MapStepError, match=msg):
        cp.coupling_time(trap, periodic, [0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    with pytest.raises(MapStepError, match=msg):
        cp.perfect_sample(trap, periodic, 2, upper=[9.0, 9.0, 9.0])
    good = rc.Map(rc.maps.jsw, servers=3, check="always")
    assert good.step([0.0, 1.0, 2.0], 1.0, 0.5).tolist() == [0.5, 0.5, 1.5]


def test_check_keyword_is_validated():
    with pytest.raises(ValueError, match="check must be True, False or 'always'"):
        rc.Map(rc.maps.jsw, servers=3, check="sometimes")  # type: ignore[arg-type]


# -- condition (3) with an assumed capacity ---------------------------------------------------
def test_condition_3_decides_only_with_a_declared_capacity():
    inp = rc.Poisson(2.4, E(1.0))  # load 0.8 for the capacity 3 of one server twice as fast
    assumed = rc.Map(two_speed, servers=2, blocks=[1, 1], name="2x-fast")
    rep = ly.check_stability(assumed, inp, rng=1, steps=2**12, horizon=2**10)
    # before: "UNSTABLE, condition-3-fails (exact)"
    assert rep.verdict != "unstable"
    assert rep.decided_by.name != "condition-3-fails" and rep.decided_by.kind != "theorem"
    c3 = next(c for c in rep.conditions if c.name == "(3)")
    assert c3.role.startswith("not used")
    assert "capacity assumed = servers = 2" in c3.how
    assert rep.evidence["capacity assumed (not declared)"] == 2.0
    declared = rc.Map(two_speed, servers=2, blocks=[1, 1], capacity=3.0, name="2x-fast")
    over = ly.check_stability(declared, rc.Poisson(3.6, E(1.0)), rng=1, steps=2**12,
                              horizon=2**10)
    assert over.verdict == "unstable" and over.decided_by.name == "condition-3-fails"
    assert declared.capacity_declared and not assumed.capacity_declared
    # simulate's load warning used the assumed capacity too: 2.4 / 2 = 1.2 ">= 1", stable
    with warnings.catch_warnings():
        warnings.simplefilter("error", rc.SimulationWarning)
        res = rc.simulate(assumed, inp, steps=2**14, warmup=2**12, rng=1)
    assert math.isfinite(res.mean_wait.value)
    with pytest.warns(rc.SimulationWarning, match="condition \\(3\\) fails"):
        rc.simulate(declared, rc.Poisson(3.6, E(1.0)), steps=2**12, rng=1)


# -- perfect_sample(upper=) -------------------------------------------------------------------
def test_perfect_sample_refuses_an_upper_bound_the_map_leaves():
    loss = rc.Map(rc.maps.loss, servers=2, loss=True, monotone=True, name="user loss")
    inp = rc.Poisson(1.0, rc.dists.Deterministic(1.0))
    # before: accepted, and draws from a "sandwich" that does not hold called exact
    with pytest.raises(ValueError, match=r"upper=\[0\.5, 0\.5\] does not bound "
                                         r"Map\('user loss'.*takes a state below it above it"):
        cp.perfect_sample(loss, inp, 3, upper=[0.5, 0.5])
    jsw = rc.Map(rc.maps.jsw, servers=2, monotone=True)
    with pytest.raises(ValueError, match="does not bound"):
        cp.perfect_sample(jsw, rc.Poisson(1.0, E(1.0)), 3, upper=[5.0, 5.0])
    # a true bound is accepted (a loss system's servers hold at most one service time)
    ok = cp.perfect_sample(loss, inp, 5, upper=[1.0, 1.0])
    assert ok.method == "monotone" and ok.samples.shape == (5, 2)
    assert np.all(ok.samples <= 1.0)


# -- the end-of-run look outside simulate: loynes and coupling_time -------------------------
@numba.njit(cache=True)
def _inf_when_idle(w, sigma, tau, u, params):
    found = rc.vectors.add_at_rank(w, 0, w.size, 0, sigma)
    rc.vectors.drain(w, tau)
    if w[0] == 0.0 and 1.0 < sigma < 1.05:  # now and then: an infinite workload, which stays
        w[1] = np.inf
    return found


def test_loynes_and_coupling_time_refuse_a_state_no_valid_step_gives():
    m = rc.Map(_inf_when_idle, servers=2, name="inf-when-idle")  # passes the first-use sample
    inp = rc.Poisson(1.0, E(1.0))
    with pytest.raises(rc.MapContractError, match=r"inf-when-idle.*backward run.*NaN or inf"):
        ly.loynes(m, inp, horizon=2**17)
    with pytest.raises(rc.MapContractError, match=r"inf-when-idle.*coupling_time.*NaN or inf"):
        cp.coupling_time(m, inp, [0.0, 0.0], [50.0, 50.0], replications=4)
