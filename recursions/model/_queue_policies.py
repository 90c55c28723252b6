"""The queue-length policies: systems that route by the number of jobs at each server.

``N`` FIFO servers, each holding at most ``b`` jobs (one in service, ``b - 1`` waiting; an
arrival routed to a full server is blocked and lost) or unboundedly many, Poisson arrivals.
The policies see only queue lengths:

=========================  ==================================================================
policy                      an arrival joins
=========================  ==================================================================
:class:`JSQ`                a server with the fewest jobs (ties uniformly)
:class:`recursions.JIQ`     an idle server if any, else a uniformly random server
:class:`I1F`                an idle server if any, else one with exactly one job if any, else
                            a uniformly random server (Gupta & Walton 2019)
:class:`PowerOfD`           the shortest of ``d`` servers sampled without replacement (ties
                            uniformly)
=========================  ==================================================================

They are systems (:class:`recursions.System`) like the workload maps, declaring what they can do:
their :attr:`~QueuePolicy.engines` are the queue-length engines ``"queues"`` and ``"counts"``
of :mod:`recursions.engines.zerowait` (they have no map on workload vectors, so asking
:func:`recursions.engines.drivers_of` for one says so), :attr:`~QueuePolicy.queue_policy`
gives the engines the policy's code, buffer and ``d``, and :func:`queue_length_estimates`
the statistics those engines report (for :class:`recursions.JIQ` with a buffer too). What
``loynes.check_stability`` can decide of them is loynes' to say
(:func:`loynes._families.family_of`). :func:`sub_halfin_whitt_rate` gives the load of the
sub-Halfin-Whitt regime (:ref:`theory-zero-wait-regime`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from recursions.common._checks import check_int
from recursions.common.codes import QueueCode
from recursions.model._inputs import Input, check_input
from recursions.model._renewal_inputs import is_poisson
from recursions.model._system import System

__all__ = ["I1F", "JSQ", "PowerOfD", "QueuePolicy", "poisson_refusal", "queue_length_estimates",
           "sub_halfin_whitt_rate"]


def poisson_refusal(system: Any, input: Input) -> str | None:
    """Why the queue-length engines cannot run ``input``, or ``None`` when they can.

    They serve each job for its service time and route Poisson arrivals: an input that
    carries arrivals only, or whose arrivals are not Poisson, is refused.

    Parameters
    ----------
    system : recursions.System
        The system (named in the message).
    input : recursions.Input
        The input.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import recursions as rc
    >>> E = rc.dists.Exponential
    >>> poisson_refusal(rc.JSQ(2), rc.Poisson(1.0, E(1.0))) is None
    True
    >>> poisson_refusal(rc.JSQ(2), rc.Renewal(rc.dists.Deterministic(1.0), E(1.0)))[:22]
    'input must be Poisson '
    """
    if input.arrivals_only:
        return (f"{system!r} serves each job for its service time, but {input!r} carries "
                "arrivals only (its service times are placeholders): give an input with a "
                "service law, e.g. rc.Poisson(rate, service)")
    if not is_poisson(input):
        return ("input must be Poisson (rc.Poisson, or a Renewal with exponential interarrival "
                f"times), got {input!r}")
    return None


def queue_length_estimates(buffer: int | None) -> tuple[str, ...]:
    """The statistics the queue-length engines report (``p_block`` with a ``buffer``).

    Means of time (the wait, the response) come from the number of jobs by Little's law: the
    time-integral of the jobs, over the customers who joined.

    Parameters
    ----------
    buffer : int or None
        The jobs a server holds at most (``None``: no limit, no blocking).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> queue_length_estimates(2)[-2:]
    ('mean_jobs', 'p_block')
    """
    counts = ("p_wait", "mean_wait", "mean_response", "busy_fraction", "p_all_busy", "mean_jobs")
    return counts if buffer is None else (*counts, "p_block")


class QueuePolicy(System):
    """Base class of the queue-length policies (:class:`JSQ`, :class:`I1F`, :class:`PowerOfD`).

    Subclasses are frozen dataclasses with fields ``servers`` and ``buffer`` (``None``:
    infinite buffers; else each server holds at most ``buffer`` jobs) and a class attribute
    ``code`` (:class:`recursions.common.codes.QueueCode`). :func:`recursions.simulate` runs them on
    the engines they declare; the workload-map methods (drivers, coupling, backward runs)
    refuse them, saying why.

    Examples
    --------
    >>> import recursions as rc
    >>> jsq = rc.JSQ(4, buffer=3)
    >>> isinstance(jsq, rc.System), jsq.engines, jsq.queue_policy
    (True, ('queues', 'counts'), (<QueueCode.JSQ: 0>, 3, 1))
    """

    buffer: int | None
    code: ClassVar[QueueCode]

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.buffer is not None:
            object.__setattr__(self, "buffer", check_int(self.buffer, "buffer", 1))

    @property
    def engines(self) -> tuple[str, ...]:
        """``("queues", "counts")``: the queue-length engines (:mod:`recursions.zerowait`)."""
        return ("queues", "counts")

    @property
    def estimates(self) -> tuple[str, ...]:
        """What the queue-length engines report (``p_block`` with a buffer)."""
        return queue_length_estimates(self.buffer)

    @property
    def queue_policy(self) -> tuple[QueueCode, int, int]:
        """``(code, buffer or 0, d)`` for the queue-length engines (``d = 1`` but PowerOfD)."""
        return self.code, self.buffer or 0, 1

    def check_input(self, input: Any) -> None:
        """Refuse an input the queue-length engines cannot run: they need Poisson arrivals.

        Parameters
        ----------
        input : recursions.Input
            The input.

        Raises
        ------
        TypeError
            If ``input`` is not a :class:`~recursions.Input`.
        ValueError
            If it carries arrivals only, or its arrivals are not Poisson.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.JSQ(2).check_input(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
        """
        check_input(input)
        why = poisson_refusal(self, input)
        if why is not None:
            raise ValueError(why)


@dataclass(frozen=True)
class JSQ(QueuePolicy):
    """Join the Shortest Queue: a server with the fewest jobs, ties broken uniformly.

    An arrival is blocked only when every server holds ``buffer`` jobs.

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 1``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server (jobs in service and waiting). ``None``
        (default): infinite.

    Examples
    --------
    >>> import recursions.engines.zerowait as zw
    >>> zw.JSQ(100, buffer=10)
    JSQ(servers=100, buffer=10)
    """

    servers: int
    buffer: int | None = None
    code: ClassVar[QueueCode] = QueueCode.JSQ


@dataclass(frozen=True)
class I1F(QueuePolicy):
    """Idle-One-First (Gupta & Walton 2019).

    An idle server if any, else a server with exactly one job if any, else a uniformly random
    server (blocked if that one is full).

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 1``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server; ``None`` (default): infinite.

    Examples
    --------
    >>> import recursions.engines.zerowait as zw
    >>> zw.I1F(10, buffer=1).buffer
    1
    """

    servers: int
    buffer: int | None = None
    code: ClassVar[QueueCode] = QueueCode.I1F


@dataclass(frozen=True)
class PowerOfD(QueuePolicy):
    """Power-of-d: sample ``d`` distinct servers uniformly, join the shortest (ties uniformly).

    Blocked when all ``d`` sampled servers are full. ``PowerOfD(N, N)`` is :class:`JSQ`; the
    paper's LB-zero member takes ``d`` of order ``N^alpha log N``.

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 1``.
    d : int
        Sampled servers, ``1 <= d <= N``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server; ``None`` (default): infinite.

    Examples
    --------
    >>> import recursions.engines.zerowait as zw
    >>> zw.PowerOfD(50, 2, buffer=5)
    PowerOfD(servers=50, d=2, buffer=5)
    """

    servers: int
    d: int
    buffer: int | None = None
    code: ClassVar[QueueCode] = QueueCode.POWER_OF_D

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "d", check_int(self.d, "d", 1, self.servers))

    @property
    def queue_policy(self) -> tuple[QueueCode, int, int]:
        """``(QueueCode.POWER_OF_D, buffer or 0, d)``."""
        return self.code, self.buffer or 0, self.d


def sub_halfin_whitt_rate(servers: int, alpha: float) -> float:
    """Per-server load ``lambda = 1 - N^{-alpha}`` of the sub-Halfin-Whitt regime.

    See :ref:`Theory › Zero waiting, the regime <theory-zero-wait-regime>`.

    The paper's theorems need ``0 < alpha < 0.5``; its simulations also use ``alpha = 0.5``.
    Any ``alpha`` in ``(0, 1)`` is accepted. The total arrival rate is ``N * lambda``:
    ``rc.Poisson(N * lam, service)``.

    Parameters
    ----------
    servers : int
        Number of servers ``N >= 2`` (``N = 1`` would give ``lambda = 0``).
    alpha : float
        Exponent in ``(0, 1)``.

    Returns
    -------
    float

    Examples
    --------
    >>> round(sub_halfin_whitt_rate(100, 0.5), 6)
    0.9
    """
    n = check_int(servers, "servers", 2)
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}") from None
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return 1.0 - n ** (-a)
