"""Replications side by side: the calls of the compiled loops, one replication per thread.

The drivers' compiled loops run without the GIL, so the replications of a run go side by side
in threads, at most numba's thread count, each a plain call of its loop: no compiled wrapper
(a ``prange`` over the replications compiled the loop a second time, :ref:`bench-first-result`).
The helper threads are started once and kept, idle, between calls: a run on blocks calls the
loops once a chunk, and starting a pool of threads for each chunk cost more than a chunk of a
small system. They are daemon threads, so an idle one never holds the interpreter at exit.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any

import numba

__all__ = ["each_replication"]

_TASKS: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_HELPERS: list[threading.Thread] = []
_STARTING = threading.Lock()


def _helper() -> None:
    """A helper thread: run the tasks it is given, for ever (each task catches its errors)."""
    while True:
        _TASKS.get()()


def _helpers(count: int) -> None:
    """Make sure at least ``count`` helper threads are running."""
    with _STARTING:
        while len(_HELPERS) < count:
            t = threading.Thread(target=_helper, name=f"recursions-replications-{len(_HELPERS)}",
                                 daemon=True)
            t.start()
            _HELPERS.append(t)


def each_replication(one: Callable[[int], Any], nrep: int, serial: bool = False,
                     stop: list[bool] | None = None) -> None:
    """``one(r)`` for every replication ``r``: in threads where several may run, else in turn.

    The calling thread runs replications too, beside at most ``numba.get_num_threads() - 1``
    helper threads; each takes the next replication not yet started. ``serial`` runs them in
    turn in the calling thread (a user's map that checks every step stops at the first broken
    one). When a call raises (or the calling thread is interrupted), no further replication
    starts, ``stop[0]`` is set (where a caller's ``one`` looks at it to stop early), the
    calls under way are waited for, and the first exception is raised here.

    Parameters
    ----------
    one : callable
        ``one(r)`` runs replication ``r``.
    nrep : int
        The number of replications.
    serial : bool, default False
        Run them in turn, in this thread.
    stop : list of one bool, optional
        Set to ``[True]`` when the run stops on an exception.

    Examples
    --------
    >>> seen = []
    >>> each_replication(seen.append, 3, serial=True)
    >>> seen
    [0, 1, 2]
    >>> done = []
    >>> each_replication(done.append, 5)
    >>> sorted(done)
    [0, 1, 2, 3, 4]
    """
    flag = [False] if stop is None else stop
    # one replication never asks for numba's thread count, which starts its threading layer
    workers = 1 if serial or nrep <= 1 else min(nrep, numba.get_num_threads())
    if workers <= 1:
        try:
            for r in range(nrep):
                one(r)
        except BaseException:
            flag[0] = True
            raise
        return
    order = itertools.count()  # next() on it is atomic: each replication is taken once
    errors: list[BaseException] = []

    def work() -> None:
        while not flag[0]:
            r = next(order)
            if r >= nrep:
                return
            try:
                one(r)
            except BaseException as exc:  # raised again by the caller, after the others
                errors.append(exc)
                flag[0] = True

    finished = [threading.Event() for _ in range(workers - 1)]

    def task(event: threading.Event) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            finally:
                event.set()
        return run

    _helpers(workers - 1)
    for event in finished:
        _TASKS.put(task(event))
    try:
        work()
    except BaseException:  # an interrupt of this thread: the helpers start nothing more
        flag[0] = True
        raise
    finally:
        for event in finished:
            event.wait()
    if errors:
        raise errors[0]
