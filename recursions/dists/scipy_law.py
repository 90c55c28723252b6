"""scipy distributions as laws: :class:`ScipyLaw` and :func:`as_law`.

Both kinds of scipy distribution are accepted: the frozen ``rv_continuous`` / ``rv_discrete``
objects (``scipy.stats.gamma(2, scale=0.5)``) and, where the installed scipy has them (1.15 and
later), the distribution objects of the newer infrastructure (``scipy.stats.Uniform(a=0, b=2)``,
``scipy.stats.make_distribution(scipy.stats.gamma)(a=2)``, their shifts and scalings).

A wrapped law has what :class:`~recursions.dists.Law` computes generically (numerical
``integrated_sf``, mgf by quadrature for ``theta <= 0`` or a bounded support, rejection tilts,
size-biased draws by fast numerical inversion of ``x pdf(x) / mean``) and, for the frozen
``expon``, ``gamma`` and ``erlang`` families, the closed-form moment generating function and
tilts, so that methods needing a light tail (a Cramer root) can use them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recursions.dists._checks import FloatArray, check_mean
from recursions.dists._numerics import integrate, stats
from recursions.dists.base import Law, Sampler

__all__ = ["ScipyLaw", "as_law"]


def _is_frozen_scipy(obj: Any) -> bool:
    """Whether ``obj`` is a frozen ``scipy.stats`` distribution (``rv_frozen``)."""
    if not type(obj).__module__.startswith("scipy.stats"):
        return False
    from scipy.stats._distn_infrastructure import rv_frozen  # noqa: PLC2701 - no public name

    return isinstance(obj, rv_frozen)


def _is_new_scipy(obj: Any) -> bool:
    """Whether ``obj`` is a distribution object of scipy's newer infrastructure (>= 1.15)."""
    if not type(obj).__module__.startswith("scipy.stats"):
        return False
    try:
        from scipy.stats._probability_distribution import _ProbabilityDistribution  # noqa: PLC2701 - no public name
    except ImportError:  # pragma: no cover - scipy < 1.15
        return False
    return isinstance(obj, _ProbabilityDistribution)


def _is_scipy(obj: Any) -> bool:
    return _is_frozen_scipy(obj) or _is_new_scipy(obj)


#: Size-biased samplers (UNU.RAN PINV) by ``id`` of the scipy distribution, kept with it.
_PINV_CACHE: dict[int, tuple[Any, Any]] = {}


@dataclass(frozen=True, eq=False, repr=False)
class ScipyLaw(Law):
    """A scipy distribution (continuous or discrete) used as a law.

    ``mean``, ``var`` and ``sf`` come from the distribution and sampling uses
    ``dist.rvs(size=size, random_state=rng)`` (``dist.sample(size, rng=rng)`` for the newer
    distribution objects); ``integrated_sf`` is computed numerically
    (:func:`scipy.integrate.quad` of ``sf``, or a sum over the support for a discrete law), so
    it is much slower than the closed forms of the other laws. Prefer :func:`as_law`.

    Parameters
    ----------
    dist : scipy.stats frozen distribution or distribution object
        Supported on ``[0, inf)`` with a finite mean > 0.
    name : str, default "dist"
        Name of the argument used in error messages.

    Examples
    --------
    >>> import scipy.stats
    >>> from recursions.dists import ScipyLaw
    >>> law = ScipyLaw(scipy.stats.gamma(2, scale=0.5))
    >>> law
    ScipyLaw(gamma(2, scale=0.5); mean=1, scv=0.5)
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
        new = _is_new_scipy(d)
        if not (new or _is_frozen_scipy(d)):
            raise TypeError(
                f"{name} must be a frozen scipy.stats distribution (or a scipy.stats "
                f"distribution object), got {type(d).__name__}"
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
        check_mean(name, mean, f"{name}.mean()")
        object.__setattr__(self, "_mean", mean)
        object.__setattr__(self, "_var", float(d.variance() if new else d.var()))

    def _repr_args(self) -> str:
        d = self.dist
        if self._new:
            return repr(d)
        parts = [repr(a) for a in d.args] + [f"{k}={v!r}" for k, v in d.kwds.items()]
        return f"{d.dist.name}({', '.join(parts)})"

    @property
    def _new(self) -> bool:
        return not _is_frozen_scipy(self.dist)

    @property
    def mean(self) -> float:
        """Mean, ``dist.mean()``."""
        return self._mean

    @property
    def var(self) -> float:
        """Variance, ``dist.var()`` (``dist.variance()``)."""
        return self._var

    def finite_moment(self, k: int) -> bool:
        """Whether ``E[X^k]`` is finite, as scipy computes the moment (``False`` when it fails)."""
        if k <= 2 or math.isfinite(self.support_max):
            return super().finite_moment(k)
        try:
            m = self.dist.moment(k)
        except Exception:
            return False
        return bool(np.isfinite(m))

    @property
    def support_max(self) -> float:
        """The right end of ``dist.support()``."""
        return float(self.dist.support()[1])

    @property
    def closed_form_tails(self) -> bool:
        """``False``: ``integrated_sf`` is a quadrature per point."""
        return False

    @property
    def _discrete(self) -> bool:
        if self._new:
            from scipy.stats._distribution_infrastructure import DiscreteDistribution  # noqa: PLC2701 - no public name

            return isinstance(self.dist, DiscreteDistribution)
        return isinstance(self.dist.dist, stats.rv_discrete)

    def _sample(self, rng: np.random.Generator, size: int) -> FloatArray:
        if self._new:
            return np.asarray(self.dist.sample(size, rng=rng), dtype=np.float64)
        return np.asarray(self.dist.rvs(size=size, random_state=rng), dtype=np.float64)

    def _sf(self, x: FloatArray) -> FloatArray:
        if self._new:
            return np.asarray(self.dist.ccdf(x), dtype=np.float64)
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
            if not self._new:
                return float(self.dist.expect(lambda k: np.maximum(k - w, 0.0)))
            return self._discrete_tail_sum(w, hi)

        def sf(t: float) -> float:
            return float(self._sf(np.array([t]))[0])

        # split at a natural scale so that quad's infinite-range map does not miss the mass
        spread = math.sqrt(self._var) if math.isfinite(self._var) and self._var > 0 else 0.0
        mid = min(w + max(spread, self._mean), hi)
        total = integrate.quad(sf, w, mid, limit=200)[0]
        if mid < hi:
            total += integrate.quad(sf, mid, hi, limit=200)[0]
        return total

    def _discrete_tail_sum(self, w: float, hi: float) -> float:
        """``E[(X - w)^+] = sum_{k > w} (k - w) pmf(k)`` over the integer support."""
        k = math.floor(w) + 1.0
        total = 0.0
        while k <= hi:
            ks = k + np.arange(4096.0)
            ks = ks[ks <= hi]
            total += float(np.sum((ks - w) * np.asarray(self.dist.pmf(ks), dtype=np.float64)))
            k = float(ks[-1]) + 1.0
            if float(self.dist.ccdf(ks[-1])) <= 1e-17:
                break
        return total

    # ---------------------------------------------------------------------------- closed forms

    @property
    def _gamma_form(self) -> tuple[float, float, float] | None:
        """``(shape, loc, scale)`` of a frozen ``expon``, ``gamma`` or ``erlang``, else ``None``."""
        if self._new:
            return None
        d = self.dist
        fam = d.dist.name
        if fam not in ("expon", "gamma", "erlang"):
            return None
        try:
            shapes, loc, scale = d.dist._parse_args(*d.args, **d.kwds)
        except (AttributeError, TypeError, ValueError):  # pragma: no cover - scipy internals
            return None
        a = 1.0 if fam == "expon" else float(shapes[0])
        return a, float(loc), float(scale)

    @property
    def _closed_mgf(self) -> bool:  # type: ignore[override]
        return self._gamma_form is not None

    def _tilt_unavailable(self, theta: float) -> str | None:
        if self._closed_mgf:
            return None
        return super()._tilt_unavailable(theta)

    def _log_mgf(self, th: float) -> float:
        form = self._gamma_form
        if form is None:
            return super()._log_mgf(th)
        a, loc, scale = form
        if th * scale >= 1.0:
            return math.inf
        return th * loc - a * math.log1p(-th * scale)

    def _tilted_sampler(self, th: float) -> Sampler:
        form = self._gamma_form
        if form is None:
            return super()._tilted_sampler(th)
        a, loc, scale = form
        new = scale / (1.0 - th * scale)  # Gamma(a, scale) tilted: Gamma(a, 1 / (1/scale - th))
        return lambda gen, n: loc + gen.gamma(a, new, n)

    def _size_biased_sample(self, gen: np.random.Generator, n: int) -> FloatArray:
        if self._discrete or not hasattr(self.dist, "pdf"):
            return super()._size_biased_sample(gen, n)
        return np.asarray(self._pinv().rvs(size=n, random_state=gen), dtype=np.float64)

    def _pinv(self) -> Any:
        """Fast numerical inversion (UNU.RAN PINV, u-resolution 1e-12) of ``x pdf(x) / m``."""
        d = self.dist
        key = id(d)
        hit = _PINV_CACHE.get(key)
        if hit is None or hit[0] is not d:
            from scipy.stats.sampling import NumericalInversePolynomial

            m = self._mean

            class _SizeBiased:
                def pdf(self, x: float) -> float:
                    if not math.isfinite(x) or x <= 0:
                        return 0.0
                    with np.errstate(all="ignore"):
                        v = float(d.pdf(x))
                    return x * v / m if math.isfinite(v) else 0.0

                def support(self) -> tuple[float, float]:
                    lo, hi = d.support()
                    return float(lo), float(hi)

            # PINV needs only pdf and support; scipy-stubs' protocol also asks for cdf, logpdf
            gen = NumericalInversePolynomial(
                _SizeBiased(),  # type: ignore[arg-type]
                center=m,
                u_resolution=1e-12,
            )
            hit = (d, gen)
            _PINV_CACHE[key] = hit
        return hit[1]


def as_law(dist: Any, name: str = "service") -> Law:
    """Turn a user-supplied law into a :class:`~recursions.dists.Law`.

    Every public function of the project that takes a law passes it through here.

    Parameters
    ----------
    dist : Law or scipy.stats distribution
        A law of :mod:`recursions.dists` (returned unchanged), or a frozen scipy distribution
        (or a distribution object of scipy's newer infrastructure) supported on ``[0, inf)``
        with a finite mean > 0, wrapped in :class:`ScipyLaw`.
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
    TypeError: service must be a recursions.dists law or a scipy.stats distribution ..., got float
    """
    if isinstance(dist, Law):
        return dist
    if _is_scipy(dist):
        return ScipyLaw(dist, name=name)
    raise TypeError(
        f"{name} must be a recursions.dists law or a scipy.stats distribution (frozen, such "
        "as scipy.stats.gamma(2, scale=0.5), or a distribution object such as "
        f"scipy.stats.Uniform(a=0, b=2)), got {type(dist).__name__}"
    )
