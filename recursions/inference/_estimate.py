"""Point estimates with standard errors, and batch means."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Estimate", "ratio_estimate"]


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error.

    ``float(e)`` is ``e.value``; ``e.ci(level)`` a normal confidence interval at ``level``;
    ``print(e)`` shows ``value ± se`` (elementwise for arrays); ``e.to_dict()`` is
    ``{"value": ..., "se": ...}``, JSON-safe.

    A standard error that cannot be trusted (a law with no finite variance behind a mean, batch
    means that failed their test of independence, a run too short for its load) is carried
    with its ``reason``: such an estimate never shows as a bare ``value ± se``. It prints as
    ``value (se not trusted: reason)``, and its dict has ``"se": None`` with the number under
    ``"untrusted_se"`` and the ``"reason"`` beside it, so that a script reading ``"se"``
    cannot take it for a trusted one.

    Parameters
    ----------
    value : float or numpy.ndarray
        The estimate (an array for a profile or a tail at several levels).
    se : float or numpy.ndarray
        Its standard error (batch means); ``nan`` when it cannot be computed.
    reason : str or None, default None
        Why ``se`` cannot be trusted; ``None`` when it can.

    Examples
    --------
    >>> e = Estimate(0.5, 0.01)
    >>> float(e), e.ci(0.95), e.trusted
    (0.5, (0.4804, 0.5196), True)
    >>> print(Estimate(6.216, 0.1328, reason="the service law has no finite variance"))
    6.216 (se not trusted: the service law has no finite variance)
    """

    value: float | np.ndarray
    se: float | np.ndarray
    reason: str | None = None

    @property
    def trusted(self) -> bool:
        """Whether the standard error can be trusted (``reason is None``)."""
        return self.reason is None

    def distrusted(self, reason: str | None) -> Estimate:
        """The same estimate, with ``reason`` as why its standard error cannot be trusted.

        ``None`` gives it back unchanged (a trusted one stays trusted).

        Examples
        --------
        >>> Estimate(1.0, 0.1).distrusted("batch means correlated").trusted
        False
        """
        if reason is None:
            return self
        return Estimate(self.value, self.se, reason)

    def __repr__(self) -> str:
        why = "" if self.reason is None else f", reason={self.reason!r}"
        return f"Estimate(value={self.value!r}, se={self.se!r}{why})"

    def __float__(self) -> float:
        return float(self.value)

    def ci(self, level: float = 0.95) -> tuple[Any, Any]:
        """Normal confidence interval ``value -/+ z se``, rounded to 4 significant digits.

        Parameters
        ----------
        level : float
            Confidence level in (0, 1).

        Returns
        -------
        tuple of float, or of numpy.ndarray
            ``(lower, upper)``; for an array estimate, two arrays of its shape. ``nan`` where
            the standard error is ``nan``.

        Examples
        --------
        >>> Estimate(0.5, 0.01).ci(0.99)
        (0.4742, 0.5258)
        >>> import numpy as np
        >>> lo, hi = Estimate(np.array([1.0, 2.0]), np.array([0.1, 0.2])).ci(0.9)
        >>> lo.tolist(), hi.tolist()
        ([0.8355, 1.671], [1.164, 2.329])
        """
        from scipy.special import ndtri  # norm.ppf, without importing all of scipy.stats

        from recursions.common._checks import check_real

        level = check_real(level, "level", 0.0, 1.0, open_lo=True, open_hi=True)
        z = float(ndtri(0.5 + level / 2))
        lo, hi = self.value - z * self.se, self.value + z * self.se
        if isinstance(lo, np.ndarray) or isinstance(hi, np.ndarray):
            sig = np.vectorize(_sig, otypes=[np.float64])
            return (sig(lo), sig(hi))
        return (_sig(float(lo)), _sig(float(hi)))

    def to_dict(self) -> dict[str, Any]:
        """``{"value": ..., "se": ...}``: Python floats, or lists for an array estimate.

        An estimate whose standard error is not trusted gives ``"se": None``, its number as
        ``"untrusted_se"`` and the ``"reason"``.

        Examples
        --------
        >>> import numpy as np
        >>> Estimate(np.float64(0.5), np.float64(0.01)).to_dict()
        {'value': 0.5, 'se': 0.01}
        >>> Estimate(2.0, 0.3, reason="heavy tail").to_dict()
        {'value': 2.0, 'se': None, 'untrusted_se': 0.3, 'reason': 'heavy tail'}
        """
        from recursions.common._tables import plain

        if self.reason is None:
            return {"value": plain(self.value), "se": plain(self.se)}
        return {"value": plain(self.value), "se": None, "untrusted_se": plain(self.se),
                "reason": self.reason}

    def __format__(self, spec: str) -> str:
        """``value ± se`` with ``spec`` (default ``.4g``) for each; arrays elementwise.

        Examples
        --------
        >>> print(Estimate(0.5, 0.01))
        0.5 ± 0.01
        >>> import numpy as np
        >>> print(Estimate(np.array([0.8123, 0.3201]), np.array([0.0112, 0.0098])))
        [0.8123 ± 0.0112, 0.3201 ± 0.0098]
        >>> f"{Estimate(np.array([[1.0, 2.0]]), np.array([[0.1, 0.2]])):.2f}"
        '[[1.00 ± 0.10, 2.00 ± 0.20]]'
        """
        spec = spec or ".4g"
        if self.reason is not None:
            shown = (format(self.value, spec) if np.ndim(self.value) == 0 else
                     "[" + ", ".join(format(v, spec) for v in np.ravel(self.value)) + "]")
            return f"{shown} (se not trusted: {self.reason})"
        if not isinstance(self.value, np.ndarray) and not isinstance(self.se, np.ndarray):
            return _pm(self.value, self.se, spec)
        value, se = np.broadcast_arrays(np.asarray(self.value), np.asarray(self.se))
        return _pm_nested(value, se, spec)

    def __str__(self) -> str:
        return format(self, "")


def _pm(value: Any, se: Any, spec: str) -> str:
    return f"{format(value, spec)} ± {format(se, spec)}"


def _pm_nested(value: np.ndarray, se: np.ndarray, spec: str) -> str:
    """``value ± se`` for each entry, nested in brackets like a list (a 0-d array: no brackets)."""
    if value.ndim == 0:
        return _pm(value.item(), se.item(), spec)
    return "[" + ", ".join(_pm_nested(v, s, spec) for v, s in zip(value, se, strict=True)) + "]"


def _sig(x: float, digits: int = 4) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


def ratio_estimate(num: np.ndarray, den: np.ndarray) -> Estimate:
    """Ratio of sums with a batch-means standard error.

    Parameters
    ----------
    num, den : numpy.ndarray
        Per-batch sums of numerator and denominator (any shape; batches are pooled).

    Returns
    -------
    Estimate
        ``sum(num) / sum(den)``, with the standard error of the mean of the batch ratios
        (batches of roughly equal size), or ``nan`` with fewer than two usable batches.

    Examples
    --------
    >>> import numpy as np
    >>> ratio_estimate(np.array([1.0, 3.0]), np.array([2.0, 2.0]))
    Estimate(value=1.0, se=0.5)
    """
    num = np.asarray(num, dtype=np.float64).ravel()
    den = np.asarray(den, dtype=np.float64).ravel()
    total = den.sum()
    if total <= 0:
        return Estimate(math.nan, math.nan)
    value = float(num.sum() / total)
    ok = den > 0
    k = int(ok.sum())
    if k < 2:
        return Estimate(value, math.nan)
    r = num[ok] / den[ok]
    return Estimate(value, float(r.std(ddof=1) / math.sqrt(k)))
