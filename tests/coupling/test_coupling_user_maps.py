"""Every coupling tool takes a user's map (rc.Map): checks, strategies, coupling times, CFTP.

The step functions live at module level so that numba's on-disk cache (and the cache of the
generated drivers) can be used; there are few of them, since each compiles its drivers once.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from scipy import stats

import coupling as cp
import loynes as ly
import recursions as rc
from coupling import _monotone as mono
from recursions.common import as_seed_sequence, child, forward_generator
from recursions.common.codes import LOST
from recursions.engines import drivers_of
from recursions.vectors import add_at_rank, drain

D = rc.dists
Z = 4.0


@numba.njit(cache=True)
def thinned_faster_jsw(w, sigma, tau, u, params):
    """JSW with service times scaled by ``params[0]``, each customer lost w.p. ``params[1]``.

    Monotone (the loss is exogenous) and, for ``params[0] <= 1``, dominated by JSW: adding
    less, or nothing, to the least workload gives less. With Poisson input it is M/M/S with
    service rate ``mu / params[0]`` and arrival rate ``lam (1 - params[1])``.
    """
    found = LOST
    if u[0] >= params[1]:
        found = add_at_rank(w, 0, w.size, 0, sigma * params[0])
    drain(w, tau)
    return found


@numba.njit(cache=True)
def two_pools(w, sigma, tau, u, params):
    """Two pools of servers, w[:h] and w[h:], each sorted (``blocks=[h, S - h]``).

    A customer goes to the first pool w.p. ``params[0]`` (exogenous), where its work takes
    ``sigma / speed`` (speeds ``params[1]``, ``params[2]``) and it joins rank ``params[3]``
    of the pool when the pool has no idle server (rank 0 otherwise): ``params[3] = 0`` is JSW
    in each pool, monotone; ``params[3] = 1`` is J_2SW in each pool, not monotone.
    """
    h = w.size // 2
    if u[0] < params[0]:
        lo, hi, speed = 0, h, params[1]
    else:
        lo, hi, speed = h, w.size, params[2]
    r = lo if w[lo] == 0.0 else lo + int(params[3])
    found = add_at_rank(w, lo, hi, r, sigma / speed)
    drain(w, tau)
    return found


def user_jsw(S):
    return rc.Map(rc.maps.jsw, servers=S, monotone=True, name="user JSW")


def user_jpsw(S, p):
    return rc.Map(rc.maps.jpsw, servers=S, params=[float(p)], name=f"user J{p + 1}SW")


def faster(S, c):
    return rc.Map(thinned_faster_jsw, servers=S, uniforms=1, params=[c, 0.0], monotone=True,
                  loss=True, name=f"JSW, service x {c}")  # the same step can lose (q > 0)


def thinned(S, q):
    return rc.Map(thinned_faster_jsw, servers=S, uniforms=1, params=[1.0, q], monotone=True,
                  loss=True, name=f"JSW, lost w.p. {q}")


def pools(speed_a=2.0, speed_b=1.0, rank=0):
    return rc.Map(two_pools, servers=4, uniforms=1, params=[0.5, speed_a, speed_b, rank],
                  blocks=[2, 2], monotone=rank == 0,
                  name=f"two pools (speeds {speed_a}, {speed_b}; rank {rank})")


def user_random(S):
    return rc.Map(rc.maps.random_routing, servers=S, uniforms=1, monotone=True,
                  name="user random routing")


POOLS = pools()
POOLS_J2 = pools(rank=1)
JSW3 = user_jsw(3)


def _recheck(upper, lower, cx):
    """The counterexample is genuine: valid ordered states, and the images really cross."""
    u = lower.check_state(cx.u)
    v = upper.check_state(cx.v)
    assert np.all(u <= v)
    assert cx.uniforms.size == max(upper.uniforms, lower.uniforms)

    def lead(system):  # each map gets the leading uniforms it declares
        return cx.uniforms[: system.uniforms] if system.uniforms else None

    su = lower.step(u, cx.sigma, cx.tau, lead(lower))
    sv = upper.step(v, cx.sigma, cx.tau, lead(upper))
    np.testing.assert_array_equal(su, cx.step_u)
    np.testing.assert_array_equal(sv, cx.step_v)
    i = cx.coordinate
    assert su[i] > sv[i] + mono.TOL
    assert np.all(su[:i] <= sv[:i] + mono.TOL)


# -- property tests with the shipped strategies ------------------------------------------------


@settings(deadline=None, max_examples=300)
@given(cp.strategies.pairs_for(POOLS), cp.strategies.innovations_for(POOLS))
def test_property_two_pool_map_is_monotone(pair, innovation):
    cp.assert_monotone(POOLS, pair, innovation)


@settings(deadline=None, max_examples=200)
@given(cp.strategies.pairs_for(JSW3), cp.strategies.innovations_for(JSW3))
def test_property_user_jsw_is_monotone(pair, innovation):
    cp.assert_monotone(JSW3, pair, innovation)


@settings(deadline=None, max_examples=100)
@given(st.data())
def test_strategies_give_valid_states_of_a_two_block_map(data):
    w = data.draw(cp.strategies.states_for(POOLS))
    POOLS.check_state(w)
    u, v = data.draw(cp.strategies.pairs_for(POOLS))
    POOLS.check_state(u)
    POOLS.check_state(v)
    assert np.all(u <= v)
    sigma, tau, uni = data.draw(cp.strategies.innovations_for(POOLS))
    assert uni.size == 1 and 0 <= uni[0] < 1 and sigma >= 0 and tau >= 0


def test_strategies_treat_blocks_separately():
    """States and pairs of a two-block map need not be sorted as one vector."""
    cfg = settings(database=None, max_examples=2000)
    w = find(cp.strategies.states_for(POOLS), lambda w: w[1] > w[2], settings=cfg)
    POOLS.check_state(w)
    u, v = find(cp.strategies.pairs_for(POOLS), lambda p: p[0][1] > p[0][2] and p[1][1] > p[1][2]
                and (p[0] < p[1]).any(), settings=cfg)
    assert np.all(u <= v)
    with pytest.raises(ValueError, match="sorted"):
        rc.JSW(4).check_state(v)


def test_strategies_find_the_counterexample_of_a_two_block_map():
    def violates(case):
        try:
            cp.assert_monotone(POOLS_J2, *case)
        except AssertionError:
            return True
        return False

    pair, _ = find(st.tuples(cp.strategies.pairs_for(POOLS_J2),
                               cp.strategies.innovations_for(POOLS_J2)), violates,
                     settings=settings(database=None, max_examples=3000))
    POOLS_J2.check_state(pair[0])
    POOLS_J2.check_state(pair[1])


def test_ordered_pairs_blocks_argument():
    cfg = settings(database=None, max_examples=500)
    u, v = find(cp.strategies.ordered_pairs(5, split=1, blocks=[2, 2]),
                lambda p: p[1][2] > p[1][3], settings=cfg)
    assert u[0] == v[0] and np.all(u <= v)
    assert u[1] <= u[2] and u[3] <= u[4] and v[1] <= v[2] and v[3] <= v[4]
    with pytest.raises(ValueError, match="blocks"):
        cp.strategies.ordered_pairs(4, blocks=[2, 1])
    with pytest.raises(ValueError, match="blocks"):
        cp.strategies.sorted_workloads(3, blocks=[1, 1])
    with pytest.raises(TypeError, match="blocks"):
        cp.strategies.sorted_workloads(3, blocks=3)


# -- compiled searches: check_monotone -------------------------------------------------------


def test_check_monotone_finds_the_jpsw_counterexample_of_a_user_map():
    system = user_jpsw(3, 1)
    rep = cp.check_monotone(system, trials=3000)
    assert not rep.monotone
    cx = rep.counterexample
    # the worked example of docs/theory/kiefer_wolfowitz.md, as for the built-in J_2SW
    assert cx.u.tolist() == [0.0, 1.0, 1.0] and cx.v.tolist() == [0.001, 1.0, 1.0]
    assert (cx.sigma, cx.tau) == (5.0, 0.0)
    assert cx.step_u.tolist() == [1.0, 1.0, 5.0] and cx.step_v.tolist() == [0.001, 1.0, 6.0]
    _recheck(system, system, cx)
    builtin = cp.check_monotone(rc.JpSW(3, 1), trials=3000).counterexample
    assert builtin.u.tolist() == cx.u.tolist() and builtin.v.tolist() == cx.v.tolist()


@pytest.mark.parametrize("system", [user_jsw(4), POOLS, faster(3, 0.5), thinned(3, 0.3)],
                         ids=repr)
def test_check_monotone_finds_none_for_monotone_user_maps(system):
    rep = cp.check_monotone(system, trials=20_000)
    assert rep.monotone, str(rep)
    assert rep.trials == 20_000


def test_check_monotone_refutes_a_two_block_map_within_its_blocks():
    rep = cp.check_monotone(POOLS_J2, trials=5000)
    assert not rep.monotone
    _recheck(POOLS_J2, POOLS_J2, rep.counterexample)


def test_random_cases_use_the_blocks():
    gen = np.random.default_rng(4)
    _, blocks = mono.layout(POOLS)
    u, v, sig, tau, uni = mono._cases(gen, 4000, 4, 0, 1, blocks)
    for x in (u, v):
        assert np.all(np.diff(x[:, :2], axis=1) >= 0) and np.all(np.diff(x[:, 2:], axis=1) >= 0)
    assert np.all(u <= v)
    assert (u[:, 1] > u[:, 2]).mean() > 0.1  # not sorted as one vector
    # a coarser upper layout: v sorted as one vector, u only within its blocks
    u, v, *_ = mono._cases(gen, 4000, 4, 0, 1, blocks, ((0, 4),))
    assert np.all(np.diff(v, axis=1) >= 0) and np.all(u <= v)
    assert (u[:, 1] > u[:, 2]).mean() > 0.1
    # the random cases alone refute J_2SW within the pools
    u, v, sig, tau, uni = mono._cases(gen, 4000, 4, 0, 1, blocks)
    a, b, found = u.copy(), v.copy(), np.empty(len(u))
    k = drivers_of(POOLS_J2)
    k.apply_rows(POOLS_J2.params, a, sig, tau, np.ascontiguousarray(uni),
                 found)
    k.apply_rows(POOLS_J2.params, b, sig, tau, np.ascontiguousarray(uni),
                 found)
    assert np.any(a > b + mono.TOL)


def test_fixed_cases_kept_for_builtins_and_laid_out_in_blocks():
    u, v, *_ = mono._fixed_cases(3, 0, 0)
    assert u.shape == (5, 3) and u[0].tolist() == [0.0, 1.0, 1.0]
    u, v, *_ = mono._fixed_cases(4, 0, 1, ((0, 2), (2, 4)))
    assert u.shape == (10, 4)
    assert [0.0, 1.0, 0.0, 1.0] in u.tolist() and [0.001, 1.0, 0.001, 1.0] in v.tolist()
    fixed = mono._fixed_cases(4, 0, 1, ((0, 2), (2, 4)))
    # against a one-block system only the examples sorted as one vector are valid states
    kept = mono._valid_fixed(fixed, 0, ((0, 2), (2, 4)), ((0, 4),))
    assert np.all(np.diff(kept[1], axis=1) >= 0)
    assert [0.001, 1.0, 0.001, 1.0] not in kept[1].tolist()
    assert kept[0].shape[0] == 6  # the five examples over the whole vector, and 0 = 0 again


# -- compiled searches: check_dominates --------------------------------------------------------

DOMINATES = [
    (rc.JSW(3), faster(3, 0.5)),  # 0 against 1 uniform
    (rc.JSW(3), thinned(3, 0.3)),
    (rc.Envelope(rc.JpSW(3, 1)), user_jpsw(3, 1)),
    (rc.Envelope(rc.JpSW(4, 2)), user_jpsw(4, 2)),
    (user_jsw(3), rc.Loss(3)),  # the user's map as the bound
    (user_jsw(3), rc.JSW(3)),
    (rc.JSW(3), user_jsw(3)),
    (user_random(3), rc.RandomRouting(3)),  # the same leading uniform drives both
    (rc.RandomRouting(3), user_random(3)),
    (pools(1.0, 1.0), pools(2.0, 1.0)),  # two blocks: slower pools dominate
]
NOT_DOMINATES = [
    (faster(3, 0.5), rc.JSW(3)),
    (thinned(3, 0.3), rc.JSW(3)),
    (user_jpsw(3, 1), rc.Envelope(rc.JpSW(3, 1))),
    (rc.JSW(3), user_jpsw(3, 1)),
    (user_random(3), rc.JSW(3)),
    (pools(2.0, 1.0), pools(1.0, 1.0)),
    (rc.JSW(4), POOLS),  # nested layouts: one block against two
    (POOLS, rc.JSW(4)),
]


@pytest.mark.parametrize(("upper", "lower"), DOMINATES, ids=repr)
def test_dominance_holds_with_user_maps(upper, lower):
    rep = cp.check_dominates(upper, lower, trials=10_000)
    assert rep.dominates, str(rep)
    assert rep.trials == 10_000


@pytest.mark.parametrize(("upper", "lower"), NOT_DOMINATES, ids=repr)
def test_dominance_fails_with_user_maps(upper, lower):
    rep = cp.check_dominates(upper, lower, trials=10_000)
    assert not rep.dominates
    _recheck(upper, lower, rep.counterexample)


def test_assert_dominates_with_user_maps():
    cp.assert_dominates(rc.JSW(2), faster(2, 0.5), ([0.0, 1.0], [0.5, 1.0]), (3.0, 0.5, [0.7]))
    with pytest.raises(AssertionError, match="dominating"):
        cp.assert_dominates(faster(2, 0.5), rc.JSW(2), ([0.0, 1.0], [0.0, 1.0]),
                            (3.0, 0.5, [0.7]))
    with pytest.raises(ValueError, match="uniform"):
        cp.assert_dominates(rc.JSW(2), faster(2, 0.5), ([0.0, 1.0], [0.0, 1.0]), (3.0, 0.5))


def test_layouts_must_be_compatible():
    with pytest.raises(ValueError, match="split"):
        cp.check_dominates(POOLS, rc.SplitBound(4, 2))
    skewed = rc.Map(rc.maps.jsw, servers=4, blocks=[1, 3], name="JSW in blocks 1 + 3")
    with pytest.raises(ValueError, match="compatible blocks"):
        cp.check_dominates(skewed, POOLS)
    with pytest.raises(ValueError, match="compatible blocks"):
        cp.assert_dominates(POOLS, skewed, ([0.0] * 4, [0.0] * 4), (1.0, 1.0, [0.5]))
    with pytest.raises(ValueError, match="servers"):
        cp.check_dominates(rc.JSW(3), POOLS)


# -- coupling times ---------------------------------------------------------------------------

MM2 = rc.Poisson(1.2, D.Exponential(1.0))


@pytest.mark.parametrize(("user", "builtin"), [(user_jsw(2), rc.JSW(2)),
                                               (user_random(3), rc.RandomRouting(3))], ids=repr)
def test_coupling_time_of_a_user_map_equals_the_builtin(user, builtin):
    S = builtin.servers
    w1 = np.linspace(5.0, 20.0, S)
    a = cp.coupling_time(user, MM2, np.zeros(S), w1, rng=8, replications=40)
    b = cp.coupling_time(builtin, MM2, np.zeros(S), w1, rng=8, replications=40)
    assert a.censored == 0 and a.times.min() > 0
    np.testing.assert_array_equal(a.times, b.times)
    assert a.system == repr(user)


def test_coupling_time_of_a_two_block_map_follows_its_steps():
    w0, w1 = np.zeros(4), np.array([1.0, 6.0, 2.0, 9.0])
    res = cp.coupling_time(POOLS, MM2, w0, w1, rng=3, replications=5)
    assert res.censored == 0
    seeds = as_seed_sequence(3).spawn(5)
    for r, sd in enumerate(seeds):
        T = int(res.times[r])
        sig, tau = MM2.forward(child(sd, 0)).next(T)
        uni = POOLS.innovations(forward_generator(sd, 1), T)
        lo, up = w0.copy(), w1.copy()
        for n in range(T):
            assert not np.array_equal(lo, up)
            lo, up = POOLS.step(lo, sig[n], tau[n], uni[n]), POOLS.step(up, sig[n], tau[n], uni[n])
        np.testing.assert_array_equal(lo, up)


# -- perfect sampling of a monotone map dominated by JSW ----------------------------------------


def _p_close(x, p):
    z = (x.mean() - p) / math.sqrt(p * (1 - p) / x.size)
    assert abs(z) <= Z, (x.mean(), p, z)
    return z


@pytest.mark.parametrize("method", ["dominated", "dominated-cyclic"])
def test_user_jsw_gives_the_builtin_draws(method):
    inp = rc.Poisson(1.5, D.Exponential(1.0))
    a = cp.perfect_sample(user_jsw(2), inp, 40, rng=3, method=method, dominated_by=rc.JSW(2))
    b = cp.perfect_sample(rc.JSW(2), inp, 40, rng=3, method=method)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_array_equal(a.steps, b.steps)
    assert a.method == method and a.dominated_by == "JSW(servers=2)" and b.dominated_by is None


@pytest.mark.parametrize(("servers", "lam"), [(2, 1.6), (3, 2.4)], ids=["M/M/2", "M/M/3"])
def test_user_jsw_dominated_by_jsw_matches_erlang_c(servers, lam):
    ps = cp.perfect_sample(user_jsw(servers), rc.Poisson(lam, D.Exponential(1.0)), 2000,
                           rng=40 + servers, method="dominated", dominated_by=rc.JSW(servers))
    assert ps.system == repr(user_jsw(servers))
    _p_close(ps.samples[:, 0] > 0, ly.erlang_c(servers, lam))


@pytest.mark.parametrize(("servers", "lam", "method"),
                         [(2, 1.6, "dominated"), (3, 2.4, "dominated-cyclic")])
def test_faster_service_map_matches_erlang_c(servers, lam, method):
    """JSW with service times x 0.8 is M/M/S with service rate 1.25, below JSW itself."""
    c = 0.8
    ps = cp.perfect_sample(faster(servers, c), rc.Poisson(lam, D.Exponential(1.0)), 2000,
                           rng=60 + servers, method=method, dominated_by=rc.JSW(servers))
    w1 = ps.samples[:, 0]
    _p_close(w1 > 0, ly.erlang_c(servers, lam * c))
    # given a wait, W(1) is exponential with rate S mu - lambda = S / c - lambda
    pos = w1[w1 > 0]
    assert stats.kstest(pos, "expon", args=(0, 1 / (servers / c - lam))).pvalue > 1e-3
    # and the ordinary JSW of the same load (a different law) is refuted by it
    assert abs((w1 > 0).mean() - ly.erlang_c(servers, lam)) > Z * math.sqrt(0.25 / w1.size)


def test_thinned_map_matches_erlang_c():
    """Customers lost w.p. 1/4 (one uniform each): M/M/3 at arrival rate 0.75 lam."""
    servers, lam, q = 3, 2.6, 0.25
    ps = cp.perfect_sample(thinned(servers, q), rc.Poisson(lam, D.Exponential(1.0)), 2000,
                           rng=7, method="dominated", dominated_by=rc.JSW(servers))
    _p_close(ps.samples[:, 0] > 0, ly.erlang_c(servers, lam * (1 - q)))


def test_faster_service_map_md2_matches_embedded_chain():
    """M/D/2 with service 0.8 through the cyclic walk bound (renewal machinery)."""
    servers, lam, c = 2, 1.6, 0.8
    p_wait, mean_wait = ly.md_c_waiting(servers, lam, c)
    ps = cp.perfect_sample(faster(servers, c), rc.Poisson(lam, D.Deterministic(1.0)), 2000,
                           rng=12, dominated_by=rc.JSW(servers))
    assert ps.method == "dominated-cyclic"
    w1 = ps.samples[:, 0]
    _p_close(w1 > 0, p_wait)
    assert abs(w1.mean() - mean_wait) <= Z * w1.std() / math.sqrt(w1.size)


@pytest.mark.parametrize(("method", "starts"), [("dominated", (0.5, 40.0)),
                                                ("dominated-cyclic", (0.5, 40.0))])
def test_dominated_map_draws_do_not_depend_on_the_search_start(method, starts):
    """The map's uniforms follow the customers: a try from further back reuses them."""
    system, inp = thinned(3, 0.3), rc.Poisson(2.4, D.Exponential(1.0))
    a = cp.perfect_sample(system, inp, 30, rng=5, start_time=starts[0], method=method,
                          dominated_by=rc.JSW(3))
    b = cp.perfect_sample(system, inp, 30, rng=5, start_time=starts[1], method=method,
                          dominated_by=rc.JSW(3))
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-12, atol=1e-12)
    assert (a.steps != b.steps).any()  # the searches did start at different horizons


def test_dominated_sampling_refuses_what_it_cannot_sample_exactly():
    inp = rc.Poisson(1.0, D.Exponential(1.0))
    with pytest.raises(ValueError, match="does not dominate") as info:
        cp.perfect_sample(user_random(2), inp, 3, dominated_by=rc.JSW(2))
    assert "counterexample" in str(info.value)
    with pytest.raises(ValueError, match="not declared monotone"):
        cp.perfect_sample(rc.Map(rc.maps.jsw, servers=2), inp, 3, dominated_by=rc.JSW(2))
    lying = rc.Map(rc.maps.jpsw, servers=2, params=[1.0], monotone=True, name="J2SW (lying)")
    with pytest.raises(ValueError, match="declared monotone, but"):
        cp.perfect_sample(lying, inp, 3, dominated_by=rc.JSW(2))
    with pytest.raises(ValueError, match="no exact sampler"):
        cp.perfect_sample(user_jsw(2), inp, 3, dominated_by=rc.RandomRouting(2))
    with pytest.raises(ValueError, match="servers"):
        cp.perfect_sample(user_jsw(2), inp, 3, dominated_by=rc.JSW(3))
    with pytest.raises(ValueError, match="not both"):
        cp.perfect_sample(user_jsw(2), inp, 3, dominated_by=rc.JSW(2), upper=[5.0, 5.0])
    with pytest.raises(ValueError, match="not stable"):
        cp.perfect_sample(faster(2, 0.5), rc.Poisson(2.5, D.Exponential(1.0)), 3,
                          dominated_by=rc.JSW(2))
    with pytest.raises(TypeError, match="dominated_by"):
        cp.perfect_sample(user_jsw(2), inp, 3, dominated_by="JSW")
    with pytest.raises(ValueError, match="dominance_trials"):
        cp.perfect_sample(user_jsw(2), inp, 3, dominated_by=rc.JSW(2), dominance_trials=0)
    with pytest.raises(ValueError, match="no exact method"):
        cp.perfect_sample(user_jsw(2), inp, 3)  # a user map alone: no sampler chosen for it


def test_dominated_sampling_cap():
    with pytest.raises(cp.CouplingNotReached, match="raise cap_time"):
        cp.perfect_sample(thinned(10, 0.01), rc.Poisson(9.8, D.Exponential(1.0)), 1, rng=1,
                          start_time=0.1, cap_time=0.2, method="dominated",
                          dominated_by=rc.JSW(10))
