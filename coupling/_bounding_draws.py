"""One exact draw of J_{p+1}SW or JIQ by bounding processes: the interval update and its runs.

The machinery behind :func:`coupling.bounded_sample` (whose module, :mod:`coupling._bounding`,
says why the draws are exact): the interval update of Lemma 2 compiled with numba, the
dominating single-server queue drawn backwards (reversed M/G/1 queue or certified walk), the
routing uniforms of the arrivals counted back from 0, and the run inside the FCFS sandwich on
``S - p`` servers (Lemma 4).
"""

# mypy: allow-untyped-defs, allow-incomplete-defs
from __future__ import annotations

import functools

import numpy as np

import recursions as rc
from coupling._dominating import ReversedQueue
from coupling._errors import CouplingNotReached
from coupling._fcfs_bounds import draw_fcfs
from coupling._ra_walk import RAWalk
from recursions.common import jit
from recursions.model import maps as maps
from recursions.vectors import add_at_rank, drain, random_rank

__all__ = ["bracket", "draw_bounded", "draw_in_fcfs", "interval_update"]


# -- the interval update (Lemma 2) --------------------------------------------------------------
@jit
def _lower_mixed(w, sigma, tau, r):
    """``w <- [min(R(w + sigma e_1), R(w + sigma e_r)) - tau 1]^+`` in place (``w[0] = 0``).

    One pass, as :func:`recursions.model.maps.envelope_rank`: both terms at coordinate ``i`` read
    only ``w[i]`` and ``w[i + 1]``.
    """
    s = w.size
    # a = R(w + sigma e_1) = R(sigma, w(2), ..., w(S)): sigma lands at index m
    m = 0
    while m + 1 < s and w[m + 1] < sigma:
        m += 1
    # b = R(w + sigma e_r): x lands at index j >= r
    x = w[r] + sigma
    j = r
    while j + 1 < s and w[j + 1] < x:
        j += 1
    for i in range(s):
        if i < m:
            a = w[i + 1]
        elif i == m:
            a = sigma
        else:
            a = w[i]
        if i < r or i > j:
            b = w[i]
        elif i < j:
            b = w[i + 1]
        else:
            b = x
        v = (a if a < b else b) - tau
        w[i] = v if v > 0.0 else 0.0


@jit
def interval_update(lo, hi, sigma, tau, r):
    """``(lo, hi) <- (Psi(lo, hi), Phi(lo, hi))`` in place; ``r`` the busy rank (0-based)."""
    s = lo.size
    if lo[0] > 0.0:  # every x busy: rank r for all
        add_at_rank(lo, 0, s, r, sigma)
        add_at_rank(hi, 0, s, r, sigma)
        drain(lo, tau)
        drain(hi, tau)
    elif hi[0] == 0.0:  # every x idle: rank 0 for all
        add_at_rank(lo, 0, s, 0, sigma)
        add_at_rank(hi, 0, s, 0, sigma)
        drain(lo, tau)
        drain(hi, tau)
    else:  # mixed
        maps.envelope_rank(hi, sigma, tau, r)
        _lower_mixed(lo, sigma, tau, r)


@jit
def bracket(lo, hi, sig, tau, us, jiq, p):
    """Run the interval update through the arrivals; whether ``lo == hi`` at the end."""
    s = lo.size
    for k in range(sig.size):
        r = random_rank(us[k], s) if jiq else p
        interval_update(lo, hi, sig[k], tau[k], r)
    for i in range(s):
        if lo[i] != hi[i]:
            return False
    return True


# -- the dominating single-server queue and the input path ------------------------------------
class _Routing:
    """Routing uniforms of the arrivals counted back from 0 (row ``k``: the ``k+1``-th latest).

    A later try from further back gives the same customers the same uniforms.
    """

    def __init__(self, system: rc.System, gen: np.random.Generator) -> None:
        self.system, self.gen = system, gen
        self.rows = np.empty(0)

    def latest(self, m: int) -> np.ndarray:
        """Uniforms of the ``m`` latest arrivals before 0, in increasing time."""
        if self.system.uniforms == 0:
            return np.zeros(m)
        have = self.rows.size
        if have < m:
            k = max(m - have, have, 64)
            more = np.asarray(self.system.innovations(self.gen, k), dtype=np.float64)
            self.rows = np.concatenate((self.rows, more[:, 0]))
        return np.ascontiguousarray(self.rows[:m][::-1])


@jit
def _lindley(v, t0, times, services, t1):
    """Workload at ``t1`` of one server holding ``v`` at ``t0``, arrivals ``times`` (ascending)."""
    t = t0
    for k in range(times.size):
        v = v - (times[k] - t)
        v = (v if v > 0.0 else 0.0) + services[k]
        t = times[k]
    v = v - (t1 - t)
    return v if v > 0.0 else 0.0


class _ReversedPast:
    """The stationary M/G/1 queue fed by every customer, known back from time 0.

    ``reach(T)`` returns ``V(-T)`` and the arrivals in ``(-T, 0]`` in increasing time, with
    their services and the times to the next arrival (the first entry is a pseudo-arrival at
    ``-T`` with no work, which only drains the start). The reversed queue is only ever
    advanced to the fixed times ``leg 2**j`` (each stop rounds its state), so the path, to the
    last bit, does not depend on the horizons asked for; ``V(-T)`` is carried from the next
    stop beyond ``-T`` by Lindley's recursion.
    """

    def __init__(self, inp: rc.Renewal, gen: np.random.Generator, leg: float) -> None:
        self.queue = ReversedQueue(inp.arrival_rate, inp.service, gen, "ps")
        self.leg, self.known = leg, 0.0
        self.t = np.empty(0)  # arrival times, decreasing (customer -1 first)
        self.s = np.empty(0)

    def reach(self, T: float):
        while self.known < T:
            self.known = self.leg if self.known == 0.0 else 2.0 * self.known
            t, x = self.queue.advance(self.known)
            self.t = np.concatenate((self.t, t))
            self.s = np.concatenate((self.s, x))
        n = int(np.count_nonzero(self.t > -T))  # the arrivals after -T come first
        older_t, older_s = self.t[n:][::-1], self.s[n:][::-1]
        v = _lindley(self.queue.workload, -self.known, np.ascontiguousarray(older_t),
                     np.ascontiguousarray(older_s), -T)
        times = np.concatenate(([-T], self.t[:n][::-1], [0.0]))
        sig = np.concatenate(([0.0], self.s[:n][::-1]))
        return v, sig, np.maximum(np.diff(times), 0.0), n, T, T


class _WalkPast:
    """The Lindley supremum of the reversed walk ``sigma - tau`` with certificates.

    ``reach(n)`` moves to the first certified customer ``-N`` with ``N >= n`` and returns a
    bound of ``V(-N)`` and the customers ``-N, ..., -1`` in increasing time.
    """

    def __init__(self, template: RAWalk, gen: np.random.Generator) -> None:
        self.walk = template.fresh(gen)

    def reach(self, n: int):
        walk = self.walk
        while True:
            ks, bounds = walk.checkpoints()
            if ks.size and ks[-1] >= n:
                break
            walk.advance()
        i = int(np.searchsorted(ks, n))
        N = int(ks[i])
        _, s, t = walk.path()
        sig, tau = np.ascontiguousarray(s[:N][::-1]), np.ascontiguousarray(t[:N][::-1])
        return float(bounds[i, 0]), sig, tau, N, N, float(tau.sum())


def _one(system, jiq, p, past, routing, start, cap, unit):
    """One exact draw: bracket from ``-T`` for ``T = start, 2 start, ...`` up to ``cap``.

    ``start`` and ``cap`` count ``unit`` ("time" or "customers").

    Returns the state at 0, the customers back and the time back.
    """
    S = system.servers
    T = start
    while True:
        v, sig, tau, n, horizon, back = past.reach(T)
        m = sig.size
        us = routing.latest(n)
        if m > n:  # the pseudo-arrival at -T joins no rank that matters (it brings no work)
            us = np.concatenate(([0.0], us))
        lo, hi = np.zeros(S), np.full(S, v)
        if bracket(lo, hi, sig, tau, us, jiq, p):
            return lo, n, back
        if horizon >= cap:
            within = f"time {cap:g}" if unit == "time" else f"{cap:g} customers"
            raise CouplingNotReached(
                f"the bounding processes of {system!r} did not meet within {within} back; "
                f"raise cap_{unit} (they meet at the latest when the single-server queue fed by "
                "every customer empties, which gets rare as lam E[sigma] approaches 1)")
        T = min(2 * horizon, cap)


class _InFCFS:
    """The bounding processes of J_{p+1}SW run inside the sandwich of FCFS on ``S - p`` servers.

    The FCFS sampler of :func:`coupling.perfect_sample` supplies, at a past instant ``-T``, a
    sorted vector ``B`` above the stationary FCFS G/G/(S - p) state fed by every customer, and
    the arrivals after ``-T`` with their services. By Lemma 4 the stationary J_{p+1}SW state
    at ``-T`` lies below ``(B(1), .., B(1), B)`` (``p + 1`` copies of ``B(1)``); the interval
    update runs from there and from 0 to time 0.
    """

    def __init__(self, servers: int, p: int, gen: np.random.Generator | None = None) -> None:
        self.servers, self.p = servers, p  # gen: no routing uniforms for J_{p+1}SW

    def sandwich(self, upper: np.ndarray, T: float, times: np.ndarray,
                 sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bounds at 0 from ``0`` and from the embedded ``upper`` at ``-T``.

        Nothing arrives between ``-T`` and the first arrival, so the bound is drained to it
        first (as in :class:`coupling._dominated_maps.DominatedMap`).
        """
        m = times.size
        first = float(times[0]) if m else 0.0
        y = np.maximum(np.sort(upper) - (first + T), 0.0)
        hi = np.concatenate((np.full(self.p, y[0]), y))
        lo = np.zeros(self.servers)
        if m:
            tau = np.maximum(np.diff(np.append(times, 0.0)), 0.0)
            sig = np.ascontiguousarray(sigma, dtype=np.float64)
            bracket(lo, hi, sig, tau, np.zeros(m), False, self.p)
        return lo, hi


def draw_in_fcfs(sd, system, p, inp, bound, start, cap):
    """One draw by bounding processes inside the FCFS (S - p)-server sandwich (Lemma 4)."""
    fcfs = rc.JSW(system.servers - p)
    inside = functools.partial(_InFCFS, system.servers, p)
    try:
        return draw_fcfs(sd, fcfs, inp, start, cap, bound, inside)
    except CouplingNotReached as err:
        raise CouplingNotReached(
            f"the bounding processes of {system!r}, started above the FCFS bound on "
            f"{system.servers - p} servers, did not meet: {err} (they meet at the latest when "
            f"that FCFS queue fed by every customer empties, which gets rare as lam E[sigma] "
            f"approaches S - p = {system.servers - p})") from None


def draw_bounded(sd, system, jiq, p, inp, walks, start, cap):
    """One draw from the seed ``sd`` (see :func:`coupling._bounding.bounded_method`)."""
    g_path, g_route = np.random.default_rng(sd).spawn(2)
    past: _WalkPast | _ReversedPast
    if walks is not None:
        past, unit = _WalkPast(walks.template(), g_path), "customers"
    else:
        past, unit = _ReversedPast(inp, g_path, 8.0 * inp.mean_interarrival), "time"
    return _one(system, jiq, p, past, _Routing(system, g_route), start, cap, unit)
