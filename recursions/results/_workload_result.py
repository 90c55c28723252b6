"""What a run of the workload engines reports: :func:`workload_result`.

The batch sums of the dense and heap engines (:mod:`recursions.engines._workload_engines`) become
the ratio estimates of a :class:`~recursions.SimulationResult`, after the batch checks of the total
workload and of what customers found, and with the distance to a reference profile.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from recursions.engines import _accumulator as eng
from recursions.engines._chunk_loop import Tables
from recursions.engines._run_plan import RunPlan
from recursions.inference import diagnostics as dg
from recursions.inference._batch_means import merge_batches
from recursions.inference._estimate import Estimate, ratio_estimate
from recursions.inference._moment_conditions import clt_failures
from recursions.results._simulation_result import SimulationResult, warn_fixed_budget, warn_no_clt
from recursions.results._statistics import REGISTRY, sums_of

__all__ = ["workload_result"]


def workload_result(system: Any, plan: RunPlan, engine: str, acc: np.ndarray, tables: Tables,
                    final: np.ndarray, path: np.ndarray | None, redundant: bool,
                    load_msg: str | None) -> SimulationResult:
    """The :class:`~recursions.SimulationResult` of a dense or heap run.

    Parameters
    ----------
    system : recursions.System
        The system run.
    plan : RunPlan
        The run.
    engine : {"dense", "heap"}
        The engine that ran it.
    acc : numpy.ndarray
        The batch sums, shape ``(replications, batches, N_STATS)``: with the default batches,
        ``plan.merge`` of them make each batch of the estimates and the batch checks (exactly
        a 32-batch run's), while the intervals (``_sums``) keep them all.
    tables : Tables
        The grid and profile histograms of the measured run.
    final : numpy.ndarray
        The workload vectors at the end.
    path : numpy.ndarray or None
        The recorded path (``record=True``).
    redundant : bool
        Whether what the system's map returns is a response time already (redundancy).
    load_msg : str or None
        The load warning already given (the batch check then stays quiet).

    Returns
    -------
    SimulationResult
    """
    S, nrep, heap = system.servers, plan.replications, engine == "heap"
    keep = set(system.estimates if plan.statistics is None else plan.statistics)
    fine = acc
    seen_fine = fine[..., eng.SAMPLED if heap else eng.ARRIVALS]
    response = redundant  # what the map returns is a response: no service adds to it
    every = sums_of(system.estimates, _columns(fine, seen_fine, S, response), "workloads")
    sums = {k: v for k, v in every.items() if k in keep}  # what interval() reads
    acc = merge_batches(fine, plan.merge)  # the estimates' batches
    arr, snaps = acc[..., eng.ARRIVALS], acc[..., eng.SAMPLED]
    seen = snaps if heap else arr
    est = {k: ratio_estimate(*v)
           for k, v in sums_of(keep, _columns(acc, seen, S, response), "workloads").items()}
    half = tables.g.size + 1
    check = _batch_checks(acc, snaps if heap else arr,
                          "response time" if redundant else "workload found at the joined server",
                          state=not plan.lean)
    # the statistics without a valid standard error (of every statistic: the quantiles read
    # p_wait's and busy_fraction's); the headline mean among them is warned about
    no_clt = clt_failures(plan.input, list(every), system.own_laws)
    # a fixed budget too short for the load's heavy-traffic relaxation time (or, for a system
    # without one, for its number of servers) says so
    short = dg.short_for(system, plan.input, float(arr.sum()) / nrep,
                         "empty" if plan.w0 is None else "given",
                         plan.time is not None) if plan.default else None
    # every statistic of the registry: None where these engines have none
    estimates: dict[str, Any] = {name: est.get(name) for name in REGISTRY}
    result = SimulationResult(
        system=repr(system),
        input=repr(plan.input),
        steps=int(arr.sum() / nrep) if plan.steps is None else plan.steps,
        warmup=plan.warmup,
        replications=nrep,
        **estimates,
        grid=np.zeros(0) if plan.lean else tables.g,
        final_state=final,
        path=path if plan.record else None,
        engine=engine,
        batch_check=check,
        start="empty" if plan.w0 is None else "given",
        _sums=sums,
        _no_clt=no_clt,
        _prof=None if plan.lean else eng.profile_counts(tables.hist[..., :half]),
        _den=None if plan.lean else fine[..., eng.SAMPLED] * S,
        _fprof=None if plan.lean else eng.profile_counts(tables.hist[..., half:]),
        _fden=None if plan.lean else fine[..., eng.JOINED],
        _merge=plan.merge,
        _short=short,
    )
    if load_msg is None:
        warn_fixed_budget(repr(system), check, result if plan.modes is None else None)
    warn_no_clt(repr(system), no_clt, keep)
    return result if plan.reference is None else _with_sup_error(result, plan.reference)


def _columns(acc: np.ndarray, seen: np.ndarray, servers: int, finds_response: bool
             ) -> dict[str, np.ndarray]:
    """The accumulator's columns by the names :mod:`recursions.results._statistics` reads.

    A system whose map returns a response (:attr:`~recursions.System.finds_response`) adds no
    service time to it.
    """
    served = acc[..., eng.SERVED_WORK]
    return {"arrivals": acc[..., eng.ARRIVALS], "joined": acc[..., eng.JOINED],
            "waited": acc[..., eng.WAITED], "wait_sum": acc[..., eng.WAIT_SUM],
            "served_work": np.zeros_like(served) if finds_response else served,
            "lost": acc[..., eng.LOST], "lost_work": acc[..., eng.LOST_WORK],
            "work": acc[..., eng.WORK], "busy": acc[..., eng.BUSY],
            "all_busy": acc[..., eng.ALL_BUSY], "seen": seen, "server_seen": seen * servers}


def _batch_checks(acc: np.ndarray, weight: np.ndarray, found: str,
                  state: bool = True) -> dg.BatchCheck | None:
    """The batch check of the total workload, and of what customers found (``found`` names it).

    Without ``state`` (a lean run, which keeps no workload sums) only what customers found.

    The workload is summed where it is sampled (every arrival on the dense engine, every
    snapshot on the heap engine, whose short runs then have few usable batches); what the
    joining customers found, behind ``mean_wait``, has a value in every batch of every engine
    and is often the more correlated series. Returns the first check that flags, else the
    workload's.
    """
    arrivals = acc[..., eng.ARRIVALS]
    work = dg.batch_check(acc[..., eng.WORK], weight, arrivals=arrivals) if state else None
    seen = dg.batch_check(acc[..., eng.WAIT_SUM], acc[..., eng.JOINED], found, arrivals)
    for c in (work, seen):
        if c is not None and c.message() is not None:
            return c
    return work if work is not None else seen


def _with_sup_error(result: SimulationResult, reference: Any) -> SimulationResult:
    """``result`` with ``sup_error = max_w |x_w - x*_w|`` over its grid."""
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
