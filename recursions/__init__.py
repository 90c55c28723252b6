"""Stochastic recursions of parallel-server queues: maps, inputs and forward iteration.

The package in four subjects and one shared home:

=============  ==========================================================================
``model``      what a system *is*: the systems and their compiled maps
               (:mod:`recursions.maps`), your own :class:`Map`, the inputs, redundancy,
               the queue-length policies
``engines``    what runs it: the engine registry, the dense and heap engines (compiled
               driver templates, a chunk loop), the queue-length engines
               (:mod:`recursions.zerowait`), time-indexed draws for backward schemes
``inference``  how far a run's numbers can be trusted: batch means, standard errors, MSER,
               ``precision=`` and its stages, the unstable stop, stationary starts,
               :mod:`recursions.diagnostics`
``results``    what a run reports: every statistic declared once, :class:`SimulationResult`
``common``     what ``recursions``, ``coupling`` and ``loynes`` share: seeds (``RngLike``),
               argument checks, memory, ``jit``, the worker pool, tables, figures, the
               caches, the engines' integer codes (:mod:`recursions.codes`)
``dists``      the laws (:mod:`recursions.dists`), an extension point like ``vectors``
=============  ==========================================================================

What a user imports is exported here; the subpackages' modules are private but for the ones
named above, and each subpackage's own ``__all__`` is what the other packages use of it.

Examples
--------
>>> import recursions as rc
>>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), steps=10_000, rng=1)
>>> 0 < res.p_wait.value < 1
True
"""

from recursions import dists, vectors
from recursions._simulate import SimulationResult, simulate
from recursions.common import codes as codes
from recursions.common._caches import CacheError, CacheWarning, cache_folders, clear_cache
from recursions.common.codes import LOST
from recursions.engines import zerowait as zerowait
from recursions.engines._backward_draws import BackwardDraws, iterate
from recursions.inference import diagnostics as diagnostics
from recursions.inference._estimate import Estimate
from recursions.inference._half_widths import HalfWidth, absolute, relative
from recursions.inference.diagnostics import SimulationWarning
from recursions.model import maps as maps
from recursions.model import redundancy as redundancy
from recursions.model._bounds import Envelope, SplitBound
from recursions.model._environment_inputs import MarkovModulated, Periodic
from recursions.model._inputs import Input
from recursions.model._map_step_checks import MapContractError
from recursions.model._queue_policies import I1F, JSQ, PowerOfD
from recursions.model._renewal_inputs import Poisson, Renewal
from recursions.model._system import System
from recursions.model._time_varying import TimeVarying
from recursions.model._trace import Trace
from recursions.model._user_map import Map, SlowMapWarning
from recursions.model._workload_systems import JIQ, JSW, JpSW, LeastOfD, Loss, RandomRouting
from recursions.model.redundancy import JobClass, Redundancy

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
    "HalfWidth",
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
    "TimeVarying",
    "Trace",
    "absolute",
    "cache_folders",
    "clear_cache",
    "codes",
    "diagnostics",
    "dists",
    "iterate",
    "maps",
    "redundancy",
    "relative",
    "simulate",
    "vectors",
    "zerowait",
]
