"""What a verdict or a limit rests on: :class:`Basis`.

Every answer of :func:`~loynes.loynes` and :func:`~loynes.check_stability` carries a
``Basis``: the *kind* of argument (a theorem whose conditions hold, a certificate, a
statistical test, a heuristic, or nothing), a machine-readable *name*, and the *error*:
an upper bound on the probability that the answer is wrong (0 for a theorem with exactly
known conditions; the stated level ``delta`` or ``alpha`` for a certificate or a test; NaN for
a heuristic, whose error rate is measured by ``benchmarks/calibration.py`` instead, in the
tables of the docs' Calibration page, ``docs/calibration.md``).

Names
-----
========================  ============  ===============================================
name                      kind          meaning
========================  ============  ===============================================
``dominated-start``       certificate   the Loynes sequence from empty equals the one from
                                        a start above the stationary state with
                                        probability ``>= 1 - delta`` (a tail bound)
``plateau``               heuristic     the Loynes sequence stopped changing over doublings
                                        beyond a load-scaled minimum horizon
``condition-3-fails``     theorem       ``E[sigma] >= S E[tau]``: more work arrives than the
                                        servers can do
``condition-3``           theorem       ``E[sigma] < S E[tau]``, necessary and sufficient
                                        for this map (FCFS G/G/S, random routing)
``bounded``               theorem       a loss system holds at most one service per server
``theorem-1``             theorem       conditions (8) and (9) of J_{p+1}SW hold
``split-bound``           theorem       the split bound's JSW block: condition (8)
``jiq-poisson``           theorem       JIQ with Poisson input is stable below load 1
``bramson-jsq``           theorem       JSQ and power-of-d on queue lengths, Poisson input:
                                        subcritical join-the-shortest-queue networks are
                                        stable (Bramson 2011), and here subcritical is (3)
``least-of-d-drift``      theorem       LL(d) on workloads, renewal input with
                                        ``E[sigma^2] < inf``: (3) suffices (a quadratic
                                        drift and Loynes' monotone limit)
``exponential-sizes``     theorem       redundancy with i.i.d. exponential sizes
``d-bound``               theorem       redundancy: the load without cancellation is < 1
``free-system``           test          redundancy: the rate against the free system's
                                        critical rate
``growth``                test          a linear growth rate significantly above 0
``drain``                 test          the total workload drains at a linear rate from
                                        large states on every face (a map's fluid road)
``none``                  none          nothing decided
========================  ============  ===============================================
A theorem whose condition was *estimated* (condition (8) for non-Poisson input, say) has
kind ``"test"`` and the test's level as error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from recursions.common import Record

__all__ = ["KINDS", "Basis"]

KINDS = ("theorem", "certificate", "test", "heuristic", "none")


@dataclass(frozen=True)
class Basis(Record):
    """What decided an answer, and how far it can be trusted.

    Attributes
    ----------
    kind : str
        ``"theorem"``, ``"certificate"``, ``"test"``, ``"heuristic"`` or ``"none"``.
    name : str
        Machine-readable name (table in :mod:`loynes._basis`).
    error : float
        Upper bound on the probability that the answer is wrong: 0 for a theorem with
        exactly known conditions, the stated level for a certificate or a test, NaN when
        it is not controlled (heuristics; see the calibration tables).
    detail : str
        One sentence for people.

    Examples
    --------
    >>> b = Basis("test", "growth", 1e-3, "growth 0.02 per customer, t = 9.1")
    >>> b.controlled, b.kind
    (True, 'test')
    """

    _dict_extra = ("controlled",)

    kind: str
    name: str
    error: float
    detail: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def controlled(self) -> bool:
        """Whether :attr:`error` is a stated bound (not NaN)."""
        return not math.isnan(self.error)

    def __str__(self) -> str:
        if self.kind == "none":
            return "nothing decided"
        if math.isnan(self.error):
            err = "error not controlled"
        else:
            err = "exact" if self.error == 0 else f"error <= {self.error:.3g}"
        return f"{self.kind} {self.name} ({err})"
