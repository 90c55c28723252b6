"""Zero-waiting queue-length policies (docs/theory/zero_wait.md): both engines against oracles.

Oracles: the exact stationary law of the counts chain at tiny N (solved here by linear algebra,
with routing probabilities found by brute-force enumeration of the sampled servers), Erlang B
for b = 1 (every idle-first policy is then M/G/N/N, insensitive), M/M/1 and M/M/1/b, and the
two engines against each other. Fixed seeds; tolerances from the runs' own standard errors.
"""

from __future__ import annotations

import inspect
import itertools
import math
import warnings

import numpy as np
import pytest

import loynes as ly
import recursions as rc
from recursions.engines import drivers_of
from recursions.engines import zerowait as zw
from tests.marks import UNTRUSTED

D = rc.dists
Z = 4.5  # tolerance in standard errors

COX2 = D.Coxian.normalised([1.0, 0.25], [0.4])  # SCV > 1
COX3 = D.Coxian.normalised([3.0, 1.0, 2.0], [0.6, 0.5])
PAPER = D.Coxian.normalised([1.875] * 4, [0.5] * 3)  # Liu, Gong and Ying §8 (already of mean 1)


def _close(est, exact, z=Z, atol=0.0):
    assert math.isfinite(est.se) and est.se > 0, est
    assert abs(est.value - exact) <= z * est.se + atol, (est, exact)


def _agree(a, b, z=Z, atol=0.0):
    se = math.hypot(a.se, b.se)
    assert math.isfinite(se), (a, b)
    assert abs(a.value - b.value) <= z * se + atol, (a, b)


def _policy(name, n, buffer, d=2):
    return {
        "JSQ": lambda: zw.JSQ(n, buffer),
        "JIQ": lambda: rc.JIQ(n, buffer=buffer),
        "I1F": lambda: zw.I1F(n, buffer),
        "PoD": lambda: zw.PowerOfD(n, min(d, n), buffer),
    }[name]()


# ------------------------------------------------------------------------------------------
# exact stationary law of the counts chain (tiny N, finite b), routing by enumeration
# ------------------------------------------------------------------------------------------
def _route(name, servers, b, d):
    """Probability that an arrival joins each server; servers are (jobs, phase) pairs."""
    n = len(servers)
    jobs = [s[0] for s in servers]
    prob = np.zeros(n)
    if name == "PoD":
        subsets = list(itertools.combinations(range(n), d))
        for sub in subsets:
            least = min(jobs[i] for i in sub)
            ties = [i for i in sub if jobs[i] == least]
            for i in ties:
                prob[i] += 1.0 / (len(subsets) * len(ties))
        return prob
    if name == "JSQ":
        pool = [i for i in range(n) if jobs[i] == min(jobs)]
    elif 0 in jobs:
        pool = [i for i in range(n) if jobs[i] == 0]
    elif name == "I1F" and 1 in jobs:
        pool = [i for i in range(n) if jobs[i] == 1]
    else:
        pool = list(range(n))
    prob[pool] = 1.0 / len(pool)
    return prob


def _exact(name, n, b, d, lam, law):
    mu, p = np.asarray(law.rates), np.append(law.probs, 0.0)
    start = tuple([(0, 0)] * n)
    index, states, edges = {start: 0}, [start], []
    k = 0
    while k < len(states):
        s = states[k]
        out = []
        for i, q in enumerate(_route(name, s, b, d)):
            if q > 0 and s[i][0] < b:
                j, m = s[i]
                out.append((i, (j + 1, m if j else 0), lam * q))
        for i, (j, m) in enumerate(s):
            if j:
                if p[m] > 0:
                    out.append((i, (j, m + 1), mu[m] * p[m]))
                if p[m] < 1:
                    out.append((i, (j - 1, 0), mu[m] * (1 - p[m])))
        for i, new, rate in out:
            t = tuple(sorted((*s[:i], new, *s[i + 1:])))
            if t not in index:
                index[t] = len(states)
                states.append(t)
            edges.append((k, index[t], rate))
        k += 1
    size = len(states)
    gen = np.zeros((size, size))
    for a, c, rate in edges:
        gen[a, c] += rate
        gen[a, a] -= rate
    lhs = np.vstack([gen.T, np.ones(size)])
    pi = np.linalg.lstsq(lhs, np.append(np.zeros(size), 1.0), rcond=None)[0]
    out = {"p_wait": 0.0, "p_block": 0.0, "p_all_busy": 0.0, "busy_fraction": 0.0,
           "mean_jobs": 0.0, "phase_busy": np.zeros(len(mu))}
    for w, s in zip(pi, states, strict=True):
        route = _route(name, s, b, d)
        busy = np.array([j > 0 for j, _ in s])
        full = np.array([j == b for j, _ in s])
        out["p_wait"] += w * route[busy].sum()
        out["p_block"] += w * route[full].sum()
        out["p_all_busy"] += w * busy.all()
        out["busy_fraction"] += w * busy.mean()
        out["mean_jobs"] += w * sum(j for j, _ in s) / n
        for j, m in s:
            if j:
                out["phase_busy"][m] += w / n
    return out


@pytest.mark.parametrize("name", ["JSQ", "JIQ", "I1F", "PoD"])
@pytest.mark.parametrize("engine", ["counts", "queues"])
@pytest.mark.parametrize(("n", "b", "d", "law"), [(3, 2, 2, COX2), (4, 3, 3, COX3)],
                         ids=["N3-b2-cox2", "N4-b3-cox3"])
def test_exact_chain_small_n(name, engine, n, b, d, law):
    lam = 0.8 * n
    ref = _exact(name, n, b, d, lam, law)
    res = zw.simulate_queues(_policy(name, n, b, d), rc.Poisson(lam, law), steps=200_000,
                             warmup=1_000, replications=2, rng=11, engine=engine)
    for field in ("p_wait", "p_block", "p_all_busy", "busy_fraction", "mean_jobs"):
        _close(getattr(res, field), ref[field])
    for m in range(len(law.rates)):
        _close(rc.Estimate(res.phase_busy.value[m], res.phase_busy.se[m]), ref["phase_busy"][m])


# ------------------------------------------------------------------------------------------
# the two engines agree
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["JSQ", "JIQ", "I1F", "PoD"])
@pytest.mark.parametrize(("n", "law"), [(5, COX2), (20, COX3)], ids=["N5-cox2", "N20-cox3"])
@pytest.mark.parametrize("buffer", [3, None])
@UNTRUSTED
def test_counts_engine_equals_queues_engine(name, n, law, buffer):
    inp = rc.Poisson(0.85 * n, law)
    kw = dict(steps=60_000 * max(1, n // 5), warmup=2_000, replications=2)
    a = zw.simulate_queues(_policy(name, n, buffer), inp, rng=1, engine="counts", **kw)
    q = zw.simulate_queues(_policy(name, n, buffer), inp, rng=2, engine="queues", **kw)
    assert (a.engine, q.engine) == ("counts", "queues")
    for field in ("p_wait", "p_all_busy", "busy_fraction", "mean_jobs", "mean_wait"):
        _agree(getattr(a, field), getattr(q, field))
    if buffer is None:
        assert a.p_block is None and q.p_block is None
    else:
        _agree(a.p_block, q.p_block, atol=1e-4)
    for m in range(len(law.rates)):
        _agree(rc.Estimate(a.phase_busy.value[m], a.phase_busy.se[m]),
               rc.Estimate(q.phase_busy.value[m], q.phase_busy.se[m]))
    # Little's law per phase: S_{1,m} = lambda v_m (1 - P(block))
    kept = 1.0 - (a.p_block.value if buffer else 0.0)
    for m, v in enumerate(0.85 * law.phase_means * kept):
        _close(rc.Estimate(a.phase_busy.value[m], a.phase_busy.se[m]), v, atol=1e-3)


# ------------------------------------------------------------------------------------------
# b = 1: idle-first policies are M/G/N/N (Erlang B, insensitive)
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["JSQ", "JIQ", "I1F"])
@pytest.mark.parametrize(
    ("law", "engine"),
    [(D.LogNormal(mean=1.0, scv=3.0), "queues"), (D.Deterministic(1.0), "queues"),
     (COX2, "counts"), (COX3, "queues")],
    ids=["lognormal", "deterministic", "cox2-counts", "cox3-queues"],
)
def test_buffer_one_is_erlang_b(name, law, engine):
    n, lam = 6, 0.8
    a = lam * n * law.mean
    blocking = ly.erlang_b(n, a)
    res = zw.simulate_queues(_policy(name, n, 1), rc.Poisson(lam * n, law), steps=200_000,
                             warmup=1_000, replications=2, rng=5, engine=engine)
    _close(res.p_block, blocking)
    _close(res.p_wait, blocking)  # with b = 1 an idle-first arrival waits iff it is blocked
    _close(res.p_all_busy, blocking)  # PASTA
    _close(res.busy_fraction, a * (1 - blocking) / n)
    _close(res.mean_jobs, a * (1 - blocking) / n)
    if isinstance(law, D.Coxian):
        target = lam * law.phase_means * (1 - blocking)
        for m, v in enumerate(target):
            _close(rc.Estimate(res.phase_busy.value[m], res.phase_busy.se[m]), v)
    else:
        assert res.phase_busy is None


# ------------------------------------------------------------------------------------------
# single server, and PowerOfD(N, N) = JSQ
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["counts", "queues"])
def test_jsq_one_server_is_mm1(engine):
    rho = 0.7
    inp = rc.Poisson(rho, D.Exponential(1.0))
    res = zw.simulate_queues(zw.JSQ(1), inp, steps=300_000, warmup=2_000, replications=2,
                             rng=3, engine=engine)
    _close(res.mean_jobs, rho / (1 - rho))
    _close(res.p_wait, rho)
    _close(res.busy_fraction, rho)
    _close(res.mean_wait, rho / (1 - rho))  # M/M/1 mean wait rho / (mu - lambda)
    b = 4
    fin = zw.simulate_queues(zw.JSQ(1, buffer=b), inp, steps=300_000, warmup=2_000,
                             replications=2, rng=4, engine=engine)
    _close(fin.p_block, (1 - rho) * rho**b / (1 - rho ** (b + 1)))  # M/M/1/b


def test_power_of_n_is_jsq():
    n, inp = 8, rc.Poisson(0.9 * 8, COX3)
    kw = dict(steps=200_000, warmup=2_000, replications=2, engine="counts")
    j = zw.simulate_queues(zw.JSQ(n, 4), inp, rng=6, **kw)
    p = zw.simulate_queues(zw.PowerOfD(n, n, 4), inp, rng=7, **kw)
    for field in ("p_wait", "p_block", "mean_jobs", "busy_fraction"):
        _agree(getattr(j, field), getattr(p, field), atol=1e-4)
    # and d = 1 is random routing: strictly worse than JSQ
    r = zw.simulate_queues(zw.PowerOfD(n, 1, 4), inp, rng=8, **kw)
    assert r.p_wait.value > j.p_wait.value + 10 * math.hypot(r.p_wait.se, j.p_wait.se)


# ------------------------------------------------------------------------------------------
# the setting of Liu, Gong and Ying (docs/theory/zero_wait.md)
# ------------------------------------------------------------------------------------------
@UNTRUSTED
def test_paper_setting_zero_waiting():
    # alpha = 0.4: the paper's theorems need alpha < 0.5 (its section 8 runs alpha = 0.5, its
    # appendix G alpha = 0.3 and 0.4); b = 10 and the Coxian-4 of section 8
    n, b = 100, 10
    lam = zw.sub_halfin_whitt_rate(n, 0.4)
    inp = rc.Poisson(n * lam, PAPER)
    star = lam * PAPER.phase_means  # zero-waiting equilibrium s*_{1,m}
    out = {}
    for pol in (zw.JSQ(n, b), rc.JIQ(n, buffer=b)):
        res = zw.simulate_queues(pol, inp, time=2_000.0, warmup=20 * n, replications=2, rng=9)
        assert res.engine == "counts"
        # small, and far below the central M/M/N queue's Erlang C (about 0.061 here)
        assert res.p_wait.value + Z * res.p_wait.se < 0.03 < ly.erlang_c(n, n * lam) / 2
        assert res.p_block.value < 1e-4  # the paper saw no blocking either
        np.testing.assert_allclose(res.phase_busy.value, star, atol=3e-3)
        _close(res.busy_fraction, lam, atol=1e-3)
        assert 0.0 < res.mean_jobs.value - lam < 0.03
        out[type(pol).__name__] = res
    # JIQ performs almost exactly as JSQ
    _agree(out["JIQ"].p_wait, out["JSQ"].p_wait)
    _agree(out["JIQ"].mean_jobs, out["JSQ"].mean_jobs)
    # a fixed d = 2 is not zero-waiting: most arrivals wait
    pod = zw.simulate_queues(zw.PowerOfD(n, 2, b), inp, time=500.0, warmup=20 * n, rng=9)
    assert pod.p_wait.value > 0.5


def test_time_mode_matches_steps_mode():
    n, law = 10, COX2
    inp = rc.Poisson(0.8 * n, law)
    s = zw.simulate_queues(zw.JSQ(n, 3), inp, steps=200_000, warmup=1_000, rng=1)
    for engine in ("counts", "queues"):
        t = zw.simulate_queues(zw.JSQ(n, 3), inp, time=25_000.0, warmup=1_000, rng=2,
                               engine=engine)
        for field in ("p_wait", "mean_jobs", "busy_fraction"):
            _agree(getattr(s, field), getattr(t, field))
        assert abs(t.steps - 200_000) < 5_000  # arrivals in 25 000 time units at rate 8


def test_reproducible_and_final_state():
    inp = rc.Poisson(4.0, D.LogNormal(mean=1.0, scv=2.0))
    a = zw.simulate_queues(zw.I1F(5, 2), inp, steps=5_000, replications=3, rng=42)
    b = zw.simulate_queues(zw.I1F(5, 2), inp, steps=5_000, replications=3, rng=42)
    assert a.engine == "queues" and a.p_wait == b.p_wait and a.mean_jobs == b.mean_jobs
    assert a.final_state.shape == (3, 5)
    assert np.all(np.diff(a.final_state, axis=1) >= 0) and a.final_state.max() <= 2
    assert a.grid.size == 0 and a.mean_workload is None and a.phase_busy is None
    assert a.p_loss is None and a.path is None


@UNTRUSTED
def test_infinite_buffer_queues_grow():
    # heavy load with infinite buffers: queues get long (levels are added on the fly)
    inp = rc.Poisson(0.97 * 3, COX2)
    for engine in ("counts", "queues"):
        res = zw.simulate_queues(zw.PowerOfD(3, 1), inp, steps=50_000, rng=1, engine=engine)
        assert res.mean_jobs.value > 5 and res.p_block is None


# ------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "exc", "match"),
    [
        (lambda: zw.JSQ(0), ValueError, "servers"),
        (lambda: zw.JSQ(2.0), TypeError, "servers"),
        (lambda: zw.I1F(3, buffer=0), ValueError, "buffer"),
        (lambda: zw.PowerOfD(3, 4), ValueError, "d"),
        (lambda: zw.PowerOfD(3, 0), ValueError, "d"),
        (lambda: zw.PowerOfD(3, 2, buffer=1.5), TypeError, "buffer"),
        (lambda: rc.JIQ(3, buffer=0), ValueError, "buffer"),
        (lambda: zw.sub_halfin_whitt_rate(100, 1.0), ValueError, "alpha"),
        (lambda: zw.sub_halfin_whitt_rate(100, 0.0), ValueError, "alpha"),
        (lambda: zw.sub_halfin_whitt_rate(100, "x"), TypeError, "alpha"),
        (lambda: zw.sub_halfin_whitt_rate(1, 0.5), ValueError, "servers"),
    ],
)
def test_bad_systems(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


INP = rc.Poisson(2.0, D.Exponential(1.0))


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "match"),
    [
        ((rc.JSW(3), INP), {"steps": 10}, TypeError, "system"),
        ((zw.JSQ(3), "poisson"), {"steps": 10}, TypeError, "input"),
        ((zw.JSQ(3), rc.Renewal(D.Deterministic(0.5), D.Exponential(1.0))), {"steps": 10},
         ValueError, "Poisson"),
        ((zw.JSQ(3), INP), {}, ValueError, "exactly one"),
        ((zw.JSQ(3), INP), {"steps": 10, "time": 1.0}, ValueError, "exactly one"),
        ((zw.JSQ(3), INP), {"steps": 0}, ValueError, "steps"),
        ((zw.JSQ(3), INP), {"time": -1.0}, ValueError, "time"),
        ((zw.JSQ(3), INP), {"time": "long"}, TypeError, "time"),
        ((zw.JSQ(3), INP), {"steps": 10, "warmup": -1}, ValueError, "warmup"),
        ((zw.JSQ(3), INP), {"steps": 10, "replications": 0}, ValueError, "replications"),
        ((zw.JSQ(3), INP), {"steps": 10, "batches": 11}, ValueError, "batches"),
        ((zw.JSQ(3), INP), {"steps": 10, "engine": "fast"}, ValueError, "engine"),
        ((zw.JSQ(3), INP), {"steps": 10, "rng": "seed"}, TypeError, "rng"),
        ((zw.JSQ(3), rc.Poisson(2.0, D.LogNormal(1.0, 2.0))), {"steps": 10, "engine": "counts"},
         ValueError, "engine"),
        ((zw.JSQ(2), INP), {"steps": 10}, ValueError, "load"),
    ],
)
def test_bad_arguments(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        zw.simulate_queues(*args, **kwargs)


# ------------------------------------------------------------------------------------------
# the rc.simulate hook (added in recursions/_simulate.py by another change)
# ------------------------------------------------------------------------------------------
@pytest.mark.skipif("zerowait" not in inspect.getsource(rc.simulate),
                    reason="rc.simulate does not dispatch to recursions.engines.zerowait yet")
def test_simulate_dispatches_to_zerowait():
    inp = rc.Poisson(4.0, COX2)
    res = rc.simulate(zw.JSQ(5, buffer=3), inp, steps=20_000, rng=1)
    ref = zw.simulate_queues(zw.JSQ(5, buffer=3), inp, steps=20_000, rng=1)
    assert res.engine == ref.engine == "counts"
    assert res.p_wait == ref.p_wait
    jiq = rc.simulate(rc.JIQ(5, buffer=3), inp, steps=20_000, rng=1)
    assert jiq.engine == "counts" and jiq.p_block is not None


@pytest.mark.parametrize(("kw", "name"), [
    ({"grid": [0.0, 1.0]}, "grid="), ({"w0": [0.0, 0.0, 0.0]}, "w0="),
    ({"record": True}, "record="),
    ({"reference": lambda w: w}, "reference="), ({"profile_every": 2}, "profile_every="),
])
def test_queue_length_systems_refuse_options_they_cannot_honour(kw, name):
    # they were silently dropped before
    for system in (rc.JSQ(3, buffer=2), rc.JIQ(3, buffer=2)):
        with pytest.raises(ValueError, match=rf"queue-length engines, which do not take {name}"):
            rc.simulate(system, rc.Poisson(2.0, rc.dists.Exponential(1.0)), steps=100, rng=1,
                        **kw)


def test_a_progress_bar_and_chunks_change_no_number_of_the_queue_engines(capsys):
    # they run on the chunk loop of the workload engines, which honours both: with a bar the
    # kernels pause every `chunk` arrivals, in the warm-up too (7 divides neither part)
    inp = rc.Poisson(2.0, rc.dists.Exponential(1.0))
    for system in (rc.JSQ(3, buffer=2), rc.JIQ(3, buffer=2)):
        with warnings.catch_warnings():  # 8 batches are too few for a trusted interval
            warnings.simplefilter("ignore", rc.SimulationWarning)
            plain = rc.simulate(system, inp, steps=5000, rng=1, batches=8, warmup=1000)
            shown = rc.simulate(system, inp, steps=5000, rng=1, batches=8, warmup=1000,
                                progress=True, chunk=7)
        assert shown.engine == plain.engine
        np.testing.assert_array_equal(shown.final_state, plain.final_state)
        for stat, (num, den) in (plain._sums or {}).items():
            np.testing.assert_array_equal((shown._sums or {})[stat][0], num, err_msg=stat)
            np.testing.assert_array_equal((shown._sums or {})[stat][1], den, err_msg=stat)
    assert "arrival" in capsys.readouterr().err


def test_no_import_circle_between_simulate_and_the_queue_engines():
    import subprocess
    import sys

    # importing the queue engines first must work (it failed when they imported simulate)
    code = ("import importlib; z = importlib.import_module('recursions.engines.zerowait'); "
            "r = importlib.import_module('recursions.results._simulation_result'); "
            "assert z.SimulationResult is r.SimulationResult; "
            "s = importlib.import_module('recursions._simulate'); "
            "assert s.simulate_queues is z.simulate_queues")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_a_buffered_jiq_has_no_workload_map_to_iterate():
    # a JIQ with a buffer runs on the queue-length engines: the workload-map operations must
    # refuse it rather than iterate the unbuffered JIQ kernel in its place
    import coupling as cp

    system = rc.JIQ(4, buffer=1)
    inp = rc.Poisson(3.0, rc.dists.Exponential(1.0))
    for call in (lambda: drivers_of(system), lambda: system.step(np.zeros(4), 1.0, 0.5, 0.3),
                 lambda: cp.coupling_time(system, inp, np.zeros(4), np.ones(4), rng=1),
                 lambda: cp.check_monotone(system, rng=1)):
        with pytest.raises(ValueError, match="not a map on workload vectors"):
            call()
    assert 0.0 < rc.simulate(system, inp, steps=2000, rng=1).p_block.value < 1.0


def test_queue_length_policies_are_systems_and_refuse_workload_methods():
    # JSQ, I1F and PowerOfD are rc.System's, declaring their engines and what the engines read;
    # the workload-map operations refuse them as they refuse a buffered JIQ
    import coupling as cp

    inp = rc.Poisson(3.0, rc.dists.Exponential(1.0))
    for system, code, d in ((zw.JSQ(4), rc.codes.QueueCode.JSQ, 1),
                            (zw.I1F(4, buffer=2), rc.codes.QueueCode.I1F, 1),
                            (zw.PowerOfD(4, 3), rc.codes.QueueCode.POWER_OF_D, 3)):
        assert isinstance(system, rc.System) and system.engines == ("queues", "counts")
        assert system.queue_policy == (code, system.buffer or 0, d)
        assert system.load(inp) == 0.75 and system.heap_policy is None
        for call in (lambda s=system: drivers_of(s),
                     lambda s=system: cp.coupling_time(s, inp, np.zeros(4), np.ones(4), rng=1),
                     lambda s=system: cp.check_monotone(s, rng=1)):
            with pytest.raises(ValueError, match="not a map on workload vectors"):
                call()
    assert rc.JIQ(4).queue_policy == (rc.codes.QueueCode.JIQ, 0, 1)  # both kinds of engine
    assert rc.JSW(4).queue_policy is None
    with pytest.raises(TypeError, match="queue-length system"):
        zw.simulate_queues(rc.LeastOfD(4, 2), inp, steps=10)


@pytest.mark.parametrize(("system", "rate", "verdict", "basis"), [
    (zw.JSQ(3, buffer=2), 2.0, "stable", "bounded"),     # finite buffers: a theorem
    (zw.PowerOfD(4, 2, buffer=3), 6.0, "stable", "bounded"),  # even above load 1 (blocking)
    (zw.JSQ(3), 2.0, "stable", "bramson-jsq"),           # (3) holds: Bramson (2011)
    (zw.PowerOfD(4, 2), 3.6, "stable", "bramson-jsq"),
    (zw.I1F(3), 2.0, "undecided", "none"),               # (3) holds, no theorem covers I1F
    (zw.I1F(3), 3.6, "unstable", "condition-3-fails"),   # (3) fails
])
def test_check_stability_of_queue_length_policies(system, rate, verdict, basis):
    rep = ly.check_stability(system, rc.Poisson(rate, D.Exponential(1.0)), rng=1)
    assert rep.verdict == verdict and rep.decided_by.name == basis, rep
    if verdict == "undecided":
        assert "no stability theorem" in rep.decided_by.detail


def test_what_needs_a_workload_map_refuses_queue_length_systems_saying_so():
    # they pass check_system now: each door that needs a map says what it needs (before, some
    # spoke of options never given, or of a buffered JIQ, or of a missing exact method)
    import coupling as cp
    import coupling.strategies as cs

    inp = rc.Poisson(2.0, D.Exponential(1.0))
    for what, call in [
            ("a growth test", lambda: ly.growth_rate(zw.JSQ(3), inp)),
            ("a Loynes sequence", lambda: ly.loynes(zw.I1F(3), inp, 1024)),
            ("an envelope", lambda: rc.Envelope(zw.PowerOfD(3, 2))),
            ("backward draws", lambda: rc.BackwardDraws(zw.JSQ(3), inp)),
            ("a strategy of states", lambda: cs.states_for(zw.JSQ(3))),
            ("a start state", lambda: rc.simulate(zw.JSQ(3), inp, steps=1000,
                                                  start="stationary")),
            ("an exact sample", lambda: cp.perfect_sample(zw.JSQ(3), inp, 10, rng=1))]:
        with pytest.raises(ValueError, match=rf"not a map on workload vectors .*none for {what}"):
            call()
