"""The integer codes of the compiled engines, in one place.

A map on sorted vectors is its own compiled kernel (``System.kernel``), but the large-n
event engine, the queue-length engines and the envelope's kernel dispatch on small integers.
Each such code is declared once here as an :class:`enum.IntEnum`; the system classes name
their code (``System.heap_policy``, ``Envelope.params``), and the kernels compare with the
same members.

Examples
--------
>>> from recursions.common.codes import HeapPolicy
>>> int(HeapPolicy.LEAST_OF_D), HeapPolicy(3).name
(3, 'LEAST_OF_D')
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["LOST", "EnvelopeBase", "HeapPolicy", "LawCode", "QueueCode"]

LOST = -1.0
"""What a map returns for a customer that was lost (no server joined)."""


class EnvelopeBase(IntEnum):
    """Which idle-first system :func:`recursions.model.maps.envelope` bounds (``params[0]``)."""

    LOSS = 2
    JPSW = 1
    JIQ = 4


class HeapPolicy(IntEnum):
    """Routing rule of the large-n event engine (:mod:`recursions.engines._heap`)."""

    JSW = 0
    JIQ = 1
    RANDOM = 2
    LEAST_OF_D = 3
    REDUNDANCY = 4


class LawCode(IntEnum):
    """Built-in law of ``Law.kernel_sampler`` (drawn by :mod:`recursions.dists.kernel`)."""

    DETERMINISTIC = 0
    EXPONENTIAL = 1
    ERLANG = 2
    HYPEREXPONENTIAL = 3
    COXIAN = 4
    LOGNORMAL = 5
    LOMAX = 6
    UNIFORM = 7
    EMPIRICAL = 8


class QueueCode(IntEnum):
    """Policy of the queue-length engines (:mod:`recursions.engines.zerowait`)."""

    JSQ = 0
    JIQ = 1
    I1F = 2
    POWER_OF_D = 3
