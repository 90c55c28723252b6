"""Forward iteration of a system driven by an input: :func:`simulate`."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import numba
import numpy as np

from . import _stats as eng
from . import diagnostics as dg
from ._memory import require_memory
from ._rng import RngLike, as_seed_sequence, child, forward_generator
from ._validate import MAX_COUNT, check_count, check_int, check_positive
from .codes import LawCode
from .estimate import Estimate, ratio_estimate
from .inputs import Input, Renewal, check_input, is_renewal
from .result import SimulationResult
from .systems import System, check_system
from .zerowait import simulate_queues

__all__ = ["SimulationResult", "simulate"]

DEFAULT_CHUNK = 8192
MAX_CALL = 1 << 22  # most arrivals of one in-kernel call: an interrupt waits at most for one


HEAP_MIN_SERVERS = 32
"""``engine="auto"`` uses the heap engine from this many servers on (measured crossover)."""


def _require_run_memory(system: System, nrep: int, batches: int, chunk: int,
                        record_steps: int | None, grid_size: int | None) -> None:
    """Refuse, before allocating, a run whose arrays do not fit (``MemoryError``).

    Per replication: the batch statistics and profile histograms (``batches`` rows of
    ``N_STATS + 2 (grid + 1)``), a chunk of draws (``chunk (2 + uniforms)``) and, with
    ``record=True``, the path (``steps S``), all float64.
    """
    S, m = system.servers, max(system.uniforms, 1)
    per_rep = (float(batches) * (eng.N_STATS + 2 * ((grid_size or 33) + 1))
               + float(chunk) * (2 + m) + float(record_steps or 0) * S)
    parts = [f"batches={batches}", f"chunk={chunk}", f"replications={nrep}"]
    if grid_size is not None:
        parts.append(f"a grid of {grid_size} levels")
    if record_steps is not None:
        parts.append(f"record=True over steps={record_steps} with {S} servers")
    require_memory(8.0 * nrep * per_rep, f"simulating {type(system).__name__} with "
                   + ", ".join(parts), "use fewer of them (record=False keeps no path)")


def simulate(
    system: System,
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
        Arrivals drawn and simulated per chunk where the draws are made in blocks outside the
        loop (scipy laws, HyperExponential and Coxian, modulated and periodic inputs), and
        per progress-bar update; built-in renewal laws are drawn inside the loop, which then
        runs a count of arrivals in one call (or chunks of it to a time horizon).
    engine : {"auto", "dense", "heap"}
        Which engine (see above).
    reference : callable or object with ``profile(w)``, optional
        A reference profile ``x*_w`` (e.g. ``ly.jiq_equilibrium(...)``): the result's
        ``sup_error`` is ``max_w |x_w - x*_w|`` over the grid.
    precision : float or dict of str to float, optional
        Run until precise (:mod:`recursions.precision`): the half-width wanted for each
        statistic (a float for all of ``statistics``, or ``{name: half-width}``), relative to
        its value unless ``relative=False``. Stages of growing length retrace the same path
        until every interval is trusted and within its target, or a budget is spent; the
        result's ``precision`` says what was reached, and a warning names what was not.
        ``steps`` is then the first stage's length (default ``2**14``).
    relative : bool, default True
        Whether ``precision`` is a relative half-width.
    confidence : float, default 0.95
        The level of the intervals ``precision=`` targets.
    statistics : sequence of str, optional
        What ``precision=`` targets (default ``("p_wait", "mean_wait")``, or the system's
        ``mean_response`` or ``p_loss``); any of ``result.statistics``.
    max_steps : int, optional
        The longest stage, in arrivals per replication (default ``2**32``).
    max_seconds : float, optional
        Stop before a stage that would end after this many seconds in all.
    start : "stationary", a profile, or None
        ``"stationary"``: each replication starts from an exact stationary draw
        (:mod:`recursions.starts`; the exact samplers of :mod:`coupling`, which covers FCFS
        G/G/S, loss systems, J_{p+1}SW and JIQ where ``cp.perfect_sample`` does), so no
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
    >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
    ...                   precision=0.05, warmup="auto", rng=1)   # +-5% at 95%
    >>> res.precision.reached, res.interval("mean_wait").covers(1.0)
    (True, True)
    """
    if precision is not None or isinstance(warmup, str) or start is not None:
        from .precision import _simulate_modes

        return _simulate_modes(system, input, steps, precision=precision, relative=relative,
                              confidence=confidence, statistics=statistics,
                              max_steps=max_steps, max_seconds=max_seconds, warmup=warmup,
                              start=start, replications=replications, rng=rng, w0=w0,
                              batches=batches, time_=time, record=record, grid=grid,
                              profile_every=profile_every, progress=progress, chunk=chunk,
                              engine=engine, reference=reference)
    if "queues" in getattr(system, "engines", ()):
        _refuse_queue_options(system, record=record, w0=w0, grid=grid,
                              profile_every=profile_every, progress=progress,
                              chunk=chunk, reference=reference)
        if engine in ("dense", "heap"):
            raise ValueError(f"{type(system).__name__} is a queue-length system: it runs on "
                             f"engine 'queues' or 'counts', not {engine!r}")
        # a queue-length system: a QueuePolicy or JIQ
        return simulate_queues(cast(Any, system), input, steps, time=time, warmup=warmup,
                               replications=replications, rng=rng, engine=engine,
                               batches=batches)
    check_system(system)
    check_input(input)
    system.check_input(input)
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
    warmup = check_count(warmup, "warmup", 0)
    nrep = check_int(replications, "replications", 1)
    # a workload vector, an empty-time heap with its positions and the statistics, per replication
    require_memory(48.0 * system.servers * nrep, f"simulating {type(system).__name__} with "
                   f"{system.servers} servers and {nrep} replication(s)",
                   "use fewer servers or replications")
    default_batches = min(32, steps) if steps is not None else 32
    batches = default_batches if batches is None else check_int(batches, "batches", 1)
    chunk = check_int(chunk, "chunk", 1)
    if steps is not None and batches > steps:
        raise ValueError(f"batches must be <= steps, got batches={batches}, steps={steps}")
    if steps is None and batches > MAX_COUNT:
        raise ValueError(f"batches must be <= 2**53, got {batches}")
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
    every = max(1, S) if profile_every is None else check_int(profile_every, "profile_every", 1)
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
    _require_run_memory(system, nrep, batches, chunk, steps if record else None,
                        None if user_grid is None else user_grid.size)
    rho = _condition3_load(system, input)
    load_msg = None if rho is None else dg.load_warning(repr(system), rho)
    if load_msg is not None:
        dg.warn(load_msg)
    if reference is not None and warmup == 0 and w0 is None:
        dg.warn("reference= compares the profile with a stationary one, but this run starts "
                "from the initial state with warmup=0, so sup_error includes the transient "
                "from that state and is not the stationary distance: give a warm-up "
                "(e.g. warmup=steps // 10) or start from a stationary state with w0=")
    if nrep * batches < 2:
        dg.warn("one batch of one replication: the standard errors are nan (no spread to "
                "measure); pass replications >= 2, or batches >= 2 with steps >= 2")
    ss = as_seed_sequence(rng)
    seeds = ss.spawn(nrep)
    streams = [input.forward(child(sd, 0)) for sd in seeds]
    gens = [forward_generator(sd, 1) for sd in seeds]
    m = hp.uniforms_for(policy, d) if use_heap else system.uniforms
    laws = _kernel_laws(input)
    # a plain Python step (rc.Map without @njit) runs its drivers as Python, where a compiled
    # draw per customer costs more than numpy's blocks
    from .drivers import _is_dispatcher

    # a recorded path comes from the block drivers (the same numbers): the drawing loops hold
    # no path-recording code, which cost them 1-3% per arrival (measured alone at 4 to 16
    # servers)
    in_kernel = KERNEL_DRAWS and laws is not None and not record and (
        policy != hp.REDUNDANCY if use_heap
        else type(system).innovations is System.innovations and _is_dispatcher(system.kernel))
    scode, spar, tcode, tpar = laws if laws is not None else (0, None, 0, None)

    def draw(c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    path = np.zeros((nrep, steps or 0, S)) if record else eng.empty_path()
    state: dict[str, Any] = {"g": np.zeros(0), "hist": np.zeros((nrep, batches, 1)), "t0": 0}
    params = system.params
    drivers = None if use_heap else system.drivers
    law_drivers: Any = None  # compiled with the two law codes as constants (run_draws)
    if in_kernel:
        from .drivers import compiled_drivers, heap_drivers

        law_drivers = (heap_drivers((scode, tcode)) if use_heap
                       else compiled_drivers(system.kernel, (scode, tcode), S)[0])
    # a user's map: the states and the batch sums are looked at after each chunk (a NaN, a
    # negative or unsorted state, or an undeclared loss, raises naming the batch); a declared
    # capability (System.check_run), which the built-in systems leave empty; the heap engine
    # keeps absolute empty times, not workloads, and runs built-in policies only
    check_run = None if use_heap else system.check_run
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

    def by_time(collect: bool) -> bool:
        # only the measured run stops at the time horizon: the warm-up is a count of arrivals
        return collect and time is not None

    def run(sig: np.ndarray, tau: np.ndarray, U: np.ndarray, collect: bool) -> None:
        g, hist = state["g"], state["hist"]
        if use_heap:
            hp.run_heap_chunk(policy, d, system.params, W, heap, pos, tnow, elapsed, idx, sig,
                              tau, U, collect, float(time) if time is not None else 0.0,
                              steps if steps is not None else 1, batches, by_time(collect), g,
                              eng.uniform_step(g), every, acc, hist, hp.REBASE, gens[0])
        else:
            assert drivers is not None
            drivers.run_chunk(params, W, sig, tau, U, collect, state["t0"], steps,
                              batches, g, eng.uniform_step(g), every, acc, hist, path)
            if collect:
                state["t0"] += sig.shape[1]
            if check_run is not None:
                check_run(W, acc if collect else None,
                          where=f"after {state['t0']} measured arrivals" if collect else
                          "in the warm-up")

    def run_rep(r: int, c: int, collect: bool, t0: int) -> None:
        """Replication ``r`` through ``c`` arrivals drawn inside the kernel (nogil)."""
        g, hist = state["g"], state["hist"]
        gs, gt = streams[r].generators[:2]
        if use_heap:
            hs = np.array([tnow[r], elapsed[r], float(idx[r])])
            law_drivers.run_heap_draws(
                policy, d, system.params, W[r], heap[r], pos[r], hs, gs, scode, spar, gt,
                tcode, tpar, gens[r], m, c, collect, float(time) if time is not None else 0.0,
                steps if steps is not None else 1, batches, by_time(collect), g,
                eng.uniform_step(g), every, acc[r], hist[r], hp.REBASE)
            tnow[r], elapsed[r], idx[r] = hs[0], hs[1], int(hs[2])
        elif not collect:  # the dense loop always collects: a warm-up into scratch tables
            law_drivers.run_draws(params, W[r], gs, scode, spar, gt, tcode, tpar, gens[r], m,
                                  c, True, 0, c, 1, np.zeros(0), 0.0, c + 1,
                                  np.zeros((1, eng.N_STATS)), np.zeros((1, 1)),
                                  np.zeros((0, 0)))
        else:
            law_drivers.run_draws(params, W[r], gs, scode, spar, gt, tcode, tpar, gens[r], m,
                                  c, True, t0, steps, batches, g, eng.uniform_step(g),
                                  every, acc[r], hist[r], np.zeros((0, 0)))  # never recorded

    def in_kernel_phase(collect: bool) -> None:
        """Warm-up (or the measured run) of every replication, each in one thread task."""
        # nothing is drawn outside, so a count of arrivals runs in few calls (each call costs
        # the typing of its arguments; the numbers do not depend on the split) of at most
        # MAX_CALL arrivals, so that an interrupt (Ctrl-C) is honoured between them, unless a
        # progress bar wants the chunks
        span = chunk if bar is not None or steps is None else min(max(steps, warmup, 1),
                                                                  MAX_CALL)
        warm = sizes if bar is not None else [min(MAX_CALL, warmup - i)
                                              for i in range(0, warmup, MAX_CALL)]
        stop = [False]  # set when the main thread is interrupted: the threads stop too

        def one(r: int) -> None:
            t0 = 0
            if not collect:
                for c in warm:
                    if stop[0]:
                        return
                    run_rep(r, c, False, 0)
                    if bar is not None and r == 0:
                        bar.update(c)
                return
            while not (elapsed[r] >= time if time is not None else t0 >= (steps or 0)):
                if stop[0]:
                    return
                c = span if steps is None else min(span, steps - t0)
                run_rep(r, c, True, t0)
                t0 += c
                if bar is not None and r == 0:
                    bar.update(c)

        workers = min(nrep, max(1, numba.get_num_threads()))
        if workers == 1:
            for r in range(nrep):
                one(r)
        else:
            with ThreadPoolExecutor(max_workers=workers) as ex:
                try:
                    list(ex.map(one, range(nrep)))
                except BaseException:
                    stop[0] = True
                    raise

    def current_max() -> float:
        return float((W - tnow[:, None]).max()) if use_heap else float(W.max())

    def measuring_done(done: int) -> bool:
        if time is not None:
            return bool(np.all(elapsed >= time))
        return done >= (steps or 0)

    bar = _progress_bar(progress, warmup + (steps if steps is not None else 0))
    sizes = [min(chunk, warmup - i) for i in range(0, warmup, chunk)]

    def next_size(done: int) -> int:
        return chunk if steps is None else min(chunk, steps - done)

    if in_kernel:
        # built-in laws: drawn inside the kernel from the streams' own generators, customer
        # after customer (the very numbers of the blocks below); replications in threads
        in_kernel_phase(False)
        if check_run is not None:
            check_run(W, where="at the end of the warm-up")
        if use_heap:
            elapsed[:] = 0.0
        fix_grid(current_max())
        in_kernel_phase(True)
        if check_run is not None:
            check_run(W, acc, where="at the end of the run")
    else:
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
    check = _batch_checks(acc, snaps if use_heap else arr,
                          "response time" if policy == hp.REDUNDANCY else
                          "workload found at the joined server")
    if load_msg is None and check is not None and check.message() is not None:
        dg.warn(f"{system!r}: {check.message()}")
    loss = system.has_loss
    redundant = policy == hp.REDUNDANCY
    g = state["g"]
    half = g.size + 1
    prof = eng.profile_counts(state["hist"][..., :half])
    fprof = eng.profile_counts(state["hist"][..., half:])
    seen = snaps if use_heap else arr
    sums = {"mean_workload": (acc[..., eng.WORK], seen),
            "busy_fraction": (acc[..., eng.BUSY], seen * S),
            "p_all_busy": (acc[..., eng.ALL_BUSY], arr)}
    if redundant:
        sums["mean_response"] = (acc[..., eng.WAIT_SUM], arr)
    elif not loss:
        sums["p_wait"] = (acc[..., eng.WAITED], arr)
        sums["mean_wait"] = (acc[..., eng.WAIT_SUM], acc[..., eng.JOINED])
    if loss:
        sums["p_loss"] = (acc[..., eng.LOST], arr)
        sums["overflow_work"] = (acc[..., eng.LOST_WORK], arr)
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
        start="empty" if w0 is None else "given",
        _sums=sums,
        _no_clt=_no_clt(system, input, sums),
        _prof=prof,
        _den=snaps * S,
        _fprof=fprof,
        _fden=acc[..., eng.JOINED],
    )
    if reference is not None:
        result = _with_sup_error(result, reference)
    return result


# laws whose in-kernel draws, one at a time, are not the numbers of one block ``sample``
_BLOCKWISE = (int(LawCode.HYPEREXPONENTIAL), int(LawCode.COXIAN))

KERNEL_DRAWS = True
"""Whether built-in laws are drawn inside the kernels (``True``) or in blocks by numpy.

On. The in-kernel loops run on drivers compiled for the input's two law codes
(:func:`recursions.drivers.compiled_drivers` with ``laws``, :func:`recursions.drivers.
heap_drivers`): the codes, and whether the loop draws at all, are compile-time constants,
so only the laws' own samplers are in the loop. With the code known only at run time,
``recursions.dists.kernel.draw_one`` cost 21-24 ns a draw against 3 ns for a direct
``gen.standard_exponential()`` (the whole choice among the laws was too large for LLVM to
inline), and the in-kernel path ran at a third of the block path (M/M/1 15 M arrivals per
second against 46 M). Compiled per law pair, it runs faster than numpy's blocks drawn by a
helper thread while the kernel runs the previous chunk, measured side by side on the 2-core
machine (``benchmarks/kw_throughput.py``), and leaves the second core free. Each law pair
compiles its drivers once, on first use, and numba caches them on disk, so only the laws of
:data:`KERNEL_LAWS` are drawn inside by default. Both ways give the same numbers bit for bit
(``tests/test_in_kernel_draws.py`` runs both, for every law with an in-kernel sampler).
"""


KERNEL_LAWS = frozenset({int(LawCode.EXPONENTIAL), int(LawCode.DETERMINISTIC)})
"""The law codes drawn inside the kernels by default; other laws are drawn in blocks.

Each pair of codes drawn in a loop is a copy of the drivers compiled for that pair (about
1.5 s for a dense map, 2 s for the heap engine, once, then cached on disk), so the default
keeps the pairs few: exponential and deterministic times (M/M/S, M/D/S, D/M/S). Every other
law with an element-by-element sampler (:class:`~recursions.dists.Erlang`,
:class:`~recursions.dists.Uniform`, :class:`~recursions.dists.LogNormal`,
:class:`~recursions.dists.Lomax`, :class:`~recursions.dists.Empirical`) can be added, with the
same numbers; HyperExponential and Coxian cannot (their blocks draw all phases first).
"""


def _kernel_laws(input: Input) -> tuple[int, np.ndarray, int, np.ndarray] | None:
    """``(service code, params, interarrival code, params)`` to draw inside the kernels.

    For a renewal input (``Renewal``, ``Poisson`` and their arrivals-only forms) whose two laws
    have an in-kernel sampler drawing element by element (:mod:`recursions.dists.kernel`), so
    the kernel sees the very numbers of the block draws, and codes in :data:`KERNEL_LAWS`;
    ``None`` otherwise (the input is drawn in blocks outside: modulated and periodic inputs,
    scipy laws, HyperExponential and Coxian, the laws left out of :data:`KERNEL_LAWS`).
    """
    if not is_renewal(input) or type(input)._forward is not Renewal._forward:
        return None
    out: list[Any] = []
    for law in (input.service, input.interarrival):
        ks = law.kernel_sampler()
        if ks is None or int(ks[0]) in _BLOCKWISE or int(ks[0]) not in KERNEL_LAWS:
            return None
        out += [int(ks[0]), np.ascontiguousarray(ks[1], dtype=np.float64)]
    return out[0], out[1], out[2], out[3]


def _no_clt(system: System, input: Input, sums: dict[str, Any]) -> dict[str, str]:
    """The statistics without a valid standard error; FCFS systems warn about their waits."""
    from .output_analysis import clt_failures

    out = clt_failures(input, list(sums))
    if system.fcfs and "mean_wait" in out:
        dg.warn(f"{system!r}: mean_wait +- se: {out['mean_wait']}")
    return out


def _condition3_load(system: System, input: Input) -> float | None:
    """``rho = E[sigma] / (S E[tau])`` where condition (3) (``rho < 1``) is necessary, else None.

    Every customer of a system without loss adds its service time to one server, so at
    ``rho >= 1`` there is no stationary regime. Loss systems drop work, and systems whose work
    per customer depends on the state (redundancy) have no such load: ``System.load`` is None.
    """
    if system.has_loss or not system.capacity_declared:  # an assumed capacity decides nothing
        return None
    rho = system.load(input)
    return None if rho is None else float(rho)


def _batch_checks(acc: np.ndarray, weight: np.ndarray, found: str) -> dg.BatchCheck | None:
    """The batch check of the total workload, and of what customers found (``found`` names it).

    The workload is summed where it is sampled (every arrival on the dense engine, every
    snapshot on the heap engine, whose short runs then have few usable batches); what the
    joining customers found, behind ``mean_wait``, has a value in every batch of every engine
    and is often the more correlated series. Returns the first check that flags, else the
    workload's.
    """
    work = dg.batch_check(acc[..., eng.WORK], weight)
    seen = dg.batch_check(acc[..., eng.WAIT_SUM], acc[..., eng.JOINED], found)
    for c in (work, seen):
        if c is not None and c.message() is not None:
            return c
    return work if work is not None else seen


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


def _refuse_queue_options(system: Any, **given: Any) -> None:
    """Queue-length engines keep counts, not workload vectors: refuse what they cannot do."""
    defaults = {"record": False, "w0": None, "grid": None, "profile_every": None,
                "progress": False, "chunk": DEFAULT_CHUNK, "reference": None}
    bad = [k for k, v in given.items() if not (v is defaults[k] or (
        isinstance(v, (bool, int)) and v == defaults[k]))]
    if bad:
        raise ValueError(f"{type(system).__name__} runs on the queue-length engines, which do "
                         f"not take {', '.join(f'{k}=' for k in bad)} (they keep counts of "
                         "jobs per server, not workload vectors): leave them out")


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


def _progress_bar(progress: bool, total: int) -> Any:
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("progress=True needs tqdm: pip install tqdm") from exc
    return tqdm(total=total, unit="arrival", unit_scale=True)
