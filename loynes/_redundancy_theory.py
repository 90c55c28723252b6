"""Stability and mean field of cancel-on-completion redundancy (:ref:`theory-redundancy`).

* :func:`redundancy_critical_rate`: the critical arrival rate per server. For ``n`` servers it is
  ``1 / a`` with ``a`` the stationary mean work per job of the *free* system (workloads not
  regulated at zero, Stolyar 2021, §16), estimated by simulation with a standard error. For
  ``servers=None`` it is the mean-field value: exact ``1 / sum_j pi_j k_j E xi_j`` for i.i.d.
  exponential sizes, else the limit ``x_0 -> 1`` of the fixed point (extrapolated).
* :func:`redundancy_fixed_point`: the mean-field fixed point ``x_w`` (fraction of servers with
  workload above ``w``) for i.i.d. components at the arrival rate per server
  ``rate_per_server`` (``lambda``; ``n`` servers get ``lambda n`` jobs per unit time), from the
  balance
  ``x'_w = -lambda sum_j pi_j d_j (G^j_w - x_w) P(Bin(d_j - 1, 1 - G^j_w) <= k_j - 1)`` with
  ``G^j_w = P(Z + xi_j > w)``, ``Z ~ x``, by shooting on ``x_0`` (the solution is proper, i.e.
  ``x_w -> 0``, exactly when work balance ``x_0 = lambda E_x[eta]`` holds). ``Z``'s law is
  discretised on a grid of step ``h`` (its atom at 0 kept exact); sizes with atoms
  (deterministic) are evaluated with left limits, which turns the ODE into the delay equation.
* :func:`d_monotonicity`: whether ``E eta(D)`` is increasing, decreasing or neither in the gaps
  ``D`` between selected workloads (Monte Carlo with common random numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recursions import Estimate
from recursions.common import Record, RngLike, as_seed_sequence, check_int, check_positive, jit
from recursions.model.redundancy import (
    JobClass,
    Redundancy,
    as_classes,
    class_probs,
    free_system_work,
)

__all__ = [
    "CriticalRate",
    "RedundancyFixedPoint",
    "d_monotonicity",
    "redundancy_critical_rate",
    "redundancy_fixed_point",
]


@jit
def _binom_le(n, p, m):
    """``P(Bin(n, p) <= m)``."""
    if m >= n:
        return 1.0
    if m < 0:
        return 0.0
    q = 1.0 - p
    term = q**n
    tot = term
    for i in range(1, m + 1):
        if q > 0.0:
            term *= (n - i + 1) / i * p / q
        else:
            term = 0.0
        tot += term
    return min(tot, 1.0)


@jit
def _rate(lam, pi, d, k, x, q):
    f = 0.0
    for j in range(pi.size):
        g = x + q[j]
        g = min(max(g, 0.0), 1.0)
        f += pi[j] * d[j] * q[j] * _binom_le(d[j] - 1, 1.0 - g, k[j] - 1)
    return lam * f


@jit
def _shoot(lam, x0, pi, d, k, ha, hh, h, x, qs):
    """Integrate the balance from ``x_0``; return the last index reached (``-1``: hit zero)."""
    nj, n1 = ha.shape
    x[0] = x0
    q = np.empty(nj)
    for j in range(nj):
        q[j] = (1.0 - x0) * ha[j, 0]
        qs[j, 0] = q[j]
    f = _rate(lam, pi, d, k, x0, q)
    base = np.empty(nj)
    for i in range(n1 - 1):
        # contributions of the atom and of masses p_m, m <= i, at level w_{i+1}
        for j in range(nj):
            s = (1.0 - x0) * ha[j, i + 1]
            for m in range(1, i + 1):
                s += (x[m - 1] - x[m]) * hh[j, i + 1 - m]
            base[j] = s
        xn = x[i] - h * f
        fn = f
        for _ in range(4):
            pm = x[i] - xn
            for j in range(nj):
                q[j] = base[j] + pm * hh[j, 0]
            fn = _rate(lam, pi, d, k, xn, q)
            xn = x[i] - 0.5 * h * (f + fn)
        if xn <= 0.0:
            return -1
        x[i + 1] = xn
        for j in range(nj):
            qs[j, i + 1] = q[j]
        f = fn
    return n1 - 1


@dataclass(frozen=True)
class RedundancyFixedPoint(Record):
    """Mean-field fixed point of cancel-on-completion redundancy.

    Attributes
    ----------
    rate_per_server : float
        ``lambda`` (jobs per server per unit time).
    load : float
        ``x_0 = P(W > 0)``.
    mean_workload : float
        ``E W = int x_w dw`` per server.
    mean_response : float
        ``E R = int P(R > t) dt``.
    work_balance : recursions.Estimate
        ``lambda E_x[eta]``, the work brought per unit time by jobs whose servers' workloads
        are drawn from the solution, by Monte Carlo (seeded by the ``rng`` of
        :func:`redundancy_fixed_point`) with its standard error: it must equal ``load`` (work
        balance) up to the grid error, which its standard error leaves out. For sizes with
        atoms (deterministic) the fixed point converges at first order in ``h``: (2, 1)
        deterministic at rate 0.3 gives load 0.4848 / 0.4833 / 0.4825 / 0.4821 at ``h`` =
        0.02 / 0.01 / 0.005 / 0.0025 against 0.4815 ± 0.0003 simulated, so compare results at
        ``h`` and ``h / 2`` before trusting the last digits.
    grid : numpy.ndarray
        Levels ``w`` of the solution.
    x : numpy.ndarray
        ``x_w`` on the grid.
    """

    rate_per_server: float
    load: float
    mean_workload: float
    mean_response: float
    work_balance: Estimate
    grid: np.ndarray = field(repr=False)
    x: np.ndarray = field(repr=False)
    _sf: np.ndarray = field(repr=False)

    def profile(self, w: Any) -> np.ndarray:
        """``x_w`` (linear interpolation; 0 beyond the grid).

        Parameters
        ----------
        w : float or array_like
            Levels ``>= 0``.

        Returns
        -------
        numpy.ndarray
        """
        return np.interp(np.asarray(w, dtype=float), self.grid, self.x, right=0.0)

    def response_sf(self, t: Any) -> np.ndarray:
        """``P(R > t) = sum_j pi_j P(Bin(d_j, 1 - G^j_t) <= k_j - 1)``.

        Parameters
        ----------
        t : float or array_like
            Times ``>= 0``.

        Returns
        -------
        numpy.ndarray
        """
        return np.interp(np.asarray(t, dtype=float), self.grid, self._sf, right=0.0)

    def plot(self, ax: Any = None, *, w_max: float | None = None) -> Any:
        """Draw the profile ``x_w`` and the response-time tail ``P(R > t)``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        w_max : float, optional
            Largest level drawn (default: where ``P(R > t)`` falls below ``1e-3``, at most 60
            mean response times).

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ImportError
            When matplotlib is not installed (``pip install 'queue-recursions[plot]'``).

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import recursions as rc
        >>> from recursions.model.redundancy import JobClass
        >>> fp = redundancy_fixed_point(JobClass(2, 1, rc.dists.Exponential(1.0)), 0.5,
        ...                             balance_samples=1_000)
        >>> ax = fp.plot()
        >>> [line.get_label().split(":")[0] for line in ax.lines]
        ['x_w', 'P(R > t)']
        """
        return _draw(self, ax, w_max=w_max)

    def _repr_html_(self) -> str:
        from recursions.common import html_table

        return html_table("RedundancyFixedPoint", [
            ("rate per server λ", self.rate_per_server), ("load x_0 = P(W > 0)", self.load),
            ("E[W] per server", self.mean_workload), ("E[R]", self.mean_response),
            ("work balance λ E_x[η] (should equal the load)", self.work_balance),
            ("grid", f"{self.grid.size} levels, step {self.grid[1] - self.grid[0]:.3g}"
                     if self.grid.size > 1 else None)])


def _setup(classes: Sequence[JobClass], h: float, wmax: float):
    for i, c in enumerate(classes):
        if not c.iid:
            raise NotImplementedError(
                f"classes[{i}]: the mean-field equation is implemented for i.i.d. components "
                "(not identical copies or a joint sampler)")
    n1 = int(np.ceil(wmax / h)) + 1
    grid = h * np.arange(n1)
    ha = np.array([c.size.sf(np.maximum(grid * (1 - 1e-12), 0.0)) for c in classes])
    ha[:, 0] = [float(c.size.sf(0.0)) for c in classes]
    hh = np.array([c.size.sf((np.arange(n1) + 0.5) * h) for c in classes])
    pi = class_probs(classes)
    d = np.array([c.d for c in classes], dtype=np.int64)
    k = np.array([c.k for c in classes], dtype=np.int64)
    return grid, np.ascontiguousarray(ha, float), np.ascontiguousarray(hh, float), pi, d, k


def _defaults(classes, h, wmax):
    scale = max(float(np.sqrt(c.size.mean**2 + c.size.var)) for c in classes)
    h = scale / 100 if h is None else float(h)
    wmax = 30 * scale if wmax is None else float(wmax)
    if not (h > 0 and wmax > h):
        raise ValueError(f"need 0 < h < wmax, got h={h}, wmax={wmax}")
    return h, wmax


def redundancy_fixed_point(classes: Any, rate_per_server: float, *, rng: RngLike = 1,
                           h: float | None = None, wmax: float | None = None,
                           tol: float = 1e-10, balance_samples: int = 100_000
                           ) -> RedundancyFixedPoint:
    """Mean-field fixed point ``x_w`` of redundancy with i.i.d. components at rate ``lambda``.

    Parameters
    ----------
    classes : JobClass or sequence of JobClass
        Job classes (i.i.d. components).
    rate_per_server : float
        ``lambda > 0``, jobs per server per unit time (``n`` servers: ``lambda n`` in all).
    rng : int, Generator, SeedSequence or None, default 1
        Seed of the Monte Carlo check of work balance (``work_balance``); the fixed point
        itself is deterministic.
    h : float, optional
        Grid step (default: a hundredth of the largest ``sqrt(E xi^2)``).
    wmax : float, optional
        Grid end (default 30 times that scale); raise it near the critical rate.
    tol : float, default 1e-10
        Bisection tolerance on ``x_0``.
    balance_samples : int, default 100_000
        Jobs per class drawn for ``work_balance``.

    Returns
    -------
    RedundancyFixedPoint

    Raises
    ------
    ValueError
        If ``rate_per_server`` is not positive, or no proper fixed point exists on the grid
        (``lambda`` at or above the critical rate, or ``wmax`` too small).

    Examples
    --------
    Exponential ``(d, 1)`` against ``x_w = rho [rho + (1 - rho) e^{(d-1) mu w}]^{-d/(d-1)}``:

    >>> import numpy as np, recursions as rc
    >>> from recursions.model.redundancy import JobClass
    >>> fp = redundancy_fixed_point(JobClass(2, 1, rc.dists.Exponential(1.0)), 0.5)
    >>> w = np.array([0.5, 1.0, 2.0])
    >>> exact = 0.5 * (0.5 + 0.5 * np.exp(w)) ** -2.0
    >>> bool(np.max(np.abs(fp.profile(w) - exact)) < 1e-4), round(fp.load, 4)
    (True, 0.5)
    """
    cls = as_classes(classes)
    lam = check_positive(rate_per_server, "rate_per_server")
    samples = check_int(balance_samples, "balance_samples", 2)
    h, wmax = _defaults(cls, h, wmax)
    grid, ha, hh, pi, d, k = _setup(cls, h, wmax)
    x = np.zeros(grid.size)
    qs = np.zeros((len(cls), grid.size))
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if _shoot(lam, mid, pi, d, k, ha, hh, h, x, qs) < 0:
            lo = mid
        else:
            hi = mid
    if hi >= 1.0 - 10 * tol:
        raise ValueError(f"no proper fixed point at rate_per_server={lam}: at or above the "
                         "critical rate (or raise wmax)")
    end = _shoot(lam, hi, pi, d, k, ha, hh, h, x, qs)
    x = x.copy()
    if end < 0:  # pragma: no cover - hi is always on the proper side
        raise RuntimeError("shooting failed")
    # the proper solution decays to 0: cut where it stops decreasing (discretisation floor)
    cut = int(np.argmin(x)) + 1
    x[cut:] = 0.0
    g = np.clip(x[None, :] + qs, 0.0, 1.0)
    sf = np.zeros(grid.size)
    from scipy.stats import binom

    for j, c in enumerate(cls):
        sf += pi[j] * binom.cdf(c.k - 1, c.d, 1.0 - g[j])
    sf[cut:] = np.interp(grid[cut:], grid, sf, right=0.0) * (x[cut:] > 0)
    trap = np.trapezoid
    gen = np.random.default_rng(as_seed_sequence(rng))
    return RedundancyFixedPoint(
        rate_per_server=lam, load=float(hi), mean_workload=float(trap(x, grid)),
        mean_response=float(trap(sf, grid)),
        work_balance=_work_balance(cls, pi, lam, grid, x, gen, samples), grid=grid, x=x,
        _sf=sf)


def _work_balance(cls, pi, lam, grid, x, gen, samples):
    """Estimate ``lambda E_x[eta]`` by Monte Carlo from ``gen``, with its standard error.

    The selected servers' workloads are drawn i.i.d. from the solution (``P(Z > w) = x_w``)
    and the sizes from the classes.
    """
    x0 = float(x[0])
    total, var = 0.0, 0.0
    for p, c in zip(pi, cls, strict=True):
        u = gen.random((samples, c.d)) * 1.0
        z = np.where(u < x0, np.interp(u, x[::-1], grid[::-1]), 0.0)
        xi = c.sample(gen, samples)
        done = z + xi
        t = np.sort(done, axis=1)[:, c.k - 1:c.k]
        eta = (np.minimum(done, np.maximum(z, t)) - z).sum(axis=1)
        total += p * eta.mean()
        var += p * p * eta.var(ddof=1) / samples
    return Estimate(float(lam * total), float(lam * np.sqrt(var)))


def _lambda_at_load(cls, x0, h, wmax, tol=1e-9):
    grid, ha, hh, pi, d, k = _setup(cls, h, wmax)
    x = np.zeros(grid.size)
    qs = np.zeros((len(cls), grid.size))
    lo, hi = 0.0, 1.0
    while _shoot(hi, x0, pi, d, k, ha, hh, h, x, qs) >= 0:  # too small: improper
        lo, hi = hi, 2 * hi
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        if _shoot(mid, x0, pi, d, k, ha, hh, h, x, qs) < 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class CriticalRate(Record):
    """Critical arrival rate per server ``lambda-bar`` and its context.

    Attributes
    ----------
    value : float
        ``lambda-bar``.
    se : float
        Standard error (0 when exact, ``nan`` when unknown).
    lower : float
        ``1 / sum_j pi_j d_j E xi_j`` (no job brings more than ``d`` sizes).
    method : str
        ``"exponential"`` (exact), ``"free system"`` (simulation) or ``"mean field"``.
    """

    value: float
    se: float
    lower: float
    method: str


def redundancy_critical_rate(classes: Any, servers: int | None = None, *,
                             jobs: int | None = None, rng: RngLike = 1, h: float | None = None,
                             wmax: float | None = None) -> CriticalRate:
    """Critical arrival rate per server ``lambda-bar`` (:ref:`theory-redundancy-stability`).

    Parameters
    ----------
    classes : JobClass or sequence of JobClass
        Job classes.
    servers : int, optional
        ``n``: the free-system estimate ``1 / a`` (simulation). ``None``: the mean-field value.
    jobs : int, optional
        Free-system jobs (default ``2000 n``, at least ``10^6``).
    rng : int, Generator, SeedSequence or None, default 1
        Seed of the free-system simulation.
    h, wmax : float, optional
        Grid of the mean-field computation (see :func:`redundancy_fixed_point`).

    Returns
    -------
    CriticalRate

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.model.redundancy import JobClass
    >>> redundancy_critical_rate(JobClass(3, 2, rc.dists.Exponential(2.0))).value
    1.0
    """
    cls = as_classes(classes)
    pi = class_probs(cls)
    lower = 1.0 / float(sum(p * c.d * c.mean_size for p, c in zip(pi, cls, strict=True)))
    if servers is not None:
        system = Redundancy(servers, cls)
        n = system.servers
        jobs = max(10**6, 2000 * n) if jobs is None else jobs
        a, se = free_system_work(system, jobs, rng=rng)
        return CriticalRate(1.0 / a, se / a**2, lower, "free system")
    if all(c.exponential for c in cls):
        exact = 1.0 / float(sum(p * c.k * c.mean_size for p, c in zip(pi, cls, strict=True)))
        return CriticalRate(exact, 0.0, lower, "exponential")
    h, wmax = _defaults(cls, h, wmax)
    a1 = _lambda_at_load(cls, 0.99, h, wmax)
    a2 = _lambda_at_load(cls, 0.995, h, wmax)
    return CriticalRate(2 * a2 - a1, abs(a2 - a1), lower, "mean field")


def d_monotonicity(job_class: JobClass, scale: float | None = None, cases: int = 200,
                   samples: int = 20_000, *, rng: RngLike = 1) -> str:
    """Tell whether ``E eta(D)`` is increasing, decreasing or neither in the gaps ``D``.

    ``eta(D)`` is the work a job brings to its selected servers when their sorted workloads
    are ``0, D_1, D_1 + D_2, ...`` (``D`` the gaps). Random gap vectors are compared with one
    gap widened (every workload above it shifted up), with common random sizes; differences
    within three standard errors count as ties.

    Parameters
    ----------
    job_class : JobClass
        The class.
    scale : float, optional
        Gap scale (default ``E xi``).
    cases : int, default 200
        Gap vectors tried.
    samples : int, default 20_000
        Size draws per case.
    rng : int, Generator, SeedSequence or None, default 1
        Seed.

    Returns
    -------
    str
        ``"increasing"``, ``"decreasing"``, ``"constant"`` or ``"neither"``.

    Examples
    --------
    >>> import recursions as rc
    >>> from recursions.model.redundancy import JobClass
    >>> d_monotonicity(JobClass(2, 1, rc.dists.Deterministic(1.0)), cases=20, samples=2000)
    'decreasing'
    """
    if not isinstance(job_class, JobClass):
        raise TypeError(f"job_class must be a JobClass, got {type(job_class).__name__}")
    gen = np.random.default_rng(as_seed_sequence(rng))
    c = job_class
    s = c.mean_size if scale is None else float(scale)
    assert s is not None  # JobClass sets mean_size
    up = down = 0
    if c.d == 1:
        return "constant"
    for _ in range(cases):
        # sorted relative workloads from random gaps; widen one gap (shift all above it)
        D = np.concatenate((np.zeros(1), np.cumsum(gen.exponential(s, c.d - 1))))
        D2 = D.copy()
        D2[int(gen.integers(1, c.d)):] += gen.exponential(s)
        xi = c.sample(gen, samples)
        diff = _eta(D2, xi, c.k) - _eta(D, xi, c.k)
        m, se = diff.mean(), diff.std(ddof=1) / np.sqrt(samples)
        if m > 3 * se + 1e-12:
            up += 1
        elif m < -3 * se - 1e-12:
            down += 1
    if up and down:
        return "neither"
    return "increasing" if up else "decreasing" if down else "constant"


def _eta(D: np.ndarray, xi: np.ndarray, k: int) -> np.ndarray:
    done = D[None, :] + xi
    t = np.sort(done, axis=1)[:, k - 1:k]
    return (np.minimum(done, np.maximum(D[None, :], t)) - D[None, :]).sum(axis=1)


def _draw(fp: RedundancyFixedPoint, ax: Any = None, *, w_max: float | None = None) -> Any:
    """Draw :meth:`RedundancyFixedPoint.plot <loynes.RedundancyFixedPoint.plot>`."""
    from recursions.common import axes, level_span, title

    ax = axes(ax, "RedundancyFixedPoint.plot()")
    top = (level_span(fp.response_sf, 1.0, fp.mean_response) if w_max is None
           else float(w_max))
    w = np.linspace(0.0, top, 400)
    ax.plot(w, fp.profile(w), "-", lw=2, label="x_w: fraction of servers with workload > w")
    ax.plot(w, fp.response_sf(w), "--", lw=1.5, label="P(R > t): response time above t")
    ax.set_xlim(0.0, top)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("level w (workload) or time t (response)")
    ax.set_ylabel("fraction / probability")
    title(ax, "Redundancy (n → ∞): mean-field fixed point, profile and response tail",
          f"λ = {fp.rate_per_server:.4g} per server, load x_0 = {fp.load:.3g}, "
          f"E[W] = {fp.mean_workload:.3g}, E[R] = {fp.mean_response:.3g}")
    ax.legend(fontsize=8, loc="upper right")
    return ax
