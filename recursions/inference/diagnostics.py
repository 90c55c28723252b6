"""Warnings about estimates that cannot be trusted: :class:`SimulationWarning` and its checks.

:func:`recursions.simulate` warns (with :class:`SimulationWarning`) when

* condition (3) fails: the load ``rho = E[sigma] / (S E[tau]) >= 1`` for a system that keeps
  every customer's work (not loss systems, not buffered queue-length systems, not
  :class:`~recursions.Redundancy`, whose work per job depends on the state), so there is no
  stationary regime (:func:`load_warning`);
* the run itself shows drift (:func:`batch_check`): the batch means of the total workload,
  or of what customers found at the server they joined (jobs, for queue-length systems),
  trend across the run, or are so correlated that the batch-means standard errors are too
  small;
* a reference profile is compared with a run that starts from the initial state with no
  warm-up (``sup_error`` then includes the transient).

Turn the warnings into errors with ``warnings.simplefilter("error", rc.SimulationWarning)``,
or silence them where a transient is simulated on purpose with
``warnings.simplefilter("ignore", rc.SimulationWarning)`` inside ``warnings.catch_warnings()``.
"""

from __future__ import annotations

import math
import os
import sys
import warnings
from dataclasses import dataclass
from types import FrameType
from typing import Any

import numpy as np

from recursions.common._tables import Record
from recursions.engines._run_plan import MAX_STEPS, REPORTED_BATCHES
from recursions.inference._moment_conditions import finite_variances
from recursions.inference._unstable_stop import UNSTABLE_LEVEL, Growth, late_growth

__all__ = ["MIN_PER_SERVER", "MIN_RELAXATIONS", "BatchCheck", "Outlook", "SimulationWarning",
           "batch_check", "floor_for", "floor_of", "load_warning", "outlook_of", "settle_of",
           "short_for", "short_run", "transient_side"]

TREND_Z = 5.0
"""A trend is flagged when its t statistic is as improbable as ``|z| > TREND_Z`` for a normal."""

LAG1_SIGMAS = 4.0
"""Lag-1 autocorrelation flagged beyond ``-1/K + LAG1_SIGMAS / sqrt(K R)`` ..."""

LAG1_FLOOR = 0.3
"""... and beyond this absolute level."""

MIN_BATCHES_LAG1 = 8
"""Replications with fewer usable batches do not enter the autocorrelation check."""


class SimulationWarning(RuntimeWarning):
    """Estimates of a simulation that cannot be trusted as stationary ones.

    Raised (as a warning) by :func:`recursions.simulate` when the load is at least 1 (no
    stationary regime), when the batch means of the run drift or are strongly correlated
    (the run is too short or not warmed up, or the system is unstable), or when a reference
    profile is compared with a run that has no warm-up. Each message says which fix applies:
    a longer run, more warm-up, or that the system is unstable.

    Examples
    --------
    >>> import warnings, recursions as rc
    >>> inp = rc.Poisson(3.0, rc.dists.Exponential(1.0))       # M/M/2 at load 1.5
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always", rc.SimulationWarning)
    ...     res = rc.simulate(rc.JSW(2), inp, steps=10_000, rng=1)
    >>> any(issubclass(w.category, rc.SimulationWarning) for w in caught)
    True
    """


def warn(message: str) -> None:
    """Issue a :class:`SimulationWarning` attributed to the first caller outside this package."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # recursions/
    frame: FrameType | None = sys._getframe(0)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame = frame.f_back
        level += 1
    warnings.warn(message, SimulationWarning, stacklevel=level)


def load_warning(system_repr: str, rho: float) -> str | None:
    """The message for a load ``rho >= 1`` (condition (3) fails), or ``None`` when ``rho < 1``.

    Parameters
    ----------
    system_repr : str
        The system, as it should be named.
    rho : float
        ``E[sigma] / (S E[tau])``.

    Returns
    -------
    str or None

    Examples
    --------
    >>> load_warning("JSW(2)", 0.5) is None
    True
    >>> print(load_warning("JSW(2)", 1.5))  # doctest: +ELLIPSIS
    JSW(2): the load rho = E[sigma] / (S E[tau]) = 1.5 >= 1, so condition (3) fails...
    """
    if not rho >= 1:
        return None
    return (f"{system_repr}: the load rho = E[sigma] / (S E[tau]) = {rho:.4g} >= 1, so "
            "condition (3) fails: the system is unstable and has no stationary regime. The "
            "workload grows without bound, and these estimates describe a transient that "
            "depends on the run length, not a steady state")


@dataclass(frozen=True)
class BatchCheck(Record):
    """Drift statistics of the batch means of one quantity (see :func:`batch_check`).

    Attributes
    ----------
    quantity : str
        What the batch means are of (e.g. ``"total workload"``).
    batches, replications : int
        Usable batches per replication (the fewest) and replications that entered.
    slope : float
        Pooled OLS slope of the batch means against the batch index (per batch).
    trend_t : float
        Its t statistic (``nan`` when it cannot be computed).
    trend_z : float
        The normal quantile with the same tail probability as ``trend_t`` has under Student's
        t with the pooled residual degrees of freedom (``|trend_z| <= |trend_t|``).
    lag1 : float
        Mean over replications of the lag-1 autocorrelation of the batch means.
    lag1_limit : float
        Level above which ``lag1`` is flagged: ``max(-1/K + 4 / sqrt(K R), 0.3)``.
    growth : recursions.inference._unstable_stop.Growth or None
        With an upward trend and the arrivals per batch known: the growth per arrival over
        the second half of the run and its one-sided test at level
        :data:`~recursions.inference._unstable_stop.UNSTABLE_LEVEL`
        (:func:`recursions.inference._unstable_stop.late_growth`).
        When it rejects, the message says plainly that the system looks unstable.
    """

    _dict_extra = ("trend", "correlated")

    quantity: str
    batches: int
    replications: int
    slope: float
    trend_t: float
    trend_z: float
    lag1: float
    lag1_limit: float
    growth: Growth | None = None

    @property
    def trend(self) -> bool:
        """Whether the batch means trend significantly (``|trend_z| > 5``)."""
        return bool(abs(self.trend_z) > TREND_Z)

    @property
    def correlated(self) -> bool:
        """Whether the batch means are too correlated for batch-means standard errors."""
        return bool(self.lag1 > self.lag1_limit)

    def message(self) -> str | None:
        """What to tell the user, or ``None`` when nothing is flagged."""
        grid = f"{self.batches} batches x {self.replications} replication(s)"
        if self.trend and self.slope > 0 and self.growth is not None and self.growth.grows:
            return (f"the batch means of the {self.quantity} trend upward across the run "
                    f"(t = {self.trend_t:.3g} over {grid}) and keep growing over its second "
                    f"half: {self.growth}. Either the run is still filling up from its "
                    "start, which near saturation or on many servers can take far longer "
                    "than this run (a longer run, with warm-up, would see it level off), or "
                    "the system is unstable (its workload grows without levelling off): "
                    "these estimates describe a transient, not a steady state; precision= "
                    "stops on growth that keeps its rate, and ly.check_stability tests it")
        if self.trend:
            way = "upward" if self.slope > 0 else "downward"
            return (f"the batch means of the {self.quantity} trend {way} across the run "
                    f"(t = {self.trend_t:.3g} over {grid}): the run has not settled into a "
                    "stationary regime, so the estimates and their standard errors cannot "
                    "be trusted. Give more warm-up (warmup=) or a longer run (steps=); if "
                    "the trend persists, the system is unstable")
        if self.correlated:
            return (f"the batch means of the {self.quantity} are strongly correlated (mean "
                    f"lag-1 autocorrelation {self.lag1:.2f} > {self.lag1_limit:.2f} over "
                    f"{grid}): the batches are shorter than the correlation time, so the "
                    "standard errors are too small. Run longer (steps=) or pass fewer "
                    "batches=, and give more warm-up (warmup=) if the run starts far from "
                    "its stationary regime; if the correlation does not fall with longer "
                    "runs, the system is unstable")
        return None


RELAXATIONS_PER_BATCH = 10
"""Heavy-traffic relaxation times (:meth:`recursions.System.relaxation`) a batch mean spans.

Batch means of a process whose correlations decay over ``T`` arrivals are nearly
independent once a batch spans many ``T``: for an exponential decay, a batch of ``m``
arrivals has a variance ``1 - T / m`` times the asymptotic one, so 10 relaxation times
per batch leave the standard error about 5% low. The reflected Brownian motion decays
more slowly than that, so 10 is the least, not a comfortable margin.
"""


MIN_RELAXATIONS = 640
"""Heavy-traffic relaxation times a run must measure before its precision counts, where the
system has one (:meth:`recursions.System.relaxation`: FCFS G/G/S).

Twice the ``320 T`` below which a fixed-budget run warns (:func:`short_run`). A run that
looks precise sooner goes on to ``640 T`` (by at most 16 times): near saturation a short run
that happened to stay calm has small, weakly correlated batch means and passes every test of
its own (what this rule changed is measured on :ref:`intervals-precision`). Systems with no
such time scale confirm a precise stage on the next instead (:func:`settle_of`)."""


MIN_PER_SERVER = 256
"""Arrivals per server (per replication) a run must measure, unless it starts from exact
stationary states: precision mode does not stop before (:func:`floor_of`), and a fixed budget
of a system with no heavy-traffic relaxation time warns below it (:func:`short_run`).

MSER cannot tell a transient that outlasts the run from a steady level: on many servers,
runs started empty stopped early, or passed a short fixed budget, with intervals below the
true mean wait. A precision-mode run shorter than this goes on, in stages, until it has
measured ``MIN_PER_SERVER * servers`` arrivals, and a fixed budget shorter than this warns
(set from the runs of LL(2) and JIQ on 1000 servers on :ref:`intervals-precision`)."""


def floor_of(servers: int, kind: str) -> int:
    """Arrivals per replication a run must measure before its intervals count.

    :data:`MIN_PER_SERVER` a server (at most :data:`~recursions.engines._run_plan.MAX_STEPS`, the
    longest default stage), none from exact stationary starts (``kind == "stationary"``; other kinds
    are ``"empty"`` and ``"given"``): a precision-mode run shorter than this goes on, however
    steady it looks, and a fixed budget shorter than this warns where the system has no
    heavy-traffic relaxation time (:func:`short_run`).

    Examples
    --------
    >>> floor_of(1000, "empty"), floor_of(1000, "stationary"), floor_of(10**9, "empty")
    (256000, 0, 4294967296)
    """
    return 0 if kind == "stationary" else min(MIN_PER_SERVER * servers, MAX_STEPS)


def settle_of(relaxation: float | None) -> int | None:
    """Arrivals per replication a run must reach before it may stop as precise.

    :data:`MIN_RELAXATIONS` relaxation times ``T`` (:meth:`recursions.System.relaxation`);
    ``None`` where the system has none: such a run stops only once two stages in a row are
    precise instead (one more stage,
    :data:`~recursions.inference._precision.MIN_GROWTH` times longer, confirms the first).
    Unlike :func:`floor_of` this only holds back a stop: a run not yet precise grows as its
    half-widths say.

    Examples
    --------
    >>> settle_of(162.0), settle_of(None)
    (103680, None)
    """
    if relaxation is None or not math.isfinite(relaxation):
        return None
    return min(math.ceil(MIN_RELAXATIONS * relaxation), MAX_STEPS)


def transient_side(system: Any, kind: str) -> int:
    """Which side of the steady level the transient lies on (MSER's ``side``).

    Below (-1) for a monotone system started empty: its workloads, waits and jobs then grow
    stochastically from 0 to their stationary law. Either side (0) otherwise: a map that is
    not monotone can overshoot, and a given state or an equilibrium profile can lie on
    either side.

    Examples
    --------
    >>> import recursions as rc
    >>> transient_side(rc.JSW(2), "empty"), transient_side(rc.JSW(2), "given")
    (-1, 0)
    """
    return -1 if kind == "empty" and bool(getattr(system, "monotone", False)) else 0


@dataclass(frozen=True)
class Outlook:
    """What the analysis of a run knows of it before it runs.

    Read once from the system and its input (:func:`outlook_of`), so that the stages and
    their analysis need neither again.

    Attributes
    ----------
    floor : int
        Arrivals per replication before a precision-mode stop counts (:func:`floor_of`).
    settle : int or None
        Arrivals per replication before a precise run may stop (:func:`settle_of`).
    short_floor : int
        The floor a fixed budget is held to (:func:`floor_for`; 0: none).
    relaxation : float or None
        The heavy-traffic relaxation time ``T`` in arrivals, if the system has one.
    mean_interarrival : float
        The input's mean interarrival time.
    finite_variances : bool
        Whether every law of the run has a finite variance
        (:func:`~recursions.inference._moment_conditions.finite_variances`).
    correlation : float
        The input's correlation length in arrivals (:attr:`recursions.Input.correlation_length`).
    side : int
        Which side of its steady level the transient lies on (:func:`transient_side`).
    start : str
        How its replications start: ``"empty"``, ``"given"``, ``"profile"`` or
        ``"stationary"`` (exact draws).
    """

    floor: int
    settle: int | None
    short_floor: int
    relaxation: float | None
    mean_interarrival: float
    finite_variances: bool
    correlation: float
    side: int
    start: str

    def short(self, arrivals: float, by_time: bool = False) -> str | None:
        """:func:`short_run` for this run after ``arrivals`` measured arrivals a replication.

        ``by_time``: the run went to a time horizon, and the message names the ``time=`` it
        needs.
        """
        return short_run(self.relaxation, arrivals,
                         self.mean_interarrival if by_time else None, self.short_floor)


def outlook_of(system: Any, input: Any, kind: str) -> Outlook:
    """The :class:`Outlook` of ``system`` under ``input``, its replications started as ``kind``.

    ``kind`` is ``"empty"``, ``"given"``, ``"profile"`` or ``"stationary"`` (exact draws).

    Examples
    --------
    >>> import recursions as rc
    >>> out = outlook_of(rc.JSW(1), rc.Poisson(0.9, rc.dists.Exponential(1.0)), "empty")
    >>> out.settle, out.floor, out.side
    (103680, 256, -1)
    """
    relaxation, floor = system.relaxation(input), floor_of(int(system.servers), kind)
    settle, side = settle_of(relaxation), transient_side(system, kind)
    finite = finite_variances(input, system.own_laws)
    return Outlook(floor=floor, settle=settle, short_floor=_short_floor(system, finite, floor),
                   relaxation=relaxation, mean_interarrival=float(input.mean_interarrival),
                   finite_variances=finite, correlation=input.correlation_length, side=side,
                   start=kind)


def floor_for(system: Any, input: Any, kind: str) -> int:
    """The floor :func:`short_run` holds a fixed budget of ``system`` to (0: none).

    :func:`floor_of` for a system with no heavy-traffic relaxation time (routing other than
    to the least workload, loss, J_{p+1}SW with ``p >= 1``, queue-length policies, users'
    maps). None for FCFS G/G/S, which is held to its relaxation time instead or, where the
    input gives none (periodic, Markov-modulated or deterministic input), left to the test of
    its batch means; none either where a law has an infinite variance, since no standard
    error holds at any length and the run says that instead
    (:func:`recursions.inference._moment_conditions.clt_failures`).

    Parameters
    ----------
    system : recursions.System
        The system run.
    input : recursions.Input
        Its input.
    kind : str
        How replications start: ``"stationary"`` (exact draws), ``"empty"`` or ``"given"``.

    Returns
    -------
    int

    Examples
    --------
    >>> import recursions as rc
    >>> mm = rc.Poisson(6.0, rc.dists.Exponential(1.0))
    >>> floor_for(rc.JIQ(8), mm, "empty"), floor_for(rc.JSW(8), mm, "empty")
    (2048, 0)
    """
    return _short_floor(system, finite_variances(input, system.own_laws),
                        floor_of(int(system.servers), kind))


def _short_floor(system: Any, finite: bool, floor: int) -> int:
    """:func:`floor_for` from the laws' finite variances (``finite``) and :func:`floor_of`."""
    return 0 if (system.fcfs and not system.has_loss) or not finite else floor


def short_for(system: Any, input: Any, arrivals: float, kind: str,
              by_time: bool = False) -> str | None:
    """:func:`short_run` for ``system`` under ``input``: its relaxation time, else its floor.

    The one place the engines and the modes ask whether a fixed budget of default batches
    is too short (:meth:`recursions.System.relaxation`, :func:`floor_for`); ``by_time``: the
    run went to a time horizon, and the message names the ``time=`` it needs.

    Examples
    --------
    >>> import recursions as rc
    >>> short_for(rc.JIQ(8), rc.Poisson(6.0, rc.dists.Exponential(1.0)), 2048, "empty") is None
    True
    """
    return outlook_of(system, input, kind).short(arrivals, by_time)


def short_run(relaxation: float | None, arrivals: float,
              mean_interarrival: float | None = None, floor: int = 0) -> str | None:
    """The message for a run too short for its heavy-traffic relaxation time, or ``None``.

    A fixed-budget run's intervals come from :data:`~recursions.engines._run_plan.REPORTED_BATCHES`
    (32) batch means of each replication; each needs :data:`RELAXATIONS_PER_BATCH` relaxation
    times ``T`` of the queue's heavy-traffic approximation, so a replication of fewer than
    ``320 T`` measured arrivals is too short to know its own variance, however many
    replications there are (more replications add batch means, each as short). Unlike a test
    of the batch means, this looks only at the system and the input, so it cannot be passed
    by a run that happened to stay calm (a calm stretch in heavy traffic has small, weakly
    correlated batch means and an interval that misses).

    A system with no such time scale is held to ``floor`` instead (:func:`floor_for`:
    :data:`MIN_PER_SERVER` arrivals a server from a state that is not an exact stationary
    draw), the length below which precision mode would not stop either.

    Parameters
    ----------
    relaxation : float or None
        ``T`` in arrivals (:meth:`recursions.System.relaxation`); ``None``: no such rule.
    arrivals : float
        Measured arrivals per replication (their mean over the replications of a run by
        time).
    mean_interarrival : float, optional
        Given for a run to a time horizon: the message then names a ``time=`` that gives the
        arrivals it needs with a margin (:func:`_horizon`).
    floor : int, optional
        Measured arrivals per replication a run needs when ``relaxation`` is ``None``
        (:func:`floor_for`); 0 (the default): no such rule.

    Returns
    -------
    str or None

    Examples
    --------
    >>> short_run(4802.0, 10**5) is None     # M/M/1 at 0.98 needs 1 536 640 arrivals
    False
    >>> short_run(32.0, 10**5) is None       # M/M/1 at 0.8 needs 10 240
    True
    >>> short_run(None, 10**5, floor=floor_of(1000, "empty")) is None   # JIQ(1000): 256 000
    False
    """
    if relaxation is None or not relaxation > 0:
        return _below_floor(arrivals, floor, mean_interarrival)
    need = RELAXATIONS_PER_BATCH * REPORTED_BATCHES
    # T carries rounding (722.0000000000019 at load 0.95): the length asked for is the
    # length that passes
    required = math.ceil(need * relaxation * (1 - 1e-12))
    if arrivals >= required:
        return None
    return (f"the run is short for its load: {math.floor(arrivals)} measured arrivals per "
            "replication "
            f"span {arrivals / relaxation:.1f} relaxation times of the heavy-traffic "
            f"approximation (T = rho^2 (ca^2 + cs^2) / (1 - rho)^2 = {relaxation:.4g} "
            f"arrivals), fewer than the {need} that {REPORTED_BATCHES} batch means of "
            f"{RELAXATIONS_PER_BATCH} relaxation times each need, so the confidence "
            "intervals cannot be trusted (they are likely too narrow). Ask for precision= "
            f"(run until precise), or run at least steps={required} per replication"
            + _horizon(required, mean_interarrival))


def _below_floor(arrivals: float, floor: int, mean_interarrival: float | None) -> str | None:
    """:func:`short_run`'s message for a system with no relaxation time, or ``None``."""
    if arrivals >= floor:
        return None
    return (f"the run is short for its number of servers: {math.floor(arrivals)} measured "
            f"arrivals per replication (after any warm-up), fewer than the {floor} "
            f"({MIN_PER_SERVER} a server) that a system with no heavy-traffic relaxation time "
            "needs unless its replications start from exact stationary draws "
            "(start=\"stationary\", where a sampler covers the system): a shorter run cannot "
            "tell a slow transient or a slowly varying workload from a steady one, so the "
            "confidence intervals cannot be trusted (they are likely too narrow). Ask for "
            f"precision= (run until precise), or run at least steps={floor} per replication"
            + _horizon(floor, mean_interarrival))


def _horizon(required: int, mean_interarrival: float | None) -> str:
    """`` (time=...)``: a horizon whose arrivals reach ``required`` with a margin, or ``""``.

    The mean count plus 4 standard deviations of a Poisson count of that mean: a horizon of
    ``required`` mean interarrival times would fall short in about half the runs.
    """
    if mean_interarrival is None:
        return ""
    return (f" (time={(required + 4.0 * math.sqrt(required)) * mean_interarrival:.6g}, "
            "which gives that many arrivals with a margin)")


def batch_check(num: np.ndarray, den: np.ndarray, quantity: str = "total workload",
                arrivals: np.ndarray | None = None) -> BatchCheck | None:
    """Test the batch means ``num / den`` of each replication for a trend and for correlation.

    ``num`` and ``den`` are per-(replication, batch) sums, shape ``(R, K)`` (the layout of
    :func:`recursions.simulate`'s accumulator); batches with ``den <= 0`` are left out.

    * **Trend**: in each replication, the OLS slope of the batch means against the batch
      index; the slopes are pooled (``sum S_xy / sum S_xx``) with the pooled residual variance
      (``R (K - 2)`` degrees of freedom), and flagged when the t statistic's two-sided tail
      probability is below that of ``|z| > 5``.
    * **Correlation**: the mean over replications of the lag-1 autocorrelation of the batch
      means, flagged above ``-1/K + 4 / sqrt(K R)`` (its mean plus four standard deviations
      for independent batches) and above 0.3 (replications with fewer than 8 batches are left
      out).

    :func:`recursions.simulate` checks two series this way on workload maps: the total
    workload and the workload found at the joined server, behind ``mean_wait`` (the
    queue-length engines check the jobs). The second has a value in every batch; on the heap
    engine the first is sampled only at profile snapshots, so short runs there have few usable
    batches.

    Parameters
    ----------
    num, den : numpy.ndarray
        Per-batch sums of the quantity and of its weight, shape ``(R, K)``.
    quantity : str, default "total workload"
        Name used in the message.
    arrivals : numpy.ndarray, optional
        Arrivals per (replication, batch), shape ``(R, K)``: with them an upward trend is
        followed by the test of growth over the second half of the run
        (:func:`recursions.inference._unstable_stop.late_growth`, one test at level
        :data:`~recursions.inference._unstable_stop.UNSTABLE_LEVEL`), kept as ``growth``.

    Returns
    -------
    BatchCheck or None
        ``None`` when no replication has 3 usable batches with varying means.

    Notes
    -----
    The check is lenient on purpose, so that a stationary run is almost never flagged. It
    cannot see every run whose batches are shorter than the correlation time (heavy
    traffic, or a few arrivals per server per batch), and lets some through with standard
    errors far too small; with several replications it warns in most of them, so for such
    runs use several replications and far more steps. The batch means of unstable systems
    trend. How often it warns, per cell, and the coverage and spread of the errors are in
    the docs: :ref:`Batch check warning rates <bench-batch-check>`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> flat = batch_check(rng.normal(5.0, 1.0, (1, 32)), np.ones((1, 32)))
    >>> flat.trend, flat.correlated
    (False, False)
    >>> ramp = batch_check(np.arange(32.0)[None, :] + rng.normal(0, 1, (1, 32)), np.ones((1, 32)))
    >>> ramp.trend, ramp.slope > 0
    (True, True)
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    if num.ndim == 1:
        num, den = num[None, :], den[None, :]
    sxy = sxx = rss = 0.0
    dof = 0
    lags: list[float] = []
    kmin = None
    used = 0
    for r in range(num.shape[0]):
        ok = den[r] > 0
        k = int(ok.sum())
        if k < 3:
            continue
        y = num[r, ok] / den[r, ok]
        if not np.all(np.isfinite(y)):
            continue
        dy = y - y.mean()
        syy = float(dy @ dy)
        ym = float(y.mean())  # ym * ym: inf, not OverflowError, past float64's range
        if not syy > 1e-24 * max(ym * ym, 1e-300):  # constant batch means
            continue
        x = np.flatnonzero(ok).astype(np.float64)
        dx = x - x.mean()
        b_sxx = float(dx @ dx)
        b_sxy = float(dx @ dy)
        sxy += b_sxy
        sxx += b_sxx
        rss += max(syy - b_sxy * b_sxy / b_sxx, 0.0)
        dof += k - 2
        used += 1
        kmin = k if kmin is None else min(kmin, k)
        if k >= MIN_BATCHES_LAG1:
            lags.append(float(dy[:-1] @ dy[1:]) / syy)
    if used == 0 or kmin is None:
        return None
    slope = sxy / sxx
    if dof > 0 and rss > 0:
        t = slope / math.sqrt(rss / dof / sxx)
    else:
        t = math.inf if slope != 0 else math.nan
    z = _t_to_z(t, dof)
    if lags:
        kk = MIN_BATCHES_LAG1 if kmin is None else max(kmin, MIN_BATCHES_LAG1)
        lag1 = float(np.mean(lags))
        limit = max(-1.0 / kk + LAG1_SIGMAS / math.sqrt(kk * len(lags)), LAG1_FLOOR)
    else:
        lag1, limit = math.nan, math.nan
    growth = None
    if arrivals is not None and abs(z) > TREND_Z and slope > 0:
        per_batch = float(np.sum(arrivals)) / arrivals.size if np.size(arrivals) else 0.0
        if per_batch > 0:
            growth = late_growth(num, den, per_batch, UNSTABLE_LEVEL, quantity)
    return BatchCheck(quantity, int(kmin), used, float(slope), float(t), float(z), lag1, limit,
                      growth)


def _t_to_z(t: float, dof: int) -> float:
    """Normal quantile with the two-sided tail of ``t`` under Student's t with ``dof``."""
    if not math.isfinite(t) or dof <= 0:
        return t if not math.isfinite(t) else math.nan
    from scipy.special import ndtri, stdtr

    p = float(stdtr(dof, -abs(t)))
    z = float(-ndtri(p)) if p > 0 else abs(t)
    return math.copysign(z, t)
