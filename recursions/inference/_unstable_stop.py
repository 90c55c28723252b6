"""Does a run's workload grow? The test that stops ``precision=`` on an unstable system.

A stable system's workload levels off; an unstable one's grows about linearly, by the work
its overloaded servers get beyond what they can do. :func:`late_growth` measures the growth
per arrival over the second half of a run from its batch sums and tests it, one-sided,
against 0; :class:`GrowthWatch` runs that test at the stages of ``simulate(precision=...)``
(:mod:`recursions.inference._precision`) and stops the run, as "unstable", the first time it
rejects,
and :func:`recursions.inference.diagnostics.batch_check` says with it, in a fixed run's warning,
that the workload grows.

The test
--------
The second half of the run (its first half is left to the transient from the start) is cut
into ``G`` groups (:data:`GROUPS`; ``G = K / 2`` for ``K < 64`` batches) of ``m`` arrivals,
with means ``z_1 .. z_G`` in each replication. The growth per arrival is
``g = mean(D) / m`` over the increments ``D_j = z_{j+1} - z_j`` of all replications, which
telescope: ``g = (z_G - z_1) / ((G - 1) m)``. Its standard error is that of a Brownian
motion ``B`` with the variance rate of the increments: for a Brownian motion the group means
give ``Var(D_j) = 2 s^2 m / 3`` and ``Var(z_G - z_1) = s^2 m (G - 4/3)``, so
``se(g)^2 = 1.5 * var(D) * (G - 4/3) / ((G - 1)^2 m^2 R)`` with ``var(D)`` the pooled sample
variance of the increments (``R (G - 1) - 1`` degrees of freedom) and ``R`` replications.
``t = g / se(g)`` is compared with Student's ``t`` at the level given.

Why this is the right error where it matters, and safe elsewhere:

* An unstable run is a random walk with drift far from its boundary: the Brownian error is
  its own (the increments of group means of a Brownian motion are correlated, ``+1/4`` at lag
  1, which the factor ``1.5 (G - 4/3) / (G - 1)`` accounts for, not the naive ``1 / (G - 1)``).
* A stable run observed over windows shorter than its correlation time (heavy traffic,
  early stages) looks locally like such a walk, reflected at 0: the same error holds, and
  the fill-up from an empty start adds a mean of about ``0.35`` to ``t`` (the rise of a
  reflected Brownian motion from 0 over ``[n/2, n]``, ``0.23 s sqrt(n)``, against its error
  ``0.69 s sqrt(n)``), far below the critical values used (4 and up).
* A stable run whose groups are long against its correlation time has nearly independent
  group means: ``z_G - z_1`` then has the variance of two of them, while the error above is
  about ``G`` times larger: the test is very conservative there.

Two rules keep it where that reasoning holds: the input's laws must have finite variances
(:func:`recursions.inference._moment_conditions.finite_variances`: no central limit
otherwise; a stable workload with an infinite-variance service law has an infinite mean and
its time averages
grow), and each group must hold :data:`CORRELATION_LENGTHS` of the input's correlation length
(:attr:`recursions.Input.correlation_length`: a slowly modulated input can overload a queue
for a long stretch and then relieve it). A transient that rises smoothly and levels off (a
large system's fluid fill-up, nearly free of noise, so that its ``t`` can be large) is told
apart by its shape: a test that rejects counts only if the last quarter of the run grows at
least half as fast as the third (:data:`SLOWING`); linear growth passes that, a levelling-off
does not. And in precision mode a rejection stops the run only if the growth per arrival
has kept its rate since a stage at most a quarter as long (:data:`KEEPS`): a stable system
filling up from empty rises at most like the square root of the run (a reflected random
walk), so its growth per arrival halves when the run is four times longer, while linear
growth keeps it. Summed over many servers or pooled over many replications a fill-up is
nearly noiseless and its ``t`` can be large at every stage; its shape gives it away. These
guards can only lower the rate of false stops.

The level
---------
``simulate`` stops a run as unstable at most once, after any of its stages. The overall
level :data:`UNSTABLE_LEVEL` (``1e-3``, the default ``alpha`` of
:func:`loynes.check_stability`, whose growth test it mirrors) is spent over the stages in
proportion to the doublings of the run each adds (the first stage counting as one), out of
the ``log2(2 cap / first)`` the stages can have up to the longest one, ``cap``
(:func:`stage_level`): the levels of the stages sum to at most :data:`UNSTABLE_LEVEL`, so by
the union bound a stable run is stopped as unstable with at most that probability (within
the Brownian approximation, which is conservative past the correlation time). With the
defaults (first stage ``2**14``, ``cap = 2**32``) a stage that doubles the run tests at
``1e-3 / 19``. A fixed run has one test (:func:`recursions.inference.diagnostics.batch_check`) at
:data:`UNSTABLE_LEVEL`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from recursions.common._tables import Record

__all__ = ["CORRELATION_LENGTHS", "GROUPS", "KEEPS", "SERIES", "SLOWING", "UNSTABLE_LEVEL",
           "Growth", "GrowthWatch", "late_growth", "stage_level"]

UNSTABLE_LEVEL = 1e-3
"""The probability, at most, that a stable run is stopped or called unstable by the test
(over all the stages of ``precision=``; one test in a fixed run): ``check_stability``'s
default ``alpha``."""

GROUPS = 32
"""Groups the second half of a run is cut into (at most: half the batches when fewer)."""

KEEPS = 0.75
"""A growth that stops a precision run must be at least this fraction of the growth per
arrival measured at a stage at most a quarter as long: linear growth keeps its rate (1), a
fill-up from empty loses at least half of it (at most ``1/2`` for a square-root rise)."""

SLOWING = 0.5
"""A rejection counts only if the last quarter grows at least this fraction as fast as the
third: linear growth passes, a transient levelling off does not."""

CORRELATION_LENGTHS = 20
"""A group must hold this many of the input's correlation lengths (as a batch of
``loynes.check_stability``'s batch-means tests must)."""

SERIES = (("mean_workload", "total workload"), ("mean_jobs", "number of jobs"),
          ("mean_wait", "workload found at the joined server"),
          ("mean_response", "response time"))
"""The series the watch of ``precision=`` tests, the first a run has: statistic and name."""


@dataclass(frozen=True)
class Growth(Record):
    """The growth per arrival of a quantity over the second half of a run, and its test.

    Attributes
    ----------
    quantity : str
        What grows (e.g. ``"total workload"``).
    growth, se : float
        Growth per arrival (per replication) over the second half of the run, and its
        standard error (the Brownian error of the module's docstring).
    t : float
        ``growth / se`` (``nan`` when ``se`` is 0).
    df : int
        Degrees of freedom of ``se``.
    level : float
        The one-sided level of this test.
    critical : float
        The ``t`` above which it rejects: Student's ``t`` quantile at ``1 - level``.
    slowing : float
        Growth of the last quarter of the run over that of the third (``nan`` when the
        third's is not positive).
    arrivals : int
        Arrivals per replication of the run.
    replications : int
        Replications that entered.
    """

    _dict_extra = ("grows",)

    quantity: str
    growth: float
    se: float
    t: float
    df: int
    level: float
    critical: float
    slowing: float
    arrivals: int
    replications: int

    @property
    def grows(self) -> bool:
        """Whether the test rejects (``t > critical``) and the growth does not level off."""
        return bool(self.t > self.critical and not self.slowing < SLOWING)

    def __str__(self) -> str:
        reps = f" x {self.replications} replications" if self.replications > 1 else ""
        return (f"the {self.quantity} grows by {self.growth:.4g} ± {self.se:.2g} per arrival "
                f"over the second half of {self.arrivals:,} arrivals{reps} (t = {self.t:.3g}"
                f" > {self.critical:.3g}, a one-sided test at level {self.level:.2g})")


def late_growth(num: np.ndarray, den: np.ndarray, per_batch: float, level: float,
                quantity: str = "total workload", groups: int = GROUPS) -> Growth | None:
    """The growth per arrival of the batch means ``num / den`` over the run's second half.

    Parameters
    ----------
    num, den : numpy.ndarray
        Per-(replication, batch) sums of a quantity and of its weight, shape ``(R, K)``, of
        consecutive batches of equal length.
    per_batch : float
        Arrivals per batch (per replication).
    level : float
        One-sided level of the test.
    quantity : str, default "total workload"
        What the batch means are of.
    groups : int, default :data:`GROUPS`
        Groups the second half is cut into (at most ``K // 2``).

    Returns
    -------
    Growth or None
        ``None`` when fewer than 8 groups fit or no replication has a value in each.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> walk = np.cumsum(0.1 + rng.standard_normal(2**16)).reshape(256, -1)  # drift 0.1
    >>> g = late_growth(walk.sum(1)[None], np.full((1, 256), 256.0), 256.0, 1e-3)
    >>> g.grows, abs(g.growth - 0.1) < 4 * g.se
    (True, True)
    >>> flat = rng.standard_normal(2**16).reshape(256, -1)
    >>> late_growth(flat.sum(1)[None], np.full((1, 256), 256.0), 256.0, 1e-3).grows
    False
    """
    num = np.atleast_2d(np.asarray(num, dtype=np.float64))
    den = np.atleast_2d(np.asarray(den, dtype=np.float64))
    k = num.shape[1]
    g = min(groups, k // 2)
    if g < 8:
        return None
    b = (k // 2) // g  # batches per group
    r = num.shape[0]
    gn = num[:, k - g * b:].reshape(r, g, b).sum(axis=2)
    gd = den[:, k - g * b:].reshape(r, g, b).sum(axis=2)
    ok = np.all(gd > 0, axis=1)
    if not ok.any():
        return None
    z = gn[ok] / gd[ok]
    if not np.all(np.isfinite(z)):
        return None
    d = np.diff(z, axis=1)
    reps, m = int(ok.sum()), b * float(per_batch)
    df = d.size - 1
    mean = float(d.mean())
    var = float(((d - mean) ** 2).sum()) / df
    se = math.sqrt(1.5 * var * (g - 4.0 / 3.0) / reps) / (g - 1) / m
    growth = mean / m
    t = growth / se if se > 0 else math.nan
    h = (g - 1) // 2  # the increments within the third and the last quarter
    third, last = float(d[:, :h].mean()), float(d[:, -h:].mean())
    slowing = last / third if third > 0 else math.nan
    from scipy.special import stdtrit

    critical = float(stdtrit(df, 1.0 - level))
    return Growth(quantity, growth, se, t, df, float(level), critical, slowing,
                  round(per_batch * k), reps)


def stage_level(previous: int | None, n: int, first: int, cap: int,
                alpha: float = UNSTABLE_LEVEL) -> float:
    """The level of the test at a stage of ``n`` arrivals after one of ``previous``.

    ``alpha`` times the doublings the stage adds to the run (one for the first stage,
    ``previous is None``), over the ``log2(2 cap / first)`` the stages can have from the
    first, of ``first`` arrivals, to the longest, of ``cap``: the levels of any sequence of
    stages sum to at most ``alpha``.

    Examples
    --------
    >>> round(stage_level(None, 2**14, 2**14, 2**32) * 19 / 1e-3, 12)
    1.0
    >>> round(stage_level(2**14, 2**18, 2**14, 2**32) * 19 / 1e-3, 12)   # 16 times longer
    4.0
    """
    span = math.log2(2.0 * max(cap, first) / first)
    step = 1.0 if previous is None else math.log2(n / previous)
    return alpha * min(step / span, 1.0)


class GrowthWatch:
    """The stop of ``simulate(precision=...)`` on a run whose workload grows.

    Called at each stage with its batch sums, it tests the first series of :data:`SERIES` the
    run has (:func:`late_growth`) at the stage's share of :data:`UNSTABLE_LEVEL`
    (:func:`stage_level`), from the stage at which the run reaches ``floor`` arrivals per
    replication (:func:`recursions.inference.diagnostics.floor_of`) on, and returns the test when it
    rejects and the growth per arrival has kept its rate since a stage at most a quarter as
    long (:data:`KEEPS`).

    Parameters
    ----------
    floor : int
        Arrivals per replication before which no stage is tested.
    cap : int
        The longest stage's length (``max_steps``); the first stage's is that of the first
        call.
    testable : bool
        Whether the input's laws (and the system's own) have finite variances.
    correlation : float
        The input's correlation length, in arrivals.
    """

    def __init__(self, floor: int, cap: int, testable: bool, correlation: float = 1.0
                 ) -> None:
        self.floor, self.cap = floor, max(1, cap)
        self.testable, self.correlation = testable, correlation
        self.first: int | None = None
        self.previous: int | None = None
        self.seen: list[tuple[int, float]] = []  # (arrivals, growth) of each tested stage

    def __call__(self, sums: Mapping[str, Any], n: int) -> Growth | None:
        """The test of the stage of ``n`` arrivals per replication if it rejects, else ``None``."""
        previous, self.previous = self.previous, n
        if self.first is None:
            self.first = max(1, n)
        if not self.testable or n < self.floor:
            return None
        level = stage_level(previous, n, self.first, self.cap)
        for key, name in SERIES:
            if key not in sums:
                continue
            num, den = sums[key]
            k = np.shape(num)[-1]
            if (n / k) * max(1, (k // 2) // GROUPS) < CORRELATION_LENGTHS * self.correlation:
                return None  # groups too short for the input's own dependence
            got = late_growth(num, den, n / k, level, name)
            if got is None:
                continue  # e.g. a heap run's workload with no snapshot in some group
            kept = self._kept(n, got.growth)
            self.seen.append((n, got.growth))
            return got if got.grows and kept else None
        return None

    def _kept(self, n: int, growth: float) -> bool:
        """Whether ``growth`` is at least :data:`KEEPS` of that of a stage of ``<= n / 4``.

        Without such an earlier stage the run goes on (at most two more stages): a growth
        seen once may be the fill-up from empty.
        """
        earlier = [g for m, g in self.seen if 4 * m <= n]
        return bool(earlier) and growth >= KEEPS * earlier[-1]
