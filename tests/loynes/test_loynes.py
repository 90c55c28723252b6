"""Backward Loynes sequences, stability checks, closed forms, symbolic conditions, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import loynes as ly
import recursions as rc
from loynes._cli import main

E = rc.dists.Exponential
Z = 4.0


# -- Loynes sequences ------------------------------------------------------------------------
def _naive_loynes(system, inp, horizons, seed):
    """W_n computed one arrival at a time with System.step on the same backward draws."""
    d = rc.BackwardDraws(system, inp, rng=seed)
    out = []
    for n in horizons:
        sig, tau, u = d.window(n)
        w = np.zeros(system.servers)
        for k in range(n):
            w = system.step(w, sig[k], tau[k], u[k] if system.uniforms else None)
        out.append(w)
    return np.array(out)


@pytest.mark.parametrize("system", [rc.JSW(3), rc.JpSW(3, 1), rc.JIQ(3), rc.Loss(2)], ids=repr)
def test_loynes_equals_step_by_step(system):
    inp = rc.Poisson(2.0, rc.dists.LogNormal(1.0, 2.0))
    res = ly.loynes(system, inp, horizon=512, rng=4, stop=False)
    np.testing.assert_allclose(res.states, _naive_loynes(system, inp, res.horizons, 4),
                               atol=1e-12)
    assert res.horizons.tolist() == [2**k for k in range(10)]


@pytest.mark.parametrize("system", [rc.JSW(2), rc.JSW(4), rc.Envelope(rc.JpSW(3, 1)),
                                    rc.LeastOfD(4, 2), rc.RandomRouting(3)], ids=repr)
@settings(max_examples=20)
@given(load=st.floats(0.3, 1.3), seed=st.integers(0, 2**31))
def test_loynes_sequences_of_monotone_maps_are_nondecreasing(system, load, seed):
    inp = rc.Poisson(load * system.servers, rc.dists.HyperExponential.balanced(1.0, 3.0))
    res = ly.loynes(system, inp, horizon=2**10, rng=seed, stop=False)
    assert res.nondecreasing
    assert np.all(np.diff(res.states, axis=0) >= -1e-12)


def test_loynes_limit_mm1_is_stationary_wait():
    # W_inf(1) for M/M/1 at rho = 0.5: P(W > 0) = 0.5, E[W] = 1; average the limit over seeds
    inp = rc.Poisson(0.5, E(1.0))
    lim = np.array([ly.loynes(rc.JSW(1), inp, 2**14, rng=s).limit[0] for s in range(1500)])
    assert abs(np.mean(lim > 0) - 0.5) < Z * math.sqrt(0.25 / lim.size)
    assert abs(lim.mean() - 1.0) < Z * lim.std() / math.sqrt(lim.size)


def test_loynes_periodic_is_exact():
    # S = 1, sigma = (3, 0, 0), tau = 1.2: W at a phase-0 arrival from the past is the Lindley
    # maximum, reached after one period: max(0, (3 - 1.2) - 1.2 - 1.2 ...) etc.
    # Lindley: W(0) = max(0, max_k sum_{j=1..k} (sigma_{-j} - tau_{-j}))
    inp = rc.Periodic(sigma=[3.0, 0.0, 0.0], tau=[1.2, 1.2, 1.2], phase=1)
    res = ly.loynes(rc.JSW(1), inp, horizon=2**10)
    assert res.stabilised
    # time 0 is phase 1: the customer at -1 brought 3 and 1.2 elapsed; earlier sums only fall
    assert res.limit[0] == pytest.approx(1.8)
    inp2 = rc.Periodic(sigma=[1.5, 0.0], tau=[1.0, 1.0], phase=0)
    # time 0 is phase 0: the sums are -1, -0.5, -1.5, -1, ...: W = 0
    assert ly.loynes(rc.JSW(1), inp2, horizon=2**10).limit[0] == pytest.approx(0.0)


def test_loynes_unstable_grows_and_caps():
    res = ly.loynes(rc.JSW(2), rc.Poisson(2.5, E(1.0)), horizon=2**12)
    assert not res.stabilised and res.horizons[-1] == 2**12
    assert res.growth > 0


def test_loynes_bad_arguments():
    with pytest.raises(ValueError, match="horizon"):
        ly.loynes(rc.JSW(2), rc.Poisson(1.0, E(1.0)), horizon=0)
    with pytest.raises(ValueError, match="confirm"):
        ly.loynes(rc.JSW(2), rc.Poisson(1.0, E(1.0)), confirm=0)
    with pytest.raises(TypeError, match="system"):
        ly.loynes("jsw", rc.Poisson(1.0, E(1.0)))


# -- closed forms and symbolic conditions ---------------------------------------------------
def _erlang_b_recursion(c, a):
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


@pytest.mark.parametrize(("c", "a"), [(1, 0.5), (5, 3.0), (50, 45.0), (1000, 990.0),
                                      (100_000, 99_000.0), (100_000, 101_000.0), (3, 0.0)])
def test_erlang_b_against_recursion(c, a):
    assert ly.erlang_b(c, a) == pytest.approx(_erlang_b_recursion(c, a), rel=1e-9)


def test_erlang_known_values():
    assert ly.erlang_b(2, 1.0) == pytest.approx(0.2)
    assert ly.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # M/M/c with c = 1: C = rho
    assert ly.erlang_c(1, 0.7) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="offered_load must be < servers"):
        ly.erlang_c(2, 2.0)


def test_critical_rates():
    assert ly.critical_rate_3(4, E(2.0)) == pytest.approx(8.0)
    assert ly.critical_rate_11(2, 1, 1.0) == pytest.approx((1 + math.sqrt(5)) / 2, rel=1e-12)
    for s, p in ((5, 2), (6, 5), (10, 1)):
        lam = ly.critical_rate_11(s, p, rc.dists.LogNormal(2.0, 1.0))
        a = lam * 2.0
        assert a * ly.erlang_b(p, a) == pytest.approx(s - p, rel=1e-9)
        assert lam < ly.critical_rate_3(s, 2.0)  # (11) implies (3)
    with pytest.raises(ValueError, match="p must be"):
        ly.critical_rate_11(3, 3, 1.0)


@given(lam=st.floats(0.01, 20.0), m=st.floats(0.05, 5.0), s=st.integers(1, 8), data=st.data())
def test_symbolic_conditions_agree_with_numeric(lam, m, s, data):
    p = data.draw(st.integers(0, s - 1))
    f3 = ly.symbolic.numeric(ly.symbolic.condition_3(s))
    f11 = ly.symbolic.numeric(ly.symbolic.condition_11(s, p))
    assert f3(lam, m) == pytest.approx(s - lam * m, rel=1e-9, abs=1e-9)
    a = lam * m
    assert f11(lam, m) == pytest.approx((s - p) - a * ly.erlang_b(p, a), rel=1e-7, abs=1e-9)
    # the sympy relation substituted directly gives the same truth value away from the edge
    rel = ly.symbolic.condition_11(s, p).subs({ly.symbolic.lam: lam, ly.symbolic.m: m})
    if abs(f11(lam, m)) > 1e-9:
        assert bool(rel) == (f11(lam, m) > 0)


# -- stability checks -----------------------------------------------------------------------
def test_jsw_verdicts_are_exact():
    stable = ly.check_stability(rc.JSW(3), rc.Poisson(2.9, E(1.0)))
    unstable = ly.check_stability(rc.JSW(3), rc.Poisson(3.1, E(1.0)))
    assert (stable.verdict, unstable.verdict) == ("stable", "unstable")
    assert stable.condition("(3)").role == "necessary and sufficient"


def test_periodic_counterexample_jsw_stable_j2sw_not():
    # docs/theory/stability.md:
    # a 3-point Omega with cyclic theta, deterministic tau, E[sigma] < S E[tau]:
    # the 1-server loss system settles into a periodic regime (the sigma = 3.5 customer is
    # always lost, the others always served) whose overflow, 3.5 per period of length 3,
    # exceeds the one remaining server's capacity: J2SW grows by 0.5 per period.
    inp = rc.Periodic(sigma=[2.0, 3.5, 0.2], tau=[1.0, 1.0, 1.0])
    assert inp.mean_service < 2 * inp.mean_interarrival
    jsw = ly.check_stability(rc.JSW(2), inp)
    j2sw = ly.check_stability(rc.JpSW(2, 1), inp)
    assert jsw.verdict == "stable"
    assert j2sw.verdict == "unstable"
    assert j2sw.condition("(3)").holds
    assert j2sw.condition("(8)").holds is False
    assert j2sw.condition("(8)").value == pytest.approx(3.5 / 3, rel=1e-3)
    g = j2sw.evidence["growth per period"]
    assert g == pytest.approx(3.5 - 3.0, rel=1e-2)


@pytest.mark.parametrize("a", [1.0, 1.4, 1.58, 1.66, 1.8, 1.95])
def test_j2sw_switches_at_condition_11_not_at_2(a):
    crit = ly.critical_rate_11(2, 1, 1.0)  # a B(1, a) = 1 at the golden ratio
    rep = ly.check_stability(rc.JpSW(2, 1), rc.Poisson(a, E(1.0)), steps=2**17)
    assert rep.verdict == ("stable" if a < crit else "unstable")


@pytest.mark.parametrize("a", [1.8, 1.95])
def test_growth_above_threshold_matches_splitting(a):
    # above the threshold the 1-server loss system overflows a B(1, a) = a^2 / (1 + a) per
    # unit time onto the other server: growth per customer = E[sigma] B - E[tau]
    lam = a
    pred = 1.0 * ly.erlang_b(1, a) - 1.0 / lam
    g = ly.growth_rate(rc.JpSW(2, 1), rc.Poisson(lam, E(1.0)), steps=2**19, replications=8,
                       rng=3)
    # the splitting is asymptotic: allow the standard error plus 5% for the transient
    assert abs(g.value - pred) <= Z * g.se + 0.05 * pred


def test_growth_rate_zero_when_stable():
    g = ly.growth_rate(rc.JSW(2), rc.Poisson(1.5, E(1.0)), rng=2)
    assert abs(g.value) <= Z * g.se


def test_renovation_probability_poisson():
    for lam, law in ((0.5, E(1.0)), (2.0, rc.dists.Deterministic(0.7))):
        est = ly.renovation_probability(rc.Poisson(lam, law), steps=2**17, rng=5)
        assert abs(est.value - math.exp(-lam * law.mean)) <= Z * est.se


def test_loss_report_and_json_round_trip():
    rep = ly.check_stability(rc.Loss(3), rc.Poisson(2.0, E(1.0)))
    assert rep.verdict == "stable" and rep.condition("(9)").holds
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["verdict"] == "stable" and d["conditions"][0]["name"] == "(9)"
    assert "(9)" in str(rep)


def test_non_poisson_jpsw_uses_simulated_loss():
    inp = rc.Renewal(rc.dists.Erlang(2, 2.0 * 1.2), rc.dists.Deterministic(1.0))
    rep = ly.check_stability(rc.JpSW(2, 1), inp)
    assert "simulated" in rep.condition("(11)").statement
    assert rep.verdict == "stable"


def test_check_stability_rejects_unknown_pairs():
    with pytest.raises(TypeError, match="input"):
        ly.check_stability(rc.JSW(2), E(1.0))
    with pytest.raises(TypeError, match="check_stability judges"):
        ly.check_stability("JSW", rc.Poisson(1.0, E(1.0)))


# -- command line ---------------------------------------------------------------------------
def test_cli_check_text_and_json(capsys):
    args = ["check", "--system", "jpsw", "--servers", "5", "--p", "2", "--arrival-rate", "4",
            "--service", "lognormal:1,2", "--steps", "4096", "--horizon", "1024"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "verdict: STABLE" in out and "(11)" in out
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["verdict"] == "stable"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["check", "--system", "nope", "--servers", "2"], "invalid choice"),
        (["check", "--system", "jpsw", "--servers", "2", "--p", "2", "--arrival-rate", "1"],
         "p must be an integer in [0, 1]"),
        (["check", "--system", "jsw", "--servers", "2", "--arrival-rate", "-1"], "rate"),
        (["check", "--system", "jsw", "--servers", "2", "--arrival-rate", "1",
          "--service", "weibull:1"], "unknown law"),
        (["check", "--system", "jsw", "--servers", "2", "--arrival-rate", "1",
          "--service", "lognormal:1"], "takes MEAN,SCV"),
        (["check", "--system", "jsw", "--servers", "2"], "exactly one of"),
        (["check", "--system", "jsw", "--servers", "x"], "invalid int"),
    ],
)
def test_cli_bad_flags_one_line_exit_2(args, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        code = main(args)
        raise SystemExit(code)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_cli_help_documents_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    for flag in ("--system", "--servers", "--p", "--d", "--arrival-rate", "--interarrival",
                 "--service", "--periodic-sigma", "--periodic-tau", "--seed", "--json"):
        assert flag in out


def test_demo_writes_figures(tmp_path, capsys):
    from loynes._cli import main as out  # the module is importable; run the demo directly
    from loynes._demo import run_demo

    res = run_demo(tmp_path, quick=True)
    for key in ("report", "loynes", "region"):
        assert res[key].exists() and res[key].stat().st_size > 0
    printed = capsys.readouterr().out
    assert "verdict" in printed
    # it says what it is doing: the kernels, then each step with its time and file
    assert printed.startswith("compiled kernels: ")
    steps = [line for line in printed.splitlines() if line.startswith("[")]
    assert [line[:5] for line in steps] == ["[1/3]", "[2/3]", "[3/3]"]
    assert printed.count("done in ") == 3 and str(res["region"]) in printed
    assert out is main
    # the verdict grid follows (11): stable at low load for every p, unstable above (3)
    v = res["verdicts"]
    assert np.all(v[:, 0] == "stable") and np.all(v[:, -1] == "unstable")


def test_a_buffered_jiq_is_refused_not_run_as_the_unbuffered_map():
    # JIQ with a buffer is a queue-length system (its engines are "queues" and "counts"):
    # the backward sequence must not silently iterate the unbuffered workload map
    inp = rc.Poisson(3.0, rc.dists.Exponential(1.0))
    with pytest.raises(ValueError, match="not a map on workload vectors"):
        ly.loynes(rc.JIQ(4, buffer=1), inp, 2**10, rng=1)
