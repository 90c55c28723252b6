"""Exact stationary samples of FCFS M/G/S (dominated CFTP) against forward simulation.

For M/M/S and M/D/S at S in {2, 10, 50} and loads 0.5-0.95 this prints exact samples per
second and the mean number of backward customers per sample, beside the cost of a forward
simulation (``rc.simulate``, batch means) reaching the same standard error on P(wait), and the
ratio. Each cell draws samples until a time budget is spent; a cell whose first sample hits the
backward cap is reported as "capped": the random-assignment bound of the dominated CFTP needs an
instant when none of its S queues has a customer waiting, which becomes rare as S and the load
grow (probability about (1 - rho^2)^S for exponential service).

Run: ``python benchmarks/perfect_sampling.py [--quick]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

import coupling as cp
import recursions as rc


def exact_cell(S, rho, law, budget, cap):
    inp = rc.Poisson(rho * S / law.mean, law)
    samples, steps, seed = [], [], 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget and len(samples) < 2000:
        try:
            ps = cp.perfect_sample(rc.JSW(S), inp, 10, rng=seed, cap=cap)
        except cp.CouplingNotReached:
            return None
        samples.append(ps.samples[:, 0])
        steps.append(ps.steps)
        seed += 1
    elapsed = time.perf_counter() - t0
    w1 = np.concatenate(samples)
    return w1, np.concatenate(steps), elapsed


def forward_cost(S, rho, law, se_target):
    inp = rc.Poisson(rho * S / law.mean, law)
    steps = 200_000
    t0 = time.perf_counter()
    res = rc.simulate(rc.JSW(S), inp, steps=steps, warmup=steps // 10, rng=1)
    t = time.perf_counter() - t0
    se = res.p_wait.se
    return t * (se / se_target) ** 2 if se_target > 0 else math.nan


def main(quick: bool = False) -> None:
    budget = 1.0 if quick else 5.0
    cap = 2e3 if quick else 2e4
    sizes = (2, 10) if quick else (2, 10, 50)
    loads = (0.5, 0.9) if quick else (0.5, 0.7, 0.9, 0.95)
    rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=100, rng=0)
    cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 2, rng=0)
    print(f"{'law':<4} {'S':>3} {'load':>5} {'samples/s':>10} {'back steps':>11} "
          f"{'P(wait)':>8} {'se':>7} {'exact s':>8} {'forward s':>10} {'ratio':>7}")
    for name, law in (("M", rc.dists.Exponential(1.0)), ("D", rc.dists.Deterministic(1.0))):
        for S in sizes:
            for rho in loads:
                cell = exact_cell(S, rho, law, budget, cap)
                if cell is None:
                    print(f"{name:<4} {S:>3} {rho:>5} {'capped':>10}  (no coupling within "
                          f"time {cap:g} back)")
                    continue
                w1, steps, elapsed = cell
                p = float(np.mean(w1 > 0))
                se = math.sqrt(max(p * (1 - p), 1e-12) / w1.size)
                fwd = forward_cost(S, rho, law, se) if 0 < p < 1 else math.nan
                ratio = f"{elapsed / fwd:>7.0f}" if fwd > 0 else f"{'n/a':>7}"
                print(f"{name:<4} {S:>3} {rho:>5} {w1.size / elapsed:>10.1f} "
                      f"{steps.mean():>11.1f} {p:>8.4f} {se:>7.4f} {elapsed:>8.2f} "
                      f"{fwd:>10.4f} {ratio}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
