"""Edit to first result: the first call of each family, against a hand-written numba loop.

A researcher who explores a policy compares the library with the loop they would write
themselves: a numba Lindley recursion for FCFS M/M/1, compiled and run in a fresh process.
Each case here is one fresh process with empty caches (``QUEUE_RECURSIONS_CACHE`` and
``NUMBA_CACHE_DIR`` new folders; Python's bytecode stays warm), its import included, timed
by its CPU seconds (user + system of the finished child: the machine is shared). The cases
run in interleaved rounds (loop, case 1, case 2, ..., loop, ...), and each case's ratio to
the loop is taken round by round against the loop of its own round; min / median / max.

The cases: the first ``simulate`` of a built-in system (``JSW(3)``, 10^5 arrivals), of a
user's ``rc.Map`` (4 servers, least of two random ranks) and its first ``check_monotone``;
the first call of each family (the JIQ heap engine, ``Redundancy``, a queue-length policy,
``check_stability``, ``loynes``, ``perfect_sample``); and an edited map run again in the same
process (the second map's first ``simulate``, printed by the child, wall seconds). Last, the
price of a short run of a user's map on the loop that calls its step through a pointer: its
CPU time over that of the map's own compiled copy, 10^6 arrivals, alternating runs in one
process.

Run: ``python benchmarks/first_result.py [--quick] [--csv]``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from _tables import finish
from startup import ENV, run, spread

from recursions.common._tables import Rows

LOOP = '''
import numpy as np
from numba import njit

@njit(cache=True)
def lindley(sigma, tau):
    w, waited, total = 0.0, 0, 0.0
    for k in range(sigma.size):
        waited += w > 0.0
        total += w
        w = max(w + sigma[k] - tau[k], 0.0)
    return waited / sigma.size, total / sigma.size

g = np.random.default_rng(1)
print(lindley(g.exponential(1.0, 10**5), g.exponential(1.25, 10**5)))
'''

MAP = '''
import numpy as np
from numba import njit
import recursions as rc, coupling as cp
from recursions.vectors import add_at_rank, drain, random_rank

@njit(cache=True)
def least_of_two(w, sigma, tau, u, params):
    r = min(random_rank(u[0], w.size), random_rank(u[1], w.size))
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found

m = rc.Map(least_of_two, servers=4, uniforms=2, name="least of two")
inp = rc.Poisson(3.2, rc.dists.Exponential(1.0))
'''

CASES = {
    "hand-written numba loop": LOOP,
    "simulate JSW(3)": "import recursions as rc\n"
                       "rc.simulate(rc.JSW(3), rc.Poisson(2.4, rc.dists.Exponential(1.0)), "
                       "steps=10**5, rng=1)\n",
    "simulate rc.Map": MAP + "rc.simulate(m, inp, steps=10**5, rng=1)\n",
    "check_monotone rc.Map": MAP + "cp.check_monotone(m, trials=200, rng=1)\n",
    "simulate JIQ(1000), heap": "import recursions as rc\n"
                                "rc.simulate(rc.JIQ(1000), rc.Poisson(800.0, "
                                "rc.dists.Exponential(1.0)), steps=10**5, engine='heap', "
                                "rng=1)\n",
    "simulate Redundancy": "import recursions as rc\n"
                           "s = rc.Redundancy(8, classes=[rc.JobClass(2, 1, "
                           "rc.dists.Exponential(1.0))])\n"
                           "rc.simulate(s, s.poisson(2.0), steps=10**5, rng=1)\n",
    "simulate JSQ(4)": "import recursions as rc\n"
                       "rc.simulate(rc.JSQ(4), rc.Poisson(3.0, rc.dists.Exponential(1.0)), "
                       "steps=10**5, rng=1)\n",
    "check_stability JpSW(3, 1)": "import recursions as rc, loynes as ly\n"
                                  "ly.check_stability(rc.JpSW(3, 1), rc.Poisson(2.0, "
                                  "rc.dists.Exponential(1.0)), rng=1)\n",
    "loynes JSW(3)": "import recursions as rc, loynes as ly\n"
                     "ly.loynes(rc.JSW(3), rc.Poisson(2.4, rc.dists.Exponential(1.0)), "
                     "horizon=2**14, rng=1)\n",
    "perfect_sample JSW(2)": "import recursions as rc, coupling as cp\n"
                             "cp.perfect_sample(rc.JSW(2), rc.Poisson(1.5, "
                             "rc.dists.Exponential(1.0)), 20, rng=1)\n",
}

EDITED = MAP + '''
import time
rc.simulate(m, inp, steps=10**5, rng=1)

@njit(cache=True)
def least_of_three(w, sigma, tau, u, params):  # the edit: one more sampled rank
    r = min(random_rank(u[0], w.size), random_rank(u[1], w.size), random_rank(u[2], w.size))
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found

t = time.perf_counter()
rc.simulate(rc.Map(least_of_three, servers=4, uniforms=3), inp, steps=10**5, rng=1)
print("EDITED", time.perf_counter() - t)
'''


def run_cold(code: str) -> tuple[float, float, str]:
    """``code`` as a script in a fresh process with empty caches: CPU s, wall s, stdout."""
    folder = tempfile.mkdtemp(prefix="first-result-")
    script = os.path.join(folder, "case.py")  # a file: numba caches what a file defines
    with open(script, "w") as f:
        f.write(code)
    env = dict(ENV, QUEUE_RECURSIONS_CACHE=os.path.join(folder, "drivers"),
               NUMBA_CACHE_DIR=os.path.join(folder, "numba"))
    try:
        return run([sys.executable, script], env)  # startup.py's timer of a whole process
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def rounds_of(rounds: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """CPU seconds of every case, and its ratio to the loop of its round, over the rounds."""
    cpu: dict[str, list[float]] = {k: [] for k in CASES}
    ratio: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(rounds):
        mine = {name: run_cold(code)[0] for name, code in CASES.items()}
        for name, c in mine.items():
            cpu[name].append(c)
            ratio[name].append(c / mine["hand-written numba loop"])
    return cpu, ratio


POINTER = MAP + '''
import time
from recursions.engines import _workload_engines as we
we.BLOCK_ARRIVALS = 0  # both loops draw in the loop, as the long runs they stand for do

def cpu(own):
    we.POINTER_ARRIVALS = 0 if own else 10**9
    t = time.process_time()
    rc.simulate(m, inp, steps=10**6, rng=1)
    return time.process_time() - t

cpu(False), cpu(True)  # compile both loops first
for _ in range(ROUNDS):
    print("POINTER", cpu(False) / cpu(True))
'''


def pointer_cost(rounds: int) -> list[float]:
    """CPU time of the pointer loop over the map's own copy, 10^6 arrivals, alternating runs."""
    out = run_cold(POINTER.replace("ROUNDS", str(rounds)))[2]
    return [float(line.split()[1]) for line in out.splitlines() if line.startswith("POINTER")]


def main(quick: bool = False) -> Rows:
    rounds = 1 if quick else 3
    cpu, ratio = rounds_of(rounds)
    edited = [float(run_cold(EDITED)[2].split("EDITED")[1]) for _ in range(rounds)]
    print(f"fresh processes with empty caches, import included, {rounds} interleaved rounds "
          "(CPU s and ratio to the loop of the same round: min / median / max)")
    rows = []
    for name in CASES:
        (c0, c1, c2), (r0, r1, r2) = spread(cpu[name]), spread(ratio[name])
        print(f"{name:<30} {c0:6.2f} {c1:6.2f} {c2:6.2f}   x {r0:5.1f} {r1:5.1f} {r2:5.1f}")
        rows.append({"case": name, "runs": rounds, "cpu_min": c0, "cpu_median": c1,
                     "cpu_max": c2, "ratio_min": r0, "ratio_median": r1, "ratio_max": r2})
    e0, e1, e2 = spread(edited)
    print(f"{'edited rc.Map, same process':<30} {e0:6.2f} {e1:6.2f} {e2:6.2f}   (wall s of "
          "the edited map's first simulate)")
    rows.append({"case": "edited rc.Map, same process (wall)", "runs": rounds, "cpu_min": e0,
                 "cpu_median": e1, "cpu_max": e2})
    p0, p1, p2 = spread(pointer_cost(5 if quick else 9))
    print(f"{'pointer loop / own copy':<30} {p0:6.2f} {p1:6.2f} {p2:6.2f}   (CPU time of a run of "
          "10^6 arrivals of the rc.Map, alternating)")
    rows.append({"case": "pointer loop / own copy (CPU, 10^6 arrivals)", "runs": 5 if quick
                 else 9, "ratio_min": p0, "ratio_median": p1, "ratio_max": p2})
    return finish(rows, ("case",), "first_result")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
