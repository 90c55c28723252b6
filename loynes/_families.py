"""Which stability family a system belongs to: the link from a system to its check.

:func:`loynes.check_stability` runs the check of a family (:data:`loynes._checks.FAMILIES`).
Which family applies is a statement about the theorems, so it is kept here, with the
checks, and not on the system classes of :mod:`recursions` (a system says what it *is*):
each class has an entry, a family's name or, where the family depends on the parameters,
a function of the system, and :func:`family_of` resolves a system's class along its method
resolution order (as :func:`functools.singledispatch` does), so a subclass has the family
of its nearest registered base, and every other system (a :class:`recursions.Map` of your
own among them) has ``"generic"``.

==================  ==============================================================
family              what decides
==================  ==============================================================
``load``            condition (3) is necessary and sufficient
``jpsw``            Moyal's Theorem 1 (J_{p+1}SW, ``p >= 1``)
``loss``            the loss system is always stable (bounded)
``bounded``         finite buffers: at most ``b`` jobs per server
``jiq``             JIQ without a buffer
``split``           the split bound's condition (8)
``redundancy``      cancel-on-completion redundancy (Stolyar)
``least-of-d``      LL(d), ``1 < d < S``: the drift proof with renewal input
``jsq``             JSQ and power-of-d without buffers: Bramson's theorem
``queue-length``    other queue-length policies without buffers: only (3) decides
``generic``         no theorem: (3) as a necessary condition, the growth test for
                    UNSTABLE and the drain test for STABLE
==================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import recursions as rc
from recursions.common.codes import QueueCode
from recursions.model import QueuePolicy

__all__ = ["family_of", "register_family"]

Entry = str | Callable[[Any], str]
"""A family's name, or a function of the system that gives it."""

_ENTRIES: dict[type, Entry] = {}
"""System class -> its entry; looked up along a system's method resolution order."""


def register_family(cls: type, entry: Entry) -> None:
    """Say which family the systems of class ``cls`` (and its subclasses) belong to.

    Parameters
    ----------
    cls : type
        A system class (a subclass of :class:`recursions.System`).
    entry : str or callable
        The family's name (a key of :data:`loynes._checks.FAMILIES`), or ``system -> str``
        where it depends on the system's parameters.

    Examples
    --------
    >>> import recursions as rc
    >>> family_of(rc.Loss(2))
    'loss'
    """
    _ENTRIES[cls] = entry


def family_of(system: Any) -> str:
    """The stability family of ``system``: which check :func:`loynes.check_stability` runs.

    Parameters
    ----------
    system : recursions.System
        The system.

    Returns
    -------
    str
        The entry of the first class along ``type(system).__mro__`` that has one (a name,
        or its function applied to ``system``), else ``"generic"``.

    Examples
    --------
    >>> import recursions as rc
    >>> [family_of(rc.LeastOfD(4, d)) for d in (1, 2, 4)]
    ['load', 'least-of-d', 'load']
    >>> family_of(rc.JSQ(4)), family_of(rc.JSQ(4, buffer=3)), family_of(rc.I1F(4))
    ('jsq', 'bounded', 'queue-length')
    >>> family_of(rc.Map(rc.maps.jsw, servers=3))
    'generic'
    """
    for cls in type(system).__mro__:
        entry = _ENTRIES.get(cls)
        if entry is not None:
            return entry if isinstance(entry, str) else entry(system)
    return "generic"


def _jpsw(system: rc.JpSW) -> str:
    """``"load"`` for ``p = 0`` (JSW), else ``"jpsw"`` (Theorem 1)."""
    return "load" if system.p == 0 else "jpsw"


def _jiq(system: rc.JIQ) -> str:
    """``"bounded"`` with a buffer (at most ``b`` jobs per server), else ``"jiq"``."""
    return "jiq" if system.buffer is None else "bounded"


def _least_of_d(system: rc.LeastOfD) -> str:
    """``"load"`` for ``d = 1`` or ``d = S``, else ``"least-of-d"``.

    ``LeastOfD(S, 1)`` is random routing and ``LeastOfD(S, S)`` is JSW, so (3) is necessary
    and sufficient for them; for ``1 < d < S`` it is sufficient with renewal input and
    ``E[sigma^2] < inf`` (:ref:`theory-stability-lld`).
    """
    return "load" if system.d in (1, system.servers) else "least-of-d"


def _envelope(system: rc.Envelope) -> str:
    """As the bounded system when the envelope is that map itself, else ``"generic"``."""
    return family_of(system.system) if system.passes_through else "generic"


def _split(system: rc.SplitBound) -> str:
    """``"load"`` for ``p = 0`` (JSW), else ``"split"`` (condition (8) decides)."""
    return "load" if system.p == 0 else "split"


def _queue_policy(system: QueuePolicy) -> str:
    """``"bounded"`` with a buffer; without, ``"jsq"`` (JSQ, PowerOfD) or ``"queue-length"``.

    With a buffer each server holds at most ``b`` jobs, and the check decides by that bound;
    without, it decides JSQ and power-of-d by Bramson's theorem on join-the-shortest-queue
    networks ((3) is necessary and sufficient), and other policies (:class:`recursions.I1F`)
    only where condition (3) decides (a load at or above 1).
    """
    if system.buffer is not None:
        return "bounded"
    return "jsq" if system.code in (QueueCode.JSQ, QueueCode.POWER_OF_D) else "queue-length"


for _cls, _entry in ((rc.System, "generic"), (rc.JSW, "load"), (rc.JpSW, _jpsw),
                     (rc.Loss, "loss"), (rc.RandomRouting, "load"), (rc.JIQ, _jiq),
                     (rc.LeastOfD, _least_of_d), (rc.Envelope, _envelope),
                     (rc.SplitBound, _split), (rc.Redundancy, "redundancy"),
                     (QueuePolicy, _queue_policy)):
    register_family(_cls, _entry)
