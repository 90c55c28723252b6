"""JIQ beyond load 1/2: P(wait) and the distance to the equilibrium profile as n grows.

The model (Foss and Stolyar, *Large-scale Join-Idle-Queue system with general service times*,
2017): ``n`` servers, Poisson arrivals of total rate ``lambda n``, i.i.d. service times of law
``F`` with mean ``m``; an arrival joins an idle server if there is one, else a uniformly random
server. The state is the workload profile ``x^n_w = #{i : W_i > w} / n``. If no arrival ever
waited, the profile would sit at the equilibrium point

    ``x*_w = lambda E[(sigma - w)^+] = rho Phi^c(w)``,

``rho = lambda m`` and ``Phi^c`` the tail of the stationary residual service time (the
equilibrium law of the renewal process of service times). Their Theorem 2 proves
``x^n(inf) => x*`` as ``n -> inf`` for ``rho < 1/2``, so that the stationary probability that
an arrival is routed to a busy server (``P(wait)``) vanishes; they conjecture the same for
every ``rho < 1``. This study measures ``P(wait)`` and ``sup_w |x^n_w - x*_w|`` (over the grid
``w = 0, 0.25, ..., 4``) at loads 0.5, 0.7, 0.9, 0.95, for six service laws of mean 1 (none
of them with a decreasing hazard rate except the Pareto ones), and ``n`` from ``10^2`` to
``10^6``, on the heap engine of :mod:`recursions.engines._heap` (``O(log n)`` per arrival).

The start and the warm-up
-------------------------
Each run starts *at* the theory's profile: server ``i`` is busy with probability ``rho``,
and then holds the residual ``U sigma_hat`` (``U`` uniform, ``sigma_hat`` size-biased, which
is a draw of ``Phi``), independently of the others; so ``P(W_i > w) = x*_w`` exactly. A
quarter of the run is discarded as warm-up (column ``warmup``, arrivals). The measured part is
run as two halves, the second started from the state the first ended in (the workload vector
is a Markov state at arrival epochs for Poisson input), so the first half's ``P(wait)`` minus
the second's, in units of their joint standard error (``transient_z``, and ``sup_transient_z``
for the sup distance), measures what remains of the transient: it should look like a standard
normal draw. ``trend_z`` and ``lag1`` are the library's own test of the batch means of the
total workload (:func:`recursions.inference.diagnostics.batch_check`, over the second half);
``warned``
says whether ``rc.simulate`` raised a :class:`recursions.SimulationWarning` in either half.
The 48 rows at ``n >= 10^5`` measure fewer than 256 arrivals a server a half, under the floor
a fixed budget of JIQ is held to; they were run again with their own seeds after that rule
came (the same numbers; 15 more now say ``warned``; all were already untrusted).

Standard errors are batch means (32 batches per half), which are honest where batches are
longer than the correlation time of the number of busy servers. For light-tailed laws that is
a few mean service times; for the Pareto laws the busy count of the infinite-server system
has autocorrelation ``Phi^c(t)``, which decays like ``t^{-(shape - 1)}``: long-range dependence
for shape 1.5, so the batch-means errors there are too small by an unknown factor.

The reference: Erlang's loss formula
------------------------------------
An arrival waits exactly when every server is busy. Were such arrivals lost instead of joining
a busy server, the system would be the M/G/n/n loss system, in which an arrival finds every
server busy with probability Erlang's ``B(n, rho n)`` whatever the service law (insensitivity);
``B(n, rho n) ~ exp(-n I(rho)) / sqrt(2 pi n)`` with ``I(rho) = rho - 1 - log rho`` (Stirling:
the point mass of a Poisson(``rho n``) law at ``n``). Column ``erlang_b``. JIQ keeps the
arrivals that find all servers busy, which lengthens busy periods, so ``P(wait) / B`` measures
what keeping them costs.

Fitted decay rates (``jiq_conjecture_rates.csv``, a second file)
----------------------------------------------------------------
For each (law, load), ``log P(wait) = a - c n`` is fitted by weighted least squares to the
sizes whose estimate is at least twice its standard error (weights ``(p / se)^2``, the delta
method for ``log p``); ``rate`` is ``c`` with a 95 % interval ``c +- 1.96 se(c)``, where
``se(c)`` from the weights is multiplied by ``sqrt(chi2 / dof)`` (column ``chi2_dof``) when
the points scatter about the line more than their errors allow (with two sizes the line is
exact and only the weights say how sure it is). The same fit of ``log B(n, rho n)`` on the
same sizes and weights gives ``erlang_b_rate``. Since ``log B`` bends (its slope tends to
``-I(rho)`` only as ``n -> inf``), ``local_rate`` is the slope between the two largest usable
sizes, with its interval, beside ``erlang_b_local_rate`` on the same two sizes and
``poisson_rate``, ``I(rho)``. A row with fewer than two usable sizes has ``nan`` rates:
``P(wait)`` was too small to measure (zero waits in the budget) at all but one size.

Run ``--refit`` to recompute the rates and the figure from an existing results file without
simulating.

Run: ``python studies/jiq_conjecture.py [--quick] [--workers K] [--seed S] [--out DIR]
[--refit]``.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

import loynes as ly
import recursions as rc

NAME = "jiq_conjecture"
COLUMNS = ("law", "load", "servers", "p_wait", "p_wait_se", "sup_error", "sup_error_se",
           "arrivals", "warmup", "erlang_b", "transient_z", "sup_transient_z", "trend_z",
           "lag1", "warned", "effective_batches", "trusted")
RATE_COLUMNS = ("law", "load", "points", "n_min", "n_max", "rate", "rate_low", "rate_high",
                "chi2_dof", "erlang_b_rate", "local_rate", "local_rate_low", "local_rate_high",
                "erlang_b_local_rate", "poisson_rate")

D = rc.dists
LAWS: dict[str, Any] = {
    "deterministic": D.Deterministic(1.0),
    "Erlang-3": D.Erlang(3, mean=1.0),
    "lognormal SCV 2": D.LogNormal(1.0, 2.0),
    "lognormal SCV 10": D.LogNormal(1.0, 10.0),
    "Pareto 1.5": D.Lomax(1.5, mean=1.0),
    "Pareto 2.5": D.Lomax(2.5, mean=1.0),
}
LOADS = (0.5, 0.7, 0.9, 0.95)
SIZES = (100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000, 1_000_000)
GRID = np.linspace(0.0, 4.0, 17)


def budget(servers: int, quick: bool) -> int:
    """Measured arrivals: more where P(wait) is still measurable (small n)."""
    if quick:
        return 200_000
    return 30_000_000 if servers <= 2_000 else 16_000_000


def equilibrium_start(law: Any, load: float, n: int, gen: np.random.Generator) -> np.ndarray:
    """Workloads i.i.d. with ``P(W > w) = x*_w``: busy w.p. ``rho``, then ``U * size-biased``."""
    busy = gen.random(n) < load
    resid = gen.random(n) * law.size_biased_sample(gen, n)
    return np.where(busy, resid, 0.0)


def _z(a: float, b: float, sa: float, sb: float) -> float:
    s = math.hypot(sa, sb)
    return 0.0 if s == 0 else (a - b) / s


def task(law: str, load: float, servers: int, arrivals: int, rng: Any = None) -> dict[str, Any]:
    """One (law, load, n): two chained halves from the equilibrium profile (module docstring)."""
    dist = LAWS[law]
    n = servers
    lam = load / dist.mean
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    seeds = ss.spawn(3)
    w0 = equilibrium_start(dist, load, n, np.random.default_rng(seeds[0]))
    eq = ly.jiq_equilibrium(lam, dist)
    half = arrivals // 2
    warm = arrivals // 4
    every = max(1, min(n, half // 256))
    inp = rc.Poisson(lam * n, dist)
    kw = dict(grid=GRID, reference=eq, profile_every=every, engine="heap")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rc.SimulationWarning)
        a = rc.simulate(rc.JIQ(n), inp, steps=half, warmup=warm, w0=w0, rng=seeds[1], **kw)
        b = rc.simulate(rc.JIQ(n), inp, steps=half, w0=a.final_state[0], rng=seeds[2], **kw)
    warned = any(issubclass(w.category, rc.SimulationWarning) for w in caught)
    # the two halves together: equal numbers of arrivals, so the plain mean
    p = 0.5 * (a.p_wait.value + b.p_wait.value)
    p_se = 0.5 * math.hypot(a.p_wait.se, b.p_wait.se)
    pa, pb = a.profile(GRID), b.profile(GRID)
    x = 0.5 * (np.asarray(pa.value) + np.asarray(pb.value))
    x_se = 0.5 * np.hypot(np.asarray(pa.se), np.asarray(pb.se))
    diff = np.abs(x - eq.profile(GRID))
    k = int(np.nanargmax(diff))
    check = b.batch_check
    return {
        "p_wait": p, "p_wait_se": p_se,
        "sup_error": float(diff[k]), "sup_error_se": float(x_se[k]),
        "arrivals": 2 * half, "warmup": warm,
        "erlang_b": float(ly.erlang_b(n, load * n)),
        "transient_z": _z(a.p_wait.value, b.p_wait.value, a.p_wait.se, b.p_wait.se),
        "sup_transient_z": _z(a.sup_error.value, b.sup_error.value,
                              a.sup_error.se, b.sup_error.se),
        "trend_z": float("nan") if check is None else float(check.trend_z),
        "lag1": float("nan") if check is None else float(check.lag1),
        "warned": warned,
        # the batch means behind p_wait's error, merged until independent (0: never), and
        # whether both halves' intervals are trusted (SimulationResult.interval)
        "effective_batches": min(a.interval("p_wait").batches, b.interval("p_wait").batches),
        "trusted": a.interval("p_wait").trusted and b.interval("p_wait").trusted,
    }


def rates(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fitted exponential decay rates of P(wait) in n, per (law, load) (module docstring)."""
    out = []
    for law in dict.fromkeys(r["law"] for r in rows):
        for load in dict.fromkeys(r["load"] for r in rows):
            sel = sorted((r for r in rows if r["law"] == law and r["load"] == load
                          and r["p_wait"] > 0 and r["p_wait"] >= 2 * r["p_wait_se"]),
                         key=lambda r: r["servers"])
            nan = math.nan
            row: dict[str, Any] = {"law": law, "load": load, "points": len(sel),
                                   "n_min": min((r["servers"] for r in sel), default=0),
                                   "n_max": max((r["servers"] for r in sel), default=0),
                                   "rate": nan, "rate_low": nan, "rate_high": nan,
                                   "chi2_dof": nan, "erlang_b_rate": nan,
                                   "local_rate": nan, "local_rate_low": nan,
                                   "local_rate_high": nan, "erlang_b_local_rate": nan,
                                   "poisson_rate": load - 1.0 - math.log(load)}
            if len(sel) >= 2:
                ns = np.array([float(r["servers"]) for r in sel])
                p = np.array([r["p_wait"] for r in sel])
                rel = np.array([r["p_wait_se"] for r in sel]) / p
                w = rel**-2
                logb = np.log([r["erlang_b"] for r in sel])
                b, se, chi2 = _common.weighted_line(ns, np.log(p), w)
                bb, _, _ = _common.weighted_line(ns, logb, w)
                # the two largest usable sizes: the rate where the data reach furthest
                dn = ns[-1] - ns[-2]
                loc = -(math.log(p[-1]) - math.log(p[-2])) / dn
                loc_se = math.hypot(rel[-1], rel[-2]) / dn
                row.update(rate=-b, rate_low=-b - 1.96 * se, rate_high=-b + 1.96 * se,
                           chi2_dof=chi2, erlang_b_rate=-bb, local_rate=loc,
                           local_rate_low=loc - 1.96 * loc_se,
                           local_rate_high=loc + 1.96 * loc_se,
                           erlang_b_local_rate=-(logb[-1] - logb[-2]) / dn)
            row["seconds"] = round(sum(r["seconds"] for r in rows
                                       if r["law"] == law and r["load"] == load), 3)
            out.append(row)
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`main`, with their numbers as numbers."""
    return _common.read_rows(path, ints={"servers", "arrivals", "warmup", "seed"},
                             strings={"law"})


def figure(rows: list[dict[str, Any]], path: Path) -> None:
    """Draw P(wait) against the number of servers, one panel per case, into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    laws = list(dict.fromkeys(r["law"] for r in rows))
    loads = list(dict.fromkeys(r["load"] for r in rows))
    cols = 3
    nrow = math.ceil(len(laws) / cols)
    fig, axes = plt.subplots(nrow, cols, figsize=(4.2 * cols, 3.4 * nrow), sharex=True,
                             sharey=True, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, law in zip(axes.flat, laws, strict=False):
        for c, load in zip(colours, loads, strict=False):
            sel = sorted((r for r in rows if r["law"] == law and r["load"] == load),
                         key=lambda r: r["servers"])
            ns = np.array([r["servers"] for r in sel])
            p = np.array([r["p_wait"] for r in sel])
            se = np.array([r["p_wait_se"] for r in sel])
            pos = p > 0
            ax.errorbar(ns[pos], p[pos], yerr=np.minimum(1.96 * se[pos], 0.999 * p[pos]),
                        color=c, marker="o", ms=4, capsize=2, label=f"ρ = {load}")
            # no wait seen: at most about 3 / arrivals (drawn as an open triangle)
            zero = ~pos
            if zero.any():
                up = np.array([3.0 / r["arrivals"] for r in sel])[zero]
                ax.plot(ns[zero], up, "v", color=c, mfc="none", ms=5)
            eb = np.array([r["erlang_b"] for r in sel])
            ok = eb > 1e-12
            ax.plot(ns[ok], eb[ok], "--", color=c, lw=0.8)
        ax.set(xscale="log", yscale="log", title=law, ylim=(1e-9, 1.0))
        ax.grid(True, which="major", lw=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("servers n")
    for ax in axes[:, 0]:
        ax.set_ylabel("P(wait)")
    for ax in axes.flat[len(laws):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7, title="JIQ, 95 % CI; -- Erlang B; ▽ no wait seen",
                        title_fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the study (``--quick``: a small grid), write its CSV files and figure.

    ``--refit`` runs nothing: it reads ``NAME.csv`` from ``--out`` and rewrites the fitted
    rates and the figure from it.
    """
    args = _common.parse(__doc__.splitlines()[0], argv, refit=True)
    if args.refit:
        rows = read_rows(Path(args.out) / f"{NAME}.csv")
        args.seed = rows[0]["seed"]
    else:
        if args.quick:
            laws, loads, sizes = ("deterministic", "Pareto 1.5"), (0.7, 0.95), (100, 1_000)
        else:
            laws, loads, sizes = tuple(LAWS), LOADS, SIZES
        grid = [{"law": law, "load": load, "servers": n, "arrivals": budget(n, args.quick)}
                for law in laws for load in loads for n in sizes]
        rows = _common.run(task, grid, args, name=NAME)
        _common.write(rows, COLUMNS, NAME, args)
    _common.write([{**f, "seed": args.seed} for f in rates(rows)], RATE_COLUMNS,
                  f"{NAME}_rates", args)
    figure(rows, _common.figure_path(NAME, args))
    return rows


if __name__ == "__main__":
    main()
