"""benchmarks/coverage.py: the coverage table's harness, on two small cells with few seeds."""

from __future__ import annotations

import csv
import dataclasses
import inspect
import math

import pytest

import recursions as rc
from tests.bench import benchmark_module

CELLS = r"^(M/M/1|E2/M/1) 0\.8$"


@pytest.fixture(scope="module")
def cov():
    with benchmark_module("coverage.py", "_bench_coverage") as mod:
        yield mod


def test_cells_cover_the_issue(cov):
    labels = [c.label for c in cov.cells()]
    assert len(labels) == len(set(labels)) == 4 * 4 * 5 + 4 + 2
    assert {"M/M/100 0.99", "M/D/1 0.8", "E2/M/40 0.98", "M/H2/10 0.9", "JIQ(1000) 0.95",
            "LL2(1000) 0.99", "J2SW(3,1) 0.6"} <= set(labels)
    # every analytic cell has finite exact values, the JpSW cells sample below S - p = 2
    for c in cov.cells():
        if c.exact_kind == "oracle":
            assert all(math.isfinite(v) and v > 0 for v in cov.oracle(c).values()), c.label
        if c.model == "JpSW":
            assert c.load * c.S < 2


def test_quick_fixed_table(cov, tmp_path):
    table = cov.main(["--quick", "--mode", "fixed", "--cells", CELLS, "--seeds", "4",
                      "--workers", "0", "--out", str(tmp_path)])
    rows = list(table)
    assert [r["cell"] for r in rows] == ["M/M/1 0.8", "E2/M/1 0.8"]
    for r in rows:
        for k in cov.STATS:
            for col in (f"cov_{k}", f"cov_unwarned_{k}"):
                assert 0 <= r[col] <= 1 or (col.startswith("cov_unwarned") and
                                            math.isnan(r[col])), (col, r[col])
            c = r[f"cov_{k}"]
            assert r[f"cov_{k}_se"] == pytest.approx(math.sqrt(c * (1 - c) / 4))
        assert r["runs"] == 4 and r["errors"] == 0 and r["nominal"] == 0.95
        assert r["steps_mean"] == r["steps_p95"] == 22_000   # 20 000 steps + 2 000 warm-up
        assert 0 <= r["warned"] <= 1 and r["oracle_steps"] > 0
        assert r["steps_ratio"] == pytest.approx(r["steps_mean"] / r["oracle_steps"])
        # the runs' own asymptotic spread: a fixed run of 20 000 arrivals, its error squared
        for k in cov.STATS:
            assert r[f"sigma_runs_{k}"] > 0
        assert r["oracle_steps_runs"] == pytest.approx(max(
            (1.959963984540054 * r[f"sigma_runs_{k}"] / r[f"half_width_{k}"]) ** 2
            for k in cov.STATS))
        assert r["steps_ratio_runs"] == pytest.approx(r["steps_mean"] / r["oracle_steps_runs"])
    # the exact values are the oracles'
    assert rows[0]["exact_p_wait"] == pytest.approx(0.8, rel=1e-12)
    assert rows[0]["exact_mean_workload"] == pytest.approx(4.0, rel=1e-12)
    # files: the table as CSV and Markdown, the references and pilots
    with (tmp_path / "coverage_fixed_quick.csv").open() as f:
        back = list(csv.DictReader(f))
    assert [b["cell"] for b in back] == ["M/M/1 0.8", "E2/M/1 0.8"]
    assert {"cov_p_wait", "cov_mean_wait_se", "steps_p95", "warned",
            "cov_unwarned_mean_workload", "oracle_steps", "steps_ratio"} <= set(back[0])
    md = (tmp_path / "coverage_fixed_quick.md").read_text().splitlines()
    assert md[0].startswith("| cell | nominal | p_wait |") and len(md) == 4
    with (tmp_path / "coverage_reference_quick.csv").open() as f:
        refs = list(csv.DictReader(f))
    assert len(refs) == 6 and all(r["source"] == "oracle" for r in refs)
    assert all(float(r["sigma_asym"]) > 0 for r in refs)


def test_a_wrong_exact_value_is_not_covered(cov):
    # the coverage column counts intervals that contain the exact value, nothing else
    cell = cov.Cell("M/M", 1, 0.8)
    exact = cov.oracle(cell)
    ref = {k: {"value": exact[k], "se": 0.0, "sigma_asym": 1.0} for k in cov.STATS}
    ref["mean_wait"] = {"value": 40.0, "se": 0.0, "sigma_asym": 1.0}   # the truth is 4
    row = cov.run_cell(cell, "fixed", 3, ref=ref, steps=20_000, warmup=2_000, workers=0)
    assert row["cov_mean_wait"] == 0.0 and row["cov_mean_wait_se"] == 0.0
    assert row["cov_p_wait"] > 0


def test_precision_mode_cell(cov, tmp_path):
    if "precision" not in inspect.signature(rc.simulate).parameters:
        pytest.skip("rc.simulate has no precision= yet (issue 26's precision mode)")
    table = cov.main(["--quick", "--mode", "precision", "--precision", "0.3",
                      "--max-steps", "200000", "--cells", r"^M/M/1 0\.8$", "--seeds", "2",
                      "--workers", "0", "--out", str(tmp_path)])
    (r,) = list(table)
    assert r["runs"] == 2 and r["errors"] == 0
    assert 0 <= r["cov_mean_wait"] <= 1 and 0 <= r["reached"] <= 1
    assert 0 < r["steps_mean"] <= 200_000 + 1e-9 or r["reached"] < 1
    # the run length that reaches the asked half-width: (z sigma / (0.3 x))^2 for the
    # statistic that needs most, here from the pilot's sigma and M/M/1's exact values
    with (tmp_path / "coverage_reference_quick.csv").open() as f:
        ref = {row["stat"]: row for row in csv.DictReader(f)}
    need = max((1.959963984540054 * float(ref[k]["sigma_asym"]) / (0.3 * float(ref[k]["value"])))
               ** 2 for k in cov.STATS)
    assert r["oracle_target_steps"] == pytest.approx(need)
    assert r["target_ratio"] == pytest.approx(r["steps_mean"] / need)


def test_precision_mode_refused_with_a_clear_message(cov, monkeypatch, tmp_path):
    monkeypatch.setattr(cov, "has_precision_mode", lambda: False)
    with pytest.raises(SystemExit, match="precision"):
        cov.main(["--quick", "--mode", "precision", "--out", str(tmp_path)])


@pytest.fixture(scope="module")
def qcov():
    with benchmark_module("quantile_coverage.py", "_bench_qcov") as mod:
        yield mod


def test_quantile_oracles(qcov):
    # M/M/1: P(W > w) = rho exp(-(1 - rho) w), so P(W > x_q) = 1 - q at the exact quantile
    ex = qcov.exact_quantiles(qcov.Cell("exp", 0.9), 0)
    assert ex["wait_quantile"] == ex["workload_quantile"]   # one server: the same law
    for q, (x, se) in ex["wait_quantile"].items():
        assert 0.9 * math.exp(-0.1 * x) == pytest.approx(1 - q) and se == 0.0
    # M/Lomax/1: the Benes draws have the Pollaczek-Khinchine mean rho E[s^2] / (2 (1 - rho))
    law = qcov.Cell("lomax", 0.8).law()
    w = qcov.lomax_waits(0.8, 400_000, 3)
    pk = 0.8 * (law.var + law.mean**2) / (2 * 0.2 * law.mean)
    assert abs(w.mean() - pk) < 5 * w.std() / math.sqrt(w.size), (w.mean(), pk)


def test_quick_quantile_table(qcov):
    rows = list(qcov.main(["--quick"]))
    assert len(rows) == 2 * 2 * 2   # two cells, two kinds, two levels
    for r in rows:
        assert 0 <= r["coverage"] <= 1 and r["runs"] == 4 and r["half_width_mean"] > 0
        assert r["coverage_se"] == pytest.approx(math.sqrt(r["coverage"] * (1 - r["coverage"]) / 4))
    # the Lomax(3.5) cell's mean wait has no normal limit: never trusted
    assert all(r["mean_wait_trusted"] == 0.0 for r in rows if "Lomax" in r["cell"])


def test_precision_mode_stops_with_intervals_of_the_runs_own_spread(cov, tmp_path):
    # the fast subset of the table: a few seeds a cell, every run stops on its precision, and
    # its intervals are as wide as the spread of the runs' estimates around the exact value
    # says (the ratio is 0.98-1.53 over the full table's cells and statistics; under 0.6 here,
    # at the table's lowest ratio, would take the 8 runs' variance, a chi-square with 8
    # degrees of freedom, to come out 2.7 times too large: probability 0.006; seeds are fixed)
    table = cov.main(["--quick", "--mode", "precision", "--precision", "0.2",
                      "--max-steps", str(10**6), "--cells", CELLS, "--seeds", "8",
                      "--workers", "0", "--out", str(tmp_path)])
    z = 1.959963984540054
    for r in table:
        assert r["runs"] == 8 and r["errors"] == 0 and r["reached"] == 1.0, r["cell"]
        for k in cov.STATS:
            spread = z * r[f"sigma_runs_{k}"] / math.sqrt(r["steps_mean"])
            assert r[f"half_width_{k}"] > 0.6 * spread, (r["cell"], k)
            # 8 runs at nominal 0.95: 4 or more misses has probability 4e-4
            assert r[f"cov_{k}"] >= 5 / 8, (r["cell"], k)


def test_a_reference_on_fewer_draws_than_asked_is_computed_again(cov, tmp_path):
    path = tmp_path / "ref.csv"
    cell = cov.Cell("JpSW", 3, 0.5)
    other = {"cell": "M/M/1 0.8", "stat": "p_wait", "value": 0.8, "se": 0.0,
             "sigma_asym": 1.0, "pilot_steps": 10, "source": "oracle"}
    old = [{**other, "cell": cell.label, "stat": k, "source": "perfect_sample size=10"}
           for k in cov.STATS]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(other))
        w.writeheader()
        w.writerows([other, *old])
    budget = cov.Budget(2 * 10**4, 2 * 10**5, 200)
    kept = cov.references([cov.Cell("M/M", 1, 0.8)], path, budget)
    assert kept["M/M/1 0.8"]["p_wait"]["sigma_asym"] == 1.0   # an oracle cell is kept
    have = cov.references([cell], path, budget)
    assert {r["source"] for r in have[cell.label].values()} == {"perfect_sample size=200"}
    with path.open() as f:
        back = list(csv.DictReader(f))
    assert [r["cell"] for r in back].count(cell.label) == len(cov.STATS)
    assert any(r["cell"] == "M/M/1 0.8" for r in back)
    # more draws than asked are enough: read back, not computed again
    again = cov.references([cell], path, dataclasses.replace(budget, perfect_size=100))
    assert {k: (r["value"], r["source"]) for k, r in again[cell.label].items()} == \
        {k: (r["value"], r["source"]) for k, r in have[cell.label].items()}
