"""The maps on sorted workload vectors: JSW, J_{p+1}SW, loss, random routing, JIQ, LL(d).

Theory: :ref:`Theory › The maps <theory-kw-maps>`. Each system is a small frozen object
holding its parameters and declaring what it can do (:class:`~recursions.model._system.System`,
the base class, in its own module); it hands an integer kernel code and a parameter array to
the compiled drivers (:mod:`recursions.model.maps`). Use :meth:`System.step` to apply the map
once while exploring, and :func:`recursions.simulate` to iterate it.

=================================  ==========================================  =============
class                               map                                          monotone
=================================  ==========================================  =============
:class:`JSW`                        Kiefer-Wolfowitz ``G``, FCFS G/G/S          yes
:class:`JpSW`                       J_{p+1}SW ``G^p``                            no (p >= 1)
:class:`Loss`                       loss system ``L``                            no
:class:`RandomRouting`              uniform random server                        yes
:class:`JIQ`                        idle server, else random                     no
:class:`LeastOfD`                   least workload of d sampled servers          yes
=================================  ==========================================  =============

The monotone bounds of J_{p+1}SW (:class:`~recursions.model._bounds.Envelope`,
:class:`~recursions.model._bounds.SplitBound`) are in :mod:`recursions.model._bounds`, the
queue-length policies in :mod:`recursions.model._queue_policies`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from recursions.common._checks import check_int
from recursions.common.codes import EnvelopeBase, HeapPolicy, QueueCode
from recursions.model import maps as maps
from recursions.model._queue_policies import queue_length_estimates
from recursions.model._system import System

__all__ = ["JIQ", "JSW", "JpSW", "LeastOfD", "Loss", "RandomRouting"]


@dataclass(frozen=True)
class JSW(System):
    """Join the shortest workload: the Kiefer-Wolfowitz map of FCFS G/G/S.

    ``G(w) = R[(w + sigma e_1 - tau 1)^+]`` (:ref:`theory-kw-jsw`). ``W(1)`` at an arrival is that
    customer's FCFS waiting time. Monotone and continuous.

    Parameters
    ----------
    servers : int
        Number of servers ``S >= 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.JSW(3).step([0.0, 2.0, 4.0], sigma=3.0, tau=1.0)
    array([1., 2., 3.])
    """

    kernel: ClassVar[Any] = staticmethod(maps.jsw)
    monotone: ClassVar[bool] = True
    fcfs: ClassVar[bool] = True

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """The heap engine's least-workload rule."""
        return (HeapPolicy.JSW, 0)


@dataclass(frozen=True)
class JpSW(System):
    """J_{p+1}SW: join an idle server if any, else the (p+1)-th smallest workload.

    ``G^p(w) = R[(w + sigma(1{w(1)=0} e_1 + 1{w(1)>0} e_{p+1}) - tau 1)^+]``
    (:ref:`theory-kw-jpsw`).
    ``JpSW(S, 0)`` is :class:`JSW`. Not monotone for ``p >= 1``.

    Parameters
    ----------
    servers : int
        Number of servers ``S >= 1``.
    p : int
        Rank offset, ``0 <= p <= S - 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.JpSW(3, 2).step([1.0, 2.0, 4.0], sigma=1.0, tau=0.5)
    array([0.5, 1.5, 4.5])
    """

    p: int = 0
    kernel: ClassVar[Any] = staticmethod(maps.jpsw)

    def __post_init__(self) -> None:
        s = check_int(self.servers, "servers", 1)
        object.__setattr__(self, "p", check_int(self.p, "p", 0, s - 1))
        super().__post_init__()

    def _params(self) -> np.ndarray:
        return np.array([float(self.p), 0.0])

    @property
    def monotone(self) -> bool:  # type: ignore[override]
        """Monotone only for ``p = 0`` (JSW)."""
        return self.p == 0

    @property
    def fcfs(self) -> bool:  # type: ignore[override]
        """``JpSW(S, 0)`` is JSW."""
        return self.p == 0

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """``JpSW(S, 0)`` is JSW, which the heap engine runs."""
        return (HeapPolicy.JSW, 0) if self.p == 0 else None

    @property
    def envelope_params(self) -> tuple[float, float] | None:
        """Idle first, else rank ``p``."""
        return (float(EnvelopeBase.JPSW), float(self.p))


@dataclass(frozen=True)
class Loss(System):
    """Loss system of ``S`` servers: a customer finding every server busy is lost.

    ``L(u) = R[(u + sigma 1{u(1)=0} e_1 - tau 1)^+]`` (:ref:`theory-kw-loss`).
    With Poisson arrivals the
    stationary loss probability is Erlang B, whatever the service law. Not monotone.

    Parameters
    ----------
    servers : int
        Number of servers ``p >= 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.Loss(2).step([0.0, 1.0], sigma=5.0, tau=0.0)
    array([1., 5.])
    >>> rc.Loss(2).step([0.5, 1.0], sigma=5.0, tau=0.0)
    array([0.5, 1. ])
    """

    kernel: ClassVar[Any] = staticmethod(maps.loss)
    has_loss: ClassVar[bool] = True
    bounded_by_service: ClassVar[bool] = True
    envelope_params: ClassVar[tuple[float, float]] = (float(EnvelopeBase.LOSS), 0.0)


@dataclass(frozen=True)
class RandomRouting(System):
    """Each customer joins a uniformly random server (rank ``floor(u S)``). Monotone.

    Parameters
    ----------
    servers : int
        Number of servers ``S >= 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.RandomRouting(2).step([0.0, 1.0], sigma=2.0, tau=0.0, u=0.7)
    array([0., 3.])
    """

    kernel: ClassVar[Any] = staticmethod(maps.random_routing)
    uniforms: ClassVar[int] = 1
    monotone: ClassVar[bool] = True

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """The heap engine's uniform-server rule."""
        return (HeapPolicy.RANDOM, 0)


@dataclass(frozen=True)
class JIQ(System):
    """Join-Idle-Queue: an idle server if any, else a uniformly random one (:ref:`theory-kw-jiq`).

    Not monotone: ``(0, 10) < (1, 10)`` with ``sigma = 5``, ``tau = 0`` and ``u >= 1/2`` go to
    ``(5, 10)`` and ``(1, 15)``.

    Parameters
    ----------
    servers : int
        Number of servers ``S >= 1``.
    buffer : int, optional
        Capacity ``b >= 1`` of each FIFO server (jobs in service and waiting; an arrival routed
        to a full server is blocked). With a buffer JIQ is simulated as a queue-length system
        (:ref:`theory-zero-wait`, :mod:`recursions.engines.zerowait`); without, as the workload map.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.JIQ(2).step([1.0, 10.0], sigma=5.0, tau=0.0, u=0.9)
    array([ 1., 15.])
    """

    buffer: int | None = None
    kernel: ClassVar[Any] = staticmethod(maps.jiq)
    uniforms: ClassVar[int] = 1

    def __post_init__(self) -> None:
        if self.buffer is not None:
            object.__setattr__(self, "buffer", check_int(self.buffer, "buffer", 1))
        super().__post_init__()

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """Idle server, else a uniform one; with a buffer JIQ is a queue-length system."""
        return (HeapPolicy.JIQ, 0) if self.buffer is None else None

    @property
    def queue_policy(self) -> tuple[QueueCode, int, int]:
        """``(QueueCode.JIQ, buffer or 0, 1)``: the queue-length engines run JIQ too."""
        return QueueCode.JIQ, self.buffer or 0, 1

    @property
    def engines(self) -> tuple[str, ...]:
        """``("dense", "heap")``, or the queue-length engines with a buffer."""
        return ("dense", "heap") if self.buffer is None else ("queues", "counts")

    @property
    def estimates(self) -> tuple[str, ...]:
        """Those of a map, or with a buffer those of the queue-length engines."""
        return super().estimates if self.buffer is None else queue_length_estimates(self.buffer)

    @property
    def envelope_params(self) -> tuple[float, float] | None:
        """Idle first, else a uniform rank."""
        return (float(EnvelopeBase.JIQ), 0.0)


@dataclass(frozen=True)
class LeastOfD(System):
    """LL(d): sample ``d`` servers without replacement, join the least workload among them.

    On a sorted vector this joins the smallest of ``d`` uniformly drawn distinct ranks, drawn
    by inversion of ``P(min rank > r) = C(S-r-1, d) / C(S, d)`` from one uniform. The rank is
    exogenous, so the map is monotone. ``LeastOfD(S, S)`` is :class:`JSW`; ``d = 1`` is random
    routing.

    Parameters
    ----------
    servers : int
        Number of servers ``S >= 1``.
    d : int
        Number of sampled servers, ``1 <= d <= S``.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.LeastOfD(4, 2).step([0.0, 1.0, 2.0, 3.0], sigma=1.0, tau=0.0, u=0.1)
    array([1., 1., 2., 3.])
    """

    d: int = 2
    kernel: ClassVar[Any] = staticmethod(maps.least_of_d)
    uniforms: ClassVar[int] = 1
    monotone: ClassVar[bool] = True

    def __post_init__(self) -> None:
        s = check_int(self.servers, "servers", 1)
        object.__setattr__(self, "d", check_int(self.d, "d", 1, s))
        super().__post_init__()

    def _params(self) -> np.ndarray:
        return np.array([float(self.d), 0.0])

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """The heap engine's least-of-d rule (``d`` uniforms, Floyd's algorithm)."""
        return (HeapPolicy.LEAST_OF_D, self.d)
