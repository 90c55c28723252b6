"""The targets of ``precision=``: a half-width per statistic, each relative or absolute.

``simulate(precision=...)`` takes one half-width for every statistic it targets, or a dict
``{statistic: target}``. A target given as a plain number is relative to the estimate unless
``relative=False``; :func:`relative` and :func:`absolute` say it for one statistic, so that a
single run can ask for P(wait) to ±0.005 and the mean response to ±2%:

>>> import recursions as rc
>>> targets = {"p_wait": rc.absolute(0.005), "mean_response": rc.relative(0.02)}
>>> half_widths(targets, relative=True)["p_wait"]
HalfWidth(value=0.005, relative=False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["HalfWidth", "absolute", "half_widths", "relative"]


@dataclass(frozen=True)
class HalfWidth:
    """A target half-width of a confidence interval.

    Parameters
    ----------
    value : float
        The half-width (> 0, finite).
    relative : bool
        Whether it is a fraction of the estimate (``0.02``: ±2%) or in the statistic's units.

    Examples
    --------
    >>> HalfWidth(0.02, relative=True).of(5.0)
    0.1
    """

    value: float
    relative: bool

    def __post_init__(self) -> None:
        try:
            ok = math.isfinite(float(self.value)) and float(self.value) > 0
        except (TypeError, ValueError):
            ok = False
        if not ok or isinstance(self.value, bool):
            raise ValueError(f"precision must be a finite half-width > 0, got {self.value!r}")
        object.__setattr__(self, "value", float(self.value))

    def of(self, estimate: float) -> float:
        """The half-width in the statistic's units, for an ``estimate`` of it."""
        return self.value * abs(estimate) if self.relative else self.value

    def __str__(self) -> str:
        return f"{self.value:g} relative" if self.relative else f"{self.value:g}"


def relative(value: float) -> HalfWidth:
    """A half-width relative to the estimate: ``relative(0.02)`` asks for ±2%.

    Examples
    --------
    >>> relative(0.02)
    HalfWidth(value=0.02, relative=True)
    """
    return HalfWidth(value, True)


def absolute(value: float) -> HalfWidth:
    """A half-width in the statistic's own units: ``absolute(0.005)`` asks for ±0.005.

    Examples
    --------
    >>> absolute(0.005)
    HalfWidth(value=0.005, relative=False)
    """
    return HalfWidth(value, False)


def half_widths(precision: Any, relative: bool) -> dict[str, HalfWidth]:
    """``precision=`` as targets by statistic; ``""`` stands for every statistic targeted.

    Parameters
    ----------
    precision : float, HalfWidth or dict of str to float or HalfWidth
        What ``simulate`` was given.
    relative : bool
        What a plain number means (``simulate``'s ``relative=``).

    Returns
    -------
    dict of str to HalfWidth

    Raises
    ------
    ValueError
        For an empty dict or a half-width that is not a finite number > 0.
    TypeError
        For a statistic's name that is not a string.
    """
    wanted = dict(precision) if isinstance(precision, Mapping) else {"": precision}
    if not wanted:
        raise ValueError("precision must give a half-width, or a dict naming at least one "
                         "statistic")
    out = {}
    for name, tol in wanted.items():
        if not isinstance(name, str):
            raise TypeError(f"precision: a statistic's name must be a str, got {name!r}")
        try:
            out[name] = tol if isinstance(tol, HalfWidth) else HalfWidth(tol, bool(relative))
        except ValueError as exc:
            raise ValueError(f"{exc}" + (f" for {name}" if name else "")) from None
    return out
