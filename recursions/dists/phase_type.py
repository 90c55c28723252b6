"""Phase-type laws, with their closed-form mgf, tilts, size-biased laws and Coxian forms.

:class:`Exponential`, :class:`Erlang`, :class:`HyperExponential` and :class:`Coxian`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from recursions.common.codes import LawCode
from recursions.dists._checks import (
    PROB_SUM_TOL,
    FloatArray,
    check_mean,
    check_rates,
    float_vector,
    one_of,
    positive_value,
    real_value,
)
from recursions.dists._numerics import linalg, special
from recursions.dists.base import KernelSampler, Law, Sampler

__all__ = ["Coxian", "Erlang", "Exponential", "HyperExponential"]

#: Points per block of :func:`_first_row_expm_stack` (bounds the ``(n, M, M)`` work arrays).
_EXPM_CHUNK = 4096
#: Taylor degree of the scaled exponential: with ``||A||_1 <= 1/2`` the remainder is below
#: ``0.5**19 / 19! < 1e-22`` relative to 1.
_EXPM_DEGREE = 18


def _first_row_expm_stack(t: FloatArray, x: FloatArray) -> FloatArray:
    """``e_1 exp(x_i t)`` for each point ``x_i >= 0``, shape ``(len(x), M)``.

    Scaling and squaring, vectorised over the points: each ``x_i t`` is scaled by ``2**-s_i``
    to 1-norm at most 1/2, exponentiated by its Taylor polynomial of degree 18, and squared
    ``s_i`` times (the relative error grows like ``2**s_i`` ulps, as in any squaring scheme).
    """
    m = t.shape[0]
    norm = float(np.abs(t).sum(axis=0).max())
    a = x * norm
    s = np.zeros(x.size, dtype=np.int64)
    big = a > 0.5
    s[big] = np.ceil(np.log2(a[big] / 0.5)).astype(np.int64)
    mat = (x / np.exp2(s))[:, None, None] * t  # (n, M, M), 1-norm <= 1/2
    eye = np.eye(m)
    out = eye + mat
    term = mat
    for j in range(2, _EXPM_DEGREE + 1):
        term = (term @ mat) / j
        out = out + term
    for i in range(int(s.max(initial=0))):
        sel = s > i
        out[sel] = out[sel] @ out[sel]
    return out[:, 0, :]


@dataclass(frozen=True, init=False, repr=False)
class Exponential(Law):
    """Exponential law: ``sf(x) = exp(-rate * x)``.

    Parameters
    ----------
    rate : float, default 1.0
        Finite and > 0; the mean is ``1 / rate``. A positional value is the rate.
    mean : float, optional (keyword only)
        The mean instead of the rate (``rate = 1 / mean``); give at most one of the two.

    Examples
    --------
    >>> from recursions.dists import Exponential
    >>> law = Exponential(rate=4.0)
    >>> law
    Exponential(rate=4.0; mean=0.25, scv=1)
    >>> law.mean, law.var
    (0.25, 0.0625)
    >>> Exponential(mean=0.25) == law == Exponential(4.0)
    True
    >>> float(law.equilibrium_sf(0.5)) == float(law.sf(0.5))  # memoryless
    True
    """

    rate: float

    _closed_mgf = True

    def __init__(self, rate: float | None = None, *, mean: float | None = None) -> None:
        if rate is not None and mean is not None:
            one_of("Exponential", rate=rate, mean=mean)
        r = 1.0 / positive_value("mean", mean) if mean is not None else positive_value(
            "rate", 1.0 if rate is None else rate)
        object.__setattr__(self, "rate", r)
        check_mean("Exponential", self.mean,
                    "mean" if mean is not None else "rate (mean 1 / rate)")

    @property
    def mean(self) -> float:
        """Mean ``1 / rate``."""
        return 1.0 / self.rate

    @property
    def var(self) -> float:
        """Variance ``1 / rate**2``."""
        return 1.0 / self.rate**2

    @property
    def exponential_rate(self) -> float:
        """The rate."""
        return self.rate

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.exponential(1.0 / self.rate, size)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.exp(-self.rate * x)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return np.exp(-self.rate * w) / self.rate

    def _tilt_unavailable(self, theta: float) -> None:
        return None

    def _log_mgf(self, th: float) -> float:
        return math.log(self.rate / (self.rate - th)) if th < self.rate else math.inf

    def _tilted_sampler(self, th: float) -> Sampler:
        scale = 1.0 / (self.rate - th)
        return lambda gen, n: gen.exponential(scale, n)

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        return gen.gamma(2.0, 1.0 / self.rate, n)

    def coxian(self) -> Coxian:
        """One phase of rate ``rate``."""
        return Coxian(rates=(self.rate,), probs=())

    def kernel_sampler(self) -> KernelSampler:
        """``(EXPONENTIAL, [1 / rate])``."""
        return KernelSampler(LawCode.EXPONENTIAL, np.array([1.0 / self.rate]))


@dataclass(frozen=True, init=False, repr=False)
class Erlang(Law):
    """Erlang law: the sum of ``k`` independent exponential phases of rate ``rate``.

    ``sf(x) = P(Poisson(rate x) <= k - 1)`` and
    ``integrated_sf(w) = (1 / rate) * sum_{j=0}^{k-1} P(Poisson(rate w) <= j)``.

    Parameters
    ----------
    k : int
        Number of phases, an integer ``>= 1``.
    rate : float
        Rate of each phase, finite and > 0; the mean is ``k / rate``. A second positional
        value is the rate.
    mean : float, optional (keyword only)
        The mean instead of the rate (``rate = k / mean``); give exactly one of the two.

    Examples
    --------
    >>> from recursions.dists import Erlang
    >>> law = Erlang(3, rate=6.0)
    >>> law.mean, round(law.scv, 12)
    (0.5, 0.333333333333)
    >>> Erlang(3, mean=0.5)
    Erlang(k=3, rate=6.0; mean=0.5, scv=0.333333)
    """

    k: int
    rate: float

    _closed_mgf = True

    def __init__(self, k: int, rate: float | None = None, *, mean: float | None = None) -> None:
        if isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype.kind in "iu":
            k = k.item()
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"k must be an integer >= 1, got {type(k).__name__}")
        if int(k) < 1:
            raise ValueError(f"k must be an integer >= 1, got {int(k)}")
        k = int(k)
        name, value = one_of("Erlang", rate=rate, mean=mean)
        r = k / positive_value("mean", value) if name == "mean" else positive_value("rate", value)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "rate", r)
        check_mean("Erlang", self.mean, "mean" if name == "mean" else "k / rate")

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

    def _tilt_unavailable(self, theta: float) -> None:
        return None

    def _log_mgf(self, th: float) -> float:
        return self.k * math.log(self.rate / (self.rate - th)) if th < self.rate else math.inf

    def _tilted_sampler(self, th: float) -> Sampler:
        k, scale = self.k, 1.0 / (self.rate - th)
        return lambda gen, n: gen.gamma(k, scale, n)

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        return gen.gamma(self.k + 1.0, 1.0 / self.rate, n)

    def coxian(self) -> Coxian:
        """``k`` phases of rate ``rate``, each followed by the next with probability 1."""
        return Coxian(rates=(self.rate,) * self.k, probs=(1.0,) * (self.k - 1))

    def kernel_sampler(self) -> KernelSampler:
        """``(ERLANG, [k, 1 / rate])``."""
        return KernelSampler(LawCode.ERLANG, np.array([float(self.k), 1.0 / self.rate]))


@dataclass(frozen=True, repr=False)
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

    _closed_mgf = True

    def __post_init__(self) -> None:
        p = float_vector("probs", self.probs)
        mu = float_vector("rates", self.rates)
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
        check_rates("rates", mu)
        object.__setattr__(self, "probs", tuple((p / total).tolist()))
        object.__setattr__(self, "rates", tuple(mu.tolist()))
        check_mean("HyperExponential", self.mean, "probs and rates")

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
        m = positive_value("mean", mean)
        c2 = real_value("scv", scv)
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

    def _tilt_unavailable(self, theta: float) -> None:
        return None

    def _log_mgf(self, th: float) -> float:
        r, p = self._mu, self._p
        if th >= r.min():
            return math.inf
        return math.log(float(np.sum(p * r / (r - th))))

    def _tilted_sampler(self, th: float) -> Sampler:
        r, p = self._mu, self._p
        w = p * r / (r - th)
        w = w / w.sum()
        new = r - th

        def hyper(gen: np.random.Generator, n: int) -> FloatArray:
            j = gen.choice(r.size, size=n, p=w)
            return gen.exponential(1.0, n) / new[j]

        return hyper

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        p = self._p / self._mu
        idx = gen.choice(p.size, size=n, p=p / p.sum())
        return gen.gamma(2.0, 1.0, n) / self._mu[idx]

    def kernel_sampler(self) -> KernelSampler:
        """``(HYPEREXPONENTIAL, [M, cumsum(probs), rates])``."""
        params = np.concatenate(([float(len(self.rates))], np.cumsum(self._p), self._mu))
        return KernelSampler(LawCode.HYPEREXPONENTIAL, params)


@dataclass(frozen=True, repr=False)
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

    _closed_mgf = True

    def __post_init__(self) -> None:
        mu = float_vector("rates", self.rates)
        p = float_vector("probs", self.probs)
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
        check_rates("rates", mu)
        object.__setattr__(self, "rates", tuple(mu.tolist()))
        object.__setattr__(self, "probs", tuple(p.tolist()))
        check_mean("Coxian", self.mean, "rates and probs")

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
        """Rows ``alpha exp(T x_i)`` for each point, shape ``(len(x), M)``.

        Vectorised scaling and squaring over the points (``scipy.linalg.expm`` of a stack
        costs about a millisecond per matrix, which made the generic size-biased inversion
        take minutes); see :func:`_first_row_expm_stack`.
        """
        out = np.empty((x.size, len(self.rates)))
        for lo in range(0, x.size, _EXPM_CHUNK):
            out[lo : lo + _EXPM_CHUNK] = _first_row_expm_stack(self._generator,
                                                               x[lo : lo + _EXPM_CHUNK])
        return out

    def _sf(self, x: FloatArray) -> FloatArray:
        return self._first_row_expm(x).sum(axis=1)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return self._first_row_expm(w) @ self._remaining

    def _paths(self, theta: float) -> tuple[Any, Any]:
        """Exit probabilities after each phase and the mgf of each path (``None`` if infinite)."""
        r = np.asarray(self.rates)
        q = np.append(np.asarray(self.probs), 0.0)
        reach = np.concatenate(([1.0], np.cumprod(q[:-1])))
        w = reach * (1.0 - q)
        live = reach > 0
        if theta >= r[live].min():
            return None, None
        ratio = np.cumprod(np.where(live, r / np.where(live, r - theta, 1.0), 1.0))
        return w, ratio

    def _tilt_unavailable(self, theta: float) -> None:
        return None

    def _log_mgf(self, th: float) -> float:
        w, ratio = self._paths(th)
        if w is None:
            return math.inf
        return math.log(float(np.sum(w * ratio)))

    def _tilted_sampler(self, th: float) -> Sampler:
        w, ratio = self._paths(th)
        pk = w * ratio
        pk = pk / pk.sum()
        new = np.asarray(self.rates) - th

        def coxian(gen: np.random.Generator, n: int) -> FloatArray:
            k = gen.choice(pk.size, size=n, p=pk)  # exit after phase k
            x = gen.exponential(1.0, (n, pk.size)) / new
            return np.where(np.arange(pk.size) <= k[:, None], x, 0.0).sum(axis=1)

        return coxian

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        """A mixture over the number of phases run, each a sum of exponentials.

        Size-biasing a mixture reweights its components by their means; size-biasing a sum
        of independent exponentials picks one term with probability proportional to its mean
        and replaces it by its size-biased law, Gamma(2, rate).
        """
        rates = np.asarray(self.rates, dtype=float)
        cont = np.concatenate((np.asarray(self.probs, dtype=float), [0.0]))
        reach = np.concatenate(([1.0], np.cumprod(cont[:-1])))  # P(phase m is run)
        stop = reach * (1.0 - cont)  # P(exactly m phases)
        inv = 1.0 / rates
        means = np.cumsum(inv)  # mean of a run of m phases
        w = stop * means
        k = gen.choice(rates.size, size=n, p=w / w.sum())  # index of the last phase run
        out = np.empty(n)
        for m in range(rates.size):
            idx = np.flatnonzero(k == m)
            if idx.size == 0:
                continue
            pick = gen.choice(m + 1, size=idx.size, p=inv[: m + 1] / inv[: m + 1].sum())
            x = gen.exponential(1.0, (idx.size, m + 1)) * inv[: m + 1]
            x[np.arange(idx.size), pick] = gen.gamma(2.0, 1.0, idx.size) * inv[pick]
            out[idx] = x.sum(axis=1)
        return out

    def coxian(self) -> Coxian:
        """The law itself."""
        return self

    def kernel_sampler(self) -> KernelSampler:
        """``(COXIAN, [M, rates, probs])``."""
        params = np.concatenate(([float(len(self.rates))], self.rates, self.probs))
        return KernelSampler(LawCode.COXIAN, params)
