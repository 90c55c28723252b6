"""FCFS M/G/S dominated by random assignment to ``S`` stationary M/G/1 queues, reversed.

The dominating process ``"dominated"`` of :func:`coupling.perfect_sample`: Poisson arrivals,
any service law with a finite mean (:class:`coupling.ReversedQueue` draws each queue's
stationary past).
"""

# mypy: allow-untyped-defs, allow-incomplete-defs
from __future__ import annotations

import math
from typing import Any

import numpy as np

import recursions as rc
from coupling._dominating import ReversedQueue
from coupling._errors import CouplingNotReached
from coupling._fcfs_sandwich import try_latest

__all__ = ["REVERSED_MG1", "RAServer", "dominated_jsw"]


class RAServer:
    """One server of the random-assignment system: its stationary past and its future."""

    def __init__(self, rate: float, law, gen: np.random.Generator) -> None:
        g_past, self._g_future = gen.spawn(2)
        self.queue = ReversedQueue(rate, law, g_past, "ps")
        self.rate, self.law = rate, law
        self.past_t = np.empty(0)  # forward arrival times in (-empty_at, 0], ascending
        self.past_s = np.empty(0)
        self.fut_t = np.empty(0)  # arrivals after time 0, ascending
        self.fut_s = np.empty(0)

    def reach(self, T: float) -> None:
        """Make sure the past is known back to ``-T`` and further back to an empty instant."""
        for target, stop in ((T, False), (math.inf, True)):
            t, x = self.queue.advance(target, stop_when_empty=stop)
            self.past_t = np.concatenate((t[::-1], self.past_t))
            self.past_s = np.concatenate((x[::-1], self.past_s))

    def future_until(self, horizon: float) -> None:
        """Generate the forward arrivals after 0 up to time ``horizon``."""
        last = self.fut_t[-1] if self.fut_t.size else 0.0
        while last <= horizon:
            gaps = self._g_future.exponential(1.0 / self.rate, 64)
            t = last + np.cumsum(gaps)
            x = np.asarray(self.law.sample(self._g_future, 64), dtype=np.float64)
            self.fut_t = np.concatenate((self.fut_t, t))
            self.fut_s = np.concatenate((self.fut_s, x))
            last = t[-1]


def dominated_jsw(system, inp, gen, t0, cap, sampled=None):
    """Dominated CFTP for FCFS M/G/S (Connor & Kendall 2015, with a sandwich).

    Service durations are coupled *in order of initiation of service* (Wolff): the k-th
    customer to start service in the random-assignment (RA) system, FIFO at each server, and
    the k-th to start in FCFS get the same duration. FCFS then starts its k-th service no
    later than RA. At a time ``-T`` when no RA customer is waiting, every arrived customer has
    started in both systems, so pairing customers by initiation index gives FCFS residuals no
    larger than RA's: the stationary FCFS vector at ``-T`` lies between 0 and the sorted RA
    residuals, and the FCFS customers arriving after ``-T`` take the durations of the RA
    initiations after ``-T``, in order. Both ends of the sandwich are run with those to time
    0; if they meet, that is the stationary vector. After a failed try at ``-T`` the next
    is sought at or before ``-2T``. Returns that vector, the customers arrived after ``-T``
    and ``T``.
    """
    S = system.servers
    servers = [RAServer(inp.arrival_rate / S, inp.service, g) for g in gen.spawn(S)]
    target = t0  # look for an instant with nobody waiting in RA, at or before -target
    known = t0  # every server's past is known back to -known (at least)
    while True:
        for sv in servers:
            sv.reach(known)
        known = min(sv.queue.s for sv in servers)
        result, Tq = try_latest(system, servers, [-sv.queue.s for sv in servers], target,
                                 sampled)
        if result is not None:
            return (*result, Tq)
        if Tq is not None:
            target = 2.0 * Tq  # the next try starts (at least) twice as far back
        else:
            known = 2.0 * known  # learn more of the past
        if target > cap or known > cap:
            raise CouplingNotReached(
                f"no coupling within time {cap:g} back; raise cap_time (the random-assignment "
                "bound rarely has no waiting customer when S and the load are large)"
            )
        known = max(known, target)



class ReversedMG1:
    """The dominating process ``"dominated"``: reversed M/G/1 queues (Poisson arrivals)."""

    name = "dominated"

    def refuses(self, inp: rc.Renewal) -> str | None:
        """Why it cannot bound FCFS fed by ``inp`` (``None``: it can)."""
        if inp.poisson:
            return None
        return ("method 'dominated' (reversed M/G/1 queues) needs Poisson "
                "arrivals; use 'dominated-cyclic' or 'dominated-walk' for GI arrivals")

    def is_default(self, inp: rc.Renewal, servers: int, light: bool) -> bool:
        """The default for Poisson arrivals with a heavy-tailed service law."""
        return bool(inp.poisson)

    def template(self, inp: rc.Renewal, servers: int) -> None:
        """Nothing to build once: each draw starts its own queues."""
        return None

    def draw(self, template: Any, fcfs: rc.System, inp: rc.Renewal, gen: np.random.Generator,
             t0: float, tcap: float, sampled: Any) -> tuple[np.ndarray, int, float]:
        """One draw: see :func:`dominated_jsw`."""
        return dominated_jsw(fcfs, inp, gen, t0, tcap, sampled)


REVERSED_MG1 = ReversedMG1()
