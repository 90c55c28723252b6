"""The replay of a trace: each job once, in order, from empty servers, every wait kept.

``rc.simulate(system, trace)`` comes here (:class:`recursions.Trace` declares ``is_trace``).
The jobs go through the system's own map in chunks, on one of the two engines that take
given arrivals:

* ``"dense"``: the map on the sorted workload vector, the drivers' ``run_found`` (what each
  job found, ``-1`` if lost), ``O(S)`` a job;
* ``"heap"``: absolute empty times in the heap engine's indexed heap,
  :func:`recursions.engines._heap.heap_replay`, ``O(log S)`` a job, for the built-in policies
  it runs (JSW, JIQ, random routing, LL(d)); ``engine="auto"`` takes it from
  :data:`~recursions.engines._workload_engines.HEAP_MIN_SERVERS` servers on.

Beyond the trace and the waits, a replay holds ``O(S + chunk)``: the state, and one chunk's
routing uniforms and waits. The routing uniforms (a random policy's) come from ``rng``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recursions.common._checks import check_int
from recursions.common._rng import RngLike, as_seed_sequence
from recursions.engines import _heap as hp
from recursions.engines._driver_compiler import drivers_of
from recursions.engines._workload_engines import HEAP_MIN_SERVERS
from recursions.results._trace_result import TraceResult, trace_result

__all__ = ["REPLAY_CHUNK", "DenseReplay", "HeapReplay", "replay", "replay_refusal"]

_NONE = np.zeros(0)
"""No per-job state wanted (an empty array: read, never written)."""

REPLAY_CHUNK = 1 << 16
"""Jobs per call of a replay's compiled loop (the memory beyond the trace is of this order)."""


def replay(system: Any, trace: Any, *, rng: RngLike = 1, engine: str = "auto",
           w0: Any = None, chunk: int = REPLAY_CHUNK) -> TraceResult:
    """Replay ``trace`` on ``system``: each job once, in order.

    Parameters
    ----------
    system : recursions.System
        A map on workload vectors (FCFS at each server): a built-in policy or a
        :class:`~recursions.Map`.
    trace : recursions.Trace
        The jobs.
    rng : int, Generator, SeedSequence or None, default 1
        The seed of the routing uniforms (a policy that routes at random).
    engine : {"auto", "dense", "heap"}, default "auto"
        See the module.
    w0 : sequence of float, optional
        The workloads when the first job arrives (default: empty servers).
    chunk : int
        Jobs per call of the compiled loop.

    Returns
    -------
    recursions.results._trace_result.TraceResult

    Raises
    ------
    ValueError
        For a system that draws its own work (redundancy), one that runs on queue lengths,
        an engine that cannot run it, or a bad ``w0``.
    """
    why = replay_refusal(system)
    if why is not None:
        raise ValueError(why)
    name = _engine(system, engine)
    chunk = check_int(chunk, "chunk", 1)
    w = _start(system, w0)
    gen = np.random.default_rng(as_seed_sequence(rng))
    K = len(trace)
    waits = np.empty(K)
    run = HeapReplay(system, w) if name == "heap" else DenseReplay(system, w)
    for a in range(0, K, chunk):
        b = min(a + chunk, K)
        gaps = np.zeros(b - a)  # to the next arrival; none after the last job
        np.subtract(trace.times[a + 1:b + 1], trace.times[a:min(b, K - 1)],
                    out=gaps[:min(b, K - 1) - a])
        U = gen.random((b - a, run.m))
        run.jobs(np.array(trace.services[a:b]), gaps, U, waits[a:b])
    waits[waits < 0] = np.nan  # lost
    return trace_result(system, trace, name, waits, run.final())


def replay_refusal(system: Any) -> str | None:
    """Why ``system`` cannot replay a trace, or ``None``."""
    kind = type(system).__name__
    if getattr(system, "finds_response", False):
        return (f"{kind} draws each job's work from its job classes, so a trace's service "
                "times would be ignored: replay a trace on a system that serves them")
    if "dense" not in getattr(system, "engines", ()):
        return (f"{kind} runs on queue lengths, whose engines need Poisson arrivals; a trace "
                "replays on a map on workload vectors (JSW, JIQ, LeastOfD, RandomRouting, a "
                "Map of your own)")
    return None


def _engine(system: Any, engine: str) -> str:
    """The engine that replays on ``system``: ``engine``, or for ``"auto"`` the faster one."""
    heap = hp.policy_of(system)[0] >= 0
    if engine == "auto":
        return "heap" if heap and system.servers >= HEAP_MIN_SERVERS else "dense"
    if engine not in ("dense", "heap"):
        raise ValueError(f"engine must be 'auto', 'dense' or 'heap' for a trace, got {engine!r}")
    if engine == "heap" and not heap:
        raise ValueError(f"the heap engine runs JSW, JIQ, RandomRouting and LeastOfD, not "
                         f"{type(system).__name__}: use engine='dense'")
    return engine


def _start(system: Any, w0: Any) -> np.ndarray:
    """The workloads at the first arrival: zeros, or ``w0`` checked and sorted."""
    S = system.servers
    if w0 is None:
        return np.zeros(S)
    w = np.array(w0, dtype=np.float64).ravel()
    if w.size != S or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"w0 must hold {S} finite workloads >= 0, got {w0!r}")
    return np.sort(w)


class DenseReplay:
    """The jobs through the system's map on its sorted workload vector."""

    def __init__(self, system: Any, w: np.ndarray) -> None:
        self.system, self.w = system, w
        self.m = system.uniforms
        self.drivers = drivers_of(system)

    def jobs(self, sig: np.ndarray, tau: np.ndarray, U: np.ndarray, out: np.ndarray,
             busy: np.ndarray = _NONE, work: np.ndarray = _NONE) -> None:
        """Jobs ``sig``, ``tau`` with routing ``U``; what each found into ``out``.

        With ``busy`` and ``work`` as long as ``sig``, the busy servers and the total
        workload each job saw too.
        """
        self.drivers.run_found(self.system.params, self.w, sig, tau, U, out, busy, work)

    def final(self) -> np.ndarray:
        """The sorted workloads now."""
        return self.w.copy()


class HeapReplay:
    """The jobs through the heap engine's empty times (a built-in policy)."""

    def __init__(self, system: Any, w: np.ndarray) -> None:
        self.system = system
        self.policy, self.d = hp.policy_of(system)
        self.m = hp.uniforms_for(self.policy, self.d)
        self.e = w.copy()
        heap, pos, keys = hp.init_heap(self.e[None, :])
        self.heap, self.pos, self.keys = heap[0], pos[0], keys[0]
        self.t = 0.0

    def jobs(self, sig: np.ndarray, tau: np.ndarray, U: np.ndarray, out: np.ndarray,
             busy: np.ndarray = _NONE, work: np.ndarray = _NONE) -> None:
        """Jobs ``sig``, ``tau`` with routing ``U``; what each found into ``out``.

        The heap keeps no count of busy servers: ``busy`` and ``work`` must be empty.
        """
        if busy.size or work.size:
            raise ValueError("the heap replay keeps no statistic of the state")
        self.t = hp.heap_replay(self.policy, self.d, self.system.params, self.e, self.heap,
                                self.pos, self.keys, self.t, sig, tau, U, out, hp.REBASE)

    def final(self) -> np.ndarray:
        """The sorted workloads now."""
        return np.sort(np.maximum(self.e - self.t, 0.0))
