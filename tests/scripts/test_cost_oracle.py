"""benchmarks/cost_oracle.py: the coverage table's cost oracle from exact-start replications."""

from __future__ import annotations

import csv
import math

import pytest

from tests.bench import BENCH, benchmark_module


@pytest.fixture(scope="module")
def oracle():
    with benchmark_module("cost_oracle.py", "_bench_cost_oracle") as mod:
        yield mod


def test_quick_table_is_consistent_with_the_coverage_table(oracle):
    rows = list(oracle.main(["--quick"]))
    assert [r["cell"] for r in rows] == ["M/M/1 0.8", "M/M/10 0.8"]
    with (BENCH / "results" / "coverage_precision.csv").open(newline="") as f:
        table = {r["cell"]: r for r in csv.DictReader(f)}
    for r in rows:
        assert r["L"] == 2**14 and r["reps"] == 8
        for k in ("p_wait", "mean_wait", "mean_workload"):
            assert 0 < r[f"sigma_{k}_lo"] < r[f"sigma_{k}"] < r[f"sigma_{k}_hi"]
            # eight short replications pin sigma down only loosely, but to its scale: within
            # a factor 2 of the coverage table's estimate from its own 200 runs (a sigma
            # that forgot the replications' count, sqrt(8) = 2.8 times too small, is not)
            assert 0.5 < r[f"sigma_{k}"] / float(table[r["cell"]][f"sigma_runs_{k}"]) < 2
        assert r["ratio_lo"] <= r["ratio"] <= r["ratio_hi"]
        # the oracle: the longest of the fixed lengths giving each statistic's half-width
        z = 1.959963984540054
        need = max((z * r[f"sigma_{k}"] / float(table[r["cell"]][f"half_width_{k}"])) ** 2
                   for k in ("p_wait", "mean_wait", "mean_workload"))
        assert math.isclose(r["oracle_steps"], need, rel_tol=1e-12)
        assert math.isclose(r["ratio"], float(table[r["cell"]]["steps_mean"]) / need)
    # on one server the mean wait's sigma has a closed form (checked against the Lindley
    # chain in test_oracles.py): inside the replications' 95% interval at load 0.8
    one = rows[0]
    assert one["sigma_mean_wait_lo"] < one["sigma_exact_mean_wait"] < one["sigma_mean_wait_hi"]
    assert math.isnan(rows[1]["sigma_exact_mean_wait"])


def test_warm_replications_of_a_cell_with_no_exact_start(oracle):
    # LL(2) has no exact start: each replication is its own run from empty past a warm-up
    (r,) = oracle.main(["--quick", "--warm"])
    assert r["cell"] == "LL2(1000) 0.95" and r["L"] == 2**14 and r["reps"] == 8
    with (BENCH / "results" / "coverage_precision.csv").open(newline="") as f:
        row = next(x for x in csv.DictReader(f) if x["cell"] == r["cell"])
    z = 1.959963984540054
    for k in ("p_wait", "mean_wait", "mean_workload"):
        assert 0 < r[f"sigma_{k}_lo"] < r[f"sigma_{k}"] < r[f"sigma_{k}_hi"]
    need = max((z * r[f"sigma_{k}"] / float(row[f"half_width_{k}"])) ** 2
               for k in ("p_wait", "mean_wait", "mean_workload"))
    assert math.isclose(r["ratio"], float(row["steps_mean"]) / need)
    assert math.isnan(r["sigma_exact_mean_wait"])


def test_refuses_a_single_replication_and_unknown_cells(oracle, capsys):
    with pytest.raises(SystemExit):
        oracle.main(["--reps", "1"])
    assert "--reps must be at least 2" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no M/M cell"):
        oracle.main(["--cells", "^E2/M/"])
    with pytest.raises(SystemExit, match="no JIQ or LL2 cell"):
        oracle.main(["--warm", "--cells", "^M/M/"])
    with pytest.raises(SystemExit):  # a smoke test must not overwrite the committed table
        oracle.main(["--quick", "--csv"])
    assert "writes nothing" in capsys.readouterr().err


def test_a_cell_keeps_its_seed_whatever_the_selection(oracle, monkeypatch):
    seen = []
    monkeypatch.setattr(oracle, "measure", lambda row, pilot, reps, length, seed:
                        seen.append((row["cell"], seed)) or {})
    monkeypatch.setattr(oracle, "markdown", lambda rows: [])
    monkeypatch.setattr(oracle, "finish", lambda rows, dims, name: rows)
    oracle.main(["--cells", r"^M/M/100 0\.8$"])
    oracle.main(["--cells", r"^M/M/100 0\.8$", "--seed", "100"])
    oracle.main([])
    assert seen[:2] == [("M/M/100 0.8", 16), ("M/M/100 0.8", 116)]
    assert ("M/M/100 0.8", 16) in seen[2:] and len(seen) == 22
