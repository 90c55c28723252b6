"""The one chunk loop of every engine: a warm-up, then a measured run, in chunks.

:func:`run_chunks` runs every replication of a :class:`Kernel` (the dense engine's sorted
vectors or the heap engine's empty times, :mod:`recursions.engines._workload_engines`; the
queue-length
engines' counts or queues, :mod:`recursions.engines._queue_runs`) through the warm-up, fixes the
profile grid, then runs the measured part. Where the draws come from is a
strategy:

* :class:`BlockDraws` -- the input's streams draw each chunk in blocks (numpy) in a helper
  thread while the kernel runs the previous chunk; one producer keeps every stream's order;
* :class:`KernelDraws` -- built-in laws drawn inside the kernel from the streams' own
  generators (the very numbers of the blocks; the queue-length engines: each replication's
  state draws blocks as its kernel asks), each replication in a thread task, in calls of at
  most ``plan.max_call`` arrivals so that an interrupt is honoured between them.

Both give the same numbers bit for bit (``tests/recursions/engines/test_in_kernel_draws.py``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from recursions.engines._replications import each_replication
from recursions.engines._run_plan import DEFAULT_LEVELS, RunPlan

if TYPE_CHECKING:
    from recursions.results._simulation_result import SimulationResult

__all__ = ["BlockDraws", "Kernel", "KernelDraws", "Resumable", "RunHandle",
           "Tables", "rebin", "run_chunks"]


@dataclass(frozen=True)
class Tables:
    """The profile grid ``g`` and its histograms ``hist`` (per replication and batch).

    Examples
    --------
    >>> Tables.empty(2, 4).hist.shape
    (2, 4, 1)
    """

    g: np.ndarray
    hist: np.ndarray

    @classmethod
    def empty(cls, nrep: int, batches: int) -> Tables:
        """The tables of the warm-up, which collects nothing."""
        return cls(np.zeros(0), np.zeros((nrep, batches, 1)))

    @classmethod
    def fixed(cls, plan: RunPlan, current_max: float) -> Tables:
        """The user's grid, else 33 levels to ``max(4 E[sigma], current_max)``.

        A lean plan (:attr:`recursions.engines._run_plan.RunPlan.lean`) reports no profile: its grid
        is empty, so the kernels bin nothing (every level search returns at once, into one of
        two columns).
        """
        g = plan.grid
        if plan.lean:
            g = np.zeros(0)
        elif g is None:
            g = np.linspace(0.0, max(4.0 * plan.input.mean_service, current_max),
                            DEFAULT_LEVELS)
        return cls(g, np.zeros((plan.replications, plan.batches, 2 * (g.size + 1))))


class Kernel(Protocol):
    """The state of one engine's run and its two kinds of kernel call."""

    def block(self, sig: np.ndarray, tau: np.ndarray, U: np.ndarray, collect: bool,
              tables: Tables) -> None:
        """Every replication through one chunk of drawn arrivals."""
        ...

    def drawn(self, r: int, count: int, collect: bool, t0: int, tables: Tables) -> None:
        """Replication ``r`` through ``count`` arrivals drawn inside the kernel."""
        ...

    def replication_done(self, r: int, t0: int) -> bool:
        """Whether replication ``r`` has measured enough (``t0`` arrivals so far)."""
        ...

    def all_done(self, done: int) -> bool:
        """Whether every replication has measured enough (``done`` arrivals so far)."""
        ...

    def start_measuring(self) -> Tables:
        """Begin the measured run; returns its tables (:meth:`Tables.fixed`, or none kept)."""
        ...

    def check(self, where: str, collect: bool) -> None:
        """Look at the states (a user's map: :meth:`recursions.System.check_run`)."""
        ...


class Draws(Protocol):
    """Where the arrivals come from: :class:`BlockDraws` or :class:`KernelDraws`."""

    def run(self, loop: ChunkLoop) -> Tables:
        """The warm-up and the measured run; returns the measured run's tables."""
        ...

    def more(self, loop: ChunkLoop, tables: Tables, done: int) -> None:
        """The measured run on from ``done`` arrivals to ``loop.plan.steps``."""
        ...


@dataclass(frozen=True)
class ChunkLoop:
    """One run's kernel, plan and progress bar, with the sizes of its chunks."""

    kernel: Kernel
    plan: RunPlan
    bar: Any

    def warm_sizes(self, span: int) -> list[int]:
        """The warm-up in chunks of at most ``span`` arrivals."""
        warmup = self.plan.warmup
        return [min(span, warmup - i) for i in range(0, warmup, span)]

    def next_size(self, done: int) -> int:
        """The next measured chunk after ``done`` arrivals."""
        steps, chunk = self.plan.steps, self.plan.chunk
        return chunk if steps is None else min(chunk, steps - done)

    def advance(self, count: int) -> None:
        """Count ``count`` arrivals on the progress bar."""
        if self.bar is not None:
            self.bar.update(count)


@dataclass(frozen=True)
class BlockDraws:
    """Draws made in blocks outside the kernel, a chunk ahead in a helper thread.

    ``streams[r].next(count)`` draws replication ``r``'s services and interarrival times;
    ``uniforms(r, count)`` its ``m`` routing uniforms per arrival.
    """

    streams: list[Any]
    uniforms: Any
    m: int

    def draw(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``count`` arrivals of every replication: services, interarrival times, uniforms."""
        nrep = len(self.streams)
        sig = np.empty((nrep, count))
        tau = np.empty((nrep, count))
        U = np.empty((nrep, count, self.m))
        for r in range(nrep):
            sig[r], tau[r] = self.streams[r].next(count)
            U[r] = self.uniforms(r, count)
        return sig, tau, U

    def run(self, loop: ChunkLoop) -> Tables:
        """The warm-up and the measured run, chunk by chunk."""
        kernel, plan = loop.kernel, loop.plan
        sizes = loop.warm_sizes(plan.chunk)
        tables = Tables.empty(plan.replications, plan.batches)
        with ThreadPoolExecutor(max_workers=1) as pool:
            nxt = pool.submit(self.draw, sizes[0] if sizes else loop.next_size(0))
            for i, c in enumerate(sizes):
                sig, tau, U = nxt.result()
                nxt = pool.submit(self.draw, sizes[i + 1] if i + 1 < len(sizes)
                                  else loop.next_size(0))
                kernel.block(sig, tau, U, False, tables)
                loop.advance(c)
            tables = kernel.start_measuring()
            self._measure(loop, tables, 0, pool, nxt)
        return tables

    def more(self, loop: ChunkLoop, tables: Tables, done: int) -> None:
        """The measured run on from ``done`` arrivals (the streams stand where it stopped)."""
        with ThreadPoolExecutor(max_workers=1) as pool:
            self._measure(loop, tables, done, pool, pool.submit(self.draw, loop.next_size(done)))

    def _measure(self, loop: ChunkLoop, tables: Tables, done: int, pool: ThreadPoolExecutor,
                 nxt: Any) -> None:
        # the next chunk is drawn while the kernel runs this one; none is drawn past the
        # steps, so that a run that goes on (RunHandle.extend) finds its streams right there
        kernel, plan = loop.kernel, loop.plan
        while not kernel.all_done(done):
            sig, tau, U = nxt.result()
            c = sig.shape[1]
            done += c
            if not kernel.all_done(done) or plan.time is not None:
                nxt = pool.submit(self.draw, loop.next_size(done) or plan.chunk)
            kernel.block(sig, tau, U, True, tables)
            loop.advance(c)
        nxt.cancel()


@dataclass(frozen=True)
class KernelDraws:
    """Built-in laws drawn inside the kernel; replications in parallel thread tasks."""

    def run(self, loop: ChunkLoop) -> Tables:
        """The warm-up, the look at the states, the grid, the measured run."""
        kernel, plan = loop.kernel, loop.plan
        tables = Tables.empty(plan.replications, plan.batches)
        self._phase(loop, False, tables)
        kernel.check("at the end of the warm-up", False)
        tables = kernel.start_measuring()
        self._phase(loop, True, tables)
        kernel.check("at the end of the run", True)
        return tables

    def more(self, loop: ChunkLoop, tables: Tables, done: int) -> None:
        """The measured run on from ``done`` arrivals (each generator stands where it stopped)."""
        self._phase(loop, True, tables, done)
        loop.kernel.check("at the end of the run", True)

    def _phase(self, loop: ChunkLoop, collect: bool, tables: Tables, start: int = 0) -> None:
        """Warm-up (or the measured run) of every replication, each in one thread task."""
        plan = loop.plan
        # nothing is drawn outside, so a count of arrivals runs in few calls (each call costs
        # the typing of its arguments; the numbers do not depend on the split) of at most
        # max_call arrivals, so that an interrupt (Ctrl-C) is honoured between them, unless
        # a progress bar wants the chunks
        chunked = loop.bar is not None or plan.steps is None
        span = plan.chunk if chunked else min(max((plan.steps or 0) - start, plan.warmup, 1),
                                              plan.max_call)
        warm = loop.warm_sizes(plan.chunk if loop.bar is not None else plan.max_call)
        stop = [False]  # set when the main thread is interrupted: the threads stop too

        def one(r: int) -> None:
            if not collect:
                for c in warm:
                    if stop[0]:
                        return
                    loop.kernel.drawn(r, c, False, 0, tables)
                    if r == 0:
                        loop.advance(c)
                return
            t0 = start
            while not loop.kernel.replication_done(r, t0):
                if stop[0]:
                    return
                c = span if plan.steps is None else min(span, plan.steps - t0)
                loop.kernel.drawn(r, c, True, t0, tables)
                t0 += c
                if r == 0:
                    loop.advance(c)

        each_replication(one, plan.replications, stop=stop)


def rebin(a: np.ndarray, old: RunPlan, new: RunPlan) -> np.ndarray:
    """Per-batch sums ``a`` of ``old``'s batches as sums over ``new``'s (a longer run's).

    Arrival ``t`` of a run of ``T`` measured arrivals in ``K`` batches is in batch
    ``floor(t K / T)``; each of ``old``'s batches must lie inside one of ``new``'s, as when
    ``new``'s batches are a whole number of ``old``'s (the kernels then add the arrivals
    that follow into the right rows).

    Parameters
    ----------
    a : numpy.ndarray
        Shape ``(replications, old.batches, ...)``.
    old, new : RunPlan
        The run so far and the run it goes on to (``new.steps >= old.steps``).

    Returns
    -------
    numpy.ndarray
        Shape ``(replications, new.batches, ...)``.

    Raises
    ------
    ValueError
        When a batch of ``old`` straddles two of ``new``'s.

    Examples
    --------
    >>> from dataclasses import replace
    >>> import recursions as rc
    >>> from recursions.engines._run_plan import make_plan
    >>> old = make_plan(rc.JSW(1), rc.Poisson(0.5, rc.dists.Exponential(1.0)), 8, batches=4)
    >>> rebin(np.arange(4.0).reshape(1, 4), old, replace(old, steps=16, batches=4))
    array([[1., 5., 0., 0.]])
    """
    T, K, T2, K2 = int(old.steps or 0), old.batches, int(new.steps or 0), new.batches
    j = np.arange(K, dtype=np.int64)
    first = -((-j * T) // K)  # eng.batch_start, vectorised
    last = -((-(j + 1) * T) // K) - 1
    full = first <= last  # a run shorter than its batches leaves some empty
    lo, hi = (first * K2) // T2, (last * K2) // T2
    if np.any(full & (lo != hi)) or T2 < T:
        raise ValueError(f"the batches of {T} arrivals in {K} do not nest in those of "
                         f"{T2} in {K2}")
    out = np.zeros((a.shape[0], K2, *a.shape[2:]))
    np.add.at(np.swapaxes(out, 0, 1), lo[full], np.swapaxes(a[:, full], 0, 1))
    return out


class Resumable(Kernel, Protocol):
    """A :class:`Kernel` whose run can go on and report itself (:class:`RunHandle`)."""

    plan: RunPlan
    acc: np.ndarray

    def go_on(self, plan: RunPlan) -> None:
        """Take ``plan`` (more steps, in batches of which those so far are whole parts)."""
        ...

    def report(self, plan: RunPlan, acc: np.ndarray, tables: Tables) -> SimulationResult:
        """The result of the batch sums ``acc`` and ``tables`` of ``plan``'s batches."""
        ...


@dataclass
class RunHandle:
    """A run that can go on: its state, its draws and its tables so far.

    An engine's ``start`` (:mod:`recursions.engines._registry`) returns it after the plan's warm-up
    and measured run; :meth:`extend` runs on to more arrivals (the streams, the states and the
    batch sums go on from where they stood), :meth:`result` reports. A run extended to ``T``
    arrivals reports the numbers of one run of ``T`` arrivals from the same seed, up to the
    order of the sums (``tests/recursions/engines/test_continued_runs.py``); the precision mode uses
    it instead of retracing its stages.
    """

    state: Resumable
    draws: Draws
    tables: Tables

    @property
    def plan(self) -> RunPlan:
        """The run so far (its ``steps`` and ``batches`` follow :meth:`extend`)."""
        return self.state.plan

    def extend(self, steps: int, batches: int, label: str | None = None) -> None:
        """Run on to ``steps`` measured arrivals per replication, in ``batches`` batches.

        Parameters
        ----------
        steps : int
            The new total, more than now.
        batches : int
            The new number of batches: each batch so far must lie inside one of them
            (:func:`rebin`).
        label : str, optional
            What the progress bar of this part says (when the run shows one).
        """
        old = self.state.plan
        if old.steps is None or old.record:
            raise ValueError("only a run of steps, with no recorded path, can go on")
        if steps <= old.steps:
            raise ValueError(f"a run goes on to more than its {old.steps} steps, got {steps}")
        new = replace(old, steps=int(steps), batches=int(batches),
                      progress=label if label is not None and old.progress else old.progress)
        self.state.go_on(new)
        self.tables = Tables(self.tables.g, rebin(self.tables.hist, old, new))
        run_chunks(self.state, new, self.draws, tables=self.tables, done=int(old.steps))

    def result(self, batches: int | None = None) -> SimulationResult:
        """The run's :class:`~recursions.SimulationResult`, in ``batches`` batches if given.

        ``batches`` must group the run's batches whole (:func:`rebin`).
        """
        plan, acc, tables = self.state.plan, self.state.acc, self.tables
        if batches is not None and batches != plan.batches:
            coarse = replace(plan, batches=int(batches))
            acc = rebin(acc, plan, coarse)
            tables = Tables(tables.g, rebin(tables.hist, plan, coarse))
            plan = coarse
        return self.state.report(plan, acc, tables)


def run_chunks(kernel: Kernel, plan: RunPlan, draws: Draws, *, tables: Tables | None = None,
               done: int = 0) -> Tables:
    """Run ``kernel`` through ``plan``'s warm-up and measured run with ``draws``.

    Parameters
    ----------
    kernel : Kernel
        The engine's state and kernel calls.
    plan : RunPlan
        The run.
    draws : BlockDraws or KernelDraws
        Where the arrivals come from.
    tables : Tables, optional
        Given, the run goes on: no warm-up, the measured run from ``done`` arrivals to
        ``plan.steps`` into these tables (the kernel's state stands where it stopped).
    done : int, default 0
        The arrivals measured so far (with ``tables``).

    Returns
    -------
    Tables
        The grid and profile histograms of the measured run.
    """
    total = plan.warmup + (plan.steps or 0) if tables is None else (plan.steps or 0) - done
    bar = _progress_bar(plan.progress, total)
    try:
        loop = ChunkLoop(kernel, plan, bar)
        if tables is None:
            return draws.run(loop)
        draws.more(loop, tables, done)
        return tables
    finally:
        if bar is not None:
            bar.close()


def _progress_bar(progress: bool | str, total: int) -> Any:
    """A tqdm bar over ``total`` arrivals, described by ``progress`` when it is text."""
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("progress=True needs tqdm: pip install tqdm") from exc
    desc = progress if isinstance(progress, str) else None
    return tqdm(total=total, unit="arrival", unit_scale=True, desc=desc)
