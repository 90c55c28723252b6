"""The heap engine's layout: a 4-ary heap with keys in heap order against the binary heap.

The heap engine (``recursions.engines._heap``) keeps the servers' absolute empty times in an indexed
min-heap. The binary heap reads each child's key through its label (``E[heap[c]]``, scattered
reads); the 4-ary layout (``recursions.engines._heap.sift_down4``) stores the keys in heap order
beside the labels, so the four children of a node and their keys are contiguous, and has half as
many levels. ``recursions.engines._driver_compiler.heap_drivers(laws, wide=...)`` compiles the
drawing loop with either layout; this runs ``rc.simulate(..., engine="heap")`` on both copies in
interleaved rounds (the order alternating), for JSW, JIQ and LL(2) at 10^3 to 10^6 servers
(M/M at load 0.9), timed by CPU time, and reports the ratio of CPU times (binary / 4-ary:
above 1, the 4-ary heap is faster) as min / median / max. With ``--time`` the measured run
is a time horizon of the same expected number of arrivals, which the engine runs in chunks
of ``recursions.engines._run_plan.DEFAULT_CHUNK`` arrivals (one call of the event loop each, the
keys kept with the heap between calls). Both layouts give the same
statistics for JSW and LL(2) (checked: the same ``p_wait`` and ``mean_wait``); for JIQ they
break ties among servers with equal empty times (the never-used servers of a run from empty)
in another order, so its path is another one of the same law. ``recursions.engines._heap.WIDE`` is
the layout the library uses; the table on ``docs/benchmarks.md`` (section "The heap's
layout") set it.

Run: ``python benchmarks/heap_layout.py [--quick] [--csv] [--time] [--servers N,...]
[--rounds R]``.
"""

from __future__ import annotations

import sys
import time
import warnings
from typing import Any

from _tables import finish, interleaved_ratio, print_ratios

import recursions as rc
import recursions.engines._driver_compiler as drv
from recursions.common._tables import Rows

POLICIES = ("JSW", "JIQ", "LL(2)")
SERVERS = (10**3, 10**4, 10**5, 10**6)


def _system(name: str, n: int) -> rc.System:
    return {"JSW": rc.JSW, "JIQ": rc.JIQ}[name](n) if name != "LL(2)" else rc.LeastOfD(n, 2)


def _cpu(system: rc.System, inp: rc.Input, steps: int, seed: int, wide: bool, by_time: bool
         ) -> tuple[float, tuple[float, float]]:
    original = drv.heap_drivers

    def layout(laws: Any, policy: Any = None, *, lean: bool = False) -> Any:
        return original(laws, policy, wide=wide, lean=lean)

    drv.heap_drivers = layout  # the engine imports it by name when a run starts
    try:
        t0 = time.process_time()
        run = {"time": steps / inp.rate} if by_time else {"steps": steps}
        res = rc.simulate(system, inp, **run, warmup=steps, rng=seed, engine="heap")
        cpu = time.process_time() - t0
    finally:
        drv.heap_drivers = original
    return cpu, (res.p_wait.value, res.mean_wait.value)


def measure(name: str, n: int, steps: int, rounds: int, by_time: bool = False
            ) -> dict[str, object]:
    """One row: the ratio binary / 4-ary CPU time over interleaved rounds."""
    system, inp = _system(name, n), rc.Poisson(0.9 * n, rc.dists.Exponential(1.0))
    for wide in (False, True):  # compile (or load) both copies first
        _cpu(system, inp, 4 * n, 0, wide, by_time)
    return {"policy": name, "servers": n, "run": "time" if by_time else "steps", "steps": steps,
            **interleaved_ratio(lambda w, seed: _cpu(system, inp, steps, seed, w, by_time),
                                rounds)}


def _option(args: list[str], name: str, default: str) -> str:
    return args[args.index(name) + 1] if name in args else default


def main(argv: list[str] | None = None) -> Rows:
    """Print the table (and write ``results/heap_layout[_time].csv`` with ``--csv``)."""
    args = sys.argv[1:] if argv is None else argv
    quick, by_time = "--quick" in args, "--time" in args
    rounds = int(_option(args, "--rounds", "2" if quick else "7"))
    servers = tuple(int(float(x)) for x in
                    _option(args, "--servers", "" if not quick else "1e3,1e4").split(",") if x)
    servers = servers or SERVERS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        rows = [measure(name, n, max(4 * n, 200_000 if quick else 2_000_000), rounds, by_time)
                for n in servers for name in POLICIES]
    print_ratios(rows, "binary / 4-ary CPU time")
    return finish(rows, ("policy", "servers"), "heap_layout_time" if by_time else "heap_layout")


if __name__ == "__main__":
    main()
