"""``stability_map``: :func:`~loynes._stability.check_stability` over a (load, parameter) grid.

Each grid point runs ``check_stability(system_factory(param), input_factory(load), rng=seed)``
through :func:`~loynes.sweep` (local processes or a Dask cluster), and the verdicts are
collected in a :class:`StabilityMap`: a verdict grid, a confidence grid, the tidy table, the
known boundaries (condition (3) and, for J_{p+1}SW with Poisson input, condition (11)), a plot
and a CSV writer.

For the picklable factories used by the command line, see :class:`PoissonAtLoad` (Poisson
input at load ``rho = lambda E[sigma] / S``) and :class:`SystemFamily`.
"""

from __future__ import annotations

import csv
import functools
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

import recursions as rc
from loynes._closed_forms import critical_rate_3, critical_rate_11
from loynes._runners import Execution
from loynes._stability import check_stability
from loynes._sweep import hooked_sweep, iter_rows
from recursions.common import RngLike, check_int, to_pandas, to_xarray
from recursions.model import is_poisson

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = ["FAMILY_PARAMETERS", "PoissonAtLoad", "StabilityMap", "SystemFamily", "stability_map"]

MARKS = {"stable": "S", "unstable": "U", "undecided": "?", "error": "E", "not run": "."}
COLOURS = {"stable": "tab:green", "unstable": "tab:red", "undecided": "tab:gray",
           "error": "black", "not run": "white"}  # "not run": hollow, edged in grey
KIND_MARKERS = {"theorem": "o", "certificate": "s", "test": "^", "heuristic": "d",
                "none": "x"}
"""Marker of each basis kind in :meth:`StabilityMap.plot` (colour: the verdict)."""


@dataclass(frozen=True)
class PoissonAtLoad:
    """Poisson input at load ``rho``: rate ``rho * servers / E[sigma]`` (picklable factory).

    Parameters
    ----------
    servers : int
        ``S``.
    service : Law or scipy.stats distribution
        Service law (see :func:`recursions.dists.as_law`; stored as the :class:`Law`).

    Examples
    --------
    >>> import recursions as rc
    >>> PoissonAtLoad(4, rc.dists.Exponential(2.0))(0.5)
    Poisson(rate=4.0, service=Exponential(rate=2.0; mean=0.5, scv=1))
    >>> import scipy.stats
    >>> PoissonAtLoad(2, scipy.stats.gamma(2, scale=0.5))(0.5).arrival_rate
    1.0
    """

    servers: int
    service: Any

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", check_int(self.servers, "servers", 1))
        object.__setattr__(self, "service", rc.dists.as_law(self.service, "service"))

    def __call__(self, load: float) -> rc.Poisson:
        """The input at ``load``."""
        return rc.Poisson(float(load) * self.servers / float(self.service.mean), self.service)


FAMILY_PARAMETERS: dict[str, str | None] = {
    "jpsw": "p", "envelope": "p", "split": "p", "leastofd": "d",
    "jsw": None, "loss": None, "jiq": None, "random": None,
}
"""The kinds of :class:`SystemFamily` and the parameter each is swept over (None: none)."""


@dataclass(frozen=True)
class SystemFamily:
    """``kind`` with ``servers`` servers as a function of one parameter (picklable).

    J_{p+1}SW, its envelope and the split bound take ``p`` (``0..S-1``), LL(d) takes ``d``
    (``1..S``). JSW, the loss system, JIQ and random routing take none: their family is the one
    system, swept as a single row whose parameter is the kind's name, so that
    ``stability_map(family, input, loads, family.values(), param_name=family.param_name)``
    maps every kind the same way (over the loads alone for those four).

    Parameters
    ----------
    kind : {"jpsw", "envelope", "split", "leastofd", "jsw", "loss", "jiq", "random"}
        The system, as ``python -m loynes check --system`` names it.
    servers : int
        ``S``.

    Examples
    --------
    >>> SystemFamily("jpsw", 4)(1)
    JpSW(servers=4, p=1)
    >>> fam = SystemFamily("jsw", 4)
    >>> fam.param_name, fam.values(), fam("jsw")
    ('system', ['jsw'], JSW(servers=4))
    """

    kind: str
    servers: int

    def __post_init__(self) -> None:
        if self.kind not in FAMILY_PARAMETERS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, FAMILY_PARAMETERS))}, "
                             f"got {self.kind!r}")

    @property
    def param_name(self) -> str:
        """``"p"``, ``"d"``, or ``"system"`` for a kind without a parameter."""
        return FAMILY_PARAMETERS[self.kind] or "system"

    def values(self) -> list[Any]:
        """Every value of the parameter: ``0..S-1`` for ``p``, ``1..S`` for ``d``, ``[kind]``.

        Returns
        -------
        list
            The parameter values :meth:`__call__` takes, in order.

        Examples
        --------
        >>> SystemFamily("leastofd", 3).values()
        [1, 2, 3]
        """
        name = FAMILY_PARAMETERS[self.kind]
        if name is None:
            return [self.kind]
        s = check_int(self.servers, "servers", 1)
        return list(range(s)) if name == "p" else list(range(1, s + 1))

    def __call__(self, param: Any) -> rc.System:
        """The system at ``param`` (the kind's name, or None, for a kind without one)."""
        s = self.servers
        name = FAMILY_PARAMETERS[self.kind]
        if name is not None and (param is None or isinstance(param, str)):
            raise ValueError(f"{self.kind} is swept over its parameter {name}: give an "
                             f"integer, got {param!r}")
        if name is None:
            if param is not None and param != self.kind:
                raise ValueError(f"{self.kind} takes no parameter: sweep it over "
                                 f"params=[{self.kind!r}] (one row), got {param!r}")
            if self.kind == "jsw":
                return rc.JSW(s)
            if self.kind == "loss":
                return rc.Loss(s)
            if self.kind == "jiq":
                return rc.JIQ(s)
            return rc.RandomRouting(s)
        if self.kind == "jpsw":
            return rc.JpSW(s, int(param))
        if self.kind == "envelope":
            return rc.Envelope(rc.JpSW(s, int(param)))
        if self.kind == "split":
            return rc.SplitBound(s, int(param))
        return rc.LeastOfD(s, int(param))


def _confidence(rep: Any) -> float:
    """How clearly the deciding evidence cleared its threshold, in standard errors.

    ``inf`` for a theorem with exact conditions, the t statistic of the growth test, the
    margin of the tested condition for a condition checked by a test, NaN when undecided.
    """
    basis = rep.decided_by
    if basis.kind == "theorem":
        return math.inf
    if basis.name == "growth":
        return float(rep.evidence.get("growth t", math.nan))
    if basis.name == "drain":
        return float(rep.evidence.get("drain t", math.nan))
    if basis.kind == "test":
        name = {"free-system": "(free)", "d-bound": "(d-bound)"}.get(basis.name, "(8)")
        try:
            c = rep.condition(name)
        except KeyError:
            return math.nan
        return abs(1.0 - c.value) / c.se if c.se > 0 else math.inf
    return math.nan


def _map_point(*, rng: Any, system_factory: Callable[[Any], rc.System],
               input_factory: Callable[[float], rc.Input], param_name: str,
               options: dict[str, Any], **point: Any) -> dict[str, Any]:
    """One grid point: the verdict and its evidence as scalars."""
    rep = check_stability(system_factory(point[param_name]), input_factory(point["load"]),
                          rng=rng, **options)
    out: dict[str, Any] = {"verdict": rep.verdict, "decided_by": rep.decided_by.name,
                           "basis": rep.decided_by.kind,
                           "error_level": float(rep.decided_by.error)}
    for name, col in (("(3)", "cond3"), ("(11)", "cond11"), ("(8)", "cond8")):
        try:
            c = rep.condition(name)
        except KeyError:
            out[col], out[col + "_se"] = math.nan, math.nan
        else:
            out[col], out[col + "_se"] = float(c.value), float(c.se)
    g = rep.evidence.get("growth per customer", math.nan)
    gse = rep.evidence.get("growth per customer se", math.nan)
    out["growth"], out["growth_se"] = float(g), float(gse)
    out["confidence"] = _confidence(rep)
    out["reason"] = rep.reason
    return out


@dataclass(frozen=True, eq=False)
class StabilityMap:
    """Verdicts of :func:`stability_map` over (parameter, load).

    Attributes
    ----------
    loads : numpy.ndarray
        The loads (x axis), shape ``(n_loads,)``.
    params : tuple
        The parameter values (y axis).
    param_name : str
        The parameter's name (``"p"`` by default).
    verdicts : numpy.ndarray
        ``verdicts[i, j]`` for ``params[i]``, ``loads[j]``: ``"stable"``, ``"unstable"``,
        ``"undecided"``, ``"error"`` (the point raised; see the table's ``error``) or
        ``"not run"`` (the sweep was interrupted, or its workers failed, before it ran).
    confidence : numpy.ndarray
        Float grid: ``inf`` when a theorem with exact conditions decided, the margin in
        standard errors of a condition checked by a test (``|1 - value| / se``), the t
        statistic of the growth test, or of the drain test's least clear direction against
        its margin, NaN when undecided or on error.
    table : recursions.common._tables.Table or pandas.DataFrame
        The sweep's tidy table (one row per point, with ``decided_by`` (the basis' name),
        ``basis`` (its kind), ``error_level`` (the bound on a wrong verdict), condition values
        and standard errors, growth, ``confidence``, ``reason``, ``error`` (an exception)).
    boundaries : dict of str to numpy.ndarray
        Critical load of each boundary at each parameter value (NaN where undefined).
    execution : loynes._runners.Execution or None
        How the points ran (in this process or on workers) and why.
    """

    loads: np.ndarray
    params: tuple
    param_name: str
    verdicts: np.ndarray
    confidence: np.ndarray
    table: Any
    boundaries: dict[str, np.ndarray] = field(default_factory=dict)
    execution: Execution | None = None

    def __str__(self) -> str:
        width = max(len(str(p)) for p in self.params)
        lines = [f"{'':>{width}}  loads {self.loads[0]:.4g} .. {self.loads[-1]:.4g} "
                 "(S stable, U unstable, ? undecided, E error, . not run)"]
        for i, p in enumerate(self.params):
            lines.append(f"{p!s:>{width}}  " + "".join(MARKS.get(v, "?")
                                                      for v in self.verdicts[i]))
        bases = self.bases()
        if bases:
            lines.append("decided by: " + ", ".join(f"{k} {v}" for k, v in bases.items()))
        return "\n".join(lines)

    def _grid(self, column: str) -> np.ndarray:
        """A column of :attr:`table` as a (parameter, load) grid of strings."""
        grid = np.full(self.verdicts.shape, "", dtype=object)
        for idx, row in enumerate(iter_rows(self.table)):
            i, j = divmod(idx, self.loads.size)
            value = row.get(column)
            grid[i, j] = "" if value is None or row.get("error") is not None else str(value)
        return grid

    def bases(self) -> dict[str, int]:
        """How many points each basis decided (``decided_by`` name -> count).

        Examples
        --------
        >>> import recursions as rc
        >>> m = stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
        ...                   [0.5, 1.2], [1], max_workers=0, progress=False, steps=2**10,
        ...                   horizon=2**10)
        >>> m.bases()
        {'condition-3-fails': 1, 'theorem-1': 1}
        """
        names = self._grid("decided_by")
        out: dict[str, int] = {}
        for n in names.ravel():
            if n:
                out[str(n)] = out.get(str(n), 0) + 1
        return dict(sorted(out.items()))

    def _repr_html_(self) -> str:
        import html

        from recursions.common import html_table

        counts = ", ".join(f"{int(np.sum(self.verdicts == v))} {v}" for v in MARKS
                           if np.any(self.verdicts == v))
        table = html_table("StabilityMap", [
            ("loads", f"{len(self.loads)} from {self.loads[0]:.4g} to {self.loads[-1]:.4g}"),
            (self.param_name, ", ".join(str(p) for p in self.params)),
            ("verdicts", counts),
            ("boundaries", ", ".join(self.boundaries) or None),
            ("execution", None if self.execution is None else str(self.execution))])
        return f"{table}\n<pre>{html.escape(str(self))}</pre>"

    def to_pandas(self) -> pd.DataFrame:
        """The tidy table (one row per (parameter, load) point) as a ``pandas.DataFrame``.

        Returns
        -------
        pandas.DataFrame
            The columns of :attr:`table`.

        Raises
        ------
        ImportError
            When pandas is not installed (``pip install 'queue-recursions[tables]'``).

        Examples
        --------
        >>> import recursions as rc
        >>> m = stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
        ...                   [0.5, 1.2], [1], max_workers=0, progress=False, steps=2**10,
        ...                   horizon=2**10)
        >>> m.to_pandas()[["p", "load", "verdict"]].values.tolist()
        [[1, 0.5, 'stable'], [1, 1.2, 'unstable']]
        """
        return to_pandas(self.table)

    def to_xarray(self) -> xr.Dataset:
        """The map as an ``xarray.Dataset`` over (parameter, load).

        Coordinates :attr:`param_name` and ``load``; variables: every column of :attr:`table`
        (``verdict``, ``confidence``, condition values ``cond3`` and standard errors
        ``cond3_se``, ``growth`` and ``growth_se``, ...) and each boundary, as
        ``boundary (3)`` over the parameter.

        Returns
        -------
        xarray.Dataset

        Raises
        ------
        ImportError
            When pandas or xarray is not installed (``pip install 'queue-recursions[tables]'``).

        Examples
        --------
        >>> import recursions as rc
        >>> m = stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
        ...                   [0.5, 1.2], [0, 1], max_workers=0, progress=False, steps=2**10,
        ...                   horizon=2**10)
        >>> ds = m.to_xarray()
        >>> ds["verdict"].sel(p=1, load=1.2).item(), round(float(ds["boundary (11)"].sel(p=1)), 3)
        ('unstable', 0.809)
        """
        ds = to_xarray(self.table, [self.param_name, "load"])
        for name, crit in self.boundaries.items():
            ds[f"boundary {name}"] = ((self.param_name,), np.asarray(crit, dtype=float))
        return ds

    def to_csv(self, path: str | os.PathLike[str]) -> None:
        """Write :attr:`table` to ``path`` as CSV (one row per point, a header line)."""
        rows = list(iter_rows(self.table))
        cols = list(rows[0]) if rows else []
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            for row in rows:
                w.writerow({k: "" if v is None else v for k, v in row.items()})

    def plot(self, ax: Any = None, *, title: str | None = None) -> Any:
        """Verdicts as coloured dots over (load, parameter), with the boundaries as lines.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        title : str, optional
            Axes title (default: what the plot shows).

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ImportError
            When matplotlib is not installed (``pip install 'queue-recursions[plot]'``).
        """
        from recursions.common import pyplot

        plt = pyplot("StabilityMap.plot()")
        if ax is None:
            _, ax = plt.subplots(figsize=(7.5, 4))
        numeric = all(isinstance(p, numbers.Real) for p in self.params)
        ys = np.asarray(self.params, dtype=float) if numeric else np.arange(len(self.params))
        names = self._grid("decided_by")
        kinds = self._grid("basis")
        for v, c in COLOURS.items():
            for name in sorted({str(n) for n in names[self.verdicts == v]}):
                ii, jj = np.nonzero((self.verdicts == v) & (names == name))
                kind = str(kinds[ii[0], jj[0]])
                label = v if v in ("error", "not run") else f"{v}: {name}"
                ax.scatter(self.loads[jj], ys[ii], c=c, s=40, label=label, zorder=3,
                           marker=KIND_MARKERS.get(kind, "o"), edgecolors="0.4")
        styles = iter(["k-", "k--", "b-.", "m:", "c--"])
        for name, crit in self.boundaries.items():
            style = next(styles, "k:")
            if np.allclose(crit, crit[0], equal_nan=False) and np.isfinite(crit[0]):
                ax.axvline(crit[0], color=style[0], ls=style[1:], lw=1,
                           label=f"{name} boundary")
            else:
                ax.plot(crit, ys, style, lw=1, label=f"{name} boundary")
        ax.set_xlabel("load")
        ax.set_ylabel(self.param_name)
        ax.set_yticks(ys)
        if not numeric:
            ax.set_yticklabels([str(p) for p in self.params])
        ax.set_title(title if title is not None else
                     f"Stability verdicts over load and {self.param_name}, with the boundaries")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        return ax


def _rate(inp: rc.Input) -> float:
    return 1.0 / float(inp.mean_interarrival)


def _auto_boundaries(system_factory: Callable[[Any], rc.System],
                     input_factory: Callable[[float], rc.Input], loads: Sequence[float],
                     params: Sequence[Any]) -> dict[str, Callable[[Any], float]]:
    """(3) and (11) for J_{p+1}SW, (3) for JSW and random routing, with Poisson input.

    The input's rate must be proportional to the load. For JSW (FCFS G/G/S) and random routing
    (S single-server queues) condition (3) is the whole boundary: stable exactly below it.
    """
    try:
        made = {p: system_factory(p) for p in params}
        inputs = [input_factory(x) for x in (loads[0], loads[-1])]
    except Exception:
        return {}
    systems = {p: s for p, s in made.items() if type(s) is rc.JpSW}
    exact3 = {p: s for p, s in made.items() if type(s) in (rc.JSW, rc.RandomRouting)}
    if len(systems) < len(made) and len(exact3) < len(made):
        return {}
    ends = [i for i in inputs if is_poisson(i)]
    if len(ends) < len(inputs) or loads[0] <= 0:
        return {}
    k = _rate(ends[0]) / loads[0]  # rate per unit of load
    if not math.isclose(_rate(ends[1]) / loads[-1], k, rel_tol=1e-9):
        return {}
    service = ends[0].service
    if exact3:
        return {"(3)": lambda p: critical_rate_3(exact3[p].servers, service) / k}
    return {
        "(3)": lambda p: critical_rate_3(systems[p].servers, service) / k,
        "(11)": lambda p: critical_rate_11(systems[p].servers, systems[p].p, service) / k,
    }


def _check_servers_agree(system_factory: Callable[[Any], rc.System],
                         input_factory: Callable[[float], rc.Input],
                         params: Sequence[Any]) -> None:
    """Refuse a :class:`PoissonAtLoad` sized for other systems: it would mislabel every load."""
    if not isinstance(input_factory, PoissonAtLoad):
        return
    for p in params:
        try:
            servers = system_factory(p).servers
        except Exception:  # a bad parameter is the sweep's to report, row by row
            continue
        if servers != input_factory.servers:
            raise ValueError(f"input_factory sets the load for {input_factory.servers} servers "
                             f"but system_factory({p!r}) has {servers}: every point would run "
                             f"at load x {input_factory.servers}/{servers}, not at the load "
                             "shown; give both the same number of servers")


def stability_map(
    system_factory: Callable[[Any], rc.System],
    input_factory: Callable[[float], rc.Input],
    loads: Sequence[float] | np.ndarray,
    params: Sequence[Any] | np.ndarray,
    *,
    rng: RngLike = 1,
    client: Any = None,
    param_name: str = "p",
    boundaries: Mapping[str, Callable[[Any], float]] | bool | None = None,
    steps: int = 2**14,
    horizon: int = 2**14,
    replications: int = 8,
    alpha: float = 1e-3,
    max_workers: int | None = None,
    progress: bool = True,
    table: str = "dict",
    checkpoint: str | os.PathLike[str] | None = None,
) -> StabilityMap:
    """Run :func:`~loynes._stability.check_stability` over every (load, parameter) pair.

    Parameters
    ----------
    system_factory : callable
        ``param -> recursions.System``, e.g. ``lambda p: rc.JpSW(6, p)``.
    input_factory : callable
        ``load -> recursions.Input``, e.g. :class:`PoissonAtLoad`.
    loads : sequence of float
        The loads (x axis), non-empty.
    params : sequence
        The parameter values (y axis), non-empty.
    rng : int, Generator, SeedSequence or None, default 1
        Root seed (see :func:`~loynes.sweep`: one child per point, in grid order).
    client : None, distributed.Client or str, default None
        Where to run (see :func:`~loynes.sweep`).
    param_name : str, default "p"
        The parameter's column name.
    boundaries : dict of callables, bool or None, default None
        ``{name: param -> critical load}`` drawn by :meth:`StabilityMap.plot`. ``None``: when
        the input is Poisson with rate proportional to the load, condition (3) and (11)
        (:func:`~loynes._closed_forms.critical_rate_11`) if every system is J_{p+1}SW,
        condition (3) if every system is JSW or random routing, else none; ``False``: none.
    steps, horizon, replications, alpha
        Passed to ``check_stability`` (``alpha`` is the level of each point's check).
    max_workers, progress, table, checkpoint
        Passed to :func:`~loynes.sweep`: by default points run in this process until
        the work left pays for worker processes; ``checkpoint=PATH`` keeps finished points in
        a file, and a rerun with the same arguments resumes from it (the systems' and inputs'
        reprs at every parameter and load are part of what must match).

    Returns
    -------
    StabilityMap

    Raises
    ------
    ValueError, TypeError
        For empty or non-numeric ``loads``, empty ``params``, a :class:`PoissonAtLoad` for
        another number of servers than the systems', or bad options, before any work.
    loynes._runners.SweepError
        When the worker pool or the cluster fails; its ``.result`` is the map of the finished
        points (the others ``"not run"``), its ``.table`` their table.

    Examples
    --------
    >>> import recursions as rc
    >>> m = stability_map(SystemFamily("jpsw", 2), PoissonAtLoad(2, rc.dists.Exponential(1.0)),
    ...                   [0.5, 1.2], [0, 1], max_workers=0, progress=False, steps=2**12,
    ...                   horizon=2**12)
    >>> m.verdicts.tolist()
    [['stable', 'unstable'], ['stable', 'unstable']]
    >>> [round(float(b), 4) for b in m.boundaries["(11)"]]
    [1.0, 0.809]
    """
    if not callable(system_factory):
        raise TypeError(f"system_factory must be callable, got {type(system_factory).__name__}")
    if not callable(input_factory):
        raise TypeError(f"input_factory must be callable, got {type(input_factory).__name__}")
    try:
        load_arr = np.asarray(loads, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"loads must be a sequence of numbers, got {loads!r}") from None
    if load_arr.size == 0:
        raise ValueError("loads is empty: give at least one load")
    if not np.all(np.isfinite(load_arr)) or np.any(load_arr <= 0):
        raise ValueError(f"loads must be finite numbers > 0, got {load_arr.tolist()}")
    if isinstance(params, (str, bytes)) or not isinstance(params, (Sequence, np.ndarray, range)):
        raise TypeError(f"params must be a sequence of values, got {type(params).__name__}")
    param_list = tuple(p.item() if isinstance(p, np.generic) else p for p in params)
    if not param_list:
        raise ValueError("params is empty: give at least one value")
    if not isinstance(param_name, str) or not param_name.isidentifier() \
            or param_name in ("load", "rng", "replication", "error"):
        raise ValueError(f"param_name must be an identifier other than load, rng, replication "
                         f"and error, got {param_name!r}")
    steps = check_int(steps, "steps", 4)
    horizon = check_int(horizon, "horizon", 1)
    replications = check_int(replications, "replications", 2)
    _check_servers_agree(system_factory, input_factory, param_list)
    if boundaries is None or boundaries is True:
        bfuncs = _auto_boundaries(system_factory, input_factory, load_arr.tolist(), param_list)
    elif boundaries is False:
        bfuncs = {}
    elif isinstance(boundaries, Mapping):
        bfuncs = dict(boundaries)
        for name, f in bfuncs.items():
            if not callable(f):
                raise TypeError(f"boundaries[{name!r}] must be callable param -> load")
    else:
        raise TypeError(f"boundaries must be a dict of callables, True/False or None, got "
                        f"{type(boundaries).__name__}")

    func = functools.partial(_map_point, system_factory=system_factory,
                             input_factory=input_factory, param_name=param_name,
                             options={"steps": int(steps), "horizon": int(horizon),
                                      "replications": int(replications), "alpha": alpha})
    grid = {param_name: list(param_list), "load": load_arr.tolist()}
    extra = None if checkpoint is None else {
        "systems": [_described(system_factory, p) for p in param_list],
        "inputs": [_described(input_factory, x) for x in load_arr.tolist()]}

    def build(tab: Any) -> StabilityMap:
        return _assemble_map(tab, load_arr, param_list, param_name, bfuncs)

    tab = hooked_sweep(func, grid, rng=rng, client=client, progress=progress,
                       replications=1, max_workers=max_workers, table=table,
                       checkpoint=checkpoint, key_extra=extra, build=build)
    return build(tab)


def _described(factory: Callable[[Any], Any], arg: Any) -> str:
    """What ``factory(arg)`` makes, for a checkpoint's identity (its error, if it raises)."""
    try:
        return repr(factory(arg))
    except Exception as exc:  # the point will fail with it too
        return f"{type(exc).__name__}: {exc}"


def _assemble_map(tab: Any, load_arr: np.ndarray, param_list: tuple, param_name: str,
                  bfuncs: Mapping[str, Callable[[Any], float]]) -> StabilityMap:
    """The :class:`StabilityMap` of a sweep's table.

    A point that raised is an ``"error"``; one an interrupted sweep never ran (its error
    :data:`~loynes._sweep.NOT_RUN`, or another ``"not run: ..."``) is ``"not run"``.
    """
    rows = list(iter_rows(tab))
    shape = (len(param_list), load_arr.size)
    verdicts = np.empty(shape, dtype=object)
    conf = np.full(shape, math.nan)
    for idx, row in enumerate(rows):
        i, j = divmod(idx, load_arr.size)
        ok = row.get("error") is None and isinstance(row.get("verdict"), str)
        skipped = str(row.get("error") or "").startswith("not run")
        verdicts[i, j] = row["verdict"] if ok else "not run" if skipped else "error"
        c = row.get("confidence")
        conf[i, j] = float(c) if ok and c is not None else math.nan
    bounds = {}
    for name, f in bfuncs.items():
        vals = []
        for p in param_list:
            try:
                vals.append(float(f(p)))
            except (ValueError, TypeError, ArithmeticError):
                vals.append(math.nan)
        bounds[name] = np.asarray(vals)
    return StabilityMap(load_arr, param_list, param_name, verdicts, conf, tab, bounds,
                        tab.attrs.get("execution"))
