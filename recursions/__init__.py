"""Stochastic recursions of parallel-server queues: maps, inputs and forward iteration.

Where things are
----------------
=================================  ============================================================
name                               module
=================================  ============================================================
``dists`` (laws)                   :mod:`recursions.dists`
``Poisson``, ``Renewal``,          :mod:`recursions.inputs`
``Periodic``, ``MarkovModulated``
``JSW``, ``JpSW``, ``Loss``,       :mod:`recursions.systems` (objects) and
``RandomRouting``, ``JIQ``,        :mod:`recursions.maps` (the compiled maps, one function
``LeastOfD``                       each: ``jsw``, ``jpsw``, ``loss``, ``random_routing``,
                                   ``jiq``, ``least_of_d``, ``envelope``, ``split``)
``Envelope``, ``SplitBound``       :mod:`recursions.bounds` (J_{p+1}SW's monotone bounds)
``Map`` (your own map),            :mod:`recursions.user_map` (the sorted-vector helpers
``MapContractError``               for writing one in :mod:`recursions.vectors`)
``simulate``                       :mod:`recursions.simulate` (the drivers: the template
                                   :mod:`recursions._engine`, compiled once per kernel by
                                   :mod:`recursions.drivers`)
``simulate``'s modes               :mod:`recursions.modes` (``precision=``, ``warmup="auto"``,
                                   ``start=``: validated in :mod:`recursions.plan`, stages laid
                                   out by :mod:`recursions.stages`, analysed by
                                   :mod:`recursions.precision`)
``SimulationResult``               :mod:`recursions.result`
``Estimate``                       :mod:`recursions.estimate`
integer codes of the engines       :mod:`recursions.codes`
``SimulationWarning``              :mod:`recursions.diagnostics` (when ``simulate``'s estimates
                                   cannot be trusted: load >= 1, drift, no warm-up)
``clear_cache``,                   :mod:`recursions.drivers` (the on-disk caches of compiled
``cache_folders``,                 code: kept private, rebuilt when damaged;
``CacheWarning``, ``CacheError``   ``python -m loynes cache --clear``)
``BackwardDraws``, ``iterate``     :mod:`recursions.backward` (time-indexed draws)
large-n event engine               :mod:`recursions.heap` (used by ``simulate``)
``JobClass``, ``Redundancy``       :mod:`recursions.redundancy` (map ``redundancy`` in
                                   :mod:`recursions.maps`)
``JSQ``, ``I1F``, ``PowerOfD``     :mod:`recursions.queue_policies` (queue-length systems, run
                                   by ``simulate`` on the engines of :mod:`recursions.zerowait`,
                                   kernels in :mod:`recursions.queue_kernels`;
                                   :ref:`Theory › Zero waiting <theory-zero-wait>`)
=================================  ============================================================

Examples
--------
>>> import recursions as rc
>>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=10_000, rng=1)
>>> 0 < res.p_wait.value < 1
True
"""

from . import codes, diagnostics, dists, maps, redundancy, vectors, zerowait
from ._cache import CacheError, CacheWarning, cache_folders, clear_cache
from .backward import BackwardDraws, iterate
from .bounds import Envelope, SplitBound
from .codes import LOST
from .diagnostics import SimulationWarning
from .estimate import Estimate
from .inputs import Input, MarkovModulated, Periodic, Poisson, Renewal
from .queue_policies import I1F, JSQ, PowerOfD
from .redundancy import JobClass, Redundancy
from .simulate import SimulationResult, simulate
from .systems import JIQ, JSW, JpSW, LeastOfD, Loss, RandomRouting, System
from .user_map import Map, MapContractError, SlowMapWarning

__version__ = "0.1.0"

__all__ = [
    "I1F",
    "JIQ",
    "JSQ",
    "JSW",
    "LOST",
    "BackwardDraws",
    "CacheError",
    "CacheWarning",
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
    "cache_folders",
    "clear_cache",
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
