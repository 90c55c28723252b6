"""The phases engine: a run under arrivals that follow a clock, its statistics by phase.

An input whose rate follows a periodic clock (:class:`~recursions.TimeVarying`, which
declares its ``cycle``) makes the statistics depend on the time of day. This engine runs such
an input through the system's own map, customer by customer (the dense map's
``run_found``, which also reports the state each arrival saw; or the heap engine's
:func:`~recursions.engines._heap.heap_replay` for large systems, which keeps only what
customers find), and adds up, besides the usual batch sums of
:mod:`recursions.results._statistics`, the same sums by phase of the clock:
:data:`PHASE_BINS` bins of the period, in each batch of each replication.
``SimulationResult.by_phase(bins)`` merges them into ``bins`` bins (a divisor of
:data:`PHASE_BINS`) and gives each statistic's value and batch-means standard error there.

``engine="auto"`` prefers it for such an input; it takes ``steps``, ``warmup``,
``replications``, ``batches``, ``rng``, ``chunk``, ``statistics``, and the modes
(``precision=`` retraces its stages).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from recursions.common._memory import require_memory
from recursions.common._pool import progress_bar
from recursions.common._rng import as_seed_sequence, child, forward_generator
from recursions.engines import _heap as hp
from recursions.engines._registry import register
from recursions.engines._run_plan import RunPlan
from recursions.engines._trace_replay import DenseReplay, HeapReplay, replay_refusal
from recursions.engines._workload_engines import HEAP_MIN_SERVERS
from recursions.inference import diagnostics as dg
from recursions.inference._batch_means import merge_batches
from recursions.inference._estimate import ratio_estimate
from recursions.inference._moment_conditions import clt_failures
from recursions.results._simulation_result import SimulationResult, warn_fixed_budget, warn_no_clt
from recursions.results._statistics import REGISTRY, sums_of

__all__ = ["COLUMNS", "PHASE_BINS", "PhaseEngine", "PhaseSums", "named"]

PHASE_BINS = 288
"""Bins of the period the sums are kept in (five minutes of a day), in every batch of the
run: ``by_phase(bins)`` takes a divisor of it (24, 48, 96, 144, ...)."""

COLUMNS = ("arrivals", "joined", "waited", "wait_sum", "served_work", "lost", "lost_work",
           "busy", "all_busy", "work")
"""The sums kept per batch (and per phase bin), by the names the statistics read."""

STATE = ("busy", "all_busy", "work")
"""The columns about the state an arrival saw: kept by the dense map only."""


@dataclass(frozen=True)
class PhaseSums:
    """The sums of a run by phase: shape ``(replications, batches, PHASE_BINS, columns)``.

    Attributes
    ----------
    cycle : float
        The period of the clock.
    sums : numpy.ndarray
        The sums, by :data:`COLUMNS`, in the run's batches (those of its intervals).
    servers : int
    names : tuple of str
        The statistics they estimate.
    """

    cycle: float
    sums: np.ndarray
    servers: int
    names: tuple[str, ...]

    def columns(self, bins: int) -> dict[str, np.ndarray]:
        """The sums in ``bins`` bins of the period: ``(replications, batches, bins)`` each."""
        R, B, F, C = self.sums.shape
        return named(self.sums.reshape(R, B, bins, F // bins, C).sum(axis=3), self.servers)


def named(acc: np.ndarray, servers: int) -> dict[str, np.ndarray]:
    """The sums ``acc`` (last axis: :data:`COLUMNS`) by the names the statistics read."""
    cols = {c: acc[..., i] for i, c in enumerate(COLUMNS)}
    cols["seen"] = cols["arrivals"]  # every arrival sees the state: no snapshots here
    cols["server_seen"] = cols["arrivals"] * servers
    return cols


class PhaseEngine:
    """The engine of :mod:`recursions.engines._phase_runs` (registered as ``"phases"``)."""

    name = "phases"
    family = "workload"
    keywords = frozenset({"progress", "chunk", "statistics"})
    continues = False

    def refuses(self, system: Any, plan: RunPlan) -> str | None:
        """Why not: an input with no clock, a time horizon, a system it cannot run."""
        if getattr(plan.input, "cycle", None) is None:
            return ("the phases engine runs inputs whose rate follows a periodic clock "
                    "(rc.TimeVarying)")
        if plan.time is not None:
            return "the phases engine counts arrivals: give steps, not time="
        return replay_refusal(system)

    def preferred(self, system: Any, plan: RunPlan) -> bool:
        """For an input with a clock (the other engines keep no statistic by phase)."""
        return self.claims(plan)

    def claims(self, plan: RunPlan) -> bool:
        """Whether ``engine="auto"`` considers it for ``plan``, though no system declares it.

        For an input with a clock (:class:`~recursions.TimeVarying`).
        """
        return getattr(plan.input, "cycle", None) is not None

    def estimates(self, system: Any) -> tuple[str, ...]:
        """The system's statistics that these sums give (on the heap, none of the state)."""
        cols = set(COLUMNS) - (set(STATE) if _on_heap(system) else set())
        cols |= {"seen", "server_seen"} if not _on_heap(system) else {"seen"}
        probe = {c: 1.0 for c in cols}
        out = []
        for name in system.estimates:
            try:
                REGISTRY[name].on_workloads(probe)
            except (KeyError, ValueError):
                continue
            out.append(name)
        return tuple(out)

    def run(self, system: Any, plan: RunPlan) -> SimulationResult:
        """Run ``plan`` on ``system``; the result has :meth:`SimulationResult.by_phase`.

        It warns as the workload engines do: a load of 1 or more, batch means that cannot
        be trusted, a mean with no standard error.
        """
        assert plan.steps is not None
        R, B, C = plan.replications, plan.batches, len(COLUMNS)
        require_memory(8.0 * R * B * PHASE_BINS * C, f"the sums by phase of {B} batches x "
                       f"{R} replication(s)", "use fewer batches=")
        load = _load_warning(system, plan)
        seeds = as_seed_sequence(plan.rng).spawn(R)
        fine = np.zeros((R, B, C))
        phases = np.zeros((R, B, PHASE_BINS, C))
        total = R * (plan.warmup + int(plan.steps))
        bar = progress_bar(bool(plan.progress), total, unit="arrival",
                           desc=plan.progress if isinstance(plan.progress, str) else "phases",
                           required=False)
        try:
            finals = [self._replication(system, plan, seed, fine[r], phases[r], bar)
                      for r, seed in enumerate(seeds)]
        finally:
            bar.close()
        return _result(system, plan, self.estimates(system), fine, phases, np.array(finals),
                       load)

    def _replication(self, system: Any, plan: RunPlan, seed: np.random.SeedSequence,
                     fine: np.ndarray, phases: np.ndarray, bar: Any) -> np.ndarray:
        """One replication: its warm-up, its measured arrivals; returns its final workloads.

        The measured arrivals are added up into ``fine`` and ``phases``.
        """
        stream = plan.input.forward(child(seed, 0))
        gen = forward_generator(seed, 1)
        w = np.zeros(system.servers)
        run = HeapReplay(system, w) if _on_heap(system) else DenseReplay(system, w)
        clock: Any = plan.input  # it declares a cycle and the phase of its carry
        cycle, state = float(clock.cycle), not _on_heap(system)
        done, total = -plan.warmup, int(plan.steps or 0)
        while done < total:
            n = min(plan.chunk, -done if done < 0 else total - done)
            phase0 = clock.phase_of(stream.environment)
            sig, tau = stream.next(n)
            U = gen.random((n, run.m))
            found, busy, work = np.empty(n), np.zeros(n if state else 0), np.zeros(
                n if state else 0)
            run.jobs(sig, tau, U, found, busy, work)
            if done >= 0:
                at = phase0 + np.concatenate(([0.0], np.cumsum(tau[:-1])))
                bins = np.minimum((np.mod(at, cycle) * (PHASE_BINS / cycle)).astype(np.int64),
                                  PHASE_BINS - 1)
                k = done + np.arange(n)
                _add(fine, phases, k * plan.batches // total, bins,
                     _columns(found, sig, busy, work, system.servers, state))
            done += n
            bar.update(n)
        return run.final()


def _on_heap(system: Any) -> bool:
    """Whether the phases engine runs ``system`` on the heap (a large built-in policy)."""
    heap = hp.policy_of(system)[0] >= 0
    return heap and (system.servers >= HEAP_MIN_SERVERS or "dense" not in system.engines)


def _columns(found: np.ndarray, sig: np.ndarray, busy: np.ndarray, work: np.ndarray,
             servers: int, state: bool) -> np.ndarray:
    """Per arrival, the values of :data:`COLUMNS` (``found < 0``: lost)."""
    lost = found < 0
    joined = ~lost
    wait = np.where(joined, found, 0.0)
    out = np.zeros((found.size, len(COLUMNS)))
    out[:, 0] = 1.0
    out[:, 1] = joined
    out[:, 2] = wait > 0
    out[:, 3] = wait
    out[:, 4] = np.where(joined, sig, 0.0)
    out[:, 5] = lost
    out[:, 6] = np.where(lost, sig, 0.0)
    if state:
        out[:, 7] = busy
        out[:, 8] = busy == servers
        out[:, 9] = work
    return out


def _add(fine: np.ndarray, phases: np.ndarray, batch: np.ndarray, bins: np.ndarray,
         values: np.ndarray) -> None:
    """Add each arrival's ``values`` to its batch of ``fine`` and its bin of ``phases``."""
    C, F = fine.shape[1], phases.shape[1]
    lo, hi = int(batch[0]), int(batch[-1]) + 1  # the batches a chunk touches (in order)
    cell = (batch - lo) * F + bins
    for c in range(C):
        fine[lo:hi, c] += np.bincount(batch - lo, weights=values[:, c], minlength=hi - lo)
        phases[lo:hi, :, c] += np.bincount(cell, weights=values[:, c],
                                           minlength=(hi - lo) * F).reshape(hi - lo, F)


def _load_warning(system: Any, plan: RunPlan) -> str | None:
    """The load warning of the workload engines (load 1 or more where it decides), given."""
    rho = (None if system.has_loss or not system.capacity_declared
           else system.load(plan.input))
    msg = None if rho is None else dg.load_warning(repr(system), float(rho))
    if msg is not None:
        dg.warn(msg)
    return msg


def _result(system: Any, plan: RunPlan, names: tuple[str, ...], fine: np.ndarray,
            phases: np.ndarray, final: np.ndarray, load: str | None) -> SimulationResult:
    """The :class:`SimulationResult` of the sums, with its sums by phase; its warnings."""
    keep = [n for n in names if plan.statistics is None or n in plan.statistics]
    sums = sums_of(keep, named(fine, system.servers), "workloads")
    estimates: dict[str, Any] = {}
    merged = sums_of(keep, named(merge_batches(fine, plan.merge), system.servers), "workloads")
    estimates.update({name: ratio_estimate(*merged[name]) if name in merged else None
                      for name in REGISTRY})
    no_clt = clt_failures(plan.input, list(sums), system.own_laws)
    coarse = merge_batches(fine, plan.merge)  # the reported batches
    check = dg.batch_check(coarse[..., COLUMNS.index("wait_sum")],
                           coarse[..., COLUMNS.index("joined")],
                           "workload found at the joined server", coarse[..., 0])
    result = SimulationResult(
        system=repr(system), input=repr(plan.input), steps=int(plan.steps or 0),
        warmup=plan.warmup, replications=plan.replications,
        **estimates,
        grid=np.zeros(0), final_state=final, engine="phases", batch_check=check, _sums=sums,
        _no_clt=no_clt, _merge=plan.merge,
        _phases=PhaseSums(float(cast(Any, plan.input).cycle), phases, system.servers,
                          tuple(keep)))
    if load is None:  # a load of 1 or more said it all (as on the workload engines)
        warn_fixed_budget(repr(system), check, result if plan.modes is None else None)
    warn_no_clt(repr(system), no_clt, keep)
    return result


PHASES = register(PhaseEngine())
