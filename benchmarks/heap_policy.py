"""The heap engine's policy (and a lean run's statistics) read at run time or compiled in.

The heap engine's drawing loop (``recursions.engines._heap.heap_steps``, compiled per pair of law
codes
by ``recursions.engines._driver_compiler.heap_drivers``) chooses the server by a chain of tests of
its ``policy`` argument at every arrival. ``heap_drivers(laws, policy)`` compiles a copy with the
policy a constant, so the chain folds away. For JSW, JIQ and LL(2) at 10^5 servers and JIQ at
10^3 (M/M, load 0.9), this runs ``rc.simulate(..., engine="heap")`` on both copies in
interleaved rounds (the order alternating), timed by CPU time, checks that both give the same
``p_wait`` and reports the ratio of CPU times (runtime / compiled-in: above 1, the copy is
faster) as min / median / max. ``recursions.engines._workload_engines.HEAP_POLICY_COPIES`` chooses
between them; the table on ``docs/benchmarks.md`` (section "The heap engine's policy") set it.

A second table does the same for lean runs (``statistics=("p_wait", "mean_wait")``) at 100 and
10^4 servers, where ``heap_drivers(laws, policy, lean=True)`` also compiles the statistics in
(no all-busy count, snapshot or histogram left in the loop):
``recursions.engines._workload_engines.HEAP_LEAN_COPIES`` chooses, from that table.

Run: ``python benchmarks/heap_policy.py [--quick] [--csv]``.
"""

from __future__ import annotations

import sys
import time
import warnings

from _tables import finish, interleaved_ratio, print_ratios

import recursions as rc
import recursions.engines._workload_engines as wl
from recursions.common._tables import Rows

CASES = (("JSW", 10**5), ("JIQ", 10**5), ("LL(2)", 10**5), ("JIQ", 10**3))


def _system(name: str, n: int) -> rc.System:
    return {"JSW": rc.JSW, "JIQ": rc.JIQ}[name](n) if name != "LL(2)" else rc.LeastOfD(n, 2)


LEAN_CASES = (("JSW", 100), ("JIQ", 100), ("JSW", 10**4), ("JIQ", 10**4), ("LL(2)", 10**4))
LEAN = ("p_wait", "mean_wait")


def _cpu(system: rc.System, inp: rc.Input, steps: int, seed: int, copies: bool, lean: bool
         ) -> tuple[float, object]:
    if lean:
        wl.HEAP_LEAN_COPIES = copies
    else:
        wl.HEAP_POLICY_COPIES = copies
    t0 = time.process_time()
    res = rc.simulate(system, inp, steps=steps, rng=seed, engine="heap",
                      statistics=LEAN if lean else None)
    return time.process_time() - t0, (res.p_wait, res.mean_wait)


def measure(name: str, n: int, steps: int, rounds: int, lean: bool = False
            ) -> dict[str, object]:
    """One row: the ratio runtime / compiled-in CPU time over interleaved rounds."""
    system, inp = _system(name, n), rc.Poisson(0.9 * n, rc.dists.Exponential(1.0))
    keep = wl.HEAP_POLICY_COPIES, wl.HEAP_LEAN_COPIES
    try:
        for copies in (False, True):  # compile (or load) both copies first
            _cpu(system, inp, 4 * n + 1000, 0, copies, lean)
        row = interleaved_ratio(lambda c, seed: _cpu(system, inp, steps, seed, c, lean), rounds)
    finally:
        wl.HEAP_POLICY_COPIES, wl.HEAP_LEAN_COPIES = keep
    return {"statistics": "lean" if lean else "default", "policy": name, "servers": n,
            "steps": steps, **row}


def main(argv: list[str] | None = None) -> Rows:
    """Print the table (and write ``results/heap_policy.csv`` with ``--csv``)."""
    args = sys.argv[1:] if argv is None else argv
    steps, rounds = (400_000, 2) if "--quick" in args else (3_000_000, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        rows = [measure(name, n, steps, rounds) for name, n in CASES]
        print_ratios(rows, "runtime / compiled-in CPU time")
        lean = [measure(name, n, steps, rounds, lean=True) for name, n in LEAN_CASES]
        print_ratios(lean, "lean runs: runtime / compiled-in policy and statistics, CPU time")
    return finish(rows + lean, ("statistics", "policy", "servers"), "heap_policy")


if __name__ == "__main__":
    main()
