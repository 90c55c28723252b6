"""Argument checks shared by ``recursions``, ``coupling`` and ``loynes`` (one wording everywhere).

A wrong *type* raises ``TypeError`` (``bool`` is not a number here: ``True`` passed as a count
is a mistake), a wrong *value* raises ``ValueError``; both name the parameter and show what was
given. The law classes of :mod:`recursions.dists` keep their own checks.

Examples
--------
>>> check_int(3, "servers", 1)
3
>>> check_int(2.5, "servers", 1)
Traceback (most recent call last):
...
TypeError: servers must be an integer, got float
>>> check_int(0, "servers", 1)
Traceback (most recent call last):
...
ValueError: servers must be an integer >= 1, got 0
>>> check_positive("1", "rate")
Traceback (most recent call last):
...
TypeError: rate must be a real number, got str
>>> check_real(1.0, "delta", 0.0, 1.0, open_lo=True, open_hi=True)
Traceback (most recent call last):
...
ValueError: delta must be a finite number in (0, 1), got 1.0
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "MAX_COUNT",
    "SCALE_MAX",
    "SCALE_MIN",
    "check_bool",
    "check_count",
    "check_int",
    "check_nonnegative",
    "check_points",
    "check_positive",
    "check_real",
    "check_scale",
]

SCALE_MIN = 1e-100
"""Smallest mean a law may have (in the user's time unit).

Workload statistics square sums of up to :data:`MAX_COUNT` times; a mean in
``[SCALE_MIN, SCALE_MAX]`` keeps those squares and reciprocals finite and normal in float64
(``(2**53 * 1e100)**2 ~ 1e232``, ``1e-100**2 = 1e-200``). Any physical time unit fits.
"""

SCALE_MAX = 1e100
"""Largest mean a law may have (see :data:`SCALE_MIN`)."""

MAX_COUNT = 2**53
"""Largest ``steps``, ``warmup`` or ``horizon``: the kernels count customers in int64 and
sums of float64 times lose whole units above ``2**53``; at 10^9 customers a second this is
still about 100 days of one run, far beyond any budget."""


def check_int(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an ``int`` in ``[lo, hi]`` (either end optional).

    Parameters
    ----------
    value : Any
        What was given (a Python or numpy integer; ``bool`` is refused).
    name : str
        The parameter's name, for the message.
    lo, hi : int, optional
        Smallest and largest allowed value.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If it is outside ``[lo, hi]``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        if hi is None:
            allowed = f">= {lo}"
        elif lo is None:
            allowed = f"<= {hi}"
        else:
            allowed = f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be an integer {allowed}, got {v}")
    return v


def check_count(value: Any, name: str, lo: int = 1) -> int:
    """``value`` as an ``int`` in ``[lo, MAX_COUNT]``: a number of customers, steps or horizons.

    Parameters
    ----------
    value : Any
        What was given.
    name : str
        The parameter's name, for the message.
    lo : int, default 1
        Smallest allowed value.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If it is below ``lo`` or above :data:`MAX_COUNT` (``2**53``).

    Examples
    --------
    >>> check_count(2**60, "warmup", 0)
    Traceback (most recent call last):
    ...
    ValueError: warmup must be an integer in [0, 2**53], got 1152921504606846976 (above 2**53 \
the int64 counters and float64 sums of times lose whole customers; no run can use that many)
    """
    v = check_int(value, name, lo)
    if v > MAX_COUNT:
        raise ValueError(
            f"{name} must be an integer in [{lo}, 2**53], got {v} (above 2**53 the int64 "
            "counters and float64 sums of times lose whole customers; no run can use that many)")
    return v


def check_scale(value: Any, name: str, what: str = "a mean") -> float:
    """``value`` as a float in ``[SCALE_MIN, SCALE_MAX]``: a time scale (a mean, a value).

    Parameters
    ----------
    value : Any
        What was given.
    name : str
        The parameter's name, for the message (e.g. ``"rate (mean 1/rate)"``).
    what : str, default "a mean"
        What the number is, for the message.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is not finite or outside ``[1e-100, 1e100]``.

    Examples
    --------
    >>> check_scale(1e-300, "mean")
    Traceback (most recent call last):
    ...
    ValueError: mean must be a mean in [1e-100, 1e+100], got 1e-300 (a change of time unit \
brings any model into this range; outside it squares of times overflow or underflow float64)
    """
    x = _as_float(value, name)
    if not SCALE_MIN <= x <= SCALE_MAX:  # also refuses nan
        raise ValueError(
            f"{name} must be {what} in [{SCALE_MIN:g}, {SCALE_MAX:g}], got {x!r} (a change of "
            "time unit brings any model into this range; outside it squares of times "
            "overflow or underflow float64)")
    return x


def _as_float(value: Any, name: str) -> float:
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()
    if (isinstance(value, (bool, str, bytes, np.bool_)) or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_real(value: Any, name: str, lo: float = -math.inf, hi: float = math.inf, *,
               open_lo: bool = False, open_hi: bool = False, finite: bool = True) -> float:
    """``value`` as a ``float`` in the interval from ``lo`` to ``hi``.

    Parameters
    ----------
    value : Any
        A real number (Python, numpy, or a 0-d numeric array); ``bool`` and ``str`` refused.
    name : str
        The parameter's name, for the message.
    lo, hi : float
        The ends of the interval (infinite: no bound).
    open_lo, open_hi : bool, default False
        Whether the ends are excluded.
    finite : bool, default True
        Refuse ``inf`` (``nan`` is always refused).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If it is ``nan``, infinite (with ``finite=True``) or outside the interval.
    """
    x = _as_float(value, name)
    ok = not math.isnan(x) and (math.isfinite(x) or not finite)
    ok = ok and (x > lo if open_lo else x >= lo) and (x < hi if open_hi else x <= hi)
    if not ok:
        if math.isinf(hi):
            cond = f" {'>' if open_lo else '>='} {lo:g}" if math.isfinite(lo) else ""
        elif math.isinf(lo):
            cond = f" {'<' if open_hi else '<='} {hi:g}"
        else:
            cond = f" in {'(' if open_lo else '['}{lo:g}, {hi:g}{')' if open_hi else ']'}"
        raise ValueError(f"{name} must be a {'finite ' if finite else ''}number{cond}, "
                         f"got {value!r}")
    return x


def check_positive(value: Any, name: str) -> float:
    """``value`` as a finite ``float > 0`` (see :func:`check_real`).

    Parameters
    ----------
    value : Any
        What was given.
    name : str
        The parameter's name.

    Returns
    -------
    float
    """
    return check_real(value, name, 0.0, open_lo=True)


def check_nonnegative(value: Any, name: str) -> float:
    """``value`` as a finite ``float >= 0`` (see :func:`check_real`).

    Parameters
    ----------
    value : Any
        What was given.
    name : str
        The parameter's name.

    Returns
    -------
    float
    """
    return check_real(value, name, 0.0)


def check_bool(value: Any, name: str) -> bool:
    """``value`` as a ``bool`` (Python or numpy); anything else is a ``TypeError``.

    Parameters
    ----------
    value : Any
        What was given.
    name : str
        The parameter's name.

    Returns
    -------
    bool
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_points(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array of points ``>= 0`` (``inf`` allowed, ``nan`` refused).

    Parameters
    ----------
    value : float or array_like
        A real number or an array of them.
    name : str
        The parameter's name.

    Returns
    -------
    numpy.ndarray
        Same shape as ``value``.

    Raises
    ------
    TypeError
        If ``value`` is a string or not numeric.
    ValueError
        If a point is negative or ``nan``.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a real number or an array of them, got str")
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must be a real number or an array of them, got {type(value).__name__}"
            + (f" of dtype {arr.dtype}" if isinstance(value, np.ndarray) else "")
        )
    arr = arr.astype(np.float64)
    bad = ~(arr >= 0)
    if bad.any():
        raise ValueError(f"{name} must be >= 0 (and not NaN), got {float(arr[bad][0])!r}")
    return arr
