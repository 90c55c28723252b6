"""Backward Loynes sequences ``W_n = Psi o theta^-1 o ... o Psi o theta^-n (0)``, with a sound stop.

Start empty at time ``-n``, run the *same* inputs forward to time 0, for ``n = 1, 2, 4, ...``.
For a monotone continuous map the sequence is nondecreasing in ``n`` and its limit is the
minimal stationary solution; a finite limit means stability (Loynes' theorem).

When to stop is the hard part: near saturation a backward sequence has long chance plateaus,
so "unchanged over a few doublings" stops early and biases the limit low. Two rules, and the
result says which one decided (:class:`~loynes._basis.Basis`):

* **certificate** (``dominated-start``), for FCFS G/G/S (``rc.JSW``) with renewal input and
  light-tailed service: a level ``c`` with ``P(X(S) > c) <= delta`` for the stationary state
  (:func:`coupling._tail_bounds.fcfs_workload_bound`). At each horizon the map is also run from
  ``c 1``; when both runs agree at time 0, the limit equals ``W_n`` unless the stationary state
  at ``-n`` exceeds ``c`` somewhere, which has probability at most ``delta`` whatever the
  window (that state depends only on earlier inputs). Stopping at the first agreement, the
  reported limit is wrong with probability at most ``delta`` in all.
* **heuristic** (``plateau``), elsewhere: the sequence must stay unchanged over ``confirm``
  doublings that all lie beyond a minimum horizon ``n_min = 8 v / mu^2``, with ``mu = S E[tau]
  - E[sigma]`` the drift per customer of the total workload when every server is busy and
  ``v`` the asymptotic variance of ``sigma - S tau`` (exact for renewal input, from batch
  means of the draws otherwise; at least 64 periods of a periodic input): the time scale on
  which a walk with that drift forgets its start, so ``n_min`` grows like
  ``1 / (1 - rho)^2``. Its error rate is not controlled; ``benchmarks/calibration.py``
  measures it (the docs' Calibration page, ``docs/calibration.md``). Where condition (3) fails the
  sequence has no finite limit and is never called stabilised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

import recursions as rc
from coupling import fcfs_workload_bound
from loynes._basis import Basis
from recursions.common import (
    BLOCK,
    Record,
    RngLike,
    check_count,
    check_int,
    check_real,
    require_memory,
)
from recursions.engines import drivers_of
from recursions.model import check_input, check_system, is_renewal

__all__ = ["DELTA", "LoynesResult", "certificate_level", "loynes"]

DELTA = 1e-3
"""Default error level of a certified limit."""

PLATEAU_SCALE = 8.0
"""``n_min = PLATEAU_SCALE * v / mu^2`` for the plateau heuristic."""

PLATEAU_FLOOR = 64
"""Least ``n_min`` of the plateau heuristic."""

AT_ONE = 1e-9
"""A load within this of 1 counts as exactly 1 (no stationary regime is claimed there)."""


@dataclass(frozen=True, repr=False)
class LoynesResult(Record):
    """Loynes sequence at doubling horizons, and what its stop rests on.

    Attributes
    ----------
    system, input : str
        What was run.
    horizons : numpy.ndarray
        The horizons ``n = 1, 2, 4, ...`` computed.
    states : numpy.ndarray
        ``W_n`` for each horizon, shape ``(len(horizons), S)``.
    stabilised : bool
        Whether the limit was reached by the rule in :attr:`basis`.
    stabilised_at : int or None
        Certificate: the first horizon at which the runs from empty and from the upper start
        agreed. Heuristic: the least computed horizon from which ``W_n`` stayed constant (it
        may be set while ``stabilised`` is false, when the cap came first).
    nondecreasing : bool
        Whether the computed sequence is coordinatewise nondecreasing in ``n`` (guaranteed for
        monotone maps).
    growth : float
        ``(sum W_last - sum W_previous) / (n_last - n_previous)``: the total workload's increase
        per customer over the last doubling (about ``0`` when stable, positive when it diverges).
    basis : Basis
        ``certificate dominated-start`` (error ``delta``), ``heuristic plateau`` (error NaN:
        not controlled) or ``none`` (nothing reached, or condition (3) fails).
    load : float or None
        ``rho = E[sigma] / (S E[tau])`` (``None`` where the work per customer depends on the
        state).
    upper_start : float or None
        The certificate's level ``c``: the map was also run from ``c 1``.
    min_horizon : float
        The heuristic's ``n_min`` (``inf`` where no plateau can count; 0 with a certificate).
    suggested_horizon : int or None
        When not stabilised: a horizon cap that would likely reach the limit (``None`` where
        no finite limit is expected).
    """

    system: str
    input: str
    horizons: np.ndarray
    states: np.ndarray
    stabilised: bool
    stabilised_at: int | None
    nondecreasing: bool
    growth: float
    basis: Basis
    load: float | None = None
    upper_start: float | None = None
    min_horizon: float = 0.0
    suggested_horizon: int | None = None

    @property
    def limit(self) -> np.ndarray | None:
        """The limit ``W`` (the stationary state at time 0) when it was reached, else ``None``."""
        return self.states[-1].copy() if self.stabilised else None

    @property
    def total_workload(self) -> np.ndarray:
        """``sum_i W_n(i)`` for each horizon."""
        return self.states.sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        """The fields, :attr:`limit` and :attr:`total_workload` as plain values.

        Returns
        -------
        dict
            Python scalars, lists (``horizons``, ``states``, ...) and ``basis`` as a
            dict: JSON-safe (see :func:`recursions.common._tables.plain`).

        Examples
        --------
        >>> import recursions as rc
        >>> res = loynes(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 2**12, rng=1)
        >>> d = res.to_dict()
        >>> d["stabilised"], d["basis"]["kind"], d["limit"] == res.limit.tolist()
        (True, 'certificate', True)
        """
        from recursions.common import record_dict

        return record_dict(self, ("limit", "total_workload"))

    def plot(self, ax: Any = None) -> Any:
        """Draw ``W_n`` against the horizon ``n`` (log scale), with the basis of the stop.

        Two lines: the total workload ``sum_i W_n(i)`` and the largest coordinate, at each
        computed horizon; a vertical line where the sequence stabilised (and the plateau
        heuristic's minimum horizon ``n_min``, when it applies); the title gives the load
        and :attr:`basis`.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

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
        >>> res = loynes(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), 2**12, rng=1)
        >>> ax = res.plot()
        >>> len(ax.lines), ax.get_xscale()     # total, largest, where it stabilised
        (3, 'log')
        """
        return _draw(self, ax)

    def _repr_html_(self) -> str:
        from recursions.common import html_table

        total = self.total_workload
        return html_table("LoynesResult", [
            ("system", self.system), ("input", self.input), ("load", self.load),
            ("horizons", f"{int(self.horizons[0])} .. {int(self.horizons[-1])} "
                         f"({len(self.horizons)} doublings)"),
            ("stabilised", self.stabilised), ("stabilised at", self.stabilised_at),
            ("total workload at the last horizon", float(total[-1]) if total.size else None),
            ("growth per customer", self.growth), ("basis", str(self.basis)),
            ("upper start", self.upper_start), ("suggested horizon", self.suggested_horizon),
        ])


def _check_args(system: Any, input: Any, horizon: Any, tol: Any, confirm: Any,
                delta: Any) -> tuple[float, float]:
    check_system(system, needs_map="a Loynes sequence")
    check_input(input)
    horizon = check_count(horizon, "horizon")
    tol = check_real(tol, "tol", 0.0, finite=False)
    _require_loynes_memory(system, horizon)
    check_int(confirm, "confirm", 1)
    delta = check_real(delta, "delta", 0.0, 1.0, open_lo=True, open_hi=True)
    return tol, delta


def _require_loynes_memory(system: Any, horizon: int) -> None:
    """Refuse a sequence whose arrays cannot fit, before any is allocated (``MemoryError``).

    The draws back to ``horizon`` are kept twice (the cached blocks and one contiguous
    window: ``2 + uniforms`` float64 a customer each); the states, one ``S``-vector a
    doubling, and the stored path of at most ``2**20`` numbers (at least one ``S``-vector)
    come on top.
    """
    S, m = system.servers, system.uniforms
    cap = -(-horizon // BLOCK) * BLOCK
    need = 8.0 * (2.0 * (2 + m) * cap + S * (horizon.bit_length() + 8) + max(2**20, S))
    require_memory(need, f"a Loynes sequence of {type(system).__name__} with {S} servers "
                   f"up to horizon={horizon}", "use a smaller horizon or fewer servers")


def _drift_and_variance(system: rc.System, input: rc.Input,
                        draws: rc.BackwardDraws) -> tuple[float, float]:
    """``mu = S E[tau] - E[sigma]`` and the asymptotic variance of ``sigma - S tau``."""
    S = system.capacity  # S for unit-speed servers
    mu = S * input.mean_interarrival - input.mean_service
    if is_renewal(input):
        return mu, float(input.service.var + S * S * input.interarrival.var)
    sig, tau, _ = draws.window(2**16)  # cached blocks, reused by the sequence itself
    batch = (sig - S * tau).reshape(64, -1).mean(axis=1)  # batch means: the asymptotic
    return mu, float(batch.var(ddof=1) * sig.size / 64)  # variance, correlations included


def _plateau_horizon(system: rc.System, input: rc.Input, draws: rc.BackwardDraws,
                     rho: float | None) -> tuple[float, str]:
    """The plateau heuristic's minimum horizon ``n_min``, and a note on it."""
    if rho is None:
        return float(PLATEAU_FLOOR * 64), "work per customer depends on the state: n_min fixed"
    if system.has_loss:
        return float(PLATEAU_FLOOR * system.servers), "a loss system: n_min = 64 S"
    if not rho < 1 - AT_ONE:
        return math.inf, f"condition (3) fails (load {rho:.4g}): no finite limit"
    mu, v = _drift_and_variance(system, input, draws)
    if not math.isfinite(v):
        return math.inf, "infinite variance: no calibrated plateau length"
    floor = PLATEAU_FLOOR * max(1, input.period or 1)
    n_min = max(float(floor), PLATEAU_SCALE * v / (mu * mu))
    return n_min, f"n_min = 8 v / mu^2 = {n_min:.3g} (load {rho:.4g})"


def certificate_level(system: rc.System, input: rc.Input, delta: float = DELTA
                      ) -> float | None:
    """The upper start ``c`` of the certificate, or ``None`` where no certificate applies.

    Parameters
    ----------
    system : recursions.System
        The map; certificates exist for monotone FCFS maps (``rc.JSW``).
    input : recursions.Input
        The input (renewal, light-tailed service, load below 1).
    delta : float, default 1e-3
        Error level.

    Returns
    -------
    float or None
        ``c`` with ``P(X(S) > c) <= delta`` for the stationary state ``X``.

    Examples
    --------
    >>> import recursions as rc
    >>> certificate_level(rc.JSW(1), rc.Poisson(0.5, rc.dists.LogNormal(1.0, 2.0))) is None
    True
    """
    if not (system.monotone and system.fcfs):
        return None
    return fcfs_workload_bound(system.servers, input, delta)


def _power_of_two_at_least(x: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(x, 1.0))))


def loynes(
    system: rc.System,
    input: rc.Input,
    horizon: int = 2**20,
    *,
    rng: RngLike = 1,
    delta: float = DELTA,
    certify: bool = True,
    tol: float = 0.0,
    confirm: int = 2,
    stop: bool = True,
) -> LoynesResult:
    """Compute the backward Loynes sequence of ``system`` under ``input``, stopped soundly.

    ``W_n`` is obtained by running the map from the empty state at time ``-n`` to time 0 with
    the draws of :class:`recursions.BackwardDraws`, which do not depend on ``n``. Horizons
    double from 1 up to ``horizon``. The stop is a certificate where one applies (FCFS G/G/S
    with renewal input and light-tailed service: the limit is wrong with probability at most
    ``delta``), else a plateau heuristic whose minimum horizon scales with ``1 / (1 - rho)^2``
    (module docstring); :attr:`LoynesResult.basis` says which.

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
    delta : float, default 1e-3
        Error level of a certified limit.
    certify : bool, default True
        Use the certificate where it applies (``False``: always the heuristic, e.g. to
        measure it).
    tol : float, default 0
        Plateau heuristic: ``W_n`` counts as unchanged when ``max |W_2n - W_n| <= tol``.
    confirm : int, default 2
        Plateau heuristic: doublings without change, all beyond the minimum horizon.
    stop : bool, default True
        Stop doubling as soon as the limit is reached.

    Returns
    -------
    LoynesResult

    Examples
    --------
    >>> import recursions as rc, loynes as ly
    >>> res = ly.loynes(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)), horizon=2**12)
    >>> res.stabilised, res.basis.name, res.basis.error
    (True, 'dominated-start', 0.001)
    """
    tol, delta = _check_args(system, input, horizon, tol, confirm, delta)
    draws = rc.BackwardDraws(system, input, rng=rng)
    rho = system.load(input)
    level = certificate_level(system, input, delta) if certify else None
    n_min, note = (0.0, "") if level is not None else _plateau_horizon(system, input, draws,
                                                                        rho)
    S = system.servers
    drivers, params = drivers_of(system), system.params
    # states of the latest run at every `every`-th time before 0: a run from -2n stops where
    # it meets the run from -n (the same deterministic map on the same draws from then on),
    # and the run from the level where it meets the run from empty, so a stable sequence
    # costs about one pass over the horizon instead of two (or four, with the certificate)
    every = _checkpoint_spacing(horizon, S)
    ck = np.zeros((horizon // every + 1, S))
    horizons: list[int] = []
    states: list[np.ndarray] = []
    agreed: list[bool] = []
    jref = -1  # the stored path holds the previous run's states at times -j, j <= jref
    n = 1
    tail = _Tail(draws, horizon, system.uniforms)
    while n <= horizon:
        sig, tau, u = tail.window(n)
        w = np.zeros(S)
        if drivers.run_checked(params, w, sig, tau, u, every, ck, jref, True) >= 0:
            w = states[-1].copy()  # met the previous run: the same state at time 0
        jref = n
        system.check_run(w[None, :], where=f"at time 0 of the backward run from -{n}")
        horizons.append(n)
        states.append(w.copy())
        if level is not None:
            up = np.full(S, level)
            met = drivers.run_checked(params, up, sig, tau, u, every, ck, jref, False) >= 0
            agreed.append(met or bool(np.array_equal(up, w)))
            if stop and agreed[-1]:
                break
        elif stop and _plateau(states, horizons, tol, confirm, n_min) is not None:
            break
        n *= 2
    W = np.array(states)
    growth = 0.0
    if len(W) >= 2:
        growth = float((W[-1].sum() - W[-2].sum()) / (horizons[-1] - horizons[-2]))
    common = dict(system=repr(system), input=repr(input), horizons=np.array(horizons),
                  states=W, nondecreasing=bool(np.all(np.diff(W, axis=0) >= -1e-12)),
                  growth=growth, load=rho)
    if level is not None:
        return _certified_result(common, agreed, horizons, level, delta, system, input)
    return _heuristic_result(common, states, horizons, tol, confirm, n_min, note, system)


class _Tail:
    """``draws.window(n)`` for growing ``n``, as views of one buffer filled from its end.

    Each block of draws is copied once, where ``window`` would copy the whole window at
    every horizon.
    """

    def __init__(self, draws: rc.BackwardDraws, horizon: int, uniforms: int) -> None:
        self._draws = draws
        self._cap = -(-horizon // BLOCK) * BLOCK
        self._sig = np.empty(self._cap)
        self._tau = np.empty(self._cap)
        self._u = np.empty((self._cap, uniforms))
        self._filled = 0  # blocks copied: times -filled * BLOCK .. -1

    def window(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        while self._filled * BLOCK < n:
            b = self._filled
            sig, tau, u = self._draws.block(b)
            lo = self._cap - (b + 1) * BLOCK
            self._sig[lo:lo + BLOCK] = sig
            self._tau[lo:lo + BLOCK] = tau
            self._u[lo:lo + BLOCK] = u
            self._filled += 1
        start = self._cap - n
        return self._sig[start:], self._tau[start:], self._u[start:]


def _checkpoint_spacing(horizon: int, servers: int) -> int:
    """Times between stored states of the runs: a power of two >= 64, the store <= 2^20 numbers."""
    every = 64
    while every <= horizon and (horizon // every + 1) * servers > 2**20:
        every *= 2
    return every


def _plateau(states: list[np.ndarray], horizons: list[int], tol: float, confirm: int,
             n_min: float) -> int | None:
    """Start of a plateau of ``confirm`` unchanged doublings beyond ``n_min``, else ``None``."""
    if len(states) < confirm + 1:
        return None
    first = len(states) - 1 - confirm
    if horizons[first] < n_min:
        return None
    for i in range(first, len(states) - 1):
        if np.max(np.abs(states[i + 1] - states[i])) > tol:
            return None
    return horizons[first]


def _certified_result(common: dict[str, Any], agreed: list[bool], horizons: list[int],
                      level: float, delta: float, system: rc.System,
                      input: rc.Input) -> LoynesResult:
    ok = agreed[-1]
    at = horizons[agreed.index(True)] if any(agreed) else None
    if ok:
        basis = Basis("certificate", "dominated-start", delta,
                      f"the runs from empty and from {level:.4g} per server agree at time 0 "
                      f"from horizon {at}; P(stationary state above {level:.4g}) <= {delta:g}")
        suggested = None
    else:
        mu = system.servers * input.mean_interarrival - input.mean_service
        suggested = _power_of_two_at_least(4.0 * system.servers * level / mu)
        suggested = max(suggested, 2 * horizons[-1])
        basis = Basis("none", "none", math.nan,
                      f"the runs from empty and from {level:.4g} per server still differ at "
                      f"horizon {horizons[-1]}; about {suggested} would likely certify")
    return LoynesResult(**common, stabilised=ok, stabilised_at=at, basis=basis,
                        upper_start=level, min_horizon=0.0,
                        suggested_horizon=suggested)


def _heuristic_result(common: dict[str, Any], states: list[np.ndarray], horizons: list[int],
                      tol: float, confirm: int, n_min: float, note: str,
                      system: rc.System) -> LoynesResult:
    start = _plateau(states, horizons, tol, confirm, n_min)
    at = None
    for i in range(len(states) - 1, 0, -1):  # least horizon from which it stayed constant
        if np.max(np.abs(states[i] - states[i - 1])) > tol:
            break
        at = horizons[i - 1]
    kind_note = "" if system.monotone else "; the map is not monotone (no Loynes theorem)"
    if start is not None:
        basis = Basis("heuristic", "plateau", math.nan,
                      f"unchanged over {confirm} doublings from horizon {start}; {note}"
                      f"{kind_note}")
        suggested = None
    else:
        suggested = (None if not math.isfinite(n_min)
                     else max(_power_of_two_at_least(n_min) << confirm, 2 * horizons[-1]))
        basis = Basis("none", "none", math.nan,
                      f"no plateau of {confirm} doublings beyond n_min by horizon "
                      f"{horizons[-1]}; {note}{kind_note}")
    return LoynesResult(**common, stabilised=start is not None, stabilised_at=at, basis=basis,
                        min_horizon=n_min, suggested_horizon=suggested)


def _draw(res: LoynesResult, ax: Any = None) -> Any:
    """Draw :meth:`LoynesResult.plot <loynes.LoynesResult.plot>`."""
    from recursions.common import axes, title

    ax = axes(ax, "LoynesResult.plot()")
    n = res.horizons
    ax.plot(n, res.total_workload, "o-", lw=1.8, label="sum_i W_n(i): total workload")
    ax.plot(n, res.states.max(axis=1), "s--", lw=1.2, ms=4,
            label="max_i W_n(i): largest workload")
    if res.stabilised_at is not None:
        if res.basis.kind == "certificate":
            what = (f"runs from empty and from {res.upper_start:.3g} per server agree at "
                    f"n = {res.stabilised_at}")
        else:
            what = f"W_n constant from n = {res.stabilised_at}"
        ax.axvline(res.stabilised_at, color="tab:green", ls=":", lw=1.5, label=what)
    if 0 < res.min_horizon < math.inf and res.min_horizon <= n[-1]:
        ax.axvline(res.min_horizon, color="tab:gray", ls="-.", lw=1,
                   label=f"plateau's minimum horizon n_min = {res.min_horizon:.3g}")
    ax.set_xscale("log", base=2)
    ax.set_xlim(n[0] / 1.5, n[-1] * 1.5)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("horizon n (customers back from time 0)")
    ax.set_ylabel("workload at time 0")
    load = "" if res.load is None else f"; load {res.load:.3g}"
    verdict = "limit reached" if res.stabilised else "no limit reached"
    title(ax, f"Loynes sequence W_n against the horizon: {verdict}",
          f"{res.system}, {res.input}{load}\nbasis: {res.basis}")
    ax.legend(fontsize=8, loc="lower right")
    return ax
