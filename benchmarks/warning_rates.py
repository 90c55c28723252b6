"""How often ``rc.simulate`` warns about its standard errors, and whether they hold if not.

For each cell, ``--seeds`` independent runs (default 200) of M/M/S under JSW (Erlang C gives
the exact ``p_wait`` and ``mean_wait``), of JIQ, and of unstable systems. Printed as Markdown:

* **warned**: the fraction of runs with a :class:`recursions.SimulationWarning`;
* **covered**: among the runs that did not warn, the fraction whose ``p_wait`` and whose
  ``mean_wait`` lie within 2 reported standard errors of the exact value (about 0.95 when
  the standard errors are right; M/M/S cells only);
* **spread / se**: the standard deviation of ``mean_wait`` over the unwarned runs divided by
  their mean reported standard error (about 1 when the standard errors are right).

The ``recursions.inference.diagnostics.batch_check`` docstring shows this table.

Run: ``python benchmarks/warning_rates.py [--seeds N] [--csv]``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _tables import finish

import loynes as ly
import recursions as rc
from recursions.common._tables import Rows

E = rc.dists.Exponential


def mm(S: int, load: float) -> rc.Poisson:
    return rc.Poisson(load * S, E(1.0))


# (label, system, input, simulate keywords, exact (p_wait, mean_wait) or None)
def cells() -> list[tuple[str, rc.System, rc.Input, dict, tuple[float, float] | None]]:
    out = []
    for S, load, kw in [
        (1, 0.5, dict(steps=10**4)),
        (1, 0.5, dict(steps=10**5, warmup=10**3)),
        (1, 0.9, dict(steps=10**5)),
        (1, 0.9, dict(steps=10**5, warmup=10**4)),
        (1, 0.9, dict(steps=2 * 10**5)),
        (1, 0.9, dict(steps=2 * 10**5, replications=8, warmup=10**4)),
        (1, 0.95, dict(steps=10**5, warmup=10**4)),
        (3, 0.85, dict(steps=4 * 10**5, replications=2)),
        (10, 0.9, dict(steps=10**5)),
        (10, 0.9, dict(steps=10**5, warmup=10**4)),
        (50, 0.9, dict(steps=10**5, warmup=10**4)),
        (40, 0.98, dict(steps=10**5, warmup=10**4)),
        (1, 0.9, dict(steps=10**4)),
        (10, 0.9, dict(steps=10**4)),
        (40, 0.98, dict(steps=10**5, warmup=10**4, replications=4)),
        (100, 0.9, dict(steps=1000, warmup=5000)),
        (100, 0.9, dict(steps=1000, warmup=5000, replications=4)),
        (100, 0.9, dict(steps=300, warmup=5000)),
    ]:
        a = load * S
        exact = (ly.erlang_c(S, a), ly.mm_c_mean_wait(S, a, 1.0))
        heap = ", heap" if S >= 32 else ""
        label = f"M/M/{S} ({load}){heap}, " + ", ".join(f"{k}={v:g}" for k, v in kw.items())
        out.append((label, rc.JSW(S), mm(S, load), kw, exact))
    out += [
        ("JIQ(100) (0.8), heap, steps=1e+05, warmup=1e+04", rc.JIQ(100), mm(100, 0.8),
         dict(steps=10**5, warmup=10**4), None),
        ("M/M/2 (1.5), steps=1e+05: unstable", rc.JSW(2), mm(2, 1.5), dict(steps=10**5), None),
        ("J2SW(2) (0.9), steps=1e+05: unstable", rc.JpSW(2, 1), mm(2, 0.9),
         dict(steps=10**5), None),
        ("J2SW(2) (0.9), steps=1e+04: unstable", rc.JpSW(2, 1), mm(2, 0.9),
         dict(steps=10**4), None),
    ]
    return out


def run_cell(system, inp, kw, exact, seeds: int) -> dict:
    warned, hits_p, hits_w, waits, ses = 0, 0, 0, [], []
    for seed in range(seeds):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = rc.simulate(system, inp, rng=seed, **kw)
        if any(issubclass(w.category, rc.SimulationWarning) for w in caught):
            warned += 1
            continue
        if exact is not None:
            p, w = res.p_wait, res.mean_wait
            hits_p += abs(p.value - exact[0]) <= 2 * p.se
            hits_w += abs(w.value - exact[1]) <= 2 * w.se
            waits.append(w.value)
            ses.append(w.se)
    quiet = seeds - warned
    row = {"warned": warned / seeds, "quiet": quiet}
    if exact is not None and quiet >= 2:
        row["covered_p"] = hits_p / quiet
        row["covered_w"] = hits_w / quiet
        row["spread_se"] = float(np.std(waits, ddof=1) / np.mean(ses))
    return row


def main() -> Rows:
    """Print the table as Markdown and return it (``--csv``: also ``results/warning_rates.csv``)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200, help="runs per cell (default 200)")
    ap.add_argument("--csv", action="store_true",
                    help="also write the table to benchmarks/results/warning_rates.csv")
    args = ap.parse_args()
    print("| run | warned | covered: p_wait, mean_wait | spread / se |")
    print("|---|---|---|---|")
    rows = []
    for label, system, inp, kw, exact in cells():
        r = run_cell(system, inp, kw, exact, args.seeds)
        rows.append({"run": label, "seeds": args.seeds, **r})
        cov = (f"{r['covered_p']:.2f}, {r['covered_w']:.2f}" if "covered_p" in r else "")
        spread = f"{r['spread_se']:.2f}" if "spread_se" in r else ""
        print(f"| {label} | {round(r['warned'] * args.seeds)} / {args.seeds} | {cov} | "
              f"{spread} |", flush=True)
    return finish(rows, ("run",), "warning_rates")


if __name__ == "__main__":
    main()
