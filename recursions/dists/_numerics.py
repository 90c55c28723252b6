"""The numerical machinery behind the laws: lazy scipy, ``logsumexp`` and the generic fallbacks.

:class:`~recursions.dists.Law` answers every question a method may ask of a law with a generic
implementation written in terms of ``sample``, ``sf`` and ``integrated_sf`` only (the module
docstring of :mod:`recursions.dists.base` lists them). The numerical ones are here, as
functions of the law, so that the base class keeps its interface and its short defaults while
the algorithms are read (and tested) on their own:

* :func:`quadrature_log_mgf` -- ``log E[exp(theta X)]`` by quadrature of the tail;
* :func:`rejection_tilted_sampler` -- draws of the tilted law by rejection from the law;
* :func:`size_biased_mixture` -- exact draws of the size-biased law ``x F(dx) / mean``:
  rejection below a split point (:func:`size_biased_split`), inversion by bisection above it
  (:func:`invert_size_biased` of :func:`size_biased_tail`).

Beside them, what the closed forms of the laws share: scipy's submodules, imported on first use
(``import recursions`` stays fast), and :func:`logsumexp`.

The functions take any object with the few methods of :class:`TailLaw` and call only those,
so a law that overrides ``sf`` or ``sample`` is integrated and drawn through its own methods.
This module imports nothing of :mod:`recursions.dists` but its argument checks; the base class
imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from recursions.dists._checks import FloatArray

__all__ = [
    "TailLaw",
    "integrate",
    "invert_size_biased",
    "linalg",
    "logsumexp",
    "quadrature_log_mgf",
    "rejection_tilted_sampler",
    "size_biased_mixture",
    "size_biased_split",
    "size_biased_tail",
    "special",
    "stats",
]


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


def logsumexp(a: FloatArray) -> float:
    """``log(sum(exp(a)))`` without overflow (the largest term factored out)."""
    m = float(np.max(a))
    return m + math.log(float(np.sum(np.exp(a - m))))


class TailLaw(Protocol):
    """What the generic fallbacks ask of a law (every :class:`~recursions.dists.Law` has it)."""

    @property
    def mean(self) -> float:
        """The mean ``E[X]``, finite and > 0."""

    @property
    def support_max(self) -> float:
        """The least ``b`` with ``P(X <= b) = 1`` (``inf`` if unbounded)."""

    def sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        """``size`` independent draws from ``rng``."""

    def sf(self, x: ArrayLike) -> FloatArray:
        """``P(X > x)``."""

    def integrated_sf(self, w: ArrayLike) -> FloatArray:
        """``E[(X - w)^+]``."""


# --------------------------------------------------------------------------------------------
# tilts
# --------------------------------------------------------------------------------------------


def quadrature_log_mgf(law: TailLaw, th: float) -> float:
    """Generic ``log E[exp(th X)]`` (``th != 0``) by quadrature of the tail.

    ``1 + th * int_0^b exp(th x) sf(x) dx``, for ``th < 0`` or a bounded support ``[0, b]``
    (the caller has checked that the tilt is available); for ``th > 0`` the factor
    ``exp(th b)`` is taken out first, so that nothing overflows.
    """
    b = law.support_max
    top = b if math.isfinite(b) else math.inf
    if th > 0:  # M = e^{th b} (e^{-th b} + th int_0^b e^{th (x - b)} sf(x) dx): no overflow

        def f(x: float) -> float:
            return math.exp(th * (x - top)) * float(law.sf(x))

        val = integrate.quad(f, 0.0, top, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
        return th * top + math.log(math.exp(-th * top) + th * val)

    def g(x: float) -> float:
        return math.exp(th * x) * float(law.sf(x))

    val = integrate.quad(g, 0.0, top, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
    m = 1.0 + th * val
    return math.log(m) if m > 0 else -math.inf


def rejection_tilted_sampler(
    law: TailLaw, th: float
) -> Callable[[np.random.Generator, int], FloatArray]:
    """Generic tilted sampler (``th != 0``, tilt available): rejection from the law.

    A draw ``x`` is accepted with probability ``exp(th (x - b))``, ``b`` the top of the support
    for ``th > 0`` and 0 for ``th < 0``.
    """
    top = 0.0 if th < 0 else law.support_max

    def rejection(gen: np.random.Generator, n: int) -> FloatArray:
        out = np.empty(0)
        while out.size < n:
            x = np.asarray(law.sample(gen, 2 * (n - out.size) + 8), dtype=np.float64)
            out = np.concatenate((out, x[gen.random(x.size) < np.exp(th * (x - top))]))
        return out[:n]

    return rejection


# --------------------------------------------------------------------------------------------
# size bias
# --------------------------------------------------------------------------------------------


def size_biased_tail(law: TailLaw, x: FloatArray) -> FloatArray:
    """``1 - F~(x) = E[X; X > x] / mean = (integrated_sf(x) + x sf(x)) / mean``."""
    return (law.integrated_sf(x) + x * law.sf(x)) / law.mean


def size_biased_split(law: TailLaw) -> float:
    """Where the generic sampler switches from rejection to inversion.

    The top of the support if it is within ``64 mean``; otherwise the first ``mean * 2**j``
    above which the size-biased law has mass at most 1%, capped at ``64 mean`` (so that the
    rejection below accepts at least about one draw in 64).
    """
    m = law.mean
    if law.support_max <= 64.0 * m:
        return float(law.support_max)
    c = m
    while c < 64.0 * m and float(size_biased_tail(law, np.array([c]))[0]) > 0.01:
        c *= 2.0
    return c


def size_biased_mixture(law: TailLaw, gen: np.random.Generator, n: int) -> FloatArray:
    """Generic size-biased draws, exact: a mixture split at ``c``.

    ``x F(dx) / mean`` is the mixture of its parts on ``[0, c]`` and ``(c, inf)``, of
    weights ``1 - q`` and ``q = E[X; X > c] / mean``. Below ``c``, draws of the law with
    ``X <= c`` are accepted with probability ``X / c``; above, the quantiles are found by
    bisection on ``1 - F~`` (only a fraction ``q`` of the draws, so that a law whose
    ``integrated_sf`` is a quadrature per point, like a wrapped scipy law, stays cheap).
    """
    c = size_biased_split(law)
    q = float(size_biased_tail(law, np.array([c]))[0]) if math.isfinite(c) else 1.0
    upper = gen.random(n) < q
    out = np.empty(n)
    k = int(np.count_nonzero(upper))
    if k:
        out[upper] = invert_size_biased(law, q * gen.random(k), lo=c)
    need = n - k
    lower = np.empty(0)
    while lower.size < need:
        x = np.asarray(law.sample(gen, 2 * (need - lower.size) + 16), dtype=np.float64)
        keep = (x <= c) & (gen.random(x.size) * c < x)
        lower = np.concatenate((lower, x[keep]))
    out[~upper] = lower[:need]
    return out


def invert_size_biased(law: TailLaw, t: FloatArray, lo: float = 0.0) -> FloatArray:
    """The points ``x >= lo`` with ``1 - F~(x) = t``, by bisection (``0 < t <= 1 - F~(lo)``)."""
    hi = np.full(t.shape, max(2.0 * lo, law.mean, 1e-300))
    while True:
        grow = size_biased_tail(law, hi) > t
        if not grow.any():
            break
        hi[grow] *= 2.0
    low = np.full(t.shape, float(lo))
    for _ in range(80):
        mid = 0.5 * (low + hi)
        above = size_biased_tail(law, mid) > t
        low = np.where(above, mid, low)
        hi = np.where(above, hi, mid)
    return hi
