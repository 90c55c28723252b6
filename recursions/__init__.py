"""Stochastic recursions of parallel-server queues: maps, inputs and forward iteration.

Where things are
----------------
==============================  ====================================================
name                             module
==============================  ====================================================
``dists`` (laws)                 :mod:`recursions.dists`
``Poisson``, ``Renewal``,        :mod:`recursions.inputs`
``Periodic``, ``MarkovModulated``
``JSW``, ``JpSW``, ``Loss``,     :mod:`recursions.systems` (objects) and
``RandomRouting``, ``JIQ``,      :mod:`recursions.maps` (the compiled maps, one function
``LeastOfD``, ``Envelope``,      each: ``jsw``, ``jpsw``, ``loss``, ``random_routing``,
``SplitBound``                   ``jiq``, ``least_of_d``, ``envelope``, ``split``)
``simulate``,                    :mod:`recursions.simulate` (drivers in
``SimulationResult``             :mod:`recursions._engine`)
``Estimate``                     :mod:`recursions.estimate`
``SimulationWarning``            :mod:`recursions.diagnostics` (when ``simulate``'s estimates
                                 cannot be trusted: load >= 1, drift, no warm-up)
``BackwardDraws``, ``iterate``   :mod:`recursions.backward` (time-indexed draws)
large-n event engine             :mod:`recursions.heap` (used by ``simulate``)
``JobClass``, ``Redundancy``     :mod:`recursions.redundancy` (map ``redundancy`` in
                                 :mod:`recursions.maps`)
``zerowait.JSQ``, ``I1F``,        :mod:`recursions.zerowait` (queue-length systems of
``PowerOfD``                     paper 002, run by ``simulate``)
==============================  ====================================================

Examples
--------
>>> import recursions as rc
>>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=10_000, rng=1)
>>> 0 < res.p_wait.value < 1
True
"""

from . import codes, diagnostics, dists, maps, redundancy, vectors, zerowait
from .backward import BackwardDraws, iterate
from .codes import LOST
from .diagnostics import SimulationWarning
from .estimate import Estimate
from .inputs import Input, MarkovModulated, Periodic, Poisson, Renewal
from .redundancy import JobClass, Redundancy
from .simulate import SimulationResult, simulate
from .systems import JIQ, JSW, Envelope, JpSW, LeastOfD, Loss, RandomRouting, SplitBound, System
from .user_map import Map, MapContractError, SlowMapWarning
from .zerowait import I1F, JSQ, PowerOfD

__version__ = "0.1.0"

__all__ = [
    "I1F",
    "JIQ",
    "JSQ",
    "JSW",
    "LOST",
    "BackwardDraws",
    "Envelope",
    "Estimate",
    "Input",
    "JobClass",
    "JpSW",
    "LeastOfD",
    "Loss",
    "Map",
    "MapContractError",
    "MarkovModulated",
    "Periodic",
    "Poisson",
    "PowerOfD",
    "RandomRouting",
    "Redundancy",
    "Renewal",
    "SimulationResult",
    "SimulationWarning",
    "SlowMapWarning",
    "SplitBound",
    "System",
    "codes",
    "diagnostics",
    "dists",
    "iterate",
    "maps",
    "redundancy",
    "simulate",
    "vectors",
    "zerowait",
]
