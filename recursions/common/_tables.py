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
import json
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
    "brief",
    "column",
    "cut",
    "plain",
    "record_dict",
    "text_table",
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
    """``x`` with results, numpy arrays and scalars turned into plain, JSON-safe values.

    :class:`~recursions.Estimate` becomes ``{"value": ..., "se": ...}``, an object with
    ``to_dict()`` its dict, a mapping a dict, a list, tuple or numpy array a (nested) list, a
    numpy scalar a Python scalar. ``None``, ``str``, ``bool`` and numbers stay as they are;
    any other object (a law, a system) becomes its ``repr``. ``json.dumps`` takes the result
    (writing ``NaN`` and ``Infinity`` for non-finite floats; :meth:`Record.to_json` writes
    strict JSON).

    Examples
    --------
    >>> import numpy as np
    >>> from recursions import Estimate
    >>> plain({"p": Estimate(np.float64(0.5), 0.01), "n": np.int64(3), "xs": (1, 2)})
    {'p': {'value': 0.5, 'se': 0.01}, 'n': 3, 'xs': [1, 2]}
    >>> plain(np.array([[1.0, 2.0]]))
    [[1.0, 2.0]]
    """
    to_dict = getattr(x, "to_dict", None)
    if dataclasses.is_dataclass(x) and not isinstance(x, type) and callable(to_dict):
        return to_dict()
    if isinstance(x, (np.generic, np.ndarray)):
        return x.tolist()
    if x is None or isinstance(x, (str, bool, int, float, complex)):
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

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as strict JSON text: a non-finite number (NaN, infinity) is ``null``.

        Parameters
        ----------
        **kwargs
            Passed to :func:`json.dumps` (``indent=2``, ``sort_keys=True``, ...).

        Returns
        -------
        str

        Examples
        --------
        >>> import json
        >>> from recursions.inference._batch_means import Interval
        >>> iv = Interval("p_wait", 0.5, float("nan"), float("nan"), 0.95, 0, 1, False, "few")
        >>> json.loads(iv.to_json())["half_width"] is None
        True
        """
        return json.dumps(_finite(self.to_dict()), allow_nan=False, **kwargs)

    def __repr__(self) -> str:
        """One line: the public fields that are set, arrays by shape, long text cut short."""
        parts = [f"{f.name}={brief(getattr(self, f.name))}" for f in dataclasses.fields(self)  # type: ignore[arg-type]
                 if f.repr and not f.name.startswith("_") and getattr(self, f.name) is not None]
        return f"{type(self).__name__}({', '.join(parts)})"

    def summary(self) -> str:
        """Several lines of text, one per public field (and computed statistic) that is set.

        Estimates show as ``value ± se``, or with the reason their standard error is not
        trusted; arrays by their shape.

        Returns
        -------
        str
        """
        names = [f.name for f in dataclasses.fields(self)  # type: ignore[arg-type]
                 if not f.name.startswith("_")]
        rows = [(n, getattr(self, n)) for n in (*names, *self._dict_extra)]
        return text_table(type(self).__name__, rows)


def brief(value: Any, width: int = 60) -> str:
    """``value`` as a short piece of text for a one-line repr.

    Arrays by shape and type, estimates as ``value ± se`` (or with their reason, cut), nested
    results by their type, mappings by their keys, text and the rest by their repr cut to
    ``width`` characters.

    Examples
    --------
    >>> import numpy as np
    >>> brief(np.zeros((2, 3))), brief("x" * 80)[-5:], brief({"a": 1})
    ('<array (2, 3) float64>', "xxx…'", '{a}')
    """
    from recursions.inference._estimate import Estimate

    if isinstance(value, np.ndarray):
        return f"<array {tuple(value.shape)} {value.dtype}>"
    if isinstance(value, Estimate):
        if np.ndim(value.value) != 0:
            return f"<estimate {np.shape(value.value)}>"
        if not value.trusted:
            return f"{float(value.value):.4g} (se not trusted)"
        return cut(format(value, ".4g"), width)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return f"<{type(value).__name__}>"
    if isinstance(value, Mapping):
        return cut("{" + ", ".join(map(str, value)) + "}", width)
    if isinstance(value, float):
        return f"{value:.6g}"
    return cut(repr(value), width)


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, keeping its last character.

    Examples
    --------
    >>> cut("Poisson(rate=1.0, service=Exponential(rate=1.0))", 20)
    'Poisson(rate=1.0, …)'
    """
    return text if len(text) <= width else text[: width - 2] + "…" + text[-1]


def text_table(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    """``title`` and one ``name: value`` line per row whose value is not ``None``.

    Values show as in :func:`recursions.common._html.cell`; long text is cut at 200
    characters.

    Examples
    --------
    >>> print(text_table("Result", [("a", 1.5), ("b", None), ("steps", 100)]))
    Result
      a      1.5
      steps  100
    """
    from recursions.common._html import cell

    kept = [(n, v) for n, v in rows if v is not None]
    width = max((len(n) for n, _ in kept), default=0)
    lines = [title] + [f"  {n.ljust(width)}  {cut(_text(v, cell), 200)}" for n, v in kept]
    return "\n".join(lines)


def _text(value: Any, cell: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array of shape {tuple(value.shape)}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and \
            not hasattr(value, "ci"):
        return brief(value, 200)
    return str(cell(value))


def _finite(x: Any) -> Any:
    """``x`` (plain values) with every non-finite float as ``None`` and complex as text."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, complex):
        return str(x)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def record_dict(obj: Any, extra: Iterable[str] = ()) -> dict[str, Any]:
    """The public fields of the dataclass ``obj``, then the attributes ``extra``, made plain.

    Examples
    --------
    >>> from recursions import Estimate
    >>> record_dict(Estimate(0.5, 0.1))
    {'value': 0.5, 'se': 0.1, 'reason': None}
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
