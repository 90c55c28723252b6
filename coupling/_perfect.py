"""Exact stationary sampling: coupling from the past (:ref:`theory-exact`).

:func:`perfect_sample` returns exact draws of the stationary sorted workload vector seen by an
arrival, by one of the methods below, chosen from the system and input (for JSW with a
light-tailed service law the default is ``"vacation"`` where ``S (rho - 1/2) >= 3.5`` or
``S >= 80`` and ``"dominated-cyclic"`` below, chosen from the parameters alone):

``"vacation"`` -- FCFS GI/GI/S (renewal input, light-tailed service), dominated by the
    multi-server vacation system of Blanchet, Dong and Pei: servers never idle, taking i.i.d.
    vacations when nobody waits, so its single queue dominates FCFS and is certified empty
    at a past time by ``S + 1`` certified random-walk maxima (:mod:`coupling._vacation`). It
    needs only an empty *queue*, not ``S`` empty queues, so it scales with ``S``.
``"dominated"`` -- FCFS M/G/S (:class:`recursions.JSW` with Poisson input), dominated coupling
    from the past (Kendall; Connor & Kendall 2015) with the random-assignment (RA) system, ``S``
    independent M/G/1 queues fed at rate ``lam / S``, simulated in equilibrium backwards in
    time (:mod:`coupling._dominating`). Service durations are paired *in order of initiation*
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
    backwards with certificates from exponential tilting (:mod:`coupling._ra_walk`).
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
    (:mod:`coupling._bounding`, which says why the draw is exact and why it stops there).

A monotone map dominated by JSW (``dominated_by=rc.JSW(S)``, a :class:`recursions.Map`
included) is sampled by any of the JSW methods: the map is run from 0 and from the
JSW sampler's dominating vector at ``-T`` on the same input path after ``-T`` (why the draw
is exact: :ref:`theory-exact-dominated-maps`).

Every search has a cap and raises :class:`CouplingNotReached` when it is hit; an unstable
system raises ``ValueError`` before any work.

Draw ``k`` comes from the ``k``-th child of ``SeedSequence(rng)`` alone, so the draws are
i.i.d. and may run in worker processes (``workers=``) with the same result. The
:class:`PerfectSample` carries what each draw cost (customers and time gone back, seconds)
and estimates, with standard errors from the i.i.d. draws, of the statistics
:class:`recursions.SimulationResult` names (``p_wait`` or ``p_loss``, ``mean_wait``,
``mean_workload``, ``busy_fraction``, ``profile``).

Each method is an entry of the ordered registry :data:`coupling._exact_methods.METHODS`,
declaring when it applies to a system and an input (and why not) and binding its one-draw
function ``run_one(seed) -> (state, customers back, time back)``; :func:`perfect_sample`
checks its arguments, runs the first method that applies, and calls ``run_one`` once per
draw, here or in worker processes (:mod:`recursions.common._pool`). The FCFS methods share one
protocol over their dominating processes (:mod:`coupling._fcfs_bounds`). Where the pieces are:

* :mod:`coupling._perfect_result`: :class:`PerfectSample`, ``found_at_zero``;
* :mod:`coupling._exact_methods`: the registry (FCFS, renovation, monotone, bounding);
* :mod:`coupling._fcfs_bounds`: the dominating processes of FCFS and ``fcfs_sampler``, over
  :mod:`coupling._vacation`, :mod:`coupling._assignment_walks`, :mod:`coupling._reversed_mg1`
  and the sandwich of :mod:`coupling._fcfs_sandwich`;
* :mod:`coupling._dominated_maps` (``dominated_by=``), :mod:`coupling._loss_renovation`
  (``renovation_index``), :mod:`coupling._propp_wilson` (``upper=``), :mod:`coupling._bounding`;
* :mod:`coupling._horizons`: the backward horizons every method checks.
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import recursions as rc
from coupling._dominated_maps import check_dominating
from coupling._errors import CouplingNotReached
from coupling._exact_methods import Request, choose
from coupling._fcfs_bounds import fcfs_sampler
from coupling._horizons import horizons
from coupling._loss_renovation import renovation_index
from coupling._perfect_result import PerfectSample, found_at_zero
from recursions.common import (
    RngLike,
    as_seed_sequence,
    check_bool,
    check_int,
    check_workers,
    dumps,
    progress_bar,
    require_memory,
    run_in_processes,
)
from recursions.model import check_input, check_system

__all__ = ["CouplingNotReached", "PerfectSample", "fcfs_sampler", "found_at_zero", "horizons",
           "perfect_sample", "renovation_index"]

RunOne = Callable[[np.random.SeedSequence], tuple[np.ndarray, int, float]]


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

    Coupling from the past: each draw has exactly the stationary law, with no warm-up and no
    run-length bias, to check forward simulations and to start them in equilibrium. The
    method is chosen from the system and the input (FCFS: dominated CFTP; loss: renovation;
    monotone maps: sandwiching; J_{p+1}SW, JIQ: bounding processes). Why each is exact, the
    defaults, horizons, checks and worker processes: :ref:`theory-exact`.

    Parameters
    ----------
    system : recursions.System
        ``JSW`` (any system declaring ``fcfs``; renewal input: dominated CFTP), ``Loss``
        (Poisson input or bounded service: renovation), a monotone system with a bounded
        stationary state (``upper``), a monotone system dominated by JSW
        (``dominated_by``), a :class:`recursions.Map` included, or a non-monotone idle-first
        map (bounding processes, :mod:`coupling._bounding`: ``JpSW`` with ``p >= 1`` below
        ``lam E[sigma] < S - p``, ``JIQ`` below ``lam E[sigma] < 1``).
    input : recursions.Input
        The input.
    size : int
        Number of independent draws.
    rng : int, Generator, SeedSequence or None, default 1
        Seed; draw ``k`` uses the ``k``-th child of ``SeedSequence(rng).spawn(size)``.
    upper : array_like, optional
        For the monotone method: a sorted vector that bounds the stationary state a.s. It is
        checked before any draw is called exact (at or above the system's own bound, or
        mapped below itself on ``dominance_trials`` innovations and on every draw's window);
        a bound that fails, or that cannot be checked, is refused.
    start_time, cap_time : float, optional
        First and largest backward horizon, as times, of the methods that search back in
        time: every JSW method, renovation with Poisson arrivals (``cap_time`` only),
        ``"bounding"`` and ``"bounding-fcfs"``. Defaults ``8 E[tau]`` and ``1e6 E[tau]``.
    start_customers, cap_customers : int, optional
        The same, as numbers of customers back, for ``"monotone"``, renovation with bounded
        service (non-Poisson arrivals) and ``"bounding-walk"``. Defaults 16 and ``2**24``.
        A horizon in the other unit than the method's is refused (``ValueError``). The draws
        do not depend on the start (up to the last bits); the cap only decides when
        :class:`CouplingNotReached` is raised.
    method : {None, "vacation", "dominated-cyclic", "dominated-walk", "dominated"}, optional
        For JSW (and the bound given as ``dominated_by``): the dominating process, the
        multi-server vacation system, round robin or random assignment as certified random
        walks (light-tailed service), or reversed M/G/1 queues (Poisson arrivals, any service
        with a finite mean). Default, from the parameters alone: with a finite moment
        generating function ``"vacation"`` where ``S (rho - 1/2) >= 3.5`` or ``S >= 80``, else
        ``"dominated-cyclic"``; else ``"dominated"``.
    dominated_by : recursions.System, optional
        A system that dominates ``system`` and has an exact sampler giving its state at a
        past instant with the input after it: FCFS, ``rc.JSW(S)``. ``system`` must be
        declared monotone; both claims are searched for counterexamples before sampling.
    dominance_trials : int, default 20_000
        Cases tried by those searches (:func:`coupling.check_monotone` of ``system``,
        :func:`coupling.check_dominates` of ``dominated_by`` over ``system``), and
        innovations on which a given ``upper`` is checked.
    workers : int or None, default 1
        Processes that draw: ``1`` this process, ``k >= 2`` worker processes (at most
        ``size``), ``None`` one per core; ``0`` is refused. The samples do not depend on it.
        Workers need the system and input pickled and a script's call under
        ``if __name__ == "__main__":``; they pay off on free cores, for long draws.
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

    See Also
    --------
    coupling.bounded_sample : the bounding processes of J_{p+1}SW and JIQ, with their methods.
    recursions.simulate : forward runs; ``start="stationary"`` starts them from exact draws.

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
    check_system(system, needs_map="an exact sample of the workload vector")
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
    nworkers = check_workers(workers, size)
    progress = check_bool(progress, "progress")
    given: dict[str, Any] = {"start_time": start_time, "cap_time": cap_time,
                             "start_customers": start_customers, "cap_customers": cap_customers}
    bound = None
    if dominated_by is not None:
        dominance_trials = check_int(dominance_trials, "dominance_trials", 1)
        bound = check_dominating(system, dominated_by, upper)
    if method is not None and bound is None and not system.fcfs:
        raise ValueError(f"method= applies to JSW (or to the bound given as dominated_by) "
                         f"only, got method={method!r} for {type(system).__name__} (for "
                         "J_{p+1}SW and JIQ: coupling.bounded_sample(..., method=...))")
    own_bound = math.inf  # the system's own bound on each coordinate, where it declares one
    if system.monotone and system.bounded_by_service and input.renewal:
        own_bound = input.service_bound
    if upper is None and math.isfinite(own_bound):
        upper = np.full(S, own_bound)
    req = Request(system, input, upper, own_bound, given, method, bound, dominance_trials, root)
    name, run_one = choose(req).bind(req)
    out, customers, back, seconds = _collect(run_one, seeds, nworkers, bool(progress))
    return PerfectSample(out, customers, name, repr(system), repr(input),
                         None if bound is None else repr(bound), time_back=back,
                         seconds=seconds, has_loss=bool(system.has_loss),
                         found=found_at_zero(system, input, out, seeds))


# -- many draws: in this process, or in worker processes (recursions.common._pool) -----------------


def _timed(run_one: RunOne, sd: np.random.SeedSequence) -> tuple[np.ndarray, int, float, float]:
    t = time.perf_counter()
    w, n, back = run_one(sd)
    return w, n, back, time.perf_counter() - t


def _draw_chunk(run_one: RunOne, first: int,
                seeds: list[np.random.SeedSequence]) -> tuple[int, list[Any]]:
    """Consecutive draws from ``first`` on, in a worker process."""
    return first, [_timed(run_one, sd) for sd in seeds]


def _collect(run_one: RunOne, seeds: Sequence[np.random.SeedSequence], workers: int,
             progress: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run ``run_one`` on every seed; arrays of states, customers, times and seconds back.

    Draw ``k`` lands in row ``k`` whichever worker ran it and when, so the arrays depend on
    the seeds only. The states' width is that of the first draw stored.
    """
    n = len(seeds)
    states: list[np.ndarray] = []  # the (n, servers) array, made at the first draw
    customers = np.empty(n, dtype=np.int64)
    back = np.empty(n)
    seconds = np.empty(n)
    bar = progress_bar(progress, n, unit="draw", desc="perfect_sample")

    def store(k: int, res: Any) -> None:
        if not states:
            states.append(np.empty((n, np.size(res[0]))))
        states[0][k], customers[k], back[k], seconds[k] = res

    try:
        if workers == 1:
            for k, sd in enumerate(seeds):
                store(k, _timed(run_one, sd))
                bar.update(1)
        else:
            _in_processes(run_one, list(seeds), workers, store, bar)
    finally:
        bar.close()
    return states[0], customers, back, seconds


def _in_processes(run_one: RunOne, seeds: list[np.random.SeedSequence], workers: int,
                  store: Callable[[int, Any], None], bar: Any) -> None:
    """The draws in ``workers`` processes, in chunks of consecutive draws."""
    send = functools.partial(_draw_chunk, run_one)
    try:
        payload = dumps(send)
    except Exception as err:
        raise TypeError(f"workers={workers} sends the system and the input to worker "
                        f"processes, and they cannot be pickled ({err}); pass workers=1 "
                        "to draw in this process") from err
    n = len(seeds)
    chunk = max(1, min(64, n // (8 * workers)))  # a few chunks per worker: balance, progress

    def got(res: tuple[int, list[Any]]) -> None:
        first, results = res
        for j, one in enumerate(results):
            store(first + j, one)
        bar.update(len(results))

    broken = run_in_processes(send, [(i, seeds[i:i + chunk]) for i in range(0, n, chunk)],
                              workers, got, payload=payload)
    if broken is not None:
        raise RuntimeError(
            "a worker process of perfect_sample died (BrokenProcessPool). The workers "
            "start with the spawn method and import the main script again: a script that "
            "calls perfect_sample(..., workers=...) outside `if __name__ == "
            "\"__main__\":` runs that call again in every worker, which fails. Put the "
            "call under the guard, or pass workers=1. (A worker killed by the system, "
            "e.g. for lack of memory, ends the same way.)") from broken
