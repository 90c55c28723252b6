"""The integer codes of the compiled engines, in one place.

Compiled kernels dispatch on small integers (numba cannot dispatch on Python classes without
losing its on-disk cache). Each code is declared once here as an :class:`enum.IntEnum`; the
system classes name their code (``System.kind``, ``System.heap_policy``), and the kernels
compare with the same members.

Examples
--------
>>> from recursions.codes import MapCode
>>> int(MapCode.JPSW), MapCode(1).name
(1, 'JPSW')
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["LOST", "HeapPolicy", "MapCode", "QueueCode"]

LOST = -1.0
"""What a map returns for a customer that was lost (no server joined)."""


class MapCode(IntEnum):
    """Kernel of a map on sorted workload vectors (:func:`recursions.maps.apply_map`)."""

    JSW = 0
    JPSW = 1
    LOSS = 2
    RANDOM = 3
    JIQ = 4
    LEAST_OF_D = 5
    ENVELOPE = 6
    SPLIT = 7
    REDUNDANCY = 8
    USER = 99
    """A user's map (:class:`recursions.Map`): its own compiled drivers ignore the code."""


class HeapPolicy(IntEnum):
    """Routing rule of the large-n event engine (:mod:`recursions.heap`)."""

    JSW = 0
    JIQ = 1
    RANDOM = 2
    LEAST_OF_D = 3
    REDUNDANCY = 4


class QueueCode(IntEnum):
    """Policy of the queue-length engines (:mod:`recursions.zerowait`)."""

    JSQ = 0
    JIQ = 1
    I1F = 2
    POWER_OF_D = 3
