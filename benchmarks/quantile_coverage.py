"""Coverage of the quantile intervals ``res.wait_quantile(q)`` and ``res.workload_quantile(q)``.

Where a mean has no normal limit (a service law with ``E[sigma^4] = inf``: the time-averaged
wait of M/G/1 then has no finite asymptotic variance), ``rc.simulate`` marks the mean's
interval untrusted and offers quantiles, with intervals by sectioning
(:func:`recursions.inference._batch_means.quantile_interval`). This table counts how often their 95%
intervals contain the exact quantile, with the binomial standard error
``sqrt(c (1 - c) / n)``, at ``q`` = 0.5 and 0.9 in every cell.

Single-server cells: FCFS M/G/1 (``rc.JSW(1)``, Poisson arrivals of rate ``load``, service
mean 1):

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

Multi-server cells: FCFS M/M/S (``rc.JSW(S)``: joining the shortest workload is FCFS G/G/S;
Poisson arrivals of total rate ``load * S``, exponential service of mean 1) for S = 10 at
loads 0.9 and 0.95 and S = 40 at load 0.95. ``wait_quantile`` reads what each arrival found
at the server it joined, which under JSW is its FCFS wait, so the oracle is Erlang C's law
``P(W > t) = C(S, a) exp(-(S - a) t)`` with ``a = load * S``: the ``q``-quantile is
``ln(C / (1 - q)) / (S - a)`` for ``q > 1 - C`` and 0 (the atom at 0) otherwise. ``C`` comes
from Erlang B's recursion ``B_k = a B_{k-1} / (k + a B_{k-1})`` and
``C = B / (1 - rho (1 - B))``, here in numpy-free Python, not from the library. All three
cells have ``C`` above 0.66, so q = 0.5 and 0.9 both lie above the atom (the smallest
quantile is 0.14, M/M/40 at 0.95); :func:`exact_quantiles` refuses a ``q`` on the atom.

``workload_quantile`` reads the profile ``x_w``: the share of servers whose workload (the
time until they would be free, serving everyone present in FCFS order) exceeds ``w``, as an
arrival finds them. For M/M/S it has a closed form (:func:`mms_server_workload_sf`), derived
here from the birth-death chain and the memoryless law. With ``n < S`` customers present,
``n`` servers each have an exponential remaining service: ``x_w = (n / S) e^{-w}``. With
``S + k`` present the ``k`` waiting start at the first ``k`` departures, which come at rate
``S``, so at time ``T_k ~ Gamma(k, S)``; then the ``S`` servers free for good one by one, at
``T_k`` plus the order statistics of ``S`` i.i.d. exponentials, and the expected number of
them past ``w`` is ``S E[min(1, e^{T_k - w})]``. Over the stationary law (PASTA: arrivals see
time averages), ``P(N = S + k) = C (1 - rho) rho^k``, and a geometric mixture of
``Gamma(k, S)``, ``k >= 1``, is exponential of rate ``beta = S - a``:

``x_w = (a / S - C) e^{-w} + C ((1 - rho) e^{-w} + rho h(w))``,
``h(w) = E[min(1, e^{T - w})] = e^{-beta w} + beta e^{-w} (e^{(1 - beta) w} - 1) / (1 - beta)``

(``(1 + w) e^{-w}`` at ``beta = 1``), using ``E[busy servers] = a`` for the first term; at
``w = 0`` it is ``rho``, the share of busy servers. The quantile solves ``x_w = 1 - q`` (by
bisection) and exists for ``q > 1 - rho``. ``tests/scripts/test_quantile_coverage.py`` checks the
form against a sum over the chain's states with gamma tails and against exact stationary
draws (``coupling.mms_states``).

Every run: ``--steps`` arrivals (default ``2**21``) after ``steps // 10`` of warm-up, 256
batches, a grid of 1201 levels to three times the largest exact quantile, seed
``7000 + i`` for run ``i``, one run at a time.

Run: ``python benchmarks/quantile_coverage.py [--seeds 200] [--cells REGEX] [--quick]
[--csv]``. ``--cells`` picks the cells whose label (``M/M/10 0.9``, ``M/Lomax(3.5)/1 0.8``)
matches the regular expression; ``--csv`` writes ``results/quantile_coverage.csv`` and
``.md``, keeping the rows of the cells not run from the CSV already there (so new cells are
added without rerunning the old ones). ``--quick`` (what the tests run) takes 4 seeds of
short runs, of two single-server cells unless ``--cells`` is given; it writes nothing.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _tables import RESULTS, finish

import recursions as rc
from recursions.common._tables import Rows

QS = (0.5, 0.9)
KINDS = ("wait_quantile", "workload_quantile")
LOMAX_SHAPE = 3.5
QUICK_CELLS = r"^M/M/1 0\.9$|^M/Lomax\(3\.5\)/1 0\.8$"
INT_COLUMNS = ("runs", "steps")
TEXT_COLUMNS = ("cell", "statistic")


@dataclass(frozen=True)
class Cell:
    """One row group: the service law (``"exp"`` or ``"lomax"``), the load and the servers."""

    service: str
    load: float
    servers: int = 1

    @property
    def label(self) -> str:
        """``M/M/1 0.9``, ``M/Lomax(3.5)/1 0.8`` or ``M/M/10 0.95``."""
        law = "M" if self.service == "exp" else f"Lomax({LOMAX_SHAPE:g})"
        return f"M/{law}/{self.servers} {self.load:g}"

    def law(self) -> Any:
        """The service law, mean 1."""
        if self.service == "exp":
            return rc.dists.Exponential(1.0)
        return rc.dists.Lomax(LOMAX_SHAPE, mean=1.0)


CELLS = (Cell("exp", 0.9), Cell("exp", 0.95), Cell("lomax", 0.8), Cell("lomax", 0.9),
         Cell("exp", 0.9, 10), Cell("exp", 0.95, 10), Cell("exp", 0.95, 40))


def erlang_c(servers: int, a: float) -> float:
    """``P(W > 0)`` of M/M/S, offered load ``a < S`` (service rate 1), by Erlang B's recursion."""
    if not 0.0 < a < servers:
        raise ValueError(f"Erlang C needs 0 < a < S, got a = {a!r}, S = {servers!r}")
    b = 1.0
    for k in range(1, servers + 1):
        b = a * b / (k + a * b)
    rho = a / servers
    return b / (1.0 - rho * (1.0 - b))


def erlang_c_quantile(servers: int, a: float, q: float) -> float:
    """The ``q``-quantile of M/M/S's FCFS wait: ``P(W > t) = C exp(-(S - a) t)``.

    Refuses a ``q`` at or below ``1 - C``, whose quantile is the atom at 0 (no density there,
    so no interval to check).
    """
    c = erlang_c(servers, a)
    if q <= 1.0 - c:
        raise ValueError(f"q = {q:g} lies on the atom at 0 of M/M/{servers} with a = {a:g} "
                         f"(1 - C = {1 - c:.4g}): choose q above it")
    return math.log(c / (1.0 - q)) / (servers - a)


def mms_server_workload_sf(servers: int, a: float, w: float) -> float:
    """``x_w``: the share of servers of FCFS M/M/S with workload above ``w``, seen by arrivals.

    The closed form of the module's docstring (service rate 1, offered load ``a < S``).
    """
    c, rho, beta = erlang_c(servers, a), a / servers, servers - a
    e = math.exp(-w)
    # h = e^{-beta w} + beta (e^{-beta w} - e^{-w}) / (1 - beta), the difference written with
    # expm1 of a negative argument on either side of beta = 1 (no overflow at large w)
    if abs(beta - 1.0) < 1e-9:
        h = (1.0 + w) * e
    elif beta > 1.0:
        h = math.exp(-beta * w) + beta * e * math.expm1((1.0 - beta) * w) / (1.0 - beta)
    else:
        h = math.exp(-beta * w) * (1.0 - beta * math.expm1((beta - 1.0) * w) / (1.0 - beta))
    return (rho - c) * e + c * ((1.0 - rho) * e + rho * h)


def mms_server_workload_quantile(servers: int, a: float, q: float) -> float:
    """The ``q``-quantile of one server's workload seen by arrivals of FCFS M/M/S.

    Solves ``x_w = 1 - q`` by bisection (``x_w`` falls from ``rho`` at 0 to 0). Refuses a
    ``q`` at or below ``1 - rho``, whose quantile is the atom at 0 (an idle server).
    """
    rho = a / servers
    if q <= 1.0 - rho:
        raise ValueError(f"q = {q:g} lies on the atom at 0 of one server of M/M/{servers} with "
                         f"a = {a:g} (1 - rho = {1 - rho:.4g}): choose q above it")
    lo, hi = 0.0, 1.0
    while mms_server_workload_sf(servers, a, hi) > 1.0 - q:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if mms_server_workload_sf(servers, a, mid) > 1.0 - q else (lo, mid)
        if hi - lo <= 1e-13 * hi:
            break
    return 0.5 * (lo + hi)


def lomax_waits(rho: float, samples: int, seed: int) -> np.ndarray:
    """Stationary waits of M/Lomax/1 (service mean 1) by the Benes form, drawn with numpy."""
    gen = np.random.default_rng(seed)
    k = gen.geometric(1 - rho, size=samples) - 1          # P(K = k) = (1 - rho) rho^k
    scale = LOMAX_SHAPE - 1.0                               # service mean 1
    a = LOMAX_SHAPE - 1.0                                   # integrated tail: Lomax(a, scale)
    y = scale * ((1.0 - gen.random(int(k.sum()))) ** (-1.0 / a) - 1.0)  # U in (0, 1]
    return np.bincount(np.repeat(np.arange(samples), k), weights=y, minlength=samples)


def exact_quantiles(cell: Cell, samples: int, seed: int = 12345
                    ) -> dict[str, dict[float, tuple[float, float]]]:
    """``{kind: {q: (quantile, its standard error)}}`` of the stationary law, without the library.

    ``kind`` is ``"wait_quantile"`` or ``"workload_quantile"`` (:data:`KINDS`): on one server
    the two laws are the same.
    """
    rho = cell.load
    if cell.servers > 1:
        if cell.service != "exp":
            raise ValueError(f"{cell.label}: no oracle for a multi-server non-exponential cell")
        s, a = cell.servers, rho * cell.servers
        return {"wait_quantile": {q: (erlang_c_quantile(s, a, q), 0.0) for q in QS},
                "workload_quantile": {q: (mms_server_workload_quantile(s, a, q), 0.0)
                                      for q in QS}}
    if cell.service == "exp":
        # P(W > w) = rho exp(-(1 - rho) w): the least w with P(W > w) <= 1 - q
        one = {q: (max(0.0, math.log(rho / (1 - q)) / (1 - rho)), 0.0) for q in QS}
        return dict.fromkeys(KINDS, one)
    w = lomax_waits(rho, samples, seed)
    out = {}
    for q in QS:
        x = float(np.quantile(w, q))
        h = 0.01 * max(x, 1e-9)                             # density by a central difference
        dens = float(np.mean(np.abs(w - x) <= h)) / (2 * h)
        out[q] = (x, math.sqrt(q * (1 - q) / samples) / dens if dens > 0 else math.inf)
    return dict.fromkeys(KINDS, out)


def run_cell(cell: Cell, seeds: int, steps: int,
             exact: dict[str, dict[float, tuple[float, float]]],
             confidence: float = 0.95) -> list[dict[str, Any]]:
    """``seeds`` runs of ``cell``; one row per quantile kind and level."""
    grid = np.linspace(0.0, 3.0 * max(x for e in exact.values() for x, _ in e.values()), 1201)
    system = rc.JSW(cell.servers)
    inp = rc.Poisson(cell.load * cell.servers, cell.law())
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
                hits[kind, q].append(bool(iv.covers(exact[kind][q][0])))
                half[kind, q].append(float(iv.half_width))
                trusted[kind, q].append(bool(iv.trusted))
    rows = []
    for kind in KINDS:
        for q in QS:
            c = float(np.mean(hits[kind, q]))
            rows.append({"cell": cell.label, "statistic": kind, "q": q, "nominal": confidence,
                         "runs": seeds, "steps": steps, "exact": exact[kind][q][0],
                         "exact_se": exact[kind][q][1], "coverage": c,
                         "coverage_se": math.sqrt(c * (1 - c) / seeds),
                         "half_width_mean": float(np.nanmean(half[kind, q])),
                         "trusted": float(np.mean(trusted[kind, q])),
                         "mean_wait_trusted": float(np.mean(mean_trusted))})
    return rows


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a CSV this script wrote (empty cells as NaN); none when it is absent."""
    if not path.exists():
        return []
    out = []
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            out.append({k: v if k in TEXT_COLUMNS else int(v) if k in INT_COLUMNS
                        else float(v) if v != "" else math.nan for k, v in r.items()})
    return out


def merge(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``old``'s rows with those of the cells in ``new`` replaced, in the order of ``CELLS``.

    The rows of a cell not in ``new`` are kept as they are (so new cells are added without
    rerunning the old ones); cells unknown to ``CELLS`` go last, in their order.
    """
    ran = {r["cell"] for r in new}
    rows = [r for r in old if r["cell"] not in ran] + list(new)
    order = {c.label: i for i, c in enumerate(CELLS)}
    return sorted(rows, key=lambda r: order.get(r["cell"], len(order)))  # stable


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
    """Run the chosen cells, print the table (Markdown) and return it."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="runs per cell (default 200)")
    ap.add_argument("--steps", type=int, default=None, help="arrivals per run (2**21)")
    ap.add_argument("--oracle-samples", type=int, default=None, help="default 4e6")
    ap.add_argument("--cells", default=None, help="regular expression on the cell labels")
    ap.add_argument("--quick", action="store_true", help="4 seeds, short runs, writes nothing")
    ap.add_argument("--csv", action="store_true",
                    help="write results/quantile_coverage.csv and .md (cells not run are kept)")
    args = ap.parse_args(argv)
    if args.quick and args.csv:
        ap.error("--quick writes nothing: drop --csv")
    seeds = args.seeds or (4 if args.quick else 200)
    steps = args.steps or (2**16 if args.quick else 2**21)
    samples = args.oracle_samples or (10**5 if args.quick else 4 * 10**6)
    pattern = args.cells if args.cells is not None else QUICK_CELLS if args.quick else "."
    cells = [c for c in CELLS if re.search(pattern, c.label)]
    if not cells:
        raise SystemExit(f"no cell matches {pattern!r}; cells: {[c.label for c in CELLS]}")
    rows: list[dict[str, Any]] = []
    for cell in cells:
        new = run_cell(cell, seeds, steps, exact_quantiles(cell, samples))
        rows += new
        print("\n".join(markdown(new).splitlines()[2:]), flush=True)
    if args.csv:
        rows = merge(read_rows(RESULTS / "quantile_coverage.csv"), rows)
    text = markdown(rows)
    print(text)
    if args.csv:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "quantile_coverage.md").write_text(text + "\n")
    return finish(rows, ("cell", "statistic", "q"), "quantile_coverage")


if __name__ == "__main__":
    main()
