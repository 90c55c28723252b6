"""Coverage of ``rc.simulate``'s confidence intervals against exact values (issue 26).

For each cell, ``--seeds`` independent runs (default 200) of the system, each giving a
confidence interval at the nominal level for ``p_wait``, ``mean_wait`` and ``mean_workload``;
the coverage is the fraction of runs whose interval contains the exact value, with its
binomial standard error ``sqrt(c (1 - c) / n)``.

Cells (service mean 1 everywhere, so the arrival rate is ``load * S``):

* FCFS ``rc.JSW(S)`` with M/M/S, M/D/S, E2/M/S and M/H2/S (balanced hyperexponential of scv
  4), ``S`` in {1, 10, 40, 100}, load in {0.8, 0.9, 0.95, 0.98, 0.99}: exact values from
  ``_oracles.py`` (Erlang C, Crommelin's M/D/c, Takacs' GI/M/c, a matrix-geometric
  solution for H2), computed independently of the library;
* ``rc.JIQ(1000)`` and ``rc.LeastOfD(1000, 2)`` at loads 0.95 and 0.99 against one long
  reference run each (cached in the output folder, with its standard error);
* ``rc.JpSW(3, 1)`` at loads 0.5 and 0.6 against ``cp.perfect_sample`` (cached likewise).

Modes: ``--mode precision`` (default) runs ``rc.simulate(..., precision=, confidence=,
statistics=, max_steps=, warmup="auto")`` until the intervals reach the asked precision;
``--mode fixed`` runs ``--steps`` arrivals after ``--warmup`` and takes ``res.interval`` (or,
without it, ``value -/+ z se`` from the Estimates).

Columns: ``nominal`` (the confidence level); ``cov_X`` and ``cov_X_se`` for each statistic
``X``; ``steps_mean`` and ``steps_p95`` (arrivals simulated per run, warm-up included);
``warned`` (fraction of runs with a ``SimulationWarning``); ``cov_unwarned_X`` (coverage
among the runs that did not warn); ``untrusted`` (fraction of runs with an interval whose
batch means failed the library's independence test); ``reached`` (precision mode: fraction
of runs that reached the precision); ``oracle_steps``: the run length a fixed run would
need for the same mean half-widths, ``max_X (z sigma_X / h_X)^2`` with ``sigma_X`` the
asymptotic standard deviation from a long pilot run's batch means (cached with the
references) and ``h_X`` the mean half-width of the cell's intervals;
``steps_ratio = steps_mean / oracle_steps``; ``oracle_target_steps`` (precision mode): the
fixed run length that reaches the half-width *asked for*, ``max_X (z sigma_X / (p |x_X|))^2``
with ``p`` the relative precision and ``x_X`` the exact value, and ``target_ratio =
steps_mean / oracle_target_steps`` (the run-until-precise procedure overshoots the target,
so its intervals are narrower than asked: ``steps_ratio`` compares like with like,
``target_ratio`` with what a user who knew ``sigma`` would have run). The pilot's ``sigma_X``
rests on 32 batch means of one run, least sure in heavy traffic; ``oracle_steps_runs`` and
``steps_ratio_runs`` take it instead from the cell's own runs and the exact value,
``sigma_runs_X^2 = mean_i n_i (x_i - x_X)^2`` (``n_i`` the arrivals run ``i``'s estimate
``x_i`` rests on: ``observed``), 200 independent estimates of the same asymptotic variance.

Run: ``python benchmarks/coverage.py [--quick] [--seeds N] [--cells REGEX]
[--mode precision|fixed] [--precision 0.1] [--out DIR] [--workers K]``. The table goes to
``DIR/coverage_<mode>.csv`` and ``.md`` (``DIR`` default ``benchmarks/results``); each cell's
runs are checkpointed in ``DIR/coverage_checkpoints/`` so that an interrupted run resumes.
``--quick``: 4 seeds, two small cells unless ``--cells`` is given, short runs and references
(what the test runs).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import inspect
import math
import re
import sys
import warnings
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _oracles
import numpy as np
from _tables import RESULTS, finish
from scipy.stats import norm

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.common._tables import Rows

STATS = ("p_wait", "mean_wait", "mean_workload")
ANALYTIC = ("M/M", "M/D", "E2/M", "M/H2")
SERVERS = (1, 10, 40, 100)
LOADS = (0.8, 0.9, 0.95, 0.98, 0.99)
H2_SCV = 4.0
QUICK_CELLS = r"^(M/M/1|E2/M/1) 0\.8$"


@dataclass(frozen=True)
class Cell:
    """One row of the table: a model (``"M/M"``, ..., ``"JIQ"``, ``"LL2"``, ``"JpSW"``)."""

    model: str
    S: int
    load: float

    @property
    def label(self) -> str:
        """E.g. ``M/D/10 0.9``, ``JIQ(1000) 0.95``, ``J2SW(3,1) 0.6``."""
        if self.model in ANALYTIC:
            return f"{self.model}/{self.S} {self.load:g}"
        if self.model == "JpSW":
            return f"J2SW(3,1) {self.load:g}"
        return f"{self.model}({self.S}) {self.load:g}"

    @property
    def exact_kind(self) -> str:
        """``"oracle"`` (closed form), ``"reference"`` (long run) or ``"perfect"``."""
        return ("oracle" if self.model in ANALYTIC
                else "perfect" if self.model == "JpSW" else "reference")


def cells() -> list[Cell]:
    """Every cell of the table, in its order."""
    out = [Cell(m, S, load) for m in ANALYTIC for S in SERVERS for load in LOADS]
    out += [Cell(m, 1000, load) for m in ("JIQ", "LL2") for load in (0.95, 0.99)]
    out += [Cell("JpSW", 3, load) for load in (0.5, 0.6)]
    return out


def build(model: str, S: int, load: float) -> tuple[rc.System, rc.Input]:
    """The system and input of a cell (service mean 1, arrival rate ``load * S``)."""
    lam = load * S
    exp = rc.dists.Exponential(1.0)
    if model == "M/M":
        return rc.JSW(S), rc.Poisson(lam, exp)
    if model == "M/D":
        return rc.JSW(S), rc.Poisson(lam, rc.dists.Deterministic(1.0))
    if model == "E2/M":
        return rc.JSW(S), rc.Renewal(interarrival=rc.dists.Erlang(2, mean=1 / lam),
                                     service=exp)
    if model == "M/H2":
        return rc.JSW(S), rc.Poisson(lam, rc.dists.HyperExponential.balanced(1.0, H2_SCV))
    if model == "JIQ":
        return rc.JIQ(S), rc.Poisson(lam, exp)
    if model == "LL2":
        return rc.LeastOfD(S, 2), rc.Poisson(lam, exp)
    if model == "JpSW":
        return rc.JpSW(S, 1), rc.Poisson(lam, exp)
    raise ValueError(f"unknown model {model!r}")


def oracle(cell: Cell) -> dict[str, float]:
    """Exact values of an analytic cell (``_oracles``)."""
    lam = cell.load * cell.S
    fns: dict[str, Callable[..., dict[str, Any]]] = {
        "M/M": _oracles.mm_s, "M/D": _oracles.md_s, "E2/M": _oracles.e2m_s,
        "M/H2": functools.partial(_oracles.mh2_s, scv=H2_SCV)}
    fn = fns[cell.model]
    out = fn(cell.S, lam)
    return {k: float(out[k]) for k in STATS}


def has_precision_mode() -> bool:
    """Whether ``rc.simulate`` takes ``precision=`` (the precision mode of issue 26)."""
    return "precision" in inspect.signature(rc.simulate).parameters


# -- references and pilot runs -----------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """Lengths of the pilot runs, reference runs and perfect samples."""

    pilot_steps: int = 10**6
    reference_steps: int = 2 * 10**7
    perfect_size: int = 200_000   # se of p_wait ~0.0009, a fifth of a run's interval sd
    workers: int | None = 1       # processes drawing the exact samples (same draws for any)


def _pilot_length(cell: Cell, budget: Budget) -> int:
    # heavy traffic relaxes in about 1 / (1 - load)^2 arrivals: keep ~400 such times
    return int(max(budget.pilot_steps, min(400 / (1 - cell.load) ** 2, 10 * budget.pilot_steps)))


def _long_run(cell: Cell, steps: int) -> rc.SimulationResult:
    system, inp = build(cell.model, cell.S, cell.load)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        return rc.simulate(system, inp, steps=steps, warmup=max(steps // 20, 1000),
                           rng=90_000 + zlib.crc32(cell.label.encode()) % 10_000)


def _reference_rows(cell: Cell, budget: Budget) -> list[dict[str, Any]]:
    """Value, its standard error and the asymptotic sd of each statistic of ``cell``."""
    steps = budget.reference_steps if cell.exact_kind == "reference" else \
        _pilot_length(cell, budget)
    res = _long_run(cell, steps)
    exact = oracle(cell) if cell.exact_kind == "oracle" else None
    ps = None
    if cell.exact_kind == "perfect":
        system, inp = build(cell.model, cell.S, cell.load)
        ps = cp.perfect_sample(system, inp, budget.perfect_size, rng=7,
                               workers=budget.workers)
    rows = []
    for k in STATS:
        est = getattr(res, k)
        if exact is not None:
            value, se, source = exact[k], 0.0, "oracle"
        elif ps is not None:
            value, se, source = float(getattr(ps, k).value), float(getattr(ps, k).se), \
                f"perfect_sample size={budget.perfect_size}"
        else:
            value, se, source = float(est.value), float(est.se), f"long run steps={steps}"
        rows.append({"cell": cell.label, "stat": k, "value": value, "se": se,
                     "sigma_asym": float(est.se) * math.sqrt(steps * res.replications),
                     "pilot_steps": steps, "source": source})
    return rows


def _stale(cell: Cell, rows: dict[str, dict], budget: Budget) -> str | None:
    """Why the cached reference ``rows`` of ``cell`` is not enough for ``budget`` (or None).

    A reference resting on fewer exact draws (``perfect_sample size=N``) or arrivals (``long
    run steps=N``) than ``budget`` asks for is not; one resting on more is kept.
    """
    want = {"perfect": budget.perfect_size, "reference": budget.reference_steps}.get(
        cell.exact_kind)
    if want is None:
        return None
    source = str(next(iter(rows.values()))["source"])
    have = int(source.rsplit("=", 1)[1]) if "=" in source else 0
    return None if have >= want else f"it rests on {source}, fewer than {want:,} asked for"


def references(chosen: Sequence[Cell], path: Path, budget: Budget) -> dict[str, dict]:
    """``{label: {stat: row}}`` for ``chosen``, computing the missing ones into ``path``.

    A cached reference resting on fewer draws or arrivals than ``budget`` asks for
    (``--perfect-size``, ``--reference-steps``) is computed again and replaces its rows.
    """
    have: dict[str, dict] = {}
    if path.exists():
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                row = {**row, **{k: float(row[k]) for k in ("value", "se", "sigma_asym")}}
                have.setdefault(row["cell"], {})[row["stat"]] = row
    for cell in chosen:
        old = have.get(cell.label)
        why = None if old is None else _stale(cell, old, budget)
        if old is not None and why is None:
            continue
        if why is not None:
            print(f"reference for {cell.label} computed again: {why}", flush=True)
        print(f"reference / pilot run for {cell.label} ...", flush=True)
        new = _reference_rows(cell, budget)
        have[cell.label] = {r["stat"]: r for r in new}
        rows = new if old is None else [r for stats in have.values() for r in stats.values()]
        fresh = old is not None or not path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w" if fresh else "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(new[0]))
            if fresh:
                w.writeheader()
            w.writerows(rows)
    return have


# -- one run -----------------------------------------------------------------------------


def run_one(seed: int, rng: Any, *, model: str, S: int, load: float, mode: str,
            exact: tuple[float, ...], confidence: float, precision: float,
            max_steps: int, steps: int, warmup: int) -> dict[str, Any]:
    """One seed of a cell: its intervals, whether they cover ``exact``, steps and warnings.

    Called by ``ly.sweep`` as ``run_one(seed=..., rng=SeedSequence, ...)``; ``rng`` seeds
    the simulation (``seed`` only labels the row).
    """
    system, inp = build(model, S, load)
    z = float(norm.ppf(0.5 + confidence / 2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mode == "precision":
            kw: dict[str, Any] = dict(precision=precision, confidence=confidence,
                                      statistics=STATS, max_steps=max_steps, warmup="auto")
            res: Any = rc.simulate(system, inp, rng=rng, **kw)
            used, reached = int(res.precision.steps_used), bool(res.precision.reached)
        else:
            res = rc.simulate(system, inp, steps=steps, warmup=warmup, rng=rng)
            used, reached = (steps + warmup) * res.replications, True
    warned = (any(issubclass(w.category, rc.SimulationWarning) for w in caught)
              or bool(getattr(res, "warned", False)))
    row: dict[str, Any] = {"steps_used": used, "reached": reached, "warned": warned,
                           "observed": int(res.steps) * int(res.replications)}
    for k, x in zip(STATS, exact, strict=True):
        if hasattr(res, "interval"):
            iv = (res.interval(k) if mode == "precision"
                  else res.interval(k, confidence=confidence))
            lo, hi = float(iv.lower), float(iv.upper)
            row[f"{k}_trusted"] = bool(getattr(iv, "trusted", True))
            row[f"{k}_value"] = float(iv.value)
        else:  # before the precision mode: a normal interval from the Estimate
            est = getattr(res, k)
            lo, hi = float(est.value - z * est.se), float(est.value + z * est.se)
            row[f"{k}_trusted"] = True
            row[f"{k}_value"] = float(est.value)
        row[f"{k}_lower"], row[f"{k}_upper"] = lo, hi
        row[f"{k}_covered"] = bool(lo <= x <= hi)   # False when the interval is nan
    return row


# -- one cell ----------------------------------------------------------------------------


def _binom(hits: np.ndarray) -> tuple[float, float]:
    n = hits.size
    if n == 0:
        return math.nan, math.nan
    c = float(hits.mean())
    return c, math.sqrt(c * (1 - c) / n)


SEED_BLOCK = 200
"""Seeds per sweep (and checkpoint file): more seeds add blocks, keeping the first ones."""


def _seeds_in_blocks(func: Any, seeds: int, root: int, workers: int | None,
                     checkpoint: Path | None) -> dict[str, list[Any]]:
    """``func`` over seeds ``0 .. seeds - 1``, a sweep per :data:`SEED_BLOCK` of them.

    Seed ``k`` gets child ``k`` of ``SeedSequence(root)`` whatever the blocks (block ``b``
    spawns from child ``b * SEED_BLOCK`` on), so adding seeds to a cell reruns none: the first
    block keeps its checkpoint file, block ``b`` writes ``NAME_b<b>.ckpt`` beside it.
    """
    columns: dict[str, list[Any]] = {}
    for b, first in enumerate(range(0, seeds, SEED_BLOCK)):
        n = min(SEED_BLOCK, seeds - first)
        ck = checkpoint
        if ck is not None and b > 0:
            ck = ck.with_name(f"{ck.stem}_b{b}{ck.suffix}")
        rng = np.random.SeedSequence(root, n_children_spawned=first)
        table = ly.sweep(func, {"seed": list(range(first, first + n))}, progress=False,
                         rng=rng, max_workers=workers, checkpoint=ck)
        names = list(table)
        for k in names:
            columns.setdefault(k, []).extend(list(table[k]))
    return columns


def run_cell(cell: Cell, mode: str, seeds: int, *, ref: dict[str, dict],
             confidence: float = 0.95, precision: float = 0.1, max_steps: int = 10**8,
             steps: int = 10**5, warmup: int = 10**4, workers: int | None = None,
             checkpoint: Path | None = None) -> dict[str, Any]:
    """Run ``seeds`` seeds of ``cell`` (one ``ly.sweep`` task each) and summarise them.

    ``ref`` maps each statistic to its exact value (``value``, ``se``) and asymptotic sd
    (``sigma_asym``), as :func:`references` returns them.
    """
    exact = tuple(float(ref[k]["value"]) for k in STATS)
    func = functools.partial(run_one, model=cell.model, S=cell.S, load=cell.load, mode=mode,
                             exact=exact, confidence=confidence, precision=precision,
                             max_steps=max_steps, steps=steps, warmup=warmup)
    if checkpoint is not None:
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
    table = _seeds_in_blocks(func, seeds, zlib.crc32(f"{cell.label} {mode}".encode()),
                             workers, checkpoint)
    ok = np.array([e is None for e in table["error"]], dtype=bool)
    errors = [e for e in table["error"] if e is not None]
    if errors:
        print(f"  {cell.label}: {len(errors)} runs failed, e.g. {errors[0]}", file=sys.stderr)
    z = float(norm.ppf(0.5 + confidence / 2))
    row: dict[str, Any] = {"cell": cell.label, "model": cell.model, "S": cell.S,
                           "load": cell.load, "mode": mode, "nominal": confidence,
                           "runs": int(ok.sum()), "errors": len(errors)}
    for k in STATS:
        row[f"exact_{k}"] = float(ref[k]["value"])
        row[f"exact_{k}_se"] = float(ref[k]["se"])
    if not ok.any():
        return row
    warned = np.asarray(table["warned"])[ok].astype(bool)
    used = np.asarray(table["steps_used"], dtype=float)[ok]
    needs, asked, needs_runs = [], [], []
    observed = (np.asarray(table["observed"], dtype=float)[ok] if "observed" in table
                else None)
    for k in STATS:
        hits = np.asarray(table[f"{k}_covered"])[ok].astype(bool)
        row[f"cov_{k}"], row[f"cov_{k}_se"] = _binom(hits)
        row[f"cov_unwarned_{k}"], _ = _binom(hits[~warned])
        half = (np.asarray(table[f"{k}_upper"], dtype=float)[ok]
                - np.asarray(table[f"{k}_lower"], dtype=float)[ok]) / 2
        h = float(np.nanmean(half)) if np.isfinite(half).any() else math.nan
        row[f"half_width_{k}"] = h
        if h > 0:
            needs.append((z * float(ref[k]["sigma_asym"]) / h) ** 2)
            if observed is not None and f"{k}_value" in table:
                # the asymptotic variance from the runs' own errors: n_i (x_i - x)^2
                err = np.asarray(table[f"{k}_value"], dtype=float)[ok] - float(ref[k]["value"])
                var = float(np.nanmean(observed * err**2))
                row[f"sigma_runs_{k}"] = math.sqrt(var)
                needs_runs.append(z**2 * var / h**2)
        target = precision * abs(float(ref[k]["value"]))
        if mode == "precision" and target > 0:
            asked.append((z * float(ref[k]["sigma_asym"]) / target) ** 2)
    n_steps = max(needs) if needs else math.nan
    n_asked = max(asked) if asked else math.nan
    row["steps_mean"] = float(used.mean())
    row["steps_p95"] = float(np.percentile(used, 95))
    row["warned"] = float(warned.mean())
    row["unwarned"] = int((~warned).sum())
    row["reached"] = float(np.asarray(table["reached"])[ok].astype(bool).mean())
    trusted = np.all([np.asarray(table[f"{k}_trusted"])[ok].astype(bool) for k in STATS], axis=0)
    row["untrusted"] = float(1 - trusted.mean())
    row["oracle_steps"] = n_steps
    row["steps_ratio"] = row["steps_mean"] / n_steps if n_steps > 0 else math.nan
    row["oracle_target_steps"] = n_asked
    row["target_ratio"] = row["steps_mean"] / n_asked if n_asked > 0 else math.nan
    n_runs = max(needs_runs) if needs_runs else math.nan
    row["oracle_steps_runs"] = n_runs
    row["steps_ratio_runs"] = row["steps_mean"] / n_runs if n_runs > 0 else math.nan
    return row


# -- table -------------------------------------------------------------------------------


def _f(x: Any, fmt: str) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The table as Markdown: coverage +- se per statistic, steps, warnings, oracle steps."""
    head = ("| cell | nominal | p_wait | mean_wait | mean_workload | steps mean | steps p95 | "
            "warned | unwarned: p_wait, mean_wait, mean_workload | oracle steps | ratio | "
            "ratio to target | ratio, runs' sigma |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for r in rows:
        cov = [f"{_f(r.get(f'cov_{k}'), '.3f')} ± {_f(r.get(f'cov_{k}_se'), '.3f')}"
               for k in STATS]
        unw = ", ".join(_f(r.get(f"cov_unwarned_{k}"), ".3f") for k in STATS)
        lines.append(
            f"| {r['cell']} | {r['nominal']:g} | {' | '.join(cov)} | "
            f"{_f(r.get('steps_mean'), '.3g')} | {_f(r.get('steps_p95'), '.3g')} | "
            f"{_f(r.get('warned'), '.3f')} | {unw} | {_f(r.get('oracle_steps'), '.3g')} | "
            f"{_f(r.get('steps_ratio'), '.2f')} | {_f(r.get('target_ratio'), '.2f')} | "
            f"{_f(r.get('steps_ratio_runs'), '.2f')} |")
    return "\n".join(lines)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="4 seeds, two small cells, short runs and references (for tests)")
    ap.add_argument("--seeds", type=int, default=None, help="runs per cell (default 200)")
    ap.add_argument("--cells", default=None, help="regular expression on the cell labels")
    ap.add_argument("--mode", choices=("precision", "fixed"), default="precision")
    ap.add_argument("--precision", type=float, default=0.1, help="precision mode's target")
    ap.add_argument("--confidence", type=float, default=0.95, help="nominal level")
    ap.add_argument("--max-steps", type=int, default=10**8, help="precision mode's cap")
    ap.add_argument("--steps", type=int, default=None, help="fixed mode (default 1e5)")
    ap.add_argument("--warmup", type=int, default=None, help="fixed mode (default steps/10)")
    ap.add_argument("--workers", type=int, default=None,
                    help="ly.sweep's max_workers (default: its automatic choice)")
    ap.add_argument("--out", type=Path, default=RESULTS,
                    help="folder of the table, references and checkpoints")
    ap.add_argument("--reference-steps", type=int, default=None,
                    help="arrivals of the long reference runs (JIQ, LL(2); default 2e7): "
                         "their standard error should be well below the intervals' half-width")
    ap.add_argument("--perfect-size", type=int, default=None,
                    help="exact draws of the J2SW(3,1) references (default 2e5, about "
                         "12 minutes a cell on one core; 2e4 left their p_wait 0.9-1.3 "
                         "of its standard errors off)")
    ap.add_argument("--csv", action="store_true",
                    help="also write benchmarks/results/coverage.csv (as every benchmark)")
    args = ap.parse_args(argv)
    if args.seeds is None:
        args.seeds = 4 if args.quick else 200
    if args.cells is None:
        args.cells = QUICK_CELLS if args.quick else "."
    if args.steps is None:
        args.steps = 20_000 if args.quick else 10**5
    if args.warmup is None:
        args.warmup = args.steps // 10
    return args


def main(argv: Sequence[str] | None = None) -> Rows:
    """Run the chosen cells, print the Markdown table, write CSV and Markdown; return it."""
    args = parse(argv)
    if args.mode == "precision" and not has_precision_mode():
        raise SystemExit("coverage.py --mode precision needs rc.simulate(..., precision=, "
                         "confidence=, statistics=, max_steps=, warmup='auto') (issue 26), "
                         "which this version of recursions lacks; run --mode fixed")
    chosen = [c for c in cells() if re.search(args.cells, c.label)]
    if not chosen:
        raise SystemExit(f"no cell matches {args.cells!r}")
    budget = Budget(2 * 10**4, 2 * 10**5, 200) if args.quick else Budget()
    if args.reference_steps is not None:
        budget = dataclasses.replace(budget, reference_steps=args.reference_steps)
    if args.perfect_size is not None:
        budget = dataclasses.replace(budget, perfect_size=args.perfect_size)
    budget = dataclasses.replace(budget, workers=max(args.workers or 1, 1))
    suffix = "_quick" if args.quick else ""
    ref = references(chosen, args.out / f"coverage_reference{suffix}.csv", budget)
    rows = []
    for cell in chosen:
        ck = None if args.quick else (
            args.out / "coverage_checkpoints"
            / f"{re.sub(r'[^A-Za-z0-9.]+', '_', cell.label)}_{args.mode}.ckpt")
        row = run_cell(cell, args.mode, args.seeds, ref=ref[cell.label],
                       confidence=args.confidence, precision=args.precision,
                       max_steps=args.max_steps, steps=args.steps, warmup=args.warmup,
                       workers=args.workers, checkpoint=ck)
        rows.append(row)
        print(markdown([row]).splitlines()[-1], flush=True)
    text = markdown(rows)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    name = f"coverage_{args.mode}{suffix}"
    (args.out / f"{name}.md").write_text(text + "\n")
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with (args.out / f"{name}.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"table written to {args.out / name}.csv and .md")
    return finish(rows, ("cell",), "coverage")


if __name__ == "__main__":
    main()
