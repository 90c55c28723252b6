"""Renewal arrival inputs: i.i.d. interarrival and service times (G/G and M/G inputs).

* :class:`Renewal` -- i.i.d. interarrival and service times (G/G inputs).
* :class:`Poisson` -- a renewal input with exponential interarrivals (M/G inputs).
* :class:`PoissonArrivals`, :class:`RenewalArrivals` -- arrivals only, for systems that draw
  each job's work themselves (:class:`~recursions.Redundancy`): their service times are
  placeholders, flagged by :attr:`~recursions.Input.arrivals_only`, and other systems refuse
  them.
* :func:`is_renewal`, :func:`is_poisson` -- what an input declares, as type guards.

These carry no environment (their carry is ``None``): each draw is a fresh i.i.d. block, which
is what the exact samplers and the closed forms of ``coupling`` and ``loynes`` need. They are
kept apart from the base class (:mod:`recursions.model._inputs`) and from the inputs with an
environment (:mod:`recursions.model._environment_inputs`), so that the code that asks for
renewal input imports just this; the type guards live here because they narrow to
:class:`Renewal`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, TypeGuard

import numpy as np

from recursions.common._checks import SCALE_MAX, SCALE_MIN, check_real, check_scale
from recursions.dists import Deterministic, Exponential, as_law
from recursions.model._inputs import Input

__all__ = [
    "Poisson",
    "PoissonArrivals",
    "Renewal",
    "RenewalArrivals",
    "is_poisson",
    "is_renewal",
]


@dataclass(frozen=True)
class Renewal(Input):
    """Renewal input: i.i.d. interarrival times and i.i.d. service times (G/G).

    Parameters
    ----------
    interarrival : Law or frozen scipy.stats distribution
        Law of ``tau``.
    service : Law or frozen scipy.stats distribution
        Law of ``sigma``.

    Examples
    --------
    >>> import scipy.stats, recursions as rc
    >>> inp = rc.Renewal(scipy.stats.gamma(2, scale=0.5), rc.dists.Deterministic(0.8))
    >>> round(inp.offered_load, 3)
    0.8
    """

    interarrival: Any
    service: Any
    renewal: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "interarrival", as_law(self.interarrival, "interarrival"))
        object.__setattr__(self, "service", as_law(self.service, "service"))

    @property
    def poisson(self) -> bool:
        return self.interarrival.exponential_rate is not None

    @property
    def service_bound(self) -> float:
        return float(self.service.support_max)

    @property
    def finite_variance(self) -> bool:
        return bool(math.isfinite(self.service.var) and math.isfinite(self.interarrival.var))

    @property
    def variability(self) -> float | None:
        return float(self.interarrival.scv + self.service.scv)

    def finite_service_moment(self, k: int) -> bool:
        return bool(self.service.finite_moment(k))

    @property
    def mean_service(self) -> float:
        return float(self.service.mean)

    @property
    def mean_interarrival(self) -> float:
        return float(self.interarrival.mean)

    def _start(self, gen):
        return None

    def _forward(self, gens, n, carry):
        sigma = np.asarray(self.service.sample(gens[0], n), dtype=np.float64)
        tau = np.asarray(self.interarrival.sample(gens[1], n), dtype=np.float64)
        return sigma, tau, None


class Poisson(Renewal):
    """Poisson arrivals of rate ``rate`` with i.i.d. service times (M/G).

    Parameters
    ----------
    rate : float
        Arrival rate ``lambda > 0``.
    service : Law or frozen scipy.stats distribution
        Law of ``sigma``.

    Examples
    --------
    >>> import recursions as rc
    >>> inp = rc.Poisson(rate=1.5, service=rc.dists.Exponential(1.0))
    >>> inp.offered_load
    1.5
    """

    rate: float
    """The arrival rate ``lambda``."""

    def __init__(self, rate: float, service: Any) -> None:
        rate = check_real(rate, "rate", 1.0 / SCALE_MAX, 1.0 / SCALE_MIN)  # mean 1 / rate
        super().__init__(Exponential(rate), service)
        object.__setattr__(self, "rate", rate)

    def __repr__(self) -> str:
        return f"Poisson(rate={self.rate!r}, service={self.service!r})"


class PoissonArrivals(Poisson):
    """Poisson arrivals only, for a system that draws each job's work (``Redundancy.poisson``).

    The service times are a placeholder, deterministic ``work_scale``: the system ignores
    them, and ``mean_service`` only sets :func:`recursions.simulate`'s default profile grid.
    :attr:`arrivals_only` is true, so systems that use service times refuse this input.

    Parameters
    ----------
    rate : float
        Arrival rate ``lambda > 0``.
    work_scale : float, default 1.0
        Typical work per job (the placeholder service time), ``> 0``.

    Examples
    --------
    >>> from recursions.model._renewal_inputs import PoissonArrivals
    >>> inp = PoissonArrivals(2.0, work_scale=0.5)
    >>> inp, inp.arrivals_only, inp.arrival_rate
    (PoissonArrivals(rate=2.0), True, 2.0)
    """

    arrivals_only: ClassVar[bool] = True

    def __init__(self, rate: float, work_scale: float = 1.0) -> None:
        super().__init__(rate, Deterministic(check_scale(work_scale, "work_scale")))

    def __repr__(self) -> str:
        return f"PoissonArrivals(rate={self.rate!r})"


class RenewalArrivals(Renewal):
    """Renewal arrivals only, for a system that draws each job's work (``Redundancy.renewal``).

    I.i.d. interarrival times from ``interarrival``; the service times are a placeholder,
    deterministic ``work_scale`` (see :class:`PoissonArrivals`).

    Parameters
    ----------
    interarrival : Law or frozen scipy.stats distribution
        Law of ``tau``.
    work_scale : float, default 1.0
        Typical work per job (the placeholder service time), ``> 0``.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.model._renewal_inputs import RenewalArrivals
    >>> inp = RenewalArrivals(rc.dists.Deterministic(0.5))
    >>> inp.arrivals_only, inp.mean_interarrival
    (True, 0.5)
    """

    arrivals_only: ClassVar[bool] = True

    def __init__(self, interarrival: Any, work_scale: float = 1.0) -> None:
        super().__init__(interarrival, Deterministic(check_scale(work_scale, "work_scale")))

    def __repr__(self) -> str:
        return f"RenewalArrivals(interarrival={self.interarrival!r})"



def is_renewal(inp: Input) -> TypeGuard[Renewal]:
    """Whether ``inp`` declares renewal input (:attr:`Input.renewal`), narrowing its type.

    Examples
    --------
    >>> import recursions as rc
    >>> is_renewal(rc.Poisson(1.0, rc.dists.Exponential(1.0)))
    True
    >>> is_renewal(rc.Periodic([1.0], [2.0]))
    False
    """
    return inp.renewal


def is_poisson(inp: Input) -> TypeGuard[Renewal]:
    """Whether ``inp`` declares Poisson arrivals (:attr:`Input.poisson`), narrowing its type.

    Examples
    --------
    >>> import recursions as rc
    >>> is_poisson(rc.Renewal(rc.dists.Exponential(2.0), rc.dists.Deterministic(0.3)))
    True
    >>> is_poisson(rc.Renewal(rc.dists.Deterministic(0.5), rc.dists.Exponential(1.0)))
    False
    """
    return inp.renewal and inp.poisson
