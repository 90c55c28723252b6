"""benchmarks/quantile_coverage.py's multi-server cells: Erlang C, the quick table, the merge.

The single-server cells' tests are in ``test_coverage_harness.py``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import recursions as rc
from recursions.tables import Rows
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
        for q, (x, se) in qcov.exact_quantiles(cell, 0).items():
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
    ex = qcov.exact_quantiles(cell, 0)
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


def test_quick_multi_server_table(qcov):
    rows = list(qcov.main(["--quick", "--cells", r"^M/M/10 0\.9$"]))
    assert [(r["statistic"], r["q"]) for r in rows] == [
        (k, q) for k in qcov.KINDS for q in qcov.QS]
    for r in rows:
        assert r["cell"] == "M/M/10 0.9"
        if r["statistic"] == "wait_quantile":
            assert 0 <= r["coverage"] <= 1 and r["runs"] == 4 and r["half_width_mean"] > 0
            assert r["coverage_se"] == pytest.approx(
                math.sqrt(r["coverage"] * (1 - r["coverage"]) / 4))
            assert r["exact"] == pytest.approx(
                math.log(erlang_c_by_sums(10, 9.0) / (1 - r["q"])), rel=1e-10)
        else:   # no oracle for one server's workload on M/M/10: not applicable, no number
            assert r["runs"] == 0 and math.isnan(r["coverage"]) and math.isnan(r["exact"])
    md = qcov.markdown(rows).splitlines()
    assert sum("not applicable" in line for line in md) == 2
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
