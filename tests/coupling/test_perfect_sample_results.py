"""What perfect_sample returns besides the draws: per-draw costs, estimates, parallel draws.

The estimates are checked against values computed independently of the samplers (Erlang B
and C, the M/M/c mean wait and mean number in system, a renewal-reward loss fraction), the
standard errors against the naive formula on the returned samples, the per-draw costs
against a re-run of the very window each draw used, and the draws of worker processes
against those of this process.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from scipy import stats

import coupling as cp
import loynes as ly
import recursions as rc
from coupling._perfect_result import found_at_zero

D = rc.dists
Z = 4.0


def _within(est, exact):
    assert est.se > 0, est
    assert abs(est.value - exact) <= Z * est.se, (est, exact)


def _naive(x):
    x = np.asarray(x, dtype=np.float64)
    return x.mean(), x.std(ddof=1) / math.sqrt(x.size)


@pytest.mark.parametrize(("servers", "lam", "size", "seed"),
                         [(2, 1.2, 1500, 21), (3, 2.1, 1200, 22)], ids=["M/M/2", "M/M/3"])
def test_mmc_estimates_match_closed_forms(servers, lam, size, seed):
    ps = cp.perfect_sample(rc.JSW(servers), rc.Poisson(lam, D.Exponential(1.0)), size,
                           rng=seed)
    a = lam  # offered load, mu = 1
    wq = ly.mm_c_mean_wait(servers, lam, 1.0)
    _within(ps.p_wait, ly.erlang_c(servers, a))
    _within(ps.mean_wait, wq)
    # busy servers seen by an arrival (PASTA): mean a; the workload vector sums the work
    # in system, and each customer there holds Exp(1) work: E[V] = E[N] = lam Wq + a
    _within(ps.busy_fraction, a / servers)
    _within(ps.mean_workload, lam * wq + a)
    assert ps.p_loss is None
    assert ps.p_all_busy == ps.p_wait


def test_loss_estimates_match_erlang_b():
    servers, lam = 3, 2.0
    ps = cp.perfect_sample(rc.Loss(servers), rc.Poisson(lam, D.Exponential(1.0)), 2000, rng=23)
    assert ps.method == "renovation"
    b = ly.erlang_b(servers, lam)
    _within(ps.p_loss, b)
    _within(ps.busy_fraction, lam * (1 - b) / servers)  # carried load over servers
    assert ps.p_wait is None and ps.mean_wait is None  # as in SimulationResult


def test_bounded_renovation_matches_renewal_reward():
    # GI/D/1/1 (Erlang-2 arrivals, service 1): after an accepted arrival the N(1) arrivals
    # within time 1 are lost, N the renewal count of Erlang-2 gaps: floor(M / 2) with
    # M ~ Poisson(rate 2 x time 1) phases. Lost fraction E[N] / (1 + E[N]).
    inp = rc.Renewal(D.Erlang(2, 2.0), D.Deterministic(1.0))
    ps = cp.perfect_sample(rc.Loss(1), inp, 2000, rng=24)
    assert ps.method == "renovation"
    m = np.arange(200)
    en = float((m // 2 * stats.poisson.pmf(m, 2.0)).sum())
    _within(ps.p_loss, en / (1 + en))


CASES = {
    "dominated-cyclic": (rc.JSW(2), rc.Poisson(1.2, D.Exponential(1.0)), {}),
    "dominated-walk": (rc.JSW(2), rc.Renewal(D.Erlang(2, 2.4), D.Exponential(1.0)),
                       {"method": "dominated-walk"}),
    "dominated": (rc.JSW(3), rc.Poisson(2.1, D.LogNormal(1.0, 1.0)), {"method": "dominated"}),
    "map-dominated": (rc.Map(rc.maps.jsw, servers=2, monotone=True),
                      rc.Poisson(1.2, D.Exponential(1.0)),
                      {"dominated_by": rc.JSW(2), "dominance_trials": 500}),
    "renovation-poisson": (rc.Loss(2), rc.Poisson(1.5, D.Exponential(1.0)), {}),
    "renovation-bounded": (rc.Loss(2), rc.Renewal(D.Erlang(2, 2.0), D.Uniform(0.0, 2.0)), {}),
    "monotone": (rc.Envelope(rc.Loss(2)), rc.Poisson(1.5, D.Uniform(0.0, 2.0)), {}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_standard_errors_are_the_naive_formula(name):
    system, inp, kw = CASES[name]
    ps = cp.perfect_sample(system, inp, 60, rng=25, **kw)
    w = ps.samples
    stats_ = {"p_all_busy": w[:, 0] > 0, "mean_workload": w.sum(axis=1),
              "busy_fraction": (w > 0).mean(axis=1)}
    if system.has_loss:
        stats_["p_loss"] = w[:, 0] > 0
    else:
        stats_.update(p_wait=w[:, 0] > 0, mean_wait=w[:, 0])
    for attr, x in stats_.items():
        est = getattr(ps, attr)
        np.testing.assert_allclose((est.value, est.se), _naive(x), rtol=1e-12, err_msg=attr)
    levels = np.array([[0.0, 0.5], [1.0, 3.0]])
    prof = ps.profile(levels)
    assert prof.value.shape == prof.se.shape == levels.shape
    for idx in np.ndindex(levels.shape):
        want = _naive((w > levels[idx]).mean(axis=1))
        np.testing.assert_allclose((prof.value[idx], prof.se[idx]), want, rtol=1e-12)
    scalar = ps.profile(0.5)
    assert isinstance(scalar.value, float) and isinstance(scalar.se, float)
    np.testing.assert_allclose((scalar.value, scalar.se), _naive((w > 0.5).mean(axis=1)),
                               rtol=1e-12)


def test_one_draw_has_no_standard_error_and_profile_refuses_nan():
    ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.2, D.Exponential(1.0)), 1, rng=3)
    assert ps.mean_workload.value == pytest.approx(ps.samples.sum())
    assert math.isnan(ps.mean_workload.se) and math.isnan(ps.p_wait.se)
    with pytest.raises(ValueError, match="finite"):
        ps.profile([0.0, math.nan])


@pytest.mark.parametrize("name", list(CASES))
def test_per_draw_costs_are_present_and_positive(name):
    system, inp, kw = CASES[name]
    size = 40
    ps = cp.perfect_sample(system, inp, size, rng=26, **kw)
    assert ps.customers_back.shape == ps.time_back.shape == ps.seconds.shape == (size,)
    assert ps.customers_back.dtype == np.int64
    assert np.all(np.isfinite(ps.seconds)) and np.all(ps.seconds > 0)
    assert np.all(np.isfinite(ps.time_back)) and np.all(ps.time_back >= 0)
    if name == "renovation-poisson":
        # the M/G/infinity bound may be empty at 0: then nobody is used, and the state is 0
        assert np.all(ps.customers_back >= 0)
        empty = ps.customers_back == 0
        np.testing.assert_array_equal(empty, ps.time_back == 0)
        assert not ps.samples[empty].any() and (~empty).any()
    else:
        assert np.all(ps.customers_back >= 1) and np.all(ps.time_back > 0)
    # the former names stay
    assert ps.steps is ps.customers_back
    assert ps.mean_steps == pytest.approx(ps.customers_back.mean())


def test_dominated_time_back_is_where_the_search_started():
    # the sandwich starts at or before -start; a later start moves every draw back
    system, inp, kw = CASES["dominated"]
    near = cp.perfect_sample(system, inp, 30, rng=27, start_time=0.5, **kw)
    far = cp.perfect_sample(system, inp, 30, rng=27, start_time=50.0, **kw)
    assert np.all(near.time_back >= 0.5) and np.all(far.time_back >= 50.0)
    assert far.customers_back.sum() > near.customers_back.sum()
    np.testing.assert_allclose(near.samples, far.samples, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["renovation-bounded", "monotone"])
def test_customer_indexed_costs_name_the_window_used(name):
    # run the map from empty over the last customers_back customers of draw k's own
    # backward stream: that is the draw, and their interarrival times add up to time_back
    system, inp, kw = CASES[name]
    size = 25
    ps = cp.perfect_sample(system, inp, size, rng=28, **kw)
    seeds = np.random.SeedSequence(28).spawn(size)
    for k, sd in enumerate(seeds):
        n = int(ps.customers_back[k])
        sig, tau, u = rc.BackwardDraws(system, inp, rng=sd).window(n)
        w = rc.iterate(system, np.zeros(system.servers), sig, tau, u)
        np.testing.assert_allclose(w, ps.samples[k], rtol=1e-12, atol=1e-12)
        assert ps.time_back[k] == pytest.approx(tau.sum(), rel=1e-12)
    if name == "monotone":  # doubling horizons from 16 on
        assert set(ps.customers_back.tolist()) <= {16 * 2**j for j in range(20)}


def test_a_sample_built_without_costs_reads_nan():
    # the positional signature PerfectSample(samples, steps, method, system, input) stays
    w = np.array([[0.0, 1.0], [0.5, 2.0], [0.0, 0.0]])
    ps = cp.PerfectSample(w, [3, 4, 5], "bounding", "sys", "inp")
    assert np.isnan(ps.time_back).all() and np.isnan(ps.seconds).all()
    np.testing.assert_array_equal(ps.steps, [3, 4, 5])
    assert ps.p_all_busy.value == pytest.approx(1 / 3) and ps.p_loss is None
    assert ps.p_wait is None and ps.mean_wait is None  # no found: what a customer joins
    assert ps.busy_fraction.value == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("name", "workers"),
    [("dominated-walk", 2), ("map-dominated", None), ("renovation-bounded", 2)],
)
def test_workers_give_the_draws_of_this_process(name, workers, capsys):
    system, inp, kw = CASES[name]
    one = cp.perfect_sample(system, inp, 24, rng=29, **kw)
    many = cp.perfect_sample(system, inp, 24, rng=29, workers=workers, progress=True, **kw)
    np.testing.assert_array_equal(one.samples, many.samples)
    np.testing.assert_array_equal(one.customers_back, many.customers_back)
    np.testing.assert_array_equal(one.time_back, many.time_back)
    assert np.all(many.seconds > 0)
    assert one.p_all_busy == many.p_all_busy and one.method == many.method
    err = capsys.readouterr().err
    assert "perfect_sample" in err and "24/24" in err  # the bar counted every draw


def test_a_failed_draw_in_a_worker_raises_its_error():
    with pytest.raises(cp.CouplingNotReached, match="raise cap_time"):
        cp.perfect_sample(rc.JSW(10), rc.Poisson(9.8, D.Exponential(1.0)), 4, rng=1,
                          start_time=0.1, cap_time=0.2, method="dominated", workers=2)


def test_progress_bar_in_this_process(capsys):
    cp.perfect_sample(rc.Loss(2), rc.Poisson(1.5, D.Exponential(1.0)), 7, rng=1,
                      progress=True)
    err = capsys.readouterr().err
    assert "perfect_sample" in err and "7/7" in err
    cp.perfect_sample(rc.Loss(2), rc.Poisson(1.5, D.Exponential(1.0)), 7, rng=1)
    assert capsys.readouterr().err == ""  # no bar unless asked


def test_progress_without_tqdm_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.raises(ImportError, match="pip install tqdm"):
        cp.perfect_sample(rc.Loss(2), rc.Poisson(1.5, D.Exponential(1.0)), 3, progress=True)


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_bad_workers_are_refused(workers):
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        cp.perfect_sample(rc.Loss(2), rc.Poisson(1.5, D.Exponential(1.0)), 3,
                          workers=workers)


def test_bad_progress_is_refused():
    with pytest.raises(TypeError, match="progress must be True or False"):
        cp.perfect_sample(rc.Loss(2), rc.Poisson(1.5, D.Exponential(1.0)), 3, progress="yes")


def test_no_pool_for_one_draw_or_one_worker(monkeypatch):
    import coupling._perfect as perfect

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(perfect, "_in_processes", no_pool)
    inp = rc.Poisson(1.5, D.Exponential(1.0))
    ref = cp.perfect_sample(rc.Loss(2), inp, 1, rng=2)
    for workers in (8, None):  # never more workers than draws
        ps = cp.perfect_sample(rc.Loss(2), inp, 1, rng=2, workers=workers)
        np.testing.assert_array_equal(ps.samples, ref.samples)
    with pytest.raises(AssertionError, match="pool"):  # the patch does catch a pool
        cp.perfect_sample(rc.Loss(2), inp, 2, rng=2, workers=2)


def test_found_needs_an_exact_service_time_for_a_map_of_your_own():
    # a user step may route by size; under periodic input the service at 0 depends on the past
    w = np.array([[0.0, 1.0], [0.5, 2.0]])
    periodic = rc.Periodic([1.0, 2.0], [1.5, 1.5])
    mine = rc.Map(rc.maps.jsw, servers=2)
    seeds = np.random.SeedSequence(1).spawn(2)
    assert found_at_zero(mine, periodic, w, seeds) is None
    assert found_at_zero(rc.Loss(2), periodic, w, seeds) is None
    # a built-in map joins by state alone: any input will do
    found = found_at_zero(rc.JSW(2), periodic, w, seeds)
    np.testing.assert_array_equal(found, w[:, 0])


class _SizeRouted(rc.JIQ):
    """JIQ declaring that its step may read the service time: ``found`` then draws one."""

    joins_by_state = False


def test_found_draws_the_arrivals_service_where_the_map_may_route_by_size():
    from coupling._perfect_result import ARRIVAL as _ARRIVAL
    from coupling._perfect_result import found_at_zero
    from recursions.common import child
    from tests import naive

    w = np.array([[0.5, 1.0, 2.0], [0.0, 1.0, 2.0], [1.0, 2.0, 3.0]])
    seeds = np.random.SeedSequence(4).spawn(3)
    inp = rc.Poisson(0.9, rc.dists.Exponential(1.0))
    found = found_at_zero(_SizeRouted(3), inp, w, seeds)
    for k, sd in enumerate(seeds):  # the service first, then the routing uniform
        gen = np.random.default_rng(child(sd, _ARRIVAL))
        sigma = float(inp.service.sample(gen, 1)[0])
        assert found[k] == naive.jiq(list(w[k]), sigma, 0.0, gen.random())[1]
    periodic = rc.Periodic([1.0, 2.0], [1.5, 1.5])
    assert found_at_zero(_SizeRouted(3), periodic, w, seeds) is None
    assert found_at_zero(rc.JIQ(3), periodic, w, seeds) is not None
    assert not rc.Envelope(rc.Map(rc.maps.jsw, servers=2, monotone=True)).joins_by_state
    assert rc.Envelope(rc.JpSW(3, 1)).joins_by_state


def test_methods_are_an_ordered_registry_whose_refusals_are_named():
    from coupling._exact_methods import METHODS
    from coupling._fcfs_bounds import PROCESSES

    assert [m.name for m in METHODS] == ["FCFS", "renovation", "monotone", "bounding"]
    assert [p.name for p in PROCESSES] == ["vacation", "dominated-cyclic", "dominated-walk",
                                           "dominated"]
    with pytest.raises(ValueError, match=r"no exact method.*renovation: not a loss system"):
        cp.perfect_sample(rc.RandomRouting(2), rc.Poisson(0.5, D.Exponential(1.0)), 1)
