"""Arrival inputs: the sequence of (service time sigma_n, interarrival time tau_n).

:ref:`theory-kw-srs`: customer ``C_n`` arrives at ``T_n`` with service time ``sigma_n`` and
``tau_n = T_{n+1} - T_n``, on a stationary ergodic space ``(Omega, P, theta)``.

* :class:`Renewal` -- i.i.d. interarrival and service times (G/G inputs).
* :class:`Poisson` -- a renewal input with exponential interarrivals (M/G inputs).
* :class:`Periodic` -- a finite ``Omega`` with ``theta`` the cyclic shift: deterministic periodic
  sequences, started at a given or uniformly random phase (the stationary version).
* :class:`MarkovModulated` -- laws switched by a stationary finite Markov chain on the customer
  index (run backwards in time with the time-reversed chain).
* :class:`PoissonArrivals`, :class:`RenewalArrivals` -- arrivals only, for systems that draw
  each job's work themselves (:class:`~recursions.Redundancy`): their service times are
  placeholders, flagged by :attr:`Input.arrivals_only`, and other systems refuse them.

Every input can be drawn **forward** (:meth:`Input.forward`) or **backward in time**
(:meth:`Input.backward`): the backward draws at time ``-k`` do not depend on the horizon asked
for, as the backward Loynes scheme and coupling from the past require.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeGuard

import numpy as np

from ._jit import jit
from ._memory import require_memory
from ._rng import BLOCK, BlockRng, RngLike, as_seed_sequence, forward_generator
from ._validate import (
    SCALE_MAX,
    SCALE_MIN,
    check_count,
    check_real,
    check_scale,
)
from .dists import Deterministic, Exponential, as_law

__all__ = [
    "BackwardStream",
    "ForwardStream",
    "Input",
    "MarkovModulated",
    "Periodic",
    "Poisson",
    "PoissonArrivals",
    "Renewal",
    "RenewalArrivals",
    "check_input",
    "is_poisson",
    "is_renewal",
]


class Input(ABC):
    """Base class of arrival inputs.

    Subclasses implement three hooks on a *carry* (the environment state at a time boundary:
    ``None`` for i.i.d. inputs, a phase for periodic ones, a Markov state for modulated ones).

    Attributes
    ----------
    arrivals_only : bool
        Whether the input carries arrival times only: its service times are placeholders
        (:class:`PoissonArrivals`, :class:`RenewalArrivals`), for systems that draw each job's
        work themselves. ``System.check_input`` refuses such inputs elsewhere.
    renewal : bool
        Whether the input is renewal input (:class:`Renewal` and its subclasses): i.i.d.
        interarrival and service times with laws ``interarrival`` and ``service``, which the
        exact samplers and the closed forms of ``coupling`` and ``loynes`` need
        (:func:`is_renewal` tells a type checker so too).

    What the samplers need is declared here, as systems declare what they can do:
    :attr:`renewal`, :attr:`poisson`, :attr:`service_bound` and :attr:`period`; no other
    module tests an input's class.
    """

    arrivals_only: ClassVar[bool] = False
    renewal: ClassVar[bool] = False

    @property
    def poisson(self) -> bool:
        """Whether the arrivals are Poisson: renewal input with exponential interarrival times."""
        return False

    @property
    def service_bound(self) -> float:
        """Least ``b`` with ``P(sigma <= b) = 1``: ``inf`` if unbounded (or not known)."""
        return math.inf

    @property
    def period(self) -> int | None:
        """Customers in one period of a periodic input; ``None`` for inputs that are not."""
        return None

    # -- the hooks -------------------------------------------------------------------------
    @abstractmethod
    def _start(self, gen: np.random.Generator) -> Any:
        """Draw the environment at time 0 (its stationary law)."""

    @abstractmethod
    def _forward(self, gens: tuple[np.random.Generator, ...], n: int, carry: Any):
        """Times ``t .. t+n-1`` given the environment ``carry`` at ``t``; returns new carry."""

    def _backward(self, gens: tuple[np.random.Generator, ...], n: int, carry: Any):
        """Times ``t-n .. t-1`` (ascending) given the environment at ``t``; returns it at t-n."""
        return self._forward(gens, n, carry)

    # -- public description ----------------------------------------------------------------
    @property
    @abstractmethod
    def mean_service(self) -> float:
        """Stationary mean service time ``E[sigma]``."""

    @property
    @abstractmethod
    def mean_interarrival(self) -> float:
        """Stationary mean interarrival time ``E[tau]``."""

    @property
    def arrival_rate(self) -> float:
        """Arrival rate ``1 / E[tau]``."""
        return 1.0 / self.mean_interarrival

    @property
    def variability(self) -> float | None:
        """``ca^2 + cs^2``: the squared coefficients of variation of ``tau`` and ``sigma``, summed.

        The variance rate, per arrival and in units of ``E[sigma]^2``, of the work an input
        brings beyond its mean: the one input figure the heavy-traffic diffusion of a queue
        keeps (:meth:`recursions.System.relaxation`). ``None`` for inputs that do not declare
        it (periodic and Markov-modulated input, whose dependence adds to it); ``inf`` when a
        law has an infinite variance.

        Examples
        --------
        >>> import recursions as rc
        >>> round(rc.Poisson(0.9, rc.dists.Deterministic(1.0)).variability, 12)  # M/D
        1.0
        """
        return None

    @property
    def finite_variance(self) -> bool:
        """Whether every interarrival and service law has a finite variance.

        Batch-means standard errors of sums of service times need it: with an infinite
        variance (a tail of index at most 2) they are not valid at any run length.
        """
        return True

    def finite_service_moment(self, k: int) -> bool:
        """Whether every service law has a finite ``k``-th moment (a fixed sequence has).

        The central limit theorems behind the standard errors of mean waits and workloads
        need ``k = 4`` (:meth:`recursions.SimulationResult.interval`).
        """
        return True

    @property
    def correlation_length(self) -> float:
        """Customers over which the input's own dependence decays (1 for i.i.d. input).

        A batch of customers much shorter than this is not nearly independent of the next,
        so estimates from batch means need batches many times longer.
        """
        return 1.0

    @property
    def offered_load(self) -> float:
        """Offered load ``a = E[sigma] / E[tau]`` (in servers)."""
        return self.mean_service / self.mean_interarrival

    # -- streams ---------------------------------------------------------------------------
    def forward(self, seed: np.random.SeedSequence) -> ForwardStream:
        """Open a forward stream (times 0, 1, 2, ...).

        Parameters
        ----------
        seed : numpy.random.SeedSequence
            Seed of this stream.

        Returns
        -------
        ForwardStream
        """
        return ForwardStream(self, seed)

    def backward(self, seed: np.random.SeedSequence) -> BackwardStream:
        """Open a time-indexed backward stream (times -1, -2, ...).

        Parameters
        ----------
        seed : numpy.random.SeedSequence
            Seed of this stream.

        Returns
        -------
        BackwardStream
        """
        return BackwardStream(self, seed)

    def sample(self, n: int, *, rng: RngLike = 1) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` consecutive customers (sigma, tau) forward from time 0.

        Parameters
        ----------
        n : int
            Number of customers.
        rng : int, Generator, SeedSequence or None, default 1
            Seed (``None``: fresh OS entropy, not reproducible).

        Returns
        -------
        sigma, tau : numpy.ndarray
            Service and interarrival times, each of shape ``(n,)``.

        Examples
        --------
        >>> import recursions as rc
        >>> s, t = rc.Periodic(sigma=[1.0, 2.0], tau=[1.5, 1.5], phase=0).sample(3)
        >>> s.tolist()
        [1.0, 2.0, 1.0]
        """
        n = check_count(n, "n", 0)
        require_memory(40.0 * n, f"sampling n={n} customers of {type(self).__name__}",
                       "use a smaller n")
        return self.forward(as_seed_sequence(rng)).next(n)


class ForwardStream:
    """Sequential draws of an input from time 0 on; chunking does not change the numbers.

    Parameters
    ----------
    inp : Input
        The input.
    seed : numpy.random.SeedSequence
        Its seed.
    """

    def __init__(self, inp: Input, seed: np.random.SeedSequence) -> None:
        self._inp = inp
        self._gens = (forward_generator(seed, 0), forward_generator(seed, 1),
                      forward_generator(seed, 2))
        self._carry = inp._start(forward_generator(seed, 3))

    @property
    def generators(self) -> tuple[np.random.Generator, ...]:
        """The stream's generators (service, interarrival, environment), shared, not copied.

        A renewal input draws ``sigma`` from the first and ``tau`` from the second, so a
        kernel drawing from them one customer at a time continues this very stream.
        """
        return self._gens

    def next(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the next ``n`` (sigma, tau) pairs as two float64 arrays.

        Parameters
        ----------
        n : int
            How many customers.

        Returns
        -------
        sigma, tau : numpy.ndarray
        """
        sigma, tau, self._carry = self._inp._forward(self._gens, n, self._carry)
        return sigma, tau


class BackwardStream:
    """Time-indexed draws of an input for negative times.

    Block ``b`` holds times ``-(b+1)B .. -bB-1`` (``B`` = :data:`recursions._rng.BLOCK`),
    returned in ascending time order. It is generated from a Philox generator keyed by the
    seed with counter ``b``, and from the environment at time ``-bB`` (for modulated inputs
    the blocks are chained backwards with the time-reversed chain; the chain's boundary states
    are cached). The same seed gives the same block whatever else was asked before.

    Parameters
    ----------
    inp : Input
        The input.
    seed : numpy.random.SeedSequence
        Its seed.
    """

    def __init__(self, inp: Input, seed: np.random.SeedSequence) -> None:
        self._inp = inp
        self._rngs = (BlockRng(seed, 0), BlockRng(seed, 1), BlockRng(seed, 2))
        self._carries = [inp._start(BlockRng(seed, 3).generator(0))]
        self._last: tuple[int, Any] | None = None  # the latest block drawn, and its draw

    def block(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """Draws for block ``b`` (times ``-(b+1)B .. -bB-1``, ascending).

        Parameters
        ----------
        b : int
            Block index, ``b >= 0``.

        Returns
        -------
        sigma, tau : numpy.ndarray
            Each of length ``B``.
        """
        if b < 0:
            raise ValueError(f"block index must be >= 0, got {b}")
        while len(self._carries) <= b:  # chain boundary states back to block b
            k = len(self._carries) - 1
            self._carries.append(self._drawn(k)[2])
        if self._last is not None and self._last[0] == b:  # asked again: fresh copies
            sig, tau = self._last[1][:2]
            return sig.copy(), tau.copy()
        return self._drawn(b)[:2]

    def _drawn(self, b: int):
        """``_draw(b)``, kept for the next block's carry (blocks asked in order draw once)."""
        if self._last is None or self._last[0] != b:
            self._last = (b, self._draw(b))
        return self._last[1]

    def _draw(self, b: int):
        gens = tuple(r.generator(b) for r in self._rngs)
        return self._inp._backward(gens, BLOCK, self._carries[b])

    def window(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Draws for times ``-n .. -1`` in ascending order.

        Parameters
        ----------
        n : int
            Horizon.

        Returns
        -------
        sigma, tau : numpy.ndarray
            Each of length ``n``; entry ``i`` belongs to time ``-n + i``.
        """
        nblocks = -(-n // BLOCK)
        parts = [self.block(b) for b in range(nblocks - 1, -1, -1)]
        sigma = np.concatenate([p[0] for p in parts])[-n:] if n else np.empty(0)
        tau = np.concatenate([p[1] for p in parts])[-n:] if n else np.empty(0)
        return sigma, tau


# ---------------------------------------------------------------------------------------------
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
    def poisson(self) -> bool:  # noqa: D102
        return self.interarrival.exponential_rate is not None

    @property
    def service_bound(self) -> float:  # noqa: D102
        return float(self.service.support_max)

    @property
    def finite_variance(self) -> bool:  # noqa: D102
        return bool(math.isfinite(self.service.var) and math.isfinite(self.interarrival.var))

    @property
    def variability(self) -> float | None:  # noqa: D102
        return float(self.interarrival.scv + self.service.scv)

    def finite_service_moment(self, k: int) -> bool:  # noqa: D102
        return bool(self.service.finite_moment(k))

    @property
    def mean_service(self) -> float:  # noqa: D102
        return float(self.service.mean)

    @property
    def mean_interarrival(self) -> float:  # noqa: D102
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
    >>> from recursions.inputs import PoissonArrivals
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
    >>> from recursions.inputs import RenewalArrivals
    >>> inp = RenewalArrivals(rc.dists.Deterministic(0.5))
    >>> inp.arrivals_only, inp.mean_interarrival
    (True, 0.5)
    """

    arrivals_only: ClassVar[bool] = True

    def __init__(self, interarrival: Any, work_scale: float = 1.0) -> None:
        super().__init__(interarrival, Deterministic(check_scale(work_scale, "work_scale")))

    def __repr__(self) -> str:
        return f"RenewalArrivals(interarrival={self.interarrival!r})"


@dataclass(frozen=True)
class Periodic(Input):
    """Deterministic periodic input: a finite ``Omega`` with ``theta`` the cyclic shift.

    Customer ``n`` has ``sigma[(phase + n) % K]`` and ``tau[(phase + n) % K]``. With
    ``phase=None`` the phase is drawn uniformly from the seed (the stationary version on the
    uniform measure of ``Omega``).

    Parameters
    ----------
    sigma, tau : sequence of float
        One period of service and interarrival times (equal lengths ``K``; ``sigma >= 0``,
        ``tau >= 0``, mean of ``tau`` > 0).
    phase : int or None
        Index of the customer at time 0.

    Examples
    --------
    >>> import recursions as rc
    >>> inp = rc.Periodic(sigma=[3.0, 0.0, 0.0], tau=[1.0, 1.0, 1.0], phase=0)
    >>> inp.mean_service, inp.mean_interarrival
    (1.0, 1.0)
    """

    sigma: Any
    tau: Any
    phase: int | None = None
    _s: np.ndarray = field(init=False, repr=False, compare=False)
    _t: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        s = np.asarray(self.sigma, dtype=np.float64).ravel()
        t = np.asarray(self.tau, dtype=np.float64).ravel()
        if s.size == 0 or s.size != t.size:
            raise ValueError(
                f"sigma and tau must be non-empty and of equal length, got {s.size} and {t.size}"
            )
        for name, a in (("sigma", s), ("tau", t)):
            if not np.all(np.isfinite(a)) or np.any(a < 0):
                raise ValueError(f"{name} must hold finite numbers >= 0")
        for name, a in (("tau", t), ("sigma", s)):
            if a.mean() <= 0:
                raise ValueError(f"{name} must have a positive mean")
            if a.max() > SCALE_MAX or a.mean() < SCALE_MIN:
                raise ValueError(
                    f"{name} must hold times at most {SCALE_MAX:g} with a mean at least "
                    f"{SCALE_MIN:g} (change the time unit), got max {a.max()!r} and mean "
                    f"{a.mean()!r}")
        if self.phase is not None:
            if isinstance(self.phase, bool) or not isinstance(self.phase, (int, np.integer)):
                raise TypeError(f"phase must be an integer or None, got {self.phase!r}")
            if not 0 <= self.phase < s.size:
                raise ValueError(f"phase must be in [0, {s.size - 1}], got {self.phase}")
        object.__setattr__(self, "sigma", tuple(s.tolist()))
        object.__setattr__(self, "tau", tuple(t.tolist()))
        object.__setattr__(self, "_s", s)
        object.__setattr__(self, "_t", t)

    @property
    def period(self) -> int:
        """Number of customers in one period."""
        return self._s.size

    @property
    def service_bound(self) -> float:  # noqa: D102
        return float(max(self.sigma))

    @property
    def correlation_length(self) -> float:
        """One period: the input repeats itself exactly after it."""
        return float(self._s.size)

    @property
    def mean_service(self) -> float:  # noqa: D102
        return float(self._s.mean())

    @property
    def mean_interarrival(self) -> float:  # noqa: D102
        return float(self._t.mean())

    def _start(self, gen):
        return int(self.phase) if self.phase is not None else int(gen.integers(self.period))

    def _forward(self, gens, n, carry):
        idx = (carry + np.arange(n)) % self.period
        return self._s[idx], self._t[idx], int((carry + n) % self.period)

    def _backward(self, gens, n, carry):
        start = (carry - n) % self.period
        idx = (start + np.arange(n)) % self.period
        return self._s[idx], self._t[idx], int(start)


@jit
def _markov_path(cum: np.ndarray, start: int, u: np.ndarray, out: np.ndarray) -> int:
    """Run a chain with cumulative transition rows ``cum`` from ``start`` using uniforms ``u``.

    ``out[i]`` is the state after ``i + 1`` transitions; returns the last state.
    """
    x = start
    k = cum.shape[1]
    for i in range(u.size):
        j = 0
        while j < k - 1 and u[i] >= cum[x, j]:
            j += 1
        x = j
        out[i] = x
    return x


@dataclass(frozen=True)
class MarkovModulated(Input):
    """Input whose laws are switched by a stationary finite Markov chain on the customer index.

    The environment ``J_n`` is a Markov chain with transition matrix ``transition``; customer
    ``n`` has ``tau_n ~ interarrivals[J_n]`` and ``sigma_n ~ services[J_n]``, conditionally
    independent given the environment. At time 0 the chain is in its stationary law; backward
    draws use the time-reversed chain ``P^_{ij} = pi_j P_{ji} / pi_i``.

    Parameters
    ----------
    transition : array_like, shape (K, K)
        Irreducible stochastic matrix.
    interarrivals, services : sequence of laws, length K
        Laws in each environment state (``recursions.dists`` laws or frozen scipy.stats).

    Examples
    --------
    >>> import recursions as rc
    >>> E = rc.dists.Exponential
    >>> inp = rc.MarkovModulated([[0.9, 0.1], [0.2, 0.8]], [E(2.0), E(0.5)], [E(1.0), E(1.0)])
    >>> [round(float(x), 4) for x in inp.stationary]
    [0.6667, 0.3333]
    """

    transition: Any
    interarrivals: Sequence[Any]
    services: Sequence[Any]
    _P: np.ndarray = field(init=False, repr=False, compare=False)
    _pi: np.ndarray = field(init=False, repr=False, compare=False)
    _cum: np.ndarray = field(init=False, repr=False, compare=False)
    _cum_rev: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        P = np.asarray(self.transition, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
            raise ValueError(f"transition must be a square matrix, got shape {P.shape}")
        if not np.all(np.isfinite(P)) or np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0):
            raise ValueError("transition must have non-negative rows summing to 1")
        k = P.shape[0]
        if len(self.interarrivals) != k or len(self.services) != k:
            raise ValueError(
                f"interarrivals and services must each have {k} laws (one per state), got "
                f"{len(self.interarrivals)} and {len(self.services)}"
            )
        ia = tuple(as_law(d, f"interarrivals[{i}]") for i, d in enumerate(self.interarrivals))
        sv = tuple(as_law(d, f"services[{i}]") for i, d in enumerate(self.services))
        # stationary law: solve pi (P - I) = 0, sum pi = 1
        A = np.vstack([P.T - np.eye(k), np.ones(k)])
        b = np.zeros(k + 1)
        b[-1] = 1.0
        pi = np.linalg.lstsq(A, b, rcond=None)[0]
        # an absolute tolerance: numpy's default (relative to the largest singular value, of
        # order eps) called a slow two-state chain reducible when its null singular value was
        # 9e-18 against a threshold of 8.9e-18 (numpy 2.4)
        unique = np.linalg.matrix_rank(P.T - np.eye(k), tol=1e-12) == k - 1
        if not unique or np.any(pi <= 1e-12) or not np.allclose(pi @ P, pi, atol=1e-9):
            raise ValueError("transition must be irreducible (a unique positive stationary law)")
        pi = pi / pi.sum()
        rev = (P.T * pi[None, :]) / pi[:, None]
        rev = rev / rev.sum(axis=1, keepdims=True)
        object.__setattr__(self, "transition", P.tolist())
        object.__setattr__(self, "interarrivals", ia)
        object.__setattr__(self, "services", sv)
        object.__setattr__(self, "_P", P)
        object.__setattr__(self, "_pi", pi)
        object.__setattr__(self, "_cum", np.cumsum(P, axis=1))
        object.__setattr__(self, "_cum_rev", np.cumsum(rev, axis=1))

    @property
    def stationary(self) -> np.ndarray:
        """Stationary law ``pi`` of the environment chain."""
        return self._pi.copy()

    @property
    def finite_variance(self) -> bool:  # noqa: D102
        laws = (*self.interarrivals, *self.services)
        return bool(all(math.isfinite(d.var) for d in laws))

    def finite_service_moment(self, k: int) -> bool:  # noqa: D102
        return bool(all(d.finite_moment(k) for d in self.services))

    @property
    def correlation_length(self) -> float:
        """The environment's integrated autocorrelation time, in customers (at least 1).

        ``max(1, max Re((1 + l) / (1 - l)))`` over the eigenvalues ``l != 1`` of the chain:
        the integrated time of a function along the eigenvector of ``l`` (exact for
        reversible chains). A slow chain has ``l`` near 1 and a long time; one that
        alternates has ``l`` near -1, whose oscillating correlations cancel, and a short one.

        Examples
        --------
        >>> import recursions as rc
        >>> E = rc.dists.Exponential
        >>> slow = rc.MarkovModulated([[0.99, 0.01], [0.01, 0.99]], [E(1.0)] * 2, [E(1.0)] * 2)
        >>> round(slow.correlation_length, 6)   # eigenvalues 1 and 0.98
        99.0
        >>> flip = rc.MarkovModulated([[0.0, 1.0], [1.0, 0.0]], [E(1.0)] * 2, [E(1.0)] * 2)
        >>> flip.correlation_length   # eigenvalue -1: it alternates exactly
        1.0
        """
        lam = np.linalg.eigvals(self._P)
        lam = np.delete(lam, int(np.argmin(np.abs(lam - 1.0))))  # the eigenvalue 1 itself
        if lam.size == 0:
            return 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            times = np.real((1.0 + lam) / (1.0 - lam))
        if np.any(np.abs(1.0 - lam) < 1e-12):  # a second eigenvalue 1: not irreducible
            return math.inf
        return float(max(1.0, times.max()))

    @property
    def mean_service(self) -> float:  # noqa: D102
        return float(sum(p * d.mean for p, d in zip(self._pi, self.services, strict=True)))

    @property
    def mean_interarrival(self) -> float:  # noqa: D102
        return float(sum(p * d.mean for p, d in zip(self._pi, self.interarrivals, strict=True)))

    def _start(self, gen):
        return int(gen.choice(self._pi.size, p=self._pi))

    def _fill(self, gens, states):
        n = states.size
        sigma = np.empty(n)
        tau = np.empty(n)
        for k in range(self._pi.size):
            idx = np.flatnonzero(states == k)
            sigma[idx] = self.services[k].sample(gens[0], idx.size)
            tau[idx] = self.interarrivals[k].sample(gens[1], idx.size)
        return sigma, tau

    def _forward(self, gens, n, carry):
        # states[0] = carry = J_t, states[i] = J_{t+i}; the new carry is J_{t+n}
        path = np.empty(n, dtype=np.int64)
        last = _markov_path(self._cum, carry, gens[2].random(n), path)
        states = np.concatenate(([carry], path[:-1])) if n else path
        sigma, tau = self._fill(gens, states)
        return sigma, tau, int(last) if n else carry

    def _backward(self, gens, n, carry):
        # path[i] = J_{t-1-i} from the reversed chain; ascending order is path reversed
        path = np.empty(n, dtype=np.int64)
        _markov_path(self._cum_rev, carry, gens[2].random(n), path)
        states = path[::-1].copy()
        sigma, tau = self._fill(gens, states)
        return sigma, tau, int(states[0]) if n else carry


def check_input(value: Any, name: str = "input") -> Any:
    """``value`` if it is a :class:`recursions.Input`, else a ``TypeError`` naming it.

    Parameters
    ----------
    value : Any
        What was given.
    name : str, default "input"
        The parameter's name.

    Returns
    -------
    recursions.Input

    Examples
    --------
    >>> import recursions as rc
    >>> check_input(rc.JSW(2))
    Traceback (most recent call last):
    ...
    TypeError: input must be a recursions input, got JSW
    """
    if not isinstance(value, Input):
        raise TypeError(f"{name} must be a recursions input, got {type(value).__name__}")
    return value


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
