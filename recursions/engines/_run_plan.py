"""What a run of :func:`recursions.simulate` is asked to do, validated once: :class:`RunPlan`.

:func:`make_plan` checks the keywords every engine reads (the system, the input, ``steps`` or
``time``, the warm-up, replications, batches, chunk, grid, ``profile_every``) and those of
``simulate``'s modes (``precision=``, ``warmup="auto"``, ``start=``: :class:`Modes`), and
freezes them; the engines of :mod:`recursions.engines._registry` then say whether they can run the
plan
(``refuses``) and run it, and :mod:`recursions.inference._run_modes` runs the stages of a plan with
modes. What only one engine needs (a workload vector ``w0``, the memory of its arrays) is checked by
that engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from recursions.common._checks import MAX_COUNT, check_count, check_int, check_positive
from recursions.common._rng import RngLike
from recursions.inference._half_widths import HalfWidth, half_widths
from recursions.model._inputs import Input, check_input
from recursions.results._statistics import REGISTRY, customer_statistics

__all__ = ["BASE_BATCHES", "DEFAULT_CHUNK", "DEFAULT_LEVELS", "DEFAULT_STATISTICS",
           "FIRST_SNAPSHOTS", "FIRST_STEPS", "LEAN_STATISTICS", "MAX_STEPS", "MSER_PREFERENCE",
           "REPORTED_BATCHES", "STATISTICS", "Modes", "RunPlan", "Simulable", "check_statistics",
           "default_batches", "kept_statistics", "make_plan", "mser_series"]

DEFAULT_CHUNK = 8192
"""Arrivals drawn and simulated per chunk where draws are made in blocks (``chunk=``)."""

DEFAULT_LEVELS = 33
"""Levels of the profile grid when the user gives none (``Tables.fixed`` of the chunk loop)."""

REPORTED_BATCHES = 32
"""Batches per replication behind the estimates of a fixed-budget run with default batches."""

FINE_BATCHES = 256
"""Batches in all (over the replications) a fixed-budget run with default batches aims at, for
the test of independence of :func:`recursions.inference._batch_means.interval`: with only 32 it
leaves many runs on independent data untrusted, too few batch means to confirm independence
(the rates measured are on :ref:`intervals-built`)."""


def default_batches(steps: int | None, replications: int) -> tuple[int, int]:
    """The default batches per replication and how many of them make one reported batch.

    A fixed-budget run without ``batches=`` splits each replication into
    ``32 m`` fine batches, ``m = max(1, 8 // replications)`` (256 for one replication, 128 for
    two, 64 for three or four, 32 from five on), and its estimates and standard errors are
    those of the 32 batches that merge them ``m`` at a time; only the intervals
    (:meth:`recursions.SimulationResult.interval`) use the fine ones. Batch ``b`` of ``K``
    holds the arrivals ``t`` with ``floor(t K / T) = b``, and ``floor(floor(y) / m) =
    floor(y / m)``, so the merged batches hold exactly the arrivals of a 32-batch run (by
    time, too: ``m`` is a power of 2, and scaling by one is exact in floating point). With
    fewer than ``32 m`` arrivals per replication, ``m`` falls to ``steps // 32`` (at least 1;
    ``steps`` batches below 32 arrivals, as before).

    Parameters
    ----------
    steps : int or None
        Measured arrivals per replication, or ``None`` for a time horizon.
    replications : int
        Replications of the run.

    Returns
    -------
    tuple of int
        ``(batches, merge)``: fine batches per replication and fine batches per reported one.

    Examples
    --------
    >>> default_batches(10**6, 1), default_batches(10**6, 3), default_batches(100, 1)
    ((256, 8), (64, 2), (96, 3))
    >>> default_batches(None, 2), default_batches(20, 1), default_batches(10**6, 8)
    ((128, 4), (20, 1), (32, 1))
    """
    m = max(1, (FINE_BATCHES // REPORTED_BATCHES) // replications)
    if steps is not None:
        if steps < REPORTED_BATCHES:
            return steps, 1
        m = min(m, steps // REPORTED_BATCHES)
    return REPORTED_BATCHES * m, m


BASE_BATCHES = 256
"""Batches per replication of every stage of a run with modes (merged by the independence
test of :func:`recursions.inference._batch_means.interval`)."""

FIRST_STEPS = 2**14
"""Arrivals per replication of the first stage of ``precision=``, unless ``steps`` says
otherwise (or the system has more than ``FIRST_STEPS / FIRST_SNAPSHOTS`` servers)."""

FIRST_SNAPSHOTS = 16
"""Arrivals per server of the default first stage, at least: the heap engine samples the
workload vector every ``servers`` arrivals, and a first stage of :data:`FIRST_STEPS` gave
systems of ``2**14`` servers or more a single sample (an error)."""

MAX_STEPS = 2**32
"""Default most arrivals per replication of one stage of ``precision=``."""


@dataclass(frozen=True, kw_only=True)
class Modes:
    """``simulate``'s modes, validated: run until precise, cut the transient, start stationary.

    Attributes
    ----------
    precision : dict of str to HalfWidth, or None
        The half-width asked for each statistic, ``""`` standing for every one it targets
        (:func:`~recursions.inference._half_widths.half_widths`; ``None``: a fixed budget of
        ``steps`` arrivals).
    relative, confidence, max_seconds, start
        As given to :func:`recursions.simulate`.
    statistics : tuple of str or None
        The statistics ``precision`` targets, or those a fixed budget reports (named once
        each; :func:`check_statistics`).
    auto : bool
        Whether ``warmup="auto"`` (MSER cuts the transient; never from exact stationary
        starts, which have no transient).
    stationary : bool
        Whether ``start="stationary"`` (exact stationary states: no warm-up).
    steps : int or None
        Arrivals per replication of a fixed budget, or of the first stage, as given.
    first : int
        Arrivals per replication of the first stage: ``steps``, else :data:`FIRST_STEPS` or
        :data:`FIRST_SNAPSHOTS` a server, whichever is more.
    max_steps : int
        The most arrivals per replication of one stage (:data:`MAX_STEPS` by default).
    base : int
        Batches per replication of every stage (:data:`BASE_BATCHES` unless ``batches=``).
    default : bool
        Whether ``batches=`` was left out (a fixed budget then says when its headline
        intervals cannot be trusted).

    Examples
    --------
    >>> import recursions as rc
    >>> plan = make_plan(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)),
    ...                  precision=0.05)
    >>> plan.modes.base, plan.modes.auto, plan.steps
    (256, False, 16384)
    """

    precision: dict[str, HalfWidth] | None
    relative: bool
    confidence: float
    statistics: tuple[str, ...] | None
    max_seconds: float | None
    start: Any
    auto: bool
    stationary: bool
    steps: int | None
    first: int
    max_steps: int
    base: int
    default: bool


def _modes(system: Any, steps: int | None, time: float | None, warmup: Any, replications: int,
           batches: int | None, w0: Any, precision: Any, relative: bool, confidence: float,
           statistics: Any, max_steps: int | None, max_seconds: float | None, start: Any
           ) -> Modes:
    """The keywords of ``simulate``'s modes, validated.

    A plan has modes with ``precision=``, ``warmup="auto"`` or ``start=``.
    """
    if start is not None:  # an engine that keeps no workload vectors refuses start= itself
        if isinstance(start, str) and start != "stationary":
            raise ValueError(f"start must be 'stationary', a profile or None, got {start!r}")
    if time is not None:
        raise ValueError("precision=, warmup='auto' and start= count arrivals: give steps, "
                         "not time=")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    auto = isinstance(warmup, str)
    if auto and warmup != "auto":
        raise ValueError(f"warmup must be an integer >= 0 or 'auto', got {warmup!r}")
    if not auto:
        check_count(warmup, "warmup", 0)
    nrep = check_int(replications, "replications", 1)
    if start is not None and w0 is not None:
        raise ValueError("give start= or w0=, not both")
    base = BASE_BATCHES if batches is None else check_int(batches, "batches", 1)
    if precision is not None:
        precision = _check_precision(precision, relative, statistics, base * nrep)
    elif steps is None:
        raise ValueError("steps is required (or precision= to run until precise)")
    steps = None if steps is None else check_count(steps, "steps", 1)
    cap = MAX_STEPS if max_steps is None else check_count(max_steps, "max_steps", 1)
    if max_seconds is not None and not (float(max_seconds) > 0):
        raise ValueError(f"max_seconds must be > 0, got {max_seconds!r}")
    stationary = isinstance(start, str)
    return Modes(precision=precision, relative=bool(relative), confidence=float(confidence),
                 statistics=check_statistics(statistics, {}), max_seconds=max_seconds,
                 start=start,
                 auto=auto and not stationary, stationary=stationary, steps=steps,
                 first=steps if steps is not None else max(FIRST_STEPS,
                                                           FIRST_SNAPSHOTS * system.servers),
                 max_steps=cap, base=base, default=batches is None)


def _check_precision(precision: Any, relative: bool, statistics: Any, batches: int
                     ) -> dict[str, HalfWidth]:
    """A ``precision=`` as targets by statistic, refused if no run could reach it.

    Refused before any arrival is simulated; whether the system estimates the statistics
    named is checked by the engine before its first stage.
    """
    if batches < 64:
        raise ValueError(f"precision= needs at least 64 batches in all (batches x replications, "
                         f"got {batches}): the test of independence merges them down to 16; "
                         "leave batches= out (256 per replication)")
    wanted = half_widths(precision, relative)
    named = () if statistics is None else (
        (statistics,) if isinstance(statistics, str) else tuple(statistics))
    for name in [*wanted, *named]:
        if name and name not in STATISTICS:
            raise ValueError(f"statistics: {name!r} is not estimated by any system; choose "
                             f"among {sorted(STATISTICS)}")
    return wanted


# (service code, params, interarrival code, params) of the laws drawn inside the kernels
KernelLaws = tuple[int, np.ndarray, int, np.ndarray]


@runtime_checkable
class Simulable(Protocol):
    """What :func:`recursions.simulate` asks of a system: servers, engines, estimates, inputs.

    Every :class:`recursions.System` declares these (the workload maps and the queue-length
    policies of :mod:`recursions.model._queue_policies` alike); a system of your own that is not a
    ``System`` needs only these four to reach the engines' refusals.

    Examples
    --------
    >>> import recursions as rc
    >>> isinstance(rc.JSW(2), Simulable), isinstance(rc.JSQ(2), Simulable)
    (True, True)
    """

    @property
    def servers(self) -> int:
        """The number of servers."""
        ...

    @property
    def engines(self) -> tuple[str, ...]:
        """The names of the engines that run this system (:mod:`recursions.engines._registry`)."""
        ...

    @property
    def estimates(self) -> tuple[str, ...]:
        """The statistics a run of this system reports (``statistics=`` names some)."""
        ...

    def check_input(self, input: Any) -> None:
        """Refuse an input this system cannot run on."""
        ...


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """The keywords of one :func:`recursions.simulate` call, validated.

    Attributes
    ----------
    input : recursions.Input
        The arrival input.
    steps : int or None
        Measured arrivals per replication, or ``None`` with ``time``.
    time : float or None
        Measured time per replication, or ``None`` with ``steps``.
    warmup : int
        Arrivals discarded first.
    replications : int
        Independent replications.
    batches : int
        Batches per replication (the default resolved: :func:`default_batches`).
    merge : int
        Batches merged into each batch behind the estimates (``batches // 32`` with the
        default batches, 1 with ``batches=`` given): the intervals use the ``batches``.
    default : bool
        Whether ``batches`` is the default (a fixed-budget run then warns when its headline
        intervals cannot be trusted).
    chunk : int
        Arrivals per chunk of block draws and per progress-bar update.
    engine : str
        The engine asked for (``"auto"`` or a name of :mod:`recursions.engines._registry`).
    rng, record, w0, grid, profile_every, progress, reference
        As given to :func:`recursions.simulate` (``grid`` as a float array or ``None``).
    laws : tuple or None
        The input's laws when they are drawn inside the kernels, else ``None`` (block draws).
    statistics : tuple of str or None
        The statistics the result reports (``None``: every one the system has). When they
        are all among :data:`LEAN_STATISTICS`, the plan is :attr:`lean`.
    max_call : int
        The most arrivals of one in-kernel call (an interrupt waits at most for one).
    modes : Modes or None
        ``simulate``'s modes (:mod:`recursions.inference._run_modes` runs their stages); ``None``
        for a plain run. With modes, ``steps`` and ``batches`` are the first stage's.
    given : tuple of str
        The options given other than their defaults (those an engine may not honour).

    Examples
    --------
    >>> import recursions as rc
    >>> plan = make_plan(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 1000)
    >>> plan.steps, plan.batches, plan.merge, plan.given
    (1000, 256, 8, ())
    """

    input: Input
    steps: int | None
    time: float | None
    warmup: int = 0
    replications: int = 1
    batches: int = 32
    merge: int = 1
    default: bool = False
    chunk: int = DEFAULT_CHUNK
    engine: str = "auto"
    rng: RngLike = 1
    record: bool = False
    w0: Any = None
    grid: np.ndarray | None = None
    profile_every: int | None = None
    progress: bool | str = False
    reference: Any = None
    laws: KernelLaws | None = None
    statistics: tuple[str, ...] | None = None
    max_call: int = 1 << 22
    modes: Modes | None = None

    given: tuple[str, ...] = ()
    """The options given other than their defaults (those an engine may not honour)."""

    @property
    def lean(self) -> bool:
        """Whether only statistics of what customers find are asked for (lean drivers)."""
        return self.statistics is not None and set(self.statistics) <= LEAN_STATISTICS

    @property
    def batch_doubles(self) -> int:
        """Doubles one batch of one replication keeps: its sums and its two level histograms."""
        from recursions.engines._accumulator import N_STATS

        levels = DEFAULT_LEVELS if self.grid is None else self.grid.size
        return N_STATS + 2 * (levels + 1)


LEAN_STATISTICS = customer_statistics()
"""The statistics of what customers find (waits, losses, responses).

A run asked for none but these (``simulate(..., statistics=...)``) needs no statistic of the
state customers see: the dense engine's drawing loop then keeps only these sums
(:func:`recursions.engines._driver_compiler.compiled_drivers` with ``lean=True``), and no profile.
Read from
:data:`recursions.results._statistics.REGISTRY`
(:func:`recursions.results._statistics.customer_statistics`).
"""

STATISTICS = frozenset(REGISTRY)
"""Every statistic a result may report (:data:`recursions.results._statistics.REGISTRY`;
which ones a
system has is the system's to declare, :attr:`recursions.System.estimates`)."""

DEFAULT_STATISTICS = (("p_wait", "mean_wait"), ("p_loss",), ("mean_response",),
                      ("mean_workload",))
"""The statistics ``precision=`` targets by default: the first group the system estimates."""


_DEFAULTS = {"record": False, "w0": None, "start": None, "grid": None, "profile_every": None,
             "progress": False, "chunk": DEFAULT_CHUNK, "reference": None, "statistics": None}


def _given(values: dict[str, Any]) -> tuple[str, ...]:
    """The options of ``values`` that differ from :data:`_DEFAULTS`, in their order."""
    return tuple(k for k, v in values.items() if not (v is _DEFAULTS[k] or (
        isinstance(v, (bool, int)) and v == _DEFAULTS[k])))


def make_plan(system: Simulable, input: Input, steps: int | None = None, *,
              time: float | None = None, warmup: int = 0, replications: int = 1,
              batches: int | None = None, chunk: int = DEFAULT_CHUNK, engine: str = "auto",
              grid: Any = None, profile_every: int | None = None,
              laws: Callable[[Input], KernelLaws | None] | None = None,
              statistics: Any = None, precision: Any = None, relative: bool = True,
              confidence: float = 0.95, max_steps: int | None = None,
              max_seconds: float | None = None, start: Any = None, **options: Any) -> RunPlan:
    """Validate what every engine reads and freeze it into a :class:`RunPlan`.

    Parameters
    ----------
    system : Simulable
        The system (a :class:`recursions.System`: a map or a queue-length policy).
    input : recursions.Input
        The arrival input; ``system.check_input`` may refuse it.
    steps, time, warmup, replications, batches, chunk, engine, grid, profile_every
        As in :func:`recursions.simulate`.
    laws : callable, optional
        ``input -> laws`` drawn inside the kernels, or ``None`` (block draws).
    statistics : str or sequence of str, optional
        The statistics to report (names of :data:`STATISTICS`); ``None``: all. With
        ``precision=``, those it targets (checked against the system's at the first stage).
        With ``warmup="auto"`` on a fixed budget, the plan also keeps the series MSER cuts on
        (:func:`kept_statistics`; the result drops it again).
    precision, relative, confidence, max_steps, max_seconds, start
        ``simulate``'s modes (:class:`Modes`); with one of them, or ``warmup="auto"``, the
        plan's ``modes`` holds them and ``steps``, ``warmup`` and ``batches`` are those of
        the first stage.
    **options
        ``rng``, ``record``, ``w0``, ``progress``, ``reference``, ``max_call``, kept as given.

    Returns
    -------
    RunPlan

    Raises
    ------
    TypeError
        For a system that is not one, or an argument of the wrong type.
    ValueError
        For invalid arguments.

    Examples
    --------
    >>> import recursions as rc
    >>> make_plan(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), time=50.0).batches
    256
    """
    if not isinstance(system, Simulable):
        raise TypeError(f"system must be a recursions system, got {type(system).__name__}")
    modes = None
    if precision is not None or isinstance(warmup, str) or start is not None:
        modes = _modes(system, steps, time, warmup, replications, batches, options.get("w0"),
                       precision, relative, confidence, statistics, max_steps, max_seconds,
                       start)
    elif max_steps is not None or max_seconds is not None:
        raise ValueError("max_steps= and max_seconds= bound the stages of precision=: give "
                         "precision=, or leave them out")
    check_input(input)
    system.check_input(input)
    if modes is None:
        steps, time, warmup = _horizon(input, steps, time, warmup)
    else:
        steps, warmup = modes.first, 0 if modes.auto or modes.stationary else warmup
        batches = min(modes.base, steps)
        # precision= keeps every statistic (which it targets is checked at the first stage);
        # warmup="auto" on a fixed budget also keeps MSER's series
        statistics = None if precision is not None else kept_statistics(
            modes.statistics, system.estimates, modes.auto)
    nrep = check_int(replications, "replications", 1)
    default = batches is None
    if default:
        batches, merge = default_batches(steps, nrep)
    else:
        batches, merge = check_int(batches, "batches", 1), 1
    chunk = check_int(chunk, "chunk", 1)
    if steps is not None and batches > steps:
        raise ValueError(f"batches must be <= steps, got batches={batches}, steps={steps}")
    if steps is None and batches > MAX_COUNT:
        raise ValueError(f"batches must be <= 2**53, got {batches}")
    every = None if profile_every is None else check_int(profile_every, "profile_every", 1)
    levels = _levels(grid)
    # only the workload engines keep a profile (the others refuse statistics= themselves)
    kept = check_statistics(statistics, {} if "dense" not in system.engines else {
        "grid": levels, "profile_every": every, "reference": options.get("reference")})
    given = _given({"record": options.get("record", False), "w0": options.get("w0"),
                    "start": start,
                    "grid": levels, "profile_every": every,
                    "progress": options.get("progress", False), "chunk": chunk,
                    "reference": options.get("reference"), "statistics": kept})
    return RunPlan(input=input, steps=steps, time=time, warmup=warmup, replications=nrep,
                   batches=batches, merge=merge, default=default, chunk=chunk, engine=engine,
                   grid=levels, profile_every=every, laws=None if laws is None else laws(input),
                   statistics=kept, modes=modes, given=given, **options)


def _horizon(input: Input, steps: Any, time: Any, warmup: Any
             ) -> tuple[int | None, float | None, int]:
    """A plain run's ``steps`` or ``time`` (exactly one of them) and ``warmup``, validated."""
    if (steps is None) == (time is None):
        raise ValueError("give exactly one of steps (arrivals) and time (a time horizon)")
    if steps is not None:
        steps = check_count(steps, "steps")
    else:
        time = check_positive(time, "time")
        if time > MAX_COUNT * input.mean_interarrival:
            raise ValueError(
                f"time must be at most 2**53 mean interarrival times "
                f"({MAX_COUNT * input.mean_interarrival:g}), got {time!r}: no run can count "
                "that many arrivals")
    return steps, time, check_count(warmup, "warmup", 0)


MSER_PREFERENCE = ("mean_wait", "mean_response", "mean_workload", "mean_jobs", "p_wait")
"""The statistic MSER's truncation point is chosen on: the first of these the run has (one
series, not the most truncated of several, which multiplied the rule's false alarms); see
:func:`mser_series`."""


def mser_series(have: Sequence[str]) -> str | None:
    """The first of :data:`MSER_PREFERENCE` among ``have``, the statistics of a run.

    A loss system's ``mean_response`` is skipped: its customers never wait, so their response
    is their service time, which shows no transient (its workload does).

    Examples
    --------
    >>> mser_series(("p_loss", "overflow_work", "mean_response", "mean_workload"))
    'mean_workload'
    >>> mser_series(("mean_response", "mean_workload"))  # redundancy: the response time
    'mean_response'
    """
    skip = "mean_response" if "p_loss" in have else None
    return next((k for k in MSER_PREFERENCE if k in have and k != skip), None)


def kept_statistics(statistics: tuple[str, ...] | None, have: Sequence[str], auto: bool
                    ) -> tuple[str, ...] | None:
    """``statistics=`` as a fixed budget keeps it: with ``warmup="auto"``, also MSER's series.

    MSER cuts the transient on the first statistic of :data:`MSER_PREFERENCE` the system has,
    whatever the user keeps, so that naming statistics never moves the truncation point; the
    analysis drops it from the result again.

    Parameters
    ----------
    statistics : tuple of str or None
        The statistics named (checked: :func:`check_statistics`), ``None`` for all.
    have : sequence of str
        The statistics the system reports (:attr:`recursions.System.estimates`).
    auto : bool
        Whether ``warmup="auto"``.

    Returns
    -------
    tuple of str or None

    Examples
    --------
    >>> kept_statistics(("p_wait",), ("p_wait", "mean_wait", "mean_workload"), True)
    ('p_wait', 'mean_wait')
    """
    if statistics is None or not auto:
        return statistics
    key = mser_series(have)
    return statistics if key is None or key in statistics else (*statistics, key)


def check_statistics(value: Any, profile: dict[str, Any]) -> tuple[str, ...] | None:
    """``statistics=`` as a tuple of known names, refused with the profile's options if lean.

    ``profile`` holds the options that keep a profile or a wait histogram (``grid``,
    ``profile_every``, ``reference``: ``None`` when not given); a lean list (only
    :data:`LEAN_STATISTICS`) keeps neither, so it is refused with any of them.

    Examples
    --------
    >>> check_statistics("p_wait", {"grid": None})
    ('p_wait',)
    """
    if value is None:
        return None
    names = (value,) if isinstance(value, str) else value
    try:
        names = tuple(dict.fromkeys(names))
    except TypeError:
        raise TypeError("statistics must be a name or a sequence of names, got "
                        f"{type(value).__name__}") from None
    bad = [n for n in names if not isinstance(n, str) or n not in STATISTICS]
    if bad or not names:
        raise ValueError(f"statistics must name some of {', '.join(sorted(STATISTICS))}, got "
                         f"{value!r}")
    if set(names) <= LEAN_STATISTICS:
        asked = [f"{k}=" for k, v in profile.items() if v is not None]
        if asked:
            raise ValueError(
                f"statistics={names!r} keeps only what customers find, so no profile or wait "
                f"histogram is kept: {', '.join(asked)} would have nothing to use; name "
                "mean_workload among the statistics, or leave statistics= out")
    return names


def _levels(grid: Any) -> np.ndarray | None:
    """A user's profile grid as a float array, checked, or ``None``."""
    if grid is None:
        return None
    g = np.asarray(grid, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(np.diff(g) <= 0) or g[0] < 0:
        raise ValueError("grid must be a non-empty, strictly increasing array of levels >= 0")
    return g
