"""Arrivals whose rate follows the clock: :class:`TimeVarying`, a periodic Poisson process.

A nonhomogeneous Poisson process of rate ``lambda(t)``, periodic with period ``T`` (a day, a
week), and i.i.d. service times. Seen from its customers it is a stationary ergodic input in
the sense of the theory (the cyclic sense): the phase ``t mod T`` at which successive customers
arrive is a stationary Markov chain whose law at an arrival has density
``lambda(phi) / int_0^T lambda`` (the Palm law of the phase), so the sequence of
``(sigma_n, tau_n)`` is stationary under the shift by one customer. The environment carried
from one draw to the next (the *carry* of the :class:`~recursions.Input` hooks) is the phase
of the next customer's arrival.

Arrivals are drawn exactly, by thinning: candidates of a Poisson process at the rate bound
``lambda_max`` are kept with probability ``lambda(t) / lambda_max``, forward in time or, for
backward draws, backward in time (the reversed process is Poisson with the reflected rate).
A piecewise-constant rate knows its bound; a callable rate is bounded by its largest value on
a fine grid (or by ``rate_max=``), and a candidate whose rate exceeds that bound stops the draw
with an error rather than bias it.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np

from recursions.common._checks import SCALE_MAX, SCALE_MIN, check_positive
from recursions.dists import as_law
from recursions.model._inputs import Input

__all__ = ["GRID_POINTS", "THINNING_BLOCK", "TimeVarying"]

GRID_POINTS = 4096
"""Points of one period at which a callable rate is evaluated for its bound and its mean."""

THINNING_BLOCK = 4096
"""Candidates thinned at once (the memory of a draw is of this order, whatever the rate)."""

_NONE = np.zeros(0)


class TimeVarying(Input):
    """Poisson arrivals at a periodic rate ``lambda(t)``, with i.i.d. service times.

    Parameters
    ----------
    rate : callable or sequence of float
        ``rate(t)`` for phases ``t`` in ``[0, period)``, taking and returning numpy arrays
        (vectorised); or the rates of equal pieces of the period (24 hourly rates of a day,
        say), piecewise constant.
    period : float
        The period ``T`` (> 0), in the time unit of the service times; kept as
        :attr:`cycle` (an input's ``period`` counts customers, and this one has none).
    service : law
        The service-time law (a ``recursions.dists`` law or a frozen ``scipy.stats`` law).
    rate_max : float, optional
        A bound on a callable rate (default: its largest value on :data:`GRID_POINTS` points,
        times 1.05). A draw that meets a larger rate raises ``ValueError``.

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> day = rc.TimeVarying(rate=[1.0, 3.0], period=24.0, service=rc.dists.Exponential(1.0))
    >>> day.arrival_rate, day.mean_service, day.cycle
    (2.0, 1.0, 24.0)
    >>> s, t = day.sample(4, rng=1)
    >>> len(s), bool((t >= 0).all())
    (4, True)
    """

    def __init__(self, rate: Any, period: float, service: Any, *,
                 rate_max: float | None = None) -> None:
        T = check_positive(period, "period")
        if not math.isfinite(T) or T > SCALE_MAX:
            raise ValueError(f"period must be finite and at most {SCALE_MAX:g}, got {T!r}")
        self.cycle = T
        self.rate, self.rate_max = rate, rate_max
        self.service = as_law(service, "service")
        self._pieces: np.ndarray | None = None
        if callable(rate):
            bound, mean = self._callable_bound()
        else:
            pieces = np.array(rate, dtype=np.float64).ravel()
            if pieces.size == 0 or not np.all(np.isfinite(pieces)) or np.any(pieces < 0):
                raise ValueError("rate must be a callable or a non-empty sequence of finite "
                                 "rates >= 0")
            if rate_max is not None:
                raise ValueError("rate_max= bounds a callable rate; a table knows its bound")
            pieces.flags.writeable = False
            self._pieces = pieces
            bound, mean = float(pieces.max()), float(pieces.mean())
        if not mean > 0:
            raise ValueError("rate must be positive somewhere in the period")
        if 1.0 / mean < SCALE_MIN:
            raise ValueError(f"the mean interarrival time 1 / {mean!r} is below {SCALE_MIN:g}: "
                             "change the time unit")
        self._bound, self._mean_rate = bound, mean

    def _callable_bound(self) -> tuple[float, float]:
        """A callable rate's bound and mean, from its values on a grid of the period."""
        grid = (np.arange(GRID_POINTS) + 0.5) * (self.cycle / GRID_POINTS)
        values = self.rate_at(grid)
        top = float(values.max()) * 1.05
        if self.rate_max is not None:
            top = check_positive(self.rate_max, "rate_max")
            if values.max() > top:
                raise ValueError(f"rate_max={self.rate_max!r} is below the rate's value "
                                 f"{float(values.max())!r} on the grid")
        return top, float(values.mean())

    # -- the rate ---------------------------------------------------------------------------

    def rate_at(self, t: Any) -> np.ndarray:
        """``lambda(t)`` at times ``t`` (any real numbers: taken modulo the period).

        Examples
        --------
        >>> import recursions as rc
        >>> rc.TimeVarying([1.0, 3.0], 10.0, rc.dists.Exponential(1.0)).rate_at([2.0, 7.0, 12.0])
        array([1., 3., 1.])
        """
        phase = np.mod(np.asarray(t, dtype=np.float64), self.cycle)
        if self._pieces is not None:
            k = np.minimum((phase * (self._pieces.size / self.cycle)).astype(np.int64),
                           self._pieces.size - 1)
            return self._pieces[k]
        values = np.asarray(self.rate(phase), dtype=np.float64)
        if values.shape != phase.shape:
            values = np.broadcast_to(values, phase.shape).astype(np.float64)
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError("rate(t) must return finite rates >= 0 (it is called on numpy "
                             "arrays of phases)")
        return values

    # -- what the samplers read --------------------------------------------------------------

    @property
    def mean_service(self) -> float:
        return float(self.service.mean)

    @property
    def mean_interarrival(self) -> float:
        """``T / int_0^T lambda``: one over the mean rate."""
        return 1.0 / self._mean_rate

    @property
    def service_bound(self) -> float:
        return float(self.service.support_max)

    @property
    def finite_variance(self) -> bool:
        return bool(math.isfinite(self.service.var))

    def finite_service_moment(self, k: int) -> bool:
        return bool(self.service.finite_moment(k))

    @property
    def correlation_length(self) -> float:
        """The customers of one period: the rate's pattern repeats after them."""
        return max(1.0, self.cycle * self._mean_rate)

    # -- the hooks --------------------------------------------------------------------------

    def _start(self, gen: np.random.Generator) -> tuple[Any, ...]:
        """Customer 0's phase, of density ``lambda(phi) / int lambda`` (Palm); nothing thinned.

        The carry is ``(phase, gaps, phases, origin, last)``: the phase of the next customer;
        the gaps and phases of the customers after it already thinned; the phase the thinning
        stands at, and the last arrival's time from there (``<= 0``).
        """
        while True:
            phi = gen.random(64) * self.cycle
            keep = gen.random(64) * self._bound < self._checked(phi)
            if keep.any():
                p = float(phi[np.argmax(keep)])
                return p, _NONE, _NONE, p, 0.0

    def phase_of(self, carry: tuple[Any, ...]) -> float:
        """The phase of the clock at which the customer of ``carry`` arrives."""
        return float(carry[0])

    def _forward(self, gens: tuple[np.random.Generator, ...], n: int, carry: Any
                 ) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
        gaps, carry = self._gaps(gens[1], n, carry, +1.0)
        return self.service.sample(gens[0], n), gaps, carry

    def _backward(self, gens: tuple[np.random.Generator, ...], n: int, carry: Any
                  ) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
        gaps, carry = self._gaps(gens[1], n, carry, -1.0)
        return self.service.sample(gens[0], n), gaps[::-1].copy(), carry

    def _gaps(self, gen: np.random.Generator, n: int, carry: tuple[Any, ...], sign: float
              ) -> tuple[np.ndarray, tuple[Any, ...]]:
        """``n`` gaps between successive arrivals from the one of ``carry``, and the new carry.

        Forward (``sign = 1``) they are the ``tau`` of the customers from the one at the
        carry's phase on, in order; backward, those of the ``n`` customers before it, nearest
        first. Candidates are thinned in blocks of :data:`THINNING_BLOCK`, and each block's
        gaps and phases are computed when it is drawn, whatever ``n``: how a run cuts its
        chunks changes no number.
        """
        _, gaps, phases, origin, last = carry
        q_gaps, q_phases = [gaps], [phases]
        have = gaps.size
        while have < n:
            cand = np.cumsum(gen.exponential(1.0 / self._bound, THINNING_BLOCK))
            at = origin + sign * cand
            kept = cand[gen.random(THINNING_BLOCK) * self._bound < self._checked(at)]
            q_gaps.append(np.diff(np.concatenate(([last], kept))))
            q_phases.append(np.mod(origin + sign * kept, self.cycle))
            last = (float(kept[-1]) if kept.size else last) - float(cand[-1])
            origin = float(np.mod(at[-1], self.cycle))
            have += kept.size
        gaps, phases = np.concatenate(q_gaps), np.concatenate(q_phases)
        phase = float(phases[n - 1]) if n else float(carry[0])
        return gaps[:n].copy(), (phase, gaps[n:], phases[n:], origin, last)

    def _identity(self) -> str:
        """A hash of the rate (its table; a callable's code and constants), for the repr.

        The repr is what a sweep's checkpoint compares: two rates that print alike differ
        here. A callable's closure values are not read.
        """
        h = hashlib.sha256()
        if self._pieces is not None:
            h.update(self._pieces.tobytes())
        else:
            code = getattr(self.rate, "__code__", None)
            h.update(repr((getattr(code, "co_code", None), getattr(code, "co_consts", None),
                           getattr(self.rate, "__defaults__", None))).encode())
        h.update(repr((self.cycle, self._bound)).encode())
        return h.hexdigest()[:8]

    def _checked(self, t: np.ndarray) -> np.ndarray:
        """The rate at ``t``, refusing a value above the thinning bound (it would bias)."""
        values = self.rate_at(t)
        if self._pieces is None and np.any(values > self._bound):
            raise ValueError(f"rate(t) = {float(values.max())!r} exceeds the bound "
                             f"{self._bound!r} taken for thinning: pass rate_max= (at least "
                             "the rate's largest value)")
        return values

    def __repr__(self) -> str:
        what = (f"<{self._pieces.size} pieces, mean {self._mean_rate:.4g}, max "
                f"{self._bound:.4g}>" if self._pieces is not None else
                f"{getattr(self.rate, '__name__', type(self.rate).__name__)} (mean "
                f"{self._mean_rate:.4g})")
        what += f" #{self._identity()}"
        return f"TimeVarying(rate={what}, period={self.cycle:g}, service={self.service!r})"
