"""Run until precise and truncate the transient: the analysis of ``simulate``'s modes.

:func:`recursions.inference._run_modes.run_modes` lays out the stages of a plan with modes
(:mod:`recursions.inference._stages`) and hands them here: :func:`analysed` runs them and analyses
the batch sums they return (:mod:`recursions.inference._batch_means`).

Run until precise
-----------------
Stage ``k`` reports ``n_k`` arrivals per replication in :data:`BASE_BATCHES` batches: the
numbers of one run of ``n_k`` arrivals from the seed (they do not depend on the chunking or
the thread count, as for every run); every engine goes on from where stage ``k - 1``
stopped, unless the run records its path or its first stage is shorter than a batch per
analysis batch, which retrace it (:mod:`recursions.inference._stages`). After each stage
the transient is cut by MSER (with ``warmup="auto"``), every named statistic gets its
interval (:func:`~recursions.inference._batch_means.interval`), and the run stops when every
interval is trusted (its batch means passed the independence test) and its half-width is
within the target, unless the run is shorter than
:data:`~recursions.inference.diagnostics.MIN_RELAXATIONS` heavy-traffic relaxation times of the
system (FCFS G/G/S): it then goes on to that length, which no test
of its own batch means can replace. A system with no such time scale (routing other than to
the least workload, loss, users' maps) stops only when two stages in a row are precise: the
first precise stage is followed by one :data:`MIN_GROWTH` times longer. Otherwise the next
stage is longer: by the factor the half-widths say is needed, with a margin of 1.2 (at least
:data:`MIN_GROWTH`, at most 16; rounded up to a length whose batches nest), or 2 while the
batch means are still correlated. A budget (``max_steps`` per replication, ``max_seconds``
in all) stops the run early; the report then names the intervals that missed the target and
the steps they would need.

A run whose workload grows stops too, as unstable (:mod:`recursions.inference._unstable_stop`): from
the stage at which it reaches the floor on, each stage tests the growth per arrival of the total
workload (of the jobs on the queue-length engines) over the second half of the run,
one-sided, at its share of a level of :data:`~recursions.inference._unstable_stop.UNSTABLE_LEVEL`
(``1e-3``)
spent over the stages, and the first rejection ends the run: the report says ``"unstable"``
with the growth, its error and the level, and no run length would make it precise. A run it
does not stop is the same, number for number, as without it.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from recursions.common._tables import Record
from recursions.engines._run_plan import (
    BASE_BATCHES,
    DEFAULT_STATISTICS,
    FIRST_STEPS,
    MAX_STEPS,
    STATISTICS,
    Modes,
    RunPlan,
    mser_series,
)
from recursions.inference import diagnostics as dg
from recursions.inference._batch_means import (
    Interval,
    interval,
    replication_interval,
    truncated,
)
from recursions.inference._estimate import Estimate
from recursions.inference._half_widths import HalfWidth
from recursions.inference._unstable_stop import Growth, GrowthWatch
from recursions.results._simulation_result import SimulationResult, untrusted_headline

__all__ = ["BASE_BATCHES", "FIRST_STEPS", "MAX_STEPS", "PrecisionReport", "Quiet", "analysed"]

MIN_GROWTH = 1.25
"""The least factor a stage grows by when every interval is trusted (twice while not), and
the factor of the stage that confirms a precise one (systems with no relaxation time)."""

@dataclasses.dataclass(frozen=True)
class PrecisionReport(Record):
    """What ``simulate(precision=...)`` reached.

    Attributes
    ----------
    target : dict of str to float
        The half-width asked for each statistic (relative to its value where ``relative``
        says so).
    relative : dict of str to bool
        Whether each target is a relative half-width.
    confidence : float
        The nominal level of the intervals.
    reached : bool
        Whether every interval is trusted and within its target.
    intervals : dict of str to Interval
        The final intervals.
    missed : tuple of str
        The statistics that did not reach the target.
    needed : dict of str to int or None
        For each missed statistic, the arrivals per replication a stage would need
        (``None`` while its batch means are still correlated: at least twice the last stage).
    stages : int
        Stages run (each goes on from the previous one, or retraces it where the engine
        cannot go on).
    steps : int
        Arrivals per replication of the last stage.
    steps_used : int
        Arrivals simulated in all, over stages, replications and warm-ups.
    stopped_by : str
        ``"precision"``, ``"max_steps"``, ``"max_seconds"``, ``"zero"`` (a statistic with a
        relative target stayed 0 for three stages), or ``"unstable"`` (the workload grows:
        ``growth`` says by how much).
    growth : recursions.inference._unstable_stop.Growth or None
        With ``stopped_by == "unstable"``: the test that stopped the run (the growth per
        arrival over the second half of the last stage, its standard error, ``t`` and the
        level); ``None`` otherwise.
    """

    target: dict[str, float]
    relative: dict[str, bool]
    confidence: float
    reached: bool
    intervals: dict[str, Interval]
    missed: tuple[str, ...]
    needed: dict[str, int | None]
    stages: int
    steps: int
    steps_used: int
    stopped_by: str
    growth: Growth | None = None

    def __str__(self) -> str:
        head = ("reached" if self.reached else f"not reached ({self.stopped_by})")
        lines = [f"precision {head}: {self.stages} stage(s), last {self.steps:,} arrivals, "
                 f"{self.steps_used:,} simulated in all"]
        for name, iv in self.intervals.items():
            tol = self.target.get(name)
            rel = " relative" if self.relative.get(name) else ""
            want = "" if tol is None else f" (target {tol:g}{rel})"
            lines.append(f"  {iv}{want}")
        if self.growth is not None:
            lines.append(f"  {self.growth}: the system looks unstable, and no run length "
                         "makes these intervals precise")
            return "\n".join(lines)
        for name in self.missed:
            n = self.needed.get(name)
            lines.append(f"  {name}: needs "
                         + (f"about {n:,} arrivals per replication" if n is not None
                            else "longer runs (its batch means are still correlated)"))
        return "\n".join(lines)



def _targets(precision: Mapping[str, HalfWidth], statistics: Sequence[str] | None,
             available: Sequence[str], no_clt: Mapping[str, str]) -> dict[str, HalfWidth]:
    """The half-width targeted for each statistic, checked against what the run estimates.

    ``""`` in ``precision`` stands for the group ``statistics`` names, or the system's
    headline group.
    """
    if "" in precision:
        tol = precision[""]
        if statistics is None:
            group = next((g for g in DEFAULT_STATISTICS if all(s in available for s in g)),
                         tuple(available[:1]))
        else:
            group = tuple(statistics)
        wanted = {s: tol for s in group}
    else:
        wanted = dict(precision)
        if statistics is not None and set(statistics) != set(wanted):
            raise ValueError("statistics must name the same statistics as precision= when "
                             "precision is a dict (or be left out)")
    for name in wanted:
        if name not in available:
            raise ValueError(f"statistics: {name!r} is not estimated for this system; choose "
                             f"among {sorted(available)}")
        if name in no_clt:
            raise ValueError(f"precision: {name} cannot be made precise: {no_clt[name]}")
    return wanted


def stage_label(stage: int, targets: Mapping[str, HalfWidth],
                intervals: Mapping[str, Interval]) -> str:
    """What the progress bar of a stage says: its number, each target, the half-width so far.

    Parameters
    ----------
    stage : int
        The stage's number (from 1).
    targets : mapping of str to HalfWidth
        The targets (``""``: the statistics the run targets, before the first stage names
        them).
    intervals : mapping of str to Interval
        The intervals after the stage before (none before the first).

    Returns
    -------
    str

    Examples
    --------
    >>> from recursions.inference._half_widths import absolute, relative
    >>> stage_label(1, {"p_wait": absolute(0.005), "mean_wait": relative(0.02)}, {})
    'stage 1: p_wait ±0.005, mean_wait ±2%'
    >>> iv = Interval("p_wait", 0.4, 0.0081, 0.004, 0.95, 32, 1, True, "")
    >>> stage_label(2, {"p_wait": absolute(0.005)}, {"p_wait": iv})
    'stage 2: p_wait ±0.0081 → ±0.005'
    """
    parts = []
    for name, want in targets.items():
        show = name or "precision"
        goal = f"±{want.value:.3g}" if not want.relative else f"±{100 * want.value:.3g}%"
        iv = intervals.get(name) if name else None
        if iv is None and not name and intervals:  # one target for the run's statistics
            parts += [_now(k, v, want) + f" → {goal}" for k, v in intervals.items()]
            continue
        parts.append(f"{show} {goal}" if iv is None else _now(name, iv, want) + f" → {goal}")
    return f"stage {stage}: " + ", ".join(parts)


def _now(name: str, iv: Interval, want: HalfWidth) -> str:
    """``name ±half-width`` of ``iv``, in the units of ``want`` (``?`` when not trusted)."""
    if not (iv.trusted and math.isfinite(iv.half_width)):
        return f"{name} ±?"
    if want.relative:
        rel = iv.half_width / abs(iv.value) if iv.value else math.inf
        return f"{name} ±{100 * rel:.3g}%"
    return f"{name} ±{iv.half_width:.2g}"


def _mser_key(sums: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """The one series MSER cuts for every statistic of a run.

    The first of :data:`MSER_PREFERENCE` among ``names``
    (:func:`~recursions.engines._run_plan.mser_series`), else the first of ``names``, else
    the first of :data:`MSER_PREFERENCE` among the run's statistics.
    """
    named = [k for k in names if k in sums]
    key = mser_series(named) or next(iter(named), None)
    return key if key is not None else mser_series(list(sums))


class Quiet:
    """The warnings of the stages, kept and passed on once at the end.

    A stage's own batch check looks at its short batches, which the analysis merges: its
    warnings are replaced by the analysis's; the others are passed on once each.
    """

    def __init__(self) -> None:
        self.caught: dict[tuple[type, str], warnings.WarningMessage] = {}

    def __call__(self, run: Callable[[], Any]) -> Any:
        """``run()`` with its warnings kept (those of its batch check dropped)."""
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = run()
        check = getattr(out, "batch_check", None)
        text = check.message() if check is not None else None
        for w in got:
            if text is None or text not in str(w.message):
                self.caught.setdefault((w.category, str(w.message)), w)
        return out

    def pass_on(self, res: SimulationResult) -> SimulationResult:
        """Issue the kept warnings; ``res`` unchanged."""
        for w in self.caught.values():
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return res


def analysed(plan: RunPlan, stages: Any, outlook: dg.Outlook,
             watch: GrowthWatch | None = None) -> SimulationResult:
    """The result of a plan with modes: its stages run (``stages``) and analysed.

    With ``precision=``, stages until every interval is within its target (or a budget
    stops them), each tested by ``watch`` for a workload that grows; else the one stage of
    the fixed budget. ``outlook`` is what the system and its input say of the run before it
    runs (:func:`~recursions.inference.diagnostics.outlook_of`: its floors, its laws'
    variances, where its transient lies).
    """
    modes = plan.modes
    if modes is None:
        raise ValueError("analysed needs a plan with modes")
    quiet = Quiet()
    if modes.precision is not None:
        if watch is None:
            raise ValueError("a run until precise needs a GrowthWatch")
        return quiet.pass_on(_until_precise(stages, quiet, modes, outlook, watch))
    return _fixed_budget(modes, stages, quiet, outlook)


def _hold(precise: bool, n: int, settle: int | None, confirmed: bool) -> str | None:
    """Why a stage whose intervals are all precise does not stop the run, or ``None``.

    ``"settle"``: shorter than ``settle``
    (:func:`~recursions.inference.diagnostics.settle_of`); ``"confirm"``: no settling
    length is known and the stage before was not precise as well.
    """
    if not precise:
        return None
    if settle is None:
        return None if confirmed else "confirm"
    return "settle" if n < settle else None


def _fixed_budget(modes: Modes, stages: Any, quiet: Quiet, outlook: dg.Outlook
                  ) -> SimulationResult:
    """The one stage of a fixed budget, its transient cut (``warmup="auto"``), its warnings."""
    res = quiet.pass_on(quiet(partial(stages.run, modes.steps)))
    kind = outlook.start
    out = _finish(res, list(res.statistics), modes.auto, modes.confidence,
                  min(modes.base, res.steps), kind, outlook.side, modes.statistics)
    # say when its headline intervals are not trusted; with the default batches (32 reported
    # batches a replication) when it is too short for them, too
    short = outlook.short(out.steps) if modes.default else None
    if short is not None and modes.auto:
        short += (" after the warm-up that warmup=\"auto\" cut (more steps, or a longer "
                  "warmup=, cover what it drops)")
    if short is not None and kind == "stationary":
        short += (". The interval of the replications' means (replication_interval) "
                  "does not rest on batch means: exact starts make it valid")
    out = dataclasses.replace(out, _short=short)
    untrusted = untrusted_headline(out)
    if untrusted is not None:
        dg.warn(f"{out.system}: {untrusted}")
    return out


def _finish(res: SimulationResult, names: Sequence[str], auto: bool, confidence: float,
            batches: int, kind: str, side: int, only: Sequence[str] | None = None
            ) -> SimulationResult:
    """``res`` analysed as its modes say: transient cut, estimates from the kept batches.

    With ``auto``, MSER's truncation point drops batches (and their warm-up, profile and
    counts); every estimate's standard error is that of the interval the modes decide on;
    from exact stationary starts the replications' own interval is added; with ``only``,
    the other statistics are dropped (the MSER series a fixed budget kept for the rule).
    """
    sums = res._sums or {}
    key = _mser_key(sums, names) if auto else None
    kept, drop, steady = truncated(sums, key, side)
    changes: dict[str, Any] = {"_sums": kept, "start": kind}
    for name, (n, d) in kept.items():
        if getattr(res, name, None) is not None:
            iv = interval(n, d, confidence, statistic=name)
            if math.isfinite(iv.se):
                changes[name] = Estimate(iv.value, iv.se)
    if kind == "stationary" and res.replications >= 2:
        changes["replication_interval"] = {
            k: replication_interval(n, d, confidence, statistic=k) for k, (n, d) in kept.items()}
    if auto:
        changes["warmup_rule"] = "mser"
    if drop:
        # batch b holds the arrivals k with k * batches // steps == b (equal within one)
        dropped = -(-drop * res.steps // batches)
        changes.update(warmup=res.warmup + dropped, steps=res.steps - dropped)
        for f in ("_prof", "_den", "_fprof", "_fden"):
            a = getattr(res, f)
            if a is not None and np.ndim(a) >= 2 and np.shape(a)[1] == batches:
                changes[f] = a[:, drop:]
        if res._phases is not None and res._phases.sums.shape[1] == batches:
            changes["_phases"] = dataclasses.replace(res._phases,
                                                     sums=res._phases.sums[:, drop:])
    if only is not None:
        changes.update({k: None for k in STATISTICS
                        if k not in only and getattr(res, k, None) is not None})
        changes["_sums"] = {k: v for k, v in kept.items() if k in only}
    if auto and not steady:
        dg.warn(f"{res.system}: warmup='auto' found no steady part: MSER's truncation point "
                "sits at half the run, the most it may drop, so the run is too short for its "
                "transient (or the system drifts); run longer")
    return dataclasses.replace(res, **changes)


def _guarded(iv: Interval, prev: tuple[float, float] | None, seen: float) -> Interval:
    """``iv`` with the larger of its standard error and the last stage's, scaled to this one.

    The run stops the first time an interval is narrow enough, which favours a stage whose
    standard error came out small by chance; the previous stage's estimate of the same
    asymptotic variance (``se^2 n`` is about constant) guards against that. ``prev`` is
    itself guarded, so the guard is a running maximum over the stages at or over the floor
    (:func:`recursions.inference.diagnostics.floor_of`) since the statistic was last untrusted: a
    stage under the floor guards no later stage (on 100 servers the first stage's errors, from a few
    busy periods, held some runs of M/M/100 at 0.8 to sixteen times its oracle run length).
    """
    if prev is None or not iv.trusted or not (seen > 0):
        return iv
    se_prev, seen_prev = prev
    scaled = se_prev * math.sqrt(seen_prev / seen)
    if not scaled > iv.se:
        return iv
    r = scaled / iv.se
    return dataclasses.replace(iv, se=scaled, half_width=iv.half_width * r, shift=iv.shift * r)


def _plain_half_width(iv: Interval) -> float:
    """``z se``: what the half-width tends to as the run grows (the stages' growth uses it).

    The skewness correction widens a short run's interval most (short batches are the most
    skewed) and fades as the batches lengthen; predicting the next stage from the widened
    half-width overshot (:ref:`intervals-precision`).
    """
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + iv.confidence / 2.0) * iv.se


def _not_reached(stopped: str, zero: Sequence[str], ivs: Mapping[str, Interval],
                 tol: Mapping[str, float], needed: Mapping[str, int | None], n: int,
                 floors: tuple[int, int | None], steady: bool, hold: str | None,
                 growth: Growth | None = None) -> str:
    """Why the precision was not reached (the warning's text after "precision not reached")."""
    if growth is not None:
        return (f" (unstable): {growth}: the system looks unstable: its workload does not "
                "level off, so no run length makes the intervals precise, and the estimates "
                "describe a transient that depends on the run length, not a steady state "
                "(ly.check_stability tests it)")
    floor, settle = floors
    calm = "(a short run that stayed calm looks more precise than it is)"
    under = (f"under the {floor:,} arrivals per replication ({dg.MIN_PER_SERVER} a server) a run "
             "must measure before its intervals count (a transient may outlast a shorter "
             "run)") if n < floor else (
        f"under the {settle:,} arrivals per replication ({dg.MIN_RELAXATIONS} heavy-traffic "
        f"relaxation times) a run must measure before it may stop as precise {calm}"
    ) if settle is not None and n < settle else (
        "precise at its last stage only, and a system with no heavy-traffic time scale must "
        f"be precise at two stages in a row before it may stop {calm}"
    ) if hold == "confirm" else ""
    if stopped == "zero":
        return (f": {', '.join(zero)} stayed 0 over {n:,} arrivals per replication, and a "
                "relative half-width of 0 cannot be reached: ask for an absolute one "
                "(relative=False), or run longer" + (f"; it also stopped {under}" if under
                                                     else ""))
    missed = [k for k in needed
              if not (steady and ivs[k].trusted and ivs[k].half_width <= tol[k])]
    return f" ({stopped}): " + "; ".join(([f"{n:,} arrivals, {under}"] if under else []) + [
        f"{k} half-width {ivs[k].half_width:.3g} against {tol[k]:.3g}"
        + ("" if ivs[k].trusted else " (batch means still correlated)")
        + (f", about {needed[k]:,} arrivals needed" if needed[k] is not None else "")
        for k in missed])


def _growth(short: Sequence[str], ivs: Mapping[str, Interval], tol: Mapping[str, float],
            steady: bool, n: int, floor: int) -> float:
    """The factor the next stage grows by, from the intervals of ``short``.

    As their half-widths say, with a margin of 1.2 (from :data:`MIN_GROWTH` to 16); 2 while
    some batch means are still correlated; enough to reach ``floor`` (by at most 16).
    """
    grow = [(_plain_half_width(ivs[k]) / tol[k]) ** 2 * 1.2 for k in short
            if steady and ivs[k].trusted and tol[k] > 0]
    factor = 2.0 if len(grow) < len(short) else min(16.0, max(MIN_GROWTH, max(grow)))
    if n < floor:
        factor = max(factor, min(16.0, floor / n))
    return factor


def _report(targets: Mapping[str, HalfWidth], confidence: float, ivs: dict[str, Interval],
            short: Sequence[str], needed: dict[str, int | None], run: tuple[int, int, int],
            stopped: str, growth: Growth | None) -> PrecisionReport:
    """The :class:`PrecisionReport` of a run that stopped (``run``: stages, steps, used)."""
    return PrecisionReport(target={k: t.value for k, t in targets.items()},
                           relative={k: t.relative for k, t in targets.items()},
                           confidence=confidence, reached=not short, intervals=ivs,
                           missed=tuple(short), needed=needed, stages=run[0], steps=run[1],
                           steps_used=run[2], stopped_by=stopped, growth=growth)


def _until_precise(stages: Any, quiet: Quiet, modes: Modes, outlook: dg.Outlook,
                   watch: GrowthWatch) -> SimulationResult:
    """Stages until every interval is within its target (the module's docstring), or a budget.

    ``outlook`` gives the floors: :func:`~recursions.inference.diagnostics.floor_of` (no stop,
    nor growth slower than to reach it, below) and
    :func:`~recursions.inference.diagnostics.settle_of` (a run precise below it goes on to it;
    ``None``: a run precise at one stage goes on to confirm it at the next). ``watch`` tests
    each stage for a workload that grows
    (:class:`~recursions.inference._unstable_stop.GrowthWatch`) and stops the run as
    ``"unstable"`` when it rejects.
    """
    floors = floor, settle = outlook.floor, outlook.settle
    kind, side = outlook.start, outlook.side
    precision, confidence = modes.precision, modes.confidence
    assert precision is not None  # a run until precise has its targets
    statistics, max_seconds, auto = modes.statistics, modes.max_seconds, modes.auto
    cap = modes.max_steps
    n = stages.first(modes.first, cap)
    t0, count = time.perf_counter(), 0
    # name -> (se, observations) of the last trusted stage at or over the floor, guarded
    # itself: a running maximum of those stages' standard errors scaled to the current length
    prev: dict[str, tuple[float, float]] = {}
    confirmed = False  # the last stage was precise too
    ivs: dict[str, Interval] = {}  # the last stage's intervals (the progress bar shows them)
    growth: Growth | None = None  # the test that stopped the run as unstable
    while True:
        t1 = time.perf_counter()
        res = quiet(partial(stages.run, n, stage_label(count + 1, precision, ivs)))
        spent = (time.perf_counter() - t1) / max(1, stages.ran)  # per arrival
        count += 1
        targets = _targets(precision, statistics, res.statistics, res._no_clt or {})
        names = list(targets)
        sums = res._sums or {}
        key = _mser_key(sums, names) if auto else None
        kept, _, steady = truncated(sums, key, side)
        ivs = {k: interval(*kept[k], confidence, statistic=k) for k in names}
        seen = {k: float(kept[k][1].sum()) for k in names}
        ivs = {k: _guarded(ivs[k], prev.get(k), seen[k]) for k in names}
        if n >= floor:  # a stage under the floor guards no later stage
            prev = {k: (ivs[k].se, seen[k]) for k in names if ivs[k].trusted}
        tol = {k: targets[k].of(ivs[k].value) for k in names}
        short = [k for k in names if n < floor
                 or not (steady and ivs[k].trusted and ivs[k].half_width <= tol[k])]
        hold = _hold(not short, n, settle, confirmed)  # precise, but too soon to know it
        if not short and hold is None:
            stopped = "precision"
            break
        growth = watch(sums, n)
        if growth is not None:  # the workload grows: no stage will be precise
            short, zero, stopped = list(names), [], "unstable"
            break
        confirmed = not short
        zero = [k for k in short if targets[k].relative and ivs[k].value == 0.0]
        if zero and count >= 3:  # nothing seen in three stages: a relative target is moot
            stopped = "zero"
            break
        if hold is not None:  # to the settling length (by at most 16 times), or one stage on
            short = list(names)
            target = (min(16.0 * n, max(MIN_GROWTH * n, float(settle)))
                      if settle is not None else MIN_GROWTH * n)
        else:
            target = n * _growth(short, ivs, tol, steady, n, floor)
        nxt = stages.next(n, target, cap)  # at most cap: the last stage it allows
        if nxt <= n:
            stopped = "max_steps"
            break
        # the first stage's time includes compiling the kernels: no guide to the next one's
        ahead = spent * stages.ahead(n, nxt) if count >= 2 else 0.0
        if max_seconds is not None and (time.perf_counter() - t0 + ahead) > float(max_seconds):
            stopped = "max_seconds"
            break
        n = nxt
    # below the floors a stage must reach them, whatever its half-widths say
    least = max(floor, settle or 0, math.ceil(MIN_GROWTH * n) if hold == "confirm" else 0)
    needed = {k: (max(math.ceil(n * (_plain_half_width(ivs[k]) / tol[k]) ** 2), least)
                  if steady and ivs[k].trusted and tol[k] > 0 and growth is None else None)
              for k in short}
    report = _report(targets, confidence, ivs, short, needed, (count, n, stages.used),
                     stopped, growth)
    missed = None if not short else (
        f"{res.system}: precision not reached"
        + _not_reached(stopped, zero, ivs, tol, needed, n, floors, steady, hold, growth))
    out = _finish(res, names, auto, confidence, min(modes.base, n), kind, side)
    final: dict[str, Any] = {  # the estimates of the intervals the run stopped on
        k: Estimate(ivs[k].value, ivs[k].se) for k in names
        if getattr(out, k) is not None and math.isfinite(ivs[k].se)}
    if missed is not None:
        dg.warn(missed)
    return dataclasses.replace(out, precision=report, **final)
