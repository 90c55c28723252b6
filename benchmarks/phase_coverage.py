"""Coverage of the standard errors of ``res.by_phase(bins)`` against the infinite-server formula.

Cells: ``rc.JSW(30)`` under ``rc.TimeVarying`` arrivals with exponential services of mean 1
and a mean of at most 10 busy servers, so that nobody waits (P(30 busy) is about 1e-7) and the
number of busy servers at time ``t`` is that of M_t/M/infinity: Poisson with mean
``m(t) = int_0^inf lambda(t - s) exp(-s) ds``. Arrivals see the time average at each phase,
so the busy fraction an arrival in a bin sees has the exact value
``int_bin lambda m / int_bin lambda / 30``. ``m`` is computed here, not with the library: a
closed form for the sine rate; for the piecewise-constant rate, ``m' = lambda - m`` solved
piece by piece from its periodic fixed point.

For each run and each of 12 bins the table counts whether ``value +- 1.96 se`` covers the
exact value, and ``value +- t se`` with Student's ``t`` of 31 degrees of freedom (the
interval's 32 batch means), the untrusted bins (``se`` is ``nan``) counted apart, with the
binomial standard error ``sqrt(c (1 - c) / n)``.

Usage::

    python benchmarks/phase_coverage.py            # prints the table
    python benchmarks/phase_coverage.py --csv      # also writes results/phase_coverage.csv
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _tables import finish

import recursions as rc

DAY = 24.0
W = 2 * math.pi / DAY
SERVERS = 30
BINS = 12
T_32 = 2.0395  # Student's t, 97.5%, 31 degrees of freedom: the interval's 32 batch means


def sine_rate(t: np.ndarray) -> np.ndarray:
    return 6.0 + 4.0 * np.sin(W * np.asarray(t))


def sine_m(t: np.ndarray) -> np.ndarray:
    return 6.0 + 4.0 * (np.sin(W * t) - W * np.cos(W * t)) / (1 + W**2)


STEP = np.array([3.0, 3.0, 9.0, 9.0, 9.0, 4.0])  # six pieces of four hours


def step_rate(t: np.ndarray) -> np.ndarray:
    k = np.minimum((np.mod(t, DAY) / (DAY / STEP.size)).astype(int), STEP.size - 1)
    return STEP[k]


def step_m(t: np.ndarray) -> np.ndarray:
    """``m`` for the piecewise-constant rate: ``m' = lambda - m`` solved piece by piece.

    On a piece of rate ``l`` from ``t0``, ``m(t) = l + (m(t0) - l) exp(-(t - t0))``; the
    periodic solution starts from the fixed point of one period, ``m(T) = a m(0) + b`` with
    ``a = exp(-T)``.
    """
    h = DAY / STEP.size

    def period(m0: float) -> list[float]:
        starts = [m0]
        for lam in STEP:
            starts.append(lam + (starts[-1] - lam) * math.exp(-h))
        return starts

    b = period(0.0)[-1]
    starts = period(b / (1 - math.exp(-DAY)))
    x = np.mod(np.asarray(t, dtype=float), DAY)
    k = np.minimum((x / h).astype(int), STEP.size - 1)
    lam = STEP[k]
    return lam + (np.array(starts)[k] - lam) * np.exp(-(x - k * h))


CELLS = {"sine 6 + 4 sin": (sine_rate, sine_m, [sine_rate]),
         "steps 3/9/4": (step_rate, step_m, [STEP.tolist()])}


def exact_busy(rate, m) -> np.ndarray:
    """The busy fraction an arrival in each bin sees, exactly (quadrature on a fine grid)."""
    out = []
    for j in range(BINS):
        t = np.linspace(j * DAY / BINS, (j + 1) * DAY / BINS, 801)
        lam, mm = rate(t), m(t)
        out.append(np.trapezoid(lam * mm, t) / np.trapezoid(lam, t) / SERVERS)
    return np.array(out)


def run(seeds: int, steps: int) -> list[dict]:
    rows = []
    for name, (rate, m, args) in CELLS.items():
        exact = exact_busy(rate, m)
        tv = rc.TimeVarying(args[0], period=DAY, service=rc.dists.Exponential(1.0))
        hit = hit_t = trusted = total = 0
        for seed in range(seeds):
            t = rc.simulate(rc.JSW(SERVERS), tv, steps=steps, warmup=2_000,
                            rng=seed).by_phase(BINS)
            se = t["busy_fraction_se"]
            ok = np.isfinite(se)
            total += BINS
            trusted += int(ok.sum())
            miss = np.abs(t["busy_fraction"] - exact)
            hit += int(np.sum(ok & (miss <= 1.96 * se)))
            hit_t += int(np.sum(ok & (miss <= T_32 * se)))
        c, ct = hit / max(trusted, 1), hit_t / max(trusted, 1)
        rows.append({"cell": name, "servers": SERVERS, "bins": BINS, "runs": seeds,
                     "steps": steps, "intervals": total, "untrusted": total - trusted,
                     "coverage": c, "coverage_se": math.sqrt(c * (1 - c) / max(trusted, 1)),
                     "coverage_t": ct,
                     "coverage_t_se": math.sqrt(ct * (1 - ct) / max(trusted, 1)),
                     "nominal": 0.95})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--steps", type=int, default=2**17)
    ap.add_argument("--csv", action="store_true", help="also write results/phase_coverage.csv")
    args = ap.parse_args()
    rows = finish(run(args.seeds, args.steps), ("cell",), "phase_coverage")
    for r in rows:
        print(f"{r['cell']:16s} coverage {r['coverage']:.3f} ± {r['coverage_se']:.3f} (1.96 se), "
              f"{r['coverage_t']:.3f} ± {r['coverage_t_se']:.3f} (t se) over "
              f"{r['intervals'] - r['untrusted']} trusted intervals ({r['untrusted']} untrusted)")


if __name__ == "__main__":
    main()
