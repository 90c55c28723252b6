"""Results as tables: ``to_dict()`` for one result, :class:`Table` and :class:`Rows` for many.

Every result type of the three packages (:class:`~recursions.SimulationResult`,
:class:`~coupling.PerfectSample`, :class:`~loynes.LoynesResult`,
:class:`~loynes.StabilityReport`, ...) has ``to_dict()``: its fields (and the statistics it
computes) as plain Python values and numpy arrays, every :class:`~recursions.Estimate` as
``{"value": ..., "se": ...}``.

Results of many runs come as tables: :class:`Table` (columns: a dict of numpy arrays, returned
by :func:`loynes.sweep`) and :class:`Rows` (a list of row dicts: the calibration and benchmark
tables). Both have ``to_pandas()`` and, when they have parameter axes (:attr:`Table.dims`),
``to_xarray()``: a Dataset with the parameters as coordinates and the values and standard
errors as variables. pandas and xarray are an optional extra::

    pip install 'queue-recursions[tables]'

without which those two methods raise an ``ImportError`` that says so.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = [
    "EXTRA",
    "Record",
    "Rows",
    "Table",
    "column",
    "plain",
    "record_dict",
    "to_pandas",
    "to_xarray",
]

EXTRA = "pip install 'queue-recursions[tables]'"
"""What to run when pandas or xarray is missing."""


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` (pandas or xarray), or raise an ``ImportError`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {module}, which is not installed: {EXTRA}") from None


def plain(x: Any) -> Any:
    """``x`` with results and numpy scalars turned into plain values (arrays are kept).

    :class:`~recursions.Estimate` becomes ``{"value": ..., "se": ...}``, an object with
    ``to_dict()`` its dict, a mapping a dict, a list or tuple a list, a numpy scalar a Python
    scalar. ``None``, ``str``, ``bool``, numbers and numpy arrays stay as they are; any other
    object (a law, a system) becomes its ``repr``.

    Examples
    --------
    >>> import numpy as np
    >>> from recursions import Estimate
    >>> plain({"p": Estimate(np.float64(0.5), 0.01), "n": np.int64(3), "xs": (1, 2)})
    {'p': {'value': 0.5, 'se': 0.01}, 'n': 3, 'xs': [1, 2]}
    """
    to_dict = getattr(x, "to_dict", None)
    if dataclasses.is_dataclass(x) and not isinstance(x, type) and callable(to_dict):
        return to_dict()
    if isinstance(x, np.generic):
        return x.item()
    if x is None or isinstance(x, (str, bool, int, float, complex, np.ndarray)):
        return x
    if isinstance(x, Mapping):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return repr(x)


class Record:
    """Mixin of the result dataclasses: :meth:`to_dict`.

    A subclass lists in ``_dict_extra`` the properties (computed statistics) that
    :meth:`to_dict` adds to the public fields.
    """

    _dict_extra: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The public fields (and computed statistics) as plain values.

        Returns
        -------
        dict
            One key per public field, then one per statistic the type computes (e.g. the
            ``p_wait`` of a :class:`~coupling.PerfectSample`); values as :func:`plain` makes
            them: Python scalars, numpy arrays, ``{"value": ..., "se": ...}`` for an
            :class:`~recursions.Estimate`, dicts for nested results.

        Examples
        --------
        >>> import recursions as rc
        >>> res = rc.simulate(rc.JSW(2), rc.Poisson(1.0, rc.dists.Exponential(1.0)),
        ...                   steps=4_000, rng=1)
        >>> d = res.to_dict()
        >>> d["steps"], d["mean_wait"]["value"] == res.mean_wait.value
        (4000, True)
        """
        return record_dict(self, self._dict_extra)


def record_dict(obj: Any, extra: Iterable[str] = ()) -> dict[str, Any]:
    """The public fields of the dataclass ``obj``, then the attributes ``extra``, made plain.

    Examples
    --------
    >>> from recursions import Estimate
    >>> record_dict(Estimate(0.5, 0.1))
    {'value': 0.5, 'se': 0.1}
    """
    out = {
        f.name: plain(getattr(obj, f.name))
        for f in dataclasses.fields(obj)
        if not f.name.startswith("_")
    }
    for name in extra:
        out[name] = plain(getattr(obj, name))
    return out


# -- many results -------------------------------------------------------------------------


def to_pandas(table: Any) -> pd.DataFrame:
    """A :class:`Table`, :class:`Rows`, dict of columns, list of rows or DataFrame as a DataFrame.

    Parameters
    ----------
    table : Table, Rows, dict of sequences, list of dicts or pandas.DataFrame

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ImportError
        When pandas is not installed.

    Examples
    --------
    >>> to_pandas({"a": [1, 2], "value": [0.5, 0.25]}).shape
    (2, 2)
    """
    pd = require("pandas", "to_pandas()")
    if isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, Mapping):
        return pd.DataFrame(
            {k: np.asarray(v) if isinstance(v, np.ndarray) else list(v) for k, v in table.items()}
        )
    return pd.DataFrame.from_records([dict(r) for r in table])


def to_xarray(table: Any, dims: Sequence[str]) -> xr.Dataset:
    """A table as an ``xarray.Dataset`` indexed by the parameter columns ``dims``.

    Parameters
    ----------
    table : Table, Rows, dict of sequences, list of dicts or pandas.DataFrame
        One row per parameter point (every combination of ``dims`` at most once).
    dims : sequence of str
        The parameter columns: the Dataset's coordinates (each the sorted distinct values of
        its column); every other column is a variable over them, missing combinations NaN.

    Returns
    -------
    xarray.Dataset

    Raises
    ------
    ImportError
        When pandas or xarray is not installed.
    ValueError
        When ``dims`` is empty, names no column, or a combination of ``dims`` repeats.

    Examples
    --------
    >>> ds = to_xarray({"n": [1, 1, 2, 2], "lam": [0.5, 0.9, 0.5, 0.9],
    ...                 "value": [1.0, 2.0, 3.0, 4.0]}, ["n", "lam"])
    >>> ds["value"].sel(n=2, lam=0.9).item()
    4.0
    """
    require("xarray", "to_xarray()")
    dims = list(dims)
    if not dims:
        raise ValueError("this table has no parameter axes for to_xarray(); use to_pandas()")
    df = to_pandas(table)
    missing = [d for d in dims if d not in df.columns]
    if missing:
        raise ValueError(f"no column {missing} among {list(df.columns)}")
    indexed = df.set_index(dims)
    if not indexed.index.is_unique:
        raise ValueError(f"the parameters {dims} repeat: each combination must occur once")
    return indexed.to_xarray()


class _Tabular:
    """``to_pandas()`` and ``to_xarray()`` of :class:`Table` and :class:`Rows`."""

    dims: tuple[str, ...]

    def to_pandas(self) -> pd.DataFrame:
        """The table as a ``pandas.DataFrame`` (one row per result, one column per field).

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        ImportError
            When pandas is not installed (``pip install 'queue-recursions[tables]'``).

        Examples
        --------
        >>> t = Table({"n": [1, 2], "value": [0.5, 0.25]}, dims=["n"])
        >>> t.to_pandas()["value"].tolist()
        [0.5, 0.25]
        """
        return to_pandas(self)

    def to_xarray(self) -> xr.Dataset:
        """The table as an ``xarray.Dataset``: parameters as coordinates, the rest variables.

        The coordinates are the parameter columns :attr:`dims`; values and their standard
        errors (columns ``x`` and ``x_se``) become variables over them.

        Returns
        -------
        xarray.Dataset

        Raises
        ------
        ImportError
            When pandas or xarray is not installed (``pip install 'queue-recursions[tables]'``).
        ValueError
            When the table has no parameter axes.

        Examples
        --------
        >>> t = Table({"n": [1, 2], "value": [0.5, 0.25], "value_se": [0.1, 0.1]}, dims=["n"])
        >>> t.to_xarray()["value"].sel(n=2).item()
        0.25
        """
        return to_xarray(self, self.dims)


class Table(_Tabular, dict[str, np.ndarray]):
    """Columns of equal length: a dict of numpy arrays, with its parameter axes.

    Parameters
    ----------
    columns : dict of sequences
        The columns, in order (each becomes a numpy array).
    dims : sequence of str, optional
        The parameter columns (the coordinates of :meth:`to_xarray`).

    Attributes
    ----------
    dims : tuple of str
    attrs : dict
        What the producer says about the table (as ``pandas.DataFrame.attrs``): a sweep's
        ``"execution"``.

    Examples
    --------
    >>> t = Table({"n": [1, 2], "value": [0.5, 0.25]}, dims=["n"])
    >>> t["value"].tolist(), t.dims, len(t.rows())
    ([0.5, 0.25], ('n',), 2)
    """

    def __init__(
        self, columns: Mapping[str, Any] | None = None, *, dims: Sequence[str] = ()
    ) -> None:
        cols = {
            k: v if isinstance(v, np.ndarray) else column(v) for k, v in (columns or {}).items()
        }
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns must have equal lengths, got {sorted(lengths)}")
        super().__init__(cols)
        self.dims = tuple(dims)
        self.attrs: dict[str, Any] = {}
        unknown = [d for d in self.dims if d not in self]
        if unknown:
            raise ValueError(f"dims {unknown} are not columns of the table")

    def rows(self) -> list[dict[str, Any]]:
        """The rows, as dicts of plain values.

        Examples
        --------
        >>> Table({"n": [1, 2]}).rows()
        [{'n': 1}, {'n': 2}]
        """
        cols = list(self)
        n = len(self[cols[0]]) if cols else 0
        return [{c: plain(self[c][i]) for c in cols} for i in range(n)]


class Rows(_Tabular, list[dict[str, Any]]):
    """A list of result rows (dicts), with the names of its parameter columns.

    Parameters
    ----------
    rows : iterable of dict
        The rows.
    dims : sequence of str, optional
        The parameter columns (the coordinates of :meth:`to_xarray`): each combination of their
        values occurs in one row.

    Attributes
    ----------
    dims : tuple of str

    Examples
    --------
    >>> t = Rows([{"S": 1, "rate": 2.5}, {"S": 4, "rate": 1.5}], dims=["S"])
    >>> t[1]["rate"], t.columns()["rate"].tolist()
    (1.5, [2.5, 1.5])
    """

    def __init__(self, rows: Iterable[Mapping[str, Any]] = (), *, dims: Sequence[str] = ()) -> None:
        super().__init__(dict(r) for r in rows)
        self.dims = tuple(dims)

    def columns(self) -> Table:
        """The rows as a :class:`Table` of columns (keys in order of first appearance).

        Examples
        --------
        >>> Rows([{"a": 1}, {"a": 2, "b": 0.5}]).columns()["b"].tolist()
        [nan, 0.5]
        """
        keys: list[str] = []
        for r in self:
            keys.extend(k for k in r if k not in keys)
        return Table({k: column([r.get(k) for r in self]) for k in keys}, dims=self.dims)


def column(values: Sequence[Any]) -> np.ndarray:
    """One column as a numpy array: bool, int64 or float64 where the values allow, else object.

    Missing values (``None``) in a column of reals become NaN; in other columns they stay.

    Examples
    --------
    >>> column([1, 2]).dtype.kind, column([0.5, None]).tolist(), column(["a", None]).dtype
    ('i', [0.5, nan], dtype('O'))
    """
    values = list(values)
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, (bool, np.bool_)) for v in present):
        if len(present) == len(values):
            return np.array(values, dtype=bool)
        return _objects(values)
    if (
        present
        and len(present) == len(values)
        and all(isinstance(v, numbers.Integral) for v in present)
    ):
        if all(-(2**63) <= int(v) < 2**63 for v in present):
            return np.array(values, dtype=np.int64)
        return _objects(values)  # integers beyond int64 stay Python integers
    if present and all(
        isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in present
    ):
        return np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    return _objects(values)


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
