"""Calibration tables: how often verdicts and the Loynes stopping rule are wrong, over seeds.

Three tables, printed as Markdown (the README shows them):

1. ``check_stability`` on the cells of ``loynes._calibration.VERDICT_CELLS``: fractions
   STABLE / UNSTABLE / UNDECIDED, wrong verdicts (STABLE where the truth is unstable,
   UNSTABLE where it is stable), what decided, mean seconds per check.
2. The growth test alone on ``GROWTH_CELLS``: stable systems, where any UNSTABLE is wrong.
3. The drain road on ``DRAIN_CELLS``: maps written by hand as a user would (no theorem
   covers them: the growth test says UNSTABLE, the drain test STABLE), and redundancy with
   the drain test alone, on both sides of their boundaries; a STABLE on a cell not known
   stable is wrong.
4. ``check_stability`` on ``POLICY_CELLS``: LL(d), JSQ, power-of-d, I1F and JIQ near load 1,
   decided by their theorems (or UNDECIDED where none applies).
5. The plateau heuristic of ``ly.loynes`` (``certify=False``) against the certified limit on
   the same backward draws (or the sequence 64 times further back where no certificate
   exists): stabilised fraction and false stabilisations.

Run: ``python benchmarks/calibration.py [--seeds N] [--quick] [--only TABLE]`` (default 100
seeds a cell; ``--quick``: 5 seeds and a smaller stopping-rule horizon; ``--only`` one table,
repeatable: verdicts, policies, growth, drain, stopping).
"""

from __future__ import annotations

import argparse
import time

from _tables import finish

from loynes._calibration import (
    DRAIN_CELLS,
    GROWTH_CELLS,
    POLICY_CELLS,
    STOPPING_CASES,
    VERDICT_CELLS,
    stopping_table,
    verdict_table,
)


def _by(d: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))


def print_verdicts(rows: list[dict]) -> int:
    print("| cell | truth | stable | unstable | undecided | wrong | decided by | s/check |")
    print("|---|---|---|---|---|---|---|---|")
    wrong = 0
    for r in rows:
        wrong += r["wrong"]
        print(f"| {r['cell']} | {r['truth']} | {r['stable']:.2f} | {r['unstable']:.2f} | "
              f"{r['undecided']:.2f} | {r['wrong']} | {_by(r['decided_by'])} | "
              f"{r['seconds']:.3f} |")
    checks = sum(r["checks"] for r in rows)
    print(f"\n{checks} checks, {wrong} wrong verdicts\n")
    return wrong


TABLES = ("verdicts", "policies", "growth", "drain", "stopping")


def _verdicts(name: str, title: str, cells: object, seeds: range) -> None:
    print(f"## {title}\n")
    rows = verdict_table(cells, seeds)  # type: ignore[arg-type]
    print_verdicts(rows)
    finish(rows, rows.dims, f"calibration_{name}")  # --csv: the table as a file


def _stopping(seeds: range, quick: bool) -> None:
    print("## the Loynes plateau heuristic (certify=False)\n")
    print("| case | runs | stabilised | false | compared with | median horizon | s/run |")
    print("|---|---|---|---|---|---|---|")
    stops = stopping_table(STOPPING_CASES, seeds, horizon=2**20 if quick else 2**22)
    for r in stops:
        print(f"| {r['case']} | {r['runs']} | {r['stabilised']:.2f} | {r['false']} | "
              f"{r['reference']} | {r['median_horizon']:.0f} | {r['seconds']:.3f} |")
    finish(stops, stops.dims, "calibration_stopping")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds a cell (default 100)")
    ap.add_argument("--quick", action="store_true", help="5 seeds, smaller horizons")
    ap.add_argument("--csv", action="store_true",
                    help="also write the tables to benchmarks/results/calibration_*.csv")
    ap.add_argument("--only", choices=TABLES, action="append",
                    help="run only this table (repeatable; default: all)")
    args = ap.parse_args()
    seeds = range(5 if args.quick else args.seeds)
    only = set(args.only or TABLES)
    t0 = time.perf_counter()
    for name, title, cells in (
            ("verdicts", "check_stability, default budget (alpha = 1e-3, steps = horizon "
                         "= 2^16)", VERDICT_CELLS),
            ("policies", "the load-balancing policies' theorems", POLICY_CELLS),
            ("growth", "the growth test alone, on stable systems", GROWTH_CELLS),
            ("drain", "the drain road: users' maps, and redundancy with the drain test "
                      "alone", DRAIN_CELLS)):
        if name in only:
            _verdicts(name, title, cells, seeds)
    if "stopping" in only:
        _stopping(seeds, args.quick)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
