"""Forward iteration of a system driven by an input: :func:`simulate`."""

from __future__ import annotations

from typing import Any

from . import engines
from ._rng import RngLike
from .inputs import Input
from .kernel_draws import drawn_laws
from .modes import run_modes
from .plan import DEFAULT_CHUNK, Simulable, make_plan
from .result import SimulationResult

# the engines register on import (recursions.engines); the names stay importable from here
from .workload import HEAP_MIN_SERVERS as HEAP_MIN_SERVERS
from .zerowait import simulate_queues as simulate_queues

__all__ = ["SimulationResult", "simulate"]


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
) -> SimulationResult:
    """Iterate ``system`` forward under ``input`` and estimate its statistics at arrivals.

    Each replication starts from ``w0`` (default: empty), runs ``warmup`` arrivals, then
    ``steps`` measured arrivals (or measured time ``time``) split into ``batches`` batches;
    standard errors are batch-means errors over all batches of all replications. Replications
    run in parallel threads; each has its own streams from ``SeedSequence(rng).spawn``, so the
    numbers do not depend on the thread count or on ``chunk``.

    The engines (:mod:`recursions.engines`) are those the system declares
    (:attr:`recursions.System.engines`): ``"dense"`` applies the compiled map to the sorted
    vector (``O(S)`` per arrival); ``"heap"`` (JSW, JIQ, RandomRouting, LeastOfD, Redundancy)
    keeps absolute empty times in an indexed min-heap (``O(log S)`` per arrival,
    :mod:`recursions.heap`); ``"auto"`` picks the heap from
    :data:`~recursions.workload.HEAP_MIN_SERVERS` servers on, or when ``time`` is given.
    Queue-length systems (JSQ, I1F, PowerOfD, JIQ with a buffer) run on the engines
    ``"queues"`` and ``"counts"`` of :mod:`recursions.zerowait`. The keywords are validated
    once into a :class:`recursions.plan.RunPlan`; the chosen engine runs it
    (:mod:`recursions.workload` through the chunk loop of :mod:`recursions.chunks`).

    Parameters
    ----------
    system : System
        The random map, or a queue-length system (:mod:`recursions.queue_policies`).
    input : Input
        The arrival input.
    steps : int, optional
        Measured arrivals per replication (``> 0``).
    time : float, optional
        Measured time per replication instead of ``steps`` (heap engine).
    warmup : int or "auto", default 0
        Arrivals discarded first. ``"auto"``: the run is split into 256 batches per
        replication and MSER (:func:`recursions.output_analysis.mser`) drops the first ones,
        at most half the run; the result's ``warmup`` counts them and ``warmup_rule`` is
        ``"mser"``. A run whose rule finds no steady part warns.
    replications : int, default 1
        Independent replications.
    rng : int, numpy.random.Generator, SeedSequence or None, default 1
        Seed (``None``: fresh OS entropy, not reproducible).
    record : bool, default False
        Keep the state seen by every measured arrival (dense engine; memory
        ``replications * steps * S``). A recorded run draws in blocks outside the loop (the
        same numbers as the loop's own draws, a little slower).
    w0 : array_like, optional
        Initial workload vector (non-negative; sorted for the dense engine) for every
        replication, or one row per replication (shape ``(replications, S)``). Default: empty.
    grid : array_like, optional
        Sorted workload levels for :meth:`SimulationResult.profile`. Default: 33 levels from 0
        to ``max(4 E[sigma], largest workload after warm-up)``.
    batches : int, optional
        Batches per replication, used as given. Default: 256 for one replication, 128 for
        two, 64 for three or four, 32 from five on (at most ``steps``;
        :func:`recursions.plan.default_batches`), merged into 32 for the estimates and their
        standard errors, which are exactly those of ``batches=32`` (up to the order of sums
        of times); :meth:`SimulationResult.interval` and ``effective_batches`` use them all.
        With a single batch in all, standard errors are ``nan``.
    profile_every : int, optional
        Accumulate the profile (and, in the heap engine, the busy fraction and workload) at
        every ``profile_every``-th measured arrival (default ``S``, so the cost per arrival does
        not grow with ``S``; consecutive states are strongly correlated, so little precision
        is lost).
    progress : bool, default False
        Show a tqdm progress bar over chunks.
    chunk : int, default 8192
        Arrivals drawn and simulated per chunk where the draws are made in blocks outside the
        loop (scipy laws, HyperExponential and Coxian, modulated and periodic inputs), and
        per progress-bar update; built-in renewal laws are drawn inside the loop, which then
        runs a count of arrivals in one call (or chunks of it to a time horizon).
    engine : {"auto", "dense", "heap", "queues", "counts"}
        Which engine among those the system declares (see above).
    reference : callable or object with ``profile(w)``, optional
        A reference profile ``x*_w`` (e.g. ``ly.jiq_equilibrium(...)``): the result's
        ``sup_error`` is ``max_w |x_w - x*_w|`` over the grid.
    precision : float or dict of str to float, optional
        Run until precise (:mod:`recursions.precision`): the half-width wanted for each
        statistic (a float for all of ``statistics``, or ``{name: half-width}``), relative to
        its value unless ``relative=False``. The run goes on in stages of growing length
        (every engine goes on from where a stage stopped; a run with ``record=True`` or a
        first stage shorter than 256 arrivals retraces the same path) until every interval
        is trusted and within its target, or a budget is spent: for FCFS G/G/S no sooner
        than :data:`~recursions.precision.MIN_RELAXATIONS` heavy-traffic relaxation times
        (:meth:`~recursions.System.relaxation`), and for a system without that time scale
        only once two stages in a row are precise; a run whose workload grows stops as
        ``"unstable"`` (:mod:`recursions.unstable`). The result's ``precision`` says what
        was reached, and a warning names what was not. ``steps`` is then the first stage's
        length (default ``2**14``, or 16 arrivals a server on more than 1024 servers; on the
        engines that go on, rounded down to a whole number of batches of a size that keeps
        at most 16 per analysis batch: ``steps=8000`` runs 7680).
    relative : bool, default True
        Whether ``precision`` is a relative half-width.
    confidence : float, default 0.95
        The level of the intervals ``precision=`` targets.
    statistics : str or sequence of str, optional
        With ``precision=``: what it targets (default ``("p_wait", "mean_wait")``, or the
        system's ``mean_response`` or ``p_loss``); any of ``result.statistics``. Without:
        the statistics the result reports, the others being ``None`` (default: all). Naming
        only statistics of what customers find (``p_wait``, ``mean_wait``, ``p_loss``,
        ``overflow_work``, ``mean_response``: :data:`recursions.plan.LEAN_STATISTICS`) runs
        the dense engine's in-kernel drawing loop on drivers compiled to keep only those:
        no workload sums and no profile (so no ``grid=``, ``profile_every=`` or
        ``reference=``), the same numbers for what it keeps, faster (``docs/benchmarks.md``,
        section :ref:`bench-c-loop`). The queue-length engines do not take it.
    max_steps : int, optional
        The longest stage, in arrivals per replication (default ``2**32``).
    max_seconds : float, optional
        Stop before a stage that would end after this many seconds in all.
    start : "stationary", a profile, or None
        ``"stationary"``: each replication starts from an exact stationary draw
        (:mod:`recursions.starts`; the exact samplers of :mod:`coupling`: FCFS M/M/S from
        its birth-death chain, ``cp.mms_states``; else coupling from the past by
        ``cp.perfect_sample``, which covers FCFS G/G/S, loss systems, J_{p+1}SW and JIQ), so no
        warm-up is needed and the result's ``replication_interval`` gives intervals from the
        independent replications. A profile (``ly.jiq_equilibrium(...)``, a redundancy fixed
        point, or a callable ``w -> x_w``): servers start with i.i.d. workloads of tail
        ``x_w``, the mean-field equilibrium of large systems.

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
        When the load ``rho = E[sigma] / (S E[tau]) >= 1`` for a system that keeps every
        customer's work (condition (3) fails: no stationary regime); when the batch means of
        the total workload, or of what customers found at the server they joined, trend
        across the run or are strongly correlated
        (:func:`recursions.diagnostics.batch_check`, kept as ``result.batch_check``, with
        the growth per arrival when it grows); with ``precision=``, when it stopped as
        unstable; with
        no ``precision=`` (the default batches or ``batches=``), when the interval of
        ``p_wait`` or ``mean_wait`` (else ``mean_response``, ``p_loss`` or
        ``mean_workload``) cannot be trusted: the message names them, their effective
        number of independent batches (0; ``result.effective_batches``) against the 16 the
        interval needs, and suggests
        ``precision=`` or a longer run (one message with the batch check's); with the
        default batches and no ``precision=``, also when the replications of an FCFS run
        (``JSW``) are shorter than 320 relaxation times of its heavy-traffic approximation
        (:meth:`recursions.System.relaxation`, :func:`recursions.diagnostics.short_run`),
        or those of a system with no such time scale (JIQ, LL(d), loss, queue-length
        policies, users' maps) measure fewer than 256 arrivals a server without exact
        stationary starts (:func:`recursions.diagnostics.floor_for`): its intervals are then
        all untrusted, however calm its batch means look; when
        ``reference`` is given to a run with ``warmup=0`` and no ``w0`` (``sup_error`` then
        includes the transient from the initial state).

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
    plan = make_plan(system, input, steps, time=time, warmup=warmup,
                     replications=replications, batches=batches, chunk=chunk, engine=engine,
                     grid=grid, profile_every=profile_every, rng=rng, record=record, w0=w0,
                     progress=progress, reference=reference, statistics=statistics,
                     precision=precision, relative=relative, confidence=confidence,
                     max_steps=max_steps, max_seconds=max_seconds, start=start,
                     laws=drawn_laws, max_call=engines.MAX_CALL)
    chosen = engines.choose(system, plan)
    return chosen.run(system, plan) if plan.modes is None else run_modes(system, plan, chosen)
