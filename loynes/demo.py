"""``make demo``: a stability report and figures for the seed J_{p+1}SW system (Moyal 2015).

The theory: :ref:`Theory › Stability <theory-stability-theorem-1>`.

Writes, into the output folder:

* ``report.txt`` -- ``check_stability`` for J_{p+1}SW with S = 5, p = 2, Poisson arrivals of
  rate 4 and lognormal service (mean 1, SCV 2);
* ``loynes_sequence.png`` -- the Loynes sequences of that system, its envelope, the split bound
  and JSW at the same input;
* ``stability_region.png`` -- the verdict over (load, p) for S = 5 against conditions (3) and
  (11).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import recursions as rc

from .closed_forms import critical_rate_11
from .sequence import loynes
from .stability import check_stability

S, P, RATE = 5, 2, 4.0
SERVICE = rc.dists.LogNormal(1.0, 2.0)


def run_demo(out: str | os.PathLike[str] = "demo_output", quick: bool = False) -> dict:
    """Print the seed system's report and save the figures into ``out``.

    Parameters
    ----------
    out : path-like
        Output folder (created).
    quick : bool
        A coarser stability grid (used by the tests).

    Returns
    -------
    dict
        Paths of what was written, and the verdict grid.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    inp = rc.Poisson(RATE, SERVICE)
    system = rc.JpSW(S, P)
    report = check_stability(system, inp, rng=1)
    text = str(report)
    print(text)
    (folder / "report.txt").write_text(text + "\n")

    # Loynes sequences of the system and its bounds, from the same backward draws
    fig, ax = plt.subplots(figsize=(6, 4))
    for sys_, label in ((system, f"J{P + 1}SW"), (rc.Envelope(system), "envelope Φ^p"),
                        (rc.SplitBound(S, P), "split bound"), (rc.JSW(S), "JSW")):
        res = loynes(sys_, inp, 2**14 if quick else 2**18, rng=1, stop=False)
        ax.loglog(res.horizons, np.maximum(res.total_workload, 1e-3), "o-", label=label)
    ax.set_xlabel("horizon n (customers back)")
    ax.set_ylabel("total workload of W_n at time 0")
    ax.set_title(f"Loynes sequences, S={S}, p={P}, λ={RATE}, lognormal(1, 2)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / "loynes_sequence.png", dpi=120)
    plt.close(fig)

    # stability region in (load, p)
    loads = np.linspace(0.5, 1.05, 6 if quick else 23)
    ps = np.arange(S)
    verdict = np.empty((ps.size, loads.size), dtype=object)
    for i, p in enumerate(ps):
        for j, rho in enumerate(loads):
            rep = check_stability(rc.JpSW(S, int(p)), rc.Poisson(rho * S, SERVICE), rng=1,
                                  steps=2**14 if quick else 2**16)
            verdict[i, j] = rep.verdict
    colours = {"stable": "tab:green", "unstable": "tab:red", "undecided": "tab:gray"}
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for v, c in colours.items():
        ii, jj = np.nonzero(verdict == v)
        ax.scatter(loads[jj], ps[ii], c=c, s=60, label=v)
    crit11 = [critical_rate_11(S, int(p), SERVICE) / (S / SERVICE.mean) for p in ps]
    ax.plot(crit11, ps, "k--", label="(11) boundary")
    ax.axvline(1.0, color="k", lw=1, label="(3) boundary")
    ax.set_xlabel("load ρ = λE[σ]/S")
    ax.set_ylabel("p")
    ax.set_yticks(ps)
    ax.set_title(f"J_(p+1)SW stability, S={S}, Poisson, lognormal(1, 2)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(folder / "stability_region.png", dpi=120)
    plt.close(fig)
    print(f"\nfigures written to {folder}/: loynes_sequence.png, stability_region.png")
    return {"report": folder / "report.txt", "loynes": folder / "loynes_sequence.png",
            "region": folder / "stability_region.png", "verdicts": verdict, "loads": loads}
