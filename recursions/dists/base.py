"""The base class :class:`Law` of the laws: their interface and its generic defaults.

:class:`Law` holds everything a method of the project may ask of a law, each with a generic
implementation written in terms of ``sample``, ``sf`` and ``integrated_sf`` only, so that a new
law (or a wrapped scipy distribution) works everywhere; the built-in laws override the generic
code with their closed forms:

=================================  ==========================================================
method                             generic fallback
=================================  ==========================================================
``log_mgf(theta)``, ``mgf``        ``1 + theta * int exp(theta x) sf(x) dx`` by quadrature
                                   (``theta <= 0``, or a bounded support)
``tilted_sampler(theta)``          rejection from the law itself
``support_max``                    ``inf`` (no bound known)
``size_biased_sample(gen, n)``     rejection from the law (accept ``x / c``) below a split
                                   ``c``, inversion of ``1 - (integrated_sf(x) + x sf(x)) /
                                   mean`` by bisection above
``coxian()``                       ``None`` (not phase-type)
``equilibrium_sf(w)``              ``integrated_sf(w) / mean``
``kernel_sampler()``               ``None`` (no in-kernel sampler: draw with ``sample``)
``exponential_rate``               ``None`` (not an :class:`~recursions.dists.Exponential`)
``closed_form_tails``              ``True`` (``integrated_sf`` is cheap)
=================================  ==========================================================

The argument checks the laws share are in :mod:`recursions.dists._checks`, and the numerical
fallbacks above (quadrature, rejection, inversion of the size-biased tail), with the lazily
imported scipy submodules, in :mod:`recursions.dists._numerics`: this module keeps the
interface of a law and its short defaults, and imports those two, never the other way round.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from recursions.common.codes import LawCode
from recursions.dists._checks import FloatArray, check_rng, check_size, check_theta
from recursions.dists._numerics import (
    quadrature_log_mgf,
    rejection_tilted_sampler,
    size_biased_mixture,
)

__all__ = ["KernelSampler", "Law", "Sampler"]

#: A sampler ``sampler(gen, n)`` returning ``n`` float64 draws from ``gen``.
Sampler = Callable[[np.random.Generator, int], FloatArray]


class KernelSampler(NamedTuple):
    """What a compiled kernel needs to draw from a built-in law (:meth:`Law.kernel_sampler`).

    Attributes
    ----------
    code : recursions.common.codes.LawCode
        Which law.
    params : numpy.ndarray
        Its float64 parameters, in the layout :func:`recursions.dists.kernel.draw_one` reads.
    """

    code: LawCode
    params: FloatArray


def _fmt(x: float) -> str:
    """A short form of a summary number for reprs: six significant digits."""
    return f"{float(x):.6g}"


class Law(ABC):
    """Base class of the service and interarrival laws: a law on ``[0, inf)``.

    Subclasses provide ``mean`` (a property or a field), the ``var`` property and the private
    kernels ``_sample``, ``_sf`` and ``_integrated_sf``; the public methods here validate and
    shape the arguments (``_sf`` and ``_integrated_sf`` only ever see finite points ``>= 0``).
    Everything else a method may need (moment generating function and tilts, the top of the
    support, size-biased draws, the Coxian form, an in-kernel sampler) has a generic
    implementation here that subclasses override with a closed form (the module docstring of
    :mod:`recursions.dists.base` lists them).

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
    >>> law
    Exponential(rate=2.0; mean=0.5, scv=1)
    """

    if TYPE_CHECKING:  # a property of most laws, a field of some (LogNormal)

        @property
        def mean(self) -> float:
            """The mean ``E[X]``."""

    #: Whether ``_log_mgf`` is a closed form (then an infinite value means "no tilt").
    _closed_mgf = False

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

    # ---------------------------------------------------------------------------- repr

    def _repr_args(self) -> str:
        """The constructor arguments shown by ``repr`` (the dataclass fields by default)."""
        if not dataclasses.is_dataclass(self):
            return ""
        return ", ".join(
            f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
        )

    def __repr__(self) -> str:
        args = self._repr_args()
        names = {f.name for f in dataclasses.fields(self)} if dataclasses.is_dataclass(self) else ()
        if "mean" in names and "scv" in names:  # already shown
            return f"{type(self).__name__}({args})"
        summary = f"mean={_fmt(self.mean)}, scv={_fmt(self.scv)}"
        return f"{type(self).__name__}({args}; {summary})" if args else (
            f"{type(self).__name__}({summary})")

    # ---------------------------------------------------------------------------- basics

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
        check_rng(rng)
        n = check_size(size)
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

    # ---------------------------------------------------------------------------- support

    def finite_moment(self, k: int) -> bool:
        """Whether ``E[X^k]`` is finite.

        The generic answer: from the mean for ``k = 1`` and the variance for ``k = 2``; beyond,
        finite for a bounded law, and for every other law unless it overrides this (the
        heavy-tailed :class:`~recursions.dists.Lomax` does; a scipy law is asked for the
        moment itself).

        Parameters
        ----------
        k : int
            The order, ``>= 1``.

        Returns
        -------
        bool

        Examples
        --------
        >>> from recursions.dists import Exponential, Lomax
        >>> Exponential(1.0).finite_moment(4), Lomax(3.5, mean=1.0).finite_moment(4)
        (True, False)
        """
        if k <= 1:
            return math.isfinite(self.mean)
        if k == 2:
            return math.isfinite(self.var)
        return math.isfinite(self.var)

    @property
    def support_max(self) -> float:
        """The least ``b`` with ``P(X <= b) = 1``: ``inf`` for an unbounded law.

        The generic value is ``inf`` (no bound known); bounded laws override it.

        Examples
        --------
        >>> from recursions.dists import Exponential, Uniform
        >>> Uniform(0.5, 2.0).support_max, Exponential(1.0).support_max
        (2.0, inf)
        """
        return math.inf

    @property
    def exponential_rate(self) -> float | None:
        """The rate if this is an :class:`~recursions.dists.Exponential` law, else ``None``.

        The Poisson-input shortcuts of the methods key on it (an Erlang law with one phase, or
        a wrapped ``scipy.stats.expon``, is not taken for one: its draws are not
        ``Exponential``'s).

        Examples
        --------
        >>> from recursions.dists import Erlang, Exponential
        >>> Exponential(2.0).exponential_rate, Erlang(1, 2.0).exponential_rate
        (2.0, None)
        """
        return None

    @property
    def closed_form_tails(self) -> bool:
        """Whether ``integrated_sf`` is cheap (closed form): ``False`` for scipy laws.

        A caller that needs the tail on a fine grid integrates ``sf`` itself when it is not.

        Examples
        --------
        >>> import scipy.stats
        >>> from recursions.dists import Exponential, as_law
        >>> Exponential(1.0).closed_form_tails, as_law(scipy.stats.expon()).closed_form_tails
        (True, False)
        """
        return True

    # ---------------------------------------------------------------------------- tilts

    def _tilt_unavailable(self, theta: float) -> str | None:
        """Why ``E[exp(theta X)]`` cannot be computed (``None`` when it can)."""
        if theta > 0 and not math.isfinite(self.support_max):
            return (
                f"the tilt theta={theta:g} of {self!r} is not available: the law has no "
                "closed-form moment generating function and an unbounded support, so "
                "E[exp(theta X)] for theta > 0 cannot be computed (a heavy-tailed law has "
                "none; for a light-tailed law use a recursions.dists law with a closed form)"
            )
        return None

    def log_mgf(self, theta: float) -> float:
        """``log E[exp(theta X)]``, computed without overflow (``inf`` where it diverges).

        Generic: ``1 + theta * int_0^b exp(theta x) sf(x) dx`` by quadrature, for
        ``theta <= 0`` or a bounded support ``[0, b]``; the built-in light-tailed laws use their
        closed forms.

        Parameters
        ----------
        theta : float
            Real tilt parameter, of either sign.

        Returns
        -------
        float
            The cumulant generating function at ``theta`` (``-inf`` if it underflows).

        Raises
        ------
        ValueError
            For ``theta > 0`` and an unbounded law without a closed form (the message names
            the law).

        Examples
        --------
        >>> from recursions.dists import Deterministic, Exponential
        >>> Deterministic(2.0).log_mgf(500.0)
        1000.0
        >>> Exponential(2.0).log_mgf(2.0)
        inf
        """
        th = check_theta(theta)
        if th == 0.0:
            return 0.0
        return float(self._log_mgf(th))

    def mgf(self, theta: float) -> float:
        """``E[exp(theta X)]`` (``inf`` where it diverges or overflows).

        Parameters
        ----------
        theta : float
            Real tilt parameter, of either sign.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            As :meth:`log_mgf`.

        Examples
        --------
        >>> from recursions.dists import Exponential
        >>> Exponential(2.0).mgf(1.0)
        2.0
        """
        v = self.log_mgf(theta)
        return math.inf if v > 709.0 else math.exp(v)

    def _log_mgf(self, th: float) -> float:
        """Generic ``log E[exp(th X)]`` (``th != 0``) by quadrature of the tail."""
        why = self._tilt_unavailable(th)
        if why is not None:
            raise ValueError(why)
        return quadrature_log_mgf(self, th)

    def tilted_sampler(self, theta: float) -> Sampler:
        """A sampler of the tilted law ``exp(theta x) F(dx) / M(theta)``.

        Generic: rejection from the law itself (accept ``x`` with probability
        ``exp(theta (x - b))``, ``b`` the top of the support for ``theta > 0``, 0 otherwise);
        the built-in laws tilt in closed form.

        Parameters
        ----------
        theta : float
            Tilt, with ``M(theta)`` finite.

        Returns
        -------
        callable
            ``sampler(gen, n)`` returning ``n`` float64 draws.

        Raises
        ------
        ValueError
            Where ``M(theta)`` is infinite or not available (the message names the law).

        Examples
        --------
        >>> import numpy as np
        >>> from recursions.dists import Exponential
        >>> draw = Exponential(2.0).tilted_sampler(1.0)   # the tilted law is Exponential(1)
        >>> x = draw(np.random.default_rng(0), 200_000)
        >>> bool(abs(x.mean() - 1.0) < 0.01)
        True
        """
        th = check_theta(theta)
        why = self._tilt_unavailable(th)
        if why is not None:
            raise ValueError(why)
        if self._closed_mgf and not math.isfinite(self.log_mgf(th)):
            raise ValueError(f"the tilt theta={th:g} of {self!r} does not exist (infinite mgf)")
        if th == 0.0:
            return lambda gen, n: np.asarray(self.sample(gen, n), dtype=np.float64)
        return self._tilted_sampler(th)

    def _tilted_sampler(self, th: float) -> Sampler:
        """Generic tilted sampler (``th != 0``, tilt available): rejection from the law."""
        return rejection_tilted_sampler(self, th)

    # ---------------------------------------------------------------------------- size bias

    def size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        """Draw ``n`` values from the size-biased law ``x F(dx) / mean``.

        Generic (exact): rejection from the law itself (accept ``x`` with probability ``x / c``)
        below a split point ``c``, numerical inversion of ``F~(x) = 1 - (integrated_sf(x) +
        x sf(x)) / mean`` by bisection for the part above it; the built-in laws use closed
        forms.

        Parameters
        ----------
        gen : numpy.random.Generator
            Source of randomness.
        n : int
            How many, ``>= 0``.

        Returns
        -------
        numpy.ndarray
            float64 array of shape ``(n,)``.

        Examples
        --------
        >>> import numpy as np
        >>> from recursions.dists import Exponential
        >>> x = Exponential(1.0).size_biased_sample(np.random.default_rng(0), 100_000)
        >>> round(float(x.mean()), 1)   # E[X^2] / E[X] = 2
        2.0
        """
        check_rng(gen)
        size = check_size(n)
        if size == 0:
            return np.empty(0)
        return np.asarray(self._size_biased_sample(gen, size), dtype=np.float64).reshape(size)

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        """Generic size-biased draws, exact: rejection below a split, bisection above it.

        See :func:`recursions.dists._numerics.size_biased_mixture`.
        """
        return size_biased_mixture(self, gen, n)

    # ---------------------------------------------------------------------------- forms

    def coxian(self) -> Any:
        """The Coxian (phase-type) form of the law, or ``None`` if it has none here.

        :class:`~recursions.dists.Exponential`, :class:`~recursions.dists.Erlang` and
        :class:`~recursions.dists.Coxian` give theirs (what the queue-length chain of
        :mod:`recursions.engines.zerowait` tracks); every other law gives ``None``.

        Returns
        -------
        recursions.dists.Coxian or None

        Examples
        --------
        >>> from recursions.dists import Erlang, LogNormal
        >>> Erlang(2, rate=3.0).coxian()
        Coxian(rates=(3.0, 3.0), probs=(1.0,); mean=0.666667, scv=0.5)
        >>> LogNormal(1.0, 2.0).coxian() is None
        True
        """
        return None

    def kernel_sampler(self) -> KernelSampler | None:
        """The law as an integer code and float64 parameters for a compiled kernel.

        With these, :func:`recursions.dists.kernel.draw_one` (one draw) and
        :func:`recursions.dists.kernel.draw` (``n`` draws) reproduce ``sample`` bit for bit
        from the same :class:`numpy.random.Generator` inside numba code. Only the built-in
        laws have one; ``None`` otherwise (draw with :meth:`sample` outside the kernel).

        Returns
        -------
        KernelSampler or None

        Examples
        --------
        >>> from recursions.dists import Exponential
        >>> code, params = Exponential(4.0).kernel_sampler()
        >>> code.name, params.tolist()
        ('EXPONENTIAL', [0.25])
        """
        return None
