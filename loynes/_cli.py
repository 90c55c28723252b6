"""Command line: ``python -m loynes check ...``, ``sweep ...``, ``demo`` and ``cache``.

Examples
--------
``python -m loynes check --system jpsw --servers 5 --p 2 --arrival-rate 4 --service
lognormal:mean=1,scv=2`` prints the stability report; ``--json`` prints it as JSON. A law is
written ``NAME:KEY=VALUE,...`` with the keywords of :mod:`recursions.dists`
(``exponential:rate=2``, ``exponential:mean=0.5``, ``erlang:k=3,mean=1``,
``lognormal:mean=1,scv=4``) or with the values alone in order (``lognormal:1,2``); see
:func:`parse_law` and ``python -m loynes check --help``.

``python -m loynes sweep --system jpsw --servers 6 --loads 0.5:1.0:26 --p 0:5 --out DIR``
writes the stability map over (load, p) to ``DIR/stability_map.csv`` and
``DIR/stability_map.png`` (``--scheduler tcp://HOST:8786`` runs it on a Dask cluster);
``--json`` prints the map (rows, verdict grid, how it ran) as JSON. ``sweep`` takes every
system of ``check``: ``leastofd`` over ``--d``, and ``jsw``, ``loss``, ``jiq``, ``random``
(no parameter) as one row over the loads.

``python -m loynes cache`` prints the folders holding compiled code (the drivers and numba's
cache files) with their sizes; ``cache --clear`` removes them (:func:`recursions.clear_cache`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, cast

import numpy as np

import recursions as rc
from loynes._stability import check_stability


@dataclass(frozen=True)
class LawSyntax:
    """How the command line writes one law: ``NAME:KEY=VALUE,...`` or ``NAME:VALUE,...``.

    Attributes
    ----------
    make : callable
        Builds the law from keyword arguments named as in :mod:`recursions.dists`.
    positional : tuple of str
        The keywords that values without a ``KEY=`` stand for, in order (the old syntax).
    forms : tuple of tuple of str
        The accepted sets of keywords, e.g. ``(("rate",), ("mean",))`` for the exponential.
    """

    make: Callable[..., Any]
    positional: tuple[str, ...]
    forms: tuple[tuple[str, ...], ...]

    def usage(self, name: str) -> str:
        """The accepted forms, e.g. ``exponential:rate=R | exponential:mean=M | exponential:R``."""
        kw = [f"{name}:" + ",".join(f"{k}={k.upper()}" for k in form) for form in self.forms]
        return " | ".join([*kw, f"{name}:" + ",".join(k.upper() for k in self.positional)])


def _erlang(k: float, **rest: float) -> Any:
    if not float(k).is_integer():
        raise ValueError(f"k must be a whole number of phases, got {k!r}")
    return rc.dists.Erlang(int(k), **rest)


LAWS: dict[str, LawSyntax] = {
    "exponential": LawSyntax(rc.dists.Exponential, ("rate",), (("rate",), ("mean",))),
    "deterministic": LawSyntax(rc.dists.Deterministic, ("value",), (("value",), ("mean",))),
    "erlang": LawSyntax(_erlang, ("k", "rate"), (("k", "rate"), ("k", "mean"))),
    "hyperexponential": LawSyntax(rc.dists.HyperExponential.balanced, ("mean", "scv"),
                                  (("mean", "scv"),)),
    "lognormal": LawSyntax(rc.dists.LogNormal, ("mean", "scv"), (("mean", "scv"),)),
    "lomax": LawSyntax(rc.dists.Lomax, ("shape", "scale"), (("shape", "scale"),
                                                            ("shape", "mean"))),
    "uniform": LawSyntax(rc.dists.Uniform, ("low", "high"), (("low", "high"),)),
}
"""The laws of ``--service`` and ``--interarrival``, with the keywords of their constructors."""
ALIASES = {"exp": "exponential", "det": "deterministic", "hyperexp": "hyperexponential",
           "h2": "hyperexponential", "ln": "lognormal", "pareto": "lomax"}
SYSTEMS = ("jsw", "jpsw", "loss", "jiq", "random", "leastofd", "envelope", "split")
WITH_P = ("jpsw", "envelope", "split")
"""The systems of ``check`` that take ``--p`` (and require it)."""
WITH_D = ("leastofd",)
"""The systems of ``check`` that take ``--d`` (default 2)."""
LAW_HELP = "; ".join(syntax.usage(name) for name, syntax in LAWS.items())
"""Every accepted law form, for ``--help`` and error messages."""
LAW_EPILOG = "\n".join([
    "laws (--service, --interarrival) are written NAME:KEY=VALUE,... with the keywords of",
    "recursions.dists, or with the values alone in the order shown (NAME:VALUE,...):",
    *(f"  {syntax.usage(name)}" for name, syntax in LAWS.items()),
    "hyperexponential is the balanced two-phase law (scv >= 1), lomax is Pareto type II",
    "(shape > 1); aliases: " + ", ".join(ALIASES) + ".",
    "example: --service lognormal:mean=1,scv=4 (the same as lognormal:1,4)",
])
"""The law syntax, as ``check --help`` and ``sweep --help`` print it."""


class CliError(Exception):
    """A bad flag value: reported on one line, exit status 2."""


def parse_law(spec: str, flag: str) -> Any:
    """Parse a law of the command line into a :mod:`recursions.dists` law.

    A law is written ``NAME:KEY=VALUE,...`` with the keywords of its constructor
    (``exponential:rate=2``, ``exponential:mean=0.5``, ``erlang:k=3,mean=1``,
    ``lognormal:mean=1,scv=4``, ``lomax:shape=2.5,mean=1``, ``uniform:low=0,high=2``), or with
    the values alone in their positional order (``exponential:2`` is the rate,
    ``lognormal:1,4`` the mean and scv); values without a key come first. :data:`LAW_HELP`
    lists every accepted form.

    Parameters
    ----------
    spec : str
        The flag's value, e.g. ``"lognormal:mean=1,scv=2"``.
    flag : str
        The flag, for error messages.

    Returns
    -------
    recursions.dists.Law

    Raises
    ------
    CliError
        For an unknown law, a value that is no number, a keyword the law does not take, a
        missing or doubled keyword, or parameters the law refuses; the message names the flag
        and the accepted forms.

    Examples
    --------
    >>> parse_law("lognormal:mean=1,scv=2", "--service")
    LogNormal(mean=1.0, scv=2.0)
    >>> parse_law("lognormal:1,2", "--service")
    LogNormal(mean=1.0, scv=2.0)
    >>> parse_law("exponential:mean=0.5", "--service")
    Exponential(rate=2.0; mean=0.5, scv=1)
    >>> parse_law("erlang:k=2,rate=4", "--service")
    Erlang(k=2, rate=4.0; mean=0.5, scv=0.5)
    """
    name, _, args = spec.partition(":")
    name = ALIASES.get(name.strip().lower(), name.strip().lower())
    if name not in LAWS:
        raise CliError(f"{flag}: unknown law {name!r} in {spec!r}; the accepted forms are "
                       f"{LAW_HELP}")
    syntax = LAWS[name]
    usage = f"{name} is written {syntax.usage(name)}"

    def bad(why: str) -> CliError:
        return CliError(f"{flag}: bad law {spec!r}: {why}; {usage}")

    given: dict[str, float] = {}
    items = [item.strip() for item in args.split(",")] if args.strip() else []
    keyed = False
    for i, item in enumerate(items):
        key, eq, text = item.partition("=")
        if eq:
            key, keyed = key.strip().lower(), True
        elif keyed:
            raise bad(f"the value {item!r} without a keyword follows a KEY=VALUE")
        elif i < len(syntax.positional):
            key, text = syntax.positional[i], item
        else:
            n_pos = len(syntax.positional)
            raise bad(f"{name} takes at most {n_pos} value{'s' * (n_pos > 1)} without a "
                      f"keyword, got {len(items)}")
        if key in given:
            raise bad(f"{key} is given twice")
        try:
            given[key] = float(text)
        except ValueError:
            raise bad(f"{key} must be a number, got {text.strip()!r}") from None
    n_pos = len(syntax.positional)
    if items and not keyed and len(items) < n_pos:
        values = ",".join(k.upper() for k in syntax.positional)
        raise bad(f"{name} takes {values} ({n_pos} values without keywords), got {len(items)}")
    known = {k for form in syntax.forms for k in form}
    unknown = sorted(set(given) - known)
    if unknown:
        raise bad(f"{name} takes no {', '.join(k + '=' for k in unknown)}")
    if not any(set(form) == set(given) for form in syntax.forms):
        if not given:
            raise bad("no parameters given")
        got = ", ".join(f"{k}=" for k in given)
        raise bad(f"{got} fits none of its forms (give the keywords of one form, each once)")
    try:
        return syntax.make(**given)
    except (ValueError, TypeError) as exc:
        raise bad(str(exc)) from None


def _floats(text: str, flag: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise CliError(f"{flag}: expected comma-separated numbers, got {text!r}") from None


def _check_system_flags(args: argparse.Namespace) -> tuple[int | None, int | None]:
    """``(p, d)`` for ``--system``: ``--p`` required where it applies, each rejected elsewhere."""
    kind = args.system
    if kind in WITH_P and args.p is None:
        raise CliError(f"--system {kind} needs --p (0..S-1)")
    if kind not in WITH_P and args.p is not None:
        raise CliError(f"--p applies only to --system {', '.join(WITH_P)}, not to {kind}")
    if kind not in WITH_D and args.d is not None:
        raise CliError(f"--d applies only to --system {', '.join(WITH_D)}, not to {kind}")
    d = (2 if args.d is None else args.d) if kind in WITH_D else None
    return args.p, d


def build_system(args: argparse.Namespace) -> rc.System:
    """The system named by ``--system`` with ``--servers``, ``--p``, ``--d``.

    ``--p`` is required by jpsw, envelope and split and rejected by the other systems;
    ``--d`` (default 2) applies to leastofd only.
    """
    given_p, given_d = _check_system_flags(args)
    p, d = cast(int, given_p), cast(int, given_d)  # given where the system takes them
    try:
        s = args.servers
        kind = args.system
        if kind == "jsw":
            return rc.JSW(s)
        if kind == "jpsw":
            return rc.JpSW(s, p)
        if kind == "loss":
            return rc.Loss(s)
        if kind == "jiq":
            return rc.JIQ(s)
        if kind == "random":
            return rc.RandomRouting(s)
        if kind == "leastofd":
            return rc.LeastOfD(s, d)
        if kind == "envelope":
            return rc.Envelope(rc.JpSW(s, p))
        return rc.SplitBound(s, p)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


DEFAULT_SERVICE = "exponential:rate=1"
"""The service law of ``check`` when ``--service`` is not given."""


def build_input(args: argparse.Namespace) -> rc.Input:
    """The input of --arrival-rate or --interarrival with --service, or the periodic one."""
    if args.periodic_sigma or args.periodic_tau:
        if not (args.periodic_sigma and args.periodic_tau):
            raise CliError("--periodic-sigma and --periodic-tau go together")
        given = [flag for flag, value in (("--arrival-rate", args.arrival_rate),
                                          ("--interarrival", args.interarrival),
                                          ("--service", getattr(args, "service_given",
                                                                False))) if value]
        if given:
            raise CliError(f"a periodic input (--periodic-sigma, --periodic-tau) brings its own "
                           f"service and interarrival times: drop {', '.join(given)}")
        try:
            return rc.Periodic(_floats(args.periodic_sigma, "--periodic-sigma"),
                               _floats(args.periodic_tau, "--periodic-tau"))
        except (ValueError, TypeError) as exc:
            raise CliError(str(exc)) from None
    service = parse_law(args.service, "--service")
    if (args.arrival_rate is None) == (args.interarrival is None):
        raise CliError("give exactly one of --arrival-rate and --interarrival (or a periodic "
                       "input: --periodic-sigma with --periodic-tau)")
    try:
        if args.arrival_rate is not None:
            return rc.Poisson(args.arrival_rate, service)
        return rc.Renewal(parse_law(args.interarrival, "--interarrival"), service)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


def parse_loads(text: str, flag: str = "--loads") -> list[float]:
    """Parse ``A:B:N`` (N loads from A to B, ``numpy.linspace``) or one load ``A``.

    Examples
    --------
    >>> parse_loads("0.5:1.0:3")
    [0.5, 0.75, 1.0]
    """
    parts = text.split(":")
    try:
        if len(parts) == 1:
            a, b, n = float(parts[0]), float(parts[0]), 1
        elif len(parts) == 3:
            a, b, n = float(parts[0]), float(parts[1]), int(parts[2])
        else:
            raise ValueError
    except ValueError:
        raise CliError(f"{flag}: expected A:B:N (N loads from A to B) or one number, "
                       f"got {text!r}") from None
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 or b < a or n < 1:
        raise CliError(f"{flag}: need 0 < A <= B and N >= 1, got {text!r}")
    return [float(x) for x in np.linspace(a, b, n)]


def parse_int_range(text: str, flag: str) -> list[int]:
    """Parse ``A:B`` (the integers A..B, inclusive) or one integer ``A``.

    Examples
    --------
    >>> parse_int_range("0:3", "--p")
    [0, 1, 2, 3]
    """
    parts = text.split(":")
    try:
        if len(parts) == 1:
            a = b = int(parts[0])
        elif len(parts) == 2:
            a, b = int(parts[0]), int(parts[1])
        else:
            raise ValueError
    except ValueError:
        raise CliError(f"{flag}: expected A:B (integers A..B inclusive) or one integer, "
                       f"got {text!r}") from None
    if b < a:
        raise CliError(f"{flag}: empty range {text!r} (need A <= B)")
    return list(range(a, b + 1))


def _check_budget(args: argparse.Namespace) -> None:
    """``--horizon >= 1`` and ``--steps >= 4``, each refused by its own name."""
    if args.horizon < 1:
        raise CliError(f"--horizon must be >= 1, got {args.horizon}")
    if args.steps < 4:
        raise CliError(f"--steps must be >= 4, got {args.steps}")


def run_sweep(args: argparse.Namespace) -> int:
    """The ``sweep`` subcommand: write the stability map's CSV and PNG into ``--out``."""
    from loynes._stability_maps import PoissonAtLoad, stability_map

    family, loads, params = _sweep_grid(args)
    _check_budget(args)
    if args.seed < 0:
        raise CliError(f"--seed must be >= 0, got {args.seed}")
    if args.workers is not None and args.workers < 0:
        raise CliError(f"--workers must be >= 0, got {args.workers}")
    service = parse_law(args.service, "--service")
    if args.scheduler is not None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise CliError("--scheduler needs dask.distributed: "
                           "pip install 'dask[distributed]'") from None
    out = _out_folder(args.out)
    from loynes._checkpoint import CheckpointMismatch
    from loynes._runners import SweepError
    from loynes._sweep import SweepInterrupted

    checkpoint = out / "stability_map.checkpoint.jsonl"  # removed once the map is written
    try:
        with warnings.catch_warnings():  # an interruption is said below, with what to run
            warnings.simplefilter("ignore", SweepInterrupted)
            smap = stability_map(family, PoissonAtLoad(args.servers, service), loads, params,
                                 rng=args.seed,
                                 client=args.scheduler, param_name=family.param_name,
                                 steps=args.steps, horizon=args.horizon,
                                 max_workers=args.workers, progress=not args.quiet,
                                 checkpoint=checkpoint)
    except OSError as exc:  # e.g. an unreachable scheduler
        raise CliError(f"--scheduler: {exc}") from None
    except SweepError as exc:
        raise CliError(f"the sweep stopped: {exc.reason}. The finished points are kept in "
                       f"{checkpoint}: run the same command again to finish the others") \
            from None
    except CheckpointMismatch as exc:
        raise CliError(f"--out: {exc}") from None
    if smap.execution is not None and smap.execution.mode == "interrupted":
        why = (f"interrupted: the finished points are in {checkpoint}; run the same command "
               "again to finish the others")
        if args.json:
            print(json.dumps(sweep_to_dict(smap, args, service, written=[],
                                           checkpoint=checkpoint), indent=2))
            print(why, file=sys.stderr)
        else:
            print(smap)
            print(why)
        return 130
    written = _write_map(smap, args, family.param_name, len(params), out)
    checkpoint.unlink(missing_ok=True)
    if args.json:
        print(json.dumps(sweep_to_dict(smap, args, service, written=written), indent=2))
        return 0
    print(smap)
    print(f"ran {smap.execution}")
    print(f"written: {written[0]}, {written[1]}")
    return 0


def _sweep_grid(args: argparse.Namespace) -> tuple[Any, list[float], list[Any]]:
    """The ``sweep`` subcommand's family of systems, loads and parameter values, checked."""
    from loynes._stability_maps import SystemFamily

    if args.servers < 1:
        raise CliError(f"--servers must be >= 1, got {args.servers}")
    loads = parse_loads(args.loads)
    family = SystemFamily(args.system, args.servers)
    if family.param_name == "system":  # no parameter: one row over the loads
        for flag in ("--p", "--d"):
            if getattr(args, flag[2:]) is not None:
                raise CliError(f"{flag} does not apply to --system {args.system}: it has no "
                               "parameter (its map is one row over the loads)")
        return family, loads, family.values()
    flag, other = ("--d", "--p") if family.param_name == "d" else ("--p", "--d")
    spec = getattr(args, flag[2:])
    if spec is None:
        raise CliError(f"--system {args.system} needs {flag} A:B (the values to map)")
    if getattr(args, other[2:]) is not None:
        raise CliError(f"{other} does not apply to --system {args.system}; give {flag}")
    params = parse_int_range(spec, flag)
    allowed = family.values()
    lo, hi = allowed[0], allowed[-1]
    if params[0] < lo or params[-1] > hi:
        raise CliError(f"{flag}: values must lie in {lo}..{hi} for {args.servers} "
                       f"servers, got {spec!r}")
    return family, loads, params


def _out_folder(path: str) -> Any:
    """``--out`` as a folder that exists (made if need be), or a :class:`CliError`."""
    from pathlib import Path

    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"--out: cannot create {str(out)!r}: {exc.strerror}") from None
    return out


def _write_map(smap: Any, args: argparse.Namespace, param_name: str, rows: int,
               out: Any) -> list[Any]:
    """Write the map's CSV and PNG into ``out``; the paths written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    smap.to_csv(out / "stability_map.csv")
    fig, ax = plt.subplots(figsize=(7.5, 4 if rows > 1 else 2.6))
    what = args.system if param_name == "system" else f"{args.system} over {param_name}"
    smap.plot(ax, title=f"{what}, S={args.servers}, Poisson, service {args.service}")
    ax.set_xlabel("load ρ = λE[σ]/S")
    fig.tight_layout()
    fig.savefig(out / "stability_map.png", dpi=120)
    plt.close(fig)
    return [out / "stability_map.csv", out / "stability_map.png"]


def sweep_to_dict(smap: Any, args: argparse.Namespace, service: Any, *,
                  written: Sequence[Any], checkpoint: Any = None) -> dict[str, Any]:
    """``sweep --json``: the map as plain Python (JSON-serialisable).

    Keys: ``system``, ``servers``, ``service`` (the law's repr), ``param_name``, ``params``,
    ``loads``, ``verdicts`` (``verdicts[i][j]`` for ``params[i]`` at ``loads[j]``),
    ``boundaries`` (critical load of each boundary at each parameter value), ``rows`` (the
    table, one dict per point, as in ``stability_map.csv``), ``execution`` (how the points
    ran: ``mode``, ``workers``, ``reason``; see :class:`loynes._runners.Execution`),
    ``complete`` (False when interrupted), ``checkpoint`` (the file keeping the finished points
    of an interrupted run, else None) and ``written`` (the files written). As in
    ``check --json``, numbers that are not finite (a theorem's infinite confidence, a NaN
    where a condition was not computed) are ``null``.

    Parameters
    ----------
    smap : loynes.StabilityMap
        The map.
    args : argparse.Namespace
        The sweep's arguments.
    service : recursions.dists.Law
        The service law.
    written : sequence of path-like
        The files written.
    checkpoint : path-like, optional
        The checkpoint of an interrupted run.

    Returns
    -------
    dict

    Examples
    --------
    >>> import recursions as rc
    >>> import loynes as ly
    >>> args = make_parser().parse_args(["sweep", "--system", "jsw", "--servers", "2",
    ...                                  "--loads", "0.5:1.2:2", "--out", "unused"])
    >>> smap = ly.stability_map(ly.SystemFamily("jsw", 2),
    ...                         ly.PoissonAtLoad(2, rc.dists.Exponential(1.0)), [0.5, 1.2],
    ...                         ["jsw"], param_name="system", max_workers=0, progress=False)
    >>> d = sweep_to_dict(smap, args, rc.dists.Exponential(1.0), written=[])
    >>> d["verdicts"], d["boundaries"], d["execution"]["mode"]
    ([['stable', 'unstable']], {'(3)': [1.0]}, 'in-process')
    """
    from loynes._report import plain_data
    from loynes._sweep import iter_rows

    ex = smap.execution
    return plain_data({
        "system": args.system,
        "servers": args.servers,
        "service": repr(service),
        "param_name": smap.param_name,
        "params": list(smap.params),
        "loads": smap.loads,
        "verdicts": smap.verdicts,
        "boundaries": dict(smap.boundaries),
        "rows": [{k: v if v is None or isinstance(v, (int, float, str)) else str(v)
                  for k, v in row.items()} for row in iter_rows(smap.table)],
        "execution": None if ex is None else {"mode": ex.mode, "workers": ex.workers,
                                              "reason": ex.reason},
        "complete": ex is None or ex.mode != "interrupted",
        "checkpoint": None if checkpoint is None else str(checkpoint),
        "written": [str(w) for w in written],
    })


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    kb = n / 1024
    return f"{kb:.1f} KB" if kb < 1024 else f"{kb / 1024:.1f} MB"


def run_cache(args: argparse.Namespace) -> int:
    """``cache``: print the cache folders and their sizes, or remove them with ``--clear``."""
    from recursions.engines import drivers_root

    folders = rc.cache_folders()
    if not args.clear:
        if not folders:
            print(f"no cache files (the drivers folder would be {drivers_root()})")
        for folder, size in folders.items():
            print(f"{_size(size):>10}  {folder}")
        return 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", rc.CacheWarning)
        cleared = rc.clear_cache()
    for folder in cleared:
        print(f"removed {_size(folders.get(folder, 0))} from {folder}")
    for w in caught:
        print(f"python -m loynes cache: {w.message}", file=sys.stderr)
    if not cleared and not caught:
        print("no cache files to remove")
    return 1 if caught else 0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one clear line, exit status 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def make_parser() -> argparse.ArgumentParser:
    """The argument parser (``python -m loynes --help``)."""
    parser = _Parser(prog="python -m loynes",
                     description="Stability of parallel-server queues written as random maps.")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s (queue-recursions) {rc.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    chk = sub.add_parser("check", help="print a stability report for one system and input",
                         description="Print the stability report of ly.check_stability.",
                         epilog=LAW_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    chk.add_argument("--system", choices=SYSTEMS, required=True,
                     help="jsw (FCFS G/G/S), jpsw (J_{p+1}SW), loss, jiq, random, leastofd, "
                          "envelope (of jpsw), split (loss(p) + JSW(S-p))")
    chk.add_argument("--servers", type=int, required=True, help="number of servers S")
    chk.add_argument("--p", type=int, default=None,
                     help="p for jpsw/envelope/split (0..S-1; required there, rejected elsewhere)")
    chk.add_argument("--d", type=int, default=None,
                     help="d for leastofd (1..S, default 2; rejected for other systems)")
    chk.add_argument("--arrival-rate", type=float, help="Poisson arrival rate lambda")
    chk.add_argument("--interarrival",
                     help="renewal interarrival law, e.g. erlang:k=2,mean=1 (laws: see below)")
    chk.add_argument("--service", default=None,
                     help="service law (default exponential:rate=1), e.g. "
                          "lognormal:mean=1,scv=4 (laws: see below)")
    chk.add_argument("--periodic-sigma", help="periodic input: service times of one period")
    chk.add_argument("--periodic-tau", help="periodic input: interarrival times of one period")
    chk.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    chk.add_argument("--horizon", type=int, default=2**16,
                     help="Loynes horizon cap (default 65536)")
    chk.add_argument("--steps", type=int, default=2**16,
                     help="arrivals per estimate (default 65536)")
    chk.add_argument("--alpha", type=float, default=1e-3,
                     help="level of the check: bound on the chance that any of its tests "
                          "errs (default 1e-3)")
    chk.add_argument("--json", action="store_true", help="print the report as JSON")
    swp = sub.add_parser("sweep", help="stability map over (load, p or d), locally or on Dask",
                         description="Run check_stability over a (load, p) or (load, d) grid "
                                     "with Poisson input at load rho = lambda E[sigma] / S, or "
                                     "over the loads alone for a system without a parameter "
                                     "(jsw, loss, jiq, random); write OUT/stability_map.csv "
                                     "and OUT/stability_map.png (--json: the map on stdout).",
                         epilog=LAW_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    swp.add_argument("--system", choices=SYSTEMS, required=True,
                     help="jpsw, envelope, split (parameter --p), leastofd (parameter --d), or "
                          "jsw, loss, jiq, random (no parameter: one row over the loads)")
    swp.add_argument("--servers", type=int, required=True, help="number of servers S")
    swp.add_argument("--loads", required=True, help="A:B:N, N loads from A to B (linspace)")
    swp.add_argument("--p", default=None,
                     help="A:B, the p values A..B inclusive (required by jpsw, envelope, split)")
    swp.add_argument("--d", default=None,
                     help="A:B, the d values A..B inclusive (required by leastofd)")
    swp.add_argument("--service", default="exponential:rate=1",
                     help="service law (default exponential:rate=1), e.g. "
                          "lognormal:mean=1,scv=4 (laws: see below)")
    swp.add_argument("--out", required=True, help="output folder")
    swp.add_argument("--scheduler", help="Dask scheduler address (default: this process, and "
                                         "local processes once the work pays for them)")
    swp.add_argument("--workers", type=int,
                     help="local worker processes (default: this process, and one per core "
                          "once the work pays for them; 0: this process). An interrupted "
                          "sweep resumes when the same command is run again")
    swp.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    swp.add_argument("--steps", type=int, default=2**14,
                     help="arrivals per estimate (default 16384)")
    swp.add_argument("--horizon", type=int, default=2**14,
                     help="Loynes horizon cap (default 16384)")
    swp.add_argument("--quiet", action="store_true", help="no progress bar")
    swp.add_argument("--json", action="store_true",
                     help="print the map as JSON (table rows, verdict grid, how it ran) "
                          "instead of text; the CSV and PNG are written as without it")
    demo = sub.add_parser("demo", help="report and figures for the seed J_{p+1}SW model",
                          description="Stability report and figures for the seed system.")
    demo.add_argument("--out", default="demo_output", help="folder for the figures")
    demo.add_argument("--quick", action="store_true", help="coarser grid (for tests)")
    cache = sub.add_parser("cache", help="list (or --clear) the on-disk caches of compiled code",
                           description="Print the folders holding compiled code (the drivers "
                                       "folder $QUEUE_RECURSIONS_CACHE and numba's cache files "
                                       "of this library) with their sizes.")
    cache.add_argument("--clear", action="store_true",
                       help="remove them (the next run compiles again); folders not yours "
                            "are left, with a message (exit status 1)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
    """
    parser = make_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            from loynes._demo import run_demo

            run_demo(args.out, quick=args.quick)
            return 0
        if args.command == "sweep":
            return run_sweep(args)
        if args.command == "cache":
            return run_cache(args)
        args.service_given = args.service is not None  # a periodic input refuses it
        if args.service is None:
            args.service = DEFAULT_SERVICE
        _check_budget(args)
        if not 0 < args.alpha < 0.5:
            raise CliError(f"--alpha must be in (0, 0.5), got {args.alpha}")
        if args.seed < 0:
            raise CliError(f"--seed must be >= 0, got {args.seed}")
        report = check_stability(build_system(args), build_input(args), rng=args.seed,
                                 horizon=args.horizon, steps=args.steps, alpha=args.alpha)
    except CliError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report)
    return 0
