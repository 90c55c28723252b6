"""Stability checks, one short function per family of systems.

Each system belongs to a family (:func:`loynes._families.family_of`, by its class and, for
some, its parameters); :func:`check_stability` runs the function registered for it. The
rules every family follows:

* **STABLE** only from a theorem whose conditions hold (exactly, or by a test at a stated
  level), never from a Loynes plateau.
* **UNSTABLE** only from a failed necessary condition: condition (3) (a load above 1, or
  exactly 1 with i.i.d. random input), the split bound's (8), the redundancy closed form for
  exponential sizes or the free-system test of ``lambda < lambda-bar^n``; or from a linear
  growth rate that a one-sided t-test finds positive at the check's level.
* **UNDECIDED** otherwise, with the budget that would likely decide.

A family declares how many statistical tests it may run; each runs at level ``alpha / m``
(Bonferroni), so the chance that *any* test of one check errs is at most ``alpha``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import recursions as rc
from loynes._basis import Basis
from loynes._closed_forms import erlang_b
from loynes._growth import growth_rate
from loynes._renovation import renovation_probability
from loynes._report import Condition, StabilityReport
from loynes._sequence import loynes
from recursions.model import is_poisson, is_renewal

__all__ = ["FAMILIES", "Check", "register"]


@dataclass
class Check:
    """The state of one stability check: inputs, budget, level, and what was found.

    Attributes
    ----------
    system, input
        What is judged.
    horizon, steps, replications : int
        Budget: Loynes horizon cap, arrivals per estimate, replications of the growth test.
    alpha : float
        Level of the whole check.
    seeds : iterator of numpy.random.SeedSequence
        Independent seeds, one per simulation.
    tests : int
        Statistical tests this family may run (each at ``alpha / tests``).
    conditions, evidence
        Collected as the check goes.
    """

    system: Any
    input: rc.Input
    horizon: int
    steps: int
    replications: int
    alpha: float
    seeds: Iterator[Any]
    tests: int = 1
    conditions: list[Condition] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def level(self) -> float:
        """Level of each statistical test."""
        return self.alpha / max(self.tests, 1)

    @property
    def z(self) -> float:
        """One-sided normal quantile of :attr:`level`."""
        from scipy.stats import norm

        return float(norm.isf(self.level))

    def report(self, verdict: str, basis: Basis, suggested: dict[str, Any] | None = None
               ) -> StabilityReport:
        """The report, with every condition and piece of evidence gathered so far."""
        return StabilityReport(repr(self.system), repr(self.input), verdict, basis.detail,
                               list(self.conditions), dict(self.evidence), basis, self.alpha,
                               suggested or {})

    def quantile(self, df: int | None = None) -> float:
        """One-sided quantile at :attr:`level`: normal, or Student's ``t`` with ``df``."""
        if df is None:
            return self.z
        from scipy.stats import t as student

        return float(student.isf(self.level, df))

    def judge(self, value: float, se: float, above: bool = False, *, exact: bool = False,
              df: int | None = None, ulps: float | None = None) -> bool | None:
        """Decide ``value < 1`` (``value > 0`` when ``above``).

        ``exact`` says the value is a closed form and is compared as it is, except that a
        value within ``ulps`` roundings of 1 but not 1 itself (:func:`near_one`; default
        :data:`RESOLUTION_ULPS`) decides nothing (``None``); exactly 1 is not below 1.
        Otherwise it is
        an estimate, tested at :attr:`level` with the normal quantile or, given ``df``,
        Student's ``t`` (batch means). An estimate whose standard error is not a positive
        finite number decides nothing (``None``): a zero error from a short run is no proof.
        """
        if exact:
            if above:
                return bool(value > 0)
            if near_one(value, RESOLUTION_ULPS if ulps is None else ulps):
                return None
            return bool(value < 1)
        if not (math.isfinite(se) and se > 0 and math.isfinite(value)):
            return None
        q = self.quantile(df)
        if above:
            return True if value - q * se > 0 else (False if value + q * se <= 0 else None)
        if value + q * se < 1:
            return True
        return False if value - q * se > 1 else None


FAMILIES: dict[str, tuple[Callable[[Check], int], Callable[[Check], StabilityReport]]] = {}
"""Family name -> (number of tests it may run, the check)."""


Family = Callable[[Check], StabilityReport]


def register(name: str, tests: Callable[[Check], int]) -> Callable[[Family], Family]:
    """Register the check of a family, with the number of tests it may run.

    Parameters
    ----------
    name : str
        The family (what :func:`loynes._families.family_of` gives its systems).
    tests : callable
        ``Check -> int``: statistical tests the check may run (for Bonferroni).

    Returns
    -------
    callable
        A decorator.
    """
    def deco(fn: Callable[[Check], StabilityReport]) -> Callable[[Check], StabilityReport]:
        FAMILIES[name] = (tests, fn)
        return fn

    return deco


RESOLUTION_ULPS = 16
"""A closed-form value within this many units in the last place (``eps = 2**-52``) of 1 is
within the rounding of its own computation.

The load ``E[sigma] / (S E[tau])`` is computed from float means (each one or a few roundings
from the user's parameters, which are themselves rounded decimals) and one product and one
division: ``|rho - 1| <= 16 eps`` is ``|E[sigma] - S E[tau]| <= 16 eps S E[tau]``, the
magnitude of the two sides times a few of their roundings. Such a value may be 1, or just on
either side of it in the user's exact arithmetic, so it decides nothing."""


def near_one(value: float, ulps: float = RESOLUTION_ULPS) -> bool:
    """Whether ``value`` is within floating-point resolution of 1 but not exactly 1.

    Parameters
    ----------
    value : float
        A closed-form ratio (a load, or a condition's left side over its right side).
    ulps : float, default RESOLUTION_ULPS
        Roundings its computation may carry, in units of ``eps``.

    Returns
    -------
    bool

    Examples
    --------
    >>> near_one(3 * 0.3 / (0.1 + 0.2) / 3), near_one(1.0), near_one(1 - 1e-12)
    (True, False, False)
    """
    return value != 1.0 and abs(value - 1.0) <= ulps * _EPS


_EPS = 2.0**-52


def _random_renewal(inp: rc.Input) -> bool:
    return is_renewal(inp) and (inp.service.var + inp.interarrival.var) > 0


# -- shared pieces ------------------------------------------------------------------------
def condition_3(chk: Check, role: str = "necessary") -> Condition:
    """Condition (3), ``E[sigma] < S E[tau]``, as a condition of the check."""
    S, es, et = chk.system.capacity, chk.input.mean_service, chk.input.mean_interarrival
    rho = es / (S * et)
    c3 = Condition("(3)", "E[sigma] < S E[tau]: the work brought per unit time is below the "
                   "S servers' capacity", role, rho, 0.0,
                   None if near_one(rho) else bool(rho < 1),
                   f"E[sigma] = {es:.6g}, E[tau] = {et:.6g}, S = {S:g}")
    chk.conditions.append(c3)
    chk.evidence["load per server"] = rho
    if chk.input.period is not None:
        chk.evidence["period"] = chk.input.period
    return c3


def fails_3(chk: Check, c3: Condition) -> StabilityReport | None:
    """The verdict when (3) fails or is within rounding of 1 (``None`` when it holds).

    A load within :data:`RESOLUTION_ULPS` roundings of 1 but not exactly 1 (a rate written
    as ``3 * 0.3 / (0.1 + 0.2)``, 2.9999999999999996, gives ``1 - 1.5e-16``) is UNDECIDED:
    the rounding of the means, not the model, put it on its side. A load computed as exactly
    1 is load 1 (UNSTABLE for i.i.d. random input); any other load is taken as it is.
    """
    if near_one(c3.value):
        return chk.report("undecided", Basis(
            "none", "none", math.nan,
            f"load {c3.value!r} is within floating-point resolution of 1 "
            f"(|E[sigma] - S E[tau]| <= {RESOLUTION_ULPS} eps S E[tau], the roundings of the "
            "means, product and division that compute it): whether the exact load is below, "
            "at or above 1 is not decided by (3); give the rates so that the load is exact "
            "or clear of 1"))
    if c3.value < 1:
        return None
    if c3.value > 1:
        return chk.report("unstable", Basis(
            "theorem", "condition-3-fails", 0.0,
            "(3) fails: more work arrives than the S servers can do, so the workload grows "
            "linearly"))
    if _random_renewal(chk.input):
        return chk.report("unstable", Basis(
            "theorem", "condition-3-fails", 0.0,
            "load exactly 1 (computed as 1.0) with i.i.d. random input: the workload is not "
            "tight (null recurrent), so there is no stationary regime"))
    return chk.report("undecided", Basis(
        "none", "none", math.nan, "load exactly 1 (computed as 1.0) with a non-random or "
        "dependent input: (3) holds with equality and decides nothing"))


def _increment_variance(chk: Check) -> float:
    """Asymptotic variance per customer of ``sigma - S tau`` (exact for renewal input)."""
    S, inp = chk.system.capacity, chk.input
    if is_renewal(inp):
        return float(inp.service.var + S * S * inp.interarrival.var)
    sig, tau = inp.sample(2**16, rng=next(chk.seeds))
    batch = (sig - S * tau).reshape(64, -1).mean(axis=1)  # batch means: correlations in
    return float(batch.var(ddof=1) * sig.size / 64)


def growth_start(chk: Check) -> tuple[float, float]:
    """The growth test's initial work per server, and the least start it needs.

    From empty a stable system is still filling up, so near saturation the increment over
    a run is biased up by the reflection at 0. Started with ``c`` on each of the ``n``
    servers, the total workload ``n c`` must lie several standard deviations of the run's
    fluctuation ``sqrt(steps v)`` above 0 for the reflection to stay unseen (``v`` the
    variance per customer of ``sigma - C tau``, ``C`` the capacity), so ``c >= 6 sqrt(steps
    v) / n``; and at least ``steps E[tau] s / 16`` with ``s = C / n`` the speed of a server.
    A start above ``steps E[tau] s / 4`` would not be gone within the burn-in of ``steps /
    2`` arrivals for a map whose instability needs idle servers (the idle-first block of
    J_{p+1}SW), so the test is not run then (:func:`growth_test`).
    """
    v = _increment_variance(chk)
    if not math.isfinite(v):  # infinite variance: no fluctuation scale; the old start
        chk.evidence["growth test start"] = "infinite variance: steps E[tau] s / 16"
        v = 0.0
    need = 6.0 * math.sqrt(chk.steps * v) / chk.system.servers
    return max(chk.steps * chk.input.mean_interarrival * _speed(chk) / 16.0, need), need


def _speed(chk: Check) -> float:
    """Work a busy server does per unit time (``capacity / servers``; 1 for the built-ins)."""
    return float(chk.system.capacity) / chk.system.servers


def growth_test(chk: Check, prefix: str = "") -> StabilityReport | None:
    """One-sided t-test of a positive linear growth rate; the UNSTABLE report if it rejects.

    The growth per customer over the second half of ``steps`` arrivals is estimated from
    ``replications`` independent runs, each started high (:func:`growth_start`): a stable
    system started above its reflecting boundary drifts down, so under stability the mean
    is at most about 0 and the test is conservative. ``t = mean / se`` is compared with
    Student's ``t`` with ``replications - 1`` degrees of freedom at the check's per-test
    level. A run whose replications all agree (standard error 0) decides nothing, and a
    budget too small for a high enough start is not tested at all: both leave the verdict
    UNDECIDED with the steps that would do.
    """
    from scipy.stats import t as student

    et = chk.input.mean_interarrival
    start, need = growth_start(chk)
    if start > chk.steps * et * _speed(chk) / 4.0:
        chk.evidence["growth test"] = (
            f"not run: a start of {start:.3g} per server, needed to keep a stable run off "
            f"its reflecting boundary, would outlast the burn-in of {chk.steps // 2} arrivals")
        chk.evidence["growth test steps needed"] = _pow2(
            (4.0 * need / (math.sqrt(chk.steps) * et * _speed(chk))) ** 2)
        return None
    g = growth_rate(chk.system, chk.input, chk.steps, replications=chk.replications,
                    rng=next(chk.seeds), start=start)
    df = chk.replications - 1
    tstat = g.value / g.se if g.se > 0 else math.nan
    p = float(student.sf(tstat, df)) if g.se > 0 else math.nan
    chk.evidence.update({"growth per customer": g.value, "growth per customer se": g.se,
                         "growth per unit time": g.value / et, "growth t": tstat,
                         "growth p-value": p, "growth test level": chk.level,
                         "growth test start (work per server)": start})
    if chk.input.period is not None:
        chk.evidence["growth per period"] = g.value * chk.input.period
    if p < chk.level:
        return chk.report("unstable", Basis(
            "test", "growth", chk.alpha,
            f"{prefix}the workload grows linearly, {g.value:.4g} ± {g.se:.2g} per customer "
            f"(t = {tstat:.3g}, p = {p:.2g} < {chk.level:.2g})"))
    return None


def growth_budget(chk: Check) -> dict[str, Any]:
    """Steps that would likely make the growth test reject, if the growth is real."""
    from scipy.stats import t as student

    if "growth test steps needed" in chk.evidence:
        return {"steps": max(chk.evidence["growth test steps needed"], 2 * chk.steps),
                "growth": "the steps at which the growth test can start high enough"}
    g, se = chk.evidence.get("growth per customer"), chk.evidence.get("growth per customer se")
    if g is not None and g > 0 and se == 0:
        return {"growth": "the replications are identical (a deterministic input, such as a "
                          "periodic one with a fixed phase): more steps cannot give the test "
                          "an error to work with; leave the phase random"}
    if g is None or se is None or not se > 0:
        return {"growth": "no growth test ran: nothing here shows instability"}
    if not g > 0:
        res = (float(student.isf(chk.level, chk.replications - 1)) + 1.64) * se
        return {"growth": f"no growth seen ({g:.3g} ± {se:.2g} per customer): a growth above "
                          f"{res:.2g} per customer would likely have shown at this budget; "
                          "4 times the steps halves that"}
    need = (float(student.isf(chk.level, chk.replications - 1)) + 1.64) * se / g
    steps = _pow2(chk.steps * need * need)
    noise = "; with t below 2 it could well be noise" if g / se < 2 else ""
    return {"steps": max(steps, 2 * chk.steps),
            "growth": f"the steps at which the observed growth, {g:.3g} ± {se:.2g} per "
                      f"customer (t = {g / se:.3g}), would be significant if it is real{noise}"}


def _pow2(x: float) -> int:
    return 1 << max(2, math.ceil(math.log2(max(x, 4.0))))


def undecided(chk: Check, detail: str, extra: dict[str, Any] | None = None
              ) -> StabilityReport:
    """An UNDECIDED report with the growth test's budget suggestion."""
    suggested = growth_budget(chk)
    for key, value in (extra or {}).items():
        if key == "steps" and "steps" in suggested:
            value = max(value, suggested["steps"])  # enough for both
        suggested[key] = value
    return chk.report("undecided", Basis("none", "none", math.nan, detail), suggested)


# -- families -----------------------------------------------------------------------------
@register("load", tests=lambda chk: 0)
def check_load(chk: Check) -> StabilityReport:
    """FCFS G/G/S and random routing: condition (3) is necessary and sufficient."""
    c3 = condition_3(chk, "necessary and sufficient")
    bad = fails_3(chk, c3)
    if bad is not None:
        return bad
    res = loynes(chk.system, chk.input, chk.horizon, rng=next(chk.seeds))
    chk.evidence["Loynes limit"] = res.limit.tolist() if res.limit is not None else None
    chk.evidence["Loynes basis"] = str(res.basis)
    chk.evidence["Loynes horizons"] = res.horizons.tolist()
    return chk.report("stable", Basis(
        "theorem", "condition-3", 0.0,
        "(3) holds, which is necessary and sufficient for this map (FCFS G/G/S: Loynes, "
        "Kiefer-Wolfowitz; random routing: S single-server queues)"))


@register("loss", tests=lambda chk: 0 if is_poisson(chk.input) else 1)
def check_loss(chk: Check) -> StabilityReport:
    """Loss systems are bounded; with condition (9) they have a unique stationary regime."""
    c9 = condition_9(chk)
    chk.conditions.append(c9)
    detail = ("a loss system holds at most one customer per server, so its workload never "
              "exceeds the largest current service time")
    if not c9.holds:  # bounded, but no renovation shown: it may cycle without settling
        why = "fails" if c9.holds is False else "is not shown at this budget"
        return chk.report("undecided", Basis(
            "none", "none", math.nan, detail + f"; but (9) {why}, so nothing here shows that "
            "a stationary version exists (an input of fixed phase can keep the system "
            "cycling)"))
    detail += "; (9) holds, so the stationary regime exists and is unique (backward coupling)"
    if c9.se > 0:  # (9) decided by a test of its estimate
        return chk.report("stable", Basis("test", "bounded", chk.alpha, detail +
                                          f" (a test at level {chk.level:.2g})"))
    return chk.report("stable", Basis("theorem", "bounded", 0.0, detail))


@register("bounded", tests=lambda chk: 0)
def check_bounded(chk: Check) -> StabilityReport:
    """Finite buffers: at most ``b`` jobs per server, so nothing can grow."""
    b = getattr(chk.system, "buffer", None)
    return chk.report("stable", Basis(
        "theorem", "bounded", 0.0, f"every server holds at most {b} jobs (finite buffers "
        "block the rest), so the state stays bounded"))


# The queue-length policies without buffers ("jsq", "queue-length") and LL(d) ("least-of-d")
# are checked in loynes/_policy_checks.py, registered when loynes._stability imports it.


RENOVATION_BATCHES = 32
LOSS_REPLICATIONS = 2


def condition_9(chk: Check) -> Condition:
    """Condition (9), the renovation event's probability, exact for Poisson input."""
    inp = chk.input
    if is_poisson(inp):
        # exp(-a) > 0 for every finite a, even where the float underflows (a > 745)
        ren = rc.Estimate(math.exp(-inp.offered_load), 0.0)
        how = "Poisson input: exp(-lambda E[sigma]) > 0"
        holds: bool | None = True
    elif is_renewal(inp) and math.isinf(inp.interarrival.support_max):
        # the event is tau_{-1} >= max(M_{-1}, sigma_{-1}), M the largest residual of the
        # infinite-server system: finite a.s. (E sigma < inf) and independent of tau_{-1},
        # whose unbounded law exceeds any finite level with positive probability
        ren = rc.Estimate(math.nan, 0.0)
        how = ("renewal input with unbounded interarrival times: P(tau > max(M, sigma)) > 0 "
               "for the a.s. finite, independent largest residual M")
        holds = True
    else:
        batches = min(RENOVATION_BATCHES, chk.steps)
        ren = renovation_probability(chk.input, chk.steps, rng=next(chk.seeds),
                                     batches=batches)
        how = "frequency of an empty infinite-server system at arrivals"
        holds = chk.judge(float(ren.value), float(ren.se), above=True, df=batches - 1)
    return Condition("(9)", "P[sigma_-j <= T_0 - T_-j for all j >= 1] > 0 (renovation)",
                     "uniqueness", float(ren.value), float(ren.se), holds, how)


def _loss_conditions(chk: Check, p: int) -> tuple[Condition, Condition, Condition]:
    """(9), (11) and (8) for a p-server loss system in front of ``S - p`` servers."""
    S, es, et = chk.system.servers, chk.input.mean_service, chk.input.mean_interarrival
    cap = (S - p) * et
    c9 = condition_9(chk)
    if is_poisson(chk.input):
        a = chk.input.offered_load
        b = erlang_b(p, a)
        v = es * b / cap
        ulps = RESOLUTION_ULPS + 4 * p  # Erlang B's recursion: a few roundings a server
        c11 = Condition("(11)", f"E[sigma] P_loss < (S - p) E[tau], P_loss = B({p}, a)",
                        "sufficient (equals (8) for Poisson input)", v, 0.0,
                        chk.judge(v, 0.0, exact=True, ulps=ulps),
                        f"Erlang B with a = {a:.6g}: P_loss = {b:.6g}")
        c8 = Condition("(8)", "E[sigma 1{U^p(1) > 0}] < (S - p) E[tau]: overflow work",
                       "sufficient", v, 0.0, chk.judge(v, 0.0, exact=True, ulps=ulps),
                       "equals (11): the service time is independent of the loss state")
        chk.evidence["overflow work per customer"] = es * b
    else:
        pl, ow, df = _loss_estimates(chk, p)
        chk.evidence["loss system p_loss"] = pl.value
        chk.evidence["overflow work per customer"] = ow.value
        c11 = Condition("(11)", "E[sigma] P_loss < (S - p) E[tau], P_loss simulated",
                        "conjectured necessary and sufficient (Markov inputs)",
                        es * pl.value / cap, es * pl.se / cap,
                        chk.judge(es * pl.value / cap, es * pl.se / cap, df=df),
                        f"stationary simulation of the {p}-server loss system")
        c8 = Condition("(8)", "E[sigma 1{U^p(1) > 0}] < (S - p) E[tau]: overflow work",
                       "sufficient", ow.value / cap, ow.se / cap,
                       chk.judge(ow.value / cap, ow.se / cap, df=df),
                       f"stationary simulation of the {p}-server loss system")
    chk.conditions.extend([c9, c11, c8])
    chk.evidence["splitting prediction of growth per customer"] = max(
        chk.evidence["overflow work per customer"] - cap, 0.0)
    return c9, c11, c8


def _loss_estimates(chk: Check, p: int) -> tuple[rc.Estimate, rc.Estimate, int]:
    """Loss probability, overflow work and their degrees of freedom, with honest errors.

    When the batch means are correlated (a short run), the batch-means standard errors are
    widened by ``sqrt((1 + r) / (1 - r))``, ``r`` their lag-1 autocorrelation, instead of
    passing ``rc.simulate``'s warning on: the tests of (8) and (11) then keep their level.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(rc.Loss(p), chk.input, steps=chk.steps, warmup=chk.steps // 8,
                          replications=LOSS_REPLICATIONS, rng=next(chk.seeds))
    r = res.batch_check.lag1 if res.batch_check is not None else math.nan
    factor = math.sqrt((1 + r) / (1 - r)) if 0 < r < 1 else 1.0
    if factor > 1:
        chk.evidence["loss system batch lag-1 correlation"] = r
        chk.evidence["loss system standard errors widened by"] = factor
    df = LOSS_REPLICATIONS * min(32, chk.steps) - 1  # batch means over all replications
    assert res.p_loss is not None and res.overflow_work is not None  # a loss system
    why = untestable(chk, min(32, chk.steps))
    if why is not None:  # no valid error: the estimates decide nothing
        chk.evidence["loss system estimates not tested"] = why
        factor = math.nan
    return (rc.Estimate(res.p_loss.value, res.p_loss.se * factor),
            rc.Estimate(res.overflow_work.value, res.overflow_work.se * factor), df)


BATCH_CORRELATION_LENGTHS = 20
"""A batch must hold this many of the input's correlation lengths for a batch-means error."""


def untestable(chk: Check, batches: int) -> str | None:
    """Why a batch-means error of a run of ``chk.steps`` customers is not valid, or ``None``.

    Two things the input declares rule it out: an infinite variance of one of its laws (a
    tail of index at most 2 has no central limit at the usual rate), and a correlation
    length (:attr:`recursions.Input.correlation_length`, when above 1) that batches of
    ``steps / batches`` customers do not hold :data:`BATCH_CORRELATION_LENGTHS` times (the
    steps that would are put in ``chk.evidence["batch means need steps"]``). Without these
    two rules a test at its stated level said STABLE for unstable systems far more often than
    that level (measured in ``docs/benchmarks.md``, section :ref:`Batch-means tests on heavy
    tails and correlated inputs <bench-untestable>`).
    """
    if not chk.input.finite_variance:
        return ("a law has an infinite variance, so batch means have no valid standard "
                "error at any run length")
    length = chk.input.correlation_length
    need = BATCH_CORRELATION_LENGTHS * length * batches
    if length > 1 and chk.steps < need:
        chk.evidence["batch means need steps"] = need
        return (f"the input's correlation length is {length:.3g} customers, so batch means "
                f"need steps >= {need:.3g} ({BATCH_CORRELATION_LENGTHS} such lengths a "
                f"batch); got {chk.steps}")
    return None


def _condition_budget(chk: Check, c: Condition) -> dict[str, Any]:
    """Steps at which an estimated condition would likely be decided."""
    if math.isnan(c.se) and "batch means need steps" in chk.evidence:
        return {"steps": _pow2(chk.evidence["batch means need steps"]),
                c.name: "the steps at which batches are long against the input's correlation"}
    if math.isnan(c.se) and not chk.input.finite_variance:
        return {c.name: "no budget helps: a law has an infinite variance, so batch means "
                        "have no valid standard error"}
    if not c.se > 0 or c.value == 1:
        return {}
    need = (chk.z + 1.64) * c.se / abs(1 - c.value)
    return {"steps": max(_pow2(chk.steps * need * need), 2 * chk.steps),
            c.name: "the steps at which the estimate would be clear of 1"}


@register("jpsw", tests=lambda chk: 1 if is_poisson(chk.input) else 3)
def check_jpsw(chk: Check) -> StabilityReport:
    """J_{p+1}SW: Theorem 1 ((8) and (9)) for stability, growth for instability."""
    c3 = condition_3(chk)
    bad = fails_3(chk, c3)
    if bad is not None:
        return bad
    c9, _, c8 = _loss_conditions(chk, chk.system.p)
    if c8.holds and c9.holds:
        exact = is_poisson(chk.input)
        return chk.report("stable", Basis(
            "theorem" if exact else "test", "theorem-1", 0.0 if exact else chk.alpha,
            "(8) and (9) hold (Theorem 1): the p-server loss system's overflow is within the "
            "other S - p servers' capacity" + ("" if exact else
                                               f" (tests at level {chk.level:.2g})")))
    bad = growth_test(chk)
    if bad is not None:
        return bad
    extra = _condition_budget(chk, c8) if c8.holds is None else {}
    where = ("between (11) and (3), where stability is Moyal's open conjecture"
             if c8.holds is False else "(8) is not decided at this budget")
    return undecided(chk, f"{where}; no significant growth within the budget", extra)


@register("split", tests=lambda chk: 0 if is_poisson(chk.input) else 2)
def check_split(chk: Check) -> StabilityReport:
    """The split bound: its JSW block is stable iff it gets less work than it can do, (8)."""
    c3 = condition_3(chk)
    bad = fails_3(chk, c3)
    if bad is not None:
        return bad
    c9, _, c8 = _loss_conditions(chk, chk.system.p)
    exact = is_poisson(chk.input)
    kind, err = ("theorem", 0.0) if exact else ("test", chk.alpha)
    if c8.holds and c9.holds:
        return chk.report("stable", Basis(kind, "split-bound", err,
                                          "(8) holds: the JSW block of S - p servers gets "
                                          "less overflow work than it can do"))
    if c8.holds is False and c8.value > 1:
        return chk.report("unstable", Basis(kind, "split-bound", err,
                                            "(8) fails: the JSW block of S - p servers gets "
                                            "more overflow work than it can do"))
    return chk.report("undecided", Basis("none", "none", math.nan,
                                         "(8) or (9) is not decided at this budget"),
                      _condition_budget(chk, c8))


def _estimated_sizes(chk: Check) -> bool:
    """Whether a class's mean size is a Monte Carlo estimate (a joint sampler)."""
    return any(c.mean_size_se > 0 for c in chk.system.classes)


@register("redundancy", tests=lambda chk: 1 + _estimated_sizes(chk))
def check_redundancy(chk: Check) -> StabilityReport:
    """Cancel-on-completion redundancy: stable iff the rate is below ``lambda-bar^n = 1 / a``.

    ``a`` is the stationary mean work a job adds in the free (unreflected) system, and all
    workloads grow together above ``lambda-bar^n`` (Stolyar 2021, Lemma 5 and
    Theorem 2). ``1 / sum_j pi_j d_j E xi_j <= lambda-bar^n`` always (no job adds more than
    its ``d`` sizes); with i.i.d. exponential sizes ``lambda-bar = 1 / sum_j pi_j k_j E xi_j``
    exactly.
    """
    from loynes._redundancy_theory import redundancy_critical_rate
    from recursions.model.redundancy import class_probs

    system, n = chk.system, chk.system.servers
    if math.isfinite(system.frame):  # workloads truncated to the frame: none can grow
        return chk.report("undecided", Basis(
            "none", "none", math.nan, f"the frame {system.frame:g} caps every workload, so "
            "nothing grows; the cancel-on-completion theorems used here are for the unframed "
            "system, and whether a stationary version exists is not decided"))
    lam = chk.input.arrival_rate / n  # per server
    pi = class_probs(system.classes)
    pairs = list(zip(pi, system.classes, strict=True))
    d_work = float(sum(p * c.d * c.mean_size for p, c in pairs))
    d_se = float(sum(p * c.d * c.mean_size_se for p, c in pairs))  # > 0: estimated means
    d_ok = chk.judge(lam * d_work, lam * d_se, exact=not _estimated_sizes(chk)) is True
    chk.conditions.append(Condition(
        "(d-bound)", "lambda sum_j pi_j d_j E[xi_j] < 1: even without cancellation the "
        "servers keep up", "sufficient", lam * d_work, lam * d_se, d_ok,
        f"lambda = {lam:.6g} per server, sum pi d E xi = {d_work:.6g}"
        + (f" ± {d_se:.2g} (a joint class's mean size is estimated)" if d_se else "")))
    chk.evidence.update({"arrival rate per server": lam, "lower bound of critical": 1 / d_work})
    if all(c.exponential for c in system.classes):
        k_work = float(sum(p * c.k * c.mean_size for p, c in pairs))
        exp_ok = chk.judge(lam * k_work, 0.0, exact=True,
                           ulps=RESOLUTION_ULPS + 4 * len(pairs))  # a sum over the classes
        chk.conditions.append(Condition(
            "(exp)", "lambda sum_j pi_j k_j E[xi_j] < 1 (i.i.d. exponential sizes: "
            "work-conserving)", "necessary and sufficient", lam * k_work, 0.0, exp_ok,
            "closed form"))
        if exp_ok is None:
            return chk.report("undecided", Basis(
                "none", "none", math.nan,
                f"lambda sum pi k E xi = {lam * k_work!r} is within floating-point resolution "
                "of 1 (the roundings of the rates and the sum over classes): the closed form "
                "cannot tell whether the rate is below lambda-bar"))
        ok = exp_ok
        return chk.report("stable" if ok else "unstable", Basis(
            "theorem", "exponential-sizes", 0.0,
            f"the exponential closed form gives lambda-bar = {1 / k_work:.6g} per server"))
    if d_ok:
        return chk.report("stable", Basis(
            "theorem" if d_se == 0 else "test", "d-bound", 0.0 if d_se == 0 else chk.alpha,
            "the d-bound holds: the load without cancellation is below 1"))
    bar = redundancy_critical_rate(system.classes, servers=n, rng=next(chk.seeds))
    chk.evidence.update({"critical rate (free system)": bar.value,
                         "critical rate se": bar.se})
    value, se = lam / bar.value, lam * bar.se / bar.value**2
    sizes = [c.size for c in system.classes if getattr(c, "size", None) is not None]
    if any(not math.isfinite(d.var) for d in sizes):
        chk.evidence["free-system estimate not tested"] = (
            "a job class's size law has an infinite variance, so the free system's batch "
            "means have no valid standard error")
        se = math.nan
    c = Condition("(free)", "lambda < lambda-bar^n = 1/a, a the mean work a job adds in the "
                  "free (unreflected) system", "necessary and sufficient", value, se,
                  chk.judge(value, se), f"free-system simulation with {n} servers")
    chk.conditions.append(c)
    if c.holds is None:
        return chk.report("undecided", Basis(
            "none", "none", math.nan, "the rate is too close to lambda-bar^n for a test at "
            f"level {chk.level:.2g}"), _condition_budget(chk, c))
    return chk.report("stable" if c.holds else "unstable", Basis(
        "test", "free-system", chk.alpha,
        f"lambda-bar^n = {bar.value:.6g} ± {bar.se:.2g} per server "
        f"({'above' if c.holds else 'below'} lambda = {lam:.6g})"))
