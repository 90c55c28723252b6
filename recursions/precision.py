"""Run until precise, truncate the transient, start from stationarity: ``simulate``'s modes.

:func:`recursions.simulate` hands a call here when it asks for ``precision=``,
``warmup="auto"`` or ``start=``; this module runs plain stages on the engine that
:func:`recursions.engines.planned` chooses (it never calls ``simulate`` back: the data flow
one way, ``simulate`` to here to the engines) and analyses the batch sums they return
(:mod:`recursions.output_analysis`).

Run until precise
-----------------
Stage ``k`` reports ``n_k`` arrivals per replication in :data:`BASE_BATCHES` batches: the
numbers of one run of ``n_k`` arrivals from the seed (they do not depend on the chunking or
the thread count, as for every run). The dense and heap engines *go on* from where stage
``k - 1`` stopped (:class:`_Continued`: each arrival is simulated once; the run keeps finer
batches, whole parts of the next stage's, :class:`recursions.workload.RunHandle`); the
queue-length engines, which cannot go on, retrace the path from the seed
(:class:`_Retraced`: a stage costs what the stages before it cost again). After each stage
the transient is cut by MSER (with ``warmup="auto"``), every named statistic gets its
interval (:func:`~recursions.output_analysis.interval`), and the run stops when every
interval is trusted (its batch means passed the independence test) and its half-width is
within the target. Otherwise the next stage is longer: by the factor the half-widths say is
needed, with a margin of 1.2 (at least :data:`MIN_GROWTH`, at most 16; rounded up to a length
whose batches nest), or 2 while the batch means are still correlated. A budget (``max_steps``
per replication, ``max_seconds`` in all) stops the run early; the report then names the
intervals that missed the target and the steps they would need.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import diagnostics as dg
from ._rng import RngLike, as_seed_sequence
from .engines import planned
from .estimate import Estimate
from .output_analysis import Interval, interval, mser, replication_interval
from .result import SimulationResult, untrusted_headline
from .tables import Record

__all__ = ["BASE_BATCHES", "PrecisionReport", "simulate_modes"]

BASE_BATCHES = 256
"""Batches per replication of every stage (merged by the independence test)."""

FIRST_STEPS = 2**14
"""Arrivals per replication of the first stage, unless ``steps`` says otherwise."""

MIN_PER_SERVER = 256
"""Arrivals per server (per replication) a run must measure before its precision counts,
unless it starts from exact stationary states.

MSER cannot tell a transient that outlasts the run from a steady level: LL(2) on 1000
servers at load 0.95, started empty, stopped after 16 to 33 arrivals per server in 6 of 200
runs, with intervals all below the true mean wait (``docs/intervals.md``, "Asking for a
precision"). A run shorter than this goes on, in stages, until it has measured
``MIN_PER_SERVER * servers`` arrivals."""

MIN_GROWTH = 1.25
"""The least factor a stage grows by when every interval is trusted (twice while not)."""

MAX_STEPS = 2**32
"""Default most arrivals per replication of one stage."""

DEFAULT_STATISTICS = (("p_wait", "mean_wait"), ("mean_response",), ("p_loss",),
                      ("mean_workload",))
"""The statistics ``precision=`` targets by default: the first group the system estimates."""


@dataclasses.dataclass(frozen=True)
class PrecisionReport(Record):
    """What ``simulate(precision=...)`` reached.

    Attributes
    ----------
    target : dict of str to float
        The half-width asked for each statistic (relative to its value when ``relative``).
    relative : bool
        Whether the targets are relative half-widths.
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
        ``"precision"``, ``"max_steps"``, ``"max_seconds"``, or ``"zero"`` (a statistic with a
        relative target stayed 0 for three stages).
    """

    target: dict[str, float]
    relative: bool
    confidence: float
    reached: bool
    intervals: dict[str, Interval]
    missed: tuple[str, ...]
    needed: dict[str, int | None]
    stages: int
    steps: int
    steps_used: int
    stopped_by: str

    def __str__(self) -> str:
        head = ("reached" if self.reached else f"not reached ({self.stopped_by})")
        lines = [f"precision {head}: {self.stages} stage(s), last {self.steps:,} arrivals, "
                 f"{self.steps_used:,} simulated in all"]
        for name, iv in self.intervals.items():
            tol = self.target.get(name)
            rel = " relative" if self.relative else ""
            want = "" if tol is None else f" (target {tol:g}{rel})"
            lines.append(f"  {iv}{want}")
        for name in self.missed:
            n = self.needed.get(name)
            lines.append(f"  {name}: needs "
                         + (f"about {n:,} arrivals per replication" if n is not None
                            else "longer runs (its batch means are still correlated)"))
        return "\n".join(lines)



def _fresh(ss: np.random.SeedSequence) -> np.random.SeedSequence:
    """A copy of ``ss`` that has spawned nothing yet (every stage spawns the same children)."""
    return np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                  n_children_spawned=ss.n_children_spawned)


def _targets(precision: Any, statistics: Sequence[str] | None,
             available: Sequence[str], no_clt: Mapping[str, str]) -> dict[str, float]:
    if isinstance(statistics, str):  # one name
        statistics = (statistics,)
    if isinstance(precision, Mapping):
        wanted = {str(k): float(v) for k, v in precision.items()}
        if statistics is not None and set(statistics) != set(wanted):
            raise ValueError("statistics must name the same statistics as precision= when "
                             "precision is a dict (or be left out)")
    else:
        tol = float(precision)
        if statistics is None:
            group = next((g for g in DEFAULT_STATISTICS if all(s in available for s in g)),
                         tuple(available[:1]))
        else:
            group = tuple(statistics)
        wanted = {s: tol for s in group}
    for name, tol in wanted.items():
        if name not in available:
            raise ValueError(f"statistics: {name!r} is not estimated for this system; choose "
                             f"among {sorted(available)}")
        if name in no_clt:
            raise ValueError(f"precision: {name} cannot be made precise: {no_clt[name]}")
        if not (math.isfinite(tol) and tol > 0):
            raise ValueError(f"precision must be a finite half-width > 0, got {tol!r} for "
                             f"{name}")
    return wanted


MSER_PREFERENCE = ("mean_wait", "mean_response", "mean_workload", "mean_jobs", "p_wait")
"""The statistic MSER's truncation point is chosen on: the first of these the run has (one
series, not the most truncated of several, which multiplied the rule's false alarms)."""


def _with_mser_series(system: Any, statistics: Any, auto: bool) -> tuple[str, ...] | None:
    """``statistics=`` as the run keeps it: with ``warmup="auto"``, also MSER's series.

    MSER cuts the transient on the first statistic of :data:`MSER_PREFERENCE` the system has,
    whatever the user keeps, so that naming statistics never moves the truncation point;
    :func:`_only` drops it from the result again.
    """
    if statistics is None:
        return None
    names = (statistics,) if isinstance(statistics, str) else tuple(statistics)
    if not auto:
        return names
    from .workload_result import estimated

    have = estimated(system)
    key = next((k for k in MSER_PREFERENCE if k in have), None)
    return names if key is None or key in names else (*names, key)


def _only(res: SimulationResult, names: Sequence[str]) -> SimulationResult:
    """``res`` reporting only the statistics ``names`` (the others ``None``)."""
    from .plan import STATISTICS

    drop: dict[str, Any] = {k: None for k in STATISTICS
                            if k not in names and getattr(res, k, None) is not None}
    sums = {k: v for k, v in (res._sums or {}).items() if k in names}
    return dataclasses.replace(res, _sums=sums, **drop)


def _side(system: Any, kind: str) -> int:
    """Which side of the steady level the transient lies on (:func:`mser`'s ``side``).

    Below for a monotone system started empty: its workloads, waits and jobs then grow
    stochastically from 0 to their stationary law. Either side otherwise (a map that is not
    monotone can overshoot; a given state or an equilibrium profile can lie on either side).
    """
    return -1 if kind == "empty" and bool(getattr(system, "monotone", False)) else 0


def _kept(res: SimulationResult, names: Sequence[str], auto: bool, side: int
          ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], int, bool]:
    """The batch sums after the MSER truncation (when ``auto``), batches dropped, steady."""
    sums = res._sums or {}
    drop, steady = 0, True
    if auto:
        key = next((k for k in (*MSER_PREFERENCE, *names) if k in sums and k in names),
                   next((k for k in MSER_PREFERENCE if k in sums), None))
        if key is not None:
            drop, steady = mser(*sums[key], side=side)
    return {k: (n[:, drop:], d[:, drop:]) for k, (n, d) in sums.items()}, drop, steady


def _truncated(res: SimulationResult, kept: dict[str, tuple[np.ndarray, np.ndarray]],
               drop: int, batches: int, confidence: float, auto: bool) -> SimulationResult:
    """``res`` with its estimates (after a truncation also profile and counts) from kept batches.

    The standard errors are those of the intervals the modes decide on.
    """
    changes: dict[str, Any] = {"_sums": kept}
    for name, (n, d) in kept.items():
        if getattr(res, name, None) is not None:
            iv = interval(n, d, confidence, statistic=name)
            if math.isfinite(iv.se):
                changes[name] = Estimate(iv.value, iv.se)
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
    return dataclasses.replace(res, **changes)


def _start_states(start: Any, system: Any, input: Any, nrep: int,
                  ss: np.random.SeedSequence) -> tuple[np.ndarray, str]:
    from .starts import states_from_profile, stationary_states
    from .systems import check_system

    check_system(system, needs_map="a start state (a vector of workloads)")
    seed = np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, 0x5747))
    if isinstance(start, str):
        if start != "stationary":
            raise ValueError(f"start must be 'stationary', a profile or None, got {start!r}")
        return stationary_states(system, input, nrep, seed), "stationary"
    gen = np.random.default_rng(seed)
    return (states_from_profile(start, system.servers, nrep, gen, scale=input.mean_service),
            "profile")


def simulate_modes(system: Any, input: Any, steps: int | None, *, precision: Any,
                   relative: bool, confidence: float, statistics: Sequence[str] | None,
                   max_steps: int | None, max_seconds: float | None, warmup: Any, start: Any,
                   replications: int, rng: RngLike = 1, w0: Any, batches: int | None,
                   time_: float | None, **rest: Any) -> SimulationResult:
    """:func:`recursions.simulate` with ``precision=``, ``warmup="auto"`` or ``start=``.

    ``simulate`` hands its arguments over unchanged (``time=`` as ``time_``); see its
    docstring for them and for the result. Not meant to be called directly.

    Examples
    --------
    >>> import recursions as rc
    >>> res = simulate_modes(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)), 20_000,
    ...                      precision=None, relative=True, confidence=0.95, statistics=None,
    ...                      max_steps=None, max_seconds=None, warmup="auto", start=None,
    ...                      replications=1, rng=1, w0=None, batches=None, time_=None)
    >>> res.warmup_rule
    'mser'
    """
    from ._validate import check_count, check_int

    if time_ is not None:
        raise ValueError("precision=, warmup='auto' and start= count arrivals: give steps, "
                         "not time=")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    auto = isinstance(warmup, str)
    if auto and warmup != "auto":
        raise ValueError(f"warmup must be an integer >= 0 or 'auto', got {warmup!r}")
    fixed_warmup = 0 if auto else check_count(warmup, "warmup", 0)
    nrep = check_int(replications, "replications", 1)
    ss = as_seed_sequence(rng)
    ss = _fresh(ss)
    kind = "empty" if w0 is None else "given"
    if start is not None:
        if w0 is not None:
            raise ValueError("give start= or w0=, not both")
        w0, kind = _start_states(start, system, input, nrep, ss)
        if kind == "stationary":
            auto, fixed_warmup = False, 0  # an exact start has no transient to cut
    side = _side(system, kind)
    base = BASE_BATCHES if batches is None else check_int(batches, "batches", 1)
    if precision is not None and base * nrep < 64:
        raise ValueError(f"precision= needs at least 64 batches in all (batches x replications, "
                         f"got {base} x {nrep}): the test of independence merges them down to "
                         "16; leave batches= out (256 per replication)")

    caught: dict[tuple[type, str], warnings.WarningMessage] = {}

    def quietly(run: Any) -> Any:
        # a stage's own batch check looks at its 256 short batches, which the analysis
        # here merges: its warnings are replaced by this module's; others are passed on once
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = run()
        check = getattr(out, "batch_check", None)
        text = check.message() if check is not None else None
        for w in got:
            if text is None or text not in str(w.message):
                caught.setdefault((w.category, str(w.message)), w)
        return out

    def passed_on(res: SimulationResult) -> SimulationResult:
        for w in caught.values():
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return res

    def once(n: int) -> SimulationResult:
        def run() -> SimulationResult:
            plan, engine = planned(system, input, n, warmup=fixed_warmup, replications=nrep,
                                   rng=_fresh(ss), w0=w0, batches=min(base, n), **rest)
            return engine.run(system, plan)
        return quietly(run)

    if precision is None:
        if steps is None:
            raise ValueError("steps is required (or precision= to run until precise)")
        kept = _with_mser_series(system, statistics, auto)
        if kept is not None:  # without a target, the statistics to keep
            rest = dict(rest, statistics=kept)
        res = once(check_count(steps, "steps", 1))
        passed_on(res)
        out = _finish(res, list(res.statistics), auto, confidence, min(base, res.steps), kind,
                      side)
        if kept is not None and statistics is not None:
            out = _only(out, (statistics,) if isinstance(statistics, str) else statistics)
        if batches is None:  # a fixed budget: say when its headline intervals are not trusted
            short = dg.short_run(system.relaxation(input), out.steps)
            if short is not None and kind == "stationary":
                short += (". The interval of the replications' means (replication_interval) "
                          "does not rest on batch means: exact starts make it valid")
            out = dataclasses.replace(out, _short=short)
            untrusted = untrusted_headline(out)
            if untrusted is not None:
                dg.warn(f"{out.system}: {untrusted}")
        return out
    first = FIRST_STEPS if steps is None else check_count(steps, "steps", 1)
    cap = MAX_STEPS if max_steps is None else check_count(max_steps, "max_steps", 1)
    stages = (_Retraced(once, base, nrep, fixed_warmup) if min(first, cap) < base else
              _stages(system, input, once, quietly, base, nrep, fixed_warmup,
                      dict(rest, w0=w0, rng=_fresh(ss))))
    floor = 0 if kind == "stationary" else MIN_PER_SERVER * int(getattr(system, "servers", 1))
    out = _until_precise(stages, steps, precision, relative, confidence, statistics, max_steps,
                         max_seconds, auto, nrep, fixed_warmup, base, kind, side, floor)
    return passed_on(out)


MICRO = 16
"""Most kept batches per analysis batch of a stage that goes on (:class:`_Continued`)."""

MICRO_DOUBLES = 2**25
"""Most numbers the kept batches of a stage that goes on may hold (256 MiB)."""


def _stages(system: Any, input: Any, once: Any, quietly: Any, base: int, nrep: int,
            warmup: int, options: dict[str, Any]) -> _Retraced | _Continued:
    """How the stages run: going on where the engine can (``continues``), else retraced."""
    from .chunks import batch_doubles

    plan, engine = planned(system, input, FIRST_STEPS, warmup=warmup, replications=nrep,
                           batches=base, **options)
    if not engine.continues or plan.record:
        return _Retraced(once, base, nrep, warmup)
    micro = max(1, min(MICRO, MICRO_DOUBLES // (base * batch_doubles(plan) * nrep)))
    return _Continued(plan, engine, system, quietly, base, micro)


class _Retraced:
    """Stages that each run anew from the seed (an engine whose runs cannot go on).

    Stage ``k + 1`` retraces stage ``k``'s path and goes on: it costs what the stages before
    it cost again.
    """

    def __init__(self, once: Any, base: int, nrep: int, warmup: int) -> None:
        self.once, self.base, self.nrep, self.warmup = once, base, nrep, warmup
        self.used = 0  # arrivals simulated in all
        self.ran = 0  # arrivals per replication the last stage simulated

    def first(self, n: int, cap: int) -> int:
        """The first stage's length for ``n`` asked."""
        return min(n, cap)

    def next(self, n: int, target: float, cap: int) -> int:
        """The next stage's length: ``target`` as a whole number of batches, at most ``cap``."""
        return min(-(-math.ceil(target) // self.base) * self.base, cap)

    def ahead(self, n: int, nxt: int) -> int:
        """Arrivals per replication the stage of ``nxt`` simulates after one of ``n``."""
        return nxt

    def run(self, n: int) -> SimulationResult:
        """The stage of ``n`` arrivals per replication, in :data:`BASE_BATCHES` batches."""
        self.used += (n + self.warmup) * self.nrep
        self.ran = n
        return self.once(n)


class _Continued:
    """Stages that go on where the last stopped (:class:`recursions.workload.RunHandle`).

    A stage of ``B r g`` arrivals keeps ``B r`` batches of ``g`` arrivals (``B`` those of the
    analysis, ``r`` at most ``micro``): the analysis groups them ``r`` by ``r``. The next
    stage, of ``B r' g'`` arrivals with ``g'`` a power-of-two multiple of ``g``, adds its
    arrivals to batches of which those so far are whole parts
    (:func:`recursions.workload.rebin`). So a stage reports the numbers of one run of its
    length (up to the order of the sums) and no arrival is simulated twice; the lengths round
    the target up by less than ``1 / 8`` once ``r`` passes 8.
    """

    def __init__(self, plan: Any, engine: Any, system: Any, quietly: Any, base: int,
                 micro: int) -> None:
        self.plan, self.engine, self.system, self.quietly = plan, engine, system, quietly
        self.base, self.micro = base, micro
        self.handle: Any = None
        self.g = 1  # arrivals per kept batch
        self.g_next = 1  # that of the length next() chose
        self.used = 0
        self.ran = 0

    def first(self, n: int, cap: int) -> int:
        """The first stage's length: ``n`` (at most ``cap``) rounded down to ``B r g``.

        ``g`` is the least size that keeps ``r`` within ``micro``, so the rounding loses less
        than ``B g`` arrivals (``steps=8000``: 7680; the default ``2**14``: itself).
        """
        n = min(n, cap)
        self.g = self.g_next = max(1, -(-n // (self.base * self.micro)))
        return self.base * self.g * min(self.micro, max(1, n // (self.base * self.g)))

    def next(self, n: int, target: float, cap: int) -> int:
        """The least ``B r' g'`` from ``target`` on (at most ``cap``; ``n`` when none fits)."""
        target = min(target, float(cap))
        g = self.g
        while math.ceil(target / (self.base * g)) > self.micro:
            g *= 2
        r = math.ceil(target / (self.base * g))
        if self.base * r * g > cap:
            r = cap // (self.base * g)
        self.g_next = g
        return max(self.base * r * g, n)

    def ahead(self, n: int, nxt: int) -> int:
        """Arrivals per replication the stage of ``nxt`` simulates after one of ``n``."""
        return nxt - n

    def run(self, n: int) -> SimulationResult:
        """The stage of ``n`` arrivals per replication: the run so far goes on to ``n``."""
        self.g = self.g_next
        nrep = self.plan.replications
        if self.handle is None:
            plan = dataclasses.replace(self.plan, steps=n, batches=n // self.g)
            self.handle = self.quietly(lambda: self.engine.start(self.system, plan))
            self.used += (n + plan.warmup) * nrep
            self.ran = n
        else:
            done = int(self.handle.plan.steps)
            self.quietly(lambda: self.handle.extend(n, n // self.g))
            self.used += (n - done) * nrep
            self.ran = n - done
        return self.quietly(lambda: self.handle.result(batches=self.base))


def _finish(res: SimulationResult, names: Sequence[str], auto: bool, confidence: float,
            batches: int, kind: str, side: int) -> SimulationResult:
    kept, drop, steady = _kept(res, names, auto, side)
    if auto and not steady:
        dg.warn(f"{res.system}: warmup='auto' found no steady part: MSER's truncation point "
                "sits at half the run, the most it may drop, so the run is too short for its "
                "transient (or the system drifts); run longer")
    out = _truncated(res, kept, drop, batches, confidence, auto)
    extra: dict[str, Any] = {"start": kind}
    if kind == "stationary" and res.replications >= 2:
        extra["replication_interval"] = {
            k: replication_interval(n, d, confidence, statistic=k)
            for k, (n, d) in (out._sums or {}).items()}
    return dataclasses.replace(out, **extra)


def _guarded(iv: Interval, prev: tuple[float, float] | None, seen: float) -> Interval:
    """``iv`` with the larger of its standard error and the last stage's, scaled to this one.

    The run stops the first time an interval is narrow enough, which favours a stage whose
    standard error came out small by chance; the previous stage's estimate of the same
    asymptotic variance (``se^2 n`` is about constant) guards against that.
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
    half-width overshot (M/D/1 at 0.9: stages 16 times longer than needed).
    """
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + iv.confidence / 2.0) * iv.se


def _until_precise(stages: _Retraced | _Continued, steps: int | None, precision: Any,
                   relative: bool,
                   confidence: float, statistics: Sequence[str] | None,
                   max_steps: int | None, max_seconds: float | None, auto: bool, nrep: int,
                   fixed_warmup: int, base: int, kind: str, side: int, floor: int = 0
                   ) -> SimulationResult:
    from ._validate import check_count

    n = FIRST_STEPS if steps is None else check_count(steps, "steps", 1)
    cap = MAX_STEPS if max_steps is None else check_count(max_steps, "max_steps", 1)
    if max_seconds is not None and not (float(max_seconds) > 0):
        raise ValueError(f"max_seconds must be > 0, got {max_seconds!r}")
    n = stages.first(n, cap)
    t0, count = time.perf_counter(), 0
    # name -> (se, observations) of the last stage, guarded itself: a running maximum of the
    # stages' standard errors scaled to the current length
    prev: dict[str, tuple[float, float]] = {}
    while True:
        t1 = time.perf_counter()
        res = stages.run(n)
        spent = (time.perf_counter() - t1) / max(1, stages.ran)  # per arrival
        count += 1
        targets = _targets(precision, statistics, res.statistics, res._no_clt or {})
        names = list(targets)
        kept, _, steady = _kept(res, names, auto, side)
        ivs = {k: interval(*kept[k], confidence, statistic=k) for k in names}
        seen = {k: float(kept[k][1].sum()) for k in names}
        ivs = {k: _guarded(ivs[k], prev.get(k), seen[k]) for k in names}
        prev = {k: (ivs[k].se, seen[k]) for k in names if ivs[k].trusted}
        tol = {k: targets[k] * (abs(ivs[k].value) if relative else 1.0) for k in names}
        # a run shorter than the floor goes on, however steady it looks (MIN_PER_SERVER)
        short = [k for k in names if n < floor
                 or not (steady and ivs[k].trusted and ivs[k].half_width <= tol[k])]
        if not short:
            stopped = "precision"
            break
        zero = [k for k in short if relative and ivs[k].value == 0.0]
        if zero and count >= 3:  # nothing seen in three stages: a relative target is moot
            stopped = "zero"
            break
        grow = [(_plain_half_width(ivs[k]) / tol[k]) ** 2 * 1.2 for k in short
                if steady and ivs[k].trusted and tol[k] > 0]
        factor = 2.0 if len(grow) < len(short) else min(16.0, max(MIN_GROWTH, max(grow)))
        if n < floor:
            factor = max(factor, min(16.0, floor / n))
        nxt = stages.next(n, n * factor, cap)  # at most cap: the last stage it allows
        if nxt <= n:
            stopped = "max_steps"
            break
        # the first stage's time includes compiling the kernels: no guide to the next one's
        ahead = spent * stages.ahead(n, nxt) if count >= 2 else 0.0
        if max_seconds is not None and (time.perf_counter() - t0 + ahead) > float(max_seconds):
            stopped = "max_seconds"
            break
        n = nxt
    needed = {k: (math.ceil(n * (_plain_half_width(ivs[k]) / tol[k]) ** 2)
                  if steady and ivs[k].trusted and tol[k] > 0 else None) for k in short}
    report = PrecisionReport(target=dict(targets), relative=relative, confidence=confidence,
                             reached=not short, intervals=ivs, missed=tuple(short),
                             needed=needed, stages=count, steps=n, steps_used=stages.used,
                             stopped_by=stopped)
    out = _finish(res, names, auto, confidence, min(base, n), kind, side)
    final: dict[str, Any] = {  # the estimates of the intervals the run stopped on
        k: Estimate(ivs[k].value, ivs[k].se) for k in names
        if getattr(out, k) is not None and math.isfinite(ivs[k].se)}
    out = dataclasses.replace(out, **final)
    if stopped == "zero":
        dg.warn(f"{out.system}: precision not reached: {', '.join(zero)} stayed 0 over "
                f"{n:,} arrivals per replication, and a relative half-width of 0 cannot be "
                "reached: ask for an absolute one (relative=False), or run longer")
    elif short and n < floor:
        dg.warn(f"{out.system}: precision not reached ({stopped}): {n:,} arrivals per "
                f"replication, under the {floor:,} ({MIN_PER_SERVER} a server) a run must "
                "measure before its intervals count (a transient may outlast a shorter run)")
    elif short:
        dg.warn(f"{out.system}: precision not reached ({stopped}): " + "; ".join(
            f"{k} half-width {ivs[k].half_width:.3g} against {tol[k]:.3g}"
            + ("" if ivs[k].trusted else " (batch means still correlated)")
            + (f", about {needed[k]:,} arrivals needed" if needed[k] is not None else "")
            for k in short))
    return dataclasses.replace(out, precision=report)
