"""Exponential tilting of the laws: moment generating functions and tilted samplers.

The tilted law of ``X`` with parameter ``theta`` is ``exp(theta x) F(dx) / M(theta)`` where
``M(theta) = E[exp(theta X)]``. Random-walk maxima are simulated exactly by sampling under a
tilt that makes the walk drift up, and reweighting (Ensor & Glynn 2000; Blanchet, Pei &
Sigman): :mod:`coupling._ra_walk` uses these for renewal input to the random-assignment bound.

:func:`mgf`, :func:`log_mgf` and :func:`tilted_sampler` take any law :func:`recursions.dists.as_law`
accepts (a frozen scipy distribution too) and call the law's own method
(:meth:`recursions.dists.Law.log_mgf`, :meth:`~recursions.dists.Law.tilted_sampler`): closed
forms for :class:`~recursions.dists.Exponential`, ``Deterministic``, ``Erlang``,
``HyperExponential``, ``Coxian``, ``Uniform``, ``Empirical`` and the scipy ``expon``, ``gamma``
and ``erlang`` families; any other law is handled for ``theta <= 0`` (every law has a Laplace
transform) and for bounded support: ``M`` by quadrature of
``1 + theta * integral exp(theta x) sf(x) dx`` and sampling by rejection from the law itself.
A positive tilt of a heavy-tailed law (log-normal, Lomax: ``M = inf``) or of an unbounded law
without a closed form raises ``ValueError`` naming the law.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from recursions import dists

__all__ = ["cramer_root", "log_mgf", "mgf", "tilted_sampler"]

Sampler = Callable[[np.random.Generator, int], np.ndarray]


def mgf(law: Any, theta: float) -> float:
    """``E[exp(theta X)]`` for ``X`` with law ``law`` (``inf`` where it diverges).

    Parameters
    ----------
    law : recursions.dists.Law or scipy.stats distribution
        The law (see :func:`recursions.dists.as_law`).
    theta : float
        Real tilt parameter, of either sign.

    Returns
    -------
    float
        The moment generating function at ``theta``; ``inf`` where it is infinite.

    Raises
    ------
    ValueError
        For ``theta > 0`` and a heavy-tailed law, or an unbounded law without a closed form.

    Examples
    --------
    >>> from recursions.dists import Exponential, Deterministic
    >>> mgf(Exponential(2.0), 1.0), mgf(Exponential(2.0), 2.0)
    (2.0, inf)
    >>> round(mgf(Deterministic(1.0), -1.0), 6)
    0.367879
    """
    return dists.as_law(law, "law").mgf(theta)


def log_mgf(law: Any, theta: float) -> float:
    """``log E[exp(theta X)]``, computed without overflow (``inf`` where it diverges).

    Parameters
    ----------
    law : recursions.dists.Law or scipy.stats distribution
        The law (see :func:`recursions.dists.as_law`).
    theta : float
        Real tilt parameter, of either sign.

    Returns
    -------
    float
        The cumulant generating function at ``theta`` (``-inf`` if it underflows).

    Raises
    ------
    ValueError
        For ``theta > 0`` and a heavy-tailed law, or an unbounded law without a closed form.

    Examples
    --------
    >>> import scipy.stats
    >>> from recursions.dists import Deterministic, Uniform
    >>> log_mgf(Deterministic(2.0), 500.0)
    1000.0
    >>> round(log_mgf(Uniform(0.0, 1.0), 1000.0), 4)   # 1000 - log(1000)
    993.0922
    >>> round(log_mgf(scipy.stats.gamma(2, scale=0.5), 1.0), 11)   # -2 log(1 - 1/2)
    1.38629436112
    """
    return dists.as_law(law, "law").log_mgf(theta)


def tilted_sampler(law: Any, theta: float) -> Sampler:
    """A sampler of the tilted law ``exp(theta x) F(dx) / M(theta)``.

    Parameters
    ----------
    law : recursions.dists.Law or scipy.stats distribution
        The law ``F`` (see :func:`recursions.dists.as_law`).
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
    >>> draw = tilted_sampler(Exponential(2.0), 1.0)   # the tilted law is Exponential(1)
    >>> x = draw(np.random.default_rng(0), 200_000)
    >>> bool(abs(x.mean() - 1.0) < 0.01)
    True
    """
    return dists.as_law(law, "law").tilted_sampler(theta)


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
