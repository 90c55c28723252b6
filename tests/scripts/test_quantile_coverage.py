"""benchmarks/quantile_coverage.py's multi-server cells: the oracles, the quick table, the merge.

The single-server cells' tests are in ``test_coverage_harness.py``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import recursions as rc
from recursions.common._tables import Rows
from tests.bench import benchmark_module


@pytest.fixture(scope="module")
def qcov():
    with benchmark_module("quantile_coverage.py", "_bench_qcov_multi") as mod:
        yield mod


def erlang_c_by_sums(s: int, a: float) -> float:
    """Erlang C by its sums: ``t / (t + sum_{k<S} a^k / k!)``, ``t = a^S S / (S! (S - a))``."""
    top = a**s / math.factorial(s) * s / (s - a)
    return top / (sum(a**k / math.factorial(k) for k in range(s)) + top)


def multi_cells(qcov):
    return [c for c in qcov.CELLS if c.servers > 1]


def test_erlang_c_oracle(qcov):
    assert qcov.erlang_c(1, 0.9) == pytest.approx(0.9, rel=1e-14)        # M/M/1: P(W > 0) = rho
    assert qcov.erlang_c(2, 1.0) == pytest.approx(1 / 3, rel=1e-14)      # M/M/2 at load 0.5
    for s, a in ((10, 9.0), (10, 9.5), (40, 38.0), (40, 20.0)):
        assert qcov.erlang_c(s, a) == pytest.approx(erlang_c_by_sums(s, a), rel=1e-10)
    assert [c.label for c in multi_cells(qcov)] == ["M/M/10 0.9", "M/M/10 0.95", "M/M/40 0.95"]
    for cell in multi_cells(qcov):
        s, a = cell.servers, cell.load * cell.servers
        c = erlang_c_by_sums(s, a)
        for q, (x, se) in qcov.exact_quantiles(cell, 0)["wait_quantile"].items():
            # strictly above the atom at 0, and P(W > x) = C exp(-(S - a) x) = 1 - q there
            assert q > 1 - c and x > 0 and se == 0.0
            assert c * math.exp(-(s - a) * x) == pytest.approx(1 - q, rel=1e-10)
    # a q on the atom at 0 (M/M/40 at load 0.5: C ~ 4e-6) has no quantile to check
    with pytest.raises(ValueError, match="atom"):
        qcov.erlang_c_quantile(40, 20.0, 0.5)
    with pytest.raises(ValueError):
        qcov.erlang_c(10, 10.0)


def test_oracle_is_the_tail_wait_quantile_reads(qcov):
    # wait_quantile reads the tail of what arrivals found at the server joined (wait_sf): at
    # the Erlang C quantiles of M/M/10 at 0.9 that tail must be 1 - q, within its own se
    cell = multi_cells(qcov)[0]
    ex = qcov.exact_quantiles(cell, 0)["wait_quantile"]
    levels = [0.0] + [ex[q][0] for q in qcov.QS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(rc.JSW(cell.servers), rc.Poisson(cell.load * cell.servers,
                                                           rc.dists.Exponential(1.0)),
                          2**18, warmup=2**15, batches=64, grid=levels, rng=11)
    est = res.wait_sf(levels)
    want = np.array([erlang_c_by_sums(10, 9.0)] + [1 - q for q in qcov.QS])
    assert np.all(np.isfinite(est.se)) and np.all(est.se > 0)
    assert np.all(np.abs(est.value - want) < 4 * est.se), (est.value, want, est.se)


def workload_sf_by_states(s: int, a: float, w: float) -> float:
    """``x_w`` of M/M/S summed over the chain's states, with gamma tails (no mixture trick).

    ``n < S`` present: ``n`` exponential remaining services. ``S + k``: the ``k`` waiting
    start at departures of rate ``S`` (``T ~ Gamma(k, S)``), and the expected share of
    servers still busy at ``w`` is ``E[min(1, e^{T - w})] = P(T > w) + e^{-w} E[e^T; T <= w]``,
    with ``E[e^T; T <= w] = (S / (S - 1))^k P(Gamma(k, S - 1) <= w)``.
    """
    from scipy.stats import gamma

    weights = [a**n / math.factorial(n) for n in range(s)]
    top = a**s / math.factorial(s)
    rho = a / s
    kmax = int(math.log(1e-18) / math.log(rho)) + 1
    norm = sum(weights) + top / (1 - rho)
    x = sum(p * n / s for n, p in enumerate(weights)) * math.exp(-w)
    for k in range(kmax):
        if k == 0:
            share = math.exp(-w)
        else:
            share = (gamma.sf(w, k, scale=1 / s) + math.exp(-w) * (s / (s - 1)) ** k
                     * gamma.cdf(w, k, scale=1 / (s - 1)))
        x += top * rho**k * share
    return x / norm


@pytest.mark.parametrize(("s", "a"), [(10, 9.0), (10, 9.5), (40, 38.0), (3, 1.5)])
def test_server_workload_oracle_against_the_states(qcov, s, a):
    for w in (0.0, 0.3, 1.0, 2.5, 6.0):
        assert qcov.mms_server_workload_sf(s, a, w) == pytest.approx(
            workload_sf_by_states(s, a, w), rel=1e-8, abs=1e-14)
    assert qcov.mms_server_workload_sf(s, a, 0.0) == pytest.approx(a / s, rel=1e-12)
    for q in (q for q in qcov.QS if q > 1 - a / s):   # above the atom of idle servers
        x = qcov.mms_server_workload_quantile(s, a, q)
        assert qcov.mms_server_workload_sf(s, a, x) == pytest.approx(1 - q, rel=1e-9)


@pytest.mark.parametrize(("s", "a"), [(10, 9.0), (10, 9.5), (40, 38.0), (3, 2.5)])
def test_server_workload_oracle_against_exact_draws(qcov, s, a):
    # the share of servers busy past w in exact stationary states (the birth-death chain and
    # memoryless services, coupling.mms_states), 200 000 of them: within 4 standard errors
    # (S - a = 1 at M/M/10 0.9, above 1 or below it in the others)
    import coupling as cp

    states = np.asarray(cp.mms_states(rc.JSW(s), rc.Poisson(a, rc.dists.Exponential(1.0)),
                                      200_000, rng=5))
    for w in (0.0, 0.5, 1.2, 3.0):
        share = (states > w).mean(axis=1)
        se = share.std() / math.sqrt(share.size)
        assert abs(share.mean() - qcov.mms_server_workload_sf(s, a, w)) < 4 * se


def test_server_workload_oracle_edges(qcov):
    # beta = S - a = 1 has its own branch: continuous with its neighbours on both sides
    for w in (0.1, 0.7, 3.0):
        at = qcov.mms_server_workload_sf(2, 1.0, w)
        for a in (1.0 + 1e-5, 1.0 - 1e-5):
            assert at == pytest.approx(qcov.mms_server_workload_sf(2, a, w), rel=1e-4)
        assert at == pytest.approx(workload_sf_by_states(2, 1.0, w), rel=1e-8)
    # far in the tail, finite on both sides of beta = 1 (a naive form gives 0 * inf there)
    for a in (1.5, 0.5):
        tail = qcov.mms_server_workload_sf(2, a, 2000.0)
        assert math.isfinite(tail) and 0.0 <= tail < 1e-100
    with pytest.raises(ValueError, match="atom"):   # q <= 1 - rho: an idle server
        qcov.mms_server_workload_quantile(10, 5.0, 0.5)


def test_quick_multi_server_table(qcov):
    rows = list(qcov.main(["--quick", "--cells", r"^M/M/10 0\.9$"]))
    assert [(r["statistic"], r["q"]) for r in rows] == [
        (k, q) for k in qcov.KINDS for q in qcov.QS]
    for r in rows:
        assert r["cell"] == "M/M/10 0.9"
        assert 0 <= r["coverage"] <= 1 and r["runs"] == 4 and r["half_width_mean"] > 0
        assert r["coverage_se"] == pytest.approx(
            math.sqrt(r["coverage"] * (1 - r["coverage"]) / 4))
        want = (math.log(erlang_c_by_sums(10, 9.0) / (1 - r["q"]))
                if r["statistic"] == "wait_quantile"
                else qcov.mms_server_workload_quantile(10, 9.0, r["q"]))
        assert r["exact"] == pytest.approx(want, rel=1e-10)
    with pytest.raises(SystemExit):
        qcov.main(["--quick", "--cells", "no such cell"])
    with pytest.raises(SystemExit):
        qcov.main(["--quick", "--csv"])   # the quick mode writes nothing


def test_merge_keeps_the_committed_rows(qcov, tmp_path):
    path = qcov.RESULTS / "quantile_coverage.csv"
    old = qcov.read_rows(path)
    assert old and {r["cell"] for r in old} <= {c.label for c in qcov.CELLS}
    # read back and written out again, the committed table is unchanged byte for byte
    out = tmp_path / "again.csv"
    Rows(qcov.merge(old, []), dims=("cell", "statistic", "q")).to_pandas().to_csv(out,
                                                                                  index=False)
    assert out.read_text() == path.read_text()
    # rerunning one cell replaces its rows only, in place; the others stay as they were
    first = old[0]["cell"]
    new = [dict(r, coverage=0.5) for r in old if r["cell"] == first]
    merged = qcov.merge(old, new)
    assert len(merged) == len(old)
    assert [(r["cell"], r["statistic"], r["q"]) for r in merged] == [
        (r["cell"], r["statistic"], r["q"]) for r in old]
    for a, b in zip(merged, old, strict=True):
        if a["cell"] == first:
            assert a["coverage"] == 0.5
        else:
            assert a is b
