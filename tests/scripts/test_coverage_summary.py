"""The coverage summary says what its tables hold.

``benchmarks/results/coverage_summary.md`` (included in ``docs/intervals.md``) is prose around
the precision-mode table. Its table must be ``coverage.py``'s Markdown of the committed
``coverage_precision.csv``, and its headline numbers (mean coverages, the cells under their
bounds, the runs that warned, the cost ratios, the cost against the replications of
``cost_oracle.csv``) are recomputed here from the CSVs, so that a table run again cannot leave
the prose behind.
"""

from __future__ import annotations

import csv
import math
import statistics
from typing import Any

import pytest

from tests.bench import BENCH, benchmark_module

RESULTS = BENCH / "results"
SUMMARY = RESULTS / "coverage_summary.md"
STATS = ("p_wait", "mean_wait", "mean_workload")
Z = 1.959963984540054


@pytest.fixture(scope="module")
def cov():
    with benchmark_module("coverage.py", "_bench_cov_summary") as mod:
        yield mod


def read(name: str) -> list[dict[str, Any]]:
    def value(v: str) -> Any:
        try:
            return float(v)
        except ValueError:
            return v

    with (RESULTS / name).open(newline="") as f:
        return [{k: value(v) for k, v in r.items()} for r in csv.DictReader(f)]


def prose() -> str:
    """The summary with its line breaks and runs of spaces as single spaces."""
    return " ".join(SUMMARY.read_text().split())


def bound(runs: float) -> float:
    return 0.95 - 2.5 * math.sqrt(0.95 * 0.05 / runs)


def test_the_summary_table_is_the_committed_csv(cov):
    rows = read("coverage_precision.csv")
    lines = SUMMARY.read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith("| cell |")))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append(line)
    assert "\n".join(table) == cov.markdown(rows)
    assert len(rows) == 86


def test_the_headline_numbers_are_the_tables(cov):
    rows = read("coverage_precision.csv")
    text = prose()
    analytic = [r for r in rows if r["model"] in cov.ANALYTIC]
    assert len(analytic) == 80
    means = {k: statistics.mean(r[f"cov_{k}"] for r in analytic) for k in STATS}
    assert (f"`p_wait` {means['p_wait']:.3f}, `mean_wait` {means['mean_wait']:.3f}, "
            f"`mean_workload` {means['mean_workload']:.3f}") in text
    every = statistics.mean(r[f"cov_{k}"] for r in rows for k in STATS)
    assert f"over all 86 cells {every:.4f}" in text
    assert 0.94 <= every <= 0.96   # the band
    under = [(r["cell"], k) for r in rows for k in STATS if r[f"cov_{k}"] < bound(r["runs"])]
    assert ("No cell misses the target" in text) == (not under)
    warned = sum(round(r["warned"] * r["runs"]) for r in rows)
    runs = sum(int(r["runs"]) for r in rows)
    assert f"Runs that warned: {warned} of {runs:,}" in text
    ratios = [r["steps_ratio_runs"] for r in analytic]
    assert (f"median {statistics.median(ratios):.2f} over the 80 analytic cells, from "
            f"{min(ratios):.2f} to {max(ratios):.2f}") in text


def test_the_cost_against_the_replications_is_the_cost_oracles():
    # the oracle run length max_X (z sigma_X / h_X)^2 with the replications' sigma_X
    # (cost_oracle.csv) and this table's mean half-widths h_X and run lengths
    rows = {r["cell"]: r for r in read("coverage_precision.csv")}
    ratios = []
    for o in read("cost_oracle.csv"):
        r = rows[o["cell"]]
        need = max((Z * o[f"sigma_{k}"] / r[f"half_width_{k}"]) ** 2 for k in STATS)
        ratios.append(r["steps_mean"] / need)
    assert len(ratios) == 20
    assert (f"the cost is median {statistics.median(ratios):.2f}, from {min(ratios):.2f} to "
            f"{max(ratios):.2f}") in prose()


def c4(x: float) -> str:
    """A coverage as the summary prints it: up to four decimals, at least three."""
    return f"{x:.4f}".rstrip("0").ljust(5, "0")


def html(cell: str) -> str:
    return (cell.replace("E2/", "E<sub>2</sub>/").replace("H2/", "H<sub>2</sub>/")
            .replace("LL2", "LL(2)").replace("J2SW", "J<sub>2</sub>SW"))


def test_the_other_systems_and_the_warned_cells_are_the_tables():
    rows = {r["cell"]: r for r in read("coverage_precision.csv")}
    text = prose()

    def tri(cell: str) -> str:
        return " / ".join(c4(rows[cell][f"cov_{k}"]) for k in STATS)

    for name, cell, load in (("JIQ covers", "JIQ(1000) 0.95", "0.95"),
                             ("LL(2) covers", "LL2(1000) 0.95", "0.95"),
                             ("J<sub>2</sub>SW covers", "J2SW(3,1) 0.5", "0.5")):
        assert f"{name} {tri(cell)} at {load}" in text
    for cell, load in (("JIQ(1000) 0.99", "0.99"), ("LL2(1000) 0.99", "0.99"),
                       ("J2SW(3,1) 0.6", "0.6")):
        assert f"{tri(cell)} at {load}" in text
    warned = [f"{html(c)} {100 * r['warned']:.1f}%" for c, r in rows.items()
              if r["warned"] > 0.05]
    assert warned and f"average): {', '.join(warned)}." in text
