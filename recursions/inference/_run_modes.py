"""``simulate``'s modes: run until precise, cut the transient, start from stationarity.

:func:`recursions.simulate` hands a plan with modes (``precision=``, ``warmup="auto"`` or
``start=``; :class:`recursions.engines._run_plan.Modes`, validated with the rest of the plan) and
the engine it chose to :func:`run_modes`, which draws the start states
(:func:`recursions.inference._stationary_starts.start_states`), lays out the stages
(:mod:`recursions.inference._stages`), reads what the system says of the run before it runs
(:func:`recursions.inference.diagnostics.outlook_of`; for a run until precise, the watch on a
growing workload, :class:`recursions.inference._unstable_stop.GrowthWatch`) and has
:mod:`recursions.inference._precision` run and analyse the stages. Nothing here calls ``simulate``
back: the data flow one way, ``simulate`` to here to the engines.
"""

from __future__ import annotations

from typing import Any

from recursions.common._rng import as_seed_sequence
from recursions.engines._run_plan import RunPlan
from recursions.inference._precision import analysed
from recursions.inference._stages import stages_for
from recursions.inference._stationary_starts import start_states
from recursions.inference._unstable_stop import GrowthWatch
from recursions.inference.diagnostics import outlook_of
from recursions.results._simulation_result import SimulationResult

__all__ = ["run_modes"]


def run_modes(system: Any, plan: RunPlan, engine: Any) -> SimulationResult:
    """Run ``plan`` (which has modes) on ``engine``; what ``simulate`` returns.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.engines._registry import choose
    >>> from recursions.engines._run_plan import make_plan
    >>> system = rc.JSW(1)
    >>> plan = make_plan(system, rc.Poisson(0.5, rc.dists.Exponential(1.0)), 20_000,
    ...                  warmup="auto")
    >>> run_modes(system, plan, choose(system, plan)).warmup_rule
    'mser'
    """
    modes = plan.modes
    if modes is None:
        raise ValueError("run_modes runs a plan with modes (precision=, warmup='auto' or "
                         "start=); run a plain plan with its engine")
    seed = as_seed_sequence(plan.rng)
    w0, kind = plan.w0, "empty" if plan.w0 is None else "given"
    if modes.start is not None:
        w0, kind = start_states(modes.start, system, plan.input, plan.replications, seed)
    outlook = outlook_of(system, plan.input, kind)
    watch = None if modes.precision is None else GrowthWatch(
        outlook.floor, modes.max_steps, outlook.finite_variances, outlook.correlation)
    return analysed(plan, stages_for(system, engine, plan, w0, seed), outlook, watch)
