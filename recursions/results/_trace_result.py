"""What the replay of a trace reports: :class:`TraceResult`, every job's wait and its windows."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recursions.common._tables import Record, Table, text_table

__all__ = ["TraceResult"]


@dataclass(frozen=True, repr=False)
class TraceResult(Record):
    """A trace replayed once, in order, from empty servers: every job's wait, and their means.

    A replay is not a sample from a stationary law: its figures are those of this trace (and,
    for a policy that routes at random, of the routing drawn from the seed), so they have no
    standard error. For the long-run behaviour of a system fed with jobs like these, give
    ``rc.simulate`` the trace's stationary version, ``trace.cyclic()``, with ``steps`` or
    ``precision``.

    Attributes
    ----------
    system, trace : str
        What was replayed (the trace by its one-line repr).
    engine : str
        ``"dense"`` (the sorted-vector map) or ``"heap"`` (absolute empty times).
    jobs, lost : int
        Jobs replayed, and those a loss system lost.
    p_wait, mean_wait : float or None
        Fraction of the jobs served that waited, and their mean wait (``None`` when every job
        was lost).
    mean_response : float or None
        Mean wait plus service of the jobs served (``None`` where a response is not the wait
        plus the service: servers of other speeds).
    p_loss : float or None
        Fraction of the jobs lost (loss systems; ``None`` otherwise).
    final_state : numpy.ndarray
        The sorted workloads just after the last job joined.

    Examples
    --------
    >>> import recursions as rc
    >>> res = rc.simulate(rc.JSW(1), rc.Trace([0.0, 0.5, 2.0], [1.0, 2.0, 0.5]))
    >>> res.waits.tolist(), res.mean_wait
    ([0.0, 0.5, 1.0], 0.5)
    """

    system: str
    trace: str
    engine: str
    jobs: int
    lost: int
    p_wait: float | None
    mean_wait: float | None
    mean_response: float | None
    p_loss: float | None
    final_state: np.ndarray
    _waits: np.ndarray = field(repr=False, compare=False)
    _times: np.ndarray | None = field(repr=False, compare=False)
    _services: np.ndarray | None = field(repr=False, compare=False)
    _responses: bool = field(default=True, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        """The state to pickle: without the trace's arrays (a result never carries the data)."""
        state = dict(self.__dict__)
        state["_times"] = state["_services"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)

    def _trace_arrays(self, trace: Any) -> tuple[np.ndarray, np.ndarray]:
        """The replayed trace's arrival and service times: its own, or ``trace``'s."""
        if trace is not None:
            if len(trace) != self.jobs:
                raise ValueError(f"trace has {len(trace):,} jobs, this replay {self.jobs:,}")
            return trace.times, trace.services
        if self._times is None or self._services is None:
            raise ValueError("this result was unpickled without its trace's arrays (a result "
                             "never carries the data): pass trace= the trace it replayed")
        return self._times, self._services

    @property
    def waits(self) -> np.ndarray:
        """Each job's wait, in trace order (``nan`` for a lost job); read-only."""
        return self._waits

    def responses(self, trace: Any = None) -> np.ndarray | None:
        """Each job's response, its wait plus its service (``nan`` if lost).

        ``None`` where a response is not the wait plus the service. ``trace``: the trace
        replayed, for a result that was unpickled (pickles leave the trace's arrays out).
        """
        return self._waits + self._trace_arrays(trace)[1] if self._responses else None

    def by_time(self, window: float, start: float | None = None, *,
                trace: Any = None) -> Table:
        """The jobs' statistics over consecutive windows of time, by arrival time.

        Parameters
        ----------
        window : float
            The length of each window (> 0), in the trace's time unit.
        start : float, optional
            Where the first window starts (default: the first arrival).
        trace : recursions.Trace, optional
            The trace replayed, for a result that was unpickled (a pickle leaves out the
            trace's arrays).

        Returns
        -------
        recursions.common._tables.Table
            One row per window: ``start``, ``end``, ``jobs`` (arrivals in it), ``lost``,
            ``p_wait``, ``mean_wait``, ``mean_response`` (where defined), ``p_loss`` (loss
            systems) and ``max_wait``; ``nan`` where no job was served. ``to_pandas()`` gives a
            DataFrame.

        Raises
        ------
        ValueError
            For a window that is not a finite number > 0, a start after the first arrival,
            or more than ten million windows.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(1), rc.Trace([0.0, 0.5, 2.0, 2.5], [1.0, 2.0, 0.5, 0.1]))
        >>> t = res.by_time(2.0)
        >>> t["start"].tolist(), t["jobs"].tolist(), t["mean_wait"].tolist()
        ([0.0, 2.0], [2, 2], [0.25, 1.0])
        """
        times, services = self._trace_arrays(trace)
        w = float(window)
        if not (math.isfinite(w) and w > 0):
            raise ValueError(f"window must be a finite time > 0, got {window!r}")
        t0 = float(times[0]) if start is None else float(start)
        if not math.isfinite(t0) or t0 > times[0]:
            raise ValueError(f"start must be at or before the first arrival "
                             f"({float(times[0])!r}), got {start!r}")
        count = int((times[-1] - t0) // w) + 1
        if count > 10**7:
            raise ValueError(f"window {window!r} makes {count:,} windows: choose a longer one")
        k = np.minimum(((times - t0) // w).astype(np.int64), count - 1)
        served = ~np.isnan(self._waits)
        wait = np.where(served, self._waits, 0.0)

        def total(x: np.ndarray) -> np.ndarray:
            return np.bincount(k, weights=x, minlength=count)

        jobs, done = total(np.ones(k.size)), total(served.astype(np.float64))
        with np.errstate(invalid="ignore", divide="ignore"):
            cols: dict[str, Any] = {
                "start": t0 + w * np.arange(count), "end": t0 + w * np.arange(1, count + 1),
                "jobs": jobs.astype(np.int64), "lost": (jobs - done).astype(np.int64),
                "p_wait": total((wait > 0).astype(np.float64)) / done,
                "mean_wait": total(wait) / done}
            if self._responses:
                cols["mean_response"] = total(np.where(served, wait + services, 0.0)) / done
            if self.p_loss is not None:
                cols["p_loss"] = (jobs - done) / jobs
        peak = np.full(count, -np.inf)
        np.maximum.at(peak, k[served], wait[served])
        cols["max_wait"] = np.where(np.isfinite(peak), peak, np.nan)
        return Table(cols)

    def plot(self, ax: Any = None, *, window: float | None = None, trace: Any = None) -> Any:
        """Draw the waits against arrival time, or their mean over windows of ``window``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        window : float, optional
            Draw the mean wait per window of this length (:meth:`by_time`) instead of every
            job.
        trace : recursions.Trace, optional
            The trace replayed, for a result that was unpickled.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from recursions.common._figures import axes, title

        ax = axes(ax, "TraceResult.plot()")
        if window is None:
            ax.plot(self._trace_arrays(trace)[0], self._waits, ".", ms=2, alpha=0.5,
                    label=self.system)
        else:
            t = self.by_time(window, trace=trace)
            ax.step(t["start"], t["mean_wait"], where="post", label=self.system)
        ax.set_xlabel("arrival time")
        ax.set_ylabel("wait" if window is None else f"mean wait per {window:g}")
        title(ax, f"{self.jobs:,} jobs replayed", f"{self.system}; {self.trace}")
        return ax

    def __repr__(self) -> str:
        from recursions.common._tables import cut

        shown = ", ".join(f"{n}={v:.4g}" for n, v in self._figures() if v is not None)
        return (f"TraceResult({cut(self.system, 40)}, {self.jobs:,} jobs, {self.engine}: "
                f"{shown})")

    def _figures(self) -> list[tuple[str, float | None]]:
        return [("p_wait", self.p_wait), ("mean_wait", self.mean_wait),
                ("mean_response", self.mean_response), ("p_loss", self.p_loss)]

    def summary(self) -> str:
        """The replay as lines of text: what ran, its figures."""
        return text_table("TraceResult", [("system", self.system), ("trace", self.trace),
                                          ("engine", self.engine), ("jobs", self.jobs),
                                          ("lost", self.lost), *self._figures()])

    def _repr_html_(self) -> str:
        from recursions.common._html import html_table

        return html_table("TraceResult", [("system", self.system), ("trace", self.trace),
                                          ("engine", self.engine), ("jobs", self.jobs),
                                          ("lost", self.lost), *self._figures()])


def trace_result(system: Any, trace: Any, engine: str, waits: np.ndarray, final: np.ndarray
                 ) -> TraceResult:
    """The :class:`TraceResult` of ``waits`` (``nan`` for a lost job) of ``trace`` on ``system``."""
    waits.flags.writeable = False
    served = ~np.isnan(waits)  # sums below are taken in place (where=): no copy of the jobs
    n = int(served.sum())
    responses = "mean_response" in system.estimates
    total = float(np.sum(waits, where=served))
    work = float(np.sum(trace.services, where=served))
    return TraceResult(
        system=repr(system), trace=repr(trace), engine=engine, jobs=int(waits.size),
        lost=int(waits.size - n),
        p_wait=float(np.count_nonzero(waits > 0) / n) if n else None,
        mean_wait=total / n if n else None,
        mean_response=(total + work) / n if n and responses else None,
        p_loss=float(1 - n / waits.size) if system.has_loss else None,
        final_state=final, _waits=waits, _times=trace.times, _services=trace.services,
        _responses=responses)
