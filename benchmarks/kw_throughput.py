"""Throughput of the Kiefer-Wolfowitz (JSW) recursion, side by side with peers, as ratios.

For M/M/S at load 0.9 and S = 1, 10, 100 this prints arrivals (steps) per second for
``rc.simulate(rc.JSW(S), ...)`` (statistics, batch means and the default 33-level profile
included) beside

(a) a plain Python loop of the same map (timed once),
(b) Ciw simulating the same FCFS M/M/S queue (customers per second, its best of three runs),
(c) a minimal hand-written numba loop of the map with the statistics ``simulate`` keeps
    (batches, waits, total workload and busy servers in a pass after the drain, the profile
    and wait histograms), drawing inside the loop from the same Generators (the floor),
(c') the same loop with join and drain in one branch-free pass and the next customer's
    times drawn a step ahead (faster than the insertion loop at 2 to about 40 servers;
    ``simulate`` does both at 2 to 32),
(d) the insertion loop bare, no statistics (for reference),

and the ratios ours / peer, all measured in this one run (ours and the numba loops at their
best of three alternating runs). Both floors are checked to compute ``simulate``'s numbers
(final state, every per-batch sum, both histograms). It also prints the first-call time of a
fresh process with a warm numba cache. The machine is shared and noisy: read the ratios, not
the absolute numbers.

A second table runs both floors and ``simulate`` at 2 to 64 servers: where the branch-free
pass beats the insertion loop; a third runs ``simulate`` itself on its one-pass and its
insertion copy in interleaved rounds timed by CPU time (min, median and max of the ratio),
which sets the range where ``simulate`` uses the pass.

A fourth measures the user's door: ``rc.Map(rc.maps.jsw, servers=S)`` (the built-in JSW
kernel as a user map, on drivers compiled for it) and ``own_jsw``, the same map written
separately as a user would, side by side with ``rc.JSW(S)`` on the same dense engine, in
alternating runs of the same process (target: at least 0.7x), checks that their statistics
are bit-identical, and times the Map's first call in a fresh process with an empty
``QUEUE_RECURSIONS_CACHE`` (compiling its drivers) and with the warm cache.

Run: ``python benchmarks/kw_throughput.py [--quick] [--csv]``; with ``--pass-range`` only the
third table.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import warnings

import numba
import numpy as np
from _floors import level_bin
from _tables import finish

import recursions as rc
from recursions.common._tables import Rows
from recursions.engines import _workload_engines
from recursions.vectors import add_at_rank, drain

# what is timed here is the loops of long runs, which draw inside the loop; a short plain run
# reads blocks instead (BLOCK_ARRIVALS, docs/benchmarks.md bench-first-result), so the
# warm-ups and the quick mode's shorter runs draw in the loop too
_workload_engines.BLOCK_ARRIVALS = 0


@numba.njit(cache=True)
def bare_loop(s, lam, n, gs, gt):
    """For reference: the JSW map with in-loop draws and nothing else (no statistics)."""
    w = np.zeros(s)
    acc = 0.0
    for _ in range(n):
        acc += w[0]
        x = w[0] + gs.standard_exponential()
        i = 0
        while i + 1 < s and w[i + 1] < x:
            w[i] = w[i + 1]
            i += 1
        w[i] = x
        tau = gt.standard_exponential() * (1.0 / lam)  # as Exponential(rate=lam) draws
        for j in range(s):
            v = w[j] - tau
            w[j] = v if v > 0.0 else 0.0
    return acc / n


@numba.njit(cache=True)
def minimal_loop(s, lam, n, gs, gt, nbatch, grid, every):
    """The floor: JSW by hand with in-loop draws and the statistics ``simulate`` keeps.

    Per batch (``nbatch`` equal batches of arrivals): arrivals, customers that waited, the
    sum of waits, the total workload and busy servers seen by each arrival (added up in a
    pass after the drain, four partial sums: faster than adding them up in the drain's own
    loop, which the compiler does not vectorise), arrivals finding all busy, and histograms of the
    busy servers' workloads (every ``every``-th arrival) and of the waits on ``grid``. Draws
    from the same Generators as ``rc.simulate``'s streams, so its numbers can be checked.
    """
    w = np.zeros(s)
    acc = np.zeros((nbatch, 8))
    hist = np.zeros((nbatch, 2 * (grid.size + 1)))
    h = grid[1] - grid[0]
    off = grid.size + 1
    tot = 0.0
    busy = 0
    b = 0
    nxt = -((-n) // nbatch)
    due = 0
    for t in range(n):
        sigma = gs.standard_exponential()
        tau = gt.standard_exponential() * (1.0 / lam)  # as Exponential(rate=lam) draws
        if t >= nxt:
            b += 1
            nxt = -((-(b + 1) * n) // nbatch)
        acc[b, 0] += 1.0
        acc[b, 3] += tot
        acc[b, 4] += busy
        if busy == s:
            acc[b, 5] += 1.0
        if t == due:  # the next snapshot, as simulate keeps it (no division per arrival)
            due += every
            acc[b, 6] += 1.0
            for i in range(s):
                if w[i] > 0.0:
                    hist[b, level_bin(grid, h, w[i])] += 1.0
        found = w[0]
        if found > 0.0:
            acc[b, 1] += 1.0
            acc[b, 2] += found
        hist[b, off + level_bin(grid, h, found)] += 1.0
        x = found + sigma
        i = 0
        while i + 1 < s and w[i + 1] < x:
            w[i] = w[i + 1]
            i += 1
        w[i] = x
        for j in range(s):  # the drain, a loop the compiler vectorises
            v = w[j] - tau
            w[j] = v if v > 0.0 else 0.0
        a0 = 0.0  # then the statistics of the drained vector, four partial sums
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        busy = 0
        j = 0
        while j + 4 <= s:
            x0 = w[j]
            x1 = w[j + 1]
            x2 = w[j + 2]
            x3 = w[j + 3]
            a0 += x0
            a1 += x1
            a2 += x2
            a3 += x3
            busy += (x0 > 0.0) + (x1 > 0.0) + (x2 > 0.0) + (x3 > 0.0)
            j += 4
        while j < s:
            v = w[j]
            a0 += v
            busy += v > 0.0
            j += 1
        tot = (a0 + a1) + (a2 + a3)
    return acc, hist, w


@numba.njit(cache=True)
def branch_free_loop(s, lam, n, gs, gt, nbatch, grid, every):
    """:func:`minimal_loop` with the join and the drain in one branch-free pass.

    The same statistics and the same numbers, but the insertion of ``w[0] + sigma`` is not a
    loop whose exit depends on the data: coordinate ``i`` of the joined vector is ``w[i+1]``
    when that is below ``x``, else ``x`` at ``i == 0`` or where ``w[i] < x``, else ``w[i]``,
    written as selects into a second buffer (then the 4-lane sums in a second pass), and
    the next customer's times are drawn a step ahead, as ``simulate`` does (which made the
    insertion floor 7% slower at one server, so that one draws as it goes). Faster
    than the insertion loop from 2 to about 40 servers, slower beyond: ``simulate``'s drawing
    drivers use the same pass at 2 to 32 servers
    (``recursions.engines._driver_compiler.uses_one_pass``), so this is the floor to read at S = 10.
    """
    w = np.zeros(s)
    w2 = np.zeros(s)
    acc = np.zeros((nbatch, 8))
    hist = np.zeros((nbatch, 2 * (grid.size + 1)))
    h = grid[1] - grid[0]
    off = grid.size + 1
    tot = 0.0
    busy = 0
    b = 0
    nxt = -((-n) // nbatch)
    due = 0
    # a step ahead, as simulate draws (1-1.6% faster at 4-16 servers, measured)
    next_sigma = gs.standard_exponential()
    next_tau = gt.standard_exponential() * (1.0 / lam)  # as Exponential(rate=lam) draws
    for t in range(n):
        sigma = next_sigma
        tau = next_tau
        if t + 1 < n:
            next_sigma = gs.standard_exponential()
            next_tau = gt.standard_exponential() * (1.0 / lam)
        if t >= nxt:
            b += 1
            nxt = -((-(b + 1) * n) // nbatch)
        acc[b, 0] += 1.0
        acc[b, 3] += tot
        acc[b, 4] += busy
        if busy == s:
            acc[b, 5] += 1.0
        if t == due:  # the next snapshot, as simulate keeps it (no division per arrival)
            due += every
            acc[b, 6] += 1.0
            for i in range(s):
                if w[i] > 0.0:
                    hist[b, level_bin(grid, h, w[i])] += 1.0
        found = w[0]
        if found > 0.0:
            acc[b, 1] += 1.0
            acc[b, 2] += found
        hist[b, off + level_bin(grid, h, found)] += 1.0
        x = found + sigma
        for i in range(s - 1):
            o = w[i]
            nx = w[i + 1]
            v = (nx if nx < x else (x if (i == 0) | (o < x) else o)) - tau
            w2[i] = v if v > 0.0 else 0.0
        o = w[s - 1]
        v = (x if (s == 1) | (o < x) else o) - tau
        w2[s - 1] = v if v > 0.0 else 0.0
        w, w2 = w2, w
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        busy = 0
        j = 0
        while j + 4 <= s:
            x0 = w[j]
            x1 = w[j + 1]
            x2 = w[j + 2]
            x3 = w[j + 3]
            a0 += x0
            a1 += x1
            a2 += x2
            a3 += x3
            busy += (x0 > 0.0) + (x1 > 0.0) + (x2 > 0.0) + (x3 > 0.0)
            j += 4
        while j < s:
            v = w[j]
            a0 += v
            busy += v > 0.0
            j += 1
        tot = (a0 + a1) + (a2 + a3)
    return acc, hist, w


def streams_of(seed):
    """The service and interarrival Generators of ``rc.simulate(..., rng=seed)``'s stream."""
    from recursions.common import as_seed_sequence, child

    sd = as_seed_sequence(seed).spawn(1)[0]
    return rc.Poisson(1.0, rc.dists.Exponential(1.0)).forward(child(sd, 0)).generators[:2]


def _above(hist):
    """Counts above each grid level, summed over batches, from bins of levels below."""
    return np.cumsum(hist[:, ::-1], axis=1)[:, ::-1][:, 1:].sum(axis=0)


def minimal_check(s, lam, n):
    """Whether both floors compute ``rc.simulate``'s numbers: state, sums and histograms.

    Final state; per-batch sums of arrivals, waits, total wait, workload, busy servers and
    arrivals finding all busy; the count of snapshots; the profile and wait histograms (as
    counts above each level), all equal bit for bit.
    """
    grid = np.linspace(0.0, 4.0, 33)
    with warnings.catch_warnings():  # a short check of numbers, not of its intervals
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(rc.JSW(s), rc.Poisson(lam, rc.dists.Exponential(1.0)), steps=n,
                          rng=1, grid=grid, engine="dense", batches=32)
    same = True
    for loop in (minimal_loop, branch_free_loop):
        acc, hist, w = loop(s, lam, n, *streams_of(1), 32, grid, s)
        g = grid.size + 1  # bins of each histogram: the profile's, then the waits'
        prof = _above(hist[:, :g]) / (acc[:, 6].sum() * s)
        waits = _above(hist[:, g:]) / n
        same = same and bool(
            np.array_equal(w, res.final_state[0])
            and acc[:, 1].sum() / n == res.p_wait.value
            and acc[:, 2].sum() / n == res.mean_wait.value
            and acc[:, 3].sum() / n == res.mean_workload.value
            and acc[:, 4].sum() / (n * s) == res.busy_fraction.value
            and acc[:, 5].sum() / n == res.p_all_busy.value
            and np.allclose(prof, res.profile(grid).value, rtol=1e-12, atol=0.0)
            and np.allclose(waits, res.wait_sf(grid).value, rtol=1e-12, atol=0.0))
    return same


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


def main(quick: bool = False) -> tuple[Rows, Rows, Rows, Rows]:
    n_fast = 400_000 if quick else 2_000_000
    n_py = 20_000 if quick else 100_000
    n_ciw = 5_000 if quick else 20_000
    print(f"first call in a fresh process, warm numba cache: {first_call_seconds():.2f} s")
    grid = np.linspace(0.0, 4.0, 33)
    gs, gt = streams_of(0)
    minimal_loop(2, 1.0, 10, gs, gt, 2, grid, 2)  # compile
    branch_free_loop(2, 1.0, 10, gs, gt, 2, grid, 2)
    bare_loop(2, 1.0, 10, gs, gt)
    rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=100, rng=0)
    header = (f"{'S':>4} {'ours/s':>10} {'python/s':>9} {'ciw/s':>8} {'floor/s':>10} "
              f"{'bfree/s':>10} {'bare/s':>10}")
    print(header + f" {'x python':>8} {'x ciw':>6} {'x floor':>7} {'x bfree':>7} {'x bare':>6}"
          f" {'same':>5}")
    rows = []
    for s in (1, 10, 100):
        lam = 0.9 * s
        inp = rc.Poisson(lam, rc.dists.Exponential(1.0))
        same = minimal_check(s, lam, 20_000)
        best = {"ours": 0.0, "floor": 0.0, "bfree": 0.0, "bare": 0.0}
        for _ in range(3):  # alternate, so all three see the same machine load
            for key, fn in (
                ("ours", lambda s=s, i=inp: rc.simulate(rc.JSW(s), i, steps=n_fast, rng=1,
                                                         engine="dense")),
                ("floor", lambda s=s, lam=lam: minimal_loop(s, lam, n_fast, *streams_of(1),
                                                            32, grid, s)),
                ("bfree", lambda s=s, lam=lam: branch_free_loop(s, lam, n_fast, *streams_of(1),
                                                                 32, grid, s)),
                ("bare", lambda s=s, lam=lam: bare_loop(s, lam, n_fast, *streams_of(1))),
            ):
                best[key] = max(best[key], best_rate(fn, n_fast, repeat=1))
        ours, floor, bfree, bare = best["ours"], best["floor"], best["bfree"], best["bare"]
        py = best_rate(lambda s=s, lam=lam: python_loop(s, lam, n_py, 1), n_py, repeat=1)
        cw = max(ciw_rate(s, lam, n_ciw) for _ in range(3))  # its best, as for ours
        print(f"{s:>4} {ours:>10.3e} {py:>9.3e} {cw:>8.3e} {floor:>10.3e} {bfree:>10.3e}"
              f" {bare:>10.3e} {ours / py:>8.1f} {ours / cw:>6.0f} {ours / floor:>7.2f}"
              f" {ours / bfree:>7.2f} {ours / bare:>6.2f} {'yes' if same else 'NO':>5}",
              flush=True)
        rows.append({"servers": s, "ours_per_s": ours, "python_per_s": py, "ciw_per_s": cw,
                     "floor_per_s": floor, "branch_free_per_s": bfree, "bare_per_s": bare,
                     "x_python": ours / py, "x_ciw": ours / cw, "x_floor": ours / floor,
                     "x_branch_free": ours / bfree, "x_bare": ours / bare,
                     "floor_same_numbers": bool(same)})
    return (finish(rows, ("servers",), "kw_throughput"), pass_sweep_rows(n_fast, grid),
            pass_range_rows(2 * n_fast, rounds=5 if quick else 9), user_map_rows(n_fast))


def pass_sweep_rows(n: int, grid: np.ndarray) -> Rows:
    """Where the branch-free pass pays: both floors and ``simulate`` across server counts.

    ``simulate``'s drawing drivers use the pass from 2 to ``ONE_PASS_SERVERS`` servers
    (``recursions.engines._driver_compiler.uses_one_pass``); this table compares the floors, and
    :func:`pass_range_rows` the two copies of ``simulate`` itself, which sets that range.
    """
    from recursions.engines._driver_compiler import ONE_PASS_SERVERS

    print(f"\nbranch-free pass against the insertion loop (simulate uses it at 2 to "
          f"{ONE_PASS_SERVERS} servers), M/M/S at load 0.9")
    print(f"{'S':>4} {'ours/s':>10} {'floor/s':>10} {'bfree/s':>10} {'bfree/floor':>11} "
          f"{'x floor':>7} {'x bfree':>7}")
    rows = []
    for s in (2, 4, 8, 16, 24, 32, 40, 48, 64):
        lam = 0.9 * s
        inp = rc.Poisson(lam, rc.dists.Exponential(1.0))
        best = {"ours": 0.0, "floor": 0.0, "bfree": 0.0}
        for _ in range(3):
            for key, fn in (
                ("ours", lambda s=s, i=inp: rc.simulate(rc.JSW(s), i, steps=n, rng=1,
                                                         engine="dense")),
                ("floor", lambda s=s, lam=lam: minimal_loop(s, lam, n, *streams_of(1), 32,
                                                            grid, s)),
                ("bfree", lambda s=s, lam=lam: branch_free_loop(s, lam, n, *streams_of(1),
                                                                 32, grid, s)),
            ):
                best[key] = max(best[key], best_rate(fn, n, repeat=1))
        ours, floor, bfree = best["ours"], best["floor"], best["bfree"]
        print(f"{s:>4} {ours:>10.3e} {floor:>10.3e} {bfree:>10.3e} {bfree / floor:>11.2f} "
              f"{ours / floor:>7.2f} {ours / bfree:>7.2f}", flush=True)
        rows.append({"servers": s, "ours_per_s": ours, "floor_per_s": floor,
                     "branch_free_per_s": bfree, "branch_free_over_floor": bfree / floor,
                     "x_floor": ours / floor, "x_branch_free": ours / bfree})
    return finish(rows, ("servers",), "kw_pass_sweep")


PASS_RANGE_SERVERS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 48, 64)
"""The server counts of the one-pass against insertion table (:func:`pass_range_rows`)."""


def pass_range_rows(n: int, rounds: int = 9,
                    servers: tuple[int, ...] = PASS_RANGE_SERVERS) -> Rows:
    """Inside ``simulate``: the one-pass copy of JSW's drawing drivers against the insertion copy.

    For each server count (M/M/S at load 0.9) the same run of ``n`` arrivals on both copies
    (``recursions.engines._driver_compiler.ONE_PASS_SERVERS`` set to the largest count, or to 1),
    first once
    each to compile or load them and to check that the numbers are equal bit for bit, then in
    ``rounds`` rounds, the two copies in alternating order (ABBA), each timed by the CPU time
    of the process with numba held to one thread (one replication). Each round gives the
    ratio one-pass / insertion throughput; the row holds its minimum, median and maximum.
    This is the measurement behind the range of
    ``recursions.engines._driver_compiler.uses_one_pass``; the
    table and the choice are in ``docs/benchmarks.md`` (section "The one-pass range").
    """
    from recursions.engines import _driver_compiler as drivers

    print(f"\none-pass copy against the insertion copy inside simulate (JSW; the range is 2 to "
          f"{drivers.ONE_PASS_SERVERS}), {n} arrivals, {rounds} rounds, CPU time, one thread")
    print(f"{'S':>4} {'one-pass/s':>11} {'insertion/s':>11} {'min':>6} {'median':>6} "
          f"{'max':>6} {'same':>5}")
    keep, threads = drivers.ONE_PASS_SERVERS, numba.get_num_threads()
    top = max(servers)
    rows = []
    numba.set_num_threads(1)
    try:
        for s in servers:
            inp = rc.Poisson(0.9 * s, rc.dists.Exponential(1.0))

            def run(one, s=s, inp=inp):
                drivers.ONE_PASS_SERVERS = top if one else 1
                return rc.simulate(rc.JSW(s), inp, steps=n, rng=1, engine="dense",
                                   replications=1)

            same = bit_identical(run(True), run(False))  # also the warm-up of both copies
            rates: dict[bool, list[float]] = {True: [], False: []}
            for r in range(rounds):
                for one in ((True, False) if r % 2 == 0 else (False, True)):
                    t = time.process_time()
                    run(one)
                    rates[one].append(n / (time.process_time() - t))
            ratio = np.array(rates[True]) / np.array(rates[False])
            one, ins = float(np.median(rates[True])), float(np.median(rates[False]))
            lo, mid, hi = (float(v) for v in np.quantile(ratio, (0.0, 0.5, 1.0)))
            print(f"{s:>4} {one:>11.3e} {ins:>11.3e} {lo:>6.3f} {mid:>6.3f} {hi:>6.3f} "
                  f"{'yes' if same else 'NO':>5}", flush=True)
            rows.append({"servers": s, "rounds": rounds, "steps": n,
                         "one_pass_per_s": one, "insertion_per_s": ins, "ratio_min": lo,
                         "ratio_median": mid, "ratio_max": hi, "same_numbers": same})
    finally:
        drivers.ONE_PASS_SERVERS = keep
        numba.set_num_threads(threads)
    return finish(rows, ("servers",), "kw_pass_range")


def map_first_call_seconds(cache: str) -> tuple[float, float]:
    """First call of a user map in a fresh process whose ``QUEUE_RECURSIONS_CACHE`` is ``cache``.

    Returns the seconds from ``rc.Map(...)`` to the end of a short simulate, and of the whole
    process (imports included).
    """
    code = (
        "import time; t0 = time.perf_counter(); import recursions as rc; "
        "t = time.perf_counter(); m = rc.Map(rc.maps.jsw, servers=3); "
        "rc.simulate(m, rc.Poisson(2.0, rc.dists.Exponential(1.0)), steps=1000, rng=1); "
        "e = time.perf_counter(); print(e - t, e - t0)"
    )
    env = dict(os.environ, QUEUE_RECURSIONS_CACHE=cache)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    first, whole = (float(x) for x in out.stdout.split())
    return first, whole


STATS = ("p_wait", "mean_wait", "mean_workload", "busy_fraction", "p_all_busy")


def bit_identical(a, b) -> bool:
    """Whether two results' statistics, profiles and final states are equal bit for bit."""
    same = all(np.array_equal([getattr(a, k).value, getattr(a, k).se],
                              [getattr(b, k).value, getattr(b, k).se], equal_nan=True)
               for k in STATS)
    pa, pb = a.profile(a.grid), b.profile(b.grid)
    return bool(same and np.array_equal(a.grid, b.grid) and np.array_equal(pa.value, pb.value)
                and np.array_equal(pa.se, pb.se, equal_nan=True)
                and np.array_equal(a.final_state, b.final_state))


@numba.njit(cache=True)
def own_jsw(w, sigma, tau, u, params):
    """JSW as a user writes it, with the sorted-vector helpers (no built-in kernel behind it)."""
    found = add_at_rank(w, 0, w.size, 0, sigma)
    drain(w, tau)
    return found


def user_map_rows(n: int, repeat: int = 3) -> Rows:
    """User maps against rc.JSW on the same engine, alternating runs.

    ``rc.Map(rc.maps.jsw, ...)`` is the built-in kernel through the user's door: it gets the
    built-in's drivers (the fused drain, the one-pass join at 2 to 32 servers). ``own_jsw``
    is the same map written separately, as a user would: its drivers call it as a whole
    step, with no fused drain and no one-pass join. The runs are long ones (at least twice
    :data:`recursions.engines._workload_engines.POINTER_ARRIVALS`), which compile the map
    into its own copy of the loop; shorter runs call the step through a pointer
    (``benchmarks/first_result.py`` measures both).
    """
    from recursions.engines._workload_engines import POINTER_ARRIVALS

    n = max(n, 2 * POINTER_ARRIVALS)
    with tempfile.TemporaryDirectory() as cache:
        cold = map_first_call_seconds(cache)
        warm = map_first_call_seconds(cache)
    for step in (rc.maps.jsw, own_jsw):  # compile or load here, not in the table
        rc.Map(step, servers=1).step([0.0], 1.0, 1.0)
    print("\nuser maps equal to rc.JSW, dense engine for all: rc.Map(rc.maps.jsw, ...) and a "
          "separately written JSW step (own_jsw)")
    print(f"first call in a fresh process (rc.Map -> simulate 1000 steps; whole process): "
          f"empty cache {cold[0]:.2f} s ({cold[1]:.2f} s), warm cache {warm[0]:.2f} s "
          f"({warm[1]:.2f} s)")
    print(f"{'S':>4} {'rc.JSW/s':>12} {'rc.Map/s':>12} {'own/s':>12} {'Map/JSW':>8} "
          f"{'own/JSW':>8} {'bit-identical':>14}")
    rows = []
    for s in (1, 10, 100):
        inp = rc.Poisson(0.9 * s, rc.dists.Exponential(1.0))
        systems = {"jsw": rc.JSW(s), "map": rc.Map(rc.maps.jsw, servers=s),
                   "own": rc.Map(own_jsw, servers=s)}
        best = dict.fromkeys(systems, 0.0)
        results = {}
        for _ in range(repeat):  # alternate, so all see the same machine load
            for key, system in systems.items():
                t = time.perf_counter()
                results[key] = rc.simulate(system, inp, steps=n, rng=1, engine="dense")
                best[key] = max(best[key], n / (time.perf_counter() - t))
        same = (bit_identical(results["map"], results["jsw"])
                and bit_identical(results["own"], results["jsw"]))
        print(f"{s:>4} {best['jsw']:>12.3e} {best['map']:>12.3e} {best['own']:>12.3e} "
              f"{best['map'] / best['jsw']:>8.2f} {best['own'] / best['jsw']:>8.2f} "
              f"{'yes' if same else 'NO':>14}")
        rows.append({"servers": s, "jsw_per_s": best["jsw"], "map_per_s": best["map"],
                     "own_per_s": best["own"], "map_over_jsw": best["map"] / best["jsw"],
                     "own_over_jsw": best["own"] / best["jsw"], "bit_identical": bool(same),
                     "first_call_cold_s": cold[0], "first_call_warm_s": warm[0]})
    return finish(rows, ("servers",), "kw_user_map")


if __name__ == "__main__":
    if "--pass-range" in sys.argv:  # the third table alone
        pass_range_rows(800_000 if "--quick" in sys.argv else 4_000_000,
                        rounds=5 if "--quick" in sys.argv else 9)
    else:
        main(quick="--quick" in sys.argv)
