"""The engines: compiled drivers that iterate a system, and the registry that picks one.

``"dense"`` applies a system's compiled map to the sorted workload vector; ``"heap"`` keeps the
absolute times at which servers empty in an indexed min-heap (large systems); the queue-length
engines (:mod:`zerowait`) simulate the policies that route by queue lengths. Every engine runs
on one chunk loop (a warm-up, then a measured run in chunks) and accumulates its statistics
in the kernel. The drivers of the dense engine are a template compiled once per map and kept
on disk (:func:`drivers_root`); :func:`drivers_of` gives a system's own. ``coupling`` and
``loynes`` iterate a system over given draws with :func:`run_window`, or step it with its
drivers.

Examples
--------
>>> import numpy as np, recursions as rc
>>> from recursions.engines import run_window
>>> sigma, tau = np.array([1.0, 1.0]), np.array([0.5, 0.5])  # two arrivals, no uniforms
>>> run_window(rc.JSW(2), np.zeros(2), sigma, tau, np.zeros((2, 0))).tolist()
[0.0, 0.5]
"""

from __future__ import annotations

from recursions.engines._backward_draws import run_window
from recursions.engines._driver_compiler import drivers_of, drivers_root

__all__ = ["drivers_of", "drivers_root", "run_window"]
