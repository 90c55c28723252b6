"""Throughput of the Kiefer-Wolfowitz (JSW) recursion, side by side with peers, as ratios.

For M/M/S at load 0.9 and S = 1, 10, 100 this prints arrivals (steps) per second for
``rc.simulate(rc.JSW(S), ...)`` (statistics, batch means and the default 33-level profile
included) beside

(a) a plain Python loop of the same map,
(b) Ciw simulating the same FCFS M/M/S queue (customers per second),
(c) a minimal hand-written numba loop of the map, drawing inside the loop (the floor),

and the ratios ours / peer. It also prints the first-call time of a fresh process with a warm
numba cache. The machine is shared and noisy: read the ratios, not the absolute numbers.

Run: ``python benchmarks/kw_throughput.py [--quick]``.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numba
import numpy as np

import recursions as rc


@numba.njit(cache=True)
def minimal_loop(s, lam, n, seed):
    """The floor: the JSW map with in-loop draws and nothing else."""
    np.random.seed(seed)  # noqa: NPY002 - numba's in-loop generator is the floor's
    w = np.zeros(s)
    acc = 0.0
    for _ in range(n):
        acc += w[0]
        x = w[0] + np.random.exponential(1.0)  # noqa: NPY002
        i = 0
        while i + 1 < s and w[i + 1] < x:
            w[i] = w[i + 1]
            i += 1
        w[i] = x
        tau = np.random.exponential(1.0 / lam)  # noqa: NPY002
        for j in range(s):
            v = w[j] - tau
            w[j] = v if v > 0.0 else 0.0
    return acc / n


def python_loop(s, lam, n, seed):
    gen = np.random.default_rng(seed)
    sig = gen.exponential(1.0, n).tolist()
    tau = gen.exponential(1.0 / lam, n).tolist()
    w = [0.0] * s
    acc = 0.0
    for k in range(n):
        acc += w[0]
        w[0] += sig[k]
        w.sort()
        t = tau[k]
        w = [x - t if x > t else 0.0 for x in w]
    return acc / n


def ciw_rate(s, lam, n):
    import ciw

    ciw.seed(1)
    net = ciw.create_network(
        arrival_distributions=[ciw.dists.Exponential(lam)],
        service_distributions=[ciw.dists.Exponential(1.0)],
        number_of_servers=[s],
    )
    sim = ciw.Simulation(net)
    t = time.perf_counter()
    sim.simulate_until_max_customers(n, progress_bar=False)
    return n / (time.perf_counter() - t)


def best_rate(fn, n, repeat=3):
    best = 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = max(best, n / (time.perf_counter() - t))
    return best


def first_call_seconds():
    code = (
        "import time; t = time.perf_counter(); import recursions as rc; "
        "rc.simulate(rc.JSW(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), steps=1000, rng=1); "
        "print(time.perf_counter() - t)"
    )
    out = [float(subprocess.check_output([sys.executable, "-c", code], text=True))
           for _ in range(2)]  # the first may fill the cache; the second reads it
    return out[-1]


def main(quick: bool = False) -> None:
    n_fast = 400_000 if quick else 2_000_000
    n_py = 20_000 if quick else 100_000
    n_ciw = 5_000 if quick else 20_000
    print(f"first call in a fresh process, warm numba cache: {first_call_seconds():.2f} s")
    minimal_loop(2, 1.0, 10, 0)  # compile
    rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=100, rng=0)
    header = f"{'S':>4} {'ours/s':>12} {'python/s':>10} {'ciw/s':>9} {'floor/s':>12}"
    print(header + f" {'x python':>9} {'x ciw':>8} {'x floor':>8}")
    for s in (1, 10, 100):
        lam = 0.9 * s
        inp = rc.Poisson(lam, rc.dists.Exponential(1.0))
        ours = best_rate(lambda s=s, i=inp: rc.simulate(rc.JSW(s), i, steps=n_fast, rng=1), n_fast)
        py = best_rate(lambda s=s, lam=lam: python_loop(s, lam, n_py, 1), n_py, repeat=1)
        cw = ciw_rate(s, lam, n_ciw)
        floor = best_rate(lambda s=s, lam=lam: minimal_loop(s, lam, n_fast, 1), n_fast)
        print(f"{s:>4} {ours:>12.3e} {py:>10.3e} {cw:>9.3e} {floor:>12.3e}"
              f" {ours / py:>9.1f} {ours / cw:>8.0f} {ours / floor:>8.2f}")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
