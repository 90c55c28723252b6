"""Where the tasks of a :func:`~loynes.sweep` run: this process, local workers, or Dask.

Every runner hands each finished task to a :class:`Sink` (the results, the progress bar and
the checkpoint file), so a task finished is a task kept, whatever happens after it. A task's
own exception becomes its row's ``error`` text inside the task; an exception that reaches a
runner is the pool's or the cluster's (a worker that died, a lost scheduler), never the
task's, and becomes a :class:`SweepError` carrying every finished row.

``max_workers=None`` (the default) runs tasks in this process first, in an order spread over
the grid, timing each; it starts a pool only once the work left clearly pays for starting the
workers (:func:`run_auto`; the reason is kept in the result).
"""

from __future__ import annotations

import contextlib
import functools
import math
import multiprocessing.process as mp_process
import numbers
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from loynes._checkpoint import Checkpoint
from recursions import Estimate
from recursions.common import cores as cores  # where loynes found it before recursions.common._pool
from recursions.common import dumps, run_in_processes

__all__ = ["GUIDANCE", "WORKER_START_S", "Execution", "Sink", "SweepError", "run_auto",
           "run_dask", "run_local", "run_serial"]

Task = tuple[int, dict[str, Any], np.random.SeedSequence]
Results = dict[int, tuple[dict[str, Any] | None, str | None]]

GUIDANCE = ("put the call under `if __name__ == \"__main__\":`, or pass max_workers=0 to run "
            "every task in this process (--workers 0 on the command line)")

WORKER_START_S = 3.0
"""Seconds a local worker process is taken to cost before its first task: starting Python,
importing the library and loading the compiled kernels from the cache. Set from the cost
measured on a loaded machine, not a quiet one, so that a pool starts only where it pays
(:ref:`bench-worker-start`)."""

PAYS = 1.5
"""The automatic choice starts a pool when it is estimated this many times faster than
finishing in this process."""


class SweepError(RuntimeError):
    """The worker pool or the cluster failed: the tasks it held were not run.

    Attributes
    ----------
    reason : str
        What failed, in a few words (the unfinished rows' ``error`` is ``"not run: "`` and it).
    table : recursions.common._tables.Table or pandas.DataFrame or None
        Every row: those finished, and the others with ``error`` saying why they did not run.
    result : object or None
        What the caller builds from the table (:class:`~loynes._stability_maps.StabilityMap`
        for :func:`~loynes._stability_maps.stability_map`).
    """

    def __init__(self, message: str, reason: str, table: Any = None,
                 result: Any = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.table = table
        self.result = result

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (a sweep inside a Dask task)
        return (type(self), (str(self), self.reason, self.table, self.result))


@dataclass(frozen=True)
class Execution:
    """How a sweep ran, and why.

    ``mode`` is ``"in-process"``, ``"pool"``, ``"dask"``, ``"interrupted"`` or ``"failed"``;
    ``workers`` the number of local worker processes (0 when none ran).

    Examples
    --------
    >>> str(Execution("in-process", 0, "max_workers=0"))
    'in-process: max_workers=0'
    """

    mode: str
    workers: int
    reason: str

    def __str__(self) -> str:
        return f"{self.mode}: {self.reason}"


class Sink:
    """Where finished tasks go: the results, the progress bar, the checkpoint file."""

    def __init__(self, results: Results, bar: Any, checkpoint: Checkpoint | None) -> None:
        self.results = results
        self.bar = bar
        self.checkpoint = checkpoint

    def put(self, k: int, vals: dict[str, Any] | None, err: str | None) -> None:
        """Keep task ``k``'s outcome."""
        self.results[k] = (vals, err)
        self.bar.update()
        if self.checkpoint is not None:
            self.checkpoint.append(k, vals, err)


# -- one task -------------------------------------------------------------------------------


def _scalar(x: Any) -> Any:
    """Numpy scalars to Python scalars (so rows and columns hold plain values)."""
    if isinstance(x, np.generic):
        return x.item()
    return x


def _check_value(v: Any, key: str) -> Any:
    if v is None or isinstance(v, (str, bool, int, float, complex)):
        return v
    if isinstance(v, numbers.Real):  # Fraction, Decimal, ...: as floats (as tables keep them)
        return float(v)
    if isinstance(v, numbers.Complex):
        return complex(v)
    raise TypeError(f"func must return a scalar or a dict of scalars; {key!r} is a "
                    f"{type(v).__name__}")


def _estimate_columns(name: str, se_name: str, e: Estimate) -> dict[str, Any]:
    """The columns of an estimate: its value and se, or value, ``nan`` and reason.

    An estimate whose se is not trusted gives its reason under ``{name}_untrusted`` and
    ``nan`` as its se: never a bare ``value ± se``.
    """
    value = _check_value(_scalar(e.value), name)
    if e.reason is None:
        return {name: value, se_name: _check_value(_scalar(e.se), se_name)}
    return {name: value, se_name: math.nan, f"{name}_untrusted": e.reason}


def _normalise(out: Any) -> dict[str, Any]:
    if isinstance(out, Estimate):  # a scalar Estimate: columns value and se
        return _estimate_columns("value", "se", out)
    if isinstance(out, Mapping):
        res = {}
        for k, v in out.items():
            if not isinstance(k, str):
                raise TypeError(f"func returned a dict with a non-str key {k!r}")
            if isinstance(v, Estimate):  # columns k and k_se
                res.update(_estimate_columns(k, f"{k}_se", v))
            else:
                res[k] = _check_value(_scalar(v), k)
        return res
    return {"value": _check_value(_scalar(out), "value")}


def run_task(func: Callable[..., Any], k: int, point: dict[str, Any],
             seed: np.random.SeedSequence) -> tuple[int, dict[str, Any] | None, str | None]:
    """Run task ``k``; an exception becomes the row's error text instead of propagating."""
    try:
        return k, _normalise(func(**point, rng=seed)), None
    except Exception as exc:  # the rest of the sweep completes
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return k, None, text


# -- in this process ------------------------------------------------------------------------


def run_serial(func: Callable[..., Any], tasks: list[Task], sink: Sink) -> None:
    """Every task in this process, in order."""
    for k, point, seed in tasks:
        sink.put(*run_task(func, k, point, seed))


def spread_order(n: int) -> list[int]:
    """``range(n)`` in bit-reversed order, so that every prefix is spread over the grid.

    Examples
    --------
    >>> spread_order(6)
    [0, 4, 2, 1, 5, 3]
    """
    bits = max(1, (n - 1).bit_length())
    rev = [int(format(i, f"0{bits}b")[::-1], 2) for i in range(1 << bits)]
    return [i for i in rev if i < n]


def _unsendable(func: Callable[..., Any]) -> str | None:
    """Why ``func`` cannot be sent to worker processes, or None when it can."""
    try:
        dumps(func)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def run_auto(func: Callable[..., Any], tasks: list[Task], sink: Sink,
             workers: int) -> Execution:
    """Tasks in this process while that is cheap, a pool of ``workers`` once it clearly pays.

    The tasks run here in :func:`spread_order` (so that the first ones are spread over the
    grid), each timed. From the second on, the work left is estimated from the mean time of
    the tasks after the first (the first includes compiling kernels, which workers load from
    the cache instead); a pool starts when that estimate exceeds :data:`PAYS` times the
    pool's (:data:`WORKER_START_S` plus the work shared among the workers, no more workers than
    tasks left). Staying in process too long is the costlier mistake (up to the number of
    cores), so a single task longer than a worker's start-up is enough. A ``func`` that cannot
    be sent to workers, or a main script they cannot import, keeps every task here, and the
    reason says so. The numbers do not depend on the choice: every task has its own seed.
    """
    order = [tasks[i] for i in spread_order(len(tasks))]
    if workers <= 1 or len(tasks) <= 1:
        run_serial(func, order, sink)
        what = "one task" if len(tasks) <= 1 else "one core"
        return Execution("in-process", 0, f"{what}: no pool can help")
    times: list[float] = []
    blocked: str | None = None
    for i, (k, point, seed) in enumerate(order):
        t0 = time.perf_counter()
        sink.put(*run_task(func, k, point, seed))
        times.append(time.perf_counter() - t0)
        left = len(order) - i - 1
        if left == 0 or len(times) < 2 or blocked is not None:
            continue
        each = sum(times[1:]) / (len(times) - 1)
        n = min(workers, left)
        here, pool = left * each, WORKER_START_S + left * each / n
        if here > PAYS * pool or (times[-1] > WORKER_START_S and left >= 2):
            blocked = _pool_blocked(func)
            if blocked is not None:
                continue
            run_local(func, order[i + 1:], sink, n)
            return Execution("pool", n,
                             f"{i + 1} tasks ran here first, {each:.3g} s each after the "
                             f"first; the {left} left (about {here:.3g} s here) pay for {n} "
                             f"workers' start-up (about {WORKER_START_S:g} s each)")
    if blocked is not None:
        return Execution("in-process", 0, f"{len(order)} tasks took {sum(times):.3g} s here; a "
                                          f"pool would have paid, but {blocked}")
    if len(times) < 3:
        return Execution("in-process", 0, f"{len(order)} tasks took {sum(times):.3g} s here: "
                                          "too few to pay for starting workers")
    return Execution("in-process", 0,
                     f"{len(order)} tasks took {sum(times):.3g} s here; the work left never "
                     f"paid for {workers} workers' start-up (about {WORKER_START_S:g} s each)")


def _pool_blocked(func: Callable[..., Any]) -> str | None:
    """Why a pool cannot run ``func`` here (unpicklable, or a main script workers cannot read)."""
    why = _unsendable(func)
    if why is not None:
        return f"func cannot be sent to worker processes ({why})"
    unreadable = _main_from_unreadable_file()
    if unreadable is not None:
        return (f"worker processes cannot import the main script (read from "
                f"{'standard input' if unreadable == '<stdin>' else repr(unreadable)})")
    return None


# -- local worker processes -----------------------------------------------------------------


def _main_from_unreadable_file() -> str | None:
    """The main script's ``__file__`` when spawned workers could not import it, else None.

    Spawned workers re-run the main module from its ``__file__`` (unless it was started with
    ``python -m``). ``python - < script.py`` sets ``__file__`` to ``"<stdin>"``, which is no
    file, so every worker dies. Notebooks, ``python -c`` and the interactive prompt have no
    ``__file__``: the workers skip the main module, and cloudpickle sends ``func`` itself.
    """
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None
    path = getattr(main, "__file__", None)
    if not isinstance(path, str):
        return None
    full = path
    original = getattr(mp_process, "ORIGINAL_DIR", None)  # where the spawned workers start
    if not os.path.isabs(full) and original is not None:
        full = os.path.join(original, full)
    return None if os.path.isfile(full) else path


def refuse_in_bootstrapping_worker() -> None:
    """Raise at once when called while a spawned worker imports the main script.

    A script that calls ``sweep`` outside ``if __name__ == "__main__":`` calls it again in
    every worker as the worker starts; without this check the worker would run the whole
    sweep (in process, as the automatic choice begins) before dying.
    """
    if getattr(mp_process.current_process(), "_inheriting", False):
        raise RuntimeError(f"sweep was called while a worker process started: {GUIDANCE}")


def _check_main_readable() -> None:
    unreadable = _main_from_unreadable_file()
    if unreadable is not None:
        what = "standard input" if unreadable == "<stdin>" else f"{unreadable!r}, not a file"
        raise RuntimeError(f"sweep cannot start worker processes: the main script was read "
                           f"from {what}, and the workers (spawn start method) import it "
                           f"again from its file. Save the script to a file and run it "
                           f"with `python FILE`, with the call under "
                           f"`if __name__ == \"__main__\":`; or pass max_workers=0 to run "
                           f"every task in this process.")


def run_local(func: Callable[..., Any], tasks: list[Task], sink: Sink, workers: int) -> None:
    """The tasks on a pool of ``workers`` local processes (spawn start method).

    Raises
    ------
    SweepError
        (without its table, which the caller adds) when the pool breaks; every task finished
        before that is in the sink.
    """
    _check_main_readable()
    try:
        send = functools.partial(run_task, func)
        payload = dumps(send)
    except Exception as exc:
        raise TypeError(f"func cannot be sent to worker processes ({type(exc).__name__}: "
                        f"{exc}): pass max_workers=0 to run every task in this process "
                        "(or max_workers=None, which then stays in process)") from exc
    broken = run_in_processes(send, tasks, workers, lambda res: sink.put(*res),
                              payload=payload)
    if broken is not None:
        raise SweepError(
            "a worker process of the sweep died (BrokenProcessPool), so the tasks it held did "
            "not run. The workers start with the spawn method and import the main script "
            "again: a script that calls sweep (or stability_map) outside "
            f"`if __name__ == \"__main__\":` runs that call again in every worker, which "
            f"fails. To fix it, {GUIDANCE}. (A worker killed by the system, e.g. for lack of "
            "memory, ends the same way.) The finished rows are in this error's .table.",
            "a worker process died (BrokenProcessPool)") from broken


# -- Dask -----------------------------------------------------------------------------------


def dask_client(client: Any) -> tuple[Any, bool]:
    """The ``distributed.Client`` for ``client``, and whether the sweep opened it."""
    try:
        import distributed
    except ImportError:
        raise ImportError("client= needs dask.distributed: pip install 'dask[distributed]' "
                          "(or the extra: pip install 'queue-recursions[dist]')") from None
    if isinstance(client, str):
        return distributed.Client(client), True
    if isinstance(client, distributed.Client):
        return client, False
    raise TypeError("client must be None, a distributed.Client or a scheduler address "
                    f"string, got {type(client).__name__}")


def run_dask(func: Callable[..., Any], tasks: list[Task], sink: Sink, client: Any) -> None:
    """The tasks on a Dask cluster; each row exactly once, whatever Dask re-ran.

    Raises
    ------
    SweepError
        When the cluster lost tasks (a worker killed too often, ``KilledWorker``; the scheduler
        gone, ``CancelledError``): every task finished before is in the sink.
    """
    import uuid

    import distributed

    cl, own = dask_client(client)
    token = uuid.uuid4().hex[:12]
    futures: list[Any] = []
    lost: list[str] = []
    try:
        futures = [cl.submit(run_task, func, k, point, seed, key=f"sweep-{token}-{k}",
                             pure=False) for k, point, seed in tasks]
        for fut in distributed.as_completed(futures):
            try:
                k, vals, err = fut.result()
            except Exception as exc:  # the cluster's failure: the task's own is in err
                lost.append(f"{type(exc).__name__}: {exc}")
                continue
            if k not in sink.results:
                sink.put(k, vals, err)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # the scheduler or the connection went away
        lost.append(f"{type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(Exception):
            cl.cancel(futures)
        if own:
            with contextlib.suppress(Exception):
                cl.close()
    if lost:
        left = sum(t[0] not in sink.results for t in tasks)
        raise SweepError(f"the Dask cluster lost {left} of {len(tasks)} tasks ({lost[0]}); the "
                         "finished rows are in this error's .table (with checkpoint=, a rerun "
                         "finishes the others)", f"the Dask cluster failed ({lost[0]})")
