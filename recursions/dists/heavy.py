"""Heavy-tailed laws: :class:`LogNormal` and :class:`Lomax`.

Neither has a finite moment generating function at any ``theta > 0``: asking for one (or for
an upward tilt) raises ``ValueError`` naming the law; ``theta <= 0`` uses the generic
quadrature and rejection of :class:`~recursions.dists.Law`. Both have closed-form size-biased
laws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from recursions.common.codes import LawCode
from recursions.dists._checks import FloatArray, check_mean, one_of, positive_value, real_value
from recursions.dists._numerics import special
from recursions.dists.base import KernelSampler, Law

__all__ = ["LogNormal", "Lomax"]


class _HeavyTailed(Law):
    """A law with ``E[exp(theta X)] = inf`` for every ``theta > 0``."""

    def _tilt_unavailable(self, theta: float) -> str | None:
        if theta > 0:
            return (
                f"the tilt theta={theta:g} of {self!r} does not exist: the law is "
                "heavy-tailed, E[exp(theta X)] = inf for every theta > 0 (methods that need a "
                "light tail, such as an exponential tilt or a Cramer root, cannot use it)"
            )
        return None


@dataclass(frozen=True, repr=False)
class LogNormal(_HeavyTailed):
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
    >>> law
    LogNormal(mean=2.0, scv=0.5)
    """

    # ``field()`` keeps dataclasses from taking the inherited ``Law.scv`` as a default value
    mean: float = field()
    scv: float = field()

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", positive_value("mean", self.mean))
        object.__setattr__(self, "scv", positive_value("scv", self.scv))
        check_mean("LogNormal", self.mean, "mean")

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

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        return gen.lognormal(self.mu + self.sigma**2, self.sigma, n)

    def kernel_sampler(self) -> KernelSampler:
        """``(LOGNORMAL, [mu, sigma])``."""
        return KernelSampler(LawCode.LOGNORMAL, np.array([self.mu, self.sigma]))


@dataclass(frozen=True, init=False, repr=False)
class Lomax(_HeavyTailed):
    """Lomax (Pareto type II) law: ``sf(x) = (1 + x / scale)**(-shape)``.

    The mean ``scale / (shape - 1)`` is finite only for ``shape > 1`` and the variance only for
    ``shape > 2``; ``integrated_sf(w) = scale / (shape - 1) * (1 + w / scale)**(1 - shape)``.

    Parameters
    ----------
    shape : float
        Tail index, finite and > 1.
    scale : float
        Finite and > 0. A second positional value is the scale.
    mean : float, optional (keyword only)
        The mean instead of the scale (``scale = mean * (shape - 1)``); give exactly one of
        the two.

    Examples
    --------
    >>> from recursions.dists import Lomax
    >>> law = Lomax(shape=3.0, scale=2.0)
    >>> law.mean, law.var
    (1.0, 3.0)
    >>> Lomax(shape=1.5, scale=1.0).var
    inf
    >>> Lomax(shape=3.0, mean=1.0)
    Lomax(shape=3.0, scale=2.0; mean=1, scv=3)
    """

    shape: float
    scale: float

    def __init__(self, shape: float, scale: float | None = None, *,
                 mean: float | None = None) -> None:
        a = real_value("shape", shape)
        if not (math.isfinite(a) and a > 1):
            raise ValueError(
                f"shape must be a finite number > 1 (shape <= 1 gives an infinite mean), got {a!r}"
            )
        if a > 1e100:
            raise ValueError(f"shape must be at most 1e100 (beyond it the law is exponential to "
                             f"float64 precision: use Exponential), got {a!r}")
        name, value = one_of("Lomax", scale=scale, mean=mean)
        s = (positive_value("mean", value) * (a - 1.0) if name == "mean"
             else positive_value("scale", value))
        object.__setattr__(self, "shape", a)
        object.__setattr__(self, "scale", s)
        check_mean("Lomax", self.mean, f"{name} and shape")

    @property
    def mean(self) -> float:
        """Mean ``scale / (shape - 1)``."""
        return self.scale / (self.shape - 1.0)

    def finite_moment(self, k: int) -> bool:
        """Whether ``E[X^k]`` is finite: ``k < shape``."""
        return k < self.shape

    @property
    def var(self) -> float:
        """Variance ``scale**2 shape / ((shape - 1)**2 (shape - 2))``, ``inf`` if shape <= 2."""
        a = self.shape
        if a <= 2:
            return math.inf
        try:
            return self.scale**2 * a / ((a - 1.0) ** 2 * (a - 2.0))
        except OverflowError:  # a large shape and scale: the same, as mean**2 a / (a - 2)
            return self.mean**2 * (a / (a - 2.0))

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        # X = scale (exp(E / shape) - 1) with E ~ Exp(1): inverse transform, accurate near 0
        # (compiled with the scalar expm1, so that in-kernel draws give the same bits)
        from recursions.dists.kernel import lomax_transform

        return lomax_transform(rng.standard_exponential(size), self.shape, self.scale)

    def _sf(self, x: FloatArray) -> FloatArray:
        return np.exp(-self.shape * np.log1p(x / self.scale))

    def _integrated_sf(self, w: FloatArray) -> FloatArray:
        return self.mean * np.exp((1.0 - self.shape) * np.log1p(w / self.scale))

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        # x / scale has density ∝ y (1 + y)^(-shape-1): beta prime (2, shape - 1)
        b = gen.beta(2.0, self.shape - 1.0, n)
        return self.scale * b / (1.0 - b)

    def kernel_sampler(self) -> KernelSampler:
        """``(LOMAX, [shape, scale])``."""
        return KernelSampler(LawCode.LOMAX, np.array([self.shape, self.scale]))
