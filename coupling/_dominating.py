"""Dominating processes simulated backwards in time from stationarity.

The theory: :ref:`theory-exact-dominated`.

With Poisson arrivals of rate ``lam`` and i.i.d. service times of law ``F`` (mean ``m``):

* an **M/G/1 queue under processor sharing** is a symmetric queue (Kelly): in equilibrium it
  holds ``N ~ Geometric(rho)`` customers (``P(N = n) = (1 - rho) rho^n``), each with a
  size-biased total requirement split uniformly into attained and residual service, and its
  time reversal is again an M/G/1-PS queue in which attained and residual service swap roles;
* the **M/G/infinity queue** likewise, with ``N ~ Poisson(lam m)``.

Running the reversed queue forward in reversed time ``s = -t`` therefore produces, exactly, the
stationary forward process on ``[-s, 0]``: every time a reversed residual reaches 0, a forward
customer *arrives* at ``t = -s`` with its full service requirement. The forward workload at
``-s`` is the sum of the present customers' reversed attained service.

The random-assignment system (each of ``S`` servers an independent M/G/1 fed with rate
``lam / S``) dominates FCFS M/G/S in the sorted-vector order (Connor & Kendall 2015), and the
M/G/infinity queue dominates the loss system (its customers are a superset). The workload of a
single server does not depend on its discipline, so simulating each server under processor
sharing gives the random-assignment workloads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recursions import dists
from recursions.common import jit

__all__ = ["ReversedQueue", "size_biased_sample", "support_max"]


def size_biased_sample(law: Any, gen: np.random.Generator, n: int) -> np.ndarray:
    """Draw ``n`` values from the size-biased law ``x F(dx) / m``.

    Calls :meth:`recursions.dists.Law.size_biased_sample`: closed forms for the laws of
    :mod:`recursions.dists` that have one, fast numerical inversion of ``x pdf(x) / m`` for a
    continuous scipy law, otherwise numerical inversion of
    ``F~(x) = 1 - (integral_x^inf sf + x sf(x)) / m`` by bisection.

    Parameters
    ----------
    law : recursions.dists.Law or scipy.stats distribution
        The law ``F`` (see :func:`recursions.dists.as_law`).
    gen : numpy.random.Generator
        Source of randomness.
    n : int
        How many.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> x = size_biased_sample(rc.dists.Exponential(1.0), np.random.default_rng(0), 100_000)
    >>> round(float(x.mean()), 1)   # E[sigma^2] / E[sigma] = 2
    2.0
    """
    return dists.as_law(law, "law").size_biased_sample(gen, n)


def support_max(law: Any) -> float:
    """Least ``b`` with ``P(sigma <= b) = 1`` (``inf`` for unbounded laws).

    Parameters
    ----------
    law : recursions.dists.Law or scipy.stats distribution
        The law (see :func:`recursions.dists.as_law`); its
        :attr:`~recursions.dists.Law.support_max`.

    Returns
    -------
    float

    Examples
    --------
    >>> import recursions as rc, scipy.stats
    >>> support_max(rc.dists.Uniform(0.5, 2.0)), support_max(rc.dists.Exponential(1.0))
    (2.0, inf)
    >>> support_max(scipy.stats.beta(2, 3, scale=4.0))
    4.0
    """
    return float(dists.as_law(law, "law").support_max)


@jit
def _advance(ps, rate, rev, tot, n, s, nxt, target, stop_empty, gaps, gi, servs, si, out_t,
             out_s, no):
    """Event loop of the reversed queue; returns ``(n, s, nxt, gi, si, no, status)``.

    ``status``: 0 done (target reached, or empty when ``stop_empty``), 1 needs more arrival
    gaps, 2 more services, 3 more room for customers, 4 more room for output. The state is
    only changed by complete events, so the caller can refill and call again.
    """
    while True:
        if stop_empty and n == 0:
            return n, s, nxt, gi, si, no, 0
        speed = 1.0 / n if (ps and n > 0) else 1.0
        i = -1
        t_done = np.inf
        if n > 0:
            i = 0
            for k in range(1, n):
                if rev[k] < rev[i]:
                    i = k
            t_done = s + rev[i] / speed
        t_next = t_done if t_done < nxt else nxt
        if t_next > target:
            for k in range(n):
                rev[k] -= (target - s) * speed
            return n, target, nxt, gi, si, no, 0
        if t_done <= nxt:  # a forward arrival at t = -t_next
            if no >= out_t.size:
                return n, s, nxt, gi, si, no, 4
            for k in range(n):
                rev[k] -= (t_next - s) * speed
            s = t_next
            out_t[no] = -s
            out_s[no] = tot[i]
            no += 1
            n -= 1
            rev[i] = rev[n]
            tot[i] = tot[n]
        else:  # a reversed arrival (a forward departure) with its full requirement
            if si >= servs.size:
                return n, s, nxt, gi, si, no, 2
            if gi >= gaps.size:
                return n, s, nxt, gi, si, no, 1
            if n >= rev.size:
                return n, s, nxt, gi, si, no, 3
            for k in range(n):
                rev[k] -= (t_next - s) * speed
            s = t_next
            rev[n] = servs[si]
            tot[n] = servs[si]
            si += 1
            n += 1
            nxt = s + gaps[gi] / rate
            gi += 1


class ReversedQueue:
    """A stationary M/G/1-PS (``kind="ps"``) or M/G/infinity queue run in reversed time.

    Parameters
    ----------
    rate : float
        Poisson arrival rate.
    law : recursions.dists.Law or scipy.stats distribution
        Service law (see :func:`recursions.dists.as_law`).
    gen : numpy.random.Generator
        Its source of randomness; separate child streams feed the initial state, the arrival
        gaps and the service times, so advancing in one leg or several gives the same path.
    kind : {"ps", "infinite"}
        Processor sharing single server, or infinitely many servers.

    Examples
    --------
    >>> import numpy as np, recursions as rc
    >>> q = ReversedQueue(0.5, rc.dists.Exponential(1.0), np.random.default_rng(1))
    >>> t, x = q.advance(100.0)
    >>> bool(np.all(t <= 0) and np.all(np.diff(t) <= 0))
    True
    """

    POOL = 512

    def __init__(self, rate: float, law: dists.Law, gen: np.random.Generator,
                 kind: str = "ps") -> None:
        if kind not in ("ps", "infinite"):
            raise ValueError(f"kind must be 'ps' or 'infinite', got {kind!r}")
        law = dists.as_law(law, "law")
        self.rate, self.law, self.kind = float(rate), law, kind
        g0, self._g_gap, self._g_srv = gen.spawn(3)
        load = rate * law.mean
        if kind == "ps":
            if not load < 1:
                raise ValueError(f"the M/G/1 load must be < 1 for a stationary queue, got {load}")
            n0 = int(g0.geometric(1.0 - load)) - 1  # P(N = n) = (1 - load) load^n
        else:
            n0 = int(g0.poisson(load))
        total = size_biased_sample(law, g0, n0)
        cap = max(16, 2 * n0)
        self._tot = np.zeros(cap)
        self._rev = np.zeros(cap)
        self._tot[:n0] = total
        self._rev[:n0] = g0.random(n0) * total  # reversed residual = forward attained
        self._n = n0
        self.s = 0.0
        self._gaps = self._g_gap.standard_exponential(self.POOL)
        self._gi = 1
        self._nxt = float(self._gaps[0]) / self.rate
        self._servs = np.asarray(law.sample(self._g_srv, self.POOL), dtype=np.float64)
        self._si = 0

    @property
    def workload(self) -> float:
        """Forward workload at forward time ``-s``: the present customers' residual service."""
        n = self._n
        return float(np.sum(self._tot[:n] - self._rev[:n]))

    @property
    def number(self) -> int:
        """Customers present at forward time ``-s``."""
        return int(self._n)

    def advance(self, s_target: float,
                stop_when_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Run reversed time up to ``s_target``; return the forward arrivals met on the way.

        Parameters
        ----------
        s_target : float
            Reversed time to reach (nothing happens if it is not beyond ``s``; ``inf`` with
            ``stop_when_empty`` runs to the next empty time).
        stop_when_empty : bool
            Stop early at the first reversed time the queue is empty.

        Returns
        -------
        times, services : numpy.ndarray
            Forward arrival times ``t = -s`` (decreasing) and their service times.
        """
        if s_target <= self.s or (stop_when_empty and self._n == 0):
            return np.empty(0), np.empty(0)
        out_t = np.empty(64)
        out_s = np.empty(64)
        no = 0
        ps = self.kind == "ps"
        while True:
            (self._n, self.s, self._nxt, self._gi, self._si, no, status) = _advance(
                ps, self.rate, self._rev, self._tot, self._n, self.s, self._nxt,
                float(s_target), stop_when_empty, self._gaps, self._gi, self._servs, self._si,
                out_t, out_s, no)
            if status == 0:
                return out_t[:no].copy(), out_s[:no].copy()
            if status == 1:
                self._gaps = self._g_gap.standard_exponential(self.POOL)
                self._gi = 0
            elif status == 2:
                self._servs = np.asarray(self.law.sample(self._g_srv, self.POOL), dtype=float)
                self._si = 0
            elif status == 3:
                self._rev = np.concatenate((self._rev, np.zeros(self._rev.size)))
                self._tot = np.concatenate((self._tot, np.zeros(self._tot.size)))
            else:
                out_t = np.concatenate((out_t, np.empty(out_t.size)))
                out_s = np.concatenate((out_s, np.empty(out_s.size)))
