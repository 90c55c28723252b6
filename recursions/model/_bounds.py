"""The monotone bounds of J_{p+1}SW: the envelope and the split bound.

Theory: :ref:`theory-stability-bounds`.

=================================  ==========================================  =============
class                               map                                          monotone
=================================  ==========================================  =============
:class:`Envelope`                   continuous monotone majorant ``Phi``         yes
:class:`SplitBound`                 loss(p) + JSW(S - p), exogenous routing      yes (*)
=================================  ==========================================  =============

(*) in the JSW block, for a fixed loss block (the loss block is exogenous).

Both are systems like the maps they bound (:class:`recursions.System`); Loynes' theorem applies
to them, so a finite limit of either bounds J_{p+1}SW from above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from recursions.common._checks import check_int
from recursions.common.codes import HeapPolicy
from recursions.model import maps as maps
from recursions.model._system import System, check_system

__all__ = ["Envelope", "SplitBound"]


@dataclass(frozen=True, init=False)
class Envelope(System):
    """Continuous monotone majorant of an idle-first system (:ref:`theory-kw-envelope`).

    ``Phi(w) = [R(w + sigma e_r) v R(w - w(1) e_1 + sigma e_1) - tau 1]^+`` where ``r`` is the
    rank the system joins when all servers are busy (``p + 1`` for J_{p+1}SW, a uniform rank for
    JIQ) and, for a loss system, the first term is ``w``. It is above the system's map, equal to
    ``sup_{v < w} G(v)`` whenever ``w(1) > 0``, continuous and monotone, so Loynes' theorem
    applies to it. For maps that are already monotone (JSW, random routing, LL(d), the split
    bound) the envelope is the map itself.

    Parameters
    ----------
    system : System
        The system to bound.

    Raises
    ------
    ValueError
        For a map that is neither JpSW, JIQ nor Loss and not declared monotone (a
        :class:`recursions.Map` with ``monotone=False``): no envelope is known for it.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.Envelope(rc.JpSW(2, 1)).step([0.001, 1.0], sigma=5.0, tau=0.0)
    array([1., 6.])
    """

    system: System = None  # type: ignore[assignment]
    monotone: ClassVar[bool] = True

    def __init__(self, system: System) -> None:
        check_system(system, needs_map="an envelope")
        if isinstance(system, Envelope):
            system = system.system
        if system.envelope_params is None and not system.monotone:
            # passed through unchanged, it would be declared monotone without being so
            raise ValueError(f"no monotone envelope is known for {system!r}: Envelope bounds "
                             "JpSW, JIQ and Loss, and is the map itself for a monotone map")
        object.__setattr__(self, "system", system)
        object.__setattr__(self, "servers", system.servers)
        object.__setattr__(self, "params", self._params())

    @property
    def passes_through(self) -> bool:
        """Whether the envelope is the bounded system's own map (a monotone map's envelope).

        The envelope of a system without :attr:`~recursions.System.envelope_params` (JSW,
        random routing, LL(d), the split bound, a monotone map of your own) is that map
        itself: it runs the bounded system's kernel and drivers, and declares what it does.

        Examples
        --------
        >>> import recursions as rc
        >>> rc.Envelope(rc.JSW(2)).passes_through, rc.Envelope(rc.JpSW(2, 1)).passes_through
        (True, False)
        """
        return self.system.envelope_params is None

    def _params(self) -> np.ndarray:
        own = self.system.envelope_params
        return self.system.params if own is None else np.array(own, dtype=np.float64)

    # the kernel, uniforms and loss flag follow the bounded system
    @property
    def kernel(self) -> Any:
        """The envelope's kernel, or the wrapped monotone system's own."""
        return self.system.kernel if self.passes_through else maps.envelope

    @property
    def uniforms(self) -> int:  # type: ignore[override]
        """Routing uniforms per arrival (as the bounded system)."""
        return self.system.uniforms

    @property
    def has_loss(self) -> bool:  # type: ignore[override]
        """Whether the bounded system loses customers."""
        return self.system.has_loss

    @property
    def fcfs(self) -> bool:  # type: ignore[override]
        """As the bounded system when it is passed through (the envelope of JSW is JSW)."""
        return self.passes_through and self.system.fcfs

    @property
    def bounded_by_service(self) -> bool:  # type: ignore[override]
        """As the bounded system: the envelope of a loss system keeps ``max(w_i, sigma)``."""
        return self.system.bounded_by_service

    @property
    def capacity(self) -> float:
        """As the bounded system (a map of your own may declare its servers' speeds)."""
        return self.system.capacity

    @property
    def capacity_declared(self) -> bool:
        """As the bounded system."""
        return self.system.capacity_declared

    def innovations(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """The bounded system's own routing (or size) draws, so both see the same input."""
        return self.system.innovations(gen, n)

    def check_input(self, input: Any) -> None:
        """As the bounded system."""
        self.system.check_input(input)

    def load(self, input: Any) -> float | None:
        """As the bounded system (redundancy, for one, has no such load)."""
        return self.system.load(input)

    def _check_u(self, u: Any) -> np.ndarray:
        return self.system._check_u(u)

    def __getattr__(self, name: str) -> Any:
        # the bounded system's parameters (p, classes, frame, ...), which its checks read
        if name.startswith("_") or name == "system":
            raise AttributeError(name)
        try:
            return getattr(self.system, name)
        except AttributeError:
            raise AttributeError(f"neither {type(self).__name__} nor the {self.system!r} it "
                                 f"bounds has an attribute {name!r}") from None

    @property
    def joins_by_state(self) -> bool:  # type: ignore[override]
        """As the bounded system when passed through (a map of your own may route by size)."""
        return not self.passes_through or self.system.joins_by_state

    @property
    def heap_policy(self) -> tuple[HeapPolicy, int] | None:
        """As the bounded system when passed through (a monotone map is its own envelope)."""
        return self.system.heap_policy if self.passes_through else None

    @property
    def finds_response(self) -> bool:  # type: ignore[override]
        """As the bounded system when passed through (redundancy's map returns a response)."""
        return self.passes_through and self.system.finds_response

    @property
    def estimates(self) -> tuple[str, ...]:
        """As the bounded system when passed through (redundancy reports response times)."""
        return self.system.estimates if self.passes_through else super().estimates

    @property
    def split(self) -> int:
        """As the bounded system."""
        return self.system.split

    def _blocks(self) -> list[tuple[int, int]]:
        return self.system._blocks()

    def __repr__(self) -> str:
        return f"Envelope({self.system!r})"


@dataclass(frozen=True)
class SplitBound(System):
    """Exogenous-routing monotone bound: a p-server loss system plus JSW on ``S - p`` servers.

    The state is ``w = (u, v)``: ``u = w[:p]`` the sorted loss block, ``v = w[p:]`` the sorted
    JSW block. An arrival joins an idle loss server if there is one, else the least loaded JSW
    server (:ref:`theory-kw-split`: the heavy-traffic splitting of J_{p+1}SW made exact). The loss
    block does not depend on ``v`` (it is the exogenous routing variable), and for a fixed loss
    block the map is monotone in ``v``. ``SplitBound(S, 0)`` is :class:`JSW`.

    Parameters
    ----------
    servers : int
        Total number of servers ``S >= 1``.
    p : int
        Loss servers, ``0 <= p <= S - 1``.

    Examples
    --------
    >>> import recursions as rc
    >>> rc.SplitBound(3, 1).step([0.5, 0.0, 2.0], sigma=1.0, tau=0.5)
    array([0. , 0.5, 1.5])
    """

    p: int = 0
    kernel: ClassVar[Any] = staticmethod(maps.split)
    monotone: ClassVar[bool] = True

    def __post_init__(self) -> None:
        s = check_int(self.servers, "servers", 1)
        object.__setattr__(self, "p", check_int(self.p, "p", 0, s - 1))
        super().__post_init__()

    def _params(self) -> np.ndarray:
        return np.array([float(self.p), 0.0])

    @property
    def split(self) -> int:
        """Length ``p`` of the loss block."""
        return self.p

    def _blocks(self) -> list[tuple[int, int]]:
        return [(0, self.p), (self.p, self.servers)]

    def _block_note(self) -> str:
        return f" within each block (loss block w[:{self.p}], JSW block w[{self.p}:])"
