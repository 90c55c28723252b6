"""Arrivals per second of the large-n event engine, side by side with peers, as ratios.

For JIQ and LL(2) (``rc.LeastOfD(n, 2)``) at load 0.9 with n = 10^3, 10^5, 10^6 servers, this
prints the rate of ``rc.simulate(..., engine="heap")`` (statistics and profile snapshots
included) beside

(a) the dense sorted-vector kernel (``engine="dense"``, n = 10^3 only: it costs O(n) per
    arrival),
(b) a minimal numba loop on an indexed min-heap that keeps the statistics ``simulate`` keeps
    (batches, waits, arrivals finding all busy, a snapshot of the whole vector every n
    arrivals with the busy servers' workloads histogrammed, and the histogram of waits),
    drawing inside the loop from the same Generators (the floor; its P(wait) and final state
    are checked equal to ``simulate``'s),
(c) the same heap loop bare, no statistics, on numba's legacy generator (for reference),

and the ratios, all measured side by side in this one run (best of five alternating runs in
full mode, three with ``--quick``). Memory of the heap engine: three arrays of n numbers.

Run: ``python benchmarks/large_n.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numba
import numpy as np
from _floors import level_bin
from _tables import finish

import recursions as rc
from recursions.common._tables import Rows
from recursions.engines import _workload_engines

# the dense engine's rate here is that of a long run, which draws inside its loop; a short
# plain run reads blocks instead (BLOCK_ARRIVALS, docs/benchmarks.md bench-first-result)
_workload_engines.BLOCK_ARRIVALS = 0


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
def stats_loop(n, lam, steps, d, gs, gt, gu, nbatch, grid, every):
    """The floor: JIQ (d = 0) or LL(d) on absolute empty times, with ``simulate``'s statistics.

    Per batch (``nbatch`` equal batches of arrivals): arrivals, customers that waited and the
    sum of waits, arrivals finding every server busy, and every ``every``-th arrival a snapshot
    of the whole vector (total workload, busy servers, their workloads histogrammed on
    ``grid``); every wait histogrammed too. Service, interarrival and routing draws come from
    the same Generators as ``rc.simulate``'s streams (LL(d) by Floyd's algorithm), so its
    numbers can be checked. Returns ``(acc, hist, workloads at the end)``.
    """
    E = np.zeros(n)
    heap = np.arange(n)
    pos = np.arange(n)
    acc = np.zeros((nbatch, 8))
    hist = np.zeros((nbatch, 2 * (grid.size + 1)))
    h = grid[1] - grid[0]
    off = grid.size + 1
    chosen = np.empty(max(d, 1), dtype=np.int64)
    t = 0.0
    b = 0
    nxt = -((-steps) // nbatch)
    due = 0
    for k in range(steps):
        sigma = gs.standard_exponential()
        tau = gt.standard_exponential() * (1.0 / lam)  # as Exponential(rate=lam) draws
        if k >= nxt and b < nbatch - 1:
            b += 1
            nxt = -((-(b + 1) * steps) // nbatch)
        if E[heap[0]] > t:
            acc[b, 5] += 1.0
        if k == due:  # the next snapshot, as simulate keeps it (no division per arrival)
            due += every
            acc[b, 6] += 1.0
            tot = 0.0
            busy = 0
            for i in range(n):
                x = E[i] - t
                if x > 0.0:
                    tot += x
                    busy += 1
                    hist[b, level_bin(grid, h, x)] += 1.0
            acc[b, 3] += tot
            acc[b, 4] += busy
        if d == 0:
            j = heap[0]
            if E[j] > t:
                j = min(int(gu.random() * n), n - 1)
            else:
                gu.random()  # the engine draws the routing uniform of every arrival
        else:
            for q in range(d):
                top = n - d + q
                c = int(gu.random() * (top + 1))
                if c > top:
                    c = top
                for p in range(q):
                    if chosen[p] == c:
                        c = top
                        break
                chosen[q] = c
            j = chosen[0]
            for q in range(1, d):
                if E[chosen[q]] < E[j]:
                    j = chosen[q]
        found = E[j] - t
        if found < 0.0:
            found = 0.0
        E[j] = t + found + sigma
        _sift(E, heap, pos, pos[j])
        acc[b, 0] += 1.0
        if found > 0.0:
            acc[b, 1] += 1.0
            acc[b, 2] += found
        hist[b, off + level_bin(grid, h, found)] += 1.0
        t += tau
        if t > 2.0**20:  # re-base the clock, as the engine does
            for i in range(n):
                E[i] -= t
            t = 0.0
    return acc, hist, np.maximum(E - t, 0.0)


def heap_streams(seed):
    """Service, interarrival and routing Generators of ``rc.simulate(..., rng=seed)``."""
    from recursions.common import as_seed_sequence, child, forward_generator

    sd = as_seed_sequence(seed).spawn(1)[0]
    gs, gt = rc.Poisson(1.0, rc.dists.Exponential(1.0)).forward(child(sd, 0)).generators[:2]
    return gs, gt, forward_generator(sd, 1)


def stats_check(system, n, d, steps, grid):
    """Whether the floor's P(wait) and final state are those of ``rc.simulate``."""
    lam = 0.9 * n
    acc, _, w = stats_loop(n, lam, steps, d, *heap_streams(1), 32, grid, n)
    res = rc.simulate(system, rc.Poisson(lam, rc.dists.Exponential(1.0)), steps=steps, rng=1,
                      grid=grid, engine="heap")
    return bool(np.array_equal(w, res.final_state[0])
                and acc[:, 1].sum() / steps == res.p_wait.value)


@numba.njit(cache=True)
def minimal_loop(n, lam, steps, d, seed):
    """For reference: JIQ (d = 0) or LL(d) on absolute empty times, nothing else."""
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
    sizes = (10**3, 10**5, 10**6)
    grid = np.linspace(0.0, 4.0, 33)
    minimal_loop(10, 5.0, 100, 0, 1)
    minimal_loop(10, 5.0, 100, 2, 1)
    for d in (0, 2):
        stats_loop(10, 5.0, 100, d, *heap_streams(0), 2, grid, 10)
    print(f"{'policy':<8} {'n':>8} {'heap/s':>10} {'dense/s':>10} {'floor/s':>10} "
          f"{'bare/s':>10} {'x dense':>8} {'x floor':>8} {'x bare':>7} {'same':>5}")
    rows = []
    for name, make, d in (("JIQ", rc.JIQ, 0), ("LL(2)", lambda n: rc.LeastOfD(n, 2), 2)):
        for n in sizes:
            steps = max(10**6 if not quick else 2 * 10**5, 3 * n)
            inp = rc.Poisson(0.9 * n, rc.dists.Exponential(1.0))
            system = make(n)
            same = stats_check(system, n, d, max(20_000, 2 * n), grid)
            rc.simulate(system, inp, steps=1000, rng=0, engine="heap", profile_every=100)
            dense = float("nan")
            if n <= 10**3:
                k = steps // 10
                rc.simulate(system, inp, steps=100, rng=0, engine="dense")
                dense = rate(lambda s=system, i=inp, k=k: rc.simulate(s, i, steps=k, rng=1,
                                                                      engine="dense"), k)
            best = {"heap": 0.0, "floor": 0.0, "bare": 0.0}
            for _ in range(3 if quick else 5):  # alternate: all three see the same load
                for key, fn in (
                    ("heap", lambda s=system, i=inp, k=steps: rc.simulate(
                        s, i, steps=k, rng=1, grid=grid, engine="heap")),
                    ("floor", lambda n=n, k=steps, d=d: stats_loop(
                        n, 0.9 * n, k, d, *heap_streams(1), 32, grid, n)),
                    ("bare", lambda n=n, k=steps, d=d: minimal_loop(n, 0.9 * n, k, d, 1)),
                ):
                    best[key] = max(best[key], rate(fn, steps, repeat=1))
            heap, floor, bare = best["heap"], best["floor"], best["bare"]
            print(f"{name:<8} {n:>8} {heap:>10.3e} {dense:>10.3e} {floor:>10.3e} "
                  f"{bare:>10.3e} {heap / dense:>8.1f} {heap / floor:>8.2f} "
                  f"{heap / bare:>7.2f} {'yes' if same else 'NO':>5}", flush=True)
            rows.append({"policy": name, "servers": n, "heap_per_s": heap,
                         "dense_per_s": dense, "floor_per_s": floor, "bare_per_s": bare,
                         "x_dense": heap / dense, "x_floor": heap / floor,
                         "x_bare": heap / bare, "floor_same_numbers": bool(same)})
    return finish(rows, ("policy", "servers"), "large_n")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
