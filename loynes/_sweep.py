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
* ``client=None, max_workers=None`` (the default): tasks run in the calling process, timed,
  in an order spread over the grid; a pool of local workers starts only once the work left
  clearly pays for their start-up (:func:`loynes._runners.run_auto`), so a cheap grid never
  pays seconds of process start-up for milliseconds of work. The result's
  ``attrs["execution"]`` says what was chosen and why.
* ``max_workers=k >= 1``: a pool of ``k`` local worker processes (``concurrent.futures``,
  ``spawn`` start method); each limits numba to ``cores // k`` threads (with
  ``numba.set_num_threads``) so that processes x threads <= cores. ``max_workers=0`` runs
  every task in the calling process.
  The workers import the main script again, so a script must call ``sweep`` under
  ``if __name__ == "__main__":``; without the guard, or from a script read from standard input
  (``python - < script.py``, which the workers cannot import), ``sweep`` raises an error
  that says so (use ``max_workers=0`` there). Notebooks, ``python -c`` and the interactive
  prompt need no guard.
* ``client`` a ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``): the tasks
  run on that Dask cluster (``pip install 'queue-recursions[dist]'``). Lost workers are handled
  by Dask: their tasks are re-run elsewhere, and each row is still returned exactly once.

Nothing finished is lost
------------------------
A task's own exception becomes its row's ``error``. When the pool or the cluster fails (a
worker killed, the scheduler lost), :class:`~loynes._runners.SweepError` is raised carrying the
table: every finished row, the others marked with why they did not run. With
``checkpoint=PATH`` each finished task is also appended to a file as it finishes, and a rerun
with the same arguments resumes from it (:mod:`loynes._checkpoint`).

``func`` and the grid values are serialised with ``cloudpickle`` when it is installed (it comes
with dask), so lambdas and functions defined in a notebook work; otherwise with ``pickle``.
"""

from __future__ import annotations

import inspect
import itertools
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from loynes._checkpoint import Checkpoint, identity
from loynes._runners import (
    Execution,
    Sink,
    SweepError,
    Task,
    refuse_in_bootstrapping_worker,
    run_auto,
    run_dask,
    run_local,
    run_serial,
)
from recursions.common import (
    EXTRA,
    RngLike,
    Table,
    as_seed_sequence,
    check_bool,
    check_int,
    column,
    cores,
    progress_bar,
    require_memory,
)

__all__ = ["NOT_RUN", "SweepError", "SweepInterrupted", "as_table", "sweep"]

NOT_RUN = "not run: the sweep was interrupted"
"""The ``error`` text of rows whose task had not finished when the sweep was interrupted.

Every row that did not run has an ``error`` beginning ``"not run: "``; after a failure of the
pool or the cluster the rest says what failed (``SweepError.reason``)."""


class SweepInterrupted(UserWarning):
    """A sweep (or a stability map) stopped by Ctrl-C: it returns, with the rest not run."""


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


# -- tables -------------------------------------------------------------------------------


def as_table(columns: Mapping[str, Sequence[Any]], table: str = "dict", *,
             dims: Sequence[str] = ()) -> Any:
    """A column dict as a :class:`~recursions.common._tables.Table` or a pandas DataFrame.

    Parameters
    ----------
    columns : dict of sequences
        Equal-length columns, in order.
    table : {"dict", "auto", "pandas"}, default "dict"
        ``"dict"``: a :class:`~recursions.common._tables.Table`, a dict of numpy arrays with
        ``to_pandas()`` and ``to_xarray()``. ``"pandas"``: a DataFrame. ``"auto"``: a DataFrame
        when pandas is importable, else a Table. Numeric columns with missing values (rows that
        failed) hold NaN; other columns hold ``None`` there.
    dims : sequence of str, optional
        The parameter columns (the coordinates of ``Table.to_xarray()``).

    Returns
    -------
    recursions.common._tables.Table or pandas.DataFrame

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
              table: str, missing: str = NOT_RUN) -> Any:
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
            vals, err = results.get(k, (None, missing))
            for n in names:
                cols[n].append(pt[n])
            cols["replication"].append(r)
            for key in keys:
                cols[out_name[key]].append(None if vals is None else vals.get(key))
            cols["error"].append(err)
    dims = names if replications == 1 else [*names, "replication"]
    return as_table(cols, table, dims=dims)


# -- public -------------------------------------------------------------------------------


def _func_identity(func: Any) -> str:
    """What ``func`` computes, as far as can be told before running it (no addresses).

    Its name, then a hash of its code and one of its closure (:func:`_func_parts`), so that
    two lambdas, two closures over other values or an edited body differ.
    """
    parts = _func_parts(func)
    return f"{parts['function']}#{parts['code']}#{parts['closure']}"


def _func_parts(func: Any) -> dict[str, str]:
    """``func`` in three parts that a checkpoint compares one by one: name, code, closure.

    ``function``: its module and name (for a ``functools.partial``, of its function; a wrapper
    that sets ``__wrapped__``, as ``functools.wraps`` does, names what it wraps too).
    ``code``: a hash of its code, nested code included. ``closure``: a hash of its defaults
    and closure values (a partial's arguments and keywords too; a callable object's pickled
    state).
    """
    import functools

    if isinstance(func, functools.partial):
        inner = _func_parts(func.func)
        args = ", ".join(_value_identity(v) for v in func.args)
        kws = ", ".join(f"{k}={_value_identity(v)}" for k, v in sorted(func.keywords.items()))
        return {"function": f"partial({inner['function']})", "code": inner["code"],
                "closure": _digest(f"{inner['closure']}\0{args}; {kws}")}
    name = f"{getattr(func, '__module__', '?')}.{_name(func)}"
    code, closure = "", ""
    text = getattr(func, "__code__", None)
    if text is not None:
        values = [_value_identity(getattr(func, "__defaults__", None)),
                  _value_identity(getattr(func, "__kwdefaults__", None))]
        for cell in getattr(func, "__closure__", None) or ():
            try:
                values.append(_value_identity(cell.cell_contents))
            except ValueError:  # an empty cell
                values.append("<empty>")
        code, closure = _digest(_code_text(text)), _digest(chr(0).join(values))
    elif not isinstance(func, type) and hasattr(func, "__dict__"):
        closure = _digest(_value_identity(vars(func)))
    inner_func = getattr(func, "__wrapped__", None)
    if inner_func is None:
        return {"function": name, "code": code, "closure": closure}
    inner = _func_parts(inner_func)
    return {"function": f"{name}[{inner['function']}]", "code": f"{code}[{inner['code']}]",
            "closure": f"{closure}[{inner['closure']}]"}


def _code_text(code: Any) -> str:
    consts = [(_code_text(c) if hasattr(c, "co_code") else repr(c)) for c in code.co_consts]
    return repr((code.co_code, consts, code.co_names, code.co_varnames))


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _value_identity(v: Any) -> str:
    """A value as the same text in every run: arrays by their bytes, callables by identity."""
    if isinstance(v, np.ndarray):
        return f"array({v.dtype}, {v.shape}, #{_digest(v.tobytes().hex())})"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_value_identity(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner})"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k!r}: {_value_identity(x)}" for k, x in sorted(
            v.items(), key=lambda kv: repr(kv[0]))) + "}"
    if callable(v) and not isinstance(v, type):
        return _func_identity(v)
    text = repr(v)
    return text if " at 0x" not in text else type(v).__name__


def _open_checkpoint(path: Any, func: Callable[..., Any], points: list[dict[str, Any]],
                     replications: int, seed: np.random.SeedSequence,
                     extra: Any) -> Checkpoint:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"checkpoint must be a path (str or os.PathLike), got "
                        f"{type(path).__name__}")
    grid = _value_identity(points)
    if any(" at 0x" in repr(v) and not callable(v) and not isinstance(v, np.ndarray)
           for pt in points for v in pt.values()):
        raise ValueError("checkpoint needs grid values whose repr is the same in every run, "
                         "so that a rerun can recognise its points; a grid value prints as an "
                         "address (e.g. an object without __repr__): use names or numbers in "
                         "the grid and build the objects inside func")
    from recursions import __version__

    ident = identity(**_func_parts(func), grid=grid, replications=replications,
                     seed=[repr(seed.entropy), list(seed.spawn_key), seed.n_children_spawned],
                     extra=extra, version=__version__)
    ck = Checkpoint(path, ident)
    ck.open()
    return ck


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
    checkpoint: str | os.PathLike[str] | None = None,
) -> Any:
    """Evaluate ``func(**point, rng=seed)`` over a grid; return a tidy table in grid order.

    Parameters
    ----------
    func : callable
        Called as ``func(**point, rng=seed)`` with ``seed`` a ``numpy.random.SeedSequence``;
        returns a dict of scalars (one column each) or a scalar (column ``value``). A scalar
        :class:`~recursions.Estimate` gives two columns: ``name`` and ``name_se`` (returned
        alone: ``value`` and ``se``); one whose standard error is not trusted gives ``nan``
        as its ``name_se`` and its reason in a third column, ``name_untrusted``.
    grid : dict of sequences, or sequence of dicts
        ``{name: values}`` (the Cartesian product, the first name varying slowest) or a list
        of points ``[{name: value}, ...]``.
    rng : int, Generator, SeedSequence or None, default 1
        Root seed; task ``k`` gets child ``k`` of ``SeedSequence(rng).spawn(n_tasks)``.
    client : None, distributed.Client or str, default None
        ``None``: this process or local workers (``max_workers``). A Dask client or a
        scheduler address: run there.
    progress : bool, default True
        A tqdm bar over tasks (when tqdm is installed).
    replications : int, default 1
        Independent runs per point (different seeds), one row each.
    max_workers : int, optional
        ``None`` (default): tasks run in this process, timed, in an order spread over the
        grid, and a pool of local workers (one per core) starts only once the work left
        clearly pays for their start-up (a few seconds each; see
        :func:`loynes._runners.run_auto`). ``0``: every task in this process. ``k >= 1``: a
        pool of ``k`` workers, as asked. The choice and its reason are in the result's
        ``attrs["execution"]``. Ignored with ``client``.
    table : {"dict", "auto", "pandas"}, default "dict"
        See :func:`as_table`.
    checkpoint : str or os.PathLike, optional
        A file to which each finished task is appended as it finishes
        (:mod:`loynes._checkpoint`). A rerun with the same arguments reads it, runs only the
        tasks not finished there (and those that raised), and returns a table identical to an
        uninterrupted run; a file written by another sweep is refused. Needs a fixed ``rng``
        and grid values with a stable ``repr``.

    Returns
    -------
    recursions.common._tables.Table or pandas.DataFrame
        A :class:`~recursions.common._tables.Table` (a dict of numpy arrays; ``to_pandas()``, and
        ``to_xarray()`` with the grid's names, and ``replication`` when ``replications > 1``,
        as coordinates) unless ``table`` asks for a DataFrame. Columns: the grid's names,
        ``replication``, the values ``func`` returned (a name that clashes with a parameter
        gets the suffix ``_out``), ``error`` (``None``, or the exception's text when the task
        raised; the other tasks still run). ``attrs["execution"]`` is a
        :class:`~loynes.Execution` (mode, workers, reason). On Ctrl-C
        (``KeyboardInterrupt``) the sweep stops, does not raise, and returns every row: those
        not finished have missing values and ``error == NOT_RUN``.

    Raises
    ------
    TypeError, ValueError
        Before any work, for a bad grid (empty, empty value lists, not a dict or list of dicts,
        names that ``func`` does not take, reserved names) or bad options; a
        :class:`~loynes._checkpoint.CheckpointMismatch` for a checkpoint of another sweep.
    ImportError
        When ``client`` is given and dask.distributed is not installed.
    RuntimeError
        With local worker processes, when the main script was read from standard input
        (before any work). The message says what to do.
    loynes._runners.SweepError
        When the worker pool or the cluster fails (a worker died, ``BrokenProcessPool``; the
        scheduler was lost; ``KilledWorker``): its ``.table`` has every finished row, the
        others with ``error`` saying why they did not run; with ``checkpoint``, a rerun
        finishes them. Most often a script that starts workers without the
        ``if __name__ == "__main__":`` guard; the message says what to do.

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
    >>> str(t.attrs["execution"])
    'in-process: max_workers=0'
    """
    return hooked_sweep(func, grid, rng=rng, client=client, progress=progress,
                        replications=replications, max_workers=max_workers, table=table,
                        checkpoint=checkpoint)


def hooked_sweep(func: Callable[..., Any], grid: Grid, *, client: Any, progress: bool,
                 replications: int, max_workers: int | None, table: str,
                 checkpoint: str | os.PathLike[str] | None, rng: RngLike = 1,
                 key_extra: Any = None, build: Callable[[Any], Any] | None = None) -> Any:
    """:func:`sweep`, with two hooks for callers such as ``stability_map``.

    ``key_extra`` is added to the checkpoint's identity; ``build`` turns a partial table into
    the result a :class:`SweepError` carries.
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
    refuse_in_bootstrapping_worker()
    replications = int(replications)
    n = len(points) * replications
    # per task: its seed, its point and its row (about 2 KB with the bookkeeping)
    require_memory(2048.0 * n, f"a sweep of {n:,} tasks ({len(points):,} points x "
                   f"{replications} replications)", "use a smaller grid or fewer replications")
    if checkpoint is not None and rng is None:
        raise ValueError("checkpoint needs a fixed rng (an int, a Generator or a SeedSequence): "
                         "rng=None draws new seeds in every run, so a rerun could not resume")
    root = as_seed_sequence(rng)
    ck = None if checkpoint is None else _open_checkpoint(checkpoint, func, points,
                                                          replications, root, key_extra)
    seeds = root.spawn(n)
    if client is not None:
        dask_client_check()
    results: dict[int, tuple[dict[str, Any] | None, str | None]] = {} if ck is None \
        else ck.load()
    tasks = [(k, points[k // replications], seeds[k]) for k in range(n) if k not in results]
    bar = progress_bar(bool(progress), n, unit="task", desc="sweep", required=False)
    bar.update(n - len(tasks))
    sink = Sink(results, bar, ck)
    missing, failure = NOT_RUN, None
    try:
        how = _run(func, tasks, sink, client, max_workers, n)
    except KeyboardInterrupt:
        how = Execution("interrupted", 0, "Ctrl-C")
    except SweepError as exc:
        failure, missing = exc, f"not run: {exc.reason}"
        how = Execution("failed", 0, exc.reason)
    finally:
        bar.close()
        if ck is not None:
            ck.close()
    if len(tasks) < n:
        how = Execution(how.mode, how.workers, f"{how.reason} ({n - len(tasks)} of {n} tasks "
                                                 "read from the checkpoint)")
    out = _assemble(names, points, replications, results, table, missing)
    out.attrs["execution"] = how
    if how.mode == "interrupted":
        left = n - len(results)
        warnings.warn(f"sweep interrupted (Ctrl-C): {left} of {n} tasks not run, their rows "
                      f"marked error = {NOT_RUN!r}"
                      + ("; a rerun with the same checkpoint= runs only those" if ck is not None
                         else "; pass checkpoint= to a rerun to keep what finishes"),
                      SweepInterrupted, stacklevel=4 if build is not None else 3)
    if failure is not None:
        failure.table = out
        failure.result = build(out) if build is not None else None
        raise failure
    return out


def _run(func: Callable[..., Any], tasks: list[Task], sink: Sink, client: Any,
         max_workers: int | None, n: int) -> Execution:
    """Run ``tasks`` where the options say; how, and why."""
    if not tasks:
        return Execution("in-process", 0, "nothing left to run")
    if client is not None:
        run_dask(func, tasks, sink, client)
        return Execution("dask", 0, "client= given")
    if max_workers == 0:
        run_serial(func, tasks, sink)
        return Execution("in-process", 0, "max_workers=0")
    if max_workers is None:
        return run_auto(func, tasks, sink, min(cores(), len(tasks)))
    workers = min(max_workers, len(tasks))
    run_local(func, tasks, sink, workers)
    return Execution("pool", workers, f"max_workers={max_workers}")


def dask_client_check() -> None:
    """Raise ImportError, saying how to install it, when dask.distributed is missing."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ImportError("client= needs dask.distributed: pip install 'dask[distributed]' "
                          "(or the extra: pip install 'queue-recursions[dist]')") from None


def iter_rows(t: Any) -> Iterable[dict[str, Any]]:
    """Rows of a table returned by :func:`sweep` (DataFrame or dict of arrays)."""
    if isinstance(t, dict):
        cols = list(t)
        for i in range(len(t[cols[0]]) if cols else 0):
            yield {c: _scalar(t[c][i]) for c in cols}
    else:
        yield from t.to_dict(orient="records")

