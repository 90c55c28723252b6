"""Bad input gets a clear error that names the parameter."""

from __future__ import annotations

import numpy as np
import pytest

import loynes as ly
import recursions as rc
from tests.marks import UNTRUSTED

E = rc.dists.Exponential
INP = rc.Poisson(1.0, E(1.0))


@pytest.mark.parametrize(
    ("build", "exc", "match"),
    [
        (lambda: rc.JSW(0), ValueError, "servers"),
        (lambda: rc.JSW(2.5), TypeError, "servers"),
        (lambda: rc.JSW(True), TypeError, "servers"),
        (lambda: rc.JpSW(3, 3), ValueError, r"p must be an integer in \[0, 2\]"),
        (lambda: rc.JpSW(3, -1), ValueError, "p must be"),
        (lambda: rc.SplitBound(3, 3), ValueError, "p must be"),
        (lambda: rc.LeastOfD(3, 0), ValueError, r"d must be an integer in \[1, 3\]"),
        (lambda: rc.LeastOfD(3, 4), ValueError, "d must be"),
        (lambda: rc.Envelope("JSW"), TypeError, "system"),
    ],
)
def test_bad_system_parameters(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


@pytest.mark.parametrize(
    ("w", "match"),
    [
        ([1.0, 0.0], "sorted"),
        ([-1.0, 0.0], "non-negative"),
        ([0.0, np.nan], "finite"),
        ([0.0, 1.0, 2.0], "length servers=2"),
        ([[0.0, 1.0]], "length"),
    ],
)
def test_bad_state_vectors(w, match):
    with pytest.raises(ValueError, match=match):
        rc.JSW(2).step(w, 1.0, 1.0)
    if np.ndim(w) == 1:
        with pytest.raises(ValueError, match="w0"):
            rc.simulate(rc.JSW(2), INP, steps=10, w0=w)


def test_w0_per_replication():
    with pytest.raises(ValueError, match="3 rows"):
        rc.simulate(rc.JSW(2), INP, steps=10, replications=3, w0=[[0.0, 1.0]])
    with pytest.raises(ValueError, match=r"w0\[1\]"):
        rc.simulate(rc.JSW(2), INP, steps=10, replications=2, w0=[[0.0, 1.0], [2.0, 1.0]])
    with pytest.warns(rc.SimulationWarning, match="cannot be trusted"):  # one arrival each
        res = rc.simulate(rc.JSW(2), INP, steps=1, replications=2,
                          w0=[[0.0, 1.0], [5.0, 9.0]], record=True, batches=1)
    np.testing.assert_array_equal(res.path[:, 0], [[0.0, 1.0], [5.0, 9.0]])


def test_split_bound_state_is_sorted_per_block():
    rc.SplitBound(3, 1).check_state([2.0, 0.0, 1.0])  # blocks (2) and (0, 1): fine
    with pytest.raises(ValueError, match="within each block"):
        rc.SplitBound(3, 1).check_state([0.0, 2.0, 1.0])


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(sigma=-1.0, tau=1.0), ValueError, "sigma"),
        (dict(sigma=float("nan"), tau=1.0), ValueError, "sigma"),
        (dict(sigma=1.0, tau=float("inf")), ValueError, "tau"),
        (dict(sigma="a", tau=1.0), TypeError, "sigma"),
    ],
)
def test_bad_step_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rc.JSW(2).step([0.0, 0.0], **kwargs)


def test_randomised_systems_need_u():
    with pytest.raises(ValueError, match="needs u"):
        rc.JIQ(2).step([1.0, 2.0], 1.0, 0.0)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        rc.JIQ(2).step([1.0, 2.0], 1.0, 0.0, u=1.0)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(steps=0), ValueError, "steps must be an integer >= 1"),
        (dict(steps=-5), ValueError, "steps"),
        (dict(steps=10.0), TypeError, "steps"),
        (dict(steps=10, warmup=-1), ValueError, "warmup"),
        (dict(steps=10, replications=0), ValueError, "replications"),
        (dict(steps=10, batches=0), ValueError, "batches"),
        (dict(steps=10, batches=11), ValueError, "batches must be <= steps"),
        (dict(steps=10, grid=[1.0, 0.5]), ValueError, "grid"),
        (dict(steps=10, rng=-3), ValueError, "rng"),
        (dict(steps=10, rng="seed"), TypeError, "rng"),
    ],
)
def test_bad_simulate_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        rc.simulate(rc.JSW(2), INP, **kwargs)


def test_simulate_type_checks():
    with pytest.raises(TypeError, match="system"):
        rc.simulate("JSW", INP, steps=10)
    with pytest.raises(TypeError, match="input"):
        rc.simulate(rc.JSW(2), E(1.0), steps=10)


@UNTRUSTED
def test_profile_outside_grid():
    res = rc.simulate(rc.JSW(2), INP, steps=100, rng=1, grid=[0.0, 1.0])
    with pytest.raises(ValueError, match="grid"):
        res.profile(2.0)


@pytest.mark.parametrize("call", [
    lambda: ly.renovation_probability(rc.JSW(3)),
    lambda: ly.renovation_probability(rc.JSW(3), INP),
    lambda: ly.growth_rate("JSW", INP),
    lambda: ly.growth_rate(rc.JSW(2), rc.JSW(2)),
])
def test_an_argument_of_the_wrong_kind_is_named(call):
    with pytest.raises(TypeError, match=r"must be a recursions (input|system), got (JSW|str)"):
        call()


def test_pollaczek_khinchine_refuses_impossible_moments():
    with pytest.raises(ValueError, match="second_moment must be >= mean"):
        ly.pollaczek_khinchine_mean_wait(0.5, 1.0, 0.5)
    assert ly.pollaczek_khinchine_mean_wait(0.5, 1.0, 1.0) == pytest.approx(0.5)  # M/D/1
    assert ly.pollaczek_khinchine_mean_wait(0.5, 1.0, np.inf) == np.inf  # tail index <= 2
    assert ly.pollaczek_khinchine_mean_wait(0.0, 1.0, np.inf) == 0.0


@UNTRUSTED
def test_profile_of_one_level_is_a_pair_of_floats():
    res = rc.simulate(rc.JSW(2), INP, steps=400, rng=1, grid=[0.0, 1.0])
    x = res.profile(0.5)
    assert type(x.value) is float and type(x.se) is float
    assert x.value == float(res.profile([0.5]).value[0])
    with pytest.raises(ValueError, match="never negative"):
        res.profile(-1.0)


def test_one_batch_warns_that_there_is_no_standard_error():
    with pytest.warns(rc.SimulationWarning, match="standard errors are nan"):
        res = rc.simulate(rc.JSW(2), INP, steps=10, batches=1, rng=1)
    assert np.isnan(res.mean_wait.se)


def test_growth_budget_says_when_the_growth_it_rests_on_may_be_noise():
    from loynes._checks import Check, growth_budget

    chk = Check(rc.JSW(2), INP, horizon=2**10, steps=2**10, replications=8, alpha=1e-3,
                seeds=iter(()))
    chk.evidence.update({"growth per customer": 0.01, "growth per customer se": 0.014})
    text = growth_budget(chk)["growth"]
    assert "0.01 ± 0.014 per customer (t = 0.714)" in text and "could well be noise" in text
    chk.evidence["growth per customer se"] = 0.002
    assert "noise" not in growth_budget(chk)["growth"]
