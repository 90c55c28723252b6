"""Moyal's conjecture: where J_{p+1}SW stops being stable, against conditions (3), (8), (11).

J_{p+1}SW with ``S`` servers sends an arrival to an idle server when there is one, and to the
server with the ``(p+1)``-th smallest workload otherwise. Moyal (*On the stability of a class
of non-monotonic systems of parallel queues*, 2015, Theorem 1) proves it stable when the
renovation condition (9) holds and

    (8)   E[sigma 1{U^p(1) > 0}] < (S - p) E[tau],

the work overflowed by the p-server loss system fed by the same arrivals is less than the
other ``S - p`` servers can do. With independent service times the left side is ``E[sigma]
P_loss``; for Poisson input ``P_loss`` is Erlang's ``B(p, a)``, ``a = lambda E[sigma]``,
whatever the service law (insensitivity), and (8) becomes

    (11)  a B(p, a) < S - p.

Above (11) the splitting picture (``S - p`` servers growing while the ``p`` smallest behave
like a loss system whose overflow they absorb) predicts linear growth, so Moyal conjectures
that (11) is the exact boundary under Markov assumptions. The paper leaves open whether it is,
and what the boundary is beyond them; (3), ``E[sigma] < S E[tau]``, is only necessary.

This study locates the boundary in the load ``rho = lambda E[sigma] / S`` by bisection on the
verdicts of :func:`loynes.check_stability`:

* STABLE comes only from Theorem 1, i.e. (8) and (9), exact for Poisson input (Erlang B) and
  tested at the check's level otherwise (simulated loss system);
* UNSTABLE comes from (3) failing (load 1 with random input: exactly) or from the one-sided
  t-test of a positive linear growth rate of the workload started high, at the check's level;
* UNDECIDED otherwise: the budget (steps per replication) is then raised, as the report's
  ``suggested`` says, up to a cap; a point still undecided at the cap is left in a grey band
  and the bisection goes on above it to shrink the unstable side.

The search starts from ``[0, 1]`` (load 0 is trivially stable, load 1 is unstable by (3)) and
stops when the bracket is narrower than the target. The result is the interval ``[ci_low,
ci_high]`` = [largest load judged STABLE, smallest load judged UNSTABLE] and its midpoint
``critical_load``. Every check of one search runs at level ``0.05 / MAX_CHECKS``, so by
Bonferroni the chance that *any* verdict of the search is wrong, and hence that the true
critical load lies outside the interval, is at most 5 %: the interval is a 95 % confidence
interval by construction, not by a normal approximation. For Poisson input the stable side
rests on a theorem with exact conditions (error 0), so ``ci_low`` is a lower bound for sure.

Condition (8) for the non-Markov cases is computed from the simulated overflow of the GI/G/p
loss system: ``g(rho) = lambda * (overflow work per customer) - (S - p)`` is estimated at two
loads either side of the candidate with common random numbers and its root found by the
secant, with a standard error from the batch-means error of ``g`` over the slope
(``condition_8_load``, ``condition_8_se``). Every non-Markov case here has Poisson arrivals or
exponential service, so (8) also has an exact value (``condition_8_exact``): Erlang B for
Poisson arrivals (insensitivity), and Takacs's formula for GI/M/p/p,
``1 / P_loss = sum_{j=0}^{p} C(p, j) prod_{i=1}^{j} (1 - phi(i mu)) / phi(i mu)`` with
``phi`` the Laplace transform of the interarrival time, which checks the simulation.

Cases: Poisson arrivals with exponential service (the Markov case) for every ``2 <= S <= 8``,
``1 <= p <= S - 1``; then deterministic and lognormal (SCV 4) service with Poisson arrivals,
and Erlang-4 and hyperexponential (balanced, SCV 4) renewal arrivals with exponential service,
all with mean service 1.

Run: ``python studies/jpsw_boundary.py [--quick] [--workers N] [--scheduler ADDRESS]``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

import loynes as ly
import recursions as rc

NAME = "jpsw_boundary"
COLUMNS = ("servers", "p", "arrivals", "service", "critical_load", "ci_low", "ci_high",
           "half_width", "condition_11_load", "condition_8_load", "condition_8_se",
           "condition_8_exact", "condition_3_load", "grey_low", "grey_high", "steps",
           "replications", "checks", "alpha_per_check", "loss_steps",
           "condition_8_batches", "condition_8_trusted")

CASES = (("poisson", "exponential"), ("poisson", "deterministic"), ("poisson", "lognormal4"),
         ("erlang4", "exponential"), ("hyperexp4", "exponential"))
MAX_CHECKS = 40
"""Checks one search may run; each runs at level ``0.05 / MAX_CHECKS`` (Bonferroni)."""

FULL = {"servers": range(2, 9), "cases": CASES, "width": 0.002, "min_steps": 2**13,
        "max_steps": 2**21, "replications": 16, "loss_steps": 2**22}
QUICK = {"servers": range(2, 4), "cases": CASES[:1] + CASES[3:4], "width": 0.03,
         "min_steps": 2**11, "max_steps": 2**14, "replications": 8, "loss_steps": 2**15}


def service_law(name: str) -> Any:
    """The service law of mean 1 called ``name``."""
    D = rc.dists
    return {"exponential": D.Exponential(1.0), "deterministic": D.Deterministic(1.0),
            "lognormal4": D.LogNormal(mean=1.0, scv=4.0)}[name]


def interarrival_law(name: str, rate: float) -> Any:
    """The interarrival law called ``name`` with mean ``1 / rate`` (``None``: Poisson)."""
    D = rc.dists
    if name == "poisson":
        return None
    if name == "erlang4":
        return D.Erlang(4, 4.0 * rate)
    if name == "hyperexp4":
        return D.HyperExponential.balanced(1.0 / rate, 4.0)
    raise ValueError(f"unknown arrivals {name!r}")


def make_input(arrivals: str, service: str, servers: int, load: float) -> rc.Input:
    """The input at load ``rho = lambda E[sigma] / S`` (``E[sigma] = 1``)."""
    rate = load * servers
    law = service_law(service)
    ia = interarrival_law(arrivals, rate)
    return rc.Poisson(rate, law) if ia is None else rc.Renewal(ia, law)


def exact_p_loss(arrivals: str, p: int, rate: float) -> float:
    """P_loss of the p-server loss system with mean service 1: Erlang B, or Takacs (GI/M/p/p).

    Erlang B is insensitive to the service law (Poisson arrivals); Takacs's formula needs
    exponential service, which every renewal-arrival case here has.
    """
    if arrivals == "poisson":
        return ly.erlang_b(p, rate)
    ia = interarrival_law(arrivals, rate)
    total, prod = 1.0, 1.0
    for j in range(1, p + 1):
        phi = float(ia.mgf(-float(j)))  # Laplace transform at j mu, mu = 1
        prod *= (1.0 - phi) / phi
        total += math.comb(p, j) * prod
    return 1.0 / total


def exact_condition_8(arrivals: str, servers: int, p: int) -> float:
    """The load at which ``lambda E[sigma] P_loss = S - p`` exactly (root by Brent)."""
    from scipy.optimize import brentq

    def g(load: float) -> float:
        rate = load * servers
        return rate * exact_p_loss(arrivals, p, rate) - (servers - p)

    hi = 2.0
    while g(hi) < 0:
        hi *= 2.0
    return float(brentq(g, 1e-9, hi, xtol=1e-12))


def simulated_condition_8(arrivals: str, service: str, servers: int, p: int, guess: float,
                          steps: int, seed: Any) -> tuple[float, float, int, bool]:
    """Root of ``lambda * overflow work per customer = S - p`` from the simulated loss system.

    ``g`` is estimated at ``guess * (1 -+ 0.02)`` with the same seed (common random numbers),
    and the root found by the secant; its standard error is the larger batch-means error of
    ``g`` divided by the slope. Also the fewer effective batches of the two runs' overflow
    intervals, and whether both are trusted (:meth:`recursions.SimulationResult.interval`).
    """
    import warnings

    pts, ivs = [], []
    for load in (guess * 0.98, guess * 1.02):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rc.SimulationWarning)
            res = rc.simulate(rc.Loss(p), make_input(arrivals, service, servers, load),
                              steps=steps, warmup=steps // 8, replications=2, rng=seed)
        ow = res.overflow_work
        ivs.append(res.interval("overflow_work"))
        rate = load * servers
        pts.append((load, rate * ow.value - (servers - p), rate * ow.se))
    (x1, g1, s1), (x2, g2, s2) = pts
    slope = (g2 - g1) / (x2 - x1)
    batches, trusted = min(iv.batches for iv in ivs), all(iv.trusted for iv in ivs)
    if not slope > 0:
        return math.nan, math.nan, batches, trusted
    return float(x1 - g1 / slope), float(max(s1, s2) / slope), batches, trusted


def search(servers: int, p: int, arrivals: str, service: str, rng: Any, *, width: float,
           min_steps: int, max_steps: int, replications: int, loss_steps: int
           ) -> dict[str, Any]:
    """Bisection on ``check_stability`` verdicts for one (S, p, arrivals, service)."""
    ss = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    seeds = ss.spawn(MAX_CHECKS + 1)
    alpha = 0.05 / MAX_CHECKS
    system = rc.JpSW(servers, p)
    lo, hi = 0.0, 1.0  # load 0: nothing arrives; load 1: (3) fails with random input
    grey: list[float] = []
    checks, used = 0, 0
    while checks < MAX_CHECKS:
        inside = [g for g in grey if lo < g < hi]
        top = max([lo, *inside])
        if hi - top > width:  # shrink the unstable side, above every grey point
            x, steps = 0.5 * (top + hi), min_steps
        elif inside and min(inside) - lo > width:  # then the stable side, below them
            x, steps = 0.5 * (lo + min(inside)), max_steps
        else:
            break
        inp = make_input(arrivals, service, servers, x)
        while True:
            rep = ly.check_stability(system, inp, rng=seeds[checks], steps=steps, horizon=64,
                                     replications=replications, alpha=alpha)
            checks += 1
            used = max(used, steps)
            if rep.verdict != "undecided" or steps >= max_steps or checks >= MAX_CHECKS:
                break
            want = int(rep.suggested.get("steps", 2 * steps))
            steps = min(max_steps, max(2 * steps, want))
        if rep.verdict == "stable":
            lo = x
        elif rep.verdict == "unstable":
            hi = x
        else:
            grey.append(x)
    grey_in = [g for g in grey if lo < g < hi]
    c11 = min(ly.critical_rate_11(servers, p, 1.0) / servers, 1.0)
    out: dict[str, Any] = {
        "critical_load": 0.5 * (lo + hi), "ci_low": lo, "ci_high": hi,
        "half_width": 0.5 * (hi - lo), "condition_11_load": c11, "condition_3_load": 1.0,
        "grey_low": min(grey_in) if grey_in else math.nan,
        "grey_high": max(grey_in) if grey_in else math.nan,
        "steps": used, "replications": replications, "checks": checks,
        "alpha_per_check": alpha,
    }
    exact8 = exact_condition_8(arrivals, servers, p)
    out["condition_8_exact"] = exact8
    if (arrivals, service) == ("poisson", "exponential"):
        out.update(condition_8_load=exact8, condition_8_se=0.0, loss_steps=0,
                   condition_8_batches=0, condition_8_trusted=True)  # exact: no interval
    else:
        v, se, nb, ok = simulated_condition_8(arrivals, service, servers, p, exact8,
                                              loss_steps, seeds[MAX_CHECKS])
        out.update(condition_8_load=v, condition_8_se=se, loss_steps=loss_steps,
                   condition_8_batches=nb, condition_8_trusted=ok)
    return out


def task(servers: int, p: int, arrivals: str, service: str, rng: Any = None, *,
         budget: dict[str, Any]) -> dict[str, Any]:
    """One grid point (what :func:`_common.run` calls)."""
    return search(servers, p, arrivals, service, rng, width=budget["width"],
                  min_steps=budget["min_steps"], max_steps=budget["max_steps"],
                  replications=budget["replications"], loss_steps=budget["loss_steps"])


def grid(budget: dict[str, Any]) -> list[dict[str, Any]]:
    """Every (S, p) with ``p >= 1`` for each case."""
    return [{"servers": s, "p": p, "arrivals": a, "service": sv}
            for a, sv in budget["cases"] for s in budget["servers"] for p in range(1, s)]


def figure(rows: list[dict[str, Any]], path: Path) -> None:
    """Critical load against p, one panel per S, with (3), (8) and (11)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    servers = sorted({r["servers"] for r in rows})
    cols = min(4, len(servers))
    nrow = math.ceil(len(servers) / cols)
    fig, axes = plt.subplots(nrow, cols, figsize=(3.3 * cols, 3.0 * nrow), squeeze=False)
    cases = list(dict.fromkeys((r["arrivals"], r["service"]) for r in rows))
    colours = dict(zip(cases, ["k", "tab:blue", "tab:green", "tab:red", "tab:purple"],
                       strict=False))
    for ax, s in zip(axes.flat, servers, strict=False):
        mine = [r for r in rows if r["servers"] == s]
        ps = sorted({r["p"] for r in mine})
        c11 = [next(r["condition_11_load"] for r in mine if r["p"] == p) for p in ps]
        ax.plot(ps, c11, "k-", marker="_", ms=14, lw=1, label="(11) Erlang B")
        ax.axhline(1.0, color="gray", ls=":", lw=1, label="(3)")
        for i, case in enumerate(cases):
            pts = sorted((r for r in mine if (r["arrivals"], r["service"]) == case),
                         key=lambda r: r["p"])
            if not pts:
                continue
            off = (i - (len(cases) - 1) / 2) * 0.08
            x = np.array([r["p"] for r in pts]) + off
            y = np.array([r["critical_load"] for r in pts])
            err = np.array([[r["critical_load"] - r["ci_low"] for r in pts],
                            [r["ci_high"] - r["critical_load"] for r in pts]])
            ax.errorbar(x, y, yerr=err, fmt="o", ms=3, color=colours[case], capsize=2,
                        label=f"{case[0]}/{case[1]}")
            if case[0] != "poisson":
                ax.plot(x, [min(r["condition_8_load"], 1.05) for r in pts], "--", marker="_",
                        ms=14, lw=1, color=colours[case], label=f"(8) {case[0]}")
        ax.set_title(f"S = {s}")
        ax.set_xlabel("p")
        ax.set_ylabel("critical load")
        ax.set_xticks(ps)
        ax.set_xlim(ps[0] - 0.5, ps[-1] + 0.5)
    seen: dict[str, Any] = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(lab, h)
    spare = list(axes.flat)[len(servers):]
    for ax in spare:
        ax.axis("off")
    where = spare[0] if spare else axes.flat[0]
    where.legend(list(seen.values()), list(seen), fontsize=7, loc="center" if spare else "best")
    fig.suptitle("J_{p+1}SW: critical load against (3), (8), (11) (the 95 % intervals are "
                 "about as wide as the markers)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Run the study: the grid, ``NAME.csv`` and ``NAME.png`` (see the module docstring)."""
    args = _common.parse(__doc__.splitlines()[0], argv)
    budget = QUICK if args.quick else FULL
    import functools

    rows = _common.run(functools.partial(task, budget=budget), grid(budget), args,
                       name=NAME)
    _common.write(rows, COLUMNS, NAME, args)
    figure(rows, _common.figure_path(NAME, args))
    for r in rows:
        print(f"S={r['servers']} p={r['p']} {r['arrivals']}/{r['service']}: "
              f"[{r['ci_low']:.4f}, {r['ci_high']:.4f}] (11) {r['condition_11_load']:.4f} "
              f"(8) {r['condition_8_load']:.4f} ± {r['condition_8_se']:.2g} "
              f"exact {r['condition_8_exact']:.4f}  {r['seconds']:.1f}s")
    return rows


if __name__ == "__main__":
    main()
