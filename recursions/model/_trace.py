"""A log of jobs as input: :class:`Trace`, read from arrays, a CSV file or a SWF log.

A trace is a finite record: job ``n`` arrives at ``times[n]`` and needs ``services[n]`` units of
work. It enters the library in two ways:

* ``rc.simulate(system, trace)`` **replays** it: each job once, in order, from empty servers,
  and reports every job's wait in trace order (:mod:`recursions.engines._trace_replay`);
* :meth:`Trace.cyclic` makes it the stationary ergodic input of the periodic model: ``Omega``
  the trace's jobs, ``theta`` the cyclic shift, time 0 at a uniformly drawn job. That is a
  :class:`~recursions.Periodic` input, which ``ly.check_stability``, ``ly.loynes`` and
  ``cp.perfect_sample`` take.

The trace's arrays are kept read-only and never printed: its repr is one line, and a result
names the trace by that line.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from recursions.common._checks import SCALE_MAX
from recursions.model._environment_inputs import Periodic

__all__ = ["SWF_FIELDS", "Trace"]

SWF_FIELDS = ("job", "submit", "wait", "run", "processors", "cpu", "memory",
              "requested_processors", "requested_time", "requested_memory", "status", "user",
              "group", "executable", "queue", "partition", "preceding_job", "think_time")
"""The 18 fields of a line of the Standard Workload Format, in order."""


class Trace:
    """A log of jobs: arrival times and service times, replayed or made cyclic.

    Parameters
    ----------
    times : sequence of float
        Arrival times, nondecreasing and finite.
    services : sequence of float
        Service times (work at a server of unit speed), finite and ``>= 0``; as many as
        ``times``.
    processors : sequence of int, optional
        Processors each job asked for (the SWF's column), kept for maps of your own.
    name : str, optional
        What the trace is called in reprs and results (a file's name, by default).

    Attributes
    ----------
    times, services : numpy.ndarray
        Read-only float64 arrays.
    processors : numpy.ndarray or None
        Read-only int64 array.
    dropped : int
        Jobs of the log left out (:meth:`from_swf`: those whose run time is -1).
    last_gap : float or None
        The time from the last job to the next, where the trace says it
        (:meth:`from_interarrivals`); :meth:`cyclic` uses it.

    Examples
    --------
    >>> import recursions as rc
    >>> tr = rc.Trace([0.0, 0.5, 2.0, 2.0], [1.0, 2.0, 0.5, 1.5])
    >>> tr  # doctest: +ELLIPSIS
    Trace(4 jobs over 2 time units: mean service 1.25, mean interarrival 0.6667; #...)
    >>> res = rc.simulate(rc.JSW(1), tr)
    >>> res.waits.tolist()  # the Lindley recursion on these four jobs
    [0.0, 0.5, 1.0, 1.5]
    """

    is_trace = True
    """Declares a finite log to replay (``rc.simulate`` replays it once, in order)."""

    def __init__(self, times: Any, services: Any, *, processors: Any = None,
                 name: str | None = None) -> None:
        t = _floats(times, "times")
        s = _floats(services, "services")
        if t.size != s.size:
            raise ValueError(f"times and services must have equal lengths, got {t.size} and "
                             f"{s.size}")
        if t.size == 0:
            raise ValueError("a trace needs at least one job")
        if np.any(s < 0):
            k = int(np.argmax(s < 0))
            raise ValueError(f"services must be >= 0, got {float(s[k])!r} for job {k}")
        if t.size > 1 and np.any(np.diff(t) < 0):
            k = int(np.argmax(np.diff(t) < 0))
            raise ValueError(f"times must be nondecreasing, but job {k + 1} arrives at "
                             f"{float(t[k + 1])!r}, before job {k} at {float(t[k])!r} (sort the "
                             "log by arrival time first)")
        if s.max() > SCALE_MAX or (t[-1] - t[0]) > SCALE_MAX:
            raise ValueError(f"times and services must stay below {SCALE_MAX:g} (change the "
                             "time unit)")
        procs = None
        if processors is not None:
            procs = np.array(processors, dtype=np.int64).ravel()
            if procs.size != t.size:
                raise ValueError(f"processors must have one entry per job ({t.size}), got "
                                 f"{procs.size}")
            procs.flags.writeable = False
        t.flags.writeable = False
        s.flags.writeable = False
        self.times, self.services, self.processors = t, s, procs
        self.name = None if name is None else str(name)
        self.dropped = 0  # jobs of the log left out (a SWF job with run time -1)
        self.last_gap: float | None = None  # the time after the last job, where known
        self._digest: str | None = None

    # -- other ways in ---------------------------------------------------------------------

    @classmethod
    def from_interarrivals(cls, interarrivals: Any, services: Any, *, start: float = 0.0,
                           **kwargs: Any) -> Trace:
        """A trace from the times between arrivals: job ``n`` arrives at ``start + sum tau[:n]``.

        Parameters
        ----------
        interarrivals : sequence of float
            ``tau[n]``, the time from job ``n``'s arrival to job ``n + 1``'s (``>= 0``; the
            last one, after the last job, is kept as :attr:`last_gap`, the gap
            :meth:`cyclic` puts between the last job and the first).
        services : sequence of float
            As in :class:`Trace`.
        start : float, default 0
            The first arrival time.
        **kwargs
            ``processors``, ``name``.

        Returns
        -------
        Trace

        Examples
        --------
        >>> Trace.from_interarrivals([1.0, 2.0, 1.0], [0.5, 0.5, 0.5]).times.tolist()
        [0.0, 1.0, 3.0]
        """
        tau = _floats(interarrivals, "interarrivals")
        if np.any(tau < 0):
            raise ValueError("interarrivals must be >= 0")
        times = float(start) + np.concatenate(([0.0], np.cumsum(tau[:-1])))
        trace = cls(times, services, **kwargs)
        trace.last_gap = float(tau[-1]) if tau.size else None
        return trace

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], *, time: str = "time",
                 service: str = "service", processors: str | None = None,
                 interarrival: bool = False, delimiter: str = ",") -> Trace:
        r"""A trace read from a CSV file with a header row.

        Parameters
        ----------
        path : str or os.PathLike
            The file.
        time : str, default "time"
            The column of arrival times (or of interarrival times, with ``interarrival``).
        service : str, default "service"
            The column of service times.
        processors : str, optional
            A column of processor counts to keep.
        interarrival : bool, default False
            Whether ``time`` holds the times between arrivals rather than arrival times.
        delimiter : str, default ","
            The field separator.

        Returns
        -------
        Trace
            Named by the file's name.

        Raises
        ------
        ValueError
            For a missing column (the message lists the file's columns), a value that is not
            a number (with its line), or times that are not nondecreasing.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "jobs.csv"
        >>> _ = f.write_text("arrival,size\n0.0,1.5\n0.4,2.0\n")
        >>> tr = Trace.from_csv(f, time="arrival", service="size")
        >>> tr.name, tr.times.tolist(), tr.services.tolist()
        ('jobs.csv', [0.0, 0.4], [1.5, 2.0])
        """
        path = Path(path)
        with path.open(newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter)
            header = [h.strip() for h in next(reader, [])]
            wanted = [time, service] + ([processors] if processors else [])
            missing = [c for c in wanted if c not in header]
            if missing:
                raise ValueError(f"{path.name}: no column {', '.join(map(repr, missing))}; its "
                                 f"columns are {header}")
            cols = [header.index(c) for c in wanted]
            rows: list[list[float]] = []
            for line, row in enumerate(reader, start=2):
                if not row or all(not x.strip() for x in row):
                    continue
                try:
                    rows.append([float(row[c]) for c in cols])
                except (ValueError, IndexError):
                    raise ValueError(f"{path.name}, line {line}: expected numbers in columns "
                                     f"{wanted}, got {row}") from None
        data = np.array(rows, dtype=np.float64).reshape(-1, len(wanted))
        kw: dict[str, Any] = {"name": path.name}
        if processors:
            kw["processors"] = data[:, 2].astype(np.int64)
        if interarrival:
            return cls.from_interarrivals(data[:, 0], data[:, 1], **kw)
        return cls(data[:, 0], data[:, 1], **kw)

    @classmethod
    def from_swf(cls, path: str | os.PathLike[str]) -> Trace:
        """A trace read from a Standard Workload Format log (the Parallel Workloads Archive).

        Each line that is not a comment (``;``) has the 18 fields of :data:`SWF_FIELDS`. The
        trace takes the submit time (field 2) as the arrival time and the run time (field 4)
        as the service time, and keeps the allocated processors (field 5; the requested ones,
        field 8, where that is -1). Jobs whose run time is -1 (unknown: cancelled before they
        ran) are dropped. Jobs are put in order of submit time (a stable sort) when the log is
        not.

        Parameters
        ----------
        path : str or os.PathLike
            The ``.swf`` file.

        Returns
        -------
        Trace
            Named by the file's name; ``dropped`` says how many jobs had no run time.

        Raises
        ------
        ValueError
            For a line without 18 fields, or no job with a run time.
        """
        path = Path(path)
        rows = []
        with path.open() as fh:
            for line, text in enumerate(fh, start=1):
                text = text.strip()
                if not text or text.startswith(";"):
                    continue
                fields = text.split()
                if len(fields) != len(SWF_FIELDS):
                    raise ValueError(f"{path.name}, line {line}: a SWF job has "
                                     f"{len(SWF_FIELDS)} fields, got {len(fields)}")
                try:
                    rows.append([float(fields[i]) for i in (1, 3, 4, 7)])
                except ValueError:
                    raise ValueError(f"{path.name}, line {line}: fields must be numbers, got "
                                     f"{text!r}") from None
        data = np.array(rows, dtype=np.float64).reshape(-1, 4)
        ran = data[:, 1] != -1
        if not ran.any():
            raise ValueError(f"{path.name}: no job with a run time (all are -1)")
        kept = data[ran]
        order = np.argsort(kept[:, 0], kind="stable")
        kept = kept[order]
        procs = np.where(kept[:, 2] == -1, kept[:, 3], kept[:, 2]).astype(np.int64)
        trace = cls(kept[:, 0], kept[:, 1], processors=procs, name=path.name)
        trace.dropped = int((~ran).sum())
        return trace

    # -- what it is ------------------------------------------------------------------------

    def __len__(self) -> int:
        return int(self.times.size)

    @property
    def jobs(self) -> int:
        """Number of jobs."""
        return len(self)

    @property
    def span(self) -> float:
        """Time from the first arrival to the last."""
        return float(self.times[-1] - self.times[0])

    @property
    def mean_service(self) -> float:
        """Mean service time."""
        return float(self.services.mean())

    @property
    def mean_interarrival(self) -> float:
        """Mean time between arrivals (``span / (jobs - 1)``; ``nan`` for one job)."""
        return self.span / (len(self) - 1) if len(self) > 1 else math.nan

    def load(self, servers: int) -> float:
        """Offered load per server: ``mean_service / (servers * mean_interarrival)``.

        Examples
        --------
        >>> Trace([0.0, 1.0, 2.0], [1.0, 1.0, 1.0]).load(2)
        0.5
        """
        return self.mean_service / (servers * self.mean_interarrival)

    def __repr__(self) -> str:
        label = "" if self.name is None else f", from {self.name!r}"
        return (f"Trace({len(self):,} job{'s' if len(self) > 1 else ''} over "
                f"{self.span:.4g} time units: mean service {self.mean_service:.4g}, mean "
                f"interarrival {self.mean_interarrival:.4g}{label}; #{self.digest})")

    @property
    def digest(self) -> str:
        """A hash of the arrival and service times (in the repr: what tells two traces apart).

        Examples
        --------
        >>> Trace([0.0, 1.0], [1.0, 1.0]).digest == Trace([0.0, 1.0], [1.0, 2.0]).digest
        False
        """
        if self._digest is None:
            h = hashlib.sha256(self.times.data)  # the arrays' own bytes: no copy
            h.update(self.services.data)
            self._digest = h.hexdigest()[:12]
        return self._digest

    # -- its stationary version ------------------------------------------------------------

    def cyclic(self, phase: int | None = None) -> Periodic:
        """The trace as a stationary ergodic input: the cyclic shift on its jobs.

        Customer ``n`` after time 0 is job ``(phase + n) mod K``; the time from job ``K - 1``
        back to job 0 is :attr:`last_gap` where the trace knows it, else the trace's mean
        interarrival time (arrival times say nothing of the gap after the last job). With
        ``phase=None`` time 0 falls at a uniformly drawn job: the stationary version, which
        ``ly.check_stability``, ``ly.loynes`` and ``cp.perfect_sample`` take.

        Parameters
        ----------
        phase : int, optional
            The job at time 0.

        Returns
        -------
        recursions.Periodic

        Raises
        ------
        ValueError
            For a trace of one job, or one whose jobs all arrive at once (no time passes).

        Examples
        --------
        >>> Trace([0.0, 1.0, 3.0], [1.0, 1.0, 1.0]).cyclic(phase=0)
        Periodic(sigma=(1.0, 1.0, 1.0), tau=(1.0, 2.0, 1.5), phase=0)
        """
        if len(self) < 2 or self.span <= 0:
            raise ValueError("a cyclic input needs at least two jobs and time between them")
        wrap = self.last_gap if self.last_gap is not None else self.mean_interarrival
        gaps = np.append(np.diff(self.times), wrap)
        return Periodic(self.services, gaps, phase=phase)


def _floats(values: Any, name: str) -> np.ndarray:
    """``values`` as a new 1-d float64 array of finite numbers, or a ``ValueError``."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of numbers, got {type(values).__name__}")
    try:
        a = np.array(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a sequence of numbers") from None
    if not np.all(np.isfinite(a)):
        k = int(np.argmax(~np.isfinite(a)))
        raise ValueError(f"{name} must be finite, got {float(a[k])!r} for job {k}")
    return a

