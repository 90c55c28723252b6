"""Monotonicity and dominance checks, coupling times, and exact stationary sampling.

Where things are
----------------
================================================  =========================================
name                                               module
================================================  =========================================
``check_monotone``, ``check_dominates``,           :mod:`coupling._monotone`
``assert_monotone``, ``assert_dominates``,
``MonotonicityReport``, ``DominanceReport``,
``Counterexample``
``strategies`` (hypothesis strategies; imported    :mod:`coupling.strategies`
on first use, needs hypothesis)
``coupling_time``, ``CouplingTimeResult``          :mod:`coupling._times`
``perfect_sample`` (a front over the registry      :mod:`coupling._perfect`
of exact methods in ``coupling._exact_methods``)
``PerfectSample``                                  :mod:`coupling._perfect_result`
``CouplingNotReached``                             :mod:`coupling._errors`
``ReversedQueue``, ``size_biased_sample``,         :mod:`coupling._dominating`
``support_max``
``renovation_index``                               :mod:`coupling._loss_renovation`
``mms_states`` (exact stationary states of FCFS    :mod:`coupling._mms_exact`
M/M/S from its birth-death chain, no coupling;
what ``start="stationary"`` uses there)
dominating processes of FCFS (``fcfs_sampler``)    :mod:`coupling._fcfs_bounds`: vacation
                                                   (scales with S), round robin and random
                                                   assignment walks, reversed M/G/1 queues
``bounded_sample``, ``interval_step`` (exact       :mod:`coupling._bounding`
samples of non-monotone idle-first maps)
``fcfs_workload_bound`` (stationary tail bound     :mod:`coupling._tail_bounds`
behind certified Loynes limits)
``RAWalk`` (random-assignment bound for renewal    :mod:`coupling._ra_walk`
input: certified backward random walk)
``mgf``, ``log_mgf``, ``tilted_sampler``,          :mod:`coupling._tilting`
``cramer_root`` (exponential tilts of the laws)
================================================  =========================================
"""

from typing import Any

from coupling._bounding import bounded_sample, interval_step
from coupling._dominating import ReversedQueue, size_biased_sample, support_max
from coupling._errors import CouplingNotReached
from coupling._loss_renovation import renovation_index
from coupling._mms_exact import mms_states
from coupling._monotone import (
    Counterexample,
    DominanceReport,
    MonotonicityReport,
    assert_dominates,
    assert_monotone,
    check_dominates,
    check_monotone,
)
from coupling._perfect import perfect_sample
from coupling._perfect_result import PerfectSample
from coupling._ra_walk import RAWalk
from coupling._tail_bounds import fcfs_workload_bound
from coupling._tilting import cramer_root, log_mgf, mgf, tilted_sampler
from coupling._times import CouplingTimeResult, coupling_time

__all__ = [
    "Counterexample",
    "CouplingNotReached",
    "CouplingTimeResult",
    "DominanceReport",
    "MonotonicityReport",
    "PerfectSample",
    "RAWalk",
    "ReversedQueue",
    "assert_dominates",
    "assert_monotone",
    "bounded_sample",
    "check_dominates",
    "check_monotone",
    "coupling_time",
    "cramer_root",
    "fcfs_workload_bound",
    "interval_step",
    "log_mgf",
    "mgf",
    "mms_states",
    "perfect_sample",
    "renovation_index",
    "size_biased_sample",
    "strategies",  # noqa: F822 - loaded on first use (__getattr__): it needs hypothesis
    "support_max",
    "tilted_sampler",
]


def __getattr__(name: str) -> Any:
    if name == "strategies":  # hypothesis is a test extra: import it only when asked
        import importlib

        return importlib.import_module(".strategies", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _mms_states(system: Any, input: Any, n: int, seed: Any) -> Any:
    """FCFS M/M/S from its birth-death chain (:func:`mms_states`), else ``None``."""
    return mms_states(system, input, n, rng=seed)


def _stationary_states(system: Any, input: Any, n: int, seed: Any) -> Any:
    """``n`` exact stationary states for ``rc.simulate(..., start="stationary")``."""
    return perfect_sample(system, input, n, rng=seed).samples


def _register() -> None:
    from recursions.inference import register_stationary_sampler

    register_stationary_sampler(_mms_states)  # tried first: no coupling needed
    register_stationary_sampler(_stationary_states)


_register()
