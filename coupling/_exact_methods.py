"""The exact methods of :func:`coupling.perfect_sample`, an ordered registry.

Each method is an :class:`ExactMethod`: ``refuses(request)`` says why it does not apply to a
system and an input (``None`` when it does), and ``bind(request)`` checks what else it needs
and returns its name and ``run_one(seed) -> (state, customers back, time back)`` for one draw.
:func:`perfect_sample <coupling.perfect_sample>` runs the first method of :data:`METHODS`
that applies; when none does, the error lists each method's reason. ``run_one`` and what it
binds must be picklable (worker processes receive them) and must not change shared state, so
that a draw depends on its seed only, whichever worker runs it.

A new method is one object with these two methods, registered with :func:`register` (in the
order it should be tried).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

import recursions as rc
from coupling._bounding import bounded_method
from coupling._dominated_maps import DominatedMap, show_dominance
from coupling._fcfs_bounds import draw_fcfs, fcfs_sampler
from coupling._horizons import horizons
from coupling._loss_renovation import draw_loss_bounded, draw_loss_poisson
from coupling._propp_wilson import check_upper, draw_monotone
from recursions.common import check_int, child
from recursions.model import is_poisson, is_renewal

__all__ = ["METHODS", "SEARCHES", "ExactMethod", "Request", "choose", "register"]

SEARCHES = 2**32 - 2
"""Child of the root seed feeding the searches behind ``dominated_by=`` and ``upper=``."""

RunOne = Callable[[np.random.SeedSequence], tuple[np.ndarray, int, float]]


@dataclass(frozen=True)
class Request:
    """The arguments of one :func:`coupling.perfect_sample` call, checked.

    Attributes
    ----------
    system, input
        What is sampled.
    upper : numpy.ndarray or None
        The bounding vector given, or the system's own bound ``(b, ..., b)``.
    own_bound : float
        The system's own bound on each coordinate (``inf`` where it declares none).
    given : dict
        ``start_time``, ``cap_time``, ``start_customers``, ``cap_customers`` as passed.
    method : str or None
        The FCFS method asked for.
    bound : recursions.System or None
        The dominating system of ``dominated_by=``.
    dominance_trials : int
        Cases of the searches behind ``dominated_by=`` and ``upper=``.
    root : numpy.random.SeedSequence
        The root seed (the searches take a child of it apart from the draws').
    """

    system: rc.System
    input: rc.Input
    upper: Any
    own_bound: float
    given: dict[str, Any]
    method: str | None
    bound: rc.System | None
    dominance_trials: Any
    root: np.random.SeedSequence

    @property
    def fcfs(self) -> rc.System | None:
        """The FCFS system whose sampler runs: the system itself, or the bound."""
        if self.bound is not None:
            return self.bound
        return self.system if self.system.fcfs else None


class ExactMethod(Protocol):
    """One exact method: when it applies, and its one-draw function."""

    name: str
    """What it samples, for the error listing every method's reason."""

    def refuses(self, req: Request) -> str | None:
        """Why it does not apply to ``req`` (``None``: it does)."""

    def bind(self, req: Request) -> tuple[str, RunOne]:
        """Check what else it needs (``ValueError``); its name and ``run_one``."""


METHODS: list[ExactMethod] = []
"""The registered methods, in the order they are tried."""


def register(method: Any) -> Any:
    """Register an exact method (a class, instantiated here, or an instance), last in order.

    Returns
    -------
    object
        ``method`` unchanged, so that it can decorate a class.
    """
    METHODS.append(method() if isinstance(method, type) else method)
    return method


def choose(req: Request) -> ExactMethod:
    """The first registered method that applies to ``req``; ``ValueError`` listing why not."""
    reasons = []
    for m in METHODS:
        why = m.refuses(req)
        if why is None:
            return m
        reasons.append(f"{m.name}: {why}")
    S = req.system.servers
    raise ValueError(
        f"no exact method for {req.system!r}: perfect_sample handles JSW with renewal input, "
        "loss systems, monotone systems given a bounding vector upper=, and monotone "
        f"systems dominated by JSW (dominated_by=rc.JSW({S})) ({'; '.join(reasons)})"
    )


@register
class Fcfs:
    """FCFS, or a monotone map inside its sandwich: the dominating processes."""

    name = "FCFS"

    def refuses(self, req: Request) -> str | None:
        """Applies to a system declaring ``fcfs``, or given ``dominated_by=``."""
        return None if req.fcfs is not None else "neither FCFS nor dominated_by= given"

    def bind(self, req: Request) -> tuple[str, RunOne]:
        """The dominating process and the draw over it."""
        fcfs, bound, input = req.fcfs, req.bound, req.input
        assert fcfs is not None
        rho = input.mean_service / (fcfs.servers * input.mean_interarrival)
        if not rho < 1:
            what = "the system" if bound is None else f"the bound {bound!r}"
            raise ValueError(f"{what} is not stable (load per server {rho:.4g} >= 1): "
                             "there is no stationary law to sample")
        if not is_renewal(input):
            raise ValueError("exact sampling of JSW (FCFS G/G/S) needs renewal arrivals "
                             f"(Poisson or GI), got {type(input).__name__}")
        method, walks = fcfs_sampler(input, req.method, fcfs.servers)
        t0, tcap = horizons(method, "time", req.given, 8.0 * input.mean_interarrival,
                            1e6 * input.mean_interarrival)
        if bound is not None:
            show_dominance(req.system, bound, req.dominance_trials, child(req.root, SEARCHES))
        return method, functools.partial(
            draw_fcfs, fcfs=fcfs, inp=input, t0=t0, tcap=tcap, bound=walks,
            inside=None if bound is None else functools.partial(DominatedMap, req.system))


@register
class Renovation:
    """Loss systems: renovation from an empty M/G/infinity queue or event (9)."""

    name = "renovation"

    def refuses(self, req: Request) -> str | None:
        """Applies to a non-monotone loss system declaring ``bounded_by_service``."""
        s = req.system
        if s.has_loss and s.bounded_by_service and not s.monotone:
            return None
        return "not a loss system"

    def bind(self, req: Request) -> tuple[str, RunOne]:
        """Poisson arrivals, or services bounded by ``b``."""
        system, input, given = req.system, req.input, req.given
        b = input.service_bound
        if is_poisson(input):
            _, tcap = horizons("renovation (Poisson arrivals)", "time", given,
                               8.0 * input.mean_interarrival, 1e6 * input.mean_interarrival)
            return "renovation", functools.partial(draw_loss_poisson, system=system, inp=input,
                                                   cap=tcap)
        if math.isfinite(b):
            n0, ncap = horizons("renovation (bounded service)", "customers", given, 16, 2**24)
            return "renovation", functools.partial(draw_loss_bounded, system=system, inp=input,
                                                   b=b, n0=n0, cap=ncap)
        law = getattr(input, "service", None)
        raise ValueError("exact sampling of a loss system needs Poisson arrivals or "
                         "bounded service times (renovating event (9)); the service law "
                         f"{law!r} of {type(input).__name__} input has an unbounded "
                         "support")


@register
class Monotone:
    """Propp-Wilson between 0 and a bounding vector."""

    name = "monotone"

    def refuses(self, req: Request) -> str | None:
        """Applies to a monotone system given (or declaring) a bounding vector."""
        if not req.system.monotone:
            return "not declared monotone"
        return None if req.upper is not None else "no bounding vector upper= given"

    def bind(self, req: Request) -> tuple[str, RunOne]:
        """Check ``upper`` (unless it is the system's own bound) and bind the draw."""
        system, own = req.system, req.own_bound
        up = system.check_state(req.upper, "upper")
        if not (math.isfinite(own) and bool(np.all(up >= own))):
            check_upper(system, req.input, up,
                        check_int(req.dominance_trials, "dominance_trials", 1),
                        child(req.root, SEARCHES))
        n0, ncap = horizons("monotone", "customers", req.given, 16, 2**24)
        return "monotone", functools.partial(draw_monotone, system=system, inp=req.input,
                                             upper=up, n0=n0, cap=ncap)


@register
class Bounding:
    """The non-monotone idle-first maps J_{p+1}SW and JIQ: bounding processes."""

    name = "bounding"

    def refuses(self, req: Request) -> str | None:
        """Applies to a non-monotone system without loss that declares an envelope."""
        s = req.system
        if s.envelope_params is not None and not s.monotone and not s.has_loss:
            return None
        return "not an idle-first map with an envelope (JpSW, JIQ)"

    def bind(self, req: Request) -> tuple[str, RunOne]:
        """See :func:`coupling._bounding.bounded_method`."""
        return bounded_method(req.system, req.input, **req.given)
