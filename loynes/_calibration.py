"""How often the verdicts and the Loynes stopping rule are wrong, measured over many seeds.

Two tables, printed by ``benchmarks/calibration.py`` (100 seeds a cell) and run on a few seeds
by the test suite:

* :func:`verdict_table`: :func:`~loynes.check_stability` on cells whose truth is known (a
  sufficient condition holds, or condition (3) fails, or the system is the periodic
  counterexample) or open (between (11) and (3) for J_{p+1}SW: Moyal's conjecture). A verdict
  is *wrong* when it says STABLE where the truth is unstable or UNSTABLE where it is stable.
* :func:`stopping_table`: the plateau heuristic of :func:`~loynes.loynes` (``certify=False``)
  against the certified limit on the same backward draws, where a certificate exists, or
  against the sequence run 64 times further back, where none does.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

import recursions as rc
from loynes._basis import Basis
from loynes._checks import Check, growth_test
from loynes._closed_forms import critical_rate_11
from loynes._drain import drain_test
from loynes._report import StabilityReport
from loynes._sequence import certificate_level, loynes
from loynes._stability import check_stability
from recursions.common import RngLike, Rows, as_seed_sequence
from recursions.vectors import add_at_rank, drain

__all__ = ["DRAIN_CELLS", "GROWTH_CELLS", "POLICY_CELLS", "STOPPING_CASES", "VERDICT_CELLS", "Cell",
           "StoppingCase", "growth_only", "hand_map", "stopping_table", "verdict_table"]

_EXP = rc.dists.Exponential(1.0)


@dataclass(frozen=True)
class Cell:
    """One row of a calibration table.

    Attributes
    ----------
    name : str
        What is checked, for the table.
    make : callable
        ``() -> (system, input)``.
    truth : str
        ``"stable"``, ``"unstable"`` or ``"open"``, and why (after a colon).
    via : str
        What decides: ``"check"`` (:func:`check_stability`), ``"drain"`` (the drain test
        alone, :func:`loynes.drain_test`) or ``"growth"`` (the growth test alone,
        :func:`growth_only`).
    """

    name: str
    make: Callable[[], tuple[rc.System, rc.Input]]
    truth: str
    via: str = "check"

    @property
    def truth_verdict(self) -> str:
        """``"stable"``, ``"unstable"`` or ``"open"``."""
        return self.truth.split(":")[0]


def _jsw_cell(S: int, rho: float) -> Cell:
    truth = "stable: (3) holds" if rho < 1 else "unstable: (3) fails"
    return Cell(f"JSW S={S}, M/M, load {rho:g}",
                lambda: (rc.JSW(S), rc.Poisson(rho * S, _EXP)), truth)


def _jpsw_cell(S: int, p: int, factor: float | None, rho: float | None = None) -> Cell:
    r11 = critical_rate_11(S, p, _EXP) / S
    load = factor * r11 if factor is not None else rho
    assert load is not None
    if load >= 1:
        truth = "unstable: (3) fails"
    elif load < r11:
        truth = "stable: (11) holds (Theorem 1)"
    else:
        truth = "open: between (11) and (3)"
    label = f"{factor:g} x (11)" if factor is not None else f"{rho:g}"
    return Cell(f"JpSW S={S} p={p}, M/M, load {label} = {load:.4g}",
                lambda: (rc.JpSW(S, p), rc.Poisson(load * S, _EXP)), truth)


VERDICT_CELLS: tuple[Cell, ...] = (
    *[_jsw_cell(S, rho) for S in (1, 5) for rho in (0.9, 0.97, 1.0, 1.03, 1.1)],
    *[_jpsw_cell(S, p, f) for S, p in ((4, 1), (6, 1), (5, 2)) for f in (0.97, 1.03)],
    *[_jpsw_cell(S, p, None, 0.995) for S, p in ((4, 1), (6, 1), (5, 2))],
    Cell("JpSW S=2 p=1, periodic counterexample", lambda: (
        rc.JpSW(2, 1), rc.Periodic([2.0, 3.5, 0.2], [1.0, 1.0, 1.0])),
        "unstable: the loss server overflows 3.5 per period of 3"),
    Cell("Loss S=3, M/M, offered load 2", lambda: (rc.Loss(3), rc.Poisson(2.0, _EXP)),
         "stable: a loss system is bounded"),
    Cell("JpSW S=5 p=2, M/LN(1,2), load 0.8",
         lambda: (rc.JpSW(5, 2), rc.Poisson(4.0, rc.dists.LogNormal(1.0, 2.0))),
         "stable: (11) holds (Theorem 1)"),
)
"""The cells of the verdict table."""

POLICY_CELLS: tuple[Cell, ...] = (
    *[Cell(f"LeastOfD(4, 2), M/M, load {r:g}",
           (lambda r=r: (rc.LeastOfD(4, 2), rc.Poisson(4 * r, _EXP))),  # type: ignore[misc]
           "stable: the LL(d) drift proof" if r < 1 else "unstable: (3) fails")
      for r in (0.97, 1.03)],
    Cell("LeastOfD(10, 3), E2/LN(1,4), load 0.95",
         lambda: (rc.LeastOfD(10, 3), rc.Renewal(rc.dists.Erlang(2, mean=1 / 9.5),
                                                 rc.dists.LogNormal(1.0, 4.0))),
         "stable: the LL(d) drift proof"),
    *[Cell(f"JSQ(4), M/M, load {r:g}",
           (lambda r=r: (rc.JSQ(4), rc.Poisson(4 * r, _EXP))),  # type: ignore[misc]
           "stable: Bramson (2011)" if r < 1 else "unstable: (3) fails")
      for r in (0.97, 1.03)],
    Cell("PowerOfD(10, 2), M/LN(1,4), load 0.95",
         lambda: (rc.PowerOfD(10, 2), rc.Poisson(9.5, rc.dists.LogNormal(1.0, 4.0))),
         "stable: Bramson (2011)"),
    Cell("I1F(4), M/M, load 0.9", lambda: (rc.I1F(4), rc.Poisson(3.6, _EXP)),
         "open: no theorem covers I1F"),
    Cell("JIQ(5), E2/M, load 0.9", lambda: (rc.JIQ(5), rc.Renewal(
        rc.dists.Erlang(2, mean=1 / 4.5), _EXP)), "stable: a busy server gets work at rate < 1"),
)
"""The load-balancing policies near load 1: their theorems decide (I1F has none; JIQ with
renewal input has none and goes to the growth and drain tests)."""

GROWTH_CELLS: tuple[Cell, ...] = (
    Cell("LeastOfD(1, 1) (= M/M/1), load 0.999",
         lambda: (rc.LeastOfD(1, 1), rc.Poisson(0.999, _EXP)), "stable: it is JSW(1)",
         "growth"),
    Cell("LeastOfD(5, 5) (= M/M/5), load 0.97",
         lambda: (rc.LeastOfD(5, 5), rc.Poisson(4.85, _EXP)), "stable: it is JSW(5)",
         "growth"),
    Cell("LeastOfD(5, 5) (= M/M/5), load 0.995",
         lambda: (rc.LeastOfD(5, 5), rc.Poisson(4.975, _EXP)), "stable: it is JSW(5)",
         "growth"),
    Cell("LeastOfD(1, 1) (= M/LN(1,8)/1), load 0.99",
         lambda: (rc.LeastOfD(1, 1), rc.Poisson(0.99, rc.dists.LogNormal(1.0, 8.0))),
         "stable: it is JSW(1)", "growth"),
    Cell("JIQ S=5, E2/M, load 0.97", lambda: (rc.JIQ(5), rc.Renewal(
        rc.dists.Erlang(2, 2 * 4.85), _EXP)), "stable: a busy server gets work at rate < 1",
        "growth"),
)
"""Stable systems on which the growth test alone is run (:func:`growth_only`; the systems
``LeastOfD(S, S)`` are ``JSW(S)`` in law): any UNSTABLE is wrong."""


# -- the drain road: maps written by hand, as a user would ---------------------------------
@numba.njit(cache=True)
def _jpsw_step(w, sigma, tau, u, params):  # type: ignore[no-untyped-def]
    """J_{p+1}SW by hand: an idle server if any, else the (p+1)-th least workload."""
    r = 0 if w[0] <= 0.0 else int(params[0])
    found = add_at_rank(w, 0, w.size, r, sigma)
    drain(w, tau)
    return found


@numba.njit(cache=True)
def _threshold_step(w, sigma, tau, u, params):  # type: ignore[no-untyped-def]
    """The least workload if it is below ``params[0]``, else the second least."""
    found = add_at_rank(w, 0, w.size, 0 if w[0] <= params[0] else 1, sigma)
    drain(w, tau)
    return found


@numba.njit(cache=True)
def _interval_step(w, sigma, tau, u, params):  # type: ignore[no-untyped-def]
    """Size-interval routing on two servers: jobs above ``params[0]`` to the second."""
    if sigma > params[0]:
        found = add_at_rank(w, 1, 2, 1, sigma)
    else:
        found = add_at_rank(w, 0, 1, 0, sigma)
    drain(w, tau)
    return found


@functools.cache
def hand_map(which: str, servers: int, param: float) -> rc.Map:
    """A map written by hand as a user would (no capacity declared), built once per process.

    ``which`` is ``"jpsw"`` (``param`` = p), ``"threshold"`` or ``"interval"`` (``param`` the
    size cutoff; two servers in blocks of one).
    """
    step = {"jpsw": _jpsw_step, "threshold": _threshold_step,
            "interval": _interval_step}[which]
    blocks = [1, 1] if which == "interval" else None
    return rc.Map(step, servers=servers, params=[param], blocks=blocks, name=which)


def _interval_cutoff(rate: float, long_load: float) -> float:
    """The cutoff ``c`` at which exponential(1) jobs above it bring ``long_load``."""
    from scipy.optimize import brentq

    return float(brentq(lambda c: rate * math.exp(-c) * (1 + c) - long_load, 0.0, 50.0))


def _interval_cell(long_load: float) -> Cell:
    c = _interval_cutoff(1.4, long_load)
    truth = ("stable: both servers' loads are below 1" if long_load < 1 else
             "unstable: the long-job server's load is above 1")
    return Cell(f"size-interval map, total load 0.7, long-job server at {long_load:g}",
                lambda: (hand_map("interval", 2, c), rc.Poisson(1.4, _EXP)), truth)


def _threshold_cell(rho: float) -> Cell:
    truth = "stable: (3) holds and it drains" if rho < 1 else "unstable: (3) fails"
    return Cell(f"threshold map S=4 (capacity not declared), M/M, load {rho:g}",
                lambda: (hand_map("threshold", 4, 2.0), rc.Poisson(4 * rho, _EXP)), truth)


def _jpsw_map_cell(factor: float) -> Cell:
    r11 = critical_rate_11(4, 1, _EXP) / 4
    load = factor * r11
    truth = ("stable: (11) holds (Theorem 1)" if load < r11
             else "open: between (11) and (3), growth seen")
    return Cell(f"JpSW(4, 1) written as a map, M/M, load {factor:g} x (11) = {load:.4g}",
                lambda: (hand_map("jpsw", 4, 1.0), rc.Poisson(4 * load, _EXP)), truth)


def _redundancy_cell(factor: float) -> Cell:
    from recursions.model.redundancy import JobClass, Redundancy

    truth = ("stable: below the exponential closed form's critical rate" if factor < 1
             else "unstable: above the exponential closed form's critical rate")

    def make() -> tuple[rc.System, rc.Input]:
        system = Redundancy(4, (JobClass(2, 1, _EXP),))
        return system, system.poisson(4 * factor)

    return Cell(f"redundancy (2,1) exp, 4 servers, rate {factor:g} x critical (drain test "
                "alone)", make, truth, "drain")


DRAIN_CELLS: tuple[Cell, ...] = (
    *[_threshold_cell(r) for r in (0.5, 0.8, 0.95, 1.01, 1.03)],
    *[_interval_cell(r) for r in (0.5, 0.8, 0.95, 1.005, 1.03)],
    *[_jpsw_map_cell(f) for f in (0.5, 0.8, 0.97, 1.01, 1.03)],
    Cell("JpSW(2, 1) written as a map, periodic counterexample", lambda: (
        hand_map("jpsw", 2, 1.0), rc.Periodic([2.0, 3.5, 0.2], [1.0, 1.0, 1.0])),
        "unstable: the loss server overflows 3.5 per period of 3"),
    *[_redundancy_cell(f) for f in (0.5, 0.8, 0.95, 1.01, 1.03)],
)
"""Maps no theorem covers, decided by the growth test (UNSTABLE) and the drain test
(STABLE): written by hand as a user would, near their boundaries on both sides; and
redundancy (whose check uses its own theorems) with the drain test alone."""


def _wrong(verdict: str, truth: str) -> bool:
    """STABLE where the truth is not known stable (unstable or open), UNSTABLE where stable.

    A STABLE on an open cell (J_{p+1}SW between (11) and (3), where the conjecture says
    unstable and growth is seen) counts as wrong: no road may claim what nothing proves.
    """
    return (verdict == "stable" and truth != "stable") or (
        verdict == "unstable" and truth == "stable")


def _verdict(cell: Cell, seed: int, options: dict[str, Any]) -> tuple[str, str]:
    """``(verdict, decided by)`` of one check of ``cell`` (:attr:`Cell.via`)."""
    system, inp = cell.make()
    if cell.via == "drain":  # the drain test alone: "drains" is its STABLE
        d = drain_test(system, inp, rng=seed)
        return ("stable" if d.drains else "undecided"), ("drain" if d.drains else "none")
    if cell.via == "growth":  # the growth test alone: its UNSTABLE, or nothing
        rep = growth_only(system, inp, rng=seed)
        return rep.verdict, rep.decided_by.name
    rep = check_stability(system, inp, rng=seed, **options)
    return rep.verdict, rep.decided_by.name


def growth_only(system: rc.System, input: rc.Input, *, rng: RngLike = 1) -> StabilityReport:
    """The growth test of :func:`check_stability` alone, at level ``1e-3``, on its budget.

    UNSTABLE when it rejects, else UNDECIDED: what the calibration's growth table measures
    (how often the test calls a stable system unstable), apart from any theorem or the
    drain test.
    """
    chk = Check(system, input, 2**16, 2**16, 8, 1e-3, iter(as_seed_sequence(rng).spawn(4)))
    bad = growth_test(chk)
    return bad if bad is not None else chk.report(
        "undecided", Basis("none", "none", math.nan, "no significant growth"))


def verdict_table(cells: Sequence[Cell] = VERDICT_CELLS, seeds: Sequence[int] = range(100),
                  **options: Any) -> Rows:
    """Run :func:`check_stability` on every cell for every seed.

    Parameters
    ----------
    cells : sequence of Cell
        The rows (default :data:`VERDICT_CELLS`).
    seeds : sequence of int
        Seeds of the checks.
    **options
        Passed to :func:`check_stability` (budget, ``alpha``).

    Returns
    -------
    recursions.common._tables.Rows
        A list of rows, one per cell: ``cell``, ``truth``, ``checks``, ``stable``,
        ``unstable``, ``undecided`` (fractions), ``wrong`` (a count), ``decided_by`` (name ->
        count), ``seconds`` (mean per check), ``wrong_seeds``; ``to_pandas()`` and
        ``to_xarray()`` (over ``cell``) convert it.

    Examples
    --------
    >>> rows = verdict_table(VERDICT_CELLS[:1], seeds=[1, 2])
    >>> rows[0]["stable"], rows[0]["wrong"]
    (1.0, 0)
    >>> float(rows.to_pandas().loc[0, "stable"])
    1.0
    """
    rows = Rows(dims=["cell"])
    for cell in cells:
        counts = {"stable": 0, "unstable": 0, "undecided": 0}
        by: dict[str, int] = {}
        wrong_seeds = []
        t0 = time.perf_counter()
        for s in seeds:
            verdict, name = _verdict(cell, s, options)
            counts[verdict] += 1
            by[name] = by.get(name, 0) + 1
            if _wrong(verdict, cell.truth_verdict):
                wrong_seeds.append(s)
        n = max(len(seeds), 1)
        rows.append({"cell": cell.name, "truth": cell.truth, "checks": len(seeds),
                     **{k: v / n for k, v in counts.items()}, "wrong": len(wrong_seeds),
                     "decided_by": by, "seconds": (time.perf_counter() - t0) / n,
                     "wrong_seeds": wrong_seeds})
    return rows


@dataclass(frozen=True)
class StoppingCase:
    """A system and input on which the plateau heuristic is measured.

    Attributes
    ----------
    name : str
        For the table.
    make : callable
        ``() -> (system, input)``.
    """

    name: str
    make: Callable[[], tuple[rc.System, rc.Input]]


STOPPING_CASES: tuple[StoppingCase, ...] = (
    StoppingCase("M/M/1, load 0.9", lambda: (rc.JSW(1), rc.Poisson(0.9, _EXP))),
    StoppingCase("M/M/1, load 0.95", lambda: (rc.JSW(1), rc.Poisson(0.95, _EXP))),
    StoppingCase("M/M/1, load 0.99", lambda: (rc.JSW(1), rc.Poisson(0.99, _EXP))),
    StoppingCase("M/M/5, load 0.97", lambda: (rc.JSW(5), rc.Poisson(4.85, _EXP))),
    StoppingCase("M/D/5, load 0.95", lambda: (rc.JSW(5),
                                             rc.Poisson(4.75, rc.dists.Deterministic(1.0)))),
    StoppingCase("H2/M/3, load 0.9", lambda: (rc.JSW(3), rc.Renewal(
        rc.dists.HyperExponential.balanced(1 / 2.7, 4.0), _EXP))),
    StoppingCase("M/LN(1,2)/5, load 0.8 (no certificate)",
                 lambda: (rc.JSW(5), rc.Poisson(4.0, rc.dists.LogNormal(1.0, 2.0)))),
    StoppingCase("M/LN(1,8)/1, load 0.9 (no certificate)",
                 lambda: (rc.JSW(1), rc.Poisson(0.9, rc.dists.LogNormal(1.0, 8.0)))),
    StoppingCase("LL(2) S=4, M/M, load 0.9 (no certificate)",
                 lambda: (rc.LeastOfD(4, 2), rc.Poisson(3.6, _EXP))),
    StoppingCase("envelope of JpSW(6, 1), M/M, load 0.995 (unstable: no finite limit)",
                 lambda: (rc.Envelope(rc.JpSW(6, 1)), rc.Poisson(5.97, _EXP))),
    StoppingCase("split bound (6, 1), M/M, load 0.995 (unstable: (8) fails)",
                 lambda: (rc.SplitBound(6, 1), rc.Poisson(5.97, _EXP))),
)
"""The cases of the stopping-rule table."""


def stopping_table(cases: Sequence[StoppingCase] = STOPPING_CASES,
                   seeds: Sequence[int] = range(100), horizon: int = 2**22) -> Rows:
    """Measure the plateau heuristic's false-stabilisation rate.

    For each seed the heuristic (``certify=False``) runs to ``horizon``. Its limit is compared
    with the certified limit on the same backward draws (``delta = 1e-6``) where a
    certificate exists, else with ``W_n`` at 64 times the horizon where it stopped.

    Parameters
    ----------
    cases : sequence of StoppingCase
        The rows.
    seeds : sequence of int
        Seeds of the backward draws.
    horizon : int, default 2**22
        The heuristic's horizon cap.

    Returns
    -------
    recursions.common._tables.Rows
        A list of rows, one per case: ``case``, ``runs``, ``stabilised`` (fraction), ``false``
        (count of stabilised runs whose limit was wrong), ``reference`` (what the limit was
        compared with), ``median_horizon``, ``seconds`` (mean per heuristic run);
        ``to_pandas()`` and ``to_xarray()`` (over ``case``) convert it.
    """
    rows = Rows(dims=["case"])
    for case in cases:
        system, inp = case.make()
        hs: list[int] = []
        stab, false, secs, ref = 0, 0, 0.0, "(nothing stabilised)"
        for s in seeds:
            t0 = time.perf_counter()
            h = loynes(system, inp, horizon, rng=s, certify=False)
            secs += time.perf_counter() - t0
            if not h.stabilised:
                continue
            stab += 1
            hs.append(int(h.horizons[-1]))
            if certificate_level(system, inp) is not None:
                ref = "certified limit"
                truth = loynes(system, inp, 2**26, rng=s, delta=1e-6).limit
            else:
                ref = "W_n at 64x the stopping horizon"
                far = loynes(system, inp, 64 * int(h.horizons[-1]), rng=s, certify=False,
                             stop=False)
                truth = far.states[-1]
            assert h.limit is not None and truth is not None  # both stabilised
            if not np.allclose(h.limit, truth, atol=1e-9, rtol=0.0):
                false += 1
        n = max(len(seeds), 1)
        rows.append({"case": case.name, "runs": len(seeds), "stabilised": stab / n,
                     "false": false, "reference": ref,
                     "median_horizon": float(np.median(hs)) if hs else float("nan"),
                     "seconds": secs / n})
    return rows
