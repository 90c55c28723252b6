"""Zero-wait load balancing: how fast P(wait) vanishes in N for JSQ, I1F, power-of-d, JIQ.

The model (Liu, Gong and Ying, *Large-system insensitivity of zero-waiting load balancing
algorithms*, 2022): ``N`` FIFO servers, each holding at most ``b`` jobs (one in service,
``b - 1`` waiting; a job routed to a full server is blocked and lost), Poisson arrivals of
total rate ``lambda N`` in the sub-Halfin-Whitt regime ``lambda = 1 - N^{-alpha}`` (spare
capacity ``N^{1 - alpha}`` servers), Coxian service of mean 1. ``W`` is the event that an
arrival is routed to a busy server (it waits or is blocked). Their Theorem 2: for
``0 < alpha < 1/2`` and every policy of the class they call LB-zero (JSQ, JIQ, idle-one-first
(I1F) and power-of-d with ``d`` of order ``N^alpha log N``), whatever the Coxian law,

    ``P(W) <= 1 / sqrt(N) + (10 mu_max + 4) / (N^{1/2 - alpha} log N) = O(N^{-(1/2 - alpha)})``.

They conjecture that the bound's conclusion (``P(W) -> 0``) holds at ``alpha = 1/2`` as well,
which their simulations at ``alpha = 1/2`` support. This study measures ``P(W)`` (column
``p_wait``, blocked arrivals included) and the blocking probability (``p_block``) for the four
policies with ``b = 10``, ``alpha`` in {0.2, 0.5, 0.8}, ``N`` from 10 to ``10^5`` and two
Coxian-2 laws of mean 1: squared coefficient of variation 1 (rates 2 and 1, continuation 1/2:
not the exponential law, but with its two first moments) and 4 (rates 2 and 1/4,
continuation 1/8), both from the two-moment fit ``mu_1 = 2, p = 1 / (2 c^2),
mu_2 = 1 / c^2``. Power-of-d takes ``d = min(N, ceil(N^alpha log N))``.

The engine and the budget
-------------------------
:func:`recursions.engines.zerowait.simulate_queues` with the exact chain on the counts ``Q[j, m]``
(servers with ``j`` jobs whose job in service is in phase ``m``): Gillespie's method, cost per
event independent of ``N``. Every run starts empty. The time the number of jobs needs to
forget its start grows with ``N`` once ``alpha > 1/2``: when every server is busy, the excess
of jobs over servers moves like a random walk with drift ``-N^{1 - alpha}`` and variance
``2 N`` per unit time, so it settles at about ``N^alpha`` jobs within about ``N^{2 alpha - 1}``
time units. The measured time is therefore ``200 tau`` with ``tau = max(1, 4 N^{2 alpha -
1})`` (``lambda N`` arrivals per unit time), at least ``8 * 10^6`` and at most ``1.6 * 10^8``
arrivals (column ``arrivals``), after a warm-up of a fifth of that (``warmup``). At
``alpha = 0.8`` the sizes stop at ``N = 10^4`` (see :data:`MAX_SIZE`).
Standard errors are batch means (32 batches); ``trend_z`` and ``lag1`` are the library's test
of the batch means of the number of jobs (:func:`recursions.inference.diagnostics.batch_check`) and
``warned`` whether ``simulate`` flagged the run (a trend, batches too correlated for honest
errors, or fewer than 256 arrivals a server). The eight rows at ``N = 10^5`` and
``alpha = 0.2`` (180 arrivals a server) were run again with their own seeds after that last
rule came: the same numbers, bit for bit, and their flags as the rule now sets them.

The reference: Erlang's delay formula
-------------------------------------
Column ``erlang_c`` is Erlang's ``C(N, lambda N)``, the probability of waiting in the M/M/N
queue with one central FIFO queue (join the least *workload*, with exponential service and
infinite buffers). At fixed ``alpha < 1/2`` it falls faster than any power of ``N`` (the
Halfin-Whitt spare capacity ``beta = N^{1/2 - alpha}`` grows, and ``C`` decays like
``exp(-beta^2 / 2)``); at ``alpha = 1/2`` it tends to the Halfin-Whitt constant (about 0.22
for ``beta = 1``); the theorem's power law is a bound, not the rate. The policies here see
queue lengths only and never move a job once it has joined a server, so a server can fall
idle while jobs wait elsewhere: they find an idle server *more* often than the central
queue, and ``P(W)`` can lie far below ``C``. It is a scale, not a prediction.

Fitted exponents (``zero_wait_fits.csv``, a second file)
--------------------------------------------------------
For each (policy, alpha, service), ``log P(W) = a + s log N`` is fitted by weighted least
squares to the sizes whose estimate is at least twice its standard error (weights
``(p / se)^2``, the delta method for ``log p``), with a 95 % interval ``s +- 1.96 se(s)``,
where ``se(s)`` from the weights is multiplied by ``sqrt(chi2 / dof)`` (column ``chi2_dof``)
when the points scatter about the line more than their errors allow; ``theorem_exponent`` is
``-(1/2 - alpha)`` and ``erlang_c_exponent`` the same fit of ``log C(N, lambda N)`` on the
same sizes and weights. A power law is only a local description here (the Erlang exponent
steepens with ``N``), so the fit says over which sizes (``n_min``, ``n_max``) it was made, and
``local_exponent`` (``local_low``, ``local_high``) is the slope between the two largest usable
sizes.

Run ``--refit`` to recompute the exponents and the figure from an existing results file
without simulating.

Run: ``python studies/zero_wait.py [--quick] [--workers K] [--seed S] [--out DIR] [--refit]``.
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
from recursions.engines import zerowait as zw

NAME = "zero_wait"
COLUMNS = ("policy", "alpha", "servers", "buffer", "service", "p_wait", "p_wait_se", "p_block",
           "p_block_se", "rate_per_server", "d", "arrivals", "warmup", "erlang_c", "trend_z",
           "lag1", "warned", "effective_batches", "trusted", "p_block_trusted")
FIT_COLUMNS = ("policy", "alpha", "service", "points", "n_min", "n_max", "exponent",
               "ci_low", "ci_high", "chi2_dof", "theorem_exponent", "erlang_c_exponent",
               "local_exponent", "local_low", "local_high")

Cox = rc.dists.Coxian
SERVICES: dict[str, Any] = {
    "Coxian SCV 1": Cox(rates=[2.0, 1.0], probs=[0.5]),
    "Coxian SCV 4": Cox(rates=[2.0, 0.25], probs=[0.125]),
}
POLICIES = ("JSQ", "I1F", "power-of-d", "JIQ")
ALPHAS = (0.2, 0.5, 0.8)
SIZES = (10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
#: at alpha = 0.8 the relaxation time 4 N^0.6 makes N > 10^4 cost more than 10^10 arrivals for
#: 200 relaxation times (N = 3000 and 10^4 already get only about 110 and 16: the budget's cap)
MAX_SIZE = {0.2: 100_000, 0.5: 100_000, 0.8: 10_000}
BUFFER = 10


def power_d(n: int, alpha: float) -> int:
    """The LB-zero power-of-d: ``d = min(N, ceil(N^alpha log N))``."""
    return min(n, math.ceil(n**alpha * math.log(n)))


def system(policy: str, n: int, alpha: float) -> Any:
    """The policy with ``n`` servers and buffer :data:`BUFFER`."""
    if policy == "JSQ":
        return zw.JSQ(n, BUFFER)
    if policy == "I1F":
        return zw.I1F(n, BUFFER)
    if policy == "power-of-d":
        return zw.PowerOfD(n, power_d(n, alpha), BUFFER)
    return rc.JIQ(n, buffer=BUFFER)


def budget(n: int, alpha: float, quick: bool) -> int:
    """Measured arrivals: ``200 tau`` time units, ``tau = max(1, 4 N^{2 alpha - 1})``."""
    if quick:
        return 200_000
    lam = zw.sub_halfin_whitt_rate(n, alpha)
    tau = max(1.0, 4.0 * n ** (2.0 * alpha - 1.0))
    return int(min(1.6e8, max(8e6, 200.0 * tau * lam * n)))


def task(policy: str, alpha: float, servers: int, service: str, arrivals: int,
         rng: Any = None) -> dict[str, Any]:
    """One point: an exact run of the counts chain from empty (module docstring)."""
    n = servers
    lam = zw.sub_halfin_whitt_rate(n, alpha)
    law = SERVICES[service]
    sysm = system(policy, n, alpha)
    warm = arrivals // 5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rc.SimulationWarning)
        res = zw.simulate_queues(sysm, rc.Poisson(lam * n, law), steps=arrivals, warmup=warm,
                                 rng=rng, engine="counts")
    warned = any(issubclass(w.category, rc.SimulationWarning) for w in caught)
    check = res.batch_check
    return {
        "buffer": BUFFER,
        "p_wait": res.p_wait.value, "p_wait_se": res.p_wait.se,
        "p_block": res.p_block.value, "p_block_se": res.p_block.se,
        "rate_per_server": lam,
        "d": power_d(n, alpha) if policy == "power-of-d" else 0,
        "arrivals": arrivals, "warmup": warm,
        "erlang_c": float(ly.erlang_c(n, lam * n)),
        "trend_z": float("nan") if check is None else float(check.trend_z),
        "lag1": float("nan") if check is None else float(check.lag1),
        "warned": warned,
        # the batch means behind p_wait's error (the study's estimate), merged until independent
        # (0: never, or no customer waited), and whether its interval is trusted
        # (SimulationResult.interval); p_block's apart: below saturation a buffer of 10 is
        # seldom full, and a run that never blocks says nothing about p_block's error
        "effective_batches": res.interval("p_wait").batches,
        "trusted": res.interval("p_wait").trusted,
        "p_block_trusted": res.interval("p_block").trusted,
    }


def fits(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fitted exponents of P(W) in N, per (policy, alpha, service) (module docstring)."""
    out = []
    for policy in dict.fromkeys(r["policy"] for r in rows):
        for alpha in dict.fromkeys(r["alpha"] for r in rows):
            for service in dict.fromkeys(r["service"] for r in rows):
                mine = [r for r in rows if r["policy"] == policy and r["alpha"] == alpha
                        and r["service"] == service]
                sel = sorted((r for r in mine
                              if r["p_wait"] > 0 and r["p_wait"] >= 2 * r["p_wait_se"]),
                             key=lambda r: r["servers"])
                nan = math.nan
                row: dict[str, Any] = {
                    "policy": policy, "alpha": alpha, "service": service, "points": len(sel),
                    "n_min": min((r["servers"] for r in sel), default=0),
                    "n_max": max((r["servers"] for r in sel), default=0),
                    "exponent": nan, "ci_low": nan, "ci_high": nan, "chi2_dof": nan,
                    "theorem_exponent": -(0.5 - alpha), "erlang_c_exponent": nan,
                    "local_exponent": nan, "local_low": nan, "local_high": nan,
                    "seconds": round(sum(r["seconds"] for r in mine), 3)}
                if len(sel) >= 2:
                    x = np.log([float(r["servers"]) for r in sel])
                    p = np.array([r["p_wait"] for r in sel])
                    rel = np.array([r["p_wait_se"] for r in sel]) / p
                    s, se, chi2 = _common.weighted_line(x, np.log(p), rel**-2)
                    logc = np.log([r["erlang_c"] for r in sel])
                    sc, _, _ = _common.weighted_line(x, logc, rel**-2)
                    # the two largest usable sizes: the slope where the data reach furthest
                    dx = x[-1] - x[-2]
                    loc = (math.log(p[-1]) - math.log(p[-2])) / dx
                    loc_se = math.hypot(rel[-1], rel[-2]) / dx
                    row.update(exponent=s, ci_low=s - 1.96 * se, ci_high=s + 1.96 * se,
                               chi2_dof=chi2, erlang_c_exponent=sc, local_exponent=loc,
                               local_low=loc - 1.96 * loc_se, local_high=loc + 1.96 * loc_se)
                out.append(row)
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a results file written by :func:`main`, with their numbers as numbers."""
    return _common.read_rows(path, ints={"servers", "buffer", "d", "arrivals", "warmup", "seed"},
                             strings={"policy", "service"})


def figure(rows: list[dict[str, Any]], path: Path) -> None:
    """Draw P(wait) against the number of servers, one panel per case, into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    alphas = list(dict.fromkeys(r["alpha"] for r in rows))
    services = list(dict.fromkeys(r["service"] for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    fig, axes = plt.subplots(len(services), len(alphas), figsize=(4.2 * len(alphas),
                             3.4 * len(services)), sharex=True, sharey=True, squeeze=False)
    for i, service in enumerate(services):
        for j, alpha in enumerate(alphas):
            ax = axes[i, j]
            for policy, marker in zip(policies, "osv^", strict=False):
                sel = sorted((r for r in rows if r["policy"] == policy and r["alpha"] == alpha
                              and r["service"] == service), key=lambda r: r["servers"])
                ns = np.array([r["servers"] for r in sel])
                p = np.array([r["p_wait"] for r in sel])
                se = np.array([r["p_wait_se"] for r in sel])
                pos = p > 0
                ax.errorbar(ns[pos], p[pos], yerr=np.minimum(1.96 * se[pos], 0.999 * p[pos]),
                            marker=marker, ms=4, capsize=2, label=policy)
                zero = ~pos
                if zero.any():
                    up = np.array([3.0 / r["arrivals"] for r in sel])[zero]
                    ax.plot(ns[zero], up, marker, mfc="none", ms=5, color="grey")
            ref = sorted((r for r in rows if r["policy"] == policies[0] and r["alpha"] == alpha
                          and r["service"] == service), key=lambda r: r["servers"])
            ns = np.array([r["servers"] for r in ref])
            ec = np.array([r["erlang_c"] for r in ref])
            ok = ec > 1e-12
            ax.plot(ns[ok], ec[ok], "k--", lw=0.8, label="Erlang C (M/M/N)")
            if ns.size:
                # the theorem's rate N^{-(1/2 - alpha)}, through the first size's bound level
                guide = np.minimum(1.0, (ns / ns[0]) ** (-(0.5 - alpha)))
                ax.plot(ns, guide, "k:", lw=0.8, label=r"$\propto N^{-(1/2-\alpha)}$")
            ax.set(xscale="log", yscale="log", ylim=(1e-9, 1.5),
                   title=f"α = {alpha}, {service}")
            ax.grid(True, which="major", lw=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("servers N")
    for ax in axes[:, 0]:
        ax.set_ylabel("P(wait or blocked)")
    axes[0, 0].legend(fontsize=7, title=f"b = {BUFFER}, 95 % CI; open: none seen",
                      title_fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the study (``--quick``: a small grid), write its CSV files and figure.

    ``--refit`` runs nothing: it reads ``NAME.csv`` from ``--out`` and rewrites the fitted
    exponents and the figure from it.
    """
    args = _common.parse(__doc__.splitlines()[0], argv, refit=True)
    if args.refit:
        rows = read_rows(Path(args.out) / f"{NAME}.csv")
        args.seed = rows[0]["seed"]
    else:
        if args.quick:
            alphas, sizes, services = (0.2, 0.5), (10, 100), ("Coxian SCV 4",)
        else:
            alphas, sizes, services = ALPHAS, SIZES, tuple(SERVICES)
        grid = [{"policy": policy, "alpha": alpha, "servers": n, "service": service,
                 "arrivals": budget(n, alpha, args.quick)}
                for policy in POLICIES for alpha in alphas for service in services
                for n in sizes if args.quick or n <= MAX_SIZE[alpha]]
        rows = _common.run(task, grid, args, name=NAME)
        _common.write(rows, COLUMNS, NAME, args)
    _common.write([{**f, "seed": args.seed} for f in fits(rows)], FIT_COLUMNS,
                  f"{NAME}_fits", args)
    figure(rows, _common.figure_path(NAME, args))
    return rows


if __name__ == "__main__":
    main()
