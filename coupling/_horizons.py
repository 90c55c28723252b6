"""Backward horizons of the exact methods, and the forward run from a past instant to 0.

Each method of :func:`coupling.perfect_sample` searches back from time 0, in time or in
customers: :func:`horizons` checks the horizons a user gave against the method's unit and
fills in its defaults; :func:`run_to_zero` runs a system from a state at a past instant
through given arrivals to time 0.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

import recursions as rc
from recursions.common import check_count, check_positive
from recursions.engines import run_window

__all__ = ["horizons", "run_to_zero"]


def horizons(method: str, unit: str, given: dict[str, Any], start: float,
             cap: float) -> tuple[Any, Any]:
    """The first and largest backward horizon of ``method``, whose unit is ``unit``.

    Parameters
    ----------
    method : str
        The method's name, for the message.
    unit : {"time", "customers"}
        What its horizons count.
    given : dict
        ``start_time``, ``cap_time``, ``start_customers``, ``cap_customers`` as passed
        (``None`` when not).
    start, cap : float or int
        The defaults.

    Returns
    -------
    (float, float) or (int, int)

    Raises
    ------
    ValueError
        For a horizon given in the other unit, or ``start > cap``.

    Examples
    --------
    >>> horizons("monotone", "customers", {"cap_customers": 64}, 16, 2**24)
    (16, 64)
    >>> horizons("monotone", "customers", {"cap_time": 5.0}, 16, 2**24)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: method 'monotone' counts its backward horizons in customers: ..., not cap_time=
    """
    other = "customers" if unit == "time" else "time"
    wrong = [f"{k}_{other}=" for k in ("start", "cap") if given.get(f"{k}_{other}") is not None]
    if wrong:
        raise ValueError(f"method {method!r} counts its backward horizons in {unit}: give "
                         f"start_{unit}= and cap_{unit}=, not {' or '.join(wrong)}")
    s, c = given.get(f"start_{unit}"), given.get(f"cap_{unit}")
    check = check_positive if unit == "time" else functools.partial(check_count, lo=1)
    s = start if s is None else check(s, f"start_{unit}")
    c = cap if c is None else check(c, f"cap_{unit}")
    if s > c:
        raise ValueError(f"need start_{unit} <= cap_{unit}, got start_{unit}={s:g}, "
                         f"cap_{unit}={c:g}")
    return s, c


def run_to_zero(system: rc.System, start: np.ndarray, t_start: float, times: np.ndarray,
         services: np.ndarray) -> np.ndarray:
    """Run ``system`` from ``start`` at time ``t_start`` through arrivals at ``times`` to 0.

    A leading pseudo-arrival with ``sigma = 0`` at ``t_start`` drains the start state up to
    the first arrival (adding 0 to a coordinate changes nothing).
    """
    order = np.argsort(times, kind="stable")
    t = np.concatenate(([t_start], times[order], [0.0]))
    sig = np.concatenate(([0.0], np.asarray(services)[order]))
    tau = np.diff(t)
    u = np.zeros((sig.size, system.uniforms))
    return run_window(system, start.astype(np.float64).copy(), sig, np.maximum(tau, 0.0), u)

