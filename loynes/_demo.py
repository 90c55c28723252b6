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
import time
from pathlib import Path

import numpy as np

import recursions as rc
from loynes._closed_forms import critical_rate_11
from loynes._sequence import loynes
from loynes._stability import check_stability

S, P, RATE = 5, 2, 4.0
SERVICE = rc.dists.LogNormal(1.0, 2.0)


def _say(text: str) -> None:
    print(text, flush=True)


def run_demo(out: str | os.PathLike[str] = "demo_output", quick: bool = False) -> dict:
    """Print the seed system's report and save the figures into ``out``.

    It says what it is doing as it goes: the report, then each figure, with the seconds each
    took; the first run on a machine also compiles the numba kernels it uses (once: they are
    cached, see ``python -m loynes cache``).

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

    Examples
    --------
    ``python -m loynes demo --out demo_output`` (``make demo``) runs it; from Python,
    ``run_demo("demo_output")``.
    """
    import matplotlib

    matplotlib.use("Agg")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    if rc.cache_folders():
        _say("compiled kernels: loading them from the cache (any missing is compiled once)")
    else:
        _say("compiled kernels: none cached yet, so this first run compiles the ones it uses "
             "(a minute or two, once; later runs load them from the cache)")
    inp = rc.Poisson(RATE, SERVICE)
    system = rc.JpSW(S, P)
    t0 = time.perf_counter()
    _say(f"\n[1/3] stability report for J{P + 1}SW, S={S}, p={P}, Poisson arrivals of rate "
         f"{RATE}, lognormal service (mean 1, SCV 2) ...")
    report = check_stability(system, inp, rng=1)
    text = str(report)
    print(text)
    (folder / "report.txt").write_text(text + "\n")
    _say(f"      done in {time.perf_counter() - t0:.1f} s: {folder / 'report.txt'}")
    _loynes_figure(system, inp, folder / "loynes_sequence.png", 2**14 if quick else 2**18)
    loads, verdict = _region_figure(folder / "stability_region.png", quick)
    _say(f"\nwritten to {folder}/: report.txt, loynes_sequence.png, stability_region.png")
    return {"report": folder / "report.txt", "loynes": folder / "loynes_sequence.png",
            "region": folder / "stability_region.png", "verdicts": verdict, "loads": loads}


def _loynes_figure(system: rc.System, inp: rc.Input, path: Path, horizon: int) -> None:
    """Loynes sequences of the system and its bounds, from the same backward draws."""
    import matplotlib.pyplot as plt

    t0 = time.perf_counter()
    _say(f"\n[2/3] Loynes sequences up to horizon {horizon} of J{P + 1}SW, its envelope, the "
         "split bound and JSW ...")
    fig, ax = plt.subplots(figsize=(7, 5))
    for sys_, label in ((system, f"J{P + 1}SW (the system)"),
                        (rc.Envelope(system), "envelope Φ^p (upper bound)"),
                        (rc.SplitBound(S, P), "split bound"),
                        (rc.JSW(S), "JSW (join the shortest workload)")):
        res = loynes(sys_, inp, horizon, rng=1, stop=False)
        ax.loglog(res.horizons, np.maximum(res.total_workload, 1e-3), "o-", label=label)
    ax.set_xlabel("horizon n (customers back)")
    ax.set_ylabel("total workload of W_n at time 0")
    fig.suptitle(f"Loynes sequences: J{P + 1}SW, S={S}, p={P}, λ={RATE} (load "
                 f"{RATE * SERVICE.mean / S:.2g}), lognormal service (mean 1, SCV 2)",
                 fontsize=10)
    ax.set_title(f"J{P + 1}SW, the split bound and JSW level off: their limits exist (stable). "
                 f"The envelope\nΦ^p bounds J{P + 1}SW from above but has a smaller stability "
                 "region than Theorem 1's,\nso it may diverge, as here, while the system is "
                 "stable", fontsize=8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    _say(f"      done in {time.perf_counter() - t0:.1f} s: {path}")


def _region_figure(path: Path, quick: bool) -> tuple[np.ndarray, np.ndarray]:
    """The stability region in (load, p): ``(loads, verdicts)``, drawn into ``path``."""
    import matplotlib.pyplot as plt

    t0 = time.perf_counter()
    loads = np.linspace(0.5, 1.05, 6 if quick else 23)
    ps = np.arange(S)
    _say(f"\n[3/3] stability map: check_stability at {loads.size} loads x {ps.size} values of "
         "p ...")
    verdict = np.empty((ps.size, loads.size), dtype=object)
    for i, p in enumerate(ps):
        for j, rho in enumerate(loads):
            rep = check_stability(rc.JpSW(S, int(p)), rc.Poisson(rho * S, SERVICE), rng=1,
                                  steps=2**14 if quick else 2**16)
            verdict[i, j] = rep.verdict
    colours = {"stable": "tab:green", "unstable": "tab:red", "undecided": "tab:gray"}
    fig, ax = plt.subplots(figsize=(8, 4.6))
    for v, c in colours.items():
        ii, jj = np.nonzero(verdict == v)
        ax.scatter(loads[jj], ps[ii], c=c, s=60, label=v)
    crit11 = [critical_rate_11(S, int(p), SERVICE) / (S / SERVICE.mean) for p in ps]
    ax.plot(crit11, ps, "k--", label="(11) boundary")
    ax.axvline(1.0, color="k", lw=1, label="(3) boundary")
    ax.set_xlabel("load ρ = λE[σ]/S")
    ax.set_ylabel("p")
    ax.set_yticks(ps)
    fig.suptitle(f"Verdicts of check_stability for J_(p+1)SW, S={S}, Poisson arrivals, "
                 "lognormal service (mean 1, SCV 2)", fontsize=10)
    ax.set_title("Stable left of the (11) boundary (Theorem 1; exact for Poisson input). "
                 "The stable region\nshrinks as p grows; (3) is "
                 "necessary for every p. Grey: undecided within\nthe default budget (near "
                 "a boundary)", fontsize=8)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    _say(f"      done in {time.perf_counter() - t0:.1f} s: {path}")
    return loads, verdict
