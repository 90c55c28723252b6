"""Exact stationary samples of FCFS GI/G/S (dominated CFTP) against forward simulation.

For M/M/S and M/D/S, and E2/M/S and E2/D/S (Erlang-2 arrivals), at S in {2, 10, 50} and loads
0.5-0.95 this prints exact samples per second and the mean number of backward customers per
sample, beside the cost of a forward simulation (``rc.simulate``, batch means) reaching the
same standard error on P(wait), and the ratio. Each cell draws samples until a time budget is
spent; a cell where every draw hits the backward cap is reported as "capped". The dominated
CFTP needs an instant when none of the bound's S queues has a customer waiting: under random
assignment that becomes rare as S and the load grow (probability about (1 - rho^2)^S for
exponential service), under round robin (cyclic assignment) much less so.

Rows, side by side in the same run: "ra-ps" random assignment as reversed M/G/1 queues
(Poisson only), "ra-walk" random assignment drawn as a certified random walk, "cyclic" round
robin drawn as a certified random walk (the default for light-tailed service).

Run: ``python benchmarks/perfect_sampling.py [--quick]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

import coupling as cp
import recursions as rc


def make_input(arrivals, S, rho, law):
    lam = rho * S / law.mean
    if arrivals == "E2":
        return rc.Renewal(rc.dists.Erlang(2, 2 * lam), law)
    return rc.Poisson(lam, law)


def exact_cell(inp, S, method, budget, cap):
    samples, steps, seed, capped = [], [], 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget and len(samples) < 200:
        try:
            ps = cp.perfect_sample(rc.JSW(S), inp, 10, rng=seed, cap=cap, method=method)
        except cp.CouplingNotReached:
            capped += 1
            if not samples and capped >= 2:
                return None
        else:
            samples.append(ps.samples[:, 0])
            steps.append(ps.steps)
        seed += 1
    elapsed = time.perf_counter() - t0
    if not samples:
        return None
    w1 = np.concatenate(samples)
    return w1, np.concatenate(steps), elapsed, capped


def forward_cost(inp, S, se_target):
    steps = 200_000
    t0 = time.perf_counter()
    res = rc.simulate(rc.JSW(S), inp, steps=steps, warmup=steps // 10, rng=1)
    t = time.perf_counter() - t0
    se = res.p_wait.se
    return t * (se / se_target) ** 2 if se_target > 0 else math.nan


def main(quick: bool = False) -> None:
    budget = 1.0 if quick else 3.0
    cap = 2e3 if quick else 2e5
    sizes = (2, 10) if quick else (2, 10, 50)
    loads = (0.5, 0.9) if quick else (0.5, 0.7, 0.9, 0.95)
    rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=100, rng=0)
    for method in ("dominated", "dominated-walk", "dominated-cyclic"):  # compile first
        cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 2, rng=0,
                          method=method)
    print(f"{'system':<6} {'bound':<8} {'S':>3} {'load':>5} {'samples/s':>10} {'back steps':>11} "
          f"{'P(wait)':>8} {'se':>7} {'exact s':>8} {'forward s':>10} {'ratio':>7} capped")
    rows = (("M", "ra-ps", "dominated"), ("M", "ra-walk", "dominated-walk"),
            ("M", "cyclic", "dominated-cyclic"), ("E2", "cyclic", "dominated-cyclic"))
    for sname, law in (("M", rc.dists.Exponential(1.0)), ("D", rc.dists.Deterministic(1.0))):
        for S in sizes:
            for rho in loads:
                for arrivals, bound, method in rows:
                    name = f"{arrivals}/{sname}"
                    inp = make_input(arrivals, S, rho, law)
                    cell = exact_cell(inp, S, method, budget, cap)
                    if cell is None:
                        print(f"{name:<6} {bound:<8} {S:>3} {rho:>5} {'capped':>10}  (no "
                              f"coupling within time {cap:g} back)", flush=True)
                        continue
                    w1, steps, elapsed, capped = cell
                    p = float(np.mean(w1 > 0))
                    se = math.sqrt(max(p * (1 - p), 1e-12) / w1.size)
                    fwd = forward_cost(inp, S, se) if 0 < p < 1 else math.nan
                    ratio = f"{elapsed / fwd:>7.0f}" if fwd > 0 else f"{'n/a':>7}"
                    print(f"{name:<6} {bound:<8} {S:>3} {rho:>5} {w1.size / elapsed:>10.1f} "
                          f"{steps.mean():>11.1f} {p:>8.4f} {se:>7.4f} {elapsed:>8.2f} "
                          f"{fwd:>10.4f} {ratio} {capped:>6}", flush=True)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
