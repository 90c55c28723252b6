"""The model: systems (random maps on sorted workload vectors) and the inputs that drive them.

A system is a small frozen object: its parameters, the compiled kernel of its map, and what it
declares it can do (monotone, FCFS, loss, blocks, engines). An input is the law of the
sequence of (service time, interarrival time). The maps themselves are in :mod:`maps` (and the
user's own in :class:`~recursions.Map`); :mod:`redundancy` is the cancel-on-completion model.
Most names here are exported by ``recursions`` itself; this face adds the checks and tests
that ``coupling`` and ``loynes``
ask of a system or an input.

Examples
--------
>>> import recursions as rc
>>> from recursions.model import is_renewal
>>> is_renewal(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
True
"""

from __future__ import annotations

from recursions.model._inputs import check_input
from recursions.model._queue_policies import QueuePolicy
from recursions.model._renewal_inputs import is_poisson, is_renewal
from recursions.model._system import check_system

__all__ = [
    "QueuePolicy",
    "check_input",
    "check_system",
    "is_poisson",
    "is_renewal",
]
