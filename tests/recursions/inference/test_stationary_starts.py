"""``start="stationary"`` beyond FCFS M/M/S: exact draws by coupling from the past.

M/M/S starts from its birth-death chain (``tests/coupling/test_mms_states.py``); every other system
that ``cp.perfect_sample`` covers starts from coupling from the past. Here M/D/2 (FCFS with
deterministic services), a loss system and J_2SW(3, 1) (not monotone) start there: the result
says so, drops no warm-up, and the interval of its replications' means (independent, unbiased:
no correlation to estimate) covers a value computed another way: the M/D/c embedded chain
(``loynes.md_c_waiting``), Erlang B (insensitive to the service law), and a long run from
empty for J_2SW, which has no closed form. The runs are 32 arrivals long, too short to forget
their start: the same runs from empty miss each value, so a sampler that drew wrong states
would fail here.
"""

from __future__ import annotations

import warnings

import pytest

import coupling  # noqa: F401  (registers the exact samplers start="stationary" uses)
import loynes as ly
import recursions as rc

E, D = rc.dists.Exponential, rc.dists.Deterministic


def erlang_b(servers: int, offered: float) -> float:
    """Erlang's loss formula by its recursion ``B_k = a B_{k-1} / (k + a B_{k-1})``."""
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return b


STEPS, REPLICATIONS = 32, 512
"""Runs this short keep their start: from empty their means are far off (checked below), so
the replications' interval covers the truth only if the start states are stationary."""


def short_runs(system, inp, statistic, seed, **kw):
    """The replications' interval of ``statistic`` over 512 runs of 32 arrivals each."""
    with warnings.catch_warnings():
        # runs this short warn that their batch means cannot be trusted; the replications'
        # interval needs no batch means, and is what is checked here
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(system, inp, steps=STEPS, replications=REPLICATIONS, rng=seed, **kw)
    if kw.get("start") == "stationary":
        assert res.start == "stationary" and res.warmup == 0
        iv = res.replication_interval[statistic]
        assert iv.batches == REPLICATIONS and iv.trusted
        return iv
    return res.interval(statistic)


def from_empty_misses(system, inp, statistic, truth):
    """The same runs from empty: their interval must miss ``truth`` (the test's power)."""
    iv = short_runs(system, inp, statistic, 9)
    return not iv.covers(truth)


@pytest.mark.parametrize("seed", [1, 2])
def test_md2_from_exact_starts_covers_the_embedded_chain(seed):
    system, inp = rc.JSW(2), rc.Poisson(1.4, D(1.0))  # load 0.7, deterministic service 1
    _, wait = ly.md_c_waiting(2, 1.4, 1.0)
    iv = short_runs(system, inp, "mean_wait", seed, start="stationary")
    assert abs(iv.value - wait) < 4 * iv.se
    assert from_empty_misses(system, inp, "mean_wait", wait)


@pytest.mark.parametrize("seed", [1, 2])
def test_loss_from_exact_starts_covers_erlang_b(seed):
    # M/D/3/3 at offered load 2: the loss probability is Erlang B whatever the service law
    system, inp = rc.Loss(3), rc.Poisson(2.0, D(1.0))
    iv = short_runs(system, inp, "p_loss", seed, start="stationary")
    assert abs(iv.value - erlang_b(3, 2.0)) < 4 * iv.se
    assert from_empty_misses(system, inp, "p_loss", erlang_b(3, 2.0))


def test_j2sw_from_exact_starts_agrees_with_a_long_run_from_empty():
    # J_2SW is not monotone: its exact draws come from the bounding chains of
    # cp.perfect_sample; the long run's mean wait is a time average with its own error
    system, inp = rc.JpSW(3, 1), rc.Poisson(1.5, E(1.0))
    long = rc.simulate(system, inp, steps=2**21, rng=7)
    assert long.interval("mean_wait").trusted
    truth, se = long.mean_wait.value, long.mean_wait.se
    iv = short_runs(system, inp, "mean_wait", 1, start="stationary")
    assert abs(iv.value - truth) < 4 * (iv.se**2 + se**2) ** 0.5
    assert from_empty_misses(system, inp, "mean_wait", truth)


def test_a_system_no_sampler_covers_says_so():
    # random routing is not among the systems coupling from the past covers
    with pytest.raises(ValueError, match="no exact method for RandomRouting"):
        rc.simulate(rc.RandomRouting(3), rc.Poisson(1.5, E(1.0)), steps=1000,
                    start="stationary", rng=1)
