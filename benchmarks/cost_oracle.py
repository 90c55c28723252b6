"""The cost column of the coverage table, checked by independent replications (M/M/S; JIQ, LL(2)).

``coverage.py`` compares the arrivals a precision-mode run uses with the fixed run length
``max_X (z sigma_X / h_X)^2`` that gives the same mean half-widths ``h_X``, where the
asymptotic standard deviation ``sigma_X`` is itself an estimate: from a pilot run's 32 batch
means (``ratio``) or from the cell's own sequentially stopped runs (``ratio, runs' sigma``).
The two disagree by nearly 3 times in some cells, so which one the cost target rests on
matters. This script measures ``sigma_X`` a third way, with no batch means and no stopping:
``--reps`` independent replications of FCFS M/M/S, each started from an exact stationary
state (``start="stationary"``, which for M/M/S draws from the birth-death chain, so there is
no initial bias), each ``L`` arrivals long with ``L`` the cell's mean run length in the
coverage table. Then ``sigma_X^2 = L Var(mean of a replication)``: the variance of a fixed
run of that length (the oracle's own run is shorter by the ratio; both are hundreds of
relaxation times, where ``L Var`` is at its limit), with a chi-square interval on
``reps - 1`` degrees of freedom. That interval assumes normal replication means; near
saturation they are skewed and it is too narrow. On one server the mean wait's ``sigma`` has a
closed form (``_oracles.mm1_wait_sigma``), printed beside the three estimates.

Columns: ``L`` and ``reps``; ``sigma_X`` (replications), ``sigma_X_lo`` / ``_hi`` (95%),
``sigma_runs_X`` and ``sigma_pilot_X`` (the coverage table's two estimates), ``half_width_X``
(the table's mean half-width), ``sigma_exact_mean_wait`` (one server; NaN elsewhere);
``oracle_steps`` ``= max_X (z sigma_X / h_X)^2`` and ``ratio = steps_mean / oracle_steps``
with ``ratio_lo`` / ``ratio_hi`` from the sigmas' interval; ``ratio_runs`` and
``ratio_pilot`` as the coverage table gives them. Cell ``i`` of the 20 (in the table's
order) runs on seed ``--seed + i + 1`` whatever ``--cells`` selects.

Run: ``python benchmarks/cost_oracle.py [--quick] [--csv] [--reps R] [--cells REGEX]
[--seed S]`` (reads ``results/coverage_precision.csv`` and ``results/coverage_reference.csv``).
``--csv`` also writes the printed table to ``results/cost_oracle.md`` (the docs include it).
``--quick``: 8 replications of 2**14 arrivals on M/M/1 and M/M/10 at 0.8 (it writes nothing).

``--warm``: the table's JIQ and LL(2) cells instead, which have no exact start: each
replication is a run of its own from empty, ``WARM_PER_SERVER`` arrivals a server of warm-up
dropped before its ``L`` (the run's transient is over long before: precision mode's runs
drop at most half of theirs by MSER, and their floor is 256 a server); ``--csv`` then writes
``results/cost_oracle_warm.csv`` and ``.md``. With ``--quick``, 8 replications of 2**14
arrivals of LL(2)(1000) at 0.95.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _oracles
import numpy as np
from _tables import RESULTS, finish
from scipy.stats import chi2, norm

import coupling  # noqa: F401  (registers the exact start samplers simulate's start= uses)
import recursions as rc
from recursions.common._tables import Rows

STATS = ("p_wait", "mean_wait", "mean_workload")
WARM_PER_SERVER = 2000
"""Arrivals a server each ``--warm`` replication drops before it measures."""
WARM_MODELS = ("JIQ", "LL2")


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def measure(row: dict[str, str], pilot: dict[str, float], reps: int, length: int | None,
            seed: int) -> dict[str, Any]:
    """One cell: ``sigma_X`` from ``reps`` replications, and the cost ratios.

    Exact stationary starts for M/M/S; runs of their own past a warm-up for ``WARM_MODELS``.
    """
    S, load = int(row["S"]), float(row["load"])
    steps_mean = float(row["steps_mean"])
    L = length or max(256, round(steps_mean / 256) * 256)
    sigmas = (_warm_sigmas if row["model"] in WARM_MODELS else _exact_sigmas)(
        row["model"], S, load, L, reps, seed)
    z = float(norm.ppf(0.975))
    lo_f = math.sqrt((reps - 1) / chi2.ppf(0.975, reps - 1))  # sigma's 95% interval, scaled
    hi_f = math.sqrt((reps - 1) / chi2.ppf(0.025, reps - 1))
    out: dict[str, Any] = {"cell": row["cell"], "S": S, "load": load, "L": L, "reps": reps,
                           "steps_mean": steps_mean}
    oracle = {"": 0.0, "_lo": 0.0, "_hi": 0.0}
    for k in STATS:
        sigma = sigmas[k]
        h = float(row[f"half_width_{k}"])
        out.update({f"half_width_{k}": h, f"sigma_{k}": sigma, f"sigma_{k}_lo": sigma * lo_f,
                    f"sigma_{k}_hi": sigma * hi_f,
                    f"sigma_runs_{k}": float(row[f"sigma_runs_{k}"]),
                    f"sigma_pilot_{k}": pilot[k]})
        for tag, f in (("", 1.0), ("_lo", lo_f), ("_hi", hi_f)):
            oracle[tag] = max(oracle[tag], (z * sigma * f / h) ** 2)
    out["sigma_exact_mean_wait"] = _oracles.mm1_wait_sigma(load) if S == 1 else math.nan
    out.update(oracle_steps=oracle[""], ratio=steps_mean / oracle[""],
               ratio_lo=steps_mean / oracle["_hi"], ratio_hi=steps_mean / oracle["_lo"],
               ratio_runs=float(row["steps_ratio_runs"]), ratio_pilot=float(row["steps_ratio"]))
    return out


def _exact_sigmas(model: str, S: int, load: float, L: int, reps: int, seed: int
                  ) -> dict[str, float]:
    """``sqrt(L Var)`` of each statistic, from ``reps`` M/M/S runs from exact stationary states."""
    with warnings.catch_warnings():
        # a short replication's batch means may stay correlated (and simulate warns about
        # its batch-means intervals); the replications' own means are independent all the same
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(rc.JSW(S), rc.Poisson(load * S, rc.dists.Exponential(1.0)),
                          steps=L, start="stationary", replications=reps, rng=seed)
    # the replications' interval's se is their means' standard deviation over sqrt(reps)
    ivs = res.replication_interval
    assert ivs is not None  # exact starts give it
    return {k: float(ivs[k].se) * math.sqrt(L * reps) for k in STATS}


def _warm_sigmas(model: str, S: int, load: float, L: int, reps: int, seed: int
                 ) -> dict[str, float]:
    """``sqrt(L Var)`` of each statistic, from ``reps`` runs from empty past their warm-up."""
    system = rc.JIQ(S) if model == "JIQ" else rc.LeastOfD(S, 2)
    inp = rc.Poisson(load * S, rc.dists.Exponential(1.0))
    means: dict[str, list[float]] = {k: [] for k in STATS}
    for i in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rc.SimulationWarning)
            res = rc.simulate(system, inp, steps=L, warmup=WARM_PER_SERVER * S,
                              rng=np.random.SeedSequence([seed, i]))
        for k in STATS:
            means[k].append(float(getattr(res, k).value))
    return {k: float(np.std(v, ddof=1)) * math.sqrt(L) for k, v in means.items()}


def _exact(o: dict[str, Any]) -> str:
    x = float(o.get("sigma_exact_mean_wait", math.nan))
    return f"{x:.4g}" if math.isfinite(x) else "–"


def markdown(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The table's lines: each statistic's sigma three ways, the cost ratio three ways."""
    lines = ["| cell | L | " + " | ".join(f"sigma {k}: reps [95%], runs, pilot" for k in STATS)
             + " | mean_wait's sigma, exact | binds | ratio, reps [95%] | ratio, runs' sigma "
             "| ratio, pilot |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for o in rows:
        binds = max(STATS, key=lambda k: o[f"sigma_{k}"] / o[f"half_width_{k}"])
        lines.append(
            f"| {o['cell']} | {float(o['L']):.3g} | "
            + " | ".join(f"{o[f'sigma_{k}']:.4g} [{o[f'sigma_{k}_lo']:.3g}, "
                         f"{o[f'sigma_{k}_hi']:.3g}], {o[f'sigma_runs_{k}']:.4g}, "
                         f"{o[f'sigma_pilot_{k}']:.4g}" for k in STATS)
            + f" | {_exact(o)} | {binds} | {o['ratio']:.2f} [{o['ratio_lo']:.2f}, "
            f"{o['ratio_hi']:.2f}] | {o['ratio_runs']:.2f} | {o['ratio_pilot']:.2f} |")
    return lines


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="two small cells, 8 short replications")
    ap.add_argument("--csv", action="store_true",
                    help="write results/cost_oracle.csv and .md")
    ap.add_argument("--reps", type=int, default=256, help="replications a cell (default 256)")
    ap.add_argument("--cells", default=None,
                    help="regular expression on the cells (default: all of them)")
    ap.add_argument("--warm", action="store_true",
                    help="the JIQ and LL(2) cells, from empty past a warm-up, instead")
    ap.add_argument("--seed", type=int, default=0,
                    help="cell i of the 20 runs on seed SEED + i + 1 (default 0)")
    args = ap.parse_args(argv)
    if args.quick and args.csv:
        ap.error("--quick is a smoke test and writes nothing: drop --csv (or --quick)")
    if args.reps < 2:
        ap.error(f"--reps must be at least 2 (a variance needs two replications), got "
                 f"{args.reps}")
    return args


def main(argv: Sequence[str] | None = None) -> Rows:
    """Print the table (and write ``results/cost_oracle.csv`` with ``--csv``)."""
    args = parse(argv)
    models = WARM_MODELS if args.warm else ("M/M",)
    rows = [r for r in _read(RESULTS / "coverage_precision.csv") if r["model"] in models]
    pilots: dict[str, dict[str, float]] = {}
    for r in _read(RESULTS / "coverage_reference.csv"):
        pilots.setdefault(r["cell"], {})[r["stat"]] = float(r["sigma_asym"])
    quick = r"^LL2\(1000\) 0\.95$" if args.warm else r"^M/M/(1|10) 0\.8$"
    pattern = quick if args.quick else args.cells or ""
    chosen = [(i, r) for i, r in enumerate(rows) if re.search(pattern, r["cell"])]
    if not chosen:
        kind = " or ".join(models)
        raise SystemExit(f"no {kind} cell of the coverage table matches --cells {pattern!r}")
    reps, length = (8, 2**14) if args.quick else (args.reps, None)
    out = [measure(r, pilots[r["cell"]], reps, length, seed=args.seed + i + 1)
           for i, r in chosen]
    lines = markdown(out)
    print("\n".join(lines))
    name = "cost_oracle_warm" if args.warm else "cost_oracle"
    if "--csv" in sys.argv:  # the table the docs include, where finish writes the CSV
        (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    return finish(out, ("S", "load"), name)


if __name__ == "__main__":
    main()
