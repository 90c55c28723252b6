"""``rc.simulate(rc.JSW(S))`` side by side with a minimal C loop of the same map, as ratios.

The peer is a C program written and compiled here (``gcc -O3 -march=native``, skipped with a
message when no C compiler is found): the Kiefer-Wolfowitz map of FCFS M/M/S (join the least
workload, insertion loop; at 2 to 32 servers also the branch-free one-pass join that
``simulate`` uses there, and the faster of the two is the peer), drawing its service and
interarrival times inside the loop from xoshiro256++ with Marsaglia and Tsang's ziggurat for
exponentials (256 layers; index and value from separate bits of one 64-bit draw). It keeps
one of two sets of statistics:

* ``minimal``: per batch of arrivals (32 equal batches), the arrivals, the customers who
  waited and the sum of their waits: what ``p_wait`` and ``mean_wait`` with batch means need;
* ``full``: what ``simulate`` keeps by default: also the total workload and busy servers seen
  by each arrival (added up in a second pass over the drained vector, four partial sums),
  the arrivals that find every server busy, a histogram of the busy servers' workloads every
  ``S`` arrivals (the profile) and a histogram of the waits, both on a 33-level grid.

``simulate`` runs on the dense engine with 32 batches, twice: with its default statistics
and the same grid (against ``full``), and with ``statistics=("p_wait", "mean_wait")``, whose
drivers keep only those sums (against ``minimal``); each is timed by process CPU time around
the call (drivers compiled beforehand), the C program by its own CPU clock around its loop.
Rounds alternate the four programs; each round gives the ratio ours / peer of arrivals per
CPU second, and the table reports their min, median and max. Each run's ``p_wait`` and
``mean_wait`` are checked against Erlang C (within 5 standard errors of the batch means), so
a loop that computed something else would show.

Run: ``python benchmarks/c_loop.py [--quick] [--csv]``; the table is in
``docs/benchmarks.md`` (section "Against a C loop").
"""

from __future__ import annotations

import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _oracles import mm_s
from _tables import finish

import recursions as rc
from recursions.common._tables import Rows
from recursions.engines import _workload_engines

# what is timed here is the loops of long runs, which draw inside the loop; a short plain run
# reads blocks instead (BLOCK_ARRIVALS, docs/benchmarks.md bench-first-result), so the
# warm-ups and the quick mode's shorter runs draw in the loop too
_workload_engines.BLOCK_ARRIVALS = 0

C_SOURCE = r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { uint64_t s[4]; } rng_t;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next64(rng_t *g) { /* xoshiro256++ (Blackman and Vigna) */
    const uint64_t r = rotl(g->s[0] + g->s[3], 23) + g->s[0];
    const uint64_t t = g->s[1] << 17;
    g->s[2] ^= g->s[0]; g->s[3] ^= g->s[1]; g->s[1] ^= g->s[2]; g->s[0] ^= g->s[3];
    g->s[2] ^= t; g->s[3] = rotl(g->s[3], 45);
    return r;
}

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void seed(rng_t *g, uint64_t s) { for (int i = 0; i < 4; i++) g->s[i] = splitmix(&s); }

static inline double uni(rng_t *g) { /* in (0, 1): 52 bits and a half */
    return ((double)(next64(g) >> 12) + 0.5) * 0x1.0p-52;
}

/* Marsaglia and Tsang (2000), the exponential ziggurat with 256 layers */
static uint32_t ke[256];
static double we[256], fe[256];

static void zigset(void) {
    const double m2 = 4294967296.0;
    double de = 7.697117470131487, te = de, ve = 3.949659822581572e-3;
    double q = ve / exp(-de);
    ke[0] = (uint32_t)((de / q) * m2); ke[1] = 0;
    we[0] = q / m2; we[255] = de / m2;
    fe[0] = 1.0; fe[255] = exp(-de);
    for (int i = 254; i >= 1; i--) {
        de = -log(ve / de + exp(-de));
        ke[i + 1] = (uint32_t)((de / te) * m2);
        te = de;
        fe[i] = exp(-de);
        we[i] = de / m2;
    }
}

static double efix(rng_t *g, uint32_t jz, uint32_t iz) {
    for (;;) {
        if (iz == 0) return 7.697117470131487 - log(uni(g));
        double x = jz * we[iz];
        if (fe[iz] + uni(g) * (fe[iz - 1] - fe[iz]) < exp(-x)) return x;
        uint64_t r = next64(g);
        iz = (uint32_t)(r & 255); jz = (uint32_t)(r >> 32);
        if (jz < ke[iz]) return jz * we[iz];
    }
}

static inline double rexp(rng_t *g) {
    uint64_t r = next64(g);
    uint32_t iz = (uint32_t)(r & 255), jz = (uint32_t)(r >> 32);
    if (jz < ke[iz]) return jz * we[iz];
    return efix(g, jz, iz);
}

static inline int level_bin(const double *grid, int ng, double h, double x) {
    if (x <= grid[0]) return 0;
    double v = ceil((x - grid[0]) * (1.0 / h));
    int j = v > ng ? ng : (int)v;  /* clamped before the cast */
    while (j > 0 && grid[j - 1] >= x) j--;
    while (j < ng && grid[j] < x) j++;
    return j;
}

/* one run: S servers, arrival rate lam, n arrivals; full: the default statistics */
static void run(int S, double lam, long n, int nb, int full, int pass, uint64_t sd,
                double *acc, double *hist, double *w, double *w2, const double *grid, int ng) {
    rng_t gs, gt;
    seed(&gs, sd); seed(&gt, sd ^ 0x5bd1e995ULL);
    double h = grid[1] - grid[0], inv = 1.0 / lam, tot = 0.0;
    int off = ng + 1, busy = 0, b = 0;
    long nxt = (n + nb - 1) / nb, due = 0;
    for (long t = 0; t < n; t++) {
        double sigma = rexp(&gs), tau = rexp(&gt) * inv;
        if (t >= nxt) { b++; nxt = ((long)(b + 1) * n + nb - 1) / nb; }
        double *a = acc + 8 * b;
        a[0] += 1.0;
        if (full) {
            a[3] += tot; a[4] += busy;
            if (busy == S) a[5] += 1.0;
            if (t == due) {
                due += S;
                a[6] += 1.0;
                for (int i = 0; i < S; i++)
                    if (w[i] > 0.0) hist[b * 2 * off + level_bin(grid, ng, h, w[i])] += 1.0;
            }
        }
        double found = w[0];
        if (found > 0.0) { a[1] += 1.0; a[2] += found; }
        if (full) hist[b * 2 * off + off + level_bin(grid, ng, h, found)] += 1.0;
        double x = found + sigma;
        if (pass) { /* branch-free join and drain into w2, then swap */
            for (int i = 0; i < S - 1; i++) {
                double o = w[i], nx = w[i + 1];
                double v = (nx < x ? nx : ((i == 0) | (o < x) ? x : o)) - tau;
                w2[i] = v > 0.0 ? v : 0.0;
            }
            double o = w[S - 1];
            double v = ((S == 1) | (o < x) ? x : o) - tau;
            w2[S - 1] = v > 0.0 ? v : 0.0;
            double *sw = w; w = w2; w2 = sw;
        } else { /* insertion, then the drain */
            int i = 0;
            while (i + 1 < S && w[i + 1] < x) { w[i] = w[i + 1]; i++; }
            w[i] = x;
            for (int j = 0; j < S; j++) { double v = w[j] - tau; w[j] = v > 0.0 ? v : 0.0; }
        }
        if (full) { /* the drained vector's total and busy servers, four partial sums */
            double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
            int j = 0;
            busy = 0;
            for (; j + 4 <= S; j += 4) {
                a0 += w[j]; a1 += w[j + 1]; a2 += w[j + 2]; a3 += w[j + 3];
                busy += (w[j] > 0.0) + (w[j + 1] > 0.0) + (w[j + 2] > 0.0) + (w[j + 3] > 0.0);
            }
            for (; j < S; j++) { a0 += w[j]; busy += w[j] > 0.0; }
            tot = (a0 + a1) + (a2 + a3);
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 7) { fprintf(stderr, "usage: S lam n full pass seed\n"); return 2; }
    int S = atoi(argv[1]), full = atoi(argv[4]), pass = atoi(argv[5]), nb = 32, ng = 33;
    double lam = atof(argv[2]);
    long n = atol(argv[3]);
    uint64_t sd = strtoull(argv[6], NULL, 10);
    double grid[33];
    for (int i = 0; i < ng; i++) grid[i] = 4.0 * i / (ng - 1);
    double *acc = calloc(8 * nb, sizeof(double));
    double *hist = calloc((size_t)nb * 2 * (ng + 1), sizeof(double));
    double *w = calloc(S, sizeof(double)), *w2 = calloc(S, sizeof(double));
    zigset();
    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    run(S, lam, n, nb, full, pass, sd, acc, hist, w, w2, grid, ng);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double cpu = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    printf("%.9f", cpu);
    for (int b = 0; b < nb; b++)
        printf(" %.17g %.17g %.17g", acc[8 * b], acc[8 * b + 1], acc[8 * b + 2]);
    printf("\n");
    return 0;
}
"""

LOAD = 0.9
SERVERS = (1, 10)
GRID = np.linspace(0.0, 4.0, 33)
BATCHES = 32


def compile_peer(folder: Path) -> Path | None:
    """The C program compiled into ``folder``, or ``None`` when no C compiler is found."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    src, exe = folder / "kw.c", folder / "kw"
    src.write_text(C_SOURCE)
    subprocess.run([cc, "-O3", "-march=native", "-o", str(exe), str(src), "-lm"], check=True)
    return exe


def run_peer(exe: Path, s: int, lam: float, n: int, full: bool, one_pass: bool, seed: int
             ) -> tuple[float, np.ndarray]:
    """CPU seconds of the C loop and its per-batch (arrivals, waited, wait sum)."""
    out = subprocess.run([str(exe), str(s), repr(lam), str(n), str(int(full)),
                          str(int(one_pass)), str(seed)], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[0]), np.array(out[1:], dtype=float).reshape(BATCHES, 3)


def run_ours(s: int, lam: float, n: int, seed: int, lean: bool = False
             ) -> tuple[float, np.ndarray]:
    """CPU seconds of ``rc.simulate`` and its per-batch (arrivals, waited, wait sum).

    With ``lean``, ``statistics=("p_wait", "mean_wait")`` (no grid); else the defaults.
    """
    inp = rc.Poisson(lam, rc.dists.Exponential(1.0))
    kw = {"statistics": ("p_wait", "mean_wait")} if lean else {"grid": GRID}
    t0 = time.process_time()
    res = rc.simulate(rc.JSW(s), inp, steps=n, rng=seed, batches=BATCHES, engine="dense",
                      **kw)
    cpu = time.process_time() - t0
    arr, waited = res._sums["p_wait"][1][0], res._sums["p_wait"][0][0]
    return cpu, np.stack([arr, waited, res._sums["mean_wait"][0][0]], axis=1)


def agrees(sums: np.ndarray, s: int, lam: float) -> bool:
    """Whether batch means of ``p_wait`` and ``mean_wait`` are within 5 se of Erlang C."""
    ok = True
    exact_values = mm_s(s, lam)
    for col, exact in ((1, exact_values["p_wait"]), (2, exact_values["mean_wait"])):
        means = sums[:, col] / sums[:, 0]
        se = float(np.std(means, ddof=1) / math.sqrt(len(means)))
        ok = ok and abs(float(sums[:, col].sum() / sums[:, 0].sum()) - exact) <= 5 * se
    return ok


def measure(exe: Path, s: int, n: int, rounds: int) -> dict[str, object]:
    """One row: ratios ours / peer over interleaved rounds, for both sets of statistics."""
    lam = LOAD * s
    passes = (False, True) if 2 <= s <= 32 else (False,)
    for lean in (False, True):  # compile (or load) the drivers first
        run_ours(s, lam, min(n, 10_000), 0, lean)
    ratios: dict[str, list[float]] = {"minimal": [], "full": []}
    rates: dict[str, list[float]] = {"ours": [], "ours_lean": [], "minimal": [], "full": []}
    checked = True
    for r in range(rounds):
        seed = 1000 + r
        peer = {}
        for stats in ("minimal", "full"):
            best = math.inf
            for one_pass in passes:  # the faster of the C joins is the peer
                cpu, sums = run_peer(exe, s, lam, n, stats == "full", one_pass, seed)
                checked = checked and agrees(sums, s, lam)
                best = min(best, cpu)
            peer[stats] = best
        ours = {}
        for stats, lean in (("full", False), ("minimal", True)):
            ours[stats], sums = run_ours(s, lam, n, seed, lean)
            checked = checked and agrees(sums, s, lam)
        rates["ours"].append(n / ours["full"])
        rates["ours_lean"].append(n / ours["minimal"])
        for stats in ("minimal", "full"):
            rates[stats].append(n / peer[stats])
            ratios[stats].append(peer[stats] / ours[stats])
    row: dict[str, object] = {"servers": s, "load": LOAD, "steps": n, "rounds": rounds}
    for key, vals in rates.items():
        row[f"{key}_per_s"] = statistics.median(vals)
    for stats, vals in ratios.items():
        row[f"vs_{stats}_min"] = min(vals)
        row[f"vs_{stats}_median"] = statistics.median(vals)
        row[f"vs_{stats}_max"] = max(vals)
    row["erlang_c_checked"] = checked
    return row


def main(argv: list[str] | None = None) -> Rows | None:
    """Print the table (and write ``results/c_loop.csv`` with ``--csv``)."""
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    n, rounds = (200_000, 1) if quick else (10_000_000, 7)
    with tempfile.TemporaryDirectory() as tmp:
        exe = compile_peer(Path(tmp))
        if exe is None:
            print("no C compiler (gcc or cc) found: the C loop benchmark is skipped")
            return None
        rows = [measure(exe, s, n, rounds) for s in SERVERS]
    print("ours / C loop, arrivals per CPU second (median M/s; ratios min / median / max)")
    print("| S | ours (minimal) | C minimal | ours / C minimal | ours (default) | C full | "
          "ours / C full | Erlang C |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        m = {k: float(v) / 1e6 for k, v in r.items() if k.endswith("_per_s")}  # type: ignore[arg-type]
        print(f"| {r['servers']} | {m['ours_lean_per_s']:.1f} | {m['minimal_per_s']:.1f} | "
              f"{r['vs_minimal_min']:.2f} / {r['vs_minimal_median']:.2f} / "
              f"{r['vs_minimal_max']:.2f} | {m['ours_per_s']:.1f} | {m['full_per_s']:.1f} | "
              f"{r['vs_full_min']:.2f} / {r['vs_full_median']:.2f} / {r['vs_full_max']:.2f} | "
              f"{r['erlang_c_checked']} |")
    return finish(rows, ("servers",), "c_loop")


if __name__ == "__main__":
    main()
