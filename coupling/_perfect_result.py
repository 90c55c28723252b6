"""What an exact sampler returns: :class:`PerfectSample`, and :func:`found_at_zero`.

Every exact method of :func:`coupling.perfect_sample` (and :func:`coupling.bounded_sample`)
returns its draws in a :class:`PerfectSample`, which carries what each draw cost and the
statistics the draws estimate; :func:`found_at_zero` gives what the customer arriving at 0
finds, behind ``p_wait`` and ``mean_wait``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import recursions as rc
from recursions import Estimate
from recursions.common import Record, child
from recursions.common.codes import HeapPolicy
from recursions.engines import drivers_of
from recursions.model import is_renewal

__all__ = ["ARRIVAL", "PerfectSample", "found_at_zero"]

ARRIVAL = 2**32 - 3
"""Child of a draw's seed: the routing (and service) of the customer arriving at 0."""


@dataclass(frozen=True, repr=False)
class PerfectSample(Record):
    """Exact stationary draws, what each cost, and the statistics they estimate.

    The draws are independent and identically distributed (each from its own seed), so every
    statistic is the mean of a per-draw quantity with the naive standard error: the sample
    standard deviation (``ddof=1``) over ``sqrt(size)``; ``nan`` from a single draw.

    Attributes
    ----------
    samples : numpy.ndarray
        Shape ``(size, S)``: sorted workload vectors seen by an arrival at stationarity.
    customers_back : numpy.ndarray
        Shape ``(size,)``, integers: the customers each draw went back, i.e. the arrivals
        between the instant its search coupled (where the sandwich that closed starts, or
        the renovating event) and time 0, whose services the draw used. ``0`` only when no
        one arrived in between: the M/G/infinity bound of a loss system empty at time 0,
        or (rarely) a dominated search whose sandwich starts after the latest arrival.
    method : str
        ``"vacation"``, ``"dominated-cyclic"``, ``"dominated-walk"``, ``"dominated"``,
        ``"renovation"``, ``"monotone"``, ``"bounding"``, ``"bounding-walk"`` or
        ``"bounding-fcfs"``.
    system, input : str
        What was sampled.
    dominated_by : str or None
        The dominating system whose sampler was used (``perfect_sample(...,
        dominated_by=...)``), else ``None``.
    time_back : numpy.ndarray
        Shape ``(size,)``: how far back in time each draw went. The dominated methods search
        in time: the start ``T`` of the sandwich that closed. The renovation of a loss system
        with Poisson input: the instant the M/G/infinity bound was last empty. The methods
        indexed by customers (renovation with bounded service, monotone): the sum of the
        interarrival times from the first customer used to time 0. ``nan`` where a method
        has no meaningful time (none of the present ones; a sample built without it).
    seconds : numpy.ndarray
        Shape ``(size,)``: wall-clock seconds each draw took, in the process that drew it
        (with ``workers > 1``, processes sharing cores each count their own time).
    has_loss : bool
        Whether the system loses customers (then ``p_loss`` is given, and ``p_wait`` and
        ``mean_wait`` are ``None``, as in :class:`recursions.SimulationResult`).
    found : numpy.ndarray or None
        Shape ``(size,)``: per draw, the workload the customer arriving at 0 finds at the
        server it joins (``coupling._perfect.found_at_zero``; ``w[0]`` under JSW), from the
        draw and that customer's own routing (and service) drawn from the draw's seed.
        ``p_wait`` and
        ``mean_wait`` are its statistics, as in :class:`recursions.SimulationResult`.
        ``None`` where it cannot be drawn exactly (a user map under non-renewal input, whose
        step may depend on a service time correlated with the state), for loss systems,
        and for a sample built by hand.

    Notes
    -----
    ``steps`` is ``customers_back`` under its former name, and ``mean_steps`` its mean (a
    float); both stay for existing code.

    Examples
    --------
    >>> import recursions as rc, coupling as cp
    >>> ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 200,
    ...                        rng=1)
    >>> bool((ps.customers_back >= 1).all() and (ps.time_back > 0).all())
    True
    >>> p = ps.p_wait                        # Erlang C: P(wait) = 1/3 for M/M/2 at a = 1
    >>> bool(abs(p.value - 1 / 3) < 4 * p.se)
    True
    >>> x = ps.profile([0.0, 1.0])           # fraction of servers with workload > w
    >>> x.value.shape, bool(x.value[0] >= x.value[1])
    ((2,), True)
    """

    _dict_extra = ("size", "p_wait", "p_loss", "p_all_busy", "mean_wait", "mean_workload",
                   "busy_fraction")

    samples: np.ndarray
    customers_back: np.ndarray
    method: str
    system: str
    input: str
    dominated_by: str | None = None
    # None: filled in by __post_init__ (NaN for time_back, seconds)
    time_back: np.ndarray = field(default=None)  # type: ignore[arg-type]
    seconds: np.ndarray = field(default=None)  # type: ignore[arg-type]
    has_loss: bool = False
    found: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = np.shape(self.samples)[0]
        object.__setattr__(self, "customers_back", np.asarray(self.customers_back, np.int64))
        for name in ("time_back", "seconds"):
            v = getattr(self, name)
            object.__setattr__(self, name, np.full(n, np.nan) if v is None
                               else np.asarray(v, dtype=np.float64))
        if self.found is not None:
            object.__setattr__(self, "found", np.asarray(self.found, dtype=np.float64))

    @property
    def size(self) -> int:
        """Number of draws."""
        return int(self.samples.shape[0])

    @property
    def steps(self) -> np.ndarray:
        """``customers_back`` under its former name."""
        return self.customers_back

    @property
    def mean_steps(self) -> float:
        """Mean number of customers back per draw (the mean of ``customers_back``)."""
        return float(self.customers_back.mean())

    # -- statistics of the draws (names as in recursions.SimulationResult) ----------------

    @property
    def p_wait(self) -> Estimate | None:
        """Fraction of draws whose arrival joins a server with positive workload.

        The FCFS probability of waiting for JSW, and for every map what
        :attr:`recursions.SimulationResult.p_wait` estimates: computed from :attr:`found`.
        ``None`` for loss systems (see :attr:`p_loss`) and without :attr:`found` (a user
        map under non-renewal input, or a sample built by hand).
        """
        if self.has_loss or self.found is None:
            return None
        return _mean_estimate(self.found > 0)

    @property
    def p_loss(self) -> Estimate | None:
        """Fraction of draws with ``w[0] > 0`` (loss systems only): an arrival is lost."""
        return self.p_all_busy if self.has_loss else None

    @property
    def p_all_busy(self) -> Estimate:
        """Fraction of draws with ``w[0] > 0``: an arrival finds no idle server."""
        return _mean_estimate(self.samples[:, 0] > 0)

    @property
    def mean_wait(self) -> Estimate | None:
        """Mean workload found at the joined server (:attr:`found`): the FCFS mean wait for JSW.

        As :attr:`recursions.SimulationResult.mean_wait`: under J_{p+1}SW a customer finding
        every server busy joins ``w[p]``, under JIQ a uniform rank. ``None`` for loss
        systems and without :attr:`found`.
        """
        return None if self.has_loss or self.found is None else _mean_estimate(self.found)

    @property
    def mean_workload(self) -> Estimate:
        """Mean total workload ``sum_i w[i]`` seen by an arrival."""
        return _mean_estimate(self.samples.sum(axis=1))

    @property
    def busy_fraction(self) -> Estimate:
        """Mean fraction of servers with positive workload, seen by an arrival."""
        return _mean_estimate((self.samples > 0).mean(axis=1))

    def profile(self, w: Any) -> Estimate:
        """Fraction of servers with workload above ``w``, seen by arrivals: ``x_w``.

        Exact at every level (no grid): the mean over the draws of the fraction of
        coordinates above ``w``.

        Parameters
        ----------
        w : float or array_like
            Workload levels (finite).

        Returns
        -------
        Estimate
            Float ``value`` and ``se`` for a scalar ``w``; arrays of the shape of ``w``
            otherwise.

        Examples
        --------
        >>> import recursions as rc, coupling as cp
        >>> ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 50)
        >>> bool(float(ps.profile(0.0)) == ps.busy_fraction.value)
        True
        """
        levels = np.asarray(w, dtype=np.float64)
        if not np.all(np.isfinite(levels)):
            raise ValueError(f"levels must be finite, got {w!r}")
        ests = [_mean_estimate((self.samples > x).mean(axis=1)) for x in levels.ravel()]
        if levels.ndim == 0:
            return ests[0]
        value = np.array([e.value for e in ests]).reshape(levels.shape)
        se = np.array([e.se for e in ests]).reshape(levels.shape)
        return Estimate(value, se)

    def plot(self, ax: Any = None, *, bins: int = 30, exact: bool = True) -> Any:
        """Histogram of the draws, against the exact law where it is known.

        Draws the wait :attr:`found` of the customer arriving at 0 (the total workload
        ``sum_i w(i)`` for loss systems, or without :attr:`found`) as a histogram of its part
        above 0, scaled so that its area is ``P(> 0)``; the atom at 0 is given in the legend.
        For FCFS M/M/S (``JSW`` with Poisson, or exponential renewal, input and exponential
        service) the exact law is drawn over it: ``P(W > 0)`` is Erlang C and ``W`` given
        ``W > 0`` is exponential of rate ``S mu - lambda`` (:func:`coupling._mms_exact.mmc_wait`,
        recognised from :attr:`system` and :attr:`input`). Elsewhere no exact law is drawn,
        and the legend says so.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        bins : int, default 30
            Histogram bins.
        exact : bool, default True
            Draw the exact law where it is known.

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
        >>> import recursions as rc, coupling as cp
        >>> ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 200)
        >>> ax = ps.plot()
        >>> len(ax.patches), len(ax.lines)       # 30 bars, the exact density
        (30, 1)
        """
        from coupling._sample_plots import perfect_sample

        return perfect_sample(self, ax, bins=bins, exact=exact)

    def _repr_html_(self) -> str:
        from recursions.common import html_table

        return html_table("PerfectSample", [
            ("system", self.system), ("input", self.input), ("method", self.method),
            ("dominated by", self.dominated_by), ("draws", self.size),
            *[(n, getattr(self, n)) for n in ("p_wait", "mean_wait", "p_loss", "p_all_busy",
                                               "mean_workload", "busy_fraction")],
            ("customers back (mean)", self.mean_steps),
            ("seconds per draw (mean)", float(np.nanmean(self.seconds))
             if np.isfinite(self.seconds).any() else None),
        ])


def found_at_zero(system: rc.System, input: rc.Input, samples: np.ndarray,
                  seeds: Sequence[np.random.SeedSequence]) -> np.ndarray | None:
    """Per draw, the workload the customer arriving at 0 finds at the server it joins.

    A draw is the stationary state that customer sees (every sampler stops before its
    arrival). Its routing uniforms are independent of that state, and so is its service time
    under renewal input; the map's own step with them, applied to the draw, gives what the
    customer finds, exactly. Draw ``k`` takes them from the child ``ARRIVAL`` of its own
    seed, so ``found[k]`` depends on that seed alone (not on ``size`` or the workers). Under
    another input the service time at 0 depends on the past, so only maps that join by
    state alone (:attr:`recursions.System.joins_by_state`: every built-in map), for which it
    does not matter, get an answer.

    Parameters
    ----------
    system : recursions.System
        The sampled system.
    input : recursions.Input
        Its input.
    samples : numpy.ndarray
        Shape ``(size, S)``, the draws.
    seeds : sequence of numpy.random.SeedSequence
        The draws' own seeds, one per row of ``samples``.

    Returns
    -------
    numpy.ndarray or None
        Shape ``(size,)``. ``None`` for loss systems, for redundancy (whose step returns a
        response time, as in :func:`recursions.simulate`), for systems without the dense
        engine and for maps of your own under non-renewal input.

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> w = np.array([[0.0, 1.0, 2.0], [0.5, 1.0, 2.0]])
    >>> inp = rc.Poisson(1.0, rc.dists.Exponential(1.0))
    >>> seeds = np.random.SeedSequence(1).spawn(2)
    >>> found_at_zero(rc.JpSW(3, 1), inp, w, seeds).tolist()
    [0.0, 1.0]
    """
    heap = getattr(system, "heap_policy", None)  # (policy code, d) the system declares
    if system.has_loss or "dense" not in system.engines \
            or (heap is not None and int(heap[0]) == HeapPolicy.REDUNDANCY):
        return None
    service = None
    if not system.joins_by_state:
        if not is_renewal(input):
            return None
        service = input.service
    step, params = drivers_of(system).step_once, system.params
    out = np.empty(samples.shape[0])
    for k, sd in enumerate(seeds):
        gen = np.random.default_rng(child(sd, ARRIVAL))
        sig = 0.0 if service is None else float(service.sample(gen, 1)[0])
        u = system.innovations(gen, 1)[0] if system.uniforms else np.zeros(1)
        w = np.ascontiguousarray(samples[k], dtype=np.float64)
        out[k] = step(params, w, sig, 0.0, u)[1]
    return out


def _mean_estimate(x: Any) -> Estimate:
    """Mean of i.i.d. draws with the naive standard error ``std(ddof=1) / sqrt(n)``."""
    x = np.asarray(x, dtype=np.float64)
    if x.size < 2:
        return Estimate(float(x.mean()) if x.size else math.nan, math.nan)
    return Estimate(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)))

