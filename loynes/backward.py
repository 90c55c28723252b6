"""Backward Loynes sequences (MATH.md §1): ``W_n = Psi o theta^-1 o ... o Psi o theta^-n (0)``.

Start empty at time ``-n``, run the *same* inputs forward to time 0, for ``n = 1, 2, 4, ...``.
For a monotone continuous map the sequence is nondecreasing in ``n`` and its limit is the minimal
stationary solution; a finite limit means stability (Loynes' theorem).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

import recursions as rc
from recursions.backward import run_window

__all__ = ["LoynesResult", "loynes"]


@dataclass(frozen=True)
class LoynesResult:
    """Loynes sequence at doubling horizons.

    Attributes
    ----------
    system, input : str
        What was run.
    horizons : numpy.ndarray
        The horizons ``n = 1, 2, 4, ...`` computed.
    states : numpy.ndarray
        ``W_n`` for each horizon, shape ``(len(horizons), S)``.
    stabilised : bool
        Whether ``W_n`` stopped changing (to ``tol``) over the last ``confirm`` doublings before
        the horizon cap: the limit was reached (backward coupling).
    stabilised_at : int or None
        The least computed horizon from which ``W_n`` stayed constant (it may be set while
        ``stabilised`` is false, when the cap came first).
    nondecreasing : bool
        Whether the computed sequence is coordinatewise nondecreasing in ``n`` (guaranteed for
        monotone maps).
    growth : float
        ``(sum W_last - sum W_previous) / (n_last - n_previous)``: the total workload's increase
        per customer over the last doubling (about ``0`` when stable, positive when it diverges).
    """

    system: str
    input: str
    horizons: np.ndarray
    states: np.ndarray
    stabilised: bool
    stabilised_at: int | None
    nondecreasing: bool
    growth: float

    @property
    def limit(self) -> np.ndarray | None:
        """The limit ``W`` (the stationary state at time 0) when it was reached, else ``None``."""
        return self.states[-1].copy() if self.stabilised else None

    @property
    def total_workload(self) -> np.ndarray:
        """``sum_i W_n(i)`` for each horizon."""
        return self.states.sum(axis=1)


def loynes(
    system: rc.System,
    input: rc.Input,
    horizon: int = 2**20,
    *,
    rng: Any = 1,
    tol: float = 0.0,
    confirm: int = 3,
    stop: bool = True,
) -> LoynesResult:
    """Compute the backward Loynes sequence of ``system`` under ``input``.

    ``W_n`` is obtained by running the map from the empty state at time ``-n`` to time 0 with
    the draws of :class:`recursions.BackwardDraws`, which do not depend on ``n``. Horizons
    double from 1 up to ``horizon``; the total cost is at most twice a forward run of length
    ``horizon``.

    Parameters
    ----------
    system : recursions.System
        The map.
    input : recursions.Input
        The input.
    horizon : int, default 2**20
        Largest horizon (the cap: nothing runs further back).
    rng : int, Generator, SeedSequence or None, default 1
        Seed of the backward draws.
    tol : float, default 0
        ``W_n`` counts as unchanged when ``max |W_2n - W_n| <= tol`` (0: exact equality).
    confirm : int, default 3
        The sequence counts as stabilised once it has not changed over ``confirm``
        consecutive doublings (``W_n = W_2n = ... = W_{2^confirm n}``).
    stop : bool, default True
        Stop doubling as soon as the sequence counts as stabilised.

    Returns
    -------
    LoynesResult

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> res = ly.loynes(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), horizon=2**12)
    >>> res.stabilised, res.nondecreasing
    (True, True)
    """
    if not isinstance(system, rc.System):
        raise TypeError(f"system must be a recursions system, got {type(system).__name__}")
    if not isinstance(input, rc.Input):
        raise TypeError(f"input must be a recursions input, got {type(input).__name__}")
    if isinstance(horizon, bool) or not isinstance(horizon, numbers.Integral) or horizon < 1:
        raise ValueError(f"horizon must be an integer >= 1, got {horizon!r}")
    tol = float(tol)
    if not tol >= 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    if isinstance(confirm, bool) or not isinstance(confirm, numbers.Integral) or confirm < 1:
        raise ValueError(f"confirm must be an integer >= 1, got {confirm!r}")
    draws = rc.BackwardDraws(system, input, rng)
    horizons: list[int] = []
    states: list[np.ndarray] = []
    n = 1
    unchanged = 0
    while n <= horizon:
        sig, tau, u = draws.window(n)
        w = run_window(system, np.zeros(system.servers), sig, tau, u)
        horizons.append(n)
        states.append(w.copy())
        if len(states) >= 2:
            same = np.max(np.abs(states[-1] - states[-2])) <= tol
            unchanged = unchanged + 1 if same else 0
        if stop and unchanged >= confirm:
            break
        n *= 2
    W = np.array(states)
    same = [bool(np.max(np.abs(W[i + 1] - W[i])) <= tol) for i in range(len(W) - 1)]
    at = None
    run = 0
    for i in range(len(same) - 1, -1, -1):  # least horizon from which it stayed constant
        if not same[i]:
            break
        run += 1
        at = horizons[i]
    growth = 0.0
    if len(W) >= 2:
        growth = float((W[-1].sum() - W[-2].sum()) / (horizons[-1] - horizons[-2]))
    return LoynesResult(
        system=repr(system),
        input=repr(input),
        horizons=np.array(horizons),
        states=W,
        stabilised=run >= confirm,
        stabilised_at=at,
        nondecreasing=bool(np.all(np.diff(W, axis=0) >= -1e-12)),
        growth=growth,
    )
