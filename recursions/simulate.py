"""Forward iteration of a system driven by an input: :func:`simulate`."""

from __future__ import annotations

import numbers
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _engine as eng
from . import diagnostics as dg
from ._memory import require_memory
from ._rng import as_seed_sequence, child, forward_generator
from .estimate import Estimate, ratio_estimate
from .inputs import Input
from .systems import System

__all__ = ["SimulationResult", "simulate"]

DEFAULT_CHUNK = 8192


def _int_arg(value: Any, name: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if int(value) < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value}")
    return int(value)


@dataclass(frozen=True)
class SimulationResult:
    """Statistics of a forward simulation, seen by arriving customers.

    Attributes
    ----------
    system, input : str
        Descriptions of what was simulated.
    steps, warmup, replications : int
        Arrivals measured per replication, discarded warm-up arrivals, replications.
    p_wait : Estimate or None
        Fraction of arrivals that join a server with positive workload (the FCFS probability of
        waiting under JSW). ``None`` for loss systems.
    mean_wait : Estimate or None
        Mean workload found at the joined server (the FCFS mean wait under JSW). ``None`` for
        loss systems.
    mean_workload : Estimate
        Mean total workload ``sum_i W(i)`` seen by an arrival.
    busy_fraction : Estimate
        Mean fraction of servers with positive workload, seen by an arrival.
    p_loss : Estimate or None
        Fraction of arrivals lost (loss systems only).
    p_block : Estimate or None
        Blocking probability (buffered systems; ``None`` here).
    overflow_work : Estimate or None
        Mean service time brought by lost customers per arrival, ``E[sigma 1{lost}]`` (loss
        systems only): the work a loss system overflows, as in condition (8) of MATH.md §2.
    p_all_busy : Estimate or None
        Fraction of arrivals that find no idle server.
    mean_jobs : Estimate or None
        Mean number of jobs per server, ``E[sum_i S_i]`` (queue-length systems).
    phase_busy : Estimate or None
        Fraction of servers busy with a job in each Coxian phase, ``S_{1,m}`` (array over
        phases; queue-length systems with Coxian service).
    mean_response : Estimate or None
        Mean response time ``T`` of a job (:class:`~recursions.redundancy.Redundancy`, whose
        ``p_wait`` and ``mean_wait`` are ``None``; its load ``P(W > 0)`` is ``busy_fraction``).
    sup_error : Estimate or None
        ``max_w |x_w - x*_w|`` over the grid when a reference profile was given.
    engine : str
        Which engine ran: ``"dense"`` (sorted-vector kernel), ``"heap"`` (absolute empty
        times), ``"queues"`` (per-server queues) or ``"counts"`` (aggregated Coxian chain).
    batch_check : recursions.diagnostics.BatchCheck or None
        Trend and lag-1 autocorrelation of the batch means of the total workload (of the
        number of jobs, for queue-length systems); when either is flagged, ``simulate`` warned
        with :class:`~recursions.SimulationWarning`. ``None`` when it could not be computed
        (fewer than 3 batches per replication).
    grid : numpy.ndarray
        Workload levels at which the profile was accumulated.
    final_state : numpy.ndarray
        Workload vectors after the last arrival, shape ``(replications, servers)``.
    path : numpy.ndarray or None
        States seen by each measured arrival, shape ``(replications, steps, servers)``, when
        ``record=True``.
    """

    system: str
    input: str
    steps: int
    warmup: int
    replications: int
    p_wait: Estimate | None
    mean_wait: Estimate | None
    mean_workload: Estimate
    busy_fraction: Estimate
    p_loss: Estimate | None
    p_block: Estimate | None
    overflow_work: Estimate | None
    grid: np.ndarray
    final_state: np.ndarray
    path: np.ndarray | None = None
    p_all_busy: Estimate | None = None
    mean_jobs: Estimate | None = None
    phase_busy: Estimate | None = None
    sup_error: Estimate | None = None
    mean_response: Estimate | None = None
    engine: str = "dense"
    batch_check: dg.BatchCheck | None = None
    _prof: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    _den: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    _fprof: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    _fden: np.ndarray = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def profile(self, w: Any) -> Estimate:
        """Fraction of servers with workload above ``w``, seen by arrivals: ``x_w``.

        Exact (up to Monte Carlo error) at the points of :attr:`grid`, linearly interpolated
        between them.

        Parameters
        ----------
        w : float or array_like
            Workload levels within ``[grid[0], grid[-1]]``.

        Returns
        -------
        Estimate
            With array ``value`` and ``se`` of the shape of ``w``.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)),
        ...                   steps=20_000, rng=1, grid=[0.0, 1.0])
        >>> x = res.profile([0.0, 1.0])
        >>> bool(x.value[0] > x.value[1])
        True
        """
        return self._on_grid(w, self._prof, self._den, "profile")

    def wait_sf(self, t: Any) -> Estimate:
        """``P(found > t)``: the tail of what arriving customers found at the server joined.

        Under JSW this is the FCFS waiting-time tail ``P(W > t)``; under
        :class:`~recursions.Redundancy` it is the response-time tail ``P(R > t)`` (also
        available as :meth:`response_sf`). Lost customers are left out. Exact at the levels of
        :attr:`grid`, interpolated between them.

        Parameters
        ----------
        t : float or array_like
            Levels within ``[grid[0], grid[-1]]``.

        Returns
        -------
        Estimate
            With array ``value`` and ``se`` of the shape of ``t``.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=50_000, rng=1, grid=[0.0, 1.0])
        >>> bool(abs(res.wait_sf(0.0).value - 0.5) < 0.05)   # M/M/1: P(W > 0) = rho
        True
        """
        if self._fprof is None:
            raise ValueError("this result carries no histogram of what customers found")
        return self._on_grid(t, self._fprof, self._fden, "wait_sf")

    def response_sf(self, t: Any) -> Estimate:
        """Response-time tail ``P(R > t)`` of redundancy systems (same as :meth:`wait_sf`)."""
        return self.wait_sf(t)

    def _on_grid(self, w: Any, counts: np.ndarray, den_batches: np.ndarray,
                 what: str) -> Estimate:
        w = np.asarray(w, dtype=np.float64)
        flat = np.atleast_1d(w).ravel()
        g = self.grid
        if g.size == 0:
            raise ValueError(f"no {what} was accumulated: pass grid=... to simulate")
        if what == "profile":
            _check_profile_samples(den_batches, self.replications, self.final_state.shape[-1])
        if np.any(~np.isfinite(flat)) or np.any(flat < g[0]) or np.any(flat > g[-1]):
            raise ValueError(f"levels must lie within the grid [{g[0]}, {g[-1]}]; pass grid=...")
        # interpolation weights, shape (len(w), G)
        m = np.zeros((flat.size, g.size))
        for i, x in enumerate(flat):
            j = int(np.searchsorted(g, x, side="right")) - 1
            j = min(max(j, 0), g.size - 1)
            if j == g.size - 1 or g[j] == x:
                m[i, j] = 1.0
            else:
                a = (x - g[j]) / (g[j + 1] - g[j])
                m[i, j] = 1.0 - a
                m[i, j + 1] = a
        num = counts.reshape(-1, g.size) @ m.T
        den = den_batches.ravel()
        ests = [ratio_estimate(num[:, i], den) for i in range(flat.size)]
        value = np.array([e.value for e in ests]).reshape(w.shape)
        se = np.array([e.se for e in ests]).reshape(w.shape)
        return Estimate(value, se)


HEAP_MIN_SERVERS = 32
"""``engine="auto"`` uses the heap engine from this many servers on (measured crossover)."""


def simulate(
    system: System,
    input: Input,
    steps: int | None = None,
    *,
    time: float | None = None,
    warmup: int = 0,
    replications: int = 1,
    rng: Any = None,
    record: bool = False,
    w0: Any = None,
    grid: Any = None,
    batches: int | None = None,
    profile_every: int | None = None,
    progress: bool = False,
    chunk: int = DEFAULT_CHUNK,
    engine: str = "auto",
    reference: Any = None,
) -> SimulationResult:
    """Iterate ``system`` forward under ``input`` and estimate its statistics at arrivals.

    Each replication starts from ``w0`` (default: empty), runs ``warmup`` arrivals, then
    ``steps`` measured arrivals (or measured time ``time``) split into ``batches`` batches;
    standard errors are batch-means errors over all batches of all replications. Replications
    run in parallel threads; each has its own streams from ``SeedSequence(rng).spawn``, so the
    numbers do not depend on the thread count or on ``chunk``.

    Two engines: ``"dense"`` applies the compiled map to the sorted vector (``O(S)`` per
    arrival); ``"heap"`` (JSW, JIQ, RandomRouting, LeastOfD) keeps absolute empty times in an
    indexed min-heap (``O(log S)`` per arrival, :mod:`recursions.heap`). ``"auto"`` picks the
    heap from :data:`HEAP_MIN_SERVERS` servers on, or when ``time`` is given. Queue-length
    systems (JSQ, I1F, PowerOfD, JIQ with a buffer) go to :mod:`recursions.zerowait`.

    Parameters
    ----------
    system : System
        The random map (or a queue-length system of :mod:`recursions.zerowait`).
    input : Input
        The arrival input.
    steps : int, optional
        Measured arrivals per replication (``> 0``).
    time : float, optional
        Measured time per replication instead of ``steps`` (heap engine).
    warmup : int, default 0
        Arrivals discarded first.
    replications : int, default 1
        Independent replications.
    rng : int, numpy.random.Generator, SeedSequence or None
        Seed.
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
        Batches per replication for the standard errors (default ``min(32, steps)``, 32 in
        time mode). With a single batch in all, standard errors are ``nan``.
    profile_every : int, optional
        Accumulate the profile (and, in the heap engine, the busy fraction and workload) at
        every ``profile_every``-th measured arrival (default ``S``, so the cost per arrival does
        not grow with ``S``; consecutive states are strongly correlated, so little precision
        is lost).
    progress : bool, default False
        Show a tqdm progress bar over chunks.
    chunk : int, default 8192
        Arrivals drawn and simulated per chunk.
    engine : {"auto", "dense", "heap"}
        Which engine (see above).
    reference : callable or object with ``profile(w)``, optional
        A reference profile ``x*_w`` (e.g. ``ly.jiq_equilibrium(...)``): the result's
        ``sup_error`` is ``max_w |x_w - x*_w|`` over the grid.

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
        the total workload trend across the run or are strongly correlated
        (:func:`recursions.diagnostics.batch_check`, kept as ``result.batch_check``); when
        ``reference`` is given to a run with ``warmup=0`` and no ``w0`` (``sup_error`` then
        includes the transient from the initial state).

    Examples
    --------
    >>> import recursions as rc
    >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
    ...                   steps=100_000, warmup=1_000, rng=1)
    >>> abs(res.p_wait.value - 0.5) < 4 * res.p_wait.se   # M/M/1: P(wait) = rho
    True
    """
    from . import zerowait_hook

    if zerowait_hook.handles(system):
        return zerowait_hook.run(system, input, steps, time=time, warmup=warmup,
                                 replications=replications, rng=rng, engine=engine,
                                 batches=batches)
    if not isinstance(system, System):
        raise TypeError(f"system must be a recursions system, got {type(system).__name__}")
    if not isinstance(input, Input):
        raise TypeError(f"input must be a recursions input, got {type(input).__name__}")
    system.check_input(input)
    if (steps is None) == (time is None):
        raise ValueError("give exactly one of steps (arrivals) and time (a time horizon)")
    if steps is not None:
        steps = _int_arg(steps, "steps", 1)
    else:
        time = _positive_time(time)
    warmup = _int_arg(warmup, "warmup", 0)
    nrep = _int_arg(replications, "replications", 1)
    # a workload vector, an empty-time heap with its positions and the statistics, per replication
    require_memory(48.0 * system.servers * nrep, f"simulating {type(system).__name__} with "
                   f"{system.servers} servers and {nrep} replication(s)",
                   "use fewer servers or replications")
    default_batches = min(32, steps) if steps is not None else 32
    batches = default_batches if batches is None else _int_arg(batches, "batches", 1)
    chunk = _int_arg(chunk, "chunk", 1)
    if steps is not None and batches > steps:
        raise ValueError(f"batches must be <= steps, got batches={batches}, steps={steps}")
    from . import heap as hp

    policy, d = hp.policy_of(system)
    if engine not in ("auto", "dense", "heap"):
        raise ValueError(f"engine must be 'auto', 'dense' or 'heap', got {engine!r}")
    if engine == "heap" and policy < 0:
        raise ValueError(f"the heap engine runs JSW, JIQ, RandomRouting, LeastOfD and "
                         f"Redundancy, "
                         f"not {type(system).__name__}")
    use_heap = engine == "heap" or (
        engine == "auto" and policy >= 0 and not record
        and (system.servers >= HEAP_MIN_SERVERS or time is not None)
    )
    if time is not None and not use_heap:
        raise ValueError("time= runs need the heap engine (JSW, JIQ, RandomRouting, LeastOfD)")
    if record and use_heap:
        raise ValueError("record=True needs the dense engine")
    S = system.servers
    starts = _starts(system, w0, nrep, sort=not use_heap)
    every = max(1, S) if profile_every is None else _int_arg(profile_every, "profile_every", 1)
    if use_heap and steps is not None and steps <= every:
        raise ValueError(_few_snapshots(1, steps, every, S, profile_every is None))
    if reference is not None and not use_heap and steps is not None and steps <= every:
        raise ValueError(_few_snapshots(1, steps, every, S, profile_every is None,
                                        engine="dense"))
    user_grid = None
    if grid is not None:
        user_grid = np.asarray(grid, dtype=np.float64).ravel()
        g = user_grid
        if g.size == 0 or not np.all(np.isfinite(g)) or np.any(np.diff(g) <= 0) or g[0] < 0:
            raise ValueError("grid must be a non-empty, strictly increasing array of levels >= 0")
    rho = _condition3_load(system, input)
    load_msg = None if rho is None else dg.load_warning(repr(system), rho)
    if load_msg is not None:
        dg.warn(load_msg)
    if reference is not None and warmup == 0 and w0 is None:
        dg.warn("reference= compares the profile with a stationary one, but this run starts "
                "from the initial state with warmup=0, so sup_error includes the transient "
                "from that state and is not the stationary distance: give a warm-up "
                "(e.g. warmup=steps // 10) or start from a stationary state with w0=")
    ss = as_seed_sequence(rng)
    seeds = ss.spawn(nrep)
    streams = [input.forward(child(sd, 0)) for sd in seeds]
    gens = [forward_generator(sd, 1) for sd in seeds]
    m = hp.uniforms_for(policy, d) if use_heap else system.uniforms

    def draw(c: int):
        sig = np.empty((nrep, c))
        tau = np.empty((nrep, c))
        U = np.empty((nrep, c, m))
        for r in range(nrep):
            sig[r], tau[r] = streams[r].next(c)
            if use_heap and policy != hp.REDUNDANCY:
                U[r] = gens[r].random((c, m))
            else:
                U[r] = system.innovations(gens[r], c)
        return sig, tau, U

    W = np.ascontiguousarray(starts, dtype=np.float64)
    acc = np.zeros((nrep, batches, eng.N_STATS))
    path = np.zeros((nrep, steps, S)) if record else eng.empty_path()
    state = {"g": np.zeros(0), "hist": np.zeros((nrep, batches, 1)), "t0": 0}
    kind, params = int(system.kind), system.params
    if use_heap:
        heap, pos = hp.init_heap(W)
        tnow = np.zeros(nrep)
        elapsed = np.zeros(nrep)
        idx = np.zeros(nrep, dtype=np.int64)

    def fix_grid(current_max: float) -> None:
        g = user_grid
        if g is None:
            g = np.linspace(0.0, max(4.0 * input.mean_service, current_max), 33)
        state["g"] = g
        state["hist"] = np.zeros((nrep, batches, 2 * (g.size + 1)))

    def run(sig, tau, U, collect: bool) -> None:
        g, hist = state["g"], state["hist"]
        if use_heap:
            hp.run_heap_chunk(policy, d, system.params, W, heap, pos, tnow, elapsed, idx, sig,
                              tau, U, collect, float(time) if time is not None else 0.0,
                              steps if steps is not None else 1, batches, time is not None, g,
                              eng.uniform_step(g), every, acc, hist, hp.REBASE)
        else:
            eng.run_chunk(kind, params, W, sig, tau, U, collect, state["t0"], steps, batches, g,
                          eng.uniform_step(g), every, acc, hist, path)
            if collect:
                state["t0"] += sig.shape[1]

    def current_max() -> float:
        return float((W - tnow[:, None]).max()) if use_heap else float(W.max())

    def measuring_done(done: int) -> bool:
        if time is not None:
            return bool(np.all(elapsed >= time))
        return done >= steps

    bar = _progress_bar(progress, warmup + (steps if steps is not None else 0))
    sizes = [min(chunk, warmup - i) for i in range(0, warmup, chunk)]

    def next_size(done: int) -> int:
        return chunk if steps is None else min(chunk, steps - done)

    # draws for the next chunk are made in a helper thread while the kernel (which releases
    # the GIL) runs the current one; one producer keeps every stream's order fixed
    with ThreadPoolExecutor(max_workers=1) as pool:
        first = sizes[0] if sizes else next_size(0)
        nxt = pool.submit(draw, first)
        for i, c in enumerate(sizes):
            sig, tau, U = nxt.result()
            nxt = pool.submit(draw, sizes[i + 1] if i + 1 < len(sizes) else next_size(0))
            run(sig, tau, U, False)
            if bar is not None:
                bar.update(c)
        if use_heap:
            elapsed[:] = 0.0
        fix_grid(current_max())
        done = 0
        while not measuring_done(done):
            sig, tau, U = nxt.result()
            c = sig.shape[1]
            done += c
            if not measuring_done(done) or time is not None:
                nxt = pool.submit(draw, next_size(done) or chunk)
            run(sig, tau, U, True)
            if bar is not None:
                bar.update(c)
        nxt.cancel()
    if bar is not None:
        bar.close()
    if use_heap:
        W = np.maximum(W - tnow[:, None], 0.0)  # workloads at the end

    arr = acc[..., eng.ARRIVALS]
    snaps = acc[..., eng.SAMPLED]
    if use_heap and time is not None:
        fewest = int(snaps.sum(axis=1).min())
        if fewest < 2:
            raise ValueError(_few_snapshots(fewest, None, every, S, profile_every is None,
                                            time=time, mean_tau=input.mean_interarrival))
    check = dg.batch_check(acc[..., eng.WORK], snaps if use_heap else arr)
    if load_msg is None and check is not None and check.message() is not None:
        dg.warn(f"{system!r}: {check.message()}")
    loss = system.has_loss
    redundant = policy == hp.REDUNDANCY
    g = state["g"]
    half = g.size + 1
    prof = eng.profile_counts(state["hist"][..., :half])
    fprof = eng.profile_counts(state["hist"][..., half:])
    result = SimulationResult(
        system=repr(system),
        input=repr(input),
        steps=int(arr.sum() / nrep) if steps is None else steps,
        warmup=warmup,
        replications=nrep,
        p_wait=None if loss or redundant else ratio_estimate(acc[..., eng.WAITED], arr),
        mean_wait=None if loss or redundant else ratio_estimate(acc[..., eng.WAIT_SUM],
                                                                acc[..., eng.JOINED]),
        mean_response=ratio_estimate(acc[..., eng.WAIT_SUM], arr) if redundant else None,
        mean_workload=ratio_estimate(acc[..., eng.WORK], snaps if use_heap else arr),
        busy_fraction=ratio_estimate(acc[..., eng.BUSY], (snaps if use_heap else arr) * S),
        p_loss=ratio_estimate(acc[..., eng.LOST], arr) if loss else None,
        p_block=None,
        overflow_work=ratio_estimate(acc[..., eng.LOST_WORK], arr) if loss else None,
        grid=g,
        final_state=W,
        path=path if record else None,
        p_all_busy=ratio_estimate(acc[..., eng.ALL_BUSY], arr),
        engine="heap" if use_heap else "dense",
        batch_check=check,
        _prof=prof,
        _den=snaps * S,
        _fprof=fprof,
        _fden=acc[..., eng.JOINED],
    )
    if reference is not None:
        result = _with_sup_error(result, reference)
    return result


def _condition3_load(system: System, input: Input) -> float | None:
    """``rho = E[sigma] / (S E[tau])`` where condition (3) (``rho < 1``) is necessary, else None.

    Every customer of a system without loss adds its service time to one server, so at
    ``rho >= 1`` there is no stationary regime. Loss systems drop work, and systems whose work
    per customer depends on the state (redundancy) have no such load: ``System.load`` is None.
    """
    if system.has_loss:
        return None
    rho = system.load(input)
    return None if rho is None else float(rho)


def _few_snapshots(got: int, steps: int | None, every: int, servers: int, default: bool, *,
                   time: float | None = None, mean_tau: float = 1.0,
                   engine: str = "heap") -> str:
    """Message for a run with fewer than 2 snapshots of the workload vector per replication."""
    what = ("busy fraction, total workload and profile" if engine == "heap" else "profile")
    every_s = (f"profile_every = servers = {every} by default" if default
               else f"profile_every={every}")
    if steps is not None:
        run = f"steps={steps}"
        longer = f"steps > {every} (e.g. steps={max(32 * every, 1000)})"
        smaller = max(1, min(every, steps // 32 or 1))
    else:
        run = f"time={time:g}"
        longer = (f"a time= long enough for well over {every} arrivals (e.g. "
                  f"time={32 * every * mean_tau:.4g})")
        smaller = max(1, min(every, int((time or 0.0) / mean_tau) // 32 or 1))
    return (f"the {engine} engine samples the workload vector ({what}) at every "
            f"profile_every-th measured arrival ({every_s}), so {run} gives {got} sample(s) "
            f"per replication, too few for an estimate: pass {longer} or a smaller "
            f"profile_every= (e.g. profile_every={smaller})")


def _check_profile_samples(den_batches: np.ndarray, replications: int, servers: int) -> None:
    """Refuse a profile from fewer than 2 snapshots per replication."""
    per_rep = np.asarray(den_batches, dtype=np.float64).reshape(replications, -1).sum(axis=1)
    fewest = round(float(per_rep.min()) / max(servers, 1))
    if fewest < 2:
        raise ValueError(f"the profile holds {fewest} snapshot(s) of the workload vector per "
                         "replication (one at every profile_every-th measured arrival, "
                         "default: every S-th), too few for an estimate: simulate more steps "
                         "than profile_every, or pass a smaller profile_every= (e.g. "
                         "profile_every=1)")


def _positive_time(time: Any) -> float:
    try:
        x = float(time)
    except (TypeError, ValueError):
        raise TypeError(f"time must be a real number, got {type(time).__name__}") from None
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"time must be a finite number > 0, got {time!r}")
    return x


def _starts(system: System, w0: Any, nrep: int, sort: bool) -> np.ndarray:
    S = system.servers
    if w0 is None:
        return np.zeros((nrep, S))

    def check(row: Any, name: str) -> np.ndarray:
        a = np.asarray(row, dtype=np.float64)
        if not sort and a.ndim == 1 and a.size == S:  # the heap engine takes any order
            a = np.sort(a)
        return system.check_state(a, name)

    if np.ndim(w0) == 2:
        if np.shape(w0)[0] != nrep:
            raise ValueError(
                f"w0 with one row per replication must have {nrep} rows, got {np.shape(w0)[0]}"
            )
        return np.array([check(row, f"w0[{i}]") for i, row in enumerate(w0)])
    return np.repeat(check(w0, "w0")[None, :], nrep, axis=0)


def _with_sup_error(result: SimulationResult, reference: Any) -> SimulationResult:
    import dataclasses

    g = result.grid
    ref = reference.profile if hasattr(reference, "profile") else reference
    if not callable(ref):
        raise TypeError("reference must be callable or have a profile(w) method")
    exact = np.asarray(ref(g), dtype=np.float64)
    est = result.profile(g)
    diff = np.abs(np.asarray(est.value) - exact)
    k = int(np.nanargmax(diff))
    return dataclasses.replace(result, sup_error=Estimate(float(diff[k]),
                                                          float(np.asarray(est.se)[k])))


def _progress_bar(progress: bool, total: int):
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("progress=True needs tqdm: pip install tqdm") from exc
    return tqdm(total=total, unit="arrival", unit_scale=True)
