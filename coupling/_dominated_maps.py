"""A monotone map sampled inside the FCFS sandwich of a system that dominates it.

``perfect_sample(system, input, size, dominated_by=rc.JSW(S))``: the FCFS sampler supplies the
bound's vector at a past instant and the input after it (:mod:`coupling._fcfs_bounds`), and
:class:`DominatedMap` runs the map from 0 and from that vector; :func:`check_dominating`
refuses a bound that cannot serve, and :func:`show_dominance` runs the searches the
exactness argument rests on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import recursions as rc
from coupling import _monotone as monotone  # looked up at each call: a test may watch its searches
from recursions.common import child
from recursions.engines import run_window
from recursions.model import check_system

__all__ = ["DominatedMap", "check_dominating", "show_dominance"]


class DominatedMap:
    """A monotone map sampled inside the sandwich of a dominating FCFS system.

    The FCFS sampler supplies, at a past instant ``-T``, a vector ``B`` above the FCFS
    stationary state and the input after ``-T`` (:func:`sandwich`); the map is run from 0
    and from ``B`` on that input. Its routing uniforms are attached to the arrivals counted
    back from time 0 (row ``k`` to the ``(k + 1)``-th latest arrival before 0), so a later
    try from further back gives the same customers the same uniforms.
    """

    def __init__(self, system: rc.System, gen: np.random.Generator) -> None:
        self.system, self.gen = system, gen
        self.rows = np.empty((0, system.uniforms))

    def _latest(self, m: int) -> np.ndarray:
        """Uniforms of the ``m`` latest arrivals before 0, in increasing time."""
        have = self.rows.shape[0]
        if have < m:
            k = max(m - have, have, 64)
            more = np.asarray(self.system.innovations(self.gen, k), dtype=np.float64)
            self.rows = np.concatenate((self.rows, more.reshape(k, self.system.uniforms)))
        return np.ascontiguousarray(self.rows[:m][::-1])

    def sandwich(self, upper: np.ndarray, T: float, times: np.ndarray,
                 sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The map's states at 0 from 0 and from ``upper`` at ``-T``, arrivals ``times``.

        Nothing arrives between ``-T`` and the first arrival, so the FCFS bound only drains
        there: the state seen by that arrival is below ``(upper - (t_1 + T))^+``. The map is
        applied from that arrival on (no pseudo-arrival, which a user's map might not treat
        as a no-op).
        """
        S = self.system.servers
        m = times.size
        first = float(times[0]) if m else 0.0
        hi = np.maximum(upper - (first + T), 0.0)
        lo = np.zeros(S)
        if m:
            tau = np.maximum(np.diff(np.append(times, 0.0)), 0.0)
            sig = np.ascontiguousarray(sigma, dtype=np.float64)
            u = self._latest(m)
            start_hi = hi
            lo = run_window(self.system, lo, sig, tau, u)
            hi = lo if not start_hi.any() else run_window(self.system, start_hi, sig, tau, u)
        return lo, hi


def check_dominating(system: rc.System, bound: Any, upper: Any) -> rc.System:
    """Refuse a ``dominated_by`` that the argument of :func:`perfect_sample` cannot use."""
    check_system(bound, "dominated_by")
    if upper is not None:
        raise ValueError("give either upper= (a bounding vector, monotone method) or "
                         "dominated_by= (a dominating system), not both")
    if not bound.fcfs:
        raise ValueError(
            f"dominated_by={bound!r} has no exact sampler that gives its stationary state at a "
            "past instant together with the input after it; the one that does is FCFS G/G/S: "
            f"dominated_by=rc.JSW({system.servers})")
    if bound.servers != system.servers:
        raise ValueError(f"dominated_by must have the servers of the map, got {bound.servers} "
                         f"for {system!r} with {system.servers}")
    if not system.monotone:
        raise ValueError(
            f"{system!r} is not declared monotone: sandwiching between the empty start and the "
            "bound needs a monotone map (declare rc.Map(..., monotone=True) once "
            "cp.check_monotone finds no counterexample)")
    return bound


def show_dominance(system: rc.System, bound: rc.System, trials: int,
                    seed: np.random.SeedSequence) -> None:
    """Run the searches the exactness argument rests on; refuse on a counterexample."""
    mono_seed, dom_seed = child(seed, 0), child(seed, 1)
    mono = monotone.check_monotone(system, trials=trials, rng=mono_seed)
    if not mono.monotone:
        raise ValueError(f"{system!r} is declared monotone, but a search found a "
                         f"counterexample, so the sandwich would not be exact:\n{mono}")
    dom = monotone.check_dominates(bound, system, trials=trials, rng=dom_seed)
    if not dom.dominates:
        raise ValueError(f"{bound!r} does not dominate {system!r}, so its stationary state "
                         f"does not bound the map's and the sandwich would not be exact:\n{dom}")

