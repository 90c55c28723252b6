"""The result of a forward simulation: :class:`SimulationResult`."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recursions.common._tables import Record
from recursions.engines._run_plan import DEFAULT_STATISTICS
from recursions.inference import diagnostics as dg
from recursions.inference._batch_means import merge_batches
from recursions.inference._estimate import Estimate, ratio_estimate

__all__ = ["SimulationResult", "untrusted_headline", "warn_fixed_budget", "with_trust"]


@dataclass(frozen=True, repr=False)
class SimulationResult(Record):
    """Statistics of a forward simulation, seen by arriving customers.

    Attributes
    ----------
    system, input : str
        Descriptions of what was simulated.
    steps, warmup, replications : int
        Arrivals measured per replication, discarded warm-up arrivals, replications.
    p_wait : Estimate or None
        Fraction of arrivals that join a server with positive workload (the FCFS probability of
        waiting under JSW). ``None`` for loss systems. On the queue-length engines of a
        buffered system it also counts the blocked arrivals: it is the zero-wait theorem's
        P(an arrival waits or is blocked), and ``p_wait - p_block`` is the part that joined a
        busy server.
    mean_wait : Estimate or None
        Mean workload found at the joined server (the FCFS mean wait under JSW). ``None`` for
        loss systems.
    mean_workload : Estimate or None
        Mean total workload ``sum_i W(i)`` seen by an arrival. ``None`` on the queue-length
        engines, which track jobs (see ``mean_jobs``), and when ``statistics=`` left it out.
    busy_fraction : Estimate or None
        Mean fraction of servers with positive workload, seen by an arrival (``None`` when
        ``statistics=`` left it out).
    p_loss : Estimate or None
        Fraction of arrivals lost (loss systems only).
    p_block : Estimate or None
        Blocking probability (buffered systems; ``None`` here).
    overflow_work : Estimate or None
        Mean service time brought by lost customers per arrival, ``E[sigma 1{lost}]`` (loss
        systems only): the work a loss system overflows, as in condition (8)
        (:ref:`theory-stability-theorem-1`).
    p_all_busy : Estimate or None
        Fraction of arrivals that find no idle server.
    mean_jobs : Estimate or None
        Mean number of jobs per server, ``E[sum_i S_i]`` (queue-length systems).
    phase_busy : Estimate or None
        Fraction of servers busy with a job in each Coxian phase, ``S_{1,m}`` (array over
        phases; queue-length systems with Coxian service).
    mean_response : Estimate or None
        Mean response time ``T`` of a job (:class:`~recursions.model.redundancy.Redundancy`, whose
        ``p_wait`` and ``mean_wait`` are ``None``; its load ``P(W > 0)`` is ``busy_fraction``).
    sup_error : Estimate or None
        ``max_w |x_w - x*_w|`` over the grid when a reference profile was given.
    engine : str
        Which engine ran: ``"dense"`` (sorted-vector kernel), ``"heap"`` (absolute empty
        times), ``"queues"`` (per-server queues) or ``"counts"`` (aggregated Coxian chain).
    start : str
        How each replication began: ``"empty"``, ``"given"`` (``w0=``), ``"stationary"``
        (exact stationary draws: no warm-up needed) or ``"profile"`` (drawn from an
        equilibrium profile).
    warmup_rule : str
        ``"fixed"`` (the ``warmup`` asked for) or ``"mser"`` (``warmup="auto"``: the batches
        that MSER dropped from the start, counted in ``warmup``).
    precision : recursions.inference._precision.PrecisionReport or None
        With ``simulate(precision=...)``: the target, whether every named interval reached it,
        the arrivals it took, and the steps the others would need.
    replication_interval : dict of str to recursions.inference._batch_means.Interval or None
        With ``start="stationary"`` and two or more replications: intervals from the
        replications' own means, which are independent and unbiased (no correlation to
        estimate), beside the batch-means ones of :meth:`interval`.
    batch_check : recursions.inference.diagnostics.BatchCheck or None
        Trend and lag-1 autocorrelation of the batch means of the total workload, or of what
        customers found at the server they joined when that series is the one flagged (of
        the number of jobs, for queue-length systems); when either is flagged, ``simulate`` warned
        with :class:`~recursions.SimulationWarning`. ``None`` when it could not be computed
        (fewer than 3 batches per replication).
    grid : numpy.ndarray
        Workload levels at which the profile was accumulated.
    final_state : numpy.ndarray
        Workload vectors after the last arrival, shape ``(replications, servers)``.
    path : numpy.ndarray or None
        States seen by each measured arrival, shape ``(replications, steps, servers)``, when
        ``record=True``.
    """

    system: str
    input: str
    steps: int
    warmup: int
    replications: int
    p_wait: Estimate | None
    mean_wait: Estimate | None
    mean_workload: Estimate | None
    busy_fraction: Estimate | None
    p_loss: Estimate | None
    p_block: Estimate | None
    overflow_work: Estimate | None
    grid: np.ndarray
    final_state: np.ndarray
    path: np.ndarray | None = None
    p_all_busy: Estimate | None = None
    mean_jobs: Estimate | None = None
    phase_busy: Estimate | None = None
    sup_error: Estimate | None = None
    mean_response: Estimate | None = None
    engine: str = "dense"
    batch_check: dg.BatchCheck | None = None
    start: str = "empty"
    warmup_rule: str = "fixed"
    precision: Any = None
    replication_interval: dict[str, Any] | None = None
    _sums: dict[str, tuple[np.ndarray, np.ndarray]] | None = field(default=None, repr=False,
                                                                   compare=False)
    _no_clt: dict[str, str] | None = field(default=None, repr=False, compare=False)
    _prof: np.ndarray | None = field(default=None, repr=False, compare=False)
    _den: np.ndarray | None = field(default=None, repr=False, compare=False)
    _fprof: np.ndarray | None = field(default=None, repr=False, compare=False)
    _fden: np.ndarray | None = field(default=None, repr=False, compare=False)
    _merge: int = field(default=1, repr=False, compare=False)
    """Batches of ``_prof``/``_den``/``_fprof``/``_fden`` merged into each batch of the
    profile's estimates (the default batches: ``default_batches`` of the run plan)."""
    _phases: Any = field(default=None, repr=False, compare=False)
    """The sums by phase of a run of the phases engine (:meth:`by_phase`), else ``None``."""
    _short: str | None = field(default=None, repr=False, compare=False)
    """Why a fixed budget is too short for its load, or for its number of servers
    (:func:`recursions.inference.diagnostics.short_run`)."""

    def interval(self, statistic: str, confidence: float = 0.95) -> Any:
        """A confidence interval for ``statistic`` that says whether it can be trusted.

        Built from the run's batch sums by :func:`recursions.inference._batch_means.interval`: batch
        means merged until they pass a test of independence (twice in a row), then Student's
        t. ``trusted`` is False, with the reason, when they stay correlated: the run is too
        short for its correlation time (``simulate(precision=...)`` runs until it is not).

        Parameters
        ----------
        statistic : str
            ``"p_wait"``, ``"mean_wait"``, ``"mean_workload"``, ``"busy_fraction"``, ... (any
            of :attr:`statistics`).
        confidence : float, default 0.95
            Nominal level.

        Returns
        -------
        recursions.inference._batch_means.Interval

        Raises
        ------
        ValueError
            For a statistic this run does not estimate.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)),
        ...                   steps=2**16, batches=256, rng=1)
        >>> iv = res.interval("p_wait")
        >>> iv.trusted, iv.covers(1 / 3)   # Erlang C of M/M/2 at load 0.5
        (True, True)
        """
        from recursions.inference._batch_means import interval

        sums = self._sums or {}
        if statistic not in sums:
            raise ValueError(f"statistic must be one of {sorted(sums)} for this run, got "
                             f"{statistic!r}")
        rep = self.precision
        if rep is not None and statistic in rep.intervals and rep.confidence == confidence:
            return rep.intervals[statistic]  # what the run-until-precise procedure decided on
        num, den = sums[statistic]
        iv = interval(num, den, confidence, statistic=statistic)
        why = (self._no_clt or {}).get(statistic)
        if why is not None:
            return dataclasses.replace(iv, trusted=False, batches=0, reason=why)
        if self._short is not None:  # a fixed budget too short for the load (dg.short_run)
            return dataclasses.replace(iv, trusted=False, reason=self._short)
        return iv

    @property
    def statistics(self) -> tuple[str, ...]:
        """The statistics with batch sums, for :meth:`interval` and ``precision=``."""
        return tuple(self._sums or ())

    @property
    def effective_batches(self) -> dict[str, int]:
        """The effective number of independent batches behind each statistic's 95% interval.

        The pooled batch means (over all replications) that passed the test of independence
        of :meth:`interval`, 0 when none did (the interval is then not trusted; it needs
        :data:`~recursions.inference._batch_means.MIN_BATCHES`, 16). A fixed-budget run with the
        default batches warns when a headline statistic has none
        (:func:`recursions.simulate`, Warns).

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=2**16, batches=128, rng=1)
        >>> res.effective_batches["p_wait"] >= 16
        True
        """
        return {k: self.interval(k).batches for k in self.statistics}

    def by_phase(self, bins: int = 24) -> Any:
        """Each statistic by phase of the input's clock: a row per bin of the period.

        For a run under arrivals that follow a clock (:class:`~recursions.TimeVarying`, on the
        ``"phases"`` engine): the value of each statistic among the arrivals in each bin, and
        its batch-means standard error (``nan``, with the reason in ``{name}_untrusted``,
        where it is not trusted). The errors rest on about 32 batch means: a 95% interval
        takes Student's ``t`` (about 2.04); its coverage is on the docs' Intervals page.

        Parameters
        ----------
        bins : int, default 24
            Bins of the period, a divisor of 288 (24: the hours of a day).

        Returns
        -------
        recursions.common._tables.Table
            Columns ``phase_start``, ``phase_end``, ``arrivals``, then ``p_wait``,
            ``p_wait_se``, ``mean_wait``, ``mean_wait_se``, ``busy_fraction``, ... for the
            statistics the run kept; ``to_pandas()`` gives a DataFrame.

        Raises
        ------
        ValueError
            For a run whose input has no clock, or ``bins`` that does not divide 288.

        Examples
        --------
        >>> import recursions as rc
        >>> day = rc.TimeVarying([1.0, 3.0], period=24.0, service=rc.dists.Exponential(1.0))
        >>> res = rc.simulate(rc.JSW(4), day, steps=2**16, rng=1)
        >>> t = res.by_phase(2)
        >>> bool(t["p_wait"][1] > t["p_wait"][0])   # busier half of the day, more waiting
        True
        """
        from recursions.results._phase_table import phase_table

        if self._phases is None:
            raise ValueError(f"by_phase needs a run whose arrivals follow a clock "
                             f"(rc.TimeVarying input) on the 'phases' engine; this one ran on "
                             f"the {self.engine!r} engine (engine='phases' says why it cannot)")
        return phase_table(self._phases, bins, self._no_clt or {})

    def wait_quantile(self, q: float, confidence: float = 0.95) -> Any:
        """The ``q``-quantile of what arriving customers found at the server joined (the wait).

        Valid where a mean is not: with a heavy-tailed service law the mean wait can have no
        normal limit (:attr:`mean_wait` warns then), while a quantile always has one (it
        needs only a positive density there). The point estimate comes from the whole run's
        tail on :attr:`grid` (linear between its levels: pass ``simulate`` a finer ``grid=``
        for more resolution); the interval from sectioning, the spread of the quantiles of
        batches merged until they pass the independence test
        (:func:`~recursions.inference._batch_means.interval` on the indicator of the quantile).

        Parameters
        ----------
        q : float
            In ``(0, 1)``.
        confidence : float, default 0.95

        Returns
        -------
        recursions.inference._batch_means.Interval

        Raises
        ------
        ValueError
            For ``q`` outside ``(0, 1)``, or a grid that does not reach the quantile.

        Examples
        --------
        >>> import numpy as np, recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=2**16, batches=256, grid=np.linspace(0, 8, 161), rng=1)
        >>> iv = res.wait_quantile(0.9)   # M/M/1: P(W > w) = rho exp(-(1 - rho) w)
        >>> iv.covers(2 * np.log(5.0))
        True
        """
        return self._quantile(q, confidence, self._fprof, self._fden, "wait_quantile")

    def workload_quantile(self, q: float, confidence: float = 0.95) -> Any:
        """The ``q``-quantile of a server's workload seen by arrivals (the profile ``x_w``).

        As :meth:`wait_quantile`, for the law with tail ``x_w`` (:meth:`profile`).

        Examples
        --------
        >>> import numpy as np, recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=2**16, batches=256, grid=np.linspace(0, 8, 161),
        ...                   profile_every=1, rng=1)
        >>> res.workload_quantile(0.9).covers(2 * np.log(5.0))   # M/M/1: as the wait
        True
        """
        return self._quantile(q, confidence, self._prof, self._den, "workload_quantile")

    def _quantile(self, q: float, confidence: float, counts: np.ndarray | None,
                  den: np.ndarray | None, what: str) -> Any:
        from recursions.inference._batch_means import quantile_interval

        if not (isinstance(q, (int, float)) and 0.0 < float(q) < 1.0):
            raise ValueError(f"q must be a number in (0, 1), got {q!r}")
        if counts is None or den is None or self.grid.size == 0 or np.ndim(counts) < 3:
            raise ValueError(f"no {what.split('_')[0]} tail was accumulated by this run "
                             "(queue-length engines keep none, nor a run with statistics= "
                             "naming only waits or losses)")
        iv = quantile_interval(self.grid, counts, den, float(q), confidence,
                               statistic=f"{what}({q:g})")
        why = (self._no_clt or {}).get("p_wait") or (self._no_clt or {}).get("busy_fraction")
        if why is not None:  # an infinite variance: even indicators have no normal limit
            return dataclasses.replace(iv, trusted=False, batches=0, reason=why)
        return iv

    def profile(self, w: Any) -> Estimate:
        """Fraction of servers with workload above ``w``, seen by arrivals: ``x_w``.

        Exact (up to Monte Carlo error) at the points of :attr:`grid`, linearly interpolated
        between them.

        Parameters
        ----------
        w : float or array_like
            Workload levels within ``[grid[0], grid[-1]]``.

        Returns
        -------
        Estimate
            Floats for one level; arrays of the shape of ``w`` for an array of levels.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)),
        ...                   steps=20_000, rng=1, grid=[0.0, 1.0])
        >>> x = res.profile([0.0, 1.0])
        >>> bool(x.value[0] > x.value[1])
        True
        """
        return self._on_grid(w, self._prof, self._den, "profile")

    def wait_sf(self, t: Any) -> Estimate:
        """``P(found > t)``: the tail of what arriving customers found at the server joined.

        Under JSW this is the FCFS waiting-time tail ``P(W > t)``; under
        :class:`~recursions.Redundancy` it is the response-time tail ``P(R > t)`` (also
        available as :meth:`response_sf`). Lost customers are left out. Exact at the levels of
        :attr:`grid`, interpolated between them.

        Parameters
        ----------
        t : float or array_like
            Levels within ``[grid[0], grid[-1]]``.

        Returns
        -------
        Estimate
            Floats for one level; arrays of the shape of ``t`` for an array of levels.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=50_000, rng=1, grid=[0.0, 1.0])
        >>> bool(abs(res.wait_sf(0.0).value - 0.5) < 0.05)   # M/M/1: P(W > 0) = rho
        True
        """
        if self._fprof is None:
            raise ValueError("this result carries no histogram of what customers found")
        return self._on_grid(t, self._fprof, self._fden, "wait_sf")

    def response_sf(self, t: Any) -> Estimate:
        """Response-time tail ``P(R > t)`` of redundancy systems (same as :meth:`wait_sf`)."""
        return self.wait_sf(t)

    def plot(self, ax: Any = None, *, level: float = 0.95) -> Any:
        """Draw the profile ``x_w`` and the wait tail against the level, with their bands.

        Both are drawn over :attr:`grid`: ``x_w`` (:meth:`profile`) as a solid line and
        ``P(W > w)`` (:meth:`wait_sf`; the response-time tail for redundancy) as a dashed one,
        each with a shaded pointwise confidence band ``value ± z se``. A curve that cannot be
        estimated (too few profile snapshots) is left out.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        level : float, default 0.95
            Confidence level of the bands.

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
        >>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)),
        ...                   steps=4_000, rng=1)
        >>> ax = res.plot()
        >>> ax.get_xlabel(), len(ax.lines)
        ('level w (workload, time)', 2)
        """
        return _draw(self, ax, level=level)

    def _rows(self) -> list[tuple[str, Any]]:
        """What :meth:`summary`, the repr and Jupyter's table show, in that order."""
        from recursions.results._statistics import REGISTRY

        # what customers find first, then the state's statistics, in the registry's order
        names = (*sorted(REGISTRY, key=lambda n: not REGISTRY[n].customers), "sup_error")
        check = self.batch_check
        return [
            ("system", self.system), ("input", self.input), ("engine", self.engine),
            ("arrivals", f"{self.steps:,} × {self.replications} "
                         f"replication{'s' if self.replications > 1 else ''} "
                         f"(warm-up {self.warmup:,})"),
            *[(n, getattr(self, n)) for n in names],
            ("batch check", None if check is None else (check.message() or "nothing flagged")),
            ("effective batches", ", ".join(f"{k} {v}" for k, v in self.effective_batches.items())
             or None),
        ]

    def __repr__(self) -> str:
        """One line: what ran, on which engine, for how long, and its estimates.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=2**16, rng=1)
        >>> repr(res)[:60]
        'SimulationResult(JSW(servers=1), Poisson(rate=0.5, service=E'
        """
        from recursions.common._tables import brief, cut

        shown = [f"{n}={brief(v)}" for n, v in self._rows()[4:-2] if v is not None]
        return (f"SimulationResult({cut(self.system, 40)}, {cut(self.input, 50)}, "
                f"{self.engine}, {self.steps:,}×{self.replications}: {', '.join(shown)})")

    def summary(self) -> str:
        """The result as lines of text: what ran, each estimate, the batch check.

        An estimate whose standard error is not trusted shows its reason instead of
        ``± se``.

        Returns
        -------
        str

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
        ...                   steps=2**16, rng=1)
        >>> print(res.summary().splitlines()[0])
        SimulationResult
        """
        from recursions.common._tables import text_table

        return text_table("SimulationResult", self._rows())

    def _repr_html_(self) -> str:
        from recursions.common._html import html_table

        return html_table("SimulationResult", self._rows())

    def _on_grid(self, w: Any, counts: np.ndarray | None, den_batches: np.ndarray | None,
                 what: str) -> Estimate:
        w = np.asarray(w, dtype=np.float64)
        flat = np.atleast_1d(w).ravel()
        g = self.grid
        if g.size == 0 or counts is None or den_batches is None:
            raise ValueError(f"no {what} was accumulated: pass grid=... to simulate (a run "
                             "with statistics= naming only waits or losses keeps none)")
        if what == "profile":
            _check_profile_samples(den_batches, self.replications, self.final_state.shape[-1])
        bad = flat[~np.isfinite(flat) | (flat < g[0]) | (flat > g[-1])]
        if bad.size:
            fix = "workloads and waits are never negative" if np.any(bad < 0) else \
                "pass simulate a grid= that covers it"
            raise ValueError(f"levels must lie within the grid [{g[0]}, {g[-1]}], got "
                             f"{float(bad[0])}: {fix}")
        # interpolation weights, shape (len(w), G)
        m = np.zeros((flat.size, g.size))
        for i, x in enumerate(flat):
            j = int(np.searchsorted(g, x, side="right")) - 1
            j = min(max(j, 0), g.size - 1)
            if j == g.size - 1 or g[j] == x:
                m[i, j] = 1.0
            else:
                a = (x - g[j]) / (g[j + 1] - g[j])
                m[i, j] = 1.0 - a
                m[i, j + 1] = a
        counts = merge_batches(counts, self._merge)
        num = counts.reshape(-1, g.size) @ m.T
        den = merge_batches(den_batches, self._merge).ravel()
        ests = [ratio_estimate(num[:, i], den) for i in range(flat.size)]
        if w.ndim == 0:  # a level in, numbers out
            return Estimate(float(ests[0].value), float(ests[0].se))
        value = np.array([e.value for e in ests]).reshape(w.shape)
        se = np.array([e.se for e in ests]).reshape(w.shape)
        return Estimate(value, se)


def with_trust(result: SimulationResult) -> SimulationResult:
    """``result`` with each estimate whose standard error is not trusted carrying the reason.

    For every statistic with batch sums, the reason its interval (:meth:`SimulationResult.interval`)
    is not trusted: no central limit theorem behind it, a fixed budget too short for its
    load, or batch means that failed their test of independence. Statistics whose batch means
    never vary (nothing observed, or 0 by construction) keep their standard error of 0 in
    plain sight, as :func:`untrusted_headline` leaves them out.

    Parameters
    ----------
    result : SimulationResult
        A finished run, with its batch sums.

    Returns
    -------
    SimulationResult
        The same result, its untrusted estimates marked (:attr:`Estimate.reason`).
    """
    sums = result._sums or {}
    changes: dict[str, Any] = {}
    for name, (num, den) in sums.items():
        est = getattr(result, name, None)
        if not isinstance(est, Estimate) or _constant(num, den):
            continue
        iv = result.interval(name)
        if not iv.trusted:
            changes[name] = est.distrusted(iv.reason or "its interval is not trusted")
    return dataclasses.replace(result, **changes) if changes else result


def untrusted_headline(result: SimulationResult) -> str | None:
    """What a fixed-budget run says when a headline interval of ``result`` cannot be trusted.

    The headline statistics are the first group of
    :data:`recursions.engines._run_plan.DEFAULT_STATISTICS` that ``result`` estimates (``p_wait``
    and ``mean_wait``, else ``p_loss``, ``mean_response`` or ``mean_workload``); those without a
    normal limit (``_no_clt``) are left out, as they have their own message, and so are those
    whose batch means never vary (nothing observed, such as no customer waiting, or a
    statistic that is 0 by construction, as the wait with a buffer of 1): their interval says
    it is not trusted and their standard error is 0, in plain sight. A run too short for its
    load (:func:`recursions.inference.diagnostics.short_run`) says that instead, whatever the batch
    means look like.

    Parameters
    ----------
    result : SimulationResult
        A run's result, with its (fine) batch sums.

    Returns
    -------
    str or None
        The message, naming the untrusted statistics and their effective batches (0) against
        the 16 an interval needs; ``None`` when every other headline interval is trusted.

    Examples
    --------
    >>> import recursions as rc
    >>> res = rc.simulate(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)),
    ...                   steps=2**16, rng=1)
    >>> untrusted_headline(res) is None
    True
    """
    from recursions.inference._batch_means import MIN_BATCHES

    if result._short is not None:
        return result._short
    have = result.statistics
    # the first headline group the run kept any of (statistics= may keep part of one), else
    # the statistics it kept
    group = next((tuple(s for s in g if s in have) for g in DEFAULT_STATISTICS
                  if any(s in have for s in g)), have)
    no_clt, sums = result._no_clt or {}, result._sums or {}
    bad = {s: result.interval(s) for s in group if s not in no_clt and not _constant(*sums[s])}
    bad = {s: iv for s, iv in bad.items() if not iv.trusted}
    if not bad:
        return None
    names = " and ".join(bad)
    R, K = np.shape(result._sums[next(iter(bad))][0]) if result._sums else (0, 0)
    reasons = "; ".join(dict.fromkeys(iv.reason for iv in bad.values()))
    return (f"{names}: the confidence interval{'s' if len(bad) > 1 else ''} cannot be "
            f"trusted ({reasons}): 0 effective batches (independent batch means found among "
            f"{K} batches x {R} replication(s)) where the interval needs {MIN_BATCHES}, so "
            "the standard errors are likely too small. Ask for precision= (run until "
            "precise), or run longer")


def _constant(num: np.ndarray, den: np.ndarray) -> bool:
    """Whether the batch means ``num / den`` (over batches with ``den > 0``) are all equal."""
    n, d = np.asarray(num, dtype=np.float64).ravel(), np.asarray(den, dtype=np.float64).ravel()
    keep = d > 0
    r = n[keep] / d[keep]
    return bool(r.size == 0 or np.all(r == r[0]))


def warn_fixed_budget(system: str, check: dg.BatchCheck | None,
                      result: SimulationResult | None) -> None:
    """One warning for what a run's batch check flagged and, for ``result``, untrusted intervals.

    ``result`` is given for a plain fixed-budget run, with its own ``batches=`` or the
    default ones (:func:`recursions.engines._run_plan.default_batches`): its headline intervals are
    then checked (:func:`untrusted_headline`), and with the default batches its length too
    (:func:`recursions.inference.diagnostics.short_run`, kept in the result). The stages of
    ``precision=``, ``warmup="auto"`` and ``start=`` are checked by the batch check alone
    here; their analysis (:mod:`recursions.inference._precision`) says the rest.

    Parameters
    ----------
    system : str
        The system's ``repr``, which starts the message.
    check : recursions.inference.diagnostics.BatchCheck or None
        The run's batch check.
    result : SimulationResult or None
        The result whose headline intervals to check, or ``None``.

    Warns
    -----
    recursions.SimulationWarning
        Once, with what was flagged.
    """
    parts = [m for m in (None if check is None else check.message(),
                         None if result is None else untrusted_headline(result)) if m]
    if parts:
        dg.warn(f"{system}: " + ". Also, ".join(parts))


HEADLINE_MEANS = ("mean_wait", "mean_response", "mean_jobs")
"""The means :func:`warn_no_clt` looks at, in order: the first one a result keeps."""


def warn_no_clt(system: str, no_clt: Mapping[str, str], kept: Collection[str]) -> None:
    """One warning when a run's headline mean has no standard error behind it, on any system.

    The first of :data:`HEADLINE_MEANS` in ``kept`` whose batch means have no normal limit
    (:func:`recursions.inference._moment_conditions.clt_failures`: the input's laws give it an
    infinite
    asymptotic variance) is named with the reason; its ``value +- se`` is shown all the same,
    and :meth:`SimulationResult.interval` marks it untrusted.

    Parameters
    ----------
    system : str
        The system's ``repr``, which starts the message.
    no_clt : mapping of str to str
        The statistics with no central limit theorem, and why.
    kept : collection of str
        The statistics the result reports.

    Warns
    -----
    recursions.SimulationWarning
        Once, for the first such mean.

    Examples
    --------
    >>> warn_no_clt("JSW(servers=1)", {}, ["mean_wait"])  # a finite variance: nothing to say
    """
    name = next((k for k in HEADLINE_MEANS if k in no_clt and k in kept), None)
    if name is not None:
        dg.warn(f"{system}: {name} +- se: {no_clt[name]}")


def _check_profile_samples(den_batches: np.ndarray, replications: int, servers: int) -> None:
    """Refuse a profile from fewer than 2 snapshots per replication."""
    per_rep = np.asarray(den_batches, dtype=np.float64).reshape(replications, -1).sum(axis=1)
    fewest = round(float(per_rep.min()) / max(servers, 1))
    if fewest < 2:
        raise ValueError(f"the profile holds {fewest} snapshot(s) of the workload vector per "
                         "replication (one at every profile_every-th measured arrival, "
                         "default: every S-th), too few for an estimate: simulate more steps "
                         "than profile_every, or pass a smaller profile_every= (e.g. "
                         "profile_every=1)")


def _draw(res: SimulationResult, ax: Any = None, *, level: float = 0.95) -> Any:
    """Draw :meth:`SimulationResult.plot <recursions.SimulationResult.plot>`."""
    from recursions.common._figures import axes, band, title

    z = band(level)
    ax = axes(ax, "SimulationResult.plot()")
    g = res.grid
    if g.size == 0:
        raise ValueError("this result has no grid: pass grid=... to simulate (a run with "
                         "statistics= naming only waits or losses keeps none)")
    if res.mean_response is not None and res.p_wait is None:
        tail = "P(R > w): response time of a job"
    elif res.p_wait is None:
        tail = "P(found > w): workload an admitted arrival finds at its server"
    else:
        tail = "P(W > w): wait of an arriving customer"
    curves = [("profile", "x_w: fraction of servers with workload > w", "-"),
              ("wait_sf", tail, "--")]
    errors: list[ValueError] = []
    for method, label, style in curves:
        try:
            est = getattr(res, method)(g)
        except ValueError as exc:  # too few snapshots, or no histogram of what was found
            errors.append(exc)
            continue
        value = np.asarray(est.value, dtype=float)
        se = np.nan_to_num(np.asarray(est.se, dtype=float))
        (line,) = ax.plot(g, value, style, lw=1.8, label=label)
        ax.fill_between(g, np.clip(value - z * se, 0.0, 1.0), np.clip(value + z * se, 0.0, 1.0),
                        color=line.get_color(), alpha=0.25, lw=0)
    if len(errors) == len(curves):
        raise errors[0]
    ax.set_xlabel("level w (workload, time)")
    ax.set_ylabel("fraction / probability")
    ax.set_xlim(float(g[0]), float(g[-1]))
    ax.set_ylim(0.0, 1.02)
    n = f"{res.steps:,} arrivals" + (f" × {res.replications} replications"
                                     if res.replications > 1 else "")
    title(ax, "Profile x_w and wait tail seen by arrivals (simulation)",
          f"{res.system}, {res.input}\n{n}; shaded: pointwise {level:.0%} band")
    ax.legend(fontsize=8, loc="upper right")
    return ax
