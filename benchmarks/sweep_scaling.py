"""Points per second of a 64-point J_{p+1}SW stability map: 1 and 2 local workers, Dask.

S = 6, 16 loads in [0.5, 1.05] x p = 0..3, runs of steps = horizon = 2**15. Prints
points/s for each way of running and the speed-ups over one local worker. Every run uses the
same seed, and the verdict grids are checked equal. Local times include starting the worker
processes (about a second); the Dask cluster is started before the clock starts.
"""

from __future__ import annotations

import time

import numpy as np
from _tables import finish

import recursions as rc
from loynes._stability_maps import PoissonAtLoad, SystemFamily, stability_map
from recursions.common._tables import Rows

S = 6
LOADS = np.linspace(0.5, 1.05, 16)
PS = [0, 1, 2, 3]
KW = {"steps": 2**15, "horizon": 2**15, "progress": False, "rng": 1, "table": "dict"}


def run(label: str, **how) -> tuple[float, np.ndarray]:
    t0 = time.perf_counter()
    m = stability_map(SystemFamily("jpsw", S), PoissonAtLoad(S, rc.dists.Exponential(1.0)),
                      LOADS, PS, **how, **KW)
    dt = time.perf_counter() - t0
    n = m.verdicts.size
    print(f"{label:<28} {n} points in {dt:6.2f} s: {n / dt:6.2f} points/s")
    return n / dt, m.verdicts


def main() -> Rows:
    # warm the numba cache once, so no run pays for compilation
    stability_map(SystemFamily("jpsw", S), PoissonAtLoad(S, rc.dists.Exponential(1.0)),
                  LOADS[:2], PS[:2], max_workers=0, **KW)
    r1, v1 = run("local, 1 worker", max_workers=1)
    r2, v2 = run("local, 2 workers", max_workers=2)
    rates = {"local x2": r2}
    try:
        import distributed
    except ImportError:
        print("dask.distributed not installed: Dask run skipped")
    else:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address="127.0.0.1:0") as lc, \
                distributed.Client(lc) as client:
            rd, vd = run("Dask LocalCluster, 2 workers", client=client)
        assert (vd == v1).all(), "Dask verdicts differ from the local run"
        rates["Dask x2"] = rd
    assert (v2 == v1).all(), "verdicts depend on the number of workers"
    for k, r in rates.items():
        print(f"speed-up {k} / local x1: {r / r1:.2f}")
    return finish([{"runner": "local x1", "points_per_s": r1, "speed_up": 1.0}]
                  + [{"runner": k, "points_per_s": r, "speed_up": r / r1}
                     for k, r in rates.items()], ("runner",), "sweep_scaling")


if __name__ == "__main__":
    main()
