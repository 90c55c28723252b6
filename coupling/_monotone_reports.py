"""What :func:`coupling.check_monotone` and :func:`coupling.check_dominates` report.

:class:`MonotonicityReport` and :class:`DominanceReport` (the search and its verdict), and the
:class:`Counterexample` they carry when a search refutes the claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from recursions.common import Record

__all__ = ["Counterexample", "DominanceReport", "MonotonicityReport", "floats", "readonly"]


def floats(x: np.ndarray) -> list[float]:
    """The entries of ``x`` as Python floats (for messages)."""
    return [float(a) for a in np.ravel(x)]


def readonly(x: Any) -> np.ndarray:
    """A read-only float64 copy of ``x`` (what a report keeps)."""
    a = np.array(x, dtype=np.float64, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Counterexample(Record):
    """A case where ``u ≺ v`` but the image of ``u`` is not ``≺`` the image of ``v``.

    Attributes
    ----------
    u, v : numpy.ndarray
        The ordered pair of states, ``u ≺ v``.
    sigma, tau : float
        Service time of the arriving customer and time to the next arrival.
    uniforms : numpy.ndarray
        Routing uniforms passed to the maps (empty when neither map is randomised; a map using
        ``m`` uniforms gets the first ``m``).
    step_u, step_v : numpy.ndarray
        The images: ``map_u.step(u, ...)`` and ``map_v.step(v, ...)``.
    coordinate : int
        The first violating index (0-based): ``step_u[coordinate] > step_v[coordinate]``.
    map_u, map_v : str
        The maps applied to ``u`` and to ``v`` (the same system for a monotonicity check; the
        lower and the upper system for a dominance check).

    Examples
    --------
    >>> import recursions as rc
    >>> from coupling._monotone import check_monotone
    >>> c = check_monotone(rc.JpSW(2, 1), trials=100).counterexample
    >>> c.u.tolist(), c.v.tolist(), c.step_u.tolist(), c.step_v.tolist()
    ([0.0, 1.0], [0.001, 1.0], [1.0, 5.0], [0.001, 6.0])
    """

    u: np.ndarray
    v: np.ndarray
    sigma: float
    tau: float
    uniforms: np.ndarray
    step_u: np.ndarray
    step_v: np.ndarray
    coordinate: int
    map_u: str
    map_v: str

    def __str__(self) -> str:
        i = self.coordinate
        same = self.map_u == self.map_v
        f_u = "step(u)" if same else f"{self.map_u}.step(u)"
        f_v = "step(v)" if same else f"{self.map_v}.step(v)"
        head = (f"counterexample to the monotonicity of {self.map_u}" if same else
                f"counterexample to {self.map_v} dominating {self.map_u}")
        return "\n".join([
            f"{head}:",
            f"  u = {floats(self.u)}  ≺  v = {floats(self.v)}",
            f"  sigma = {self.sigma!r}, tau = {self.tau!r}, uniforms = {floats(self.uniforms)}",
            f"  {f_u} = {floats(self.step_u)}",
            f"  {f_v} = {floats(self.step_v)}",
            f"  coordinate {i}: {float(self.step_u[i])!r} > {float(self.step_v[i])!r}",
        ])


@dataclass(frozen=True, eq=False)
class MonotonicityReport(Record):
    """Outcome of :func:`check_monotone`.

    Attributes
    ----------
    system : str
        The system checked.
    monotone : bool
        ``False`` when a counterexample was found; ``True`` means none was found among the
        cases tried (a search cannot prove monotonicity).
    trials : int
        Cases tried (up to and including the counterexample when one was found).
    counterexample : Counterexample or None
        The first counterexample found.

    Examples
    --------
    >>> import recursions as rc
    >>> from coupling._monotone import check_monotone
    >>> check_monotone(rc.JSW(3), trials=500).monotone
    True
    """

    system: str
    monotone: bool
    trials: int
    counterexample: Counterexample | None

    def __str__(self) -> str:
        if self.counterexample is None:
            return f"{self.system}: no counterexample to monotonicity in {self.trials} cases"
        return (f"{self.system}: NOT monotone (found after {self.trials} cases)\n"
                f"{self.counterexample}")


@dataclass(frozen=True, eq=False)
class DominanceReport(Record):
    """Outcome of :func:`check_dominates`.

    Attributes
    ----------
    upper, lower : str
        The claimed upper bound and the bounded system.
    dominates : bool
        ``False`` when a counterexample was found; ``True`` means none was found among the
        cases tried.
    trials : int
        Cases tried (up to and including the counterexample when one was found).
    counterexample : Counterexample or None
        The first counterexample found (``step_u`` is the lower system's image of ``u``,
        ``step_v`` the upper system's image of ``v``).

    Examples
    --------
    >>> import recursions as rc
    >>> from coupling._monotone import check_dominates
    >>> check_dominates(rc.Envelope(rc.JpSW(2, 1)), rc.JpSW(2, 1), trials=500).dominates
    True
    """

    upper: str
    lower: str
    dominates: bool
    trials: int
    counterexample: Counterexample | None

    def __str__(self) -> str:
        claim = f"{self.upper} dominates {self.lower}"
        if self.counterexample is None:
            return f"{claim}: no counterexample in {self.trials} cases"
        return f"{claim}: FALSE (found after {self.trials} cases)\n{self.counterexample}"

