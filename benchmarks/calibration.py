"""Calibration tables: how often verdicts and the Loynes stopping rule are wrong, over seeds.

Three tables, printed as Markdown (the README shows them):

1. ``check_stability`` on the cells of ``loynes.calibration.VERDICT_CELLS``: fractions
   STABLE / UNSTABLE / UNDECIDED, wrong verdicts (STABLE where the truth is unstable,
   UNSTABLE where it is stable), what decided, mean seconds per check.
2. The same on ``GROWTH_CELLS``: stable systems on which only the growth test can decide.
3. The plateau heuristic of ``ly.loynes`` (``certify=False``) against the certified limit on
   the same backward draws (or the sequence 64 times further back where no certificate
   exists): stabilised fraction and false stabilisations.

Run: ``python benchmarks/calibration.py [--seeds N] [--quick]`` (default 100 seeds a cell;
``--quick``: 5 seeds and a smaller stopping-rule horizon).
"""

from __future__ import annotations

import argparse
import time

from _tables import finish

from loynes.calibration import (
    GROWTH_CELLS,
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100, help="seeds a cell (default 100)")
    ap.add_argument("--quick", action="store_true", help="5 seeds, smaller horizons")
    ap.add_argument("--csv", action="store_true",
                    help="also write the tables to benchmarks/results/calibration_*.csv")
    args = ap.parse_args()
    seeds = range(5 if args.quick else args.seeds)
    t0 = time.perf_counter()
    print("## check_stability, default budget (alpha = 1e-3, steps = horizon = 2^16)\n")
    verdicts = verdict_table(VERDICT_CELLS, seeds)
    print_verdicts(verdicts)
    print("## the growth test alone, on stable systems no theorem is used for\n")
    growth = verdict_table(GROWTH_CELLS, seeds)
    print_verdicts(growth)
    print("## the Loynes plateau heuristic (certify=False)\n")
    print("| case | runs | stabilised | false | compared with | median horizon | s/run |")
    print("|---|---|---|---|---|---|---|")
    stops = stopping_table(STOPPING_CASES, seeds, horizon=2**20 if args.quick else 2**22)
    for r in stops:
        print(f"| {r['case']} | {r['runs']} | {r['stabilised']:.2f} | {r['false']} | "
              f"{r['reference']} | {r['median_horizon']:.0f} | {r['seconds']:.3f} |")
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    finish(verdicts, verdicts.dims, "calibration_verdicts")  # --csv: the tables as files
    finish(growth, growth.dims, "calibration_growth")
    finish(stops, stops.dims, "calibration_stopping")


if __name__ == "__main__":
    main()
