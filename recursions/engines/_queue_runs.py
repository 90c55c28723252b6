"""The runs of the queue-length engines on the one chunk loop.

The loop is :mod:`recursions.engines._chunk_loop`.

Each replication of a queue-length system (:mod:`recursions.model._queue_policies`) keeps its own
state and generators: :class:`CountsState` the aggregated counts of the ``"counts"`` engine,
:class:`QueuesState` the per-server queues and event heap of the ``"queues"`` engine (their
compiled kernels: :mod:`recursions.engines._queue_kernels`). A :class:`QueueRun` holds them for the
chunk loop, which calls it as it calls the workload engines' runs when their draws are made
inside the kernels (:class:`recursions.engines._chunk_loop.KernelDraws`): replication ``r`` through
the next ``c`` arrivals, each replication in a thread task. A kernel stops *before* the arrival
it was asked to stop at and takes it up on the next call, so a run in chunks, or one that
goes on to more arrivals (:class:`recursions.engines._chunk_loop.RunHandle`, the precision mode's
stages), draws and reports the numbers of one run in one call
(``tests/recursions/engines/test_continued_runs.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from recursions.common._checks import MAX_COUNT
from recursions.common._memory import require_memory
from recursions.common._rng import as_seed_sequence, forward_generator
from recursions.dists import Coxian, Law
from recursions.engines._chunk_loop import KernelDraws, RunHandle, Tables, rebin, run_chunks
from recursions.engines._queue_kernels import counts_kernel, queues_kernel
from recursions.engines._run_plan import RunPlan
from recursions.inference._batch_means import merge_batches
from recursions.inference._estimate import Estimate, ratio_estimate
from recursions.inference._moment_conditions import clt_failures
from recursions.inference.diagnostics import batch_check, short_for
from recursions.model._queue_policies import queue_length_estimates
from recursions.results._simulation_result import SimulationResult, warn_fixed_budget, warn_no_clt
from recursions.results._statistics import REGISTRY, sums_of

__all__ = ["CountsState", "QueueRun", "QueueSpec", "QueuesState", "queue_result",
           "start_queue_run"]

# measurement modes
STEPS, TIME = 0, 1
# kernel return codes
NEED_DRAWS, DONE, GROW, NEED_SERVICES, PAUSED = 0, 1, 2, 3, 4
# columns of the per-batch accumulator; phase time integrals follow from column PH0 on
ARR, WAITED, BLOCKED, ALLBUSY, TIME_C, BUSY_T, JOBS_T, PH0 = range(8)
# integer / float state slots shared by both kernels
I_OFF, I_SOFF, I_NARR, I_JOBS, I_MEAS, I_BATCH, I_HSIZE, I_PEND = range(8)

CHUNK_EVENTS = 1 << 16
"""Events drawn per block by the counts engine."""
CHUNK_ARRIVALS = 1 << 14
"""Arrivals (and service starts) drawn per block by the queues engine."""


@dataclass(frozen=True)
class QueueSpec:
    """What the kernels read of a queue-length system and its Poisson input.

    Examples
    --------
    >>> import recursions as rc
    >>> spec = QueueSpec.of(rc.JSQ(4, buffer=2), rc.Poisson(3.0, rc.dists.Exponential(1.0)))
    >>> spec.n, spec.b, spec.lam, spec.phases
    (4, 2, 3.0, 1)
    """

    code: int
    n: int
    b: int  # 0: infinite
    d: int
    lgc: float
    lam: float
    law: Law
    cox: Coxian | None

    @classmethod
    def of(cls, system: Any, input: Any) -> QueueSpec:
        """The spec of ``system`` (its :attr:`~recursions.System.queue_policy`) and ``input``."""
        code, buffer, d = system.queue_policy
        n = system.servers
        law = cast(Any, input).service
        lgc = math.lgamma(n + 1.0) - math.lgamma(n - d + 1.0)
        return cls(int(code), n, buffer, d, lgc, float(cast(Any, input).arrival_rate), law,
                   law.coxian())

    @property
    def phases(self) -> int:
        """Phases of the service law (1 without a Coxian form)."""
        return 1 if self.cox is None else len(self.cox.rates)

    def phase_draws(self, gen: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Service draws for ``size`` service starts: phase durations and phase counts."""
        cox = self.cox
        if cox is None:
            dur = self.law.sample(gen, size).reshape(size, 1)
            return np.ascontiguousarray(dur), np.ones(size, dtype=np.int64)
        rates = np.asarray(cox.rates)
        m = rates.size
        dur = gen.standard_exponential((size, m)) / rates
        if m == 1:
            return dur, np.ones(size, dtype=np.int64)
        go = gen.random((size, m - 1)) < np.asarray(cox.probs)
        nph = 1 + np.cumprod(go, axis=1).sum(axis=1)
        return dur, nph.astype(np.int64)


def _kernel_args(plan: RunPlan) -> tuple[int, int, int, float, int]:
    """``(mode, warmup, steps, horizon, batches)`` of ``plan`` as the kernels take them."""
    if plan.steps is not None:
        return STEPS, plan.warmup, plan.steps, 0.0, plan.batches
    return TIME, plan.warmup, 0, float(cast(float, plan.time)), plan.batches


def _grown(a: np.ndarray, size: int, fill: int) -> np.ndarray:
    """``a`` (levels first) with ``size`` levels, the new ones ``fill``."""
    out = np.full((size, *a.shape[1:]), fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


class CountsState:
    """One replication of the ``"counts"`` engine: counts by queue length and phase."""

    def __init__(self, spec: QueueSpec, seed: np.random.SeedSequence) -> None:
        cox = cast(Coxian, spec.cox)
        self.mu = np.asarray(cox.rates, dtype=np.float64)
        m = self.mu.size
        self.p = np.zeros(m)
        self.p[: m - 1] = cox.probs
        top = spec.b if spec.b > 0 else 8
        self.Q = np.zeros((top + 1, m), dtype=np.int64)
        self.C = np.zeros(top + 1, dtype=np.int64)
        self.C[0] = spec.n
        self.B = np.zeros(m, dtype=np.int64)
        self.ist = np.zeros(8, dtype=np.int64)
        self.fst = np.zeros(3)
        self.gen = forward_generator(seed, 0)
        self.E = np.zeros(0)
        self.U = np.zeros((0, 4))

    def go(self, spec: QueueSpec, acc: np.ndarray, until: int, kp: tuple) -> int:
        """On to arrival ``until`` (not taken), or the time horizon: ``PAUSED`` or ``DONE``."""
        while True:
            if self.ist[I_OFF] >= self.E.shape[0]:
                self.E = self.gen.standard_exponential(CHUNK_EVENTS)
                self.U = self.gen.random((CHUNK_EVENTS, 4))
                self.ist[I_OFF] = 0
            status = counts_kernel(spec.code, spec.n, spec.b, spec.d, spec.lgc, spec.lam,
                                   self.mu, self.p, self.Q, self.C, self.B, self.ist, self.fst,
                                   self.E, self.U, acc, kp[0], kp[1], kp[2], kp[3], kp[4], until)
            if status == GROW:
                top = 2 * (self.C.size - 1)
                self.Q, self.C = _grown(self.Q, top + 1, 0), _grown(self.C, top + 1, 0)
            elif status != NEED_DRAWS:
                return int(status)

    def queue_lengths(self) -> np.ndarray:
        """The sorted queue lengths now."""
        return np.repeat(np.arange(self.C.size), self.C)


class QueuesState:
    """One replication of the ``"queues"`` engine: every server's queue and the event heap."""

    def __init__(self, spec: QueueSpec, seed: np.random.SeedSequence) -> None:
        n, m = spec.n, spec.phases
        top = spec.b if spec.b > 0 else 8
        self.qlen = np.zeros(n, dtype=np.int64)
        self.perm = np.arange(n, dtype=np.int64)
        self.pos = np.arange(n, dtype=np.int64)
        self.start = np.full(top + 2, n, dtype=np.int64)
        self.start[0] = 0
        self.C = np.zeros(top + 1, dtype=np.int64)
        self.C[0] = n
        self.heap = np.zeros(n, dtype=np.int64)
        self.key = np.full(n, np.inf)
        self.phase = np.zeros(n, dtype=np.int64)
        self.dur = np.zeros((n, m))
        self.nphs = np.ones(n, dtype=np.int64)
        self.bph = np.zeros(m, dtype=np.int64)
        self.ist = np.zeros(8, dtype=np.int64)
        self.fst = np.zeros(3)  # the first arrival is at time 0
        self.ga = forward_generator(seed, 0)
        self.gs = forward_generator(seed, 1)
        self.tau, self.UR = np.zeros(0), np.zeros((0, 2))
        self.D, self.NP = np.zeros((0, m)), np.zeros(0, dtype=np.int64)

    def go(self, spec: QueueSpec, acc: np.ndarray, until: int, kp: tuple) -> int:
        """On to arrival ``until`` (not taken), or the time horizon: ``PAUSED`` or ``DONE``."""
        while True:
            if self.ist[I_OFF] >= self.tau.shape[0]:
                self.tau = self.ga.standard_exponential(CHUNK_ARRIVALS) / spec.lam
                self.UR = self.ga.random((CHUNK_ARRIVALS, 2))
                self.ist[I_OFF] = 0
            if self.ist[I_SOFF] >= self.D.shape[0]:
                self.D, self.NP = spec.phase_draws(self.gs, CHUNK_ARRIVALS)
                self.ist[I_SOFF] = 0
            status = queues_kernel(spec.code, spec.n, spec.b, spec.d, spec.lgc, self.qlen,
                                   self.perm, self.pos, self.start, self.C, self.heap, self.key,
                                   self.phase, self.dur, self.nphs, self.bph, self.ist,
                                   self.fst, self.tau, self.UR, self.D, self.NP, acc, kp[0],
                                   kp[1], kp[2], kp[3], kp[4], until)
            if status == GROW:
                top = 2 * (self.C.size - 1)
                self.start = _grown(self.start[: self.C.size], top + 2, spec.n)
                self.C = _grown(self.C, top + 1, 0)
            elif status not in (NEED_DRAWS, NEED_SERVICES):
                return int(status)

    def queue_lengths(self) -> np.ndarray:
        """The sorted queue lengths now."""
        return np.sort(self.qlen)


@dataclass
class QueueRun:
    """The replications of a queue-length run, as the chunk loop calls them.

    Only in-kernel draws (:class:`recursions.engines._chunk_loop.KernelDraws`): each state draws its
    own blocks as its kernel asks for them, so the numbers do not depend on the chunks.
    """

    system: Any
    engine: str
    spec: QueueSpec
    plan: RunPlan
    states: list[Any]
    acc: np.ndarray = field(init=False)
    until: np.ndarray = field(init=False)
    finished: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        nrep = self.plan.replications
        self.acc = np.zeros((nrep, self.plan.batches, PH0 + self.spec.phases))
        self.until = np.zeros(nrep, dtype=np.int64)
        self.finished = np.zeros(nrep, dtype=bool)

    def block(self, sig: np.ndarray, tau: np.ndarray, U: np.ndarray, collect: bool,
              tables: Tables) -> None:
        """Not used: the queue-length kernels draw their own arrivals."""
        raise TypeError("the queue-length engines draw inside their kernels")

    def drawn(self, r: int, count: int, collect: bool, t0: int, tables: Tables) -> None:
        """Replication ``r`` through its next ``count`` arrivals (or to the time horizon)."""
        self.until[r] += count
        status = self.states[r].go(self.spec, self.acc[r], int(self.until[r]),
                                   _kernel_args(self.plan))
        self.finished[r] = status == DONE

    def replication_done(self, r: int, t0: int) -> bool:
        """Whether replication ``r`` has measured its steps or its time."""
        if self.plan.time is not None:
            return bool(self.finished[r])
        return t0 >= (self.plan.steps or 0)

    def all_done(self, done: int) -> bool:
        """Whether every replication has measured its steps or its time."""
        return all(self.replication_done(r, done) for r in range(self.plan.replications))

    def start_measuring(self) -> Tables:
        """The measured run begins: no profile tables (queues keep no workloads)."""
        return Tables(np.zeros(0), np.zeros((self.plan.replications, self.plan.batches, 0)))

    def check(self, where: str, collect: bool) -> None:
        """Nothing to look at (built-in kernels)."""

    def measured(self) -> list[int]:
        """Arrivals each replication measured."""
        return [int(s.ist[I_NARR]) - self.plan.warmup for s in self.states]

    def report(self, plan: RunPlan, acc: np.ndarray, tables: Tables) -> SimulationResult:
        """The result of the batch sums ``acc`` of ``plan``'s batches (no tables kept)."""
        final = np.stack([s.queue_lengths() for s in self.states]).astype(np.int64)
        return queue_result(self.system, plan, self.spec, self.engine, acc, final,
                            self.measured())

    def go_on(self, plan: RunPlan) -> None:
        """Take ``plan`` (more steps in more batches) for the arrivals that follow.

        The batch of the time since the last arrival is that arrival's batch in ``plan``.
        """
        old = self.plan
        self.acc = rebin(self.acc, old, plan)
        k = int(cast(int, old.steps)) - 1
        for s in self.states:
            s.ist[I_BATCH] = (k * plan.batches) // cast(int, plan.steps)
        self.plan = plan


def start_queue_run(system: Any, plan: RunPlan, engine: str) -> RunHandle:
    """Run ``plan`` on the queue-length ``engine``; the run can go on (steps only).

    Checks first what only these engines check: the count of arrivals a time horizon
    implies, memory, and a load below the servers with infinite buffers.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines._run_plan import make_plan
    >>> inp = rc.Poisson(1.0, rc.dists.Exponential(1.0))
    >>> system = rc.JSQ(3, buffer=2)
    >>> h = start_queue_run(system, make_plan(system, inp, 1000, batches=8), "counts")
    >>> h.extend(3000, 8)
    >>> import warnings
    >>> with warnings.catch_warnings():  # 8 batches: no interval is trusted, and it says so
    ...     warnings.simplefilter("ignore", rc.SimulationWarning)
    ...     res = h.result()
    >>> res.steps, 0.0 < res.p_wait.value < 0.5
    (3000, True)
    """
    spec = QueueSpec.of(system, plan.input)
    nrep, n, b = plan.replications, spec.n, spec.b
    if plan.time is not None and plan.time * spec.lam > MAX_COUNT:
        raise ValueError(f"time must be at most 2**53 mean interarrival times "
                         f"({MAX_COUNT / spec.lam:g}), got {plan.time!r}: no run can count "
                         "that many arrivals")
    require_memory(8.0 * nrep * (64.0 * plan.batches + 4.0 * n * (b + 2)),
                   f"simulating {type(system).__name__} with {n} servers, buffer {b}, "
                   f"replications={nrep} and batches={plan.batches}", "use fewer of them")
    if b == 0 and spec.lam * float(spec.law.mean) >= n:
        raise ValueError(
            f"with infinite buffers the offered load must be < servers = {n}, got "
            f"{spec.lam * float(spec.law.mean):.6g}: give a buffer"
        )
    kind = CountsState if engine == "counts" else QueuesState
    states = [kind(spec, sd) for sd in as_seed_sequence(plan.rng).spawn(nrep)]
    run = QueueRun(system, engine, spec, plan, states)
    draws = KernelDraws()
    return RunHandle(run, draws, run_chunks(run, plan, draws))


def _columns(acc: np.ndarray, servers: int) -> dict[str, np.ndarray]:
    """The accumulator's columns by the names :mod:`recursions.results._statistics` reads."""
    return {"arrivals": acc[..., ARR], "waited": acc[..., WAITED],
            "blocked": acc[..., BLOCKED], "all_busy": acc[..., ALLBUSY],
            "jobs_time": acc[..., JOBS_T], "busy_time": acc[..., BUSY_T],
            "server_time": acc[..., TIME_C] * servers}


def queue_result(system: Any, plan: RunPlan, spec: QueueSpec, engine: str, fine: np.ndarray,
                 final: np.ndarray, measured: list[int]) -> SimulationResult:
    """The result of the batch sums ``fine`` (replications, batches, columns) of a run."""
    acc = merge_batches(fine, plan.merge)  # the estimates' batches (the intervals use fine)
    check = batch_check(acc[..., JOBS_T], acc[..., TIME_C], quantity="number of jobs",
                        arrivals=acc[..., ARR])
    arr = acc[..., ARR]
    span = acc[..., TIME_C] * spec.n
    # a fixed budget too short for the number of servers says so (no relaxation time here)
    short = short_for(system, plan.input, float(arr.sum()) / plan.replications, "empty",
                      plan.time is not None) if plan.default else None
    phase_busy = None
    if spec.cox is not None:
        ests = [ratio_estimate(acc[..., PH0 + k], span) for k in range(spec.phases)]
        phase_busy = Estimate(np.array([e.value for e in ests]), np.array([e.se for e in ests]))
    names = queue_length_estimates(spec.b or None)  # a buffer-less JIQ's too
    sums = sums_of(names, _columns(fine, spec.n), "queues")
    est = {k: ratio_estimate(*v)
           for k, v in sums_of(names, _columns(acc, spec.n), "queues").items()}
    reported = list(sums)
    no_clt = clt_failures(plan.input, reported, system.own_laws)
    # every statistic of the registry: None where these engines have none
    estimates: dict[str, Any] = {name: est.get(name) for name in REGISTRY}
    result = SimulationResult(
        system=repr(system),
        input=repr(plan.input),
        steps=plan.steps if plan.steps is not None else round(float(np.mean(measured))),
        warmup=plan.warmup,
        replications=fine.shape[0],
        **estimates,
        grid=np.zeros(0),
        final_state=final,
        path=None,
        phase_busy=phase_busy,
        sup_error=None,
        engine=engine,
        batch_check=check,
        _sums=sums,
        _no_clt=no_clt,
        _short=short,
        _prof=np.zeros(0),
        _den=np.zeros(0),
    )
    warn_fixed_budget(repr(system), check, result if plan.modes is None else None)
    warn_no_clt(repr(system), no_clt, reported)
    return result
