"""The queue-length engines: exact simulation of the zero-waiting policies.

The theory (Liu, Gong and Ying 2022): :ref:`Theory › Zero waiting <theory-zero-wait>`. The
policies (:class:`JSQ`, :class:`I1F`, :class:`PowerOfD`, and :class:`recursions.JIQ` with or
without a buffer) are systems of :mod:`recursions.queue_policies`, imported here too so that
``recursions.zerowait.JSQ`` keeps working: ``N`` FIFO servers, each holding at most ``b``
jobs (an arrival routed to a full server is blocked and lost), Poisson arrivals of rate
``lambda N``, routing by queue lengths only.

:func:`simulate_queues` (and :func:`recursions.simulate`, through the engines registered
here) runs them with one of two exact engines, whose compiled kernels are in
:mod:`recursions.queue_kernels`:

* ``"queues"`` -- a per-server event simulation valid for *any* service law: a binary min-heap
  of the busy servers' next event times, and servers kept in a permutation sorted by queue length
  (one contiguous bucket per length, O(1) moves), so a uniform server of a given length is found
  in O(1) and the policies cost O(1) (JSQ, JIQ, I1F) or O(levels) (PowerOfD) per arrival;
* ``"counts"`` -- for Coxian service, Gillespie's method on the aggregated chain of counts
  ``Q[j, m]`` (servers with ``j`` jobs whose job in service is in phase ``m``; ``Q[0]`` idle),
  which is exact for these exchangeable policies and costs O(M + b) per event whatever ``N``
  (the paper's simulation method, :ref:`theory-zero-wait-counts`).

With :func:`sub_halfin_whitt_rate` (``lambda = 1 - N^{-alpha}``) this reproduces the paper's
zero-waiting experiments. All randomness is drawn outside the kernels in blocks.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ._memory import require_memory
from ._rng import as_seed_sequence, forward_generator
from ._validate import MAX_COUNT, check_count, check_int
from .diagnostics import batch_check
from .dists import Coxian, Law
from .engines import register, unhonoured
from .estimate import Estimate, ratio_estimate
from .inputs import Input, check_input
from .output_analysis import clt_failures, merge_batches
from .plan import default_batches
from .queue_kernels import counts_kernel, queues_kernel
from .queue_policies import I1F, JSQ, PowerOfD, QueuePolicy, poisson_refusal, sub_halfin_whitt_rate
from .result import SimulationResult, warn_fixed_budget
from .systems import System, map_refusal

__all__ = [
    "I1F",
    "JSQ",
    "PowerOfD",
    "QueueLengthEngine",
    "QueuePolicy",
    "simulate_queues",
    "sub_halfin_whitt_rate",
]

# measurement modes
_STEPS, _TIME = 0, 1
# kernel return codes
_NEED_DRAWS, _DONE, _GROW = 0, 1, 2
_NEED_ARRIVALS, _NEED_SERVICES = 0, 3
# columns of the per-batch accumulator; phase time integrals follow from column _PH0 on
_ARR, _WAITED, _BLOCKED, _ALLBUSY, _TIME_C, _BUSY_T, _JOBS_T, _PH0 = range(8)
# integer / float state slots shared by both kernels
_I_OFF, _I_SOFF, _I_NARR, _I_JOBS, _I_MEAS, _I_BATCH, _I_HSIZE = range(7)
_F_T, _F_T0, _F_TNEXT = range(3)

_CHUNK_EVENTS = 1 << 16
_CHUNK_ARRIVALS = 1 << 14


# ------------------------------------------------------------------------------------------
# drivers
# ------------------------------------------------------------------------------------------
def _as_coxian(law: Law) -> Coxian | None:
    """The Coxian form of a phase-type service law (:meth:`Law.coxian`), or ``None``."""
    return law.coxian()


@dataclass(frozen=True)
class _Plan:
    code: int
    n: int
    b: int  # 0: infinite
    d: int
    lgc: float
    lam: float
    law: Law
    cox: Coxian | None
    mode: int
    warm: int
    steps: int
    horizon: float
    nb: int
    merge: int = 1  # batches merged into each batch of the estimates (default batches)
    default: bool = False  # whether nb is the default (untrusted intervals then warn)


def _phase_draws(plan: _Plan, gen: np.random.Generator, size: int):
    """Service draws for ``size`` service starts: phase durations and phase counts."""
    cox = plan.cox
    if cox is None:
        dur = plan.law.sample(gen, size).reshape(size, 1)
        return np.ascontiguousarray(dur), np.ones(size, dtype=np.int64)
    rates = np.asarray(cox.rates)
    m = rates.size
    dur = gen.standard_exponential((size, m)) / rates
    if m == 1:
        return dur, np.ones(size, dtype=np.int64)
    go = gen.random((size, m - 1)) < np.asarray(cox.probs)
    nph = 1 + np.cumprod(go, axis=1).sum(axis=1)
    return dur, nph.astype(np.int64)


def _run_counts(plan: _Plan, seed: np.random.SeedSequence):
    cox = plan.cox
    assert cox is not None
    mu = np.asarray(cox.rates, dtype=np.float64)
    m = mu.size
    p = np.zeros(m)
    p[: m - 1] = cox.probs
    top = plan.b if plan.b > 0 else 8
    Q = np.zeros((top + 1, m), dtype=np.int64)
    C = np.zeros(top + 1, dtype=np.int64)
    C[0] = plan.n
    B = np.zeros(m, dtype=np.int64)
    ist = np.zeros(7, dtype=np.int64)
    fst = np.zeros(3)
    acc = np.zeros((plan.nb, _PH0 + m))
    gen = forward_generator(seed, 0)
    while True:
        E = gen.standard_exponential(_CHUNK_EVENTS)
        U = gen.random((_CHUNK_EVENTS, 4))
        ist[_I_OFF] = 0
        while True:
            status = counts_kernel(plan.code, plan.n, plan.b, plan.d, plan.lgc, plan.lam, mu,
                                    p, Q, C, B, ist, fst, E, U, acc, plan.mode, plan.warm,
                                    plan.steps, plan.horizon, plan.nb)
            if status != _GROW:
                break
            top = 2 * top
            Q2 = np.zeros((top + 1, m), dtype=np.int64)
            Q2[: Q.shape[0]] = Q
            C2 = np.zeros(top + 1, dtype=np.int64)
            C2[: C.size] = C
            Q, C = Q2, C2
        if status == _DONE:
            break
    measured = int(ist[_I_NARR]) - plan.warm
    return acc, np.repeat(np.arange(C.size), C), measured


def _run_queues(plan: _Plan, seed: np.random.SeedSequence):
    n = plan.n
    m = len(plan.cox.rates) if plan.cox is not None else 1
    top = plan.b if plan.b > 0 else 8
    qlen = np.zeros(n, dtype=np.int64)
    perm = np.arange(n, dtype=np.int64)
    pos = np.arange(n, dtype=np.int64)
    start = np.full(top + 2, n, dtype=np.int64)
    start[0] = 0
    C = np.zeros(top + 1, dtype=np.int64)
    C[0] = n
    heap = np.zeros(n, dtype=np.int64)
    key = np.full(n, np.inf)
    phase = np.zeros(n, dtype=np.int64)
    dur = np.zeros((n, m))
    nphs = np.ones(n, dtype=np.int64)
    bph = np.zeros(m, dtype=np.int64)
    ist = np.zeros(7, dtype=np.int64)
    fst = np.zeros(3)  # the first arrival is at time 0
    acc = np.zeros((plan.nb, _PH0 + m))
    ga = forward_generator(seed, 0)
    gs = forward_generator(seed, 1)

    def arrivals():
        return ga.standard_exponential(_CHUNK_ARRIVALS) / plan.lam, ga.random((_CHUNK_ARRIVALS, 2))

    tau, UR = arrivals()
    D, NP = _phase_draws(plan, gs, _CHUNK_ARRIVALS)
    while True:
        status = queues_kernel(plan.code, n, plan.b, plan.d, plan.lgc, qlen, perm, pos, start,
                                C, heap, key, phase, dur, nphs, bph, ist, fst, tau, UR, D, NP,
                                acc, plan.mode, plan.warm, plan.steps, plan.horizon, plan.nb)
        if status == _DONE:
            break
        if status == _NEED_ARRIVALS:
            tau, UR = arrivals()
            ist[_I_OFF] = 0
        elif status == _NEED_SERVICES:
            D, NP = _phase_draws(plan, gs, _CHUNK_ARRIVALS)
            ist[_I_SOFF] = 0
        else:  # _GROW: more queue-length levels
            top = 2 * top
            start2 = np.full(top + 2, n, dtype=np.int64)
            start2[: C.size] = start[: C.size]
            C2 = np.zeros(top + 1, dtype=np.int64)
            C2[: C.size] = C
            start, C = start2, C2
    measured = int(ist[_I_NARR]) - plan.warm
    return acc, np.sort(qlen), measured


def _policy(system: Any) -> tuple[int, int, int, int]:
    """``(code, servers, buffer or 0, d)`` of a queue-length system, else ``TypeError``.

    A system runs here when it declares :attr:`recursions.System.queue_policy`.
    """
    policy = system.queue_policy if isinstance(system, System) else None
    if policy is None:
        raise TypeError(
            "system must be a queue-length system (JSQ, I1F, PowerOfD or recursions.JIQ), "
            f"got {type(system).__name__}")
    code, buffer, d = policy
    return int(code), system.servers, buffer, d


def simulate_queues(
    system: System,
    input: Input,
    steps: int | None = None,
    *,
    time: float | None = None,
    warmup: int = 0,
    replications: int = 1,
    rng: Any = None,
    engine: str = "auto",
    batches: int | None = None,
) -> SimulationResult:
    """Simulate a queue-length policy with FIFO servers and (optionally) finite buffers.

    Every replication starts empty, discards ``warmup`` arrivals, then measures either ``steps``
    arrivals or ``time`` units of time, split into ``batches`` batches (by arrivals or by time);
    standard errors are batch means over all batches of all replications. Replications have
    their own streams (``SeedSequence(rng).spawn``) and run in parallel threads; the numbers do
    not depend on the thread count.

    Parameters
    ----------
    system : JSQ, I1F, PowerOfD or recursions.JIQ
        The policy (``JIQ.buffer`` may be ``None``: infinite buffers).
    input : recursions.Poisson
        Poisson arrivals (any :class:`recursions.Renewal` with exponential interarrival times)
        of total rate ``N lambda``, with the service law.
    steps : int, optional
        Measured arrivals per replication (``> 0``). Exactly one of ``steps`` and ``time``.
    time : float, optional
        Measured time per replication (``> 0``).
    warmup : int, default 0
        Arrivals discarded before measuring.
    replications : int, default 1
        Independent replications.
    rng : int, numpy.random.Generator, SeedSequence or None
        Seed.
    engine : {"auto", "queues", "counts"}
        ``"queues"``: per-server events, any service law. ``"counts"``: the aggregated chain
        on counts ``Q[j, m]`` (Coxian, exponential or Erlang service only; cost per event
        independent of ``N``). ``"auto"``: counts for those laws, else queues.
    batches : int, optional
        Batches per replication. Default: 256 for one replication, 128 for two, 64 for three
        or four, 32 from five on (at most ``steps``; :func:`recursions.plan.default_batches`),
        merged into 32 for the estimates and standard errors, which are then exactly those
        of ``batches=32`` (up to the rounding of sums of times); the intervals
        (:meth:`~recursions.SimulationResult.interval`) use them all.

    Returns
    -------
    SimulationResult
        ``p_wait`` (arrivals that join a busy server or are blocked), ``p_block`` (``None``
        with infinite buffers), ``p_all_busy`` (arrivals that find no idle server),
        ``busy_fraction`` (time average of ``S_1``), ``mean_jobs`` (time average of
        ``sum_i S_i``, jobs per server), ``phase_busy`` (time average of ``S_{1,m}`` for
        phase-type service, arrays over phases), ``mean_wait`` (by Little's law: mean number
        waiting over the accepted arrival rate), ``engine``; ``final_state`` holds the sorted
        queue lengths of each replication at the end; with ``time``, ``steps`` is the mean
        number of measured arrivals. Workload fields are ``None`` and ``grid`` is empty.

    Raises
    ------
    TypeError
        For a system, input or argument of the wrong type.
    ValueError
        For a non-Poisson input, both or neither of ``steps``/``time``, a bad ``engine``, the
        counts engine with a non-phase-type law, or infinite buffers at load ``>= 1``.

    Warns
    -----
    recursions.SimulationWarning
        When the batch means of the number of jobs trend across the run or are strongly
        correlated (:func:`recursions.diagnostics.batch_check`, kept as
        ``result.batch_check``): the run is too short or needs more warm-up. With the default
        batches, also when the interval of ``p_wait`` or ``mean_wait`` cannot be trusted (0
        effective batches: :attr:`~recursions.SimulationResult.effective_batches`).

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.zerowait import JSQ, simulate_queues
    >>> law = rc.dists.Coxian.normalised([1.0, 1.0], [0.5])
    >>> res = simulate_queues(JSQ(10, buffer=2), rc.Poisson(8.0, law), steps=20_000, rng=1)
    >>> res.engine, 0.0 < res.p_wait.value < 0.5, round(float(res.phase_busy.value.sum()), 1)
    ('counts', True, 0.8)
    """
    _policy(system)  # refuses what is not a queue-length policy
    check_input(input)
    why = poisson_refusal(system, input)
    if why is not None:
        raise ValueError(why)
    if (steps is None) == (time is None):
        raise ValueError("give exactly one of steps (measured arrivals) and time (measured time)")
    if steps is not None:
        mode, steps_i, horizon = _STEPS, check_count(steps, "steps"), 0.0
    else:
        try:
            horizon = float(time)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise TypeError(f"time must be a real number, got {type(time).__name__}") from None
        if not math.isfinite(horizon) or horizon <= 0:
            raise ValueError(f"time must be a finite number > 0, got {time!r}")
        mode, steps_i = _TIME, 0
    warm = check_count(warmup, "warmup", 0)
    nrep = check_int(replications, "replications", 1)
    if batches is None:
        nb, merge = default_batches(steps_i if mode == _STEPS else None, nrep)
    else:
        nb, merge = check_int(batches, "batches", 1), 1
    if mode == _STEPS and nb > steps_i:
        raise ValueError(f"batches must be <= steps, got batches={nb}, steps={steps_i}")
    if not isinstance(engine, str) or engine not in ("auto", "queues", "counts"):
        raise ValueError(f"engine must be 'auto', 'queues' or 'counts', got {engine!r}")
    return _run(system, input, engine, mode, steps_i, horizon, warm, nrep, nb, merge,
                batches is None, rng)


def _run(system: Any, input: Input, engine: str, mode: int, steps_i: int, horizon: float,
         warm: int, nrep: int, nb: int, merge: int, default: bool,
         rng: Any) -> SimulationResult:
    """Run validated arguments (:func:`simulate_queues`'s, or a :class:`RunPlan`'s).

    What only the queue-length engines check is checked here: the service law of
    ``engine="counts"``, the horizon's count of arrivals, memory, and a load below the
    servers with infinite buffers.
    """
    code, n, b, d = _policy(system)
    law = cast(Any, input).service  # a Poisson input (checked above) has a service law
    cox = _as_coxian(law)
    if engine == "auto":
        engine = "counts" if cox is not None else "queues"
    if engine == "counts" and cox is None:
        raise ValueError(
            "engine='counts' needs Coxian, Exponential or Erlang service (the chain tracks "
            f"phases); got {law!r}: use engine='queues'"
        )
    lam = float(cast(Any, input).arrival_rate)
    if mode == _TIME and horizon * lam > MAX_COUNT:
        raise ValueError(f"time must be at most 2**53 mean interarrival times "
                         f"({MAX_COUNT / lam:g}), got {horizon!r}: no run can count that many "
                         "arrivals")
    require_memory(8.0 * nrep * (64.0 * nb + 4.0 * n * (b + 2)),
                   f"simulating {type(system).__name__} with {n} servers, buffer {b}, "
                   f"replications={nrep} and batches={nb}", "use fewer of them")
    if b == 0 and lam * float(law.mean) >= n:
        raise ValueError(
            f"with infinite buffers the offered load must be < servers = {n}, got "
            f"{lam * float(law.mean):.6g}: give a buffer"
        )
    lgc = math.lgamma(n + 1.0) - math.lgamma(n - d + 1.0)
    plan = _Plan(code, n, b, d, lgc, lam, law, cox, mode, warm, steps_i, horizon, nb, merge,
                 default)
    seeds = as_seed_sequence(rng).spawn(nrep)
    run = _run_counts if engine == "counts" else _run_queues
    workers = max(1, min(nrep, os.cpu_count() or 1))
    if workers == 1:
        outs = [run(plan, sd) for sd in seeds]
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outs = list(pool.map(lambda sd: run(plan, sd), seeds))
    return _queue_result(system, input, plan, engine, outs)


def _queue_result(system: Any, input: Input, plan: _Plan, engine: str,
                  outs: list[Any]) -> SimulationResult:
    """The result of the replications' ``(acc, sorted queue lengths, measured arrivals)``."""
    fine = np.stack([o[0] for o in outs])  # (replications, batches, columns)
    acc = merge_batches(fine, plan.merge)  # the estimates' batches (the intervals use fine)
    final = np.stack([o[1] for o in outs]).astype(np.int64)
    measured = [o[2] for o in outs]
    check = batch_check(acc[..., _JOBS_T], acc[..., _TIME_C], quantity="number of jobs")

    arr = acc[..., _ARR]
    span = acc[..., _TIME_C] * plan.n
    b, cox = plan.b, plan.cox

    def per_server(col: np.ndarray) -> Estimate:
        return ratio_estimate(col, span)

    phase_busy = None
    if cox is not None:
        ests = [per_server(acc[..., _PH0 + k]) for k in range(len(cox.rates))]
        phase_busy = Estimate(np.array([e.value for e in ests]), np.array([e.se for e in ests]))
    waiting = acc[..., _JOBS_T] - acc[..., _BUSY_T]
    fwait, farr = fine[..., _JOBS_T] - fine[..., _BUSY_T], fine[..., _ARR]
    fspan = fine[..., _TIME_C] * plan.n
    result = SimulationResult(
        system=repr(system),
        input=repr(input),
        steps=plan.steps if plan.mode == _STEPS else round(float(np.mean(measured))),
        warmup=plan.warm,
        replications=len(outs),
        p_wait=ratio_estimate(acc[..., _WAITED], arr),
        mean_wait=ratio_estimate(waiting, arr - acc[..., _BLOCKED]),
        mean_workload=None,
        busy_fraction=per_server(acc[..., _BUSY_T]),
        p_loss=None,
        p_block=ratio_estimate(acc[..., _BLOCKED], arr) if b > 0 else None,
        overflow_work=None,
        grid=np.zeros(0),
        final_state=final,
        path=None,
        p_all_busy=ratio_estimate(acc[..., _ALLBUSY], arr),
        mean_jobs=per_server(acc[..., _JOBS_T]),
        phase_busy=phase_busy,
        sup_error=None,
        engine=engine,
        batch_check=check,
        _sums={"p_wait": (fine[..., _WAITED], farr),
               "mean_wait": (fwait, farr - fine[..., _BLOCKED]),
               "busy_fraction": (fine[..., _BUSY_T], fspan),
               "p_all_busy": (fine[..., _ALLBUSY], farr),
               "mean_jobs": (fine[..., _JOBS_T], fspan),
               **({"p_block": (fine[..., _BLOCKED], farr)} if b > 0 else {})},
        _no_clt=clt_failures(input, ["p_wait", "mean_wait", "busy_fraction", "p_all_busy",
                                     "mean_jobs", "p_block"]),
        _prof=np.zeros(0),
        _den=np.zeros(0),
    )
    warn_fixed_budget(repr(system), check, result if plan.default else None)
    return result


# ------------------------------------------------------------------------------------------
# the engines of rc.simulate
# ------------------------------------------------------------------------------------------
class QueueLengthEngine:
    """An engine of :func:`recursions.simulate` for queue-length systems.

    It registers in :mod:`recursions.engines` under its name.

    ``"queues"`` keeps the queue length of every server (any service law); ``"counts"`` the
    aggregated counts of servers by length and phase (Coxian, exponential or Erlang service),
    preferred by ``engine="auto"`` where it runs. Both take ``steps`` or ``time``, ``warmup``,
    ``replications``, ``rng`` and ``batches``; they keep counts of jobs, not workload vectors,
    so they refuse every other option of :func:`recursions.simulate`.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.simulate(rc.JSQ(3, buffer=2), rc.Poisson(2.0, rc.dists.LogNormal(1.0, 0.5)),
    ...             1000, rng=1).engine
    'queues'
    """

    family = "queue-length"
    keywords: frozenset[str] = frozenset()
    continues = False  # a run cannot go on from where it stopped (recursions.engines)

    def __init__(self, name: str) -> None:
        self.name = name

    def refuses(self, system: Any, plan: Any) -> str | None:
        """Why not: options about workload vectors, arrivals not Poisson, or phases missing.

        ``"counts"`` also refuses a service law without phases (no Coxian form).
        """
        if "start" in plan.given:  # the one option that asks for a workload vector
            return map_refusal(system, "a start state (a vector of workloads)",
                               "leave start= out")
        bad = unhonoured(self, plan)
        if bad:
            return (f"{type(system).__name__} runs on the queue-length engines, which do not "
                    f"take {', '.join(f'{k}=' for k in bad)} (they keep counts of jobs per "
                    "server, not workload vectors): leave them out")
        why = poisson_refusal(system, plan.input)
        if why is not None or self.name != "counts":
            return why
        law = plan.input.service
        if _as_coxian(law) is None:
            return ("engine='counts' needs Coxian, Exponential or Erlang service (the chain "
                    f"tracks phases); got {law!r}: use engine='queues'")
        return None

    def preferred(self, system: Any, plan: Any) -> bool:
        """``"counts"`` (where it runs: its cost per event does not grow with ``N``)."""
        return self.name == "counts"

    def run(self, system: Any, plan: Any) -> SimulationResult:
        """:func:`simulate_queues` on this engine, from the plan ``simulate`` validated."""
        by_steps = plan.steps is not None
        return _run(system, plan.input, self.name, _STEPS if by_steps else _TIME,
                    int(plan.steps or 0), 0.0 if by_steps else float(plan.time),
                    plan.warmup, plan.replications, plan.batches, plan.merge, plan.default,
                    plan.rng)


QUEUES = register(QueueLengthEngine("queues"))
COUNTS = register(QueueLengthEngine("counts"))
