"""The frontier of exact sampling of FCFS G/G/S, against forward simulation, side by side.

For M/M/S, M/D/S and E2/M/S (Erlang-2 arrivals) at S in {2, 10, 50, 100} and loads
{0.5, 0.7, 0.9, 0.95} this prints, for ``cp.perfect_sample``'s default method (the vacation
bound where ``S (rho - 1/2) >= 3.5`` or ``S >= 80``, round robin below), exact samples per
second, the mean number of customers gone back per sample, the estimate of P(wait) with its
i.i.d. standard error, and the cost of a forward simulation (``rc.simulate``, batch means,
measured in the same run) reaching the same standard error on P(wait), with the ratio. A cell
that cannot sample within the backward cap says "capped" (none does with the vacation bound).

A second table runs the three older bounds (random assignment as reversed M/G/1 queues, as a
certified walk, round robin as a certified walk) beside the vacation bound on the cells where
they were capped before, and the published comparison: the Blanchet-Pei-Sigman MATLAB
sampler needed about 37 s per sample for M/M/10 at load 0.9 (Octave, 2 cores).

Writes ``benchmarks/results/perfect_frontier.png`` (samples per second against S, one line
per load and law) unless ``--no-figure``. Run: ``python benchmarks/perfect_sampling.py
[--quick] [--no-figure]``.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from _tables import finish

import coupling as cp
import recursions as rc
from recursions.common._tables import Rows

PUBLISHED_SECONDS = 37.0  # per sample, M/M/10 at load 0.9, Blanchet-Pei-Sigman (Octave)


def make_input(arrivals: str, S: int, rho: float, law) -> rc.Input:
    lam = rho * S / law.mean
    if arrivals == "E2":
        return rc.Renewal(rc.dists.Erlang(2, 2 * lam), law)
    return rc.Poisson(lam, law)


def exact_cell(inp, S, budget, most, method=None, cap=None):
    """Draw batches of exact samples until ``budget`` seconds are spent (one batch at least)."""
    t0 = time.perf_counter()
    draws, seed = [], 0
    try:
        while True:
            ps = cp.perfect_sample(rc.JSW(S), inp, 4, rng=seed, method=method, cap_time=cap)
            draws.append(ps)
            seed += 1
            if time.perf_counter() - t0 > budget or 4 * len(draws) >= most:
                break
    except cp.CouplingNotReached:
        if not draws:
            return None
    elapsed = time.perf_counter() - t0
    w = np.concatenate([d.samples[:, 0] for d in draws])
    back = np.concatenate([d.customers_back for d in draws])
    return w, back, elapsed, draws[0].method


def forward_cost(inp, S, se_target):
    """Seconds a forward run needs for standard error ``se_target`` on P(wait)."""
    steps = 200_000
    t0 = time.perf_counter()
    res = rc.simulate(rc.JSW(S), inp, steps=steps, warmup=steps // 10, rng=1)
    t = time.perf_counter() - t0
    se = res.p_wait.se
    return t * (se / se_target) ** 2 if se_target > 0 and se > 0 else math.nan


def frontier(quick: bool) -> Rows:
    budget, most = (1.0, 24) if quick else (6.0, 200)
    sizes = (2, 10, 50) if quick else (2, 10, 50, 100)
    loads = (0.5, 0.9) if quick else (0.5, 0.7, 0.9, 0.95)
    laws = (("M/M", "M", rc.dists.Exponential(1.0)), ("M/D", "M", rc.dists.Deterministic(1.0)),
            ("E2/M", "E2", rc.dists.Exponential(1.0)))
    print("| system | S | load | method | samples/s | customers back | P(wait) | se | "
          "forward s for that se | exact / forward |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name, arrivals, law in laws:
        for S in sizes:
            for rho in loads:
                inp = make_input(arrivals, S, rho, law)
                cell = exact_cell(inp, S, budget, most)
                if cell is None:
                    print(f"| {name} | {S} | {rho} | | capped | | | | | |", flush=True)
                    rows.append({"system": name, "S": S, "load": rho, "rate": 0.0,
                                 "method": "capped"})
                    continue
                w, back, elapsed, method = cell
                p = float(np.mean(w > 0))
                se = math.sqrt(max(p * (1 - p), 1e-12) / w.size)
                fwd = forward_cost(inp, S, se) if 0 < p < 1 else math.nan
                rate = w.size / elapsed
                ratio = f"{elapsed / fwd:.0f}" if fwd > 0 else "n/a"
                print(f"| {name} | {S} | {rho} | {method} | {rate:.2f} | {back.mean():.0f} | "
                      f"{p:.3f} | {se:.3f} | {fwd:.4f} | {ratio} |", flush=True)
                rows.append({"system": name, "S": S, "load": rho, "rate": rate,
                             "method": method, "customers_back": float(back.mean()),
                             "p_wait": p, "p_wait_se": se, "forward_seconds": fwd,
                             "exact_over_forward": elapsed / fwd if fwd > 0 else math.nan})
    return finish(rows, ("system", "S", "load"), "perfect_frontier")


def older_bounds(quick: bool) -> Rows:
    budget = 1.0 if quick else 4.0
    cells = ((10, 0.9), (10, 0.95), (50, 0.7)) if not quick else ((10, 0.9),)
    print("\n| system | S | load | method | samples/s | customers back |")
    print("|---|---|---|---|---|---|")
    rows: list[dict] = []
    for S, rho in cells:
        inp = make_input("M", S, rho, rc.dists.Exponential(1.0))
        for method in ("vacation", "dominated-cyclic", "dominated-walk", "dominated"):
            cell = exact_cell(inp, S, budget, 60, method=method, cap=2e5)
            if cell is None:
                print(f"| M/M | {S} | {rho} | {method} | capped (2e5 time units back) | |",
                      flush=True)
                rows.append({"S": S, "load": rho, "method": method, "rate": 0.0,
                             "capped": True})
                continue
            w, back, elapsed, _ = cell
            rate = w.size / elapsed
            extra = ""
            if (S, rho) == (10, 0.9):
                extra = f" ({rate * PUBLISHED_SECONDS:.0f}x the published sampler)"
            print(f"| M/M | {S} | {rho} | {method} | {rate:.2f}{extra} | {back.mean():.0f} |",
                  flush=True)
            rows.append({"S": S, "load": rho, "method": method, "rate": rate,
                         "capped": False, "customers_back": float(back.mean())})
    return finish(rows, ("S", "load", "method"), "perfect_older_bounds")


def figure(rows: Rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    styles = {"M/M": "-", "M/D": "--", "E2/M": ":"}
    for name in styles:
        for rho, colour in zip((0.5, 0.7, 0.9, 0.95), ("tab:green", "tab:blue", "tab:orange",
                                                      "tab:red"), strict=True):
            pts = [(r["S"], r["rate"]) for r in rows if r["system"] == name and r["load"] == rho]
            if pts:
                x, y = zip(*pts, strict=True)
                ax.loglog(x, y, styles[name], marker="o", color=colour,
                          label=f"{name}, load {rho}")
    ax.axhline(1 / PUBLISHED_SECONDS, color="k", lw=0.8)
    ax.text(2.1, 1.2 / PUBLISHED_SECONDS, "published sampler, M/M/10 at 0.9", fontsize=7)
    ax.set_xlabel("servers S")
    ax.set_ylabel("exact samples per second")
    ax.set_title("Exact FCFS G/G/S samples on one core")
    ax.legend(fontsize=6, ncol=3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"\nfigure written to {path}")


def main() -> None:
    quick = "--quick" in sys.argv
    inp = rc.Poisson(1.0, rc.dists.Exponential(1.0))
    rc.simulate(rc.JSW(2), inp, steps=100, rng=0)  # compile first
    for method in ("vacation", "dominated", "dominated-walk", "dominated-cyclic"):
        cp.perfect_sample(rc.JSW(2), inp, 2, rng=0, method=method)
    rows = frontier(quick)
    older_bounds(quick)
    if "--no-figure" not in sys.argv:
        figure(rows, Path(__file__).with_name("results") / "perfect_frontier.png")


if __name__ == "__main__":
    main()
