"""Redundancy stability: the critical rate of (d, k) cancel-on-completion against mean field.

A job sends ``d`` components to ``d`` of the ``n`` servers chosen uniformly at random and is
done when ``k`` of them finish; the other ``d - k`` are cancelled, waiting or in service.
Jobs arrive at rate ``lambda n`` (``lambda`` is the rate per server) and each server serves
its own components FCFS at unit speed. Stolyar (*Parallel server systems with
cancel-on-completion redundancy*, Lemma 5 and Theorem 2) shows that for fixed ``n`` there is
a critical rate ``lambda-bar^n``: the system is stable below it and all workloads grow
together above it. It is identified through the *free* system, in which workloads are not
regulated at zero: only their relative positions matter, they form a Markov chain whose law
does not depend on ``lambda``, and with ``a`` the stationary mean work a job adds to it,

    lambda-bar^n = 1 / a.

The work a job brings depends on the workloads it meets, so the system is not
work-conserving and ``lambda-bar^n`` depends on the size law beyond its mean. For i.i.d.
exponential sizes memorylessness gives ``lambda-bar = 1 / (k E[xi])`` exactly at every ``n``;
for other laws the paper's mean-field fixed point (the fraction ``x_w`` of servers with
workload above ``w``) gives the limit ``lambda-bar`` as ``n -> infinity``, which its theorems
justify for increasing-hazard-rate (IHR) sizes (D-monotone decreasing classes) and leave open
for decreasing-hazard-rate (DHR) sizes. Cancelling the slower copies of DHR sizes removes
more work than the extra copies add, so DHR redundancy can be stable beyond the
work-conserving value ``lambda k E[xi] = 1`` (for ``k = 1``: beyond ``lambda = 1``), while
IHR redundancy costs capacity.

This study estimates ``lambda-bar^n`` for ``(d, k)`` in {(2,1), (3,1), (3,2), (4,2), (10,3)},
sizes of mean 1 with increasing (Erlang-3), constant (exponential) and decreasing
(hyperexponential, balanced, SCV 4) hazard rate, and ``n`` from 10 to 10^4, against the
mean-field value (:func:`loynes.redundancy_critical_rate` with ``servers=None``: the
exponential closed form, or the rate at which the fixed point has load 0.99 and 0.995,
extrapolated to load 1, with the extrapolation step as its error).

How the interval is made. ``check_stability`` decides redundancy with non-exponential sizes
by estimating ``lambda-bar^n`` from the free system and testing ``lambda < lambda-bar^n``
(the ratio ``lambda / lambda-bar^n`` against 1, with its standard error and the normal
quantile). The 95 % interval here is the set of rates that this same test, run two-sided at
level 5 %, does not reject: ``[lambda-bar / (1 + z s), lambda-bar / (1 - z s)]`` with ``z =
1.96`` and ``s`` the relative standard error of ``lambda-bar``. The estimate pools
``REPLICATIONS`` independent free-system runs (independent seeds, each with its own warm-up
of ``100 n`` jobs and 32 batches); the standard error is that of the mean of all the batch
means together, so a difference between runs (an unfinished warm-up) widens it. The
exponential rows, whose value ``1 / k`` is exact, check the coverage. Each row also has
``effective_batches`` and ``trusted``: the same 32 batches a run, pooled over the runs and
merged until they pass the test of independence that ``rc.simulate`` asks of its intervals
(:func:`recursions.inference._batch_means.interval`); ``trusted`` false flags a row whose batch
means stayed correlated, so whose standard error the run-until-precise procedure would not
trust. ``critical_se`` (and the interval) rest on all 128 batch means; ``merged_se`` is the
standard error of ``lambda-bar^n`` from the ``effective_batches`` merged ones (delta method),
which is larger where the test had to merge before it passed.

Run: ``python studies/redundancy_critical.py [--quick] [--workers N] [--scheduler ADDRESS]``.
"""

from __future__ import annotations

import functools
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

import loynes as ly
import recursions as rc
from recursions.inference._batch_means import Interval, interval
from recursions.model.redundancy import JobClass, Redundancy, free_system_sample

NAME = "redundancy_critical"
COLUMNS = ("d", "k", "size_law", "servers", "critical_rate", "ci_low", "ci_high",
           "critical_se", "mean_field", "mean_field_se", "exact", "normalized_rate",
           "beyond_work_conserving", "jobs", "warmup", "replications", "effective_batches",
           "trusted", "merged_se")

PAIRS = ((2, 1), (3, 1), (3, 2), (4, 2), (10, 3))
LAWS = ("ihr", "chr", "dhr")
BATCHES = 32
Z = 1.959963984540054  # two-sided 5 %

FULL = {"pairs": PAIRS, "laws": LAWS,
        "servers": (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000),
        "jobs": 10**6, "replications": 4}
QUICK = {"pairs": ((2, 1), (3, 2)), "laws": ("ihr", "dhr"), "servers": (10, 50, 100, 200),
         "jobs": 2 * 10**4, "replications": 2}


def law_of(name: str) -> Any:
    """The component size law of mean 1: IHR Erlang-3, CHR exponential, DHR H2 (SCV 4)."""
    D = rc.dists
    return {"ihr": D.Erlang(3, 3.0), "chr": D.Exponential(1.0),
            "dhr": D.HyperExponential.balanced(1.0, 4.0)}[name]


def free_system_rate(d: int, k: int, law: str, servers: int, jobs: int, replications: int,
                     rng: Any) -> tuple[float, float, int, Interval]:
    """``lambda-bar^n = 1 / a`` from ``replications`` independent free-system runs.

    Returns the estimate, its standard error (delta method from the pooled batch means), the
    warm-up per run, and the library's interval of ``a`` from the same batches
    (:func:`recursions.inference._batch_means.interval`: its ``batches`` are the effective number
    of independent batch means, its ``trusted`` whether they passed the test of independence
    that ``rc.simulate``'s run-until-precise mode asks of its own intervals).
    """
    system = Redundancy(servers, [JobClass(d, k, law_of(law))])
    warmup = 100 * servers
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    means, within, sums, sizes = [], [], [], []
    for seed in ss.spawn(replications):
        x = free_system_sample(system, jobs, warmup=warmup, rng=seed)
        parts = np.array_split(x, BATCHES)
        means.append(float(x.mean()))
        within.append(float(np.var([b.mean() for b in parts], ddof=1)))  # one batch mean's
        sums.append([b.sum() for b in parts])
        sizes.append([b.size for b in parts])
    m = np.asarray(means)
    total = replications * BATCHES
    # variance of all batch means pooled: within-run spread plus between-run spread
    var = (sum((BATCHES - 1) * v for v in within)
           + BATCHES * float(((m - m.mean()) ** 2).sum())) / (total - 1)
    a = float(m.mean())
    se_a = math.sqrt(var / total)
    iv = interval(np.asarray(sums), np.asarray(sizes, dtype=float), statistic="a")
    return 1.0 / a, se_a / a**2, warmup, iv


_MEAN_FIELD: dict[tuple[int, int, str], Any] = {}


def mean_field(d: int, k: int, law: str) -> Any:
    """The mean-field critical rate (one computation per (d, k, law) in each process).

    A plain dictionary, not ``functools.cache``: the cache's wrapper of a function defined in
    ``__main__`` is pickled by reference, which a Dask worker (``--scheduler``) cannot load.
    """
    key = (d, k, law)
    if key not in _MEAN_FIELD:
        _MEAN_FIELD[key] = ly.redundancy_critical_rate([JobClass(d, k, law_of(law))])
    return _MEAN_FIELD[key]


def task(d: int, k: int, size_law: str, servers: int, rng: Any = None, *,
         budget: dict[str, Any]) -> dict[str, Any]:
    """One grid point: the free-system estimate, its interval and the mean-field value."""
    law = size_law
    rate, se, warmup, iv = free_system_rate(d, k, law, servers, budget["jobs"],
                                            budget["replications"], rng)
    s = se / rate
    lo = rate / (1.0 + Z * s)
    hi = rate / (1.0 - Z * s) if Z * s < 1 else math.inf
    mf = mean_field(d, k, law)
    exact = 1.0 / k if law == "chr" else math.nan
    return {"critical_rate": rate, "ci_low": lo, "ci_high": hi, "critical_se": se,
            "mean_field": mf.value, "mean_field_se": mf.se, "exact": exact,
            "normalized_rate": rate * k, "beyond_work_conserving": bool(lo * k > 1.0),
            "jobs": budget["jobs"] * budget["replications"], "warmup": warmup,
            "replications": budget["replications"], "effective_batches": iv.batches,
            "trusted": iv.trusted, "merged_se": iv.se * rate**2}


FIT_MIN_SERVERS = 50
FIT_COLUMNS = ("d", "k", "size_law", "n_min", "limit", "limit_se", "c", "c_se", "chi2", "dof",
               "p_value", "mean_field", "mean_field_se")


def fits(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Weighted least squares of ``lambda-bar^n = lambda-bar + c / n`` over ``n >= 50``.

    The weights are the inverse variances of the estimates; ``chi2`` on ``dof`` degrees of
    freedom (and its ``p_value``) says whether the ``1 / n`` law fits within the errors.
    """
    from scipy.stats import chi2 as chi2_law

    out = []
    for d, k, law in dict.fromkeys((r["d"], r["k"], r["size_law"]) for r in rows):
        sel = [r for r in rows if (r["d"], r["k"], r["size_law"]) == (d, k, law)
               and r["servers"] >= FIT_MIN_SERVERS]
        if len(sel) < 3:
            continue
        n = np.array([float(r["servers"]) for r in sel])
        y = np.array([r["critical_rate"] for r in sel])
        w = np.array([1.0 / r["critical_se"] ** 2 for r in sel])
        X = np.column_stack([np.ones_like(n), 1.0 / n])
        cov = np.linalg.inv(X.T @ (X * w[:, None]))
        beta = cov @ (X.T @ (w * y))
        chi2 = float((w * (y - X @ beta) ** 2).sum())
        dof = len(sel) - 2
        out.append({"d": d, "k": k, "size_law": law, "n_min": FIT_MIN_SERVERS,
                    "limit": float(beta[0]), "limit_se": float(math.sqrt(cov[0, 0])),
                    "c": float(beta[1]), "c_se": float(math.sqrt(cov[1, 1])), "chi2": chi2,
                    "dof": dof, "p_value": float(chi2_law.sf(chi2, dof)),
                    "mean_field": sel[0]["mean_field"], "mean_field_se": sel[0]["mean_field_se"],
                    "seed": sel[0]["seed"],
                    "seconds": round(sum(r["seconds"] for r in rows
                                         if (r["d"], r["k"], r["size_law"]) == (d, k, law)), 3)})
    return out


def grid(budget: dict[str, Any]) -> list[dict[str, Any]]:
    """Every (d, k), size law and n."""
    return [{"d": d, "k": k, "size_law": law, "servers": n}
            for d, k in budget["pairs"] for law in budget["laws"] for n in budget["servers"]]


def figure(rows: list[dict[str, Any]], path: Path, table: list[dict[str, Any]]) -> None:
    """Top: ``k lambda-bar^n`` against n per (d, k), one line per size law, mean field dashed.

    Bottom: ``n (lambda-bar^n - lambda-bar)`` with ``lambda-bar`` the limit of the fit
    ``lambda-bar + c / n`` (:func:`fits`): flat where the ``1 / n`` law holds, at height ``c``
    (points whose interval times ``n`` exceeds 0.5 are left out: they show only noise).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = list(dict.fromkeys((r["d"], r["k"]) for r in rows))
    fig, axes = plt.subplots(2, len(pairs), figsize=(3.2 * len(pairs), 6.2), squeeze=False,
                             sharex=True)
    colours = {"ihr": "tab:blue", "chr": "k", "dhr": "tab:red"}
    names = {"ihr": "IHR Erlang-3", "chr": "exponential", "dhr": "DHR H2 scv 4"}
    for col, (d, k) in enumerate(pairs):
        top, bottom = axes[0][col], axes[1][col]
        for law in dict.fromkeys(r["size_law"] for r in rows):
            pts = sorted((r for r in rows if (r["d"], r["k"], r["size_law"]) == (d, k, law)),
                         key=lambda r: r["servers"])
            if not pts:
                continue
            n = np.array([float(r["servers"]) for r in pts])
            y = np.array([r["critical_rate"] for r in pts])
            err = np.array([[r["critical_rate"] - r["ci_low"] for r in pts],
                            [r["ci_high"] - r["critical_rate"] for r in pts]])
            top.errorbar(n, y * k, yerr=err * k, fmt="o-", ms=3, lw=1, capsize=2,
                         color=colours[law], label=names[law])
            top.axhline(pts[0]["mean_field"] * k, color=colours[law], ls="--", lw=0.8)
            fit = next((f for f in table if (f["d"], f["k"], f["size_law"]) == (d, k, law)),
                       None)
            if fit is not None:
                keep = n * err.max(axis=0) <= 0.5  # beyond, n times the error swamps c
                bottom.errorbar(n[keep], (n * (y - fit["limit"]))[keep], yerr=(n * err)[:, keep],
                                fmt="o-", ms=3, lw=1, capsize=2, color=colours[law])
                bottom.axhline(fit["c"], color=colours[law], lw=0.5)
        top.axhline(1.0, color="gray", ls=":", lw=1)
        top.set_title(f"(d, k) = ({d}, {k})")
        bottom.axhline(0.0, color="gray", ls=":", lw=1)
        bottom.set_xscale("log")
        bottom.set_xlabel("servers n")
        bottom.set_ylim(-0.6, 0.6)
    axes[0][0].set_ylabel("k × critical rate per server")
    axes[1][0].set_ylabel("n × (λ̄ⁿ − fitted limit)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Redundancy: critical rate λ̄ⁿ (95 % intervals) against mean field (dashed); "
                 "below, its 1/n approach")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the study: the grid, ``NAME.csv`` and ``NAME.png`` (see the module docstring)."""
    args = _common.parse(__doc__.splitlines()[0], argv)
    budget = QUICK if args.quick else FULL
    rows = _common.run(functools.partial(task, budget=budget), grid(budget), args,
                       name=NAME)
    _common.write(rows, COLUMNS, NAME, args)
    table = fits(rows)
    _common.write(table, FIT_COLUMNS, f"{NAME}_fits", args)
    figure(rows, _common.figure_path(NAME, args), table)
    for r in rows:
        print(f"({r['d']},{r['k']}) {r['size_law']} n={r['servers']}: "
              f"{r['critical_rate']:.5f} [{r['ci_low']:.5f}, {r['ci_high']:.5f}] "
              f"mean field {r['mean_field']:.5f} ± {r['mean_field_se']:.2g}  "
              f"{r['seconds']:.1f}s")
    for f in table:
        print(f"({f['d']},{f['k']}) {f['size_law']}: limit {f['limit']:.5f} ± "
              f"{f['limit_se']:.1g} + ({f['c']:.3f} ± {f['c_se']:.1g}) / n, chi2 "
              f"{f['chi2']:.1f}/{f['dof']}; mean field {f['mean_field']:.5f} ± "
              f"{f['mean_field_se']:.1g}")
    return rows


if __name__ == "__main__":
    main()
