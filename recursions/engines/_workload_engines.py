"""The workload engines of :func:`recursions.simulate`: ``"dense"`` and ``"heap"``.

``"dense"`` applies the system's compiled map to the sorted workload vector (``O(S)`` per
arrival, :mod:`recursions.engines._driver_compiler`); ``"heap"`` (JSW, JIQ, RandomRouting, LeastOfD,
Redundancy) keeps absolute empty times in an indexed min-heap (``O(log S)`` per arrival,
:mod:`recursions.engines._heap`). Both register in :mod:`recursions.engines._registry`, run through
the one chunk loop of :mod:`recursions.engines._chunk_loop` and report with
:mod:`recursions.results._workload_result`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recursions.common._memory import require_memory
from recursions.common._rng import as_seed_sequence, child, forward_generator
from recursions.engines import _accumulator as eng
from recursions.engines import _heap as hp
from recursions.engines._chunk_loop import (
    BlockDraws,
    Draws,
    KernelDraws,
    RunHandle,
    Tables,
    rebin,
    run_chunks,
)
from recursions.engines._driver_compiler import drivers_of
from recursions.engines._registry import register
from recursions.engines._run_plan import RunPlan
from recursions.inference import diagnostics as dg
from recursions.model._system import System
from recursions.results._simulation_result import SimulationResult
from recursions.results._workload_result import workload_result

__all__ = ["DENSE", "HEAP", "HEAP_MIN_SERVERS", "NO_SNAPSHOTS", "DenseEngine", "HeapEngine",
           "few_snapshots"]

HEAP_MIN_SERVERS = 32
"""``engine="auto"`` uses the heap engine from this many servers on (measured crossover)."""

NO_SNAPSHOTS = 1 << 62
"""The snapshot interval of a lean run (``statistics=`` of what customers find only): none."""

_ALL = frozenset({"record", "w0", "start", "grid", "profile_every", "progress", "chunk",
                  "reference", "statistics"})


@dataclass
class _Run:
    """One run's arrays and streams, shared by the dense and heap kernels."""

    system: System
    plan: RunPlan
    W: np.ndarray
    every: int
    streams: list[Any]
    gens: list[np.random.Generator]
    m: int
    law_drivers: Any
    acc: np.ndarray = field(init=False)
    load_msg: str | None = field(default=None, init=False)  # the load warning given
    engine = ""  # the engine's name, in the result

    def __post_init__(self) -> None:
        self.acc = np.zeros((self.plan.replications, self.plan.batches, eng.N_STATS))

    def go_on(self, plan: RunPlan) -> None:
        """Take ``plan``, a longer run whose batches hold those so far whole."""
        self.acc = rebin(self.acc, self.plan, plan)
        self.plan = plan

    def report(self, plan: RunPlan, acc: np.ndarray, tables: Tables) -> SimulationResult:
        """The result of the batch sums ``acc`` and ``tables`` of ``plan``'s batches."""
        return workload_result(self.system, plan, self.engine, acc, tables, self.final_state(),
                               getattr(self, "path", None),
                               self.system.finds_response, self.load_msg)

    def final_state(self) -> np.ndarray:
        """The workloads at the end."""
        raise NotImplementedError

    def laws(self, r: int) -> tuple[Any, ...]:
        """Replication ``r``'s two generators with the law codes and parameters."""
        assert self.plan.laws is not None
        scode, spar, tcode, tpar = self.plan.laws
        gs, gt = self.streams[r].generators[:2]
        return gs, scode, spar, gt, tcode, tpar

    def uniforms(self, r: int, count: int) -> np.ndarray:
        """Replication ``r``'s routing uniforms for ``count`` arrivals (block draws)."""
        return self.system.innovations(self.gens[r], count)

    def check(self, where: str, collect: bool) -> None:
        """Nothing to look at (the dense run looks at a user's map)."""

    def replication_done(self, r: int, t0: int) -> bool:
        """Whether replication ``r`` has measured its steps."""
        return t0 >= (self.plan.steps or 0)

    def all_done(self, done: int) -> bool:
        """Whether the replications have measured their steps."""
        return done >= (self.plan.steps or 0)


@dataclass
class _DenseRun(_Run):
    """The sorted workload vectors of the dense engine and its kernel calls."""

    engine = "dense"
    drivers: Any = None
    path: np.ndarray = field(init=False)
    t0: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        plan, S = self.plan, self.system.servers
        self.path = (np.zeros((plan.replications, plan.steps or 0, S)) if plan.record
                     else eng.empty_path())

    def block(self, sig: np.ndarray, tau: np.ndarray, U: np.ndarray, collect: bool,
              tables: Tables) -> None:
        """Every replication through one chunk of drawn arrivals; then a look at the states."""
        g, plan = tables.g, self.plan
        self.drivers.run_chunk(self.system.params, self.W, sig, tau, U, collect, self.t0,
                               plan.steps, plan.batches, g, eng.uniform_step(g), self.every,
                               self.acc, tables.hist, self.path)
        if collect:
            self.t0 += sig.shape[1]
        self.system.check_run(self.W, self.acc if collect else None,
                              where=f"after {self.t0} measured arrivals" if collect else
                              "in the warm-up")

    def drawn(self, r: int, c: int, collect: bool, t0: int, tables: Tables) -> None:
        """Replication ``r`` through ``c`` arrivals drawn in the loop (never recorded)."""
        params, g, plan = self.system.params, tables.g, self.plan
        if not collect:  # the dense loop always collects: a warm-up into scratch tables
            self.law_drivers.run_draws(params, self.W[r], *self.laws(r), self.gens[r], self.m,
                                       c, True, 0, c, 1, np.zeros(0), 0.0, c + 1,
                                       np.zeros((1, eng.N_STATS)), np.zeros((1, 1)),
                                       np.zeros((0, 0)))
            return
        self.law_drivers.run_draws(params, self.W[r], *self.laws(r), self.gens[r], self.m, c,
                                   True, t0, plan.steps, plan.batches, g, eng.uniform_step(g),
                                   self.every, self.acc[r], tables.hist[r], np.zeros((0, 0)))

    def go_on(self, plan: RunPlan) -> None:
        """Take ``plan``; a drawing loop grown past :data:`POINTER_ARRIVALS` leaves the pointer."""
        super().go_on(plan)
        if self.law_drivers is not None:
            self.law_drivers = _drawing_drivers(self.system, plan)

    def check(self, where: str, collect: bool) -> None:
        """A user's map looks at its states (:meth:`recursions.System.check_run`)."""
        self.system.check_run(self.W, self.acc if collect else None, where=where)

    def start_measuring(self) -> Tables:
        """The measured run's tables, on a grid that reaches the largest workload now."""
        return Tables.fixed(self.plan, float(self.W.max()))

    def final_state(self) -> np.ndarray:
        """The workload vectors at the end (a copy: a run that goes on changes ``W``)."""
        return self.W.copy()


@dataclass
class _HeapRun(_Run):
    """The empty times of the heap engine (absolute, with their clocks) and its kernel calls."""

    engine = "heap"
    policy: int = -1
    d: int = 0
    heap: np.ndarray = field(init=False)
    pos: np.ndarray = field(init=False)
    keys: np.ndarray = field(init=False)
    tnow: np.ndarray = field(init=False)
    elapsed: np.ndarray = field(init=False)
    idx: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        nrep = self.plan.replications
        self.heap, self.pos, self.keys = hp.init_heap(self.W)
        self.tnow = np.zeros(nrep)
        self.elapsed = np.zeros(nrep)
        self.idx = np.zeros(nrep, dtype=np.int64)

    def uniforms(self, r: int, count: int) -> np.ndarray:
        """The heap's own uniforms (a redundancy system draws its row)."""
        if self.policy != hp.REDUNDANCY:
            return self.gens[r].random((count, self.m))
        return self.system.innovations(self.gens[r], count)

    def _horizon(self, collect: bool) -> tuple[float, int, bool]:
        # only the measured run stops at the time horizon: the warm-up counts arrivals
        time, steps = self.plan.time, self.plan.steps
        return (float(time) if time is not None else 0.0, steps if steps is not None else 1,
                collect and time is not None)

    def block(self, sig: np.ndarray, tau: np.ndarray, U: np.ndarray, collect: bool,
              tables: Tables) -> None:
        """Every replication through one chunk of drawn arrivals."""
        g = tables.g
        time, steps, by_time = self._horizon(collect)
        hp.run_heap_chunk(self.policy, self.d, self.system.params, self.W, self.heap, self.pos,
                          self.keys, self.tnow, self.elapsed, self.idx, sig, tau, U, collect,
                          time, steps, self.plan.batches, by_time, g, eng.uniform_step(g),
                          self.every, self.acc, tables.hist, hp.REBASE)

    def drawn(self, r: int, c: int, collect: bool, t0: int, tables: Tables) -> None:
        """Replication ``r`` through ``c`` arrivals drawn in the loop."""
        g = tables.g
        time, steps, by_time = self._horizon(collect)
        hs = np.array([self.tnow[r], self.elapsed[r], float(self.idx[r])])
        self.law_drivers.run_heap_draws(
            self.policy, self.d, self.system.params, self.W[r], self.heap[r], self.pos[r],
            self.keys[r], hs, *self.laws(r), self.gens[r], self.m, c, collect, time, steps,
            self.plan.batches, by_time, g, eng.uniform_step(g), self.every, self.acc[r],
            tables.hist[r], hp.REBASE)
        self.tnow[r], self.elapsed[r], self.idx[r] = hs[0], hs[1], int(hs[2])

    def replication_done(self, r: int, t0: int) -> bool:
        """Whether replication ``r`` has measured its steps or its time."""
        time = self.plan.time
        return bool(self.elapsed[r] >= time) if time is not None else super().replication_done(
            r, t0)

    def all_done(self, done: int) -> bool:
        """Whether every replication has measured its steps or its time."""
        time = self.plan.time
        return bool(np.all(self.elapsed >= time)) if time is not None else super().all_done(done)

    def start_measuring(self) -> Tables:
        """Start the clocks of the measured run; its tables (the grid reaches the workloads)."""
        self.elapsed[:] = 0.0
        return Tables.fixed(self.plan, float((self.W - self.tnow[:, None]).max()))

    def final_state(self) -> np.ndarray:
        """The workloads at the end."""
        return np.maximum(self.W - self.tnow[:, None], 0.0)

    def report(self, plan: RunPlan, acc: np.ndarray, tables: Tables) -> SimulationResult:
        """The result, refusing a time horizon too short for 2 profile snapshots a replication."""
        if plan.time is not None and not plan.lean:
            fewest = int(acc[..., eng.SAMPLED].sum(axis=1).min())
            if fewest < 2:
                raise ValueError(few_snapshots(fewest, None, self.every, self.system.servers,
                                               plan.profile_every is None, time=plan.time,
                                               mean_tau=plan.input.mean_interarrival))
        return super().report(plan, acc, tables)


class _WorkloadEngine:
    """What the dense and heap engines share: the set-up of a run, the loop and the result."""

    name = ""
    family = "workload"
    keywords = _ALL
    continues = True
    """A run of steps can go on (:meth:`start` returns a ``RunHandle`` of the chunk loop)."""

    def run(self, system: Any, plan: RunPlan) -> SimulationResult:
        """Run ``plan`` on ``system`` and report (see :func:`recursions.simulate`)."""
        return self.start(system, plan).result()

    def start(self, system: Any, plan: RunPlan) -> RunHandle:
        """Run ``plan`` on ``system``; the run can go on (a ``RunHandle``)."""
        starts, every, load_msg = self._prepare(system, plan)
        seeds = as_seed_sequence(plan.rng).spawn(plan.replications)
        streams = [plan.input.forward(child(sd, 0)) for sd in seeds]
        gens = [forward_generator(sd, 1) for sd in seeds]
        W = np.ascontiguousarray(starts, dtype=np.float64)
        state = self._state(system, plan, W, every, streams, gens)
        state.load_msg = load_msg
        draws: Draws = (KernelDraws() if state.law_drivers is not None
                        else BlockDraws(streams, state.uniforms, state.m))
        return RunHandle(state, draws, run_chunks(state, plan, draws))

    def _prepare(self, system: Any, plan: RunPlan) -> tuple[np.ndarray, int, str | None]:
        """The initial states, the snapshot interval and the load warning given, if any.

        Refuses, before anything is allocated or drawn, a run whose arrays do not fit
        (``MemoryError``: per replication a workload vector, an empty-time heap with its
        positions, the batch statistics and profile histograms, a chunk of draws and, with
        ``record=True``, the path), then an invalid ``w0`` and a run of too few profile
        snapshots (so a run with two faults hears of its memory first); then warns of a load
        ``>= 1``, of a reference without warm-up, of a single batch.
        """
        S, nrep, name = system.servers, plan.replications, type(system).__name__
        per_rep = (float(plan.batches) * plan.batch_doubles
                   + float(plan.chunk) * (2 + max(system.uniforms, 1))
                   + float((plan.steps or 0) if plan.record else 0) * S)
        parts = [f"batches={plan.batches}", f"chunk={plan.chunk}", f"replications={nrep}"]
        if plan.grid is not None:
            parts.append(f"a grid of {plan.grid.size} levels")
        if plan.record:
            parts.append(f"record=True over steps={plan.steps} with {S} servers")
        require_memory(48.0 * S * nrep, f"simulating {name} with {S} servers and {nrep} "
                       "replication(s)", "use fewer servers or replications")
        require_memory(8.0 * nrep * per_rep, f"simulating {name} with " + ", ".join(parts),
                       "use fewer of them (record=False keeps no path)")
        starts = system.initial_states(plan.w0, nrep, any_order=self.name == "heap")
        every = max(1, S) if plan.profile_every is None else plan.profile_every
        if plan.lean:  # a lean run keeps no statistic of the snapshots, so it takes none
            every = NO_SNAPSHOTS  # (docs/benchmarks.md, bench-heap-policy)
        else:
            self._check_snapshots(plan, every, S)
        # condition (3), rho < 1, is necessary where every customer adds its service time to
        # one server: not for loss systems, nor where the work depends on the state
        # (System.load is None), nor for an assumed capacity, which decides nothing
        rho = (None if system.has_loss or not system.capacity_declared
               else system.load(plan.input))
        load_msg = None if rho is None else dg.load_warning(repr(system), float(rho))
        if load_msg is not None:
            dg.warn(load_msg)
        if plan.reference is not None and plan.warmup == 0 and plan.w0 is None:
            dg.warn("reference= compares the profile with a stationary one, but this run "
                    "starts from the initial state with warmup=0, so sup_error includes the "
                    "transient from that state and is not the stationary distance: give a "
                    "warm-up (e.g. warmup=steps // 10) or start from a stationary state with "
                    "w0=")
        if nrep * plan.batches < 2:
            dg.warn("one batch of one replication: the standard errors are nan (no spread to "
                    "measure); pass replications >= 2, or batches >= 2 with steps >= 2")
        return starts, every, load_msg

    def _check_snapshots(self, plan: RunPlan, every: int, S: int) -> None:
        """Refuse a run of too few profile snapshots (before anything is drawn)."""

    def _state(self, system: Any, plan: RunPlan, W: np.ndarray, every: int,
               streams: list[Any], gens: list[np.random.Generator]) -> Any:
        raise NotImplementedError


class DenseEngine(_WorkloadEngine):
    """The dense engine: the compiled map on the sorted workload vector.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 2**14,
    ...             engine="dense").engine
    'dense'
    """

    name = "dense"

    def refuses(self, system: Any, plan: RunPlan) -> str | None:
        """Time horizons need the heap engine; statistics the system does not have."""
        if plan.time is not None:
            return "time= runs need the heap engine (JSW, JIQ, RandomRouting, LeastOfD)"
        return None

    def preferred(self, system: Any, plan: RunPlan) -> bool:
        """Never preferred: it runs what the heap engine does not."""
        return False

    def _check_snapshots(self, plan: RunPlan, every: int, S: int) -> None:
        if plan.reference is not None and plan.steps is not None and plan.steps <= every:
            raise ValueError(few_snapshots(1, plan.steps, every, S, plan.profile_every is None,
                                           engine="dense"))

    def _state(self, system: Any, plan: RunPlan, W: np.ndarray, every: int,
               streams: list[Any], gens: list[np.random.Generator]) -> _DenseRun:
        # a plain Python step (rc.Map without @njit) runs its drivers as Python, where a
        # compiled draw per customer costs more than numpy's blocks; a recorded path comes
        # from the block drivers (the same numbers): the drawing loops hold no path-recording
        # code, which slowed them (docs/benchmarks.md, bench-drivers)
        in_kernel = plan.laws is not None and not plan.record and (
            type(system).innovations is System.innovations and _compiled(system.kernel))
        if in_kernel and _blocks_first(system, plan):
            in_kernel = False
        # the system's own drivers, asked for first: a user's map checks its contract there
        drivers = drivers_of(system)
        if not in_kernel and _pointer(system, plan):
            drivers = _block_pointer(system)
        law_drivers = _drawing_drivers(system, plan) if in_kernel else None
        return _DenseRun(system, plan, W, every, streams, gens, system.uniforms, law_drivers,
                         drivers=drivers)


POINTER_ARRIVALS = 1_000_000
"""The most arrivals (warm-up and measured, over the replications) of a run of a user's map
on the loop that calls its step through a pointer (:mod:`recursions.engines._step_pointer`):
compiled once for every step, so a new or edited map compiles only its step, and slower by
a call per arrival (and the bounds checks of a checked map's step), so longer runs compile
the map into its own copy of the
loop (the same numbers). Set from :ref:`bench-first-result`."""


def _arrivals(plan: RunPlan) -> int:
    """The arrivals of ``plan``: warm-up and measured, over the replications."""
    return ((plan.steps or 0) + plan.warmup) * plan.replications


def _pointer(system: Any, plan: RunPlan) -> bool:
    """Whether ``plan`` runs ``system`` on the pointer loop (:data:`POINTER_ARRIVALS`).

    A short run of a user's map does, unless the map checks every step (``check="always"``:
    the first broken step must stop the run).
    """
    return (system.user_step and getattr(system, "check", None) != "always"
            and _arrivals(plan) <= POINTER_ARRIVALS)


BLOCK_ARRIVALS = 1_000_000
"""The most arrivals (warm-up and measured, over the replications) of a plain run on the
dense engine that reads blocks drawn by numpy rather than drawing in its loop: the loop that
reads blocks serves every law and compiles without the generators' samplers, so a first run
compiles less; longer runs draw in the loop, which is faster per arrival. The same numbers
either way. The same limit as :data:`POINTER_ARRIVALS` (:ref:`bench-first-result`)."""


def _blocks_first(system: Any, plan: RunPlan) -> bool:
    """Whether a run that could draw in the loop reads blocks instead (:data:`BLOCK_ARRIVALS`).

    A short plain run does, unless the loop it would draw in is compiled in this process
    already (a user's map: the pointer loop of :func:`_pointer`, which reads blocks too). A
    run with modes (``precision=``, ``warmup="auto"``, ``start=``) draws in the loop, as a
    long one does.
    """
    from recursions.engines._driver_compiler import drawing_compiled

    assert plan.laws is not None
    if plan.modes is not None or _arrivals(plan) > BLOCK_ARRIVALS:
        return False
    return not drawing_compiled(system.kernel, (plan.laws[0], plan.laws[2]), system.servers,
                                _lean(system, plan), pointer=_pointer(system, plan))


def _lean(system: Any, plan: RunPlan) -> bool:
    """Whether ``plan`` runs the lean drawing loop (never for a map that checks its runs).

    ``rc.Map`` checks its runs, and reads the workload sums there.
    """
    return plan.lean and type(system).check_run is System.check_run


def _block_pointer(system: Any) -> Any:
    """The pointer loop that reads blocks, for a user's map (its own copy if refused)."""
    from recursions.engines._driver_compiler import compiled_drivers

    return compiled_drivers(system.kernel, pointer=True)[0]


def _drawing_drivers(system: Any, plan: RunPlan) -> Any:
    """The dense engine's loop that draws inside it, for ``system`` run as ``plan`` says.

    A user's map runs a short plan on the loop that calls its step through a pointer
    (:data:`POINTER_ARRIVALS`), unless it checks every step (``check="always"``: the first
    broken step must stop the run); otherwise, and once a run that goes on grows past it,
    the map's own copy (the same numbers).
    """
    from recursions.engines._driver_compiler import compiled_drivers

    assert plan.laws is not None
    return compiled_drivers(system.kernel, (plan.laws[0], plan.laws[2]), system.servers,
                            lean=_lean(system, plan), pointer=_pointer(system, plan))[0]


class HeapEngine(_WorkloadEngine):
    """The heap engine: absolute empty times in an indexed min-heap (large ``S``, ``time=``).

    Examples
    --------
    >>> import recursions as rc
    >>> rc.simulate(rc.JSW(40), rc.Poisson(20.0, rc.dists.Exponential(1.0)), 1000).engine
    'heap'
    """

    name = "heap"
    keywords = _ALL - {"record"}

    def refuses(self, system: Any, plan: RunPlan) -> str | None:
        """Built-in policies only (those with a ``heap_policy``), and no recorded path."""
        if hp.policy_of(system)[0] < 0:
            return (f"the heap engine runs JSW, JIQ, RandomRouting, LeastOfD and Redundancy, "
                    f"not {type(system).__name__}")
        if plan.record:
            return "record=True needs the dense engine"
        return None

    def preferred(self, system: Any, plan: RunPlan) -> bool:
        """From :data:`HEAP_MIN_SERVERS` servers on, or for a time horizon."""
        return system.servers >= HEAP_MIN_SERVERS or plan.time is not None

    def _check_snapshots(self, plan: RunPlan, every: int, S: int) -> None:
        if plan.steps is not None and plan.steps <= every:
            raise ValueError(few_snapshots(1, plan.steps, every, S, plan.profile_every is None))

    def _state(self, system: Any, plan: RunPlan, W: np.ndarray, every: int,
               streams: list[Any], gens: list[np.random.Generator]) -> _HeapRun:
        policy, d = hp.policy_of(system)
        law_drivers = None
        if plan.laws is not None and policy != hp.REDUNDANCY:
            from recursions.engines._driver_compiler import heap_drivers

            lean = plan.lean and HEAP_LEAN_COPIES
            law_drivers = heap_drivers((plan.laws[0], plan.laws[2]),
                                       policy if HEAP_POLICY_COPIES or lean else None, lean=lean)
        return _HeapRun(system, plan, W, every, streams, gens, hp.uniforms_for(policy, d),
                        law_drivers, policy=policy, d=d)


DENSE = register(DenseEngine())
HEAP = register(HeapEngine())


HEAP_POLICY_COPIES = False
"""Whether the heap engine's drawing loop runs on a copy compiled for the system's policy.

Off: with the default statistics the policy is read at run time (see ``docs/benchmarks.md``,
section :ref:`bench-heap-policy`, for the measurement); a lean run has it compiled in
(:data:`HEAP_LEAN_COPIES`).
"""

HEAP_LEAN_COPIES = True
"""Whether a lean run (``statistics=`` of what customers find only) runs on a copy of the
drawing loop compiled for its policy and for lean statistics (no all-busy count, snapshot or
histogram is left in the loop). On: faster where measured, the same numbers
(``docs/benchmarks.md``, section :ref:`bench-heap-policy`).
"""


def _compiled(step: Any) -> bool:
    """Whether ``step`` is a compiled numba dispatcher (not a plain Python function)."""
    return hasattr(step, "py_func") and hasattr(step, "signatures")


def few_snapshots(got: int, steps: int | None, every: int, servers: int, default: bool, *,
                  time: float | None = None, mean_tau: float = 1.0,
                  engine: str = "heap") -> str:
    """Message for a run with fewer than 2 snapshots of the workload vector per replication.

    Parameters
    ----------
    got : int
        Snapshots taken (or that ``steps`` gives).
    steps : int or None
        The run's steps, or ``None`` for a time horizon.
    every : int
        Arrivals between snapshots.
    servers : int
        ``S``.
    default : bool
        Whether ``every`` is the default (``S``).
    time : float, optional
        The time horizon.
    mean_tau : float, default 1.0
        The mean interarrival time.
    engine : str, default "heap"
        The engine.

    Returns
    -------
    str

    Examples
    --------
    >>> few_snapshots(1, 10, 10, 10, True)[:44]
    'the heap engine samples the workload vector '
    """
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
