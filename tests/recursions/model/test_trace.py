"""Traces: built from arrays, CSV and SWF; replayed against a hand-written recursion; cyclic."""

from __future__ import annotations

import json
import pickle
import tracemalloc

import numba
import numpy as np
import pytest

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.common._rng import as_seed_sequence
from tests import naive

E = rc.dists.Exponential


def poisson_trace(jobs, rate=2.5, seed=1, **kw):
    gen = np.random.default_rng(seed)
    return rc.Trace(np.cumsum(gen.exponential(1 / rate, jobs)), gen.exponential(1.0, jobs), **kw)


def routing(system, jobs, rng=1):
    """The uniforms a replay draws, in one chunk (``chunk >= jobs``)."""
    return np.random.default_rng(as_seed_sequence(rng)).random((jobs, system.uniforms))


# -- replay against the recursion written out ------------------------------------------------


@pytest.mark.parametrize("system", [rc.JSW(3), rc.JIQ(3), rc.LeastOfD(4, 2), rc.Loss(2),
                                    rc.JpSW(3, 1), rc.RandomRouting(3)], ids=repr)
def test_waits_are_the_recursion_written_out(system):
    tr = poisson_trace(400)
    want, last = naive.replay_trace(system, tr.times, tr.services, routing(system, 400))
    res = rc.simulate(system, tr, chunk=1000, engine="dense")
    np.testing.assert_allclose(res.waits, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.final_state, last, rtol=1e-12, atol=1e-12)
    served = ~np.isnan(res.waits)
    assert res.jobs == 400 and res.lost == int((~served).sum())
    assert res.mean_wait == pytest.approx(np.mean(np.asarray(want)[served]))
    assert res.p_wait == pytest.approx(np.mean(np.asarray(want)[served] > 0))


def test_fcfs_replay_is_lindley_and_its_heap_agrees():
    # one server: W_{n+1} = (W_n + sigma_n - tau_n)^+, written here
    tr = poisson_trace(20_000, rate=0.9)
    w, lindley = 0.0, []
    for k in range(len(tr)):
        lindley.append(w)
        if k + 1 < len(tr):
            w = max(w + tr.services[k] - (tr.times[k + 1] - tr.times[k]), 0.0)
    for engine in ("dense", "heap"):
        res = rc.simulate(rc.JSW(1), tr, engine=engine, chunk=777)  # chunks that do not divide
        np.testing.assert_allclose(res.waits, lindley, rtol=1e-9, atol=1e-9)
        assert res.engine == engine
        np.testing.assert_allclose(res.responses(), np.asarray(lindley) + tr.services,
                                   rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("system", [rc.JSW(40), rc.JIQ(40), rc.LeastOfD(40, 3)], ids=repr)
def test_heap_replay_is_the_dense_one_for_jsw_and_the_same_law_for_the_others(system):
    tr = poisson_trace(30_000, rate=36.0)
    heap, dense = rc.simulate(system, tr), rc.simulate(system, tr, engine="dense")
    assert heap.engine == "heap" and dense.engine == "dense"
    if isinstance(system, rc.JSW):  # deterministic: the same waits, up to rounding
        np.testing.assert_allclose(heap.waits, dense.waits, rtol=1e-9, atol=1e-9)
    else:  # routed by other draws: the means agree within the waits' own spread
        spread = np.std(dense.waits) * 4 / np.sqrt(len(tr) / 200)
        assert abs(heap.mean_wait - dense.mean_wait) < spread + 1e-3


@numba.njit
def _longest_idle(w, sigma, tau, u, params):  # a map of one's own: join the last server
    found = w[w.size - 1]
    w[w.size - 1] += sigma
    w.sort()
    for i in range(w.size):
        w[i] = max(w[i] - tau, 0.0)
    return found


def test_a_map_of_ones_own_replays():
    tr = poisson_trace(300)
    res = rc.simulate(rc.Map(_longest_idle, 2, name="last"), tr)
    w, want = np.zeros(2), []
    for k in range(len(tr)):
        want.append(w[-1])
        w[-1] += tr.services[k]
        w = np.sort(w)
        if k + 1 < len(tr):
            w = np.maximum(w - (tr.times[k + 1] - tr.times[k]), 0.0)
    np.testing.assert_allclose(res.waits, want, rtol=1e-12, atol=1e-12)


def test_by_time_is_the_windows_counted_by_hand():
    tr = poisson_trace(5_000, rate=1.8)
    res = rc.simulate(rc.JSW(2), tr)
    t = res.by_time(100.0)
    for row in (0, 7, len(t["start"]) - 1):
        lo, hi = t["start"][row], t["end"][row]
        inside = (tr.times >= lo) & (tr.times < hi) if row < len(t["start"]) - 1 else \
            (tr.times >= lo)
        w = res.waits[inside]
        assert t["jobs"][row] == inside.sum()
        assert t["mean_wait"][row] == pytest.approx(w.mean())
        assert t["p_wait"][row] == pytest.approx(np.mean(w > 0))
        assert t["mean_response"][row] == pytest.approx((w + tr.services[inside]).mean())
        assert t["max_wait"][row] == pytest.approx(w.max())
    assert t["jobs"].sum() == len(tr)
    with pytest.raises(ValueError, match="window must be a finite time > 0"):
        res.by_time(0.0)
    with pytest.raises(ValueError, match="at or before the first arrival"):
        res.by_time(10.0, start=tr.times[0] + 1)


def test_loss_replay_counts_the_lost():
    tr = poisson_trace(2_000, rate=3.0)
    res = rc.simulate(rc.Loss(2), tr)
    assert res.lost > 0 and res.p_loss == pytest.approx(res.lost / res.jobs)
    assert np.isnan(res.waits).sum() == res.lost
    t = res.by_time(50.0)
    assert t["lost"].sum() == res.lost and "p_loss" in t


# -- three ways in ---------------------------------------------------------------------------


def test_trace_from_arrays_and_interarrivals_and_its_checks():
    tr = rc.Trace.from_interarrivals([1.0, 2.0, 0.0, 5.0], [1, 2, 3, 4], start=10.0)
    assert tr.times.tolist() == [10.0, 11.0, 13.0, 13.0] and len(tr) == tr.jobs == 4
    assert not tr.times.flags.writeable and not tr.services.flags.writeable
    with pytest.raises(ValueError, match=r"nondecreasing, but job 2 arrives at 0.5"):
        rc.Trace([0.0, 1.0, 0.5], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="services must be >= 0"):
        rc.Trace([0.0, 1.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="equal lengths"):
        rc.Trace([0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        rc.Trace([0.0, np.nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="at least one job"):
        rc.Trace([], [])
    with pytest.raises(TypeError, match="sequence of numbers"):
        rc.Trace("0 1", [1.0])


def test_trace_from_csv(tmp_path):
    f = tmp_path / "log.csv"
    f.write_text("id,t,size,cpus\n1,0.0,2.5,4\n2,1.5,0.5,1\n\n3,1.5,1.0,2\n")
    tr = rc.Trace.from_csv(f, time="t", service="size", processors="cpus")
    assert tr.times.tolist() == [0.0, 1.5, 1.5] and tr.services.tolist() == [2.5, 0.5, 1.0]
    assert tr.processors.tolist() == [4, 1, 2] and tr.name == "log.csv"
    gaps = tmp_path / "gaps.tsv"
    gaps.write_text("gap\twork\n2\t1\n3\t1\n9\t1\n")
    tr = rc.Trace.from_csv(gaps, time="gap", service="work", interarrival=True, delimiter="\t")
    assert tr.times.tolist() == [0.0, 2.0, 5.0]
    with pytest.raises(ValueError, match=r"no column 'arrival'; its columns are \['id', 't'"):
        rc.Trace.from_csv(f, time="arrival", service="size")
    (tmp_path / "bad.csv").write_text("time,service\n0,1\n1,x\n")
    with pytest.raises(ValueError, match=r"bad.csv, line 3: expected numbers"):
        rc.Trace.from_csv(tmp_path / "bad.csv")


SWF = """\
; Version: 2.2
; Computer: a test cluster written by this test
; MaxProcs: 64
    1      0   10    100    4  -1 -1    4  200 -1 1 1 1 -1 1 -1 -1 -1
    2     50    0     -1    8  -1 -1    8  200 -1 5 1 1 -1 1 -1 -1 -1
    3     30    5     20   -1  -1 -1    2  100 -1 1 2 1 -1 1 -1 -1 -1
    4     60    0      0    1  -1 -1    1   10 -1 1 3 1 -1 1 -1 -1 -1
"""


def test_trace_from_swf_keeps_submit_run_and_processors(tmp_path):
    f = tmp_path / "cluster.swf"
    f.write_text(SWF)
    tr = rc.Trace.from_swf(f)
    # job 2 has run time -1 (dropped); job 3 was submitted before job 2: sorted by submit
    assert tr.times.tolist() == [0.0, 30.0, 60.0] and tr.services.tolist() == [100.0, 20.0, 0.0]
    assert tr.processors.tolist() == [4, 2, 1]  # job 3's allocated is -1: its requested 2
    assert tr.dropped == 1 and tr.name == "cluster.swf"
    res = rc.simulate(rc.JSW(1), tr)
    assert res.waits.tolist() == [0.0, 70.0, 60.0]
    (tmp_path / "short.swf").write_text("1 0 0 5 1\n")
    with pytest.raises(ValueError, match=r"short.swf, line 1: a SWF job has 18 fields, got 5"):
        rc.Trace.from_swf(tmp_path / "short.swf")


# -- never the data in a repr, a result or a file ---------------------------------------------


def test_repr_results_and_plots_never_carry_the_data():
    tr = poisson_trace(200_000)
    assert "\n" not in repr(tr) and len(repr(tr)) < 120
    res = rc.simulate(rc.JSW(3), tr)
    assert res.trace == repr(tr) and len(repr(res)) < 200
    d = json.loads(res.to_json())
    assert "waits" not in d and len(json.dumps(d)) < 2_000
    blob = pickle.dumps(res)
    assert len(blob) < tr.times.nbytes + 10_000  # its waits, not the trace's arrays
    back = pickle.loads(blob)
    assert np.array_equal(back.waits, res.waits) and back.mean_wait == res.mean_wait
    with pytest.raises(ValueError, match="unpickled without its trace's arrays"):
        back.by_time(100.0)
    assert back.by_time(1e4, trace=tr)["mean_wait"].tolist() == \
        res.by_time(1e4)["mean_wait"].tolist()
    cyc = tr.cyclic()
    assert len(repr(cyc)) < 120 and "period=200,000" in repr(cyc)
    sim = rc.simulate(rc.JSW(3), cyc, steps=10_000, rng=1)
    assert len(sim.input) < 120 and len(repr(sim)) < 600
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = res.plot(window=500.0)
    assert len(ax.get_title()) < 300
    matplotlib.pyplot.close("all")


def test_a_long_replay_holds_little_beyond_the_trace_and_its_waits():
    tr = poisson_trace(10**6, rate=3.5)
    rc.simulate(rc.JIQ(4), poisson_trace(10))  # compile outside the measurement
    tracemalloc.start()
    res = rc.simulate(rc.JIQ(4), tr)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    waits = tr.times.nbytes  # the result's own array
    # beyond it: a chunk's arrays (2**16 jobs), a mask of the jobs served (1 byte a job)
    assert peak < waits + 4 * 8 * (1 << 16) + 2 * len(tr) + 1_000_000, peak
    assert res.jobs == 10**6


# -- what does not apply, and the cyclic input -------------------------------------------------


def test_what_a_replay_refuses_it_says():
    tr = poisson_trace(50)
    with pytest.raises(ValueError, match=r"steps=, precision= do not apply.*trace.cyclic"):
        rc.simulate(rc.JSW(2), tr, steps=10, precision=0.1)
    with pytest.raises(ValueError, match=r"grid=, confidence= do not apply"):
        rc.simulate(rc.JSW(2), tr, grid=np.array([0.0, 1.0]), confidence=0.9)
    with pytest.raises(ValueError, match="JSQ runs on queue lengths"):
        rc.simulate(rc.JSQ(2), tr)
    red = rc.Redundancy(4, [rc.JobClass(2, 1, E(1.0))])
    with pytest.raises(ValueError, match="draws each job's work"):
        rc.simulate(red, tr)
    with pytest.raises(ValueError, match="heap engine runs JSW, JIQ"):
        rc.simulate(rc.JpSW(3, 1), tr, engine="heap")
    with pytest.raises(ValueError, match="w0 must hold 2 finite workloads"):
        rc.simulate(rc.JSW(2), tr, w0=[1.0])
    with pytest.raises(TypeError, match=r"got a Trace.*trace.cyclic"):
        ly.check_stability(rc.JSW(2), tr)


def test_the_cyclic_trace_is_the_periodic_input_that_the_other_tools_take():
    tr = rc.Trace([0.0, 1.0, 3.0, 3.5], [1.2, 0.4, 2.0, 0.8])
    cyc = tr.cyclic(phase=0)
    assert cyc.tau == pytest.approx([1.0, 2.0, 0.5, 3.5 / 3]) and cyc.period == 4
    assert cyc.sigma.tolist() == tr.services.tolist()
    s, _ = cyc.sample(8)
    assert s.tolist() == 2 * tr.services.tolist()
    big = poisson_trace(5_000, rate=1.0)  # load 1/2 a server on two servers
    rep = ly.check_stability(rc.JSW(2), big.cyclic())
    assert rep.verdict == "stable"
    small = poisson_trace(200, rate=1.0)  # a backward run needs some periods: a short one
    assert ly.loynes(rc.JSW(2), small.cyclic(), 2**17, rng=1).stabilised
    # exact draws under a trace: a loss system renovates (its service times are bounded)
    ps = cp.perfect_sample(rc.Loss(2), small.cyclic(), 5, rng=1)
    assert ps.size == 5 and ps.method == "renovation"
    with pytest.raises(ValueError, match="at least two jobs"):
        rc.Trace([1.0], [1.0]).cyclic()
