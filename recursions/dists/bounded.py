"""Laws with a bounded support: :class:`Deterministic`, :class:`Uniform` and :class:`Empirical`.

Each has a finite :attr:`~recursions.dists.Law.support_max` and a moment generating function
for every ``theta``, in closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from recursions.common._checks import SCALE_MAX
from recursions.common.codes import LawCode
from recursions.dists._checks import (
    FloatArray,
    check_mean,
    float_vector,
    one_of,
    positive_value,
    real_value,
)
from recursions.dists._numerics import logsumexp
from recursions.dists.base import KernelSampler, Law, Sampler

__all__ = ["Deterministic", "Empirical", "Uniform"]


@dataclass(frozen=True, init=False, repr=False)
class Deterministic(Law):
    """Point mass at ``value``: ``sf(x) = 1{x < value}``.

    Parameters
    ----------
    value : float
        Finite and > 0. A positional value is the value.
    mean : float, optional (keyword only)
        The same number by its other name; give exactly one of ``value`` and ``mean``.

    Examples
    --------
    >>> from recursions.dists import Deterministic
    >>> law = Deterministic(1.5)
    >>> law.mean, law.var, law.scv
    (1.5, 0.0, 0.0)
    >>> float(law.integrated_sf(0.5))
    1.0
    >>> Deterministic(mean=1.5)
    Deterministic(value=1.5; mean=1.5, scv=0)
    """

    value: float

    _closed_mgf = True

    def __init__(self, value: float | None = None, *, mean: float | None = None) -> None:
        name, v = one_of("Deterministic", value=value, mean=mean)
        object.__setattr__(self, "value", positive_value(name, v))
        check_mean("Deterministic", self.mean, name)

    @property
    def mean(self) -> float:
        """Mean, ``value``."""
        return self.value

    @property
    def var(self) -> float:
        """Variance, 0."""
        return 0.0

    @property
    def support_max(self) -> float:
        """``value``."""
        return float(self.value)

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return np.full(size, self.value)

    def _sf(self, x: FloatArray) -> FloatArray:
        return (x < self.value).astype(np.float64)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return np.maximum(self.value - w, 0.0)

    def _log_mgf(self, th: float) -> float:
        return th * self.value

    def _tilted_sampler(self, th: float) -> Sampler:
        v = float(self.value)
        return lambda gen, n: np.full(n, v)

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        return np.full(n, float(self.value))

    def kernel_sampler(self) -> KernelSampler:
        """``(DETERMINISTIC, [value])``."""
        return KernelSampler(LawCode.DETERMINISTIC, np.array([self.value]))


@dataclass(frozen=True, repr=False)
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
    >>> law = Uniform(low=1.0, high=3.0)
    >>> law.mean, law.var
    (2.0, 0.3333333333333333)
    >>> law.integrated_sf([0.0, 2.0])
    array([2.  , 0.25])
    >>> law
    Uniform(low=1.0, high=3.0; mean=2, scv=0.0833333)
    """

    low: float
    high: float

    _closed_mgf = True

    def __post_init__(self) -> None:
        lo = real_value("low", self.low)
        hi = real_value("high", self.high)
        if not (math.isfinite(lo) and lo >= 0):
            raise ValueError(f"low must be a finite number >= 0, got {lo!r}")
        if not (math.isfinite(hi) and hi > lo):
            raise ValueError(f"high must be a finite number > low (= {lo!r}), got {hi!r}")
        object.__setattr__(self, "low", lo)
        object.__setattr__(self, "high", hi)
        check_mean("Uniform", self.mean, "low and high")

    @property
    def mean(self) -> float:
        """Mean ``(low + high) / 2``."""
        return 0.5 * (self.low + self.high)

    @property
    def var(self) -> float:
        """Variance ``(high - low)**2 / 12``."""
        return (self.high - self.low) ** 2 / 12.0

    @property
    def support_max(self) -> float:
        """``high``."""
        return float(self.high)

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.uniform(self.low, self.high, size)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.clip((self.high - x) / (self.high - self.low), 0.0, 1.0)

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        u = np.clip(w, self.low, self.high)
        below = self.low - np.minimum(w, self.low)  # the stretch [w, low] where sf = 1
        return below + (self.high - u) ** 2 / (2.0 * (self.high - self.low))

    def _log_mgf(self, th: float) -> float:
        lo, w = self.low, self.high - self.low
        x = th * w
        if x == 0.0:
            return th * lo
        if x > 30.0:  # log(expm1(x) / x) = x + log1p(-exp(-x)) - log(x)
            return th * lo + x + math.log1p(-math.exp(-x)) - math.log(x)
        if x < -30.0:  # expm1(x) / x = (1 - exp(x)) / -x
            return th * lo + math.log1p(-math.exp(x)) - math.log(-x)
        return th * lo + math.log(math.expm1(x) / x)

    def _tilted_sampler(self, th: float) -> Sampler:
        lo, width = float(self.low), float(self.high - self.low)
        c = math.expm1(th * width)

        def uniform(gen: np.random.Generator, n: int) -> FloatArray:
            return lo + np.log1p(gen.random(n) * c) / th

        return uniform

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        a, b = self.low, self.high
        return np.sqrt(a * a + gen.random(n) * (b * b - a * a))

    def kernel_sampler(self) -> KernelSampler:
        """``(UNIFORM, [low, high - low])``."""
        return KernelSampler(LawCode.UNIFORM, np.array([self.low, self.high - self.low]))


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
    Empirical(values=[1.0, 3.0], weights=[0.75, 0.25]; mean=1.5, scv=0.333333)
    """

    values: FloatArray
    weights: FloatArray | None = None

    _closed_mgf = True

    def __post_init__(self) -> None:
        v = float_vector("values", self.values)
        if v.size == 0:
            raise ValueError("values must not be empty")
        if not np.all(np.isfinite(v) & (v >= 0)):
            raise ValueError("values must be finite numbers >= 0")
        if np.any(v > SCALE_MAX):
            raise ValueError(f"values must be at most {SCALE_MAX:g} (change the time unit), "
                             f"got {float(v.max())!r}")
        if self.weights is None:
            p = np.full(v.size, 1.0 / v.size)
        else:
            p = float_vector("weights", self.weights)
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
        check_mean("Empirical", self.mean, "values and weights")

    def _repr_args(self) -> str:
        if self.values.size <= 6:
            return f"values={self.values.tolist()}, weights={self._p.tolist()}"
        return f"<{self.values.size} values>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Empirical):
            return NotImplemented
        return np.array_equal(self.values, other.values) and np.array_equal(
            np.asarray(self.weights), np.asarray(other.weights)
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

    @property
    def support_max(self) -> float:
        """The largest value of positive weight."""
        return float(np.max(self.values[self._p > 0]))

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        return rng.choice(self.values, size=size, p=self._p)

    def _sf(self, x: FloatArray) -> FloatArray:
        xs, tail_p, _ = self._tables
        return tail_p[np.searchsorted(xs, x, side="right")]

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        xs, tail_p, tail_px = self._tables
        i = np.searchsorted(xs, w, side="right")
        return np.maximum(tail_px[i] - w * tail_p[i], 0.0)

    def _log_mgf(self, th: float) -> float:
        v, p = self.values, self._p
        keep = p > 0
        return logsumexp(th * v[keep] + np.log(p[keep]))

    def _tilted_sampler(self, th: float) -> Sampler:
        v, p = self.values, self._p
        keep = p > 0
        v = v[keep]
        lw = th * v + np.log(p[keep])
        w = np.exp(lw - lw.max())
        w = w / w.sum()
        return lambda gen, n: v[gen.choice(v.size, size=n, p=w)]

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        p = self._p * self.values
        return self.values[gen.choice(p.size, size=n, p=p / p.sum())]

    def kernel_sampler(self) -> KernelSampler:
        """``(EMPIRICAL, [K, cdf, values])`` with numpy's ``choice`` table ``cdf``."""
        cdf = self._p.cumsum()  # exactly as numpy.random.Generator.choice builds it
        cdf /= cdf[-1]
        params = np.concatenate(([float(self.values.size)], cdf, self.values))
        return KernelSampler(LawCode.EMPIRICAL, params)
