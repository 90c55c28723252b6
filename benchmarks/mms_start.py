"""Exact stationary states of FCFS M/M/S: the birth-death chain against coupling from the past.

``simulate(..., start="stationary")`` on FCFS M/M/S draws its start states with
``cp.mms_states`` (the number in the system from the birth-death chain of M/M/S, exponential
remaining works), elsewhere with ``cp.perfect_sample`` (dominated coupling from the past).
For M/M/10 at load 0.9 and M/M/40 at loads 0.95 and 0.98 this times one draw of each, in
interleaved rounds (the order alternating, CPU time, ``--rounds`` rounds of ``--draws``
draws each), and reports seconds per draw of both and their ratio (coupling / chain) as
min / median / max. Both samplers are exact, so the table also gives each cell's mean of
``W[0] > 0`` over all its draws beside Erlang C (a check, not a test: a few draws).

Run: ``python benchmarks/mms_start.py [--quick] [--csv]``.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from _tables import finish

import coupling as cp
import loynes as ly
import recursions as rc
from recursions.common._tables import Rows

CELLS = ((10, 0.9), (40, 0.95), (40, 0.98))


def _cpu(draw, seed: int) -> tuple[float, np.ndarray]:
    t0 = time.process_time()
    w = draw(seed)
    return time.process_time() - t0, w


def measure(S: int, rho: float, draws: int, rounds: int) -> dict[str, object]:
    """One row: CPU seconds per draw of each sampler over interleaved rounds."""
    system, inp = rc.JSW(S), rc.Poisson(rho * S, rc.dists.Exponential(1.0))
    samplers = {"chain": lambda seed: cp.mms_states(system, inp, draws, rng=seed),
                "coupling": lambda seed: cp.perfect_sample(system, inp, draws,
                                                           rng=seed).samples}
    for draw in samplers.values():  # compile first
        draw(0)
    per: dict[str, list[float]] = {k: [] for k in samplers}
    waits: dict[str, list[float]] = {k: [] for k in samplers}
    for r in range(rounds):
        order = list(samplers) if r % 2 == 0 else list(reversed(samplers))
        for k in order:
            t, w = _cpu(samplers[k], r + 1)
            per[k].append(t / draws)
            waits[k].extend((w[:, 0] > 0).tolist())
    ratios = [c / m for c, m in zip(per["coupling"], per["chain"], strict=True)]
    return {"servers": S, "load": rho, "draws": draws, "rounds": rounds,
            "chain_s": statistics.median(per["chain"]),
            "coupling_s": statistics.median(per["coupling"]),
            "ratio_min": min(ratios), "ratio_median": statistics.median(ratios),
            "ratio_max": max(ratios), "p_wait_chain": float(np.mean(waits["chain"])),
            "p_wait_coupling": float(np.mean(waits["coupling"])),
            "erlang_c": ly.erlang_c(S, rho * S)}


def main(argv: list[str] | None = None) -> Rows:
    """Print the table (and write ``results/mms_start.csv`` with ``--csv``)."""
    args = sys.argv[1:] if argv is None else argv
    draws, rounds = (1, 2) if "--quick" in args else (4, 5)
    rows = [measure(S, rho, draws, rounds) for S, rho in CELLS]
    print("| S | load | chain s/draw | coupling s/draw | coupling / chain (min / median / max) "
          "| P(W0 > 0) chain, coupling, Erlang C |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['servers']} | {r['load']} | {r['chain_s']:.2e} | {r['coupling_s']:.2f} | "
              f"{r['ratio_min']:.3g} / {r['ratio_median']:.3g} / {r['ratio_max']:.3g} | "
              f"{r['p_wait_chain']:.2f}, {r['p_wait_coupling']:.2f}, {r['erlang_c']:.2f} |")
    return finish(rows, ("servers", "load"), "mms_start")


if __name__ == "__main__":
    main()
