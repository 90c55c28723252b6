"""``sweep``: evaluate a function over a parameter grid, locally or on a Dask cluster.

``sweep(func, grid, rng=...)`` calls ``func(**point, rng=seed)`` once per grid point (and per
replication) and returns a tidy table: one row per task, in grid order, with the point's
parameters, ``replication``, the values ``func`` returned and ``error``.

Seeds
-----
Task ``k`` (point ``i``, replication ``r``, ``k = i * replications + r``) receives the ``k``-th
child of ``numpy.random.SeedSequence(rng).spawn(n_points * replications)``. Results therefore
depend on the seed and the grid only: not on the number of workers, the order in which tasks
finish, or whether they ran on a cluster (and a task that Dask re-runs after losing a worker
gets the same seed again).

Where tasks run
---------------
* ``client=None``: a pool of local worker processes (``concurrent.futures``, ``spawn`` start
  method, ``max_workers`` of them, by default the machine's cores). Each worker limits numba to
  ``cores // max_workers`` threads so that processes x threads <= cores. ``max_workers=0`` runs
  every task in the calling process (no pool; for debugging and doctests).
  The workers import the main script again, so a script must call ``sweep`` under
  ``if __name__ == "__main__":``; without the guard, or from a script read from standard input
  (``python - < script.py``, which the workers cannot import), ``sweep`` raises a
  ``RuntimeError`` that says so (use ``max_workers=0`` there). Notebooks, ``python -c`` and the
  interactive prompt need no guard.
* ``client`` a ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``): the tasks
  run on that Dask cluster (``pip install 'queue-recursions[dist]'``). Lost workers are handled
  by Dask: their tasks are re-run elsewhere, and each row is still returned exactly once.

``func`` and the grid values are serialised with ``cloudpickle`` when it is installed (it comes
with dask), so lambdas and functions defined in a notebook work; otherwise with ``pickle``.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import numbers
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from recursions._rng import RngLike, as_seed_sequence
from recursions._validate import check_bool, check_int
from recursions.estimate import Estimate
from recursions.tables import EXTRA, Table, column

__all__ = ["NOT_RUN", "as_table", "sweep"]

NOT_RUN = "not run: the sweep was interrupted"
"""The ``error`` text of rows whose task had not finished when the sweep was interrupted."""

RESERVED = ("rng", "replication", "error")
TABLES = ("dict", "auto", "pandas")

Grid = Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]


# -- grid ---------------------------------------------------------------------------------


def _scalar(x: Any) -> Any:
    """Numpy scalars to Python scalars (so rows and columns hold plain values)."""
    if isinstance(x, np.generic):
        return x.item()
    return x


def _check_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise TypeError(f"grid: parameter names must be identifiers (str), got {name!r}{where}")
    if name in RESERVED:
        raise ValueError(f"grid: {name!r} is reserved (the sweep sets rng, replication and "
                         f"error itself){where}")
    return name


def expand_grid(grid: Grid) -> tuple[list[str], list[dict[str, Any]]]:
    """Parameter names and the list of points of ``grid``, in the sweep's fixed order.

    Parameters
    ----------
    grid : dict of sequences, or sequence of dicts
        A dict ``{name: values}`` is expanded into its Cartesian product, the first name
        varying slowest (``itertools.product`` order); a list of dicts is used as it is (every
        dict must have the same names).

    Returns
    -------
    names : list of str
    points : list of dict

    Raises
    ------
    TypeError
        When ``grid`` is neither a dict nor a list of dicts, a value list is not a sequence, or
        a name is not an identifier.
    ValueError
        When the grid, or one of its value lists, is empty, or a name is reserved
        (``rng``, ``replication``, ``error``).

    Examples
    --------
    >>> expand_grid({"a": [1, 2], "b": ["x", "y"]})[1]
    [{'a': 1, 'b': 'x'}, {'a': 1, 'b': 'y'}, {'a': 2, 'b': 'x'}, {'a': 2, 'b': 'y'}]
    """
    if isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid is empty: give at least one parameter and its values")
        names = [_check_name(k, "") for k in grid]
        lists = []
        for k, v in grid.items():
            if isinstance(v, (str, bytes)) or not isinstance(v, (Sequence, np.ndarray, range)):
                raise TypeError(f"grid[{k!r}] must be a list of values, got "
                                f"{type(v).__name__}; write [{v!r}] for a single value")
            vals = [_scalar(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v)]
            if not vals:
                raise ValueError(f"grid[{k!r}] is empty: give at least one value")
            lists.append(vals)
        return names, [dict(zip(names, combo, strict=True)) for combo in itertools.product(*lists)]
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Sequence, np.ndarray)):
        raise TypeError("grid must be a dict {name: list of values} or a list of dicts, got "
                        f"{type(grid).__name__}")
    if len(grid) == 0:
        raise ValueError("grid is empty: give at least one point")
    points: list[dict[str, Any]] = []
    names = []
    for i, pt in enumerate(grid):
        if not isinstance(pt, Mapping):
            raise TypeError(f"grid[{i}] must be a dict of parameter values, got "
                            f"{type(pt).__name__}")
        keys = [_check_name(k, f" (grid[{i}])") for k in pt]
        if i == 0:
            names = keys
        elif set(keys) != set(names):
            raise ValueError(f"grid[{i}] has parameters {sorted(keys)}, but grid[0] has "
                             f"{sorted(names)}: every point must name the same parameters")
        points.append({k: _scalar(pt[k]) for k in names})
    return names, points


def _check_signature(func: Callable[..., Any], names: list[str]) -> None:
    """Check, before any work, that ``func(**point, rng=seed)`` can bind."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # builtins without a signature: nothing to check
        return
    params = sig.parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        accepted = None
    else:
        accepted = {n for n, p in params.items()
                    if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                  inspect.Parameter.KEYWORD_ONLY)}
    if accepted is not None:
        if "rng" not in accepted:
            raise TypeError(f"func {_name(func)} must accept a keyword argument rng "
                            "(the task's SeedSequence)")
        unknown = [n for n in names if n not in accepted]
        if unknown:
            raise ValueError(f"grid names {unknown} are not parameters of {_name(func)} "
                             f"(it takes {sorted(accepted - {'rng'})})")
    missing = [n for n, p in params.items()
               if p.default is inspect.Parameter.empty and n != "rng" and n not in names
               and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                              inspect.Parameter.KEYWORD_ONLY)]
    if missing:
        raise ValueError(f"{_name(func)} requires {missing}, which the grid does not give")
    if any(p.kind is inspect.Parameter.POSITIONAL_ONLY and p.default is inspect.Parameter.empty
           for p in params.values()):
        raise TypeError(f"{_name(func)} has positional-only parameters without defaults; "
                        "sweep passes every parameter by keyword")


def _name(func: Any) -> str:
    return getattr(func, "__qualname__", None) or type(func).__name__


# -- one task (runs in the worker) --------------------------------------------------------


def _normalise(out: Any) -> dict[str, Any]:
    if isinstance(out, Estimate):  # a scalar Estimate: columns value and se
        return {"value": _check_value(_scalar(out.value), "value"),
                "se": _check_value(_scalar(out.se), "se")}
    if isinstance(out, Mapping):
        res = {}
        for k, v in out.items():
            if not isinstance(k, str):
                raise TypeError(f"func returned a dict with a non-str key {k!r}")
            if isinstance(v, Estimate):  # columns k and k_se
                res[k] = _check_value(_scalar(v.value), k)
                res[f"{k}_se"] = _check_value(_scalar(v.se), f"{k}_se")
            else:
                res[k] = _check_value(_scalar(v), k)
        return res
    return {"value": _check_value(_scalar(out), "value")}


def _check_value(v: Any, key: str) -> Any:
    if v is None or isinstance(v, (numbers.Number, str, bool)):
        return v
    raise TypeError(f"func must return a scalar or a dict of scalars; {key!r} is a "
                    f"{type(v).__name__}")


def _run_task(func: Callable[..., Any], k: int, point: dict[str, Any],
              seed: np.random.SeedSequence) -> tuple[int, dict[str, Any] | None, str | None]:
    """Run task ``k``; an exception becomes the row's error text instead of propagating."""
    try:
        return k, _normalise(func(**point, rng=seed)), None
    except Exception as exc:  # the rest of the sweep completes
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return k, None, text


_WORKER_FUNC: Any = None


def _init_worker(payload: bytes, numba_threads: int) -> None:
    """Pool initializer: thread limits, ignore Ctrl-C (the parent handles it), load func."""
    global _WORKER_FUNC
    os.environ["NUMBA_NUM_THREADS"] = str(numba_threads)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(numba_threads))
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        import numba

        numba.set_num_threads(min(numba_threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    _WORKER_FUNC = pickle.loads(payload)


def _pool_task(k: int, point: dict[str, Any],
               seed: np.random.SeedSequence) -> tuple[int, dict[str, Any] | None, str | None]:
    return _run_task(_WORKER_FUNC, k, point, seed)


def _dumps(obj: Any) -> bytes:
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - cloudpickle comes with dask
        return pickle.dumps(obj)
    return cloudpickle.dumps(obj)


# -- tables -------------------------------------------------------------------------------


def as_table(columns: Mapping[str, Sequence[Any]], table: str = "dict", *,
             dims: Sequence[str] = ()) -> Any:
    """A column dict as a :class:`~recursions.tables.Table` or a pandas DataFrame.

    Parameters
    ----------
    columns : dict of sequences
        Equal-length columns, in order.
    table : {"dict", "auto", "pandas"}, default "dict"
        ``"dict"``: a :class:`~recursions.tables.Table`, a dict of numpy arrays with
        ``to_pandas()`` and ``to_xarray()``. ``"pandas"``: a DataFrame. ``"auto"``: a DataFrame
        when pandas is importable, else a Table. Numeric columns with missing values (rows that
        failed) hold NaN; other columns hold ``None`` there.
    dims : sequence of str, optional
        The parameter columns (the coordinates of ``Table.to_xarray()``).

    Returns
    -------
    recursions.tables.Table or pandas.DataFrame

    Raises
    ------
    ValueError
        When ``table`` is not one of the three choices, or columns differ in length.
    ImportError
        When ``table="pandas"`` and pandas is not installed.

    Examples
    --------
    >>> t = as_table({"a": [1, 2], "value": [0.5, None]}, table="dict")
    >>> t["a"].dtype.kind, t["value"].tolist()
    ('i', [0.5, nan])
    """
    if table not in TABLES:
        raise ValueError(f"table must be one of {TABLES}, got {table!r}")
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"columns must have equal lengths, got {sorted(lengths)}")
    arrays = Table({k: column(list(v)) for k, v in columns.items()}, dims=dims)
    if table == "dict":
        return arrays
    try:
        import pandas as pd
    except ImportError:
        if table == "pandas":
            raise ImportError(f"table='pandas' needs pandas: {EXTRA}") from None
        return arrays
    return pd.DataFrame(dict(arrays))


def _assemble(names: list[str], points: list[dict[str, Any]], replications: int,
              results: dict[int, tuple[dict[str, Any] | None, str | None]],
              table: str) -> Any:
    keys: list[str] = []
    for k in sorted(results):
        vals = results[k][0]
        for key in vals or ():
            if key not in keys:
                keys.append(key)
    # a returned key that clashes with a parameter or bookkeeping column gets a suffix
    out_name = {k: (f"{k}_out" if k in names or k in ("replication", "error") else k)
                for k in keys}
    cols: dict[str, list[Any]] = {n: [] for n in [*names, "replication",
                                                  *out_name.values(), "error"]}
    for i, pt in enumerate(points):
        for r in range(replications):
            k = i * replications + r
            vals, err = results.get(k, (None, NOT_RUN))
            for n in names:
                cols[n].append(pt[n])
            cols["replication"].append(r)
            for key in keys:
                cols[out_name[key]].append(None if vals is None else vals.get(key))
            cols["error"].append(err)
    dims = names if replications == 1 else [*names, "replication"]
    return as_table(cols, table, dims=dims)


# -- progress -----------------------------------------------------------------------------


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(progress: bool, total: int) -> Any:
    if not progress:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, unit="task", desc="sweep")


# -- runners ------------------------------------------------------------------------------


Task = tuple[int, dict[str, Any], np.random.SeedSequence]
Results = dict[int, tuple[dict[str, Any] | None, str | None]]


def _run_serial(func: Callable[..., Any], tasks: list[Task], results: Results,
                bar: Any) -> bool:
    try:
        for k, point, seed in tasks:
            _, vals, err = _run_task(func, k, point, seed)
            results[k] = (vals, err)
            bar.update()
    except KeyboardInterrupt:
        return True
    return False


GUIDANCE = ("put the call under `if __name__ == \"__main__\":`, or pass max_workers=0 to run "
            "every task in this process (--workers 0 on the command line)")


def _main_from_unreadable_file() -> str | None:
    """The main script's ``__file__`` when spawned workers could not import it, else None.

    Spawned workers re-run the main module from its ``__file__`` (unless it was started with
    ``python -m``). ``python - < script.py`` sets ``__file__`` to ``"<stdin>"``, which is no
    file, so every worker dies. Notebooks, ``python -c`` and the interactive prompt have no
    ``__file__``: the workers skip the main module, and cloudpickle sends ``func`` itself.
    """
    import multiprocessing.process as mp_process
    import sys

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


def _run_local(func: Callable[..., Any], tasks: list[Task], results: Results, bar: Any,
               max_workers: int) -> bool:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    unreadable = _main_from_unreadable_file()
    if unreadable is not None:
        what = "standard input" if unreadable == "<stdin>" else f"{unreadable!r}, not a file"
        raise RuntimeError(f"sweep cannot start worker processes: the main script was read "
                           f"from {what}, and the workers (spawn start method) import it "
                           f"again from its file. Save the script to a file and run it "
                           f"with `python FILE`, with the call under "
                           f"`if __name__ == \"__main__\":`; or pass max_workers=0 to run "
                           f"every task in this process.")

    cores = os.cpu_count() or 1
    threads = max(1, cores // max_workers)
    ex = ProcessPoolExecutor(max_workers=max_workers,
                             mp_context=multiprocessing.get_context("spawn"),
                             initializer=_init_worker, initargs=(_dumps(func), threads))
    interrupted = False
    try:
        pending = {ex.submit(_pool_task, k, point, seed) for k, point, seed in tasks}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                k, vals, err = fut.result()
                results[k] = (vals, err)
                bar.update()
    except BrokenProcessPool as exc:
        raise RuntimeError(
            "a worker process of the sweep died (BrokenProcessPool). The workers start with "
            "the spawn method and import the main script again: a script that calls sweep "
            "(or stability_map) outside `if __name__ == \"__main__\":` runs that call again "
            f"in every worker, which fails. To fix it, {GUIDANCE}. (A worker killed by the "
            "system, e.g. for lack of memory, ends the same way.)") from exc
    except KeyboardInterrupt:
        interrupted = True
        # let the executor cancel what is queued (cancelling futures here races with its
        # manager thread), then stop the running tasks at once
        procs = list((getattr(ex, "_processes", None) or {}).values())
        ex.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            with contextlib.suppress(Exception):
                proc.terminate()
    finally:
        if not interrupted:
            ex.shutdown(wait=True)
    return interrupted


def _dask_client(client: Any) -> tuple[Any, bool]:
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


def _run_dask(func: Callable[..., Any], tasks: list[Task], results: Results, bar: Any,
              client: Any) -> bool:
    import uuid

    import distributed

    cl, own = _dask_client(client)
    token = uuid.uuid4().hex[:12]
    interrupted = False
    futures = []
    try:
        futures = [cl.submit(_run_task, func, k, point, seed,
                             key=f"sweep-{token}-{k}", pure=False)
                   for k, point, seed in tasks]
        for fut in distributed.as_completed(futures):
            k, vals, err = fut.result()
            if k not in results:  # exactly once, whatever Dask re-ran
                results[k] = (vals, err)
                bar.update()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        with contextlib.suppress(Exception):
            cl.cancel(futures)
        if own:
            cl.close()
    return interrupted


# -- public -------------------------------------------------------------------------------


def sweep(
    func: Callable[..., Any],
    grid: Grid,
    *,
    rng: RngLike = 1,
    client: Any = None,
    progress: bool = True,
    replications: int = 1,
    max_workers: int | None = None,
    table: str = "dict",
) -> Any:
    """Evaluate ``func(**point, rng=seed)`` over a grid; return a tidy table in grid order.

    Parameters
    ----------
    func : callable
        Called as ``func(**point, rng=seed)`` with ``seed`` a ``numpy.random.SeedSequence``;
        returns a dict of scalars (one column each) or a scalar (column ``value``). A scalar
        :class:`~recursions.Estimate` gives two columns: ``name`` and ``name_se`` (returned
        alone: ``value`` and ``se``).
    grid : dict of sequences, or sequence of dicts
        ``{name: values}`` (the Cartesian product, the first name varying slowest) or a list
        of points ``[{name: value}, ...]``.
    rng : int, Generator, SeedSequence or None, default 1
        Root seed; task ``k`` gets child ``k`` of ``SeedSequence(rng).spawn(n_tasks)``.
    client : None, distributed.Client or str, default None
        ``None``: local worker processes. A Dask client or a scheduler address: run there.
    progress : bool, default True
        A tqdm bar over tasks (when tqdm is installed).
    replications : int, default 1
        Independent runs per point (different seeds), one row each.
    max_workers : int, optional
        Local worker processes (default: the machine's cores, at most the number of tasks);
        ``0`` runs every task in this process, with no pool (no ``__main__`` guard needed).
        Ignored with ``client``.
    table : {"dict", "auto", "pandas"}, default "dict"
        See :func:`as_table`.

    Returns
    -------
    recursions.tables.Table or pandas.DataFrame
        A :class:`~recursions.tables.Table` (a dict of numpy arrays; ``to_pandas()``, and
        ``to_xarray()`` with the grid's names, and ``replication`` when ``replications > 1``,
        as coordinates) unless ``table`` asks for a DataFrame. Columns: the grid's names,
        ``replication``, the values ``func`` returned (a name that clashes with a parameter
        gets the suffix ``_out``), ``error`` (``None``, or the exception's text when the task
        raised; the other tasks still run). On Ctrl-C (``KeyboardInterrupt``) the sweep stops,
        does not raise, and returns every row: those not finished have missing values and
        ``error == NOT_RUN``.

    Raises
    ------
    TypeError, ValueError
        Before any work, for a bad grid (empty, empty value lists, not a dict or list of dicts,
        names that ``func`` does not take, reserved names) or bad options.
    ImportError
        When ``client`` is given and dask.distributed is not installed.
    RuntimeError
        With local worker processes, when the main script was read from standard input
        (before any work), or a worker died: most often a script that calls ``sweep`` without
        the ``if __name__ == "__main__":`` guard. The message says what to do.

    Examples
    --------
    >>> import numpy as np
    >>> def f(a, b, rng):
    ...     return {"s": a + b, "u": np.random.default_rng(rng).random() < 2}
    >>> t = sweep(f, {"a": [1, 2], "b": [10, 20]}, max_workers=0, progress=False)
    >>> t["s"].tolist(), t["error"].tolist(), t.dims
    ([11, 21, 12, 22], [None, None, None, None], ('a', 'b'))
    >>> t.to_xarray()["s"].sel(a=2, b=10).item()
    12
    """
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    replications = check_int(replications, "replications", 1)
    if table not in TABLES:
        raise ValueError(f"table must be one of {TABLES}, got {table!r}")
    if max_workers is not None:
        max_workers = check_int(max_workers, "max_workers (or None)", 0)
    progress = check_bool(progress, "progress")
    names, points = expand_grid(grid)
    _check_signature(func, names)
    replications = int(replications)
    n = len(points) * replications
    seeds = as_seed_sequence(rng).spawn(n)
    tasks = [(i * replications + r, points[i], seeds[i * replications + r])
             for i in range(len(points)) for r in range(replications)]
    if client is not None:
        _dask_client_check()
    results: dict[int, tuple[dict[str, Any] | None, str | None]] = {}
    bar = _bar(bool(progress), n)
    try:
        if client is not None:
            _run_dask(func, tasks, results, bar, client)
        elif max_workers == 0:
            _run_serial(func, tasks, results, bar)
        else:
            workers = min(int(max_workers or os.cpu_count() or 1), n)
            _run_local(func, tasks, results, bar, workers)
    finally:
        bar.close()
    return _assemble(names, points, replications, results, table)


def _dask_client_check() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ImportError("client= needs dask.distributed: pip install 'dask[distributed]' "
                          "(or the extra: pip install 'queue-recursions[dist]')") from None


def _iter_rows(t: Any) -> Iterable[dict[str, Any]]:
    """Rows of a table returned by :func:`sweep` (DataFrame or dict of arrays)."""
    if isinstance(t, dict):
        cols = list(t)
        for i in range(len(t[cols[0]]) if cols else 0):
            yield {c: _scalar(t[c][i]) for c in cols}
    else:
        yield from t.to_dict(orient="records")

