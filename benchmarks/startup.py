"""Start-up cost: the import, ``python -m loynes --help`` and the first call of ``simulate``.

Every figure is one whole fresh process, timed from here: its CPU time (user + system, the
operating system's accounting of the finished child: preferred, since the machine is shared)
and its wall time, each printed as min / median / max over the runs.

1. In interleaved rounds (A B C, A B C, ...), so all three see the same machine load:
   A ``import numpy, numba`` (the floor: every kernel needs them), B ``import recursions,
   coupling, loynes``, C ``python -m loynes --help``. The ratios B/A (target <= 1.5) and C/B
   (target <= 1.3) are taken round by round. Caches are warm: a warm-up round runs first, with
   Python's bytecode writing on (``PYTHONDONTWRITEBYTECODE`` is dropped from the children's
   environment, as a user's machine has it), so the ``.pyc`` files exist.
2. The first call of ``simulate`` in a fresh process, import included:
   ``rc.simulate(rc.JSW(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), steps=1000, rng=1)``;
   warm (the caches as a second run finds them) and cold (``QUEUE_RECURSIONS_CACHE`` and
   ``NUMBA_CACHE_DIR`` new empty folders for each run, so the drivers and the numba kernels it
   uses are compiled; the bytecode stays warm). Each child also prints its own import and
   first-call seconds (wall), shown beside the whole-process figures.

Run: ``python benchmarks/startup.py [--quick] [--csv]``.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _tables import finish

from recursions.common._tables import Rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
IMPORTS = {
    "import numpy, numba": [sys.executable, "-c", "import numpy, numba"],
    "import recursions, coupling, loynes": [sys.executable, "-c",
                                            "import recursions, coupling, loynes"],
    "python -m loynes --help": [sys.executable, "-m", "loynes", "--help"],
}
FIRST_CALL = (
    "import time; t0 = time.perf_counter(); import recursions as rc; t1 = time.perf_counter(); "
    "rc.simulate(rc.JSW(3), rc.Poisson(2.0, rc.dists.Exponential(1.0)), steps=1000, rng=1); "
    "t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"
)


def run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """One fresh process: its CPU seconds (user + system), wall seconds and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env or ENV, cwd=ROOT, capture_output=True, text=True,
                          check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, done.stdout


def spread(xs: list[float]) -> tuple[float, float, float]:
    return min(xs), statistics.median(xs), max(xs)


def fmt(xs: list[float], digits: int = 3) -> str:
    lo, med, hi = spread(xs)
    return f"{lo:.{digits}f} / {med:.{digits}f} / {hi:.{digits}f}"


def row(measure: str, cpu: list[float], wall: list[float], **extra: float) -> dict:
    (c0, c1, c2), (w0, w1, w2) = spread(cpu), spread(wall)
    return {"measure": measure, "runs": len(cpu), "cpu_min": c0, "cpu_median": c1,
            "cpu_max": c2, "wall_min": w0, "wall_median": w1, "wall_max": w2, **extra}


def imports(rounds: int) -> list[dict]:
    for cmd in IMPORTS.values():  # warm-up: bytecode and numba's index files in place
        run(cmd)
    cpu: dict[str, list[float]] = {k: [] for k in IMPORTS}
    wall: dict[str, list[float]] = {k: [] for k in IMPORTS}
    for _ in range(rounds):
        for name, cmd in IMPORTS.items():
            c, w, _ = run(cmd)
            cpu[name].append(c)
            wall[name].append(w)
    floor, ours, helps = IMPORTS
    print(f"fresh processes, {rounds} interleaved rounds, warm caches (min / median / max, s)")
    print(f"{'':<38} {'cpu':>22} {'wall':>22}")
    rows = []
    for name in IMPORTS:
        print(f"{name:<38} {fmt(cpu[name]):>22} {fmt(wall[name]):>22}")
        rows.append(row(name, cpu[name], wall[name]))
    print("ratios, round by round (min / median / max)")
    for a, b, label, target in ((ours, floor, "import ours / import numpy, numba", 1.5),
                                (helps, ours, "--help / import ours", 1.3)):
        rc_ = [x / y for x, y in zip(cpu[a], cpu[b], strict=True)]
        rw = [x / y for x, y in zip(wall[a], wall[b], strict=True)]
        print(f"{label:<38} {fmt(rc_, 2):>22} {fmt(rw, 2):>22}   (target <= {target})")
        rows.append(row(f"ratio {a} / {b}", rc_, rw, target=target))
    return rows


def first_calls(warm_runs: int, cold_runs: int) -> list[dict]:
    cmd = [sys.executable, "-c", FIRST_CALL]
    run(cmd)  # fills the caches this run's warm figures read
    got: dict[str, dict[str, list[float]]] = {
        k: {"cpu": [], "wall": [], "import": [], "call": []} for k in ("warm", "cold")}
    for i in range(max(warm_runs, cold_runs)):
        kinds = ["warm"] * (i < warm_runs) + ["cold"] * (i < cold_runs)
        for kind in kinds:
            env, folders = ENV, []
            if kind == "cold":
                folders = [tempfile.mkdtemp(prefix="startup-drivers-"),
                           tempfile.mkdtemp(prefix="startup-numba-")]
                env = dict(ENV, QUEUE_RECURSIONS_CACHE=folders[0], NUMBA_CACHE_DIR=folders[1])
            try:
                c, w, out = run(cmd, env)
            finally:
                for f in folders:
                    shutil.rmtree(f, ignore_errors=True)
            imp, call = (float(x) for x in out.split())
            for key, value in (("cpu", c), ("wall", w), ("import", imp), ("call", call)):
                got[kind][key].append(value)
    print("\nfirst call of simulate (JSW(3), 1000 steps) in a fresh process, import included "
          "(min / median / max, s)")
    print(f"{'':<22} {'process cpu':>22} {'process wall':>22} {'import (in)':>22} "
          f"{'first call (in)':>22}")
    rows = []
    for kind, g in got.items():
        label = f"{kind} caches ({len(g['cpu'])} run{'s' * (len(g['cpu']) > 1)})"
        print(f"{label:<22} {fmt(g['cpu'], 2):>22} {fmt(g['wall'], 2):>22} "
              f"{fmt(g['import'], 2):>22} {fmt(g['call'], 2):>22}")
        rows.append(row(f"first simulate, {kind} caches", g["cpu"], g["wall"],
                        import_median=statistics.median(g["import"]),
                        call_median=statistics.median(g["call"])))
    return rows


def main(quick: bool = False) -> Rows:
    rows = imports(5 if quick else 15)
    rows += first_calls(3 if quick else 7, 1 if quick else 3)
    return finish(rows, ("measure",), "startup")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
