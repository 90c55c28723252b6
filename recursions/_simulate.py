"""Forward iteration of a system driven by an input: :func:`simulate`."""

from __future__ import annotations

from typing import Any, overload

from recursions.common._rng import RngLike
from recursions.engines import _registry as engines
from recursions.engines._in_kernel_draws import drawn_laws

# the engines register on import (recursions.engines._registry); the names stay importable from here
from recursions.engines._phase_runs import PhaseEngine as PhaseEngine
from recursions.engines._run_plan import DEFAULT_CHUNK, Simulable, make_plan
from recursions.engines._trace_replay import REPLAY_CHUNK, replay
from recursions.engines._workload_engines import HEAP_MIN_SERVERS as HEAP_MIN_SERVERS
from recursions.engines.zerowait import simulate_queues as simulate_queues
from recursions.inference._run_modes import run_modes
from recursions.model._inputs import Input, check_input
from recursions.model._trace import Trace
from recursions.results._simulation_result import SimulationResult, with_trust
from recursions.results._trace_result import TraceResult

__all__ = ["SimulationResult", "simulate"]


@overload
def simulate(system: Simulable, input: Trace, steps: None = None, *, rng: RngLike = 1,
             w0: Any = None, engine: str = "auto", chunk: int = DEFAULT_CHUNK
             ) -> TraceResult: ...


@overload
def simulate(
    system: Simulable,
    input: Input,
    steps: int | None = None,
    *,
    time: float | None = None,
    warmup: int = 0,
    replications: int = 1,
    rng: RngLike = 1,
    record: bool = False,
    w0: Any = None,
    grid: Any = None,
    batches: int | None = None,
    profile_every: int | None = None,
    progress: bool = False,
    chunk: int = DEFAULT_CHUNK,
    engine: str = "auto",
    reference: Any = None,
    precision: Any = None,
    relative: bool = True,
    confidence: float = 0.95,
    statistics: Any = None,
    max_steps: int | None = None,
    max_seconds: float | None = None,
    start: Any = None,
) -> SimulationResult: ...


def simulate(
    system: Simulable,
    input: Input | Trace,
    steps: int | None = None,
    *,
    time: float | None = None,
    warmup: int = 0,
    replications: int = 1,
    rng: RngLike = 1,
    record: bool = False,
    w0: Any = None,
    grid: Any = None,
    batches: int | None = None,
    profile_every: int | None = None,
    progress: bool = False,
    chunk: int = DEFAULT_CHUNK,
    engine: str = "auto",
    reference: Any = None,
    precision: Any = None,
    relative: bool = True,
    confidence: float = 0.95,
    statistics: Any = None,
    max_steps: int | None = None,
    max_seconds: float | None = None,
    start: Any = None,
) -> SimulationResult | TraceResult:
    """Iterate ``system`` forward under ``input`` and estimate its statistics at arrivals.

    What arriving customers find (``p_wait``, ``mean_wait``, ``p_loss``, ...) and the
    workload profile, with batch-means standard errors, for systems no closed form covers.
    Each replication runs ``warmup`` arrivals, then ``steps`` measured ones (or a measured
    ``time``), or, with ``precision=``, runs until its intervals are trusted and as narrow as
    asked. The numbers depend on the seed alone, not on threads or ``chunk``. Engines, modes,
    precision stages, the unstable stop, starts and warnings: :ref:`theory-kw-simulate`.

    Parameters
    ----------
    system : System
        The random map, or a queue-length system (:mod:`recursions.model._queue_policies`).
    input : Input or Trace
        The arrival input; or a :class:`~recursions.Trace`, a log of jobs, which is replayed
        once, in order, from empty servers (or ``w0``), every job's wait kept: the result is
        then a :class:`~recursions.results._trace_result.TraceResult` (``waits``,
        ``by_time(window)``), and only ``rng`` (a random policy's routing), ``w0``,
        ``engine`` (``"dense"`` or ``"heap"``) and ``chunk`` apply.
    steps : int, optional
        Measured arrivals per replication (``> 0``). With ``precision=``: the first stage's
        length (default ``2**14``, or 16 arrivals a server on more than 1024 servers; rounded
        down to whole batches where the stages go on: ``steps=8000`` runs 7680).
    time : float, optional
        Measured time per replication instead of ``steps`` (heap engine).
    warmup : int or "auto", default 0
        Arrivals discarded first; ``"auto"``: MSER drops the first batches (at most half the
        run; the result's ``warmup`` counts them, ``warmup_rule`` is ``"mser"``).
    replications : int, default 1
        Independent replications (run in parallel threads).
    rng : int, numpy.random.Generator, SeedSequence or None, default 1
        Seed (``None``: fresh OS entropy, not reproducible).
    record : bool, default False
        Keep the state seen by every measured arrival (dense engine; memory
        ``replications * steps * S``).
    w0 : array_like, optional
        Initial workload vector (non-negative; sorted for the dense engine) for every
        replication, or one row per replication (shape ``(replications, S)``). Default: empty.
    grid : array_like, optional
        Sorted workload levels for :meth:`SimulationResult.profile`. Default: 33 levels from 0
        to ``max(4 E[sigma], largest workload after warm-up)``.
    batches : int, optional
        Batches per replication, used as given. Default: 256 in all (32 a replication from
        five on), merged into 32 for the estimates and their standard errors, which are those
        of ``batches=32``. With a single batch in all, standard errors are ``nan``.
    profile_every : int, optional
        Accumulate the profile (heap engine: also the busy fraction and workload) at every
        ``profile_every``-th measured arrival (default ``S``).
    progress : bool, default False
        Show a tqdm progress bar over chunks.
    chunk : int, default 8192
        Arrivals per chunk where the draws are made in blocks outside the loop, and per
        progress-bar update.
    engine : {"auto", "dense", "heap", "queues", "counts"}
        Which engine among those the system declares; ``"auto"`` prefers the heap from
        :data:`~recursions.engines._workload_engines.HEAP_MIN_SERVERS` servers on or with
        ``time``, and ``"counts"`` for queue-length systems.
    reference : callable or object with ``profile(w)``, optional
        A reference profile ``x*_w`` (e.g. ``ly.jiq_equilibrium(...)``): the result's
        ``sup_error`` is ``max_w |x_w - x*_w|`` over the grid.
    precision : float, HalfWidth, or dict of str to float or HalfWidth, optional
        Run until precise: the half-width wanted for each statistic (one for all of
        ``statistics``, or ``{name: half-width}``). A plain number is relative unless
        ``relative=False``; :func:`recursions.relative` and :func:`recursions.absolute` say it
        for one statistic: ``{"p_wait": rc.absolute(0.005), "mean_response":
        rc.relative(0.02)}``. The run goes on in stages until every interval is trusted and
        within its target, a budget is spent, or the workload grows (``"unstable"``);
        ``result.precision`` says which.
    relative : bool, default True
        Whether a plain number in ``precision`` is a relative half-width.
    confidence : float, default 0.95
        The level of the intervals ``precision=`` targets.
    statistics : str or sequence of str, optional
        With ``precision=``: what it targets (default ``("p_wait", "mean_wait")``, or the
        system's ``mean_response`` or ``p_loss``); any of ``result.statistics``. Without:
        the statistics reported, the others being ``None`` (default: all). Only statistics
        of what customers find (:data:`~recursions.engines._run_plan.LEAN_STATISTICS`): faster
        drivers, no profile (so no ``grid=``, ``profile_every=`` or ``reference=``), not on
        the queue-length engines.
    max_steps : int, optional
        The longest stage, in arrivals per replication (default ``2**32``).
    max_seconds : float, optional
        Stop before a stage that would end after this many seconds in all.
    start : "stationary", a profile, or None
        ``"stationary"``: each replication starts from an exact stationary draw (the
        samplers of :mod:`coupling`), so no warm-up is needed, and the result's
        ``replication_interval`` gives intervals from the independent replications. A
        profile (``ly.jiq_equilibrium(...)``, a redundancy fixed point, or ``w -> x_w``):
        servers start with i.i.d. workloads of tail ``x_w``.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        For invalid arguments; for an input ``system.check_input`` refuses (a
        :class:`~recursions.Redundancy` system needs ``system.poisson(rate)`` or
        ``system.renewal(interarrival)``); when the heap engine would take fewer than 2
        snapshots per replication (``steps <= profile_every``, whose default is ``S``).

    Warns
    -----
    SimulationWarning
        When the estimates cannot be trusted, naming the fix: load ``rho >= 1`` where every
        customer's work is kept (no stationary regime); batch means that trend or are
        strongly correlated (``result.batch_check``); with ``precision=``, a target not
        reached (a budget, or ``"unstable"``); without, an untrusted headline interval or a
        run too short for its relaxation time or servers; ``reference`` given with
        ``warmup=0`` and no ``w0``. Each rule is in the theory section linked above.

    See Also
    --------
    recursions.SimulationResult : the estimates, their intervals and the run's diagnostics.
    coupling.perfect_sample : exact stationary draws, where they exist.

    Examples
    --------
    >>> import recursions as rc
    >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
    ...                   steps=100_000, warmup=1_000, rng=1)
    >>> abs(res.p_wait.value - 0.5) < 4 * res.p_wait.se   # M/M/1: P(wait) = rho
    True
    >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
    ...                   precision=0.05, warmup="auto", rng=1)   # +-5% at 95%
    >>> res.precision.reached, res.interval("mean_wait").covers(1.0)
    (True, True)
    """
    if getattr(input, "is_trace", False):  # a log of jobs: replayed once, in order
        given = [k for k, v, d in (
            ("steps", steps, None), ("time", time, None), ("warmup", warmup, 0),
            ("replications", replications, 1), ("record", record, False), ("grid", grid, None),
            ("batches", batches, None), ("profile_every", profile_every, None),
            ("progress", progress, False), ("reference", reference, None),
            ("precision", precision, None), ("relative", relative, True),
            ("confidence", confidence, 0.95), ("statistics", statistics, None),
            ("max_steps", max_steps, None), ("max_seconds", max_seconds, None),
            ("start", start, None)) if not _is_default(v, d)]
        if given:
            raise ValueError(f"a trace is replayed once, in order, from empty servers: "
                             f"{', '.join(f'{k}=' for k in given)} do not apply (for the "
                             "long run of a system fed with such jobs, simulate "
                             "trace.cyclic() with steps= or precision=)")
        return replay(system, input, rng=rng, engine=engine, w0=w0,
                      chunk=REPLAY_CHUNK if chunk == DEFAULT_CHUNK else chunk)
    arrivals: Input = check_input(input)  # a TypeError that says what was given, if not one
    plan = make_plan(system, arrivals, steps, time=time, warmup=warmup,
                     replications=replications, batches=batches, chunk=chunk, engine=engine,
                     grid=grid, profile_every=profile_every, rng=rng, record=record, w0=w0,
                     progress=progress, reference=reference, statistics=statistics,
                     precision=precision, relative=relative, confidence=confidence,
                     max_steps=max_steps, max_seconds=max_seconds, start=start,
                     laws=drawn_laws, max_call=engines.MAX_CALL)
    chosen = engines.choose(system, plan)
    res = chosen.run(system, plan) if plan.modes is None else run_modes(system, plan, chosen)
    return with_trust(res)


def _is_default(value: Any, default: Any) -> bool:
    """Whether an option was left at its default (an array or an object never is)."""
    if value is default:
        return True
    plain = (bool, int, float, str)
    return (isinstance(value, plain) and isinstance(default, plain)
            and type(value) is type(default) and value == default)
