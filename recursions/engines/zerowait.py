"""The queue-length engines: exact simulation of the zero-waiting policies.

The theory (Liu, Gong and Ying 2022): :ref:`Theory › Zero waiting <theory-zero-wait>`. The
policies (:class:`JSQ`, :class:`I1F`, :class:`PowerOfD`, and :class:`recursions.JIQ` with or
without a buffer) are systems of :mod:`recursions.model._queue_policies`, imported here too so that
``recursions.engines.zerowait.JSQ`` keeps working: ``N`` FIFO servers, each holding at most ``b``
jobs (an arrival routed to a full server is blocked and lost), Poisson arrivals of rate
``lambda N``, routing by queue lengths only.

:func:`simulate_queues` (and :func:`recursions.simulate`, through the engines registered
here) runs them with one of two exact engines, whose compiled kernels are in
:mod:`recursions.engines._queue_kernels`:

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
from typing import Any

from recursions.common._checks import check_count, check_int
from recursions.engines._chunk_loop import RunHandle
from recursions.engines._queue_runs import start_queue_run
from recursions.engines._registry import ENGINES, MAX_CALL, refusal, register, unhonoured
from recursions.engines._run_plan import make_plan
from recursions.model._inputs import Input, check_input
from recursions.model._queue_policies import (
    I1F,
    JSQ,
    PowerOfD,
    QueuePolicy,
    poisson_refusal,
    queue_length_estimates,
    sub_halfin_whitt_rate,
)
from recursions.model._system import System, map_refusal
from recursions.results._simulation_result import SimulationResult

__all__ = [
    "I1F",
    "JSQ",
    "PowerOfD",
    "QueueLengthEngine",
    "QueuePolicy",
    "simulate_queues",
    "sub_halfin_whitt_rate",
]

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
        or four, 32 from five on (at most ``steps``;
        :func:`recursions.engines._run_plan.default_batches`),
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
        correlated (:func:`recursions.inference.diagnostics.batch_check`, kept as
        ``result.batch_check``): the run is too short or needs more warm-up. With the default
        batches, also when the interval of ``p_wait`` or ``mean_wait`` cannot be trusted (0
        effective batches: :attr:`~recursions.SimulationResult.effective_batches`).

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines.zerowait import JSQ, simulate_queues
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
    horizon = None
    if steps is not None:
        steps = check_count(steps, "steps")
    else:
        try:
            horizon = float(time)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise TypeError(f"time must be a real number, got {type(time).__name__}") from None
        if not math.isfinite(horizon) or horizon <= 0:
            raise ValueError(f"time must be a finite number > 0, got {time!r}")
    warm = check_count(warmup, "warmup", 0)
    nrep = check_int(replications, "replications", 1)
    if batches is not None:
        nb = check_int(batches, "batches", 1)
        if steps is not None and nb > steps:
            raise ValueError(f"batches must be <= steps, got batches={nb}, steps={steps}")
    if not isinstance(engine, str) or engine not in ("auto", "queues", "counts"):
        raise ValueError(f"engine must be 'auto', 'queues' or 'counts', got {engine!r}")
    plan = make_plan(system, input, steps, time=horizon, warmup=warm, replications=nrep,
                     batches=batches, engine=engine, rng=rng, max_call=MAX_CALL)
    # not engines.choose: JIQ with infinite buffers runs here too, though it declares the
    # workload engines (it is a map on workload vectors as well)
    if engine == "auto":
        engine = "counts" if input.service.coxian() is not None else "queues"  # type: ignore
    why = refusal(ENGINES[engine], system, plan)
    if why is not None:
        raise ValueError(why)
    return ENGINES[engine].run(system, plan)


# ------------------------------------------------------------------------------------------
# the engines of rc.simulate
# ------------------------------------------------------------------------------------------
class QueueLengthEngine:
    """An engine of :func:`recursions.simulate` for queue-length systems.

    It registers in :mod:`recursions.engines._registry` under its name.

    ``"queues"`` keeps the queue length of every server (any service law); ``"counts"`` the
    aggregated counts of servers by length and phase (Coxian, exponential or Erlang service),
    preferred by ``engine="auto"`` where it runs. Both take ``steps`` or ``time``, ``warmup``,
    ``replications``, ``rng``, ``batches``, ``progress`` and ``chunk`` (arrivals per update
    of the bar, and per kernel call on a time horizon); they keep counts of
    jobs, not workload vectors, so they refuse every other option of
    :func:`recursions.simulate`. They run on the chunk loop of the workload engines
    (:mod:`recursions.engines._queue_runs`), and a run of steps can go on (:meth:`start`), so the
    precision mode's stages do not retrace.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.simulate(rc.JSQ(3, buffer=2), rc.Poisson(2.0, rc.dists.LogNormal(1.0, 0.5)),
    ...             1000, rng=1).engine
    'queues'
    """

    family = "queue-length"
    keywords: frozenset[str] = frozenset({"progress", "chunk"})
    continues = True  # a run of steps can go on (recursions.engines._registry)

    def __init__(self, name: str) -> None:
        self.name = name

    def estimates(self, system: Any) -> tuple[str, ...]:
        """What a run reports: the statistics of queue lengths (``p_block`` with a buffer)."""
        return queue_length_estimates(getattr(system, "buffer", None) or None)

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
        if law.coxian() is None:
            return ("engine='counts' needs Coxian, Exponential or Erlang service (the chain "
                    f"tracks phases); got {law!r}: use engine='queues'")
        return None

    def preferred(self, system: Any, plan: Any) -> bool:
        """``"counts"`` (where it runs: its cost per event does not grow with ``N``)."""
        return self.name == "counts"

    def run(self, system: Any, plan: Any) -> SimulationResult:
        """:func:`simulate_queues` on this engine, from the plan ``simulate`` validated."""
        return self.start(system, plan).result()

    def start(self, system: Any, plan: Any) -> RunHandle:
        """Run ``plan`` on this engine; a run of steps can go on (:class:`RunHandle`)."""
        return start_queue_run(system, plan, self.name)


QUEUES = register(QueueLengthEngine("queues"))
COUNTS = register(QueueLengthEngine("counts"))
