"""Exact FCFS G/G/S samples with the vacation-system bound (coupling/_vacation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

import coupling as cp
import loynes as ly
import recursions as rc
from coupling._vacation import (
    VacationTemplate,
    _empty_queue_candidates,
    _Server,
    _Walk,
    vacation_draw,
)

E = rc.dists.Exponential


def _draws(S, inp, n, seed=3, start_time=None, cap_time=None):
    ps = cp.perfect_sample(rc.JSW(S), inp, n, rng=seed, method="vacation",
                           start_time=start_time, cap_time=cap_time)
    assert ps.method == "vacation"
    return ps.samples, ps.customers_back


@pytest.mark.parametrize(("S", "lam"), [(2, 1.4), (3, 2.4)])
def test_mm_s_against_erlang_c(S, lam):
    x, back = _draws(S, rc.Poisson(lam, E(1.0)), 1500)
    w = x[:, 0]
    pw = ly.erlang_c(S, lam)
    assert abs(np.mean(w > 0) - pw) <= 4 * math.sqrt(pw * (1 - pw) / w.size)
    mean = ly.mm_c_mean_wait(S, lam, 1.0)
    assert abs(w.mean() - mean) <= 4 * w.std(ddof=1) / math.sqrt(w.size)
    # the conditional wait is exponential with rate S mu - lambda (Erlang C)
    cond = w[w > 0]
    assert stats.kstest(cond, "expon", args=(0, 1 / (S - lam))).pvalue > 1e-3
    assert back.min() >= 1


def test_gi_m_s_conditional_wait_law():
    # E2/M/3 at load 0.8: given a wait, W ~ Exp(S mu (1 - omega)), omega = A*(S mu (1 - omega))
    S, lam = 3, 2.4
    inp = rc.Renewal(rc.dists.Erlang(2, 2 * lam), E(1.0))
    x, _ = _draws(S, inp, 1500, seed=4)
    w = x[:, 0]
    omega = optimize.brentq(lambda o: (2 * lam / (2 * lam + S * (1 - o))) ** 2 - o, 1e-12,
                            1 - 1e-12)
    rate = S * (1 - omega)
    cond = w[w > 0]
    assert abs(cond.mean() - 1 / rate) <= 4 * cond.std(ddof=1) / math.sqrt(cond.size)
    assert stats.kstest(cond, "expon", args=(0, 1 / rate)).pvalue > 1e-3
    # and P(wait) against a long forward run
    fwd = rc.simulate(rc.JSW(S), inp, steps=2 * 10**6, warmup=10**4, rng=5)
    se = math.hypot(fwd.p_wait.se, math.sqrt(fwd.p_wait.value * (1 - fwd.p_wait.value) / 1500))
    assert abs(np.mean(w > 0) - fwd.p_wait.value) <= 4.5 * se


def test_md_s_against_forward_run():
    S, lam = 4, 3.4
    inp = rc.Poisson(lam, rc.dists.Deterministic(1.0))
    x, _ = _draws(S, inp, 800, seed=6)
    fwd = rc.simulate(rc.JSW(S), inp, steps=2 * 10**6, warmup=10**4, rng=7)
    tot = x.sum(axis=1)
    se = math.hypot(fwd.mean_workload.se, tot.std(ddof=1) / math.sqrt(tot.size))
    assert abs(tot.mean() - fwd.mean_workload.value) <= 4.5 * se


def test_draws_do_not_depend_on_where_the_search_starts():
    # a closed sandwich gives the stationary state at 0 of the same past, whatever -T
    inp = rc.Poisson(2.7, E(1.0))
    a, ka = _draws(3, inp, 40, seed=8, start_time=6 / 2.7)  # a time: about 6 customers back
    b, kb = _draws(3, inp, 40, seed=8, start_time=200 / 2.7)
    np.testing.assert_array_equal(a, b)
    assert np.all(kb >= 199) and np.any(ka < kb)
    c, _ = _draws(3, inp, 40, seed=8, cap_time=1e4)  # the cap is a time too
    np.testing.assert_array_equal(a, c)


def test_the_vacation_cap_is_a_time():
    with pytest.raises(cp.CouplingNotReached, match="within time 3 back; raise cap_time"):
        _draws(10, rc.Poisson(9.5, E(1.0)), 1, start_time=1.0, cap_time=3.0)


def test_vacation_draw_reports_how_far_back():
    tpl = VacationTemplate(3, rc.Poisson(2.4, E(1.0)))
    w, k, T = vacation_draw(tpl, np.random.default_rng(1), 6, 10**6)
    assert w.shape == (3,) and k >= 6 and T > 0


def test_default_method_scales_with_servers():
    assert cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, E(1.0)), 1).method == \
        "dominated-cyclic"
    ps = cp.perfect_sample(rc.JSW(20), rc.Poisson(19.0, E(1.0)), 3, rng=2)
    assert ps.method == "vacation" and ps.samples.shape == (3, 20)


def test_certified_empty_queue_is_empty_by_brute_force():
    # the certificate says the vacation queue is empty before customer -k; recompute the queue
    # from far further back (the walks' draws do not depend on how far they were drawn)
    S, inp = 4, rc.Poisson(3.6, E(1.0))
    tpl = VacationTemplate(S, inp)
    for seed in range(5):
        gen = np.random.default_rng(seed)
        g_arr, g_srv = gen.spawn(2)
        arr = _Walk(tpl._arrivals.fresh(g_arr), 2)
        servers = []
        for g in g_srv.spawn(S):
            gw, go = g.spawn(2)
            servers.append(_Server(_Walk(tpl._durations.fresh(gw), 1), inp.service, go))
        need, ks = 200, np.empty(0)
        while ks.size == 0:  # as vacation_draw: more of the past until some are certified
            need *= 2
            D = np.cumsum(arr.durations(need))
            for sv in servers:
                sv.reach(float(D[-1]))
            ks = _empty_queue_candidates(D, servers, arr, tpl.a, tpl.b)
        assert need <= 10**5
        far = np.cumsum(arr.durations(40 * need))
        for sv in servers:
            sv.reach(float(far[-1]))
        epochs = np.sort(np.concatenate([sv.backward()[0] for sv in servers]))
        # queue forward in time from empty at the farthest point: Q before each arrival
        events = sorted([(-d, +1) for d in far] + [(-e, -1) for e in epochs if e < far[-1]])
        q, before = 0, {}
        for t, kind in events:
            if kind > 0:
                before[t] = q
                q += 1
            elif q > 0:
                q -= 1
        for k in ks[:20]:
            assert before[-far[k - 1]] == 0, (seed, k)


def test_refusals():
    with pytest.raises(ValueError, match="light tail"):
        VacationTemplate(2, rc.Poisson(1.0, rc.dists.LogNormal(1.0, 2.0)))
    with pytest.raises(ValueError, match="renewal"):
        VacationTemplate(2, rc.Periodic([1.0], [1.0]))
    with pytest.raises(ValueError, match="not stable"):
        VacationTemplate(2, rc.Poisson(2.5, E(1.0)))
