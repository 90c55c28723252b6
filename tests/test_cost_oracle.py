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
            # a factor 3 of the coverage table's estimate from its own 200 runs
            assert 1 / 3 < r[f"sigma_{k}"] / float(table[r["cell"]][f"sigma_runs_{k}"]) < 3
        assert r["ratio_lo"] <= r["ratio"] <= r["ratio_hi"]
        # the oracle: the longest of the fixed lengths giving each statistic's half-width
        z = 1.959963984540054
        need = max((z * r[f"sigma_{k}"] / float(table[r["cell"]][f"half_width_{k}"])) ** 2
                   for k in ("p_wait", "mean_wait", "mean_workload"))
        assert math.isclose(r["oracle_steps"], need, rel_tol=1e-12)
        assert math.isclose(r["ratio"], float(table[r["cell"]]["steps_mean"]) / need)


def test_refuses_a_single_replication_and_unknown_cells(oracle, capsys):
    with pytest.raises(SystemExit):
        oracle.main(["--reps", "1"])
    assert "--reps must be at least 2" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no M/M cell"):
        oracle.main(["--cells", "^E2/M/"])
