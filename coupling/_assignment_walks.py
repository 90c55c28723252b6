"""FCFS GI/GI/S dominated by round robin or random assignment, drawn by a certified walk.

The dominating processes ``"dominated-cyclic"`` and ``"dominated-walk"`` of
:func:`coupling.perfect_sample`: renewal arrivals and a light-tailed service law; the past of
the ``S`` FIFO queues is drawn backwards by :class:`coupling.RAWalk`.
"""

# mypy: allow-untyped-defs, allow-incomplete-defs
from __future__ import annotations

from typing import Any

import numpy as np

import recursions as rc
from coupling._errors import CouplingNotReached
from coupling._fcfs_sandwich import try_latest
from coupling._ra_walk import RAWalk, ra_known_from

__all__ = ["RANDOM_WALK", "ROUND_ROBIN", "GIFuture", "GIServer", "Walks", "dominated_jsw_gi"]


class Walks:
    """The :class:`RAWalk` template of a renewal-input JSW sampler, built once per process.

    Its tilted samplers are closures, which ``pickle`` refuses: a copy (in a worker process)
    carries the recipe and builds the same template again (the construction is
    deterministic), so every process draws the same walks from the same seeds.
    """

    def __init__(self, servers: int, service, interarrival, routing: str) -> None:
        self.args = (servers, service, interarrival, routing)
        self._walk: RAWalk | None = None

    def template(self) -> RAWalk:
        """The walk template (built on first use in each process)."""
        if self._walk is None:
            S, service, interarrival, routing = self.args
            # not a hidden seed: the template's construction (Cramer root, tilts) is
            # deterministic, and every draw uses template.fresh(gen) with its own generator
            self._walk = RAWalk(S, service, interarrival, np.random.default_rng(0),
                                routing=routing)
        return self._walk

    def __getstate__(self) -> dict[str, Any]:
        return {"args": self.args, "_walk": None}


class GIFuture:
    """Customers from time 0 on (the first arrives at 0), with renewal arrivals.

    They are routed at random or, with a ``phase``, cyclically (customer ``n`` to server
    ``(phase + n) mod S``).
    """

    def __init__(self, inp: rc.Renewal, servers: int, gen: np.random.Generator,
                 phase: int | None = None) -> None:
        self.inp, self.S, self.gen, self.phase = inp, servers, gen, phase
        self.t = np.zeros(1)
        self.s = np.asarray(inp.service.sample(gen, 1), dtype=np.float64)
        self.u = self._routes(0, 1)

    def _routes(self, n0: int, n: int) -> np.ndarray:
        if self.phase is None:
            return self.gen.integers(0, self.S, n)
        return (self.phase + n0 + np.arange(n)) % self.S

    def until(self, horizon: float) -> None:
        """Draw customers until one arrives after ``horizon``."""
        while self.t[-1] <= horizon:
            g = self.gen
            gaps = np.asarray(self.inp.interarrival.sample(g, 64), dtype=np.float64)
            self.u = np.concatenate((self.u, self._routes(self.t.size, 64)))
            self.t = np.concatenate((self.t, self.t[-1] + np.cumsum(gaps)))
            self.s = np.concatenate((self.s, self.inp.service.sample(g, 64)))


class GIServer:
    """One RA server: its known past (from an instant it was empty) and future customers.

    The attributes are those :func:`sandwich` reads.
    """

    def __init__(self, i: int, past_t: np.ndarray, past_s: np.ndarray, fut: GIFuture) -> None:
        self.i, self.past_t, self.past_s, self._fut = i, past_t, past_s, fut

    def future_until(self, horizon: float) -> None:
        """Draw the future customers up to ``horizon``."""
        self._fut.until(horizon)

    @property
    def fut_t(self) -> np.ndarray:
        """Arrival times of this server's customers after 0."""
        return self._fut.t[self._fut.u == self.i]

    @property
    def fut_s(self) -> np.ndarray:
        """Their service times."""
        return self._fut.s[self._fut.u == self.i]


def dominated_jsw_gi(system, inp, gen, t0, cap, template, sampled=None):
    """Dominated CFTP for FCFS GI/GI/S with the random-assignment bound (renewal input).

    The same construction as :func:`dominated_jsw` (Wolff's coupling in order of
    initiation, a sandwich from an instant with nobody waiting in RA), with the RA past drawn
    by :class:`coupling._ra_walk.RAWalk`: at a certified customer ``-n`` the RA workloads are
    bounded, each server's bounded copy is run forward until it is empty (from then on that
    server's customers are known), and instants with nobody waiting are sought where every
    server is known. Returns as :func:`dominated_jsw`.
    """
    S = system.servers
    g_walk, g_fut = gen.spawn(2)
    walk = template.fresh(g_walk)
    fut = GIFuture(inp, S, g_fut, walk.phase if walk.routing == "cyclic" else None)
    target = t0
    need = 16  # customers of walk wanted before the next look
    while True:
        while walk.K < need or walk.checkpoints()[0].size == 0:
            walk.advance()
        u, s, t = walk.path()
        times = -np.cumsum(t)  # arrival time of customer -k at index k - 1
        if -times[-1] > cap:
            raise CouplingNotReached(
                f"no coupling within time {cap:g} back; raise cap_time (instants with nobody "
                f"waiting in the {walk.routing} assignment get rare as S and the load grow)"
            )
        ks, bounds = walk.checkpoints()
        known = ra_known_from(u, s, t, int(ks[-1]), bounds[-1])
        if (known < 0).any():
            need = 2 * walk.K
            continue
        servers, starts = [], []
        for i in range(S):
            k = int(known[i])
            starts.append(times[k - 1] if k > 0 else 0.0)
            sel = np.flatnonzero(u[:k] == i)[::-1]  # ascending in time
            servers.append(GIServer(i, times[sel], s[sel], fut))
        result, Tq = try_latest(system, servers, starts, target, sampled)
        if result is not None:
            return (*result, Tq)
        if Tq is not None:
            target = 2.0 * Tq
            continue  # look again further back in what is known
        need = 2 * walk.K



class AssignmentWalk:
    """The dominating process of cyclic (round robin) or random assignment, by a walk."""

    def __init__(self, name: str, routing: str, default: bool) -> None:
        self.name, self.routing, self.default = name, routing, default

    def refuses(self, inp: rc.Renewal) -> str | None:
        """Any renewal input (a heavy tail is refused when the walk is built)."""
        return None

    def is_default(self, inp: rc.Renewal, servers: int, light: bool) -> bool:
        """Round robin is the default for light tails where the vacation bound is not."""
        return self.default and light

    def template(self, inp: rc.Renewal, servers: int) -> Walks:
        """The walk's recipe, built once here to refuse a heavy tail before any draw."""
        walks = Walks(servers, inp.service, inp.interarrival, self.routing)
        try:
            walks.template()
        except ValueError as err:
            raise ValueError("exact sampling of FCFS GI/GI/S through a random walk needs "
                             "a service law with a finite moment generating function "
                             f"(light tail): {err}") from None
        return walks

    def draw(self, template: Walks, fcfs: rc.System, inp: rc.Renewal,
             gen: np.random.Generator, t0: float, tcap: float,
             sampled: Any) -> tuple[np.ndarray, int, float]:
        """One draw: see :func:`dominated_jsw_gi`."""
        return dominated_jsw_gi(fcfs, inp, gen, t0, tcap, template.template(), sampled)


ROUND_ROBIN = AssignmentWalk("dominated-cyclic", "cyclic", default=True)
RANDOM_WALK = AssignmentWalk("dominated-walk", "random", default=False)

