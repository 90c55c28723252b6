"""The random-assignment bound for renewal input, simulated backwards in equilibrium.

With arrivals a renewal process (not Poisson), the ``S`` queues of the random-assignment (RA)
system are no longer independent, but seen by arrivals they are Lindley recursions driven by
one sequence of i.i.d. vectors. Number the customers backwards from the one arriving at time
0: customer ``-k`` has service ``sigma_k``, goes to server ``U_k`` (uniform) and is followed
``tau_k`` later by customer ``-k + 1``. The RA workload at server ``i`` seen by customer
``-n`` is

    ``w_i(-n) = max_{m >= n} (P^i_m - P^i_n)``,
    ``P^i_m = sum_{k <= m} (sigma_k 1{U_k = i} - tau_k)``,

the future maximum of an ``S``-dimensional random walk with negative drift (Blanchet, Pei &
Sigman, "Exact sampling for some multi-dimensional queueing models with renewal input").

:class:`RAWalk` draws the walk lazily, with *certificates*: indices ``n`` with caps ``C``
such that the whole rest of the walk satisfies ``P^i_m <= C_i`` for ``m >= n``, hence
``w_i(-n) <= C_i - P^i_n``. It is exact: the increments it returns have their i.i.d. law,
and the caps hold. The tools are

* the event "some coordinate rises more than ``y_i`` above its present value", drawn as a
  Bernoulli variable together with the path up to that rise, under the mixture of the ``S``
  exponential tilts with the Cramer root ``theta`` (``E[exp(theta X^i)] = 1``) and weights
  ``exp(-theta y_i)``; the likelihood ratio is at most ``sum_i exp(-theta y_i)``, which is
  kept ``<= 1/2`` by using margins ``y_i >= a = log(2 S) / theta``;
* rejection sampling of the walk conditioned on staying under the caps: walk until every
  coordinate is ``a`` below its cap (reject if one crosses), then reject if the rest rises
  above a cap (the Bernoulli above);
* tightening: the caps are renewed to ``P_n + a`` whenever the Bernoulli says the walk never
  again rises by ``a``, so the bounds stay of order ``a``.

With ``routing="cyclic"`` customer ``-k`` joins server ``(phase - k) mod S`` instead, the
phase uniform (round robin seen by an arrival). The increments then depend on ``k mod S``
through the routing only; the tilt of coordinate ``j`` tilts every ``tau`` and the services
of ``j``'s customers, its likelihood ratio ``exp(theta P^j) L**-(n - S n_j)`` (``L`` the
interarrival transform at ``-theta``, ``n_j`` the customers of ``j`` among ``n`` steps) is a
martingale when ``theta`` is the root of ``M_sigma(theta) L**S = 1``, and the margin grows by
``log(M_sigma(theta)) / theta`` to keep the mixture's ratio below ``1/2``.

Service laws need a finite moment generating function near 0 (see :mod:`coupling._tilting`).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np

from coupling import _ra_walk_kernels as kern
from coupling._ra_walk_kernels import ra_known_from
from coupling._tilting import cramer_root, log_mgf, mgf, tilted_sampler
from recursions import dists
from recursions.common import check_int

__all__ = ["RAWalk", "ra_known_from"]

_BLOCK = 128


class RAWalk:
    """The backward walk of a random or cyclic assignment, with certificates of its maximum.

    Parameters
    ----------
    servers : int
        Number of servers ``S``.
    service, interarrival : recursions.dists.Law or scipy.stats distribution
        Laws of ``sigma`` and ``tau`` (see :func:`recursions.dists.as_law`);
        ``E[sigma] < S E[tau]``. The service law needs a finite moment generating function at
        the Cramer root (a law without one is refused by name).
    gen : numpy.random.Generator
        The only source of randomness.
    theta : float, optional
        The Cramer root, when already known (it is found numerically otherwise; use
        :meth:`fresh` for many walks of one system).
    routing : {"random", "cyclic"}, default "random"
        Random assignment, or round robin with a uniform phase.

    Attributes
    ----------
    theta : float
        The Cramer root (``inf`` when the walk can never rise: then every bound is 0).
    margin : float
        ``a = log(2 S) / theta`` (plus ``log(M_sigma(theta)) / theta`` for cyclic routing).
    phase : int
        Cyclic routing: customer ``-k`` joins server ``(phase - k) mod S`` (0 for random).

    Examples
    --------
    >>> import numpy as np
    >>> from recursions.dists import Erlang, Exponential
    >>> walk = RAWalk(2, Exponential(1.0), Erlang(2, 2.5), np.random.default_rng(1))
    >>> for _ in range(3):
    ...     walk.advance()
    >>> k, bounds = walk.checkpoints()
    >>> bool(np.all(np.diff(k) >= 0)), bounds.shape[1]
    (True, 2)
    """

    def __init__(self, servers: int, service: Any, interarrival: Any,
                 gen: np.random.Generator, theta: float | None = None,
                 routing: str = "random") -> None:
        S = check_int(servers, "servers", 1)
        if routing not in ("random", "cyclic"):
            raise ValueError(f"routing must be 'random' or 'cyclic', got {routing!r}")
        self.routing = routing
        service = dists.as_law(service, "service")
        interarrival = dists.as_law(interarrival, "interarrival")
        drift = service.mean / S - interarrival.mean
        if not drift < 0:
            raise ValueError(f"the random-assignment walk does not drift down (load per "
                             f"server {service.mean / (S * interarrival.mean):.4g} >= 1)")
        self.S, self.service, self.interarrival, self._gen = S, service, interarrival, gen

        log_s = math.log(S)
        log_rest = math.log(S - 1) if S > 1 else -math.inf

        def walk_log_mgf(th: float) -> float:  # log E exp(th (sigma 1{U = i} - tau))
            ls = log_mgf(service, th)
            if ls == math.inf:
                return math.inf
            return log_mgf(interarrival, -th) + float(np.logaddexp(log_rest, ls)) - log_s

        def cycle_log_mgf(th: float) -> float:  # log E exp(th (sigma - tau_1 - ... - tau_S))
            ls = log_mgf(service, th)
            if ls == math.inf:
                return math.inf
            return ls + S * log_mgf(interarrival, -th)

        cyclic = routing == "cyclic"
        if theta is None:
            if cyclic:
                theta = cramer_root(cycle_log_mgf, service.mean - S * interarrival.mean,
                                    service.mean + S * interarrival.mean)
            else:
                theta = cramer_root(walk_log_mgf, drift, service.mean + interarrival.mean)
        self.theta = float(theta)
        finite = math.isfinite(self.theta)
        self.margin = math.log(2.0 * S) / self.theta if finite else 0.0
        if finite and cyclic:
            # the likelihood ratio of a coordinate's tilt carries L**(n - S n_j), within a
            # factor M of 1: widen the margin by log(M) / theta to keep dP/dQ <= 1/2
            self._log_l = log_mgf(interarrival, -self.theta)
            self.margin += log_mgf(service, self.theta) / self.theta
        if finite:
            ms = mgf(service, self.theta)
            self._q = ms / (S - 1 + ms)  # P(U = j) under the tilt of coordinate j
            self._sig_t = tilted_sampler(service, self.theta)
            self._tau_t = tilted_sampler(interarrival, -self.theta)
        self._reset()

    def fresh(self, gen: np.random.Generator) -> RAWalk:
        """A new walk for the same system (the root and tilts reused), drawn from ``gen``.

        Parameters
        ----------
        gen : numpy.random.Generator
            The new walk's only source of randomness.

        Returns
        -------
        RAWalk
            An independent walk at its start.
        """
        new = copy.copy(self)
        new._gen = gen
        new._reset()
        return new

    def _reset(self) -> None:
        S = self.S
        # cyclic routing: customer -k joins server (phase - k) mod S, customer n >= 0 joins
        # (phase + n) mod S; the phase is uniform (the arrival-stationary version)
        self.phase = int(self._gen.integers(0, S)) if self.routing == "cyclic" else 0
        self._streams: dict[str, _Draws] = {}
        self._u: list[np.ndarray] = []
        self._s: list[np.ndarray] = []
        self._t: list[np.ndarray] = []
        self.K = 0
        self._pos = np.zeros(S)
        self._caps: np.ndarray | None = None
        self._ck_k: list[int] = []
        self._ck_b: list[np.ndarray] = []
        self._cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._bufs: dict[int, _Draws] = {}

    # -- drawing increments (from pre-drawn blocks: the draws are i.i.d.) ---------------------
    def _draw_plain(self, n: int):
        g = self._gen
        u = g.integers(0, self.S, n)
        s = np.asarray(self.service.sample(g, n), dtype=np.float64)
        t = np.asarray(self.interarrival.sample(g, n), dtype=np.float64)
        return u, s, t

    def _draw_tilted(self, j: int, n: int):
        """Increments under the tilt of coordinate ``j`` (its walk then drifts up)."""
        g = self._gen
        mine = g.random(n) < self._q
        other = g.integers(0, self.S - 1, n) if self.S > 1 else np.zeros(n, dtype=np.int64)
        u = np.where(mine, j, other + (other >= j))
        s = np.where(mine, self._sig_t(g, n), np.asarray(self.service.sample(g, n)))
        t = self._tau_t(g, n)
        return u, s.astype(np.float64), t

    def _plain(self) -> _Draws:
        if -1 not in self._bufs:
            self._bufs[-1] = _Draws(self._draw_plain)
        return self._bufs[-1]

    def _tilted(self, j: int) -> _Draws:
        if j not in self._bufs:
            self._bufs[j] = _Draws(lambda n: self._draw_tilted(j, n))
        return self._bufs[j]

    # -- the two primitives ---------------------------------------------------------------
    def _rises(self, margins: np.ndarray, k0: int):
        """Draw whether some coordinate ever rises above its margin; the path if it does.

        Returns ``None`` (it never does) or ``(u, s, t, end)``: the path up to the first rise
        and the walk's displacement there. ``k0`` is the present index.
        """
        logpi, j = kern.pick_tilt(margins, self.theta, self._gen.random())
        if self.routing == "cyclic":
            return self._rises_cyclic(margins, k0, logpi, j)
        blk = self._tilted(j)
        while True:
            k, end = kern.walk_to_rise(*blk.arrays, blk.i, margins)
            if k >= 0:
                break
            blk.refill()
        i0, blk.i = blk.i, k
        log_lr = kern.log_lr(logpi, self.theta, end)  # log dP/dQ at the first rise, < log(1/2)
        if math.log(self._gen.random()) >= log_lr:
            return None
        return (*(x[i0:k].copy() for x in blk.arrays), end)

    def _descend(self, room: np.ndarray, k0: int):
        """Walk (under P) until every coordinate is ``a`` below its cap.

        Returns ``None`` if one crosses its cap first. ``room`` is cap minus the present
        position and ``k0`` the present index. At least one step is taken.
        """
        if self.routing == "cyclic":
            return self._descend_cyclic(room, k0)
        blk = self._plain()
        while True:
            status, k, end = kern.walk_to_descend(*blk.arrays, blk.i, room, self.margin)
            if status >= 0:
                break
            blk.refill()
        i0, blk.i = blk.i, k
        if status == 0:
            return None
        return (*(x[i0:k].copy() for x in blk.arrays), end)

    def _stream(self, name: str) -> _Draws:
        if name not in self._streams:
            g, th = self._gen, self.theta
            law = self.service if name[0] == "s" else self.interarrival
            if name[1] == "t":
                draw = tilted_sampler(law, th if name[0] == "s" else -th)
            else:
                def draw(gen, n, law=law):
                    return np.asarray(law.sample(gen, n), dtype=np.float64)
            self._streams[name] = _Draws(lambda n, draw=draw, g=g: (draw(g, n),))
        return self._streams[name]

    def _routes(self, k0: int, n: int) -> np.ndarray:
        return (self.phase - (k0 + 1 + np.arange(n))) % self.S

    def _rises_cyclic(self, margins, k0, logpi, j):
        tt, st, sp = self._stream("tt"), self._stream("st"), self._stream("sp")
        while True:
            n, it, ist, isp, end = kern.cyclic_to_rise(tt.a, tt.i, st.a, st.i, sp.a, sp.i, j,
                                                   self.phase, k0, margins)
            if n >= 0:
                break
            (tt, st, sp)[-n - 1].refill()
        u = self._routes(k0, n)
        mine = u == j
        s = np.empty(n)
        s[mine] = st.a[st.i:ist]
        s[~mine] = sp.a[sp.i:isp]
        t = tt.a[tt.i:it].copy()
        tt.i, st.i, sp.i = it, ist, isp
        counts = np.bincount(u, minlength=self.S)
        # dP_j/dP = exp(theta D_j) L**-(n - S n_j) on the excursion (n steps, n_j to server j)
        log_lr = kern.log_lr(logpi - (n - self.S * counts) * self._log_l, self.theta, end)
        if math.log(self._gen.random()) >= log_lr:
            return None
        return u, s, t, end

    def _descend_cyclic(self, room, k0):
        tp, sp = self._stream("tp"), self._stream("sp")
        while True:
            status, n, itp, isp, end = kern.cyclic_to_descend(tp.a, tp.i, sp.a, sp.i, self.phase,
                                                          k0, room, self.margin)
            if status >= 0:
                break
            (tp, sp)[-status - 1].refill()
        u = self._routes(k0, n)
        s, t = sp.a[sp.i:isp].copy(), tp.a[tp.i:itp].copy()
        tp.i, sp.i = itp, isp
        if status == 0:
            return None
        return u, s, t, end

    # -- bookkeeping ----------------------------------------------------------------------
    def _append(self, u, s, t, end) -> None:
        self._u.append(np.asarray(u, dtype=np.int64))
        self._s.append(s)
        self._t.append(t)
        self.K += u.size
        self._pos = self._pos + end
        self._cache = None

    def _mark(self) -> None:
        assert self._caps is not None
        room = self._caps - self._pos
        slack = 1e-9 * (abs(self._caps).max() + self.margin + 1.0)  # rounding of the sums
        b = np.maximum(room + slack, 0.0)
        if self._ck_k and self._ck_k[-1] == self.K:
            self._ck_b[-1] = np.minimum(self._ck_b[-1], b)
        else:
            self._ck_k.append(self.K)
            self._ck_b.append(b)

    def advance(self) -> None:
        """Extend the walk to a new certificate further back (or a tighter one)."""
        S, a = self.S, self.margin
        if not math.isfinite(self.theta):  # never rises: every index certifies w = 0
            u, s, t = self._draw_plain(1)
            if self.routing == "cyclic":
                u = self._routes(self.K, 1)
            inc = -t[0] * np.ones(S)
            inc[u[0]] += s[0]
            self._append(u, s, t, inc)
            self._caps = self._pos.copy()
            self._mark()
            return
        if self._caps is None:
            while True:
                ev = self._rises(np.full(S, a), self.K)
                if ev is None:
                    self._caps = self._pos + a
                    self._mark()
                    return
                self._append(*ev)
        while True:  # sample P( . | the walk stays under the caps from K on)
            room = self._caps - self._pos
            ev = self._rises(np.full(S, a), self.K)
            if ev is None:  # it never rises by a: inside the caps, and tighter caps
                self._caps = np.minimum(self._caps, self._pos + a)
                self._mark()
                break
            u1, s1, t1, e1 = ev
            if kern.path_exceeds(u1, s1, t1, room):
                continue
            if (room - e1 >= a).all():
                u2, s2, t2 = np.empty(0, np.int64), np.empty(0), np.empty(0)
                e2 = e1
            else:
                d = self._descend(room - e1, self.K + u1.size)
                if d is None:
                    continue
                u2, s2, t2, e2 = d
                e2 = e1 + e2
            if self._rises(room - e2, self.K + u1.size + u2.size) is not None:
                continue
            self._append(np.concatenate((u1, u2)), np.concatenate((s1, s2)),
                         np.concatenate((t1, t2)), e2)
            self._mark()
            return
        while True:  # after tightening, move on
            room = self._caps - self._pos
            d = self._descend(room, self.K)
            if d is None:
                continue
            if self._rises(room - d[3], self.K + d[0].size) is not None:
                continue
            self._append(*d)
            self._mark()
            return

    # -- results --------------------------------------------------------------------------
    def path(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(U, sigma, tau)`` of customers ``-1, -2, ..., -K`` (index ``k - 1``)."""
        if self._cache is None:
            if self.K == 0:
                self._cache = (np.empty(0, np.int64), np.empty(0), np.empty(0))
            else:
                self._cache = (np.concatenate(self._u), np.concatenate(self._s),
                               np.concatenate(self._t))
        return self._cache

    def checkpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """Certified indices ``n`` and bounds ``b`` with ``w(-n) <= b`` coordinatewise."""
        if not self._ck_k:
            return np.empty(0, np.int64), np.empty((0, self.S))
        return np.asarray(self._ck_k), np.vstack(self._ck_b)


class _Draws:
    """Pre-drawn i.i.d. draws (one or more aligned arrays) read in order from ``i``.

    A kernel that runs out of draws returns without reading anything and is run again after
    :meth:`refill`, which keeps the unread rest first: it then sees the same draws followed
    by new ones, so running out changes nothing.
    """

    def __init__(self, draw) -> None:
        self.draw = draw
        self.size = _BLOCK
        self.arrays = tuple(draw(self.size))
        self.i = 0

    def refill(self) -> None:
        rest = self.arrays[0].size - self.i
        self.size = min(2 * self.size, 1 << 16)
        fresh = self.draw(max(self.size, 2 * rest))
        self.arrays = tuple(np.concatenate((a[self.i:], f))
                            for a, f in zip(self.arrays, fresh, strict=True))
        self.i = 0

    @property
    def a(self) -> np.ndarray:
        """The first (for a single stream, the only) array."""
        return self.arrays[0]
