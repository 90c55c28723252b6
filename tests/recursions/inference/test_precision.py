"""Run until precise, warmup="auto", exact stationary starts, and the intervals behind them.

Oracles: M/M/1 and M/M/c closed forms (P(wait) = rho, E[W] = rho / (mu - lambda), Erlang C),
written out here; the interval procedure itself is checked on AR(1) series, whose mean is
known (0), with a binomial tolerance on the coverage.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from scipy.signal import lfilter
from scipy.stats import t as t_dist

import coupling  # noqa: F401  (registers the exact samplers start="stationary" uses)
import recursions as rc
from recursions.inference import diagnostics as dg
from recursions.inference._batch_means import interval, mser, replication_interval, von_neumann_z
from tests.marks import UNTRUSTED

E = rc.dists.Exponential


def mm1(rho):
    return rc.JSW(1), rc.Poisson(rho, E(1.0))


def erlang_c(c, a):
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return c * b / (c - a * (1 - b))


# -- the procedure on series with a known mean ----------------------------------------------


def test_von_neumann_score_is_standard_normal_for_independent_batches():
    rng = np.random.default_rng(5)
    z = np.array([von_neumann_z(rng.standard_normal((2, 64))) for _ in range(2000)])
    assert abs(z.mean()) < 0.1 and 0.85 < z.std() < 1.15
    walk = np.cumsum(rng.standard_normal((2, 64)), axis=1)
    assert von_neumann_z(walk) > 5


def test_intervals_of_ar1_series_cover_at_the_nominal_level():
    # AR(1) with correlation time (1 + phi) / (1 - phi) = 19 and runs of 2**15: long enough,
    # so the procedure must trust them and cover 0 about 95% of the time
    rng = np.random.default_rng(11)
    n_seeds, hits, trusted = 300, 0, 0
    for _ in range(n_seeds):
        x = lfilter([1.0], [1.0, -0.9], rng.standard_normal(2**15))
        iv = interval(x.reshape(256, -1).sum(axis=1), np.full(256, 2**15 / 256))
        trusted += iv.trusted
        hits += iv.covers(0.0)
    cov = hits / n_seeds
    se = math.sqrt(0.95 * 0.05 / n_seeds)
    assert abs(cov - 0.95) < 3 * se, cov
    assert trusted >= 0.9 * n_seeds


def test_too_short_a_series_is_not_trusted():
    rng = np.random.default_rng(3)
    x = lfilter([1.0], [1.0, -0.9999], rng.standard_normal(2**14))  # correlation time 20000
    iv = interval(x.reshape(256, -1).sum(axis=1), np.full(256, 64.0), statistic="x")
    assert not iv.trusted and iv.batches == 0 and "correlated" in iv.reason
    assert "not trusted" in str(iv)


def test_mser_finds_the_transient_and_says_when_there_is_no_steady_part():
    rng = np.random.default_rng(2)
    x = np.r_[np.linspace(20.0, 1.0, 20), np.ones(236)] + 0.1 * rng.standard_normal(256)
    d, steady = mser(x, np.ones(256))
    assert 15 <= d <= 40 and steady
    assert mser(np.arange(256.0), np.ones(256)) == (128, False)
    assert mser(x, np.ones(256), side=1)[0] == d  # the transient lies above: found again
    assert mser(x, np.ones(256), side=-1) == (0, True)  # a start "below" sees none here


def test_one_sided_mser_leaves_a_high_excursion_of_a_start_from_below():
    # a run from empty: a short low transient, then a stationary high excursion, the kind of
    # patch skewed waits show; two-sided MSER cuts the excursion too (and biases the mean down)
    rng = np.random.default_rng(5)
    x = np.r_[np.zeros(3), 5.0 * np.ones(40), np.ones(213)] + 0.1 * rng.standard_normal(256)
    assert mser(x, np.ones(256))[0] >= 43
    assert mser(x, np.ones(256), side=-1)[0] <= 4  # the transient, not the excursion


def test_skewness_adjusted_interval_covers_skewed_means():
    # 4000 samples of 32 Exp(1) draws (skewness 2), each one replication of one batch: the
    # symmetric t interval misses from below (a low mean comes with a small spread); the
    # adjusted one holds its level (binomial standard error 0.0035)
    rng = np.random.default_rng(7)
    x = rng.exponential(size=(4000, 32))
    ivs = [replication_interval(row[:, None], np.ones((32, 1))) for row in x]
    adjusted = np.mean([iv.covers(1.0) for iv in ivs])
    symmetric = np.mean([abs(iv.value - 1.0) <= iv.se * t_dist.ppf(0.975, 31) for iv in ivs])
    assert abs(adjusted - 0.95) < 3 * 0.0035, adjusted
    assert symmetric < adjusted - 0.01, (symmetric, adjusted)
    assert np.mean([iv.upper - iv.value > iv.value - iv.lower for iv in ivs]) > 0.9  # arm up


def test_replication_interval():
    num = np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]])
    iv = replication_interval(num, np.ones((3, 2)), 0.9, statistic="m")
    assert iv.value == pytest.approx(2.0) and iv.batches == 3 and iv.trusted
    assert not replication_interval(num[:1], np.ones((1, 2))).trusted


# -- simulate(precision=...) ------------------------------------------------------------


def test_precision_mode_reaches_the_target_and_covers_mm1():
    system, inp = mm1(0.8)
    res = rc.simulate(system, inp, precision=0.05, warmup="auto", rng=4)
    rep = res.precision
    assert rep.reached and rep.stopped_by == "precision" and rep.missed == ()
    assert set(rep.intervals) == {"p_wait", "mean_wait"}
    for name, exact in (("p_wait", 0.8), ("mean_wait", 4.0)):
        iv = res.interval(name)
        assert iv.trusted and iv.half_width <= 0.05 * abs(iv.value)
        assert abs(iv.value - exact) < 4 * iv.se
        assert getattr(res, name).value == pytest.approx(iv.value)  # the result agrees
    assert rep.steps_used >= rep.steps and res.warmup_rule == "mser"
    assert res.steps + res.warmup == rep.steps
    again = rc.simulate(system, inp, precision=0.05, warmup="auto", rng=4, chunk=1000)
    assert again.mean_wait == res.mean_wait and again.precision.steps == rep.steps


def test_precision_mode_stops_at_its_budget_and_says_what_it_would_need():
    system, inp = mm1(0.9)
    with pytest.warns(rc.SimulationWarning, match="precision not reached \\(max_steps\\)"):
        res = rc.simulate(system, inp, precision=0.002, max_steps=2**17, rng=1)
    rep = res.precision
    assert not rep.reached and rep.stopped_by == "max_steps" and "mean_wait" in rep.missed
    need = rep.needed["mean_wait"]
    assert need is None or need > 2**17
    assert "not reached" in str(rep)


def test_stages_grow_by_whole_batches_and_the_guard_keeps_the_skewed_arms():
    import recursions.inference._precision as modes
    BASE_BATCHES, _guarded, _side = modes.BASE_BATCHES, modes._guarded, dg.transient_side

    res = rc.simulate(*mm1(0.8), precision=0.05, steps=3000, rng=4)
    rep = res.precision
    assert rep.stages >= 2 and rep.steps % BASE_BATCHES == 0  # 3000, then whole batches
    # the guard scales the standard error, and both arms with it, around the estimate
    iv = interval(np.random.default_rng(1).exponential(size=64), np.ones(64))
    assert iv.shift > 0
    big = _guarded(iv, (2 * iv.se, 64.0), 64.0)
    assert big.se == pytest.approx(2 * iv.se)
    assert big.upper - big.value == pytest.approx(2 * (iv.upper - iv.value))
    assert big.value - big.lower == pytest.approx(2 * (iv.value - iv.lower))
    assert _guarded(iv, (0.5 * iv.se, 64.0), 64.0) == iv  # a smaller one changes nothing
    # MSER is one-sided only where the side is known: a monotone system started empty
    assert _side(rc.JSW(2), "empty") == -1
    assert _side(rc.JpSW(3, 1), "empty") == 0  # not monotone: it may overshoot
    assert _side(rc.JSW(2), "given") == _side(rc.JSW(2), "profile") == 0


def test_absolute_precision_for_named_statistics():
    system, inp = mm1(0.5)
    res = rc.simulate(system, inp, precision={"busy_fraction": 0.01}, relative=False, rng=2)
    assert res.precision.reached and res.interval("busy_fraction").half_width <= 0.01
    assert abs(res.busy_fraction.value - 0.5) < 4 * res.busy_fraction.se


def test_precision_on_the_heap_engine_and_on_queue_lengths():
    heap = rc.simulate(rc.JSW(50), rc.Poisson(40.0, E(1.0)), precision=0.1,
                       statistics=["p_wait"], rng=1)
    assert heap.engine == "heap" and heap.precision.reached
    assert abs(heap.p_wait.value - erlang_c(50, 40.0)) < 4 * heap.p_wait.se
    jsq = rc.simulate(rc.zerowait.JSQ(4), rc.Poisson(3.0, E(1.0)), precision=0.1,
                      statistics=["mean_jobs"], rng=1)
    assert jsq.engine in ("queues", "counts") and jsq.precision.reached


def test_precision_counts_only_after_enough_arrivals_per_server(monkeypatch):
    # JIQ on 400 servers at load 0.5 reaches 20% within 2^15 arrivals (82 a server) without
    # the floor; from empty it must go on to MIN_PER_SERVER a server
    from recursions.inference import _precision as pr

    system, inp = rc.JIQ(400), rc.Poisson(200.0, E(1.0))
    floor = dg.MIN_PER_SERVER * 400
    with monkeypatch.context() as m:
        m.setattr(dg, "MIN_PER_SERVER", 0)
        early = rc.simulate(system, inp, precision=0.2, statistics=["mean_workload"], rng=2)
    assert early.precision.reached and early.precision.steps < floor
    res = rc.simulate(system, inp, precision=0.2, statistics=["mean_workload"], rng=2)
    assert res.precision.reached and res.precision.steps >= floor > pr.FIRST_STEPS
    with pytest.warns(rc.SimulationWarning, match="256 a server"):
        short = rc.simulate(system, inp, precision=0.2, statistics=["mean_workload"], rng=2,
                            max_steps=floor // 2)
    assert not short.precision.reached and short.precision.stopped_by == "max_steps"


def test_a_run_precise_too_soon_goes_on_to_640_relaxation_times(monkeypatch):
    # M/M/1 at 0.9: T = rho^2 (ca^2 + cs^2) / (1 - rho)^2 = 162 arrivals. A loose target is
    # met long before 640 T; the run must go on to 640 T, and only the stop changes: the
    # stages before it are those of the run without the rule

    system, inp = mm1(0.9)
    settle = dg.MIN_RELAXATIONS * 162
    assert dg.settle_of(system.relaxation(inp)) == settle == 103_680
    with monkeypatch.context() as m:
        m.setattr(dg, "MIN_RELAXATIONS", 0)
        early = rc.simulate(system, inp, precision=0.5, rng=3)
    assert early.precision.reached and early.precision.steps < settle
    res = rc.simulate(system, inp, precision=0.5, rng=3)
    assert res.precision.reached and settle <= res.precision.steps <= 16 * early.precision.steps
    assert res.precision.stages > early.precision.stages
    # the same path: capped at the early stop, the run with the rule is the early run
    with pytest.warns(rc.SimulationWarning, match=r"precision not reached \(max_steps\)"):
        capped = rc.simulate(system, inp, precision=0.5, rng=3, max_steps=early.precision.steps)
    assert capped.mean_wait == early.mean_wait and capped.p_wait == early.p_wait
    assert capped.precision.stages == early.precision.stages
    # a budget under 640 T: not reached, and the warning says why
    with pytest.warns(rc.SimulationWarning, match=r"640 heavy-traffic relaxation times"):
        short = rc.simulate(system, inp, precision=0.5, rng=3, max_steps=settle // 2)
    rep = short.precision
    assert not rep.reached and rep.stopped_by == "max_steps"
    assert set(rep.missed) == {"p_wait", "mean_wait"}
    assert all(rep.needed[k] >= settle for k in rep.missed)


def test_a_system_with_no_time_scale_stops_on_two_precise_stages_in_a_row(monkeypatch):
    # JIQ has no heavy-traffic relaxation time (nor loss systems, nor users' maps): a run
    # precise at one stage goes on one stage (x1.25) and stops only if precise there too
    from recursions.inference import _precision as pr

    system, inp = rc.JIQ(4), rc.Poisson(3.6, E(1.0))
    assert system.relaxation(inp) is None and dg.settle_of(None) is None
    with monkeypatch.context() as m:
        m.setattr(pr, "_hold", lambda precise, n, settle, confirmed: None)
        first = rc.simulate(system, inp, precision=0.2, rng=5)
    assert first.precision.reached
    res = rc.simulate(system, inp, precision=0.2, rng=5)
    assert res.precision.reached and res.precision.stages > first.precision.stages
    assert res.precision.steps >= pr.MIN_GROWTH * first.precision.steps
    # capped at that first precise stage: the same run, not reached, and the warning says why
    with pytest.warns(rc.SimulationWarning, match=r"two stages in a row"):
        capped = rc.simulate(system, inp, precision=0.2, rng=5, max_steps=first.precision.steps)
    rep = capped.precision
    assert capped.mean_wait == first.mean_wait and not rep.reached
    assert rep.stopped_by == "max_steps" and set(rep.missed) == {"p_wait", "mean_wait"}
    assert all(rep.needed[k] >= pr.MIN_GROWTH * first.precision.steps for k in rep.missed)


def test_a_run_stopped_under_the_floor_says_so_with_what_it_missed():
    # stopped under the floor (max_steps), the report asks for the floor at least and the
    # warning gives the half-widths that missed as well; a "zero" stop there says it too

    system, inp = rc.JIQ(400), rc.Poisson(200.0, E(1.0))
    floor = dg.MIN_PER_SERVER * 400
    with pytest.warns(rc.SimulationWarning, match=r"256 a server.*mean_workload half-width"):
        res = rc.simulate(system, inp, precision=0.001, statistics=["mean_workload"], rng=2,
                          max_steps=floor // 2)
    rep = res.precision
    assert rep.stopped_by == "max_steps" and rep.missed == ("mean_workload",)
    assert rep.needed["mean_workload"] >= floor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        met = rc.simulate(system, inp, precision=0.2, statistics=["mean_workload"], rng=2,
                          max_steps=floor // 2)
    assert met.precision.needed["mean_workload"] == floor  # its interval alone was enough
    # JIQ(8000) at load 0.5: no customer waits; three stages from 2048 arrivals stay short of
    # the 2 048 000 of the floor
    with pytest.warns(rc.SimulationWarning, match=r"stayed 0.*also stopped under the 2,048,000"):
        zero = rc.simulate(rc.JIQ(8000), rc.Poisson(4000.0, E(1.0)), precision=0.1,
                           steps=2048, profile_every=64, rng=1)
    assert zero.precision.stopped_by == "zero" and zero.precision.steps < 2_048_000


def test_large_systems_start_with_a_stage_of_16_arrivals_a_server():
    # the heap engine samples the vector every `servers` arrivals: a first stage of 2**14
    # arrivals gave 20 000 servers one sample, an error; the floor is capped at MAX_STEPS
    from recursions.engines._run_plan import make_plan
    from recursions.inference import _precision as pr

    inp = rc.Poisson(10_000.0, E(1.0))
    assert make_plan(rc.JIQ(20_000), inp, precision=0.1).modes.first == 16 * 20_000
    assert make_plan(rc.JIQ(20), rc.Poisson(10.0, E(1.0)), precision=0.1).modes.first == 2**14
    # (its batches need about 10^7 arrivals to pass the independence test: capped here)
    with pytest.warns(rc.SimulationWarning, match="precision not reached"):
        res = rc.simulate(rc.JIQ(20_000), inp, precision=0.1, statistics=["mean_workload"],
                          rng=1, max_steps=2**20)
    assert res.engine == "heap" and res.precision.stages == 2
    assert 16 * 20_000 < res.precision.steps == res.precision.steps_used <= 2**20  # went on
    assert dg.floor_of(10**8, "empty") == pr.MAX_STEPS and dg.floor_of(10, "stationary") == 0


def test_a_stage_under_the_floor_guards_no_later_stage(monkeypatch):
    # its intervals do not count, and neither do its standard errors as a guard: on 100
    # servers the first stage (2**14 arrivals) is under the floor of 25 600, and its noisy
    # errors held the running maximum up for the whole run (M/M/100 at 0.8: 10% more arrivals)
    import recursions.inference._precision as pr

    seen: list[tuple[bool, bool]] = []
    lengths: list[int] = []
    guarded, hold = pr._guarded, pr._hold

    def spy(iv, prev, n):
        seen.append((iv.trusted, prev is not None))
        return guarded(iv, prev, n)

    def spy_hold(precise, n, settle, confirmed):
        lengths.append(n)
        return hold(precise, n, settle, confirmed)

    monkeypatch.setattr(pr, "_guarded", spy)
    monkeypatch.setattr(pr, "_hold", spy_hold)
    for servers, load, guards in ((100, 80.0, False), (2, 1.6, True)):
        floor = dg.floor_of(servers, "empty")
        for rng in range(20):  # a seed whose first stage is trusted and not the last
            seen.clear()
            lengths.clear()
            res = rc.simulate(rc.JSW(servers), rc.Poisson(load, E(1.0)), precision=0.05,
                              statistics=["mean_workload"], rng=rng, max_steps=2**19)
            if seen[0][0] and res.precision.stages >= 2:
                break
        else:
            raise AssertionError("no seed with a trusted first stage")
        assert (lengths[0] < floor <= lengths[1]) is not guards  # the first stage's place
        assert seen[1][1] is guards  # the second is guarded by the first only over the floor


def test_a_time_budget_stops_the_stages_and_says_so():
    # max_seconds is checked after each stage (with the next stage's estimated time from
    # the second on): a budget any stage overruns stops after the first, not reached
    with pytest.warns(rc.SimulationWarning, match=r"precision not reached \(max_seconds\)"):
        res = rc.simulate(rc.JSW(2), rc.Poisson(1.6, E(1.0)), precision=1e-4,
                          max_seconds=1e-6, max_steps=2**18, rng=1)  # (else max_steps)
    rep = res.precision
    assert rep.stopped_by == "max_seconds" and not rep.reached and rep.stages == 1
    assert rep.steps == rep.steps_used == 2**14 and set(rep.missed) == {"p_wait", "mean_wait"}
    # what it would need: at least the 640 relaxation times of a run that may stop
    assert all(n is None or n >= 640 * rc.JSW(2).relaxation(rc.Poisson(1.6, E(1.0)))
               for n in rep.needed.values())


def test_precision_on_a_users_map():
    m = rc.Map(rc.maps.jsw, servers=2, name="my-jsw")
    res = rc.simulate(m, rc.Poisson(1.2, E(1.0)), precision=0.05, warmup="auto", rng=3)
    assert res.precision.reached
    assert abs(res.p_wait.value - erlang_c(2, 1.2)) < 4 * res.p_wait.se


@UNTRUSTED
def test_bad_precision_arguments():
    system, inp = mm1(0.5)
    for kwargs, match in (({"precision": -1.0}, "precision must be"),
                          ({"precision": 0.1, "statistics": ["nope"]}, "not estimated"),
                          ({"precision": 0.1, "time": 10.0}, "give steps, not time"),
                          ({"precision": 0.1, "confidence": 1.5}, "confidence"),
                          ({"warmup": "sometimes", "steps": 100}, "warmup must be"),
                          ({"start": "somewhere", "steps": 100}, "start must be"),
                          ({"warmup": "auto"}, "steps is required")):
        with pytest.raises(ValueError, match=match):
            rc.simulate(system, inp, **kwargs)
    with pytest.raises(ValueError, match="not both"):
        rc.simulate(system, inp, steps=100, start="stationary", w0=[1.0])
    with pytest.raises(ValueError, match="statistic must be one of"):
        rc.simulate(system, inp, steps=1000, rng=1).interval("p_loss")


# -- warmup="auto" and start= -------------------------------------------------------------


def test_auto_warmup_cuts_a_transient_that_a_fixed_run_keeps():
    system, inp = mm1(0.5)
    w0 = [200.0]  # far above the stationary mean workload of 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        raw = rc.simulate(system, inp, steps=2**15, w0=w0, batches=256, rng=6)
    cut = rc.simulate(system, inp, steps=2**15, w0=w0, warmup="auto", rng=6)
    assert cut.warmup_rule == "mser" and cut.warmup >= 200  # 400 time units, 200 arrivals
    assert cut.steps + cut.warmup == 2**15
    assert raw.mean_wait.value > 1.5  # the transient inflates it
    assert abs(cut.mean_wait.value - 1.0) < 4 * cut.mean_wait.se


def test_auto_warmup_on_a_drifting_run_warns():
    system, inp = mm1(1.3)
    with pytest.warns(rc.SimulationWarning) as caught:
        rc.simulate(system, inp, steps=2**14, warmup="auto", rng=1)
    assert any("no steady part" in str(w.message) for w in caught)


def test_stationary_start_needs_no_warmup_and_gives_replication_intervals():
    inp = rc.Poisson(1.8, E(1.0))
    # 6 x 9000 arrivals: each replication is short for its batch means (55 relaxation times of
    # 162 arrivals, under 320), which warns, but the exact starts make the replications' own
    # interval valid, and the warning says so
    with pytest.warns(rc.SimulationWarning, match=r"short for its load.*replication_interval"):
        res = rc.simulate(rc.JSW(2), inp, steps=9000, start="stationary", replications=6,
                          rng=8)
    assert res.start == "stationary" and res.warmup == 0
    iv = res.replication_interval["p_wait"]
    assert iv.batches == 6 and iv.trusted
    assert abs(iv.value - erlang_c(2, 1.8)) < 4 * iv.se
    with pytest.warns(rc.SimulationWarning, match="short for its load"):
        same = rc.simulate(rc.JSW(2), inp, steps=9000, start="stationary", replications=6,
                           rng=8)
    np.testing.assert_array_equal(same.final_state, res.final_state)


def test_start_from_an_equilibrium_profile():
    import loynes as ly

    eq = ly.jiq_equilibrium(0.8, E(1.0))
    # 100 arrivals a server: under the 256 a run needs unless its start is an exact draw
    with pytest.warns(rc.SimulationWarning, match="short for its number of servers.*steps=51200"):
        res = rc.simulate(rc.JIQ(200), rc.Poisson(160.0, E(1.0)), steps=20_000, start=eq,
                          rng=1)
    assert res.start == "profile"
    with pytest.raises(TypeError, match="start must be"):
        rc.simulate(rc.JIQ(20), rc.Poisson(16.0, E(1.0)), steps=1000, start=3.0, rng=1)


def _start_systems():
    import loynes as ly
    from recursions.model.redundancy import JobClass

    n, lam = 1000, 0.5
    jiq = rc.JIQ(n)
    red = rc.Redundancy(n, JobClass(2, 1, E(1.0)))
    return [(jiq, rc.Poisson(lam * n, E(1.0)), ly.jiq_equilibrium(lam, E(1.0))),
            (red, red.poisson(lam * n), ly.redundancy_fixed_point(red.classes, lam))]


@pytest.mark.parametrize("case", [0, 1], ids=["JIQ", "Redundancy(2, 1)"])
def test_a_profile_start_begins_at_the_mean_field_equilibrium(case):
    # the mean-field mean workload a server, int_0^inf x_w dw, is where a run from the
    # theory's profile starts and stays; from empty, the same short run is well below it
    # (the workload sampled every 100 arrivals, 20 times a replication)
    system, inp, eq = _start_systems()[case]
    g = np.linspace(0.0, 60.0, 60_001)
    x = eq.profile(g)
    mf = float((x[1:] + x[:-1]).sum() * (g[1] - g[0]) / 2)   # trapezoid rule
    n = system.servers
    runs = {}
    for start in (eq, None):
        kw = {} if start is None else {"start": start}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rc.SimulationWarning)
            runs[start is None] = rc.simulate(system, inp, steps=2000, warmup=0,
                                              replications=4, profile_every=100, rng=3, **kw)
    res, empty = runs[False], runs[True]
    assert res.start == "profile" and empty.start != "profile"
    est = res.mean_workload
    # 4 standard errors of the run, and 2% for n = 1000 against n = infinity
    assert abs(est.value / n - mf) < 4 * est.se / n + 0.02 * mf
    # from empty: 0.71-0.74 of it over the same 2000 arrivals (3.4 of its standard errors or
    # more below 0.85)
    assert empty.mean_workload.value / n < 0.85 * mf


# -- estimands without a central limit theorem, and quantiles -------------------------------


def test_heavy_service_means_have_no_standard_error_but_quantiles_do():
    inp = rc.Poisson(0.5, rc.dists.Lomax(3.5, mean=1.0))  # E[sigma^4] = inf, E[sigma^3] < inf
    with pytest.warns(rc.SimulationWarning, match="E\\[sigma\\^4\\] = inf"):
        res = rc.simulate(rc.JSW(1), inp, steps=2**15, batches=128,
                          grid=np.linspace(0, 400, 2001), rng=1)
    iv = res.interval("mean_wait")
    assert not iv.trusted and "Daley" in iv.reason
    assert res.interval("p_wait").trusted  # a bounded indicator keeps its CLT
    q = res.wait_quantile(0.75)
    assert q.trusted and q.half_width > 0 and q.lower > 0
    with pytest.raises(ValueError, match="cannot be made precise"):
        rc.simulate(rc.JSW(1), inp, precision=0.1, statistics=["mean_wait"], rng=1)


def test_wait_quantile_covers_mm1():
    rho = 0.7
    res = rc.simulate(*mm1(rho), steps=2**17, batches=256, grid=np.linspace(0, 60, 601),
                      warmup=1000, rng=2)
    for q in (0.5, 0.9, 0.99):
        exact = max(0.0, math.log(rho / (1 - q)) / (1 - rho))  # P(W > w) = rho e^{-(1-rho) w}
        iv = res.wait_quantile(q)
        assert abs(iv.value - exact) < 4 * iv.se + 0.05, (q, iv, exact)
    with pytest.raises(ValueError, match="reaches further"):
        rc.simulate(*mm1(rho), steps=2**12, grid=[0.0, 0.5], rng=1).wait_quantile(0.99)
    with pytest.raises(ValueError, match="q must be"):
        res.wait_quantile(1.5)


# -- review fixes ---------------------------------------------------------------------------


def test_a_statistic_that_never_moves_is_not_trusted_and_stops_a_relative_target():
    light = rc.Poisson(0.5, E(1.0))  # 10 servers at load 0.05: nobody waits
    fixed = rc.simulate(rc.JSW(10), light, steps=10_000, rng=1)
    iv = fixed.interval("p_wait")
    assert iv.value == 0.0 and not iv.trusted and "do not vary" in iv.reason
    with pytest.warns(rc.SimulationWarning, match="relative=False"):
        res = rc.simulate(rc.JSW(10), light, precision=0.1, rng=1)
    assert res.precision.stopped_by == "zero" and not res.precision.reached


def test_precision_estimates_are_the_intervals_it_stopped_on():
    res = rc.simulate(*mm1(0.95), precision=0.05, rng=2)  # no warmup="auto"
    for name in ("p_wait", "mean_wait"):
        iv = res.precision.intervals[name]
        assert getattr(res, name).se == pytest.approx(iv.se)
        assert res.interval(name) == iv


@UNTRUSTED  # 1000 arrivals: too short to confirm the intervals, which this test does not use
def test_truncation_counts_the_arrivals_it_dropped():
    res = rc.simulate(*mm1(0.5), steps=1000, w0=[100.0], warmup="auto", rng=1)
    assert res.steps + res.warmup == 1000
    kept = res._sums["p_wait"][1].sum()  # arrivals in the kept batches
    assert kept == res.steps


def test_precision_budget_runs_a_last_stage_at_the_cap_and_refuses_too_few_batches():
    with pytest.warns(rc.SimulationWarning, match="max_steps"):
        res = rc.simulate(*mm1(0.9), precision=0.005, max_steps=3 * 2**16, rng=1)
    assert res.precision.steps == 3 * 2**16
    with pytest.raises(ValueError, match="at least 64 batches"):
        rc.simulate(*mm1(0.5), precision=0.1, batches=8, rng=1)


def test_mser_rarely_cuts_a_run_that_starts_stationary():
    inp = rc.Poisson(0.9, E(1.0))
    flagged, dropped = 0, []
    for seed in range(30):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", rc.SimulationWarning)
            res = rc.simulate(rc.JSW(1), inp, steps=2**16, start="stationary", rng=seed)
            res2 = rc.simulate(rc.JSW(1), inp, steps=2**16, w0=res.final_state[0],
                               warmup="auto", rng=seed + 100)
        flagged += any("no steady part" in str(w.message) for w in caught)
        dropped.append(res2.warmup / 2**16)
    assert flagged <= 3, flagged  # about a third of them before the fix
    assert np.mean(dropped) < 0.15, np.mean(dropped)


def test_precision_mode_same_numbers_for_any_thread_count_and_chunk():
    import numba

    kw = dict(precision=0.1, warmup="auto", replications=2, rng=11)
    a = rc.simulate(rc.JSW(3), rc.Poisson(2.4, E(1.0)), **kw)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = rc.simulate(rc.JSW(3), rc.Poisson(2.4, E(1.0)), **kw, chunk=999)
    finally:
        numba.set_num_threads(old)
    assert a.precision.steps == b.precision.steps and a.warmup == b.warmup
    assert a.mean_wait == b.mean_wait and a.p_wait == b.p_wait
    assert a.interval("mean_wait") == b.interval("mean_wait")


def test_progress_shows_each_stage_its_targets_and_half_widths(capsys):
    pytest.importorskip("tqdm")
    targets = {"p_wait": rc.absolute(0.005), "mean_response": rc.relative(0.02)}
    res = rc.simulate(rc.JSW(3), rc.Poisson(2.0, E(1.0)), precision=targets, rng=1,
                      progress=True)
    err = capsys.readouterr().err.replace("\r", "\n")
    assert "stage 1: p_wait ±0.005, mean_response ±2%" in err
    last = res.precision.stages
    assert last >= 2 and f"stage {last}: p_wait ±" in err
    assert re.search(rf"stage {last}: p_wait ±[0-9.e-]+ → ±0.005, mean_response ±[0-9.]+% → ±2%",
                     err)
