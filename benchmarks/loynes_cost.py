"""Cost of a backward Loynes sequence against one forward run of the same length, as a ratio.

``ly.loynes(system, input, horizon=H, stop=False)`` runs the map from empty at every doubling
horizon 1, 2, 4, ..., H on time-indexed draws, each run stopping where it meets the previous
horizon's run (and the certificate's run from the level where it meets the run from empty), so
a stable sequence costs about H map applications plus drawing H arrivals once (2H, or 4H with
the certificate, when runs never meet). The peer is ``rc.simulate(system, input, steps=H)``
(statistics included), timed in the same run. The machine is shared and noisy: read the ratios.

Run: ``python benchmarks/loynes_cost.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
import warnings

from _tables import finish

import loynes as ly
import recursions as rc
from recursions.common._tables import Rows
from recursions.engines import _workload_engines

# the forward peer stands for a long run, which draws inside its loop; a short plain run
# reads blocks instead (BLOCK_ARRIVALS, docs/benchmarks.md bench-first-result)
_workload_engines.BLOCK_ARRIVALS = 0


def best_time(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(quick: bool = False) -> Rows:
    # the 64-step compile runs are far too short for estimates, and none are used
    warnings.simplefilter("ignore", rc.SimulationWarning)
    horizon = 2**18 if quick else 2**20
    cases = [
        (rc.JSW(10), rc.Poisson(9.0, rc.dists.Exponential(1.0))),
        (rc.JpSW(5, 2), rc.Poisson(4.0, rc.dists.LogNormal(1.0, 2.0))),
        (rc.JIQ(10), rc.Poisson(8.0, rc.dists.Exponential(1.0))),
    ]
    print(f"horizon = {horizon}")
    print(f"{'system':<26} {'loynes s':>9} {'forward s':>10} {'ratio':>6}")
    rows = []
    for system, inp in cases:
        ly.loynes(system, inp, 64, rng=1, stop=False)  # compile / warm
        rc.simulate(system, inp, steps=64, rng=1)
        t_back = best_time(lambda s=system, i=inp: ly.loynes(s, i, horizon, rng=1, stop=False))
        t_fwd = best_time(lambda s=system, i=inp: rc.simulate(s, i, steps=horizon, rng=1))
        print(f"{system!r:<26} {t_back:>9.3f} {t_fwd:>10.3f} {t_back / t_fwd:>6.2f}")
        rows.append({"system": repr(system), "horizon": horizon, "loynes_s": t_back,
                     "forward_s": t_fwd, "ratio": t_back / t_fwd})
    return finish(rows, ("system",), "loynes_cost")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
