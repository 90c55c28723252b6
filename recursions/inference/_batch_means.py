"""Output analysis of a run's batch sums: truncation, independence of batch means, intervals.

Every statistic of :func:`recursions.simulate` is a ratio of sums, ``sum(num) / sum(den)``
(waits over joined customers, waiting arrivals over arrivals, ...), accumulated per batch of
consecutive arrivals in each replication: arrays ``num, den`` of shape
``(replications, batches)``. This module turns them into confidence intervals that say when
they cannot be trusted.

The method (a fixed-number-of-batches procedure with an independence test, in the spirit of
ASAP3 and Skart; Steiger, Lada, Wilson, Joines and Alexopoulos 2005; Tafazzoli and Wilson
2011):

1. **Truncation** (:func:`mser`): MSER (White 1997; Franklin and White 2008) on the series of
   pooled batch ratios: drop the ``d`` first batches that minimise the standard error of the
   mean of the rest, ``d`` at most half the batches. A minimum in the second half means the run
   shows no steady part, which is reported.
2. **Independence** (:func:`von_neumann_z`): the lag-1 von Neumann ratio of the linearised
   batch means ``y_j = num_j - theta den_j`` of each replication, pooled over replications into
   one normal score. While it rejects independence at level :data:`INDEPENDENCE_ALPHA`
   (one-sided: positive correlation), adjacent batches are merged in pairs; if it still rejects
   with fewer than :data:`MIN_BATCHES` batches left, the interval is marked untrusted.
3. **Margin**: the batch size used is the second of two consecutive sizes that pass, with at
   least :data:`MIN_BATCHES` batches left (a weak test passes some correlated batches once; a
   larger batch that passes again removes most of what it missed).
4. **Interval**: Student's t with ``K - 1`` degrees of freedom around ``theta``, with the
   delta-method (ratio) standard error of the ``K`` pooled batch means, and Willink's (2005)
   skewness correction as in Skart: the arm on the side of the batch means' long tail is
   longer (waits are skewed right; a symmetric interval misses low runs, whose spread is small
   too).

The coverage this gives is measured by ``benchmarks/coverage.py``; the tables are on the docs'
Intervals page, section Coverage (``docs/intervals.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from recursions.common._tables import Record

__all__ = ["INDEPENDENCE_ALPHA", "MIN_BATCHES", "Interval", "interval",
           "merge_batches", "mser", "quantile_interval", "replication_interval", "truncated",
           "von_neumann_z"]

INDEPENDENCE_ALPHA = 0.1
"""Level of the one-sided lag-1 test of independence of the batch means."""

MIN_BATCHES = 16
"""The fewest pooled batch means an interval is built on (15 degrees of freedom)."""

MAX_BATCHES = 32
"""The most pooled batch means an interval is built on: batches that passed the test are merged
further down to this many (a lag-1 test misses the long, slowly decaying correlations of
waits near saturation, which larger batches absorb)."""


@dataclass(frozen=True)
class Interval(Record):
    """A confidence interval for one statistic, and whether its batch means were independent.

    Attributes
    ----------
    statistic : str
        Its name (``"p_wait"``, ``"mean_wait"``, ...).
    value : float
        The point estimate.
    half_width : float
        Half the interval's length, ``(upper - lower) / 2`` (``t se`` when the batch means
        are not skewed); ``nan`` when it could not be computed.
    se : float
        The standard error (of the pooled batch means, delta method for the ratio).
    confidence : float
        The nominal level.
    batches : int
        Pooled batch means the interval rests on (the effective number of independent
        batches); 0 when independence was rejected at every batch size.
    batch_size : int
        Base batches merged into each of them.
    trusted : bool
        Whether the batch means passed the independence test with at least
        :data:`MIN_BATCHES` of them.
    reason : str
        Why it is not trusted (empty when it is).
    shift : float, default 0
        Where the interval's centre lies against ``value``: the skewness correction moves it
        to the side of the batch means' long tail (``lower = value + shift - half_width``).

    Examples
    --------
    >>> iv = Interval("p_wait", 0.5, 0.1, 0.05, 0.95, 32, 1, True, "")
    >>> iv.lower, iv.upper, iv.covers(0.55)
    (0.4, 0.6, True)
    """

    statistic: str
    value: float
    half_width: float
    se: float
    confidence: float
    batches: int
    batch_size: int
    trusted: bool
    reason: str
    shift: float = 0.0

    @property
    def lower(self) -> float:
        """``value + shift - half_width``."""
        return self.value + self.shift - self.half_width

    @property
    def upper(self) -> float:
        """``value + shift + half_width``."""
        return self.value + self.shift + self.half_width

    def covers(self, x: float) -> bool:
        """Whether ``x`` lies in ``[lower, upper]``."""
        return bool(self.lower <= x <= self.upper)

    def relative_half_width(self) -> float:
        """``half_width / |value|`` (``inf`` at a zero value)."""
        return self.half_width / abs(self.value) if self.value != 0 else math.inf

    def __str__(self) -> str:
        note = "" if self.trusted else f" (not trusted: {self.reason})"
        arms = (f"+- {self.half_width:.3g}" if self.shift == 0 else
                f"in [{self.lower:.6g}, {self.upper:.6g}]")
        return (f"{self.statistic} = {self.value:.6g} {arms} "
                f"({self.confidence:g}, {self.batches} batches){note}")


def _as_2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    return a.reshape(1, -1) if a.ndim == 1 else a.reshape(a.shape[0], -1)


def mser(num: np.ndarray, den: np.ndarray, side: int = 0) -> tuple[int, bool]:
    """MSER truncation: the batches to drop from the start, and whether a steady part was found.

    Parameters
    ----------
    num, den : numpy.ndarray
        Batch sums, shape ``(replications, batches)`` (or ``(batches,)``).
    side : {-1, 0, 1}, default 0
        Which way the transient lies: ``-1`` when the start is below the steady level (from
        empty, a monotone system's workloads and waits grow stochastically to their stationary
        law), ``1`` above it; only a prefix whose mean lies on that side of the mean of the
        batches kept counts as transient. ``0``: either side.

    Returns
    -------
    int, bool
        ``d`` (batches to drop in every replication, searched over the first half of them)
        and ``False`` when the minimum sits at that boundary, half the run (no steady part:
        the run is too short for its transient, or the system drifts).

    Notes
    -----
    Two-sided, the rule also cuts stationary excursions: waits are skewed, a high excursion
    near the start weighs most in the score, and dropping it biases the mean down and the
    standard error too. Pass the side of the transient when it is known (``-1`` from empty):
    one-sided, the intervals cover as well as with a long fixed warm-up, two-sided they do
    not. Measured in the Benchmarks page of the docs (``docs/benchmarks.md``), section
    :ref:`One-sided MSER truncation <bench-mser-side>`.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.linspace(10, 1, 8), np.ones(56) + 0.1 * np.sin(np.arange(56))]
    >>> mser(x, np.ones(64))   # the 8th batch is already at the steady level
    (7, True)
    >>> mser(x, np.ones(64), side=-1)   # a start above the steady level is not cut as "below"
    (0, True)
    >>> mser(np.arange(64.0), np.ones(64))   # a drift: no steady part
    (32, False)
    """
    n, d = _as_2d(num).sum(axis=0), _as_2d(den).sum(axis=0)
    ok = d > 0
    x = n[ok] / d[ok]
    b = x.size
    if b < 4 or not ok.all():
        return 0, True
    # for every d: sum over j >= d of (x_j - mean)^2 / (b - d)^2, from suffix sums
    s1 = np.cumsum(x[::-1])[::-1]
    s2 = np.cumsum((x * x)[::-1])[::-1]
    m = np.arange(b, 0, -1, dtype=np.float64)
    half = b // 2  # the rule searches the first half only: the score over the last few
    # batches is too noisy to compare (searched whole, it flagged stationary runs as drifting
    # and biased the mean down by cutting them in half: docs/intervals.md, intervals-mser)
    score = ((s2 - s1 * s1 / m) / (m * m))[: half + 1]
    if side:
        prefix = np.cumsum(x)[:half] / np.arange(1, half + 1)  # mean of the d first, d >= 1
        wrong = np.sign(side) * (prefix - s1[1: half + 1] / m[1: half + 1]) < 0
        score[1:][wrong] = np.inf
    best = int(np.argmin(score))
    return best, best < half


def truncated(sums: Mapping[str, tuple[np.ndarray, np.ndarray]], key: str | None,
              side: int = 0) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], int, bool]:
    """Every statistic's batch sums after the MSER truncation chosen on ``key``'s series.

    Parameters
    ----------
    sums : mapping of str to (numpy.ndarray, numpy.ndarray)
        Each statistic's batch sums ``(num, den)``, shape ``(replications, batches)``.
    key : str or None
        The statistic whose series :func:`mser` cuts (``None``: nothing is cut).
    side : {-1, 0, 1}, default 0
        As for :func:`mser`.

    Returns
    -------
    dict, int, bool
        The sums without the first ``d`` batches of every replication, ``d``, and whether a
        steady part was found.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.r_[np.linspace(10, 1, 8), np.ones(56)][None, :]
    >>> kept, d, steady = truncated({"w": (x, np.ones_like(x))}, "w")
    >>> d, steady, kept["w"][0].shape
    (7, True, (1, 57))
    """
    drop, steady = (0, True) if key is None else mser(*sums[key], side=side)
    return {k: (n[:, drop:], d[:, drop:]) for k, (n, d) in sums.items()}, drop, steady


def von_neumann_z(y: np.ndarray) -> float:
    """Pooled normal score of the lag-1 von Neumann statistic of each row of ``y``.

    Under independence each row's ``C = 1 - sum (y_j - y_{j+1})^2 / (2 sum (y_j - ybar)^2)``
    has mean 0 and variance ``(k - 2) / (k^2 - 1)`` (``k`` values; von Neumann 1941); the rows
    (replications) are independent, so ``sum C / sqrt(R var)`` is about standard normal. A
    large positive score means positively correlated batch means.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> abs(von_neumann_z(rng.standard_normal((4, 64)))) < 3
    True
    >>> z = np.cumsum(rng.standard_normal(64))  # a random walk: strongly correlated
    >>> von_neumann_z(z) > 3
    True
    """
    y = _as_2d(y)
    k = y.shape[1]
    if k < 3:
        return math.inf
    dev = y - y.mean(axis=1, keepdims=True)
    ss = (dev * dev).sum(axis=1)
    diff = np.diff(y, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = 1.0 - (diff * diff).sum(axis=1) / (2.0 * ss)
    c = c[ss > 0]
    if c.size == 0:
        return 0.0  # constant batch means: nothing correlates
    var = (k - 2.0) / (k * k - 1.0)
    return float(c.sum() / math.sqrt(c.size * var))


def _pooled(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray, float | None]:
    """The batch sums as 2-d arrays, and ``sum(num) / sum(den)`` (``None`` with no weight)."""
    n, d = _as_2d(num), _as_2d(den)
    total = d.sum()
    return n, d, (float(n.sum() / total) if total > 0 else None)


def _empty(statistic: str, confidence: float) -> Interval:
    """The interval of a statistic that observed nothing."""
    return Interval(statistic, math.nan, math.nan, math.nan, confidence, 0, 1, False,
                    "no observation")


def merge_batches(a: np.ndarray, g: int) -> np.ndarray:
    """Batch sums ``a`` (replications, batches, ...) with each ``g`` adjacent batches added.

    The one way batches are merged: the interval procedure's larger batch sizes, and the
    default fine batches of a fixed-budget run merged into the 32 behind its estimates
    (:func:`recursions.engines._run_plan.default_batches`). When ``g`` does not divide the batches,
    the leftover batches at the start (the oldest) are dropped.

    Parameters
    ----------
    a : numpy.ndarray
        Batch sums, shape ``(replications, batches, ...)``.
    g : int
        Adjacent batches added into one.

    Returns
    -------
    numpy.ndarray
        Shape ``(replications, batches // g, ...)``; ``a`` itself when ``g`` is 1.

    Examples
    --------
    >>> merge_batches(np.arange(8.0).reshape(1, 4, 2), 2)
    array([[[ 2.,  4.],
            [10., 12.]]])
    >>> merge_batches(np.arange(5.0).reshape(1, 5), 2)  # batch 0 dropped
    array([[3., 7.]])
    """
    if g == 1:
        return a
    a = np.asarray(a)
    k = a.shape[1] // g
    return a[:, a.shape[1] - k * g:].reshape(a.shape[0], k, g, *a.shape[2:]).sum(axis=2)


def _t_quantile(p: float, dof: int) -> float:
    """Student's t quantile, ``scipy.stats.t.ppf(p, dof)`` without importing scipy.stats."""
    from scipy.special import stdtrit

    return float(stdtrit(dof, p))


def interval(num: np.ndarray, den: np.ndarray, confidence: float = 0.95, *,
             statistic: str = "value", min_batches: int = MIN_BATCHES,
             max_batches: int = MAX_BATCHES, alpha: float = INDEPENDENCE_ALPHA) -> Interval:
    """The confidence interval of ``sum(num) / sum(den)`` from its batch sums.

    Parameters
    ----------
    num, den : numpy.ndarray
        Batch sums, shape ``(replications, batches)`` (or ``(batches,)``), in time order.
    confidence : float, default 0.95
        Nominal level, in ``(0, 1)``.
    statistic : str
        The name the interval carries.
    min_batches : int, default :data:`MIN_BATCHES`
        The fewest pooled batch means to build on.
    alpha : float, default :data:`INDEPENDENCE_ALPHA`
        Level of the independence test.

    Returns
    -------
    Interval

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> iv = interval(rng.normal(1.0, 0.1, 64), np.ones(64), statistic="x")
    >>> iv.trusted, iv.batches, iv.covers(1.0)
    (True, 32, True)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    n, d, theta = _pooled(num, den)
    if theta is None:
        return _empty(statistic, confidence)
    R, B = n.shape
    zcrit = _normal_quantile(1.0 - alpha)
    g, found, last, passed = 1, None, 1, False
    while R * (B // g) >= min_batches and B // g >= 3:
        last = g
        y = merge_batches(n, g) - theta * merge_batches(d, g)
        ok = von_neumann_z(y) <= zcrit
        if ok and passed:  # two batch sizes in a row pass: use the larger
            found = g
            break
        passed = ok
        g *= 2
    if found is None:
        if R * B < 2 * min_batches:
            return _build(statistic, n, d, theta, confidence, 1, False,
                          f"{R * B} batch means are too few for the test of independence "
                          f"(it needs {2 * min_batches}): pass more batches= or replications")
        return _build(statistic, n, d, theta, confidence, last, False,
                      f"the batch means stay correlated down to {R * (B // last)} batches: "
                      "the run is too short for its correlation time")
    while R * (B // found) > max_batches and R * (B // (found * 2)) >= min_batches:
        found *= 2  # no more than max_batches batch means (none fewer than min_batches)
    return _build(statistic, n, d, theta, confidence, found, True, "")


def _normal_quantile(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(p)


def _build(statistic: str, n: np.ndarray, d: np.ndarray, theta: float, confidence: float,
           g: int, trusted: bool, reason: str) -> Interval:
    nm, dm = merge_batches(n, g), merge_batches(d, g)
    K = nm.size
    if K < 2:
        return Interval(statistic, theta, math.nan, math.nan, confidence, 0, g, False,
                        reason or "fewer than two batches")
    y = (nm - theta * dm).ravel()
    dbar = dm.mean()
    se = math.sqrt(float((y * y).sum()) / (K * (K - 1))) / dbar if dbar > 0 else math.nan
    if se == 0.0:  # every batch alike (no event seen, e.g. nobody waited): no spread to use
        return Interval(statistic, theta, math.nan, math.nan, confidence, 0, g, False,
                        "the batch means do not vary (no event observed, e.g. no customer "
                        "waited): the run says nothing about the error; run longer, or ask "
                        "for an absolute precision")
    t = _t_quantile(0.5 + confidence / 2.0, K - 1)
    lo, hi = _skew_adjusted(t, y, K)
    lo, hi = min(lo, 0.0), max(hi, 0.0)  # the estimate stays inside (at a low confidence)
    return Interval(statistic, theta, (hi - lo) / 2 * se, se, confidence, K if trusted else 0,
                    g, trusted, reason, (lo + hi) / 2 * se)


def _skew_adjusted(t: float, y: np.ndarray, K: int) -> tuple[float, float]:
    """The arms ``(lo, hi)``, in standard errors, of the skewness-adjusted t interval.

    Willink's (2005) correction, as Skart and N-Skart use it (Tafazzoli, Wilson, Lada and
    Steiger 2011): with the batch means' sample skewness ``B`` and ``beta = B / (6 sqrt K)``,
    ``G(z) = ((1 + 6 beta (z - beta))^(1/3) - 1) / (2 beta)`` and the interval
    ``[mean - G(t) se, mean - G(-t) se]``. Waits are skewed to the right: a run that has not
    yet met a long excursion has a low mean *and* a small standard error, and a symmetric t
    interval misses such runs from below; the correction lengthens the arm on the side of the
    long tail.
    """
    if K < 3:
        return -t, t
    c = y - y.mean()  # about 0 already (theta pools all batches, leftovers included)
    s2 = float((c * c).sum()) / (K - 1)
    m3 = float((c ** 3).sum()) * K / ((K - 1) * (K - 2))
    beta = m3 / s2 ** 1.5 / (6.0 * math.sqrt(K)) if s2 > 0 else 0.0
    if abs(beta) < 1e-12:
        return -t, t

    def g(z: float) -> float:
        return (float(np.cbrt(1.0 + 6.0 * beta * (z - beta))) - 1.0) / (2.0 * beta)

    return -g(t), -g(-t)


def replication_interval(num: np.ndarray, den: np.ndarray, confidence: float = 0.95, *,
                         statistic: str = "value") -> Interval:
    """The interval from whole replications, each one batch (independent replications).

    Valid when the replications are independent and unbiased: they start from exact
    stationary draws. Needs two replications or more.

    Examples
    --------
    >>> import numpy as np
    >>> iv = replication_interval(np.array([[1.0, 2.0], [2.0, 1.0], [2.0, 2.0]]), np.ones((3, 2)))
    >>> iv.value, iv.batches
    (1.6666666666666667, 3)
    """
    n, d, theta = _pooled(num, den)
    if theta is None:
        return _empty(statistic, confidence)
    return _build(statistic, n.sum(axis=1, keepdims=True), d.sum(axis=1, keepdims=True),
                  theta, confidence, 1, n.shape[0] >= 2,
                  "" if n.shape[0] >= 2 else "one replication")


def _crossing(grid: np.ndarray, tail: np.ndarray, level: float) -> float:
    """The least ``w`` with ``tail(w) <= level``, linear between grid points (nan if none)."""
    below = np.nonzero(tail <= level)[0]
    if below.size == 0:
        return math.nan
    j = int(below[0])
    if j == 0:
        return float(grid[0])
    t0, t1 = tail[j - 1], tail[j]
    a = (t0 - level) / (t0 - t1) if t0 > t1 else 1.0
    return float(grid[j - 1] + a * (grid[j] - grid[j - 1]))


def quantile_interval(grid: np.ndarray, counts: np.ndarray, den: np.ndarray, q: float,
                      confidence: float = 0.95, *, statistic: str = "quantile") -> Interval:
    """The ``q``-quantile of a law whose tail is counted per batch on a grid, by sectioning.

    Parameters
    ----------
    grid : numpy.ndarray
        Levels, increasing, shape ``(G,)``.
    counts : numpy.ndarray
        Per batch, the count above each level, shape ``(replications, batches, G)``.
    den : numpy.ndarray
        Per batch, the count of observations, shape ``(replications, batches)``.
    q : float
        In ``(0, 1)``.
    confidence : float, default 0.95

    Returns
    -------
    Interval
        The whole run's quantile; the half-width from the spread of the quantiles of merged
        batches (sectioning: Alexopoulos, Goldsman, Mokashi and Wilson 2019 use it in their
        sequential quantile procedures), with the batch size the independence test picks for
        the indicator of exceeding the quantile.

    Raises
    ------
    ValueError
        When the grid does not reach the quantile.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> x = rng.exponential(size=(1, 64, 500))          # 64 batches of 500 Exp(1) draws
    >>> grid = np.linspace(0, 10, 201)
    >>> counts = (x[..., None] > grid).sum(axis=2)
    >>> iv = quantile_interval(grid, counts, np.full((1, 64), 500.0), 0.5)
    >>> iv.covers(np.log(2))
    True
    """
    grid = np.asarray(grid, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64).reshape(-1, np.shape(den)[-1], grid.size)
    d = _as_2d(den)
    level = 1.0 - q
    total = d.sum()
    if not total > 0:
        return _empty(statistic, confidence)
    value = _crossing(grid, c.sum(axis=(0, 1)) / total, level)
    if math.isnan(value):
        raise ValueError(f"{statistic}: the grid ends at {grid[-1]:g}, below the quantile "
                         "(more than 1 - q of the observations lie above it): pass simulate "
                         "a grid= that reaches further")
    j = min(int(np.searchsorted(grid, value)), grid.size - 1)
    ind = interval(c[..., j], d, confidence, statistic=statistic)  # picks the batch size
    g = ind.batch_size
    cm, dm = merge_batches(c, g), merge_batches(d, g)
    qs = []
    for r in range(cm.shape[0]):
        for b in range(cm.shape[1]):
            if dm[r, b] > 0:
                qs.append(_crossing(grid, cm[r, b] / dm[r, b], level))
    qa = np.asarray(qs)
    if qa.size < 2 or np.any(np.isnan(qa)):
        return Interval(statistic, value, math.nan, math.nan, confidence, 0, g, False,
                        "a batch's quantile lies beyond the grid: pass a grid= reaching "
                        "further, or run longer")
    se = float(qa.std(ddof=1) / math.sqrt(qa.size))
    half = _t_quantile(0.5 + confidence / 2.0, qa.size - 1) * se
    return Interval(statistic, value, half, se, confidence, qa.size if ind.trusted else 0, g,
                    ind.trusted, ind.reason)
