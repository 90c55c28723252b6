"""Arrivals per second of the redundancy engine beside a minimal loop; fixed-point solve time.

For (d, k) = (2, 1), (3, 2), (10, 3) with exponential component sizes at n = 10^3 and 10^5
servers (load about 0.7 of the critical rate) this prints the rate of ``rc.simulate`` (heap
engine: absolute empty times, O(d log n) per arrival, statistics and profile snapshots
included) beside a minimal numba loop of the same map on absolute times without a heap or
statistics (the floor), and the ratio; then the time ``ly.redundancy_fixed_point`` takes.

Run: ``python benchmarks/redundancy.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numba
import numpy as np
from _tables import finish

import loynes as ly
import recursions as rc
from recursions.common._tables import Rows


@numba.njit(cache=True)
def minimal_loop(n, d, k, lam, steps, seed):
    """The floor: the (d, k) cancel-on-completion map on absolute empty times, no heap."""
    np.random.seed(seed)  # noqa: NPY002 - numba's in-loop generator is the floor's
    E = np.zeros(n)
    t = 0.0
    sel = np.empty(d, dtype=np.int64)
    done = np.empty(d)
    acc = 0.0
    for _ in range(steps):
        m = 0
        while m < d:  # d distinct servers
            c = np.random.randint(n)  # noqa: NPY002
            ok = True
            for q in range(m):
                if sel[q] == c:
                    ok = False
            if ok:
                sel[m] = c
                m += 1
        for q in range(d):
            done[q] = max(E[sel[q]], t) + np.random.exponential(1.0)  # noqa: NPY002
        T = np.sort(done)[k - 1]
        for q in range(d):
            E[sel[q]] = min(done[q], max(max(E[sel[q]], t), T))
        acc += T - t
        t += np.random.exponential(1.0 / lam)  # noqa: NPY002
    return acc / steps


def rate(fn, steps, repeat=2):
    best = 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = max(best, steps / (time.perf_counter() - t))
    return best


def main(quick: bool = False) -> Rows:
    # timing runs start empty and are short per server: their estimates are not used, so
    # the warnings about a transient are beside the point here
    warnings.simplefilter("ignore", rc.SimulationWarning)
    sizes = (10**3,) if quick else (10**3, 10**5)
    print(f"{'(d,k)':<7} {'n':>7} {'engine/s':>10} {'floor/s':>10} {'ratio':>6}")
    rows = []
    for d, k in ((2, 1), (3, 2), (10, 3)):
        cls = [rc.JobClass(d, k, rc.dists.Exponential(1.0))]
        lam = 0.7 / k  # exponential sizes: critical rate 1 / k per server
        minimal_loop(20, d, k, 5.0, 100, 1)
        for n in sizes:
            steps = max(2 * 10**5 if quick else 10**6, 3 * n)
            system = rc.Redundancy(n, cls)
            inp = system.poisson(lam * n)
            rc.simulate(system, inp, steps=1000, rng=0, engine="heap", profile_every=100)
            ours = rate(lambda s=system, i=inp, m=steps: rc.simulate(s, i, steps=m, rng=1,
                                                                     engine="heap"), steps)
            floor = rate(lambda n=n, m=steps, d=d, k=k, lam=lam: minimal_loop(n, d, k, lam * n,
                                                                              m, 1), steps)
            print(f"({d},{k}){'':<2} {n:>7} {ours:>10.3e} {floor:>10.3e} {ours / floor:>6.2f}")
            rows.append({"d": d, "k": k, "servers": n, "engine_per_s": ours,
                         "floor_per_s": floor, "ratio": ours / floor})
    for name, law in (("exponential", rc.dists.Exponential(1.0)),
                      ("deterministic", rc.dists.Deterministic(1.0))):
        t = time.perf_counter()
        fp = ly.redundancy_fixed_point([rc.JobClass(3, 2, law)], 0.3)
        print(f"fixed point (3,2) {name} at lambda = 0.3: load {fp.load:.4f}, "
              f"{time.perf_counter() - t:.3f} s")
    return finish(rows, ("d", "k", "servers"), "redundancy")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
