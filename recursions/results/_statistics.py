"""The statistics a run reports, each declared once: :data:`REGISTRY`.

A statistic is a ratio of batch sums, ``sum(num) / sum(den)`` (waits over the customers who
joined, busy server-time over server-time, ...), whose batch means give its standard error
(:func:`recursions.inference._estimate.ratio_estimate`). Its entry says what it means, whether it is
about what customers find or about the state, and how each family of engines makes its
numerator and denominator from the columns it accumulates:

* the workload engines (dense and heap, :mod:`recursions.engines._workload_engines`) hand
  :meth:`Statistic.on_workloads` a mapping of their columns: ``arrivals``, ``joined``,
  ``waited``, ``wait_sum``, ``served_work`` (the service times of the customers who joined;
  0 where what they found is their response already), ``lost``, ``lost_work``, ``work``,
  ``busy``, ``all_busy``, and
  ``seen`` (the arrivals, or the heap's snapshots, at which the state was seen) and
  ``server_seen`` (``seen`` times the servers);
* the queue-length engines (:mod:`recursions.engines.zerowait`) hand :meth:`Statistic.on_queues`
  theirs: ``arrivals``, ``waited``, ``blocked``, ``all_busy``, ``jobs_time``, ``busy_time``
  and ``server_time`` (time times the servers).

Which statistics a system has is the system's to declare (:attr:`recursions.System.estimates`);
the engines build exactly those from here, and :data:`recursions.engines._run_plan.STATISTICS`, the
lean statistics and the defaults of ``precision=`` are read from here. Adding a statistic is an
entry here and its column in the engines' accumulators.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["REGISTRY", "Statistic", "customer_statistics", "sums_of"]

Sums = Callable[[Mapping[str, Any]], tuple[Any, Any]]
"""Columns of an engine family -> ``(numerator, denominator)`` batch sums."""


@dataclass(frozen=True)
class Statistic:
    """One statistic: its meaning and how each family of engines estimates it.

    Attributes
    ----------
    name : str
        The name results, ``statistics=`` and ``precision=`` use.
    meaning : str
        What it estimates, in one line.
    customers : bool
        Whether it is about what arriving customers find (waits, losses, responses), which a
        run can keep without any statistic of the state.
    workloads, queues : callable or None
        The numerator and denominator on the workload engines and on the queue-length
        engines, from their columns (the module says which); ``None`` where the engines do
        not estimate it.

    Examples
    --------
    >>> REGISTRY["mean_wait"].on_workloads({"wait_sum": 6.0, "joined": 3.0})
    (6.0, 3.0)
    """

    name: str
    meaning: str
    customers: bool
    workloads: Sums | None = None
    queues: Sums | None = None

    def on_workloads(self, columns: Mapping[str, Any]) -> tuple[Any, Any]:
        """Numerator and denominator from the workload engines' columns."""
        if self.workloads is None:
            raise ValueError(f"{self.name} is not estimated by the workload engines")
        return self.workloads(columns)

    def on_queues(self, columns: Mapping[str, Any]) -> tuple[Any, Any]:
        """Numerator and denominator from the queue-length engines' columns."""
        if self.queues is None:
            raise ValueError(f"{self.name} is not estimated by the queue-length engines")
        return self.queues(columns)


def _entries() -> dict[str, Statistic]:
    entries = (
        Statistic("mean_workload", "mean workload of a server, seen by arrivals (or at the "
                  "heap's snapshots)", False,
                  workloads=lambda c: (c["work"], c["seen"])),
        Statistic("busy_fraction", "fraction of servers busy", False,
                  workloads=lambda c: (c["busy"], c["server_seen"]),
                  queues=lambda c: (c["busy_time"], c["server_time"])),
        Statistic("p_all_busy", "probability that an arrival finds every server busy", False,
                  workloads=lambda c: (c["all_busy"], c["arrivals"]),
                  queues=lambda c: (c["all_busy"], c["arrivals"])),
        Statistic("mean_response", "mean response time of the customers who joined: their "
                  "wait plus their service (their first copy's completion under redundancy)",
                  True,
                  workloads=lambda c: (c["wait_sum"] + c["served_work"], c["joined"]),
                  queues=lambda c: (c["jobs_time"], c["arrivals"] - c["blocked"])),
        Statistic("p_wait", "probability that an arrival waits", True,
                  workloads=lambda c: (c["waited"], c["arrivals"]),
                  queues=lambda c: (c["waited"], c["arrivals"])),
        Statistic("mean_wait", "mean wait of the customers who join", True,
                  workloads=lambda c: (c["wait_sum"], c["joined"]),
                  queues=lambda c: (c["jobs_time"] - c["busy_time"],
                                    c["arrivals"] - c["blocked"])),
        Statistic("p_loss", "probability that an arrival is lost", True,
                  workloads=lambda c: (c["lost"], c["arrivals"])),
        Statistic("overflow_work", "work lost per arrival", True,
                  workloads=lambda c: (c["lost_work"], c["arrivals"])),
        Statistic("mean_jobs", "mean number of jobs at a server", False,
                  queues=lambda c: (c["jobs_time"], c["server_time"])),
        Statistic("p_block", "probability that an arrival is blocked (its server full)", True,
                  queues=lambda c: (c["blocked"], c["arrivals"])),
    )
    return {s.name: s for s in entries}


REGISTRY: dict[str, Statistic] = _entries()
"""Every statistic a result may report, by name, in the order the engines build them."""


def customer_statistics() -> frozenset[str]:
    """The statistics of what customers find that the workload engines estimate.

    A run asked for none but these needs no statistic of the state (the lean drivers).

    Examples
    --------
    >>> sorted(customer_statistics())
    ['mean_response', 'mean_wait', 'overflow_work', 'p_loss', 'p_wait']
    """
    return frozenset(n for n, s in REGISTRY.items() if s.customers and s.workloads)


def sums_of(names: Any, columns: Mapping[str, Any], engines: str) -> dict[str, tuple[Any, Any]]:
    """The numerator and denominator of each of ``names``, in :data:`REGISTRY`'s order.

    Parameters
    ----------
    names : collection of str
        The statistics wanted (a system's :attr:`~recursions.System.estimates`).
    columns : mapping
        The engines' columns (the module says which).
    engines : {"workloads", "queues"}
        Which family of engines made them.

    Returns
    -------
    dict of str to (numerator, denominator)
        Those of ``names`` the family estimates.

    Examples
    --------
    >>> sums_of(["p_wait", "mean_jobs"], {"waited": 1.0, "arrivals": 4.0}, "workloads")
    {'p_wait': (1.0, 4.0)}
    """
    wanted = set(names)
    return {n: getattr(s, engines)(columns) for n, s in REGISTRY.items()
            if n in wanted and getattr(s, engines) is not None}
