"""Coverage of the quantile intervals ``res.wait_quantile(q)`` and ``res.workload_quantile(q)``.

Where a mean has no normal limit (a service law with ``E[sigma^4] = inf``: the time-averaged
wait of M/G/1 then has no finite asymptotic variance), ``rc.simulate`` marks the mean's
interval untrusted and offers quantiles, with intervals by sectioning
(:func:`recursions.output_analysis.quantile_interval`). This table counts how often their 95%
intervals contain the exact quantile, with the binomial standard error
``sqrt(c (1 - c) / n)``.

Cells: FCFS M/G/1 (``rc.JSW(1)``, Poisson arrivals of rate ``load``, service mean 1):

* exponential service at loads 0.9 and 0.95: ``P(W > w) = rho exp(-(1 - rho) w)``;
* Lomax service of shape 3.5 (``E[sigma^3] < inf = E[sigma^4]``: the mean wait is finite but
  its time average has no normal limit) at loads 0.8 and 0.9: the Pollaczek-Khinchine
  (Benes) form ``W = Y_1 + ... + Y_K``, ``P(K = k) = (1 - rho) rho^k`` and ``Y_i`` of the
  integrated-tail law of the service, here Lomax of shape 2.5 and the same scale, sampled
  here with numpy (``--oracle-samples``, default 4e6; its quantile's standard error is
  reported and is far below the intervals' half-widths).

With Poisson arrivals the workload an arrival finds is the time-stationary workload, and in a
single FCFS queue it is the wait, so both quantiles have the same exact value; on one server
they are read from the same counts, so the workload rows repeat the wait rows (they check
that ``workload_quantile`` reads its own tables right, not a second estimator).

Every run: ``--steps`` arrivals (default ``2**21``) after ``steps // 10`` of warm-up, 256
batches, a grid of 1201 levels to three times the largest exact quantile.

Run: ``python benchmarks/quantile_coverage.py [--seeds 200] [--quick] [--csv]`` (``--csv``
writes ``results/quantile_coverage.csv`` and ``.md``); ``--quick`` (what the test runs) takes 4
seeds of two cells with short runs.
"""

from __future__ import annotations

import argparse
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from _tables import RESULTS, finish

import recursions as rc
from recursions.tables import Rows

QS = (0.5, 0.9)
KINDS = ("wait_quantile", "workload_quantile")
LOMAX_SHAPE = 3.5


@dataclass(frozen=True)
class Cell:
    """One row group: the service law (``"exp"`` or ``"lomax"``) and the load."""

    service: str
    load: float

    @property
    def label(self) -> str:
        """``M/M/1 0.9`` or ``M/Lomax(3.5)/1 0.8``."""
        law = "M" if self.service == "exp" else f"Lomax({LOMAX_SHAPE:g})"
        return f"M/{law}/1 {self.load:g}"

    def law(self) -> Any:
        """The service law, mean 1."""
        if self.service == "exp":
            return rc.dists.Exponential(1.0)
        return rc.dists.Lomax(LOMAX_SHAPE, mean=1.0)


CELLS = (Cell("exp", 0.9), Cell("exp", 0.95), Cell("lomax", 0.8), Cell("lomax", 0.9))


def lomax_waits(rho: float, samples: int, seed: int) -> np.ndarray:
    """Stationary waits of M/Lomax/1 (service mean 1) by the Benes form, drawn with numpy."""
    gen = np.random.default_rng(seed)
    k = gen.geometric(1 - rho, size=samples) - 1          # P(K = k) = (1 - rho) rho^k
    scale = LOMAX_SHAPE - 1.0                               # service mean 1
    a = LOMAX_SHAPE - 1.0                                   # integrated tail: Lomax(a, scale)
    y = scale * ((1.0 - gen.random(int(k.sum()))) ** (-1.0 / a) - 1.0)  # U in (0, 1]
    return np.bincount(np.repeat(np.arange(samples), k), weights=y, minlength=samples)


def exact_quantiles(cell: Cell, samples: int,
                    seed: int = 12345) -> dict[float, tuple[float, float]]:
    """``{q: (quantile, its standard error)}`` of the stationary wait, without the library."""
    rho = cell.load
    if cell.service == "exp":
        # P(W > w) = rho exp(-(1 - rho) w): the least w with P(W > w) <= 1 - q
        return {q: (max(0.0, math.log(rho / (1 - q)) / (1 - rho)), 0.0) for q in QS}
    w = lomax_waits(rho, samples, seed)
    out = {}
    for q in QS:
        x = float(np.quantile(w, q))
        h = 0.01 * max(x, 1e-9)                             # density by a central difference
        dens = float(np.mean(np.abs(w - x) <= h)) / (2 * h)
        out[q] = (x, math.sqrt(q * (1 - q) / samples) / dens if dens > 0 else math.inf)
    return out


def run_cell(cell: Cell, seeds: int, steps: int, exact: dict[float, tuple[float, float]],
             confidence: float = 0.95) -> list[dict[str, Any]]:
    """``seeds`` runs of ``cell``; one row per quantile kind and level."""
    grid = np.linspace(0.0, 3.0 * max(x for x, _ in exact.values()), 1201)
    system, inp = rc.JSW(1), rc.Poisson(cell.load, cell.law())
    hits: dict[tuple[str, float], list[bool]] = {(k, q): [] for k in KINDS for q in QS}
    half: dict[tuple[str, float], list[float]] = {(k, q): [] for k in KINDS for q in QS}
    trusted: dict[tuple[str, float], list[bool]] = {(k, q): [] for k in KINDS for q in QS}
    mean_trusted = []
    for s in range(seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rc.SimulationWarning)
            res = rc.simulate(system, inp, steps, warmup=steps // 10, batches=256, grid=grid,
                              rng=7000 + s)
        mean_trusted.append(bool(res.interval("mean_wait").trusted))
        for kind in KINDS:
            for q in QS:
                iv = getattr(res, kind)(q, confidence)
                hits[kind, q].append(bool(iv.covers(exact[q][0])))
                half[kind, q].append(float(iv.half_width))
                trusted[kind, q].append(bool(iv.trusted))
    rows = []
    for kind in KINDS:
        for q in QS:
            h = np.asarray(hits[kind, q], dtype=float)
            c = float(h.mean())
            rows.append({"cell": cell.label, "statistic": kind, "q": q, "nominal": confidence,
                         "runs": seeds, "steps": steps, "exact": exact[q][0],
                         "exact_se": exact[q][1], "coverage": c,
                         "coverage_se": math.sqrt(c * (1 - c) / seeds),
                         "half_width_mean": float(np.nanmean(half[kind, q])),
                         "trusted": float(np.mean(trusted[kind, q])),
                         "mean_wait_trusted": float(np.mean(mean_trusted))})
    return rows


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The table as Markdown."""
    head = ("| cell | statistic | q | exact | coverage | mean half-width | trusted | "
            "mean_wait trusted |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for r in rows:
        ex = f"{r['exact']:.4g}" + (f" ± {r['exact_se']:.1g}" if r["exact_se"] > 0 else "")
        lines.append(f"| {r['cell']} | {r['statistic']} | {r['q']:g} | {ex} | "
                     f"{r['coverage']:.3f} ± {r['coverage_se']:.3f} | "
                     f"{r['half_width_mean']:.3g} | {r['trusted']:.3f} | "
                     f"{r['mean_wait_trusted']:.3f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> Rows:
    """Run the cells, print the table (Markdown) and return it."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="runs per cell (default 200)")
    ap.add_argument("--steps", type=int, default=None, help="arrivals per run (2**21)")
    ap.add_argument("--oracle-samples", type=int, default=None, help="default 4e6")
    ap.add_argument("--quick", action="store_true", help="4 seeds, two cells, short runs")
    ap.add_argument("--csv", action="store_true", help="write results/quantile_coverage.csv")
    args = ap.parse_args(argv)
    seeds = args.seeds or (4 if args.quick else 200)
    steps = args.steps or (2**16 if args.quick else 2**21)
    samples = args.oracle_samples or (10**5 if args.quick else 4 * 10**6)
    cells = (CELLS[0], CELLS[2]) if args.quick else CELLS
    rows = []
    for cell in cells:
        rows += run_cell(cell, seeds, steps, exact_quantiles(cell, samples))
        print(markdown(rows[-4:]).splitlines()[-1], flush=True)
    text = markdown(rows)
    print(text)
    if args.csv:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "quantile_coverage.md").write_text(text + "\n")
    return finish(rows, ("cell", "statistic", "q"), "quantile_coverage")


if __name__ == "__main__":
    main()
