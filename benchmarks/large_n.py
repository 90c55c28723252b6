"""Arrivals per second of the large-n event engine, side by side with peers, as ratios.

For JIQ and LL(2) (``rc.LeastOfD(n, 2)``) at load 0.9 with n = 10^3, 10^5, 10^6 servers, this
prints the rate of ``rc.simulate(..., engine="heap")`` (statistics and profile snapshots
included) beside (a) the dense sorted-vector kernel (``engine="dense"``, n = 10^3 only: it
costs O(n) per arrival) and (b) a minimal numba loop on an indexed min-heap with in-loop draws
(the floor), and the ratios. Memory of the heap engine: three arrays of n numbers.

Run: ``python benchmarks/large_n.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numba
import numpy as np
from _tables import finish

import recursions as rc
from recursions.tables import Rows


@numba.njit(cache=True)
def _sift(E, heap, pos, i):
    n = heap.size
    j = heap[i]
    key = E[j]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and E[heap[c + 1]] < E[heap[c]]:
            c += 1
        if E[heap[c]] < key:
            heap[i] = heap[c]
            pos[heap[i]] = i
            i = c
        else:
            break
    heap[i] = j
    pos[j] = i


@numba.njit(cache=True)
def minimal_loop(n, lam, steps, d, seed):
    """The floor: JIQ (d = 0) or LL(d) on absolute empty times, nothing else."""
    np.random.seed(seed)  # noqa: NPY002 - numba's in-loop generator is the floor's
    E = np.zeros(n)
    heap = np.arange(n)
    pos = np.arange(n)
    t = 0.0
    waits = 0
    for _ in range(steps):
        if d == 0:
            j = heap[0]
            if E[j] > t:
                j = np.random.randint(n)  # noqa: NPY002
        else:
            j = np.random.randint(n)  # noqa: NPY002
            for _k in range(d - 1):
                c = np.random.randint(n)  # noqa: NPY002
                if E[c] < E[j]:
                    j = c
        if E[j] > t:
            waits += 1
            E[j] += np.random.exponential(1.0)  # noqa: NPY002
        else:
            E[j] = t + np.random.exponential(1.0)  # noqa: NPY002
        _sift(E, heap, pos, pos[j])
        t += np.random.exponential(1.0 / lam)  # noqa: NPY002
    return waits


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
    sizes = (10**3, 10**5) if quick else (10**3, 10**5, 10**6)
    minimal_loop(10, 5.0, 100, 0, 1)
    minimal_loop(10, 5.0, 100, 2, 1)
    print(f"{'policy':<8} {'n':>8} {'heap/s':>10} {'dense/s':>10} {'floor/s':>10} "
          f"{'x dense':>8} {'x floor':>8}")
    rows = []
    for name, make, d in (("JIQ", rc.JIQ, 0), ("LL(2)", lambda n: rc.LeastOfD(n, 2), 2)):
        for n in sizes:
            steps = max(10**6 if not quick else 2 * 10**5, 3 * n)
            inp = rc.Poisson(0.9 * n, rc.dists.Exponential(1.0))
            system = make(n)
            rc.simulate(system, inp, steps=1000, rng=0, engine="heap", profile_every=100)
            heap = rate(lambda s=system, i=inp, k=steps: rc.simulate(s, i, steps=k, rng=1,
                                                                     engine="heap"), steps)
            dense = float("nan")
            if n <= 10**3:
                k = steps // 10
                rc.simulate(system, inp, steps=100, rng=0, engine="dense")
                dense = rate(lambda s=system, i=inp, k=k: rc.simulate(s, i, steps=k, rng=1,
                                                                      engine="dense"), k)
            floor = rate(lambda n=n, k=steps, d=d: minimal_loop(n, 0.9 * n, k, d, 1), steps)
            print(f"{name:<8} {n:>8} {heap:>10.3e} {dense:>10.3e} {floor:>10.3e} "
                  f"{heap / dense:>8.1f} {heap / floor:>8.2f}")
            rows.append({"policy": name, "servers": n, "heap_per_s": heap,
                         "dense_per_s": dense, "floor_per_s": floor,
                         "x_dense": heap / dense, "x_floor": heap / floor})
    return finish(rows, ("policy", "servers"), "large_n")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
