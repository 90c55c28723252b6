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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import recursions as rc
from recursions.tables import Rows

from .closed_forms import critical_rate_11
from .sequence import certificate_level, loynes
from .stability import check_stability

__all__ = ["GROWTH_CELLS", "STOPPING_CASES", "VERDICT_CELLS", "Cell", "StoppingCase",
           "stopping_table", "verdict_table"]

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
    """

    name: str
    make: Callable[[], tuple[rc.System, rc.Input]]
    truth: str

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

GROWTH_CELLS: tuple[Cell, ...] = (
    Cell("LeastOfD(1, 1) (= M/M/1), load 0.999",
         lambda: (rc.LeastOfD(1, 1), rc.Poisson(0.999, _EXP)), "stable: it is JSW(1)"),
    Cell("LeastOfD(5, 5) (= M/M/5), load 0.97",
         lambda: (rc.LeastOfD(5, 5), rc.Poisson(4.85, _EXP)), "stable: it is JSW(5)"),
    Cell("LeastOfD(5, 5) (= M/M/5), load 0.995",
         lambda: (rc.LeastOfD(5, 5), rc.Poisson(4.975, _EXP)), "stable: it is JSW(5)"),
    Cell("LeastOfD(1, 1) (= M/LN(1,8)/1), load 0.99",
         lambda: (rc.LeastOfD(1, 1), rc.Poisson(0.99, rc.dists.LogNormal(1.0, 8.0))),
         "stable: it is JSW(1)"),
    Cell("JIQ S=5, E2/M, load 0.97", lambda: (rc.JIQ(5), rc.Renewal(
        rc.dists.Erlang(2, 2 * 4.85), _EXP)), "stable: a busy server gets work at rate < 1"),
)
"""Stable systems on which only the growth test can decide (the systems ``LeastOfD(S, S)``
are ``JSW(S)`` in law, but the check uses no theorem for them): any UNSTABLE is wrong."""


def _wrong(verdict: str, truth: str) -> bool:
    return (verdict == "stable" and truth == "unstable") or (
        verdict == "unstable" and truth == "stable")


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
    recursions.tables.Rows
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
            system, inp = cell.make()
            rep = check_stability(system, inp, rng=s, **options)
            counts[rep.verdict] += 1
            by[rep.decided_by.name] = by.get(rep.decided_by.name, 0) + 1
            if _wrong(rep.verdict, cell.truth_verdict):
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
    recursions.tables.Rows
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
