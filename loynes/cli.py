"""Command line: ``python -m loynes check ...`` and ``python -m loynes demo``.

Examples
--------
``python -m loynes check --system jpsw --servers 5 --p 2 --arrival-rate 4 --service lognormal:1,2``
prints the stability report; ``--json`` prints it as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import recursions as rc

from .stability import check_stability

LAWS = {
    "exponential": (rc.dists.Exponential, "RATE"),
    "deterministic": (rc.dists.Deterministic, "VALUE"),
    "erlang": (lambda k, r: rc.dists.Erlang(int(k), r), "K,RATE"),
    "hyperexponential": (rc.dists.HyperExponential.balanced, "MEAN,SCV"),
    "lognormal": (rc.dists.LogNormal, "MEAN,SCV"),
    "lomax": (rc.dists.Lomax, "SHAPE,SCALE"),
    "uniform": (rc.dists.Uniform, "LOW,HIGH"),
}
ALIASES = {"exp": "exponential", "det": "deterministic", "hyperexp": "hyperexponential",
           "h2": "hyperexponential", "ln": "lognormal", "pareto": "lomax"}
SYSTEMS = ("jsw", "jpsw", "loss", "jiq", "random", "leastofd", "envelope", "split")
LAW_HELP = ", ".join(f"{k}:{v[1]}" for k, v in LAWS.items())


class CliError(Exception):
    """A bad flag value: reported on one line, exit status 2."""


def parse_law(spec: str, flag: str) -> Any:
    """Parse ``NAME:ARG1,ARG2`` into a :mod:`recursions.dists` law.

    Parameters
    ----------
    spec : str
        E.g. ``"lognormal:1,2"`` (mean 1, SCV 2).
    flag : str
        The flag, for error messages.

    Returns
    -------
    recursions.dists.Law

    Examples
    --------
    >>> parse_law("lognormal:1,2", "--service")
    LogNormal(mean=1.0, scv=2.0)
    """
    name, _, args = spec.partition(":")
    name = ALIASES.get(name.strip().lower(), name.strip().lower())
    if name not in LAWS:
        raise CliError(f"{flag}: unknown law {name!r}; use one of {LAW_HELP}")
    make, sig = LAWS[name]
    try:
        values = [float(x) for x in args.split(",")] if args else []
    except ValueError:
        raise CliError(f"{flag}: arguments of {name} must be numbers ({name}:{sig})") from None
    if len(values) != len(sig.split(",")):
        raise CliError(f"{flag}: {name} takes {sig}, got {args!r}")
    try:
        return make(*values)
    except (ValueError, TypeError) as exc:
        raise CliError(f"{flag}: {exc}") from None


def _floats(text: str, flag: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise CliError(f"{flag}: expected comma-separated numbers, got {text!r}") from None


def build_system(args: argparse.Namespace) -> rc.System:
    """The system named by ``--system`` with ``--servers``, ``--p``, ``--d``."""
    try:
        s = args.servers
        kind = args.system
        if kind == "jsw":
            return rc.JSW(s)
        if kind == "jpsw":
            return rc.JpSW(s, args.p)
        if kind == "loss":
            return rc.Loss(s)
        if kind == "jiq":
            return rc.JIQ(s)
        if kind == "random":
            return rc.RandomRouting(s)
        if kind == "leastofd":
            return rc.LeastOfD(s, args.d)
        if kind == "envelope":
            return rc.Envelope(rc.JpSW(s, args.p))
        return rc.SplitBound(s, args.p)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


def build_input(args: argparse.Namespace) -> rc.Input:
    """The input of --arrival-rate or --interarrival with --service, or the periodic one."""
    if args.periodic_sigma or args.periodic_tau:
        if not (args.periodic_sigma and args.periodic_tau):
            raise CliError("--periodic-sigma and --periodic-tau go together")
        try:
            return rc.Periodic(_floats(args.periodic_sigma, "--periodic-sigma"),
                               _floats(args.periodic_tau, "--periodic-tau"))
        except (ValueError, TypeError) as exc:
            raise CliError(str(exc)) from None
    service = parse_law(args.service, "--service")
    if (args.arrival_rate is None) == (args.interarrival is None):
        raise CliError("give exactly one of --arrival-rate and --interarrival")
    try:
        if args.arrival_rate is not None:
            return rc.Poisson(args.arrival_rate, service)
        return rc.Renewal(parse_law(args.interarrival, "--interarrival"), service)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one clear line, exit status 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def make_parser() -> argparse.ArgumentParser:
    """The argument parser (``python -m loynes --help``)."""
    parser = _Parser(prog="python -m loynes",
                     description="Stability of parallel-server queues written as random maps.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    chk = sub.add_parser("check", help="print a stability report for one system and input",
                         description="Print the stability report of ly.check_stability.")
    chk.add_argument("--system", choices=SYSTEMS, required=True,
                     help="jsw (FCFS G/G/S), jpsw (J_{p+1}SW), loss, jiq, random, leastofd, "
                          "envelope (of jpsw), split (loss(p) + JSW(S-p))")
    chk.add_argument("--servers", type=int, required=True, help="number of servers S")
    chk.add_argument("--p", type=int, default=0, help="p for jpsw/envelope/split (0..S-1)")
    chk.add_argument("--d", type=int, default=2, help="d for leastofd (1..S)")
    chk.add_argument("--arrival-rate", type=float, help="Poisson arrival rate lambda")
    chk.add_argument("--interarrival", help=f"renewal interarrival law: {LAW_HELP}")
    chk.add_argument("--service", default="exponential:1",
                     help=f"service law (default exponential:1): {LAW_HELP}")
    chk.add_argument("--periodic-sigma", help="periodic input: service times of one period")
    chk.add_argument("--periodic-tau", help="periodic input: interarrival times of one period")
    chk.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    chk.add_argument("--horizon", type=int, default=2**16, help="Loynes horizon cap")
    chk.add_argument("--steps", type=int, default=2**16, help="arrivals per estimate")
    chk.add_argument("--json", action="store_true", help="print the report as JSON")
    demo = sub.add_parser("demo", help="report and figures for the seed J_{p+1}SW model",
                          description="Stability report and figures for the seed system.")
    demo.add_argument("--out", default="demo_output", help="folder for the figures")
    demo.add_argument("--quick", action="store_true", help="coarser grid (for tests)")
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
            from .demo import run_demo

            run_demo(args.out, quick=args.quick)
            return 0
        if args.horizon < 1 or args.steps < 4:
            raise CliError("--horizon must be >= 1 and --steps >= 4")
        report = check_stability(build_system(args), build_input(args), rng=args.seed,
                                 horizon=args.horizon, steps=args.steps)
    except CliError as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report)
    return 0
