"""Service and interarrival laws for the queue recursions.

Every law is an immutable (frozen dataclass) subclass of :class:`Law` and offers what the
simulators and the analytic formulas need:

* ``mean`` (finite and > 0: laws with an infinite or zero mean are rejected at construction),
  ``var`` (may be ``inf``) and ``scv = var / mean**2``;
* ``sample(rng, size)``: vectorised draws from the given :class:`numpy.random.Generator` only;
* ``sf(x) = P(X > x)`` and ``cdf(x) = 1 - sf(x)``;
* ``integrated_sf(w) = E[(X - w)^+]``, the integral of ``sf`` over ``[w, inf)``, and
  ``equilibrium_sf(w) = integrated_sf(w) / mean``, the tail of the stationary residual-life
  (equilibrium) law.

The laws, all with closed-form ``sf`` and ``integrated_sf``:

* :class:`Exponential` ``(rate)``: mean ``1 / rate``.
* :class:`Deterministic` ``(value)``: the constant ``value``.
* :class:`Erlang` ``(k, rate)``: ``k`` exponential phases of rate ``rate``; mean ``k / rate``.
* :class:`HyperExponential` ``(probs, rates)``: a mixture of exponentials; also
  :meth:`HyperExponential.balanced` ``(mean, scv)``.
* :class:`Coxian` ``(rates, probs)``: phases in series, leaving after phase ``m`` with
  probability ``1 - probs[m]``; also :meth:`Coxian.normalised` (rescaled to mean 1).
* :class:`LogNormal` ``(mean, scv)``: parametrised by its mean and squared coefficient of
  variation.
* :class:`Lomax` ``(shape, scale)``: Pareto type II, ``sf(x) = (1 + x / scale)**-shape``; needs
  ``shape > 1``.
* :class:`Uniform` ``(low, high)``: uniform on ``[low, high]`` with ``0 <= low < high``.
* :class:`Empirical` ``(values, weights=None)``: a discrete law on given non-negative values.
* :class:`ScipyLaw` ``(dist)``: a frozen :mod:`scipy.stats` distribution supported on
  ``[0, inf)``; ``integrated_sf`` is computed numerically.

:func:`as_law` turns the ``service=`` / ``arrival=`` argument of the public API into a
:class:`Law` (laws pass through, frozen scipy distributions are wrapped).
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray


class _LazyModule:
    """Import a scipy submodule on first use (``import recursions`` stays fast)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self._name), attr)


integrate = _LazyModule("scipy.integrate")
linalg = _LazyModule("scipy.linalg")
special = _LazyModule("scipy.special")
stats = _LazyModule("scipy.stats")


def _is_frozen_scipy(obj: Any) -> bool:
    if not type(obj).__module__.startswith("scipy.stats"):
        return False
    from scipy.stats._distn_infrastructure import rv_frozen

    return isinstance(obj, rv_frozen)

__all__ = [
    "Coxian",
    "Deterministic",
    "Empirical",
    "Erlang",
    "Exponential",
    "HyperExponential",
    "Law",
    "LogNormal",
    "Lomax",
    "ScipyLaw",
    "Uniform",
    "as_law",
]

FloatArray = NDArray[np.float64]

#: Tolerance on ``sum(probs) == 1`` before the probabilities are normalised.
PROB_SUM_TOL = 1e-9


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _real(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise ``TypeError`` if it is not a real number."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def _positive(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    x = _real(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {x!r}")
    return x


def _vector(name: str, values: Any) -> FloatArray:
    """Return a fresh 1-D float64 copy of ``values`` (which may be empty)."""
    if isinstance(values, (str, bytes)) or np.ndim(values) == 0:
        raise TypeError(
            f"{name} must be a 1-D sequence of real numbers, got {type(values).__name__}"
        )
    try:
        arr = np.array(values, dtype=np.float64, copy=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be a 1-D sequence of real numbers, got {type(values).__name__}"
        ) from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _check_mean(owner: str, mean: float) -> None:
    """Reject a law whose mean is infinite, NaN or not > 0."""
    if not (math.isfinite(mean) and mean > 0):
        raise ValueError(
            f"{owner} must have a finite mean > 0 (infinite mean or zero mean not allowed), "
            f"got mean {mean!r}"
        )


def _check_rng(rng: Any) -> None:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )


def _check_size(size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"size must be an integer >= 0, got {type(size).__name__}")
    n = int(size)
    if n < 0:
        raise ValueError(f"size must be an integer >= 0, got {n}")
    return n


# --------------------------------------------------------------------------------------------
# base class
# --------------------------------------------------------------------------------------------


class Law(ABC):
    """Base class of the service and interarrival laws: a law on ``[0, inf)``.

    Subclasses provide ``mean`` (a property or a field), the ``var`` property and the private
    kernels ``_sample``, ``_sf`` and ``_integrated_sf``; the public methods here validate and
    shape the arguments (``_sf`` and ``_integrated_sf`` only ever see finite points ``>= 0``).

    Attributes
    ----------
    mean : float
        The mean, finite and > 0.
    var : float
        The variance (may be ``inf``).
    scv : float
        The squared coefficient of variation ``var / mean**2`` (may be ``inf``).

    Examples
    --------
    >>> from recursions.dists import Exponential, Law
    >>> law = Exponential(rate=2.0)
    >>> isinstance(law, Law), law.mean, law.var, law.scv
    (True, 0.5, 0.25, 1.0)
    """

    mean: float

    @property
    @abstractmethod
    def var(self) -> float:
        """Variance of the law (may be ``inf``)."""

    @cached_property
    def scv(self) -> float:
        """Squared coefficient of variation ``var / mean**2`` (may be ``inf``).

        Examples
        --------
        >>> from recursions.dists import Erlang
        >>> Erlang(4, rate=2.0).scv
        0.25
        """
        return float(self.var) / float(self.mean) ** 2

    @abstractmethod
    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        """Draw ``size`` variates (arguments already validated)."""

    @abstractmethod
    def _sf(self, x: FloatArray) -> FloatArray:
        """Survival function on a 1-D array of finite points ``>= 0``."""

    @abstractmethod
    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        """``E[(X - w)^+]`` on a 1-D array of finite points ``>= 0``."""

    def sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        """Draw independent variates.

        Parameters
        ----------
        rng : numpy.random.Generator
            The only source of randomness used.
        size : int
            Number of variates, ``>= 0``.

        Returns
        -------
        numpy.ndarray
            float64 array of shape ``(size,)`` with non-negative entries.

        Raises
        ------
        TypeError
            If ``rng`` is not a :class:`numpy.random.Generator` or ``size`` not an integer.

        Examples
        --------
        >>> import numpy as np
        >>> from recursions.dists import Exponential
        >>> x = Exponential(2.0).sample(np.random.default_rng(1), 5)
        >>> x.shape, x.dtype, bool((x >= 0).all())
        ((5,), dtype('float64'), True)
        """
        _check_rng(rng)
        n = _check_size(size)
        out = np.asarray(self._sample(rng, n), dtype=np.float64)
        return out.reshape(n)

    def sf(self, x: ArrayLike) -> FloatArray:
        """Survival function ``P(X > x)``.

        Parameters
        ----------
        x : array_like
            Points (any real value; ``sf`` is 1 below 0, ``nan`` at ``nan``).

        Returns
        -------
        numpy.ndarray
            Array of the shape of ``numpy.asarray(x)`` (0-d for a scalar).

        Examples
        --------
        >>> from recursions.dists import Deterministic
        >>> Deterministic(2.0).sf([-1.0, 1.0, 2.0, 3.0])
        array([1., 1., 0., 0.])
        """
        xa = np.asarray(x, dtype=np.float64)
        flat = xa.reshape(-1)
        out = np.full(flat.shape, np.nan)
        inside = np.isfinite(flat) & (flat >= 0)
        if inside.any():
            out[inside] = self._sf(flat[inside])
        out[flat < 0] = 1.0
        out[flat == np.inf] = 0.0
        return np.clip(out, 0.0, 1.0).reshape(xa.shape)

    def cdf(self, x: ArrayLike) -> FloatArray:
        """Distribution function ``P(X <= x) = 1 - sf(x)``.

        Parameters
        ----------
        x : array_like
            Points.

        Returns
        -------
        numpy.ndarray
            Array of the shape of ``numpy.asarray(x)`` (0-d for a scalar).

        Examples
        --------
        >>> from recursions.dists import Uniform
        >>> Uniform(0.0, 4.0).cdf([1.0, 2.0])
        array([0.25, 0.5 ])
        """
        return 1.0 - self.sf(x)

    def integrated_sf(self, w: ArrayLike) -> FloatArray:
        """Integrated tail ``int_w^inf sf(x) dx = E[(X - w)^+]``.

        Parameters
        ----------
        w : array_like
            Points ``>= 0`` (``inf`` allowed, giving 0).

        Returns
        -------
        numpy.ndarray
            Array of the shape of ``numpy.asarray(w)`` (0-d for a scalar); equals ``mean`` at 0.

        Raises
        ------
        ValueError
            If some ``w`` is negative or NaN.

        Examples
        --------
        >>> from recursions.dists import Deterministic
        >>> Deterministic(2.0).integrated_sf([0.0, 0.5, 3.0])
        array([2. , 1.5, 0. ])
        """
        wa = np.asarray(w, dtype=np.float64)
        flat = wa.reshape(-1)
        bad = ~(flat >= 0)
        if bad.any():
            raise ValueError(f"w must be >= 0 (and not NaN), got {float(flat[bad][0])!r}")
        out = np.zeros(flat.shape)
        finite = np.isfinite(flat)
        if finite.any():
            out[finite] = self._integrated_sf(flat[finite])
        return np.clip(out, 0.0, self.mean).reshape(wa.shape)

    def equilibrium_sf(self, w: ArrayLike) -> FloatArray:
        """Tail of the equilibrium (stationary residual-life) law: ``integrated_sf(w) / mean``.

        Parameters
        ----------
        w : array_like
            Points ``>= 0``.

        Returns
        -------
        numpy.ndarray
            Array of the shape of ``numpy.asarray(w)`` (0-d for a scalar); equals 1 at 0.

        Raises
        ------
        ValueError
            If some ``w`` is negative or NaN.

        Examples
        --------
        >>> from recursions.dists import Uniform
        >>> Uniform(0.0, 2.0).equilibrium_sf([0.0, 1.0, 2.0])
        array([1.  , 0.25, 0.  ])
        """
        wa = np.asarray(w, dtype=np.float64)
        out = self.integrated_sf(wa) / self.mean
        return np.where(wa == 0, 1.0, out)


# --------------------------------------------------------------------------------------------
# concrete laws
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exponential(Law):
    """Exponential law with the given rate: ``sf(x) = exp(-rate * x)``.

    Parameters
    ----------
    rate : float, default 1.0
        Finite and > 0; the mean is ``1 / rate``.

    Examples
    --------
    >>> from recursions.dists import Exponential
    >>> law = Exponential(rate=4.0)
    >>> law
    Exponential(rate=4.0)
    >>> law.mean, law.var
    (0.25, 0.0625)
    >>> float(law.equilibrium_sf(0.5)) == float(law.sf(0.5))  # memoryless
    True
    """

    rate: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rate", _positive("rate", self.rate))
        _check_mean("Exponential", self.mean)

    @property
    def mean(self) -> float:
        """Mean ``1 / rate``."""
        return 1.0 / self.rate

    @property
    def var(self) -> float:
        """Variance ``1 / rate**2``."""
        return 1.0 / self.rate**2

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.exponential(1.0 / self.rate, size)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.exp(-self.rate * x)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return np.exp(-self.rate * w) / self.rate


@dataclass(frozen=True)
class Deterministic(Law):
    """Point mass at ``value``: ``sf(x) = 1{x < value}``.

    Parameters
    ----------
    value : float
        Finite and > 0.

    Examples
    --------
    >>> from recursions.dists import Deterministic
    >>> law = Deterministic(1.5)
    >>> law.mean, law.var, law.scv
    (1.5, 0.0, 0.0)
    >>> float(law.integrated_sf(0.5))
    1.0
    """

    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _positive("value", self.value))
        _check_mean("Deterministic", self.mean)

    @property
    def mean(self) -> float:
        """Mean, ``value``."""
        return self.value

    @property
    def var(self) -> float:
        """Variance, 0."""
        return 0.0

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return np.full(size, self.value)

    def _sf(self, x: FloatArray) -> FloatArray:
        return (x < self.value).astype(np.float64)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return np.maximum(self.value - w, 0.0)


@dataclass(frozen=True)
class Erlang(Law):
    """Erlang law: the sum of ``k`` independent exponential phases of rate ``rate``.

    ``sf(x) = P(Poisson(rate x) <= k - 1)`` and
    ``integrated_sf(w) = (1 / rate) * sum_{j=0}^{k-1} P(Poisson(rate w) <= j)``.

    Parameters
    ----------
    k : int
        Number of phases, an integer ``>= 1``.
    rate : float
        Rate of each phase, finite and > 0; the mean is ``k / rate``.

    Examples
    --------
    >>> from recursions.dists import Erlang
    >>> law = Erlang(3, rate=6.0)
    >>> law.mean, round(law.scv, 12)
    (0.5, 0.333333333333)
    """

    k: int
    rate: float

    def __post_init__(self) -> None:
        k = self.k
        if isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu":
            k = k.item()
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"k must be an integer >= 1, got {type(k).__name__}")
        if int(k) < 1:
            raise ValueError(f"k must be an integer >= 1, got {int(k)}")
        object.__setattr__(self, "k", int(k))
        object.__setattr__(self, "rate", _positive("rate", self.rate))
        _check_mean("Erlang", self.mean)

    @property
    def mean(self) -> float:
        """Mean ``k / rate``."""
        return self.k / self.rate

    @property
    def var(self) -> float:
        """Variance ``k / rate**2``."""
        return self.k / self.rate**2

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.gamma(self.k, 1.0 / self.rate, size)

    def _sf(self, x: FloatArray) -> FloatArray:
        return special.gammaincc(self.k, self.rate * x)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        # P(Poisson(y) <= j) = Q(j + 1, y); a sum of positive terms, no cancellation.
        y = self.rate * w
        acc = np.zeros_like(y)
        for j in range(1, self.k + 1):
            acc += special.gammaincc(j, y)
        return acc / self.rate


@dataclass(frozen=True)
class HyperExponential(Law):
    """Mixture of exponentials: rate ``rates[i]`` with probability ``probs[i]``.

    Parameters
    ----------
    probs : sequence of float
        Probabilities ``>= 0`` summing to 1 (within ``1e-9``; then normalised). Stored as a
        tuple.
    rates : sequence of float
        Rates, finite and > 0, of the same length as ``probs``. Stored as a tuple.

    Examples
    --------
    >>> from recursions.dists import HyperExponential
    >>> law = HyperExponential(probs=[0.5, 0.5], rates=[1.0, 0.5])
    >>> law.mean, law.var
    (1.5, 2.75)
    """

    probs: tuple[float, ...]
    rates: tuple[float, ...]

    def __post_init__(self) -> None:
        p = _vector("probs", self.probs)
        mu = _vector("rates", self.rates)
        if p.size == 0:
            raise ValueError("probs must not be empty")
        if p.shape != mu.shape:
            raise ValueError(
                f"probs and rates must have the same length, got {p.size} and {mu.size}"
            )
        if not np.all(np.isfinite(p) & (p >= 0)):
            raise ValueError(f"probs must be finite numbers >= 0, got {p.tolist()}")
        total = float(p.sum())
        if abs(total - 1.0) > PROB_SUM_TOL:
            raise ValueError(f"probs must sum to 1 (within {PROB_SUM_TOL:g}), got sum {total!r}")
        if not np.all(np.isfinite(mu) & (mu > 0)):
            raise ValueError(f"rates must be finite numbers > 0, got {mu.tolist()}")
        object.__setattr__(self, "probs", tuple((p / total).tolist()))
        object.__setattr__(self, "rates", tuple(mu.tolist()))
        _check_mean("HyperExponential", self.mean)

    @classmethod
    def balanced(cls, mean: float, scv: float) -> HyperExponential:
        """Two-phase hyperexponential with balanced means and the given mean and scv.

        ``p1 = (1 + sqrt((scv - 1) / (scv + 1))) / 2``, ``p2 = 1 - p1`` and rates
        ``mu_i = 2 p_i / mean``, so that ``p1 / mu1 = p2 / mu2 = mean / 2``.

        Parameters
        ----------
        mean : float
            Finite and > 0.
        scv : float
            Squared coefficient of variation, finite and ``>= 1``.

        Returns
        -------
        HyperExponential

        Examples
        --------
        >>> from recursions.dists import HyperExponential
        >>> law = HyperExponential.balanced(mean=2.0, scv=4.0)
        >>> round(law.mean, 12), round(law.scv, 12)
        (2.0, 4.0)
        """
        m = _positive("mean", mean)
        c2 = _real("scv", scv)
        if not (math.isfinite(c2) and c2 >= 1):
            raise ValueError(
                f"scv must be a finite number >= 1 for a balanced hyperexponential, got {c2!r}"
            )
        p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
        p2 = 1.0 - p1
        return cls(probs=(p1, p2), rates=(2.0 * p1 / m, 2.0 * p2 / m))

    @property
    def _p(self) -> FloatArray:
        return np.asarray(self.probs, dtype=np.float64)

    @property
    def _mu(self) -> FloatArray:
        return np.asarray(self.rates, dtype=np.float64)

    @property
    def mean(self) -> float:
        """Mean ``sum_i probs[i] / rates[i]``."""
        return float(np.sum(self._p / self._mu))

    @property
    def var(self) -> float:
        """Variance ``sum_i 2 probs[i] / rates[i]**2 - mean**2``."""
        second = float(np.sum(2.0 * self._p / self._mu**2))
        return max(second - self.mean**2, 0.0)

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        mu = self._mu
        cum = np.cumsum(self._p)
        phase = np.searchsorted(cum, rng.random(size), side="right")
        np.minimum(phase, mu.size - 1, out=phase)
        return rng.standard_exponential(size) / mu[phase]

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.exp(-np.outer(x, self._mu)) @ self._p

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return np.exp(-np.outer(w, self._mu)) @ (self._p / self._mu)


@dataclass(frozen=True)
class Coxian(Law):
    """Coxian law: exponential phases in series with early exits.

    Phase ``m`` (rate ``rates[m]``) is followed by phase ``m + 1`` with probability
    ``probs[m]``, else the job finishes. It is the phase-type law with initial vector
    ``alpha = e_1`` and upper-bidiagonal sub-generator ``T`` (``T[m, m] = -rates[m]``,
    ``T[m, m + 1] = rates[m] * probs[m]``), so ``sf(x) = alpha exp(T x) 1`` and
    ``integrated_sf(w) = alpha exp(T w) (-T)^{-1} 1``.

    Parameters
    ----------
    rates : sequence of float
        ``M >= 1`` phase rates, finite and > 0. Stored as a tuple.
    probs : sequence of float
        ``M - 1`` continuation probabilities in ``[0, 1]``. Stored as a tuple.

    Examples
    --------
    >>> from recursions.dists import Coxian
    >>> law = Coxian(rates=[2.0, 1.0], probs=[0.5])
    >>> law.phase_means
    array([0.5, 0.5])
    >>> law.mean
    1.0
    """

    rates: tuple[float, ...]
    probs: tuple[float, ...]

    def __post_init__(self) -> None:
        mu = _vector("rates", self.rates)
        p = _vector("probs", self.probs)
        if mu.size == 0:
            raise ValueError("rates must not be empty (a Coxian law needs at least one phase)")
        if not np.all(np.isfinite(mu) & (mu > 0)):
            raise ValueError(f"rates must be finite numbers > 0, got {mu.tolist()}")
        if p.size != mu.size - 1:
            raise ValueError(
                f"probs must have length len(rates) - 1 = {mu.size - 1}, got length {p.size}"
            )
        if not np.all((p >= 0) & (p <= 1)):
            raise ValueError(f"probs must be numbers in [0, 1], got {p.tolist()}")
        object.__setattr__(self, "rates", tuple(mu.tolist()))
        object.__setattr__(self, "probs", tuple(p.tolist()))
        _check_mean("Coxian", self.mean)

    @classmethod
    def normalised(cls, rates: ArrayLike, probs: ArrayLike) -> Coxian:
        """Coxian law with the given continuation probabilities, time-rescaled to mean 1.

        Parameters
        ----------
        rates : sequence of float
            Phase rates before rescaling (all are multiplied by the original mean).
        probs : sequence of float
            Continuation probabilities, unchanged.

        Returns
        -------
        Coxian

        Examples
        --------
        >>> from recursions.dists import Coxian
        >>> law = Coxian.normalised(rates=[1.0, 1.0, 1.0], probs=[1.0, 1.0])
        >>> law.rates, law.mean
        ((3.0, 3.0, 3.0), 1.0)
        """
        law = cls(rates=rates, probs=probs)  # type: ignore[arg-type]
        scaled = np.asarray(law.rates) * law.mean
        return cls(rates=tuple(scaled.tolist()), probs=law.probs)

    @property
    def phase_means(self) -> FloatArray:
        """Mean time spent in each phase: ``v_m = (prod_{i<m} probs[i]) / rates[m]``.

        Examples
        --------
        >>> from recursions.dists import Coxian
        >>> Coxian(rates=[1.0, 2.0, 4.0], probs=[0.5, 0.5]).phase_means
        array([1.    , 0.25  , 0.0625])
        """
        reach = np.concatenate(([1.0], np.cumprod(self.probs)))
        return reach / np.asarray(self.rates)

    @cached_property
    def _generator(self) -> FloatArray:
        mu = np.asarray(self.rates)
        t = np.diag(-mu)
        m = np.arange(mu.size - 1)
        t[m, m + 1] = mu[:-1] * np.asarray(self.probs)
        t.setflags(write=False)
        return t

    @cached_property
    def _remaining(self) -> FloatArray:
        """``(-T)^{-1} 1``: mean remaining time from the start of each phase."""
        r = linalg.solve_triangular(-self._generator, np.ones(len(self.rates)), lower=False)
        r.setflags(write=False)
        return r

    @property
    def mean(self) -> float:
        """Mean, the sum of :attr:`phase_means`."""
        return float(np.sum(self.phase_means))

    @property
    def var(self) -> float:
        """Variance from the phase-type moment ``E[X^2] = 2 alpha T^{-2} 1``."""
        second = 2.0 * linalg.solve_triangular(-self._generator, self._remaining, lower=False)[0]
        return max(float(second) - self.mean**2, 0.0)

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        out = np.zeros(size)
        active = np.arange(size)
        n_phases = len(self.rates)
        for m, rate in enumerate(self.rates):
            if active.size == 0:
                break
            out[active] += rng.standard_exponential(active.size) / rate
            if m < n_phases - 1:
                active = active[rng.random(active.size) < self.probs[m]]
        return out

    def _first_row_expm(self, x: FloatArray) -> FloatArray:
        """Rows ``alpha exp(T x_i)`` for each point, shape ``(len(x), M)``."""
        return linalg.expm(x[:, None, None] * self._generator)[:, 0, :]

    def _sf(self, x: FloatArray) -> FloatArray:
        return self._first_row_expm(x).sum(axis=1)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return self._first_row_expm(w) @ self._remaining


@dataclass(frozen=True)
class LogNormal(Law):
    """Log-normal law parametrised by its mean and squared coefficient of variation.

    ``log X ~ Normal(mu, sigma**2)`` with ``sigma**2 = log(1 + scv)`` and
    ``mu = log(mean) - sigma**2 / 2``;
    ``integrated_sf(w) = mean Phi((mu + sigma**2 - ln w) / sigma) - w Phi((mu - ln w) / sigma)``.

    Parameters
    ----------
    mean : float
        Finite and > 0.
    scv : float
        Squared coefficient of variation, finite and > 0.

    Examples
    --------
    >>> from recursions.dists import LogNormal
    >>> law = LogNormal(mean=2.0, scv=0.5)
    >>> law.var
    2.0
    >>> round(law.sigma, 6), round(law.mu, 6)
    (0.636761, 0.490415)
    """

    # ``field()`` keeps dataclasses from taking the inherited ``Law.scv`` as a default value
    mean: float = field()
    scv: float = field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", _positive("mean", self.mean))
        object.__setattr__(self, "scv", _positive("scv", self.scv))
        _check_mean("LogNormal", self.mean)

    @property
    def sigma(self) -> float:
        """Standard deviation of ``log X``: ``sqrt(log(1 + scv))``."""
        return math.sqrt(math.log1p(self.scv))

    @property
    def mu(self) -> float:
        """Mean of ``log X``: ``log(mean) - sigma**2 / 2``."""
        return math.log(self.mean) - 0.5 * math.log1p(self.scv)

    @property
    def var(self) -> float:
        """Variance ``scv * mean**2``."""
        return self.scv * self.mean**2

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.lognormal(self.mu, self.sigma, size)

    def _sf(self, x: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return special.ndtr((self.mu - np.log(x)) / self.sigma)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        s = self.sigma
        with np.errstate(divide="ignore"):
            lw = np.log(w)
        out = self.mean * special.ndtr((self.mu + s * s - lw) / s)
        pos = w > 0
        out[pos] -= w[pos] * special.ndtr((self.mu - lw[pos]) / s)
        return out


@dataclass(frozen=True)
class Lomax(Law):
    """Lomax (Pareto type II) law: ``sf(x) = (1 + x / scale)**(-shape)``.

    The mean ``scale / (shape - 1)`` is finite only for ``shape > 1`` and the variance only for
    ``shape > 2``; ``integrated_sf(w) = scale / (shape - 1) * (1 + w / scale)**(1 - shape)``.

    Parameters
    ----------
    shape : float
        Tail index, finite and > 1.
    scale : float
        Finite and > 0.

    Examples
    --------
    >>> from recursions.dists import Lomax
    >>> law = Lomax(shape=3.0, scale=2.0)
    >>> law.mean, law.var
    (1.0, 3.0)
    >>> Lomax(shape=1.5, scale=1.0).var
    inf
    """

    shape: float
    scale: float

    def __post_init__(self) -> None:
        a = _real("shape", self.shape)
        if not (math.isfinite(a) and a > 1):
            raise ValueError(
                f"shape must be a finite number > 1 (shape <= 1 gives an infinite mean), got {a!r}"
            )
        object.__setattr__(self, "shape", a)
        object.__setattr__(self, "scale", _positive("scale", self.scale))
        _check_mean("Lomax", self.mean)

    @property
    def mean(self) -> float:
        """Mean ``scale / (shape - 1)``."""
        return self.scale / (self.shape - 1.0)

    @property
    def var(self) -> float:
        """Variance ``scale**2 shape / ((shape - 1)**2 (shape - 2))``, ``inf`` if shape <= 2."""
        a = self.shape
        if a <= 2:
            return math.inf
        return self.scale**2 * a / ((a - 1.0) ** 2 * (a - 2.0))

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        # X = scale (exp(E / shape) - 1) with E ~ Exp(1): inverse transform, accurate near 0.
        return self.scale * np.expm1(rng.standard_exponential(size) / self.shape)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.exp(-self.shape * np.log1p(x / self.scale))

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return self.mean * np.exp((1.0 - self.shape) * np.log1p(w / self.scale))


@dataclass(frozen=True)
class Uniform(Law):
    """Uniform law on ``[low, high]``.

    Parameters
    ----------
    low : float
        Finite and ``>= 0``.
    high : float
        Finite and ``> low``.

    Examples
    --------
    >>> from recursions.dists import Uniform
    >>> law = Uniform(1.0, 3.0)
    >>> law.mean, law.var
    (2.0, 0.3333333333333333)
    >>> law.integrated_sf([0.0, 2.0])
    array([2.  , 0.25])
    """

    low: float
    high: float

    def __post_init__(self) -> None:
        lo = _real("low", self.low)
        hi = _real("high", self.high)
        if not (math.isfinite(lo) and lo >= 0):
            raise ValueError(f"low must be a finite number >= 0, got {lo!r}")
        if not (math.isfinite(hi) and hi > lo):
            raise ValueError(f"high must be a finite number > low (= {lo!r}), got {hi!r}")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)
        _check_mean("Uniform", self.mean)

    @property
    def mean(self) -> float:
        """Mean ``(low + high) / 2``."""
        return 0.5 * (self.low + self.high)

    @property
    def var(self) -> float:
        """Variance ``(high - low)**2 / 12``."""
        return (self.high - self.low) ** 2 / 12.0

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.uniform(self.low, self.high, size)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.clip((self.high - x) / (self.high - self.low), 0.0, 1.0)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        u = np.clip(w, self.low, self.high)
        below = self.low - np.minimum(w, self.low)  # the stretch [w, low] where sf = 1
        return below + (self.high - u) ** 2 / (2.0 * (self.high - self.low))


@dataclass(frozen=True, eq=False, repr=False)
class Empirical(Law):
    """Discrete law on given non-negative values: ``P(X = values[i]) = weights[i]``.

    ``sf(x) = sum_{values[i] > x} weights[i]`` and
    ``integrated_sf(w) = sum_i weights[i] (values[i] - w)^+``.

    Parameters
    ----------
    values : array_like
        Non-empty 1-D array of finite values ``>= 0``. Stored as a read-only float64 array.
    weights : array_like, optional
        Weights ``>= 0`` (not all 0) of the same length, normalised to sum to 1; equal weights
        by default. Stored as a read-only float64 array.

    Examples
    --------
    >>> from recursions.dists import Empirical
    >>> law = Empirical([1.0, 3.0], weights=[3, 1])
    >>> law.mean, law.var
    (1.5, 0.75)
    >>> law.sf([0.5, 1.0, 3.0])
    array([1.  , 0.25, 0.  ])
    >>> law
    Empirical(values=[1.0, 3.0], weights=[0.75, 0.25])
    """

    values: FloatArray
    weights: FloatArray | None = None

    def __post_init__(self) -> None:
        v = _vector("values", self.values)
        if v.size == 0:
            raise ValueError("values must not be empty")
        if not np.all(np.isfinite(v) & (v >= 0)):
            raise ValueError("values must be finite numbers >= 0")
        if self.weights is None:
            p = np.full(v.size, 1.0 / v.size)
        else:
            p = _vector("weights", self.weights)
            if p.size != v.size:
                raise ValueError(
                    f"weights must have the same length as values ({v.size}), got {p.size}"
                )
            if not np.all(np.isfinite(p) & (p >= 0)):
                raise ValueError("weights must be finite numbers >= 0")
            total = float(p.sum())
            if not (math.isfinite(total) and total > 0):
                raise ValueError(f"weights must have a finite sum > 0, got sum {total!r}")
            p = p / total
        v.setflags(write=False)
        p.setflags(write=False)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "weights", p)
        _check_mean("Empirical", self.mean)

    def __repr__(self) -> str:
        if self.values.size <= 6:
            return f"Empirical(values={self.values.tolist()}, weights={self.weights.tolist()})"
        return f"Empirical(<{self.values.size} values>, mean={self.mean:.6g})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Empirical):
            return NotImplemented
        return np.array_equal(self.values, other.values) and np.array_equal(
            self.weights, other.weights
        )

    def __hash__(self) -> int:
        return hash((self.values.tobytes(), self._p.tobytes()))

    @property
    def _p(self) -> FloatArray:
        assert self.weights is not None  # set in __post_init__
        return self.weights

    @cached_property
    def _tables(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Sorted values and the tail sums ``sum_{j >= i} p_j`` and ``sum_{j >= i} p_j x_j``."""
        order = np.argsort(self.values, kind="stable")
        xs = self.values[order]
        ps = self._p[order]
        tail_p = np.append(np.cumsum(ps[::-1])[::-1], 0.0)
        tail_px = np.append(np.cumsum((ps * xs)[::-1])[::-1], 0.0)
        return xs, tail_p, tail_px

    @property
    def mean(self) -> float:
        """Mean ``sum_i weights[i] values[i]``."""
        return float(np.dot(self._p, self.values))

    @property
    def var(self) -> float:
        """Variance ``sum_i weights[i] (values[i] - mean)**2``."""
        return float(np.dot(self._p, (self.values - self.mean) ** 2))

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.choice(self.values, size=size, p=self._p)

    def _sf(self, x: FloatArray) -> FloatArray:
        xs, tail_p, _ = self._tables
        return tail_p[np.searchsorted(xs, x, side="right")]

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        xs, tail_p, tail_px = self._tables
        i = np.searchsorted(xs, w, side="right")
        return np.maximum(tail_px[i] - w * tail_p[i], 0.0)


@dataclass(frozen=True, eq=False, repr=False)
class ScipyLaw(Law):
    """A frozen :mod:`scipy.stats` distribution (continuous or discrete) used as a law.

    ``mean``, ``var`` and ``sf`` come from the distribution and sampling uses
    ``dist.rvs(size=size, random_state=rng)``; ``integrated_sf`` is computed numerically
    (:func:`scipy.integrate.quad` of ``sf``, or ``dist.expect`` for a discrete law), so it is
    much slower than the closed forms of the other laws. Prefer :func:`as_law`.

    Parameters
    ----------
    dist : scipy.stats frozen distribution
        Supported on ``[0, inf)`` with a finite mean > 0.
    name : str, default "dist"
        Name of the argument used in error messages.

    Examples
    --------
    >>> import scipy.stats
    >>> from recursions.dists import ScipyLaw
    >>> law = ScipyLaw(scipy.stats.gamma(2, scale=0.5))
    >>> law
    ScipyLaw(gamma(2, scale=0.5))
    >>> law.mean, law.var
    (1.0, 0.5)
    """

    dist: Any
    name: str = field(default="dist", kw_only=True)
    _mean: float = field(init=False, repr=False)
    _var: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        name = self.name
        d = self.dist
        if not _is_frozen_scipy(d):
            raise TypeError(
                f"{name} must be a frozen scipy.stats distribution, got {type(d).__name__}"
            )
        m = np.asarray(d.mean(), dtype=np.float64)
        if m.ndim != 0:
            raise ValueError(f"{name} must be a scalar distribution (no array parameters)")
        lo = float(d.support()[0])
        if not lo >= 0:
            raise ValueError(
                f"{name} must be supported on [0, inf), but its support starts at {lo}"
            )
        mean = float(m)
        _check_mean(name, mean)
        object.__setattr__(self, "_mean", mean)
        object.__setattr__(self, "_var", float(d.var()))

    def __repr__(self) -> str:
        d = self.dist
        parts = [repr(a) for a in d.args] + [f"{k}={v!r}" for k, v in d.kwds.items()]
        return f"ScipyLaw({d.dist.name}({', '.join(parts)}))"

    @property
    def mean(self) -> float:
        """Mean, ``dist.mean()``."""
        return self._mean

    @property
    def var(self) -> float:
        """Variance, ``dist.var()``."""
        return self._var

    @property
    def _discrete(self) -> bool:
        return isinstance(self.dist.dist, stats.rv_discrete)

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return np.asarray(self.dist.rvs(size=size, random_state=rng), dtype=np.float64)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.asarray(self.dist.sf(x), dtype=np.float64)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return np.array([self._integrated_sf_at(float(wi)) for wi in w], dtype=np.float64)

    def _integrated_sf_at(self, w: float) -> float:
        lo, hi = (float(b) for b in self.dist.support())
        if w <= lo:
            return self._mean - w  # sf = 1 on [w, lo] and int_lo^inf sf = mean - lo
        if w >= hi:
            return 0.0
        if self._discrete:
            return float(self.dist.expect(lambda k: np.maximum(k - w, 0.0)))

        def sf(t: float) -> float:
            return float(self.dist.sf(t))

        # split at a natural scale so that quad's infinite-range map does not miss the mass
        spread = math.sqrt(self._var) if math.isfinite(self._var) and self._var > 0 else 0.0
        mid = min(w + max(spread, self._mean), hi)
        total = integrate.quad(sf, w, mid, limit=200)[0]
        if mid < hi:
            total += integrate.quad(sf, mid, hi, limit=200)[0]
        return total


def as_law(dist: Any, name: str = "service") -> Law:
    """Turn a user-supplied law into a :class:`Law`.

    Parameters
    ----------
    dist : Law or scipy.stats frozen distribution
        A law of this module (returned unchanged) or a frozen scipy distribution supported on
        ``[0, inf)`` with a finite mean > 0 (wrapped in :class:`ScipyLaw`).
    name : str, default "service"
        Name of the argument, used in error messages.

    Returns
    -------
    Law

    Raises
    ------
    TypeError
        If ``dist`` is neither (plain numbers are not accepted).
    ValueError
        If a scipy distribution has negative support or an infinite (or non-positive) mean.

    Examples
    --------
    >>> import scipy.stats
    >>> from recursions.dists import Exponential, as_law
    >>> law = Exponential(1.0)
    >>> as_law(law) is law
    True
    >>> as_law(scipy.stats.uniform(0, 2), name="arrival").mean
    1.0
    >>> as_law(3.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: service must be a recursions.dists law or a frozen scipy.stats ..., got float
    """
    if isinstance(dist, Law):
        return dist
    if _is_frozen_scipy(dist):
        return ScipyLaw(dist, name=name)
    raise TypeError(
        f"{name} must be a recursions.dists law or a frozen scipy.stats distribution, "
        f"got {type(dist).__name__}"
    )
