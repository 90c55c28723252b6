"""``check_stability``: is this system stable, and why (MATH.md §2)?.

The report lists every condition of the seed paper that applies, with its statement, its value
and whether it holds, and the numerical evidence behind the verdict:

* (3) ``E[sigma] < S E[tau]``: necessary for every system; necessary and sufficient for JSW
  (FCFS G/G/S) and random routing.
* (9) renovation: ``P[sigma_{-j} <= T_0 - T_{-j} for all j >= 1] > 0``, the probability that an
  infinite-server system is empty at an arrival; it gives the loss system's unique stationary
  regime (Theorem 2).
* (11) ``E[sigma] P_loss < (S - p) E[tau]`` with ``P_loss`` the p-server loss probability
  (Erlang B for Poisson input, simulated otherwise) and (8) ``E[sigma 1{U^p(1) > 0}] <
  (S - p) E[tau]``, the work the p-server loss system overflows: sufficient for J_{p+1}SW
  (Theorem 1, with (9)).
* Loynes sequences of the monotone bounds (the envelope ``Phi^p``, and the exogenous-routing
  split bound): a finite limit proves stability. A linear growth rate significantly above 0
  shows instability.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

import recursions as rc
from recursions._rng import as_seed_sequence

from .backward import LoynesResult, loynes
from .closed_forms import erlang_b
from .growth import growth_rate

__all__ = ["Condition", "StabilityReport", "check_stability", "renovation_probability"]

VERDICTS = ("stable", "unstable", "undecided")


@dataclass(frozen=True)
class Condition:
    """One condition of MATH.md, evaluated.

    Attributes
    ----------
    name : str
        Its label in the paper, e.g. ``"(3)"``.
    statement : str
        What it says, in words.
    role : str
        ``"necessary"``, ``"sufficient"``, ``"necessary and sufficient"``, ``"uniqueness"`` or
        a conjecture's status.
    value : float
        The computed left side, scaled so that the condition reads ``value < 1`` (or, for (9),
        ``value > 0``).
    se : float
        Standard error of ``value`` (0 when exact).
    holds : bool or None
        ``None`` when the estimate is within ``z`` standard errors of the threshold.
    how : str
        How ``value`` was obtained.
    """

    name: str
    statement: str
    role: str
    value: float
    se: float
    holds: bool | None
    how: str


@dataclass(frozen=True)
class StabilityReport:
    """Verdict, conditions and evidence returned by :func:`check_stability`.

    Attributes
    ----------
    system, input : str
        What was judged.
    verdict : str
        ``"stable"``, ``"unstable"`` or ``"undecided"``.
    reason : str
        One sentence: which condition or evidence decided.
    conditions : list of Condition
        Every condition that applies.
    evidence : dict
        Numbers behind the verdict (Loynes sequences, growth rates, loss statistics).
    """

    system: str
    input: str
    verdict: str
    reason: str
    conditions: list[Condition]
    evidence: dict[str, Any] = field(default_factory=dict)

    def condition(self, name: str) -> Condition:
        """The condition labelled ``name`` (e.g. ``"(11)"``)."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (JSON-serialisable)."""
        return _plain(asdict(self))

    def __str__(self) -> str:
        lines = [
            f"system : {self.system}",
            f"input  : {self.input}",
            f"verdict: {self.verdict.upper()} -- {self.reason}",
            "conditions:",
        ]
        for c in self.conditions:
            mark = {True: "holds", False: "FAILS", None: "unclear"}[c.holds]
            se = f" ± {c.se:.3g}" if c.se > 0 else ""
            lines.append(f"  {c.name:<6} [{c.role}] {c.statement}")
            lines.append(f"         value {c.value:.6g}{se}: {mark}  ({c.how})")
        if self.evidence:
            lines.append("evidence:")
            for k, v in self.evidence.items():
                lines.append(f"  {k}: {_short(v)}")
        return "\n".join(lines)


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not math.isfinite(float(x)) else float(x)
    if isinstance(x, (np.integer, np.bool_)):
        return x.item()
    return x


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list) and len(v) > 8:
        return "[" + ", ".join(_short(x) for x in v[:4]) + ", ..., " + _short(v[-1]) + "]"
    if isinstance(v, list):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return str(v)


def _judge(value: float, se: float, z: float, above: bool = False) -> bool | None:
    """Decide ``value < 1`` (``value > 0`` when ``above``) given its standard error."""
    if above:
        if value - z * se > 0:
            return True
        return False if value + z * se <= 0 else None
    if se == 0 or not math.isfinite(se):
        return bool(value < 1)
    if value + z * se < 1:
        return True
    if value - z * se > 1:
        return False
    return None


def renovation_probability(
    input: rc.Input, steps: int = 2**16, *, rng: Any = 1, batches: int = 32
) -> rc.Estimate:
    """Estimate condition (9): ``P[sigma_{-j} <= T_0 - T_{-j} for all j >= 1]``.

    The event says every earlier customer would have finished by the arrival at time 0 had it
    been served at once: an infinite-server system is empty. With ``M_{n+1} = max(M_n,
    sigma_n) - tau_n`` (the largest residual service time in that system) the event is
    ``M_0 <= 0``; its frequency over a stationary forward run estimates the probability.
    For Poisson input it equals ``exp(-lambda E[sigma])``.

    Parameters
    ----------
    input : recursions.Input
        The input.
    steps : int, default 2**16
        Arrivals observed (after ``steps // 8`` arrivals of warm-up).
    rng : int, Generator, SeedSequence or None, default 1
        Seed.
    batches : int, default 32
        Batches for the standard error.

    Returns
    -------
    recursions.Estimate

    Examples
    --------
    >>> import math, recursions as rc
    >>> est = renovation_probability(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
    >>> abs(est.value - math.exp(-1.0)) < 4 * est.se
    True
    """
    stream = input.forward(as_seed_sequence(rng))
    warm = max(steps // 8, 1)
    sig, tau = stream.next(warm + steps)
    ind = _renovation_indicators(sig, tau)[warm:]
    b = ind[: (ind.size // batches) * batches].reshape(batches, -1).mean(axis=1)
    return rc.Estimate(float(ind.mean()), float(b.std(ddof=1) / math.sqrt(batches)))


def _renovation_indicators(sig: np.ndarray, tau: np.ndarray) -> np.ndarray:
    # M_n = max residual of customers before n at the arrival of n; vectorised via the
    # running maximum of sigma_j + T_j: M_n = max_{j<n}(sigma_j + T_j) - T_n
    T = np.concatenate(([0.0], np.cumsum(tau)[:-1]))
    reach = np.maximum.accumulate(sig + T)
    M = np.concatenate(([-np.inf], reach[:-1])) - T
    return (M <= 0).astype(np.float64)


def _is_poisson(inp: rc.Input) -> bool:
    return isinstance(inp, rc.Renewal) and isinstance(inp.interarrival, rc.dists.Exponential)


def check_stability(
    system: rc.System,
    input: rc.Input,
    *,
    rng: Any = 1,
    horizon: int = 2**16,
    steps: int = 2**16,
    replications: int = 8,
    z: float = 3.0,
) -> StabilityReport:
    """Decide whether ``system`` under ``input`` is stable, stating every condition used.

    Parameters
    ----------
    system : recursions.System
        JSW, JpSW, Loss, RandomRouting, JIQ, LeastOfD, Envelope or SplitBound.
    input : recursions.Input
        Any input (Poisson, renewal, periodic, Markov-modulated).
    rng : int, Generator, SeedSequence or None, default 1
        Seed of every simulation used as evidence.
    horizon : int, default 2**16
        Cap on the backward Loynes horizons (nothing runs further back).
    steps : int, default 2**16
        Arrivals per replication for estimates (loss probabilities, growth rates).
    replications : int, default 8
        Replications for growth rates.
    z : float, default 3
        Standard errors required before a statistical estimate decides a condition.

    Returns
    -------
    StabilityReport

    Raises
    ------
    TypeError
        When ``system`` or ``input`` is not a ``recursions`` object this check knows.

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> rep = ly.check_stability(rc.JpSW(2, 1), rc.Poisson(1.5, rc.dists.Exponential(1.0)))
    >>> rep.verdict, rep.condition("(11)").holds
    ('stable', True)
    """
    if not isinstance(input, rc.Input):
        raise TypeError(f"input must be a recursions input, got {type(input).__name__}")
    known = (rc.JSW, rc.JpSW, rc.Loss, rc.RandomRouting, rc.JIQ, rc.LeastOfD, rc.Envelope,
             rc.SplitBound, rc.Redundancy)
    if not isinstance(system, known):
        raise TypeError(
            "check_stability judges JSW, JpSW, Loss, RandomRouting, JIQ, LeastOfD, Envelope, "
            f"SplitBound and Redundancy systems, got {type(system).__name__}"
        )
    if isinstance(system, rc.Redundancy):
        return _check_redundancy(system, input, rng=rng, z=z)
    if not (isinstance(z, (int, float)) and z > 0):
        raise ValueError(f"z must be a number > 0, got {z!r}")
    ss = as_seed_sequence(rng)
    seeds = iter(ss.spawn(10))
    S = system.servers
    es, et = input.mean_service, input.mean_interarrival
    rho = es / (S * et)
    cond3 = Condition(
        "(3)",
        "E[sigma] < S E[tau]: the work brought per unit time is below the S servers' capacity",
        "necessary and sufficient" if isinstance(system, (rc.JSW, rc.RandomRouting))
        or (isinstance(system, rc.JpSW) and system.p == 0) else "necessary",
        rho,
        0.0,
        bool(rho < 1),
        f"E[sigma] = {es:.6g}, E[tau] = {et:.6g}, S = {S}",
    )
    evidence: dict[str, Any] = {"load per server": rho}
    if isinstance(input, rc.Periodic):
        evidence["period"] = input.period

    def common(verdict: str, reason: str, conds: list[Condition]) -> StabilityReport:
        return StabilityReport(repr(system), repr(input), verdict, reason, conds, evidence)

    def loynes_evidence(sys_: rc.System, label: str, seed) -> LoynesResult:
        res = loynes(sys_, input, horizon, rng=seed)
        evidence[f"Loynes {label}: horizons"] = res.horizons.tolist()
        evidence[f"Loynes {label}: total workload"] = res.total_workload.tolist()
        evidence[f"Loynes {label}: stabilised"] = res.stabilised
        return res

    def growth_evidence(sys_: rc.System, seed) -> rc.Estimate:
        g = growth_rate(sys_, input, steps, replications=replications, rng=seed)
        evidence["growth per customer"] = g.value
        evidence["growth per customer se"] = g.se
        evidence["growth per unit time"] = g.value / et
        if isinstance(input, rc.Periodic):
            evidence["growth per period"] = g.value * input.period
        return g

    # -- the loss system: always bounded; (9) gives uniqueness ---------------------------
    if isinstance(system, rc.Loss):
        ren = renovation_probability(input, steps, rng=next(seeds))
        c9 = Condition("(9)", "P[sigma_-j <= T_0 - T_-j for all j >= 1] > 0 (renovation)",
                       "uniqueness", ren.value, ren.se, _judge(ren.value, ren.se, z, above=True),
                       "frequency of an empty infinite-server system at arrivals")
        reason = ("a loss system holds at most one customer per server, so its workload never "
                  "exceeds the largest current service time")
        if c9.holds:
            reason += "; (9) holds, so the stationary regime is unique (backward coupling)"
        return common("stable", reason, [c9])

    conds = [cond3]
    if not cond3.holds:
        return common("unstable", "(3) fails: more work arrives than S servers can do", conds)

    # -- JSW and random routing: (3) is exact ------------------------------------------
    exact = isinstance(system, (rc.JSW, rc.RandomRouting)) or (
        isinstance(system, rc.JpSW) and system.p == 0
    )
    if exact:
        res = loynes_evidence(system, "system", next(seeds))
        return common("stable", "(3) holds, which is necessary and sufficient for this map "
                      f"(Loynes limit {'reached' if res.stabilised else 'not reached'} by "
                      f"horizon {res.horizons[-1]})", conds)

    # -- J_{p+1}SW: (11), (8), the envelope's Loynes limit, growth ----------------------
    if isinstance(system, rc.JpSW):
        p = system.p
        cap = (S - p) * et
        loss_res = rc.simulate(rc.Loss(p), input, steps=steps, warmup=steps // 8,
                               replications=2, rng=next(seeds))
        evidence["loss system p_loss"] = loss_res.p_loss.value
        evidence["loss system overflow work per customer"] = loss_res.overflow_work.value
        if _is_poisson(input):
            a = input.offered_load
            b = erlang_b(p, a)
            c11 = Condition("(11)", f"E[sigma] P_loss < (S - p) E[tau], P_loss = B({p}, a)",
                            "sufficient (equals (8) for Poisson input)", es * b / cap, 0.0,
                            bool(es * b < cap),
                            f"Erlang B with a = {a:.6g}: P_loss = {b:.6g}")
            # i.i.d. service independent of the loss state: (8) is (11)
            c8 = Condition("(8)", "E[sigma 1{U^p(1) > 0}] < (S - p) E[tau]: overflow work",
                           "sufficient", c11.value, 0.0, c11.holds,
                           "equals (11): the service time is independent of the loss state")
            ren = rc.Estimate(math.exp(-a), 0.0)
            how9 = "Poisson input: exp(-lambda E[sigma])"
        else:
            pl = loss_res.p_loss
            c11 = Condition("(11)", "E[sigma] P_loss < (S - p) E[tau], P_loss simulated",
                            "conjectured necessary and sufficient (Markov inputs)",
                            es * pl.value / cap, es * pl.se / cap,
                            _judge(es * pl.value / cap, es * pl.se / cap, z),
                            f"stationary simulation of the {p}-server loss system")
            ow = loss_res.overflow_work
            c8 = Condition("(8)", "E[sigma 1{U^p(1) > 0}] < (S - p) E[tau]: overflow work",
                           "sufficient", ow.value / cap, ow.se / cap,
                           _judge(ow.value / cap, ow.se / cap, z),
                           f"stationary simulation of the {p}-server loss system")
            ren = renovation_probability(input, steps, rng=next(seeds))
            how9 = "frequency of an empty infinite-server system at arrivals"
        c9 = Condition("(9)", "P[sigma_-j <= T_0 - T_-j for all j >= 1] > 0 (renovation)",
                       "uniqueness", ren.value, ren.se,
                       _judge(ren.value, ren.se, z, above=True), how9)
        conds += [c9, c11, c8]
        pred = loss_res.overflow_work.value - cap
        evidence["splitting prediction of growth per customer"] = max(pred, 0.0)
        if c8.holds and c9.holds:
            return common("stable", "(8) and (9) hold (Theorem 1): the p-server loss system's "
                          "overflow is within the other S - p servers' capacity", conds)
        env = loynes_evidence(rc.Envelope(system), "envelope", next(seeds))
        if env.stabilised:
            return common("stable", "the monotone envelope Phi^p has a finite Loynes limit and "
                          "dominates J_{p+1}SW", conds)
        split = loynes_evidence(rc.SplitBound(S, p), "split bound", next(seeds))
        if split.stabilised and c8.holds is not False:
            return common("stable", "the exogenous-routing bound (a p-server loss system "
                          "overflowing to JSW on S - p servers, Theorem 1's construction) "
                          "couples backwards to a finite limit", conds)
        g = growth_evidence(system, next(seeds))
        if g.value - z * g.se > 0:
            return common("unstable", f"the workload grows linearly, {g.value:.4g} ± "
                          f"{g.se:.2g} per customer", conds)
        return common("undecided", "neither (8), the envelope's Loynes limit nor a growth rate "
                      "decided within the caps", conds)

    # -- other maps: Loynes limit for monotone ones, growth ---------------------------
    if system.monotone:
        res = loynes_evidence(system, "system", next(seeds))
        if res.stabilised:
            return common("stable", "the map is monotone and its Loynes sequence reached a "
                          f"finite limit by horizon {res.horizons[-1]}", conds)
    g = growth_evidence(system, next(seeds))
    if g.value - z * g.se > 0:
        return common("unstable", f"the workload grows linearly, {g.value:.4g} ± {g.se:.2g} "
                      "per customer", conds)
    if isinstance(system, rc.JIQ):
        env = loynes_evidence(rc.Envelope(system), "envelope", next(seeds))
        if env.stabilised:
            return common("stable", "the monotone envelope of JIQ has a finite Loynes limit",
                          conds)
    return common("undecided", "no finite Loynes limit of a monotone bound and no significant "
                  "growth within the caps", conds)


def _check_redundancy(system: rc.Redundancy, input: rc.Input, *, rng: Any, z: float
                      ) -> StabilityReport:
    """Stability of cancel-on-completion redundancy (MATH.md §5, Lemma 5 and Theorem 2).

    The system is stable below a critical rate ``lambda-bar^n = 1 / a``, ``a`` the stationary
    mean work a job adds in the free (unreflected) system, and all workloads grow together
    above it. ``1 / sum_j pi_j d_j E xi_j <= lambda-bar^n`` always (no job adds more than its
    ``d`` sizes); with i.i.d. exponential sizes the system is work-conserving and
    ``lambda-bar = 1 / sum_j pi_j k_j E xi_j`` exactly.
    """
    from recursions.redundancy import class_probs

    from .redundancy import redundancy_critical_rate

    n = system.servers
    lam = input.arrival_rate / n  # per server
    classes = system.classes
    pi = class_probs(classes)
    d_work = float(sum(p * c.d * c.mean_size for p, c in zip(pi, classes, strict=True)))
    lower = 1.0 / d_work
    conds = [Condition(
        "(d-bound)", "lambda sum_j pi_j d_j E[xi_j] < 1: even without cancellation the servers "
        "keep up", "sufficient", lam * d_work, 0.0, bool(lam * d_work < 1),
        f"lambda = {lam:.6g} per server, sum pi d E xi = {d_work:.6g}")]
    evidence: dict[str, Any] = {"arrival rate per server": lam, "lower bound of critical": lower}

    def report(verdict: str, reason: str) -> StabilityReport:
        return StabilityReport(repr(system), repr(input), verdict, reason, conds, evidence)

    if all(c.exponential for c in classes):
        k_work = float(sum(p * c.k * c.mean_size for p, c in zip(pi, classes, strict=True)))
        conds.append(Condition(
            "(exp)", "lambda sum_j pi_j k_j E[xi_j] < 1 (i.i.d. exponential sizes: "
            "work-conserving)", "necessary and sufficient", lam * k_work, 0.0,
            bool(lam * k_work < 1), "closed form"))
        ok = lam * k_work < 1
        return report("stable" if ok else "unstable", "the exponential closed form "
                      f"gives lambda-bar = {1 / k_work:.6g} per server")
    if conds[0].holds:
        return report("stable", "the d-bound holds: the load without cancellation is below 1")
    bar = redundancy_critical_rate(classes, servers=n, rng=rng)
    evidence["critical rate (free system)"] = bar.value
    evidence["critical rate se"] = bar.se
    value, se = lam / bar.value, lam * bar.se / bar.value**2
    c = Condition("(free)", "lambda < lambda-bar^n = 1/a, a the mean work a job adds in the "
                  "free (unreflected) system", "necessary and sufficient", value, se,
                  _judge(value, se, z), f"free-system simulation with {n} servers")
    conds.append(c)
    if c.holds is None:
        return report("undecided", "the rate is within z standard errors of lambda-bar^n")
    return report("stable" if c.holds else "unstable",
                  f"lambda-bar^n = {bar.value:.6g} ± {bar.se:.2g} per server "
                  f"({'above' if c.holds else 'below'} lambda = {lam:.6g})")
