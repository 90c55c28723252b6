"""Arrival inputs: the base class :class:`Input`, its streams and :func:`check_input`.

:ref:`theory-kw-srs`: customer ``C_n`` arrives at ``T_n`` with service time ``sigma_n`` and
``tau_n = T_{n+1} - T_n``, on a stationary ergodic space ``(Omega, P, theta)``. An input is the
law of the sequence ``(sigma_n, tau_n)``; the inputs themselves live beside this module:

* :mod:`recursions.model._renewal_inputs` -- i.i.d. inputs: ``Renewal`` (G/G), ``Poisson``
  (M/G), the arrivals-only ``PoissonArrivals`` and ``RenewalArrivals`` (for
  :class:`~recursions.Redundancy`, which draws each job's work itself), and the type tests
  ``is_renewal`` and ``is_poisson``;
* :mod:`recursions.model._environment_inputs` -- inputs driven by an environment carried from
  one draw to the next: ``Periodic`` (a phase) and ``MarkovModulated`` (a Markov state).

This module holds what they share: the hooks a subclass implements, the descriptions the
samplers read (:attr:`Input.renewal`, :attr:`Input.poisson`, :attr:`Input.service_bound`,
:attr:`Input.period`, ...), and the two streams. Every input can be drawn **forward**
(:meth:`Input.forward`) or **backward in time** (:meth:`Input.backward`): the backward draws at
time ``-k`` do not depend on the horizon asked for, as the backward Loynes scheme and coupling
from the past require. The inputs import this module, never the other way round, so that a
system or an engine that only checks or streams an input needs no concrete input class.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from recursions.common._checks import check_count
from recursions.common._memory import require_memory
from recursions.common._rng import BLOCK, BlockRng, RngLike, as_seed_sequence, forward_generator

__all__ = ["BackwardStream", "ForwardStream", "Input", "check_input"]


class Input(ABC):
    """Base class of arrival inputs.

    Subclasses implement three hooks on a *carry* (the environment state at a time boundary:
    ``None`` for i.i.d. inputs, a phase for periodic ones, a Markov state for modulated ones).

    Attributes
    ----------
    arrivals_only : bool
        Whether the input carries arrival times only: its service times are placeholders
        (:class:`~recursions.model._renewal_inputs.PoissonArrivals`,
        :class:`~recursions.model._renewal_inputs.RenewalArrivals`), for systems that draw
        each job's work themselves. ``System.check_input`` refuses such inputs elsewhere.
    renewal : bool
        Whether the input is renewal input (:class:`~recursions.Renewal` and its
        subclasses): i.i.d. interarrival and service times with laws ``interarrival`` and
        ``service``, which the exact samplers and the closed forms of ``coupling`` and
        ``loynes`` need (:func:`~recursions.model.is_renewal` tells a type checker so too).

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

    @property
    def environment(self) -> Any:
        """The environment of the next customer: the carry of the hooks.

        ``None`` for i.i.d. input, the phase of the clock for :class:`~recursions.TimeVarying`,
        a Markov state, ...
        """
        return self._carry

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

    Block ``b`` holds times ``-(b+1)B .. -bB-1`` (``B`` = :data:`recursions.common._rng.BLOCK`),
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
        if getattr(value, "is_trace", False):
            raise TypeError(f"{name} must be a recursions input, got a Trace: a trace is "
                            "replayed by rc.simulate(system, trace); its stationary version "
                            "is trace.cyclic()")
        raise TypeError(f"{name} must be a recursions input, got {type(value).__name__}")
    return value

