"""Large-scale Join-Idle-Queue: equilibrium profile, transient and the Lemma 4 bound.

The theory: :ref:`Theory › Large systems <theory-large>`.

Foss & Stolyar consider ``n`` identical servers fed by a Poisson stream of rate ``lambda n``
with i.i.d. service times of law ``F``; an arrival joins an idle server if there is one, else a
uniformly random server. The state is the workload profile ``x^n_w = #{i : W_i > w} / n``.
This module gives the deterministic objects of their analysis for the arrival rate per server
``lambda`` (``rate_per_server``; the total rate is ``lambda n``) and a service law of any mean
``m`` (the paper takes ``m = 1``):

* the **equilibrium point** (:meth:`JIQEquilibrium.profile`)
  ``x*_w = lambda int_w^inf (1 - F(xi)) dxi = lambda E[(sigma - w)^+]``, so ``x*_0`` is the
  load ``rho = lambda m`` (the busy fraction when no arrival ever waits);
* the **transient from empty** of the infinite-server limit (:meth:`JIQEquilibrium.transient`)
  ``x↑_w(t) = lambda int_0^t F^c(w + s) ds``, non-decreasing in ``t`` with limit ``x*_w``;
* the **Lemma 4 bound** (:meth:`JIQEquilibrium.lemma4_bound`) ``E x^n_w(inf) <= x**_w`` for every
  ``n``, where ``x**_w`` is the expected time above ``w`` per regeneration cycle (arrival to an
  empty system) of an M/G/1 workload with arrival rate ``lambda`` and service ``F``. A cycle
  lasts ``1 / (lambda (1 - rho))`` on average, so by the renewal-reward theorem
  ``x**_w = P(V > w) / (lambda (1 - rho))`` with ``V`` the stationary M/G/1 workload; for
  exponential service of rate ``mu`` this is ``exp(-(mu - lambda) w) / (mu - lambda)``, and
  ``x**_0 = m / (1 - rho)`` is the mean busy period.

The M/G/1 workload tail (:func:`mg1_workload_sf`)
--------------------------------------------------
By the Pollaczek-Khinchine (Beneš) formula ``V`` is a geometric sum: ``V = Y_1 + ... + Y_N`` with
``P(N = n) = (1 - rho) rho^n`` and ``Y_i`` i.i.d. with the equilibrium law
``F_e^c(y) = integrated_sf(y) / m``, so ``Z(w) = P(V > w)`` solves the defective renewal
equation ``Z(w) = rho F_e^c(w) + rho int_0^w Z(w - y) dF_e(y)``. It is solved on a grid of step
``h`` by two lattice versions of ``Y``, ``Y_lo = h floor(Y / h) <= Y <= Y_up = Y_lo + h``: the
geometric sums ``V_lo <= V <= V_up`` are stochastically ordered, so for ``w`` in
``[k h, (k + 1) h]``

    ``P(V_lo > k h) <= Z(w) <= P(V_up > k h)``,

a bracket of width ``O(h)`` (:func:`mg1_workload_sf_bounds`). The mid-point of the bracket is
a second-order estimate of ``Z`` at the cell centre ``(k + 1/2) h`` (``V_lo`` and ``V_up`` are
shifted by about ``-N h / 2`` and ``+N h / 2``). ``Z`` itself has kinks where ``F_e^c`` has, at
the atoms of the service law (at ``d`` for deterministic service ``d``), so the estimate at an
arbitrary ``w`` is the exact one-jump term ``(1 - rho) rho F_e^c(w)`` plus the linear
interpolation, between the cell centres and ``w = 0`` (where ``Z(0) = rho``), of the remainder
(``N >= 2``), whose density is continuous.
Both lattice tails are computed in one pass each from their generating functions
``rho T(z) / (1 - rho P(z))`` (``P`` the lattice jump law, ``T`` its tail series) with a real FFT
of length ``>= 4M`` (``M`` grid cells) after exponential damping ``z -> theta z``,
``theta^M = 10^-4``: aliasing is then below ``10^-16`` and the damping magnifies rounding by at
most ``10^4``. The mass of ``Y`` beyond the grid is never needed (it only affects ``Z`` beyond
the grid), so there is no truncation error.

Accuracy (measured by ``tests/loynes/test_jiq_theory.py``, default step ``h = m / 4096``): the
maximum absolute error is below ``1e-8`` against the M/M/1 tail ``rho exp(-(mu - lambda) w)`` and
``2e-8`` against the exact M/D/1 workload law (Erlang's alternating series, kinks included), at
loads 0.5 to 0.9; halving ``h`` divides the error by about 4 (second order) and the certified
bracket (width about ``2e-4``) by 2. The Pollaczek-Khinchine mean
``int Z = lambda E[sigma^2] / (2 (1 - rho))`` is reproduced to a relative ``1e-8``. The error is
absolute, not relative: values below about ``1e-12`` are rounding noise. The values are exact for
:class:`~recursions.dists.Exponential` service (closed form) unless ``method="renewal"`` is asked
for.

The grid covers ``[0, max(w)]``; its step is ``step`` if given, else
``max(m / 4096, max(w) / 2^20)`` (so the grid coarsens once ``max(w)`` exceeds 256 means).
``F_e^c`` on the grid comes from the law's ``integrated_sf``; for a
:class:`~recursions.dists.ScipyLaw` (whose ``integrated_sf`` is a ``quad`` per point) the cell
masses are 8-point Gauss-Legendre integrals of ``sf`` instead (exact to rounding for smooth
laws, first order in the few cells holding a jump of a discrete law) and ``F_e^c`` off the grid
is interpolated linearly (an error about ``1e-9``).

Examples
--------
>>> import math
>>> from recursions.dists import Deterministic, Exponential
>>> from loynes._jiq import jiq_equilibrium, mg1_workload_sf
>>> eq = jiq_equilibrium(0.4, Exponential(1.0))
>>> float(eq.profile(0.0)), round(float(eq.lemma4_bound(0.0)), 12)
(0.4, 1.666666666667)
>>> z = mg1_workload_sf(0.5, Deterministic(1.0), [0.5, 1.0])  # M/D/1: 1 - (1 - rho) e^(rho w)
>>> bool(abs(z[1] - (1 - 0.5 * math.exp(0.5))) < 1e-7), round(float(z[0]), 6)
(True, 0.357987)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from recursions.common import Record, check_points, check_positive
from recursions.dists import Law, as_law

__all__ = [
    "JIQEquilibrium",
    "jiq_equilibrium",
    "mg1_workload_sf",
    "mg1_workload_sf_bounds",
]

FloatArray = NDArray[np.float64]

#: Default grid step of the renewal solver, in units of the mean service time.
STEPS_PER_MEAN = 4096
#: Largest number of grid cells chosen automatically (a finer ``step`` may ask for more).
MAX_AUTO_CELLS = 2**20
#: Largest number of grid cells accepted at all.
MAX_CELLS = 2**22
#: ``theta**M = 10**-DAMPING_DECADES`` for the exponential damping of the FFT.
DAMPING_DECADES = 4.0

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


def _stable_load(lam: float, law: Law, name: str) -> float:
    rho = lam * law.mean
    if not rho < 1:
        raise ValueError(
            f"{name} must give a load {name} * E[service] < 1, got "
            f"{lam!r} * {law.mean!r} = {rho!r}"
        )
    return rho


def _step(value: Any) -> float | None:
    return None if value is None else check_positive(value, "step (or None)")


def _method(value: Any) -> str:
    if value not in ("auto", "renewal"):
        raise ValueError(f"method must be 'auto' or 'renewal', got {value!r}")
    return str(value)


# --------------------------------------------------------------------------------------------
# the renewal solver
# --------------------------------------------------------------------------------------------


def _equilibrium_tail_grid(law: Law, h: float, cells: int) -> FloatArray:
    """``F_e^c(k h)`` for ``k = 0..cells``."""
    if law.closed_form_tails:
        return np.clip(law.equilibrium_sf(h * np.arange(cells + 1)), 0.0, 1.0)
    # cell integrals of sf by Gauss-Legendre, then tail sums from the right (no cancellation)
    left = h * np.arange(cells)
    x = left[:, None] + 0.5 * h * (1.0 + _GL_NODES)[None, :]
    cell = 0.5 * h * (law.sf(x) @ _GL_WEIGHTS)
    tail = float(law.integrated_sf(h * cells))
    sums = np.append(np.cumsum(cell[::-1])[::-1], 0.0) + tail
    return np.clip(sums / sums[0], 0.0, 1.0)


def _lattice_tails(rho: float, fc: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``P(V_lo > k h)`` and ``P(V_up > k h)``, ``k = 0..cells - 1``, from ``fc = F_e^c(k h)``."""
    from scipy import fft

    cells = fc.size - 1
    p = np.clip(fc[:-1] - fc[1:], 0.0, None)  # P(Y_lo = k h)
    n = fft.next_fast_len(4 * cells, real=True)
    damp = np.exp(-DAMPING_DECADES * math.log(10.0) / cells * np.arange(cells + 1))
    p_lo = fft.rfft(p * damp[:cells], n)
    p_up = fft.rfft(np.concatenate(([0.0], p)) * damp, n)  # Y_up = Y_lo + h
    t_lo = fft.rfft(fc[1:] * damp[:cells], n)  # P(Y_lo > k h) = F_e^c((k + 1) h)
    t_up = fft.rfft(fc[:-1] * damp[:cells], n)  # P(Y_up > k h) = F_e^c(k h)
    s_lo = fft.irfft(rho * t_lo / (1.0 - rho * p_lo), n)[:cells] / damp[:cells]
    s_up = fft.irfft(rho * t_up / (1.0 - rho * p_up), n)[:cells] / damp[:cells]
    return np.clip(s_lo, 0.0, rho), np.clip(s_up, 0.0, rho)


def _grid(law: Law, w: FloatArray, step: float | None) -> tuple[float, int]:
    finite = w[np.isfinite(w)]
    reach = float(finite.max()) if finite.size else 0.0
    h = step if step is not None else max(law.mean / STEPS_PER_MEAN, reach / MAX_AUTO_CELLS)
    cells = max(math.ceil(reach / h) + 2, 16)
    if cells > MAX_CELLS:
        raise ValueError(
            f"step must leave at most {MAX_CELLS} grid cells up to max(w) = {reach!r}, "
            f"got step {h!r}"
        )
    return h, cells


def _prepare(arrival_rate: Any, service: Any, w: Any) -> tuple[float, Law, float, FloatArray]:
    lam = check_positive(arrival_rate, "arrival_rate")
    law = as_law(service, "service")
    rho = _stable_load(lam, law, "arrival_rate")
    return lam, law, rho, check_points(w, "w")


def mg1_workload_sf(
    arrival_rate: float,
    service: Any,
    w: ArrayLike,
    *,
    step: float | None = None,
    method: Literal["auto", "renewal"] = "auto",
) -> FloatArray:
    """Tail ``P(V > w)`` of the stationary workload of an M/G/1 queue.

    ``V`` is a geometric(``rho``) sum of equilibrium residual service times (Pollaczek-Khinchine /
    Beneš); the defective renewal equation for ``P(V > w)`` is solved on a grid as described in
    the module docstring (second order in the step, absolute error about ``1e-8`` at the default
    step). Exponential service gives the closed form ``rho exp(-(mu - lambda) w)``.

    Parameters
    ----------
    arrival_rate : float
        Poisson arrival rate ``lambda``, finite and > 0, with ``rho = lambda E[sigma] < 1``.
    service : Law or scipy.stats frozen distribution
        Service law (see :func:`recursions.dists.as_law`).
    w : array_like
        Points ``>= 0`` (``inf`` gives 0).
    step : float, optional
        Grid step; default ``max(E[sigma] / 4096, max(w) / 2**20)``.
    method : {"auto", "renewal"}, default "auto"
        ``"auto"`` uses the closed form for :class:`~recursions.dists.Exponential` service and
        the renewal solver otherwise; ``"renewal"`` always uses the solver.

    Returns
    -------
    numpy.ndarray
        Array of the shape of ``numpy.asarray(w)`` (0-d for a scalar); ``rho`` at ``w = 0``.

    Raises
    ------
    TypeError
        If ``arrival_rate`` or ``step`` is not a real number, ``w`` not numeric, or ``service``
        not a law.
    ValueError
        If ``arrival_rate <= 0`` or the load ``rho >= 1`` (naming ``arrival_rate``), if some
        ``w`` is negative or NaN, or ``step`` / ``method`` is invalid.

    Examples
    --------
    >>> import math
    >>> from recursions.dists import Erlang, Exponential
    >>> from loynes._jiq import mg1_workload_sf
    >>> mg1_workload_sf(0.5, Exponential(1.0), [0.0, 2.0])  # 0.5 exp(-w / 2)
    array([0.5       , 0.18393972])
    >>> z = mg1_workload_sf(0.5, Erlang(1, 1.0), 2.0)  # the same law, by the renewal solver
    >>> abs(float(z) - 0.5 * math.exp(-1.0)) < 1e-7
    True
    """
    lam, law, rho, wa = _prepare(arrival_rate, service, w)
    h = _step(step)
    mu = law.exponential_rate
    if _method(method) == "auto" and mu is not None:
        return rho * np.exp(-(mu - lam) * wa)
    out = np.zeros(wa.shape)
    finite = np.isfinite(wa)
    if finite.any():
        h, cells = _grid(law, wa, h)
        fc = _equilibrium_tail_grid(law, h, cells)
        s_lo, s_up = _lattice_tails(rho, fc)
        nodes: FloatArray = h * (np.arange(cells, dtype=np.float64) + 0.5)

        def one_jump(x: FloatArray) -> FloatArray:  # (1 - rho) rho F_e^c(x): the N = 1 term
            if not law.closed_form_tails:  # its integrated_sf is slow: interpolate the grid
                return (1.0 - rho) * rho * np.interp(x, h * np.arange(cells + 1), fc)
            return (1.0 - rho) * rho * law.equilibrium_sf(x)

        # interpolate only the N >= 2 part, which is C^1 (Z itself has kinks where F_e^c has)
        rest = 0.5 * (s_lo + s_up) - one_jump(nodes)
        wf = wa[finite]
        out[finite] = one_jump(wf) + np.interp(
            wf, np.concatenate(([0.0], nodes)), np.concatenate(([rho * rho], rest))
        )
    return np.clip(out, 0.0, rho)


def mg1_workload_sf_bounds(
    arrival_rate: float,
    service: Any,
    w: ArrayLike,
    *,
    step: float | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Certified bracket ``lower <= P(V > w) <= upper`` of the M/G/1 workload tail.

    ``lower = P(V_lo > k h)`` and ``upper = P(V_up > k h)`` for ``w`` in ``[k h, (k + 1) h)``,
    where ``V_lo <= V <= V_up`` are the geometric sums of the equilibrium residual service
    rounded down and up to the grid (module docstring); the width is ``O(step)``. The bracket is
    rigorous up to floating-point rounding (about ``1e-12``). Always computed by the solver, also
    for exponential service.

    Parameters
    ----------
    arrival_rate : float
        Poisson arrival rate ``lambda``, finite and > 0, with ``rho = lambda E[sigma] < 1``.
    service : Law or scipy.stats frozen distribution
        Service law.
    w : array_like
        Points ``>= 0`` (``inf`` gives 0 and 0).
    step : float, optional
        Grid step; default as in :func:`mg1_workload_sf`.

    Returns
    -------
    lower, upper : numpy.ndarray
        Arrays of the shape of ``numpy.asarray(w)``.

    Raises
    ------
    TypeError
        As :func:`mg1_workload_sf`.
    ValueError
        As :func:`mg1_workload_sf`.

    Examples
    --------
    >>> import math
    >>> from recursions.dists import Exponential
    >>> from loynes._jiq import mg1_workload_sf_bounds
    >>> lo, hi = mg1_workload_sf_bounds(0.5, Exponential(1.0), 2.0)
    >>> bool(lo <= 0.5 * math.exp(-1.0) <= hi), bool(hi - lo < 1e-3)
    (True, True)
    """
    _, law, rho, wa = _prepare(arrival_rate, service, w)
    h = _step(step)
    lower = np.zeros(wa.shape)
    upper = np.zeros(wa.shape)
    finite = np.isfinite(wa)
    if finite.any():
        h, cells = _grid(law, wa, h)
        s_lo, s_up = _lattice_tails(rho, _equilibrium_tail_grid(law, h, cells))
        k = np.minimum(np.floor(wa[finite] / h).astype(np.int64), cells - 1)
        lower[finite] = s_lo[k]
        upper[finite] = s_up[k]
    return lower, upper


# --------------------------------------------------------------------------------------------
# the JIQ equilibrium
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class JIQEquilibrium(Record):
    """Fluid objects of large-scale JIQ, arrival rate ``lambda`` per server (:ref:`theory-large`).

    Build it with :func:`jiq_equilibrium`, which validates the arguments.

    Parameters
    ----------
    rate_per_server : float
        Arrival rate per server ``lambda`` (> 0): ``n`` servers get ``lambda n`` in all.
    service : Law
        Service law, with ``lambda * service.mean < 1``.

    Attributes
    ----------
    load : float
        ``rho = lambda E[sigma]``, the equilibrium busy fraction ``x*_0``.

    Examples
    --------
    >>> from recursions.dists import Deterministic
    >>> from loynes._jiq import jiq_equilibrium
    >>> eq = jiq_equilibrium(0.25, Deterministic(2.0))
    >>> eq
    JIQEquilibrium(rate_per_server=0.25, service=Deterministic(value=2.0; mean=2, scv=0), load=0.5)
    >>> eq.profile([0.0, 1.0, 2.0])  # 0.25 * (2 - w)^+
    array([0.5 , 0.25, 0.  ])
    """

    _dict_extra = ("load",)

    rate_per_server: float
    service: Law

    def __post_init__(self) -> None:
        lam = check_positive(self.rate_per_server, "rate_per_server")
        law = as_law(self.service, "service")
        _stable_load(lam, law, "rate_per_server")
        object.__setattr__(self, "rate_per_server", lam)
        object.__setattr__(self, "service", law)

    def __repr__(self) -> str:
        return (
            f"JIQEquilibrium(rate_per_server={self.rate_per_server!r}, "
            f"service={self.service!r}, "
            f"load={self.load:.6g})"
        )

    @property
    def load(self) -> float:
        """Load ``rho = lambda E[sigma]`` (``< 1``), equal to ``profile(0)``."""
        return self.rate_per_server * self.service.mean

    def profile(self, w: ArrayLike) -> FloatArray:
        """Equilibrium point ``x*_w = lambda int_w^inf F^c = lambda E[(sigma - w)^+]``.

        The fraction of servers with workload above ``w`` when every arrival finds an idle
        server (Theorem 2, proved for ``lambda E[sigma] < 1/2``).

        Parameters
        ----------
        w : array_like
            Points ``>= 0`` (``inf`` gives 0).

        Returns
        -------
        numpy.ndarray
            Array of the shape of ``numpy.asarray(w)``; ``load`` at 0, non-increasing.

        Raises
        ------
        TypeError
            If ``w`` is not numeric.
        ValueError
            If some ``w`` is negative or NaN.

        Examples
        --------
        >>> from recursions.dists import Exponential
        >>> from loynes._jiq import jiq_equilibrium
        >>> jiq_equilibrium(0.5, Exponential(2.0)).profile([0.0, 1.0])  # 0.5 e^(-2w) / 2
        array([0.25      , 0.03383382])
        """
        wa = check_points(w, "w")
        return self.rate_per_server * self.service.integrated_sf(wa)

    def transient(self, w: ArrayLike, t: ArrayLike) -> FloatArray:
        """Infinite-server fluid limit from empty: ``x↑_w(t) = lambda int_0^t F^c(w + s) ds``.

        Computed as ``lambda (E[(sigma - w)^+] - E[(sigma - w - t)^+])``; 0 at ``t = 0``,
        non-decreasing in ``t`` with limit :meth:`profile` as ``t -> inf``.

        Parameters
        ----------
        w : array_like
            Points ``>= 0``.
        t : array_like
            Times ``>= 0`` (``inf`` gives the profile); broadcast against ``w``.

        Returns
        -------
        numpy.ndarray
            Array of the broadcast shape of ``w`` and ``t``.

        Raises
        ------
        TypeError
            If ``w`` or ``t`` is not numeric.
        ValueError
            If some ``w`` or ``t`` is negative or NaN, or the shapes do not broadcast.

        Examples
        --------
        >>> from recursions.dists import Deterministic
        >>> from loynes._jiq import jiq_equilibrium
        >>> eq = jiq_equilibrium(0.5, Deterministic(1.0))
        >>> eq.transient(0.0, [0.0, 0.5, 1.0, 3.0])  # 0.5 min(t, 1)
        array([0.  , 0.25, 0.5 , 0.5 ])
        """
        wa = check_points(w, "w")
        ta = check_points(t, "t")
        try:
            wb, tb = np.broadcast_arrays(wa, ta)
        except ValueError as exc:
            raise ValueError(
                f"w and t must broadcast together, got shapes {wa.shape} and {ta.shape}"
            ) from exc
        law = self.service
        diff = law.integrated_sf(wb) - law.integrated_sf(wb + tb)
        return self.rate_per_server * np.clip(diff, 0.0, None)

    def lemma4_bound(self, w: ArrayLike, *, step: float | None = None) -> FloatArray:
        """Lemma 4 bound ``x**_w / E[sigma] >= E x^n_w(inf)`` for every ``n``.

        ``x**_w = P(V > w) / (lambda (1 - rho))`` is the M/G/1 queue's expected time above
        ``w`` per regeneration cycle, with ``V`` its stationary workload (arrival rate
        ``lambda``, this service; :func:`mg1_workload_sf`, exact for exponential service);
        ``x**_0 = E[sigma] / (1 - rho)`` is the mean busy period. A JIQ server's cycle between
        arrivals to it while idle holds at least one service, so lasts ``E[sigma]`` or more on
        average: the fraction of time above ``w`` is at most ``x**_w / E[sigma]``, which is
        what this returns (``x**_w`` itself when ``E[sigma] = 1``).

        Parameters
        ----------
        w : array_like
            Points ``>= 0`` (``inf`` gives 0).
        step : float, optional
            Grid step of the renewal solver (see :func:`mg1_workload_sf`).

        Returns
        -------
        numpy.ndarray
            Array of the shape of ``numpy.asarray(w)``; non-increasing in ``w``.

        Raises
        ------
        TypeError
            If ``w`` is not numeric.
        ValueError
            If some ``w`` is negative or NaN.

        Examples
        --------
        >>> import math
        >>> from recursions.dists import Exponential
        >>> from loynes._jiq import jiq_equilibrium
        >>> eq = jiq_equilibrium(0.5, Exponential(1.0))
        >>> float(eq.lemma4_bound(2.0)) == math.exp(-0.5 * 2.0) / 0.5
        True
        """
        lam = self.rate_per_server
        z = mg1_workload_sf(lam, self.service, w, step=step)
        return z / (lam * (1.0 - self.load) * self.service.mean)

    def plot(self, ax: Any = None, *, w_max: float | None = None,
             times: Sequence[float] = ()) -> Any:
        """Draw the equilibrium profile ``x*_w`` against ``w`` (and transients, if asked).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        w_max : float, optional
            Largest level drawn (default: where ``x*_w`` falls below ``load / 1000``, at
            most 60 mean service times).
        times : sequence of float, default ()
            Times ``t`` at which to draw the fluid limit from empty, :meth:`transient`.

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
        >>> from recursions.dists import Exponential
        >>> ax = jiq_equilibrium(0.5, Exponential(1.0)).plot(times=[0.5, 2.0])
        >>> len(ax.lines), ax.get_ylabel()
        (3, 'fraction of servers with workload > w')
        """
        return _draw(self, ax, w_max=w_max, times=times)

    def _repr_html_(self) -> str:
        from recursions.common import html_table

        return html_table("JIQEquilibrium", [
            ("rate per server λ", self.rate_per_server), ("service", repr(self.service)),
            ("load ρ = x*_0", self.load),
            ("E[W] per server = ∫ x*_w dw", self.rate_per_server * float(
                self.service.mean**2 + self.service.var) / 2.0)])


def jiq_equilibrium(rate_per_server: float, service: Any) -> JIQEquilibrium:
    """Equilibrium objects of large-scale JIQ with ``lambda n`` arrivals and ``n`` servers.

    Parameters
    ----------
    rate_per_server : float
        Arrival rate per server ``lambda``, finite and > 0, with load
        ``lambda E[sigma] < 1`` (simulate ``n`` servers with ``rc.Poisson(lambda * n, ...)``).
    service : Law or scipy.stats frozen distribution
        Service law of any finite mean (see :func:`recursions.dists.as_law`).

    Returns
    -------
    JIQEquilibrium

    Raises
    ------
    TypeError
        If ``rate_per_server`` is not a real number or ``service`` not a law.
    ValueError
        If ``rate_per_server`` is not finite and > 0, or the load
        ``rate_per_server * E[sigma]`` is ``>= 1``.

    Examples
    --------
    >>> import scipy.stats
    >>> from loynes._jiq import jiq_equilibrium
    >>> eq = jiq_equilibrium(0.5, scipy.stats.gamma(2, scale=0.5))  # mean 1
    >>> eq.load
    0.5
    >>> jiq_equilibrium(1.0, scipy.stats.gamma(2, scale=0.5))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: rate_per_server must give a load rate_per_server * E[service] < 1, got 1.0 ...
    """
    return JIQEquilibrium(rate_per_server, service)


def _draw(eq: JIQEquilibrium, ax: Any = None, *, w_max: float | None = None,
          times: Sequence[float] = ()) -> Any:
    """Draw :meth:`JIQEquilibrium.plot <loynes.JIQEquilibrium.plot>`."""
    from recursions.common import axes, level_span, title

    ax = axes(ax, "JIQEquilibrium.plot()")
    top = level_span(eq.profile, eq.load, eq.service.mean) if w_max is None else float(w_max)
    w = np.linspace(0.0, top, 400)
    ax.plot(w, eq.profile(w), "-", lw=2, label="x*_w: equilibrium (every arrival finds an "
                                                 "idle server)")
    for t in times:
        ax.plot(w, eq.transient(w, float(t)), "--", lw=1,
                label=f"x↑_w(t): fluid limit from empty at t = {float(t):g}")
    ax.set_xlim(0.0, top)
    ax.set_ylim(bottom=0.0)
    ax.set_xlabel("workload level w")
    ax.set_ylabel("fraction of servers with workload > w")
    title(ax, "Large-scale JIQ (n → ∞): equilibrium workload profile",
          f"λ = {eq.rate_per_server:.4g} per server, service {eq.service!r}, "
          f"load {eq.load:.3g}")
    ax.legend(fontsize=8, loc="upper right")
    return ax
