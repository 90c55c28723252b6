"""A run that goes on (``RunHandle.extend``) reports the numbers of one run of its length.

The precision mode (``simulate(precision=...)``) lets the dense and heap engines go on from one
stage to the next instead of retracing the stages before (issue 26's cost target). Going on
must change nothing but the order of the sums: the same arrivals, in the same batches, from the
same streams. The oracle here is a plain ``simulate`` of the final length from the same seed.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

import recursions as rc
import recursions.inference._precision as modes
from recursions.engines._chunk_loop import rebin
from recursions.engines._registry import planned
from recursions.inference._stages import Continued

D = rc.dists

CASES = [  # (system, input, replications): which engine and which draws
    (rc.JSW(3), rc.Poisson(2.7, D.Exponential(1.0)), 2),  # dense, drawn in the kernel
    (rc.JSW(3), rc.Poisson(2.4, D.Erlang(2, rate=2.0)), 1),  # dense, drawn in blocks
    (rc.Map(rc.maps.least_of_d, servers=4, uniforms=1, params=[2.0], monotone=True),
     rc.Poisson(3.0, D.Exponential(1.0)), 1),  # a user's map
    (rc.JSW(40), rc.Poisson(36.0, D.Exponential(1.0)), 2),  # heap, drawn in the kernel
    (rc.JIQ(50), rc.Poisson(40.0, D.Erlang(2, rate=2.0)), 1),  # heap, drawn in blocks
]

STATS = ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "p_all_busy")


def _went_on_and_one(system, inp, nrep, name=None):
    """A run extended over 3 stages, and one run of the final length from the same seed."""
    # 3 stages: 4096 arrivals in 1024 batches of 4, 12288 in 768 of 16, 24576 in 768 of 32
    plan, engine = planned(system, inp, 4096, warmup=300, replications=nrep, batches=1024,
                           rng=3, **({} if name is None else {"engine": name}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        run = engine.start(system, plan)
        run.extend(12288, 768)
        run.extend(24576, 768)
        went_on = run.result(batches=256)
        one = rc.simulate(system, inp, 24576, warmup=300, replications=nrep, batches=256,
                          rng=3, engine=engine.name)
    assert went_on.engine == one.engine == engine.name
    assert went_on.steps == one.steps and went_on.warmup == one.warmup
    np.testing.assert_array_equal(went_on.final_state, one.final_state)
    return went_on, one


def _same_up_to_the_order_of_sums(went_on, one, stats):
    for name in stats:
        a, b = getattr(went_on, name), getattr(one, name)
        assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-15), name
        assert a.se == pytest.approx(b.se, rel=1e-9, abs=1e-15), name
    for name, (num, den) in (one._sums or {}).items():
        num2, den2 = (went_on._sums or {})[name]
        np.testing.assert_allclose(num2, num, rtol=1e-12, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(den2, den, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize(("system", "inp", "nrep"), CASES, ids=lambda x: repr(x)[:30])
def test_a_run_that_goes_on_reports_one_runs_numbers(system, inp, nrep):
    went_on, one = _went_on_and_one(system, inp, nrep)
    _same_up_to_the_order_of_sums(went_on, one, STATS)
    # the histograms count arrivals and snapshots: exactly the same counts
    np.testing.assert_array_equal(went_on.profile(one.grid).value, one.profile(one.grid).value)


def test_rebin_groups_whole_batches_and_refuses_a_straddling_one():
    plan, _ = planned(rc.JSW(1), rc.Poisson(0.5, D.Exponential(1.0)), 10, batches=5)
    a = np.arange(10.0).reshape(1, 5, 2)
    # 10 arrivals in 5 batches of 2 go into 20 arrivals in 5 batches of 4: batches 0-1, 2-3, 4
    out = rebin(a, plan, replace(plan, steps=20, batches=5))
    np.testing.assert_array_equal(out[0, :3], [[2.0, 4.0], [10.0, 12.0], [8.0, 9.0]])
    assert out[0, 3:].sum() == 0 and out.sum() == a.sum()
    with pytest.raises(ValueError, match="do not nest"):
        rebin(a, plan, replace(plan, steps=15, batches=5))  # batches of 3 cut those of 2


def test_precision_mode_goes_on_instead_of_retracing():
    system, inp = rc.JSW(1), rc.Poisson(0.9, D.Exponential(1.0))
    res = rc.simulate(system, inp, precision=0.1, rng=3)
    rep = res.precision
    assert rep.reached and rep.stages >= 2
    assert rep.steps_used == rep.steps  # every arrival simulated once (no warm-up asked)
    # the last stage is one run of its length from the same seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        one = rc.simulate(system, inp, rep.steps, batches=modes.BASE_BATCHES, rng=3)
    for name in ("p_wait", "mean_wait"):
        num, den = one._sums[name]
        np.testing.assert_allclose(res._sums[name][0], num, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(res._sums[name][1], den, rtol=1e-12, atol=1e-12)


QUEUE_CASES = [  # (system, input, replications, engine): the queue-length engines go on too
    (rc.JSQ(4), rc.Poisson(3.0, D.Exponential(1.0)), 2, "counts"),
    (rc.JSQ(4), rc.Poisson(3.0, D.Exponential(1.0)), 1, "queues"),
    (rc.zerowait.I1F(20, buffer=3), rc.Poisson(17.0, D.Coxian.normalised([1.0, 1.0], [0.5])),
     1, "counts"),
    (rc.zerowait.PowerOfD(30, 2), rc.Poisson(27.0, D.LogNormal(1.0, 0.5)), 2, "queues"),
]
QUEUE_STATS = ("p_wait", "mean_wait", "busy_fraction", "p_all_busy", "mean_jobs")


@pytest.mark.parametrize(("system", "inp", "nrep", "name"), QUEUE_CASES,
                         ids=lambda x: repr(x)[:30])
def test_a_queue_length_run_that_goes_on_reports_one_runs_numbers(system, inp, nrep, name):
    # a kernel pauses before the arrival it was asked to stop at and takes it up next call:
    # the same events, the same batches, up to the order of the batch sums
    went_on, one = _went_on_and_one(system, inp, nrep, name)
    _same_up_to_the_order_of_sums(went_on, one, QUEUE_STATS)


def test_a_queue_length_run_in_chunks_is_one_run_bit_for_bit():
    # a time horizon runs in chunks of plan.chunk arrivals: any chunk gives the same numbers
    system, inp = rc.JSQ(6, buffer=4), rc.Poisson(5.4, D.Erlang(2, rate=2.0))
    for name in ("counts", "queues"):
        runs = []
        for chunk in (97, 1 << 15):
            plan, engine = planned(system, inp, None, time=400.0, warmup=1000, replications=2,
                                   rng=5, engine=name, chunk=chunk)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", rc.SimulationWarning)
                runs.append(engine.run(system, plan))
        a, b = runs
        assert a.steps == b.steps > 0
        np.testing.assert_array_equal(a.final_state, b.final_state)
        for stat, (num, den) in (a._sums or {}).items():
            np.testing.assert_array_equal(num, (b._sums or {})[stat][0], err_msg=stat)
            np.testing.assert_array_equal(den, (b._sums or {})[stat][1], err_msg=stat)


def test_the_queue_length_engines_go_on_in_precision_mode():
    res = rc.simulate(rc.zerowait.JSQ(4), rc.Poisson(3.0, D.Exponential(1.0)), precision=0.05,
                      statistics=["mean_wait"], rng=1)
    rep = res.precision
    assert rep.reached and rep.stages >= 2 and rep.steps_used == rep.steps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        one = rc.simulate(rc.zerowait.JSQ(4), rc.Poisson(3.0, D.Exponential(1.0)), rep.steps,
                          batches=modes.BASE_BATCHES, rng=1)
    num, den = one._sums["mean_wait"]
    np.testing.assert_allclose(res._sums["mean_wait"][0], num, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res._sums["mean_wait"][1], den, rtol=1e-12, atol=1e-12)


def test_a_run_that_records_its_path_retraces_its_stages():
    res = _quiet(rc.JSW(1), rc.Poisson(0.9, D.Exponential(1.0)), precision=0.1, rng=3,
                 record=True)
    rep = res.precision
    assert rep.stages >= 2 and rep.steps_used > rep.steps


@pytest.mark.parametrize("micro", [16, 5, 1])
def test_stage_lengths_nest_round_up_little_and_keep_the_cap(micro):
    base = modes.BASE_BATCHES
    stages = Continued(None, None, None, base, micro)
    rng = np.random.default_rng(7)
    for _ in range(200):
        cap = int(rng.integers(base, 10**9))
        n = stages.first(int(rng.integers(base, 10**6)), cap)
        g = stages.g
        assert n % (base * g) == 0 and base * g <= n <= base * g * micro and n <= cap
        for _ in range(6):
            target = n * float(rng.uniform(1.25, 16.0))
            nxt = stages.next(n, target, cap)
            g2 = stages.g_next
            ratio = g2 // g
            assert g2 % g == 0 and ratio & (ratio - 1) == 0  # a power-of-two multiple
            if nxt == n:  # nothing longer fits under the cap
                assert cap - n < base * g2
                break
            assert nxt % (base * g2) == 0 and nxt // (base * g2) <= micro and nxt <= cap
            if target <= cap:
                assert nxt >= target or cap - nxt < base * g2  # short of it only at the cap
                if g2 > g and micro >= 8:
                    assert nxt < target * (1 + 2 / micro) + 1
            stages.g = g2
            n, g = nxt, g2
            assert math.isfinite(n)


# -- the options of simulate that stages which go on must honour ------------------------------

MM2 = (rc.JSW(2), rc.Poisson(1.6, D.Exponential(1.0)))


def _quiet(*args, **kwargs) -> rc.SimulationResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        return rc.simulate(*args, **kwargs)


def test_a_given_start_goes_on_from_it():
    w0 = np.array([[3.0, 5.0]])
    res = _quiet(*MM2, precision=0.1, rng=3, w0=w0)
    rep = res.precision
    assert res.start == "given" and rep.stages >= 2 and rep.steps_used == rep.steps
    one = _quiet(*MM2, rep.steps, batches=modes.BASE_BATCHES, rng=3, w0=w0)
    for name in ("p_wait", "mean_wait"):
        np.testing.assert_allclose(res._sums[name][0], one._sums[name][0], rtol=1e-12)
        np.testing.assert_allclose(res._sums[name][1], one._sums[name][1], rtol=1e-12)


def test_auto_warmup_cuts_whole_batches_of_the_run_that_went_on():
    # from far above the stationary level MSER cuts the transient: the stages went on, and
    # what is kept is the last stage's run without its first batches
    w0 = np.array([[60.0, 80.0]])
    res = _quiet(*MM2, precision=0.1, rng=3, warmup="auto", w0=w0)
    rep = res.precision
    assert rep.stages >= 2 and rep.steps_used == rep.steps and res.warmup > 0
    assert res.warmup + res.steps == rep.steps and res.warmup_rule == "mser"
    one = _quiet(*MM2, rep.steps, batches=modes.BASE_BATCHES, rng=3, w0=w0)
    for name in ("p_wait", "mean_wait"):
        num, den = res._sums[name]
        cut = one._sums[name][0].shape[-1] - num.shape[-1]
        assert cut * rep.steps // modes.BASE_BATCHES == res.warmup
        np.testing.assert_allclose(num, one._sums[name][0][..., cut:], rtol=1e-12)
        np.testing.assert_allclose(den, one._sums[name][1][..., cut:], rtol=1e-12)


def test_exact_starts_go_on_and_keep_their_replication_interval():
    import coupling  # noqa: F401  (registers the exact samplers)

    res = _quiet(*MM2, precision=0.1, rng=3, start="stationary", replications=4)
    rep = res.precision
    assert res.start == "stationary" and res.warmup == 0
    assert rep.steps_used == rep.steps * 4
    assert res.replication_interval["mean_wait"].batches == 4


def test_a_progress_bar_changes_no_number(capsys):
    plain = _quiet(*MM2, precision=0.1, rng=3)
    shown = _quiet(*MM2, precision=0.1, rng=3, progress=True)
    assert shown.precision.steps == plain.precision.steps
    for name in ("p_wait", "mean_wait"):
        np.testing.assert_array_equal(shown._sums[name][0], plain._sums[name][0])
    capsys.readouterr()


def test_a_reference_profile_is_compared_at_the_end_and_changes_no_number():
    import loynes as ly

    system, inp = rc.JIQ(40), rc.Poisson(32.0, D.Exponential(1.0))  # heap engine
    eq = ly.jiq_equilibrium(0.8, D.Exponential(1.0))
    plain = _quiet(system, inp, precision=0.005, statistics=["mean_workload"], rng=3,
                   warmup=2000)
    ref = _quiet(system, inp, precision=0.005, statistics=["mean_workload"], rng=3,
                 warmup=2000, reference=eq)
    assert plain.precision.stages >= 2 and ref.precision.steps == plain.precision.steps
    np.testing.assert_array_equal(ref._sums["mean_workload"][0],
                                  plain._sums["mean_workload"][0])
    assert plain.sup_error is None and ref.sup_error is not None
    assert 0.0 <= ref.sup_error.value < 0.2
