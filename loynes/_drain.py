"""The drain test: whether a map's total workload drains from large states in every direction.

A sound road to STABLE for a map no theorem covers (a user's :class:`recursions.Map`). With
i.i.d. input the workload vector at arrivals is a Markov chain, and the multi-step drift
criterion (Foster's criterion with a state-dependent time: Meyn and Tweedie, *Markov Chains
and Stochastic Stability*, Theorem 19.1.2; Fayolle, Malyshev and Menshikov, Theorem 2.2.4)
makes it positive recurrent when, from every state outside a bounded set, the expected total
workload after ``n`` arrivals is below the start by at least ``eps n``. On the fluid scale
this is the fluid model draining (Dai 1995; Stolyar 1995): started at ``L x`` with ``L``
large, the total workload falls at a linear rate from every direction ``x``.

:func:`drain_test` measures that rate. It starts the map at ``L x`` for a set of directions
``x`` that covers every *face* of the state space (for each block of the workload vector,
how many of its servers are empty: the faces are where routing rules that look for idle
servers, or that send a class of jobs to one block, change the drift) and three shapes of the
busy servers (all equal, evenly spread, random), runs ``replications`` independent copies of
``steps`` arrivals from each, and tests, one-sided with Student's ``t`` at level
``alpha / directions`` (Bonferroni), that the mean drain per unit time exceeds the margin
``margin * capacity``. The map *drains* when every direction passes: the chance that some
direction whose true drain is below the margin passes is at most ``alpha``. A direction
whose drain is significantly below the margin is one the map does not drain from (so it is
not STABLE on this road); the theory is on the page :ref:`theory-stability-drain`.

What the test cannot see: a direction it did not sample, and growth that needs longer than
``steps`` arrivals to show on the fluid scale. How often it said "drains" where it must not,
and its power, are measured on the docs' Calibration page.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

import recursions as rc
from recursions.common import Record, RngLike, as_seed_sequence, check_count, check_int, check_real
from recursions.inference import finite_variances
from recursions.model import check_input, is_renewal

__all__ = ["MAX_BLOCKS", "MAX_FACES", "DrainDirection", "DrainResult", "drain_refusal",
           "drain_test"]

SHAPES = ("flat", "spread", "random")
"""Shapes of the busy servers' workloads: all equal, evenly spread over ``(0, 1]``, random."""

MAX_FACES = 24
"""Faces (patterns of empty servers) a test starts from at most, beyond the required ones
(every server busy, each block empty alone, each busy alone); above, a random subset."""

MAX_BLOCKS = 16
"""Most blocks a map may declare for the drain test (each adds required faces)."""

SCALE = 4.0
"""The start's level ``L`` in units of the run's length in time (``steps E[tau]``)."""


@dataclass(frozen=True)
class DrainDirection(Record):
    """One direction of the drain test and what was measured from it.

    Attributes
    ----------
    empty : tuple of int
        Empty servers in each block at the start.
    shape : str
        Shape of the busy servers' workloads (:data:`SHAPES`).
    drain : float
        Mean fall of the total workload per unit time over the run (negative: it grew).
    se : float
        Its standard error over the replications.
    verdict : str
        ``"drains"`` (above the margin at the test's level), ``"does not drain"`` (below it
        at that level) or ``"unclear"``.
    """

    empty: tuple[int, ...]
    shape: str
    drain: float
    se: float
    verdict: str

    def __str__(self) -> str:
        return (f"{self.shape} start with {list(self.empty)} empty servers per block: drains "
                f"{self.drain:.4g} ± {self.se:.2g} per unit time ({self.verdict})")


@dataclass(frozen=True)
class DrainResult(Record):
    """Result of :func:`drain_test`.

    Attributes
    ----------
    drains : bool or None
        ``True`` when every direction drained above the margin at the test's level,
        ``False`` when some direction significantly did not, ``None`` otherwise (or when the
        test does not apply: :attr:`refused` says why).
    directions : list of DrainDirection
        Every direction tested (empty when refused).
    margin : float
        The drain per unit time each direction must exceed (``margin * capacity``).
    level : float
        Level of each direction's test (``alpha / len(directions)``).
    alpha : float
        Level of the whole test.
    steps, replications : int
        Arrivals per run and runs per direction.
    start_level : float
        The level ``L`` of the busy servers at the start.
    refused : str
        Why the test does not apply, or ``""``.
    steps_needed : int or None
        Steps at which the unclear directions would likely be decided, if the drains seen
        are real.
    """

    drains: bool | None
    directions: list[DrainDirection]
    margin: float
    level: float
    alpha: float
    steps: int
    replications: int
    start_level: float
    refused: str = ""
    steps_needed: int | None = None

    @property
    def worst(self) -> DrainDirection | None:
        """The direction with the least drain relative to its error, or ``None``."""
        if not self.directions:
            return None
        return min(self.directions, key=lambda d: (d.drain - self.margin) / max(d.se, 1e-300))

    def __str__(self) -> str:
        if self.refused:
            return f"drain test not run: {self.refused}"
        n = len(self.directions)
        if self.drains:
            return (f"drains from all {n} directions by more than {self.margin:.3g} per unit "
                    f"time (each at level {self.level:.2g}, alpha = {self.alpha:.2g})")
        if self.drains is False:
            what, bad = "drains by less than the margin", [
                d for d in self.directions if d.verdict == "does not drain"]
        else:
            what, bad = "is not shown to drain", [d for d in self.directions
                                                  if d.verdict != "drains"]
        return f"{what} from {len(bad)} of {n} directions; the worst: {self.worst}"


def drain_refusal(system: Any, input: rc.Input) -> str:
    """Why the drain test does not apply to ``system`` under ``input`` (``""`` if it does).

    It needs a map on workload vectors (``"dense"`` among the system's engines), i.i.d.
    input (renewal: the state at arrivals is then a Markov chain, which the drift criterion
    is about) whose interarrival law is unbounded (an interarrival time longer than every
    workload empties the system from any bounded set of states: the regeneration that turns
    the criterion's returns into a stationary law), finite variances of the input's laws and
    the system's own (the ``t`` test of each direction), and at most :data:`MAX_BLOCKS`
    blocks (their faces to start from).

    Examples
    --------
    >>> import recursions as rc
    >>> drain_refusal(rc.JSW(2), rc.Periodic([1.0, 2.0], [1.0, 1.0]))[:30]
    'the input is not i.i.d. (renew'
    """
    if "dense" not in system.engines:
        return (f"{system!r} is not a map on workload vectors (it keeps queue lengths), so "
                "it has no workload to drain")
    if not is_renewal(input):
        return ("the input is not i.i.d. (renewal), so the state at arrivals is not a Markov "
                "chain and the drift criterion says nothing")
    if not math.isinf(input.interarrival.support_max):
        return ("the interarrival law is bounded, so no interarrival time is sure to empty "
                "the system: the drift criterion's returns give no stationary law without a "
                "regeneration the map does not declare")
    if not finite_variances(input, system.own_laws):
        return ("a law has an infinite variance, so the drain rates have no valid standard "
                "error")
    if len(system.blocks) > MAX_BLOCKS:
        return (f"the map declares {len(system.blocks)} blocks, more than the {MAX_BLOCKS} "
                "whose faces the test starts from")
    return ""


def _levels(b: int) -> list[int]:
    """Empty servers to try in a block of ``b``: every count for small blocks, else a spread."""
    if b <= 8:
        return list(range(b + 1))
    fixed = {0, 1, 2, 3, b - 2, b - 1, b}
    fixed.update(round(b * f) for f in (0.125, 0.25, 0.5, 0.75, 0.875))
    return sorted(fixed)


def _faces(system: Any, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Patterns of empty servers per block, never all empty: all of them, or a subset.

    All when there are at most :data:`MAX_FACES`; else every server busy, each block empty
    alone and each block busy alone, then random patterns up to :data:`MAX_FACES` (the
    product of the blocks' counts is never built: it grows exponentially with the blocks).
    """
    sizes = [hi - lo for lo, hi in system.blocks]
    levels = [_levels(b) for b in sizes]
    if math.prod(len(lv) for lv in levels) <= MAX_FACES + 1:
        return [f for f in itertools.product(*levels) if sum(f) < system.servers]
    k = len(sizes)
    must = {tuple([0] * k)}
    for j, b in enumerate(sizes):
        must.add(tuple(b if i == j else 0 for i in range(k)))  # block j empty alone
        must.add(tuple(0 if i == j else sizes[i] for i in range(k)))  # block j busy alone
    faces = sorted(f for f in must if sum(f) < system.servers)
    seen = set(faces)
    for _ in range(50 * MAX_FACES):
        if len(faces) >= MAX_FACES:
            break
        f = tuple(int(rng.choice(lv)) for lv in levels)
        if sum(f) < system.servers and f not in seen:
            seen.add(f)
            faces.append(f)
    return faces


def _start(system: Any, face: tuple[int, ...], shape: str, level: float,
           rng: np.random.Generator) -> np.ndarray:
    """The start ``L x``: ``face[j]`` empty servers, then the busy ones, in each block."""
    w = np.zeros(system.servers)
    for (lo, hi), empty in zip(system.blocks, face, strict=True):
        m = hi - lo - empty
        if m == 0:
            continue
        if shape == "flat":
            x = np.ones(m)
        elif shape == "spread":
            x = np.arange(1, m + 1) / m
        else:
            x = np.sort(rng.uniform(0.05, 1.0, m))
        w[lo + empty:hi] = level * x
    return w


def _unique_starts(system: Any, faces: list[tuple[int, ...]], level: float,
                   rng: np.random.Generator) -> list[tuple[tuple[int, ...], str, np.ndarray]]:
    out: list[tuple[tuple[int, ...], str, np.ndarray]] = []
    for face in faces:
        seen: list[np.ndarray] = []
        for shape in SHAPES:
            w = _start(system, face, shape, level, rng)
            if any(np.array_equal(w, s) for s in seen):  # one busy server: shapes coincide
                continue
            seen.append(w)
            out.append((face, shape, w))
    return out


def drain_test(
    system: rc.System,
    input: rc.Input,
    *,
    steps: int = 2**14,
    replications: int = 16,
    margin: float = 0.01,
    alpha: float = 1e-3,
    rng: RngLike = 1,
) -> DrainResult:
    """Test that the total workload drains at a linear rate from large states in every direction.

    See the module :mod:`loynes._drain` for the criterion behind it. Every direction runs
    ``replications`` copies of ``steps`` arrivals from ``L x`` with ``L = 4 steps E[tau] C /
    S`` (``C / S`` the work a server does per unit time); the fall of the total workload per
    unit time is tested against ``margin`` times the capacity ``C``, each direction at level
    ``alpha / directions``.

    Parameters
    ----------
    system : recursions.System
        A map on workload vectors (a :class:`recursions.Map` or a built-in system).
    input : recursions.Input
        An i.i.d. (renewal) input with finite variances; otherwise the test is refused.
    steps : int, default 2**14
        Arrivals per run (``>= 16``).
    replications : int, default 16
        Runs per direction (``>= 4``).
    margin : float, default 0.01
        Least drain per unit time, as a fraction of the capacity, in ``(0, 1)``.
    alpha : float, default 1e-3
        Level of the whole test, in ``(0, 0.5)``: the chance that it says "drains" when
        some tested direction drains by less than the margin.
    rng : int, Generator, SeedSequence or None, default 1
        Seed.

    Returns
    -------
    DrainResult

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> inp = rc.Poisson(1.6, rc.dists.Exponential(1.0))
    >>> ly.drain_test(rc.LeastOfD(2, 1), inp, steps=2**12).drains
    True
    """
    check_input(input)
    system.check_input(input)
    steps = check_count(steps, "steps", 16)
    replications = check_int(replications, "replications", 4)
    margin = check_real(margin, "margin", 0.0, 1.0, open_lo=True, open_hi=True)
    alpha = check_real(alpha, "alpha", 0.0, 0.5, open_lo=True, open_hi=True)
    eps = float(margin) * float(system.capacity)
    span = steps * input.mean_interarrival
    level_start = SCALE * span * float(system.capacity) / system.servers
    why = drain_refusal(system, input)
    if why:
        return DrainResult(None, [], eps, math.nan, float(alpha), steps, replications,
                           level_start, why)
    ss = as_seed_sequence(rng)
    shape_seed, run_seed = ss.spawn(2)
    gen = np.random.default_rng(shape_seed)
    starts = _unique_starts(system, _faces(system, gen), level_start, gen)
    w0 = np.repeat(np.array([w for _, _, w in starts]), replications, axis=0)
    with warnings.catch_warnings():  # a run from a huge state is no steady state
        warnings.simplefilter("ignore", rc.SimulationWarning)
        res = rc.simulate(system, input, steps=steps, replications=w0.shape[0], rng=run_seed,
                          batches=1, grid=[0.0], w0=w0, engine="dense")
    fall = (w0.sum(axis=1) - res.final_state.sum(axis=1)) / span
    return _judge(starts, fall.reshape(len(starts), replications), eps, float(alpha), steps,
                  replications, level_start)


def _judge(starts: list[tuple[tuple[int, ...], str, np.ndarray]], fall: np.ndarray, eps: float,
           alpha: float, steps: int, replications: int, level_start: float) -> DrainResult:
    """Each direction's one-sided ``t`` test against the margin, and the verdict of all."""
    from scipy.stats import t as student

    level = alpha / len(starts)
    q = float(student.isf(level, replications - 1))
    dirs = []
    need = 0.0
    for (face, shape, _), row in zip(starts, fall, strict=True):
        mean, se = float(row.mean()), float(row.std(ddof=1) / math.sqrt(replications))
        if se > 0 and mean - q * se > eps:
            verdict = "drains"
        elif se > 0 and mean + q * se < eps:
            verdict = "does not drain"
        else:
            verdict = "unclear"
            if mean > eps and se > 0:  # steps at which it would likely pass
                need = max(need, ((q + 1.64) * se / (mean - eps)) ** 2)
        dirs.append(DrainDirection(tuple(int(e) for e in face), shape, mean, se, verdict))
    verdicts = {d.verdict for d in dirs}
    drains = True if verdicts == {"drains"} else (False if "does not drain" in verdicts
                                                  else None)
    steps_needed = None
    if drains is None and need > 0:
        steps_needed = 1 << max(4, math.ceil(math.log2(steps * need)))
    return DrainResult(drains, dirs, eps, level, alpha, steps, replications, level_start,
                       "", steps_needed)
