"""A pool of worker processes with a progress bar, shared by every package that needs one.

:func:`coupling.perfect_sample` (``workers=``) and :func:`loynes.sweep` (``max_workers=``) run
their independent tasks here. The rules both rely on:

* workers start with the ``spawn`` method (no forked numba or thread state) and import the
  main script again, so a script calls them under ``if __name__ == "__main__":``;
* the function to run is pickled once (with ``cloudpickle`` when installed, so lambdas and
  notebook functions travel) and loaded by each worker as it starts;
* each worker limits numba to ``cores() // workers`` threads (``numba.set_num_threads``, the
  limit numba accepts once its threads run), so processes times threads stays within the
  cores; compiled kernels come from the on-disk cache, and a cold worker compiles its own;
* workers ignore Ctrl-C: the parent stops them. Any exception in the parent (Ctrl-C, a task's
  error, a failing result handler) cancels what is queued and terminates the running workers
  at once, then propagates;
* a worker that dies (``BrokenProcessPool``) does not stop the results already finished from
  being handed over; the caller is told, and says what to do in its own words.

The numbers never depend on the pool: every task carries its own seed.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["NoBar", "check_workers", "cores", "dumps", "progress_bar", "run_in_processes"]


def cores() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count).

    Returns
    -------
    int
        At least 1.

    Examples
    --------
    >>> cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: Any, tasks: int, what: str = "every draw") -> int:
    """Worker processes to use for ``tasks`` tasks: ``None`` is one per core, never more than tasks.

    Parameters
    ----------
    workers : int or None
        ``1`` runs every task in this process, ``k >= 2`` asks for ``k`` processes, ``None``
        one per core.
    tasks : int
        Number of tasks (``>= 1``).
    what : str, default "every draw"
        What ``1`` runs in this process, for the message.

    Returns
    -------
    int
        Between 1 and ``tasks``.

    Raises
    ------
    ValueError
        When ``workers`` is neither ``None`` nor an integer ``>= 1`` (``bool`` refused).

    Examples
    --------
    >>> check_workers(8, 3)
    3
    >>> check_workers(None, 1)
    1
    """
    import numbers

    if workers is None:
        return max(1, min(cores(), tasks))
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1 (1: {what} in this process) "
                         f"or None (one worker process per core), got {workers!r}")
    return min(int(workers), tasks)


class NoBar:
    """A progress bar that shows nothing (the bar when none is asked for).

    Examples
    --------
    >>> bar = NoBar()
    >>> bar.update(3); bar.close()
    """

    def update(self, n: int = 1) -> None:
        """Count ``n`` more finished tasks (nothing shown)."""

    def close(self) -> None:
        """Close the bar (nothing to close)."""


def progress_bar(show: bool, total: int, *, unit: str, desc: str,
                 required: bool = True) -> Any:
    """A tqdm bar over ``total`` tasks, or a :class:`NoBar`.

    Parameters
    ----------
    show : bool
        Whether a bar is wanted.
    total : int
        Number of tasks.
    unit, desc : str
        tqdm's unit and description.
    required : bool, default True
        When tqdm is missing: raise ``ImportError`` saying how to install it (``True``), or
        show nothing (``False``).

    Returns
    -------
    tqdm.tqdm or NoBar
        Anything with ``update(n)`` and ``close()``.

    Raises
    ------
    ImportError
        When ``show`` and ``required`` and tqdm is not installed.

    Examples
    --------
    >>> bar = progress_bar(False, 10, unit="draw", desc="demo")
    >>> type(bar).__name__
    'NoBar'
    """
    if not show:
        return NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if not required:
            return NoBar()
        raise ImportError("progress=True shows a tqdm progress bar, and tqdm is not "
                          "installed: pip install tqdm (or the extra: pip install "
                          "'queue-recursions[progress]'), or pass progress=False") from None
    return tqdm(total=total, unit=unit, desc=desc)


def dumps(obj: Any) -> bytes:
    """``obj`` pickled for worker processes: with ``cloudpickle`` when installed, else pickle.

    Examples
    --------
    >>> import pickle
    >>> pickle.loads(dumps({"a": 1}))
    {'a': 1}
    """
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - cloudpickle comes with dask
        return pickle.dumps(obj)
    return cloudpickle.dumps(obj)


_WORKER_FUNC: Any = None


def _init_worker(payload: bytes, threads: int) -> None:
    """Pool initializer: ignore Ctrl-C (the parent handles it), limit numba's threads, load func.

    numba is already imported when this runs if unpickling the function imports the library,
    so ``NUMBA_NUM_THREADS`` can no longer be changed: numba refuses a changed variable once
    its threads run. ``numba.set_num_threads`` is the limit numba accepts at run time; it holds
    for this thread, which runs every task of the worker.
    """
    global _WORKER_FUNC
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(ImportError):
        import numba

        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))  # type: ignore[attr-defined]
    _WORKER_FUNC = pickle.loads(payload)


def _call(args: tuple[Any, ...]) -> Any:
    return _WORKER_FUNC(*args)


def _stop(ex: Any) -> None:
    """Cancel what is queued, then terminate the running workers at once."""
    # the executor cancels its own queue (cancelling futures here races with its manager
    # thread); its processes are read before shutdown forgets them
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.terminate()


def run_in_processes(func: Callable[..., Any], jobs: Iterable[tuple[Any, ...]], workers: int,
                     on_result: Callable[[Any], None], *,
                     payload: bytes | None = None) -> BaseException | None:
    """Run ``func(*job)`` for every job on ``workers`` spawned processes.

    ``on_result`` gets each job's return value in this process as soon as it is back (in the
    order they finish). The jobs must not depend on which worker runs them.

    Parameters
    ----------
    func : callable
        Picklable (by :func:`dumps`); sent once to every worker as it starts.
    jobs : iterable of tuple
        The arguments of each call (picklable).
    workers : int
        Processes to start (``>= 1``).
    on_result : callable
        Called with every return value.
    payload : bytes, optional
        ``dumps(func)`` when the caller has already pickled it (to word its own error).

    Returns
    -------
    BaseException or None
        The ``BrokenProcessPool`` when a worker died (every result that came back before
        has been handed to ``on_result``), else ``None``.

    Raises
    ------
    Exception
        A job's own exception, or one of ``on_result``, after the pool was stopped;
        ``KeyboardInterrupt`` likewise. Pickling errors of ``func`` propagate unchanged.

    Examples
    --------
    Run under ``if __name__ == "__main__":`` in a script (the workers import it again)::

        from recursions.common._pool import run_in_processes

        out = []
        run_in_processes(pow, [(2, k) for k in range(8)], 2, out.append)
        sorted(out)      # [1, 2, 4, ..., 128]
    """
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    data = dumps(func) if payload is None else payload
    ex = ProcessPoolExecutor(max_workers=workers,
                             mp_context=multiprocessing.get_context("spawn"),
                             initializer=_init_worker,
                             initargs=(data, max(1, cores() // workers)))
    broken: BaseException | None = None
    try:
        pending = {ex.submit(_call, tuple(job)) for job in jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    value = fut.result()
                except BrokenProcessPool as exc:
                    broken = exc
                    continue
                on_result(value)
    except BaseException:  # a job failed, Ctrl-C, on_result failed: no pool left running
        _stop(ex)
        raise
    ex.shutdown(wait=True)
    return broken
