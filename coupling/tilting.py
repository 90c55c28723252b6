"""Exponential tilting of the laws: moment generating functions and tilted samplers.

The tilted law of ``X`` with parameter ``theta`` is ``exp(theta x) F(dx) / M(theta)`` where
``M(theta) = E[exp(theta X)]``. Random-walk maxima are simulated exactly by sampling under a
tilt that makes the walk drift up, and reweighting (Ensor & Glynn 2000; Blanchet, Pei &
Sigman): :mod:`coupling.ra_walk` uses these for renewal input to the random-assignment bound.

Closed forms cover :class:`~recursions.dists.Exponential`, ``Deterministic``, ``Erlang``,
``HyperExponential``, ``Coxian``, ``Uniform`` and ``Empirical``. Any other law is handled for
``theta <= 0`` (every law has a Laplace transform) and for bounded support: ``M`` by
quadrature of ``1 + theta * integral exp(theta x) sf(x) dx`` and sampling by rejection from
the law itself. A positive tilt of an unbounded law without a closed form (log-normal, Lomax:
``M = inf``) raises ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from recursions import dists

from .dominating import support_max

__all__ = ["cramer_root", "log_mgf", "mgf", "tilted_sampler"]

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def _logsumexp(a: np.ndarray) -> float:
    m = float(np.max(a))
    return m + math.log(float(np.sum(np.exp(a - m))))


def _coxian_paths(law: dists.Coxian, theta: float):
    """Exit probabilities after each phase and the mgf of each path (``None`` if infinite)."""
    r = np.asarray(law.rates)
    q = np.append(np.asarray(law.probs), 0.0)
    reach = np.concatenate(([1.0], np.cumprod(q[:-1])))
    w = reach * (1.0 - q)
    live = reach > 0
    if theta >= r[live].min():
        return None, None
    ratio = np.cumprod(np.where(live, r / np.where(live, r - theta, 1.0), 1.0))
    return w, ratio


def _generic_ok(law: dists.Law, theta: float) -> bool:
    return theta <= 0 or math.isfinite(support_max(law))


def mgf(law: dists.Law, theta: float) -> float:
    """``E[exp(theta X)]`` for ``X`` with law ``law`` (``inf`` where it diverges).

    Parameters
    ----------
    law : recursions.dists.Law
        The law.
    theta : float
        Real tilt parameter, of either sign.

    Returns
    -------
    float
        The moment generating function at ``theta``; ``inf`` where it is infinite.

    Raises
    ------
    ValueError
        For ``theta > 0`` and an unbounded law without a closed form.

    Examples
    --------
    >>> from recursions.dists import Exponential, Deterministic
    >>> mgf(Exponential(2.0), 1.0), mgf(Exponential(2.0), 2.0)
    (2.0, inf)
    >>> round(mgf(Deterministic(1.0), -1.0), 6)
    0.367879
    """
    v = log_mgf(law, theta)
    return math.inf if v > 709.0 else math.exp(v)


def log_mgf(law: dists.Law, theta: float) -> float:
    """``log E[exp(theta X)]``, computed without overflow (``inf`` where it diverges).

    Parameters
    ----------
    law : recursions.dists.Law
        The law.
    theta : float
        Real tilt parameter, of either sign.

    Returns
    -------
    float
        The cumulant generating function at ``theta`` (``-inf`` if it underflows).

    Raises
    ------
    ValueError
        For ``theta > 0`` and an unbounded law without a closed form.

    Examples
    --------
    >>> from recursions.dists import Deterministic, Uniform
    >>> log_mgf(Deterministic(2.0), 500.0)
    1000.0
    >>> round(log_mgf(Uniform(0.0, 1.0), 1000.0), 4)   # 1000 - log(1000)
    993.0922
    """
    th = float(theta)
    if th == 0.0:
        return 0.0
    if isinstance(law, dists.Exponential):
        return math.log(law.rate / (law.rate - th)) if th < law.rate else math.inf
    if isinstance(law, dists.Deterministic):
        return th * law.value
    if isinstance(law, dists.Erlang):
        return law.k * math.log(law.rate / (law.rate - th)) if th < law.rate else math.inf
    if isinstance(law, dists.HyperExponential):
        r, p = np.asarray(law.rates), np.asarray(law.probs)
        if th >= r.min():
            return math.inf
        return math.log(float(np.sum(p * r / (r - th))))
    if isinstance(law, dists.Coxian):
        w, ratio = _coxian_paths(law, th)
        if w is None:
            return math.inf
        return math.log(float(np.sum(w * ratio)))
    if isinstance(law, dists.Uniform):
        lo, w = law.low, law.high - law.low
        x = th * w
        if x == 0.0:
            return th * lo
        if x > 30.0:  # log(expm1(x) / x) = x + log1p(-exp(-x)) - log(x)
            return th * lo + x + math.log1p(-math.exp(-x)) - math.log(x)
        if x < -30.0:  # expm1(x) / x = (1 - exp(x)) / -x
            return th * lo + math.log1p(-math.exp(x)) - math.log(-x)
        return th * lo + math.log(math.expm1(x) / x)
    if isinstance(law, dists.Empirical):
        v, p = np.asarray(law.values), np.asarray(law.weights)
        keep = p > 0
        return _logsumexp(th * v[keep] + np.log(p[keep]))
    if not _generic_ok(law, th):
        raise ValueError(f"{law!r} has no closed-form moment generating function and is "
                         "unbounded: E[exp(theta X)] for theta > 0 is not available (a "
                         "heavy-tailed law has none)")
    from scipy import integrate

    b = support_max(law)

    def f(x: float) -> float:
        return math.exp(th * x) * float(law.sf(x))

    top = b if math.isfinite(b) else math.inf
    val, _ = integrate.quad(f, 0.0, top, epsabs=1e-14, epsrel=1e-12, limit=200)
    m = 1.0 + th * val
    return math.log(m) if m > 0 else -math.inf


def tilted_sampler(law: dists.Law, theta: float) -> Sampler:
    """A sampler of the tilted law ``exp(theta x) F(dx) / M(theta)``.

    Parameters
    ----------
    law : recursions.dists.Law
        The law ``F``.
    theta : float
        Tilt, with ``M(theta)`` finite.

    Returns
    -------
    callable
        ``sampler(gen, n)`` returning ``n`` float64 draws.

    Raises
    ------
    ValueError
        Where ``M(theta)`` is infinite or not available.

    Examples
    --------
    >>> import numpy as np
    >>> from recursions.dists import Exponential
    >>> draw = tilted_sampler(Exponential(2.0), 1.0)   # the tilted law is Exponential(1)
    >>> x = draw(np.random.default_rng(0), 200_000)
    >>> bool(abs(x.mean() - 1.0) < 0.01)
    True
    """
    th = float(theta)
    closed = (dists.Exponential, dists.Deterministic, dists.Erlang, dists.HyperExponential,
              dists.Uniform, dists.Empirical, dists.Coxian)
    if isinstance(law, closed) and not math.isfinite(mgf(law, th)):
        raise ValueError(f"the tilt theta={th:g} of {law!r} does not exist (infinite mgf)")
    if not isinstance(law, closed) and not _generic_ok(law, th):
        raise ValueError(f"the tilt theta={th:g} of {law!r} is not available (unbounded law "
                         "without a closed-form mgf)")
    if th == 0.0:
        return lambda gen, n: np.asarray(law.sample(gen, n), dtype=np.float64)
    if isinstance(law, dists.Exponential):
        scale = 1.0 / (law.rate - th)
        return lambda gen, n: gen.exponential(scale, n)
    if isinstance(law, dists.Deterministic):
        v = float(law.value)
        return lambda gen, n: np.full(n, v)
    if isinstance(law, dists.Erlang):
        k, scale = law.k, 1.0 / (law.rate - th)
        return lambda gen, n: gen.gamma(k, scale, n)
    if isinstance(law, dists.HyperExponential):
        r, p = np.asarray(law.rates), np.asarray(law.probs)
        w = p * r / (r - th)
        w = w / w.sum()
        new = r - th

        def hyper(gen: np.random.Generator, n: int) -> np.ndarray:
            j = gen.choice(r.size, size=n, p=w)
            return gen.exponential(1.0, n) / new[j]

        return hyper
    if isinstance(law, dists.Coxian):
        w, ratio = _coxian_paths(law, th)
        pk = w * ratio
        pk = pk / pk.sum()
        new = np.asarray(law.rates) - th

        def coxian(gen: np.random.Generator, n: int) -> np.ndarray:
            k = gen.choice(pk.size, size=n, p=pk)  # exit after phase k
            x = gen.exponential(1.0, (n, pk.size)) / new
            return np.where(np.arange(pk.size) <= k[:, None], x, 0.0).sum(axis=1)

        return coxian
    if isinstance(law, dists.Uniform):
        lo, width = float(law.low), float(law.high - law.low)
        if width == 0.0:
            return lambda gen, n: np.full(n, lo)
        c = math.expm1(th * width)

        def uniform(gen: np.random.Generator, n: int) -> np.ndarray:
            return lo + np.log1p(gen.random(n) * c) / th

        return uniform
    if isinstance(law, dists.Empirical):
        v, p = np.asarray(law.values), np.asarray(law.weights)
        keep = p > 0
        v = v[keep]
        lw = th * v + np.log(p[keep])
        w = np.exp(lw - lw.max())
        w = w / w.sum()
        return lambda gen, n: v[gen.choice(v.size, size=n, p=w)]
    # rejection from the law itself: accept x with probability exp(theta (x - top))
    top = 0.0 if th < 0 else support_max(law)

    def rejection(gen: np.random.Generator, n: int) -> np.ndarray:
        out = np.empty(0)
        while out.size < n:
            x = np.asarray(law.sample(gen, 2 * (n - out.size) + 8), dtype=np.float64)
            out = np.concatenate((out, x[gen.random(x.size) < np.exp(th * (x - top))]))
        return out[:n]

    return rejection


def cramer_root(log_mgf: Callable[[float], float], drift: float, scale: float) -> float:
    """The root ``theta > 0`` of ``log E[exp(theta X)] = 0`` for a walk with negative drift.

    Parameters
    ----------
    log_mgf : callable
        ``theta -> log E[exp(theta X)]`` (``inf`` where it diverges); convex, 0 at 0.
    drift : float
        ``E[X] < 0``.
    scale : float
        A length scale of ``X`` (e.g. ``E|X|``) used to bracket the root.

    Returns
    -------
    float
        The root, or ``inf`` when ``log_mgf`` stays negative (the walk never rises).

    Raises
    ------
    ValueError
        If ``drift >= 0``.

    Examples
    --------
    >>> import math
    >>> # X = Exp(1) - 2: log E[e^{tX}] = -log(1 - t) - 2t
    >>> round(cramer_root(lambda t: -math.log(1 - t) - 2 * t if t < 1 else math.inf, -1.0, 1.0), 6)
    0.796812
    """
    if not drift < 0:
        raise ValueError(f"the walk must drift down (E[X] < 0), got {drift:g}")
    from scipy import optimize

    lo, hi = 0.0, 1.0 / scale
    for _ in range(2000):
        v = log_mgf(hi)
        if v == math.inf or math.isnan(v):  # beyond the domain: come back toward lo
            hi = 0.5 * (lo + hi)
        elif v > 0:
            break
        elif v == 0:
            return float(hi)
        else:
            lo = hi
            if hi * scale > 1e6:
                return math.inf
            hi = 2.0 * hi
    else:  # pragma: no cover - needs an mgf that jumps from below 1 to inf
        raise ValueError("no Cramer root: the mgf is infinite before it reaches 1")
    if lo == 0.0:  # log_mgf < 0 just right of 0 since the drift is negative
        lo = hi
        for _ in range(2000):
            lo *= 0.5
            if log_mgf(lo) < 0:
                break
    return float(optimize.brentq(log_mgf, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))
