"""Argument checks shared by the laws of :mod:`recursions.dists`.

Every constructor and public method of a law checks its arguments with these, so that the laws
word their errors alike: :func:`real_value` and :func:`positive_value` for numbers,
:func:`float_vector` for sequences, :func:`one_of` for exclusive keywords (``rate=`` or
``mean=``), :func:`check_mean` and :func:`check_rates` for the time scales, and
:func:`check_rng`, :func:`check_size` and :func:`check_theta` for the arguments of
:meth:`~recursions.dists.Law.sample` and the tilts. They are apart from the base class
(:mod:`recursions.dists.base`) because they are about arguments, not laws; they import nothing
of :mod:`recursions.dists`, so every module of it may import them.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "PROB_SUM_TOL",
    "FloatArray",
    "check_mean",
    "check_rates",
    "check_rng",
    "check_size",
    "check_theta",
    "float_vector",
    "one_of",
    "positive_value",
    "real_value",
]

#: The float64 arrays the laws take and return.
FloatArray = NDArray[np.float64]

#: Tolerance on ``sum(probs) == 1`` before the probabilities are normalised.
PROB_SUM_TOL = 1e-9


def real_value(name: str, value: Any) -> float:
    """Return ``value`` as a float, or raise ``TypeError`` if it is not a real number."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def positive_value(name: str, value: Any) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    x = real_value(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {x!r}")
    return x


def float_vector(name: str, values: Any) -> FloatArray:
    """Return a fresh 1-D float64 copy of ``values`` (which may be empty)."""
    try:  # np.ndim raises ValueError for a ragged nesting
        scalar = isinstance(values, (str, bytes)) or np.ndim(values) == 0
    except ValueError:
        scalar = False
    if scalar:
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


def check_mean(owner: str, mean: float, by: str = "") -> None:
    """Reject a law whose mean is infinite, NaN, not > 0 or outside the time scales.

    ``by`` names the parameters that set the mean (e.g. ``"rate (mean 1 / rate)"``), so that
    the message names what to change. The mean must lie in ``[SCALE_MIN, SCALE_MAX]``
    (:data:`recursions.common._checks.SCALE_MIN`): outside it, variances and workload statistics
    overflow or underflow float64.
    """
    from recursions.common._checks import SCALE_MAX, SCALE_MIN

    of = f" (set by {by})" if by else ""
    if not (math.isfinite(mean) and mean > 0):
        raise ValueError(
            f"{owner} must have a finite mean > 0 (infinite mean or zero mean not allowed), "
            f"got mean {mean!r}{of}"
        )
    if not SCALE_MIN <= mean <= SCALE_MAX:
        raise ValueError(
            f"{owner} must have a mean in [{SCALE_MIN:g}, {SCALE_MAX:g}], got mean {mean!r}"
            f"{of}: a change of time unit brings any model into this range; outside it "
            "squares of times overflow or underflow float64"
        )


def check_rates(name: str, rates: FloatArray) -> None:
    """Reject phase rates outside ``[1 / SCALE_MAX, 1 / SCALE_MIN]`` (phase means in range)."""
    from recursions.common._checks import SCALE_MAX, SCALE_MIN

    bad = (rates < 1.0 / SCALE_MAX) | (rates > 1.0 / SCALE_MIN)
    if np.any(bad):
        raise ValueError(
            f"{name} must be in [{1.0 / SCALE_MAX:g}, {1.0 / SCALE_MIN:g}] (phase means in "
            f"[{SCALE_MIN:g}, {SCALE_MAX:g}]; change the time unit), got {float(rates[bad][0])!r}"
        )


def check_rng(rng: Any) -> None:
    """Reject an ``rng`` that is not a :class:`numpy.random.Generator` (``TypeError``)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )


def check_size(size: Any) -> int:
    """Return ``size`` as an int after checking it is an integer ``>= 0``."""
    if isinstance(size, bool) or not isinstance(size, numbers.Integral):
        raise TypeError(f"size must be an integer >= 0, got {type(size).__name__}")
    n = int(size)
    if n < 0:
        raise ValueError(f"size must be an integer >= 0, got {n}")
    return n


def check_theta(theta: Any) -> float:
    """A tilt parameter: a real number, not NaN (infinite values are refused too)."""
    th = real_value("theta", theta)
    if not math.isfinite(th):
        raise ValueError(f"theta must be a finite number, got {th!r}")
    return th


def one_of(owner: str, **given: Any) -> tuple[str, Any]:
    """The one keyword of ``given`` that is not ``None`` (``TypeError`` for none or several)."""
    named = [(k, v) for k, v in given.items() if v is not None]
    if len(named) != 1:
        names = " or ".join(f"{k}=" for k in given)
        got = "none" if not named else ", ".join(k for k, _ in named)
        raise TypeError(f"{owner} takes exactly one of {names} (got {got})")
    return named[0]
