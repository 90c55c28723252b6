"""The stages of ``simulate``'s modes: a run that goes on from stage to stage, or retraces it.

:func:`stages_for` chooses how the stages of a plan with modes
(:class:`recursions.engines._run_plan.Modes`)
run on the engine :func:`recursions.engines._registry.choose` took. Every engine *goes on* from
where the
last stage stopped (:class:`Continued`: each arrival is simulated once; the run keeps finer
batches, whole parts of the next stage's, :class:`recursions.engines._chunk_loop.RunHandle`); a run
that records its path, or whose first stage is shorter than a batch per analysis batch, retraces
the path from the seed
(:class:`Retraced`: a stage costs what the stages before it cost again), as does a fixed
budget (one stage). Either way stage ``k`` reports the numbers of one run of ``n_k`` arrivals
from the seed. :mod:`recursions.inference._precision` runs the stages and analyses what they return.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from recursions.engines._run_plan import RunPlan
from recursions.results._simulation_result import SimulationResult

__all__ = ["MICRO", "MICRO_DOUBLES", "Continued", "Retraced", "fresh", "stages_for"]

MICRO = 16
"""Most kept batches per analysis batch of a stage that goes on (:class:`Continued`)."""

MICRO_DOUBLES = 2**25
"""Most numbers the kept batches of a stage that goes on may hold (256 MiB)."""

def fresh(ss: np.random.SeedSequence) -> np.random.SeedSequence:
    """A copy of ``ss`` that has spawned nothing yet (every stage spawns the same children)."""
    return np.random.SeedSequence(ss.entropy, spawn_key=ss.spawn_key, pool_size=ss.pool_size,
                                  n_children_spawned=ss.n_children_spawned)


class Retraced:
    """Stages that each run anew from the seed (a recorded path, a very short first stage).

    Stage ``k + 1`` retraces stage ``k``'s path and goes on: it costs what the stages before
    it cost again.
    """

    def __init__(self, plan: RunPlan, engine: Any, system: Any, base: int,
                 seed: np.random.SeedSequence) -> None:
        self.plan, self.engine, self.system = plan, engine, system
        self.base, self.seed = base, seed
        self.used = 0  # arrivals simulated in all
        self.ran = 0  # arrivals per replication the last stage simulated

    def first(self, n: int, cap: int) -> int:
        """The first stage's length for ``n`` asked."""
        return min(n, cap)

    def next(self, n: int, target: float, cap: int) -> int:
        """The next stage's length: ``target`` as a whole number of batches, at most ``cap``."""
        return min(-(-math.ceil(target) // self.base) * self.base, cap)

    def ahead(self, n: int, nxt: int) -> int:
        """Arrivals per replication the stage of ``nxt`` simulates after one of ``n``."""
        return nxt

    def run(self, n: int, label: str | None = None) -> SimulationResult:
        """The stage of ``n`` arrivals per replication, in ``base`` batches (fewer if short).

        ``label`` is what its progress bar says, when the run shows one.
        """
        progress = label if label is not None and self.plan.progress else self.plan.progress
        plan = dataclasses.replace(self.plan, steps=n, batches=min(self.base, n),
                                   rng=fresh(self.seed), progress=progress)
        self.used += (n + plan.warmup) * plan.replications
        self.ran = n
        return self.engine.run(self.system, plan)


class Continued:
    """Stages that go on where the last stopped (:class:`recursions.engines._chunk_loop.RunHandle`).

    A stage of ``B r g`` arrivals keeps ``B r`` batches of ``g`` arrivals (``B`` those of the
    analysis, ``r`` at most ``micro``): the analysis groups them ``r`` by ``r``. The next
    stage, of ``B r' g'`` arrivals with ``g'`` a power-of-two multiple of ``g``, adds its
    arrivals to batches of which those so far are whole parts
    (:func:`recursions.engines._chunk_loop.rebin`). So a stage reports the numbers of one run of its
    length (up to the order of the sums) and no arrival is simulated twice; the lengths round
    the target up by less than ``1 / 8`` once ``r`` passes 8.
    """

    def __init__(self, plan: Any, engine: Any, system: Any, base: int,
                 micro: int | None = None) -> None:
        self.plan, self.engine, self.system, self.base = plan, engine, system, base
        if micro is None:  # as many as fit in MICRO_DOUBLES, at most MICRO
            doubles = base * plan.batch_doubles * plan.replications
            micro = max(1, min(MICRO, MICRO_DOUBLES // doubles))
        self.micro = micro
        self.handle: Any = None
        self.g = 1  # arrivals per kept batch
        self.g_next = 1  # that of the length next() chose
        self.used = 0
        self.ran = 0

    def first(self, n: int, cap: int) -> int:
        """The first stage's length: ``n`` (at most ``cap``) rounded down to ``B r g``.

        ``g`` is the least size that keeps ``r`` within ``micro``, so the rounding loses less
        than ``B g`` arrivals (``steps=8000``: 7680; ``2**14``, the default first stage up to
        1024 servers: itself).
        """
        n = min(n, cap)
        self.g = self.g_next = max(1, -(-n // (self.base * self.micro)))
        return self.base * self.g * min(self.micro, max(1, n // (self.base * self.g)))

    def next(self, n: int, target: float, cap: int) -> int:
        """The least ``B r' g'`` from ``target`` on (at most ``cap``; ``n`` when none fits)."""
        target = min(target, float(cap))
        g = self.g
        while math.ceil(target / (self.base * g)) > self.micro:
            g *= 2
        r = math.ceil(target / (self.base * g))
        if self.base * r * g > cap:
            r = cap // (self.base * g)
        self.g_next = g
        return max(self.base * r * g, n)

    def ahead(self, n: int, nxt: int) -> int:
        """Arrivals per replication the stage of ``nxt`` simulates after one of ``n``."""
        return nxt - n

    def run(self, n: int, label: str | None = None) -> SimulationResult:
        """The stage of ``n`` arrivals per replication: the run so far goes on to ``n``.

        ``label`` is what its progress bar says, when the run shows one.
        """
        self.g = self.g_next
        nrep = self.plan.replications
        if self.handle is None:
            progress = label if label is not None and self.plan.progress else self.plan.progress
            plan = dataclasses.replace(self.plan, steps=n, batches=n // self.g, progress=progress)
            self.handle = self.engine.start(self.system, plan)
            self.used += (n + plan.warmup) * nrep
            self.ran = n
        else:
            done = int(self.handle.plan.steps)
            self.handle.extend(n, n // self.g, label)
            self.used += (n - done) * nrep
            self.ran = n - done
        return self.handle.result(batches=self.base)


def stages_for(system: Any, engine: Any, plan: RunPlan, w0: Any,
               seed: np.random.SeedSequence) -> Retraced | Continued:
    """How the stages of ``plan`` (which has modes) run on ``engine``.

    A fixed budget is one stage, retraced (keeping the plan's statistics:
    :func:`recursions.engines._run_plan.kept_statistics`). With ``precision=``, the stages go on
    where the
    engine can (``continues``) and the first stage is at least a batch per replication; else
    they are retraced. ``w0`` is where the replications start, ``seed`` the run's seed.

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> from recursions.engines._registry import choose
    >>> from recursions.engines._run_plan import make_plan
    >>> system = rc.JSW(2)
    >>> plan = make_plan(system, rc.Poisson(1.0, rc.dists.Exponential(1.0)), precision=0.1)
    >>> stages = stages_for(system, choose(system, plan), plan, None,
    ...                     np.random.SeedSequence(1))
    >>> n = stages.first(10**5, 10**9)   # whole batches, rounded down
    >>> type(stages).__name__, n % 256 == 0, 10**5 - 256 * 25 < n <= 10**5
    ('Continued', True, True)
    """
    modes = plan.modes
    if modes is None:
        raise ValueError("stages_for lays out the stages of a plan with modes")
    base, seed = modes.base, fresh(seed)
    plan = dataclasses.replace(plan, w0=w0)
    if (modes.precision is None or min(modes.first, modes.max_steps) < base
            or not engine.continues or plan.record):
        return Retraced(plan, engine, system, base, seed)
    plan = dataclasses.replace(plan, steps=modes.first, batches=base, rng=fresh(seed))
    return Continued(plan, engine, system, base)
