"""Exact samples at the frontier against their oracles (slow: about 30 minutes on 2 cores).

FCFS M/M/S against Erlang C (P(wait) and the conditional wait, exponential with rate
``S mu - lambda``) and E2/M/S (Erlang-2 arrivals) against the GI/M/S conditional law of the
wait (exponential with rate ``S mu (1 - omega)``, ``omega = A*(S mu (1 - omega))``, ``A*``
the Laplace transform of the interarrival law), at (S, load) = (10, 0.95), (50, 0.9) and
(100, 0.95), with ``cp.perfect_sample``'s default method (the vacation bound there). Prints
each statistic with its z-score (the run's own standard error) and the KS p-value of the
conditional wait.

Run: ``python benchmarks/perfect_sampling_oracles.py [--quick]`` (``--quick``: a tenth of the
draws).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from _tables import finish
from scipy import optimize, stats

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.common._tables import Rows

CELLS = ((10, 0.95, 2000), (50, 0.9, 1000), (100, 0.95, 500))


def omega_e2(S: int, lam: float) -> float:
    """The root of ``omega = A*(S (1 - omega))`` for Erlang(2, 2 lam) arrivals, mu = 1."""
    return optimize.brentq(lambda w: (2 * lam / (2 * lam + S * (1 - w))) ** 2 - w, 1e-12,
                           1 - 1e-12)


def main() -> Rows:
    quick = "--quick" in sys.argv
    rows = []
    print("| system | S | load | draws | method | P(wait) (oracle) | z | E[W | W > 0] "
          "(oracle) | z | KS p | s/draw |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for S, rho, n in CELLS:
        n = max(n // 10, 50) if quick else n
        lam = rho * S
        for name in ("M/M", "E2/M"):
            if name == "M/M":
                inp = rc.Poisson(lam, rc.dists.Exponential(1.0))
                pw, rate = ly.erlang_c(S, lam), S - lam
            else:
                inp = rc.Renewal(rc.dists.Erlang(2, 2 * lam), rc.dists.Exponential(1.0))
                pw, rate = math.nan, S * (1 - omega_e2(S, lam))
            t0 = time.perf_counter()
            ps = cp.perfect_sample(rc.JSW(S), inp, n, rng=11)
            secs = (time.perf_counter() - t0) / n
            w = ps.samples[:, 0]
            p = float(np.mean(w > 0))
            zp = (p - pw) / math.sqrt(pw * (1 - pw) / n) if pw == pw else math.nan
            cond = w[w > 0]
            zc = (cond.mean() - 1 / rate) / (cond.std(ddof=1) / math.sqrt(cond.size))
            ks = stats.kstest(cond, "expon", args=(0, 1 / rate)).pvalue
            oracle = f"{pw:.4f}" if pw == pw else "-"
            print(f"| {name} | {S} | {rho} | {n} | {ps.method} | {p:.4f} ({oracle}) | "
                  f"{zp:.2f} | {cond.mean():.4f} ({1 / rate:.4f}) | {zc:.2f} | {ks:.3f} | "
                  f"{secs:.2f} |", flush=True)
            rows.append({"system": name, "servers": S, "load": rho, "draws": n,
                         "method": ps.method, "p_wait": p, "p_wait_oracle": pw, "z_p_wait": zp,
                         "mean_wait_given_wait": float(cond.mean()),
                         "mean_wait_given_wait_oracle": 1 / rate, "z_mean": float(zc),
                         "ks_p": float(ks), "seconds_per_draw": secs})
    return finish(rows, ("system", "servers", "load"), "perfect_sampling_oracles")


if __name__ == "__main__":
    main()
