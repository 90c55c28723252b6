"""Arrival inputs driven by an environment: :class:`Periodic` and :class:`MarkovModulated`.

Unlike renewal input (:mod:`recursions.model._renewal_inputs`), the customers of these inputs
depend on each other through an environment carried from one draw to the next (the *carry* of
the :class:`~recursions.Input` hooks):

* :class:`Periodic` -- a finite ``Omega`` with ``theta`` the cyclic shift: deterministic periodic
  sequences, started at a given or uniformly random phase (the stationary version); the carry is
  the phase.
* :class:`MarkovModulated` -- laws switched by a stationary finite Markov chain on the customer
  index (run backwards in time with the time-reversed chain); the carry is the chain's state,
  moved by the compiled :func:`_markov_path`.

They declare no renewal structure, so the exact samplers and closed forms refuse them; their
:attr:`~recursions.Input.correlation_length` tells the batch-means estimates how long their
dependence lasts. Kept in a module of their own, apart from the base class
(:mod:`recursions.model._inputs`) that they import.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recursions.common._checks import SCALE_MAX, SCALE_MIN
from recursions.common._jit import jit
from recursions.dists import as_law
from recursions.model._inputs import Input

__all__ = ["SHOWN", "MarkovModulated", "Periodic"]

SHOWN = 8
"""The longest period a :class:`Periodic` prints in full; a longer one prints its length."""


@dataclass(frozen=True, repr=False)
class Periodic(Input):
    """Deterministic periodic input: a finite ``Omega`` with ``theta`` the cyclic shift.

    Customer ``n`` has ``sigma[(phase + n) % K]`` and ``tau[(phase + n) % K]``. With
    ``phase=None`` the phase is drawn uniformly from the seed (the stationary version on the
    uniform measure of ``Omega``). A long period (a trace's, :meth:`recursions.Trace.cyclic`)
    is kept as two read-only arrays, and its repr is one short line that ends with a hash of
    the arrays (what a sweep's checkpoint compares).

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
    >>> inp
    Periodic(sigma=(3.0, 0.0, 0.0), tau=(1.0, 1.0, 1.0), phase=0)
    """

    sigma: Any = field(compare=False)
    tau: Any = field(compare=False)
    phase: int | None = None
    _s: np.ndarray = field(init=False, repr=False, compare=False)
    _t: np.ndarray = field(init=False, repr=False, compare=False)
    _digest: str = field(init=False, repr=False)
    """A hash of both arrays: what equality and hashing compare."""

    def __post_init__(self) -> None:
        s = np.array(self.sigma, dtype=np.float64).ravel()
        t = np.array(self.tau, dtype=np.float64).ravel()
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
        s.flags.writeable = False
        t.flags.writeable = False
        h = hashlib.sha256(s.data)  # the arrays' own bytes: no copy
        h.update(b"|")
        h.update(t.data)
        digest = h.hexdigest()[:32]
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "tau", t)
        object.__setattr__(self, "_s", s)
        object.__setattr__(self, "_t", t)
        object.__setattr__(self, "_digest", digest)

    def __repr__(self) -> str:
        if self._s.size <= SHOWN:
            return (f"Periodic(sigma={tuple(self._s.tolist())}, tau={tuple(self._t.tolist())}, "
                    f"phase={self.phase!r})")
        return (f"Periodic(period={self._s.size:,}: mean sigma {self._s.mean():.4g}, mean tau "
                f"{self._t.mean():.4g}, phase={self.phase!r}; #{self._digest[:12]})")

    @property
    def period(self) -> int:
        """Number of customers in one period."""
        return self._s.size

    @property
    def service_bound(self) -> float:
        return float(self._s.max())

    @property
    def correlation_length(self) -> float:
        """One period: the input repeats itself exactly after it."""
        return float(self._s.size)

    @property
    def mean_service(self) -> float:
        return float(self._s.mean())

    @property
    def mean_interarrival(self) -> float:
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
    def finite_variance(self) -> bool:
        laws = (*self.interarrivals, *self.services)
        return bool(all(math.isfinite(d.var) for d in laws))

    def finite_service_moment(self, k: int) -> bool:
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
    def mean_service(self) -> float:
        return float(sum(p * d.mean for p, d in zip(self._pi, self.services, strict=True)))

    @property
    def mean_interarrival(self) -> float:
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

