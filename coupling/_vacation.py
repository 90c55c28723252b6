"""A dominating process that scales with the number of servers: the multi-server vacation system.

Exact (perfect) sampling of the stationary FCFS GI/GI/S workload vector by dominated coupling
from the past, with the vacation system of Blanchet, Dong and Pei ("Perfect sampling of
GI/GI/c queues", Queueing Systems 2018) as the dominating process, and a certificate of our
own for its empty queue.

**The vacation system.** ``S`` servers and one FIFO queue. Every server runs without stop:
when it finishes a service or a vacation and the queue is empty, it starts a *vacation*, an
independent copy of a service time. So each server is a renewal process of i.i.d. durations
(services or vacations), the ``S`` processes are independent of each other and of the
arrivals, and the queue is served at the renewal epochs ("service opportunities"): with
``A`` the arrival and ``N`` the superposed renewal counts,

    ``Q(t-) = sup_{s < t} (A(s, t) - N(s, t))^+``.

A customer's service time is the duration that starts when it enters service. Durations are
drawn i.i.d. whatever they are used for, and which one a customer gets depends only on the
past, so the customers' service times are i.i.d. and independent of the arrivals.

**It dominates FCFS.** A vacation is a phantom customer joining an idle server, which is the
least loaded one: the vacation system is the Kiefer-Wolfowitz map ``G`` (FCFS) driven by the
real customers *and* these phantoms, each with its own service time. ``G`` is monotone and
adding a customer only raises the state, so with the same real customers and service times
the vacation system's workload vector stays above FCFS's (coordinatewise, sorted) at all
times, the stationary versions included.

**The sandwich.** At an arrival epoch ``-T`` at which the vacation queue is empty, the
vacation workload vector is the sorted vector ``R`` of the servers' residual durations, so
the stationary FCFS state seen by the customer arriving at ``-T`` lies between 0 and ``R``.
Running FCFS from both, with the customers arriving from ``-T`` on and their service times
(matched in the vacation system, which from ``-T`` on depends on nothing earlier), gives two
vectors at time 0 that bracket the stationary one; when they are equal, that is an exact
draw. Otherwise the next try starts at least twice as far back. Unlike an instant with
nobody waiting in *all* of ``S`` round-robin or random-assignment queues, an empty vacation
queue is common at any ``S`` (its chance stays away from 0 in the Halfin-Whitt regime), so
the search scales with ``S``.

**The certificate that the queue is empty at -T.** Write ``F(D)`` for the arrivals minus the
renewal epochs in the window of length ``D`` before ``-T``; ``Q(-T-) = 0`` iff ``F <= 0``
for every ``D > 0``. ``F`` is computed exactly on the generated past down to an arrival epoch
``P`` far enough back; beyond ``P``, with rates ``a = (lambda + S mu) / 2`` and ``b = a / S``
(``lambda`` and ``mu`` the arrival and service rates),

    ``F(P + D) - F(P) <= [A - a D] + sum_i [b D - N_i]``,

and each bracket's supremum over ``D`` is a random-walk maximum: ``a sup_l sum (1/a - tau)``
for the arrivals, ``b g_i + b sup_l sum (sigma - 1/b)`` for server ``i`` (``g_i`` the time
from ``P`` back to its previous epoch). These ``S + 1`` walks drift down, and
:class:`coupling._ra_walk.RAWalk` draws each backwards with certificates of its future
maximum; their increments are the very interarrival and duration times of the past. When
``F(P)`` plus the certified bounds is below 1 the queue was empty at ``-T`` (``F`` is an
integer). ``F(P)`` falls at rate ``S mu - lambda`` while the bound grows like ``S b E[age]``,
so ``P`` lies a time of order ``1 / (mu (1 - rho))`` back, whatever ``S``.

Needs renewal input and a service law with a finite moment generating function near 0 (the
server walks are tilted); heavy-tailed service is not covered (with Poisson input the
random-assignment reversed-queue bound handles it at small ``S``). Connor and Kendall (2015)
show that dominated CFTP for M/G/c has finite mean run time iff ``E[sigma^2] < inf``; this
method needs more (an mgf), and its cost is measured in ``benchmarks/perfect_sampling.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

import recursions as rc
from coupling._dominating import size_biased_sample
from coupling._errors import CouplingNotReached
from coupling._ra_walk import RAWalk
from recursions import dists
from recursions.model import is_renewal

__all__ = ["VACATION", "VacationBound", "VacationTemplate", "vacation_draw"]


class _Walk:
    """One backward walk (``RAWalk`` on one coordinate, increments ``s - t``) with its sums."""

    def __init__(self, walk: RAWalk, field: int) -> None:
        self.walk, self.field = walk, field  # the durations are path()[field]
        self._at = -1  # the walk length the cached arrays belong to
        self._chunks = 0  # the walk's increment chunks and checkpoints already read
        self._nck = 0
        self._dl: list[np.ndarray] = []
        self._inc: list[np.ndarray] = []
        self._ksl: list[int] = []
        self._bsl: list[float] = []

    def _refresh(self) -> None:
        # read only what the walk appended since the last look (its lists only grow)
        w = self.walk
        if self._at == w.K and self._nck == len(w._ck_k):
            return
        s_new, t_new = w._s[self._chunks:], w._t[self._chunks:]
        self._dl.extend((s_new, t_new)[self.field - 1])
        self._inc.extend(a - b for a, b in zip(s_new, t_new, strict=True))
        self._chunks = len(w._s)
        self._ksl.extend(w._ck_k[self._nck:])
        self._bsl.extend(float(b[0]) for b in w._ck_b[self._nck:])
        # a checkpoint at the same K may have been tightened in place: reread the last one
        if w._ck_b:
            self._bsl[-1] = float(w._ck_b[-1][0])
        self._nck = len(w._ck_k)
        self._d = np.concatenate(self._dl) if self._dl else np.empty(0)
        self._partial = np.cumsum(np.concatenate(self._inc)) if self._inc else np.empty(0)
        self._ks = np.asarray(self._ksl, dtype=np.int64)
        self._bs = np.asarray(self._bsl)
        self._at = w.K

    def durations(self, need: int) -> np.ndarray:
        """At least ``need`` durations, with a checkpoint at or beyond index ``need``."""
        self._refresh()
        while self.walk.K < need or self._ks.size == 0 or self._ks[-1] < need:
            self.walk.advance()
            self._refresh()
        return self._d

    def future_max(self, m: int) -> float:
        """A certified bound on ``sup_{l >= 0} (P_{m+l} - P_m)``, ``P`` the walk's sums."""
        self.durations(m + 1)
        partial, ks = self._partial, self._ks
        i = int(np.searchsorted(ks, m))  # the first checkpoint at or after m
        n, cap = int(ks[i]), float(self._bs[i])
        base = partial[m - 1] if m >= 1 else 0.0
        seg = partial[m:n] - base
        top = float(seg.max()) if seg.size else 0.0
        end = (partial[n - 1] - base) if n >= 1 else 0.0
        return max(0.0, top, end + cap)


@dataclass
class VacationTemplate:
    """What every draw of one system shares: the Cramer roots and the tilted samplers.

    The walks' tilted samplers are closures, which ``pickle`` refuses: a copy (in a worker
    process of :func:`coupling.perfect_sample`) keeps the recipe and builds the same
    template again, deterministically.

    Parameters
    ----------
    servers : int
        ``S``.
    input : recursions.Renewal
        Renewal arrivals (Poisson included) and a light-tailed service law.

    Attributes
    ----------
    a, b : float
        The rates splitting the queue's certificate (``a = (lambda + S mu) / 2``, ``b = a/S``).

    Examples
    --------
    >>> import recursions as rc
    >>> t = VacationTemplate(4, rc.Poisson(3.0, rc.dists.Exponential(1.0)))
    >>> t.a, t.b
    (3.5, 0.875)
    """

    servers: int
    input: rc.Renewal

    def __post_init__(self) -> None:
        inp, S = self.input, int(self.servers)
        if not is_renewal(inp):
            raise ValueError("the vacation bound needs renewal arrivals (Poisson or GI), got "
                             f"{type(inp).__name__}")
        lam, mu = 1.0 / inp.mean_interarrival, 1.0 / inp.mean_service
        if not lam < S * mu:
            raise ValueError(f"the system is not stable (load {lam / (S * mu):.4g} >= 1)")
        self.a = 0.5 * (lam + S * mu)
        self.b = self.a / S
        self._walks()  # fail now, with the light-tail message, rather than in a draw

    def _walks(self) -> tuple[RAWalk, RAWalk]:
        if getattr(self, "_built", None) is None:
            # not a hidden seed: the walks' construction is deterministic (the generator only
            # sets a template's unused start); every draw calls .fresh(gen) with its own
            inp, gen = self.input, np.random.default_rng(0)
            arrivals = RAWalk(1, dists.Deterministic(1.0 / self.a), inp.interarrival, gen)
            try:
                durations = RAWalk(1, inp.service, dists.Deterministic(1.0 / self.b), gen)
            except ValueError as err:
                raise ValueError("the vacation bound needs a service law with a finite moment "
                                 f"generating function near 0 (a light tail): {err}") from None
            self._built = (arrivals, durations)
        return self._built

    @property
    def _arrivals(self) -> RAWalk:
        return self._walks()[0]

    @property
    def _durations(self) -> RAWalk:
        return self._walks()[1]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_built"] = None
        return state


class _Server:
    """A server of the vacation system: a stationary renewal process seen from time 0."""

    def __init__(self, walk: _Walk, service: dists.Law, gen: np.random.Generator) -> None:
        self.walk = walk  # its durations are the server's, back from its epoch before 0
        length = float(size_biased_sample(service, gen, 1)[0])  # the interval holding 0
        u = float(gen.random())
        self.age, self.resid, self.current = u * length, (1.0 - u) * length, length
        self._service, self._gen = service, gen
        self.forward: list[float] = []  # durations after the one holding 0

    def backward(self, need: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Epoch distances back from 0 (``E_0 = age``, ``E_m = E_0 + sigma_1 + ...``)."""
        sig = self.walk.durations(need)
        if getattr(self, "_at", -1) != sig.size:
            self._epochs = self.age + np.concatenate(([0.0], np.cumsum(sig)))
            self._at = sig.size
        return self._epochs, sig

    def reach(self, distance: float) -> None:
        """Draw the server's past back to at least ``distance`` before 0."""
        w = self.walk.walk
        mean = float(self._service.mean)
        while True:
            e, _ = self.backward()
            if e[-1] >= distance:
                return
            for _ in range(max(1, int((distance - e[-1]) / mean / 4))):
                w.advance()

    def forward_durations(self, n: int) -> list[float]:
        while len(self.forward) < n:
            self.forward.extend(np.asarray(self._service.sample(self._gen, 64), dtype=float))
        return self.forward


def _empty_queue_candidates(D: np.ndarray, servers: list[_Server], arr: _Walk, a: float,
                            b: float) -> np.ndarray:
    """Customers ``-k`` before whose arrival the vacation queue is certified empty.

    ``D[i]`` is the distance of customer ``-(i + 1)`` back from 0. With ``c(x)`` the number
    of renewal epochs (all servers) less than ``x`` back and ``G_i = i + 1 - c(D[i])``, the
    count ``F`` of arrivals minus epochs in the window back from customer ``-k``, just after
    customer ``-(i + 1)``, is ``G_i - G_{k-1}``; it is largest just after arrivals. On the
    generated past (down to the nearest of the arrivals' and the servers' horizons) the queue
    is empty iff ``G_{k-1} >= G_i`` for every later ``i``; beyond the farthest generated
    arrival ``P`` the certified walk maxima bound ``F`` by ``F(P) + B`` (module docstring),
    and ``B`` does not depend on ``k``. Returns the ``k`` (1-based, increasing) passing both.
    """
    horizon = min([float(D[-1])] + [float(sv.backward()[0][-1]) for sv in servers])
    epochs = np.sort(np.concatenate([sv.backward()[0] for sv in servers]))
    n = int(np.searchsorted(D, horizon, side="right"))
    if n < 2:
        return np.empty(0, dtype=np.int64)
    G = np.arange(1, n + 1) - np.searchsorted(epochs, D[:n])
    later = np.maximum.accumulate(G[::-1])[::-1]  # later[i] = max_{j >= i} G_j
    ok = G[:-1] >= later[1:]  # candidate k = i + 1: nobody waits on the generated window
    # the rest of the past, beyond P = customer -n (the farthest generated arrival)
    P = float(D[n - 1])
    B = a * arr.future_max(n)
    for sv in servers:
        e, _ = sv.backward()
        m = int(np.searchsorted(e, P, side="right"))  # E_m: the server's last epoch before P
        if m >= e.size:
            return np.empty(0, dtype=np.int64)
        B += b * (float(e[m]) - P) + b * sv.walk.future_max(m)
    ok &= (G[n - 1] - G[:-1]) + B < 1.0  # F(P) + B < 1, F(P) = G_P - G_{k-1}
    return np.nonzero(ok)[0] + 1


def vacation_draw(template: VacationTemplate, gen: np.random.Generator, start_time: float,
                  cap_time: float, sampled=None) -> tuple[np.ndarray, int, float]:
    """One exact draw of the stationary FCFS G/G/S state seen by an arrival.

    The horizons are times, as for every FCFS method of :func:`coupling.perfect_sample`: the
    first try goes about ``lambda start_time`` customers back, and no try starts further back
    than ``cap_time`` (the draws depend on neither).

    Parameters
    ----------
    template : VacationTemplate
        The system's shared roots and samplers.
    gen : numpy.random.Generator
        The draw's only source of randomness.
    start_time : float
        Time back of the first try (``> 0``).
    cap_time : float
        Most time back before :class:`coupling.CouplingNotReached`.
    sampled : optional
        A monotone map dominated by FCFS (``coupling._dominated_maps.DominatedMap``): it is run
        inside the sandwich instead of FCFS, from 0 and from the vacation vector at ``-T``.

    Returns
    -------
    numpy.ndarray, int, float
        The sorted workload vector seen by the customer arriving at 0, the number of
        customers back at which the sandwich closed, and how long ago that was (``T``).
    """
    S, a, b = template.servers, template.a, template.b
    inp = template.input
    g_arr, g_srv = gen.spawn(2)
    arr = _Walk(template._arrivals.fresh(g_arr), 2)  # its durations are the tau's
    servers = []
    for g in g_srv.spawn(S):
        g_walk, g_own = g.spawn(2)
        servers.append(_Server(_Walk(template._durations.fresh(g_walk), 1), inp.service,
                               g_own))
    k = max(int(start_time * inp.arrival_rate), 1)
    need = 4 * k
    while True:
        tau = arr.durations(need)
        D = np.cumsum(tau)  # D[j - 1]: how long ago customer -j arrived
        for sv in servers:  # every server's past back to the arrivals' horizon
            sv.reach(float(D[-1]))
        ks = _empty_queue_candidates(D, servers, arr, a, b)
        ks = ks[(ks >= k) & (D[ks - 1] <= cap_time)]
        if ks.size == 0:
            if D[-1] > cap_time:  # nothing left to try within the cap
                raise CouplingNotReached(f"the vacation sandwich did not close within time "
                                         f"{cap_time:g} back; raise cap_time")
            need *= 2
            continue
        k = int(ks[0])
        state = _sandwich(k, D, tau, servers, sampled)
        if state is not None:
            return state, k, float(D[k - 1])
        k *= 2
        need = max(need, 2 * k)


def _sandwich(k: int, D: np.ndarray, tau: np.ndarray, servers: list[_Server],
              sampled=None) -> np.ndarray | None:
    """Match services in the vacation system from ``-T``, run FCFS from 0 and from ``R``."""
    T = D[k - 1]
    S = len(servers)
    # epochs after -T with the duration starting at each, and the residuals at -T
    times, durs, resid = [], [], np.empty(S)
    for i, sv in enumerate(servers):
        e, sig = sv.backward()
        m_star = int(np.nonzero(e > T)[0][0])  # E_{m*} is the last epoch before -T
        back_t = -e[:m_star][::-1]  # epochs in (-T, 0]: -E_{m*-1}, ..., -E_0
        back_d = np.concatenate(([sv.current], sig[: m_star - 1]))[::-1] if m_star else \
            np.empty(0)
        times.append(back_t)
        durs.append(back_d)
        resid[i] = (back_t[0] if back_t.size else sv.resid) + T
    arrivals = -D[:k][::-1]  # customers -k .. -1 in time order
    sigma = _match(arrivals, times, durs, servers)
    if sampled is not None:  # a map dominated by FCFS, run from 0 and from R
        lo, hi = sampled.sandwich(np.sort(resid), T, arrivals, sigma)
        return lo if np.array_equal(lo, hi) else None
    lower = rc.iterate(rc.JSW(S), np.zeros(S), sigma, tau[:k][::-1])
    upper = rc.iterate(rc.JSW(S), np.sort(resid), sigma, tau[:k][::-1])
    return lower if np.array_equal(lower, upper) else None


def _match(arrivals: np.ndarray, times: list[np.ndarray], durs: list[np.ndarray],
           servers: list[_Server]) -> np.ndarray:
    """Service times of the customers ``arrivals`` (time order) in the vacation system."""
    n = arrivals.size
    fwd_n = 8
    while True:
        t_all, d_all = [], []
        for sv, t, d in zip(servers, times, durs, strict=True):
            f = np.asarray(sv.forward_durations(fwd_n)[:fwd_n])
            ft = sv.resid + np.concatenate(([0.0], np.cumsum(f[:-1])))  # forward epochs
            t_all.append(np.concatenate((t, ft)))
            d_all.append(np.concatenate((d, f)))
        et = np.concatenate(t_all)
        ed = np.concatenate(d_all)
        order = np.argsort(et, kind="stable")
        et, ed = et[order], ed[order]
        out = np.empty(n)
        q = 0  # next customer to serve; customers with arrivals[j] < epoch are waiting
        j_arr = 0
        for e_t, e_d in zip(et, ed, strict=True):
            while j_arr < n and arrivals[j_arr] < e_t:
                j_arr += 1
            if q < j_arr:  # the queue is not empty: its head starts now
                out[q] = e_d
                q += 1
                if q == n:
                    return out
        fwd_n *= 2


class VacationBound:
    """The dominating process ``"vacation"`` of :func:`coupling.perfect_sample`.

    The default for a light-tailed service law where ``S (rho - 1/2) >= 3.5`` or
    ``S >= 80`` (measured in ``benchmarks/perfect_sampling.py``, see
    :func:`coupling._fcfs_bounds.fcfs_method`).
    """

    name = "vacation"

    def refuses(self, inp: rc.Renewal) -> str | None:
        """Any renewal input (a heavy tail is refused when the template is built)."""
        return None

    def is_default(self, inp: rc.Renewal, servers: int, light: bool) -> bool:
        """Light tail and many servers or a high load."""
        rho = inp.mean_service / (servers * inp.mean_interarrival)
        return light and (servers * (rho - 0.5) >= 3.5 or servers >= 80)

    def template(self, inp: rc.Renewal, servers: int) -> VacationTemplate:
        """The roots and samplers every draw shares."""
        return VacationTemplate(servers, inp)

    def draw(self, template: VacationTemplate, fcfs: rc.System, inp: rc.Renewal,
             gen: np.random.Generator, t0: float, tcap: float,
             sampled: Any) -> tuple[np.ndarray, int, float]:
        """One draw: see :func:`vacation_draw`."""
        return vacation_draw(template, gen, t0, tcap, sampled)


VACATION = VacationBound()
