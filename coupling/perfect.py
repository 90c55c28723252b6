"""Exact stationary sampling: coupling from the past (:ref:`theory-exact`).

:func:`perfect_sample` returns exact draws of the stationary sorted workload vector seen by an
arrival, by one of the methods below, chosen from the system and input (for JSW with a
light-tailed service law the default is ``"vacation"`` where ``S (rho - 1/2) >= 3.5`` or
``S >= 80`` and ``"dominated-cyclic"`` below, chosen from the parameters alone):

``"vacation"`` -- FCFS GI/GI/S (renewal input, light-tailed service), dominated by the
    multi-server vacation system of Blanchet, Dong and Pei: servers never idle, taking i.i.d.
    vacations when nobody waits, so its single queue dominates FCFS and is certified empty
    at a past time by ``S + 1`` certified random-walk maxima (:mod:`coupling.vacation`). It
    needs only an empty *queue*, not ``S`` empty queues, so it scales with ``S``.
``"dominated"`` -- FCFS M/G/S (:class:`recursions.JSW` with Poisson input), dominated coupling
    from the past (Kendall; Connor & Kendall 2015) with the random-assignment (RA) system, ``S``
    independent M/G/1 queues fed at rate ``lam / S``, simulated in equilibrium backwards in
    time (:mod:`coupling.dominating`). Service durations are paired *in order of initiation*
    (Wolff): FCFS starts its k-th service no later than any other assignment rule does, so at
    an instant ``-T`` when nobody waits in the bound, the FCFS residual times lie below the
    bound's (sorted), and the FCFS customers after ``-T`` take the bound's durations in order
    of initiation. FCFS is run forward from ``0`` (lower) and from the bound's residuals
    (upper); if the two agree at time 0 that is the stationary vector. Otherwise the next
    instant is sought at or before ``-2T``.
``"dominated-cyclic"`` -- FCFS GI/GI/S (renewal input, a service law with a finite moment
    generating function near 0; the default for such laws at small ``S`` or load). The same
    sandwich with *cyclic* assignment (round robin, customer ``n`` to server
    ``(phase + n) mod S``) as the bound:
    each of its queues sees ``S`` interarrival times between customers, so it seldom has a
    customer waiting, and instants with nobody waiting anywhere stay frequent for large ``S``
    (M/D/40 at load 0.9, M/M/50 at 0.5), where they are astronomically rare under random
    assignment (about ``(1 - rho^2)^S`` for exponential service). The bound seen by arrivals
    is the future maximum of an ``S``-dimensional random walk with a periodic phase, drawn
    backwards with certificates from exponential tilting (:mod:`coupling.ra_walk`).
``"dominated-walk"`` -- the same with random assignment drawn by that random walk (Blanchet,
    Pei & Sigman): any renewal input, light-tailed service.
``"renovation"`` -- loss systems. With Poisson input the M/G/infinity queue (whose customers are
    a superset of the loss system's) is run back to a time it is empty: the loss system is
    empty then, whatever the past, and is run forward from there. With service times bounded
    by ``b`` (any input) the renovating event (9), "every earlier customer would have finished
    by this arrival", is checked on the backward draws within time ``b`` and the system is run
    forward from the last such arrival.
``"monotone"`` -- monotone maps whose stationary state is bounded by a known vector ``upper``
    (given, or ``(b, ..., b)`` for the envelope of a loss system with services bounded by
    ``b``): Propp-Wilson sandwiching between ``0`` and ``upper`` at doubling horizons on the
    time-indexed draws of :class:`recursions.BackwardDraws`.
``"bounding"`` / ``"bounding-walk"`` / ``"bounding-fcfs"`` -- the non-monotone idle-first
    maps J_{p+1}SW and JIQ: bounding processes started below and above a dominating
    single-server queue where ``lam E[sigma] < 1``, and for J_{p+1}SW up to
    ``lam E[sigma] < S - p`` above the FCFS sampler's bound on ``S - p`` servers
    (:mod:`coupling.bounding`, which says why the draw is exact and why it stops there).

A monotone map dominated by JSW (``dominated_by=rc.JSW(S)``, a :class:`recursions.Map`
included) is sampled by any of the JSW methods: the map is run from 0 and from the
JSW sampler's dominating vector at ``-T`` on the same input path after ``-T`` (see
:func:`perfect_sample` for why the draw is exact).

Every search has a cap and raises :class:`CouplingNotReached` when it is hit; an unstable
system raises ``ValueError`` before any work.

Draw ``k`` comes from the ``k``-th child of ``SeedSequence(rng)`` alone, so the draws are
i.i.d. and may run in worker processes (``workers=``) with the same result. The
:class:`PerfectSample` carries what each draw cost (customers and time gone back, seconds)
and estimates, with standard errors from the i.i.d. draws, of the statistics
:class:`recursions.SimulationResult` names (``p_wait`` or ``p_loss``, ``mean_wait``,
``mean_workload``, ``busy_fraction``, ``profile``).

Each method is one function ``run_one(seed, ...) -> (state, customers back, time back)``
(``_draw_fcfs``, ``_draw_loss_poisson``, ``_draw_loss_bounded``, ``_draw_monotone``):
:func:`perfect_sample` binds its other arguments with :func:`functools.partial` and calls
it once per draw. A new method adds such a function, picklable and without shared state,
and a branch that binds it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import os
import pickle
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

import recursions as rc
from recursions.backward import run_window
from recursions.estimate import Estimate
from recursions.inputs import is_poisson, is_renewal
from recursions.jit import jit
from recursions.rng import RngLike, as_seed_sequence, child
from recursions.tables import Record
from recursions.validation import (
    check_bool,
    check_count,
    check_input,
    check_int,
    check_positive,
    check_system,
    require_memory,
)

from .dominating import ReversedQueue
from .errors import CouplingNotReached
from .ra_walk import RAWalk, ra_known_from
from .tilting import mgf

if TYPE_CHECKING:
    from .vacation import VacationTemplate

__all__ = ["CouplingNotReached", "PerfectSample", "perfect_sample"]


_ROUTING = 2**32 - 1  # child of a draw's seed feeding a dominated map's routing uniforms
_SEARCHES = 2**32 - 2  # child of the root seed feeding the searches behind dominated_by=
_ARRIVAL = 2**32 - 3  # child of a draw's seed: the routing (and service) of the customer at 0


@dataclass(frozen=True)
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
        server it joins (``coupling.perfect.found_at_zero``; ``w[0]`` under JSW), from the
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
        ``W > 0`` is exponential of rate ``S mu - lambda`` (:func:`coupling.sample_plots.mmc_wait`,
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
        from .sample_plots import perfect_sample

        return perfect_sample(self, ax, bins=bins, exact=exact)

    def _repr_html_(self) -> str:
        from recursions.summary import html_table

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
    customer finds, exactly. Draw ``k`` takes them from the child ``_ARRIVAL`` of its own
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
    from recursions import heap as hp

    if system.has_loss or "dense" not in system.engines \
            or hp.policy_of(system)[0] == hp.REDUNDANCY:
        return None
    service = None
    if not system.joins_by_state:
        if not is_renewal(input):
            return None
        service = input.service
    step, params = system.drivers.step_once, system.params
    out = np.empty(samples.shape[0])
    for k, sd in enumerate(seeds):
        gen = np.random.default_rng(child(sd, _ARRIVAL))
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


def _run(system: rc.System, start: np.ndarray, t_start: float, times: np.ndarray,
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


@jit
def _fifo(times, services, free):
    """FIFO server idle from ``free`` on: initiation times and the last completion."""
    init = np.empty(times.size)
    for k in range(times.size):
        init[k] = max(times[k], free)
        free = init[k] + services[k]
    return init, free


class _RAServer:
    """One server of the random-assignment system: its stationary past and its future."""

    def __init__(self, rate: float, law, gen: np.random.Generator) -> None:
        g_past, self._g_future = gen.spawn(2)
        self.queue = ReversedQueue(rate, law, g_past, "ps")
        self.rate, self.law = rate, law
        self.past_t = np.empty(0)  # forward arrival times in (-empty_at, 0], ascending
        self.past_s = np.empty(0)
        self.fut_t = np.empty(0)  # arrivals after time 0, ascending
        self.fut_s = np.empty(0)

    def reach(self, T: float) -> None:
        """Make sure the past is known back to ``-T`` and further back to an empty instant."""
        for target, stop in ((T, False), (math.inf, True)):
            t, x = self.queue.advance(target, stop_when_empty=stop)
            self.past_t = np.concatenate((t[::-1], self.past_t))
            self.past_s = np.concatenate((x[::-1], self.past_s))

    def future_until(self, horizon: float) -> None:
        """Generate the forward arrivals after 0 up to time ``horizon``."""
        last = self.fut_t[-1] if self.fut_t.size else 0.0
        while last <= horizon:
            gaps = self._g_future.exponential(1.0 / self.rate, 64)
            t = last + np.cumsum(gaps)
            x = np.asarray(self.law.sample(self._g_future, 64), dtype=np.float64)
            self.fut_t = np.concatenate((self.fut_t, t))
            self.fut_s = np.concatenate((self.fut_s, x))
            last = t[-1]


def _no_wait_intervals(arr: np.ndarray, init: np.ndarray, start: float, stop: float):
    """Intervals within ``[start, stop]`` where a FIFO server has nobody waiting.

    ``start`` is an instant the server was empty and ``arr``/``init`` the arrival and
    initiation times of its customers since then: nobody waits on ``[start, arr_1)`` and on
    ``[init_k, arr_{k+1})``.
    """
    lows = np.concatenate(([start], init))
    highs = np.concatenate((arr, [np.inf]))
    keep = lows < highs
    lows, highs = np.maximum(lows[keep], start), np.minimum(highs[keep], stop)
    keep = lows < highs
    return list(zip(lows[keep].tolist(), highs[keep].tolist(), strict=True))


def _intersect(a, b):
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def _dominated_jsw(system, inp, gen, t0, cap, sampled=None):
    """Dominated CFTP for FCFS M/G/S (Connor & Kendall 2015, with a sandwich).

    Service durations are coupled *in order of initiation of service* (Wolff): the k-th
    customer to start service in the random-assignment (RA) system, FIFO at each server, and
    the k-th to start in FCFS get the same duration. FCFS then starts its k-th service no
    later than RA. At a time ``-T`` when no RA customer is waiting, every arrived customer has
    started in both systems, so pairing customers by initiation index gives FCFS residuals no
    larger than RA's: the stationary FCFS vector at ``-T`` lies between 0 and the sorted RA
    residuals, and the FCFS customers arriving after ``-T`` take the durations of the RA
    initiations after ``-T``, in order. Both ends of the sandwich are run with those to time
    0; if they meet, that is the stationary vector. After a failed try at ``-T`` the next
    is sought at or before ``-2T``. Returns that vector, the customers arrived after ``-T``
    and ``T``.
    """
    S = system.servers
    servers = [_RAServer(inp.arrival_rate / S, inp.service, g) for g in gen.spawn(S)]
    target = t0  # look for an instant with nobody waiting in RA, at or before -target
    known = t0  # every server's past is known back to -known (at least)
    while True:
        for sv in servers:
            sv.reach(known)
        known = min(sv.queue.s for sv in servers)
        result, Tq = _try_latest(system, servers, [-sv.queue.s for sv in servers], target,
                                 sampled)
        if result is not None:
            return (*result, Tq)
        if Tq is not None:
            target = 2.0 * Tq  # the next try starts (at least) twice as far back
        else:
            known = 2.0 * known  # learn more of the past
        if target > cap or known > cap:
            raise CouplingNotReached(
                f"no coupling within time {cap:g} back; raise cap_time (the random-assignment "
                "bound rarely has no waiting customer when S and the load are large)"
            )
        known = max(known, target)


class _GIFuture:
    """Customers from time 0 on (the first arrives at 0), with renewal arrivals.

    They are routed at random or, with a ``phase``, cyclically (customer ``n`` to server
    ``(phase + n) mod S``).
    """

    def __init__(self, inp: rc.Renewal, S: int, gen: np.random.Generator,
                 phase: int | None = None) -> None:
        self.inp, self.S, self.gen, self.phase = inp, S, gen, phase
        self.t = np.zeros(1)
        self.s = np.asarray(inp.service.sample(gen, 1), dtype=np.float64)
        self.u = self._routes(0, 1)

    def _routes(self, n0: int, n: int) -> np.ndarray:
        if self.phase is None:
            return self.gen.integers(0, self.S, n)
        return (self.phase + n0 + np.arange(n)) % self.S

    def until(self, horizon: float) -> None:
        while self.t[-1] <= horizon:
            g = self.gen
            gaps = np.asarray(self.inp.interarrival.sample(g, 64), dtype=np.float64)
            self.u = np.concatenate((self.u, self._routes(self.t.size, 64)))
            self.t = np.concatenate((self.t, self.t[-1] + np.cumsum(gaps)))
            self.s = np.concatenate((self.s, self.inp.service.sample(g, 64)))


class _GIServer:
    """One RA server: its known past (from an instant it was empty) and future customers.

    The attributes are those :func:`_sandwich` reads.
    """

    def __init__(self, i: int, past_t: np.ndarray, past_s: np.ndarray, fut: _GIFuture) -> None:
        self.i, self.past_t, self.past_s, self._fut = i, past_t, past_s, fut

    def future_until(self, horizon: float) -> None:
        self._fut.until(horizon)

    @property
    def fut_t(self) -> np.ndarray:
        return self._fut.t[self._fut.u == self.i]

    @property
    def fut_s(self) -> np.ndarray:
        return self._fut.s[self._fut.u == self.i]


def _dominated_jsw_gi(system, inp, gen, t0, cap, template, sampled=None):
    """Dominated CFTP for FCFS GI/GI/S with the random-assignment bound (renewal input).

    The same construction as :func:`_dominated_jsw` (Wolff's coupling in order of
    initiation, a sandwich from an instant with nobody waiting in RA), with the RA past drawn
    by :class:`coupling.ra_walk.RAWalk`: at a certified customer ``-n`` the RA workloads are
    bounded, each server's bounded copy is run forward until it is empty (from then on that
    server's customers are known), and instants with nobody waiting are sought where every
    server is known. Returns as :func:`_dominated_jsw`.
    """
    S = system.servers
    g_walk, g_fut = gen.spawn(2)
    walk = template.fresh(g_walk)
    fut = _GIFuture(inp, S, g_fut, walk.phase if walk.routing == "cyclic" else None)
    target = t0
    need = 16  # customers of walk wanted before the next look
    while True:
        while walk.K < need or walk.checkpoints()[0].size == 0:
            walk.advance()
        u, s, t = walk.path()
        times = -np.cumsum(t)  # arrival time of customer -k at index k - 1
        if -times[-1] > cap:
            raise CouplingNotReached(
                f"no coupling within time {cap:g} back; raise cap_time (instants with nobody "
                f"waiting in the {walk.routing} assignment get rare as S and the load grow)"
            )
        ks, bounds = walk.checkpoints()
        known = ra_known_from(u, s, t, int(ks[-1]), bounds[-1])
        if (known < 0).any():
            need = 2 * walk.K
            continue
        servers, starts = [], []
        for i in range(S):
            k = int(known[i])
            starts.append(times[k - 1] if k > 0 else 0.0)
            sel = np.flatnonzero(u[:k] == i)[::-1]  # ascending in time
            servers.append(_GIServer(i, times[sel], s[sel], fut))
        result, Tq = _try_latest(system, servers, starts, target, sampled)
        if result is not None:
            return (*result, Tq)
        if Tq is not None:
            target = 2.0 * Tq
            continue  # look again further back in what is known
        need = 2 * walk.K


def _try_latest(system, servers, starts, target, sampled=None):
    """Sandwich from the latest instant at or before ``-target`` with nobody waiting.

    Server ``i`` of the bound is known from its instant ``starts[i]`` on. Returns
    ``(result, T)``: the sample and its number of customers, or ``None`` if the sandwich did
    not close at ``-T``; ``(None, None)`` if there is no such instant yet.
    """
    fifo, common = [], None
    for sv, start in zip(servers, starts, strict=True):
        init, free0 = _fifo(sv.past_t, sv.past_s, -math.inf)
        fifo.append((init, free0))
        iv = _no_wait_intervals(sv.past_t, init, start, -target)
        common = iv if common is None else _intersect(common, iv)
    if not common:
        return None, None
    lo, hi = common[-1]
    T = -0.5 * (lo + hi)
    return _sandwich(system, servers, fifo, T, sampled), T


def _sandwich(system, servers, fifo, T, sampled=None):
    """Run FCFS from 0 and from the RA residuals at ``-T`` (nobody waiting in RA then).

    With ``sampled`` (a :class:`_DominatedMap`), run that map instead, on the same input.
    """
    S = system.servers
    upper = np.zeros(S)
    arr_t, inits, durs = [], [], []
    last_init = -T
    for j, (sv, (init, _)) in enumerate(zip(servers, fifo, strict=True)):
        before = sv.past_t <= -T
        done = init[before] + sv.past_s[before]
        upper[j] = max(float(done.max()) + T, 0.0) if done.size else 0.0
        after = ~before
        arr_t.append(sv.past_t[after])
        inits.append(init[after])
        durs.append(sv.past_s[after])
        if inits[-1].size:
            last_init = max(last_init, float(inits[-1].max()))
    times = np.sort(np.concatenate(arr_t))
    m = times.size
    if last_init > 0:  # customers arriving after 0 may start before some of these
        for sv, (_, free0) in zip(servers, fifo, strict=True):
            sv.future_until(last_init)
            keep = sv.fut_t <= last_init
            fi, _ = _fifo(sv.fut_t[keep], sv.fut_s[keep], free0)
            inits.append(fi)
            durs.append(sv.fut_s[keep])
    order = np.argsort(np.concatenate(inits), kind="stable")
    sigma = np.concatenate(durs)[order][:m]
    if sampled is not None:
        lo, hi = sampled.sandwich(np.sort(upper), T, times, sigma)
    else:
        lo = _run(system, np.zeros(S), -T, times, sigma)
        hi = lo if not upper.any() else _run(system, np.sort(upper), -T, times, sigma)
    return (lo, m) if np.array_equal(lo, hi) else None


class _DominatedMap:
    """A monotone map sampled inside the sandwich of a dominating FCFS system.

    The FCFS sampler supplies, at a past instant ``-T``, a vector ``B`` above the FCFS
    stationary state and the input after ``-T`` (:func:`_sandwich`); the map is run from 0
    and from ``B`` on that input. Its routing uniforms are attached to the arrivals counted
    back from time 0 (row ``k`` to the ``(k + 1)``-th latest arrival before 0), so a later
    try from further back gives the same customers the same uniforms.
    """

    def __init__(self, system: rc.System, gen: np.random.Generator) -> None:
        self.system, self.gen = system, gen
        self.rows = np.empty((0, system.uniforms))

    def _latest(self, m: int) -> np.ndarray:
        """Uniforms of the ``m`` latest arrivals before 0, in increasing time."""
        have = self.rows.shape[0]
        if have < m:
            k = max(m - have, have, 64)
            more = np.asarray(self.system.innovations(self.gen, k), dtype=np.float64)
            self.rows = np.concatenate((self.rows, more.reshape(k, self.system.uniforms)))
        return np.ascontiguousarray(self.rows[:m][::-1])

    def sandwich(self, upper: np.ndarray, T: float, times: np.ndarray,
                 sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The map's states at 0 from 0 and from ``upper`` at ``-T``, arrivals ``times``.

        Nothing arrives between ``-T`` and the first arrival, so the FCFS bound only drains
        there: the state seen by that arrival is below ``(upper - (t_1 + T))^+``. The map is
        applied from that arrival on (no pseudo-arrival, which a user's map might not treat
        as a no-op).
        """
        S = self.system.servers
        m = times.size
        first = float(times[0]) if m else 0.0
        hi = np.maximum(upper - (first + T), 0.0)
        lo = np.zeros(S)
        if m:
            tau = np.maximum(np.diff(np.append(times, 0.0)), 0.0)
            sig = np.ascontiguousarray(sigma, dtype=np.float64)
            u = self._latest(m)
            start_hi = hi
            lo = run_window(self.system, lo, sig, tau, u)
            hi = lo if not start_hi.any() else run_window(self.system, start_hi, sig, tau, u)
        return lo, hi


def _loss_poisson(system, inp, gen, cap):
    q = ReversedQueue(inp.arrival_rate, inp.service, gen, "infinite")
    times, services = q.advance(cap, stop_when_empty=True)
    if q.number > 0:
        raise CouplingNotReached(f"the M/G/infinity bound did not empty within time {cap:g} "
                                 "back; raise cap_time")
    w = _run(system, np.zeros(system.servers), q.s * -1.0, times, services)
    return w, times.size, float(q.s)


def renovation_index(sigma: Any, tau: Any, bound: float = math.inf) -> np.ndarray:
    """Arrivals at which the renovating event (9) of the loss system holds, from the input.

    Event (9) at arrival ``i``: every earlier customer would have finished by ``T_i`` had it
    been served at once (``sigma_j <= T_i - T_j`` for all ``j < i``), so a loss system of any
    size is empty when customer ``i`` arrives, whatever happened before. Only customers within
    ``bound`` (the largest possible service time) before ``T_i`` can spoil the event, so with
    a finite ``bound`` it is certified from a finite window; arrivals too close to the start
    of the window to be certified are left out.

    Parameters
    ----------
    sigma, tau : array_like
        Service and interarrival times of consecutive customers.
    bound : float, default inf
        Upper bound of the service times (``inf``: only the window's own customers count).

    Returns
    -------
    numpy.ndarray
        Indices ``i`` at which the event holds.

    Examples
    --------
    >>> renovation_index([2.0, 0.5, 1.0, 0.2], [1.0, 1.0, 1.0, 1.0], bound=2.0).tolist()
    [2, 3]
    """
    sig = np.asarray(sigma, dtype=np.float64).ravel()
    ta = np.asarray(tau, dtype=np.float64).ravel()
    if sig.size != ta.size:
        raise ValueError(f"sigma and tau must have equal lengths, got {sig.size}, {ta.size}")
    T = np.concatenate(([0.0], np.cumsum(ta)[:-1]))
    reach = np.concatenate(([-np.inf], np.maximum.accumulate(sig + T)[:-1]))
    ok = (reach <= T) & (T - T[0] >= (bound if math.isfinite(bound) else 0.0))
    return np.flatnonzero(ok)


def _renovation_index(sig: np.ndarray, tau: np.ndarray, b: float) -> int:
    """Largest index ``i`` of the window at which event (9) holds, or -1.

    Entry ``i`` is time ``-n + i``. Event (9) at ``i``: every customer ``j < i`` has
    ``sigma_j <= T_i - T_j``; only customers within time ``b`` before ``T_i`` can fail it,
    and the event can only be certified when the window reaches back past ``T_i - b``.
    """
    T = np.concatenate(([0.0], np.cumsum(tau)[:-1]))
    reach = np.maximum.accumulate(sig + T)  # latest finishing time among customers <= j
    for i in range(sig.size - 1, 0, -1):
        if T[i] - T[0] < b:  # the window does not reach back a full b: cannot certify
            return -1
        if reach[i - 1] <= T[i]:
            return i
    return -1


def _loss_bounded(system, inp, seed, b, n0, cap):
    draws = rc.BackwardDraws(system, inp, rng=seed)
    n = n0
    while True:
        sig, tau, u = draws.window(n)
        i = _renovation_index(sig, tau, b)
        if i >= 0:
            w = run_window(system, np.zeros(system.servers), sig[i:], tau[i:], u[i:])
            return w, n - i, float(tau[i:].sum())
        if n >= cap:
            raise CouplingNotReached(f"no renovating event (9) within {cap} customers back; "
                                     "raise cap_customers")
        n = min(2 * n, cap)


def _check_upper(system: rc.System, inp: rc.Input, upper: np.ndarray, trials: int,
                 seed: np.random.SeedSequence) -> None:
    """Refuse ``upper`` unless the map keeps states below it below it, on sampled cases.

    ``step(w) <= upper`` for every ``w <= upper`` and every innovation makes the set below
    ``upper`` absorbing, so the paths from 0 (Loynes) and the stationary state stay below it,
    which is what the sandwich from ``upper`` needs (for a monotone map ``w = upper`` is the
    worst case). ``trials`` innovations drawn from the input are tried, half from ``upper``
    itself and half from random sorted states below it; a sample can only refute.
    """
    gen = np.random.default_rng(seed)
    try:
        sig, tau = inp.sample(trials, rng=gen)
        U = np.ascontiguousarray(system.innovations(gen, trials), dtype=np.float64)
        W = np.tile(upper, (trials, 1))
        v = gen.random((trials // 2, upper.size))
        v[gen.random(v.shape) < 0.3] = 0.0
        for lo, hi in system.blocks:
            v[:, lo:hi] = np.sort(v[:, lo:hi], axis=1)
        W[trials - v.shape[0]:] *= v  # sorted factors of a sorted vector: sorted, below it
        start = W.copy()
        found = np.empty(trials)
        system.drivers.apply_rows(system.params, W, np.ascontiguousarray(sig, dtype=float),
                                  np.ascontiguousarray(tau, dtype=float), U, found)
    except rc.MapContractError:  # the map itself broke (check="always" says where)
        raise
    except Exception as exc:
        raise ValueError(f"upper= cannot be checked for {system!r} under {inp!r} "
                         f"({type(exc).__name__}: {exc}), so no draw from it would be exact: "
                         "leave upper= out where the system has its own bound") from exc
    above = np.flatnonzero(np.any(W > upper, axis=1))
    if above.size:
        k = int(above[0])
        raise ValueError(
            f"upper={upper.tolist()} does not bound {system!r}: the map takes a state below it "
            f"above it ({start[k].tolist()} to {W[k].tolist()} with sigma={float(sig[k])!r}, "
            f"tau={float(tau[k])!r}, u={U[k].tolist()}; {above.size} of {trials} sampled "
            "cases), so the stationary state need not lie below it and a sandwich from it "
            "would not be exact")


def _monotone(system, inp, seed, upper, n0, cap):
    draws = rc.BackwardDraws(system, inp, rng=seed)
    n = n0
    while True:
        sig, tau, u = draws.window(n)
        lo = run_window(system, np.zeros(system.servers), sig, tau, u)
        hi = run_window(system, upper.copy(), sig, tau, u)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError(
                f"{system!r} left NaN or inf in the state on this draw's window of {n} "
                f"customers (from 0: {lo.tolist()}, from upper: {hi.tolist()}): the map is "
                "broken (rc.Map(..., check='always') finds the step)")
        if not (np.all(hi <= upper) and np.all(lo <= hi)):
            raise ValueError(
                f"upper={upper.tolist()} does not bound {system!r} on this draw's own window "
                f"of {n} customers: from it the map ends at {hi.tolist()} (from 0 at "
                f"{lo.tolist()}), not below it, so no exact draw comes from it")
        if np.array_equal(lo, hi):
            return lo, n, float(tau.sum())
        if n >= cap:
            raise CouplingNotReached(f"the sandwich did not close within {cap} customers back; "
                                     "raise cap_customers")
        n = min(2 * n, cap)


# -- one draw: each method is a function run_one(seed, ...) -> (w, customers back, time back) --
#
# perfect_sample binds a method's arguments with functools.partial and calls the result once
# per draw with the draw's own SeedSequence (:func:`_collect`). The function and its bound
# arguments must be picklable (worker processes receive them) and must not change shared
# state, so that a draw depends on its seed only, whichever worker runs it. A new method adds
# such a function (in its own module) and a branch of perfect_sample that binds it.


class _Walks:
    """The :class:`RAWalk` template of a renewal-input JSW sampler, built once per process.

    Its tilted samplers are closures, which ``pickle`` refuses: a copy (in a worker process)
    carries the recipe and builds the same template again (the construction is
    deterministic), so every process draws the same walks from the same seeds.
    """

    def __init__(self, servers: int, service, interarrival, routing: str) -> None:
        self.args = (servers, service, interarrival, routing)
        self._walk: RAWalk | None = None

    def template(self) -> RAWalk:
        if self._walk is None:
            S, service, interarrival, routing = self.args
            # not a hidden seed: the template's construction (Cramer root, tilts) is
            # deterministic, and every draw uses template.fresh(gen) with its own generator
            self._walk = RAWalk(S, service, interarrival, np.random.default_rng(0),
                                routing=routing)
        return self._walk

    def __getstate__(self) -> dict[str, Any]:
        return {"args": self.args, "_walk": None}


def _draw_fcfs(sd, fcfs, inp, t0, tcap, walks=None, inside=None):
    """One dominated-CFTP draw of ``fcfs``, or of what ``inside`` runs within its sandwich.

    ``inside(gen)`` (optional) builds the object whose ``sandwich(upper, T, times, sigma)``
    replaces the two FCFS runs: a map dominated by ``fcfs`` (:class:`_DominatedMap`), or the
    bounding processes of :mod:`coupling.bounding`; ``gen`` is a stream apart from the
    bound's (which stays the one JSW alone would use, so a map equal to JSW gives JSW's
    draws), for the map's routing uniforms.

    The time back is the start ``T`` of the sandwich that closed; the customers back are
    the arrivals in ``(-T, 0)``.
    """
    gen = np.random.default_rng(sd)
    sampled = None if inside is None else inside(np.random.default_rng(child(sd, _ROUTING)))
    if type(walks).__name__ == "VacationTemplate":
        from .vacation import vacation_draw

        return vacation_draw(walks, gen, t0, tcap, sampled)
    if walks is not None:
        return _dominated_jsw_gi(fcfs, inp, gen, t0, tcap, walks.template(), sampled)
    return _dominated_jsw(fcfs, inp, gen, t0, tcap, sampled)


def _draw_loss_poisson(sd, system, inp, cap):
    """One renovation draw from the last empty instant of the M/G/infinity queue."""
    return _loss_poisson(system, inp, np.random.default_rng(sd), cap)


def _draw_loss_bounded(sd, system, inp, b, n0, cap):
    """One renovation draw from the last renovating event (9) (services bounded by ``b``)."""
    return _loss_bounded(system, inp, sd, b, n0, cap)


def _draw_monotone(sd, system, inp, upper, n0, cap):
    """One Propp-Wilson draw between 0 and ``upper``."""
    return _monotone(system, inp, sd, upper, n0, cap)


def _timed(run_one, sd):
    t = time.perf_counter()
    w, n, back = run_one(sd)
    return w, n, back, time.perf_counter() - t


# -- many draws: in this process, or in worker processes -----------------------------------


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _check_workers(workers: Any, size: int) -> int:
    """Worker processes to use: ``None`` is every core; never more than the draws."""
    if workers is None:
        return max(1, min(_cores(), size))
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1 (1: every draw in this process) "
                         f"or None (one worker process per core), got {workers!r}")
    return min(int(workers), size)


def _bar(progress: bool, total: int) -> Any:
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError("progress=True shows a tqdm progress bar, and tqdm is not "
                          "installed: pip install tqdm (or the extra: pip install "
                          "'queue-recursions[progress]'), or pass progress=False") from None
    return tqdm(total=total, unit="draw", desc="perfect_sample")


def _collect(run_one, seeds, S, workers, progress):
    """Run ``run_one`` on every seed; arrays of states, customers, times and seconds back.

    Draw ``k`` lands in row ``k`` whichever worker ran it and when, so the arrays depend on
    the seeds only.
    """
    n = len(seeds)
    out = np.empty((n, S))
    customers = np.empty(n, dtype=np.int64)
    back = np.empty(n)
    seconds = np.empty(n)
    bar = _bar(progress, n)

    def store(k, res):
        out[k], customers[k], back[k], seconds[k] = res

    try:
        if workers == 1:
            for k, sd in enumerate(seeds):
                store(k, _timed(run_one, sd))
                if bar is not None:
                    bar.update(1)
        else:
            _in_processes(run_one, seeds, workers, store, bar)
    finally:
        if bar is not None:
            bar.close()
    return out, customers, back, seconds


_WORKER_RUN: Any = None


def _init_worker(payload: bytes, threads: int) -> None:
    """Pool initializer: numba threads per worker, ignore Ctrl-C, load the method."""
    global _WORKER_RUN
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]
    _WORKER_RUN = pickle.loads(payload)


def _worker_draws(first: int, seeds: list) -> tuple[int, list]:
    return first, [_timed(_WORKER_RUN, sd) for sd in seeds]


def _dumps(obj: Any) -> bytes:
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - cloudpickle comes with dask
        return pickle.dumps(obj)
    return cloudpickle.dumps(obj)


def _in_processes(run_one, seeds, workers, store, bar) -> None:
    """The draws in ``workers`` processes (``spawn``), in chunks of consecutive draws."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    try:
        payload = _dumps(run_one)
    except Exception as err:
        raise TypeError(f"workers={workers} sends the system and the input to worker "
                        f"processes, and they cannot be pickled ({err}); pass workers=1 "
                        "to draw in this process") from err
    n = len(seeds)
    chunk = max(1, min(64, n // (8 * workers)))  # a few chunks per worker: balance, progress
    ex = ProcessPoolExecutor(max_workers=workers,
                             mp_context=multiprocessing.get_context("spawn"),
                             initializer=_init_worker,
                             initargs=(payload, max(1, _cores() // workers)))
    try:
        pending = {ex.submit(_worker_draws, i, seeds[i:i + chunk]) for i in range(0, n, chunk)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                first, results = fut.result()
                for j, res in enumerate(results):
                    store(first + j, res)
                if bar is not None:
                    bar.update(len(results))
    except BaseException as exc:  # a draw failed (CouplingNotReached), Ctrl-C, a dead worker
        # let the executor cancel what is queued, then stop the running draws at once
        procs = list((getattr(ex, "_processes", None) or {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            with contextlib.suppress(Exception):
                proc.terminate()
        if isinstance(exc, BrokenProcessPool):
            raise RuntimeError(
                "a worker process of perfect_sample died (BrokenProcessPool). The workers "
                "start with the spawn method and import the main script again: a script that "
                "calls perfect_sample(..., workers=...) outside `if __name__ == "
                "\"__main__\":` runs that call again in every worker, which fails. Put the "
                "call under the guard, or pass workers=1. (A worker killed by the system, "
                "e.g. for lack of memory, ends the same way.)") from exc
        raise
    ex.shutdown(wait=True)


_JSW_METHODS = ("vacation", "dominated", "dominated-walk", "dominated-cyclic")


def _jsw_method(inp: rc.Renewal, method: str | None, servers: int = 1) -> str:
    """The JSW method: the one asked for, checked, or the default for the input.

    The default for light-tailed service is chosen from the parameters alone (choosing after
    seeing a draw would bias it): the round-robin bound while instants with nobody waiting in
    its ``S`` queues stay common, the vacation bound beyond, where ``S (rho - 1/2) >= 3.5``
    or ``S >= 80`` (measured in ``benchmarks/perfect_sampling.py``: round robin is 2-5x
    faster at S = 2-10 up to load 0.8, the vacation bound 3x faster at S = 10, load 0.9,
    and the only one that samples M/M/10 at 0.95 or M/M/50 from 0.7; at S = 100 and load
    0.5 round robin goes back about 8e4 customers per draw).
    """
    if method is None:
        why = f"{inp.service!r} has no finite moment generating function near 0"
        try:
            finite = math.isfinite(mgf(inp.service, 1e-9 / inp.service.mean))
        except ValueError as exc:  # the law's own words: which law, and what it lacks
            finite, why = False, str(exc)
        if finite:
            rho = inp.mean_service / (servers * inp.mean_interarrival)
            big = servers * (rho - 0.5) >= 3.5 or servers >= 80
            return "vacation" if big else "dominated-cyclic"
        if inp.poisson:
            return "dominated"
        raise ValueError(
            f"no exact sampler here for FCFS with this service and non-Poisson arrivals: {why}; "
            "the walk-based bounds are tilted and need a light tail; with Poisson arrivals "
            "method='dominated' takes any service law with a mean")
    if method not in _JSW_METHODS:
        raise ValueError(f"method for JSW must be one of {_JSW_METHODS}, got {method!r}")
    if method == "dominated" and not inp.poisson:
        raise ValueError("method 'dominated' (reversed M/G/1 queues) needs Poisson "
                         "arrivals; use 'dominated-cyclic' or 'dominated-walk' for GI arrivals")
    return method


def fcfs_sampler(inp: rc.Renewal, method: str | None, servers: int
                 ) -> tuple[str, VacationTemplate | _Walks | None]:
    """The FCFS method for ``servers`` servers fed by ``inp``, and what it draws its past with.

    Returns the method (:func:`_jsw_method`) and the object :func:`_draw_fcfs` takes as
    ``walks``: a :class:`coupling.vacation.VacationTemplate`, a :class:`_Walks` (the
    round-robin or random-assignment walk), or ``None`` (``"dominated"``: reversed M/G/1
    queues). Raises ``ValueError`` when the walk cannot be built (a heavy tail).
    """
    method = _jsw_method(inp, method, servers)
    walks: VacationTemplate | _Walks | None = None
    if method == "vacation":
        from .vacation import VacationTemplate as Template

        walks = Template(servers, inp)
    elif method != "dominated":
        walks = _Walks(servers, inp.service, inp.interarrival,
                       "cyclic" if method == "dominated-cyclic" else "random")
        try:
            walks.template()
        except ValueError as err:
            raise ValueError("exact sampling of FCFS GI/GI/S through a random walk needs "
                             "a service law with a finite moment generating function "
                             f"(light tail): {err}") from None
    return method, walks


def _check_dominating(system: rc.System, bound: Any, upper: Any) -> rc.System:
    """Refuse a ``dominated_by`` that the argument of :func:`perfect_sample` cannot use."""
    check_system(bound, "dominated_by")
    if upper is not None:
        raise ValueError("give either upper= (a bounding vector, monotone method) or "
                         "dominated_by= (a dominating system), not both")
    if not bound.fcfs:
        raise ValueError(
            f"dominated_by={bound!r} has no exact sampler that gives its stationary state at a "
            "past instant together with the input after it; the one that does is FCFS G/G/S: "
            f"dominated_by=rc.JSW({system.servers})")
    if bound.servers != system.servers:
        raise ValueError(f"dominated_by must have the servers of the map, got {bound.servers} "
                         f"for {system!r} with {system.servers}")
    if not system.monotone:
        raise ValueError(
            f"{system!r} is not declared monotone: sandwiching between the empty start and the "
            "bound needs a monotone map (declare rc.Map(..., monotone=True) once "
            "cp.check_monotone finds no counterexample)")
    return bound


def _show_dominance(system: rc.System, bound: rc.System, trials: int,
                    seed: np.random.SeedSequence) -> None:
    """Run the searches the exactness argument rests on; refuse on a counterexample."""
    from .monotone import check_dominates, check_monotone

    mono_seed, dom_seed = child(seed, 0), child(seed, 1)
    mono = check_monotone(system, trials=trials, rng=mono_seed)
    if not mono.monotone:
        raise ValueError(f"{system!r} is declared monotone, but a search found a "
                         f"counterexample, so the sandwich would not be exact:\n{mono}")
    dom = check_dominates(bound, system, trials=trials, rng=dom_seed)
    if not dom.dominates:
        raise ValueError(f"{bound!r} does not dominate {system!r}, so its stationary state "
                         f"does not bound the map's and the sandwich would not be exact:\n{dom}")


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


def perfect_sample(
    system: rc.System,
    input: rc.Input,
    size: int,
    *,
    rng: RngLike = 1,
    upper: Any = None,
    start_time: float | None = None,
    cap_time: float | None = None,
    start_customers: int | None = None,
    cap_customers: int | None = None,
    method: str | None = None,
    dominated_by: rc.System | None = None,
    dominance_trials: int = 20_000,
    workers: int | None = 1,
    progress: bool = False,
) -> PerfectSample:
    """Exact draws of the stationary sorted workload vector seen by an arriving customer.

    Parameters
    ----------
    system : recursions.System
        ``JSW`` (any system declaring ``fcfs``; renewal input: dominated CFTP), ``Loss``
        (Poisson input or bounded service: renovation), a monotone system with a bounded
        stationary state (``upper``), a monotone system dominated by JSW
        (``dominated_by``), a :class:`recursions.Map` included, or a non-monotone idle-first
        map (bounding processes, :mod:`coupling.bounding`: ``JpSW`` with ``p >= 1`` below
        ``lam E[sigma] < S - p``, ``JIQ`` below ``lam E[sigma] < 1``).
    input : recursions.Input
        The input.
    size : int
        Number of independent draws.
    rng : int, Generator, SeedSequence or None, default 1
        Seed; draw ``k`` uses the ``k``-th child of ``SeedSequence(rng).spawn(size)``.
    upper : array_like, optional
        For the monotone method: a sorted vector that bounds the stationary state a.s. It is
        checked before any draw is called exact: a vector at or above the system's own bound
        (a monotone system declaring ``bounded_by_service``: every coordinate at least the
        largest service time) is accepted; any other must be mapped below itself,
        ``step(upper) <= upper`` coordinatewise (so, by monotonicity, no path started below
        it leaves it, and the stationary state lies below it), on ``dominance_trials``
        innovations drawn from ``input`` and on every draw's own window (the path started
        from ``upper`` must end below it); a bound that fails either, or that cannot be
        checked, is refused.
    start_time, cap_time : float, optional
        First and largest backward horizon, as times, of the methods that search back in
        time: every JSW method (``"vacation"``, ``"dominated-cyclic"``, ``"dominated-walk"``,
        ``"dominated"``, with or without ``dominated_by``), renovation with Poisson arrivals
        (which finds the last empty instant directly: it uses ``cap_time`` only),
        ``"bounding"`` and ``"bounding-fcfs"``. Defaults ``8 E[tau]`` and ``1e6 E[tau]``.
    start_customers, cap_customers : int, optional
        The same, as numbers of customers back, for the methods that count customers:
        ``"monotone"``, renovation with bounded service (non-Poisson arrivals) and
        ``"bounding-walk"``. Defaults 16 and ``2**24``.

        A horizon in the other unit than the chosen method's is refused (``ValueError``,
        naming the method and the keywords it takes); the draws depend on neither start
        (exactly, except in the last bits, about 1e-14, for ``"dominated"`` and the
        ``"bounding-fcfs"`` draws made over it: its reversed queues and sandwich are then
        computed from other past instants), and the cap only decides when
        :class:`CouplingNotReached` is raised (its message names the unit).
    method : {None, "vacation", "dominated-cyclic", "dominated-walk", "dominated"}, optional
        For JSW (and for the bound given as ``dominated_by``): the dominating process and how
        it is drawn. ``"vacation"``: the multi-server vacation system, whose queue is
        certified empty by ``S + 1`` certified walks (:mod:`coupling.vacation`; any renewal
        arrivals, light-tailed service; it needs only an empty *queue*, so it scales with
        ``S``). ``"dominated-cyclic"`` (round robin) and ``"dominated-walk"`` (random
        assignment) use the certified random walk of :class:`coupling.ra_walk.RAWalk` and
        need an instant with nobody waiting in any of their ``S`` queues. ``"dominated"``
        (random assignment, Poisson arrivals, any service law with a finite mean) uses
        reversed M/G/1 queues. By default, for a service law with a finite moment
        generating function, ``"vacation"`` where ``S (rho - 1/2) >= 3.5`` or ``S >= 80``
        and ``"dominated-cyclic"`` below (the faster of the two there); else
        ``"dominated"``.
    dominated_by : recursions.System, optional
        A system that dominates ``system`` and has an exact sampler giving its state at a
        past instant with the input after it: FCFS, ``rc.JSW(S)``. ``system`` must be
        declared monotone. See "A map dominated by JSW" below.
    dominance_trials : int, default 20_000
        Cases tried by the randomized searches run before sampling with ``dominated_by``
        (:func:`coupling.check_monotone` of ``system`` and
        :func:`coupling.check_dominates` of ``dominated_by`` over ``system``), and
        innovations on which a given ``upper`` is checked.
    workers : int or None, default 1
        Processes that draw: ``1`` draws in this process; ``k >= 2`` starts ``k`` worker
        processes (``spawn`` start method, never more than ``size``), each limited to
        ``cores // k`` numba threads; ``None`` one per core. ``0`` is refused: it would
        mean "in this process" to a user of :func:`loynes.sweep` (``max_workers=0``),
        which is ``workers=1`` here. Every draw comes from its own
        seed, so the samples and every per-draw figure but ``seconds`` are the same for any
        number of workers. The workers need the system and the input pickled (with
        ``cloudpickle`` when installed: built-in systems, laws and a :class:`recursions.Map`
        do) and import the main script again, so a script must call ``perfect_sample`` under
        ``if __name__ == "__main__":``. Starting them costs about a second or two: worth it
        when the draws take many seconds and the cores are free (see Notes).
    progress : bool, default False
        Show a tqdm progress bar over the draws (needs ``tqdm``).

    Returns
    -------
    PerfectSample
        The draws, what each cost (``customers_back``, ``time_back``, ``seconds``) and
        estimates with standard errors of the usual statistics (``p_wait`` or ``p_loss``,
        ``mean_wait``, ``mean_workload``, ``busy_fraction``, ``profile(w)``).

    Raises
    ------
    ValueError
        When the system is not stable (no stationary law), or no exact method applies; with
        ``dominated_by``, when ``system`` is not declared monotone, the bound has no suitable
        sampler, or a search finds a counterexample to the monotonicity of ``system`` or to
        its dominance by the bound; when ``workers`` is not ``None`` or an integer >= 1;
        when a given ``upper`` is not mapped below itself (or cannot be checked).
    TypeError
        When ``progress`` is not a bool, or ``workers > 1`` and the system or input cannot
        be pickled.
    ImportError
        When ``progress=True`` and tqdm is not installed.
    CouplingNotReached
        When a search hits ``cap_time`` or ``cap_customers``.
    RuntimeError
        When a worker process dies (a script without the ``__main__`` guard, say).

    Notes
    -----
    **Workers.** A draw spends most of its time in Python (interval bookkeeping and small
    numpy arrays around the nogil numba kernels of the walk) and holds the GIL, so threads
    do not run draws side by side; worker processes do. Measured on a shared 2-core machine
    (1, 2 threads, 2 processes): M/M/10 at load 0.8, 3000 draws, 11.7 s, 11.6 s, 13.5 s;
    M/D/40 at 0.9, 600 draws, 7.9 s, 7.2 s, 9.9 s; M/M/2 at 0.8, 6000 draws, 10.6 s,
    12.1 s, 9.5 s. Two busy processes got only about 1.3 times the throughput of one there,
    and a pool pays 1 to 2 s to start, so ``workers=1`` stays the default; on free cores
    a pool pays off once the draws take much longer than its start.

    **A map dominated by JSW** (``dominated_by=rc.JSW(S)``). Let ``M`` be the map of
    ``system`` and ``G`` the Kiefer-Wolfowitz map of the bound. The JSW sampler finds an
    instant ``-T`` and a sorted vector ``B`` (the residual work of its dominating assignment
    system, in which nobody waits at ``-T``) with ``G``'s stationary state at ``-T`` below
    ``B`` (Wolff's coupling of service times in order of initiation), together with the
    input after ``-T``: the arrival times and the service times so paired. ``M`` runs on that
    same input path, with its own routing uniforms drawn for the same arrivals (counted back
    from 0, so every try reuses them). The draw is exact because

    1. ``M`` is monotone (declared, and :func:`coupling.check_monotone` finds no
       counterexample): ``u ≺ v`` implies ``M(u) ≺ M(v)`` under common inputs.
    2. ``G`` dominates ``M``: ``u ≺ v`` implies ``M(u) ≺ G(v)`` under common inputs
       (:func:`coupling.check_dominates`, the routing uniforms coupled as there). By induction
       from the empty state at any earlier arrival, ``M``'s path from 0 stays below ``G``'s;
       both paths from 0 increase to the stationary states (Loynes; ``M`` and ``G`` are
       monotone), so the bound's stationary state at ``-T`` dominates the map's stationary
       state at ``-T``, which therefore lies below ``B`` (drained to the first arrival after
       ``-T``, as nothing arrives in between).
    3. ``M`` run from 0 and from ``B`` at ``-T`` on that input brackets ``M``'s stationary
       path from ``-T`` on. If the two runs coalesce by 0, their common value is the map's
       stationary state at 0, whatever ``T`` the search chose: an exact draw. Otherwise the
       next try starts at least twice as far back, up to ``cap_time``
       (:class:`CouplingNotReached`).

    The run from ``B`` stays below ``G``'s run from ``B`` (dominance), hence below the
    bound's exact stationary state from the time the bound's own sandwich closes: the
    sandwich is at least as tight as one started at the bound's exact stationary draw.

    The dominance is shown, not assumed: before sampling, :func:`coupling.check_dominates`
    ``(dominated_by, system)`` and :func:`coupling.check_monotone` ``(system)`` run
    (randomized searches of ``dominance_trials`` cases, seeded by a child of ``rng`` apart
    from the draws' seeds, so one ``rng`` gives one search); a counterexample refuses the map.
    A search can only refute, so "no counterexample" is evidence, not a proof; a
    dominance you can prove is the safer ground. Every JSW method works here (the reversed
    M/G/1 queues for Poisson input and the cyclic and random walks for renewal input): all
    three give the bound's dominating vector at ``-T`` and the input after it. With Poisson
    arrivals the time 0 is not an arrival, but the gaps back from it are i.i.d.
    exponential, so the state at 0 has the law an arrival sees.

    Examples
    --------
    >>> import recursions as rc, coupling as cp
    >>> ps = cp.perfect_sample(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 5, rng=1)
    >>> ps.samples.shape, ps.method
    ((5, 2), 'dominated-cyclic')
    >>> inp = rc.Renewal(rc.dists.Erlang(2, 4.0), rc.dists.Deterministic(1.0))   # E2/D/3
    >>> cp.perfect_sample(rc.JSW(3), inp, 4, rng=2).samples.shape
    (4, 3)

    A user map (here JSW itself, written through the user's door) dominated by JSW:

    >>> user = rc.Map(rc.maps.jsw, servers=2, monotone=True)
    >>> inp = rc.Poisson(1.0, rc.dists.Exponential(1.0))
    >>> ps = cp.perfect_sample(user, inp, 5, rng=1, dominated_by=rc.JSW(2))
    >>> ps.dominated_by, ps.method
    ('JSW(servers=2)', 'dominated-cyclic')
    >>> bool((ps.samples == cp.perfect_sample(rc.JSW(2), inp, 5, rng=1).samples).all())
    True

    Statistics with standard errors, and what each draw cost:

    >>> import loynes as ly
    >>> ps = cp.perfect_sample(rc.JSW(2), inp, 400, rng=3)
    >>> p, a = ps.p_wait, 1.0                            # M/M/2 at offered load a = 1
    >>> bool(abs(p.value - ly.erlang_c(2, a)) < 4 * p.se)
    True
    >>> bool(abs(ps.mean_wait.value - ly.mm_c_mean_wait(2, a, 1.0)) < 4 * ps.mean_wait.se)
    True
    >>> int(ps.customers_back.min()) >= 0, bool((ps.seconds > 0).all())
    (True, True)
    """
    check_system(system)
    check_input(input)
    system.check_input(input)
    size = check_int(size, "size", 1)
    S = system.servers
    # the samples and their costs (with a seed each), and a few S-vectors per draw in flight
    require_memory(float(size) * (8.0 * S + 1024.0) + 64.0 * 8.0 * S * (os.cpu_count() or 1),
                   f"{size} perfect samples of {type(system).__name__} with {S} servers",
                   "use a smaller size or fewer servers")
    root = as_seed_sequence(rng)
    seeds = root.spawn(size)
    nworkers = _check_workers(workers, size)
    progress = check_bool(progress, "progress")
    given: dict[str, Any] = {"start_time": start_time, "cap_time": cap_time,
                             "start_customers": start_customers, "cap_customers": cap_customers}
    run_one: Callable[[np.random.SeedSequence], Any]

    bound = None
    if dominated_by is not None:
        dominance_trials = check_int(dominance_trials, "dominance_trials", 1)
        bound = _check_dominating(system, dominated_by, upper)
    # the FCFS sampler runs for JSW itself, or for the bound of a dominated map
    fcfs = bound if bound is not None else (system if system.fcfs else None)
    if method is not None and fcfs is None:
        raise ValueError(f"method= applies to JSW (or to the bound given as dominated_by) "
                         f"only, got method={method!r} for {type(system).__name__} (for "
                         "J_{p+1}SW and JIQ: coupling.bounded_sample(..., method=...))")
    own_bound = math.inf  # the system's own bound on each coordinate, where it declares one
    if system.monotone and system.bounded_by_service and input.renewal:
        own_bound = input.service_bound
    if upper is None and math.isfinite(own_bound):
        upper = np.full(S, own_bound)
    # each branch binds run_one(seed) -> (state, customers back, time back) for one draw
    if fcfs is not None:
        rho = input.mean_service / (S * input.mean_interarrival)
        if not rho < 1:
            what = "the system" if bound is None else f"the bound {bound!r}"
            raise ValueError(f"{what} is not stable (load per server {rho:.4g} >= 1): "
                             "there is no stationary law to sample")
        if not is_renewal(input):
            raise ValueError("exact sampling of JSW (FCFS G/G/S) needs renewal arrivals "
                             f"(Poisson or GI), got {type(input).__name__}")
        method, walks = fcfs_sampler(input, method, S)
        t0, tcap = horizons(method, "time", given, 8.0 * input.mean_interarrival,
                            1e6 * input.mean_interarrival)
        if bound is not None:
            _show_dominance(system, bound, dominance_trials, child(root, _SEARCHES))
        run_one = functools.partial(_draw_fcfs, fcfs=fcfs, inp=input, t0=t0, tcap=tcap,
                                    walks=walks,
                                    inside=None if bound is None else
                                    functools.partial(_DominatedMap, system))
    elif system.has_loss and system.bounded_by_service and not system.monotone:  # renovation
        method = "renovation"
        b = input.service_bound
        if is_poisson(input):
            _, tcap = horizons("renovation (Poisson arrivals)", "time", given,
                               8.0 * input.mean_interarrival, 1e6 * input.mean_interarrival)
            run_one = functools.partial(_draw_loss_poisson, system=system, inp=input, cap=tcap)
        elif math.isfinite(b):
            n0, ncap = horizons("renovation (bounded service)", "customers", given, 16, 2**24)
            run_one = functools.partial(_draw_loss_bounded, system=system, inp=input, b=b,
                                        n0=n0, cap=ncap)
        else:
            law = getattr(input, "service", None)
            raise ValueError("exact sampling of a loss system needs Poisson arrivals or "
                             "bounded service times (renovating event (9)); the service law "
                             f"{law!r} of {type(input).__name__} input has an unbounded "
                             "support")
    elif system.monotone and upper is not None:
        method = "monotone"
        up = system.check_state(upper, "upper")
        if not (math.isfinite(own_bound) and bool(np.all(up >= own_bound))):
            _check_upper(system, input, up, check_int(dominance_trials, "dominance_trials", 1),
                         child(root, _SEARCHES))
        n0, ncap = horizons(method, "customers", given, 16, 2**24)
        run_one = functools.partial(_draw_monotone, system=system, inp=input, upper=up, n0=n0,
                                    cap=ncap)
    elif system.envelope_params is not None and not system.monotone and not system.has_loss:
        from .bounding import bounded_method  # coupling.bounding imports this module

        method, run_one = bounded_method(system, input, **given)
    else:
        raise ValueError(
            f"no exact method for {system!r}: perfect_sample handles JSW with renewal input, "
            "loss systems, monotone systems given a bounding vector upper=, and monotone "
            f"systems dominated by JSW (dominated_by=rc.JSW({S}))"
        )
    out, customers, back, seconds = _collect(run_one, seeds, S, nworkers, bool(progress))
    return PerfectSample(out, customers, method, repr(system), repr(input),
                         None if bound is None else repr(bound), time_back=back,
                         seconds=seconds, has_loss=bool(system.has_loss),
                         found=found_at_zero(system, input, out, seeds))
